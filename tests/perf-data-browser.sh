#!/bin/sh
# perf-data-browser.sh - the browser's data view (key d), in tmux: on a real
# recording (perf record -e cpu-clock) of tests/fixtures/data_layout.c
# (clang -O2), go to the hottest entry (sum_grid's loop), press d, and read
# the screen (capture-pane): its rows must be --stdio --format=data's rows of
# that procedure and its loops, line for line; q goes back to the tree,
# q again quits with status 0.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
command -v tmux >/dev/null 2>&1 || skip_all "tmux not installed"
command -v clang >/dev/null 2>&1 || skip_all "clang not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
grep -q "HAVE_NCURSES" "$top_builddir/Makefile" 2>/dev/null || skip_all "perf-loops built without ncurses (no browser)"

build_fixture clang -O2 data_layout.c "$TMP/dl" || fail_all "clang builds the fixture"
perf record -q -e cpu-clock:u -o "$TMP/rec.data" "$TMP/dl" 4000000 >/dev/null 2>"$TMP/rec.err" ||
	skip_all "perf record does not work here: $(head -n 1 "$TMP/rec.err")"
"$PERF_LOOPS" report -i "$TMP/rec.data" --stdio --no-pager --format=data 2>/dev/null |
	awk '/^ +[0-9.]+% +[0-9]+    [^ ]/ { on = ($3 == "sum_grid") } on' | sed 's/ *$//' >"$TMP/want"
[ -s "$TMP/want" ] || fail_all "--stdio --format=data has sum_grid's rows"

. "$top_srcdir/tests/tmux.sh"
pane=b
T new-session -d -s b -x 200 -y 50 "env TERM=screen $PERF_LOOPS report -i $TMP/rec.data; echo BROWSER-EXIT=\$?; sleep 60"
wait_for 'sum_grid' 30
ok $? "the browser opens on the recording"
T send-keys -t b H
sleep 0.3
T send-keys -t b d
wait_for '^data: ' 10
ok $? "d opens the data view"
# the view's rows, read until they are the wanted ones (curses may have
# drawn the title and not yet the rows below it when the title shows)
view_rows() {
	sed -n '2,48p' "$TMP/pane" | grep -v '^ *$' | grep -v 'Overhead   Samples' | grep -v '^# data types' |
		grep -v 'Up/Down' | sed 's/ *$//' >"$TMP/got"
	cmp -s "$TMP/got" "$TMP/want"
}
settle 10 view_rows
if cmp -s "$TMP/got" "$TMP/want"; then
	pass "the data view's rows are --format=data's of sum_grid ($(wc -l <"$TMP/want") rows)"
else
	fail "the data view's rows are --format=data's of sum_grid"
	diag "got:"; sed 's/^/#   /' "$TMP/got"; diag "want:"; sed 's/^/#   /' "$TMP/want"
fi
grep -q 'gr' "$TMP/got" && grep -q 'struct grid +' "$TMP/got"
ok $? "it names gr and struct grid's fields"
T send-keys -t b q
wait_for 'calling-context tree' 10
ok $? "q goes back to the tree"
T send-keys -t b q
wait_for 'BROWSER-EXIT=0' 10
ok $? "q quits, status 0"
done_testing
