#!/usr/bin/env python3
# perf-data.py - `perf loops report -s type,typeoff` (perf report's data-type
# keys) on a real recording (perf record -e cpu-clock:u) of
# tests/fixtures/data_layout.c's loop over sum_grid, built by gcc and clang
# -O2 -g, against an oracle that shares no code with loopscope: perf script's
# sampled IPs (sym+off, made link-time with nm), each resolved by
# tests/data_oracle.py (objdump's operands, pyelftools' DWARF): the
# instruction's first memory operand, else the last one before it in its
# basic block (the timer's skid).  Every row's samples, type and
# "type +offset (field)" must equal the oracle's counts, the samples of the
# fixture's binary only (--dsos); the note's three counts too.  With
# PERF612=/path/to/perf-6.12 (else scripts/setup-perf612's), perf's own
# -s type,typeoff on the same recording where it answers (it types the
# sampled instruction only: few of a timer's samples).
# The views are the same from a cold cache, a cache with the structure
# alone, and a warm one (the accesses cached: no DWARF read).
import collections
import json
import importlib.util
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
SRC = os.path.join(C.FIXTURES, "data_layout.c")
FUNCS = ["sum_grid", "fill_global", "stack_array", "main"]
ROW = re.compile(r"^\s*([\d.]+)%\s+(\d+)\s+(.*?)\s{2,}(.*?)\s*$")
NOTE = re.compile(r"^# data types: (\d+) samples at a memory access, (\d+) at an instruction without one .*, "
                  r"(\d+) with no variable found")


def run(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def oracle_counts(exe, data):
    syms = {}
    for line in run(["nm", exe]).stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            syms[f[2]] = int(f[0], 16)
    o = data_oracle.Oracle(exe)
    rows, notes = collections.Counter(), [0, 0, 0]
    out = run(["perf", "script", "-i", data, "-F", "ip,sym,symoff,dso"]).stdout
    for line in out.splitlines():
        m = re.match(r"^\s*[0-9a-f]+ (\S+)\+0x([0-9a-f]+) \((.*)\)$", line)
        if not m or m.group(3) != exe:
            continue
        func, off = m.group(1), int(m.group(2), 16)
        if func not in FUNCS:
            rows[("(unknown)", "(unknown)")] += 1  # not a fixture procedure: counted, not resolved
            notes[2] += 1
            continue
        link = syms[func] + off
        a = o.sampled(func, link)
        own = any(x[0] == link for x in o._insns[func]) and link in o._answers[func]
        if a is None or a.variable is None:
            rows[("(unknown)", "(unknown)")] += 1
            notes[2] += 1
            continue
        typeoff = "%s +%d" % (a.type, a.offset) + (" (%s)" % a.field if a.field else "")
        rows[(a.type, typeoff)] += 1
        notes[0 if own else 1] += 1
    return rows, notes


def ours(exe, data):
    r = run([PERF_LOOPS, "report", "-i", data, "--stdio", "-s", "type,typeoff", "--dsos", exe])
    rows, note = collections.Counter(), None
    for line in r.stdout.splitlines():
        m = NOTE.match(line)
        if m:
            note = [int(m.group(i)) for i in (1, 2, 3)]
            continue
        m = ROW.match(line)
        if m:
            rows[(m.group(3), m.group(4))] += int(m.group(2))
    return r, rows, note


def our_types(exe):
    """{(type, offset)} of every access of the fixture's procedures (lookup --data)."""
    addrs = []
    for f in FUNCS:
        addrs += [a for a, _, _, _ in data_oracle.disassemble(exe, f)]
    r = run([C.LOOPSCOPE, "lookup", "--data", "--json", exe] + ["0x%x" % a for a in addrs])
    out = set()
    for line in r.stdout.splitlines():
        for a in json.loads(line)["accesses"]:
            if a["variable"]:
                out.add((a["type"], a["offset"]))
    return out


def against_perf612(perf612, cc, exe, data):
    """perf 6.12's -s type,typeoff (6.8 and later) types the samples of an
    instruction with a memory operand and no others (no skid rule); where it
    answers, its type and offset must be one of the accesses' (it prints
    the outermost member only: "struct grid +0x1a (cells)", an array without
    its bound and qualifiers, a pointer without the space).  Its push/pop
    pseudo-type "(stack operation)" has no access here.  Instruction by
    instruction: tests/perf-data-perf612.py."""
    r = run([perf612, "report", "-i", data, "--stdio", "-n", "-s", "type,typeoff", "--dsos", exe])
    if r.returncode != 0:
        # Debian's 6.12.95 always does here (SIGSEGV: samples in ld.so, design.md)
        tap.skip("perf 6.12 report -s type,typeoff failed (exit %d; scripts/setup-perf612 --build): "
                 "nothing to compare" % r.returncode)
        return
    theirs = set()
    for line in r.stdout.splitlines():
        m = ROW.match(line)
        t = re.match(r"^(.*) \+(0x[0-9a-f]+|\d+)(?: \(.*\))?$", m.group(4)) if m else None
        if t and m.group(3) not in ("(unknown)", "(stack operation)"):
            theirs.add((perf_type(m.group(3)), int(t.group(2), 0)))
    ours_set = {(perf_type(t), off) for t, off in our_types(exe)}
    missing = sorted(theirs - ours_set)
    tap.ok(not missing, "%s: perf 6.12 typed %d (type, offset) pairs, all among the accesses'%s" %
           (cc, len(theirs), ": not " + repr(missing) if missing else ""))


def perf_type(t):
    """A type named as perf names it: int[] for volatile int[32], struct list*."""
    t = re.sub(r"\b(const|volatile) ", "", t or "")
    return re.sub(r"\s+\*", "*", re.sub(r"\[\d+\]", "[]", t))


def stage_line(stderr, stage, path):
    """The LOOPSCOPE_TIMING line of STAGE for module PATH, or None."""
    for line in stderr.splitlines():
        if line.startswith("loopscope: timing: %s " % stage) and line.rstrip().split("  ")[-1].split(" (")[0] == path:
            return line
    return None


def cache_paths(cc, exe, data):
    """The data views from a cold cache, from an entry that has the
    structure but not the accesses (a plain report first: the entry grows
    with them), and warm (the accesses from the entry, cache format 13):
    the same output; the warm run reads no DWARF of the fixture."""
    plain = ["report", "-i", data, "--stdio", "--dsos", exe]
    for view in (["report", "-s", "type"], ["report", "-s", "type,typeoff"], ["report", "--format=data"],
                 ["annotate", "--data-type"]):
        outs = []
        for n, steps in enumerate((["view"], ["plain", "view", "view"])):
            env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache-%s-%s-%d" % (cc, view[-1], n)),
                       LOOPSCOPE_TIMING="1")
            for step in steps:
                argv = plain if step == "plain" else [view[0], "-i", data, "--stdio", "--dsos", exe] + view[1:]
                r = subprocess.run([PERF_LOOPS] + argv, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
                if step == "view":
                    outs.append(r)
        cold, grown, warm = outs
        tap.ok(all(o.returncode == 0 for o in outs) and cold.stdout == grown.stdout == warm.stdout,
               "%s: perf loops %s the same cold, with the structure cached, and warm" % (cc, " ".join(view)))
        acc = stage_line(warm.stderr, "accesses", exe)
        # the indexes stage (its dwarf line) is not run; annotate reads
        # the DWARF alone, for the types' layouts
        tap.ok(acc and " 0 computed" in acc and stage_line(warm.stderr, "dwarf", exe) is None and
               stage_line(grown.stderr, "dwarf", exe),
               "%s: warm %s reads the accesses from the cache, not the DWARF indexes (%s)" %
               (cc, " ".join(view), acc))


for cc in ("gcc", "clang"):
    exe = os.path.join(tmp, "data_layout-" + cc)
    data = os.path.join(tmp, cc + ".data")
    b = run([cc, "-O2", "-g", "-o", exe, SRC])
    if not tap.ok(b.returncode == 0, "%s -O2 builds the fixture" % cc):
        tap.diag(b.stderr)
        continue
    rec = run(["perf", "record", "-q", "-e", "cpu-clock:u", "-o", data, exe, "4000000"])
    if rec.returncode != 0:
        C.skip_all("perf record -e cpu-clock:u does not work here: " + rec.stderr.strip()[:200])
    r, mine, note = ours(exe, data)
    want, want_note = oracle_counts(exe, data)
    tap.ok(r.returncode == 0 and sum(mine.values()) > 100,
           "%s: perf loops report -s type,typeoff: exit %d, %d samples" % (cc, r.returncode, sum(mine.values())))
    diff = {k: (mine.get(k, 0), want.get(k, 0)) for k in set(mine) | set(want) if mine.get(k, 0) != want.get(k, 0)}
    for k, (m, w) in sorted(diff.items()):
        tap.diag("%s | %s: ours %d, the oracle %d" % (k[0], k[1], m, w))
    tap.ok(not diff, "%s: every row's samples equal the oracle's (%d rows)" % (cc, len(want)))
    tap.ok(note == want_note, "%s: the note's counts (at an access, skidded, none) %s, the oracle's %s" %
           (cc, note, want_note))
    d = os.environ.get("LOOPSCOPE_PERF612_DIR", "/var/tmp/loopscope-perf612")
    perf612 = next((p for p in (os.environ.get("PERF612"), os.path.join(d, "perf"), os.path.join(d, "deb/usr/bin/perf"))
                    if p and os.access(p, os.X_OK)), None)
    if perf612:
        against_perf612(perf612, cc, exe, data)
    else:
        tap.skip("no perf 6.12 (PERF612, or scripts/setup-perf612): -s type,typeoff against it")
    cache_paths(cc, exe, data)
    grid = [k for k in mine if k[0] == "struct grid"]
    tap.ok(grid, "%s: the loop's samples name struct grid: %s" % (cc, ", ".join(k[1] for k in grid)))
tap.done()
