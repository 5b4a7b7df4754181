#!/bin/sh
# perf-stat-modes.sh - `perf loops stat`'s modes beyond counting:
#   --trace   on tests/fixtures/perf/loop_counts.c (gcc and clang -O2):
#             each loop's trip count per entry, minimum, maximum and
#             histogram, equal to what the source fixes (collatz's and
#             search's computed here from the program's data, the
#             irreducible loop's against perf stat's exact counts), and
#             on thread_trips.c, two threads in one loop with trips of 5
#             and 9, told apart; and on recurse_loops.c, a loop re-entered
#             by recursion before it is left, each activation's trips apart;
#   --hot N   on tests/fixtures/perf/hot_loops.c: a cpu-clock recording's
#             hottest loop (perf report -s sym says whose code the samples
#             are in) counted exactly, with --trace too, and on a copy of
#             the binary at another path (matched by build-id), not on
#             another build at the recorded path;
#   --burst   entries and exits exact, the iterations' estimate near the
#             known count (loosely: the error is measured in
#             bench/loop-stat.sh), also over a program whose loop runs in
#             forked children only (fork_loops.c);
# -p PID for --trace and --burst on a spinning loop of 13 a trip; the
# program's crash; and the probes gone after each, and after SIGTERM and
# Ctrl-C in the middle of a --trace and of a --burst run.  Needs root and
# uprobes: skips without.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
[ "$(id -u)" -eq 0 ] || skip_all "not root: uprobes need root"
[ -e /sys/kernel/tracing/uprobe_events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
[ -e /sys/kernel/tracing/uprobe_events ] || skip_all "no uprobes in this kernel (no uprobe_events)"
EVENTS=/sys/kernel/tracing/uprobe_events

no_probes_left() { # no_probes_left DESCRIPTION (this test's probes only)
	check_eq "$(grep "loopscope_" "$EVENTS" | grep -c "$TMP/")" 0 "$1: no loopscope uprobe left"
}

# loops JSON: "FUNCTION DEPTH entries iterations trips-entries min max HIST", HIST as
# count:entries,... (sorted by count), one line per loop, sorted
loops() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = []
for l in d["loops"]:
    t = l.get("trips")
    tr = "none" if not t else "%d %d %d %s" % (t["entries"], t["min"], t["max"],
                                                ",".join("%d:%d" % (c, n) for c, n in t["histogram"]))
    rows.append("%s %d %s %s %s" % (l["function"], l["depth"], l["entries"], l["iterations"], tr))
print("\n".join(sorted(rows)))
PY
}

# The trips the source fixes: collatz's from the Collatz sequences of its
# starts, search's from where each key is in the array (main's data).
expected_trips() {
	python3 - <<'PY'
def steps(x):
    n = 0
    while x != 1:
        x = 3 * x + 1 if x & 1 else x // 2
        n += 1
    return n
a = [5, 8, 1, 9, 2, 7, 4, 6, 3, 0]
keys = [9, 100, 3, 101, 102, 5, 103, 104, 7, 105]
def hist(v):
    return ",".join("%d:%d" % (c, v.count(c)) for c in sorted(set(v)))
def row(fn, depth, trips):
    print("%s %d %d %d %d %d %d %s" % (fn, depth, len(trips), sum(trips), len(trips), min(trips), max(trips), hist(trips)))
row("collatz", 1, [steps(s) for s in (27, 97, 871)])
row("counted", 1, [13] * 7)
row("nested", 1, [4] * 3)
row("nested", 2, [6] * 12)
row("rotated", 1, [1, 2, 3, 4, 5])
row("search", 1, [a.index(k) + 1 if k in a else 10 for k in keys])
PY
}

for cc in gcc clang; do
	command -v $cc >/dev/null 2>&1 || { skip "$cc not installed"; continue; }
	bin="$TMP/lc_$cc"
	build_fixture $cc -O2 perf/loop_counts.c "$bin" || fail_all "$cc cannot build loop_counts.c"
	"$PERF_LOOPS" stat --trace --json -o "$TMP/$cc-trace.json" --loop counted --loop collatz --loop nested \
		--loop search --loop rotated --loop irreducible -- "$bin" >"$TMP/prog.out" 2>"$TMP/trace.err"
	ok $? "$cc: perf loops stat --trace runs"
	loops "$TMP/$cc-trace.json" >"$TMP/$cc-trace.rows"
	expected_trips >"$TMP/expected"
	while read -r fn depth rest; do
		check_eq "$(grep "^$fn $depth " "$TMP/$cc-trace.rows")" "$fn $depth $rest" \
			"$cc -O2 --trace: $fn loop (depth $depth): entries, iterations, trips min max histogram"
	done <"$TMP/expected"
	# the irreducible loop: each call's trip, against perf stat's exact counts
	"$PERF_LOOPS" stat --json -o "$TMP/$cc-count.json" --loop irreducible -- "$bin" >/dev/null 2>&1
	# shellcheck disable=SC2046 # its fields as $1...
	set -- $(grep "^irreducible " "$TMP/$cc-trace.rows")
	check_eq "$3 $4 $5" "$(loops "$TMP/$cc-count.json" | awk '{ print $3, $4, $3 }')" \
		"$cc -O2 --trace: irreducible loop's entries, iterations and traced entries = perf stat's counts"
	check_eq "$(echo "$8" | tr ',' '\n' | awk -F: '{ n += $2; s += $1 * $2 } END { print n, s }')" "4 $4" \
		"$cc -O2 --trace: irreducible loop's histogram holds its 4 entries and all its iterations"
	check_eq "$(echo "$8" | tr ',' '\n' | cut -d: -f2 | tr '\n' ' ')" "2 2 " \
		"$cc -O2 --trace: irreducible loop: two trips from the top, two from the middle (two lengths)"
	no_probes_left "$cc --trace"
done
bin="$TMP/lc_gcc"
[ -x "$bin" ] || bin="$TMP/lc_clang"

# Two threads in one loop at once: trips told apart per thread.
build_fixture gcc -O2 perf/thread_trips.c "$TMP/tt" -pthread || fail_all "cannot build thread_trips.c"
"$PERF_LOOPS" stat --trace --json -o "$TMP/tt.json" --loop work -- "$TMP/tt" >/dev/null 2>&1
ok $? "--trace on two threads runs"
check_eq "$(loops "$TMP/tt.json")" "work 1 2000 14000 2000 5 9 5:1000,9:1000" \
	"--trace, two threads in one loop: 1000 trips of 5 and 1000 of 9, per thread"
no_probes_left "--trace threads"

# Recursion: recurse_loops.c's loop is re-entered from its own body before
# it is left; rec(4) x 3 opens trips of 6, 5, 4, 3, 2 each inside the one
# before (computed here from the source's rule: rec(d) makes d + 2).
for cc in gcc clang; do
	command -v $cc >/dev/null 2>&1 || { skip "$cc not installed"; continue; }
	rb="$TMP/rec_$cc"
	build_fixture $cc -O2 perf/recurse_loops.c "$rb" || fail_all "$cc cannot build recurse_loops.c"
	"$PERF_LOOPS" stat --trace --json -o "$TMP/rec-$cc.json" --loop rec -- "$rb" 4 3 >/dev/null 2>"$TMP/rec.err"
	ok $? "$cc: --trace on a recursive loop runs"
	want=$(python3 -c '
trips = [d + 2 for c in range(3) for d in range(4, -1, -1)]
print("rec 1 %d %d %d %d %d %s" % (len(trips), sum(trips), len(trips), min(trips), max(trips),
      ",".join("%d:%d" % (v, trips.count(v)) for v in sorted(set(trips)))))')
	check_eq "$(loops "$TMP/rec-$cc.json")" "$want" \
		"$cc -O2 --trace: the recursion's trips told apart (per-thread stack of open trips)"
done
no_probes_left "--trace recursion"

# Text: the trips line and the histogram's rows.
"$PERF_LOOPS" stat --trace --loop search -- "$bin" >"$TMP/trace.txt" 2>&1
grep -q "^  trips  *min 1, max 10, mean 8.00  (10 traced entries" "$TMP/trace.txt" &&
	grep -q "^    10  *6 entries$" "$TMP/trace.txt"
ok $? "--trace text: search's trips (min, max, mean) and the histogram row of 10 iterations"

# --hot: sampling first.  The oracle for which loop is hot: perf report's
# own symbol with the most samples, and hot_loops.c's construction.
hl="$TMP/hot_loops"
build_fixture gcc -O2 perf/hot_loops.c "$hl" || fail_all "cannot build hot_loops.c"
perf record -q -e cpu-clock -o "$TMP/hot.data" -- "$hl" 3000 100000 >/dev/null 2>"$TMP/rec.err"
ok $? "perf record of hot_loops"
top=$(perf report -i "$TMP/hot.data" -q -s sym --stdio 2>/dev/null | awk 'NF { print $NF; exit }')
check_eq "$top" "hot" "perf report: hot() has the most samples"
"$PERF_LOOPS" stat --hot 1 -i "$TMP/hot.data" --json -o "$TMP/hot.json" -- "$hl" 50 1000 >/dev/null 2>"$TMP/hot.err"
ok $? "--hot 1 -i FILE runs"
check_eq "$(loops "$TMP/hot.json")" "hot 1 50 50000 none" "--hot 1: the loop of $top, entries 50, iterations 50 x 1000"
check_eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["loops"][0]["hot_share"] > 50)' "$TMP/hot.json")" \
	True "--hot 1: its own share of the samples is stated (most of them)"
"$PERF_LOOPS" stat --hot 1 -i "$TMP/hot.data" --trace --json -o "$TMP/hot-trace.json" -- "$hl" 7 300 >/dev/null 2>&1
check_eq "$(loops "$TMP/hot-trace.json")" "hot 1 7 2100 7 300 300 300:7" "--hot 1 --trace: 7 trips of 300"
"$PERF_LOOPS" stat --hot 1 -i "$TMP/no-such.data" -- "$hl" 1 1 >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -ne 0 ] && grep -q "no-such.data" "$TMP/err"
ok $? "--hot with a missing recording: exit $rc, the file named"
# By build-id, not path: a copy of the recorded binary at another path is
# the recorded binary (its loops are counted); another build at the
# recorded path is not (cmp and readelf -n say which is which).
mkdir -p "$TMP/copy" "$TMP/other"
cp "$hl" "$TMP/copy/hot_loops"
"$PERF_LOOPS" stat --hot 1 -i "$TMP/hot.data" --json -o "$TMP/hot-copy.json" -- "$TMP/copy/hot_loops" 50 1000 \
	>/dev/null 2>"$TMP/hot-copy.err"
ok $? "--hot 1 on a copy of the recorded binary at another path runs"
check_eq "$(loops "$TMP/hot-copy.json")" "hot 1 50 50000 none" "--hot 1 on the copy: matched by build-id, hot's loop counted"
cp "$hl" "$TMP/other/hot_loops.recorded"
build_fixture gcc -O1 perf/hot_loops.c "$TMP/other/hot_loops" || fail_all "cannot build hot_loops.c -O1"
[ "$(readelf -n "$hl" | grep 'Build ID')" != "$(readelf -n "$TMP/other/hot_loops" | grep 'Build ID')" ]
ok $? "the -O1 build has another build-id (readelf -n)"
cp "$TMP/other/hot_loops" "$hl.O1"
mv "$hl" "$hl.recorded" && cp "$hl.O1" "$hl"
"$PERF_LOOPS" stat --hot 1 -i "$TMP/hot.data" -- "$hl" 1 1 >/dev/null 2>"$TMP/hot-other.err"
rc=$?
[ $rc -ne 0 ] && grep -q "no samples in the loops of" "$TMP/hot-other.err"
ok $? "--hot 1 on another build at the recorded path: none of its loops (exit $rc: $(head -c 200 "$TMP/hot-other.err"))"
mv "$hl.recorded" "$hl"
no_probes_left "--hot"

# --burst: the cold probes exact, the iterations estimated.
"$PERF_LOOPS" stat --burst=5/50 --json -o "$TMP/burst.json" --loop hot --loop cold -- "$hl" 300000 100 \
	>/dev/null 2>"$TMP/burst.err"
ok $? "--burst runs"
check_eq "$(python3 - "$TMP/burst.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
out = []
for l in sorted(d["loops"], key=lambda l: l["function"]):
    e = l["iterations_estimate"]
    out.append("%s %s %s %s" % (l["function"], l["entries"], sum(x["count"] for x in l["exits"]), l["iterations"]))
    if l["function"] == "hot":
        # loose: bench/loop-stat.sh measures the error; here it must be an estimate near the count
        out.append("near" if e["value"] and abs(e["value"] - 3 * 10**7) < 0.25 * 3 * 10**7 and e["windows"] > 0
                   else "estimate %s" % e)
print(" ".join(out))
PY
)" "cold 3000 3000 None hot 300000 300000 None near" \
	"--burst: entries and exits exact (cold: 3000, hot: 300000), iterations estimated (hot: within 25% of 3 x 10^7)"
no_probes_left "--burst"

# --burst over children: fork_loops.c runs its loop in two forked children
# only (the parent waits); the windows' probes must go on them too.
fl="$TMP/fork_loops"
build_fixture gcc -O2 perf/fork_loops.c "$fl" || fail_all "gcc cannot build fork_loops.c"
"$PERF_LOOPS" stat --burst=5/50 --json -o "$TMP/burst-fork.json" --loop hot -- "$fl" 2 300000 100 \
	>"$TMP/fork.out" 2>"$TMP/burst-fork.err"
ok $? "--burst on a forking program runs"
check_eq "$(python3 - "$TMP/burst-fork.json" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))["loops"][0]
e = l["iterations_estimate"]
near = e["value"] and e["window_iterations"] > 0 and abs(e["value"] - 6 * 10**7) < 0.25 * 6 * 10**7
print(l["entries"], sum(x["count"] for x in l["exits"]), "near" if near else "estimate %s" % e)
PY
)" "600000 600000 near" \
	"--burst over two forked children: entries and exits exact (600000), iterations seen in the children's windows (within 25% of 6 x 10^7)"
no_probes_left "--burst over children"

# SIGTERM in the middle of --trace and of --burst: the probes go.
for mode in --trace --burst; do
	"$PERF_LOOPS" stat $mode --loop counted -- "$bin" spin >/dev/null 2>&1 &
	pl=$!
	n=0
	until grep loopscope_ "$EVENTS" | grep -q "$bin" && pgrep -f "^$bin spin" >/dev/null; do
		n=$((n + 1)); [ $n -gt 100 ] && break; sleep 0.1
	done
	sleep 0.3
	kill -TERM $pl
	wait $pl
	rc=$?
	[ $rc -ne 0 ]
	ok $? "$mode: SIGTERM ends the run (exit $rc)"
	pgrep -f "^$bin spin" >/dev/null
	check_eq $? 1 "$mode: SIGTERM: the program is not left running"
	no_probes_left "$mode SIGTERM"
done

# Ctrl-C (SIGINT to the process group, as a terminal sends it) in the
# middle of --trace and of --burst: the counts so far, the probes gone.
for mode in --trace --burst; do
	python3 - "$TMP/int.out" "$bin" "$PERF_LOOPS" stat $mode --loop counted -- "$bin" spin <<'PY'
import os, signal, subprocess, sys, time
signal.signal(signal.SIGINT, signal.SIG_DFL)
p = subprocess.Popen(sys.argv[3:], start_new_session=True, stdout=open(sys.argv[1], "w"), stderr=subprocess.STDOUT)
for _ in range(100):  # poll, 10 s at most, until the program runs with its probes
    spinning = subprocess.run(["pgrep", "-f", "^" + sys.argv[2] + " spin"], stdout=subprocess.DEVNULL).returncode == 0
    if spinning and any("loopscope_" in l and sys.argv[2] in l for l in open("/sys/kernel/tracing/uprobe_events")):
        break
    time.sleep(0.1)
time.sleep(0.3)
os.killpg(p.pid, signal.SIGINT)
try:
    sys.exit(p.wait(timeout=60))
except subprocess.TimeoutExpired:
    os.killpg(p.pid, signal.SIGKILL)
    sys.exit(0)
PY
	rc=$?
	[ $rc -eq 130 ] && grep -q "^  entries  *[1-9]" "$TMP/int.out"
	ok $? "$mode: Ctrl-C ends the run with the program's status (exit $rc: 130, killed by SIGINT) and the entries counted so far"
	no_probes_left "$mode Ctrl-C"
done

# The program crashing: its status back, the counts before it, no probe left.
for mode in --trace --burst; do
	"$PERF_LOOPS" stat $mode --loop counted -- "$bin" crash >"$TMP/crash.out" 2>&1
	rc=$?
	[ $rc -eq 139 ] && grep -q "^  entries  *7$" "$TMP/crash.out"
	ok $? "$mode: the program's crash (SIGSEGV) comes back as 139 ($rc), with its 7 entries"
	no_probes_left "$mode crash"
done

# -p PID: attach for a second.  --trace: every whole trip is 13 (the
# window may cut one at each end); --burst: 13 iterations per entry.
"$bin" spin >/dev/null &
spin=$!
n=0
until pgrep -f "^$bin spin" >/dev/null; do n=$((n + 1)); [ $n -gt 100 ] && break; sleep 0.1; done
"$PERF_LOOPS" stat --trace --json -o "$TMP/pid-trace.json" -p $spin --duration 1 --loop counted >/dev/null 2>&1
ok $? "--trace -p PID runs"
"$PERF_LOOPS" stat --burst=5/50 --json -o "$TMP/pid-burst.json" -p $spin --duration 1 --loop counted >/dev/null 2>&1
ok $? "--burst -p PID runs"
kill $spin
wait $spin 2>/dev/null
check_eq "$(python3 - "$TMP/pid-trace.json" "$TMP/pid-burst.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["loops"][0]["trips"]
cut = sum(n for c, n in t["histogram"] if c != 13)
b = json.load(open(sys.argv[2]))["loops"][0]
e = b["iterations_estimate"]
print("trace", "ok" if t["max"] == 13 and cut <= 2 and t["entries"] > 100 else t,
      "burst", "ok" if e["value"] and abs(e["value"] / b["entries"] - 13) < 1 else e)
PY
)" "trace ok burst ok" "-p PID: --trace's whole trips are 13 (at most one cut at each end); --burst's estimate 13 per entry (+-1)"
no_probes_left "-p PID"

# Usage errors.
"$PERF_LOOPS" stat --trace --burst --loop counted -- "$bin" >/dev/null 2>&1
check_eq $? 2 "--trace with --burst: a usage error"
"$PERF_LOOPS" stat --burst=5/2 --loop counted -- "$bin" >/dev/null 2>&1
check_eq $? 2 "--burst=ON/PERIOD with ON > PERIOD: a usage error"
"$PERF_LOOPS" stat -i "$TMP/hot.data" --loop counted -- "$bin" >/dev/null 2>&1
check_eq $? 2 "-i without --hot: a usage error"
done_testing
