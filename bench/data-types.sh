#!/bin/sh
# bench/data-types.sh - what the data-type views cost (issue 25): `perf
# loops report --stdio` (plain, the tree a user reads first) against `-s
# type`, `-s type,typeoff`, `--format=data` and `perf loops annotate
# --data-type`, and `-s sym` (the histogram -s type replaces), on one
# perf.data file, warm caches (the structure cache made by a first report;
# the page cache).  The target (issue 25's "Cost"): -s type within 1.5x of
# plain perf loops report.
#
#   bench/data-types.sh [BUILD_DIR]      (default: the source tree)
#   env: PERF_DATA=existing.data (else recorded now)  REPS=5
#
# Recorded now (without PERF_DATA): xz -6 -T1 from the real-code corpus
# (tests/corpus/corpus.py builds Debian's xz into /var/tmp/loopscope-corpus)
# compressing 12 MB, with `perf loops record` (its DWARF call graphs: what
# a user records), else tests/fixtures/data_layout.c (gcc -O2 -g) when the
# corpus has no xz.
#
# Every command runs REPS times in turn (so that the machine's other load
# falls on all alike); CPU time (user + system, from /usr/bin/time) is the
# figure, wall time is printed too.  Medians and the ratio to the plain
# report.  The last two rows, "cold", run each time with an empty
# structure cache (the first report of a recording: the binaries analyzed
# then), their ratio to the cold plain report.  perf-loops runs as the ELF program itself (not libtool's wrapper
# script, whose shell costs more than the report on a small file).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here}
PERF_LOOPS=${PERF_LOOPS:-$build/perf-loops}
[ -x "$PERF_LOOPS" ] || { echo "data-types.sh: $PERF_LOOPS not built" >&2; exit 1; }
. "$here/bench/perf-loops-elf.sh"
REPS=${REPS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/data-types-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"
data=${PERF_DATA:-}
if [ -z "$data" ]; then
	data="$work/perf.data"
	xz=${LOOPSCOPE_CORPUS_DIR:-/var/tmp/loopscope-corpus}/build/pkg-xz/src/xz/xz
	if [ -x "$xz" ]; then
		# 12 MB of compressible input: the system's own binaries
		find /usr/lib /usr/bin -type f -size +100k 2>/dev/null | sort | head -200 | xargs cat 2>/dev/null |
			head -c 12000000 >"$work/input.bin"
		echo "# recording: perf loops record -- $xz -6 -T1 -c input.bin (12 MB)"
		"$PERF_LOOPS" record -q -o "$data" -- "$xz" -6 -T1 -c "$work/input.bin" >/dev/null 2>"$work/record.err"
	else
		cc -O2 -g -o "$work/data_layout" "$here/tests/fixtures/data_layout.c"
		echo "# recording (no xz in the corpus): perf loops record -- data_layout 20000000"
		"$PERF_LOOPS" record -q -o "$data" -- "$work/data_layout" 20000000 >/dev/null 2>"$work/record.err"
	fi
fi
samples=$("$PERF_LOOPS" report -q -i "$data" --stdio -s sym 2>/dev/null | sed -n 's/^# Samples: \([0-9]*\) .*/\1/p' | head -1)
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $data: $samples samples, $(du -m "$data" | cut -f1) MB"
"$PERF_LOOPS" report -q -i "$data" --stdio >/dev/null 2>&1 # the structure cache, made once
"$PERF_LOOPS" report -q -i "$data" --stdio -s type >/dev/null 2>&1

names="plain type typeoff data annotate sym cold cold_type"
argv_of() {
	case $1 in
	plain) echo "report --stdio" ;;
	type) echo "report --stdio -s type" ;;
	typeoff) echo "report --stdio -s type,typeoff" ;;
	data) echo "report --stdio --format=data" ;;
	annotate) echo "annotate --stdio --data-type" ;;
	sym) echo "report --stdio -s sym" ;;
	cold) echo "report --stdio" ;;
	cold_type) echo "report --stdio -s type" ;;
	esac
}
i=0
while [ $i -lt "$REPS" ]; do
	for n in $names; do
		cache=$work/cache
		case $n in cold*) cache=$work/cold; rm -rf "$cache" ;; esac
		# shellcheck disable=SC2046
		XDG_CACHE_HOME=$cache /usr/bin/time -f "%U %S %e" -o "$work/t" "$PERF_LOOPS" $(argv_of $n) -q -i "$data" \
			>/dev/null 2>&1 || true
		awk -v n=$n '{ printf "%s %.3f %.3f\n", n, $1 + $2, $3 }' "$work/t" >>"$work/times"
	done
	i=$((i + 1))
done
median() { # NAME COLUMN
	awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$work/times" | sort -n |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
printf '%-52s %9s %9s %9s\n' "command (perf loops ...)" "CPU s" "wall s" "CPU ratio"
for n in $names; do
	cpu=$(median $n 2)
	base=$(median plain 2)
	label=$(argv_of $n)
	case $n in cold*) base=$(median cold 2) label="$label  [cold cache]" ;; esac
	ratio=$(echo "$cpu $base" | awk '{ if ($2 > 0) printf "%8.2fx", $1 / $2; else printf "%9s", "-" }')
	printf '%-52s %9.3f %9.3f %s\n' "$label" "$cpu" "$(median $n 3)" "$ratio"
done
