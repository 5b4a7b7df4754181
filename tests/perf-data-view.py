#!/usr/bin/env python3
# perf-data-view.py - `perf loops report --format=data` (per procedure and
# loop, the samples by variable and by type and field), `--format=loops -s
# type`, its JSON ("data" with -s type) and pprof labels (-s typeoff), on a
# real recording (perf record -e cpu-clock:u) of tests/fixtures/data_layout.c
# (gcc and clang -O2 -g).  The oracle shares no code with loopscope: perf
# script's sampled IPs (function + offset), each resolved by
# tests/data_oracle.py (objdump, pyelftools; the skid to the last access
# before the IP in its block): each fixture procedure's rows (its samples,
# by variable and by "type +offset (field)") must equal the oracle's
# counts exactly.  A loop's rows must add up to the loop's samples and be
# within its procedure's; the JSON and the pprof file (decoded here:
# gzip and protobuf varints) must carry the same numbers as the text.
import collections
import gzip
import importlib.util
import json
import os
import re
import shutil
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
GROUP = re.compile(r"^ +([\d.]+)% +(\d+)  ( +)(.*?)(?:  \[.*\])?$")
ROW = re.compile(r"^ +([\d.]+)% +(\d+) +(variable|type    )  (.*)$")


def run(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def oracle(exe, data):
    """{procedure: (samples, Counter(variable), Counter(typeoff))} of the fixture's samples."""
    syms = {}
    for line in run(["nm", exe]).stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            syms[f[2]] = int(f[0], 16)
    o = data_oracle.Oracle(exe)
    out = {}
    for line in run(["perf", "script", "-i", data, "-F", "ip,sym,symoff,dso"]).stdout.splitlines():
        m = re.match(r"^\s*[0-9a-f]+ (\S+)\+0x([0-9a-f]+) \((.*)\)$", line)
        if not m or m.group(3) != exe or m.group(1) not in FUNCS:
            continue
        f = m.group(1)
        a = o.sampled(f, syms[f] + int(m.group(2), 16))
        s, vs, ts = out.setdefault(f, [0, collections.Counter(), collections.Counter()])
        out[f][0] += 1
        if a is None or a.variable is None:
            vs["(no variable)"] += 1
            ts["(unknown)"] += 1
        else:
            vs[a.variable] += 1
            ts["%s +%d" % (a.type, a.offset) + (" (%s)" % a.field if a.field else "")] += 1
    return out


def parse(text):
    """[(procedure, loop or None, samples, Counter(variable), Counter(typeoff))]."""
    groups, proc = [], None
    for line in text.splitlines():
        m = ROW.match(line)
        if m and groups:
            groups[-1][3 if m.group(3) == "variable" else 4][m.group(4)] += int(m.group(2))
            continue
        m = GROUP.match(line)
        if m:
            loop = len(m.group(3)) > 2
            if not loop:
                proc = m.group(4)
            groups.append([proc, m.group(4) if loop else None, int(m.group(2)), collections.Counter(),
                           collections.Counter()])
    return groups


def varint(b, i):
    """The base-128 varint of B at I: (its value, the index after it)."""
    v, s = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i


def varints(b):
    i = 0
    while i < len(b):
        v, i = varint(b, i)
        yield v


def fields(b):
    """(field number, value) of protobuf message B: varints and length-delimited only."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
            yield f, v
        elif wt == 2:
            ln, i = varint(b, i)
            yield f, b[i:i + ln]
            i += ln
        else:
            raise ValueError("wire type %d" % wt)


def pprof_variables(path):
    """Counter(variable label) of the first value (samples) of the profile's Samples."""
    prof = list(fields(gzip.open(path).read()))
    strs = [v.decode() for f, v in prof if f == 6]
    out = collections.Counter()
    for f, v in prof:
        if f != 2:
            continue
        vals, lab = [], None
        for sf, sv in fields(v):
            if sf == 2:
                vals = list(varints(sv))
            elif sf == 3:
                d = dict(fields(sv))
                if strs[d.get(1, 0)] == "variable":
                    lab = strs[d.get(2, 0)]
        out[lab or "(no variable)"] += vals[0]
    return out


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
    r = run([PERF_LOOPS, "report", "-i", data, "--stdio", "--format=data", "--dsos", exe])
    groups = parse(r.stdout)
    want = oracle(exe, data)
    procs = {g[0]: g for g in groups if g[1] is None}
    tap.ok(r.returncode == 0 and sum(g[2] for g in procs.values()) > 100,
           "%s: --format=data: exit %d, %d procedures, %d loops" %
           (cc, r.returncode, len(procs), len(groups) - len(procs)))
    bad = []
    for f in sorted(set(want) | set(p for p in procs if p in FUNCS)):
        g, w = procs.get(f), want.get(f)
        if g is None or w is None or g[2] != w[0] or g[3] != w[1] or g[4] != w[2]:
            bad.append("%s: ours %s, the oracle's %s" % (f, g and g[2:], w))
    for d in bad:
        tap.diag(d)
    tap.ok(not bad, "%s: each procedure's samples by variable and by type +offset (field) equal the oracle's (%s)" %
           (cc, ", ".join(sorted(want))))
    loops = [g for g in groups if g[1] is not None]
    ok = bool(loops)
    for g in loops:
        p = procs.get(g[0])
        ok = ok and sum(g[3].values()) == g[2] and sum(g[4].values()) == g[2] and p is not None and \
            all(p[3][k] >= v for k, v in g[3].items()) and all(p[4][k] >= v for k, v in g[4].items())
    tap.ok(ok, "%s: each loop's rows add up to its samples, within its procedure's (%d loops)" % (cc, len(loops)))
    sg = [g for g in loops if g[0] == "sum_grid"]
    tap.ok(sg and any("struct grid" in k for k in sg[0][4]),
           "%s: sum_grid's loop names struct grid's fields: %s" % (cc, sg and ", ".join(sorted(sg[0][4]))))
    lv = run([PERF_LOOPS, "report", "-i", data, "--stdio", "--format=loops", "-s", "type", "--dsos", exe])
    tap.ok(lv.returncode == 0 and lv.stdout == r.stdout, "%s: --format=loops -s type is the data view" % cc)
    j = run([PERF_LOOPS, "report", "-i", data, "--format=json", "-s", "type", "--dsos", exe])
    try:
        jg = json.loads(j.stdout)["data"][0]["groups"]
        same = [(x["procedure"], x["loop"], x["samples"],
                 collections.Counter({v["variable"]: v["samples"] for v in x["variables"]}),
                 collections.Counter({v["typeoff"]: v["samples"] for v in x["types"]})) for x in jg]
        text = [(g[0], g[1], g[2], g[3], g[4]) for g in groups]
        jok = same == text
    except (ValueError, KeyError, IndexError) as e:
        jok = False
        tap.diag("json: %s" % e)
    tap.ok(j.returncode == 0 and jok, "%s: --format=json -s type's \"data\" equals the text's groups" % cc)
    pb = os.path.join(tmp, cc + ".pb.gz")
    p = run([PERF_LOOPS, "report", "-i", data, "--format=pprof", "-s", "typeoff", "-o", pb, "--dsos", exe])
    got = pprof_variables(pb) if p.returncode == 0 else None
    allv = collections.Counter()
    for g in procs.values():
        allv.update(g[3])
    tap.ok(got == allv, "%s: the pprof's variable labels carry the text's samples: %s" % (cc, dict(got or {})))
tap.done()
