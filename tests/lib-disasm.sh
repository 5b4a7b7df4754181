#!/bin/sh
# tests/lib-disasm.sh - ls_disassemble (the one disassembler: perf loops
# annotate --asm, loopscope decode --decodecode) against objdump, the
# oracle: `objdump -D -b binary -m i386:x86-64` over the same bytes gives
# the same instructions at the same addresses with the same text, in AT&T
# and in Intel syntax (-M intel), and skips the same runs of zeros.  Over
# the .text of a fixture and of libc (through ls_file_read_code), random
# bytes (bad encodings, prefixes, cut instructions) and code with zeros
# written into it; and decode's Code: listing is objdump's, line for line.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
INFO="$top_builddir/tests/file-info"
[ -x "$INFO" ] || skip_all "$INFO not built"
command -v objdump >/dev/null || skip_all "objdump not installed (the oracle)"
command -v objcopy >/dev/null || skip_all "objcopy not installed"

# objdump's listing of raw bytes as "ADDR<tab>TEXT" lines: instruction
# lines only ("ADDR:<tab>BYTES<tab>TEXT"; a long instruction's continuation
# lines carry no text), "..." for skipped zeros (at the address after the
# last instruction: objdump's line has none, so the next one's is used).
objdump_listing() { # FILE VMA [-M intel]
	_f=$1 _vma=$2; shift 2
	objdump -D -b binary -m i386:x86-64 --adjust-vma="$_vma" "$@" "$_f" | awk -F'\t' '
		/^ *[0-9a-f]+:\t/ && NF >= 3 { a = $1; sub(/^ */, "", a); sub(/:$/, "", a)
			if (dots) { print a "\t..."; dots = 0 }
			t = $3; for (i = 4; i <= NF; i++) t = t "\t" $i; print a "\t" t; next }
		/^\t\.\.\.$/ { dots = 1 }
		END { if (dots) print "END\t..." }'
}
# ours, with a skipped run's address moved the same way
ours() { # ARGS of file-info
	"$INFO" "$@" | awk -F'\t' '$2 == "..." { dots = 1; next }
		{ if (dots) { print $1 "\t..."; dots = 0 } print }
		END { if (dots) print "END\t..." }'
}
compare() { # LABEL RAWFILE VMA [intel]
	_label=$1 _raw=$2 _vma=$3 _m=${4:-}
	objdump_listing "$_raw" "$_vma" ${_m:+-M intel} >"$TMP/want"
	ours "$_raw" raw "$_vma" zeros $_m >"$TMP/got"
	n=$(wc -l <"$TMP/want")
	if [ "$n" -gt 0 ] && cmp -s "$TMP/want" "$TMP/got"; then
		pass "$_label${_m:+ (Intel syntax)}: $n lines as objdump's"
	else
		fail "$_label${_m:+ (Intel syntax)}: as objdump"; diff "$TMP/want" "$TMP/got" | head -n 8 | sed 's/^/# /'
	fi
}

build_fixture gcc -O2 loops.c "$TMP/loops" || { fail "gcc -O2 loops.c"; done_testing; }
text_of() { # ELF RAWOUT: .text's bytes; prints its address
	objcopy -O binary --only-section=.text "$1" "$2" &&
	readelf -SW "$1" | sed -n 's/.*\] \.text *PROGBITS *\([0-9a-f]*\) .*/0x\1/p'
}
vma=$(text_of "$TMP/loops" "$TMP/loops.text")
compare "loops -O2 .text" "$TMP/loops.text" "$vma"
compare "loops -O2 .text" "$TMP/loops.text" "$vma" intel

# Through the ELF: ls_file_read_code gives .text's bytes.
size=$(stat -c %s "$TMP/loops.text")
"$INFO" "$TMP/loops" code "$vma" $((vma + size)) zeros >"$TMP/elf"
"$INFO" "$TMP/loops.text" raw "$vma" zeros >"$TMP/raw"
cmp -s "$TMP/elf" "$TMP/raw"; ok $? "ls_file_read_code: the ELF's .text disassembles as its raw bytes"
"$INFO" "$TMP/loops" code 0x10 0x20 >/dev/null 2>"$TMP/err"
[ $? -eq 1 ] && grep -q "loops: no code section holds 0x10-0x20" "$TMP/err"
ok $? "a range no code section holds: an error naming the file"

libc=/lib/x86_64-linux-gnu/libc.so.6
if [ -f "$libc" ]; then
	vma=$(text_of "$libc" "$TMP/libc.text")
	compare "libc .text" "$TMP/libc.text" "$vma"
	head -c 200000 "$TMP/libc.text" >"$TMP/libc.part"
	compare "libc .text (first 200 kB)" "$TMP/libc.part" "$vma" intel
else
	skip "no $libc"
fi

# Random bytes: undefined and cut encodings, stray prefixes, (bad).
python3 -c 'import random, sys; r = random.Random(21); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(65536)))' >"$TMP/random"
compare "64 kB of random bytes" "$TMP/random" 0xffffffff81000000
compare "64 kB of random bytes" "$TMP/random" 0x1000 intel
# Zeros: runs of 1 to 19 written over code, and at the very end.
python3 - "$TMP/loops.text" "$TMP/zeros" <<'EOF'
import random, sys
b = bytearray(open(sys.argv[1], "rb").read())
r = random.Random(8)
for _ in range(len(b) // 40):
    s = r.randrange(len(b))
    b[s:s + r.randrange(1, 20)] = bytes(min(len(b) - s, 19))[: r.randrange(1, 20)]
b += bytes(r.choice([1, 2, 5, 9]))
open(sys.argv[2], "wb").write(bytes(b))
EOF
compare "code with runs of zeros" "$TMP/zeros" 0x401000

# loopscope decode --decodecode: an oops' Code: line laid out as
# scripts/decodecode's objdump prints it.  Oopses in the fixture's
# functions, at every 7th byte of each (instruction starts or not), the
# Code: line 21 bytes before the faulting one and 21 from it, every fifth
# with zeros in it; the listing, without loopscope's loop marks, must be
# objdump's lines over the same bytes.
python3 - "$TMP/loops" "$TMP/oops" "$TMP/oops.want" <<'PY'
import re, subprocess, sys
binary, log, want = sys.argv[1:4]
secs = subprocess.run(["readelf", "-SW", binary], stdout=subprocess.PIPE, universal_newlines=True).stdout
m = re.search(r"\]\s+\.text\s+PROGBITS\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", secs)
base, off, size = (int(x, 16) for x in m.groups())
text = open(binary, "rb").read()[off:off + size]
syms = subprocess.run(["readelf", "-sW", binary], stdout=subprocess.PIPE, universal_newlines=True).stdout
funcs = [(p[7], int(p[1], 16), int(p[2])) for p in (l.split() for l in syms.splitlines())
         if len(p) >= 8 and p[3] == "FUNC" and p[4] == "GLOBAL" and int(p[2]) > 0
         and base <= int(p[1], 16) < base + size]
lines, exp, k = [], [], 0
for name, addr, fsize in sorted(set(funcs)):
    for o in range(0, fsize, 7):
        rip = addr + o
        lo, hi = max(base, rip - 21), min(base + size, rip + 21)
        code = bytearray(text[lo - base:hi - base])
        if k % 5 == 4 and rip - lo > 9:
            code[0:9] = bytes(9)
        k += 1
        fault = rip - lo
        toks = " ".join(("<%02x>" if i == fault else "%02x") % b for i, b in enumerate(code))
        lines += ["[%5d.000000] RIP: 0010:%s+0x%x" % (k, name, o),
                  "[%5d.000000] Code: %s" % (k, toks)]
        raw = binary + ".code"
        open(raw, "wb").write(code)
        for start, title in ((lo, "All code (at link-time addresses)"),
                             (rip, "Code starting with the faulting instruction")):
            exp.append("# " + title)
            out = subprocess.run(["objdump", "-D", "-b", "binary", "-m", "i386:x86-64", "--adjust-vma=%#x" % lo,
                                  "--start-address=%#x" % start, raw],
                                 stdout=subprocess.PIPE, universal_newlines=True).stdout
            for l in out.splitlines():
                m = re.match(r"^ *([0-9a-f]+):\t", l)
                if m:
                    at = int(m.group(1), 16) == rip
                    exp.append("# %s%s%s" % ("*" if at else " ", l, "\t\t<-- trapping instruction" if at else ""))
open(log, "w").write("\n".join(lines) + "\n")
open(want, "w").write("\n".join(exp) + "\n")
PY
"$LOOPSCOPE" decode --decodecode --vmlinux "$TMP/loops" <"$TMP/oops" >"$TMP/oops.out" 2>"$TMP/oops.err"
rc=$?
# the listing's lines, without the timestamp, loopscope's loop marks and
# its closing line
sed -n 's/^\[ *[0-9.]*\]  \(# .*\)/\1/p' "$TMP/oops.out" | grep -v "^# the faulting instruction is in the loop" |
	sed 's/\t\[loop at [^]]*\]$//' >"$TMP/oops.got"
n=$(grep -c "^# All code" "$TMP/oops.want")
[ $rc -eq 0 ] && [ "$n" -gt 20 ] && cmp -s "$TMP/oops.want" "$TMP/oops.got"
ok $? "decode --decodecode: $n Code: lines listed as objdump lists them ($(wc -l <"$TMP/oops.want") lines)"
[ $rc -eq 0 ] || diag "exit $rc: $(head -c 300 "$TMP/oops.err")"
cmp -s "$TMP/oops.want" "$TMP/oops.got" || diff "$TMP/oops.want" "$TMP/oops.got" | head -n 8 | sed 's/^/# /'
grep -q "loop at" "$TMP/oops.out"; ok $? "and the faulting instruction's loop is marked"
done_testing
