#!/bin/sh
# tests/perf-truncate.sh - a perf.data truncated while perf loops reads it
# (perf record writing it again, a `cp` over it): perf_data.c maps the
# file and every record points into the mapping, so the first read past
# the new end raised SIGBUS (exit 135), on the reader thread or on the
# replaying one.  Now: exit 1, one line naming the file and that it was
# truncated while being read (as the core says of binaries,
# tests/core-truncate.sh).
#
# The truncation is made at a known point, not raced: perf-loops runs with
# LOOPSCOPE_TIMING=stop:records and stops itself (SIGSTOP) once the file is
# open and mapped, before its records are read; the file is cut to 64 KiB
# and it goes on (SIGCONT).  The recording: tests/hostile-perf.py plain,
# 20,000 samples (1.6 MB), so most records lie past the cut.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
python3 "$top_srcdir/tests/hostile-perf.py" plain "$TMP/big.data" 20000 || skip_all "hostile-perf.py failed"

# cut_at SIZE FILE ARGS...: perf-loops ARGS, FILE cut to SIZE once it has
# stopped itself before the records; rc and $TMP/err.
cut_at() {
	_size=$1 _file=$2
	shift 2
	LOOPSCOPE_TIMING=stop:records "$PERF_LOOPS" "$@" >"$TMP/out" 2>"$TMP/err.all" &
	_pid=$!
	_n=0 # until it has stopped itself (state T) or ended
	while [ "$(sed 's/^.*) \(.\).*/\1/' /proc/$_pid/stat 2>/dev/null)" != T ] &&
		kill -0 $_pid 2>/dev/null && [ $_n -lt 1200 ]; do
		sleep 0.05
		_n=$((_n + 1))
	done
	[ -n "$_size" ] && truncate -s "$_size" "$_file"
	kill -CONT $_pid 2>/dev/null
	wait $_pid
	rc=$?
	grep -v 'timing:' "$TMP/err.all" >"$TMP/err"
}

want="perf-loops: $TMP/data: truncated while being read (now 65536 bytes): no report"
for mode in 1 0; do
	name=$([ $mode = 1 ] && echo "the reader thread" || echo "one thread")
	cp "$TMP/big.data" "$TMP/data"
	PERF_LOOPS_READER_THREAD=$mode cut_at 64K "$TMP/data" report --stdio -i "$TMP/data"
	[ $rc -eq 1 ] && [ "$(cat "$TMP/err")" = "$want" ]
	ok $? "report, $name: the file cut to 64 KiB while being read: exit 1 (was 135, SIGBUS), one line naming it (exit $rc)"
	[ $rc -eq 1 ] || sed 's/^/# /' "$TMP/err" | head -5
done

# Every view goes through the same reads: the folded one too.
cp "$TMP/big.data" "$TMP/data"
cut_at 64K "$TMP/data" report --stdio --format=folded -i "$TMP/data"
[ $rc -eq 1 ] && [ "$(cat "$TMP/err")" = "$want" ]
ok $? "report --format=folded: the same line, exit 1 (exit $rc)"

# The control: stopped and continued at the same point, not cut, it reports.
cp "$TMP/big.data" "$TMP/data"
cut_at "" "$TMP/data" report --stdio -i "$TMP/data"
[ $rc -eq 0 ] && grep -q "^# Samples: 20000 " "$TMP/out" && ! [ -s "$TMP/err" ]
ok $? "not cut: the 20,000 samples, no message (exit $rc; $(grep '^# Samples' "$TMP/out"))"
done_testing
