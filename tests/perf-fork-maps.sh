#!/bin/sh
# tests/perf-fork-maps.sh - a forked process shares its parent's maps until
# either changes them (perf-plugin/session.c; issue 28's
# perf-fork-amplification.sh: every FORK copied every map, so 2000 mmaps
# then a chain of 30,000 forks -- a 1.9 MB perf.data -- took 2.8 GB).
#  - tests/hostile-perf.py forkchain 30000: the report ends under a 1 GB
#    address-space limit (ulimit -v), with its one sample;
#  - copy on write (hostile-perf.py forkremap): a child mapping over its
#    parent's map, a child forked after that, the parent mapping over its
#    own: each sees its own maps (a.so, b.so, c.so: one sample each).
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
HOSTILE="python3 $top_srcdir/tests/hostile-perf.py"
$HOSTILE forkchain "$TMP/chain.data" 30000 && $HOSTILE forkremap "$TMP/remap.data" || skip_all "hostile-perf.py failed"

(ulimit -v 1000000 && exec "$PERF_LOOPS" report --stdio -i "$TMP/chain.data") >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q "^# Samples: 1  of event 'cpu-clock'" "$TMP/out"
ok $? "2000 maps, 30,000 forks ($(($(wc -c <"$TMP/chain.data") / 1024)) KB): reported within 1 GB of address space (exit $rc)"

"$PERF_LOOPS" report --stdio -n -s dso -i "$TMP/remap.data" >"$TMP/out" 2>"$TMP/err"
got=$(awk '$1 ~ /%$/ { print $3 "=" $2 }' "$TMP/out" | sort | tr '\n' ' ')
check_eq "$got" "a.so=1 b.so=1 c.so=1 " "copy on write: child 2 sees a.so, child 1 b.so, the parent c.so"
done_testing
