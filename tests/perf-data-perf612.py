#!/usr/bin/env python3
# perf-data-perf612.py - `perf loops report -s type,typeoff` against perf
# 6.12's own data-type profiling (`perf report -s type,typeoff`, perf 6.8
# and later), instruction by instruction, on the same recordings.
#
# perf types the sample's own instruction and nothing else, so the
# recording puts a sample on every memory instruction exactly: a uprobe
# (perf probe -x) on each instruction of the fixture procedures with a
# memory-form operand (push/pop and lea included: perf types those too),
# one event per instruction, recorded with perf record; and perf record -d
# -e page-faults of data_addr.c (the IP is the faulting instruction).
# Where perf names a type, ours (lookup --data --json: the instruction's own
# access, what perf loops reports there) must be the same type at the same
# offset (perf's names: "int[]" for "volatile int[32]", "struct list*",
# the outermost member only), else the difference is classified (judge()):
# a lea, perf naming the member's type at +0, both right (register-memory),
# perf only (no variable for ours nor the oracle), or the oracle that shares
# no code with either (tests/data_oracle.py: objdump's operands,
# pyelftools' DWARF) decides; the test fails where it sides with perf's or
# with neither.  Every difference is a diag line: docs/design.md's table
# ("Against perf 6.12").
#
# PERF612 names the perf, else scripts/setup-perf612's: Debian's linux-perf
# 6.12.95 answers on the uprobe recordings and crashes on the page faults'
# (samples in ld.so: design.md), which then skip; setup-perf612 --build's
# answers on both.  Without a perf 6.12, without root for the uprobes, the
# test skips.
import importlib.util
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
_spec = importlib.util.spec_from_file_location("core_common", os.path.join(HERE, "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)
data_oracle = C.import_data_oracle()
PERF_LOOPS = C.perf_loops_or_skip()
tmp = C.scratch_dir()
os.environ["HOME"] = tmp
tap = C.Tap()

FIXTURES = [
    ("data_layout.c", ["sum_grid", "fill_global", "stack_array", "main"], ["40"]),
    ("data_pointers.c", ["list_ends", "owner_walk", "tree_children", "global_head", "reassign",
                         "entry_after_use", "main"], []),
    # pointers stepped in loops (register-stepped), a struct pointer's among them
    ("data_stepped.c", ["touch_bytes", "match_len", "scale_rows", "sum_y", "main"], []),
]
HEADER = re.compile(r"^# Samples: (\d+[KMG]?)\s+of event '[^:]+:\w+_([0-9a-f]+)'")  # perf: "32K"
ROW = re.compile(r"^\s*([\d.]+)%\s+(\d+)\s+(.*?)\s{2,}(.*?)\s*$")
TYPEOFF = re.compile(r"^(.*) \+(0x[0-9a-f]+|\d+)(?: \((.*)\))?$")
NOT_TYPED = ("(unknown)", "(stack operation)")


def run(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, **kw)


def perf612_path():
    """PERF612, else scripts/setup-perf612's: its build, else Debian's."""
    d = os.environ.get("LOOPSCOPE_PERF612_DIR", "/var/tmp/loopscope-perf612")
    for perf in (os.environ.get("PERF612"), os.path.join(d, "perf"), os.path.join(d, "deb/usr/bin/perf")):
        if perf and os.access(perf, os.X_OK):
            return perf
    return None


def perf612_or_skip():
    perf = perf612_path()
    if perf is None:
        C.skip_all("no perf 6.12 (PERF612, or scripts/setup-perf612): nothing to compare with")
    v = run([perf, "version"]).stdout.strip()
    return perf, v


def per_event(out):
    """{address: (type, typeoff)} of a report with one event per instruction:
    each event's first row (every sample of a uprobe is at its address)."""
    rows, addr = {}, None
    for line in out.splitlines():
        m = HEADER.match(line)
        if m:
            addr = int(m.group(2), 16)
            continue
        m = ROW.match(line)
        if m and addr is not None and addr not in rows:
            rows[addr] = (m.group(3), m.group(4))
    return rows


def split(typeoff):
    """("struct grid", 26, "cells") of "struct grid +0x1a (cells)"."""
    m = TYPEOFF.match(typeoff)
    if not m:
        return typeoff, None, None
    return m.group(1), int(m.group(2), 0), None if m.group(3) in (None, "no field") else m.group(3)


def same_type(perf_t, ours_t):
    """perf prints an array's type without its bound and qualifiers (int[]
    for volatile int[32]) and a pointer without the space (struct list* for
    struct list *)."""
    def norm(t):
        return re.sub(r"\s+\*", "*", re.sub(r"\[\d+\]", "[]", unqualified(t)))
    return norm(perf_t) == norm(ours_t)


def probe_specs(exe, funcs, group):
    syms = {}
    for line in run(["nm", exe]).stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            syms[f[2]] = int(f[0], 16)
    specs, insns = [], {}
    for func in funcs:
        for addr, mn, ops, comment in data_oracle.disassemble(exe, func):
            insns[addr] = (func, mn, ops, comment)
            if mn.startswith("nop"):
                continue  # a memory-form operand that reads nothing; perf skips it too
            if any("(" in o for o in ops) or mn.startswith(("push", "pop")):
                specs.append("%s:%s_%x=%s+%d" % (group, group, addr, func, addr - syms[func]))
    return specs, insns


def record(exe, funcs, args, group, data):
    """A uprobe on every memory-form instruction of FUNCS, recorded; the
    probes are removed whatever happens.  None when uprobes cannot be had."""
    specs, insns = probe_specs(exe, funcs, group)
    try:
        for i in range(0, len(specs), 100):  # perf probe takes at most 128 at once
            argv = ["perf", "probe", "-q", "-x", exe]
            for s in specs[i:i + 100]:
                argv += ["-a", s]
            p = run(argv)
            if p.returncode != 0:
                return None, insns, "perf probe -x failed: " + p.stderr.strip()[-200:]
        r = run(["perf", "record", "-q", "-e", group + ":*", "-o", data, exe] + args)
        # (its exit status is the workload's: data_pointers' main returns r & 1)
        if not os.path.exists(data) or os.path.getsize(data) == 0:
            return None, insns, "perf record of the uprobes failed: " + r.stderr.strip()[-200:]
    finally:
        run(["perf", "probe", "-q", "-d", group + ":*"])
    return len(specs), insns, None


def own_accesses(exe, addrs):
    """{address: the first access of lookup --data --json} (the instruction's
    own access, not the skid rule's previous one)."""
    r = run([C.LOOPSCOPE, "lookup", "--data", "--json", exe] + ["0x%x" % a for a in addrs])
    out = {}
    for line in r.stdout.splitlines():
        j = json.loads(line)
        if j.get("accesses"):
            out[int(j["addr"], 16)] = j["accesses"][0]
    return out


def unqualified(t):
    return re.sub(r"\b(const|volatile) ", "", t or "")


def judge(o, insns, addr, theirs, own):
    """The verdict on one instruction perf typed: "agree"; "perf wrong"
    (the oracle sides with ours, or the instruction reads no memory: lea);
    "perf names the member" (perf's type at +0 is the type of the member
    or element ours names inside its object: the same bytes, less said);
    "both" (DWARF places a variable in the bytes of the member perf names:
    rule register-memory); "perf counts in the element" (an array's member:
    ours counts the offset from where the pointer points, perf within the
    element); "perf only" (no variable for ours nor the oracle:
    a pointer to a struct stepped through an object, which perf's
    instruction tracking follows: register-stepped names base types'
    elements only); "loopscope wrong" (the oracle sides with perf's); "undecided"."""
    pt, poff, pfield = split(theirs[1])
    ot, ooff = (own["type"], own["offset"]) if own and own["variable"] else (None, None)
    if same_type(pt, ot) and poff == ooff:
        return "agree"
    func, mn, _, _ = insns[addr]
    if mn.startswith("lea"):
        return "perf wrong"  # an address computed, no memory read: no access to type
    if ot is not None and poff == 0 and unqualified(pt) == unqualified(own["field_type"]):
        return "perf names the member"
    if ot is not None and own["rule"] == "register-memory" and pfield:
        return "both"
    tail = re.sub(r"^(\[\])+\.?", "", own["field"] or "") if ot is not None else ""
    if pfield and (own["field"] or "").startswith("[]") and tail.split(".")[0] == pfield.split(".")[0] and \
            same_type(pt, ot) and 0 <= poff < ooff:
        return "perf counts in the element"  # ours from the pointer's start: the same member
    if ot is None:
        return "perf only"  # ours and the oracle's rules name no variable: said by hand in design.md
    a = o.accesses(func).get(addr)
    a = a[0] if a else None
    at, aoff = (a.type, a.offset) if a and a.variable else (None, None)
    if at is None:
        return "undecided"
    if same_type(at, ot) and aoff == ooff:
        return "perf wrong"
    if same_type(pt, at) and poff == aoff:
        return "loopscope wrong"
    return "undecided"


def build(cc, src):
    exe = os.path.join(tmp, "%s-%s" % (src.split(".")[0], cc))
    b = run([cc, "-O2", "-g", "-o", exe, os.path.join(C.FIXTURES, src)])
    if not tap.ok(b.returncode == 0, "%s -O2 builds %s" % (cc, src)):
        tap.diag(b.stderr)
        return None
    return exe


def report(perf, label, data, keys):
    r = run([perf, "report", "-i", data, "--stdio", "-n", "-s", keys])
    if r.returncode == -11:
        # Debian's 6.12.95 on a recording with samples in ld.so: the oracle
        # crashes (design.md); scripts/setup-perf612 --build's does not
        tap.skip("%s: %s crashes (SIGSEGV) on this recording: scripts/setup-perf612 --build" % (label, perf))
        return None
    if not tap.ok(r.returncode == 0, "%s: %s report -s %s exits 0 (%d)" % (label, os.path.basename(perf), keys,
                                                                             r.returncode)):
        tap.diag(r.stderr[-400:])
        return None
    return r.stdout


def verdicts(label, exe, insns, theirs, some=True):
    """Each instruction perf typed, judged; the differences as diag lines.
    SOME: perf must type at least one (not where the event's few samples
    may all be at instructions it cannot type: the page faults)."""
    o = data_oracle.Oracle(exe)
    typed = sorted(a for a in theirs if theirs[a][0] not in NOT_TYPED)
    own = own_accesses(exe, sorted(theirs))
    counts = {}
    for a in typed:
        v = judge(o, insns, a, theirs[a], own.get(a))
        counts[v] = counts.get(v, 0) + 1
        if v == "agree":
            continue
        func, mn, ops, _ = insns[a]
        mine = own.get(a)
        named = mine and mine["variable"]
        tap.diag("%s 0x%x %s+0x%x %s %s | perf 6.12: %s | perf loops: %s | %s" %
                 (label, a, func, a - min(x for x in insns if insns[x][0] == func), mn, ",".join(ops),
                  theirs[a][1], "%s +%d (%s) [%s]" % (mine["type"], mine["offset"], mine["field"] or "",
                                                     mine["rule"]) if named else "(no variable)", v))
    only_ours = [a for a in theirs if theirs[a][0] in NOT_TYPED and own.get(a) and own[a]["variable"]]
    rules = {}
    for a in only_ours:
        rules[own[a]["rule"]] = rules.get(own[a]["rule"], 0) + 1
    tap.diag("%s: %d instructions perf 6.12 leaves untyped (%d of them push/pop), perf loops names a variable "
             "at %d of them (%s)" % (label, len(theirs) - len(typed),
                                     sum(1 for a in theirs if theirs[a][0] == "(stack operation)"), len(only_ours),
                                     ", ".join("%s %d" % kv for kv in sorted(rules.items()))))
    tap.ok((typed or not some) and not counts.get("loopscope wrong") and not counts.get("undecided"),
           "%s: perf 6.12 typed %d instructions: %s" %
           (label, len(typed), ", ".join("%d %s" % (n, v) for v, n in sorted(counts.items()))))


def fixture_uprobes(perf612, cc, src, funcs, args):
    exe = build(cc, src)
    if exe is not None:
        uprobes(perf612, "%s %s uprobes" % (cc, src), exe, funcs, args,
                "ls612_%d_%s_%s" % (os.getpid(), cc, src.split(".")[0][5:]))


def uprobes(perf612, label, exe, funcs, args, group):
    """Every memory-form instruction of FUNCS sampled by its own uprobe event."""
    data = os.path.join(tmp, group + ".data")
    n, insns, why = record(exe, funcs, args, group, data)
    if n is None:
        C.skip_all(why)
    out = report(perf612, label, data, "type,typeoff")
    if out is None:
        return
    theirs = per_event(out)
    mine = run([PERF_LOOPS, "report", "-i", data, "--stdio", "-s", "type,typeoff"])
    ours = per_event(mine.stdout)
    if not tap.ok(mine.returncode == 0 and set(ours) == set(theirs) and len(theirs) > 10,
                  "%s: perf loops and perf 6.12 report the same %d probed instructions (of %d probes)" %
                  (label, len(theirs), n)):
        tap.diag("perf 6.12 only: %s; perf loops only: %s; %s" %
                 (sorted(hex(a) for a in set(theirs) - set(ours)), sorted(hex(a) for a in set(ours) - set(theirs)),
                  mine.stderr[-300:]))
    verdicts(label, exe, insns, theirs)


def corpus_xz(perf612):
    """xz of the real-code corpus (gcc -O2, liblzma linked in), its match
    finders sampled while it compresses 32 KiB of its own binary; skipped
    where the corpus is not built (make check-slow-setup)."""
    xz = os.path.join(os.environ.get("LOOPSCOPE_CORPUS_DIR", "/var/tmp/loopscope-corpus"),
                      "build", "pkg-xz", "src", "xz", "xz")
    if not os.access(xz, os.X_OK):
        tap.skip("no corpus xz (%s: make check-slow-setup builds it)" % xz)
        return
    sample = os.path.join(tmp, "sample")
    with open(xz, "rb") as f, open(sample, "wb") as out:
        out.write(f.read(32768))
    uprobes(perf612, "corpus xz uprobes", xz, ["lzma_mf_bt4_find", "lzma_mf_find"], ["-6", "-k", "-f", sample],
            "ls612_%d_xz" % os.getpid())


SYMOFF_ROW = re.compile(r"^\s*[\d.]+%\s+\d+\s+\[\.\] (\S+)\+0x([0-9a-f]+)\s+(.*?)\s{2,}(.*?)\s*$")


def page_faults(perf612, cc):
    """perf record -d -e page-faults: the IP is the faulting instruction."""
    exe = build(cc, "data_addr.c")
    if exe is None:
        return
    label = "%s data_addr.c page-faults" % cc
    data = exe + ".data"
    r = run(["perf", "record", "-q", "-d", "-e", "page-faults", "-c", "1", "-o", data, exe])
    if r.returncode != 0:
        C.skip_all("perf record -d -e page-faults does not work here: " + r.stderr.strip()[:200])
    out = report(perf612, label, data, "symoff,type,typeoff")
    if out is None:
        return
    syms = {}
    for line in run(["nm", exe]).stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            syms[f[2]] = int(f[0], 16)
    theirs, insns = {}, {}
    for line in out.splitlines():
        m = SYMOFF_ROW.match(line)
        if m and m.group(1) in syms and not m.group(1).startswith("_"):
            theirs[syms[m.group(1)] + int(m.group(2), 16)] = (m.group(3), m.group(4))
    for func in {f for f in syms if any(syms[f] <= a < syms[f] + 0x1000 for a in theirs)}:
        for addr, mn, ops, comment in data_oracle.disassemble(exe, func):
            insns[addr] = (func, mn, ops, comment)
    tap.ok(len(theirs) >= 3, "%s: %d faulting instructions of the fixture" % (label, len(theirs)))
    verdicts(label, exe, insns, theirs, some=False)


perf612, version = perf612_or_skip()
if os.geteuid() != 0:
    C.skip_all("uprobes (perf probe -x) need root")
tap.diag("against %s (%s)" % (perf612, version))
for cc in ("gcc", "clang"):
    for src, funcs, args in FIXTURES:
        fixture_uprobes(perf612, cc, src, funcs, args)
    page_faults(perf612, cc)
corpus_xz(perf612)
tap.done()
