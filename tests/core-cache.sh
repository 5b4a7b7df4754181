#!/bin/sh
# tests/core-cache.sh - the analysis cache can only miss, never lie.
#
# A cache entry tampered with - another binary's entry under this one's
# name, truncated, one byte flipped, an older format version, a FIFO in its
# place, the binary touched or rebuilt - must give output identical to
# --no-cache, and -v must say why it missed.  Eight runs at once on one
# binary give identical outputs and leave no stray file; a temporary left
# by a killed store goes on the next store; the directory is 0700 and the
# files 0600; the size bound evicts the least recently used entry; and
# `loopscope cache --list/--prune/--clear` manage it.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

[ -x "$LOOPSCOPE" ] || skip_all "$LOOPSCOPE not built"
command -v gcc >/dev/null || skip_all "gcc not installed"

CDIR="$XDG_CACHE_HOME/loopscope"
build_fixture gcc -O2 loops.c "$TMP/a" || fail_all "gcc builds loops.c"
build_fixture gcc -O2 recursion.c "$TMP/b" || fail_all "gcc builds recursion.c"
id_of() { readelf -n "$1" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p'; }
ida=$(id_of "$TMP/a")
idb=$(id_of "$TMP/b")
[ -n "$ida" ] && [ -n "$idb" ] || skip_all "the fixtures have no build-id"
entry="$CDIR/$ida.lsc"

"$LOOPSCOPE" struct --no-cache --format=json "$TMP/a" >"$TMP/ref.json" 2>"$TMP/err" ||
	fail_all "loopscope struct --no-cache on the fixture (the reference): $(head -c 300 "$TMP/err")"

# run_a LABEL: struct of a with the cache, -v, at most 30 s; compares with --no-cache.
# (LS_V= runs without -v: for loopscopes that have none.)
LS_V=${LS_V--v}
run_a() {
	timeout 30 "$LOOPSCOPE" struct $LS_V --format=json "$TMP/a" >"$TMP/out.json" 2>"$TMP/err"
	rc=$?
	if [ $rc -eq 0 ] && cmp -s "$TMP/ref.json" "$TMP/out.json"; then
		pass "$1: output identical to --no-cache"
	else
		fail "$1: output identical to --no-cache"
		diag "exit $rc; stderr: $(head -c 400 "$TMP/err")"
	fi
}
# said_miss LABEL REGEX: -v said why the cache missed.
said_miss() {
	if grep -q "cache miss: .*$2" "$TMP/err"; then pass "$1: -v says the cache missed: $2"
	else fail "$1: -v says the cache missed: $2"; diag "stderr: $(head -c 400 "$TMP/err")"; fi
}

run_a "first run (stores)"
[ -f "$entry" ]; ok $? "the entry is stored as DIR/<build-id>.lsc"
run_a "second run (a hit)"
if grep -q "cache miss" "$TMP/err"; then fail "second run is a hit"; diag "$(cat "$TMP/err")"; else pass "second run is a hit"; fi
# The lookup index comes from the entry too (stored with the tree): every
# instruction's chain from a hit is the one --no-cache gives.
objdump -d "$TMP/a" | sed -n 's/^ *\([0-9a-f][0-9a-f]*\):	.*/0x\1/p' >"$TMP/addrs"
"$LOOPSCOPE" lookup --json "$TMP/a" <"$TMP/addrs" >"$TMP/hit.lookup" 2>/dev/null
"$LOOPSCOPE" lookup --no-cache --json "$TMP/a" <"$TMP/addrs" >"$TMP/ref.lookup" 2>/dev/null
[ -s "$TMP/ref.lookup" ] && cmp -s "$TMP/hit.lookup" "$TMP/ref.lookup" && grep -q '"kind":"loop"' "$TMP/hit.lookup"
ok $? "lookups from a hit (the stored index): every instruction's chain as --no-cache ($(wc -l <"$TMP/addrs") addresses)"
# A hit reads no DWARF (libdw inflates compressed debug sections as it
# opens them); the stages' timing lines (LOOPSCOPE_TIMING) show which ran.
LOOPSCOPE_TIMING=1 "$LOOPSCOPE" struct "$TMP/a" 2>&1 >/dev/null | grep -o 'timing: [a-z ]*[a-z]' >"$TMP/stages"
grep -q "cache load" "$TMP/stages" && ! grep -q "timing: dwarf" "$TMP/stages"
ok $? "a hit does not read the DWARF (stages: $(tr '\n' ',' <"$TMP/stages"))"
LOOPSCOPE_TIMING=1 "$LOOPSCOPE" struct --no-cache "$TMP/a" 2>&1 >/dev/null | grep -q "timing: dwarf"
ok $? "an analysis does"
perm_dir=$(stat -c %a "$CDIR")
perm_file=$(stat -c %a "$entry")
check_eq "$perm_dir $perm_file" "700 600" "the directory is 0700 and the entry 0600"
cp "$entry" "$TMP/good.lsc"

# Another binary's entry under a's name.
"$LOOPSCOPE" struct "$TMP/b" >/dev/null 2>&1
cp "$CDIR/$idb.lsc" "$entry"
run_a "swapped entry (b's under a's build-id)"
said_miss "swapped entry" "another binary"

size=$(stat -c %s "$TMP/good.lsc")
head -c $((size / 2)) "$TMP/good.lsc" >"$entry"
run_a "truncated entry"
said_miss "truncated entry" "truncated"

# One byte flipped in the middle of the records.
cp "$TMP/good.lsc" "$entry"
off=$((size / 2))
byte=$(od -An -tu1 -j $off -N1 "$entry" | tr -d ' ')
printf "$(printf '\\%03o' $(( (byte + 1) % 256 )))" | dd of="$entry" bs=1 seek=$off conv=notrunc 2>/dev/null
run_a "flipped byte"
said_miss "flipped byte" "checksum"

# The previous format version (the version is the u32 after the magic).
cp "$TMP/good.lsc" "$entry"
printf '\001\000\000\000' | dd of="$entry" bs=1 seek=8 conv=notrunc 2>/dev/null
run_a "old format version"
said_miss "old format version" "format version"

rm -f "$entry"
mkfifo "$entry"
run_a "a FIFO in place of the entry (no hang)"
said_miss "FIFO" "FIFO"
rm -f "$entry"
run_a "after the FIFO (stores again)"

# The binary changed but kept its build-id: touched (mtime), copied over (inode).
touch -d '2001-01-01' "$TMP/a"
run_a "binary touched"
said_miss "binary touched" "not the file it was made from"
cp -p "$TMP/a" "$TMP/a.copy" && mv "$TMP/a.copy" "$TMP/a"
run_a "binary replaced by a copy (another inode)"
said_miss "binary replaced" "not the file it was made from"

# A temporary left by a store that was killed: its process is gone.
sh -c 'exit 0' & dead=$!
wait $dead
: >"$CDIR/$idb.lsc.tmp-$dead-AbCdEf"
"$LOOPSCOPE" struct --no-cache "$TMP/a" >/dev/null 2>&1
[ -f "$CDIR/$idb.lsc.tmp-$dead-AbCdEf" ]; ok $? "--no-cache leaves the cache directory alone"
rm -f "$CDIR/$ida.lsc"
"$LOOPSCOPE" struct "$TMP/a" >/dev/null 2>&1
[ ! -f "$CDIR/$idb.lsc.tmp-$dead-AbCdEf" ]; ok $? "a killed store's temporary is removed by the next store"

# Eight runs at once on one binary, from an empty cache.
rm -rf "$CDIR"
i=0
while [ $i -lt 8 ]; do
	"$LOOPSCOPE" struct --format=json "$TMP/a" >"$TMP/par.$i" 2>"$TMP/par.err.$i" &
	i=$((i + 1))
done
wait
same=0
i=0
while [ $i -lt 8 ]; do
	cmp -s "$TMP/ref.json" "$TMP/par.$i" && same=$((same + 1))
	i=$((i + 1))
done
check_eq "$same" 8 "eight concurrent runs: identical outputs"
check_eq "$(ls -A "$CDIR" | tr '\n' ' ')" "$ida.lsc " "eight concurrent runs: one entry, no stray file"

# The size bound: room for two entries; the least recently used goes.
rm -rf "$CDIR"
build_fixture gcc -O2 cold.c "$TMP/c" || fail_all "gcc builds cold.c"
idc=$(id_of "$TMP/c")
"$LOOPSCOPE" struct "$TMP/a" >/dev/null 2>&1
sa=$(stat -c %s "$CDIR/$ida.lsc")
"$LOOPSCOPE" struct "$TMP/b" >/dev/null 2>&1
sb=$(stat -c %s "$CDIR/$idb.lsc")
# both used long ago (no sleep for the clock to move), then a hit on a: only
# the hit can make a the more recently used
touch -d '2001-01-01' "$CDIR/$ida.lsc" "$CDIR/$idb.lsc"
"$LOOPSCOPE" struct "$TMP/a" >/dev/null 2>&1   # a hit: a is now the most recently used
"$LOOPSCOPE" struct "$TMP/c" >/dev/null 2>&1
sc=$(stat -c %s "$CDIR/$idc.lsc")
bound=$((sa + sc + 100))
rm -f "$CDIR/$idc.lsc"
LOOPSCOPE_CACHE_SIZE=$bound "$LOOPSCOPE" struct "$TMP/c" >/dev/null 2>&1
check_eq "$(ls "$CDIR" | sort | tr '\n' ' ')" "$(printf '%s\n' "$ida.lsc" "$idc.lsc" | sort | tr '\n' ' ')" \
	"size bound: the least recently used entry (b) was evicted, the recently hit one (a) kept"
# A bound that is not a size is said, not silently 1 GiB (issue 28).
rm -f "$CDIR/$idc.lsc"
LOOPSCOPE_CACHE_SIZE=512X "$LOOPSCOPE" struct "$TMP/c" >/dev/null 2>"$TMP/err"
[ "$(grep -c "LOOPSCOPE_CACHE_SIZE=512X is not a size (such as 512M or 2G): the cache bound is 1 GiB" "$TMP/err")" = 1 ]
ok $? "LOOPSCOPE_CACHE_SIZE=512X: one warning says it is not a size and the bound used"

# loopscope cache --list, --prune, --clear.
"$LOOPSCOPE" struct "$TMP/b" >/dev/null 2>&1
"$LOOPSCOPE" cache --list >"$TMP/list" 2>&1
grep -q "$TMP/a .*$ida.lsc" "$TMP/list" && grep -q "$TMP/b .*$idb.lsc" "$TMP/list" &&
	grep -q '^3 entries, .* (bound 1.0 GiB)$' "$TMP/list"
ok $? "cache --list names each entry's binary and the total"
rm -f "$TMP/b"
"$LOOPSCOPE" cache --prune >"$TMP/prune" 2>&1
grep -q "removed $idb.lsc .*binary is gone" "$TMP/prune" && [ ! -f "$CDIR/$idb.lsc" ] && [ -f "$CDIR/$ida.lsc" ]
ok $? "cache --prune removes the entry whose binary is gone, keeps the others"
"$LOOPSCOPE" cache --prune --max-size=1 >"$TMP/prune2" 2>&1
[ -z "$(ls -A "$CDIR")" ]; ok $? "cache --prune --max-size=1 evicts everything"
"$LOOPSCOPE" struct "$TMP/a" >/dev/null 2>&1
"$LOOPSCOPE" cache --clear >"$TMP/clear" 2>&1
grep -q '^1 file removed' "$TMP/clear" && [ -z "$(ls -A "$CDIR")" ]
ok $? "cache --clear removes every entry"
"$LOOPSCOPE" cache >/dev/null 2>&1
check_eq "$?" 2 "cache without an action is a usage error"

# A separate debug file installed after the entry was made (the debug
# package, later): the entry made without DWARF is a miss, though a hit
# reads no DWARF; the run then has the lines the debug file gives.
cp "$TMP/a" "$TMP/c"
objcopy --only-keep-debug "$TMP/c" "$TMP/c.debug" && strip -g "$TMP/c" &&
	objcopy --add-gnu-debuglink="$TMP/c.debug" "$TMP/c" && mv "$TMP/c.debug" "$TMP/c.debug.later"
ok $? "a stripped copy whose debug file is not there yet"
"$LOOPSCOPE" struct --format=json "$TMP/c" >"$TMP/c-nodebug.json" 2>/dev/null
mv "$TMP/c.debug.later" "$TMP/c.debug"
"$LOOPSCOPE" struct --no-cache --format=json "$TMP/c" >"$TMP/c-ref.json" 2>/dev/null
"$LOOPSCOPE" struct -v --format=json "$TMP/c" >"$TMP/c.json" 2>"$TMP/err"
cmp -s "$TMP/c.json" "$TMP/c-ref.json" && ! cmp -s "$TMP/c.json" "$TMP/c-nodebug.json" &&
	grep -q "cache miss: .*made without debug information, which is there now" "$TMP/err"
ok $? "the debug file installed later: a miss that says why, output identical to --no-cache"
done_testing
