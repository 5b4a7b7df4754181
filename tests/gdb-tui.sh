#!/bin/sh
# gdb-tui.sh - the `loopscope` TUI window in `layout loops`, in a real GDB
# under tmux (gcc and clang -O2): it shows the selected frame's chain and
# current loop beside the source, and follows `up` and `down`; at 80x24,
# an inline frame's loop, rows cut (not wrapped), scrolling to the exits.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace
command -v tmux >/dev/null 2>&1 || skip_all "tmux not installed"
"$GDB" -nx -batch -ex 'python gdb.register_window_type' >/dev/null 2>&1 || skip_all "this GDB has no gdb.register_window_type"
"$GDB" -nx -batch -ex 'tui new-layout probe src 1 cmd 1' 2>&1 | grep -q . && skip_all "this GDB has no TUI"

IB=$(line_of inner-body); IL=$(line_of inner-loop); IE=$(line_of inner-end)
OL=$(line_of outer-loop); OE=$(line_of outer-end); CALL=$(line_of call-sum-row)
SB=$(line_of scale-body)
. "$top_srcdir/tests/tmux.sh"
pane=ls
# type TEXT: a GDB command (literally: tmux would read "up" as a key name).
type() { T send-keys -t ls -l "$1"; T send-keys -t ls Enter; }
# current_loop_line: the line of "current loop: at FILE:LINE" on the screen.
current_loop_line() { sed -n 's/.*current loop: at [^:]*:\([0-9]*\).*/\1/p' "$TMP/pane" | head -n 1; }

for cc in $(gdb_compilers); do
	bin="$TMP/loops-$cc"
	if ! build_fixture "$cc" -O2 gdb/loops.c "$bin"; then
		fail "$cc: build the fixture"; continue
	fi
	T kill-server 2>/dev/null
	sock="$TMP/tmux-$cc.sock"
	T new-session -d -s ls -x 200 -y 50 "env XDG_CACHE_HOME=$TMP/cache $GDB -nx -q -ex 'source $GDBEXT' \
		-ex 'break loops.c:$IB' -ex run --args $bin 3 8; sleep 60"
	wait_for '^Breakpoint 1, ' 60 || { fail "$cc: gdb stopped at the breakpoint"; continue; }
	type 'layout loops'
	wait_for 'frame #0  sum_row' 20
	ok $? "$cc: layout loops shows the loopscope window with frame #0 (inlined sum_row)"
	grep -q '@inner-body' "$TMP/pane"
	ok $? "$cc: ... beside the source"
	grep -q "> inline  sum_row  called at loops.c:$CALL" "$TMP/pane" && grep -q '  proc    main  at loops.c:' "$TMP/pane"
	ok $? "$cc: the window shows the chain: proc main, inline sum_row called at line $CALL (the frame's own part marked)"
	l=$(current_loop_line); [ -n "$l" ] && [ "$l" -ge "$IL" ] && [ "$l" -le "$IE" ]
	ok $? "$cc: frame #0's current loop is the inner loop (line '$l' in $IL-$IE)"
	grep -q 'header 0x[0-9a-f]*  depth 2' "$TMP/pane" && grep -q '[0-9] exits*:' "$TMP/pane" && grep -q '    to 0x[0-9a-f]*' "$TMP/pane"
	ok $? "$cc: ... with its header, depth 2 and exits"
	type up
	wait_for 'frame #1  main' 20
	ok $? "$cc: after up, the window shows frame #1 (main)"
	l=$(current_loop_line); [ -n "$l" ] && [ "$l" -ge "$OL" ] && [ "$l" -le "$OE" ]
	ok $? "$cc: ... and its current loop is the outer loop (line '$l' in $OL-$OE)"
	grep -q 'header 0x[0-9a-f]*  depth 1' "$TMP/pane"
	ok $? "$cc: ... at depth 1"
	type down
	wait_for 'frame #0  sum_row' 20
	ok $? "$cc: after down, frame #0 again"
	! grep -qi 'traceback\|Python Exception' "$TMP/pane"
	ok $? "$cc: no Python error"
done

# At 80x24 (a common terminal): an inline frame inside loops shows the loop
# around it; every line takes one row (the window is narrow: cut, never
# wrapped); the window scrolls to the exits, one line per exit edge, as
# many as `info loops` counts.  The window's column of the screen is
# extracted by tests/fixtures/gdb/tui_column.py.
src="$FIXTURES/gdb/tui_loops.c"
BB=$(grep -n '@bump-body' "$src" | cut -d: -f1); ML=$(grep -n '@main-loop' "$src" | cut -d: -f1)
col() { python3 "$FIXTURES/gdb/tui_column.py" loopscope <"$TMP/pane"; }
differs() { ! cmp -s "$TMP/pane" "$TMP/before"; }
changed() { settle 10 differs; } # until the screen differs from $TMP/before
for cc in $(gdb_compilers); do
	bin="$TMP/tui-$cc"
	build_fixture "$cc" -O2 gdb/tui_loops.c "$bin" || { fail "$cc: build tui_loops.c"; continue; }
	# (clang unrolls the outer loop: three copies of this one, "(part N of 3)")
	want=$(gdb_run -ex "info loops main" "$bin" | sed -n "s/^ *loop at tui_loops.c:$ML\( (part [0-9]* of [0-9]*)\)\{0,1\}  header .*  depth [0-9]*  (\([0-9]*\) exits*, .*/\2/p" | head -n 1)
	T kill-server 2>/dev/null
	sock="$TMP/tmux-80-$cc.sock"
	T new-session -d -s ls -x 80 -y 24 "env XDG_CACHE_HOME=$TMP/cache $GDB -nx -q -ex 'source $GDBEXT' \
		-ex 'break tui_loops.c:$BB' -ex run --args $bin 10; sleep 60"
	wait_for '^Breakpoint 1, ' 60 || { fail "$cc 80x24: gdb stopped at the breakpoint"; continue; }
	type 'layout loops'
	wait_for 'frame #0  bump' 20
	ok $? "$cc 80x24: layout loops shows the inline frame bump"
	# (the window's first row shows before the rest is drawn: a screen
	# taken then has no loop yet; wait for the window's loop line)
	wait_for 'current loop: ' 20
	col >"$TMP/col"
	grep -q "^current loop: at tui_loops.c:$ML\$" "$TMP/col"
	ok_show $? "$cc 80x24: ... inside main's loop at line $ML (never: frame not in a loop)" "$TMP/col"
	awk 'NR == 1 && /^frame #0  bump/ { a = 1 } NR == 2 && /^in \// { b = 1 } NR == 3 && /^ *$/ { c = 1 } NR == 4 && /^  proc    main/ { d = 1 } END { exit !(a && b && c && d) }' "$TMP/col"
	ok_show $? "$cc 80x24: one row per line (a long path is cut, not wrapped)" "$TMP/col"
	type 'focus loopscope'
	wait_for 'Focus set to loopscope window' 20
	n=0
	while ! col | grep -q '^    to 0x' && [ $n -lt 30 ]; do
		cp "$TMP/pane" "$TMP/before"
		T send-keys -t ls Down
		changed || break
		n=$((n + 1))
	done
	col >"$TMP/col"
	# Scroll on until the last exit line shows (the back edges follow it).
	while ! grep -q 'back edge' "$TMP/col" && [ $n -lt 30 ]; do
		cp "$TMP/pane" "$TMP/before"; T send-keys -t ls Down; changed || break; col >"$TMP/col"; n=$((n + 1))
	done
	shown=$(sed -n 's/^  \([0-9]*\) exits*:$/\1/p' "$TMP/col")
	rows=$(grep -c '^    to 0x[0-9a-f]*' "$TMP/col")
	[ -n "$shown" ] && [ "$shown" = "$want" ] && [ "$rows" = "$want" ]
	ok_show $? "$cc 80x24: scrolled ($n lines) to the exits: $want exits, as info loops counts them, one row each" "$TMP/col"
	! grep -qi 'traceback\|Python Exception' "$TMP/pane"
	ok $? "$cc 80x24: no Python error"
done

# Styles: in a terminal, file names, function names and addresses of
# `structure` carry the escapes GDB's own frame line gives them.
bin="$TMP/loops-gcc"
if [ -x "$bin" ]; then
	T kill-server 2>/dev/null
	sock="$TMP/tmux-style.sock"
	T new-session -d -s ls -x 200 -y 50 "env XDG_CACHE_HOME=$TMP/cache $GDB -nx -q -ex 'source $GDBEXT' \
		-ex 'break loops.c:$SB' -ex run -ex frame -ex 'structure' --args $bin 3 8; sleep 60"
	if wait_for '^  stmt ' 60; then
		T capture-pane -e -p -S -300 -t ls >"$TMP/styled"
		esc=$(printf '\033')
		# GDB's own line: "#0  scale (v=..." with the name in the function style.
		fn=$(grep -a "#0  " "$TMP/styled" | sed -n "s/.*#0  \($esc\[[0-9;]*m\)scale.*/\1/p" | head -n 1)
		file=$(grep -a "#0  " "$TMP/styled" | sed -n "s/.* at \($esc\[[0-9;]*m\)[^ ]*loops\.c.*/\1/p" | head -n 1)
		[ -n "$fn" ] && grep -a '^  proc ' "$TMP/styled" | grep -qF "${fn}scale"
		ok $? "structure prints function names in GDB's function style (as its frame line does)"
		[ -n "$file" ] && grep -a '^  loop ' "$TMP/styled" | grep -qF "at ${file}loops.c"
		ok $? "structure prints file names in GDB's file name style"
		grep -a '^  loop ' "$TMP/styled" | grep -q "header $esc\[3[0-9]m0x"
		ok $? "structure prints addresses in a style (GDB's address style)"
	else
		fail "gdb ran structure in a terminal"; sed 's/^/# /' "$TMP/pane"
	fi
fi
done_testing
