#!/bin/sh
# perf-record-signals.sh - perf loops record under signals (issue 23).
# Ctrl-C in a terminal (tmux) during `perf loops record` of a long run: the
# prompt comes back only after perf record's "Captured and wrote" line, the
# next command of the shell's line runs, and the file is whole (perf loops
# report reads it without a warning, perf report too).  perf runs perf-loops
# as a child and dies itself on Ctrl-C, so this goes through perf.  Then
# SIGTERM sent to perf-loops alone (a script stopping it): passed on to
# perf record, which writes the file; perf-loops exits after it, with its
# status.  The screen is polled for what is awaited, no fixed sleeps.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
command -v tmux >/dev/null 2>&1 || skip_all "tmux not installed"
command -v bash >/dev/null 2>&1 || skip_all "bash not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed"
export HOME="$TMP/home"
mkdir -p "$HOME"
BIN=$(cd "$(dirname "$PERF_LOOPS")" && pwd)
PATH="$BIN:$PATH" perf loops --version >/dev/null 2>&1 || skip_all "perf does not find perf-loops on PATH"
# the workload, under a name of its own (its CPU time is watched)
build_fixture gcc -O2 perf/split_loops.c "$TMP/sigwork" -fno-omit-frame-pointer || fail_all "gcc builds the fixture"
perf record -q -N -e cpu-clock -o "$TMP/probe.data" true >/dev/null 2>"$TMP/err" ||
	skip_all "perf record does not work here: $(head -n 1 "$TMP/err")"

. "$top_srcdir/tests/tmux.sh"
pane=s pane_opts="-S -100"
running() { # SECONDS: until the workload has had 0.3 s of CPU (it is being sampled)
	_i=0
	while [ "$_i" -lt $(($1 * 20)) ]; do
		_p=$(pgrep -n -x sigwork)
		[ -n "$_p" ] && [ "$(awk '{ print $14 }' "/proc/$_p/stat" 2>/dev/null || echo 0)" -ge 30 ] && return 0
		sleep 0.05
		_i=$((_i + 1))
	done
	return 1
}

T new-session -d -s s -x 200 -y 50 "env -i HOME=$HOME TERM=screen PATH=$BIN:$PATH XDG_CACHE_HOME=$XDG_CACHE_HOME bash --norc --noprofile"
T send-keys -t s "PS1='PROMPT\$ '; cd $TMP" Enter
wait_for '^PROMPT\$ *$' 20 || fail "the shell in tmux"
# a run of minutes, stopped once perf record has written its header
T send-keys -t s "perf loops record -o $TMP/int.data -- $TMP/sigwork 100000; echo NEXT-RAN rc=\$?" Enter
running 30 && ! wait_for "^NEXT-RAN rc=[0-9]" 0
ok $? "perf loops record of a long run is running (the workload sampled, the line not done)"
T send-keys -t s C-c
wait_for "^NEXT-RAN rc=[0-9]" 60
ok $? "after Ctrl-C, the next command of the line runs"
# the shell prints its prompt just after the line's output: poll for it
in_order() {
	awk '/Captured and wrote/ { c = NR } /^NEXT-RAN rc=/ { n = NR } /^PROMPT\$ *$/ { p = NR }
	     END { exit !(c && n && c < n && p > n) }' "$TMP/pane"
}
_i=0
until in_order || [ "$_i" -ge 200 ]; do sleep 0.05; screen; _i=$((_i + 1)); done
in_order
ok $? "... after perf record's 'Captured and wrote' line, and the prompt after both"
in_order || grep -v '^ *$' "$TMP/pane" | tail -n 6 | while read -r l; do diag "screen: $l"; done
grep -q "^NEXT-RAN rc=130$" "$TMP/pane"
ok $? "... with perf record's status (130: interrupted)"
"$PERF_LOOPS" report -i "$TMP/int.data" --stdio >"$TMP/out" 2>"$TMP/err"
[ $? -eq 0 ] && [ ! -s "$TMP/err" ] && grep -q "^# Samples: [1-9]" "$TMP/out" &&
	perf report -i "$TMP/int.data" --stdio >/dev/null 2>&1
ok $? "... and the file is whole: perf loops report reads it without a word, perf report too"
[ -s "$TMP/err" ] && diag "$(head -c 300 "$TMP/err")"

# SIGTERM to perf-loops alone: passed on, perf record writes the file
"$PERF_LOOPS" record -q -o "$TMP/term.data" -- "$TMP/sigwork" 100000 >/dev/null 2>"$TMP/term.err" &
pid=$!
running 30 || fail "perf loops record in the background"
kill -TERM "$pid"
wait "$pid"
rc=$?
"$PERF_LOOPS" report -i "$TMP/term.data" --stdio >"$TMP/out" 2>"$TMP/err"
[ $? -eq 0 ] && [ ! -s "$TMP/err" ] && grep -q "^# Samples: [1-9]" "$TMP/out" && [ $rc -ne 0 ]
ok $? "SIGTERM to perf-loops: perf record stops and writes the whole file before perf-loops exits ($rc)"
[ -s "$TMP/err" ] && diag "$(head -c 300 "$TMP/err")"
done_testing
