#!/usr/bin/env python3
# core-probes.py - `loopscope probes`: every point of every loop of the
# fixtures (gcc and clang, -O0, -O2, -O3) against objdump -d, the oracle
# for what the instructions are: an edge out of a conditional branch leaves
# a j<cond> of that condition at FROM, to its target when taken, to the
# next instruction when not; a jump is a jmp to TO; a fall-through goes
# from an instruction that is no branch to the next one; a header's probe
# is in the header's block; the probe never has a prefix x86 uprobes
# refuse (cs, ds, es, ss, lock); a target said to have a single
# predecessor has exactly one in objdump's listing of the procedure; the
# file offset is readelf's PT_LOAD mapping of the probe's address.
import importlib.util
import json
import os
import re

_spec = importlib.util.spec_from_file_location(
    "core_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)

BRANCH = re.compile(r"^(j[a-z]+|jmp|call|ret|ud2|hlt)\b")
BAD_PREFIX = ("cs ", "ds ", "es ", "ss ", "lock ")


def disassemble(binary):
    """address -> (length, text, target) for every instruction, in order."""
    insns = {}
    out = C.run(["objdump", "-d", "-w", binary]).stdout
    for line in out.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t?(.*)$", line)
        if not m:
            continue
        addr, nbytes, text = int(m.group(1), 16), len(m.group(2).split()), m.group(3).strip()
        t = re.search(r"\b([0-9a-f]+) <", text)
        insns[addr] = (nbytes, text, int(t.group(1), 16) if t else None)
    return insns


def loads(binary):
    segs = []
    for line in C.run(["readelf", "-lW", binary]).stdout.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
    return segs


def file_offset(segs, addr):
    for off, vaddr, filesz in segs:
        if vaddr <= addr < vaddr + filesz:
            return off + addr - vaddr
    return 0


def mnemonic(text):
    words = text.split()
    while words and words[0] in ("bnd", "notrack", "cs", "ds", "rex.W", "data16"):
        words = words[1:]
    return words[0] if words else ""


def preds(insns, order, to):
    n = 0
    for i, a in enumerate(order):
        length, text, target = insns[a]
        m = mnemonic(text)
        if m.startswith("j") and target == to:
            n += 1
        if a + length == to and not (m in ("jmp", "ret", "ud2", "hlt") or m.startswith("jmp")):
            n += 1
    return n


def check_point(tap, tag, p, insns, order, segs):
    fr, to, probe = int(p["from"], 16), int(p["to"], 16), int(p["probe"], 16)
    how, what = p["how"], "%s %s %s->%s" % (tag, p["kind"], p["from"], p["to"])
    if probe:
        if probe not in insns:
            return tap.ok(False, what + ": the probe is an instruction")
        if insns[probe][1].startswith(BAD_PREFIX):
            return tap.ok(False, what + ": the probe has no prefix uprobes refuse: " + insns[probe][1])
        if int(p["probe_offset"], 16) != file_offset(segs, probe):
            return tap.ok(False, what + ": the probe's file offset is readelf's")
    if fr not in insns:
        return tap.ok(False, what + ": FROM is an instruction")
    length, text, target = insns[fr]
    m = mnemonic(text)
    if how == "cond":
        good = m == "j" + p["cond"] and (to == target if p["taken"] else to == fr + length)
    elif how == "jump":
        good = m.startswith("j") and target == to
    elif how == "fallthrough":
        good = not BRANCH.match(m) or m == "call"
        good = good and to == fr + length
    elif how == "block":
        good = probe >= fr
    elif how == "return":
        good = m.startswith("ret") or m.startswith("jmp")
    else:
        good = m.startswith("jmp")
    if not good:
        return tap.ok(False, what + ": objdump says " + text)
    if p["to_single_pred"] and p["kind"] != "header" and preds(insns, order, to) != 1:
        return tap.ok(False, what + ": objdump shows other ways into " + p["to"])
    return True


def main():
    C.need_tools("objdump", "readelf")
    tap = C.Tap()
    tmp = C.scratch_dir()
    for src, stem in (("perf/loop_counts.c", "counts"), ("loops.c", "loops")):
        for cc, opt, tag, binary in C.fixture_builds(tap, tmp, src, stem):
            r = C.run([C.LOOPSCOPE, "probes", "--json", "--no-cache", binary])
            if not tap.ok(r.returncode == 0, tag + ": loopscope probes --json"):
                tap.diag(r.stderr)
                continue
            doc = json.loads(r.stdout)
            insns, segs = disassemble(binary), loads(binary)
            order = sorted(insns)
            npoints, good, kinds = 0, True, set()
            for loop in doc["loops"]:
                for p in loop["points"]:
                    npoints += 1
                    kinds.add(p["kind"])
                    good = check_point(tap, tag, p, insns, order, segs) is True and good
                headers = [p for p in loop["points"] if p["kind"] == "header"]
                good = good and len(headers) == 1 and headers[0]["from"] == loop["header"]
            tap.ok(good and npoints > 0, "%s: %d points of %d loops agree with objdump" % (tag, npoints, len(doc["loops"])))
            tap.ok({"entry", "header", "backedge", "exit"} <= kinds, tag + ": entries, headers, back edges and exits found")
    r = C.run([C.LOOPSCOPE, "probes", os.path.join(tmp, "counts-gcc-O2"), "no_such_function"])
    tap.ok(r.returncode == 1 and "no loop 'no_such_function'" in r.stderr, "an unknown LOOP: exit 1 naming it")
    tap.done()


main()
