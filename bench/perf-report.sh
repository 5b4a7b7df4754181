#!/bin/sh
# bench/perf-report.sh - `perf loops report --stdio` against `perf report
# --stdio` (what a user types), `perf report --inline --stdio` and `perf
# report --no-inline --stdio` on one perf.data file with call graphs.
#
#   bench/perf-report.sh [BUILD_DIR]        (default: the source tree)
#   env: WORKLOAD=bench_work|eigen|system  SECONDS_RECORDED=65 (eigen: 150, system: 3)
#        THREADS=2 FREQ=50000 REPS=3 INLINE_REPS=1 SRCLINE_REPS=1
#        PERF_DATA=existing.data (skip recording; keep it with KEEP_DATA=DIR)
#        BASE=BUILD_DIR (system: also time that build's perf-loops, "before")
#
# WORKLOAD=bench_work (the default): tests/fixtures/perf/bench_work.c runs
# THREADS threads through loops of inlined helpers, a recursion and libc's
# qsort, compiled now with gcc -O2 -g -fno-omit-frame-pointer; it aims at
# >= 5M samples (2 threads x 65 s x 50 kHz when the machine is quiet).
#
# WORKLOAD=eigen: a real program's recording, numerical C++ with heavy
# inlining: Eigen's own dense-solver benchmark (bench/dense_solvers.cpp of
# Debian's eigen3 source package, fetched by tests/corpus/corpus.py with
# apt-get source), compiled now with g++ -O2 -g -fno-omit-frame-pointer
# -DNDEBUG, run for SECONDS_RECORDED seconds (it aims at >= 500k samples).
#
# WORKLOAD=system: the first report of a system-wide recording, with a cold
# structure cache, the case where perf loops analyzes every binary that has
# a sample (issue 23): perf record -a -g -e cpu-clock -- sleep
# SECONDS_RECORDED (3) while a load runs that brings in big binaries (g++ and
# clang compiling tests/fixtures/perf/cxx_names.cpp at -O2, python3, xz),
# besides whatever else runs on the machine.  Timed: perf loops report
# --stdio with an empty XDG_CACHE_HOME each time (the first report), again
# with the cache it made (the second), and perf report --stdio; wall and
# CPU time and peak RSS (from wait4's rusage) of each, medians of REPS, and
# the ratios of the first report to perf report.  BASE=BUILD_DIR (a build
# of main before a change) times that build's two reports too, in turn
# with this build's in every repetition (the same load for both), with
# the ratios before / after.
#
# bench_work and eigen are recorded with perf record -e cpu-clock -F FREQ --call-graph=fp.
# cpu-clock samples come with the CPU time the workload gets: on a loaded
# machine (or one whose timer interrupts are slow, as in some VMs) a run
# gets fewer samples; the count is printed, raise SECONDS_RECORDED then.
#
# Fair to both: the same perf.data, output to /dev/null for both, caches
# warm for both (page cache, loopscope's structure cache, perf's build-id
# cache), and perf-loops run as the ELF program itself (a build tree's
# ./perf-loops is libtool's wrapper script, whose shell and sed cost 0.2-1 s
# on a loaded machine: it is run as .libs/perf-loops with the build's
# library path, what the wrapper does).  Every command runs REPS times (perf
# report --inline INLINE_REPS times, the srcline mode SRCLINE_REPS times);
# medians of wall and CPU time, and their ratios, are printed.  On a busy
# machine quote the CPU ratio: wall times then measure the other load too.
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
. "$here/bench/perf-loops-elf.sh"
# BASE: another build tree (main before a change), its ELF program and
# library path found as for PERF_LOOPS
BASE_PERF_LOOPS= BASE_LIBS=
if [ -n "${BASE:-}" ]; then
	BASE_PERF_LOOPS=$BASE/.libs/perf-loops
	BASE_LIBS=$(cd "$BASE/.libs" && pwd)
	[ -x "$BASE_PERF_LOOPS" ] || { echo "perf-report.sh: $BASE_PERF_LOOPS not built" >&2; exit 1; }
fi
WORKLOAD=${WORKLOAD:-bench_work}
case $WORKLOAD in
bench_work) SECONDS_RECORDED=${SECONDS_RECORDED:-65}; want=5000000 ;;
eigen) SECONDS_RECORDED=${SECONDS_RECORDED:-150}; want=500000 ;;
system) SECONDS_RECORDED=${SECONDS_RECORDED:-3}; want=1000 ;;
*) echo "perf-report.sh: WORKLOAD is bench_work, eigen or system" >&2; exit 1 ;;
esac
THREADS=${THREADS:-2}
FREQ=${FREQ:-50000}
REPS=${REPS:-3}
INLINE_REPS=${INLINE_REPS:-1}
SRCLINE_REPS=${SRCLINE_REPS:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/perf-report-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
record() {
	echo "# recording: perf record -e cpu-clock -F $FREQ --call-graph=fp -- $*"
	perf record -q -e cpu-clock -F "$FREQ" --call-graph=fp -o "$work/perf.data" -- "$@" >/dev/null
}

# WORKLOAD=system: a load of big binaries while perf records every CPU
record_system() {
	echo "# recording: perf record -a -g -e cpu-clock -- sleep $SECONDS_RECORDED (with g++, clang, python3, xz running)"
	(
		end=$(($(date +%s) + SECONDS_RECORDED + 1))
		while [ "$(date +%s)" -lt "$end" ]; do
			g++ -O2 -c -o "$work/a.o" "$here/tests/fixtures/perf/cxx_names.cpp" 2>/dev/null || :
			! command -v clang++ >/dev/null || clang++ -O2 -c -o "$work/b.o" "$here/tests/fixtures/perf/cxx_names.cpp" 2>/dev/null || :
			python3 -c 'sum(i * i for i in range(300000))' || :
			head -c 4000000 /dev/urandom | xz -3 >/dev/null 2>&1 || :
		done
	) &
	load=$!
	perf record -q -a -g -e cpu-clock -o "$work/perf.data" -- sleep "$SECONDS_RECORDED" >/dev/null 2>&1
	wait "$load" || :
}

# The first report (cold structure cache), the second, and perf report;
# with BASE, the same two reports of that build too (before a change), run
# in turn with this build's in each repetition, so that both see the same
# load.
time_system() {
	python3 - "$PERF_DATA" "$PERF_LOOPS" "$REPS" "$work" "${BASE_PERF_LOOPS:-}" "${BASE_LIBS:-}" <<'PY'
import os, shutil, statistics, subprocess, sys, time
data, perf_loops, reps, work, base, base_libs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
def run(argv, env=None):
    t = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    if status:
        sys.exit("%s: exit status %d" % (argv[0], status))
    return time.monotonic() - t, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0
def report(prog, cache, cold, libs=None):
    if cold:
        shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    if libs:
        env["LD_LIBRARY_PATH"] = libs
    return run([prog, "report", "-i", data, "--stdio"], env)
cache, base_cache = os.path.join(work, "cache"), os.path.join(work, "base-cache")
cmds = [("perf loops report, first (cold)", lambda: report(perf_loops, cache, True)),
        ("perf loops report, second (warm)", lambda: report(perf_loops, cache, False))]
if base:
    cmds += [("before: first (cold)", lambda: report(base, base_cache, True, base_libs)),
             ("before: second (warm)", lambda: report(base, base_cache, False, base_libs))]
cmds.append(("perf report --stdio", lambda: run(["perf", "report", "-i", data, "--stdio"])))
runs = {name: [] for name, _ in cmds}
for _ in range(reps):
    for name, f in cmds:
        runs[name].append(f())
res = {}
for name, _ in cmds:
    res[name] = [statistics.median(r[i] for r in runs[name]) for i in range(3)]
    print("%-34s wall %7.2f s  cpu %7.2f s  peak %8.1f MiB  (median of %d)" % ((name,) + tuple(res[name]) + (reps,)))
peer = res["perf report --stdio"]
def ratio(label, x, y):
    print("%-35s wall %6.2fx  cpu %6.2fx  peak memory %6.2fx" % (label, x[0] / y[0], x[1] / y[1], x[2] / y[2]))
ratio("first report / perf report:", res[cmds[0][0]], peer)
ratio("second report / perf report:", res[cmds[1][0]], peer)
if base:
    ratio("before / after, first report:", res["before: first (cold)"], res[cmds[0][0]])
    ratio("before / after, second report:", res["before: second (warm)"], res[cmds[1][0]])
PY
}

if [ -z "${PERF_DATA:-}" ]; then
	case $WORKLOAD in
	system)
		record_system
		;;
	bench_work)
		gcc -O2 -g -fno-omit-frame-pointer -pthread -o "$work/bench_work" "$here/tests/fixtures/perf/bench_work.c"
		record "$work/bench_work" "$THREADS" "$SECONDS_RECORDED"
		;;
	eigen)
		src=$(LOOPSCOPE_CORPUS_QUIET=1 python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import corpus
print(corpus.source_dir("eigen3") or "")' "$here/tests/corpus")
		[ -n "$src" ] || { echo "perf-report.sh: eigen3's source cannot be had here (apt-get source eigen3)" >&2; exit 1; }
		echo "# building $src/bench/dense_solvers.cpp: g++ -O2 -g -fno-omit-frame-pointer -DNDEBUG"
		g++ -O2 -g -fno-omit-frame-pointer -DNDEBUG -I"$src" -o "$work/eigen-solvers" "$src/bench/dense_solvers.cpp"
		record timeout "$SECONDS_RECORDED" "$work/eigen-solvers"
		;;
	esac
	PERF_DATA=$work/perf.data
	if [ -n "${KEEP_DATA:-}" ]; then
		mkdir -p "$KEEP_DATA"
		cp "$PERF_DATA" "$KEEP_DATA/perf-$WORKLOAD.data"
		[ "$WORKLOAD" = eigen ] && cp "$work/eigen-solvers" "$KEEP_DATA/"
		PERF_DATA=$KEEP_DATA/perf-$WORKLOAD.data
	fi
fi
samples=$(perf script -i "$PERF_DATA" -F tid 2>/dev/null | wc -l)
echo "# $PERF_DATA: $samples samples, $(du -h "$PERF_DATA" | cut -f1); load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$samples" -ge "$want" ] || echo "# warning: fewer than $want samples (raise SECONDS_RECORDED)"
if [ "$WORKLOAD" = system ]; then
	echo "# $(perf report -i "$PERF_DATA" --stdio -s dso -g none -q 2>/dev/null | grep -c '%') binaries with samples"
	perf report -i "$PERF_DATA" --stdio >/dev/null 2>&1 # the page cache warm for both
	time_system
	exit 0
fi

# warm the caches once (page cache, loopscope's structure cache, perf's
# build-id cache), so that every command is timed in the same state
"$PERF_LOOPS" report -i "$PERF_DATA" --stdio >/dev/null 2>&1
perf report -i "$PERF_DATA" --stdio >/dev/null 2>&1

python3 - "$PERF_DATA" "$PERF_LOOPS" "$REPS" "$INLINE_REPS" "$SRCLINE_REPS" <<'PY'
import os, resource, statistics, subprocess, sys, time
data, perf_loops = sys.argv[1], sys.argv[2]
reps, inline_reps, srcline_reps = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
cmds = [
    ("perf loops report --stdio", [perf_loops, "report", "-i", data, "--stdio"], reps),
    ("perf report --stdio", ["perf", "report", "-i", data, "--stdio"], reps),
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
for name in ("perf report --stdio", "perf report --inline --stdio", "perf report --no-inline --stdio",
             "perf report --inline -g ...,srcline"):
    w, c, _ = res[name]
    print("%-34s / perf loops:  wall %6.1fx  cpu %6.1fx" % (name, w / mine[0], c / mine[1]))
PY
