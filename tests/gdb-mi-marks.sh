#!/bin/sh
# gdb-mi-marks.sh - the loop marks of issue 22 in GDB's MI (gdb
# --interpreter=mi3, -loopscope-loops FUNC): "part"/"parts" for a source
# loop made into several machine loops (loop_lines.c's pump, gcc -O2),
# "compiler_made" (made.cpp's functions, g++ -O2), "line_guessed" (sources
# hidden with LOOPSCOPE_NO_SOURCE=1), each loop's marks and line those of
# `loopscope struct --format=json` for the same binary and environment
# (tests/fixtures/gdb/mi_marks.py); and each kind of mark present at all,
# so that the comparison is not of empty sets.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
[ -x "$LOOPSCOPE" ] || skip_all "loopscope CLI not built"
command -v g++ >/dev/null 2>&1 || skip_all "g++ not installed"
"$GDB" -nx -batch -ex 'python gdb.MICommand' >/dev/null 2>&1 || skip_all "this GDB has no gdb.MICommand (GDB 13 and later)"

# run_marks LABEL BIN FUNC...: the MI checks as TAP; the mark counts into $TMP/marks.
run_marks() {
	label=$1 bin=$2
	shift 2
	python3 "$FIXTURES/gdb/mi_marks.py" "$GDB" "$GDBEXT" "$LOOPSCOPE" "$bin" "$label" "$@" >"$TMP/mi.out" 2>&1
	rc=$?
	: >"$TMP/marks"
	while IFS= read -r line; do
		case $line in
		"ok - "*) pass "${line#ok - }" ;;
		"not ok - "*) fail "${line#not ok - }" ;;
		"marks: "*) echo "${line#marks: }" >>"$TMP/marks" ;;
		*) echo "# $line" ;;
		esac
	done <"$TMP/mi.out"
	ok $rc "$label: the MI session ran to its end"
}
marks_of() { sed -n "s/^$1 //p" "$TMP/marks"; }

bin="$TMP/loop_lines"
build_fixture gcc -O2 loop_lines.c "$bin" || fail_all "gcc -O2 loop_lines.c does not build"
run_marks "gcc -O2 loop_lines.c" "$bin" pump forever spin
n=$(marks_of part)
[ "${n:-0}" -ge 2 ]
ok $? "gcc -O2 loop_lines.c: pump's machine loops carry part/parts in MI ($n)"

export LOOPSCOPE_NO_SOURCE=1
run_marks "gcc -O2 loop_lines.c, LOOPSCOPE_NO_SOURCE=1" "$bin" pump forever spin
unset LOOPSCOPE_NO_SOURCE
n=$(marks_of line_guessed)
[ "${n:-0}" -ge 1 ]
ok $? "LOOPSCOPE_NO_SOURCE=1: guessed lines carry line_guessed in MI ($n)"

bin="$TMP/made"
build_fixture g++ -O2 made.cpp "$bin" -D_FORTIFY_SOURCE=2 -fstack-clash-protection ||
	fail_all "g++ -O2 made.cpp does not build"
fns=$(sed -n 's|.*MADE:\([a-z_]*\) [a-z ]*[a-z] \*/.*|\1|p' "$FIXTURES/made.cpp" | tr '\n' ' ')
# shellcheck disable=SC2086 # the function names, one word each
run_marks "g++ -O2 made.cpp" "$bin" $fns
n=$(marks_of compiler_made)
want=$(echo "$fns" | wc -w)
[ "${n:-0}" -ge "$want" ]
ok $? "g++ -O2 made.cpp: every function's loop carries compiler_made in MI ($n of $want functions)"
done_testing
