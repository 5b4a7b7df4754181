#!/bin/sh
# tests/core-threads.sh - the analysis on one thread and on four gives the
# same structure, byte for byte, on a binary of hundreds of procedures
# (libloopscope itself, and libc where it is): the workers share nothing
# but their work counter.  scripts/check-sanitizers runs this under TSan.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
[ -x "$LOOPSCOPE" ] || skip_all "$LOOPSCOPE not built"
lib="$top_builddir/.libs/libloopscope.so"
[ -f "$lib" ] || skip_all "libloopscope.so not built"
for bin in "$lib" /usr/lib/x86_64-linux-gnu/libz.so.1; do
	[ -f "$bin" ] || { skip "$bin: not installed"; continue; }
	"$LOOPSCOPE" struct --no-cache -j 1 --format=json "$bin" >"$TMP/j1" 2>"$TMP/e1"
	r1=$?
	"$LOOPSCOPE" struct --no-cache -j 4 --format=json "$bin" >"$TMP/j4" 2>"$TMP/e4"
	r4=$?
	n=$(grep -o '"kind":"proc"' "$TMP/j1" | wc -l)
	[ $r1 -eq 0 ] && [ $r4 -eq 0 ] && [ "$n" -gt 100 ] && cmp -s "$TMP/j1" "$TMP/j4"
	ok $? "$(basename "$bin"): -j 1 and -j 4 give the same structure ($n procedures; exit $r1, $r4)"
	[ $r4 -eq 0 ] || head -c 800 "$TMP/e4" | sed 's/^/# /'
done
done_testing
