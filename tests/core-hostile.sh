#!/bin/sh
# tests/core-hostile.sh - loopscope on files made to hang it, to exhaust it,
# or to reach undefined behaviour; each must end by itself with a clear
# message or a correct structure.
#
#   - a FIFO and a device as BINARY, a FIFO where the separate debug file
#     (.gnu_debuglink) would be: no hang, the file named with its type;
#   - DWARF nested 1,100 DIEs deep (lexical blocks): read, not called corrupt;
#   - a loop nest 300 deep: the lookup chain keeps the procedure and the
#     outermost loops, and marks the cut (text and JSON);
#   - a sparse ELF declaring a 1 GiB function: a warning, not gigabytes;
#   - an .eh_frame CIE with a 9-byte SLEB128 (get_sleb's shift by 63) and a
#     binary without procedures in XML (qsort(NULL, 0)): correct output;
#     under scripts/check-sanitizers UBSan would stop either.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

[ -x "$LOOPSCOPE" ] || skip_all "$LOOPSCOPE not built"
command -v gcc >/dev/null || skip_all "gcc not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"

# run LABEL ARGS...: loopscope ARGS, at most 60 s; rc, $TMP/out, $TMP/err.
run() {
	_label=$1
	shift
	timeout 60 "$LOOPSCOPE" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc -ge 124 ] || grep -q 'Sanitizer\|runtime error:' "$TMP/err"; then
		fail "$_label: ends by itself, no sanitizer report (exit $rc)"
		head -c 600 "$TMP/err" | sed 's/^/# /'
		return 1
	fi
	return 0
}

mkfifo "$TMP/fifo"
if run "a FIFO as BINARY" struct "$TMP/fifo"; then
	[ $rc -eq 1 ] && grep -q "fifo: not a regular file (a FIFO)" "$TMP/err"
	ok $? "a FIFO as BINARY: exit 1 at once, saying it is a FIFO"
fi
if run "a device as BINARY" struct /dev/zero; then
	[ $rc -eq 1 ] && grep -q "/dev/zero: not a regular file (a character device)" "$TMP/err"
	ok $? "a character device as BINARY: exit 1, saying what it is"
fi

# .gnu_debuglink naming a FIFO next to the binary.
build_fixture gcc -O2 loops.c "$TMP/linked" || fail_all "gcc builds loops.c"
objcopy --only-keep-debug "$TMP/linked" "$TMP/linked.debug" && strip -g "$TMP/linked" &&
	objcopy --add-gnu-debuglink="$TMP/linked.debug" "$TMP/linked" && rm -f "$TMP/linked.debug" &&
	mkfifo "$TMP/linked.debug" || fail_all "objcopy makes a debuglink to a FIFO"
if run "a FIFO as the separate debug file" struct --no-cache "$TMP/linked"; then
	[ $rc -eq 0 ] && grep -q "linked.debug is a FIFO, not a debug file" "$TMP/err" && grep -q "proc main" "$TMP/out"
	ok $? "a FIFO as the separate debug file: no hang; a warning names it; the structure from symbols"
fi

# 1,100 nested lexical blocks: valid DWARF, deeper than the old 1,024 bound.
python3 - "$TMP/deepdie.c" <<'PY'
import sys
n = 1100
lines = ["volatile int sink;", "int main(int argc, char **argv) {"]
lines += ["{ volatile int v%d = argc + %d; sink += v%d;" % (i, i, i) for i in range(n)]
lines += ["}"] * n + ["return 0; }"]
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
gcc -O0 -g -o "$TMP/deepdie" "$TMP/deepdie.c" || fail_all "gcc builds the 1,100-deep DWARF"
if run "DWARF nested 1,100 deep" struct --no-cache "$TMP/deepdie"; then
	[ $rc -eq 0 ] && ! grep -q "corrupt DWARF" "$TMP/err" && grep -q "stmt deepdie.c:1102" "$TMP/out"
	ok $? "DWARF nested 1,100 DIEs deep: read (no 'corrupt DWARF'), its lines in the structure"
fi

# A loop nest 300 deep: the chain is cut in the middle, not at the top.
python3 - "$TMP/deep.c" <<'PY'
import sys
n = 300
lines = ["volatile int sink;", "int main(int argc, char **argv) {", "int n = argc;"]
lines += ["for (int i%d = 0; i%d < n; i%d++) {" % (i, i, i) for i in range(n)]
lines += ["sink += i%d;" % (n - 1)] + ["}"] * n + ["return 0; }"]
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
gcc -O1 -g -o "$TMP/deep" "$TMP/deep.c" || fail_all "gcc builds the 300-deep nest"
# the statement of the innermost loop body: "sink += i299;" is line 304
addr=$("$LOOPSCOPE" struct --no-cache --format=json "$TMP/deep" 2>/dev/null | python3 -c '
import json, sys
best = None
def walk(n, d):
    global best
    if n["kind"] == "stmt" and n.get("line") == 304 and (best is None or d > best[0]):
        best = (d, n["ranges"][0][0])
    for c in n.get("children", []):
        walk(c, d + 1)
walk(json.load(sys.stdin), 0)
print(best[1] if best else "")')
if [ -n "$addr" ] && run "lookup in a 300-deep nest" lookup --no-cache --json "$TMP/deep" "$addr"; then
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = d["chain"]
ok = (c[0]["kind"] == "proc" and c[0]["name"] == "main" and c[1]["kind"] == "loop" and c[1]["depth"] == 1
      and c[-1]["kind"] == "stmt" and c[-1]["line"] == 304 and d.get("cut", 0) > 0 and len(c) == 256)
sys.exit(0 if ok else 1)' "$TMP/out"
	ok $? "300-deep nest, lookup --json: main first, then loop depth 1, the statement last, \"cut\" says how many went"
	run "lookup text in a 300-deep nest" lookup --no-cache "$TMP/deep" "$addr" &&
		grep -q "deeper scopes cut (the chain is 302 deep)" "$TMP/out" && sed -n 2p "$TMP/out" | grep -q "^  main at "
	ok $? "300-deep nest, lookup: the text marks the cut and starts with the procedure"
else
	fail "300-deep nest: the innermost statement was found"
fi

# A sparse file declaring a 1 GiB function: bounded, not gigabytes.
python3 "$top_srcdir/tests/hostile-elf.py" huge-function "$TMP/huge" 1 || fail_all "tests/hostile-elf.py makes the 1 GiB function"
(
	sanitized "$LOOPSCOPE" || ulimit -v 4000000 2>/dev/null
	timeout 60 "$LOOPSCOPE" struct --no-cache "$TMP/huge" >"$TMP/out" 2>"$TMP/err"
	echo $? >"$TMP/rc"
)
rc=$(cat "$TMP/rc")
[ "$rc" -eq 0 ] && grep -q "main: 1024 MiB of code, more than the 64 MiB a procedure may have" "$TMP/err" &&
	grep -q "proc main" "$TMP/out"
ok $? "a sparse ELF declaring a 1 GiB function: exit 0 under a 4 GB limit, a warning names the bound (exit $rc)"

# One function that is a nest of 6,666 irreducible loops (20,000 blocks):
# Havlak's moved entering edges and per-loop lists took n^2 memory (620 MB).
python3 "$top_srcdir/bench/irreducible-nest.py" 20000 "$TMP/nest.s" && gcc -o "$TMP/nest" "$TMP/nest.s" ||
	fail_all "bench/irreducible-nest.py and gcc make the irreducible nest"
if [ -x /usr/bin/time ] && run "an irreducible nest of 20,000 blocks" struct --no-cache --format=json "$TMP/nest"; then
	/usr/bin/time -o "$TMP/time" -f '%M' "$LOOPSCOPE" struct --no-cache "$TMP/nest" >/dev/null 2>&1
	rss=$(tail -n 1 "$TMP/time")
	python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
def loops(n):
    if n["kind"] == "loop":
        yield n
    for c in n.get("children", []):
        yield from loops(c)
l = list(loops(t))
# one region: the outermost header and the 6,666 latches that are entered from outside
sys.exit(0 if len(l) == 1 and l[0]["irreducible"] and len(l[0]["entries"]) == 20000 // 3 + 1 else 1)' "$TMP/out"
	ok $? "an irreducible nest of 20,000 blocks: one region with all its entries"
	[ "$rss" -lt 150000 ]
	ok $? "an irreducible nest of 20,000 blocks: peak RSS $rss KB < 150 MB"
fi

# An overlong SLEB128 in a CIE, and an LSDA: the landing pad is in the CFG.
gcc -o "$TMP/eh_sleb" "$FIXTURES/eh_sleb.s" 2>"$TMP/cc.err" || fail_all "gcc assembles eh_sleb.s: $(head -c 200 "$TMP/cc.err")"
if run "a 9-byte SLEB128 in .eh_frame" struct --no-cache --format=json "$TMP/eh_sleb"; then
	[ $rc -eq 0 ] && python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
def procs(n):
    if n["kind"] == "proc":
        yield n
    for c in n.get("children", []):
        yield from procs(c)
m = [p for p in procs(t) if p["name"] == "main"]
sys.exit(0 if m and m[0]["ranges"] == [[m[0]["ranges"][0][0], m[0]["ranges"][-1][1]]] else 1)' "$TMP/out"
	ok $? "a 9-byte SLEB128 data alignment in a CIE, and an LSDA: exit 0, main whole"
fi

# No procedure at all: the XML writer's empty list.
printf 'int data_only = 42;\n' >"$TMP/data.c"
gcc -shared -nostdlib -o "$TMP/data.so" "$TMP/data.c" || fail_all "gcc builds a data-only object"
if run "XML of a file without procedures" struct --no-cache --format=xml "$TMP/data.so"; then
	[ $rc -eq 0 ] && grep -q '<LM ' "$TMP/out" && ! grep -q '<P ' "$TMP/out"
	ok $? "XML of a file without procedures: a module with no P"
fi
done_testing
