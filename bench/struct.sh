#!/bin/sh
# bench/struct.sh - the structure of a whole binary: loopscope struct on
# libc.so.6 (libc6-dbg) and, when installed, the Debian kernel's vmlinux
# (linux-image-amd64-dbg; not in CI), beside objdump -d > /dev/null, the
# floor for any tool that decodes every instruction.  Median wall time and
# peak RSS (/usr/bin/time) of RUNS rounds of every command in turn, the
# ratio to objdump, and the speed-up of -j2 over -j1.  The cache is off (--no-cache): every run is a
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

# run_one NAME BINARY: one timed run; appends to $TMP/t.NAME, $TMP/m.NAME.
run_one() {
	name=$1 bin=$2
	case $name in
	objdump) set -- objdump -d "$bin" ;;
	j1) set -- "$LOOPSCOPE" struct --no-cache -j 1 -o /dev/null "$bin" ;;
	j2) set -- "$LOOPSCOPE" struct --no-cache -j 2 -o /dev/null "$bin" ;;
	j2-json) set -- "$LOOPSCOPE" struct --no-cache -j 2 --format=json -o /dev/null "$bin" ;;
	esac
	st=0
	$TIME -f '%e %M' -o "$TMP/time" "$@" >/dev/null 2>"$TMP/err" || st=$?
	[ "$st" -eq 0 ] || echo "struct.sh: $name exited $st: $(head -c 300 "$TMP/err")" >&2
	tail -n 1 "$TMP/time" | awk '{ print $1 }' >>"$TMP/t.$name"
	tail -n 1 "$TMP/time" | awk '{ print $2 }' >>"$TMP/m.$name"
}

RUNNERS="objdump j1 j2 j2-json"

bench_one() { # LABEL BINARY
	for t in $RUNNERS; do : >"$TMP/t.$t"; : >"$TMP/m.$t"; done
	# Rounds of every command in turn, so that load from other processes
	# falls on all of them alike.
	r=0
	while [ $r -lt "$RUNS" ]; do
		for t in $RUNNERS; do run_one "$t" "$2"; done
		r=$((r + 1))
	done
	echo "== $1 ($2, $(du -h "$2" | cut -f1)), median of $RUNS rounds; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	floor=$(median "$TMP/t.objdump")
	for t in $RUNNERS; do
		echo "$t $(median "$TMP/t.$t") $(median "$TMP/m.$t")"
	done | awk -v floor="$floor" '
		{ label = $1 == "objdump" ? "objdump -d" : $1 == "j1" ? "struct -j1" : $1 == "j2" ? "struct -j2" : "struct -j2 json"
		  if ($1 == "j1") j1 = $2
		  if ($1 == "j2") j2 = $2
		  printf "%-18s %8.2f s  %8.1f MiB  %6.2fx objdump -d\n", label, $2, $3 / 1024, $2 / (floor > 0 ? floor : 0.01) }
		END { if (j2 > 0) printf "speed-up -j2 over -j1: %.2fx\n", j1 / j2 }'
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
