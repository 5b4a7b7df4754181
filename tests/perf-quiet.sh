#!/bin/sh
# perf-quiet.sh - perf loops report says nothing when nothing is wrong
# (issue 23): on every kind of file recording of perf 6.1 the suite makes
# (perf loops record, perf record -g, --call-graph=dwarf, -z, --threads, two
# events; fixtures with loops, inlined calls, a shared library and
# threads), built with -g and libc's debug symbols installed, the report
# prints no line on stderr: not perf's ID_INDEX and EVENT_UPDATE records,
# not the vdso, not the kernel's few samples.  Then what a user pipes:
# `perf loops report | head` 20 times through perf (perf runs perf-loops as
# a child and says FATAL when a child dies of a signal): exit 141 or 0,
# never a FATAL line.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed"
export HOME="$TMP/home"
mkdir -p "$HOME"
cd "$TMP" || exit 1
PATH="$(cd "$(dirname "$PERF_LOOPS")" && pwd):$PATH" # perf finds perf-loops on PATH
export PATH
perf loops --version >/dev/null 2>&1 || skip_all "perf does not find perf-loops on PATH"
for f in split_loops inline_loop; do
	build_fixture gcc -O2 "perf/$f.c" "$TMP/$f" -fno-omit-frame-pointer || fail_all "gcc builds the fixture"
done
gcc -O2 -g -fno-omit-frame-pointer -fPIC -shared -o "$TMP/libhot.so" "$FIXTURES/perf/libhot.c" &&
	gcc -O2 -g -fno-omit-frame-pointer -o "$TMP/shlib_main" "$FIXTURES/perf/shlib_main.c" -L"$TMP" -lhot \
		-Wl,-rpath,"$TMP" || fail_all "gcc builds the shared-library fixture"
gcc -O2 -g -fno-omit-frame-pointer -pthread -o "$TMP/threads" "$FIXTURES/perf/threads_fork.c" ||
	fail_all "gcc builds threads_fork.c"
perf record -q -N -e cpu-clock -o "$TMP/probe.data" true >/dev/null 2>"$TMP/err" ||
	skip_all "perf record does not work here: $(head -n 1 "$TMP/err")"

n=0
quiet() { # quiet DESCRIPTION PERF-RECORD-ARGS... -- COMMAND...: record, report, nothing on stderr
	what=$1
	shift
	n=$((n + 1))
	if ! "$@" >/dev/null 2>"$TMP/rec.err"; then
		skip "$what: the recording failed here: $(head -n 1 "$TMP/rec.err")"
		return
	fi
	"$PERF_LOOPS" report -i "$TMP/q$n.data" --stdio >"$TMP/out" 2>"$TMP/err"
	rc=$?
	# (-g recordings of frameless leaves: the one note on their call chains)
	without_fp_note "$TMP/err" >"$TMP/err.other"
	[ $rc -eq 0 ] && [ ! -s "$TMP/err.other" ] && grep -q "^# Samples: [1-9]" "$TMP/out"
	ok $? "$what: the report prints no line on stderr but the fp-chain note (exit $rc$(head -c 300 "$TMP/err.other" | tr '\n' ' ' | sed 's/^./: &/'))"
}
quiet "perf loops record" perf loops record -q -N -o "$TMP/q1.data" -- "$TMP/split_loops" 3
quiet "perf record -g" perf record -q -N -g -e cpu-clock -o "$TMP/q2.data" "$TMP/inline_loop" 5000
quiet "perf record --call-graph=dwarf" perf record -q -N --call-graph=dwarf -m 1024 -e cpu-clock -o "$TMP/q3.data" "$TMP/inline_loop" 5000
quiet "perf record -z" perf record -q -N -z -g -e cpu-clock -o "$TMP/q4.data" "$TMP/split_loops" 3
quiet "perf record --threads (a directory)" perf record -q -N --threads -g -e cpu-clock -o "$TMP/q5.data" "$TMP/split_loops" 3
quiet "two events" perf record -q -N -g -e cpu-clock -e task-clock -o "$TMP/q6.data" "$TMP/split_loops" 3
quiet "a shared library" perf record -q -N -g -e cpu-clock -o "$TMP/q7.data" "$TMP/shlib_main"
quiet "threads and a fork" perf record -q -N -g -e cpu-clock -o "$TMP/q8.data" "$TMP/threads"
quiet "--call-graph=dwarf of threads" perf record -q -N --call-graph=dwarf -F 1000 -m 1024 -e cpu-clock -o "$TMP/q9.data" "$TMP/threads"

# | head, 20 times, through perf: head -n 0 is gone before the report
# writes (10 times); head -n 1 of a report several stdio buffers long reads
# the first and goes (10 times)
gcc -O2 -g -fno-omit-frame-pointer -pthread -o "$TMP/bench_work" "$FIXTURES/perf/bench_work.c" &&
	perf record -q -N -g -e cpu-clock -o "$TMP/big.data" "$TMP/bench_work" 1 1 >/dev/null 2>&1 ||
	fail "bench_work.c's recording"
"$PERF_LOOPS" report -i "$TMP/big.data" --stdio -g graph,0 --percent-limit 0 2>/dev/null | wc -c >"$TMP/size"
i=0 fatal=0 bad=""
while [ $i -lt 20 ]; do
	lines=$((i < 10 ? 0 : 1))
	{ perf loops report -i "$TMP/big.data" --stdio -g graph,0 --percent-limit 0 2>"$TMP/err.$i"; echo $? >"$TMP/rc.$i"; } |
		head -n $lines >/dev/null
	rc=$(cat "$TMP/rc.$i")
	grep -q FATAL "$TMP/err.$i" && fatal=$((fatal + 1))
	[ "$rc" -eq 0 ] || [ "$rc" -eq 141 ] || bad="$bad $rc"
	i=$((i + 1))
done
[ $fatal -eq 0 ] && [ -z "$bad" ]
ok $? "perf loops report | head -n 0 and -n 1 ($(cat "$TMP/size") bytes of report), 20 times: exit 141 or 0 (others:${bad:- none}), $fatal FATAL lines"
done_testing
