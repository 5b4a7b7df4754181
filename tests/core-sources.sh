#!/bin/sh
# tests/core-sources.sh - the loop-line rules read the loops' source files;
# when they are not where DWARF says (a Debian-style build with
# -ffile-prefix-map: relative paths), loopscope says so once, with the
# file and the variable that points to them, lists every such file with
# -v, and says nothing once LOOPSCOPE_SOURCE_PATH finds them or
# LOOPSCOPE_NO_SOURCE=1 asks for DWARF alone.  With the path given, the
# loop lines are those of the same code built with absolute paths.  A
# cache hit says the same note as the run that stored the entry (the
# entry keeps the names DWARF gives: format 12).
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

[ -x "$LOOPSCOPE" ] || skip_all "$LOOPSCOPE not built"
command -v gcc >/dev/null || skip_all "gcc not installed"
mkdir -p "$TMP/src" "$TMP/elsewhere"
cp "$FIXTURES/loop_lines.c" "$TMP/src/"
(cd "$TMP/src" && gcc -O2 -g -ffile-prefix-map="$TMP/src"=. -o "$TMP/mapped" loop_lines.c) ||
	fail_all "gcc cannot build loop_lines.c"
(cd "$TMP/src" && gcc -O2 -g -o "$TMP/plain" "$TMP/src/loop_lines.c") || fail_all "gcc cannot build loop_lines.c"
cd "$TMP/elsewhere"

"$LOOPSCOPE" struct --no-cache "$TMP/mapped" >"$TMP/out" 2>"$TMP/err"
ok $? "struct exits 0 without the sources"
n=$(grep -c 'source file.*not found' "$TMP/err")
check_eq "$n" 1 "one line says the sources were not found"
grep -q "mapped: 1 source file of its loops not found (loop_lines.c): their loop lines come from DWARF alone; LOOPSCOPE_SOURCE_PATH=" "$TMP/err"
ok $? "it names the file and LOOPSCOPE_SOURCE_PATH"
grep -q 'line guessed' "$TMP/out"
ok $? "DWARF alone: some loop lines are marked as guessed"

"$LOOPSCOPE" struct -v --no-cache "$TMP/mapped" >/dev/null 2>"$TMP/err"
grep -q 'source not found: loop_lines.c' "$TMP/err"
ok $? "-v lists the file not found"

# Cold (stores the entry), then warm (a hit): the same note, the same -v list.
export XDG_CACHE_HOME="$TMP/cache"
"$LOOPSCOPE" struct -v "$TMP/mapped" >"$TMP/cold.out" 2>"$TMP/cold.err"
ok $? "struct with the cache exits 0 (cold)"
"$LOOPSCOPE" struct -v "$TMP/mapped" >"$TMP/warm.out" 2>"$TMP/warm.err"
ok $? "struct with the cache exits 0 (warm)"
grep -q 'cache miss' "$TMP/cold.err" && ! grep -q 'cache miss' "$TMP/warm.err"
ok $? "the first run misses the cache, the second hits it"
notes() { grep -E 'not found' "$1"; }
check_eq "$(notes "$TMP/warm.err")" "$(notes "$TMP/cold.err")" "a cache hit gives the cold run's note and -v list"
check_eq "$(notes "$TMP/warm.err" | grep -c 'source not found: loop_lines.c')" 1 "-v on a hit lists the file"
check_eq "$(grep -c 'of its loops not found (loop_lines.c)' "$TMP/warm.err")" 1 "the note once on a hit"
cmp -s "$TMP/cold.out" "$TMP/warm.out"
ok $? "the hit's tree is the cold run's"
LOOPSCOPE_SOURCE_PATH="$TMP/src" "$LOOPSCOPE" struct "$TMP/mapped" >/dev/null 2>"$TMP/err"
check_eq "$(grep -c 'not found' "$TMP/err")" 0 "with the path, no note (another key, not the entry's note)"
LOOPSCOPE_SOURCE_PATH="$TMP/src" "$LOOPSCOPE" struct "$TMP/mapped" >/dev/null 2>"$TMP/err"
check_eq "$(grep -c 'not found' "$TMP/err")" 0 "with the path, no note on its hit either"
unset XDG_CACHE_HOME

LOOPSCOPE_SOURCE_PATH="$TMP/src" "$LOOPSCOPE" struct --no-cache --format=json "$TMP/mapped" >"$TMP/mapped.json" 2>"$TMP/err"
ok $? "struct with LOOPSCOPE_SOURCE_PATH exits 0"
check_eq "$(grep -c 'not found' "$TMP/err")" 0 "no note once LOOPSCOPE_SOURCE_PATH finds them"
LOOPSCOPE_NO_SOURCE=1 "$LOOPSCOPE" struct --no-cache "$TMP/mapped" >/dev/null 2>"$TMP/err"
check_eq "$(grep -c 'not found' "$TMP/err")" 0 "no note with LOOPSCOPE_NO_SOURCE=1 (DWARF alone was asked for)"

"$LOOPSCOPE" struct --no-cache --format=json "$TMP/plain" >"$TMP/plain.json" 2>/dev/null
lines() { python3 -c '
import json, sys
def walk(n):
    if n.get("kind") == "loop":
        print(n.get("line"), n.get("line_guessed", "-"))
    for c in n.get("children", []):
        walk(c)
walk(json.load(open(sys.argv[1])))' "$1" | sort; }
check_eq "$(lines "$TMP/mapped.json" | tr '\n' ' ')" "$(lines "$TMP/plain.json" | tr '\n' ' ')" \
	"with the path, the loop lines of the absolute-path build"
done_testing
