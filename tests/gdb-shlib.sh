#!/bin/sh
# gdb-shlib.sh - the GDB commands in a shared library, whose runtime
# addresses differ from its link-time ones by its load bias: `structure`
# equals `loopscope lookup --json` on the library at the link-time address,
# `bt` annotates the library's frame and the caller's, `loop-finish` leaves
# the library's loop after its last trip.  Then the same chain comparison in
# libc, whose debug information is a separate file.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace
[ -x "$LOOPSCOPE" ] || skip_all "loopscope CLI not built"

LB=$(grep -n '@lib-body' "$FIXTURES/gdb/shlib.c" | cut -d: -f1)
LL=$(grep -n '@lib-loop' "$FIXTURES/gdb/shlib.c" | cut -d: -f1)
LE=$(grep -n '@lib-end' "$FIXTURES/gdb/shlib.c" | cut -d: -f1)
N=16

for cc in $(gdb_compilers); do
	lib="$TMP/libls-$cc.so"
	bin="$TMP/shlib-$cc"
	if ! "$cc" -O2 -g -fPIC -shared -o "$lib" "$FIXTURES/gdb/shlib.c" ||
	   ! "$cc" -O2 -g -o "$bin" "$FIXTURES/gdb/shlib_main.c" "$lib" -Wl,-rpath,"$TMP"; then
		fail "$cc: build the library and its program"; continue
	fi
	out=$(gdb_run -ex "set breakpoint pending on" -ex "break shlib.c:$LB" -ex run -ex "structure -json" -ex bt -ex delete \
		-ex loop-finish -ex 'printf "trips=%d\n", lib_trips' -ex kill --args "$bin" $N 3)
	j=$(echo "$out" | grep '^{' | head -n 1)
	module=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["module"])' "$j" 2>/dev/null)
	addr=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["addr"])' "$j" 2>/dev/null)
	pc=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["pc"])' "$j" 2>/dev/null)
	if [ -z "$addr" ]; then
		fail "$cc: structure -json in the library printed a chain"; echo "$out" | sed 's/^/# /'; continue
	fi
	[ "$(basename "$module")" = "libls-$cc.so" ]
	ok $? "$cc: the pc is attributed to the library ($module)"
	[ "$pc" != "$addr" ]
	ok $? "$cc: runtime pc $pc maps to link-time $addr"
	$CHECK compare "$j" "$("$LOOPSCOPE" lookup --json "$lib" "$addr")"
	ok $? "$cc: structure equals loopscope lookup --json on the library at $addr"
	l=$(bt_loop_line "$out" 0 lib_sum)
	[ -n "$l" ] && [ "$l" -ge "$LL" ] && [ "$l" -le "$LE" ]
	ok $? "$cc: bt shows the library frame in its loop (line '$l' in $LL-$LE)"
	echo "$out" | grep -A1 '^#1 .*main (' | grep -q '^    in loop (.*) at .*shlib_main.c:'
	ok $? "$cc: bt shows main (in the executable) in its loop"
	check_eq "$(echo "$out" | sed -n 's/^trips=//p')" "$N" "$cc: loop-finish in the library stops after the loop's last trip"
done

# libc: a system library whose DWARF lives elsewhere (libc6-dbg, by build-id).
bin="$TMP/shlib-gcc"
if [ -x "$bin" ]; then
	out=$(gdb_run -ex "break printf" -ex run -ex "structure -json" -ex kill --args "$bin" 4 1)
	j=$(echo "$out" | grep '^{' | head -n 1)
	module=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["module"])' "$j" 2>/dev/null)
	addr=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["addr"])' "$j" 2>/dev/null)
	case "$module" in
	*/libc.so.6)
		pass "libc: the pc in printf is attributed to $module"
		$CHECK compare "$j" "$("$LOOPSCOPE" lookup --json "$module" "$addr")"
		ok $? "libc: structure in printf equals loopscope lookup --json on libc at $addr"
		[ "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["chain"][0]["name"])' "$j")" = printf ]
		ok $? "libc: the procedure is printf"
		;;
	*) fail "libc: the pc in printf is attributed to libc.so.6 (got '$module')"; echo "$out" | sed 's/^/# /' ;;
	esac
fi
done_testing
