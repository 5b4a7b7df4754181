# tests/core-badinput.sh - loopscope on inputs it cannot (fully) analyze.
#
# The contract (design.md): exit 1 when the input cannot be analyzed, with
# a message that names the file and the reason; exit 0 with a warning on
# stderr when only a part could not be analyzed (corrupt DWARF: the machine
# code is whole); exit 2 on usage errors;
# never a crash (no signal, no sanitizer report).  Inputs are made at test
# time: empty, not ELF, truncated ELF at several sizes, corrupt .debug_info
# and .debug_line (section bytes overwritten with dd at the offsets readelf
# -S gives), no debug info, stripped, addresses outside any code, and three
# hand-written .s files (bytes that do not decode, a jump table into another
# function, overlapping function symbols).
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

[ -x "$LOOPSCOPE" ] || skip_all "$LOOPSCOPE not built"
command -v gcc >/dev/null || skip_all "gcc not installed"

# no_crash RC STDERR-FILE: the process ended by itself and no sanitizer spoke.
no_crash() {
	[ "$1" -lt 128 ] && ! grep -q 'Sanitizer\|runtime error:\|Segmentation fault\|Aborted' "$2"
}

# run_struct FILE: loopscope struct on FILE; sets rc, leaves stderr in $TMP/err.
run_struct() {
	"$LOOPSCOPE" struct --format=json --no-cache "$1" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

# expect_fail FILE REASON-REGEX DESCRIPTION: exit 1, message names FILE and
# matches REASON-REGEX, no crash.
expect_fail() {
	run_struct "$1"
	if [ "$rc" -eq 1 ] && no_crash "$rc" "$TMP/err" && grep -qF "$(basename "$1")" "$TMP/err" &&
	   grep -qiE "$2" "$TMP/err"; then
		pass "$3: exit 1, names the file and the reason"
	else
		fail "$3: exit 1, names the file and the reason"
		diag "exit $rc; stderr: $(head -c 600 "$TMP/err")"
	fi
}

# expect_warned FILE REGEX DESCRIPTION: exit 0 with a structure that still
# has main (the machine code and symbols are whole), and a warning that
# names FILE and matches REGEX (what part was lost); never a crash.
expect_warned() {
	run_struct "$1"
	if [ "$rc" -eq 0 ] && no_crash "$rc" "$TMP/err" && grep -q '"kind":"proc","name":"main"' "$TMP/out" &&
	   grep -F "$(basename "$1")" "$TMP/err" | grep -qiE "warning: .*$2"; then
		pass "$3: exit 0, main still there, a warning names the file and the part lost"
	else
		fail "$3: exit 0, main still there, a warning names the file and the part lost"
		diag "exit $rc; stderr: $(head -c 600 "$TMP/err")"
	fi
}

# expect_ok_quietly_or_warn FILE DESCRIPTION: exit 0, no crash.
expect_ok() {
	run_struct "$1"
	if [ "$rc" -eq 0 ] && no_crash "$rc" "$TMP/err" && [ -s "$TMP/out" ]; then
		pass "$2: exit 0 with a structure"
	else
		fail "$2: exit 0 with a structure"
		diag "exit $rc; stderr: $(head -c 600 "$TMP/err")"
	fi
}

# section_offset_size BINARY SECTION: "OFFSET SIZE" in decimal, from readelf -S.
section_offset_size() {
	_hex=$(readelf -SW "$1" | awk -v s="$2" '
		{ for (i = 1; i <= NF; i++) if ($i == s) { print $(i + 3), $(i + 4); exit } }')
	[ -n "$_hex" ] || return 0
	set -- $_hex
	echo $((0x$1)) $((0x$2))
}

# overwrite BINARY OFFSET COUNT BYTE-SOURCE: dd BYTE-SOURCE over the bytes.
overwrite() {
	dd if="$4" of="$1" bs=1 seek="$2" count="$3" conv=notrunc status=none
}

# ---- files that are not (whole) ELF files ------------------------------------
: >"$TMP/empty"
expect_fail "$TMP/empty" 'empty|not an ELF|too small|truncated' "empty file"

printf 'hello, this is not an executable\n' >"$TMP/text.txt"
expect_fail "$TMP/text.txt" 'not an ELF' "text file"

expect_fail "$TMP/does-not-exist" 'no such file|cannot open|not found' "missing file"

mkdir "$TMP/a-directory"
expect_fail "$TMP/a-directory" 'directory|not a regular|cannot|not an ELF' "directory"

build_fixture gcc -O2 loops.c "$TMP/loops" || { fail "compile loops.c"; done_testing; }
size=$(wc -c <"$TMP/loops")
# ld puts the section header table last: every cut below its end loses (part
# of) it, or the program headers before it, and the file cannot be read.
shend=$(readelf -hW "$TMP/loops" | awk -F: '
	/Start of section headers/ { o = $2 + 0 } /Size of section headers/ { e = $2 + 0 }
	/Number of section headers/ { n = $2 + 0 } END { print o + e * n }')
check_eq "$shend" "$size" "loops: the section header table ends the file (what the cuts below rely on)"
for n in 4 16 52 64 200 1000 4096 $((size / 2)) $((size - 64)); do
	head -c "$n" "$TMP/loops" >"$TMP/trunc-$n"
	expect_fail "$TMP/trunc-$n" 'truncated|not an ELF|too small' "ELF truncated to $n of $size bytes"
done

# ---- corrupt DWARF ---------------------------------------------------------
yes "$(printf '\377')" | tr -d '\n' | head -c 1000000 >"$TMP/ff-bytes"
head -c 1000000 /dev/zero >"$TMP/zero-bytes"
# What the warning says is lost: the DWARF (.debug_info, .debug_abbrev) or
# the line table (.debug_line); the machine code is whole, so exit 0.
reason() {
	case $1 in
	.debug_line) echo 'line table' ;;
	*) echo 'DWARF|debug_info' ;;
	esac
}
for sec in .debug_info .debug_line .debug_abbrev; do
	set -- $(section_offset_size "$TMP/loops" "$sec")
	if [ $# -ne 2 ]; then
		fail "$sec: found with readelf -S"
		continue
	fi
	off=$1 len=$2
	cp "$TMP/loops" "$TMP/all-ff$sec"
	overwrite "$TMP/all-ff$sec" "$off" "$len" "$TMP/ff-bytes"
	expect_warned "$TMP/all-ff$sec" "$(reason "$sec")" "$sec overwritten with 0xff"
	cp "$TMP/loops" "$TMP/mid-zero$sec"
	overwrite "$TMP/mid-zero$sec" $((off + len / 3)) $((len / 3)) "$TMP/zero-bytes"
	if [ "$sec" = .debug_line ]; then
		# Zeros in a line program read as a run of (zero-length) extended
		# opcodes that even llvm-dwarfdump accepts without a word: the rows
		# after them are lost, silently.  Exit 0 with the structure.
		run_struct "$TMP/mid-zero$sec"
		if [ "$rc" -eq 0 ] && no_crash "$rc" "$TMP/err" && grep -q '"kind":"proc","name":"main"' "$TMP/out"; then
			pass "$sec with its middle third zeroed: exit 0, main still there"
		else
			fail "$sec with its middle third zeroed: exit 0, main still there"
			diag "exit $rc; stderr: $(head -c 600 "$TMP/err")"
		fi
	else
		expect_warned "$TMP/mid-zero$sec" "$(reason "$sec")" "$sec with its middle third zeroed"
	fi
	# The section's own bytes shifted by 7: every field misaligned.
	cp "$TMP/loops" "$TMP/shift$sec"
	dd if="$TMP/loops" of="$TMP/shift$sec" bs=1 skip="$off" seek=$((off + 7)) count=$((len - 7)) \
		conv=notrunc status=none
	expect_warned "$TMP/shift$sec" "$(reason "$sec")" "$sec shifted by 7 bytes"
done

# ---- no debug info, stripped ------------------------------------------------
build_fixture gcc -O2 loops.c "$TMP/nodebug" -g0 || fail "compile without -g"
expect_ok "$TMP/nodebug" "binary without debug info"
main_addr=$(nm "$TMP/nodebug" | awk '$3 == "main" { print $1 }')
"$LOOPSCOPE" lookup --json "$TMP/nodebug" "0x$main_addr" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q '"kind":"proc","name":"main"' "$TMP/out"; then
	pass "binary without debug info: main's address is in proc main (from the symbol table)"
else
	fail "binary without debug info: main's address is in proc main (from the symbol table)"
	diag "exit $rc: $(cat "$TMP/out" "$TMP/err" | head -c 600)"
fi

cp "$TMP/loops" "$TMP/stripped"
strip --strip-all "$TMP/stripped"
run_struct "$TMP/stripped"
# procedures from the dynamic symbols: a structure, and one warning that says why it is thin
if no_crash "$rc" "$TMP/err" && [ "$rc" -eq 0 ] && [ -s "$TMP/out" ] &&
   grep -qF "$TMP/stripped: no DWARF debug information" "$TMP/err"; then
	pass "stripped binary: exit 0, a structure, a warning naming the file"
else
	fail "stripped binary: exit 0, a structure, a warning naming the file"
	diag "exit $rc; stderr: $(head -c 600 "$TMP/err")"
fi
entry=$(readelf -h "$TMP/stripped" | awk '/Entry point/ { print $4 }')
"$LOOPSCOPE" lookup --json "$TMP/stripped" "$entry" "0x$main_addr" >"$TMP/out" 2>"$TMP/err"
rc=$?
if no_crash "$rc" "$TMP/err" && [ "$rc" -eq 0 ] && [ "$(grep -c '^{"addr":' "$TMP/out")" -eq 2 ]; then
	pass "stripped binary: lookup of the entry point and main's address: exit 0, two chains"
else
	fail "stripped binary: lookup of the entry point and main's address: exit 0, two chains"
	diag "exit $rc; stderr: $(head -c 600 "$TMP/err")"
fi

# ---- addresses outside any code ---------------------------------------------
"$LOOPSCOPE" lookup --json "$TMP/loops" 0x0 0xffffffffff00 0x10 >"$TMP/out" 2>"$TMP/err"
rc=$?
n_err=$(grep -c '"chain":\[\].*"error"\|"error".*"chain":\[\]' "$TMP/out")
if [ "$rc" -eq 0 ] && [ "$n_err" -eq 3 ]; then
	pass "addresses outside any code: exit 0, three chain:[] objects with an error"
else
	fail "addresses outside any code: exit 0, three chain:[] objects with an error"
	diag "exit $rc; out: $(head -c 600 "$TMP/out"); err: $(head -c 300 "$TMP/err")"
fi

# ---- usage errors ------------------------------------------------------------
"$LOOPSCOPE" >/dev/null 2>&1
check_eq "$?" 2 "no arguments: exit 2"
"$LOOPSCOPE" struct >/dev/null 2>&1
check_eq "$?" 2 "struct without a binary: exit 2"
"$LOOPSCOPE" struct --format=bogus "$TMP/loops" >/dev/null 2>&1
check_eq "$?" 2 "struct --format=bogus: exit 2"
"$LOOPSCOPE" frobnicate "$TMP/loops" >/dev/null 2>&1
check_eq "$?" 2 "unknown subcommand: exit 2"

# ---- hand-written machine code -------------------------------------------------
for s in bad_decode bad_jumptable bad_overlap; do
	if ! gcc -g -o "$TMP/$s" "$FIXTURES/$s.s" 2>"$TMP/cc.err"; then
		fail "$s.s: assemble and link"
		diag "$(cat "$TMP/cc.err")"
		continue
	fi
	run_struct "$TMP/$s"
	if [ "$rc" -eq 0 ] && no_crash "$rc" "$TMP/err"; then
		pass "$s: struct exit 0, no crash"
	else
		fail "$s: struct exit 0, no crash"
		diag "exit $rc; stderr: $(head -c 600 "$TMP/err")"
	fi
	# Every function symbol's first address resolves to some procedure.
	addrs=$(readelf -sW "$TMP/$s" | awk '$4 == "FUNC" && $7 != "UND" && $3 > 0 { print "0x" $2 }')
	# shellcheck disable=SC2086
	"$LOOPSCOPE" lookup --json "$TMP/$s" $addrs >"$TMP/out" 2>"$TMP/err"
	rc=$?
	n_addr=$(echo $addrs | wc -w)
	n_proc=$(grep -c '"kind":"proc"' "$TMP/out")
	if [ "$rc" -eq 0 ] && no_crash "$rc" "$TMP/err" && [ "$n_proc" -eq "$n_addr" ]; then
		pass "$s: all $n_addr function addresses resolve to a procedure"
	else
		fail "$s: all $n_addr function addresses resolve to a procedure"
		diag "exit $rc; $n_proc of $n_addr; out: $(head -c 600 "$TMP/out"); err: $(head -c 300 "$TMP/err")"
	fi
done
# bad_decode: the undecodable bytes are reported.
run_struct "$TMP/bad_decode"
if grep -qiE 'decod|invalid|bad instruction|undecod' "$TMP/err"; then
	pass "bad_decode: a warning names the bytes that do not decode"
else
	fail "bad_decode: a warning names the bytes that do not decode"
	diag "stderr: $(head -c 600 "$TMP/err")"
fi
# bad_jumptable: victim's middle is not placed in dispatch.
victim=$(nm "$TMP/bad_jumptable" | awk '$3 == "victim" { print $1 }')
victim_mid=$(printf '0x%x' $((0x$victim + 3)))
"$LOOPSCOPE" lookup --json "$TMP/bad_jumptable" "$victim_mid" >"$TMP/out" 2>"$TMP/err"
if grep -q '"kind":"proc","name":"victim"' "$TMP/out"; then
	pass "bad_jumptable: the jump table's target inside victim stays in victim"
else
	fail "bad_jumptable: the jump table's target inside victim stays in victim"
	diag "$(head -c 600 "$TMP/out")"
fi

# Two executable sections at one address (found by issue 28's mutation
# campaign: .fini's sh_addr moved into .text broke the line map's
# invariants): exit 1 naming the file and the two sections.
gcc -O2 -g -o "$TMP/overlap" "$FIXTURES/loops.c" && python3 - "$TMP/overlap" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28); shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
sh = lambda i: shoff + i * shentsize
stroff, = struct.unpack_from("<Q", b, sh(shstrndx) + 0x18)
def name(i):
    n, = struct.unpack_from("<I", b, sh(i)); return bytes(b[stroff + n:b.index(b"\0", stroff + n)]).decode()
secs = {name(i): i for i in range(shnum)}
text_addr, = struct.unpack_from("<Q", b, sh(secs[".text"]) + 0x10)
struct.pack_into("<Q", b, sh(secs[".fini"]) + 0x10, text_addr + 0x10)
open(sys.argv[1], "wb").write(b)
PY
run_struct "$TMP/overlap"
[ $rc -eq 1 ] && no_crash $rc "$TMP/err" && grep -q "overlap: corrupt: executable sections .text (0x[0-9a-f]*-0x[0-9a-f]*) and .fini (at 0x[0-9a-f]*) overlap" "$TMP/err"
ok $? "executable sections that overlap: exit 1 naming the file and both sections (exit $rc)"

done_testing
