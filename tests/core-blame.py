#!/usr/bin/env python3
# core-blame.py - the blame stage (libloopscope/data/blame.c) on the seed's
# own examples: Rutar's Figures 3.5 (oneFunc) and 3.15 (bar) rewritten in C
# (tests/fixtures/blame_fig35.c, blame_fig315.c), gcc and clang -O2, and
# the exit variables' callees fill and norm (blame_calls.c, gcc -O2), and bar
# at gcc -O0 (the flow through frame slots).  For
# every instruction of oneFunc and bar, `loopscope lookup --blame --json`
# gives exactly the variables, kinds and rules derived by hand from the
# seed's rules in tests/blame_expect.py (objdump's instructions, no
# loopscope code).  Then: text and JSON agree, a binary without DWARF and
# an address outside every procedure are errors naming the file, and
# --data with --blame is refused.
import importlib.util
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("core_common", os.path.join(HERE, "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)
sys.path.insert(0, HERE)
import blame_expect as E  # noqa: E402

C.need_tools("gcc", "clang", "objdump")
tmp = C.scratch_dir()
tap = C.Tap()


def run(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def ours(exe, addrs):
    r = run([C.LOOPSCOPE, "lookup", "--blame", "--json", exe] + ["0x%x" % a for a in addrs])
    got = {}
    for line in r.stdout.splitlines():
        o = json.loads(line)
        got[int(o["addr"], 16)] = {(b["variable"], b["kind"], b["rule"], b["implicit_too"]) for b in o["blame"]}
    return r, got


def show(s):
    return "; ".join(sorted("%s %s:%s%s" % (v, k, r, "+I" if i else "") for v, k, r, i in s)) or "(none)"


CASES = [("blame_fig315", "bar"), ("blame_fig35", "oneFunc"), ("blame_calls", "fill"), ("blame_calls", "norm")]
for cc in ("gcc", "clang", "gcc-O0"):
    for stem, func in CASES:
        if (cc, func) not in E.EXPECT:
            continue  # blame_calls: gcc only (clang unrolls fill: 60 instructions); -O0: bar
        exe = os.path.join(tmp, "%s-%s" % (stem, cc))
        opt = "-O0" if cc.endswith("-O0") else "-O2"
        b = run([cc.split("-")[0], opt, "-g", "-o", exe, os.path.join(C.FIXTURES, stem + ".c")])
        if not tap.ok(b.returncode == 0, "%s %s builds %s.c" % (cc, opt, stem)):
            tap.diag(b.stderr)
            continue
        want, why = E.expected(cc, exe, func)
        if not tap.ok(want is not None, "%s %s: the code is the code the hand-derived table describes" % (cc, func)):
            tap.diag(why)
            continue
        r, got = ours(exe, sorted(want))
        tap.ok(r.returncode == 0, "%s %s: lookup --blame --json exits 0 (%s)" % (cc, func, r.stderr.strip()[:200]))
        bad = [a for a in sorted(want) if got.get(a) != want[a]]
        for a in bad:
            tap.diag("0x%x: ours %s; by hand %s" % (a, show(got.get(a, set())), show(want[a])))
        nvars = len({v for s in want.values() for v, _, _, _ in s})
        tap.ok(not bad, "%s %s: all %d instructions' blame sets (%d variables) equal the hand-derived ones" %
               (cc, func, len(want), nvars))
        t = run([C.LOOPSCOPE, "lookup", "--blame", exe] + ["0x%x" % a for a in sorted(want)])
        text_vars = sum(line.count(" explicit [") + line.count(" implicit [") for line in t.stdout.splitlines())
        tap.ok(t.returncode == 0 and text_vars == sum(len(s) for s in got.values()),
               "%s %s: the text output names the same %d entries" % (cc, func, text_vars))

# errors: no DWARF; outside every procedure; --data with --blame
exe = os.path.join(tmp, "nodwarf")
run(["gcc", "-O2", "-o", exe, os.path.join(C.FIXTURES, "blame_fig315.c")])
addr = [a for a, _, _ in E.disassemble(exe, "bar")][0]
r = run([C.LOOPSCOPE, "lookup", "--blame", exe, "0x%x" % addr])
tap.ok(r.returncode != 0 and exe in r.stdout and "debug information" in r.stdout,
       "no DWARF: exit %d, the message names the file: %s" % (r.returncode, r.stdout.strip()[:200]))
r = run([C.LOOPSCOPE, "lookup", "--blame", "--json", exe, "0x%x" % addr])
tap.ok(r.returncode != 0 and "error" in json.loads(r.stdout.splitlines()[0]), "no DWARF, --json: an error member")
exe = os.path.join(tmp, "blame_fig315-gcc")
r = run([C.LOOPSCOPE, "lookup", "--blame", exe, "0x1"])
tap.ok(r.returncode != 0 and "no procedure" in r.stdout and exe in r.stdout,
       "an address outside every procedure: exit %d, %s" % (r.returncode, r.stdout.strip()[:200]))
r = run([C.LOOPSCOPE, "lookup", "--blame", "--data", exe, "0x1"])
tap.ok(r.returncode != 0 and "one at a time" in r.stderr, "--data with --blame is refused: %s" % r.stderr.strip()[:200])
tap.done()
