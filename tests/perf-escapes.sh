#!/bin/sh
# tests/perf-escapes.sh - perf loops' text outputs on recordings of binaries
# with hostile names (tests/fixtures/escapes.py; issue 28's escapes.sh):
# report --stdio and annotate --stdio escape control characters and bytes
# that are not UTF-8 (the source text's too, its tabs kept); folded output
# keeps one stack a line with its count, a ';' in a name escaped (\073);
# and on a terminal, --stdio cuts rows by display columns, not bytes, so a
# UTF-8 name (CJK: two columns a character) is never cut in the middle of
# a character nor past the width.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
python3 "$FIXTURES/escapes.py" "$TMP" && gcc -O2 -g -o "$TMP/esc" "$TMP/esc.c" && gcc -o "$TMP/names" "$TMP/names.s" &&
	gcc -O2 -g -o "$TMP/wide" "$TMP/wide.c" 2>"$TMP/cc.err" || skip_all "the fixtures do not build: $(head -c 200 "$TMP/cc.err")"
base=$(sed -n 1p "$TMP/expect") sym=$(sed -n 3p "$TMP/expect") symfold=$(sed -n 4p "$TMP/expect") wide=$(sed -n 5p "$TMP/expect")
record() { perf record -q -e cpu-clock -o "$@" >/dev/null 2>"$TMP/rec.err"; }
record "$TMP/esc.data" "$TMP/esc" 30000 || skip_all "perf record does not work here: $(head -n 1 "$TMP/rec.err")"
record "$TMP/names.data" "$TMP/names" || skip_all "perf record does not work here"
record "$TMP/wide.data" "$TMP/wide" 30000 || skip_all "perf record does not work here"

raw() { # the lines holding a control character (not tab) or a byte that is not UTF-8
	python3 - "$1" <<'PY'
import sys
for n, line in enumerate(open(sys.argv[1], "rb").read().split(b"\n"), 1):
    bad = any(b < 0x20 and b != 9 or b == 0x7f for b in line)
    try:
        bad = bad or any(0x80 <= ord(c) < 0xa0 for c in line.decode("utf-8"))
    except UnicodeDecodeError:
        bad = True
    if bad:
        print(n, repr(line)[:120])
PY
}

"$PERF_LOOPS" report --stdio -i "$TMP/esc.data" >"$TMP/report" 2>"$TMP/err"
check_eq "$(raw "$TMP/report")" "" "report --stdio: no control character or stray byte"
grep -Fq "loop at $base:10" "$TMP/report" && grep -Fq "loop at $base:11" "$TMP/report"
ok $? "report --stdio: each loop's file escaped, on its row"

"$PERF_LOOPS" report --format=folded -i "$TMP/esc.data" >"$TMP/folded" 2>"$TMP/err"
"$PERF_LOOPS" report --format=folded -i "$TMP/names.data" >>"$TMP/folded" 2>>"$TMP/err"
check_eq "$(raw "$TMP/folded")" "" "folded: no control character or stray byte"
check_eq "$(grep -cv ' [0-9][0-9]*$' "$TMP/folded")" 0 "folded: every line is one stack and its count (no newline split one)"
basefold=$(printf '%s' "$base" | sed 's/;/\\073/g')
grep -Fq "work;loop at $basefold:10;loop at $basefold:11 " "$TMP/folded"
ok $? "folded: the loops as frames, their files escaped"
grep -Fq "main;$symfold;loop at [no line] " "$TMP/folded" || grep -Fq "$symfold;loop at [no line] " "$TMP/folded"
ok $? "folded: a ';' in a symbol escaped (as octal 073), so the frame stays one"

"$PERF_LOOPS" report --stdio -i "$TMP/names.data" >"$TMP/names.report" 2>"$TMP/err"
check_eq "$(raw "$TMP/names.report")" "" "report --stdio, a symbol with control characters: escaped"
grep -Fq "$sym" "$TMP/names.report"
ok $? "report --stdio: the symbol escaped as loopscope struct escapes it"

"$PERF_LOOPS" annotate --stdio -i "$TMP/esc.data" work >"$TMP/annotate" 2>"$TMP/err"
ok $? "annotate --stdio work exits 0"
check_eq "$(raw "$TMP/annotate")" "" "annotate: no control character or stray byte (file names and source text)"
grep -Fq "for (long i = 0; i < n; i++) {   /* \\033]0;SOURCE-PWNED\\007 */" "$TMP/annotate"
ok $? "annotate: the source's own escape sequences shown escaped, on their line"

# On a terminal of 100 columns: rows cut by columns, whole characters (the
# name is 82 columns and 128 bytes).
if command -v script >/dev/null 2>&1; then
	COLUMNS=100 script -qec "$PERF_LOOPS report --stdio --no-pager --stdio-color=never -i $TMP/wide.data" /dev/null \
		>"$TMP/tty" 2>/dev/null
	python3 - "$TMP/tty" "$wide" >"$TMP/cut" <<'PY'
import sys, unicodedata
def width(s):
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1 for c in s)
text = open(sys.argv[1], "rb").read().replace(b"\r", b"")
try:
    lines = text.decode("utf-8").split("\n")
except UnicodeDecodeError as e:
    print("not UTF-8: a character was cut (%s)" % e); sys.exit()
rows = [l for l in lines if "計算" in l]
if not rows:
    print("no row names the UTF-8 procedure"); sys.exit()
# a cut row ends "NAME-PREFIX...  [wide]" and fills the width (99: when the
# next character is a wide one), an uncut one holds the whole name
bad = [l for l in rows if not (sys.argv[2] + "  [wide]" in l and width(l) <= 100) and
       not (99 <= width(l) <= 100 and l.endswith("...  [wide]"))]
print("ok" if not bad else "rows: %r, %d columns" % (bad[0], width(bad[0])))
PY
	check_eq "$(cat "$TMP/cut")" ok "a terminal of 100 columns: the UTF-8 name cut by columns, between characters, the row filling the width (not by bytes)"
else
	skip "script(1) not installed: no terminal to test the cut on"
fi
done_testing
