#!/usr/bin/env python3
# perf-data-addr.py - PERF_SAMPLE_ADDR: `perf loops report --format=data` on
# a real `perf record -d -e page-faults -c 1` of tests/fixtures/data_addr.c
# (gcc and clang -O2 -g), whose three procedures fault on a global array, a
# stack array and a malloc'd (mmapped) block.  The oracle shares no code
# with loopscope: perf script's samples (sym, data address) and mmap
# records (--show-mmap-events) and nm -S's g_big: each fault of the three
# procedures is classified here (inside g_big: the global; inside or up to
# 8 MiB below [stack]: the stack; inside an //anon map: anonymous memory),
# and each procedure's "address" rows must equal those counts exactly.  A
# cpu-clock recording with --call-graph dwarf (which sets PERF_SAMPLE_ADDR,
# its addresses 0) must get no address rows.
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
PERF_LOOPS = C.perf_loops_or_skip()
tmp = C.scratch_dir()
os.environ["HOME"] = tmp
tap = C.Tap()
SRC = os.path.join(C.FIXTURES, "data_addr.c")
FUNCS = ("touch_global", "touch_stack", "touch_heap")
GROUP = re.compile(r"^ +([\d.]+)% +(\d+)    (\S+)  \[")
ADDR = re.compile(r"^ +([\d.]+)% +(\d+)        address   (.*)$")


def run(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def oracle(exe, data):
    """{procedure: Counter(kind)} from perf script's samples and mmaps."""
    g = None
    for line in run(["nm", "-S", exe]).stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[3] == "g_big":
            g = (int(f[0], 16), int(f[1], 16))
    maps, out = [], collections.defaultdict(collections.Counter)
    text = run(["perf", "script", "-i", data, "-F", "comm,ip,sym,addr", "--show-mmap-events"]).stdout
    base = None
    for line in text.splitlines():
        m = re.search(r"PERF_RECORD_MMAP2 \d+/\d+: \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|0) .*\]: "
                      r"([r-][w-][x-])p (.*)$", line)
        if m:
            start, size = int(m.group(1), 16), int(m.group(2), 16)
            maps = [x for x in maps if x[0] + x[1] <= start or x[0] >= start + size] + [(start, size, m.group(5))]
            if m.group(5) == exe and m.group(3) == "0" and base is None:
                base = start  # the PIE's load bias: its first map, at file offset 0
            continue
        f = line.split()  # comm, the data address (and perf's name for it), ip, sym
        if len(f) < 4 or "PERF_RECORD" in line:
            continue
        sym = next((s for s in FUNCS if re.match(re.escape(s) + r"(\.|$)", f[-1])), None)
        if sym is None:
            continue
        addr = int(f[1], 16)
        inmap = [x for x in maps if x[0] <= addr < x[0] + x[1]]
        stack = [x for x in maps if x[2] == "[stack]"]
        if g and base is not None and base + g[0] <= addr < base + g[0] + g[1]:
            kind = "global g_big: int[1048576] ([])"
        elif (inmap and inmap[0][2] == "[stack]") or (not inmap and stack and 0 < stack[0][0] - addr <= 8 << 20):
            kind = "stack"
        elif inmap and inmap[0][2] == "//anon":
            kind = "anonymous memory (heap or a thread's stack)"
        else:
            kind = "other: " + (inmap[0][2] if inmap else "no map")
        out[sym][kind] += 1
    return out


def ours(text):
    out, cur = collections.defaultdict(collections.Counter), None
    for line in text.splitlines():
        m = GROUP.match(line)
        if m:
            cur = m.group(3).split(".")[0]
            continue
        m = ADDR.match(line)
        if m and cur in FUNCS:
            out[cur][m.group(3)] += int(m.group(2))
    return out


probe = run(["perf", "record", "-q", "-d", "-e", "page-faults", "-c", "1", "-o", os.path.join(tmp, "p.data"), "true"])
if probe.returncode != 0:
    C.skip_all("perf record -d -e page-faults does not work here: " + probe.stderr.strip()[:200])
for cc in ("gcc", "clang"):
    exe = os.path.join(tmp, "data_addr-" + cc)
    data = os.path.join(tmp, cc + ".data")
    b = run([cc, "-O2", "-g", "-o", exe, SRC])
    if not tap.ok(b.returncode == 0, "%s -O2 builds the fixture" % cc):
        tap.diag(b.stderr)
        continue
    rec = run(["perf", "record", "-q", "-d", "-e", "page-faults", "-c", "1", "-o", data, exe])
    if not tap.ok(rec.returncode == 0, "%s: perf record -d -e page-faults -c 1" % cc):
        tap.diag(rec.stderr)
        continue
    r = run([PERF_LOOPS, "report", "-i", data, "--stdio", "--format=data"])
    got, want = ours(r.stdout), oracle(exe, data)
    tap.ok(r.returncode == 0 and sum(sum(c.values()) for c in got.values()) > 2000,
           "%s: --format=data: exit %d, %d faults of the fixture's procedures with an address row" %
           (cc, r.returncode, sum(sum(c.values()) for c in got.values())))
    for f in FUNCS:
        tap.ok(got[f] == want[f] and want[f], "%s: %s's data addresses: ours %s, the oracle's %s" %
               (cc, f, dict(got[f]), dict(want[f])))
    j = run([PERF_LOOPS, "report", "-i", data, "--format=json", "-s", "type"])
    try:
        groups = json.loads(j.stdout)["data"][0]["groups"]
        jg = {x["procedure"].split(".")[0]: collections.Counter({a["address"]: a["samples"] for a in x["addresses"]})
              for x in groups if x["loop"] is None}
        jok = all(jg.get(f) == got[f] for f in FUNCS)
    except (ValueError, KeyError, IndexError) as e:
        jok = False
        tap.diag("json: %s" % e)
    tap.ok(jok, "%s: --format=json -s type's \"addresses\" equal the text's" % cc)
# --call-graph dwarf asks for PERF_SAMPLE_ADDR too, but a timer sample's is 0
# and no data map is recorded: no address rows, none "(not in any map)".
exe, data = os.path.join(tmp, "data_layout"), os.path.join(tmp, "dwarf.data")
run(["gcc", "-O2", "-g", "-o", exe, os.path.join(C.FIXTURES, "data_layout.c")])
rec = run(["perf", "record", "-q", "-e", "cpu-clock:u", "--call-graph", "dwarf", "-o", data, exe, "1000000"])
r = run([PERF_LOOPS, "report", "-i", data, "--stdio", "--format=data"])
tap.ok(rec.returncode == 0 and r.returncode == 0 and " variable " in r.stdout and " address " not in r.stdout,
       "cpu-clock with --call-graph dwarf (PERF_SAMPLE_ADDR set, addresses 0): no address rows")
tap.done()
