#!/usr/bin/env python3
# perf-blame.py - `perf loops report -s var` on real recordings
# (perf record -e cpu-clock:u --call-graph=dwarf) of the seed's examples,
# Rutar's Figures 3.15 (bar, called by foo) and 3.5 (oneFunc, called by
# main) in C, gcc and clang -O2.  The oracle shares no code with
# loopscope: perf script's sampled IPs, placed on objdump's instructions,
# each given the blame set derived by hand in tests/blame_expect.py, the
# exit variables resolved by hand from the source (bar's x and y are foo's
# se.sX and se.sY, oneFunc's y is main's buf).  Every row of bar's and
# oneFunc's variables, its share and its explicit share, equals the
# oracle's (the same samples: exact, to the printed 0.01%); the footer
# says the shares overlap.
import collections
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
sys.path.insert(0, HERE)
import blame_expect as E  # noqa: E402

PERF_LOOPS = C.perf_loops_or_skip()
C.need_tools("gcc", "clang", "objdump", "nm")
tmp = C.scratch_dir()
os.environ["HOME"] = tmp
tap = C.Tap()
ROW = re.compile(r"^\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)%\s+(.*?)\s*$")
FOOT = re.compile(r"^# (\d+) samples, (\d+) blamed on no variable")
# (stem, procedure, its caller, iterations, exit variable -> the caller's, by
# hand; None: not resolved, clang -O2 gives main's buf no DW_AT_location)
CASES = [
    ("blame_fig315", ["bar"], "foo", ["2000000000"], {"x": "se.sX", "y": "se.sY"}),
    ("blame_fig35", ["oneFunc"], "main", ["150000000"], {"y": "buf"}),
    # fill's stores through out are main's data; norm's value is main's total
    ("blame_calls", ["fill", "norm"], "main", ["1000000", "300"], {"out": "data", "<return>": "total"}),
]
UNRESOLVED = {("clang", "oneFunc", "y")}


def run(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def label(var, func, caller, exits, cc):
    if (cc, func, var) in UNRESOLVED:
        return "%s (%s) [parameter, not resolved in the caller]" % (var, func)
    if var in exits:
        return "%s (%s) <- %s (%s)" % (exits[var], caller, var, func)
    return "%s (%s)" % (var, func)


def oracle(cc, exe, data, funcs, caller, exits):
    want = {}
    for func in funcs:
        w, why = E.expected(cc, exe, func)
        if w is None:
            return None, None, why
        want[func] = w
    syms = {}
    for line in run(["nm", exe]).stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            syms[f[2]] = int(f[0], 16)
    total, rows, expl = 0, collections.Counter(), collections.Counter()
    out = run(["perf", "script", "-i", data, "-F", "ip,sym,symoff,dso", "-G"]).stdout
    for line in out.splitlines():
        m = re.match(r"^\s*[0-9a-f]+ (\S+)\+0x([0-9a-f]+) \((.*)\)$", line)
        if not m or m.group(3) != exe:
            continue
        total += 1
        func = m.group(1)
        if func not in want:
            continue
        for var, kind, _, _ in want[func].get(syms[func] + int(m.group(2), 16), ()):
            k = label(var, func, caller, exits, cc)
            rows[k] += 1
            if kind == "explicit":
                expl[k] += 1
    return total, (rows, expl), ""


def ours(exe, data):
    r = run([PERF_LOOPS, "report", "-i", data, "--stdio", "-s", "var", "--dsos", exe])
    rows, total = {}, None
    for line in r.stdout.splitlines():
        m = FOOT.match(line)
        if m:
            total = int(m.group(1))
        m = ROW.match(line)
        if m:
            rows[m.group(4)] = (float(m.group(1)), float(m.group(2)))
    return r, rows, total


table = []
last_data = None
for cc in ("gcc", "clang"):
    for stem, funcs, caller, args, exits in CASES:
        if any((cc, f) not in E.EXPECT for f in funcs):
            continue  # blame_calls: gcc only
        func = "+".join(funcs)
        exe = os.path.join(tmp, "%s-%s" % (stem, cc))
        data = exe + ".data"
        b = run([cc, "-O2", "-g", "-o", exe, os.path.join(C.FIXTURES, stem + ".c")])
        if not tap.ok(b.returncode == 0, "%s -O2 builds %s.c" % (cc, stem)):
            tap.diag(b.stderr)
            continue
        rec = run(["perf", "record", "-q", "-e", "cpu-clock:u", "--call-graph=dwarf", "-o", data, exe] + args)
        if rec.returncode != 0:
            C.skip_all("perf record -e cpu-clock:u --call-graph=dwarf does not work here: " + rec.stderr.strip()[:200])
        last_data = data
        r, mine, total = ours(exe, data)
        want_total, want, why = oracle(cc, exe, data, funcs, caller, exits)
        if not tap.ok(want_total is not None, "%s %s: the code is the code the hand-derived table describes" %
                      (cc, func)):
            tap.diag(why)
            continue
        tap.ok(r.returncode == 0 and total == want_total and total > 500,
               "%s %s: -s var exits %d over %s samples of the binary, perf script's %d" %
               (cc, func, r.returncode, total, want_total))
        rows, expl = want
        names = set(rows) | {k for k in mine if any("(%s)" % f in k for f in funcs)}
        bad = []
        for k in sorted(names):
            w = (100.0 * rows[k] / want_total, 100.0 * expl[k] / want_total)
            m = mine.get(k, (0.0, 0.0))
            table.append((cc, func, k, m, w, rows[k]))
            if abs(m[0] - w[0]) > 0.006 or abs(m[1] - w[1]) > 0.006:
                bad.append(k)
                tap.diag("%s: ours %.2f%% (explicit %.2f%%), the oracle %.2f%% (%.2f%%)" % (k, m[0], m[1], w[0], w[1]))
        tap.ok(not bad and rows, "%s %s: all %d variables' shares and explicit shares equal the oracle's" %
               (cc, func, len(names)))
        tap.ok("add up to more than 100%" in r.stdout, "%s %s: the footer says the shares overlap" % (cc, func))
        j = run([PERF_LOOPS, "report", "-i", data, "-s", "var", "--dsos", exe, "--format=json"])
        try:
            doc = json.loads(j.stdout)
            counts = {v["variable"]: (v["samples"], v["explicit_samples"]) for v in doc["variables"]}
        except (ValueError, KeyError) as e:
            doc, counts = {}, {"error": str(e)}
        jbad = [k for k in names if counts.get(k, (0, 0)) != (rows[k], expl[k])]
        for k in jbad:
            tap.diag("json %s: %s, the oracle (%d, %d)" % (k, counts.get(k), rows[k], expl[k]))
        tap.ok(j.returncode == 0 and doc.get("samples") == want_total and not jbad,
               "%s %s: --format=json: the same rows, each variable's sample counts equal the oracle's" % (cc, func))
if last_data:
    r = run([PERF_LOOPS, "report", "-i", last_data, "--stdio", "-s", "sym,var"])
    tap.ok(r.returncode != 0 and "goes alone" in r.stderr,
           "-s sym,var is refused (a sample has several variables): exit %d, %s" % (r.returncode, r.stderr.strip()[:160]))
for cc, func, k, m, w, cnt in table:
    tap.diag("%-5s %-8s %-36s ours %6.2f%% (explicit %6.2f%%)  oracle %6.2f%% (%6.2f%%)  %d samples" %
             (cc, func, k, m[0], m[1], w[0], w[1], cnt))
tap.done()
