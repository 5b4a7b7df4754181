#!/bin/sh
# perf-badinput.sh - perf loops report on bad input: a truncated file gives
# what is readable and says how much was lost; a file that is not perf.data
# is refused with exit 1; a missing binary is reported once and its frames
# still count.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed"
TREE="$FIXTURES/perf/tree.py"

build_fixture gcc -O2 perf/split_loops.c "$TMP/split" -fno-omit-frame-pointer || fail_all "gcc builds the fixture"
perf record -q -e cpu-clock --call-graph=fp -o "$TMP/good.data" "$TMP/split" 10 >/dev/null 2>"$TMP/rec.err" ||
	skip_all "perf record does not work here: $(head -n 1 "$TMP/rec.err")"
total=$(python3 "$TREE" /dev/stdin samples <<EOT
$("$PERF_LOOPS" report -i "$TMP/good.data" --format=json 2>/dev/null)
EOT
)

# wrong magic
printf 'this is not a perf.data file, not even close\n' >"$TMP/bad.data"
"$PERF_LOOPS" report -i "$TMP/bad.data" --stdio >"$TMP/out" 2>"$TMP/err"
check_eq "$?" 1 "wrong magic: exit status 1"
check_eq "$(cat "$TMP/err")" "perf-loops: $TMP/bad.data: not a perf.data file (bad magic)" "wrong magic: the message names the file and the reason"

# empty and missing files
: >"$TMP/empty.data"
"$PERF_LOOPS" report -i "$TMP/empty.data" >/dev/null 2>"$TMP/err"
check_eq "$?" 1 "an empty file: exit status 1"
"$PERF_LOOPS" report -i "$TMP/nonexistent.data" >/dev/null 2>"$TMP/err"
check_eq "$?" 1 "a missing file: exit status 1"
grep -q "nonexistent.data: No such file" "$TMP/err"
ok $? "a missing file: the message says so"

# big-endian magic: a clear error
printf '2ELIFREP' >"$TMP/be.data"
head -c 200 /dev/zero >>"$TMP/be.data"
"$PERF_LOOPS" report -i "$TMP/be.data" >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "big-endian" "$TMP/err"
ok $? "a big-endian file: exit 1 with a clear message"

# truncated in the middle of the data
size=$(wc -c <"$TMP/good.data")
head -c $((size / 2 + 3)) "$TMP/good.data" >"$TMP/trunc.data"
"$PERF_LOOPS" report -i "$TMP/trunc.data" --format=json >"$TMP/trunc.json" 2>"$TMP/err"
check_eq "$?" 0 "truncated: still reports (exit 0)"
grep -q "truncated.*bytes" "$TMP/err" && grep -q "bytes of data could not be read" "$TMP/err"
ok $? "truncated: a warning says how many bytes were lost"
diag "$(head -n 2 "$TMP/err")"
n=$(python3 "$TREE" "$TMP/trunc.json" samples)
[ "$n" -gt 0 ] && [ "$n" -lt "$total" ]
ok $? "truncated: $n of $total samples read"

# truncated inside the header
head -c 50 "$TMP/good.data" >"$TMP/short.data"
"$PERF_LOOPS" report -i "$TMP/short.data" >/dev/null 2>"$TMP/err"
check_eq "$?" 1 "truncated header: exit 1"

# garbage after a good header (the same bytes every run: a seeded
# generator): the header still says how long the data section is, so the
# file reads as a truncated one whose records turn to noise; what is
# readable is reported (exit 0) with the warnings of a truncated file.
head -c 4096 "$TMP/good.data" >"$TMP/garbage.data"
python3 -c 'import random, sys; r = random.Random(10)
sys.stdout.buffer.write(bytes(r.getrandbits(8) for _ in range(20000)))' >>"$TMP/garbage.data"
"$PERF_LOOPS" report -i "$TMP/garbage.data" --stdio >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q "garbage.data: truncated: data section is" "$TMP/err" &&
	grep -q "garbage.data: [0-9]* bytes of data could not be read" "$TMP/err"
check_eq "$?" 0 "random bytes after the header: exit 0, warnings name the file and the bytes lost"
[ $rc -eq 0 ] || diag "exit $rc; $(head -c 400 "$TMP/err")"

# a missing binary: one warning, frames by address, samples still counted
cp "$TMP/split" "$TMP/gone"
perf record -q -e cpu-clock --call-graph=fp -o "$TMP/gone.data" "$TMP/gone" 5 >/dev/null 2>&1
rm -f "$TMP/gone"
# perf keeps a copy in its build-id cache; hide it
HOME="$TMP/home" PERF_BUILDID_DIR="$TMP/home/.debug" "$PERF_LOOPS" report -i "$TMP/gone.data" --format=json \
	>"$TMP/gone.json" 2>"$TMP/err"
check_eq "$?" 0 "missing binary: still reports"
check_eq "$(grep -c "1 binary of the recording not found ($TMP/gone)" "$TMP/err")" 1 "missing binary: one line naming it"
n=$(python3 "$TREE" "$TMP/gone.json" samples)
want=$(perf script -i "$TMP/gone.data" -F tid 2>/dev/null | wc -l)
check_eq "$n" "$want" "missing binary: every sample still counted"
python3 "$TREE" "$TMP/gone.json" check >/dev/null
ok $? "missing binary: the tree is consistent"
# and with perf's build-id cache, the binary is found again
if [ -d "$HOME/.debug/.build-id" ]; then
	"$PERF_LOOPS" report -i "$TMP/gone.data" --format=loops >"$TMP/cache.txt" 2>"$TMP/err"
	grep -q "loop at split_loops.c" "$TMP/cache.txt"
	ok $? "a deleted binary is found in perf's build-id cache (~/.debug)"
else
	skip "no build-id cache in \$HOME/.debug"
fi
done_testing
