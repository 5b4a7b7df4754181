#!/bin/sh
# gdb-mi.sh - the MI commands (-loopscope-structure, -loopscope-loops,
# -loopscope-stack) in real GDB (gdb --interpreter=mi3) on the gdb fixture
# (gcc and clang, -O2): their output parsed as MI and checked field by field
# against `loopscope lookup --json`; and -stack-list-frames with frame filters
# enabled identical with and without the extension (frame names stay GDB's).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace
[ -x "$LOOPSCOPE" ] || skip_all "loopscope CLI not built"
"$GDB" -nx -batch -ex 'python gdb.MICommand' >/dev/null 2>&1 || skip_all "this GDB has no gdb.MICommand (GDB 13 and later)"

IB=$(line_of inner-body); IL=$(line_of inner-loop); IE=$(line_of inner-end)
OL=$(line_of outer-loop); OE=$(line_of outer-end); CALL=$(line_of call-sum-row)

for cc in $(gdb_compilers); do
	bin="$TMP/loops-$cc"
	if ! build_fixture "$cc" -O2 gdb/loops.c "$bin"; then
		fail "$cc: build the fixture"; continue
	fi
	python3 "$FIXTURES/gdb/mi_check.py" "$GDB" "$GDBEXT" "$LOOPSCOPE" "$bin" "$cc -O2" \
		"$IB" "$IL" "$IE" "$OL" "$OE" "$CALL" >"$TMP/mi.out" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok - "*) pass "${line#ok - }" ;;
		"not ok - "*) fail "${line#not ok - }" ;;
		*) echo "# $line" ;;
		esac
	done <"$TMP/mi.out"
	ok $rc "$cc: the MI session ran to its end"
done
done_testing
