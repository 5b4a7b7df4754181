# tests/core-repro-loops.py - the reproducers of issue 22
# (tests/fixtures/repro-loops/, copied from the shared reproducers, README
# there) built as their README says and read by `loopscope struct`:
#
# - cgoto_spill.s: CPython 3.11's computed-goto dispatch as gcc builds it,
#   the label table's address spilled to a stack slot and reloaded before
#   each `jmp *`; cgoto_reg.s, its control, keeps it in a register;
#   cgoto_nested.s has a branch inside one handler.  Each: no jump left
#   unresolved (no warning, no "unresolved_jumps"), one irreducible
#   dispatch loop whose entries are exactly the handlers op0, op1, op2,
#   and inside it one natural loop per handler, headed by it (the same
#   nest for every handler, whatever the order of the search); halt, the
#   table's exit, in no loop.
# - jt_9defs.s (9 identical definitions of the table base reach the jump),
#   jt_8defs.s (its control), jt_copycycle.s (the base lent to another
#   register and restored: a cycle of copies), jt_nocycle.s (its control):
#   no jump unresolved, one natural loop headed by `next`, every case
#   inside it, `done` outside.
# - jt_hoist.c (gcc and clang -O2): the switch resolved, its loops at the
#   for (line 5) and the do (line 7), nested.
#
# The expected addresses are the assembler's own labels (nm), never
# loopscope's: the handlers and cases are the tables' entries by
# construction of the sources.
import importlib.util
import os
import shutil

_spec = importlib.util.spec_from_file_location(
    "core_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)

REPRO = os.path.join(C.FIXTURES, "repro-loops")


def labels(binary):
    """{symbol: address} of every symbol nm lists (local labels included)."""
    out = {}
    for line in C.run(["nm", binary]).stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            out[f[2]] = int(f[0], 16)
    return out


def proc_and_loops(tree, name):
    """The proc NAME's node and [(loop, depth below the proc)] in it."""
    for n, anc in C.walk(tree):
        if n.get("kind") == "proc" and n.get("name") == name:
            loops = [(m, len(a)) for m, a in C.walk(n) if m.get("kind") == "loop"]
            return n, loops
    return None, []


def in_ranges(node, addr):
    return any(C.hexint(lo) <= addr < C.hexint(hi) for lo, hi in node.get("ranges", ()))


def build(tap, tmp, out, srcs, flags=()):
    cmd = ["gcc"] + list(flags) + ["-pie", "-o", out] + [os.path.join(REPRO, s) for s in srcs]
    r = C.run(cmd)
    if r.returncode != 0:
        tap.ok(False, "build %s" % " ".join(srcs))
        tap.diag(r.stderr)
        return False
    return True


def analyze(tap, binary, proc, tag):
    """struct's JSON, the proc and its loops; checks nothing is unresolved."""
    tree, r = C.struct_json(binary)
    if tree is None:
        tap.ok(False, "%s: loopscope struct --format=json (exit %d)" % (tag, r.returncode))
        tap.diag(r.stderr)
        return None, []
    p, loops = proc_and_loops(tree, proc)
    warned = [l for l in r.stderr.splitlines() if "not resolved" in l]
    tap.ok(p is not None and "unresolved_jumps" not in p and not warned,
           "%s: every indirect jump of %s resolved (no warning, no unresolved_jumps; %s)"
           % (tag, proc, (p or {}).get("unresolved_jumps", 0)))
    for w in warned:
        tap.diag(w)
    return p, loops


def check_cgoto(tap, tmp, stem):
    out = os.path.join(tmp, stem)
    if not build(tap, tmp, out, [stem + ".s", "cgoto_spill_main.c"]):
        return
    lab = labels(out)
    handlers = sorted(lab[h] for h in ("op0", "op1", "op2"))
    p, loops = analyze(tap, out, "run", stem)
    if p is None:
        return
    outer = [l for l, d in loops if l["depth"] == 1]
    ok = len(outer) == 1 and outer[0]["irreducible"] and \
        sorted(C.hexint(e) for e in outer[0]["entries"]) == handlers
    tap.ok(ok, "%s: one irreducible dispatch loop entered at exactly the handlers op0, op1, op2 (%s)"
           % (stem, [(l["header"], l["irreducible"], l["entries"]) for l in outer]))
    inner = [l for l, d in loops if l["depth"] == 2]
    tap.ok(len(loops) == 4 and sorted(C.hexint(l["header"]) for l in inner) == handlers
           and not any(l["irreducible"] for l in inner),
           "%s: inside it, one natural loop headed by each handler, every handler alike (%s)"
           % (stem, [l["header"] for l in inner]))
    tap.ok(not any(in_ranges(l, lab["halt"]) for l, d in loops),
           "%s: halt (the exit the table leads to) is in no loop" % stem)


def check_switch(tap, tmp, stem, ncases):
    out = os.path.join(tmp, stem)
    if not build(tap, tmp, out, [stem + ".s", "jt_manydefs_main.c"]):
        return
    lab = labels(out)
    p, loops = analyze(tap, out, "scan", stem)
    if p is None:
        return
    ok = len(loops) == 1 and C.hexint(loops[0][0]["header"]) == lab["next"] and not loops[0][0]["irreducible"]
    tap.ok(ok, "%s: one natural loop, headed by next (%#x): %s"
           % (stem, lab["next"], [(l["header"], l["irreducible"]) for l, d in loops]))
    if not loops:
        return
    cases = sorted(l for l in lab if l.startswith("case"))
    outside = [c for c in cases if not in_ranges(loops[0][0], lab[c])]
    tap.ok(len(cases) == ncases and not outside and not in_ranges(loops[0][0], lab["done"]),
           "%s: all %d cases in the loop (outside: %s), done outside it" % (stem, len(cases), outside))


def check_hoist(tap, tmp, cc):
    out = os.path.join(tmp, "jt_hoist-" + cc)
    r = C.run([cc, "-O2", "-g", "-fPIE", "-pie", "-o", out, os.path.join(REPRO, "jt_hoist.c")])
    if r.returncode != 0:
        tap.ok(False, "%s -O2 jt_hoist.c" % cc)
        tap.diag(r.stderr)
        return
    tag = "%s -O2 jt_hoist.c" % cc
    p, loops = analyze(tap, out, "flags_of", tag)
    got = [(l["line"], l["depth"], l["irreducible"]) for l, d in loops]
    tap.ok(got == [(5, 1, False), (7, 2, False)],
           "%s: the for at line 5 holds the do at line 7 (%s)" % (tag, got))


def main():
    C.need_tools("gcc", "nm")
    tap = C.Tap()
    tmp = C.scratch_dir()
    for stem in ("cgoto_spill", "cgoto_reg", "cgoto_nested"):
        check_cgoto(tap, tmp, stem)
    for stem, n in (("jt_9defs", 8), ("jt_8defs", 7), ("jt_copycycle", 3), ("jt_nocycle", 3)):
        check_switch(tap, tmp, stem, n)
    for cc in ("gcc", "clang"):
        if shutil.which(cc):
            check_hoist(tap, tmp, cc)
        else:
            tap.skip("%s not installed: jt_hoist.c" % cc)
    tap.done()


main()
