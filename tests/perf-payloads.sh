#!/bin/sh
# tests/perf-payloads.sh - records followed by a payload their size does
# not count (issue 28's perf-pipe-tracing-data.sh and perf-auxtrace.sh):
#  - a real pipe-mode recording with a tracepoint (perf record -e
#    sched:sched_switch -e cpu-clock -o -): perf-loops read
#    HEADER_TRACING_DATA's payload as records, called the stream corrupt
#    and found "no samples"; now each event's sample count is perf
#    report's, with no warning;
#  - AUXTRACE (tests/hostile-perf.py auxtrace: 5 samples, an AUXTRACE
#    record whose payload hides 7 sample records, 5 samples): 12 samples
#    and "truncated" were reported; now exactly 10, no warning; the file
#    cut inside the payload: the 5 samples before it and a warning that
#    names the file and the record.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
HOSTILE="python3 $top_srcdir/tests/hostile-perf.py"

$HOSTILE auxtrace "$TMP/aux.data" 7 && $HOSTILE auxtrace "$TMP/auxcut.data" 7 100 || skip_all "hostile-perf.py failed"
"$PERF_LOOPS" report --stdio -i "$TMP/aux.data" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && [ "$(grep '^# Samples' "$TMP/out")" = "# Samples: 10  of event 'cpu-clock'" ]
ok $? "AUXTRACE: 10 samples, none of the 7 in its payload (exit $rc; $(grep '^# Samples' "$TMP/out"))"
! grep -q "warning" "$TMP/err"
ok $? "AUXTRACE: no warning (the payload is no corruption)"
"$PERF_LOOPS" report --stdio -i "$TMP/auxcut.data" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && [ "$(grep '^# Samples' "$TMP/out")" = "# Samples: 5  of event 'cpu-clock'" ] &&
	grep -q "auxcut.data: truncated: the payload of a AUXTRACE record (4600 bytes) is cut short; 100 bytes lost" "$TMP/err"
ok $? "AUXTRACE cut in its payload: the 5 samples before, a warning naming the file (exit $rc)"

command -v perf >/dev/null 2>&1 || { skip "perf not installed"; done_testing; }
command -v gcc >/dev/null 2>&1 || { skip "gcc not installed"; done_testing; }
cat >"$TMP/p.c" <<'EOC'
#include <unistd.h>
volatile long s;
int main(void) { for (int k = 0; k < 20; k++) { for (long i = 0; i < 5000000; i++) s += i; usleep(1000); } return 0; }
EOC
gcc -O2 -g -o "$TMP/p" "$TMP/p.c" || { fail "the fixture builds"; done_testing; }
perf record -e sched:sched_switch -e cpu-clock -g -o - -- "$TMP/p" 2>"$TMP/rec.err" >"$TMP/pipe.data"
if [ ! -s "$TMP/pipe.data" ] || grep -qi "permission\|not supported\|no such event\|invalid" "$TMP/rec.err"; then
	skip "perf cannot record sched:sched_switch here: $(head -n 1 "$TMP/rec.err")"
	done_testing
fi
perf report --stdio -i - <"$TMP/pipe.data" 2>/dev/null | grep '^# Samples' >"$TMP/want"
"$PERF_LOOPS" report --stdio -i - <"$TMP/pipe.data" >"$TMP/out" 2>"$TMP/err"
rc=$?
grep '^# Samples' "$TMP/out" >"$TMP/got"
[ $rc -eq 0 ] && [ -s "$TMP/want" ] && grep -q "sched:sched_switch" "$TMP/want" && cmp -s "$TMP/got" "$TMP/want"
ok $? "pipe mode with a tracepoint: perf report's sample counts ($(tr '\n' ' ' <"$TMP/want")) (exit $rc)"
! without_fp_note "$TMP/err" | grep -q "warning\|no samples"
ok $? "pipe mode with a tracepoint: no warning"
done_testing
