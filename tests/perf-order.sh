#!/bin/sh
# tests/perf-order.sh - records replayed in time order, a round at a time.
#
# perf record writes each CPU's buffer in rounds, so a record can land in
# the file after a later one; perf loops replays them as perf report's
# ordered events do (perf-plugin/session.c).  tests/hostile-perf.py rounds
# writes a mapping a round after the sample that needs it, then replaces
# the mapping, and adds a sample that arrives after its round was
# replayed: each sample must fall in the mapping of its own time, as perf
# report (the oracle, when installed) says.
. "$top_srcdir/tests/lib.sh"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
export PERF_BUILDID_DIR="$TMP/buildid"

python3 "$top_srcdir/tests/hostile-perf.py" rounds "$TMP/rounds.data"
ok $? "hostile-perf.py rounds writes the file"

"$PERF_LOOPS" report -i "$TMP/rounds.data" --stdio --sort dso >"$TMP/out" 2>"$TMP/err"
ok $? "perf loops report reads it (exit 0)"
got=$(awk '!/^#/ && NF == 3 { print $3 "=" $2 }' "$TMP/out" | sort | tr '\n' ' ')
check_eq "$got" "early.so=2 late.so=1 " \
	"the samples at t=200 and t=150 fall in early.so (mapped at t=100, written later), t=400 in late.so (t=300)"

if command -v perf >/dev/null 2>&1; then
	perf report -i "$TMP/rounds.data" --stdio --sort dso -g none 2>/dev/null |
		awk '!/^#/ && NF == 3 { print $3 "=" $1 }' | sort | tr '\n' ' ' >"$TMP/perf"
	check_eq "$(cat "$TMP/perf")" "early.so=66.67% late.so=33.33% " "perf report attributes them the same way"
else
	skip "perf not installed: no oracle"
fi

# The reader thread (session.c) hands the records over in replay order: the
# report is the one a single thread makes (PERF_LOOPS_READER_THREAD=0),
# here and on 50,000 samples (several blocks handed over).
python3 "$top_srcdir/tests/hostile-perf.py" plain "$TMP/plain.data" 50000
for f in rounds plain; do
	"$PERF_LOOPS" report -i "$TMP/$f.data" --format=json >"$TMP/threaded.json" 2>"$TMP/err1"
	rc=$?
	PERF_LOOPS_READER_THREAD=0 "$PERF_LOOPS" report -i "$TMP/$f.data" --format=json >"$TMP/single.json" 2>"$TMP/err0"
	[ $rc -eq 0 ] && [ -s "$TMP/threaded.json" ] && cmp -s "$TMP/threaded.json" "$TMP/single.json" &&
		cmp -s "$TMP/err1" "$TMP/err0"
	ok $? "$f: the report with the reader thread is the single thread's (output and warnings)"
done

# Records that would change the file's events (HEADER_ATTR, ID_INDEX: perf
# writes them in pipe mode only) in a file's data: with the reader thread
# they are ignored with a warning, as the other thread reads the events;
# every sample is reported.
python3 "$top_srcdir/tests/hostile-perf.py" attrs_in_data "$TMP/attrs.data" 20000
"$PERF_LOOPS" report -i "$TMP/attrs.data" --format=json >"$TMP/attrs.json" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q "header records (ATTR) in the data of a file.*ignored" "$TMP/err" &&
	python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["events"][0]["samples"] != 20000)' "$TMP/attrs.json"
ok $? "event records in a file's data: ignored with a warning, the 20,000 samples reported (exit $rc: $(head -c 200 "$TMP/err"))"
done_testing
