#!/bin/sh
# perf-marks.sh - loop marks in perf loops' views, on a real recording
# (perf record -e cpu-clock --call-graph=fp) of tests/fixtures/perf/marks.c
# built with gcc -O2 -D_FORTIFY_SOURCE=2: the state machine's one
# `while (1)`, which gcc makes into 3 machine loops, shows as distinct rows
# "(part N of 3)" in the loops view; the copy loop gcc made of a memcpy
# says "compiler-made: memcpy"; the JSON view's loop nodes carry the same
# marks as loopscope struct --format=json's loops of that line.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
export LOOPSCOPE
record() { perf record -q -N -e cpu-clock --call-graph=fp -o "$@" >/dev/null 2>"$TMP/rec.err"; }
record "$TMP/probe.data" true || skip_all "perf record does not work here: $(head -n 1 "$TMP/rec.err")"
PUMP=$(grep -n "LOOP-PUMP" "$FIXTURES/perf/marks.c" | cut -d: -f1)

build_fixture gcc -O2 perf/marks.c "$TMP/marks" -D_FORTIFY_SOURCE=2 -fno-omit-frame-pointer
ok $? "gcc builds marks.c"
"$LOOPSCOPE" struct --format=json "$TMP/marks" >"$TMP/struct.json" 2>"$TMP/err"
ok $? "loopscope struct --format=json exits 0"
nparts=$(python3 - "$TMP/struct.json" "$PUMP" <<'PY'
import json, sys
def walk(n):
    if n.get("kind") == "loop" and n.get("line") == int(sys.argv[2]):
        yield n
    for c in n.get("children", []):
        yield from walk(c)
print(" ".join("%s/%s" % (n.get("part"), n.get("parts")) for n in walk(json.load(open(sys.argv[1])))))
PY
)
check_eq "$nparts" "1/3 2/3 3/3" "struct: gcc made the while (1) at line $PUMP into 3 machine loops, parts 1..3 of 3"

record "$TMP/marks.data" "$TMP/marks" 12
ok $? "perf record of marks.c"
"$PERF_LOOPS" report -i "$TMP/marks.data" --stdio --format=loops >"$TMP/loops.txt" 2>"$TMP/err"
ok $? "perf loops report --format=loops exits 0"
rows=$(grep -o "loop at marks.c:$PUMP[^(]*([^)]*)" "$TMP/loops.txt" | sort -u | wc -l)
bare=$(grep -c "loop at marks.c:$PUMP  " "$TMP/loops.txt")
[ "$rows" -ge 2 ] && [ "$bare" -eq 0 ]
ok $? "loops view: the while (1) is $rows distinct rows, each with its (part N of 3), none bare"
grep -q "loop at string_fortified.h:29 \[compiler-made: memcpy\]" "$TMP/loops.txt"
ok $? "loops view: the copy loop says compiler-made: memcpy"
"$PERF_LOOPS" report -i "$TMP/marks.data" --stdio --format=json >"$TMP/perf.json" 2>"$TMP/err"
ok $? "perf loops report --format=json exits 0"
python3 - "$TMP/perf.json" "$TMP/struct.json" "$PUMP" <<'PY'
import json, sys
def loops(n):
    if n.get("kind") == "loop":
        yield n
    for c in n.get("children", []):
        yield from loops(c)
perf = json.load(open(sys.argv[1]))["tree"]
struct = json.load(open(sys.argv[2]))
marks = lambda n: (n.get("file", "").rsplit("/", 1)[-1], n.get("line"), n.get("part"), n.get("parts"),
                   n.get("compiler_made"), n.get("line_guessed"), bool(n.get("irreducible")))
want = {marks(n) for n in loops(struct)}
# The recording also samples other modules (ld.so's rtld.c): only the
# loops of marks' own files are compared.
files = {w[0] for w in want}
got = {marks(n) for n in loops(perf) if marks(n)[0] in files}
pump = [m for m in got if m[1] == int(sys.argv[3])]
memcpy = [m for m in got if m[4] == "memcpy"]
ok = got <= want and len(pump) >= 2 and all(m[2] for m in pump) and memcpy
print("perf JSON loops not in struct's:", sorted(got - want, key=str)) if not got <= want else None
sys.exit(0 if ok else 1)
PY
ok $? "JSON view: loop nodes carry part, parts and compiler_made as loopscope struct's loops do"
done_testing
