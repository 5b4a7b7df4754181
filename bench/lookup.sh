#!/bin/sh
# bench/lookup.sh - inline chain and line of every instruction address:
# loopscope lookup --json vs llvm-symbolizer --inlining vs eu-addr2line -i -f.
#
# Targets: libc.so.6 (DWARF from libc6-dbg, found by build-id) and the
# largest fixture binary.  Every tool reads the same address list (every
# instruction address inside a function symbol, from objdump -d) on stdin,
# in RUNS rounds of every tool in turn (a run over a minute is not repeated);
# the median wall time and peak RSS are printed, with each tool's time as a
# multiple of loopscope's.
# loopscope is timed cold (empty cache: full analysis, loops included) and
# warm (the scope tree loaded from its cache).
#
# Usage: bench/lookup.sh [LOOPSCOPE] [RUNS]     (run from the build directory)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/.." && pwd)
LOOPSCOPE=${1:-${LOOPSCOPE:-./loopscope}}
RUNS=${2:-3}
TIME=/usr/bin/time
for t in "$LOOPSCOPE" llvm-symbolizer eu-addr2line objdump readelf "$TIME"; do
	command -v "$t" >/dev/null 2>&1 || [ -x "$t" ] || { echo "lookup.sh: $t not found" >&2; exit 1; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ls-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# addresses BINARY > LIST: instruction addresses inside function symbols
# (the same list the differential test uses: tests/core-common.py).
addresses() {
	python3 - "$1" "$srcdir/tests/core-common.py" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("core_common", sys.argv[2])
c = importlib.util.module_from_spec(spec)
spec.loader.exec_module(c)
sys.stdout.write("".join("0x%x\n" % a for a in c.instruction_addresses(sys.argv[1])))
PY
}

# median FILE: the median of the numbers in FILE, one per line.
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# run_tool NAME BINARY: one timed run of tool NAME over the addresses;
# appends its wall time and peak RSS to $TMP/t.NAME and $TMP/m.NAME.
run_tool() {
	name=$1 bin=$2
	case $name in
	loopscope-cold) rm -rf "$TMP/cache"; set -- "$LOOPSCOPE" lookup --json "$bin" ;;
	loopscope-warm) set -- "$LOOPSCOPE" lookup --json "$bin" ;;
	llvm-symbolizer) set -- llvm-symbolizer --inlining --output-style=JSON -e "$bin" ;;
	eu-addr2line) set -- eu-addr2line -i -f -e "$bin" ;;
	esac
	XDG_CACHE_HOME=$TMP/cache $TIME -f '%e %M' -o "$TMP/time" "$@" <"$TMP/addrs" >"$TMP/out.$name" 2>"$TMP/err.$name" ||
		echo "lookup.sh: $name failed: $(head -c 300 "$TMP/err.$name")" >&2
	tail -n 1 "$TMP/time" | awk '{ print $1 }' >>"$TMP/t.$name"
	tail -n 1 "$TMP/time" | awk '{ print $2 }' >>"$TMP/m.$name"
}

TOOLS="loopscope-cold loopscope-warm llvm-symbolizer eu-addr2line"

bench_one() { # LABEL BINARY
	label=$1 bin=$2
	addresses "$bin" >"$TMP/addrs"
	n=$(wc -l <"$TMP/addrs")
	for t in $TOOLS; do : >"$TMP/t.$t"; : >"$TMP/m.$t"; done
	# Rounds of every tool in turn, so that load from other processes on
	# the machine falls on all of them alike.  A tool whose run took over
	# a minute (eu-addr2line on libc) is not run again: its median is of
	# the runs it made.
	r=0
	while [ $r -lt "$RUNS" ]; do
		for t in $TOOLS; do
			if [ $r -gt 0 ] && [ "$(awk '$1 > 60 { s = 1 } END { print s + 0 }' "$TMP/t.$t")" = 1 ]; then
				continue
			fi
			run_tool "$t" "$bin"
		done
		r=$((r + 1))
	done
	: >"$TMP/results"
	for t in $TOOLS; do
		echo "$t $(median "$TMP/t.$t") $(median "$TMP/m.$t") $(wc -l <"$TMP/out.$t") $(wc -l <"$TMP/t.$t")" >>"$TMP/results"
	done
	echo "== $label: $n addresses ($bin), median of $RUNS rounds; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	awk '{ printf "%-16s %8.2f s  %9.1f MiB  %8d lines  %6.2fx loopscope-cold  %6.2fx loopscope-warm  (%d runs)\n",
		$1, $2, $3 / 1024, $4, $2 / base_cold, $2 / base_warm, $5 }' \
		base_cold="$(awk '$1 == "loopscope-cold" { print ($2 > 0 ? $2 : 0.01) }' "$TMP/results")" \
		base_warm="$(awk '$1 == "loopscope-warm" { print ($2 > 0 ? $2 : 0.01) }' "$TMP/results")" \
		"$TMP/results"
}

echo "# bench/lookup.sh $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores; loopscope $("$LOOPSCOPE" --version 2>/dev/null | head -n 1)"
echo "# $(llvm-symbolizer --version 2>/dev/null | grep -i version | head -n 1 | sed 's/^ *//'); $(eu-addr2line --version | head -n 1)"
LIBC=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
bench_one libc.so.6 "$LIBC"
# The largest fixture: every fixture at -O2 with g++/gcc, the biggest .text.
for s in small.cpp loops.c inline_deep.c recursion.c cold.c; do
	case $s in *.cpp) cc=g++ ;; *) cc=gcc ;; esac
	$cc -O2 -g -o "$TMP/fx-$s" "$srcdir/tests/fixtures/$s"
done
largest=$(for f in "$TMP"/fx-*; do
	printf '%s %d\n' "$f" "$((0x$(readelf -SW "$f" | awk '$2 == ".text" { print $6 }')))"; done | sort -k2,2n | tail -n 1 | cut -d' ' -f1)
bench_one "largest fixture $(basename "$largest" | sed 's/^fx-//') -O2" "$largest"
