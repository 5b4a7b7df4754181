#!/usr/bin/env python3
# tests/unwind-recipes.py - the unwind recipes (libloopscope/unwind/recipes.c,
# `loopscope unwind`) on fixtures with known answers.
#
#  1. tests/fixtures/unwind.s, hand-written frames with no CFI at all, one
#     pattern of the PLDI 2009 paper each (pushes and pops, several
#     epilogues, shrink-wrapping, a frame pointer with alloca and leave, a
#     realigned frame, gcc's DRAP frame, a tail call, code after a call that
#     never returns, a return repair, a jump table, a .cold part that is a
#     function of its own, a PLT stub): the recipe at each marked label,
#     exactly (the expectations are below, with why);
#  2. a C fixture built by gcc and clang at -O0..-O3, with and without frame
#     pointers: the recipes of every instruction equal the compiler's CFI
#     read by libdw (tests/unwind-oracle), except in _start, whose CFI marks
#     the outermost frame (return address undefined) and does not follow its
#     pop and its alignment;
#  3. the same recipes with the cache off, on a miss and on a hit (they are
#     computed per procedure from the scope tree, which the cache stores);
#  4. --json, and the errors: an address in no procedure, a bad binary.
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import importlib.util
_spec = importlib.util.spec_from_file_location("core_common", os.path.join(HERE, "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)

ORACLE = os.path.join(C.TOP_BUILDDIR, "tests", "unwind-oracle")

# label -> (CFA, return address, caller's rbp, rule): what `loopscope unwind`
# prints for the instruction at the label.
EXPECT = {
    "frameless":         ("rsp+8", "[CFA-8]", "same", "entry"),        # the call pushed the return address
    "frameless_1":       ("rsp+16", "[CFA-8]", "same", "push"),
    "frameless_2":       ("rsp+24", "[CFA-8]", "same", "push"),
    "frameless_3":       ("rsp+64", "[CFA-8]", "same", "sp-adjust"),   # sub $0x28
    "frameless_4":       ("rsp+64", "[CFA-8]", "same", "sp-adjust"),   # after the call: unchanged
    "frameless_5":       ("rsp+24", "[CFA-8]", "same", "sp-adjust"),
    "frameless_6":       ("rsp+16", "[CFA-8]", "same", "pop"),
    "frameless_7":       ("rsp+8", "[CFA-8]", "same", "pop"),
    "frameless_early":   ("rsp+64", "[CFA-8]", "same", "branch"),      # the second epilogue: what the je brings
    "shrinkwrap_1":      ("rsp+8", "[CFA-8]", "same", "pop"),          # before the prologue ran (no canonical
                                                                       # frame); the same recipe as the ret's
    "shrinkwrap_2":      ("rsp+16", "[CFA-8]", "same", "push"),
    "shrinkwrap_3":      ("rsp+8", "[CFA-8]", "same", "pop"),
    "framed_1":          ("rsp+16", "[CFA-8]", "[CFA-16]", "bp-save"), # push %rbp saves the caller's
    "framed_2":          ("rbp+16", "[CFA-8]", "[CFA-16]", "frame-setup"),
    "framed_3":          ("rbp+16", "[CFA-8]", "[CFA-16]", "variable"), # alloca: SP unknown, BP holds
    "framed_4":          ("rbp+16", "[CFA-8]", "[CFA-16]", "variable"),
    "framed_5":          ("rsp+8", "[CFA-8]", "same", "frame-teardown"), # leave
    "realigned_1":       ("rbp+16", "[CFA-8]", "[CFA-16]", "align"),
    "realigned_2":       ("rbp+16", "[CFA-8]", "[CFA-16]", "align"),   # sub/call: SP unknown, the CFA from BP
    "realigned_3":       ("rbp+16", "[CFA-8]", "[CFA-16]", "frame-teardown"),
    "realigned_4":       ("rsp+8", "[CFA-8]", "same", "bp-restore"),
    "drap_1":            ("rsp+8", "[CFA-8]", "same", "entry"),        # lea 8(%rsp),%r10: SP still known
    "drap_2":            ("r10+0", "[CFA-8]", "same", "align"),        # and $-32,%rsp: r10 is the CFA
    "drap_3":            ("[rbp-8]", "[CFA-8]", "[rbp+0]", "push"),    # push %r10: the CFA kept in the frame
    "drap_4":            ("[rbp-8]", "[CFA-8]", "[rbp+0]", "push"),    # r10 died in the call; the slot holds
    "drap_5":            ("r10+0", "[CFA-8]", "same", "frame-teardown"),
    "drap_6":            ("rsp+8", "[CFA-8]", "same", "sp-copy"),      # lea -8(%r10),%rsp
    "tailcall_2":        ("rsp+8", "[CFA-8]", "same", "pop"),          # the jmp leaf: the frame is gone
    "tailcall_1":        ("rsp+16", "[CFA-8]", "same", "branch"),      # after the tail call, by the jne
    "tailcall_3":        ("rsp+16", "[CFA-8]", "same", "branch"),
    "noreturn_call_1":   ("rsp+8", "[CFA-8]", "same", "branch"),       # not the rsp+16 of the abort call
    "noreturn_call_2":   ("rsp+16", "[CFA-8]", "same", "branch"),
    "ret_repair_1":      ("rsp+24", "[CFA-8]", "same", "ret-repair"),  # mov %rsi,%rsp lost SP; the ret finds it
    "ret_repair_2":      ("rsp+16", "[CFA-8]", "same", "ret-repair"),
    "ret_repair_3":      ("rsp+8", "[CFA-8]", "same", "ret-repair"),
    "switcher_c0":       ("rsp+16", "[CFA-8]", "same", "push"),        # jump-table cases keep the frame
    "switcher_c3":       ("rsp+16", "[CFA-8]", "same", "push"),
    "switcher_1":        ("rsp+16", "[CFA-8]", "same", "push"),
    "switcher_out":      ("rsp+16", "[CFA-8]", "same", "branch"),
    "hot_1":             ("rsp+48", "[CFA-8]", "[CFA-16]", "sp-adjust"),
    "hot.cold":          ("rsp+48", "[CFA-8]", "[CFA-16]", "cold"),    # the hot part's frame, not an entry's
    "hot.cold_1":        ("rsp+48", "[CFA-8]", "[CFA-16]", "cold"),
    "leaf_1":            ("rsp+8", "[CFA-8]", "same", "entry"),
}

LINE = re.compile(r"^0x([0-9a-f]+) \S+: 0x[0-9a-f]+-0x[0-9a-f]+\s+CFA=(\S+)\s+ra=(\S+)\s+rbp=(\S+)\s+(\S+)")


def labels(binary):
    out = {}
    for line in C.run(["nm", binary]).stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            out[f[2]] = int(f[0], 16)
    return out


def check_asm_fixture(tap, tmp):
    binary = os.path.join(tmp, "unwind")
    r = C.run(["gcc", "-o", binary, os.path.join(C.FIXTURES, "unwind.s")])
    if not tap.ok(r.returncode == 0, "the hand-written frames assemble and link"):
        tap.diag(r.stderr)
        return
    tap.ok(C.run([binary]).returncode == 0, "and run")
    syms = labels(binary)
    names = sorted(EXPECT)
    r = C.run([C.LOOPSCOPE, "unwind", "--no-cache", binary] + ["0x%x" % syms[n] for n in names])
    got = {}
    for line in r.stdout.splitlines():
        m = LINE.match(line)
        if m:
            got[int(m.group(1), 16)] = m.groups()[1:]
    for n in names:
        g = got.get(syms[n])
        tap.ok(g == EXPECT[n], "%s: CFA=%s ra=%s rbp=%s (%s)" % ((n,) + EXPECT[n]))
        if g != EXPECT[n]:
            tap.diag("got %s" % (g,))
    # The PLT stub of abort: counted straight through its push.
    r = C.run([C.LOOPSCOPE, "unwind", "--no-cache", binary])
    plt = re.findall(r"^abort@plt.*\n((?:  .*\n)+)", r.stdout, re.M)
    rows = plt[0].splitlines() if plt else []
    tap.ok(len(rows) >= 2 and "CFA=rsp+8" in rows[0] and "plt" in rows[0] and "CFA=rsp+16" in rows[1],
           "abort@plt: rsp+8, then rsp+16 after its push")
    tap.ok(re.search(r"^# \d+ procedures, \d+ recipes: .* 0 returns reached with an unexpected frame", r.stdout, re.M)
           is not None, "no return reached with an unexpected frame")


C_FIXTURE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
static jmp_buf env;
__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) int varframe(int n) { char *p = __builtin_alloca(n + 1); memset(p, 1, n); int s = 0;
	for (int i = 0; i < n; i++) s += p[i] * leaf(i); return s; }
__attribute__((noinline)) int early(int *p) { if (!p) return 0; int s = 0; for (int i = 0; i < 10; i++) s += leaf(p[i]);
	return s + varframe(s & 63); }
__attribute__((noinline)) int many(int a, int b, int c, int d, int e, int f, int g, int h) { return a+b+c+d+e+f+g+h; }
__attribute__((noinline)) int caller(int x) { return many(x, 1, 2, 3, 4, 5, 6, 7) + many(7, 6, 5, 4, 3, 2, 1, x); }
__attribute__((noinline)) int sw(int op, int a) { switch (op) { case 0: return a + 11; case 1: return leaf(a) * 3;
	case 2: return a ^ 0x55; case 3: return leaf(a + 7); case 4: return a >> 2; default: return 0; } }
__attribute__((noinline, noreturn)) void bail(int code) { longjmp(env, code); }
__attribute__((noinline)) int checked(int x) { if (x < 0) bail(x); return x + leaf(x); }
__attribute__((noinline)) double aligned(int n) { double v[8] __attribute__((aligned(64))); for (int i = 0; i < 8; i++)
	v[i] = leaf(i + n); double s = 0; for (int i = 0; i < 8; i++) s += v[i]; return s; }
int main(int argc, char **argv) { int a[10] = { argc }; if (setjmp(env)) return 1;
	printf("%d %d %d %d %f\n", early(a), caller(argc), sw(argc, 3), checked(argc), aligned(argc)); return 0; }
"""


def check_against_cfi(tap, tmp):
    if not os.access(ORACLE, os.X_OK):
        tap.skip("tests/unwind-oracle not built")
        return
    src = os.path.join(tmp, "frames.c")
    with open(src, "w") as f:
        f.write(C_FIXTURE)
    for cc, _ in C.compilers("c"):
        for opt in ("-O0", "-O1", "-O2", "-O3"):
            for fp in ("-fomit-frame-pointer", "-fno-omit-frame-pointer"):
                out = os.path.join(tmp, "frames-%s%s%s" % (cc, opt, fp[:6]))
                r = C.run([cc, opt, "-g", fp, "-o", out, src])
                if r.returncode != 0:
                    tap.ok(False, "%s %s %s builds" % (cc, opt, fp))
                    tap.diag(r.stderr)
                    continue
                r = C.run([ORACLE, "--list", "--examples", "0", out], env=dict(os.environ, LOOPSCOPE_NO_CACHE="1"))
                res = re.search(r"^RESULT (\{.*\})$", r.stdout, re.M)
                if not tap.ok(res is not None, "%s %s %s: the oracle runs" % (cc, opt, fp)):
                    tap.diag(r.stdout[-2000:] + r.stderr[-2000:])
                    continue
                counts = json.loads(res.group(1))
                others = [l for l in r.stdout.splitlines() if l.startswith("D\t") and l.split("\t")[2] != "_start"]
                tap.ok(counts["covered"] > 100 and not others,
                       "%s %s %s: the recipes of %d instructions are the CFI's (outside _start)" %
                       (cc, opt, fp, counts["covered"]))
                for l in others[:10]:
                    tap.diag(l)


def check_cache(tap, tmp):
    binary = os.path.join(tmp, "unwind")
    if not os.path.exists(binary):
        return
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache-recipes"))
    off = C.run([C.LOOPSCOPE, "unwind", "--json", "--no-cache", binary], env=env)
    miss = C.run([C.LOOPSCOPE, "unwind", "--json", "-v", binary], env=env)
    hit = C.run([C.LOOPSCOPE, "unwind", "--json", "-v", binary], env=env)
    tap.ok(off.returncode == 0 and off.stdout and off.stdout == miss.stdout == hit.stdout,
           "the recipes are the same without the cache, on a miss and on a hit")
    tap.ok("cache" in miss.stderr.lower() and "miss" in miss.stderr.lower(), "-v says the first run missed")


def check_json_and_errors(tap, tmp):
    binary = os.path.join(tmp, "unwind")
    if not os.path.exists(binary):
        return
    syms = labels(binary)
    r = C.run([C.LOOPSCOPE, "unwind", "--json", "--no-cache", binary, "framed_2", "0x1"])
    lines = [json.loads(l) for l in r.stdout.splitlines()]
    ok = (r.returncode == 0 and len(lines) == 2 and lines[0]["proc"] == "framed" and
          lines[0]["entry"] == "0x%x" % syms["framed"] and lines[0]["recipe"]["cfa"] == "rbp" and
          lines[0]["recipe"]["cfa_offset"] == 16 and lines[0]["recipe"]["ra_offset"] == -8 and
          lines[0]["recipe"]["rbp"] == "saved" and lines[0]["recipe"]["rbp_offset"] == -16 and
          lines[0]["recipe"]["fp_chain"] is True and lines[0]["recipe"]["rule"] == "frame-setup" and
          "no procedure at 0x1" in lines[1].get("error", ""))
    tap.ok(ok, "--json: the recipe of framed_2 (rbp+16, fp chain), and an error for an address in no procedure")
    if not ok:
        tap.diag(r.stdout + r.stderr)
    bad = os.path.join(tmp, "not-elf")
    with open(bad, "w") as f:
        f.write("not an ELF file\n")
    r = C.run([C.LOOPSCOPE, "unwind", "--no-cache", bad])
    tap.ok(r.returncode == 1 and bad in r.stderr, "a file that is not ELF: exit 1, the file named")


def main():
    C.need_tools("gcc", "nm")
    tap = C.Tap()
    tmp = C.scratch_dir()
    check_asm_fixture(tap, tmp)
    check_against_cfi(tap, tmp)
    check_cache(tap, tmp)
    check_json_and_errors(tap, tmp)
    tap.done()


main()
