#!/bin/sh
# bench/lookup.sh - inline chain and line of every instruction address:
# loopscope lookup --json vs llvm-symbolizer --inlining vs eu-addr2line -i -f.
#
# Targets: libc.so.6 (DWARF from libc6-dbg, found by build-id) and the
# largest fixture binary.  Every tool reads the same address list (every
# instruction address inside a function symbol, from objdump -d) on stdin,
# once per run; each run is repeated RUNS times and the median wall time and
# peak RSS are printed, with each peer's time as a ratio of loopscope's.
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

# measure NAME CMD...: run CMD RUNS times with the addresses on stdin;
# records "NAME median-seconds median-peak-KiB output-lines".
measure() {
	name=$1; shift
	: >"$TMP/t.$name"; : >"$TMP/m.$name"
	i=0
	while [ $i -lt "$RUNS" ]; do
		[ "$name" = loopscope-cold ] && rm -rf "$TMP/cache"
		XDG_CACHE_HOME=$TMP/cache $TIME -f '%e %M' -o "$TMP/time" "$@" <"$TMP/addrs" >"$TMP/out.$name" 2>"$TMP/err.$name" ||
			{ echo "lookup.sh: $name failed: $(head -c 300 "$TMP/err.$name")" >&2; }
		tail -n 1 "$TMP/time" | awk '{ print $1 }' >>"$TMP/t.$name"
		tail -n 1 "$TMP/time" | awk '{ print $2 }' >>"$TMP/m.$name"
		i=$((i + 1))
	done
	echo "$name $(median "$TMP/t.$name") $(median "$TMP/m.$name") $(wc -l <"$TMP/out.$name")" >>"$TMP/results"
}

bench_one() { # LABEL BINARY
	label=$1 bin=$2
	addresses "$bin" >"$TMP/addrs"
	n=$(wc -l <"$TMP/addrs")
	: >"$TMP/results"
	measure loopscope-cold "$LOOPSCOPE" lookup --json "$bin"
	# warm: the previous runs filled the cache; one more fill to be sure
	XDG_CACHE_HOME=$TMP/cache "$LOOPSCOPE" lookup --json "$bin" 0 >/dev/null 2>&1 || true
	measure loopscope-warm "$LOOPSCOPE" lookup --json "$bin"
	measure llvm-symbolizer llvm-symbolizer --inlining --output-style=JSON -e "$bin"
	measure eu-addr2line eu-addr2line -i -f -e "$bin"
	echo "== $label: $n addresses ($bin), median of $RUNS runs"
	awk '{ t[NR] = $2; printf "%-16s %8.2f s  %9.1f MiB  %8d lines  %6.2fx loopscope-cold  %6.2fx loopscope-warm\n",
		$1, $2, $3 / 1024, $4, $2 / base_cold, $2 / base_warm }' \
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
