# tests/corpus-placement.py - loops stay inside their inlined callee, on the
# real-code corpus (tests/corpus/corpus.py: Lua 5.4 and 5.3, zstd, Eigen,
# {fmt}; gcc and clang, -O2 and -O3, PIE).
#
# The oracle is the DWARF inline tree as llvm-symbolizer --inlining reads
# it, never loopscope: for every loop loopscope reports, every instruction
# address inside the loop's ranges (objdump's) is symbolized; the
# instructions at line 0 (compiler-made code that belongs to no statement)
# are set aside, and the inline chains of the others (outermost first, each
# frame a call: callee name, call file, line and column) have a common
# prefix P.  When P is not
# empty, all of the loop's code comes from one inlined call, and the loop
# must sit inside that callee's [I] scope: the inline scopes above the loop
# in loopscope's tree must begin with P (same callees, same call lines).
# Every such loop must pass (no threshold: this is what the DWARF says).
#
# Printed as well, not asserted: the loops placed deeper than P (where
# loopscope's rule that data moves -- spills, reloads, register copies --
# carrying another inline's line do not vote moved the loop in), with their
# class.
import importlib.util
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


C = _load("core_common", os.path.join(HERE, "core-common.py"))
LLVM_SYMBOLIZER = next((t for t in ("llvm-symbolizer", "llvm-symbolizer-14") if C.shutil.which(t)), None)


def symbolize(binary, addrs):
    """{addr: inline chain outermost first, as (call file basename, call
    line) per inlined call, or None at line 0}, from one llvm-symbolizer
    process (locations only: the frames' files and lines are all this
    needs, and function names would make the output hundreds of MB)."""
    inp = "".join("0x%x\n" % a for a in addrs)
    r = subprocess.run([LLVM_SYMBOLIZER, "--inlining", "--functions=short", "-e", binary],
                       input=inp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    out = {}
    blocks = r.stdout.split("\n\n")
    for a, block in zip(addrs, blocks):
        frames = []  # innermost first: (function, file, line, column)
        lines = block.strip().splitlines()
        for fn, loc in zip(lines[0::2], lines[1::2]):
            path, ln, col = loc.rsplit(":", 2)
            frames.append((fn, path, int(ln) if ln.isdigit() else 0, int(col) if col.isdigit() else 0))
        if not frames or frames[0][2] == 0:
            out[a] = None
            continue
        outer = list(reversed(frames))
        out[a] = tuple(Call(short_name(outer[k][0]), os.path.basename(outer[k - 1][1]), outer[k - 1][2], outer[k - 1][3])
                       for k in range(1, len(outer)))
    return out


def short_name(name):
    """The unqualified name of a demangled function, as llvm-symbolizer
    --functions=short prints it: "float __vector(4) ns::ev<T>::packet<16>(long) const"
    -> "packet"."""
    # Operator names hold the brackets this counts: set them aside.
    ops = []

    def hide(m):
        ops.append(m.group(0))
        return "operator\x01%d\x01" % (len(ops) - 1)
    name = re.sub(r"operator\s*(\(\)|\[\]|<<=|>>=|<=>|<<|>>|<=|>=|->\*?|<|>)", hide, name or "")
    depth, last_paren = 0, -1
    for i, ch in enumerate(name):
        if ch in "<(":
            if ch == "(" and depth == 0 and not name.startswith("(anonymous", i):
                last_paren = i
            depth += 1
        elif ch in ">)":
            depth -= 1
    head = name[:last_paren] if last_paren > 0 else name
    out, depth = [], 0
    for ch in head:  # template arguments out
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    short = "".join(out).strip().split(" ")[-1].split("::")[-1]
    return re.sub("operator\x01(\\d+)\x01", lambda m: ops[int(m.group(1))], short)


class Call(tuple):
    """An inlined call: callee's short name, call file, line and column.
    Two calls are the same when their sites are (a column of 0 is not
    known, and agrees with any) and their callees' names agree (a name
    llvm-symbolizer left mangled, _Z..., agrees with any)."""

    def __new__(cls, callee, file, line, col):
        return tuple.__new__(cls, (callee, file, line, col))

    def __eq__(self, other):
        if tuple(self[1:3]) != tuple(other[1:3]):
            return False
        if self[3] and other[3] and self[3] != other[3]:
            return False  # column 0: not known
        a, b = self[0], other[0]
        return a == b or a.startswith("_Z") or b.startswith("_Z") or not a or not b

    def __ne__(self, other):
        return not self == other

    __hash__ = tuple.__hash__


def common_prefix(chains):
    p = None
    for c in chains:
        if p is None:
            p = c
            continue
        n = 0
        while n < len(p) and n < len(c) and p[n] == c[n]:
            n += 1
        p = p[:n]
        if not p:
            break
    return p or ()


def our_chain(ancestors):
    return tuple(Call(short_name(a.get("name")), os.path.basename(a.get("call_file") or ""),
                      a.get("call_line") or 0, a.get("call_column") or 0)
                 for a in ancestors if a.get("kind") == "inline")


def in_ranges(addrs, ranges):
    import bisect
    out = []
    for lo, hi in ranges:
        i = bisect.bisect_left(addrs, lo)
        while i < len(addrs) and addrs[i] < hi:
            out.append(addrs[i])
            i += 1
    return out


def check_build(b):
    """(checked, wrong, deeper, n loops) for one build, or None and the
    failed process."""
    tree, proc = C.struct_json(b.path)
    if tree is None:
        return None, proc
    loops = [(n, a) for n, a in C.walk(tree) if n.get("kind") == "loop"]
    all_addrs = C.instruction_addresses(b.path)
    per_loop = []
    need = set()
    for node, anc in loops:
        rs = [(C.hexint(lo), C.hexint(hi)) for lo, hi in node.get("ranges", [])]
        addrs = in_ranges(all_addrs, rs)
        per_loop.append(addrs)
        need.update(addrs)
    sym = symbolize(b.path, sorted(need))
    checked, wrong, deeper = 0, [], []
    for (node, anc), addrs in zip(loops, per_loop):
        chains = [sym[a] for a in addrs if sym.get(a) is not None]
        if not chains:
            continue
        want = common_prefix(chains)
        got = our_chain(anc)
        proc = next((a.get("name") for a in anc if a.get("kind") == "proc"), "?")
        desc = "%s: loop %s:%s header %s in %s" % (b.label, os.path.basename(node.get("file") or "?"),
                                                    node.get("line"), node.get("header"), proc)
        if want:
            checked += 1
            if got[:len(want)] != want:
                wrong.append("%s: inside %s, want inside %s" % (desc, fmt_chain(got), fmt_chain(want)))
        if len(got) > len(want) and got[:len(want)] == want:
            deeper.append("%s: inside %s, the DWARF's common chain is %s" % (desc, fmt_chain(got), fmt_chain(want)))
    return (checked, wrong, deeper, len(loops)), None


def fmt_chain(c):
    return " > ".join("%s@%s:%s:%s" % tuple(e) for e in c) or "(the procedure)"


def main():
    if not LLVM_SYMBOLIZER:
        C.skip_all("llvm-symbolizer not installed")
    C.need_tools("gcc", "clang", "objdump")
    C.scratch_dir()
    path = os.path.join(HERE, "corpus", "corpus.py")
    if not os.path.exists(path):
        C.skip_all("tests/corpus/corpus.py not found")
    corpus = _load("corpus", path)
    names = os.environ.get("LOOPSCOPE_CORPUS_PROGRAMS")
    builds, missing = corpus.build_all(names=set(names.split(",")) if names else None)
    if not builds:
        C.skip_all("the corpus is not there (make check-slow-setup fetches and builds it; no deb-src or no network?)")
    tap = C.Tap()
    for m in missing:
        tap.skip("%s: not built (make check-slow-setup builds it)" % m)
    totals = defaultdict(Counter)
    # Two builds at a time: each is one loopscope, one objdump and one
    # llvm-symbolizer process.
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(check_build, builds))
    for b, (res, proc) in zip(builds, results):
        if res is None:
            tap.ok(False, "%s: loopscope struct exited %d" % (b.label, proc.returncode))
            tap.diag(proc.stderr[-1000:])
            continue
        checked, wrong, deeper, n = res
        totals[b.compiler].update({"loops": n, "checked": checked, "wrong": len(wrong), "deeper": len(deeper)})
        tap.ok(not wrong, "%s: %d/%d loops whose code all comes from one inlined call sit inside it (%d loops)"
               % (b.label, checked - len(wrong), checked, n))
        for w in wrong:
            tap.diag("  pulled out: " + w)
        for d in deeper[:20]:
            tap.diag("  deeper than the DWARF's common chain: " + d)
        if len(deeper) > 20:
            tap.diag("  ... and %d more deeper" % (len(deeper) - 20))
    for cc, t in sorted(totals.items()):
        tap.diag("%s: %d loops, %d inside one inlined call, %d pulled out, %d placed deeper than the common chain"
                 % (cc, t["loops"], t["checked"], t["wrong"], t["deeper"]))
    tap.done()


if __name__ == "__main__":
    main()
