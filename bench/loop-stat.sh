#!/bin/sh
# bench/loop-stat.sh - what counting loops costs: `perf loops stat` over a
# program against the plain run of it, and against the peer a user would
# otherwise count loop trips with, valgrind's callgrind with
# --collect-jumps=yes (exact jump counts, the whole program under a JIT).
#
#   bench/loop-stat.sh [BUILD_DIR] [RUNS] [BURST_RUNS]
#                           (default: the source tree, 3 rounds, 20 burst runs)
#
# The program (written here): an outer loop around an inner one whose
# iterations take a few nanoseconds each.  Two cases, in one run of this
# script, RUNS rounds (medians), each tool in turn in every round so that
# the machine's load falls on all alike:
#   coarse  1000 x 100000: perf loops stat --loop main (the outer loop:
#           ~1000 probe hits)
#   fine    10 x 2000: perf loops stat --loop inner (the inner loop: a
#           probe hit every iteration, ~20000)
#   burst   tests/fixtures/perf/hot_loops.c's hot loop, 10^6 entries x 100
#           iterations = 10^8: perf loops stat --burst=5/50 --loop hot
#           (iteration probes on in bursts, entries exact) against the
#           plain run; the estimate's error against the known 10^8, and
#           the stated standard error, every round.  The exact count of
#           the same loop would take 10^8 hits: projected from the cost of
#           a hit the coarse and fine cases measure (not run: minutes).
#           BURST_RUNS runs in all (the RUNS rounds' and more): how often
#           the error is within one and two of the standard errors stated
#           (the error bar's coverage: 68% and 95% if it is right).
#   overhead  the stated overhead (each probe's hits x the measured cost of
#           its class of instruction) against the program's CPU time with
#           the probes less its CPU time plain (hot_loops 10^4 x 100
#           exact, and the burst runs).
# each against the plain run and callgrind --collect-jumps=yes, and perf
# loops stat's own statement of its overhead (hits x cost of a hit)
# beside; the fine case also with --trace (every hit recorded by perf
# record, for the trip counts per entry).  Needs root (uprobes).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here}
RUNS=${2:-3}
BURST_RUNS=${3:-20}
PERF_LOOPS=${PERF_LOOPS:-$build/perf-loops}


[ -x "$PERF_LOOPS" ] || { echo "loop-stat.sh: $PERF_LOOPS not built" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "loop-stat.sh: needs root (uprobes)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/loop-stat-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

cat >"$work/nest.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
volatile unsigned long sink;
__attribute__((noinline)) unsigned long inner(unsigned long x, int n)
{
	for (int j = 0; j < n; j++)   /* inner loop */
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}
int main(int argc, char **argv)
{
	int outer = atoi(argv[1]), n = atoi(argv[2]);
	unsigned long x = 1;
	for (int i = 0; i < outer; i++)   /* outer loop */
		x = inner(x, n);
	sink = x;
	printf("%lu\n", x);
	return 0;
}
EOF
gcc -O2 -g -o "$work/nest" "$work/nest.c"
gcc -O2 -g -o "$work/hot_loops" "$here/tests/fixtures/perf/hot_loops.c"

now() { date +%s.%N; }
# time_of NAME COMMAND...: appends the wall seconds of one run to $work/NAME
time_of() {
	_name=$1; shift
	_t0=$(now)
	"$@" >"$work/$_name.out" 2>&1 || { echo "loop-stat.sh: $_name failed:" >&2; tail -n 5 "$work/$_name.out" >&2; exit 1; }
	echo "$(now) - $_t0" | bc >>"$work/$_name.times"
}
median() { sort -n "$work/$1.times" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

have_valgrind=0
command -v valgrind >/dev/null 2>&1 && have_valgrind=1
# case NAME LOOP OUTER INNER: one round of the three tools on one case
case_round() {
	time_of "$1-plain" "$work/nest" "$3" "$4"
	time_of "$1-stat" "$PERF_LOOPS" stat --loop "$2" -- "$work/nest" "$3" "$4"
	[ $have_valgrind = 1 ] && time_of "$1-callgrind" valgrind --tool=callgrind --collect-jumps=yes \
		--callgrind-out-file="$work/cg.out" "$work/nest" "$3" "$4"
	return 0
}
# burst_round: the 10^8-iteration loop plain and with --burst; the
# estimate of each round (its JSON) kept as burst-N.json
burst_round() {
	time_of burst-plain "$work/hot_loops" 1000000 100
	time_of burst-stat "$PERF_LOOPS" stat --burst=5/50 --json -o "$work/burst-$1.json" --loop hot -- \
		"$work/hot_loops" 1000000 100
}
# cpu_of COMMAND...: the user + system seconds of one run of COMMAND
cpu_of() { /usr/bin/time -f '%U %S' -o "$work/cpu" "$@" >/dev/null 2>&1; awk '{ print $1 + $2 }' "$work/cpu"; }
for r in $(seq "$RUNS"); do
	case_round coarse main 1000 100000
	case_round fine inner 10 2000
	time_of fine-trace "$PERF_LOOPS" stat --trace --loop inner -- "$work/nest" 10 2000
	burst_round "$r"
done

echo "# bench/loop-stat.sh $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores; $("$PERF_LOOPS" --version); $(perf --version)"
echo "# median of $RUNS rounds; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for c in coarse fine; do
	base=$(median "$c-plain")
	for t in plain stat trace callgrind; do
		[ -s "$work/$c-$t.times" ] || continue
		m=$(median "$c-$t")
		printf '%-16s %8.3f s  %10.2fx plain\n' "$c-$t" "$m" "$(echo "$m / $base" | bc -l)"
	done
	echo "# $c-stat: $(grep '^probes:' "$work/$c-stat.out")"
	grep -E '^  (entries|iterations|trip count)' "$work/$c-stat.out" | sed 's/^/#   /'
done

base=$(median burst-plain)
m=$(median burst-stat)
printf '%-16s %8.3f s  %10.2fx plain\n' burst-plain "$base" 1
printf '%-16s %8.3f s  %10.2fx plain\n' burst-stat "$m" "$(echo "$m / $base" | bc -l)"
# the cost of a hit in wall time: the fine case's extra time less the
# coarse case's (the fixed cost), over the fine case's extra hits
hit_us=$(echo "(($(median fine-stat) - $(median fine-plain)) - ($(median coarse-stat) - $(median coarse-plain))) / (20010 - 1001) * 1000000" | bc -l)
printf '# burst: exact counting of the same loop (1.01e8 hits) projected at %.2f us a hit: %.0f s, %.0fx plain\n' \
	"$hit_us" "$(echo "1.01 * 10^8 * $hit_us / 1000000" | bc -l)" "$(echo "1.01 * 10^8 * $hit_us / 1000000 / $base" | bc -l)"
r=$RUNS
while [ "$r" -lt "$BURST_RUNS" ]; do
	r=$((r + 1))
	"$PERF_LOOPS" stat --burst=5/50 --json -o "$work/burst-$r.json" --loop hot -- "$work/hot_loops" 1000000 100 \
		>/dev/null 2>"$work/burst.err" || { echo "loop-stat.sh: burst run $r failed:" >&2; cat "$work/burst.err" >&2; exit 1; }
done
# the stated overhead against the program's CPU time with probes less plain
plain_cpu=$(cpu_of "$work/hot_loops" 1000000 100)
"$PERF_LOOPS" stat --json -o "$work/exact.json" --loop hot -- "$work/hot_loops" 10000 100 >/dev/null 2>&1
plain_exact=$(cpu_of "$work/hot_loops" 10000 100)
python3 - "$plain_exact" "$work/exact.json" "$plain_cpu" "$work"/burst-*.json <<'PY'
import json, sys
def line(name, plain, f):
    d = json.load(open(f))
    cls = ", ".join("%s %d x %.2f us" % (k, v["hits"], v["cost_per_hit_ns"] / 1e3) for k, v in d["hits_by_class"].items())
    extra = d["cpu_milliseconds"] / 1e3 - plain
    print("# overhead %-6s stated %.3f s, measured %.3f s of CPU (%.3f probed - %.3f plain): stated/measured %.2f; %s"
          % (name, d["overhead_ms"] / 1e3, extra, d["cpu_milliseconds"] / 1e3, plain, d["overhead_ms"] / 1e3 / extra, cls))
line("exact", float(sys.argv[1]), sys.argv[2])
step = json.load(open(sys.argv[2]))["hits_by_class"]["single-stepped"]["cost_per_hit_ns"] / 1e3
print("# burst: exact counting of the 10^8 iterations (single-stepped hits) projected at %.2f us of CPU a hit: %.0f s"
      % (step, 1e8 * step / 1e6))
r = [json.load(open(f)) for f in sys.argv[4:]]
known = [d for d in r if d["overhead_ms"] is not None and d["cpu_milliseconds"] is not None]
ratios = sorted(d["overhead_ms"] / 1e3 / (d["cpu_milliseconds"] / 1e3 - float(sys.argv[3])) for d in known)
print("# overhead burst  stated/measured over %d runs: median %.2f, range %.2f to %.2f%s"
      % (len(known), ratios[len(known) // 2], ratios[0], ratios[-1],
         "; %d runs without an overhead or CPU time: %s" % (len(r) - len(known), [(d["overhead_ms"], d["cpu_milliseconds"]) for d in r if d not in known])
         if len(known) < len(r) else ""))
PY
python3 - "$work"/burst-*.json <<'PY'
import json, sys
z = []
for f in sys.argv[1:]:
    e = json.load(open(f))["loops"][0]["iterations_estimate"]
    if e["value"] is not None and e["stderr"]:
        z.append((e["value"] - 10**8) / e["stderr"])
err = [abs(v) for v in z]
print("# burst coverage over %d runs: |error| <= 1 standard error in %d (%.0f%%, 68%% if right), <= 2 in %d (%.0f%%, 95%%); z from %+.2f to %+.2f"
      % (len(z), sum(v <= 1 for v in err), 100.0 * sum(v <= 1 for v in err) / len(z), sum(v <= 2 for v in err),
         100.0 * sum(v <= 2 for v in err) / len(z), min(z), max(z)))
PY
for r in $(seq "$RUNS"); do
	python3 - "$work/burst-$r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
l = d["loops"][0]
e = l["iterations_estimate"]
exact = 10**8
if e["value"] is None:
    print("# burst round: no estimate (%d windows saw no whole trip)" % e["windows"])
else:
    err = e["value"] - exact
    print("# burst round: entries %s (exact 1000000), iterations ~%.4g +- %.2g (%.2f%%) vs exact 1e8: error %+.2f%% = %+.1f standard errors;"
          " %d windows, probes in %.1f%% of the run, %d iterations over %d entries seen"
          % (l["entries"], e["value"], e["stderr"], 100 * e["stderr"] / e["value"], 100.0 * err / exact,
             err / e["stderr"] if e["stderr"] else float("inf"), e["windows"], 100 * e["on_fraction"],
             e["window_iterations"], e["window_entries"]))
PY
done
