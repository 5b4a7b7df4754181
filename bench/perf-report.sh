#!/bin/sh
# bench/perf-report.sh - `perf loops report --stdio` against `perf report
# --inline --stdio` and `perf report --no-inline --stdio` on one perf.data
# file with >= 1M samples with call graphs.
#
#   bench/perf-report.sh [BUILD_DIR]        (default: the source tree)
#   env: SECONDS_RECORDED=65 THREADS=2 FREQ=50000 REPS=3 INLINE_REPS=1 SRCLINE_REPS=1
#        PERF_DATA=existing.data (skip recording)
#
# The workload (tests/fixtures/perf/bench_work.c) runs threads through loops
# of inlined helpers, a recursion and libc's qsort, compiled now with
# gcc -O2 -g -fno-omit-frame-pointer and recorded with
# perf record -e cpu-clock -F FREQ --call-graph=fp.  Every command runs REPS
# times (perf report --inline INLINE_REPS times: it is slow); medians of wall
# and CPU time, and their ratios, are printed.
#
# A note on the peers: Debian's perf 6.1 is built without libbfd, and its
# `--inline` then finds no inlined frames at all (it costs what --no-inline
# costs).  The perf output closest to perf loops' (source lines in the call
# chains) is `-g caller,0.5,callee,function,srcline`, timed as well
# (SRCLINE_REPS times).  `--sort srcline` is far slower still (minutes for
# 0.25M samples) and is not run.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here}
PERF_LOOPS=${PERF_LOOPS:-$build/perf-loops}
[ -x "$PERF_LOOPS" ] || { echo "perf-report.sh: $PERF_LOOPS not built" >&2; exit 1; }
SECONDS_RECORDED=${SECONDS_RECORDED:-65}
THREADS=${THREADS:-2}
FREQ=${FREQ:-50000}
REPS=${REPS:-3}
INLINE_REPS=${INLINE_REPS:-1}
SRCLINE_REPS=${SRCLINE_REPS:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/perf-report-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -z "${PERF_DATA:-}" ]; then
	gcc -O2 -g -fno-omit-frame-pointer -pthread -o "$work/bench_work" "$here/tests/fixtures/perf/bench_work.c"
	echo "# recording: perf record -e cpu-clock -F $FREQ --call-graph=fp -- bench_work $THREADS $SECONDS_RECORDED"
	perf record -q -e cpu-clock -F "$FREQ" --call-graph=fp -o "$work/perf.data" \
		"$work/bench_work" "$THREADS" "$SECONDS_RECORDED" >/dev/null
	PERF_DATA=$work/perf.data
fi
samples=$(perf script -i "$PERF_DATA" -F tid 2>/dev/null | wc -l)
echo "# $PERF_DATA: $samples samples, $(du -h "$PERF_DATA" | cut -f1)"
[ "$samples" -ge 1000000 ] || echo "# warning: fewer than 1M samples (raise SECONDS_RECORDED)"

# warm the caches once (page cache, loopscope's structure cache, perf's
# build-id cache), so that every command is timed in the same state
"$PERF_LOOPS" report -i "$PERF_DATA" --stdio >/dev/null 2>&1
perf report -i "$PERF_DATA" --no-inline --stdio >/dev/null 2>&1

python3 - "$PERF_DATA" "$PERF_LOOPS" "$REPS" "$INLINE_REPS" "$SRCLINE_REPS" <<'PY'
import os, resource, statistics, subprocess, sys, time
data, perf_loops = sys.argv[1], sys.argv[2]
reps, inline_reps, srcline_reps = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
cmds = [
    ("perf loops report --stdio", [perf_loops, "report", "-i", data, "--stdio"], reps),
    ("perf report --no-inline --stdio", ["perf", "report", "-i", data, "--no-inline", "--stdio"], reps),
    ("perf report --inline --stdio", ["perf", "report", "-i", data, "--inline", "--stdio"], inline_reps),
    ("perf report --inline -g ...,srcline", ["perf", "report", "-i", data, "--inline",
                                             "-g", "caller,0.5,callee,function,srcline", "--stdio"], srcline_reps),
]
res = {}
for name, argv, n in cmds:
    walls, cpus = [], []
    for _ in range(n):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.monotonic()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        walls.append(time.monotonic() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    res[name] = (statistics.median(walls), statistics.median(cpus), n)
    print("%-34s wall %8.2f s  cpu %8.2f s  (median of %d)" % (name, res[name][0], res[name][1], n))
mine = res["perf loops report --stdio"]
for name in ("perf report --inline --stdio", "perf report --no-inline --stdio",
             "perf report --inline -g ...,srcline"):
    w, c, _ = res[name]
    print("%-34s / perf loops:  wall %6.1fx  cpu %6.1fx" % (name, w / mine[0], c / mine[1]))
PY
