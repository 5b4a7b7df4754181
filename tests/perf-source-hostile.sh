#!/bin/sh
# tests/perf-source-hostile.sh - `perf loops annotate` reads the source
# files DWARF names, which are anyone's paths (issue 28's
# annotate-devzero.sh): a source named /dev/zero or a 4 GiB sparse file
# ended in "out of memory" and an abort, /dev/stdin and /dev/tty blocked,
# /proc/kmsg blocked and consumed the kernel's log as root.  For each
# hostile source (tests/fixtures/hostile_source.sh) on a real recording:
# annotate ends at once (exit 0), says in the text why the source is not
# read, and still shows both loops from DWARF.  Then a forged line number:
# a statement of the procedure at line 2147483600 of the 30-line source
# it is declared in made a span of two billion rows; only the lines the
# text has and the lines DWARF marks are shown.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
. "$top_srcdir/tests/fixtures/hostile_source.sh"

command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
record() { perf record -q -N -e cpu-clock --call-graph=fp -o "$@" >/dev/null 2>"$TMP/rec.err"; }
record "$TMP/probe.data" true || skip_all "perf record does not work here: $(head -n 1 "$TMP/rec.err")"
make_sources "$TMP" >"$TMP/sources" || skip_all "cannot make a FIFO or a sparse file in $TMP"
# stdin: a pipe that never ends nor holds data, so that a read of
# /dev/stdin would wait for ever
mkfifo "$TMP/stdin" && exec 3<>"$TMP/stdin" || skip_all "cannot make a FIFO in $TMP"

while read -r name path; do
	mkbin "$TMP/$name" "$path" || { fail "$name: the fixture builds"; continue; }
	record "$TMP/$name.data" "$TMP/$name" 20000 || { fail "$name: perf record"; continue; }
	timeout 60 "$PERF_LOOPS" annotate -i "$TMP/$name.data" --stdio work <&3 >"$TMP/out" 2>"$TMP/err"
	ok $? "$name: annotate ends at once (exit $?; 124: killed after 60 s; 134: abort)"
	grep -Fq "(the source is not read: $path: " "$TMP/out"
	ok $? "$name: the annotation says $path is not read, and why"
	[ "$(grep -c "loop at $(basename "$path"):1[01], lines 1[01]-12" "$TMP/out")" = 2 ]
	ok $? "$name: both loops are shown, from DWARF"
done <"$TMP/sources"

# A forged line: the procedure's last statement at line 2147483600.
seq 1 30 | sed 's|^|// line |' >"$TMP/src30.c"
cat >"$TMP/forged.c" <<EOC
#include <stdlib.h>
volatile long sink;
#line 3 "$TMP/src30.c"
__attribute__((noinline)) long work(long n) {
  long s = 0;
#line 10 "$TMP/src30.c"
  for (long i = 0; i < n; i++) {
    for (long j = 0; j < i; j++)
      s += i * j;
  }
#line 2147483600 "$TMP/src30.c"
  return s + n;
}
#line 40 "$TMP/forged.c"
int main(int argc, char **argv) { sink = work(argc > 1 ? atol(argv[1]) : 1000); return 0; }
EOC
if gcc -O2 -g -fno-omit-frame-pointer -o "$TMP/forged" "$TMP/forged.c" && record "$TMP/forged.data" "$TMP/forged" 20000; then
	timeout 60 "$PERF_LOOPS" annotate -i "$TMP/forged.data" --stdio work >"$TMP/out" 2>"$TMP/err"
	ok $? "forged line: annotate ends at once (exit $?)"
	rows=$(wc -l <"$TMP/out")
	[ "$rows" -gt 5 ] && [ "$rows" -lt 100 ]
	ok $? "forged line: $rows rows, not two billion"
	grep -q "^ .* 2147483600 *: *$" "$TMP/out"
	ok $? "forged line: line 2147483600, which DWARF marks, has its row"
	grep -q "  11 .*: // line 11$" "$TMP/out" && grep -q "  12 .*: // line 12$" "$TMP/out"
	ok $? "forged line: the text's lines of the loops are shown"
	! grep -q " 31 *: *$" "$TMP/out"
	ok $? "forged line: no row for the unmarked line 31, past the text"
else
	fail "forged line: the fixture builds and is recorded"
fi
done_testing
