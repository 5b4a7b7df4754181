#!/bin/sh
# perf-stat.sh - `perf loops stat` counts loops exactly: on
# tests/fixtures/perf/loop_counts.c (gcc and clang -O2) the entries,
# iterations and exits of each loop are the values the source fixes (or
# the program prints), with the derived exits and with every edge counted
# (--all-edges); the irreducible loop's iterations against perf's own
# `perf probe` counts at its entry blocks.  Then the probes are gone after
# every way a run can end: normal, Ctrl-C, SIGTERM, the program crashing,
# perf failing, and a run killed outright (removed by the next one).
# Needs root and uprobes: skips without them, saying which.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
[ "$(id -u)" -eq 0 ] || skip_all "not root: uprobes need root"
[ -e /sys/kernel/tracing/uprobe_events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
[ -e /sys/kernel/tracing/uprobe_events ] || skip_all "no uprobes in this kernel (no uprobe_events)"
EVENTS=/sys/kernel/tracing/uprobe_events

# stat_json BIN OUT [options...]: perf loops stat --json over BIN's fixture loops
stat_json() {
	_bin=$1 _out=$2; shift 2
	"$PERF_LOOPS" stat --json -o "$_out" "$@" --loop counted --loop collatz --loop nested --loop search \
		--loop rotated --loop irreducible -- "$_bin" >"$TMP/prog.out" 2>"$TMP/stat.err"
}

# field JSON FUNCTION DEPTH KEY: KEY of FUNCTION's loop at DEPTH ("exits": their
# counts, sorted; "exit_sum": their sum), from JSON.values, made once per JSON
field() {
	[ -s "$1.values" ] || python3 - "$1" >"$1.values" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
seen = {}
for l in doc["loops"]:
    seen.setdefault((l["function"], l["depth"]), []).append(l)
for (fn, depth), loops in sorted(seen.items()):
    if len(loops) != 1:
        print(fn, depth, "*", "%d loops" % len(loops)); continue
    l = loops[0]
    counts = [x["count"] for x in l["exits"]]
    print(fn, depth, "exits", " ".join(str(c) for c in sorted(c for c in counts if c is not None)))
    print(fn, depth, "exit_sum", sum(c for c in counts if c is not None) if None not in counts else None)
    for key in ("entries", "iterations", "header_hits"):
        print(fn, depth, key, l[key])
EOF
	_v=$(awk -v f="$2" -v d="$3" -v k="$4" '$1 == f && $2 == d && ($3 == k || $3 == "*") { $1 = $2 = $3 = ""; sub(/^ +/, ""); print; exit }' "$1.values")
	echo "${_v:-none}"
}

# wait_spinning BIN: polls (10 s at most) until BIN spin runs under perf stat
wait_spinning() {
	_n=0
	until pgrep -f "^$1 spin" >/dev/null && grep loopscope_ "$EVENTS" | grep -q "$1"; do
		_n=$((_n + 1))
		[ $_n -gt 100 ] && return 1
		sleep 0.1
	done
}

# (only this test's: other runs of it, in other trees, may be counting now)
no_probes_left() { # no_probes_left DESCRIPTION
	left=$(grep "loopscope_" "$EVENTS" | grep -c "$TMP/")
	# and none of a perf-loops that is gone (the calibration probe is on perf-loops itself)
	for _pid in $(sed -n 's|^p:loopscope_\([0-9]*\)/.*|\1|p' "$EVENTS" | sort -u); do
		kill -0 "$_pid" 2>/dev/null || left=$((left + 1))
	done
	check_eq "$left" 0 "$1: no loopscope uprobe left"
	check_eq "$(perf probe -l 2>/dev/null | grep loopscope_ | grep -c "$TMP/")" 0 "$1: perf probe -l lists none"
}

check_fixture() { # check_fixture CC JSON MODE
	cc=$1 j=$2 mode=$3
	collatz=$(sed -n 's/^collatz_iterations=//p' "$TMP/prog.out")
	search=$(sed -n 's/^search_iterations=//p' "$TMP/prog.out")
	for k in "counted entries 7" "counted iterations 91" "counted exit_sum 7" \
	         "collatz entries 3" "collatz iterations $collatz" "collatz exit_sum 3" \
	         "search entries 10" "search iterations $search" "search exits 4 6" \
	         "rotated entries 5" "rotated iterations 15" "rotated exit_sum 5" \
	         "irreducible entries 4" "irreducible exit_sum 4"; do
		set -- $k
		f=$1 key=$2; shift 2
		check_eq "$(field "$j" "$f" 1 "$key")" "$*" "$cc -O2 $mode: $f $key"
	done
	check_eq "$(field "$j" nested 1 entries) $(field "$j" nested 1 iterations) $(field "$j" nested 1 exit_sum)" \
		"3 12 3" "$cc -O2 $mode: nested outer loop: entries, iterations, exits"
	check_eq "$(field "$j" nested 2 entries) $(field "$j" nested 2 iterations) $(field "$j" nested 2 exit_sum)" \
		"12 72 12" "$cc -O2 $mode: nested inner loop: entries, iterations, exits"
}

# The irreducible loop's iterations (entries + back edges) are the
# executions of its entry blocks: counted independently with perf probe.
check_irreducible() { # check_irreducible CC BIN JSON
	cc=$1 bin=$2 j=$3
	"$LOOPSCOPE" probes --json --no-cache "$bin" irreducible >"$TMP/irr.json" || { fail "$cc: probes irreducible"; return; }
	n=0 events=""
	for a in $(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(" ".join(sorted({p["to"] for l in d["loops"] for p in l["points"] if p["kind"]=="entry"})))' "$TMP/irr.json"); do
		n=$((n + 1))
		perf probe -q -x "$bin" -a "lsirr$n=$a" >/dev/null 2>&1
		events="$events -e probe_$(basename "$bin"):lsirr$n"
	done
	perf stat -x, -o "$TMP/irr.stat" $events -- "$bin" >/dev/null 2>&1
	perf probe -q -d "probe_$(basename "$bin"):lsirr*" >/dev/null 2>&1
	want=$(awk -F, '/^[0-9]/ { s += $1 } END { print s + 0 }' "$TMP/irr.stat")
	check_eq "$(field "$j" irreducible 1 iterations)" "$want" \
		"$cc -O2: irreducible loop's iterations = perf probe's count of its $n entry blocks"
}

for cc in gcc clang; do
	command -v $cc >/dev/null 2>&1 || { skip "$cc not installed"; continue; }
	bin="$TMP/lc_$cc"
	build_fixture $cc -O2 perf/loop_counts.c "$bin" || fail_all "$cc cannot build loop_counts.c"
	stat_json "$bin" "$TMP/$cc.json"
	ok $? "$cc: perf loops stat runs"
	check_fixture $cc "$TMP/$cc.json" derived
	stat_json "$bin" "$TMP/$cc-all.json" --all-edges
	ok $? "$cc: perf loops stat --all-edges runs"
	check_fixture $cc "$TMP/$cc-all.json" all-edges
	check_eq "$(grep -c '"derived": true' "$TMP/$cc-all.json")" 0 "$cc: --all-edges derives no exit"
	check_irreducible $cc "$bin" "$TMP/$cc.json"
	[ $cc = clang ] && check_eq "$(field "$TMP/$cc.json" irreducible 1 iterations)" \
		"$(sed -n 's/^irreducible_steps=//p' "$TMP/prog.out")" \
		"clang -O2: irreducible iterations = the blocks the program counted"
	no_probes_left "$cc normal end"
done

bin="$TMP/lc_gcc"
[ -x "$bin" ] || bin="$TMP/lc_clang"
[ -x "$bin" ] || { done_testing; }

# Text output: the overhead line states hits x measured cost, per class of
# probed instruction.
"$PERF_LOOPS" stat --loop counted -- "$bin" >"$TMP/text" 2>&1
grep -q "^probes: .* hits = .* s of overhead (a hit, measured: .* us .* x [0-9]*" "$TMP/text"
ok $? "the text report states the overhead as hits x measured cost"

# The classes: each counter's instruction, as objdump decodes the byte at
# its file offset, is what the kernel's cost for it depends on (a NOP and
# a branch are emulated in the trap, the rest single-stepped).  The hits
# per class sum to the hits; the counted loop's probes are classed as
# objdump names their instructions.
"$PERF_LOOPS" stat --json -o "$TMP/cls.json" --loop counted -- "$bin" >/dev/null 2>&1
ok $? "perf loops stat --json for the classes"
python3 - "$TMP/cls.json" <<'PY' >"$TMP/cls.txt"
import json, sys
d = json.load(open(sys.argv[1]))
by = d["hits_by_class"]
print("sum", sum(v["hits"] for v in by.values()) == d["hits"])
print("costs", all(v["cost_per_hit_ns"] is not None and v["cost_per_hit_ns"] >= 0 for v in by.values()))
print("overhead", abs(sum(v["hits"] * v["cost_per_hit_ns"] for v in by.values()) / 1e6 - d["overhead_ms"]) < 0.01 * d["overhead_ms"] + 0.01)
PY
check_eq "$(cat "$TMP/cls.txt" | tr '\n' ' ')" "sum True costs True overhead True " \
	"hits per class sum to the hits; overhead = sum of hits x the class's measured cost"

# Ctrl-C: SIGINT to the whole process group, as a terminal sends it (from
# python: a background job of sh starts with SIGINT ignored, and children
# inherit that; python's need not).
python3 - "$TMP/int.out" "$PERF_LOOPS" stat --loop counted -- "$bin" spin <<'EOF'
import os, signal, subprocess, sys, time
signal.signal(signal.SIGINT, signal.SIG_DFL)
p = subprocess.Popen(sys.argv[2:], start_new_session=True, stdout=open(sys.argv[1], "w"), stderr=subprocess.STDOUT)
for _ in range(100):  # poll, 10 s at most, until the program runs under perf stat
    spinning = subprocess.run(["pgrep", "-f", "^" + sys.argv[7] + " spin"], stdout=subprocess.DEVNULL).returncode == 0
    if spinning and any("loopscope_" in l and sys.argv[7] in l for l in open("/sys/kernel/tracing/uprobe_events")):
        break
    time.sleep(0.1)
os.killpg(p.pid, signal.SIGINT)
try:
    sys.exit(p.wait(timeout=60))
except subprocess.TimeoutExpired:
    os.killpg(p.pid, signal.SIGKILL)
    sys.exit(0)
EOF
rc=$?
[ $rc -ne 0 ]
ok $? "Ctrl-C: perf loops stat ends (exit $rc)"
grep -q "entries" "$TMP/int.out"
ok $? "Ctrl-C: the counts up to then are reported"
no_probes_left "Ctrl-C"

# SIGTERM to perf loops stat alone: it passes it on and cleans up.
"$PERF_LOOPS" stat --loop counted -- "$bin" spin >"$TMP/term.out" 2>&1 &
pl=$!
wait_spinning "$bin"
kill -TERM $pl
wait $pl
check_eq $? 143 "SIGTERM: perf loops stat ends with the program's status (killed by SIGTERM)"
pgrep -f "^$bin spin" >/dev/null
check_eq $? 1 "SIGTERM: the program is not left running"
no_probes_left "SIGTERM"

# -p PID: attach to a running program for a duration, detach.
"$bin" spin >/dev/null &
spin=$!
wait_spinning_plain() { _n=0; until pgrep -f "^$1 spin" >/dev/null; do _n=$((_n + 1)); [ $_n -gt 100 ] && return 1; sleep 0.1; done; }
wait_spinning_plain "$bin"
"$PERF_LOOPS" stat --json -o "$TMP/pid.json" -p $spin --duration 1 --loop counted >/dev/null 2>&1
ok $? "-p PID --duration 1: runs"
kill $spin
wait $spin 2>/dev/null
check_eq "$(python3 -c 'import json,sys
l=json.load(open(sys.argv[1]))["loops"][0]
e,i,x=l["entries"],l["iterations"],sum(c["count"] for c in l["exits"])
# a window cuts at most one entry at each end: the trip count is 13 between
print("ok" if e > 0 and abs(i - 13 * e) <= 26 and abs(e - x) <= 1 else "%s %s %s" % (e, i, x))' "$TMP/pid.json")" ok \
	"-p PID: trip count 13 per entry on the counted loop, entries = exits (within the window's cut)"
no_probes_left "-p PID"

# The program crashes: its status comes back, the counts too.
"$PERF_LOOPS" stat --loop counted -- "$bin" crash >"$TMP/crash.out" 2>&1
rc=$?
[ $rc -ne 0 ]
ok $? "crash: a non-zero status comes back ($rc)"
grep -q "entries  *7$" "$TMP/crash.out"
ok $? "crash: the counts before it are reported"
no_probes_left "crash"

# perf fails: a command that does not exist.
"$PERF_LOOPS" stat -x "$bin" --loop counted -- "$TMP/no-such-program" >"$TMP/fail.out" 2>&1
rc=$?
[ $rc -ne 0 ]
ok $? "perf failing: non-zero exit ($rc)"
no_probes_left "perf failing"

# A run killed outright leaves its group; the next run removes it.
echo "p:loopscope_999999/at_0 $bin:0x0" >>"$EVENTS"
grep -q "loopscope_999999/.*$TMP/" "$EVENTS"
ok $? "a stale group (a dead perf-loops' PID) is there"
"$PERF_LOOPS" stat --loop counted -- "$bin" >/dev/null 2>&1
no_probes_left "a killed run's leftovers"

# Without root: it says so and fails; nothing placed.
if command -v setpriv >/dev/null 2>&1; then
	cp "$bin" "$TMP/lc_user"
	chmod 755 "$TMP" "$TMP/lc_user"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$PERF_LOOPS" stat --loop counted -- "$TMP/lc_user" \
		>"$TMP/user.out" 2>&1
	rc=$?
	[ $rc -ne 0 ] && grep -q "needs root" "$TMP/user.out"
	ok $? "not root: exits non-zero ($rc) saying uprobes need root"
else
	skip "no setpriv to run as another user"
fi

# Usage errors.
"$PERF_LOOPS" stat --loop counted >/dev/null 2>&1
check_eq $? 2 "no COMMAND and no -p: a usage error"
"$PERF_LOOPS" stat --loop nosuchfunction -- "$bin" >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -ne 0 ] && grep -q "no loop 'nosuchfunction'" "$TMP/err"
ok $? "an unknown LOOP is an error naming it"
no_probes_left "errors"
done_testing
