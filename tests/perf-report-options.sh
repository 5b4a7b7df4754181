#!/bin/sh
# perf-report-options.sh - every perf report option that perf loops report
# accepts, on a real recording (perf record -e cpu-clock --call-graph=fp of
# a fixture compiled now): the figures are checked against perf report's
# own on the same file (-s sym/dso/srcline, -n, --show-total-period, --tid,
# --time against perf script and perf report --time), or against what the
# option must do to the default report (-G, -g graph/flat/fractal/folded/none,
# caller/callee and a threshold, -S,
# --max-stack, -F, -o...).  Options that do not apply exit 2 with one line.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed"
line_of() { grep -n "$2" "$FIXTURES/perf/$1" | head -n 1 | cut -d: -f1; }
BIG=$(line_of split_loops.c LOOP-BIG)
SMALL=$(line_of split_loops.c LOOP-SMALL)
OUTER=$((BIG - 1))

export HOME="$TMP/home" # perf's build-id cache: private (for --symfs)
mkdir -p "$HOME"
build_fixture gcc -O2 perf/split_loops.c "$TMP/split" -fno-omit-frame-pointer || fail_all "gcc builds the fixture"
cd "$TMP" || exit 1
perf record -q -N -e cpu-clock --call-graph=fp -o "$TMP/rec.data" "$TMP/split" 10 >/dev/null 2>"$TMP/rec.err" ||
	skip_all "perf record does not work here: $(head -n 1 "$TMP/rec.err")"
R() { "$PERF_LOOPS" report -i "$TMP/rec.data" --stdio "$@"; }
# pct KEY FILE: the first percentage of the line whose text (after the numbers) is KEY
pct() { python3 - "$1" "$2" <<'EOF'
import re, sys
key, path = sys.argv[1], sys.argv[2]
for l in open(path, errors="replace"):
    m = re.match(r"^\s+([\d.]+)%(?:\s+[\d.]+%)*(?:\s+\d+)*\s+(.*?)\s*$", l)
    if m and (m.group(2) == key or re.sub(r"\s+", " ", m.group(2)) == key):
        print(m.group(1)); break
else:
    print("none")
EOF
}
perf_report() { perf report -i "$TMP/rec.data" --stdio -q -g none "$@" 2>/dev/null; }

# -s sym, dso, srcline: perf report's histogram, to the hundredth of a percent
R -s sym >"$TMP/sym" 2>/dev/null; perf_report --no-children -s sym >"$TMP/psym"
check_eq "$(pct '[.] run' "$TMP/sym")" "$(pct '[.] run' "$TMP/psym")" "-s sym: run's share is perf report -s sym's"
R -s dso >"$TMP/dso" 2>/dev/null; perf_report --no-children -s dso >"$TMP/pdso"
check_eq "$(pct split "$TMP/dso")" "$(pct split "$TMP/pdso")" "-s dso: split's share is perf report -s dso's"
R -s srcline >"$TMP/src" 2>/dev/null; perf_report --no-children -s srcline >"$TMP/psrc"
check_eq "$(pct "split_loops.c:$BIG" "$TMP/src")" "$(pct "split_loops.c:$BIG" "$TMP/psrc")" \
	"-s srcline: split_loops.c:$BIG's share is perf report -s srcline's"
# -s loop: the innermost loop of each sample; here each loop is one line
R -s loop >"$TMP/loop" 2>/dev/null
check_eq "$(pct "loop at split_loops.c:$SMALL" "$TMP/loop")" "$(pct "split_loops.c:$SMALL" "$TMP/psrc")" \
	"-s loop: the small loop's share is its line's (perf report -s srcline)"
check_eq "$(pct "loop at split_loops.c:$OUTER" "$TMP/loop")" none "-s loop: the outer loop owns no sample (its body is the two loops)"
R -s dso,sym >"$TMP/dsosym" 2>/dev/null
grep -q "^#  Overhead   Samples  Shared Object *Symbol$" "$TMP/dsosym"
ok $? "-s dso,sym: one column per key, in order"
# -n and --show-total-period: perf report's counts
perf_report --no-children -s sym -n --show-total-period >"$TMP/pn"
want=$(awk '$NF == "run" { print $2, $3 }' "$TMP/pn")
R -s sym -n --show-total-period >"$TMP/n" 2>/dev/null
got=$(awk '$NF == "run" { print $2, $3 }' "$TMP/n")
check_eq "$got" "$want" "-n --show-total-period: run's samples and period are perf report's ($want)"

# the loops view: Own is what -s loop says, Total includes the nested loops
R --format=loops >"$TMP/loops" 2>/dev/null
own=$(awk -v l="loop at split_loops.c:$BIG" 'index($0, l) { print $2; exit }' "$TMP/loops")
check_eq "$own" "$(pct "loop at split_loops.c:$BIG" "$TMP/loop")%" "--format=loops: the big loop's Own is its -s loop share"
own=$(awk -v l="loop at split_loops.c:$OUTER" 'index($0, l) { print $2; exit }' "$TMP/loops")
check_eq "$own" "0.00%" "--format=loops: the outer loop's Own is 0 (all its samples are in the nested loops)"
grep -q "Total: the loop with its nested loops and callees, Own: samples whose innermost loop it is" "$TMP/loops"
ok $? "--format=loops: the header says what Total and Own are"

# -g and -G: the tree's forms
R >"$TMP/default" 2>/dev/null
for o in -G "-g graph" "-g caller" "--call-graph=graph,0.5,caller,function,percent"; do
	R $o >"$TMP/g" 2>/dev/null
	cmp -s "$TMP/g" "$TMP/default"
	ok $? "$o: the caller-based tree (the default)"
done
R -g folded >"$TMP/g" 2>/dev/null; R --format=folded >"$TMP/f" 2>/dev/null
cmp -s "$TMP/g" "$TMP/f" && grep -q ";loop at split_loops.c:$BIG " "$TMP/g"
ok $? "-g folded: the folded view"
R -g none >"$TMP/g" 2>/dev/null; R --format=flat >"$TMP/f" 2>/dev/null
cmp -s "$TMP/g" "$TMP/f"
ok $? "-g none: the flat view (no call chains)"
R -g graph,50 >"$TMP/g" 2>/dev/null
grep -q "loop at split_loops.c:$BIG$" "$TMP/g" && ! grep -q "loop at split_loops.c:$SMALL$" "$TMP/g"
ok $? "-g graph,50: lines under 50% hidden (the small loop), the big loop kept"
R -g fractal >"$TMP/g" 2>/dev/null
python3 - "$TMP/default" "$TMP/g" "$OUTER" "$BIG" <<'EOF'
import re, sys
def pct(path, label):
    for l in open(path):
        m = re.match(r"^\s+([\d.]+)%\s+[\d.]+%\s+\d+\s+(.*?)\s*$", l)
        if m and m.group(2) == label:
            return float(m.group(1))
g, f, outer, big = sys.argv[1], sys.argv[2], "loop at split_loops.c:" + sys.argv[3], "loop at split_loops.c:" + sys.argv[4]
want = 100 * pct(g, big) / pct(g, outer)
got = pct(f, big)
print("# fractal: %.2f%%, want %.2f%%" % (got, want))
sys.exit(0 if abs(got - want) < 0.02 else 1)
EOF
ok $? "-g fractal: the big loop's percentage is of its parent (the outer loop)"

# -g callee: the tree turned over, innermost frame first.  Its first level
# is where the samples landed: each procedure's Children there is its own
# share (perf report -s sym); below run come its callers (fp unwinding of
# this leaf shows __libc_start_call_main, main's frame being unlinked).
R -g callee --format=json >"$TMP/callee.json" 2>/dev/null
R --format=json >"$TMP/caller.json" 2>/dev/null
python3 - "$TMP/callee.json" "$TMP/caller.json" "$BIG" >"$TMP/callee.log" 2>&1 <<'EOF'
import json, sys
callee, caller, big = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
def walk(n):
    yield n
    for c in n.get("children", []):
        yield from walk(c)
def run_callers(n):
    # the first procedure nodes below N: the frames that called it
    for c in n.get("children", []):
        if c["kind"] == "proc":
            yield c
        else:
            yield from run_callers(c)
# the caller tree's own samples of each procedure (its Self: own statements)
own = {}
for n in walk(caller["tree"]):
    if n["kind"] == "proc":
        own[n["name"]] = own.get(n["name"], 0) + n["self"][0]
own = {k: v for k, v in own.items() if v}
tops = {c["name"]: c for c in callee["tree"]["children"]}
print("top level:", {k: v["total"][0] for k, v in tops.items()}, "want", own)
assert {k: v["total"][0] for k, v in tops.items()} == own
assert sum(c["total"][0] for c in tops.values()) == callee["tree"]["total"][0] == caller["tree"]["total"][0]
run = tops["run"]
# under run: its loops, then its caller's frame (a procedure node below run)
loops = [n for n in walk(run) if n["kind"] == "loop" and n["line"] == big]
callers = [n for n in walk(run) if n["kind"] == "proc" and n is not run]
assert loops and callers, (loops, callers)
# every sample of run that has a caller frame goes on to it: all but those
# whose chain is run alone (the caller tree's run nodes at its first level)
alone = sum(c["total"][0] for c in caller["tree"]["children"] if c.get("name") == "run")
assert sum(c["total"][0] for c in run_callers(run)) == run["total"][0] - alone
# the big loop's samples are the same in both trees (kernel samples under it
# in the caller tree, page faults, are under the kernel's procedures here)
def loop_total(tree):
    return sum(n["total"][0] for n in walk(tree) if n["kind"] == "loop" and n["line"] == big)
print("big loop:", loop_total(callee["tree"]), loop_total(caller["tree"]))
assert loop_total(callee["tree"]) == loop_total(caller["tree"])
EOF
st=$?
sed 's/^/# /' "$TMP/callee.log"
ok $st "-g callee: the first level is each procedure's own samples, then its callers"
R -g callee >"$TMP/callee" 2>/dev/null
grep -q "^# perf loops: callee-ordered calling-context tree" "$TMP/callee"
ok $? "-g callee --stdio: the header says the tree is callee-ordered"
check_eq "$(pct "run  [split]" "$TMP/callee")" "$(pct '[.] run' "$TMP/psym")" "-g callee --stdio: run's Children is its share in perf report -s sym"
R -g callee --format=loops >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "callee" "$TMP/err"
ok $? "-g callee --format=loops: exit 2, one line: $(cat "$TMP/err")"
# -g flat: every calling context whole, largest first; the hottest is the
# big loop's line, with the share perf report -s srcline gives it
R -g flat >"$TMP/flat" 2>/dev/null
first=$(python3 - "$TMP/flat" "$BIG" <<'EOF'
import re, sys
blocks, cur = [], None
for l in open(sys.argv[1]):
    if l.startswith("#"):
        continue
    m = re.match(r"^\s+([\d.]+)%\s+([\d.]+)%\s+(\d+)\s*$", l)
    if m:
        cur = [float(m.group(1)), []]
        blocks.append(cur)
    elif l.strip() and cur:
        cur[1].append(l.strip())
print("# first context:", blocks[0], file=sys.stderr)
frames = blocks[0][1]
ok = ([b[0] for b in blocks] == sorted((b[0] for b in blocks), reverse=True) and
      frames[-1] == "split_loops.c:%s" % sys.argv[2] and frames[-2] == "loop at split_loops.c:%s" % sys.argv[2] and
      "run  [split]" in frames and frames.index("run  [split]") > 0)
print("%.2f" % blocks[0][0] if ok else "bad")
EOF
)
check_eq "$first" "$(pct "split_loops.c:$BIG" "$TMP/psrc")" \
	"-g flat: the hottest context runs from run's caller through run and the big loop to its line, with its -s srcline share"
R -g flat,callee >"$TMP/flatc" 2>/dev/null
sed -n '/^ *[0-9.]*% *[0-9.]*% *[0-9]* *$/{n;p;q}' "$TMP/flatc" | grep -q "^ *split_loops.c:$BIG$"
ok $? "-g flat,callee: each context innermost first (the big loop's line first)"

# --children/--no-children, -F
R --no-children >"$TMP/nc" 2>/dev/null
grep -q "^#  Overhead   Samples  Context$" "$TMP/nc"
ok $? "--no-children: Overhead and Samples"
R -F overhead_children,overhead,period >"$TMP/F" 2>/dev/null
grep -q "^#  Children       Self       Period  Context$" "$TMP/F"
ok $? "-F overhead_children,overhead,period: those columns"
R -F overhead,sym >"$TMP/F" 2>/dev/null
check_eq "$(pct '[.] run' "$TMP/F")" "$(pct '[.] run' "$TMP/psym")" "-F overhead,sym: the histogram by symbol"

# -S, --symbol-filter: run's subtree only
R -S run >"$TMP/S" 2>/dev/null
first=$(grep -v '^#' "$TMP/S" | grep . | head -n 1 | sed 's/^ *[0-9.]*% *[0-9.]*% *[0-9]* *//')
check_eq "${first%%  (from *}" "run  [split]" "-S run: the tree starts at run"
case $first in *"  (from __libc_start_call_main at "*) pass "-S run: its row says where it was called from ($first)";;
*) fail "-S run: its row says where it was called from ($first)";; esac
! sed 's/  (from [^)]*)$//' "$TMP/S" | grep -q "__libc_start_call_main\|_start"
ok $? "-S run: its callers are not shown"
R --symbol-filter=ru >"$TMP/sf" 2>/dev/null
# the rows at depth 0: every one a procedure whose name contains "ru", run among them
tops=$(grep -v '^#' "$TMP/sf" | grep . | sed -n 's/^ *[0-9.]*% *[0-9.]*% *[0-9][0-9]*  \([^ ].*\)/\1/p' | sed 's/  (from [^)]*)$//')
echo "$tops" | grep -q "^run  \[split\]$" && ! echo "$tops" | grep -v "ru" | grep -q .
ok $? "--symbol-filter=ru: the procedures whose name contains 'ru' (run)"
R --format=loops -S main >"$TMP/Sl" 2>/dev/null
# Only main's own loops: its array initialization may catch a sample or
# not (it did once in CI); run's loops, though called from main, are run's.
if grep -q "loop at" "$TMP/Sl"; then
	! grep "loop at" "$TMP/Sl" | grep -v "(main " | grep -q . && ! grep -q "split_loops.c:\($BIG\|$SMALL\)" "$TMP/Sl"
else
	grep -q "no samples in loops" "$TMP/Sl"
fi
ok $? "-S main --format=loops: only main's own loops, none of run's"

# filters: --tid, -c/--comm, -d/--dso, -e, --time, --percent-limit
tid=$(perf script -i "$TMP/rec.data" -F tid 2>/dev/null | sort | uniq -c | sort -nr | awk 'NR == 1 { print $2 }')
R --format=json --tid="$tid" >"$TMP/t.json" 2>/dev/null
want=$(perf script -i "$TMP/rec.data" -F tid 2>/dev/null | awk -v t="$tid" '$1 == t' | wc -l)
check_eq "$(python3 "$FIXTURES/perf/tree.py" "$TMP/t.json" samples)" "$want" "--tid=$tid: that thread's samples (perf script)"
R --tid=1 -q >"$TMP/t" 2>&1
check_eq "$(grep -c . "$TMP/t")" 0 "--tid=1 -q: nothing (and -q: no message)"
R -c split -s sym >"$TMP/c" 2>/dev/null
check_eq "$(pct '[.] run' "$TMP/c")" "$(pct '[.] run' "$TMP/psym")" "-c split: the command's samples"
R --comm=nothing 2>&1 | grep -q "no samples left after the filters"
ok $? "--comm=nothing: no samples, and says so"
R -d split -s dso >"$TMP/d" 2>/dev/null
check_eq "$(grep -v '^#' "$TMP/d" | grep -c .)" 1 "-d split: only split's samples"
R -e cpu-clock -s sym >"$TMP/e" 2>/dev/null
cmp -s "$TMP/e" "$TMP/sym"
ok $? "-e cpu-clock: the event's samples"
perf script -i "$TMP/rec.data" -F time 2>/dev/null | tr -d ' :' >"$TMP/times"
n=$(wc -l <"$TMP/times")
mid=$(awk -v n="$n" 'NR == int(n / 2) { a = $1 } NR == int(n / 2) + 1 { printf "%.7f", (a + $1) / 2 }' "$TMP/times")
R --format=json --time=",$mid" >"$TMP/time.json" 2>/dev/null
want=$(awk -v m="$mid" '$1 <= m' "$TMP/times" | wc -l)
check_eq "$(python3 "$FIXTURES/perf/tree.py" "$TMP/time.json" samples)" "$want" "--time=,$mid: the samples until then (perf script)"
for t in "10%/2" "0%-50%" "10%/1,10%/10" "$(head -n 1 "$TMP/times"),$mid $(tail -n 1 "$TMP/times"),"; do
	want=$(perf report -i "$TMP/rec.data" --stdio --time "$t" --no-children -n -s comm 2>/dev/null | awk '/^ +[0-9.]+%/ { s += $2 } END { print s + 0 }')
	R --format=json --time="$t" >"$TMP/time.json" 2>/dev/null
	check_eq "$(python3 "$FIXTURES/perf/tree.py" "$TMP/time.json" samples)" "$want" "--time '$t': the samples perf report --time takes"
done
R --time=5%/21 >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -q -- "--time '5%/21'" "$TMP/err"
ok $? "--time=5%/21 (past the end): exit 2, names it"
R --percent-limit=50 >"$TMP/pl" 2>/dev/null
! grep -q "loop at split_loops.c:$SMALL$" "$TMP/pl" && grep -q "loop at split_loops.c:$BIG$" "$TMP/pl"
ok $? "--percent-limit=50: lines under 50% hidden"

# --max-stack=1: only the sampled frame
R --max-stack=1 >"$TMP/ms" 2>/dev/null
! grep -q "__libc_start_call_main" "$TMP/ms" && grep -q "^ *[0-9.]*% *[0-9.]*% *[0-9]*  run  \[split\]$" "$TMP/ms"
ok $? "--max-stack=1: no callers, run at the top"

# --symfs: the binary found under DIR when it moved away
mkdir -p "$TMP/symfs$TMP"
mv "$TMP/split" "$TMP/symfs$TMP/split"
R -s srcline >"$TMP/nosymfs" 2>"$TMP/err"
grep -q "1 binary of the recording not found ($TMP/split)" "$TMP/err"
ok $? "without --symfs: the moved binary is not found, and that is said, naming it"
R -s srcline --symfs="$TMP/symfs" >"$TMP/symfs.out" 2>"$TMP/err"
check_eq "$(pct "split_loops.c:$BIG" "$TMP/symfs.out")" "$(pct "split_loops.c:$BIG" "$TMP/psrc")" "--symfs DIR: the binary is read from DIR"
R -s srcline -q >"$TMP/nosymfs" 2>"$TMP/err"
check_eq "$(wc -c <"$TMP/err")" 0 "-q: no warning about the binary not found"
mv "$TMP/symfs$TMP/split" "$TMP/split"

# -o FILE, --stdio, --tui, --gtk, -h
R -o "$TMP/o.txt" >"$TMP/stdout" 2>/dev/null
cmp -s "$TMP/o.txt" "$TMP/default" && [ ! -s "$TMP/stdout" ]
ok $? "-o FILE: the report goes to FILE"
"$PERF_LOOPS" report -i "$TMP/rec.data" --tui >"$TMP/tui" 2>"$TMP/err"
cmp -s "$TMP/tui" "$TMP/default" && grep -q "^perf-loops: --tui needs a terminal; printing the --stdio report" "$TMP/err"
ok $? "--tui into a file: says the browser needs a terminal, prints the --stdio report (tests/perf-browser.sh: on one)"
R --gtk >/dev/null 2>"$TMP/err"
grep -q "^perf-loops: --gtk: there is no GTK browser; printing the --stdio report" "$TMP/err"
ok $? "--gtk: says there is no GTK browser"
"$PERF_LOOPS" report -h >"$TMP/h" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q -- "--sort" "$TMP/h" && grep -q -- "--verbose" "$TMP/h"
ok $? "-h: exit 0, the usage lists --sort and -v"
"$PERF_LOOPS" report --list-opts | tr ' ' '\n' | grep -qx -- "--symbol-filter"
ok $? "--list-opts lists the long options (for shell completion)"

# colour and pager
R --stdio-color=always >"$TMP/col" 2>/dev/null
grep -q "$(printf '\033')\[31m" "$TMP/col"
ok $? "--stdio-color=always: hot percentages in red"
R --stdio-color=never >"$TMP/col" 2>/dev/null
! grep -q "$(printf '\033')" "$TMP/col"
ok $? "--stdio-color=never (and not a terminal): no escape sequences"
# (on a terminal the browser is the default, as perf report's: --stdio asks for the text)
if command -v script >/dev/null 2>&1; then
	PERF_PAGER="sed s/^/PAGED:/ >$TMP/paged" script -qec "$PERF_LOOPS report --stdio -i $TMP/rec.data" /dev/null >/dev/null 2>&1
	grep -q "^PAGED:# perf loops: calling-context tree" "$TMP/paged"
	ok $? "on a terminal, the report goes through \$PERF_PAGER"
	rm -f "$TMP/paged"
	PERF_PAGER="sed s/^/PAGED:/ >$TMP/paged" script -qec "$PERF_LOOPS report --stdio --no-pager -i $TMP/rec.data" /dev/null >"$TMP/tty" 2>&1
	[ ! -e "$TMP/paged" ] && grep -q "# perf loops: calling-context tree" "$TMP/tty"
	ok $? "--no-pager: no pager on a terminal"
	grep -q "$(printf '\033')\[3[12]m" "$TMP/tty"
	ok $? "on a terminal, colour by default"
else
	skip "script (util-linux) not installed"; skip "script not installed"; skip "script not installed"
fi

# -q and -v: binaries without DWARF are one summary line (the vdso and
# the system's libraries may be among them); -v names each with its reason
gcc -O2 -fno-omit-frame-pointer -o "$TMP/nodwarf" "$FIXTURES/perf/split_loops.c"
perf record -q -N -e cpu-clock --call-graph=fp -o "$TMP/nd.data" "$TMP/nodwarf" 3 >/dev/null 2>&1
"$PERF_LOOPS" report -i "$TMP/nd.data" >/dev/null 2>"$TMP/err"
# (the note on fp chains, issue 29, may name it: not a per-binary line)
check_eq "$(grep -c "^perf-loops: [0-9]* binar[a-z]* without debug information: .*-v names them" "$TMP/err") $(without_fp_note "$TMP/err" | grep -c nodwarf)" "1 0" \
	"binaries without DWARF: one summary line, not one per binary"
"$PERF_LOOPS" report -i "$TMP/nd.data" -q >/dev/null 2>"$TMP/err"
check_eq "$(wc -c <"$TMP/err")" 0 "-q: no warning"
"$PERF_LOOPS" report -i "$TMP/nd.data" -v >/dev/null 2>"$TMP/err"
grep -q "nodwarf.*no DWARF" "$TMP/err"
ok $? "-v: the analysis warnings"

# --no-demangle: C++ names as the symbol table has them
if command -v g++ >/dev/null 2>&1; then
	g++ -O2 -g -fno-omit-frame-pointer -o "$TMP/cxx" "$FIXTURES/perf/cxx_names.cpp"
	perf record -q -N -e cpu-clock --call-graph=fp -o "$TMP/cxx.data" "$TMP/cxx" 4 >/dev/null 2>&1
	"$PERF_LOOPS" report -i "$TMP/cxx.data" -s sym --no-demangle --full-names >"$TMP/nd" 2>/dev/null
	perf report -i "$TMP/cxx.data" --stdio -q -g none --no-children -s sym --no-demangle 2>/dev/null >"$TMP/pnd"
	sym=$(grep -o "_ZN[0-9A-Za-z_]*" "$TMP/pnd" | head -n 1)
	[ -n "$sym" ] && check_eq "$(pct "[.] $sym" "$TMP/nd")" "$(pct "[.] $sym" "$TMP/pnd")" \
		"--no-demangle: $sym as perf report --no-demangle shows it" || fail "--no-demangle: perf shows a mangled name"
	# C++ names shortened by default, whole with --full-names
	"$PERF_LOOPS" report -i "$TMP/cxx.data" >"$TMP/short" 2>/dev/null
	grep -q "^ *[0-9.]*% *[0-9.]*% *[0-9]*      numerics::weighted_sum<\.\.\.>(\.\.\.)  \[cxx\]$" "$TMP/short"
	ok $? "C++ names shortened: numerics::weighted_sum<...>(...)"
	"$PERF_LOOPS" report -i "$TMP/cxx.data" --full-names >"$TMP/full" 2>/dev/null
	grep -q "double numerics::weighted_sum<double, std::__cxx11::basic_string<char.*>(std::vector<double, std::allocator<double> > const&, .*, int)  \[cxx\]$" "$TMP/full"
	ok $? "--full-names: the demangler's whole name"
	if command -v script >/dev/null 2>&1; then
		COLUMNS=80 script -qec "$PERF_LOOPS report --stdio -i $TMP/cxx.data --no-pager --full-names --stdio-color=never" /dev/null >"$TMP/tty" 2>/dev/null
		long=$(tr -d '\r' <"$TMP/tty" | grep -v "^#\|^perf-loops:" | awk 'length($0) > 80' | wc -l)
		tr -d '\r' <"$TMP/tty" | grep -q "double numerics::weight.*\.\.\.  \[cxx\]$"
		ok $? "on an 80-column terminal: long names cut with ..., the binary kept"
		check_eq "$long" 0 "on an 80-column terminal: no line longer than 80"
	else
		skip "script not installed"; skip "script not installed"
	fi
else
	skip "g++ not installed"; skip "g++ not installed"; skip "g++ not installed"; skip "g++ not installed"; skip "g++ not installed"
fi

# perf record --threads: a directory (data, data.0, data.1, ...)
if perf record -q -N --threads -e cpu-clock --call-graph=fp -o "$TMP/thr.data" "$TMP/split" 4 >/dev/null 2>&1 &&
	[ -d "$TMP/thr.data" ]; then
	"$PERF_LOOPS" report -i "$TMP/thr.data" -s sym -n >"$TMP/thr" 2>"$TMP/err"
	perf report -i "$TMP/thr.data" --stdio -q -g none --no-children -s sym -n 2>/dev/null >"$TMP/pthr"
	want=$(awk '$NF == "run" { print $1, $2 }' "$TMP/pthr")
	check_eq "$(awk '$NF == "run" { print $1, $2 }' "$TMP/thr")" "$want" \
		"perf record --threads directory: run's share and samples are perf report's ($want)"
else
	skip "perf record --threads does not work here"
fi
mkdir -p "$TMP/emptydir"
"$PERF_LOOPS" report -i "$TMP/emptydir" >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "emptydir: a directory without a 'data' file" "$TMP/err"
ok $? "a directory that is not perf record --threads output: exit 1, says so"

# options of perf report that do not apply: one line naming them, exit 2
for o in --branch-stack -b --mem-mode -T --threads "--itrace=i" -D "-g address" --frobnicate; do
	R $o >/dev/null 2>"$TMP/err"
	rc=$?
	name=${o%%=*}; name=${name#-g }
	[ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q -- "$name" "$TMP/err"
	ok $? "$o: exit 2, one line naming it: $(cat "$TMP/err")"
done
done_testing
