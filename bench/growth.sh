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
#      legitimate baseline.
# Each figure is the median of 3 runs (wall time, peak RSS from GNU time).
# Usage: bench/growth.sh [N]   (from the top of a built tree)
set -u
cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
N=${1:-2500}
LOOPSCOPE=${LOOPSCOPE:-$TOP/loopscope}
PERF_LOOPS=${PERF_LOOPS:-$TOP/perf-loops}
OUT=${BENCH_OUT:-$TOP/bench/out/growth}
mkdir -p "$OUT"
export XDG_CACHE_HOME="$OUT/cache" PERF_BUILDID_DIR="$OUT/buildid"

# median3 CMD...: runs CMD 3 times; prints "SECONDS RSS_MB" of the median run.
median3() {
	for _i in 1 2 3; do
		/usr/bin/time -o "$OUT/t" -f '%e %M' "$@" >/dev/null 2>&1
		tail -n 1 "$OUT/t"
	done | sort -n | sed -n 2p | awk '{ printf "%.2f %.1f", $1, $2 / 1024 }'
}

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
echo "## mmap records of one process, random order (perf loops report vs perf report --stdio)"
printf '%-8s %12s %10s %12s %8s\n' mmaps "loops s" "RSS MB" "perf s" ratio
for m in 25000 50000 100000 200000; do
	python3 "$TOP/tests/hostile-perf.py" mmaps "$OUT/mmaps$m.data" "$m" || exit 1
	set -- $(median3 "$PERF_LOOPS" report -i "$OUT/mmaps$m.data" --stdio)
	p=$(median3 perf report -i "$OUT/mmaps$m.data" --stdio | cut -d' ' -f1)
	printf '%-8s %12s %10s %12s %8s\n' "$m" "$1" "$2" "$p" "$(awk -v a="$1" -v b="$p" 'BEGIN { printf("%.2f", (b > 0) ? a / b : 0) }')"
done

echo
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
