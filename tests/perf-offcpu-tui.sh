#!/bin/sh
# perf-offcpu-tui.sh - the terminal browser of perf loops report on a
# recording with off-CPU data (perf loops record --off-cpu of
# tests/fixtures/perf/off_cpu.c): in tmux, its header has the On-CPU,
# Off-CPU and Wall ms columns, and the rows' times are --stdio's for the
# same file, in the tree view and in the loops view.  Needs root (the
# scheduler tracepoints), tmux and a build with ncurses: skips without.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
command -v tmux >/dev/null 2>&1 || skip_all "tmux not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed"
grep -q "HAVE_NCURSES" "$top_builddir/Makefile" 2>/dev/null || skip_all "perf-loops built without ncurses (no browser)"
[ "$(id -u)" -eq 0 ] || skip_all "not root: tracing the scheduler (sched:sched_switch) needs root"

build_fixture gcc -O2 perf/off_cpu.c "$TMP/off_cpu" -pthread || fail_all "gcc builds off_cpu.c"
"$PERF_LOOPS" record --off-cpu -o "$TMP/off.data" -- "$TMP/off_cpu" 20000000 >/dev/null 2>"$TMP/rec.err"
ok $? "perf loops record --off-cpu of off_cpu" || { sed 's/^/# /' "$TMP/rec.err"; done_testing; }

. "$top_srcdir/tests/tmux.sh"
pane=b
T new-session -d -s b -x 220 -y 50 "env XDG_CACHE_HOME=$XDG_CACHE_HOME TERM=screen $PERF_LOOPS report -i $TMP/off.data; sleep 60"
# "ON OFF WALL LABEL" of each row: the three one-decimal times before the label
times() { sed -E -n 's/^.* ([0-9]+\.[0-9]) +([0-9]+\.[0-9]) +([0-9]+\.[0-9]) +[-+ ]? *([^ ].*)$/\1 \2 \3 \4/p' | sed 's/ *$//'; }

wait_for "On-CPU ms Off-CPU ms    Wall ms" 20
ok $? "the browser's header has On-CPU ms, Off-CPU ms and Wall ms"
sed -n '3p' "$TMP/pane" | times >"$TMP/tui.rows"  # (the browser opens collapsed: the first row)
"$PERF_LOOPS" report -i "$TMP/off.data" --stdio --no-pager 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n 1 |
	times >"$TMP/stdio.rows"
[ -s "$TMP/tui.rows" ] && diff "$TMP/stdio.rows" "$TMP/tui.rows" >"$TMP/diff"
ok $? "tree view: the first row's on-CPU, off-CPU and wall times are --stdio's ($(head -n 1 "$TMP/tui.rows"))" ||
	sed 's/^/# /' "$TMP/diff" "$TMP/stdio.rows" "$TMP/tui.rows"

T send-keys -t b v v   # tree, flat, loops
wait_for "perf loops: loops" 20 && wait_for "loop at off_cpu.c" 20
sed -n '3,50p' "$TMP/pane" | grep "cpu_loop" | head -n 1 | times | cut -d' ' -f1-3 >"$TMP/tui.loop"
"$PERF_LOOPS" report -i "$TMP/off.data" --stdio --no-pager --format=loops 2>/dev/null | grep "(cpu_loop " |
	head -n 1 | times | cut -d' ' -f1-3 >"$TMP/stdio.loop"
[ -s "$TMP/tui.loop" ] && diff "$TMP/stdio.loop" "$TMP/tui.loop" >"$TMP/diff"
ok $? "loops view: cpu_loop's loop's on-CPU, off-CPU and wall times are --stdio --format=loops' ($(cat "$TMP/tui.loop"))" ||
	sed 's/^/# /' "$TMP/diff" "$TMP/stdio.rows" "$TMP/tui.rows"
T send-keys -t b q
done_testing
