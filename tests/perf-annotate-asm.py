#!/usr/bin/env python3
# perf-annotate-asm.py - perf loops annotate --asm's figures per
# instruction against perf annotate's on the same real recordings (perf
# record -e cpu-clock --call-graph=fp of fixtures compiled now with gcc and
# clang -O2): for every instruction of the procedure that perf annotate -n
# gives samples, perf loops gives the same number, and no other instruction
# has any (split_loops.c's run: three loops; inline_loop.c's main: a loop
# of an inlined callee).  The figures come from the report's own places
# (no second attribution), so they also add up to each statement's.
# Also: a function that is only inlined is annotated through its instances,
# its loop line's samples those of -s srcline for the line; and -M intel:
# every instruction's text is objdump -M intel's (comments and symbol
# names aside, hex with or without 0x).
import importlib.util
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("core_common", os.path.join(HERE, "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)
PERF_LOOPS = os.environ.get("PERF_LOOPS") or os.path.join(C.TOP_BUILDDIR, "perf-loops")
if not shutil.which("perf"):
    C.skip_all("perf not installed")
if not os.access(PERF_LOOPS, os.X_OK):
    C.skip_all("perf-loops not built")
tmp = C.scratch_dir()
os.environ["HOME"] = tmp
tap = C.Tap()
_perf_insn = re.compile(r"^\s+(\d+)\s+:\s+([0-9a-f]+):\s")
_my_insn = re.compile(r"^\s+[\d.]+%\s+(\d+)\s+[|`,\- ]*:\s+([0-9a-f]+):  ")


def run(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def per_insn(text, pat, samples_group, addr_group):
    out = {}
    for l in text.splitlines():
        m = pat.match(l)
        if m and int(m.group(samples_group)):
            out[int(m.group(addr_group), 16)] = int(m.group(samples_group))
    return out


def line_of(src, mark):
    for i, l in enumerate(open(src), 1):
        if mark in l:
            return i
    return 0


_my_text = re.compile(r"^[^:]*:\s+([0-9a-f]+):  (.*?)\s*$")
_objdump = re.compile(r"^\s+([0-9a-f]+):\t(.*?)\s*$")


def norm(text):
    text = re.sub(r"\s*(#|<).*$", "", text)  # comments, <symbol+off>
    return re.sub(r"\s+", " ", re.sub(r"\b0x(?=[0-9a-f])", "", text)).strip()


def check_intel(cc, exe, data, proc):
    mine = {}
    for l in run([PERF_LOOPS, "annotate", "-i", data, "--stdio", "--asm", "-M", "intel", proc]).stdout.splitlines():
        m = _my_text.match(l)
        if m and not m.group(2).startswith(("loop at", "head")):
            mine[int(m.group(1), 16)] = norm(m.group(2))
    theirs = {}
    for l in run(["objdump", "-d", "-M", "intel", "--no-show-raw-insn", exe]).stdout.splitlines():
        m = _objdump.match(l)
        if m:
            theirs[int(m.group(1), 16)] = norm(m.group(2))
    bad = ["%#x: %s / objdump: %s" % (a, t, theirs.get(a)) for a, t in sorted(mine.items()) if theirs.get(a) != t]
    tap.ok(mine and not bad and any("PTR" in t or "," in t for t in mine.values()),
           "%s %s: -M intel: each of the %d instructions is objdump -M intel's" % (cc, proc, len(mine)))
    for b in bad[:5]:
        tap.diag(b)


cases = [("split_loops.c", "run", ["8"]), ("inline_loop.c", "main", ["20000"])]
for cc in ("gcc", "clang"):
    if not shutil.which(cc):
        tap.skip("%s not installed" % cc)
        continue
    for src, proc, args in cases:
        exe = os.path.join(tmp, "%s-%s" % (cc, src[:-2]))
        r = run([cc, "-O2", "-g", "-fno-omit-frame-pointer", "-o", exe, os.path.join(C.FIXTURES, "perf", src)])
        if r.returncode:
            tap.ok(False, "%s builds %s: %s" % (cc, src, r.stderr[-200:]))
            continue
        data = exe + ".data"
        r = run(["perf", "record", "-q", "-N", "-e", "cpu-clock", "--call-graph=fp", "-o", data, exe] + args)
        if r.returncode:
            C.skip_all("perf record does not work here: " + r.stderr[:200])
        theirs = per_insn(run(["perf", "annotate", "-i", data, "--stdio", "-n", "-s", proc]).stdout,
                          _perf_insn, 1, 2)
        mine = per_insn(run([PERF_LOOPS, "annotate", "-i", data, "--stdio", "--asm", proc]).stdout, _my_insn, 1, 2)
        diff = ["%#x: perf %s, perf loops %s" % (a, theirs.get(a, 0), mine.get(a, 0))
                for a in sorted(set(theirs) | set(mine)) if theirs.get(a) != mine.get(a)]
        tap.ok(theirs and not diff, "%s %s: the samples of each of %d sampled instructions (%d samples) are perf "
               "annotate's" % (cc, proc, len(theirs), sum(theirs.values())))
        for d in diff[:10]:
            tap.diag(d)
        check_intel(cc, exe, data, proc)
    # a function only inlined: its instances together
    exe = os.path.join(tmp, "%s-inline_loop" % cc)
    data = exe + ".data"
    if not os.path.exists(data):
        continue
    inner = line_of(os.path.join(C.FIXTURES, "perf", "inline_loop.c"), "LOOP-INNER")
    r = run([PERF_LOOPS, "annotate", "-i", data, "--stdio", "work"])
    row = [l for l in r.stdout.splitlines() if re.match(r"^\s+[\d.]+%\s+\d+\s+" + str(inner) + r"\s", l)]
    srcline = run([PERF_LOOPS, "report", "-i", data, "--stdio", "-s", "srcline"]).stdout
    want = [l.split()[:2] for l in srcline.splitlines() if l.rstrip().endswith("inline_loop.c:%d" % inner)]
    # the line of the inlined call: the call's Total beside its own Self (the flat view's [I] row)
    ann = run([PERF_LOOPS, "annotate", "-i", data, "--stdio", "main"]).stdout
    call = [l for l in ann.splitlines() if "CALL-WORK" in l]
    flat = run([PERF_LOOPS, "report", "-i", data, "--stdio", "--format=flat"]).stdout
    inl = [l.split() for l in flat.splitlines() if "[I] work (at inline_loop.c:" in l]
    m = re.search(r"\[I\] work: Total ([\d.]+%) \((\d+)\)", call[0]) if call else None
    tap.ok(m is not None and inl and [m.group(1), m.group(2)] == [inl[0][0], inl[0][2]],
           "%s: annotate main: the line calling work (inlined) shows the call's Total, the flat view's %s" %
           (cc, inl[0][:3] if inl else None))
    tap.ok(r.returncode == 0 and "(inlined only: its instances together)" in r.stdout and row and want and
           row[0].split()[:2] == want[0],
           "%s: annotate work (only inlined): line %d's figures are -s srcline's (%s, %s)" %
           (cc, inner, row[0].split()[:2] if row else None, want[0] if want else None))
tap.done()
