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
done_testing
