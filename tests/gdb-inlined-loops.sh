#!/bin/sh
# gdb-inlined-loops.sh - `info loops F` for a function F that exists only
# inlined (tests/fixtures/gdb/inlined_only.c: scale_sum, inlined into
# host_a and into host_b's loop), gcc and clang at -O2, no process: the
# loop of every inlined call is listed under its host procedure and its
# call site, and no loop of the hosts' own.  The expected hosts, call lines
# and loop lines come from the fixture's markers; that F has no procedure
# of its own from nm.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
GDB_FIXTURE="$FIXTURES/gdb/inlined_only.c"
LOOP=$(line_of scale-loop); CALL_A=$(line_of call-a); CALL_B=$(line_of call-b)
HOST_B_LOOP=$(line_of host-b-loop); MAIN_LOOP=$(line_of main-loop)

for cc in $(gdb_compilers); do
	bin="$TMP/inlined-$cc"
	build_fixture "$cc" -O2 gdb/inlined_only.c "$bin" || { fail "$cc builds inlined_only.c"; continue; }
	if nm "$bin" | grep -q scale_sum; then
		skip "$cc: scale_sum has a copy of its own here (not inlined only)"
		continue
	fi
	gdb_run "$bin" -ex 'info loops scale_sum' >"$TMP/out" 2>&1
	grep -q "^scale_sum exists only inlined: 2 inlined calls, 2 with loops" "$TMP/out"
	ok_show $? "$cc: info loops scale_sum: two inlined calls, both with loops" "$TMP/out"
	# Each host, with the call site, followed by the callee's loop lines.
	python3 - "$TMP/out" "$LOOP" "$CALL_A" "$CALL_B" "$HOST_B_LOOP" "$MAIN_LOOP" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
loop, call_a, call_b, host_b_loop, main_loop = sys.argv[2:]
blocks = re.split(r"^  in ", text, flags=re.M)[1:]
hosts = {}
for b in blocks:
    head, *rest = b.splitlines()
    m = re.match(r"(\w+), scale_sum called at inlined_only\.c:(\d+):$", head)
    if not m:
        print("# bad host line: " + head)
        sys.exit(1)
    lines = [re.search(r"loop at inlined_only\.c:(\d+)", r).group(1) for r in rest if "loop at" in r]
    hosts[m.group(1)] = (m.group(2), lines)
want = {"host_a": call_a, "host_b": call_b}
for h, call in want.items():
    if h not in hosts or hosts[h][0] != call:
        print("# %s: want a call at line %s, got %s" % (h, call, hosts.get(h)))
        sys.exit(1)
    if not hosts[h][1] or set(hosts[h][1]) != {loop}:
        print("# %s: want loops at line %s only, got %s" % (h, loop, hosts[h][1]))
        sys.exit(1)
if set(hosts) != set(want):
    print("# hosts: %s" % sorted(hosts))
    sys.exit(1)
PY
	ok_show $? "$cc: host_a (call line $CALL_A) and host_b (call line $CALL_B) each list the loop at line $LOOP, and no host loop (lines $HOST_B_LOOP, $MAIN_LOOP)" "$TMP/out"
	# A procedure of its own still gets its own nest (host_b: its loop
	# around the inlined call).
	gdb_run "$bin" -ex 'info loops host_b' >"$TMP/own" 2>&1
	grep -q "loop at inlined_only.c:$HOST_B_LOOP" "$TMP/own" && grep -q "inlined scale_sum  called at inlined_only.c:$CALL_B" "$TMP/own"
	ok_show $? "$cc: info loops host_b shows its own loop with the inlined call in it" "$TMP/own"
done
done_testing
