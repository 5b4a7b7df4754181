#!/usr/bin/env python3
# tests/corpus-stripped.py - procedures found in stripped code
# (libloopscope/dwarf/proc_bounds.c): libc.so.6 and two programs of the
# real-code corpus with .symtab and their debug information removed
# (strip --strip-all, no debug link, no debug directory), as a user meets
# a distribution's library without its -dbg package.
#
#   - the procedures cover >= 95% of the bytes the .eh_frame FDEs describe
#     (the FDE ranges from readelf --debug-dump=frames, not from loopscope);
#   - >= 95% of the loops found with the symbols and the debug file are
#     found without them, by header address;
#   - stderr says how much of the code the procedures cover;
#   - no phantom loop after a call to a local function that never returns:
#     libc's longjmp calls a local __longjmp (mov %r8,%rsp; jmp *%rdx), and
#     the code after the call is not a loop, with or without symbols.
# Slow tier: it needs the corpus.
import importlib.util
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("core_common", os.path.join(HERE, "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)
sys.path.insert(0, os.path.join(HERE, "corpus"))
import corpus  # noqa: E402

LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
NODEBUG = ["--no-cache", "--debug-dir=/nonexistent"]


def fde_ranges(binary):
    out = []
    for m in re.finditer(r"FDE cie=[0-9a-f]+ pc=([0-9a-f]+)\.\.([0-9a-f]+)",
                         C.run(["readelf", "--debug-dump=frames", binary]).stdout):
        lo, hi = int(m.group(1), 16), int(m.group(2), 16)
        if hi > lo:
            out.append((lo, hi))
    return sorted(out)


def structure(binary, extra):
    r = C.run([C.LOOPSCOPE, "struct", "--format=json"] + extra + [binary])
    return (json.loads(r.stdout) if r.returncode == 0 else None), r.stderr


def procs_and_loops(doc):
    procs, loops = [], set()

    def walk(n):
        if n.get("kind") == "proc":
            procs.extend((int(a, 16), int(b, 16)) for a, b in n.get("ranges", []))
        if n.get("kind") == "loop":
            loops.add(int(n["header"], 16))
        for c in n.get("children", []):
            walk(c)
    walk(doc)
    return sorted(procs), loops


def covered_bytes(fdes, procs):
    """Bytes of the FDE ranges inside some procedure's ranges."""
    total = inside = 0
    j = 0
    for lo, hi in fdes:
        total += hi - lo
        while j < len(procs) and procs[j][1] <= lo:
            j += 1
        k = j
        while k < len(procs) and procs[k][0] < hi:
            inside += max(0, min(hi, procs[k][1]) - max(lo, procs[k][0]))
            k += 1
    return total, inside


def check(tap, tmp, label, binary):
    stripped = os.path.join(tmp, os.path.basename(binary) + ".stripped")
    r = C.run(["strip", "--strip-all", "-R", ".gnu_debuglink", "-o", stripped, binary])
    if not tap.ok(r.returncode == 0, "%s: strip --strip-all" % label):
        return
    full, _ = structure(binary, ["--no-cache"])
    bare, err = structure(stripped, NODEBUG)
    if not tap.ok(full and bare, "%s: loopscope struct with and without symbols" % label):
        tap.diag(err)
        return
    fdes = fde_ranges(stripped)
    procs, loops = procs_and_loops(bare)
    _, loops_full = procs_and_loops(full)
    total, inside = covered_bytes(fdes, procs)
    share = 100.0 * inside / max(1, total)
    tap.ok(len(fdes) > 50 and share >= 95.0,
           "%s stripped: procedures cover %.2f%% of the %d bytes the %d FDEs describe (>= 95%%)" %
           (label, share, total, len(fdes)))
    found = len(loops_full & loops)
    tap.ok(loops_full and found >= 0.95 * len(loops_full),
           "%s stripped: %d of the %d loops found with symbols are found without them (%.1f%%, >= 95%%; %d loops "
           "in all)" % (label, found, len(loops_full), 100.0 * found / max(1, len(loops_full)), len(loops)))
    m = re.search(r"no symbol table: (\d+) procedures, (\d+) of them found from \.eh_frame and direct calls "
                  r"\(named sub_ADDR\); they cover ([\d.]+)% of its code", err)
    tap.ok(m is not None, "%s stripped: stderr says how much of the code the procedures cover (%s)" %
           (label, "%s%%, %s sub_ADDR of %s" % (m.group(3), m.group(2), m.group(1)) if m else "-"))
    return stripped


def check_longjmp(tap, libc, stripped):
    """The call of __longjmp in longjmp: no loop around the code after it."""
    dis = C.run(["objdump", "-d", "--no-show-raw-insn", libc]).stdout
    m = re.search(r"\n\s*([0-9a-f]+):\s+mov\s+0x30\(%rdi\),%r8\n(?:.*\n){8,20}?\s*[0-9a-f]+:\s+mov\s+%r8,%rsp\n"
                  r".*\n\s*[0-9a-f]+:\s+jmp\s+\*%rdx", dis)
    if not tap.ok(m is not None, "libc: __longjmp found by its code (mov %r8,%rsp; jmp *%rdx)"):
        return
    target = int(m.group(1), 16)
    calls = [int(c.group(1), 16) for c in re.finditer(r"\n\s*([0-9a-f]+):\s+call\s+%x <" % target, dis)]
    for label, binary, extra in (("with symbols", libc, ["--no-cache"]), ("stripped", stripped, NODEBUG)):
        r = C.run([C.LOOPSCOPE, "lookup"] + extra + [binary] + ["0x%x" % c for c in calls])
        in_loop = [blk for blk in r.stdout.split("\n0x") if "loop at" in blk]
        tap.ok(calls and not in_loop and r.returncode == 0,
               "libc %s: the %d calls of __longjmp (0x%x) are in no loop (no phantom loop after them)" %
               (label, len(calls), target))
        for blk in in_loop[:3]:
            tap.diag(blk)


def main():
    C.need_tools("strip", "readelf", "objdump")
    tmp = C.scratch_dir()
    os.environ.setdefault("LOOPSCOPE_CORPUS_QUIET", "1")
    tap = C.Tap()
    if os.path.exists(LIBC):
        stripped = check(tap, tmp, "libc.so.6", LIBC)
        if stripped:
            check_longjmp(tap, LIBC, stripped)
    for name, cc, opt in (("lua5.4", "gcc", "-O2"), ("zstd", "clang", "-O2")):
        program = [p for p in corpus.PROGRAMS if p.name == name][0]
        b = corpus.build(program, cc, opt)
        label = "%s %s %s" % (name, cc, opt)
        if b is None:
            tap.skip("%s: not built (make check-slow-setup builds it)" % label)
            continue
        check(tap, tmp, label, b.path)
    tap.done()


if __name__ == "__main__":
    main()
