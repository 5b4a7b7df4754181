#!/bin/sh
# tests/core-deep-inline.sh - inlined calls nested thousands deep
# (hand-written DWARF without DW_AT_sibling, as clang writes it:
# tests/fixtures/gdb/gen_inline.py; the reproducer of issue 28).
#
#   - the chain of an address keeps the procedure and the OUTERMOST inlined
#     calls (inl0, inl1, ... as llvm-symbolizer lists them from the
#     bottom), then the statement, and says how many were cut: the uncut
#     depth is llvm-symbolizer's frame count plus the statement;
#   - the structure says so too (the statement's "[N deeper inlined calls
#     cut]", JSON "cut"), with one warning naming the procedure, again on a
#     cache hit;
#   - 100,000 levels end by themselves (they took 124 s when every level
#     rescanned its subtree; bench/growth.sh has the times).
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

[ -x "$LOOPSCOPE" ] || skip_all "$LOOPSCOPE not built"
command -v gcc >/dev/null || skip_all "gcc not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"

# deep N: $TMP/dN, N nested inlined calls around one loop.
deep() {
	python3 "$FIXTURES/gdb/gen_inline.py" "$1" "$TMP/d$1.s" && gcc -c -o "$TMP/d$1.o" "$TMP/d$1.s" &&
		gcc -o "$TMP/d$1" "$TMP/d$1.o" 2>/dev/null
}
deep 1000 || skip_all "gen_inline.py's assembly does not build here"
a=0x$(nm "$TMP/d1000" | sed -n 's/^0*\([0-9a-f]*\) T deep$/\1/p')

# The oracle: llvm-symbolizer's inline frames at the loop's address.
if command -v llvm-symbolizer >/dev/null; then
	frames=$(llvm-symbolizer --inlining -e "$TMP/d1000" "$a" | grep -c '^inl')
	check_eq "$frames" 1000 "llvm-symbolizer sees the 1,000 inlined calls of the fixture"
else
	frames=1000
	skip "llvm-symbolizer not installed: the fixture's 1,000 levels taken on trust"
fi

"$LOOPSCOPE" lookup --no-cache --json "$TMP/d1000" "$a" >"$TMP/chain.json" 2>"$TMP/err"
python3 - "$TMP/chain.json" "$frames" >"$TMP/check" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); frames = int(sys.argv[2])
c = d["chain"]
names = [x.get("name") for x in c]
want = ["deep"] + ["inl%d" % i for i in range(254)]
print("ok" if names[:255] == want and c[-1]["kind"] == "stmt" and len(c) == 256 and
      d.get("cut") == frames + 2 - 256 else "got %d scopes %s ... %s, cut %s" % (len(c), names[:3], names[-3:], d.get("cut")))
PY
check_eq "$(cat "$TMP/check")" ok "lookup --json: the procedure, inl0..inl253 (the outermost), the statement; cut = the rest"

"$LOOPSCOPE" lookup --no-cache "$TMP/d1000" "$a" >"$TMP/text" 2>/dev/null
sed -n 3p "$TMP/text" | grep -q '^    \[I\] inl0 called at ' &&
	grep -q "\.\.\. $((frames + 2 - 256)) deeper scopes cut (the chain is $((frames + 2)) deep)" "$TMP/text"
ok $? "lookup: inl0 under the procedure, and the cut said with the uncut depth ($((frames + 2)))"

# The structure and its warning, analyzed then from the cache.
deep 20000 || skip_all "gen_inline.py cannot make 20,000 levels"
w='deep: inlined calls nested 20000 deep: the structure keeps the outermost 254 (19746 cut)'
"$LOOPSCOPE" struct "$TMP/d20000" >"$TMP/s1" 2>"$TMP/e1"
"$LOOPSCOPE" struct -v "$TMP/d20000" >"$TMP/s2" 2>"$TMP/e2"
[ "$(grep -c "$w" "$TMP/e1")" = 1 ]
ok $? "struct: one warning names the procedure, the depth and the cut"
! grep -q 'cache miss' "$TMP/e2" && [ "$(grep -c "$w" "$TMP/e2")" = 1 ] && cmp -s "$TMP/s1" "$TMP/s2"
ok $? "a cache hit warns the same and prints the same structure"
grep -q 'stmt deep.c:2 \[0x[0-9a-f]*-0x[0-9a-f]*) \[19746 deeper inlined calls cut\]' "$TMP/s1" &&
	[ "$(grep -c '^ *\[I\] inl' "$TMP/s1")" = 254 ] && grep -q '^    \[I\] inl0 called' "$TMP/s1"
ok $? "struct: 254 [I] levels from inl0, the statement marked with the 19,746 cut"
"$LOOPSCOPE" struct --no-cache --format=json "$TMP/d20000" 2>/dev/null | grep -q '"kind":"stmt","cut":19746,'
ok $? "struct --format=json: the statement carries \"cut\":19746"

# 100,000 levels: linear in the depth, so it ends by itself.
if deep 100000; then
	timeout 120 "$LOOPSCOPE" struct --no-cache -j 1 -o /dev/null "$TMP/d100000" 2>"$TMP/e3"
	rc=$?
	[ $rc -eq 0 ] && grep -q '(99746 cut)' "$TMP/e3"
	ok $? "100,000 nested inlined calls: analyzed (exit $rc), the cut said"
else
	skip "gen_inline.py cannot make 100,000 levels"
fi
done_testing
