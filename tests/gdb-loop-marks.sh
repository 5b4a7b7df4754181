#!/bin/sh
# gdb-loop-marks.sh - the loop marks of issue 22 in real GDB: `info loops`
# and `structure` say "(part N of M)" for a source loop made into several
# machine loops, "compiler-made: KIND" for a loop with no loop statement,
# "line guessed: RULE" where a fallback chose the line (sources hidden with
# LOOPSCOPE_NO_SOURCE=1), and `structure -json` carries the same fields as
# `loopscope lookup --json`.
#
# The expected answers: the fixtures' markers (loop_lines.c's LOOP:pump
# line, made.cpp's MADE:name KIND comments) and, for the guessed lines, the
# CLI's text output of the same binary (every output must show the marks).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
[ -x "$LOOPSCOPE" ] || skip_all "loopscope CLI not built"
command -v g++ >/dev/null 2>&1 || skip_all "g++ not installed"

# 1. pump's while (1): gcc -O2 makes it several nested machine loops, each
# at the while's line and numbered in preorder.
PUMP=$(grep -n 'LOOP:pump ' "$FIXTURES/loop_lines.c" | cut -d: -f1)
bin="$TMP/loop_lines"
build_fixture gcc -O2 loop_lines.c "$bin" || fail_all "gcc -O2 loop_lines.c does not build"
gdb_run "$bin" -ex "info loops pump" >"$TMP/pump"
sed -n 's/^ *loop at \(.*\)  header.*/\1/p' "$TMP/pump" >"$TMP/got"
n=$(wc -l <"$TMP/got")
: >"$TMP/want"
i=1
while [ "$i" -le "$n" ]; do
	echo "loop_lines.c:$PUMP (part $i of $n)" >>"$TMP/want"
	i=$((i + 1))
done
[ "$n" -ge 2 ] && cmp -s "$TMP/got" "$TMP/want"
ok_show $? "info loops pump: $n machine loops, all at the while (1) of line $PUMP, parts 1..$n of $n" "$TMP/pump"

hdr=$(sed -n 's/.*(part '"$n"' of '"$n"')  header \(0x[0-9a-f]*\).*/\1/p' "$TMP/pump")
out=$(gdb_run "$bin" -ex "structure $hdr")
parts=$(echo "$out" | grep -c "loop    at loop_lines.c:$PUMP (part [0-9]* of $n)")
[ -n "$hdr" ] && [ "$parts" -eq "$n" ]
ok $? "structure $hdr: the chain shows the $n parts ($parts)"
json=$(gdb_run "$bin" -ex "structure -json $hdr" | grep '^{')
$CHECK compare "$json" "$("$LOOPSCOPE" lookup --json "$bin" "$hdr")"
ok $? "structure -json $hdr equals loopscope lookup --json field by field (part, parts)"
echo "$json" | grep -q "\"part\":$n,\"parts\":$n"
ok $? "structure -json: the innermost loop is \"part\":$n,\"parts\":$n"

# 2. made.cpp: each function's loop marked with what made it.
bin="$TMP/made"
build_fixture g++ -O2 made.cpp "$bin" -D_FORTIFY_SOURCE=2 -fstack-clash-protection ||
	fail_all "g++ -O2 made.cpp does not build"
sed -n 's|.*MADE:\([a-z_]*\) \([a-z ]*[a-z]\) \*/.*|\1 \2|p' "$FIXTURES/made.cpp" >"$TMP/made.want"
while read -r fn kind; do
	gdb_run "$bin" -ex "info loops $fn" >"$TMP/out"
	grep -q "loop at .*compiler-made: $kind)" "$TMP/out"
	ok_show $? "g++ -O2 made.cpp: info loops $fn: compiler-made: $kind" "$TMP/out"
done <"$TMP/made.want"
total=$(gdb_run "$bin" -ex "info loops main" | grep -c "compiler-made")
check_eq "$total" 0 "info loops main: no loop of main marked compiler-made"

# 3. Sources hidden: the guessed lines GDB shows are the CLI's, the same
# (none where DWARF names the loop: gcc's statement rows name forever's
# for (;;) and pump's while (1) since issue 22's stmt-in-loop rule), and
# at least one function shows one (spin).
bin="$TMP/loop_lines"
shown=0
for fn in forever pump spin; do
	got=$(LOOPSCOPE_NO_SOURCE=1 gdb_run "$bin" -ex "info loops $fn" |
		sed -n 's/^ *loop at \([^ ]*\).*line guessed: \([a-z-]*\))$/\1 \2/p')
	want=$(LOOPSCOPE_NO_SOURCE=1 "$LOOPSCOPE" struct --no-cache "$bin" 2>/dev/null |
		sed -n "/^  proc $fn /,/^  proc /p" |
		sed -n 's/^ *loop at \([^ ]*\) \(([^)]*) \)\{0,1\}\[.*line guessed: \([a-z-]*\)\]$/\1 \3/p')
	[ -n "$want" ] && shown=$((shown + 1))
	if [ "$got" = "$want" ]; then
		pass "LOOPSCOPE_NO_SOURCE=1: info loops $fn shows the CLI's guessed lines ($(echo ${want:-none}))"
	else
		fail "LOOPSCOPE_NO_SOURCE=1: info loops $fn shows the CLI's guessed lines"
		diag "gdb: $got"; diag "cli: $want"
	fi
done
[ "$shown" -gt 0 ]
ok $? "LOOPSCOPE_NO_SOURCE=1: some loop of forever, pump or spin is marked line guessed ($shown functions)"
done_testing
