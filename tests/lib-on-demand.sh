#!/bin/sh
# tests/lib-on-demand.sh - analysis on demand (ls_options.on_demand,
# issues 23 and 24) against the whole analysis, on binaries of hundreds
# to thousands of procedures: libloopscope itself, libz, and libc with its
# debug file when it is there.  tests/on-demand looks up sampled addresses
# (statement starts, middles and ends, gaps, addresses outside every
# procedure) from four threads at once and wants every chain byte for byte
# as the whole analysis gives it; then the whole tree on demand; then the
# cache entry that grows from one run to the next.  The oracle is the
# whole analysis, which tests/core-*.py check against llvm-symbolizer and
# clang.  scripts/check-sanitizers runs this under TSan.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
[ -x "$LOOPSCOPE" ] || skip_all "$LOOPSCOPE not built"
PROG="$top_builddir/tests/on-demand"
[ -x "$PROG" ] || skip_all "tests/on-demand not built"
lib="$top_builddir/.libs/libloopscope.so"
bins="$lib /usr/lib/x86_64-linux-gnu/libz.so.1"
libc=/lib/x86_64-linux-gnu/libc.so.6
# libc with its debug file (libc6-dbg): a large real library
if [ -f "$libc" ] && "$LOOPSCOPE" struct --no-cache "$libc" 2>/dev/null | grep -q 'stmt malloc.c'; then
	bins="$bins $libc"
fi
for bin in $bins; do
	[ -f "$bin" ] || { skip "$bin: not installed"; continue; }
	b=$(basename "$bin")
	"$LOOPSCOPE" struct --no-cache "$bin" >"$TMP/$b.txt" 2>/dev/null
	# every 11th statement range: its start, its middle, its last byte and
	# its end (the address after: a return address); and the whole
	# module's first and last addresses and beyond
	grep -o '\[0x[0-9a-f]*-0x[0-9a-f]*)' "$TMP/$b.txt" | awk 'NR % 11 == 0' |
		sed 's/\[0x\([0-9a-f]*\)-0x\([0-9a-f]*\))/\1 \2/' |
		while read -r lo hi; do
			printf '%x\n%x\n%x\n%x\n' $((0x$lo)) $(((0x$lo + 0x$hi) / 2)) $((0x$hi - 1)) $((0x$hi))
		done >"$TMP/$b.addrs"
	printf '0\n1\nffffffffffff\n' >>"$TMP/$b.addrs"
	n=$(wc -l <"$TMP/$b.addrs")
	[ "$n" -gt 100 ] || { fail "$b: $n sampled addresses (the struct output is too small)"; continue; }
	rm -rf "$TMP/cache"
	"$PROG" "$bin" "$TMP/cache" 4 <"$TMP/$b.addrs" >"$TMP/$b.tap" 2>"$TMP/$b.err"
	rc=$?
	while IFS= read -r line; do
		case "$line" in
		"ok - "*) pass "${line#ok - }" ;;
		"not ok - "*) fail "${line#not ok - }" ;;
		*) echo "$line" ;;
		esac
	done <"$TMP/$b.tap"
	[ $rc -le 1 ] || { fail "$b: tests/on-demand exited $rc"; head -c 800 "$TMP/$b.err" | sed 's/^/# /'; }
done
done_testing
