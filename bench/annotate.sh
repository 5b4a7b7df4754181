#!/bin/sh
# bench/annotate.sh - the browser of `perf loops report` and its annotate
# view against perf's own, on one perf.data file with call graphs (the file
# bench/perf-report.sh records: >= 1M samples; PERF_DATA= reuses one).
#
#   bench/annotate.sh [BUILD_DIR]        (default: the source tree)
#   env: PERF_DATA=existing.data  SECONDS_RECORDED=65 THREADS=2 FREQ=50000  REPS=3
#
# Timed, each REPS times (medians), in one run:
#   - the browser's first screen: `perf loops report` in a tmux pane until its
#     header shows, against `perf report` (TUI) in the same way, and against
#     `perf report --stdio` to its end;
#   - in the open browser, `a` on the hottest procedure until the annotate
#     view shows, against `perf annotate --stdio SYMBOL` (a whole run: perf
#     has no way to time its TUI's annotate alone);
#   - `perf loops annotate --stdio` (a whole run) against `perf annotate --stdio`.
# The targets: the browser open in under 2 s, annotate in under 0.5 s after.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here}
PERF_LOOPS=${PERF_LOOPS:-$build/perf-loops}
[ -x "$PERF_LOOPS" ] || { echo "annotate.sh: $PERF_LOOPS not built" >&2; exit 1; }
command -v tmux >/dev/null || { echo "annotate.sh: tmux is needed" >&2; exit 1; }
SECONDS_RECORDED=${SECONDS_RECORDED:-65}
THREADS=${THREADS:-2}
FREQ=${FREQ:-50000}
REPS=${REPS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/annotate-bench.XXXXXX")
trap 'for s in "$work"/*.sock; do tmux -S "$s" kill-server 2>/dev/null; done; rm -rf "$work"' EXIT

if [ -z "${PERF_DATA:-}" ]; then
	gcc -O2 -g -fno-omit-frame-pointer -pthread -o "$work/bench_work" "$here/tests/fixtures/perf/bench_work.c"
	echo "# recording: perf record -e cpu-clock -F $FREQ --call-graph=fp -- bench_work $THREADS $SECONDS_RECORDED"
	perf record -q -e cpu-clock -F "$FREQ" --call-graph=fp -o "$work/perf.data" \
		"$work/bench_work" "$THREADS" "$SECONDS_RECORDED" >/dev/null
	PERF_DATA=$work/perf.data
fi
# the hottest procedure by its own samples: what perf loops annotate picks
sym=$("$PERF_LOOPS" annotate -i "$PERF_DATA" --stdio 2>/dev/null | sed -n 's/^# perf loops annotate: \(.*\)  (.*/\1/p')
samples=$("$PERF_LOOPS" report -i "$PERF_DATA" --stdio -s sym 2>/dev/null | sed -n "s/^# Samples: \([0-9]*\) .*/\1/p" | head -n 1)
echo "# $PERF_DATA: $samples samples, $(du -h "$PERF_DATA" | cut -f1); hottest procedure: $sym"
perf report -i "$PERF_DATA" --stdio >/dev/null 2>&1 # warm perf's caches too

python3 - "$PERF_DATA" "$PERF_LOOPS" "$REPS" "$sym" "$work" <<'PY'
import os, statistics, subprocess, sys, time
data, perf_loops, reps, sym, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
n = [0]

def tmux(sock, *a):
    return subprocess.run(["tmux", "-S", sock] + list(a), capture_output=True, text=True).stdout

def until(sock, text, limit=600):
    t = time.monotonic()
    while time.monotonic() - t < limit:
        if text in tmux(sock, "capture-pane", "-p", "-t", "b"):
            return time.monotonic()
        time.sleep(0.01)
    raise SystemExit("annotate.sh: '%s' did not show in %d s" % (text, limit))

def tui(argv, ready, then=None, then_ready=None):
    """seconds to READY on the screen; with THEN: also from the key THEN to THEN_READY"""
    n[0] += 1
    sock = os.path.join(work, "t%d.sock" % n[0])
    t0 = time.monotonic()
    tmux(sock, "new-session", "-d", "-s", "b", "-x", "200", "-y", "50", " ".join(argv) + "; sleep 600")
    t1 = until(sock, ready)
    t2 = None
    if then:
        s = time.monotonic()
        tmux(sock, "send-keys", "-t", "b", then)
        t2 = until(sock, then_ready) - s
    tmux(sock, "kill-server")
    return t1 - t0, t2

def whole(argv):
    t = time.monotonic()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.monotonic() - t

def med(f):
    return statistics.median([f() for _ in range(reps)])

opens, anns = [], []
for _ in range(reps):
    o, a = tui([perf_loops, "report", "-i", data], "(sort)", "a", "Annotate source:")
    opens.append(o)
    anns.append(a)
# the browser's cursor starts on the hottest top-level entry; `a` annotates
# its procedure, not always the hottest one: time the hottest as well
hot = med(lambda: tui([perf_loops, "annotate", "-i", data, "'%s'" % sym.replace("'", "")], "Annotate source:")[0])
mine_open, mine_ann = statistics.median(opens), statistics.median(anns)
perf_tui = med(lambda: tui(["perf", "report", "-i", data], "Samples:")[0])
perf_stdio = med(lambda: whole(["perf", "report", "-i", data, "--stdio"]))
perf_ann = med(lambda: whole(["perf", "annotate", "-i", data, "--stdio", sym.split("<")[0].split("(")[0]]))
mine_ann_stdio = med(lambda: whole([perf_loops, "annotate", "-i", data, "--stdio"]))
print("perf loops report (browser open)     %7.2f s   perf report (TUI open) %7.2f s  ratio %5.1fx"
      % (mine_open, perf_tui, perf_tui / mine_open))
print("                                               perf report --stdio    %7.2f s  ratio %5.1fx"
      % (perf_stdio, perf_stdio / mine_open))
print("browser: a -> annotate view          %7.2f s   perf annotate --stdio  %7.2f s  ratio %5.1fx"
      % (mine_ann, perf_ann, perf_ann / mine_ann))
print("perf loops annotate SYMBOL (tty)     %7.2f s  (the whole command, file read included)" % hot)
print("perf loops annotate --stdio          %7.2f s   perf annotate --stdio  %7.2f s  ratio %5.1fx"
      % (mine_ann_stdio, perf_ann, perf_ann / mine_ann_stdio))
print("targets: browser open < 2 s: %s; annotate after it < 0.5 s: %s"
      % ("met" if mine_open < 2 else "NOT met", "met" if mine_ann < 0.5 else "NOT met"))
PY
