#!/bin/sh
# gdb-mi-stops.sh - loop-next and loop-finish under MI, as IDEs drive them
# (gdb --interpreter=mi3, gcc and clang -O2): every line parses as strict
# MI3, every *stopped record they make has its reason, frame and thread-id
# (all-stop and non-stop, a plain exit, an exception, another thread
# throwing), the last one is where the program is; -stack-list-arguments
# answers with the backtrace decorator on; no =cmd-param-changed.
# The checks are in tests/fixtures/gdb/mi_stops.py (parser: mi3.py).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace
"$GDB" -nx -batch -ex 'python gdb.MICommand' >/dev/null 2>&1 || skip_all "this GDB has no gdb.MICommand (GDB 13 and later)"

IB=$(line_of inner-body)
TB=$(grep -n '@throw-body' "$FIXTURES/gdb/leave.cpp" | cut -d: -f1)
SB=$(grep -n '@spin-body' "$FIXTURES/gdb/threads_leave.cpp" | cut -d: -f1)
for cc in $(gdb_compilers); do
	cxx=g++; [ "$cc" = clang ] && cxx=clang++
	if ! build_fixture "$cc" -O2 gdb/loops.c "$TMP/loops-$cc" ||
	   ! build_fixture "$cxx" -O2 gdb/leave.cpp "$TMP/leave-$cc" ||
	   ! build_fixture "$cxx" -O2 gdb/threads_leave.cpp "$TMP/threads-$cc" -pthread; then
		fail "$cc: build the fixtures"; continue
	fi
	MI_LOG="$TMP/mi-$cc.log" python3 "$FIXTURES/gdb/mi_stops.py" "$GDB" "$GDBEXT" "$TMP/loops-$cc" \
		"$TMP/leave-$cc" "$TMP/threads-$cc" "$IB" "$TB" "$SB" "$cc" >"$TMP/out" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok - "*) pass "${line#ok - }" ;;
		"not ok - "*) fail "${line#not ok - }" ;;
		*) echo "# $line" ;;
		esac
	done <"$TMP/out"
	ok $rc "$cc: the MI sessions ran to their end"
	[ $rc -eq 0 ] || tail -n 40 "$TMP/mi-$cc.log" | sed 's/^/# /'
done
done_testing
