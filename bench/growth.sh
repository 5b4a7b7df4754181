#!/bin/sh
# bench/growth.sh [N] - how time and memory grow with hostile or huge input.
#
#   1. one function that is an irreducible nest of N, 2N, 4N, 8N blocks
#      (default N = 2500; bench/irreducible-nest.py): `loopscope struct
#      --no-cache`, next to `objdump -d` of the same file (decoding alone,
#      the lower bound of any structure tool);
#   2. perf.data with 25k, 50k, 100k, 200k MMAP records of one process in
#      random order (tests/hostile-perf.py mmaps): `perf loops report`
#      against `perf report --stdio`;
#   3. the amplification inputs of tests/perf-hostile.sh next to their
#      legitimate baseline;
#   4. perf.data with 2000 MMAP records then a chain of 1250, 2500, 5000, 10k
#      FORK records (tests/hostile-perf.py forkchain): `perf loops report`
#      against `perf report --stdio`;
#   5. inlined calls nested 12.5k, 25k, 50k, 100k deep around one loop
#      (tests/fixtures/gdb/gen_inline.py): `loopscope struct --no-cache`
#      against `llvm-symbolizer --inlining` of the loop's address.
# Each figure is the median of 3 runs (wall time, peak RSS from GNU time).
# Usage: bench/growth.sh [N]   (from the top of a built tree)
#        GROWTH_SECTIONS="4 5" bench/growth.sh   (some of the sections)
set -u
cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
N=${1:-2500}
LOOPSCOPE=${LOOPSCOPE:-$TOP/loopscope}
PERF_LOOPS=${PERF_LOOPS:-$TOP/perf-loops}
OUT=${BENCH_OUT:-$TOP/bench/out/growth}
mkdir -p "$OUT"
export XDG_CACHE_HOME="$OUT/cache" PERF_BUILDID_DIR="$OUT/buildid"

SECTIONS=${GROWTH_SECTIONS:-"1 2 3 4 5"}
want() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf("%.2f", (b > 0) ? a / b : 0) }'; }

# median3 CMD...: runs CMD 3 times; prints "SECONDS RSS_MB" of the median run.
median3() {
	for _i in 1 2 3; do
		/usr/bin/time -o "$OUT/t" -f '%e %M' "$@" >/dev/null 2>&1
		tail -n 1 "$OUT/t"
	done | sort -n | sed -n 2p | awk '{ printf "%.2f %.1f", $1, $2 / 1024 }'
}

if want 1; then
echo "## irreducible nest: one function of n blocks (loopscope struct --no-cache vs objdump -d)"
printf '%-8s %12s %10s %12s\n' blocks "struct s" "RSS MB" "objdump s"
for k in 1 2 4 8; do
	n=$((N * k))
	python3 "$TOP/bench/irreducible-nest.py" "$n" "$OUT/nest$n.s" && gcc -o "$OUT/nest$n" "$OUT/nest$n.s" || exit 1
	set -- $(median3 "$LOOPSCOPE" struct --no-cache "$OUT/nest$n")
	o=$(median3 objdump -d "$OUT/nest$n" | cut -d' ' -f1)
	printf '%-8s %12s %10s %12s\n' "$n" "$1" "$2" "$o"
done
echo
fi

if want 2; then
echo "## mmap records of one process, random order (perf loops report vs perf report --stdio)"
printf '%-8s %12s %10s %12s %8s\n' mmaps "loops s" "RSS MB" "perf s" ratio
for m in 25000 50000 100000 200000; do
	python3 "$TOP/tests/hostile-perf.py" mmaps "$OUT/mmaps$m.data" "$m" || exit 1
	set -- $(median3 "$PERF_LOOPS" report -i "$OUT/mmaps$m.data" --stdio)
	p=$(median3 perf report -i "$OUT/mmaps$m.data" --stdio | cut -d' ' -f1)
	printf '%-8s %12s %10s %12s %8s\n' "$m" "$1" "$2" "$p" "$(ratio "$1" "$p")"
done
echo
fi

if want 3; then
echo "## amplification inputs (perf loops report --stdio) against their legitimate baseline"
printf '%-52s %8s %10s\n' input "s" "RSS MB"
H="python3 $TOP/tests/hostile-perf.py"
$H plain "$OUT/plain.data" && $H ids "$OUT/ids.data" && $H zstd "$OUT/zstd1.data" 1 &&
	$H zstd "$OUT/zstd.data" 20 && $H events "$OUT/events.data" || exit 1
for f in "plain:baseline: 1 event, 50000 samples" "ids:4096 events sharing one 1 MiB id section" \
	 "zstd1:baseline: 1 zstd record inflating to 60 MiB" "zstd:20 zstd records inflating to 60 MiB each" \
	 "events:4096 events x 50000 samples"; do
	set -- $(median3 "$PERF_LOOPS" report -i "$OUT/${f%%:*}.data" --stdio)
	printf '%-52s %8s %10s\n' "${f#*:}" "$1" "$2"
done
echo
fi

if want 4; then
echo "## a chain of forks of a process of 2000 maps (perf loops report vs perf report --stdio)"
printf '%-8s %10s %12s %10s %12s %10s %8s\n' forks "file KB" "loops s" "RSS MB" "perf s" "RSS MB" ratio
for n in 1250 2500 5000 10000; do
	python3 "$TOP/tests/hostile-perf.py" forkchain "$OUT/fork$n.data" "$n" || exit 1
	set -- $(median3 "$PERF_LOOPS" report -i "$OUT/fork$n.data" --stdio)
	p=$(median3 perf report -i "$OUT/fork$n.data" --stdio)
	printf '%-8s %10s %12s %10s %12s %10s %8s\n' "$n" "$(($(stat -c %s "$OUT/fork$n.data") / 1024))" "$1" "$2" \
		"${p% *}" "${p#* }" "$(ratio "$1" "${p% *}")"
done
echo
fi

if want 5; then
echo "## inlined calls nested n deep (loopscope struct --no-cache vs llvm-symbolizer --inlining)"
printf '%-8s %12s %10s %14s %8s\n' depth "struct s" "RSS MB" "symbolizer s" ratio
for n in 12500 25000 50000 100000; do
	python3 "$TOP/tests/fixtures/gdb/gen_inline.py" "$n" "$OUT/inl$n.s" && gcc -o "$OUT/inl$n" "$OUT/inl$n.s" 2>/dev/null || exit 1
	a=0x$(nm "$OUT/inl$n" | sed -n 's/^0*\([0-9a-f]*\) T deep$/\1/p')
	set -- $(median3 "$LOOPSCOPE" struct --no-cache -o /dev/null "$OUT/inl$n")
	y=$(median3 llvm-symbolizer --inlining --obj="$OUT/inl$n" "$a" | cut -d' ' -f1)
	printf '%-8s %12s %10s %14s %8s\n' "$n" "$1" "$2" "$y" "$(ratio "$1" "$y")"
done
fi
