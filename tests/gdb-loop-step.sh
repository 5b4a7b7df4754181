#!/bin/sh
# gdb-loop-step.sh - loop-next, break-loop, and loop-finish left by longjmp
# and by a C++ throw, in real GDB on gcc and clang -O2 fixtures (loops.c,
# leave.cpp).  The loops' volatile trip counters say how many iterations ran.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace

SB=$(line_of scale-body); SL=$(line_of scale-loop); IB=$(line_of inner-body)
ROWS=7 COLS=16

value() { echo "$2" | sed -n "s/^$1=//p" | head -n 1; }
# header_is_pc OUTPUT TAG: the "TAG pc=... hdr=..." line printed by $HDR says
# that $pc is the header of the innermost (or depth-D) loop.
HDR='python import json,gdb; j=json.loads(gdb.execute("structure -json", to_string=True)); L=[s for s in j["chain"] if s["kind"]=="loop"]; b=int(j["pc"],16)-int(j["addr"],16); print("%s pc=%#x hdrs=%s" % ("TAG", int(j["pc"],16), ",".join(hex(int(s["header"],16)+b) for s in L)))'
hdr() { echo "$HDR" | sed "s/TAG/$1/"; }
# innermost_header OUTPUT TAG: "yes" if $pc was the innermost loop's header.
at_header() { # OUTPUT TAG [INDEX]
	echo "$1" | awk -v t="$2" -v k="${3:-0}" '$1 == t {
		pc = substr($2, 4); n = split(substr($3, 6), h, ",");
		i = (k == 0) ? n : k; print (n > 0 && h[i] == pc) ? "yes" : "no (pc " pc ", headers " substr($3, 6) ")"; exit }'
}

for cc in $(gdb_compilers); do
	case $cc in gcc) cxx=g++ ;; clang) cxx=clang++ ;; esac
	bin="$TMP/loops-$cc"
	if ! build_fixture "$cc" -O2 gdb/loops.c "$bin"; then
		fail "$cc: build the fixture"; continue
	fi

	# loop-next, loop-next, loop-next 3 in scale's loop.
	out=$(gdb_run -ex "break loops.c:$SB" -ex run -ex delete \
		-ex loop-next -ex 'printf "s1=%d\n", scale_trips' -ex "$(hdr H1)" \
		-ex loop-next -ex 'printf "s2=%d\n", scale_trips' \
		-ex 'loop-next 3' -ex 'printf "s5=%d\n", scale_trips' -ex "$(hdr H5)" \
		-ex 'loop-next 100' -ex 'printf "sx=%d\n", scale_trips' -ex kill --args "$bin" $ROWS $COLS)
	s1=$(value s1 "$out"); s2=$(value s2 "$out"); s5=$(value s5 "$out")
	check_eq "$(at_header "$out" H1)" yes "$cc: loop-next stops at the loop's header"
	check_eq "$(at_header "$out" H5)" yes "$cc: loop-next 3 stops at the loop's header"
	# One machine iteration runs u source iterations (u > 1 where the
	# compiler unrolled the loop): the counter must advance by 3u.
	u=$((${s2:-0} - ${s1:-0}))
	[ "$u" -ge 1 ] && [ $((${s5:-0} - ${s2:-0})) -eq $((3 * u)) ]
	ok $? "$cc: loop-next 3 advances the trip counter by 3 iterations ($s2 -> $s5, $u per machine iteration)"
	echo "$out" | grep -q "^at the header of the loop at loops.c:$SL (header 0x[0-9a-f]*, depth 1), 3 iterations on"
	ok $? "$cc: loop-next says which loop and how many iterations"
	check_eq "$(value sx "$out")" "$COLS" "$cc: loop-next 100 stops when the loop is left (all $COLS trips done)"
	echo "$out" | grep -q "^left loop at loops.c:$SL .* via exit .* after [0-9]* of 100 iterations"
	ok $? "$cc: ... and says it left the loop before the 100th iteration"

	# -depth 1 from the inner loop (inlined sum_row): the outer loop's header.
	out=$(gdb_run -ex "break loops.c:$IB" -ex run -ex delete -ex 'printf "o0=%d\n", outer_trips' \
		-ex 'loop-next -depth 1' -ex 'printf "o1=%d\n", outer_trips' -ex "$(hdr D1)" -ex kill --args "$bin" $ROWS $COLS)
	check_eq "$(at_header "$out" D1 1)" yes "$cc: loop-next -depth 1 stops at the header of the depth-1 loop" ||
		echo "$out" | sed 's/^/# gdb: /'
	check_eq "$(value o1 "$out")" "$(($(value o0 "$out") + 1))" "$cc: ... one outer iteration later (outer_trips + 1)"

	# break-loop before the program runs: header, then exits.
	out=$(gdb_run -ex "break-loop loops.c:$SL" -ex run -ex 'printf "h=%d\n", scale_trips' -ex "$(hdr BH)" \
		-ex delete -ex "break-loop -exit loops.c:$SL" -ex continue -ex 'printf "x=%d\n", scale_trips' \
		-ex "$(hdr BX)" -ex kill --args "$bin" $ROWS $COLS)
	check_eq "$(at_header "$out" BH)" yes "$cc: break-loop LOCATION stops at the loop's header"
	check_eq "$(value h "$out")" 0 "$cc: ... at the first iteration"
	check_eq "$(value x "$out")" "$COLS" "$cc: break-loop -exit stops when the loop is done (scale_trips = $COLS)"
	echo "$out" | grep -q '^BX pc=0x[0-9a-f]* hdrs=$'
	ok $? "$cc: ... outside the loop (no loop around the stop pc)"
	echo "$out" | grep -q "^Breakpoints* [0-9-]*: exits of the loop at loops.c:$SL"
	ok $? "$cc: break-loop -exit says which loop the breakpoints belong to"

	# longjmp and throw out of a loop (leave.cpp, C++).
	leave="$TMP/leave-$cc"
	if ! "$cxx" -O2 -g -o "$leave" "$FIXTURES/gdb/leave.cpp" 2>"$TMP/cc.err"; then
		fail "$cxx: build leave.cpp"; continue
	fi
	JB=$(grep -n '@jmp-body' "$FIXTURES/gdb/leave.cpp" | cut -d: -f1)
	JL=$(grep -n '@jmp-loop' "$FIXTURES/gdb/leave.cpp" | cut -d: -f1)
	TB=$(grep -n '@throw-body' "$FIXTURES/gdb/leave.cpp" | cut -d: -f1)
	TL=$(grep -n '@throw-loop' "$FIXTURES/gdb/leave.cpp" | cut -d: -f1)
	TC=$(grep -n '@throw-caught' "$FIXTURES/gdb/leave.cpp" | cut -d: -f1)
	out=$(gdb_run -ex "break leave.cpp:$JB" -ex run -ex delete -ex loop-finish -ex 'printf "j=%d\n", jmp_trips' \
		-ex "break leave.cpp:$TB" -ex continue -ex delete -ex loop-finish -ex 'printf "t=%d\n", throw_trips' \
		-ex kill --args "$leave" 10)
	echo "$out" | grep -q "^left loop at leave.cpp:$JL (header 0x[0-9a-f]*, depth 1) by longjmp; now at leave.cpp:[0-9]* in main"
	ok $? "$cxx: loop-finish left by longjmp says so, and stops in main where setjmp returns"
	check_eq "$(value j "$out")" 4 "$cxx: ... after the 4th trip (the one that jumped)"
	echo "$out" | grep -q "^left loop at leave.cpp:$TL (header 0x[0-9a-f]*, depth 1) by a C++ exception, caught in main; now at leave.cpp:[0-9]* in main"
	ok $? "$cxx: loop-finish left by a C++ throw says so, and where it was caught"
	l=$(echo "$out" | sed -n 's/.*by a C++ exception.*now at leave.cpp:\([0-9]*\) .*/\1/p')
	[ -n "$l" ] && [ "$l" -ge $((TC - 1)) ] && [ "$l" -le "$TC" ]
	ok $? "$cxx: ... stopped in the handler (line '$l', the catch at $((TC - 1))-$TC)"
	check_eq "$(value t "$out")" 4 "$cxx: ... after the 4th trip (the one that threw)"
	[ -z "$(echo "$out" | grep -i 'traceback\|Python Exception')" ]
	ok $? "$cc: no Python error"
done
done_testing
