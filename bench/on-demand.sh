#!/bin/sh
# bench/on-demand.sh - the first, uncached run of what looks up a few
# addresses of big binaries (issues 23 and 24): analysis on demand (each
# procedure a lookup asks for, ls_options.on_demand) against the whole
# analysis, and against the peer a user would otherwise run.
#
#   bench/on-demand.sh [BUILD_DIR [BASE_BUILD_DIR]]
#
# BUILD_DIR (default: the source tree) has loopscope and perf-loops built
# with analysis on demand; BASE_BUILD_DIR (optional) a build of the same
# sources before it (e.g. `git clone` of main, scripts/build), run the
# same way: "before".  Without it, "before" is the whole analysis done by
# BUILD_DIR itself (`loopscope lookup`, which opens the whole module, as
# decode did), and the perf case has no "before".
#
# 1. decode: a one-frame oops (ksys_write+0x6b/0xf0) and a 40-frame one
#    (every 400th function of .text, its first call's return address) on
#    Debian's debug vmlinux, each with an empty cache: wall time and peak
#    memory, then the same log again warm (the entry the first run left).
# 2. perf: `perf record -g -e cpu-clock` of LevelDB's db_bench (4.4 MB
#    with DWARF, from the corpus: tests/corpus/corpus.py) for SECONDS
#    (default 3), then `perf loops report --stdio` with an empty cache
#    against `perf report --stdio` on the same file, both to /dev/null.
#    SYSTEM=1 records the whole machine (perf record -a) instead.
#    DECODE=0 leaves the decode part out.
# Wall times and peak RSS (GNU time), one run each: a cold cache is cold
# once.  On a busy machine the ratios move; quote them with the load.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here}" && pwd)
base=${2:+$(cd "$2" && pwd)}
SECONDS_RECORDED=${SECONDS_RECORDED:-3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ls-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "on-demand.sh: GNU time (/usr/bin/time) not found" >&2; exit 1; }

# The program behind a libtool wrapper, with its library path.
real() { # real BUILD PROGRAM
	if [ -x "$1/.libs/$2" ]; then echo "$1/.libs/$2"; else echo "$1/$2"; fi
}
# measure LABEL CACHE_DIR CMD...: one run, stdout to /dev/null; prints
# "LABEL  wall s  peak MB" and keeps the wall time in $TMP/LABEL.t
measure() {
	label=$1 cache=$2; shift 2
	XDG_CACHE_HOME=$cache LD_LIBRARY_PATH=$libpath $TIME -f "%e %M" -o "$TMP/t" "$@" >/dev/null 2>"$TMP/err" ||
		{ echo "on-demand.sh: $label failed:" >&2; head -5 "$TMP/err" >&2; exit 1; }
	read -r wall kb <"$TMP/t"
	echo "$wall" >"$TMP/$label.t"
	printf '  %-44s %8.2f s %8d MB\n' "$label" "$wall" $((kb / 1024))
}
ratio() { # ratio A B: A's time / B's
	awk -v a="$(cat "$TMP/$1.t")" -v b="$(cat "$TMP/$2.t")" 'BEGIN { printf "%.1fx", (b > 0 ? a / b : 0) }'
}

VMLINUX=$("$here/scripts/setup-kernel-dbg" 2>/dev/null) || VMLINUX=
if [ "${DECODE:-1}" = 0 ]; then
	echo "decode: skipped (DECODE=0)"
elif [ -n "$VMLINUX" ]; then
	echo "decode, cold (empty cache) and warm: $VMLINUX"
	printf '[    1.000000]  ksys_write+0x6b/0xf0\n' >"$TMP/one.log"
	# 40 frames: the return address after the first call of every 400th function of .text
	python3 - "$VMLINUX" >"$TMP/forty.log" <<'PY'
import re, subprocess, sys
vm = sys.argv[1]
syms = []
for line in subprocess.run(["nm", "-nS", "--defined-only", vm], capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if len(f) == 4 and f[2] in "tT":
        syms.append((int(f[0], 16), int(f[1], 16), f[3]))
out = 0
for addr, size, name in syms[399::400]:
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "--start-address=%#x" % addr,
                          "--stop-address=%#x" % (addr + size), vm], capture_output=True, text=True).stdout
    insns = re.findall(r"^ *([0-9a-f]+):\t(\S+)", dis, re.M)
    for (a, op), (b, _) in zip(insns, insns[1:]):
        if op.startswith("call"):
            print("[    1.000000]  %s+0x%x/0x%x" % (name, int(b, 16) - addr, size))
            out += 1
            break
    if out == 40:
        break
PY
	for log in one forty; do
		n=$(wc -l <"$TMP/$log.log")
		libpath=$build/.libs
		rm -rf "$TMP/c-$log"
		measure "decode $log ($n frames) cold, on demand" "$TMP/c-$log" "$(real "$build" loopscope)" decode -k "$VMLINUX" <"$TMP/$log.log"
		measure "decode $log ($n frames) warm, on demand" "$TMP/c-$log" "$(real "$build" loopscope)" decode -k "$VMLINUX" <"$TMP/$log.log"
		if [ -n "$base" ]; then
			libpath=$base/.libs
			rm -rf "$TMP/b-$log"
			measure "decode $log ($n frames) cold, before" "$TMP/b-$log" "$(real "$base" loopscope)" decode -k "$VMLINUX" <"$TMP/$log.log"
		else
			rm -rf "$TMP/b-$log"
			measure "decode $log ($n frames) cold, before" "$TMP/b-$log" "$(real "$build" loopscope)" lookup "$VMLINUX" ksys_write+0x6b/0xf0
		fi
		echo "  cold: before / on demand = $(ratio "decode $log ($n frames) cold, before" "decode $log ($n frames) cold, on demand")"
	done
else
	echo "decode: skipped (no kernel debug image: scripts/setup-kernel-dbg)"
fi

DB=/var/tmp/loopscope-corpus/build/pkg-db_bench/db_bench
command -v perf >/dev/null || { echo "perf: skipped (no perf)"; exit 0; }
if [ "${SYSTEM:-0}" = 1 ]; then
	what="the whole machine (perf record -a) for $SECONDS_RECORDED s"
	perf record -q -a -g -e cpu-clock -o "$TMP/perf.data" -- sleep "$SECONDS_RECORDED" >/dev/null 2>&1
elif [ -x "$DB" ]; then
	what="db_bench (LevelDB) for $SECONDS_RECORDED s"
	(cd "$TMP" && timeout -s INT "$SECONDS_RECORDED" perf record -q -g -e cpu-clock -o "$TMP/perf.data" -- \
		"$DB" --db="$TMP/db" --benchmarks=fillrandom,readrandom,fillseq,readseq --num=2000000 >/dev/null 2>&1) || true
else
	echo "perf: skipped ($DB not built: tests/corpus/corpus.py)"; exit 0
fi
echo "perf: first report of a recording of $what"
perf report -i "$TMP/perf.data" --stdio >/dev/null 2>&1 || true # the page cache warm for everyone
libpath=$build/.libs
measure "perf report --stdio" "$TMP/c-perf0" perf report -i "$TMP/perf.data" --stdio
rm -rf "$TMP/c-perf"
measure "perf loops report --stdio, cold, on demand" "$TMP/c-perf" "$(real "$build" perf-loops)" report -i "$TMP/perf.data" --stdio
measure "perf loops report --stdio, warm, on demand" "$TMP/c-perf" "$(real "$build" perf-loops)" report -i "$TMP/perf.data" --stdio
echo "  cold, on demand / perf report = $(ratio "perf loops report --stdio, cold, on demand" "perf report --stdio")"
if [ -n "$base" ]; then
	libpath=$base/.libs
	rm -rf "$TMP/b-perf"
	measure "perf loops report --stdio, cold, before" "$TMP/b-perf" "$(real "$base" perf-loops)" report -i "$TMP/perf.data" --stdio
	echo "  cold, before / perf report = $(ratio "perf loops report --stdio, cold, before" "perf report --stdio")"
	echo "  cold: before / on demand = $(ratio "perf loops report --stdio, cold, before" "perf loops report --stdio, cold, on demand")"
fi
