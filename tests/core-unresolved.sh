#!/bin/sh
# tests/core-unresolved.sh - a procedure with an indirect jump that looks
# like a jump table but cannot be resolved is never silent: loopscope
# struct warns once naming it, the text output notes it on the proc line,
# the JSON proc (tree and lookup chain) carries "unresolved_jumps": N, the
# mark survives the cache, and no other procedure of the fixture
# (tests/fixtures/jump_tables.s: every other shape resolves, or is a tail
# call) is marked.  The two that cannot be resolved: jt_unresolved (a
# table's address from memory) and jt_spill_clobbered (a stack slot
# written over).
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

[ -x "$LOOPSCOPE" ] || skip_all "$LOOPSCOPE not built"
command -v gcc >/dev/null || skip_all "gcc not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"
gcc -pie -o "$TMP/jt" "$FIXTURES/jump_tables.s" 2>"$TMP/cc.err" || fail_all "jump_tables.s links: $(head -c 200 "$TMP/cc.err")"

"$LOOPSCOPE" struct "$TMP/jt" >"$TMP/text" 2>"$TMP/err"
ok $? "struct exits 0"
n=$(grep -c 'not resolved' "$TMP/err")
check_eq "$n" 2 "two warnings about unresolved jumps"
grep -q 'jt_unresolved: 1 indirect jump not resolved (first at 0x[0-9a-f]*): its loops may be incomplete' "$TMP/err"
ok $? "the warning names the procedure, the jump and the consequence"
marked=$(grep 'not resolved: loops may be incomplete' "$TMP/text" | sed 's/^ *proc \([a-z_]*\) .*/\1/' | tr '\n' ' ')
check_eq "$marked" "jt_unresolved jt_spill_clobbered " "the text output marks the two procs' lines, and only them"

# Cached: the same marks, no second analysis.
"$LOOPSCOPE" struct --format=json "$TMP/jt" >"$TMP/json" 2>"$TMP/err2"
ok $? "struct --format=json (from the cache) exits 0"
python3 - "$TMP/json" >"$TMP/procs" <<'EOF'
import json, sys
def walk(n):
    if n.get("kind") == "proc" and "unresolved_jumps" in n:
        print("%s %s" % (n["name"], n["unresolved_jumps"]))
    for c in n.get("children", []):
        walk(c)
walk(json.load(open(sys.argv[1])))
EOF
check_eq "$(cat "$TMP/procs" | tr '\n' ' ')" "jt_unresolved 1 jt_spill_clobbered 1 " "JSON: \"unresolved_jumps\": 1 on the two, on no other proc"
"$LOOPSCOPE" struct -v -o /dev/null "$TMP/jt" 2>"$TMP/err3"
hit=$(grep -q 'cache miss' "$TMP/err3" && echo "(a cache miss)"; grep 'not resolved' "$TMP/err3")
check_eq "$hit" "$(grep 'not resolved' "$TMP/err")" \
	"a cache hit warns of the unresolved jump in the same words (first address included)"

addr=$(sed -n 's/.*jt_unresolved.*first at \(0x[0-9a-f]*\)).*/\1/p' "$TMP/err" | head -n 1)
"$LOOPSCOPE" lookup --json "$TMP/jt" "$addr" 2>/dev/null >"$TMP/lookup"
grep -q '"kind":"proc","name":"jt_unresolved","unresolved_jumps":1' "$TMP/lookup"
ok $? "lookup --json: the proc of the unresolved jump carries \"unresolved_jumps\":1"
done_testing
