#!/usr/bin/env python3
# perf-data-annotate.py - `perf loops annotate --data-type[=TYPE]` (perf
# annotate's data-type layout: each type the samples' accesses reach, its
# members with their costs) on a real recording (perf record -e
# cpu-clock:u) of tests/fixtures/data_layout.c, gcc and clang -O2 -g,
# against an oracle that shares no code with loopscope: perf script's
# sampled IPs, each resolved by tests/data_oracle.py (objdump's operands,
# pyelftools' DWARF; the skid to the last access before the IP in its
# block), give each type's samples per offset; the type's layout is read
# here from pyelftools (members in DWARF order, nested structs, an array
# of structs' element at element 0's offsets, bit-fields by their storage
# bytes).  Every printed row (offset, size, type, name, nesting, -n
# samples) must equal the oracle's, and every type the oracle counts must
# be printed.  Then =TYPE with and without "struct ", Percent and
# --show-total-period columns, and an unknown TYPE (exit 1, named).
import collections
import importlib.util
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
HEAD = re.compile(r"^Annotate type: '(.*)' in (.*) \((\d+) samples\):$")
ROW = re.compile(r"^ +(\d+(?:\.\d+)?) +(0x[0-9a-f]+|0) +(0x[0-9a-f]+|0)  ( *)(.*)\t(.*?)( \{|;)$")
AGG = ("DW_TAG_structure_type", "DW_TAG_union_type", "DW_TAG_class_type")


def run(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def sampled_types(exe, data):
    """{type: Counter(offset -> samples)} of the fixture's samples."""
    syms = {}
    for line in run(["nm", exe]).stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            syms[f[2]] = int(f[0], 16)
    o = data_oracle.Oracle(exe)
    out = collections.defaultdict(collections.Counter)
    for line in run(["perf", "script", "-i", data, "-F", "ip,sym,symoff,dso"]).stdout.splitlines():
        m = re.match(r"^\s*[0-9a-f]+ (\S+)\+0x([0-9a-f]+) \((.*)\)$", line)
        if not m or m.group(3) != exe or m.group(1) not in FUNCS:
            continue
        a = o.sampled(m.group(1), syms[m.group(1)] + int(m.group(2), 16))
        if a is not None and a.variable is not None:
            out[a.type][a.offset] += 1
    return o.dw, out


def find_type(dw, name):
    """The first type DIE whose name (as the oracle spells an access's) is NAME."""
    for cu in dw.di.iter_CUs():
        lang = cu.get_top_DIE().attributes.get("DW_AT_language")
        c_lang = bool(lang) and lang.value in data_oracle.C_LANGS
        for die in cu.iter_DIEs():
            if die.tag and die.tag.endswith("_type") and dw.object_type_name(die, c_lang) == name:
                return die, c_lang
    return None, None


def element_aggregate(dw, t):
    for _ in range(8):
        s = dw.strip(t)
        if s is None:
            return None
        if s.tag in AGG:
            return s
        if s.tag != "DW_TAG_array_type":
            return None
        t = dw.type_die(s)
    return None


def layout(dw, t, c_lang):
    """[(depth, offset, size, type, name)]: the type, then its members."""
    rows = [(0, 0, dw.size(t) or 0, dw.object_type_name(t, c_lang), "")]

    def members(s, base, depth):
        for m in s.iter_children():
            if m.tag not in ("DW_TAG_member", "DW_TAG_inheritance"):
                continue
            if "DW_AT_external" in m.attributes or "DW_AT_declaration" in m.attributes:
                continue
            r = dw.member_range(m)
            if r is None:
                continue
            mt = dw.type_die(m)
            name = "" if m.tag == "DW_TAG_inheritance" else (dw.name(m) or "<anon>")
            rows.append((depth, base + r[0], r[1], dw.type_name(mt, c_lang), name))
            agg = None if r[2] else element_aggregate(dw, mt)
            if agg is not None:
                members(agg, base + r[0], depth + 1)

    agg = element_aggregate(dw, t)
    if agg is not None:
        members(agg, 0, 1)
    return rows


def parse(text):
    """{type: (header samples, [(depth, offset, size, type, name, value)])}."""
    out, cur = {}, None
    for line in text.splitlines():
        m = HEAD.match(line)
        if m:
            cur = out[m.group(1)] = (int(m.group(3)), [])
            continue
        m = ROW.match(line)
        if m and cur is not None:
            cur[1].append((len(m.group(4)) // 4, int(m.group(2), 16), int(m.group(3), 16), m.group(5),
                           m.group(6), float(m.group(1))))
    return out


def expected(dw, counts):
    want = {}
    for tname, offs in counts.items():
        t, c_lang = find_type(dw, tname)
        if t is None:
            want[tname] = None
            continue
        rows = layout(dw, t, c_lang)
        size = rows[0][2]
        folded = collections.Counter()
        for off, n in offs.items():
            folded[off % size if size > 0 else off] += n
        want[tname] = (sum(offs.values()), [r + (sum(n for o, n in folded.items() if r[1] <= o < r[1] + max(r[2], 1)),)
                                            for r in rows])
    return want


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
    r = run([PERF_LOOPS, "annotate", "-i", data, "--stdio", "--data-type", "-n", "--dsos", exe])
    mine = parse(r.stdout)
    dw, counts = sampled_types(exe, data)
    want = expected(dw, counts)
    tap.ok(r.returncode == 0 and sum(c[0] for c in mine.values()) > 100,
           "%s: annotate --data-type -n: exit %d, %d types, %d samples" %
           (cc, r.returncode, len(mine), sum(c[0] for c in mine.values())))
    bad = []
    for tname in sorted(set(mine) | set(want)):
        got, exp = mine.get(tname), want.get(tname)
        if got is None or exp is None:
            bad.append("%s: ours %s, the oracle's %s" % (tname, got, exp))
            continue
        if got[0] != exp[0]:
            bad.append("%s: %d samples, the oracle %d" % (tname, got[0], exp[0]))
        for g, e in zip(got[1], exp[1]):
            if g[:5] != e[:5] or int(g[5]) != e[5]:
                bad.append("%s: row %s, the oracle's %s" % (tname, g, e))
        if len(got[1]) != len(exp[1]):
            bad.append("%s: %d rows, the oracle %d" % (tname, len(got[1]), len(exp[1])))
    for d in bad:
        tap.diag(d)
    tap.ok(not bad, "%s: every type's layout rows and samples equal the oracle's (%d types, %d rows)" %
           (cc, len(want), sum(len(w[1]) for w in want.values() if w)))
    grid = mine.get("struct grid")
    tap.ok(grid and any(row[4] in ("flag", "kind", "q", "w") and row[5] > 0 for row in grid[1]),
           "%s: struct grid's cost is in cells[]' fields: %s" %
           (cc, grid and ", ".join("%s %d" % (row[4], row[5]) for row in grid[1] if row[5])))
    # =TYPE, with or without the keyword (perf's match), and the other columns
    one = run([PERF_LOOPS, "annotate", "-i", data, "--stdio", "--data-type=grid", "-n", "--dsos", exe])
    one2 = run([PERF_LOOPS, "annotate", "-i", data, "--stdio", "--data-type=struct grid", "-n", "--dsos", exe])
    tap.ok(one.returncode == 0 and list(parse(one.stdout)) == ["struct grid"] and one.stdout == one2.stdout and
           parse(one.stdout)["struct grid"] == mine.get("struct grid"),
           "%s: --data-type=grid and ='struct grid' print struct grid alone, as in the whole" % cc)
    pct = parse(run([PERF_LOOPS, "annotate", "-i", data, "--stdio", "--data-type=grid", "--dsos", exe]).stdout)
    per = parse(run([PERF_LOOPS, "annotate", "-i", data, "--stdio", "--data-type=grid", "--show-total-period",
                     "--dsos", exe]).stdout)
    g, total = (mine.get("struct grid") or (0, []))
    ok = bool(g) and all(abs(p[5] - 100.0 * s[5] / g) < 0.01 for p, s in zip(pct["struct grid"][1], total)) and \
        all(q[5] % 1 == 0 and (q[5] > 0) == (s[5] > 0) for q, s in zip(per["struct grid"][1], total))
    tap.ok(ok, "%s: Percent is of the type's samples; Period is there where samples are" % cc)
    u = run([PERF_LOOPS, "annotate", "-i", data, "--stdio", "--data-type=struct no_such_type"])
    tap.ok(u.returncode == 1 and "no_such_type" in u.stderr and data in u.stderr,
           "%s: an unknown TYPE: exit %d, %s" % (cc, u.returncode, u.stderr.strip()[:120]))
r = run([PERF_LOOPS, "report", "--data-type"])
tap.ok(r.returncode != 0 and "--data-type" in r.stderr, "perf loops report --data-type is refused, named")
tap.done()
