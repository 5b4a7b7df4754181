# bench/perf-loops-elf.sh - sourced by the perf loops benchmarks: in a build
# tree, $PERF_LOOPS is libtool's wrapper script, whose shell costs more than
# a report on a small file; run the ELF program in .libs instead, with the
# build's libraries on LD_LIBRARY_PATH.
if [ -x "$(dirname "$PERF_LOOPS")/.libs/perf-loops" ] && head -c 2 "$PERF_LOOPS" | grep -q '#!'; then
	LD_LIBRARY_PATH=$(cd "$(dirname "$PERF_LOOPS")/.libs" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export LD_LIBRARY_PATH
	PERF_LOOPS=$(dirname "$PERF_LOOPS")/.libs/perf-loops
fi
