#!/bin/sh
# perf-command.sh - `perf loops` as perf runs it (a dashed command on PATH),
# `perf loops record`, and the usage errors.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed"
TREE="$FIXTURES/perf/tree.py"

"$PERF_LOOPS" --version | grep -q "^perf-loops (loopscope) "
ok $? "perf-loops --version"
"$PERF_LOOPS" report --format=nonsense -i x >/dev/null 2>&1
check_eq "$?" 2 "an unknown --format is a usage error (exit 2)"
"$PERF_LOOPS" frobnicate >/dev/null 2>&1
check_eq "$?" 2 "an unknown subcommand is a usage error (exit 2)"

# perf finds perf-loops on PATH
mkdir -p "$TMP/bin"
ln -s "$PERF_LOOPS" "$TMP/bin/perf-loops"
PATH="$TMP/bin:$PATH" perf loops --version >"$TMP/out" 2>&1
grep -q "^perf-loops (loopscope) " "$TMP/out"
ok $? "perf loops --version runs perf-loops from PATH"

build_fixture gcc -O2 perf/split_loops.c "$TMP/split" -fno-omit-frame-pointer || fail_all "gcc builds the fixture"
cd "$TMP" || exit 1
# perf record itself first: where it cannot record (no permission), perf
# loops record cannot either, and that is no failure of perf loops.
if ! perf record -q -e cpu-clock -o "$TMP/probe.data" true >/dev/null 2>"$TMP/err"; then
	skip "perf record does not work here: $(head -n 1 "$TMP/err")"
else
	PATH="$TMP/bin:$PATH" perf loops record -q -o "$TMP/rec.data" -- "$TMP/split" 10 >/dev/null 2>"$TMP/err"
	rc=$?
	[ $rc -eq 0 ] && [ -s "$TMP/rec.data" ]
	ok $? "perf loops record -- COMMAND (exit $rc; $(head -c 200 "$TMP/err"))"
	grep -q "perf loops report -i $TMP/rec.data" "$TMP/err"
	ok $? "record says how to see the report"
	# (split keeps frame pointers, libc does not: a stack copy, said why)
	perf report -i "$TMP/rec.data" --header-only 2>/dev/null | grep -q "cmdline.*--call-graph=dwarf,[0-9]" &&
		grep -q "^perf loops: --call-graph=dwarf,[0-9]*: libc.so.6 keeps no frame pointers" "$TMP/err"
	ok $? "record turned call graphs on, as the binaries need them (dwarf: libc keeps no frame pointers)"
	PATH="$TMP/bin:$PATH" perf loops report -i "$TMP/rec.data" --stdio >"$TMP/out" 2>"$TMP/err"
	ok $? "perf loops report --stdio"
	grep -q "loop at split_loops.c" "$TMP/out"
	ok $? "the report shows the loops"
	"$PERF_LOOPS" report -i "$TMP/rec.data" --stdio --no-children >"$TMP/nochildren" 2>/dev/null
	grep -q "^#  Overhead   Samples" "$TMP/nochildren"
	ok $? "--no-children shows one Overhead column as perf report does"
	"$PERF_LOOPS" report -i "$TMP/rec.data" --stdio --event=cycles >/dev/null 2>"$TMP/err"
	grep -q "no samples left after the filters" "$TMP/err"
	ok $? "--event=cycles on a cpu-clock recording leaves nothing, and says so"
	"$PERF_LOOPS" report -i "$TMP/rec.data" --format=json --pid=1 >"$TMP/pid.json" 2>/dev/null
	check_eq "$(python3 "$TREE" "$TMP/pid.json" samples)" 0 "--pid=1 keeps no samples of the fixture"
	# perf report's own default input name
	cp "$TMP/rec.data" "$TMP/perf.data"
	"$PERF_LOOPS" report --format=folded </dev/null >"$TMP/out" 2>&1
	grep -q "loop at split_loops.c" "$TMP/out"
	ok $? "without -i, ./perf.data is read"
fi
done_testing
