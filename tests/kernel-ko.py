# tests/kernel-ko.py - a relocatable kernel module (Debian's debug ext4.ko)
# analyzed as it is, against the same module linked by ld.
#
# ld applies every relocation (calls to other sections and to the kernel,
# tail calls, `jmp __x86_return_thunk`) and lays the sections out; the
# kernel's symbols the module calls become stub functions of their own name
# (so a call to panic is a call to a function called panic in both).  The
# structure of every procedure (procedure, inlined calls with call sites,
# loops with lines, depths and irreducibility, statements' lines: everything
# but addresses) must be the same in both for >= 99.5% of the procedures.
# Also: .text addresses are objdump's (symbol values), and no loop is
# irreducible where the linked copy's is not.
import json
import os
import re
import subprocess
import importlib.util

_spec = importlib.util.spec_from_file_location(
    "kernel_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel-common.py"))
K = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(K)
C = K.C

C.need_tools("ld", "as", "readelf")
VMLINUX = K.vmlinux_or_skip()
KO = K.module_path(VMLINUX, "fs/ext4/ext4.ko")
if not KO:
    C.skip_all("no ext4.ko in the kernel debug package")
tmp = C.scratch_dir()
t = C.Tap()

syms = K.symbols(KO)
undef = sorted({s.name for s in syms if s.ndx == "UND" and s.name})
stubs = os.path.join(tmp, "stubs.s")
with open(stubs, "w") as f:
    f.write("\t.text\n")
    for n in undef:
        f.write("\t.globl %s\n\t.type %s,@function\n%s:\n\tret\n\t.size %s,1\n" % (n, n, n, n))
r = C.run(["as", "-o", os.path.join(tmp, "stubs.o"), stubs])
t.ok(r.returncode == 0, "stubs for the %d kernel symbols ext4.ko uses" % len(undef))
linked = os.path.join(tmp, "ext4.linked")
r = C.run(["ld", "-o", linked, "-e", "0", "--no-warn-rwx-segments", KO, os.path.join(tmp, "stubs.o")])
if r.returncode != 0:
    r = C.run(["ld", "-o", linked, "-e", "0", KO, os.path.join(tmp, "stubs.o")])
t.ok(r.returncode == 0, "ld links ext4.ko with the stubs (%s)" % r.stderr.strip()[-200:])


def struct(path):
    out = os.path.join(tmp, os.path.basename(path) + ".json")
    r = C.run([C.LOOPSCOPE, "struct", "--no-cache", "--format=json", "-o", out, path])
    if r.returncode != 0:
        return None
    with open(out) as fp:
        return json.load(fp)


def canon(n):
    """A scope without its addresses: what it is, where in the source, and its children."""
    key = tuple(str(n.get(f)) for f in ("kind", "name", "file", "line", "call_file", "call_line", "depth",
                                          "irreducible"))
    return (key, tuple(sorted(canon(c) for c in n.get("children", []))))


def procs(tree):
    res = {}

    def walk(n):
        if n.get("kind") == "proc":
            k = (K.plain(n.get("name", "")), n.get("file"), n.get("line"))
            res.setdefault(k, []).append(n)
            return
        for c in n.get("children", []):
            walk(c)

    walk(tree)
    return res


a = struct(KO)
b = struct(linked)
t.ok(a is not None and b is not None, "loopscope struct on both")
pa, pb = procs(a or {}), procs(b or {})
common = [k for k in pa if k in pb and len(pa[k]) == 1 and len(pb[k]) == 1]
same = [k for k in common if canon(pa[k][0]) == canon(pb[k][0])]
t.ok(len(common) > 1000, "%d procedures of ext4.ko in both" % len(common))
t.ok(len(same) >= 0.995 * len(common), "%d/%d (%.2f%%) procedures have the same structure (want >= 99.5%%)" %
     (len(same), len(common), 100.0 * len(same) / max(len(common), 1)))
for k in [k for k in common if k not in same][:5]:
    t.diag("differs: %s" % (k,))


def loops(tree, irreducible_only=False):
    n = 0
    stack = [tree]
    while stack:
        x = stack.pop()
        if x.get("kind") == "loop" and (not irreducible_only or x.get("irreducible")):
            n += 1
        stack.extend(x.get("children", []))
    return n


la, lb = loops(a or {}), loops(b or {})
ia, ib = loops(a or {}, True), loops(b or {}, True)
t.ok(la == lb and ia == ib, "loops: %d (%d irreducible) in ext4.ko, %d (%d) linked" % (la, ia, lb, ib))

# .text addresses are objdump's: every .text FUNC symbol's value is its procedure's entry
text_idx = re.search(r"\[\s*(\d+)\]\s+\.text\s", subprocess.run(["readelf", "-SW", KO], stdout=subprocess.PIPE,
                                                               universal_newlines=True).stdout).group(1)
entries = set()


def walk(n):
    if n.get("kind") == "proc" and n.get("ranges"):
        entries.update(int(r[0], 16) for r in n["ranges"])
    for c in n.get("children", []):
        walk(c)


walk(a or {})
textf = [s for s in syms if s.type == "FUNC" and s.ndx == text_idx]
at = sum(1 for s in textf if s.addr in entries)
t.ok(at >= 0.99 * len(textf), "%d/%d .text functions start where objdump and readelf put them" % (at, len(textf)))
t.done()
