#!/bin/sh
# perf-habits.sh - perf report's options as a perf user types them (issue
# 23), each against perf itself on the same real recording (perf record -e
# cpu-clock --call-graph=fp of a fixture compiled now) where perf has the
# option, else against what the option must do to the default report:
#   -g alone (before --stdio, at the end) and -g with its value apart;
#   --tui/--stdio in every order; -s comm,pid,tid,cpu,srcfile,symoff,
#   dso_size (perf report's rows; symoff against perf script's sym+off);
#   -t SEP; --stats, --header-only (byte for byte) and --header; annotate's
#   -s/--symbol; --sort=own; lost samples counted as perf counts them.
# PERF612=/path/to/perf-6.12 (optional): -s symoff against perf 6.12's too.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed"
export HOME="$TMP/home"
mkdir -p "$HOME"
cd "$TMP" || exit 1
build_fixture gcc -O2 perf/split_loops.c "$TMP/split" -fno-omit-frame-pointer || fail_all "gcc builds the fixture"
perf record -q -N -e cpu-clock --call-graph=fp -o "$TMP/rec.data" "$TMP/split" 6 >/dev/null 2>"$TMP/rec.err" ||
	skip_all "perf record does not work here: $(head -n 1 "$TMP/rec.err")"
D="$TMP/rec.data"
R() { "$PERF_LOOPS" report -i "$D" --no-pager "$@"; }
P() { perf report -i "$D" "$@"; }
R --stdio >"$TMP/default" 2>/dev/null

# -g alone, as perf report takes it
for args in "-g --stdio" "--stdio -g" "-g caller --stdio" "--call-graph --stdio" "-g graph,0.5,caller --stdio"; do
	# shellcheck disable=SC2086
	R $args >"$TMP/g" 2>"$TMP/err"
	rc=$?
	# shellcheck disable=SC2086
	P $args >/dev/null 2>&1
	prc=$?
	[ $rc -eq 0 ] && [ $prc -eq 0 ] && cmp -s "$TMP/g" "$TMP/default"
	ok $? "'$args': perf report takes it (exit $prc), and so does perf loops: the default tree (exit $rc $(head -c 120 "$TMP/err"))"
done

# --tui and --stdio in every order: --stdio wins, as in perf report
for args in "--tui --stdio" "--stdio --tui"; do
	# shellcheck disable=SC2086
	R $args >"$TMP/t" 2>"$TMP/err"
	# shellcheck disable=SC2086
	P $args >"$TMP/pt" 2>/dev/null
	cmp -s "$TMP/t" "$TMP/default" && [ -z "$(without_fp_note "$TMP/err")" ] && grep -q "^# Samples" "$TMP/pt"
	ok $? "'$args' into a file: the --stdio report, as perf report prints its --stdio one"
done

# -s keys: perf report's rows on the same file
rows() { # the non-comment rows with the percentage first: pct and the key columns, spaces squeezed
	grep '^ *[0-9.]*%' "$1" | sed 's/^ *//; s/  */ /g; s/ *$//'
}
P --stdio -q --no-children -g none -s comm,pid,cpu >"$TMP/p" 2>/dev/null
R --stdio -s comm,pid,cpu | awk '$1 ~ /%$/ { $2 = ""; print }' | sed 's/  */ /g' >"$TMP/m" 2>/dev/null
rows "$TMP/p" >"$TMP/pr"
sed 's/^ *//; s/ *$//' "$TMP/m" >"$TMP/mr"
check_eq "$(cat "$TMP/mr")" "$(cat "$TMP/pr")" "-s comm,pid,cpu: perf report's rows (Command, Pid:Command, CPU)"
R --stdio -s tid | grep '%' >"$TMP/tid" 2>/dev/null
R --stdio -s pid | grep '%' >"$TMP/pid" 2>/dev/null
cmp -s "$TMP/tid" "$TMP/pid" && [ -s "$TMP/pid" ]
ok $? "-s tid: the thread, as perf's pid key (Pid:Command)"
# srcfile and dso_size: the fixture's own rows (perf's srcfile of inlined
# code is the caller's file, and its kernel map ends at the last kallsyms
# symbol: those rows differ by design, see the manual)
P --stdio -q --no-children -g none -s dso,srcfile,dso_size >"$TMP/p" 2>/dev/null
R --stdio -s dso,srcfile,dso_size 2>/dev/null | awk '$1 ~ /%$/ { $2 = ""; print }' >"$TMP/m"
check_eq "$(grep ' split ' "$TMP/m" | sed 's/  */ /g; s/^ //')" "$(rows "$TMP/p" | grep ' split ')" \
	"-s dso,srcfile,dso_size: the fixture's rows are perf report's"
# symoff: every sample's symbol+offset as perf script names it, counted
# (the fixture's rows: libc's aliases, memcpy and memmove at one address,
# are named by either; perf's choice among them is its own)
perf script -i "$D" -G -F ip,sym,symoff 2>/dev/null | awk '{ print $2 }' | sort | uniq -c |
	awk '$2 ~ /^run\+/ { print $2, $1 }' | sort >"$TMP/ps"
R --stdio -s symoff 2>/dev/null | awk '$1 ~ /%$/ && $3 == "[.]" && $4 ~ /^run\+/ { print $4, $2 }' | sort >"$TMP/ms"
grep -q '^run+0x' "$TMP/ms" && cmp -s "$TMP/ps" "$TMP/ms"
ok $? "-s symoff: each of run's rows has perf script's samples for that sym+off ($(wc -l <"$TMP/ms") rows)" ||
	grep -f "$TMP/ps" -x -F -v "$TMP/ms" | head -n 3 | while read -r l; do diag "perf loops: $l"; done
if [ -n "${PERF612:-}" ] && [ -x "$PERF612" ]; then
	"$PERF612" report -i "$D" --stdio -q --no-children -g none -s symoff 2>/dev/null | rows /dev/stdin | sort >"$TMP/p"
	R --stdio -s symoff 2>/dev/null | awk '$1 ~ /%$/ { $2 = ""; print }' | sed 's/  */ /g; s/^ //' | sort >"$TMP/m"
	check_eq "$(cat "$TMP/m")" "$(cat "$TMP/p")" "-s symoff: perf 6.12's rows (ties in any order)"
else
	skip "PERF612 not set: -s symoff against perf 6.12"
fi
R --stdio -s socket >/dev/null 2>"$TMP/err"
check_eq "$? $(wc -l <"$TMP/err")" "2 1" "-s socket: perf's key without meaning here, one line saying why"

# -t SEP: perf report -t's values, unpadded (the fixture's and the kernel's
# rows: a stray sample in libc may land in a function with aliases, such as
# __printf_fp_l and __GI___printf_fp_l, and which alias names it is perf's
# choice, as for -s symoff above)
P --stdio -q --no-children -g none -s dso,sym -n -t ';' 2>/dev/null | grep '%' | sed 's/ *; */;/g; s/^ *//; s/ *$//' |
	grep -E '^[^;]*;[^;]*;(split|\[kernel\.kallsyms\]);' >"$TMP/p"
R --stdio -s dso,sym -n -t ';' 2>/dev/null | grep -E '^[^;]*;[^;]*;(split|\[kernel\.kallsyms\]);' >"$TMP/m"
if grep -q ';split;' "$TMP/p"; then
	check_eq "$(cat "$TMP/m")" "$(cat "$TMP/p")" "-t ';' -s dso,sym -n: perf report -t's values, separated"
else
	fail "-t ';' -s dso,sym -n: perf report -t gave no row for split"
fi
R --stdio -t ';' 2>/dev/null | grep -q '^[0-9.]*%;[0-9.]*%;[0-9]*;.*run;\[split\]$'
ok $? "-t ';' on the tree: the columns and the dso separated"
R --stdio -t . >/dev/null 2>&1
check_eq "$?" 2 "-t .: refused (perf reserves '.')"

# --stats, --header-only: byte for byte; --header: the header, then the report
P --stats >"$TMP/p" 2>/dev/null
R --stats >"$TMP/m" 2>/dev/null
cmp -s "$TMP/m" "$TMP/p"
ok $? "--stats: perf report --stats' output, byte for byte"
P --header-only >"$TMP/p" 2>/dev/null
R --header-only >"$TMP/m" 2>/dev/null
cmp -s "$TMP/m" "$TMP/p"
ok $? "--header-only: perf report --header-only's output, byte for byte"
diff "$TMP/m" "$TMP/p" | head -n 5 | while read -r l; do diag "$l"; done
R --header --stdio >"$TMP/h" 2>/dev/null
{ cat "$TMP/p"; cat "$TMP/default"; } | cmp -s - "$TMP/h"
ok $? "--header: the header, then the report"
perf record -q -N -z -e cpu-clock -o "$TMP/z.data" "$TMP/split" 1 >/dev/null 2>&1 &&
	perf report -i "$TMP/z.data" --stats >"$TMP/p" 2>/dev/null &&
	"$PERF_LOOPS" report -i "$TMP/z.data" --stats >"$TMP/m" 2>/dev/null && cmp -s "$TMP/m" "$TMP/p"
ok $? "--stats of a -z recording: COMPRESSED records and those in them, as perf counts them"
perf record -q -N -e cpu-clock -o - "$TMP/split" 1 2>/dev/null >"$TMP/pipe.data"
perf report -i - --header-only <"$TMP/pipe.data" >"$TMP/p" 2>/dev/null
"$PERF_LOOPS" report -i - --header-only <"$TMP/pipe.data" >"$TMP/m" 2>/dev/null
cmp -s "$TMP/m" "$TMP/p"
ok $? "--header-only of pipe data: perf's output, byte for byte"

# annotate's -s and --symbol (perf annotate's), and its messages
"$PERF_LOOPS" annotate -i "$D" --stdio run >"$TMP/a" 2>/dev/null
"$PERF_LOOPS" annotate -i "$D" --stdio -s run >"$TMP/as" 2>/dev/null
"$PERF_LOOPS" annotate -i "$D" --stdio --symbol=run >"$TMP/asym" 2>/dev/null
grep -q "^# perf loops annotate: run " "$TMP/a" && cmp -s "$TMP/a" "$TMP/as" && cmp -s "$TMP/a" "$TMP/asym"
ok $? "annotate -s run and --symbol=run: annotate run"
"$PERF_LOOPS" annotate -i "$D" --stdio --frobnicate >/dev/null 2>"$TMP/err"
grep -q "(perf loops annotate -h)" "$TMP/err"
ok $? "annotate's messages name annotate: $(cat "$TMP/err")"

# --sort=own: the loops by Own, and the header says how to find hot loops
R --stdio --format=loops >"$TMP/total" 2>/dev/null
grep -q "the hot loops are those with the largest Own (--sort=own ranks by it)" "$TMP/total"
ok $? "--format=loops: the header says how to find the hot loops"
R --stdio --sort=own >"$TMP/own" 2>/dev/null
owns=$(awk '$1 ~ /%$/ && $2 ~ /%$/ { sub("%", "", $2); print $2 }' "$TMP/own")
[ -n "$owns" ] && [ "$owns" = "$(printf '%s\n' $owns | sort -rn)" ] && grep -q "loops ranked by their own cost" "$TMP/own"
ok $? "--sort=own: the loops view, ranked by Own ($(echo $owns | tr '\n' ' '))"
check_eq "$(awk '$1 ~ /%$/' "$TMP/own" | sort)" "$(awk '$1 ~ /%$/' "$TMP/total" | sort)" "--sort=own: the same rows as by Total"

# lost samples as perf counts them: LOST_SAMPLES in the header, LOST apart
python3 "$FIXTURES/perf/lost_perfdata.py" "$TMP/lost.data" 65 65 40 || fail "lost_perfdata.py"
perf report -i - --stdio <"$TMP/lost.data" >"$TMP/p" 2>"$TMP/perr"
"$PERF_LOOPS" report -i - --stdio <"$TMP/lost.data" >"$TMP/m" 2>"$TMP/err"
check_eq "$(grep '^# Total Lost Samples' "$TMP/m")" "$(grep '^# Total Lost Samples' "$TMP/p")" \
	"lost samples: perf report's Total Lost Samples ($(grep '^# Total Lost Samples' "$TMP/p"))"
grep -q "1 chunks of events were lost while recording" "$TMP/err"
ok $? "... and the LOST record said apart, as perf's 'lost 1 chunks'"
done_testing
