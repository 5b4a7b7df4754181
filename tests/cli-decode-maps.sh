#!/bin/sh
# tests/cli-decode-maps.sh - loopscope decode of raw runtime addresses
# ([<ffffffffc0a01234>] frames) through the running kernel's maps, read by
# libloopscope (ls_kmap): --kallsyms, --proc-modules, --sys-module, and
# --kaslr-offset, on a made-up kernel: a "vmlinux" and a module .ko built
# here, with code in .text, .text.unlikely, .static_call.text-like and
# .exit.text sections.  The oracle is the kernel's own rule, computed here
# from readelf: the module loader lays the core's code sections out from
# the module's base in section order, each at its alignment, .init ones
# apart; kallsyms prints each symbol at its runtime address.  Every frame
# must be named FUNCTION+OFFSET as that rule places it, in every section
# (through /proc/modules' base alone too), and vmlinux's through the KASLR
# offset (given, or from kallsyms' _text).
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
command -v gcc >/dev/null || skip_all "gcc not installed"
command -v ld >/dev/null || skip_all "ld not installed"

cat >"$TMP/mod.c" <<'EOF'
volatile int sink;
__attribute__((noinline)) void mod_hot(int n) { for (int i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) int mod_other(int n) { return n * 3 + sink; }
__attribute__((noinline, cold)) void mod_cold(int n) { for (int i = 0; i < n; i++) sink -= i * 7; }
/* .init.text among the code sections, as in a real module (the loader
 * leaves it out of the core: the sections after it move) */
__attribute__((noinline, section(".init.text"))) int mod_init(void) { mod_hot(3); return mod_other(2); }
__attribute__((noinline, section(".static_call.text"))) void mod_tramp(void) { sink = 1; }
__attribute__((noinline, section(".exit.text"))) void mod_exit(void) { sink = 0; mod_cold(sink); }
EOF
cat >"$TMP/kern.c" <<'EOF'
void _text(void) {}
volatile int k;
__attribute__((noinline)) void kern_a(int n) { for (int i = 0; i < n; i++) k += i; }
__attribute__((noinline)) void kern_b(int n) { k = n; kern_a(n); }
int main(void) { kern_b(3); return 0; }
EOF
gcc -O2 -g -c -o "$TMP/mod.o" "$TMP/mod.c" && ld -r --build-id=sha1 -o "$TMP/mods/mymod.ko" "$TMP/mod.o" 2>/dev/null ||
	{ mkdir -p "$TMP/mods" && ld -r --build-id=sha1 -o "$TMP/mods/mymod.ko" "$TMP/mod.o"; } ||
	fail_all "gcc and ld -r build the module"
gcc -O2 -g -no-pie -o "$TMP/vmlinux" "$TMP/kern.c" || fail_all "gcc builds the made-up kernel"

# The runtime: the kernel 0xffffffff80000000 above its link addresses, the
# module at 0xffffffffc0a00000.
python3 - "$TMP" <<'PY' || { fail "the runtime files"; done_testing; }
import os, random, re, subprocess, sys
tmp = sys.argv[1]
KASLR, BASE = 0xffffffff80000000, 0xffffffffc0a00000
def run(*a):
    return subprocess.run(a, stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
def sections(path):
    r = []
    for l in run("readelf", "-SW", path).splitlines():
        m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)\s+\S+\s+(\S*)\s+\d+\s+\d+\s+(\d+)", l)
        if m:
            r.append((m.group(1), m.group(2), int(m.group(3), 16), m.group(4), int(m.group(5))))
    return r
def funcs(path):
    return [(p[7], int(p[1], 16), int(p[2]), p[6]) for p in (l.split() for l in run("readelf", "-sW", path).splitlines())
            if len(p) >= 8 and p[3] == "FUNC" and p[6].isdigit() and int(p[2]) > 0]
ko = tmp + "/mods/mymod.ko"
lay, off = {}, 0
for idx, name, size, flags, align in sections(ko):
    if "A" in flags and "X" in flags and not name.startswith(".init"):
        off = (off + max(align, 1) - 1) // max(align, 1) * max(align, 1)
        lay[idx] = (name, off)
        off += size
kf = [f for f in funcs(ko) if f[3] in lay]
vf = funcs(tmp + "/vmlinux")
text = [a for n, a, s, i in vf if n == "_text"][0]
ks = ["%016x T _text" % (text + KASLR)] + ["%016x t %s" % (a + KASLR, n) for n, a, s, i in vf if n != "_text"]
ks += ["%016x t %s\t[mymod]" % (BASE + lay[i][1] + a, n) for n, a, s, i in kf]
open(tmp + "/kallsyms", "w").write("\n".join(ks) + "\n")
open(tmp + "/modules", "w").write("mymod %d 0 - Live 0x%x\n" % (off + 4096, BASE))
os.makedirs(tmp + "/sys/mymod/sections")
for i, (name, o) in lay.items():
    open(tmp + "/sys/mymod/sections/" + name, "w").write("0x%x\n" % (BASE + o))
lines, want = [], []
for n, a, s, i in sorted(kf) + [f for f in sorted(vf) if f[0].startswith("kern_")]:
    # return addresses, named as the kernel's %pB names them: of the call
    # (address - 1), so never at offset 0 and at most at the size (just
    # past a function that ends in a noreturn call)
    for o in (1, s // 2, s):
        rt = ((BASE + lay[i][1] + a if (n, a, s, i) in kf else a + KASLR) + o) % (1 << 64)
        lines.append("[    1.000000]  [<%016x>]" % rt)
        want.append("%s+0x%x" % (n, o))
open(tmp + "/log", "w").write("\n".join(lines) + "\n")
open(tmp + "/want", "w").write("\n".join(want) + "\n")
open(tmp + "/sections", "w").write(" ".join(sorted(v[0] for v in lay.values())))
PY
diag "the module's code sections: $(cat "$TMP/sections")"

# names DECODED: the FUNCTION+OFFSET decode gives each frame ("-": none)
names() {
	awk '/^\[ *[0-9.]*\]  \[</ { if (n) print got; n = 1; got = "-"; next }
		got == "-" && match($0, /# [^ ]*\+0x[0-9a-f]*\//) { got = substr($0, RSTART + 2, RLENGTH - 3) }
		END { if (n) print got }' "$1"
}
decode() { # LABEL OPTIONS...
	_label=$1; shift
	"$LOOPSCOPE" decode --no-cache --vmlinux "$TMP/vmlinux" --modules "$TMP/mods" "$@" <"$TMP/log" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	names "$TMP/out" >"$TMP/got"
	n=$(wc -l <"$TMP/want")
	if [ $rc -eq 0 ] && [ "$n" -gt 20 ] && cmp -s "$TMP/want" "$TMP/got"; then
		pass "$_label: all $n frames named as the loader placed them"
	else
		fail "$_label: frames named as the loader placed them (exit $rc)"
		paste "$TMP/want" "$TMP/got" | awk '$1 != $2' | head -n 6 | sed 's/^/# want, got: /'
		head -c 300 "$TMP/err" | sed 's/^/# /'
	fi
}
decode "--kallsyms" --kallsyms "$TMP/kallsyms"
decode "--proc-modules (the base alone) and --kaslr-offset" --proc-modules "$TMP/modules" --kaslr-offset 0xffffffff80000000
decode "--sys-module and --kaslr-offset" --sys-module "$TMP/sys" --kaslr-offset 0xffffffff80000000

# A kallsyms with its addresses hidden (as to an unprivileged reader).
sed 's/^[0-9a-f]*/0000000000000000/' "$TMP/kallsyms" >"$TMP/hidden"
"$LOOPSCOPE" decode --no-cache --vmlinux "$TMP/vmlinux" --kallsyms "$TMP/hidden" <"$TMP/log" >/dev/null 2>"$TMP/err"
[ $? -ne 0 ] && grep -q "hidden: no _text symbol (kallsyms with addresses hidden?)" "$TMP/err"
ok $? "a kallsyms with hidden addresses: an error naming it"
mkfifo "$TMP/fifo"
timeout 20 "$LOOPSCOPE" decode --no-cache --vmlinux "$TMP/vmlinux" --proc-modules "$TMP/fifo" <"$TMP/log" >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "fifo: not a regular file (a FIFO)" "$TMP/err"
ok $? "a FIFO as --proc-modules: refused at once (exit $rc)"
done_testing
