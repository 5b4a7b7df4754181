#!/bin/sh
# gdb-loop-finish.sh - `loop-finish` in real GDB on the gdb fixture (gcc and
# clang, -O2): from inside a loop it must stop where the loop is left, with
# the loop's volatile trip counter equal to the trip count.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace

IB=$(line_of inner-body); IL=$(line_of inner-loop); IE=$(line_of inner-end)
OL=$(line_of outer-loop); OE=$(line_of outer-end)
SB=$(line_of scale-body); SL=$(line_of scale-loop); SE=$(line_of scale-end)
RB=$(line_of rec-body)
# COLS is a multiple of 8: a compiler that unrolls a loop by 2, 4 or 8 runs
# the remainder trips after the machine loop (peeled code, not a loop), so
# only then does "left the loop" coincide with "did every trip".
ROWS=7 COLS=8

# value NAME OUTPUT: the value of "NAME=..." printed by `printf "NAME=%d\n"`.
value() { echo "$2" | sed -n "s/^$1=//p" | head -n 1; }
# left_line OUTPUT N: the line of the N-th "left loop at FILE:LINE" report.
left_line() { echo "$1" | grep 'left loop at' | sed -n "${2}p" | sed 's/.*left loop at [^:]*:\([0-9]*\).*/\1/'; }

for cc in $(gdb_compilers); do
	bin="$TMP/loops-$cc"
	if ! build_fixture "$cc" -O2 gdb/loops.c "$bin"; then
		fail "$cc: build the fixture"; continue
	fi

	# Stopped in the first trip of the inner loop (inlined sum_row, row 0):
	# leave it, then leave the outer loop of main.
	out=$(gdb_run -ex "break loops.c:$IB" -ex run -ex delete \
		-ex loop-finish -ex 'printf "inner1=%d\n", inner_trips' -ex 'printf "outer1=%d\n", outer_trips' \
		-ex loop-finish -ex 'printf "inner2=%d\n", inner_trips' -ex 'printf "outer2=%d\n", outer_trips' \
		-ex kill --args "$bin" $ROWS $COLS)
	check_eq "$(value inner1 "$out")" "$COLS" "$cc: loop-finish in the inner loop stops after its last trip (inner_trips = cols)"
	check_eq "$(value outer1 "$out")" "0" "$cc: ... and before the outer loop's first trip ends (outer_trips = 0)"
	l=$(left_line "$out" 1)
	[ -n "$l" ] && [ "$l" -ge "$IL" ] && [ "$l" -le "$IE" ]
	ok $? "$cc: the report names the inner loop (line '$l' in $IL-$IE)"
	check_eq "$(value inner2 "$out")" "$((ROWS * COLS))" "$cc: second loop-finish leaves the outer loop (inner_trips = rows*cols)"
	check_eq "$(value outer2 "$out")" "$ROWS" "$cc: ... with outer_trips = rows"
	l=$(left_line "$out" 2)
	[ -n "$l" ] && [ "$l" -ge "$OL" ] && [ "$l" -le "$OE" ]
	ok $? "$cc: the second report names the outer loop (line '$l' in $OL-$OE)"
	echo "$out" | grep -q 'now at loops.c:[0-9]* in main'
	ok $? "$cc: the report says where the program stopped"

	# A loop in a non-inlined callee, entered from main's outer loop, with -count.
	out=$(gdb_run -ex "break loops.c:$SB" -ex run -ex delete -ex 'loop-finish -count' \
		-ex 'printf "scale=%d\n", scale_trips' -ex kill --args "$bin" $ROWS $COLS)
	check_eq "$(value scale "$out")" "$COLS" "$cc: loop-finish in scale's loop stops after its last trip"
	echo "$out" | grep -q 'now at loops.c:[0-9]* in scale'
	ok $? "$cc: ... still inside scale (the exit, not the return)"
	n=$(echo "$out" | sed -n 's/.*header reached \([0-9]*\) time.*/\1/p')
	# Stopped inside trip 1; the header is reached once per later trip, or
	# once more if the loop tests its condition at the header.  A loop
	# unrolled by the compiler reaches it less often, never more.
	[ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -le "$COLS" ]
	ok $? "$cc: -count reports the header visits (got '$n', at most $COLS)"

	# Recursion: the loop's exit is also reached by deeper activations of
	# the same procedure first; loop-finish must wait for its own frame.
	out=$(gdb_run -ex "break loops.c:$RB" -ex run -ex delete -ex loop-finish \
		-ex 'printf "rec2=%d rec1=%d rec0=%d\n", rec_trips[2], rec_trips[1], rec_trips[0]' \
		-ex kill --args "$bin" 2 2 2 4)
	check_eq "$(echo "$out" | sed -n 's/^rec2=//p')" "4 rec1=16 rec0=64" \
		"$cc: loop-finish in a recursive procedure stops where its own activation leaves the loop"

	# A breakpoint inside the loop stops loop-finish early; it says so.
	out=$(gdb_run -ex "break loops.c:$SB" -ex run -ex loop-finish -ex kill --args "$bin" $ROWS $COLS)
	echo "$out" | grep -q 'Stopped before leaving the loop'
	ok $? "$cc: a user breakpoint inside the loop stops loop-finish early, and it says so"
	[ -z "$(echo "$out" | grep -i traceback)" ]
	ok $? "$cc: no Python traceback"
done
done_testing
