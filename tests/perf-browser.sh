#!/bin/sh
# perf-browser.sh - the terminal browser of perf loops report and annotate
# (ncurses), in tmux: open it on a real recording (perf record -e cpu-clock
# --call-graph=fp) of a fixture, expand the hottest path, jump to the
# hottest loop, search a name, switch views and the sort event, open
# annotate, quit.  Every check reads the screen with capture-pane and
# compares it with what --stdio prints for the same file.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
command -v tmux >/dev/null 2>&1 || skip_all "tmux not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed"
grep -q "HAVE_NCURSES" "$top_builddir/Makefile" 2>/dev/null || skip_all "perf-loops built without ncurses (no browser)"
line_of() { grep -n "$2" "$FIXTURES/perf/$1" | head -n 1 | cut -d: -f1; }
INNER=$(line_of inline_loop.c LOOP-INNER)
OUTER=$(line_of inline_loop.c LOOP-OUTER)

build_fixture gcc -O2 perf/inline_loop.c "$TMP/inl" -fno-omit-frame-pointer || fail_all "gcc builds the fixture"
perf record -q -N -e cpu-clock --call-graph=fp -o "$TMP/rec.data" "$TMP/inl" 20000 >/dev/null 2>"$TMP/rec.err" ||
	skip_all "perf record does not work here: $(head -n 1 "$TMP/rec.err")"
R() { "$PERF_LOOPS" report -i "$TMP/rec.data" --stdio --no-pager "$@" 2>/dev/null; }

. "$top_srcdir/tests/tmux.sh"
pane=b
keys() { T send-keys -t b "$@"; }
# the status line (the selected entry), second from the bottom
status() { grep -v '^ *$' "$TMP/pane" | tail -n 2 | head -n 1 | sed 's/ *$//'; }
# screen rows as --stdio prints them: the [+-] marker taken out
rows() { sed -n '3,48p' "$TMP/pane" | sed -E 's/^(.{31}  ( )*)[-+ ] /\1/; s/ *$//' | grep -v '^$'; }
nstart=0
start() { # start COMMAND: run it in a new 200x50 tmux session; its exit status is printed
	# one tmux server per session (a server just killed may still be exiting)
	T kill-server 2>/dev/null
	nstart=$((nstart + 1))
	sock="$TMP/tmux-$nstart.sock"
	T new-session -d -s b -x 200 -y 50 "env XDG_CACHE_HOME=$XDG_CACHE_HOME TERM=screen $*; echo BROWSER-EXIT=\$?; sleep 60"
}

samples=$(R | sed -n "s/^# Samples: \([0-9]*\)  of event 'cpu-clock'.*/\1/p")
start "$PERF_LOOPS" report -i "$TMP/rec.data"
wait_for "Samples: $samples of event 'cpu-clock'" 60 && wait_for '^ *[0-9.]*% .*  [-+ ] ' 10
ok $? "perf loops report on a terminal opens the browser ($samples samples, as --stdio says)"
R | grep -v '^#' | grep -v '^$' >"$TMP/stdio"
first=$(head -n 1 "$TMP/stdio" | sed 's/ *$//')
check_eq "$(rows | head -n 1)" "$first" "the first row is --stdio's first"

# expand the hottest path: Enter on a row, Down to its hottest child
depth=$(awk '/inline_loop.c:'"$INNER"'$/ { print NR; exit }' "$TMP/stdio")
[ -n "$depth" ] || depth=7
i=1
while [ "$i" -lt "$depth" ]; do keys Enter Down; i=$((i + 1)); done
want_rows=$(head -n "$depth" "$TMP/stdio" | sed 's/ *$//')
sel=$(sed -n "${depth}p" "$TMP/stdio" | sed 's/^ *[0-9.]*% *[0-9.]*% *[0-9]*  *//; s/ *$//')
expanded() { [ "$(rows | head -n "$depth")" = "$want_rows" ] && [ "$(status)" = "$sel" ]; }
settle 10 expanded
check_eq "$(rows | head -n "$depth")" "$want_rows" \
	"Enter/Down down the hottest path: the $depth rows are --stdio's, figures and names"
check_eq "$(status)" "$sel" "the status line names the selected entry"
keys C
top=$(awk 'substr($0, 32, 2) == "  " && substr($0, 34, 1) != " "' "$TMP/stdio" | wc -l)
[ "$top" -gt 46 ] && top=46 # the screen's rows
collapsed() { [ "$(rows | wc -l)" = "$top" ]; }
settle 10 collapsed
check_eq "$(rows | wc -l)" "$top" "C collapses everything: one row per top-level entry"

# L: the hottest loop, then the next; as --format=loops ranks them
R --format=loops | grep '^ *[0-9]' | sed 's/^ *[0-9.]*% *[0-9.]*% *[0-9]*  //; s/  (.*//' >"$TMP/loops"
status_is() { status | grep -q "$1"; }
keys L
settle 10 status_is "^$(sed -n 1p "$TMP/loops")   \[loop 1 of"
ok $? "L selects the hottest loop, $(sed -n 1p "$TMP/loops") (--format=loops' first)"
keys L
settle 10 status_is "^$(sed -n 2p "$TMP/loops")   \[loop 2 of"
ok $? "L again: the next, $(sed -n 2p "$TMP/loops")"
# its row's figures are the tree's
row=$(grep "  - $(sed -n 2p "$TMP/loops")\$\|  + $(sed -n 2p "$TMP/loops")\$" "$TMP/pane" | head -n 1 | awk '{ print $1, $2, $3 }')
check_eq "$row" "$(grep "  $(sed -n 2p "$TMP/loops")\$" "$TMP/stdio" | head -n 1 | awk '{ print $1, $2, $3 }')" \
	"... its row's Children, Self and Samples are the --stdio tree's"

# / search
keys C Home /
wait_for "^search:" 10 || diag "no search prompt on the screen"
keys -l work
keys Enter
settle 10 status_is "^inlined work\$"
ok $? "/work selects [I] work, its full name on the status line"
grep -q "      + \[I\] work (at inline_loop.c:$((OUTER + 1)))" "$TMP/pane"
ok $? "... opening its ancestors so that its row shows"

# v: flat, then loops; their figures are --format=flat's and --format=loops'
flat_main=$(R --format=flat | grep '^ *[0-9]' | grep '  main  ' | sed 's/ *$//')
flat_view() { shows "^perf loops: flat" && rows | grep -qF "$flat_main"; }
keys v
settle 10 flat_view
ok $? "v: the flat view, main's row as --format=flat's"
want=$(R --format=loops | grep '^ *[0-9]' | head -n 2 | awk '{ $4 = ""; print }' | sed 's/  */ /g')
loops_view() {
	got=$(rows | head -n 2 | awk '{ $4 = ""; print }' | sed 's/  */ /g')
	shows "^perf loops: loops" && [ "$got" = "$want" ]
}
keys v
settle 10 loops_view
ok $? "v again: the loops view, Total, Own, Samples and context as --format=loops"
[ "$got" = "$want" ] || { diag "got:  $got"; diag "want: $want"; }

# a: annotate the entry's procedure (main), rows as annotate --stdio's
"$PERF_LOOPS" annotate -i "$TMP/rec.data" --stdio main >"$TMP/ann" 2>/dev/null
keys a
wait_for "^Annotate source: main" 20
ok $? "a opens the annotate view of main"
want=$(grep "^ .* $INNER \`: " "$TMP/ann" | sed 's/ *$//')
grep -qxF "$want" "$TMP/pane" && [ -n "$want" ]
ok $? "... line $INNER's row is annotate --stdio's: $want"
want=$(grep -- "-- loop at inline_loop.c:$INNER," "$TMP/ann" | sed 's/ *$//')
grep -qxF "$want" "$TMP/pane" && [ -n "$want" ]
ok $? "... the loop's bracket row with Total and Own is annotate --stdio's"
keys s
wait_for "^Annotate asm: main" 20 && wait_for "head of loop at inline_loop.c" 10
ok $? "s: the assembly, loop heads marked"
keys q
wait_for "^perf loops: loops" 10
ok $? "q in annotate goes back to the loops view"
# a on an [I] entry: its procedure, opened at the call site (the selected
# row, in reverse video, is the line of the call)
keys v /
wait_for "^search:" 10
keys -l work
keys Enter
wait_for "^inlined work" 10
keys a
wait_for "^Annotate source: main" 20
T capture-pane -e -p -t b | grep "$(printf '\033')\[7m" | sed 's/\x1b\[[0-9;]*m//g' | grep -q " $((OUTER + 1)) [|\`]*: .*CALL-WORK"
ok $? "a on [I] work opens main at the call's line ($((OUTER + 1))), selected"
keys q q
wait_for "BROWSER-EXIT=0" 10
ok $? "q quits, exit 0"

# --stdio on a terminal prints; annotate on a terminal opens its view
start "$PERF_LOOPS" report -i "$TMP/rec.data" --stdio --no-pager
wait_for "BROWSER-EXIT" 60 && T capture-pane -p -S -3000 -t b | grep -q "^# Samples: $samples  of event 'cpu-clock'"
ok $? "--stdio on a terminal prints the text report"
for args in "--tui --stdio" "--stdio --tui"; do # perf report: --stdio wins, in either order
	start "$PERF_LOOPS" report -i "$TMP/rec.data" $args --no-pager
	wait_for "BROWSER-EXIT" 60 && T capture-pane -p -S -3000 -t b | grep -q "^# Samples: $samples  of event 'cpu-clock'"
	ok $? "'$args' on a terminal prints the text report, as perf report does"
done
start "$PERF_LOOPS" annotate -i "$TMP/rec.data"
wait_for "^Annotate source: main" 60
ok $? "perf loops annotate on a terminal opens the annotate view (the hottest: main)"
keys q
wait_for "BROWSER-EXIT=0" 10
ok $? "... q quits"

# two events: a column each, S switches the sort event
if perf record -q -N -e cpu-clock -e task-clock --call-graph=fp -o "$TMP/two.data" "$TMP/inl" 10000 >/dev/null 2>&1; then
	start "$PERF_LOOPS" report -i "$TMP/two.data"
	wait_for "of event 'cpu-clock' (sort)" 60 && grep -q "Children       Self   Samples task-clock  Context" "$TMP/pane"
	ok $? "two events: sorted by cpu-clock, a column for task-clock"
	keys S
	wait_for "of event 'task-clock' (sort)" 10 && grep -q "Samples  cpu-clock  Context" "$TMP/pane"
	ok $? "S: sorted by task-clock, a column for cpu-clock"
	n=$("$PERF_LOOPS" report -i "$TMP/two.data" --stdio --no-pager -e task-clock 2>/dev/null |
		sed -n "s/^# Samples: \([0-9]*\)  of event 'task-clock'.*/\1/p")
	grep -q "Samples: $n of event 'task-clock'" "$TMP/pane"
	ok $? "... with task-clock's $n samples (--stdio -e task-clock)"
	keys q
else
	skip "perf record -e cpu-clock -e task-clock does not work here"
fi
done_testing
