#!/bin/sh
# perf-loops.sh - perf loops report on real recordings (perf record -e
# cpu-clock --call-graph=fp) of fixtures compiled now: samples land under the
# right loops, inlined calls and procedures, and per-procedure totals agree
# with perf report on the same file.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed"
TREE="$FIXTURES/perf/tree.py"
CFLAGS="-O2 -g -fno-omit-frame-pointer"

# line N of the fixture carrying MARK
line_of() { grep -n "$2" "$FIXTURES/perf/$1" | head -n 1 | cut -d: -f1; }

record() { # record OUT.data COMMAND...
	_out=$1; shift
	perf record -q -e cpu-clock --call-graph=fp -o "$_out" "$@" >"$TMP/rec.out" 2>"$TMP/rec.err"
}

build_fixture gcc -O2 perf/inline_loop.c "$TMP/inline_gcc" -fno-omit-frame-pointer || fail_all "gcc builds the fixture"
record "$TMP/probe.data" true || skip_all "perf record does not work here: $(head -n 1 "$TMP/rec.err")"

share() { python3 "$TREE" "$1" share "$2"; }
at_least() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)" "$1" "$2"; }
near() { python3 -c "import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) <= float(sys.argv[3]) else 1)" "$1" "$2" "$3"; }

# 1. a hot loop in an inlined callee inside a loop of main, gcc and clang
INNER=$(line_of inline_loop.c LOOP-INNER)
OUTER=$(line_of inline_loop.c LOOP-OUTER)
CALL=$(line_of inline_loop.c CALL-WORK)
for cc in gcc clang; do
	if ! command -v $cc >/dev/null 2>&1; then skip "$cc not installed"; continue; fi
	build_fixture $cc -O2 perf/inline_loop.c "$TMP/inline_$cc" -fno-omit-frame-pointer || { fail "$cc builds inline_loop.c"; continue; }
	record "$TMP/inline_$cc.data" "$TMP/inline_$cc" || { fail "record inline_loop ($cc)"; continue; }
	"$PERF_LOOPS" report -i "$TMP/inline_$cc.data" --format=json >"$TMP/inline_$cc.json" 2>"$TMP/err"
	ok $? "report --format=json on inline_loop ($cc)"
	python3 "$TREE" "$TMP/inline_$cc.json" check >"$TMP/check.out"
	ok $? "the JSON tree keeps the contract and its sums ($cc)"
	s=$(share "$TMP/inline_$cc.json" "proc:main/loop@$OUTER/inline:work@$CALL/loop@$INNER")
	at_least "$s" 0.90
	ok $? "$s of the samples in main > loop $OUTER > [I] work at line $CALL > loop $INNER ($cc)"
	"$PERF_LOOPS" report -i "$TMP/inline_$cc.data" --stdio --percent-limit=5 >"$TMP/tree.txt" 2>"$TMP/err"
	grep -q "\[I\] work (at inline_loop.c:$CALL)" "$TMP/tree.txt" && grep -q "loop at inline_loop.c:$INNER" "$TMP/tree.txt"
	ok $? "the tree view shows [I] work at its call site and the loop line ($cc)"
	grep -q "^# Samples: [0-9]*  of event 'cpu-clock'" "$TMP/tree.txt"
	ok $? "the tree view's header names the event and the sample count ($cc)"
done

# 2. two hot loops splitting the work 3:1
build_fixture gcc -O2 perf/split_loops.c "$TMP/split" -fno-omit-frame-pointer
record "$TMP/split.data" "$TMP/split"
ok $? "record split_loops"
"$PERF_LOOPS" report -i "$TMP/split.data" --format=json >"$TMP/split.json" 2>"$TMP/err"
BIG=$(share "$TMP/split.json" "proc:run/loop@$(line_of split_loops.c LOOP-BIG)")
SMALL=$(share "$TMP/split.json" "proc:run/loop@$(line_of split_loops.c LOOP-SMALL)")
near "$BIG" 0.75 0.05
ok $? "the big loop takes $BIG of the samples (want 0.75 +- 0.05)"
near "$SMALL" 0.25 0.05
ok $? "the small loop takes $SMALL of the samples (want 0.25 +- 0.05)"
"$PERF_LOOPS" report -i "$TMP/split.data" --format=loops >"$TMP/loops.txt" 2>"$TMP/err"
first=$(grep -v '^#' "$TMP/loops.txt" | grep 'split_loops.c' | sed -n 2p)
echo "$first" | grep -q "loop at split_loops.c:$(line_of split_loops.c LOOP-BIG)"
ok $? "the loops view ranks the big loop above the small one"
"$PERF_LOOPS" report -i "$TMP/split.data" --format=flat >"$TMP/flat.txt" 2>"$TMP/err"
grep -q "  run  \[split\]$" "$TMP/flat.txt" && grep -q "loop at split_loops.c:$(line_of split_loops.c LOOP-SMALL)" "$TMP/flat.txt"
ok $? "the flat view lists run with its loops"
"$PERF_LOOPS" report -i "$TMP/split.data" --format=folded >"$TMP/folded.txt" 2>"$TMP/err"
grep -q "run;loop at split_loops.c:[0-9]*;loop at split_loops.c:$(line_of split_loops.c LOOP-BIG) [0-9]*$" "$TMP/folded.txt"
ok $? "the folded view has loops as frames"
fsum=$(awk '{ s += $NF } END { print s }' "$TMP/folded.txt")
check_eq "$fsum" "$(python3 "$TREE" "$TMP/split.json" samples)" "folded counts add up to the sample count"

# 3. a hot loop in a shared library
mkdir -p "$TMP/lib"
gcc $CFLAGS -shared -fPIC -o "$TMP/lib/libhot.so" "$FIXTURES/perf/libhot.c" &&
	gcc $CFLAGS -o "$TMP/shlib" "$FIXTURES/perf/shlib_main.c" -L"$TMP/lib" -lhot -Wl,-rpath,"$TMP/lib"
ok $? "build libhot.so and its caller"
record "$TMP/shlib.data" "$TMP/shlib"
"$PERF_LOOPS" report -i "$TMP/shlib.data" --format=json >"$TMP/shlib.json" 2>"$TMP/err"
s=$(share "$TMP/shlib.json" "proc:hot_sum/loop@$(line_of libhot.c LOOP-LIB)")
at_least "$s" 0.90
ok $? "$s of the samples in hot_sum's loop inside libhot.so"
grep -q '"dso":"[^"]*/libhot.so"' "$TMP/shlib.json"
ok $? "the procedure names its shared library"
"$PERF_LOOPS" report -i "$TMP/shlib.data" --format=json --dso=libhot.so >"$TMP/dso.json" 2>"$TMP/err"
# Every sample left must end in the library: in hot_sum, or in the library's
# PLT or _init, where a sample may land too (its callers in the program and
# libc stay in the tree as its context).
in_lib=$(python3 - "$TMP/dso.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
n = 0
def walk(node):
    global n
    if node["kind"] == "proc" and node.get("dso", "").endswith("/libhot.so"):
        n += node["self"][0]  # a procedure's Self: the samples in its own code
    for c in node["children"]:
        walk(c)
walk(doc["tree"])
print(n)
PY
)
check_eq "$in_lib" "$(python3 "$TREE" "$TMP/dso.json" samples)" "--dso=libhot.so keeps only the library's samples"

# 4. threads and a fork (the child's maps are a copy of its parent's)
build_fixture gcc -O2 perf/threads_fork.c "$TMP/tf" -fno-omit-frame-pointer -pthread
record "$TMP/tf.data" "$TMP/tf"
ok $? "record threads_fork"
"$PERF_LOOPS" report -i "$TMP/tf.data" --format=json --comm=plchild >"$TMP/child.json" 2>"$TMP/err"
s=$(share "$TMP/child.json" "proc:child_work/loop@$(line_of threads_fork.c LOOP-CHILD)")
at_least "$s" 0.90
ok $? "$s of the forked child's samples in child_work's loop"
"$PERF_LOOPS" report -i "$TMP/tf.data" --format=json --comm=plworker >"$TMP/thr.json" 2>"$TMP/err"
s=$(share "$TMP/thr.json" "proc:thread_work/loop@$(line_of threads_fork.c LOOP-THREAD)")
at_least "$s" 0.90
ok $? "$s of the threads' samples in thread_work's loop"
n=$(python3 "$TREE" "$TMP/thr.json" samples)
[ "$n" -gt 0 ] && [ "$(python3 "$TREE" "$TMP/child.json" samples)" -gt 0 ]
ok $? "--comm tells the child and the threads apart"

# 4b. --call-graph dwarf on code without frame pointers: the user stack is
# unwound from the sampled registers and stack copy (libdwfl), so the caller
# chain main > child_work is whole where frame pointers cannot give it
build_fixture gcc -O2 perf/threads_fork.c "$TMP/tf_nofp" -fomit-frame-pointer -pthread
if perf record -q -e cpu-clock --call-graph=dwarf -o "$TMP/dwarf.data" "$TMP/tf_nofp" 6000 >/dev/null 2>&1; then
	"$PERF_LOOPS" report -i "$TMP/dwarf.data" --format=json --comm=plchild >"$TMP/dwarf.json" 2>"$TMP/err"
	s=$(share "$TMP/dwarf.json" "proc:main/proc:child_work/loop@$(line_of threads_fork.c LOOP-CHILD)")
	at_least "$s" 0.90
	ok $? "--call-graph dwarf: $s of the child's samples in main > child_work > its loop"
	s=$(share "$TMP/dwarf.json" "proc:__libc_start_call_main/proc:main")
	at_least "$s" 0.90
	ok $? "--call-graph dwarf: $s of them under __libc_start_call_main > main"
else
	skip "perf record --call-graph=dwarf does not work here"
	skip "perf record --call-graph=dwarf does not work here"
fi

# 5. per-procedure sample totals agree with perf report on the same file
for data in split tf shlib; do
	perf report -i "$TMP/$data.data" --stdio --no-children --sort sym -g none --show-nr-samples \
		>"$TMP/perf.txt" 2>/dev/null
	"$PERF_LOOPS" report -i "$TMP/$data.data" --format=json >"$TMP/x.json" 2>"$TMP/err"
	bad=0
	# the user-space procedures with at least 1% of the samples
	awk '!/^#/ && /\[\.\]/ && $1 + 0 >= 1.0 { print $2, $4 }' "$TMP/perf.txt" >"$TMP/syms"
	[ -s "$TMP/syms" ] || bad=1
	while read -r count sym; do
		mine=$(python3 "$TREE" "$TMP/x.json" procself "$sym")
		if [ "$mine" != "$count" ]; then bad=1; diag "$data: $sym: perf report $count, perf loops $mine"; fi
	done <"$TMP/syms"
	ok $bad "samples per procedure equal perf report --no-children --sort sym ($data: $(tr '\n' ' ' <"$TMP/syms"))"
done

# 6. pipe mode: perf record -o - | perf loops report
perf record -q -e cpu-clock --call-graph=fp -o - "$TMP/split" 2>/dev/null >"$TMP/pipe.data"
"$PERF_LOOPS" report -i - --format=json <"$TMP/pipe.data" >"$TMP/pipe.json" 2>"$TMP/err"
BIG=$(share "$TMP/pipe.json" "proc:run/loop@$(line_of split_loops.c LOOP-BIG)")
near "$BIG" 0.75 0.05
ok $? "pipe mode from stdin: the big loop takes $BIG"

# 7. compressed recordings (perf record -z)
if perf record -q -z -e cpu-clock --call-graph=fp -o "$TMP/z.data" "$TMP/split" >/dev/null 2>&1; then
	"$PERF_LOOPS" report -i "$TMP/z.data" --format=json >"$TMP/z.json" 2>"$TMP/err"
	want=$(perf script -i "$TMP/z.data" -F tid 2>/dev/null | wc -l)
	check_eq "$(python3 "$TREE" "$TMP/z.json" samples)" "$want" "perf record -z: every compressed sample is read"
else
	skip "perf record -z is not supported here"
fi
done_testing
