#!/bin/sh
# perf-annotate.sh - `perf loops annotate --stdio` on real recordings
# (perf record -e cpu-clock --call-graph=fp) of fixtures compiled now with
# gcc and clang -O2: every line's samples are the perf script samples of the
# procedure mapped through `loopscope lookup`; each loop of the procedure in
# `loopscope struct --format=json` has its bracket over its lines; --asm
# marks every loop head, back edge and exit the struct JSON lists.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
CHECK="$FIXTURES/perf/annotate_check.py"
export LOOPSCOPE
line_of() { grep -n "$2" "$FIXTURES/perf/$1" | head -n 1 | cut -d: -f1; }
record() { perf record -q -N -e cpu-clock --call-graph=fp -o "$@" >/dev/null 2>"$TMP/rec.err"; }
record "$TMP/probe.data" true || skip_all "perf record does not work here: $(head -n 1 "$TMP/rec.err")"

# check NAME BINARY DATA PROC [SYMBOL]: the three oracles on one recording
check() {
	_n=$1 _bin=$2 _data=$3 _proc=$4; shift 4
	"$PERF_LOOPS" annotate -i "$_data" --stdio "$@" >"$TMP/$_n.txt" 2>"$TMP/err"
	ok $? "$_n: perf loops annotate --stdio ${*:-(the hottest)} exits 0"
	grep -q "^# perf loops annotate: $_proc " "$TMP/$_n.txt"
	ok $? "$_n: it annotates $_proc"
	perf script -i "$_data" -G -F ip,sym,symoff,dso >"$TMP/$_n.script" 2>/dev/null
	python3 "$CHECK" counts "$_bin" "$TMP/$_n.script" "$TMP/$_n.txt" "$_proc"
	ok $? "$_n: each line's samples are perf script's, mapped through loopscope lookup"
	"$LOOPSCOPE" struct --format=json "$_bin" >"$TMP/$_n.json"
	python3 "$CHECK" brackets "$TMP/$_n.json" "$TMP/$_n.txt" "$_proc"
	ok $? "$_n: a bracket per loop of the struct JSON on its lines, with its summary row"
	"$PERF_LOOPS" annotate -i "$_data" --stdio --asm "$@" >"$TMP/$_n.asm" 2>"$TMP/err"
	ok $? "$_n: --asm exits 0"
	python3 "$CHECK" asm "$TMP/$_n.json" "$TMP/$_n.asm" "$_proc"
	ok $? "$_n: --asm marks every loop head, back edge and exit of the struct JSON"
}

BIG=$(line_of split_loops.c LOOP-BIG)
INNER=$(line_of inline_loop.c LOOP-INNER)
for cc in gcc clang; do
	if ! command -v $cc >/dev/null 2>&1; then skip "$cc not installed"; continue; fi
	# a hot loop of an inlined callee inside main's loop: the default is main
	build_fixture $cc -O2 perf/inline_loop.c "$TMP/inline-$cc" -fno-omit-frame-pointer || { fail "$cc builds inline_loop.c"; continue; }
	record "$TMP/inline-$cc.data" "$TMP/inline-$cc" 20000 || { fail "record inline_loop ($cc)"; continue; }
	check "inline-$cc" "$TMP/inline-$cc" "$TMP/inline-$cc.data" main
	grep -q "loop at inline_loop.c:$INNER, lines $INNER-$INNER, own" "$TMP/inline-$cc.txt"
	ok $? "inline-$cc: the inlined callee's loop (line $INNER) is in main's annotation"
	# two loops in run, called from main: SYMBOL picks run
	build_fixture $cc -O2 perf/split_loops.c "$TMP/split-$cc" -fno-omit-frame-pointer || { fail "$cc builds split_loops.c"; continue; }
	record "$TMP/split-$cc.data" "$TMP/split-$cc" 10 || { fail "record split_loops ($cc)"; continue; }
	check "split-$cc" "$TMP/split-$cc" "$TMP/split-$cc.data" run run
	# the line's figures are those of perf loops report -s srcline
	"$PERF_LOOPS" report -i "$TMP/split-$cc.data" --stdio -S run -s srcline -n >"$TMP/src" 2>/dev/null
	want=$(awk -v k="split_loops.c:$BIG" '$NF == k { print $1, $2; exit }' "$TMP/src")
	got=$(python3 "$CHECK" row "$TMP/split-$cc.txt" split_loops.c "$BIG" | awk '{ print $1 "%", $2 }')
	check_eq "$got" "$want" "split-$cc: line $BIG's Percent and Samples are perf loops report -s srcline's"
done

# C++: the header shortens the name as --stdio does; --full-names does not
if command -v g++ >/dev/null 2>&1 && build_fixture g++ -O2 perf/cxx_names.cpp "$TMP/cxx" -fno-omit-frame-pointer &&
	record "$TMP/cxx.data" "$TMP/cxx"; then
	"$PERF_LOOPS" annotate -i "$TMP/cxx.data" --stdio >"$TMP/cxx.txt" 2>"$TMP/err"
	name=$(sed -n 's/^# perf loops annotate: \(.*\)  (.*/\1/p' "$TMP/cxx.txt")
	"$PERF_LOOPS" report -i "$TMP/cxx.data" --stdio --no-children -s sym >"$TMP/cxxsym" 2>/dev/null
	grep -qF "$name" "$TMP/cxxsym" && [ -n "$name" ]
	ok $? "C++: the annotated procedure '$name' is named as in --stdio"
	"$PERF_LOOPS" annotate -i "$TMP/cxx.data" --stdio --full-names >"$TMP/cxxfull.txt" 2>"$TMP/err"
	full=$(sed -n 's/^# perf loops annotate: \(.*\)  (.*/\1/p' "$TMP/cxxfull.txt")
	[ ${#full} -gt ${#name} ]
	ok $? "C++: --full-names gives the whole name ('$full')"
	# SYMBOL may be the short name
	"$PERF_LOOPS" annotate -i "$TMP/cxx.data" --stdio "$name" >"$TMP/cxx2.txt" 2>"$TMP/err"
	cmp -s "$TMP/cxx.txt" "$TMP/cxx2.txt"
	ok $? "C++: SYMBOL given as the short name annotates the same procedure"
else
	skip "g++ cannot build or record cxx_names.cpp"
fi

# bad input: a clear message and a non-zero exit
"$PERF_LOOPS" annotate -i "$TMP/split-gcc.data" --stdio no_such_proc >"$TMP/out" 2>"$TMP/err"
[ $? -ne 0 ] && grep -q "no samples in a function named 'no_such_proc'" "$TMP/err"
ok $? "an unknown SYMBOL: exit non-zero, the message names it"
"$PERF_LOOPS" annotate -i "$TMP/nonexistent.data" --stdio >"$TMP/out" 2>"$TMP/err"
[ $? -ne 0 ] && grep -q "nonexistent.data" "$TMP/err"
ok $? "a missing file: exit non-zero, the message names it"
"$PERF_LOOPS" report -i "$TMP/split-gcc.data" --stdio --asm >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "only perf loops annotate takes it" "$TMP/err"
ok $? "report --asm: exit 2, one line"
done_testing
