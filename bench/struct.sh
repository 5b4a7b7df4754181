#!/bin/sh
# bench/struct.sh - the structure of a whole binary: loopscope struct on
# libc.so.6 (libc6-dbg) and, when installed, the Debian kernel's vmlinux
# (linux-image-amd64-dbg; not in CI), beside objdump -d > /dev/null, the
# floor for any tool that decodes every instruction.  Median wall time and
# peak RSS (/usr/bin/time) of RUNS runs, the ratio to objdump, and the
# speed-up of -j2 over -j1.  The cache is off (--no-cache): every run is a
# full analysis.
#
# Usage: bench/struct.sh [LOOPSCOPE] [RUNS]      (run from the build directory)
#        VMLINUX=/path/to/vmlinux bench/struct.sh   to choose the kernel image
set -eu
LOOPSCOPE=${1:-${LOOPSCOPE:-./loopscope}}
RUNS=${2:-3}
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "struct.sh: $TIME not found (apt-get install time)" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ls-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export XDG_CACHE_HOME="$TMP/cache"

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure NAME CMD...: "NAME median-seconds median-peak-KiB exit-status" >> results
measure() {
	name=$1; shift
	: >"$TMP/t"; : >"$TMP/m"
	i=0 st=0
	while [ $i -lt "$RUNS" ]; do
		$TIME -f '%e %M' -o "$TMP/time" "$@" >/dev/null 2>"$TMP/err" || st=$?
		tail -n 1 "$TMP/time" | awk '{ print $1 }' >>"$TMP/t"
		tail -n 1 "$TMP/time" | awk '{ print $2 }' >>"$TMP/m"
		i=$((i + 1))
	done
	[ "$st" -eq 0 ] || echo "struct.sh: $name exited $st: $(head -c 300 "$TMP/err")" >&2
	echo "$name $(median "$TMP/t") $(median "$TMP/m") $st" >>"$TMP/results"
}

bench_one() { # LABEL BINARY
	: >"$TMP/results"
	measure "objdump -d" objdump -d "$2"
	measure "struct -j1" "$LOOPSCOPE" struct --no-cache -j 1 -o /dev/null "$2"
	measure "struct -j2" "$LOOPSCOPE" struct --no-cache -j 2 -o /dev/null "$2"
	measure "struct -j2 json" "$LOOPSCOPE" struct --no-cache -j 2 --format=json -o /dev/null "$2"
	echo "== $1 ($2, $(du -h "$2" | cut -f1)), median of $RUNS runs"
	awk -F' ' '{ n = NF; name = $1; for (i = 2; i <= n - 3; i++) name = name " " $i
		t = $(n - 2); m = $(n - 1); s = $n
		if (NR == 1) floor = (t > 0 ? t : 0.01)
		if (name == "struct -j1") j1 = t
		if (name == "struct -j2") j2 = t
		printf "%-18s %8.2f s  %8.1f MiB  %6.2fx objdump%s\n", name, t, m / 1024, t / floor, s ? "  (exit " s ")" : "" }
		END { if (j2 > 0) printf "speed-up -j2 over -j1: %.2fx\n", j1 / j2 }' "$TMP/results"
}

echo "# bench/struct.sh $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores; $("$LOOPSCOPE" --version 2>/dev/null | head -n 1); $(objdump --version | head -n 1)"
bench_one libc.so.6 "$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)"
if [ -z "${VMLINUX:-}" ]; then
	VMLINUX=$(ls /usr/lib/debug/boot/vmlinux-* 2>/dev/null | sort | tail -n 1 || true)
fi
if [ -n "$VMLINUX" ] && [ -f "$VMLINUX" ]; then
	bench_one vmlinux "$VMLINUX"
else
	echo "== vmlinux: not installed (apt-get install linux-image-amd64-dbg), skipped"
fi
