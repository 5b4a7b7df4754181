#!/bin/sh
# tests/core-escapes.sh - names and paths from the binary never reach the
# terminal raw (issue 28's escapes.sh): a source file name holding an OSC
# title change, a bell, a screen clear, a colour, a newline, a C1 CSI and a
# byte that is not UTF-8, and a symbol name holding such bytes
# (tests/fixtures/escapes.py).  loopscope struct, lookup and decode print
# them with backslash escapes (\033, \n, \377: as GDB and `ls -b` do), one
# scope a line; printable UTF-8 stays as it is; JSON keeps the name itself
# (its own escaping); GDB's text commands escape alike.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

[ -x "$LOOPSCOPE" ] || skip_all "$LOOPSCOPE not built"
command -v gcc >/dev/null || skip_all "gcc not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"
python3 "$FIXTURES/escapes.py" "$TMP" && gcc -O2 -g -o "$TMP/esc" "$TMP/esc.c" && gcc -o "$TMP/names" "$TMP/names.s" &&
	gcc -O2 -g -o "$TMP/wide" "$TMP/wide.c" 2>"$TMP/cc.err" || skip_all "the fixtures do not build: $(head -c 200 "$TMP/cc.err")"
base=$(sed -n 1p "$TMP/expect") full=$(sed -n 2p "$TMP/expect") sym=$(sed -n 3p "$TMP/expect") wide=$(sed -n 5p "$TMP/expect")

# raw FILE: the lines of FILE holding a control character other than tab
# (and the line ends), or a byte that is not UTF-8.
raw() {
	python3 - "$1" <<'PY'
import sys
for n, line in enumerate(open(sys.argv[1], "rb").read().split(b"\n"), 1):
    bad = any(b < 0x20 and b != 9 or b == 0x7f for b in line)
    try:
        t = line.decode("utf-8")
        bad = bad or any(0x80 <= ord(c) < 0xa0 for c in t)
    except UnicodeDecodeError:
        bad = True
    if bad:
        print(n, repr(line)[:120])
PY
}

"$LOOPSCOPE" struct --no-cache "$TMP/esc" >"$TMP/struct" 2>"$TMP/err"
check_eq "$(raw "$TMP/struct")" "" "struct: no control character or stray byte on any line"
grep -Fq "    loop at $base:10 [header 0x" "$TMP/struct" && grep -Fq "      loop at $base:11 [header 0x" "$TMP/struct"
ok $? 'struct: each loop on one line, its file escaped (ESC, BEL, newline, C1 and the stray byte as backslash escapes)'

a=$(sed -n 's/^ *loop at .*:11 \[header \(0x[0-9a-f]*\),.*/\1/p' "$TMP/struct")
"$LOOPSCOPE" lookup "$TMP/esc" "$a" >"$TMP/lookup" 2>&1
check_eq "$(raw "$TMP/lookup")" "" "lookup: no control character or stray byte"
grep -Fq "loop at $full:11 (header $a, depth 2)" "$TMP/lookup"
ok $? "lookup: the loop's full path escaped, on its line"

"$LOOPSCOPE" lookup --json "$TMP/esc" "$a" >"$TMP/json" 2>&1
python3 - "$TMP/json" "$TMP" <<'PY'
import json, os, sys
c = json.load(open(sys.argv[1]))["chain"]
f = [s["file"] for s in c if s["kind"] == "loop"][-1]
# the JSON writer keeps the name: control characters as \u escapes, the
# byte that is not UTF-8 as U+FFFD
want = os.path.join(sys.argv[2], "src-\x1b]0;TITLE-PWNED\x07\x1b[2J\x1b[41mRED\nNL\x9b\ufffd.c")
sys.exit(0 if f == want else 1)
PY
ok $? "lookup --json: the file name itself, escaped the JSON way"

"$LOOPSCOPE" struct "$TMP/names" >"$TMP/names.out" 2>"$TMP/names.err"
check_eq "$(raw "$TMP/names.out")" "" "struct of a binary without DWARF: a symbol's control characters escaped"
grep -Fq "  proc $sym ([no line]) [0x" "$TMP/names.out"
ok $? "struct: the symbol name escaped on its proc line"

off=$(printf '0x%x' $((a - 0x$(nm "$TMP/esc" | sed -n 's/^0*\([0-9a-f]*\) T work$/\1/p'))))
size=$(nm -S "$TMP/esc" | sed -n 's/^[0-9a-f]* 0*\([0-9a-f]*\) T work$/0x\1/p')
printf '[    1.000000] RIP: 0010:work+%s/%s\n' "$off" "$size" | "$LOOPSCOPE" decode -k "$TMP/esc" >"$TMP/decode" 2>&1
check_eq "$(raw "$TMP/decode")" "" "decode: no control character or stray byte"
grep -Fq "# in loop at $full:11, depth 2" "$TMP/decode"
ok $? "decode: the loop's file escaped"

"$LOOPSCOPE" struct "$TMP/wide" >"$TMP/wide.out" 2>&1
grep -Fq "  proc $wide (" "$TMP/wide.out"
ok $? "struct: a UTF-8 name (accents, CJK) printed as it is"

# GDB's text commands (the extension escapes in Python: loopscope_args.escape)
if command -v gdb >/dev/null && [ -f "$top_builddir/gdb-ext/loopscope.py" ] &&
   [ -f "$top_builddir/gdb-ext/.libs/_loopscope.so" ]; then
	gdb -nx -batch -ex "source $top_builddir/gdb-ext/loopscope.py" -ex 'info loops work' -ex "structure *$a" \
		"$TMP/esc" >"$TMP/gdb" 2>&1
	check_eq "$(raw "$TMP/gdb")" "" "GDB info loops and structure: no control character or stray byte"
	grep -Fq "loop at $base:10 " "$TMP/gdb"
	ok $? "GDB: the loop's file escaped as the CLI does"
else
	skip "the GDB extension is not built"
	skip "the GDB extension is not built"
fi
done_testing
