#!/bin/sh
# gdb-break-loop.sh - break-loop on a loop inlined five times (copies.c, gcc
# and clang -O2): one breakpoint per copy, each one hit (the copies are the
# loops `loopscope struct` finds at that line, an oracle outside GDB), and
# -exit on the same copies; `if COND`, `thread N`, -temporary (the first
# hit deletes the group); pending in a library that is only dlopen'ed
# later (dlopen_main.c, shlib.c), resolved at the load, with its condition.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace
[ -x "$LOOPSCOPE" ] || skip_all "loopscope CLI not built"

src="$FIXTURES/gdb/copies.c"
ML=$(grep -n '@mix-loop' "$src" | cut -d: -f1)
# The stops of a run (hits.py runs the program), until the program ends: "hit BPNUM PC LOOPLINES TRIPS"
# per stop (LOOPLINES: the lines of the loops around the pc, from structure).
cat >"$TMP/hits.py" <<'PY'
import gdb, json
hits = []
gdb.events.stop.connect(lambda ev: hits.extend(b.number for b in getattr(ev, "breakpoints", [])))
gdb.execute("run", to_string=True)
while gdb.selected_inferior().pid:
    chain = json.loads(gdb.execute("structure -json", to_string=True))["chain"]
    lines = ",".join(str(c.get("line")) for c in chain if c["kind"] == "loop") or "-"
    print("hit %s 0x%x %s %d" % (hits[-1] if hits else "?", gdb.selected_frame().pc(), lines,
                                 int(gdb.parse_and_eval("mix_trips"))))
    gdb.execute("continue", to_string=True)
PY
N=8
for cc in $(gdb_compilers); do
	bin="$TMP/copies-$cc"
	build_fixture "$cc" -O2 gdb/copies.c "$bin" || { fail "$cc: build copies.c"; continue; }
	want=$("$LOOPSCOPE" struct --format=json "$bin" | python3 -c '
import json, sys
def walk(n):
    if n["kind"] == "loop" and n.get("line") == int(sys.argv[1]) and (n.get("file") or "").endswith("copies.c"):
        yield n
    for c in n.get("children", []):
        yield from walk(c)
print(len(list(walk(json.load(sys.stdin)))))' "$ML")
	out=$(gdb_run -ex "break-loop copies.c:$ML" -ex 'info breakpoints' -ex "source $TMP/hits.py" --args "$bin" $N)
	echo "$out" | grep -q "^Breakpoints 1-$want: header of the loop at copies.c:$ML, in each of its $want copies (in "
	ok_show $? "$cc: break-loop copies.c:$ML sets one breakpoint per copy ($want copies, as loopscope struct finds them)" \
		"$(echo "$out" >"$TMP/o"; echo "$TMP/o")"
	[ "$want" -ge 5 ]
	ok $? "$cc: ... five copies at least ($want): h1, h2 twice, h3, main"
	hit=$(echo "$out" | awk '/^hit /{print $2}' | sort -u | wc -l)
	check_eq "$hit" "$want" "$cc: ... and the program stops at every one of them"
	! echo "$out" | grep '^hit ' | awk -v l="$ML" '{ n = split($4, a, ","); if (a[n] != l) print }' | grep -q .
	ok $? "$cc: ... each stop inside the loop at line $ML"
	locs=$(gdb_run -ex "break copies.c:$ML" "$bin" | sed -n 's/.*(\([0-9]*\) locations)$/\1/p')
	[ -n "$locs" ] && [ "$locs" -ge "$want" ]
	ok $? "$cc: GDB's own break copies.c:$ML has a location in every copy too ($locs >= $want)"

	out=$(gdb_run -ex "break-loop -exit copies.c:$ML" -ex "source $TMP/hits.py" --args "$bin" $N)
	nx=$(echo "$out" | sed -n "s/^Breakpoints* [0-9]*-\\{0,1\\}\\([0-9]*\\): exits of the loop at copies.c:$ML, in each of its $want copies.*/\\1/p")
	[ -n "$nx" ] && [ "$nx" -ge "$want" ]
	ok $? "$cc: break-loop -exit: the exits of the same $want copies ($nx breakpoints)"
	[ "$(echo "$out" | grep '^hit ' | awk '{print $2}' | sort -u | wc -l)" -ge 4 ]
	ok $? "$cc: ... the program leaves the copies in h1, h2, h3 and main"
	! echo "$out" | grep '^hit ' | awk -v l="$ML" '{ n = split($4, a, ","); if (a[n] == l) print }' | grep -q .
	ok $? "$cc: ... each stop outside the loop at line $ML"

	out=$(gdb_run -ex "break-loop copies.c:$ML if mix_trips >= 3 && mix_trips < 5" \
		-ex "source $TMP/hits.py" --args "$bin" $N)
	n=$(echo "$out" | grep -c '^hit ')
	[ "$n" -ge 1 ] && [ "$n" -le 2 ]
	ok $? "$cc: break-loop ... if mix_trips >= 3 && mix_trips < 5: one or two stops in the whole run ($n)"
	! echo "$out" | grep '^hit ' | awk '$5 < 3 || $5 >= 5' | grep -q .
	ok $? "$cc: ... where the condition holds"
	out=$(gdb_run -ex 'break main' -ex run -ex "break-loop copies.c:$ML thread 1" -ex 'info breakpoints' -ex kill --args "$bin" $N)
	check_eq "$(echo "$out" | grep -c 'stop only in thread 1')" "$want" "$cc: break-loop ... thread 1: every copy's breakpoint is for thread 1"
	out=$(gdb_run -ex "break-loop -temporary copies.c:$ML" -ex "source $TMP/hits.py" -ex 'info breakpoints' --args "$bin" $N)
	echo "$out" | grep -q "^Breakpoints 1-$want: header of the loop at copies.c:$ML, in each of its $want copies .*; temporary"
	ok $? "$cc: break-loop -temporary says so"
	echo "$out" | grep -q '^No breakpoints or watchpoints\.'
	ok $? "$cc: ... the first hit deletes every copy's breakpoint"
	check_eq "$(echo "$out" | grep -c '^hit ')" 1 "$cc: ... one stop in the whole run"
done

# Pending: the loop is in a library the program dlopens later.
cc=gcc
lib="$TMP/libshlib.so"
if gcc -O2 -g -shared -fPIC -o "$lib" "$FIXTURES/gdb/shlib.c" && build_fixture gcc -O2 gdb/dlopen_main.c "$TMP/dlm" -ldl; then
	LL=$(grep -n '@lib-loop' "$FIXTURES/gdb/shlib.c" | cut -d: -f1)
	out=$(gdb_run -ex "break-loop shlib.c:$LL if lib_trips == 5" -ex 'info breakpoints' -ex run \
		-ex 'printf "trips=%d depth=%d\n", lib_trips, $_loop_depth()' -ex structure -ex 'info breakpoints' \
		-ex kill --args "$TMP/dlm" "$lib")
	echo "$out" | grep -q "^break-loop: No source file named shlib.c; breakpoint 1 stands for it until a shared library defines it"
	ok_show $? "dlopen: break-loop before the library is loaded is pending" "$(echo "$out" >"$TMP/o"; echo "$TMP/o")"
	echo "$out" | grep -q '^1 *breakpoint *keep y *<PENDING> *shlib.c:'
	ok $? "dlopen: ... and info breakpoints shows it pending"
	echo "$out" | grep -q "^Breakpoint 2: header of the loop at shlib.c:$LL (header 0x[0-9a-f]*, depth 1) in lib_sum; if lib_trips == 5" &&
		echo "$out" | grep -q "^break-loop: pending breakpoint 1 (shlib.c:$LL if lib_trips == 5) resolved"
	ok $? "dlopen: at the dlopen, it becomes the loop's breakpoint, with its condition"
	echo "$out" | grep -q '^trips=5 depth=1$'
	ok $? "dlopen: the program stops in the library's loop where the condition holds"
	hdr=$(echo "$out" | sed -n 's/^  loop    at shlib.c:[0-9]*  header \(0x[0-9a-f]*\)  depth 1$/\1/p')
	echo "$out" | grep -q "^$hdr is .*libshlib.so+0x"
	ok $? "dlopen: ... at the loop's header ($hdr)"
	! echo "$out" | grep -qiE 'traceback|Python Exception'
	ok $? "dlopen: no Python error"
else
	fail "dlopen: build the library and the program"
fi
done_testing
