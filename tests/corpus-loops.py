#!/usr/bin/env python3
# tests/corpus-loops.py - loops of real programs against clang's own loops.
#
# The corpus (tests/corpus/corpus.py: Lua 5.4 with computed goto, Lua 5.3
# with a switch, zstd, Eigen, {fmt}; Debian's sources built PIE with gcc
# and clang at -O2/-O3) is analyzed with loopscope struct --format=json.
#
# 1. clang's builds carry clang's machine-loop annotations: every loop's
#    header address and depth.  >= 99.5% of them must be loops of ours with
#    the same header and depth.  clang's LoopInfo has natural loops only, so
#    an irreducible loop of ours around a natural one is a level clang does
#    not count: a depth matches with or without the irreducible loops
#    around it.
# 2. Extra loops (a header clang does not name) <= 0.5% of clang's loops.
#    An extra loop that is irreducible is a cycle clang's LoopInfo cannot
#    represent, not an error - when it is a cycle: checked independently,
#    with llvm-objdump's decoding, as a cycle through one of its entries
#    made of the direct branches and fall-throughs of its own code.  Those
#    are reported and not counted; every other extra loop is counted.
# 3. The dispatch loops of the interpreters (luaV_execute of Lua 5.4,
#    computed goto, and of Lua 5.3, a switch; CPython 3.11's
#    _PyEval_EvalFrameDefault, computed goto, whose label table gcc keeps
#    in a stack slot): in every build (gcc and clang) each indirect jump of
#    the dispatch function sits inside a loop of ours; for the computed
#    gotos, that loop holds every handler the label table (disptab,
#    opcode_targets, read with nm and readelf) points to that can get back
#    to a dispatch jump - seen in llvm-objdump's decoding, following
#    direct branches and fall-through, a call to abort() and the like
#    ending the path (CPython's CACHE handler is Py_UNREACHABLE()).  In
#    clang's builds, clang's loops of the dispatch function are found with
#    their header and depth: all of Lua's, >= 99.5% of CPython's.
# 4. No procedure of the corpus has an indirect jump left unresolved (the
#    "unresolved_jumps" field, and its warning).
import bisect
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("core_common", os.path.join(HERE, "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)
sys.path.insert(0, os.path.join(HERE, "corpus"))
import corpus  # noqa: E402

MATCH_MIN = 99.5
EXTRA_MAX = 0.5
# program -> (dispatch function, its label table's symbol (a substring), or None)
INTERPRETERS = {
    "lua5.4": ("luaV_execute", "disptab"),
    "lua5.3": ("luaV_execute", None),
    "python3.11": ("_PyEval_EvalFrameDefault", "opcode_targets"),
}


def walk(node, ancestors=()):
    yield node, ancestors
    for c in node.get("children", []):
        yield from walk(c, ancestors + (node,))


def our_loops(tree):
    """header -> [(loop node, its proc's name, irreducible loops around it)]"""
    loops = {}
    for n, anc in walk(tree):
        if n.get("kind") != "loop":
            continue
        procs = [a for a in anc if a.get("kind") == "proc"]
        irr = sum(1 for a in anc if a.get("kind") == "loop" and a.get("irreducible"))
        loops.setdefault(int(n["header"], 16), []).append((n, procs[-1]["name"] if procs else "?", irr))
    return loops


# ---- the independent check of an irreducible extra loop: llvm-objdump ------

_insn = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
_target = re.compile(r"^0x([0-9a-f]+)\b")


_disassembly = {}


def objdump_insns(binary, lo, hi):
    """[(addr, mnemonic, direct target or None)] of [lo, hi), llvm-objdump's
    (the whole binary is disassembled once)."""
    if binary not in _disassembly:
        r = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn", binary], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, universal_newlines=True)
        insns = []
        for line in r.stdout.splitlines():
            m = _insn.match(line)
            if not m:
                continue
            t = _target.match(m.group(3).strip())
            insns.append((int(m.group(1), 16), m.group(2), int(t.group(1), 16) if t else None))
        insns.sort()
        _disassembly[binary] = (insns, [a for a, _, _ in insns])
    insns, keys = _disassembly[binary]
    return insns[bisect.bisect_left(keys, lo):bisect.bisect_left(keys, hi)]


def is_cycle(binary, loop):
    """Whether one of LOOP's entries lies on a cycle of direct branches and
    fall-throughs that stays in the loop's own ranges."""
    insns = []
    for lo, hi in loop.get("ranges", []):
        insns += objdump_insns(binary, int(lo, 16), int(hi, 16))
    if not insns:
        return False
    addrs = {a for a, _, _ in insns}
    succ = {}
    for i, (a, mn, t) in enumerate(insns):
        s = []
        if mn.startswith("j") or mn.startswith("loop"):
            if t is not None and t in addrs:
                s.append(t)
            uncond = mn.startswith("jmp")
        else:
            uncond = mn.startswith("ret") or mn in ("ud2", "hlt", "int3")
        if not uncond and i + 1 < len(insns):
            s.append(insns[i + 1][0])
        succ[a] = s
    for e in loop.get("entries", [loop["header"]]):
        start = int(e, 16)
        seen, stack = set(), list(succ.get(start, []))
        while stack:
            x = stack.pop()
            if x == start:
                return True
            if x in seen:
                continue
            seen.add(x)
            stack.extend(succ.get(x, []))
    return False


# ---- the dispatch jumps ------------------------------------------------------

def proc_range(binary, name):
    for line in subprocess.run(["nm", "-S", binary], stdout=subprocess.PIPE, universal_newlines=True,
                               stderr=subprocess.DEVNULL).stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[3] == name:
            return int(f[0], 16), int(f[0], 16) + int(f[1], 16)
    return None


def dispatch_ranges(binary, func):
    """The address ranges of FUNC: its symbol, and its .cold part (gcc)."""
    return [r for r in (proc_range(binary, func), proc_range(binary, func + ".cold")) if r]


def dispatch_jumps(binary, func):
    """Addresses of FUNC's indirect jumps (llvm-objdump)."""
    rngs = dispatch_ranges(binary, func)
    if not rngs:
        return None
    return [a for r in rngs for a, mn, t in objdump_insns(binary, *r) if mn.startswith("jmp") and t is None]


NORETURN_CALLS = ("abort", "exit", "_exit", "__stack_chk_fail", "__assert_fail", "__fortify_fail",
                  "Py_FatalError", "_Py_FatalErrorFunc", "_Py_FatalErrorFormat", "__chk_fail")
_call_target = re.compile(r"<([\w.@]+?)(?:@plt)?(?:\+0x[0-9a-f]+)?>")


def reaches_dispatch(binary, func, start):
    """Whether the code from START gets back to an indirect jump of FUNC,
    following direct branches and fall-through within FUNC's ranges (a
    call returns unless it calls abort() and the like; ud2 ends a path)."""
    rngs = dispatch_ranges(binary, func)
    insns = []
    for r in rngs:
        insns += objdump_insns_text(binary, *r)
    idx = {a: i for i, (a, _, _, _) in enumerate(insns)}
    seen, stack = set(), [start]
    while stack:
        a = stack.pop()
        if a in seen or a not in idx:
            continue
        seen.add(a)
        i = idx[a]
        _, mn, t, text = insns[i]
        if mn.startswith("jmp") and t is None:
            return True
        if mn.startswith("j"):
            if t is not None:
                stack.append(t)
            if mn.startswith("jmp"):
                continue
        elif mn.startswith("ret") or mn in ("ud2", "hlt", "int3"):
            continue
        elif mn.startswith("call"):
            m = _call_target.search(text)
            if m and m.group(1).split(".")[0] in NORETURN_CALLS:
                continue
        if i + 1 < len(insns):
            stack.append(insns[i + 1][0])
    return False


_text_disassembly = {}


def objdump_insns_text(binary, lo, hi):
    """[(addr, mnemonic, direct target or None, operand text)] of [lo, hi)."""
    key = (binary, lo, hi)
    if key not in _text_disassembly:
        r = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn", "--start-address=%#x" % lo,
                            "--stop-address=%#x" % hi, binary], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, universal_newlines=True)
        out = []
        for line in r.stdout.splitlines():
            m = _insn.match(line)
            if m:
                t = _target.match(m.group(3).strip())
                out.append((int(m.group(1), 16), m.group(2), int(t.group(1), 16) if t else None, m.group(3)))
        _text_disassembly[key] = out
    return _text_disassembly[key]


def table_handlers(binary, name):
    """An interpreter's handlers, from its label table (Lua's ljumptab.h
    disptab, CPython's opcode_targets: a data symbol) and the
    R_X86_64_RELATIVE relocations that fill it in the PIE: what the
    dispatch jumps to, known without loopscope."""
    tab = None
    for line in subprocess.run(["nm", "-S", binary], stdout=subprocess.PIPE, universal_newlines=True,
                               stderr=subprocess.DEVNULL).stdout.splitlines():
        f = line.split()
        if len(f) == 4 and name in f[3]:
            tab = (int(f[0], 16), int(f[1], 16))
    if not tab:
        return None
    rel = {}
    for line in subprocess.run(["readelf", "-rW", binary], stdout=subprocess.PIPE, universal_newlines=True,
                               stderr=subprocess.DEVNULL).stdout.splitlines():
        f = line.split()
        if len(f) >= 4 and f[2] == "R_X86_64_RELATIVE":
            rel[int(f[0], 16)] = int(f[3], 16)
    return sorted({rel[a] for a in range(tab[0], tab[0] + tab[1], 8) if a in rel})


def loops_of(chain):
    return {(x["header"], x["depth"]) for x in chain.get("chain", []) if x["kind"] == "loop"}


def lookup(binary, addrs, env):
    r = subprocess.run([C.LOOPSCOPE, "lookup", "--json", binary] + ["%#x" % a for a in addrs],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True, env=env)
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


def main():
    if not os.access(C.LOOPSCOPE, os.X_OK):
        C.skip_all("%s not built" % C.LOOPSCOPE)
    for tool in ("llvm-objdump", "nm"):
        if not shutil.which(tool):
            C.skip_all("%s not installed" % tool)
    os.environ.setdefault("LOOPSCOPE_CORPUS_QUIET", "1")
    names = os.environ.get("LOOPSCOPE_CORPUS_PROGRAMS")  # a comma-separated subset
    builds, missing = corpus.build_all(names=set(names.split(",")) if names else None)
    if not any(b.oracle is not None for b in builds):
        C.skip_all("the corpus is not there (make check-slow-setup fetches and builds it; apt-get source needs a deb-src entry and the network): "
                   "%s" % ", ".join(missing[:4]))
    tap = C.Tap()
    if missing:
        tap.diag("not built (skipped): %s" % ", ".join(missing))
    env = dict(os.environ, XDG_CACHE_HOME=C.scratch_dir())

    total = matched = counted = cycles = 0
    unresolved, misses, extras = [], [], []
    for b in builds:
        r = subprocess.run([C.LOOPSCOPE, "struct", "--format=json", b.path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, env=env)
        if not tap.ok(r.returncode == 0, "%s: loopscope struct exits 0" % b.label):
            tap.diag(r.stderr[-1000:])
            continue
        tree = json.loads(r.stdout)
        for n, _ in walk(tree):
            if n.get("kind") == "proc" and n.get("unresolved_jumps"):
                unresolved.append("%s: %s (%d)" % (b.label, n["name"], n["unresolved_jumps"]))
        ours = our_loops(tree)

        # 3. The dispatch function's jumps: all resolved, all inside a loop.
        dispatch, table = INTERPRETERS.get(b.program.name, (None, None))
        jumps = dispatch_jumps(b.path, dispatch) if dispatch else None
        if jumps is not None:
            chains = lookup(b.path, jumps, env)
            in_loop = sum(1 for c in chains if loops_of(c))
            tap.ok(jumps and len(chains) == len(jumps) and in_loop == len(jumps),
                   "%s: %s: its %d indirect jumps (the dispatch) are inside a loop (%d are)" %
                   (b.label, dispatch, len(jumps), in_loop))
            handlers = table_handlers(b.path, table) if table else None
            if handlers is not None and chains:
                # The loop around the first dispatch jump holds every
                # handler that gets back to the dispatch.
                around = loops_of(chains[0])
                back = [h for h in handlers if reaches_dispatch(b.path, dispatch, h)]
                hc = lookup(b.path, back, env)
                outside = [hex(h) for h, c in zip(back, hc) if not around & loops_of(c)]
                tap.ok(len(back) > 40 and not outside,
                       "%s: the dispatch loop holds all %d handlers of %s that get back to the dispatch "
                       "(of %d; %d outside%s)" % (b.label, len(back), table, len(handlers), len(outside),
                                                  ": " + ", ".join(outside[:8]) if outside else ""))

        if b.oracle is None:
            continue
        # 1. clang's loops.
        found = 0
        dispatch_want = dispatch_found = 0
        for l in b.oracle:
            cands = ours.get(l["addr"], [])
            hit = any(n["depth"] == l["depth"] or n["depth"] - irr == l["depth"] for n, _, irr in cands)
            found += hit
            if l["func"] == dispatch:
                dispatch_want += 1
                dispatch_found += hit
            if not hit:
                misses.append("%s: %s header %#x depth %d (ours: %s)" %
                              (b.label, l["func"], l["addr"], l["depth"], [n["depth"] for n, _, _ in cands]))
        if dispatch:
            want = dispatch_want if b.program.name.startswith("lua") else MATCH_MIN * dispatch_want / 100.0
            tap.ok(dispatch_want > 0 and dispatch_found >= want,
                   "%s: clang's loops of %s found with their header and depth: %d/%d (%.2f%%)" %
                   (b.label, dispatch, dispatch_found, dispatch_want, 100.0 * dispatch_found / dispatch_want))
        # 2. Extra loops.
        headers = {l["addr"] for l in b.oracle}
        extra = real = 0
        for h, lst in sorted(ours.items()):
            if h in headers:
                continue
            for n, proc, _ in lst:
                if n.get("irreducible") and is_cycle(b.path, n):
                    real += 1
                else:
                    extra += 1
                    extras.append("%s: %s header %s depth %d%s, line %s" % (
                        b.label, proc[:70], n["header"], n["depth"], " (irreducible, no cycle of direct branches)"
                        if n.get("irreducible") else "", n.get("line")))
        tap.diag("%-24s %5d/%5d clang loops found (%.2f%%); extra: %d irreducible cycles, %d others" %
                 (b.label, found, len(b.oracle), 100.0 * found / max(1, len(b.oracle)), real, extra))
        total += len(b.oracle)
        matched += found
        counted += extra
        cycles += real

    for m in misses[:40]:
        tap.diag("missing: " + m)
    for e in extras[:40]:
        tap.diag("extra: " + e)
    rate = 100.0 * matched / max(1, total)
    tap.ok(total > 0 and rate >= MATCH_MIN, "corpus: %d/%d clang loops found with their header and depth "
           "(%.2f%% >= %.1f%%)" % (matched, total, rate, MATCH_MIN))
    xrate = 100.0 * counted / max(1, total)
    tap.ok(total > 0 and xrate <= EXTRA_MAX, "corpus: %d extra loops (%.2f%% <= %.1f%% of clang's); besides, %d "
           "irreducible loops, each a cycle of direct branches, that clang's LoopInfo cannot hold" %
           (counted, xrate, EXTRA_MAX, cycles))
    tap.ok(not unresolved, "corpus: no procedure with an unresolved indirect jump (%d: %s)" %
           (len(unresolved), "; ".join(unresolved[:5])))
    tap.done()


if __name__ == "__main__":
    main()
