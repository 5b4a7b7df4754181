#!/bin/sh
# gdb-core.sh - `bt` loop annotations on a live process, then every command
# on a core file written by `gcore` (gcc and clang, -O2): the same chain as
# `loopscope lookup --json`, the same annotations, $_loop_depth(), info loops,
# and loop-finish refusing (a core cannot run).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace
[ -x "$LOOPSCOPE" ] || skip_all "loopscope CLI not built"

IB=$(line_of inner-body); IL=$(line_of inner-loop); IE=$(line_of inner-end)
OL=$(line_of outer-loop); OE=$(line_of outer-end); CALL=$(line_of call-sum-row)
NL=$(line_of init-loop); NE=$(line_of init-end)
SB=$(line_of scale-body); SL=$(line_of scale-loop); SE=$(line_of scale-end)

# frame_loop OUTPUT LEVEL FUNCTION: the loop line bt shows for frame #LEVEL in FUNCTION.
frame_loop() { bt_loop_line "$@"; }
# in_range LINE LO HI
in_range() { [ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

check_bt() { # LABEL OUTPUT
	l=$(frame_loop "$2" 0 sum_row); in_range "$l" "$IL" "$IE"
	ok $? "$1: bt shows frame #0 (inlined sum_row) in the inner loop (line '$l' in $IL-$IE)"
	l=$(frame_loop "$2" 1 main); in_range "$l" "$OL" "$OE"
	ok $? "$1: bt shows frame #1 (main) in the outer loop (line '$l' in $OL-$OE)"
}

for cc in $(gdb_compilers); do
	bin="$TMP/loops-$cc"
	core="$TMP/core-$cc"
	if ! build_fixture "$cc" -O2 gdb/loops.c "$bin"; then
		fail "$cc: build the fixture"; continue
	fi

	# Live: a physical callee frame in a loop, called from a loop.
	out=$(gdb_run -ex "break loops.c:$SB" -ex run -ex bt -ex kill --args "$bin" 7 5)
	l=$(frame_loop "$out" 0 scale); in_range "$l" "$SL" "$SE"
	ok $? "$cc, live: bt shows frame #0 (scale) in its loop (line '$l' in $SL-$SE)"
	l=$(frame_loop "$out" 1 main); in_range "$l" "$OL" "$OE"
	ok $? "$cc, live: bt shows frame #1 (main, a caller) in the outer loop (line '$l' in $OL-$OE)"

	# Live, in the inlined callee's loop; write the core there.
	out=$(gdb_run -ex "break loops.c:$IB" -ex run -ex bt -ex "gcore $core" -ex kill --args "$bin" 7 5)
	check_bt "$cc, live" "$out"
	if [ ! -s "$core" ]; then
		fail "$cc: gcore wrote a core file"; diag "$out"; continue
	fi

	out=$(gdb_run "$bin" "$core" -ex bt -ex "structure -json" -ex 'printf "depth=%d\n", $_loop_depth()' \
		-ex loop-finish)
	check_bt "$cc, core" "$out"
	j=$(echo "$out" | grep '^{' | head -n 1)
	addr=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["addr"])' "$j" 2>/dev/null)
	if [ -z "$addr" ]; then
		fail "$cc, core: structure -json printed a chain"; diag "$out"
	else
		$CHECK compare "$j" "$("$LOOPSCOPE" lookup --json "$bin" "$addr")"
		ok $? "$cc, core: structure at \$pc equals loopscope lookup --json at $addr field by field"
		$CHECK shape "$j" "$CALL" "$IB" "$OL" "$OE" "$IL" "$IE"
		ok $? "$cc, core: the chain is main > outer loop > inlined sum_row > inner loop > line $IB"
	fi
	d=$(echo "$out" | sed -n 's/^depth=//p')
	check_eq "$d" 2 "$cc, core: \$_loop_depth() is 2, the outer and the inner loop"
	echo "$out" | grep -q 'loop-finish: the program is not running'
	ok $? "$cc, core: loop-finish refuses, saying why"

	gdb_run "$bin" "$core" -ex "info loops main" >"$TMP/info"
	$CHECK info-loops "$TMP/info" "$CALL" "$NL" "$NE" "$OL" "$OE" "$IL" "$IE"
	ok_show $? "$cc, core: info loops main lists the loops with their lines and nesting" "$TMP/info"
done
done_testing
