#!/usr/bin/env python3
# perf-pprof.py - perf loops report --format=pprof -o FILE read by a real
# pprof (go tool pprof): on real recordings (perf record -e cpu-clock
# --call-graph=fp) of fixtures with loops and inlined calls, gcc and clang,
#   - pprof -top: every loop's cum equals its Total in perf loops report
#     --format=loops, and an innermost loop's flat its Own (-s loop);
#   - pprof -list: every statement line of the loop has the samples the
#     flat view gives that statement;
#   - -traces shows loops and inlined calls as frames; -raw the sample types
#     (per event: samples/count and the period).
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
if not shutil.which("go"):
    C.skip_all("go (golang-go, for go tool pprof) not installed: scripts/setup-deps installs it")
if not os.access(PERF_LOOPS, os.X_OK):
    C.skip_all("perf-loops not built")
tmp = C.scratch_dir()
os.environ["HOME"] = tmp  # go's and perf's caches: private
os.environ["GOCACHE"] = os.path.join(tmp, "gocache")
os.environ["PPROF_TMPDIR"] = tmp
tap = C.Tap()
_loops_row = re.compile(r"^\s*([\d.]+)%\s+([\d.]+)%\s+(\d+)\s+(loop at \S+)\s+\(")
_top_row = re.compile(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.*?)\s*$")
_flat_row = re.compile(r"^\s*[\d.]+%\s+(\d+)(\s+)(\S.*?)\s*$")


def report(data, *args):
    r = C.run([PERF_LOOPS, "report", "-i", data, "--stdio"] + list(args))
    return r.stdout


def pprof(*args):
    r = C.run(["go", "tool", "pprof", "-sample_index=cpu-clock_samples"] + list(args))
    return r.stdout + r.stderr


def loops_view(data):
    """label -> (total samples, own %) from --format=loops (rows of one label summed)"""
    out = {}
    for m in map(_loops_row.match, report(data, "--format=loops").splitlines()):
        if m:
            t, o = out.get(m.group(4), (0, 0.0))
            out[m.group(4)] = (t + int(m.group(3)), o + float(m.group(2)))
    return out


def innermost_loop_samples(data):
    """label -> samples whose innermost loop it is (-s loop -n)"""
    out = {}
    for line in report(data, "-s", "loop", "-n").splitlines():
        m = re.match(r"^\s*[\d.]+%\s+(\d+)\s+(loop at \S+)\s*$", line)
        if m:
            out[m.group(2)] = out.get(m.group(2), 0) + int(m.group(1))
    return out


def statements_in_loop(data, label):
    """line -> self samples of the statements directly in loop LABEL (flat view)"""
    lines, depth = {}, None
    for line in report(data, "--format=flat", "--no-children").splitlines():
        m = _flat_row.match(line)
        if not m:
            continue
        d, text = len(m.group(2)), m.group(3)
        if text == label:
            depth = d
        elif depth is not None and d <= depth:
            depth = None
        elif depth is not None and d == depth + 2 and re.match(r"^\S+:\d+$", text):
            n = int(text.rsplit(":", 1)[1])
            lines[n] = lines.get(n, 0) + int(m.group(1))
    return lines


def pprof_top(path):
    out = {}
    for m in map(_top_row.match, pprof("-top", "-nodecount=100000", "-nodefraction=0", path).splitlines()):
        if m:
            out[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    return out


def pprof_list(path, label):
    """line -> flat samples in pprof -list for the function LABEL"""
    out = {}
    for line in pprof("-list", "^" + re.escape(label) + "$", path).splitlines():
        m = re.match(r"^\s*(\d+|\.)\s+(\d+|\.)\s+(\d+):", line)
        if m and m.group(1) != ".":
            out[int(m.group(3))] = int(m.group(1))
    return out


def check(name, data, innermost):
    pb = os.path.join(tmp, name + ".pb.gz")
    r = C.run([PERF_LOOPS, "report", "-i", data, "--format=pprof", "-o", pb])
    if not tap.ok(r.returncode == 0 and C.run(["gzip", "-t", pb]).returncode == 0,
                  "%s: --format=pprof -o FILE writes a gzip file" % name):
        tap.diag(r.stderr)
        return
    loops, top = loops_view(data), pprof_top(pb)
    # the loops with 1% of the samples or more (one row per label there)
    nsamples = int(re.search(r"# Samples: (\d+)", report(data, "--format=loops")).group(1))
    big = {k: v for k, v in loops.items() if v[0] * 100 >= nsamples}
    for label, (total, _) in sorted(big.items()):
        got = top.get(label + " (inline)", (None, None))[1]
        tap.ok(got == total, "%s: pprof -top: %s cum %s, perf loops Total %d samples" % (name, label, got, total))
    own = innermost_loop_samples(data)
    for label in innermost:
        got = top.get(label + " (inline)", (None, None))[0]
        tap.ok(got is not None and got == own.get(label),
               "%s: pprof -top: innermost %s flat %s, perf loops Own %s samples" % (name, label, got, own.get(label)))
        want, got = statements_in_loop(data, label), pprof_list(pb, label)
        tap.ok(want and got == want, "%s: pprof -list '%s': per line %s, perf loops flat view %s" %
               (name, label, got, want))
    tr = pprof("-traces", pb)
    tap.ok(any(l + " (inline)" in tr for l in innermost), "%s: pprof -traces shows loops as frames" % name)
    return pb


def record(name, binary, *args, events="cpu-clock"):
    data = os.path.join(tmp, name + ".data")
    r = C.run(["perf", "record", "-q", "-N", "-e", events, "--call-graph=fp", "-o", data, binary] + list(args))
    if r.returncode != 0:
        C.skip_all("perf record does not work here: " + r.stderr.strip()[:200])
    return data


def line_of(src, mark):
    with open(os.path.join(C.FIXTURES, "perf", src)) as f:
        for i, l in enumerate(f, 1):
            if mark in l:
                return i


r = C.run(["go", "tool", "pprof", "-h"])
if "usage" not in (r.stdout + r.stderr).lower():
    C.skip_all("go tool pprof does not run: " + (r.stdout + r.stderr)[:200])
for cc in [c for c in ("gcc", "clang") if shutil.which(c)]:
    split = os.path.join(tmp, "split-" + cc)
    inl = os.path.join(tmp, "inline-" + cc)
    if C.compile_fixture(cc, "-O2", "perf/split_loops.c", split, ["-fno-omit-frame-pointer"]) or \
       C.compile_fixture(cc, "-O2", "perf/inline_loop.c", inl, ["-fno-omit-frame-pointer"]):
        tap.skip("%s cannot build the fixtures" % cc)
        continue
    check("split_loops-" + cc, record("split-" + cc, split, "6"),
          ["loop at split_loops.c:%d" % line_of("split_loops.c", "LOOP-BIG"),
           "loop at split_loops.c:%d" % line_of("split_loops.c", "LOOP-SMALL")])
    data = record("inline-" + cc, inl, "20000")
    pb = check("inline_loop-" + cc, data, ["loop at inline_loop.c:%d" % line_of("inline_loop.c", "LOOP-INNER")])
    if pb:
        tr = pprof("-traces", pb)
        tap.ok(re.search(r"loop at inline_loop.c:%d \(inline\)\s+work \(inline\)\s+loop at inline_loop.c:%d "
                         r"\(inline\)\s+main" % (line_of("inline_loop.c", "LOOP-INNER"),
                                                 line_of("inline_loop.c", "LOOP-OUTER")), tr) is not None,
               "inline_loop-%s: -traces: inner loop < work (inlined) < outer loop < main, one location" % cc)

# two events: one pair of sample types per event
data = record("two", os.path.join(tmp, "split-gcc"), "3", events="cpu-clock,task-clock")
pb = os.path.join(tmp, "two.pb.gz")
C.run([PERF_LOOPS, "report", "-i", data, "--format=pprof", "-o", pb])
raw = pprof("-raw", pb).replace("[dflt]", "")
tap.ok("cpu-clock_samples/count cpu-clock/nanoseconds task-clock_samples/count task-clock/nanoseconds" in raw,
       "two events: sample types samples/count and period per event")
# Mappings: each binary by its path and build-id (perf buildid-list's), with
# functions, files, lines and inline frames said to be there
ids = dict(reversed(l.split(None, 1)) for l in C.run(["perf", "buildid-list", "-i", data]).stdout.splitlines()
           if len(l.split(None, 1)) == 2)
binary = os.path.join(tmp, "split-gcc")
maps = raw[raw.find("Mappings"):]
want = ids.get(binary, "?")
tap.ok(re.search(r"^\d+: 0x0/0x0/0x0 %s %s \[FN\]\[FL\]\[LN\]\[IN\]$" % (re.escape(binary), want), maps, re.M)
       is not None, "pprof -raw: the binary's Mapping, with its build-id %s and [FN][FL][LN][IN]" % want)
r = C.run([PERF_LOOPS, "report", "-i", data, "--format=pprof"])
tap.ok(r.returncode == 2 and "-o FILE" in r.stderr, "--format=pprof without -o: exit 2, says -o FILE")

# the program's own binary is the first Mapping (pprof's main binary), even
# when most samples are in a library; the kernel is [kernel.kallsyms]
lib, main = os.path.join(tmp, "libhot.so"), os.path.join(tmp, "shlib_main")
if C.run(["gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-fPIC", "-shared", "-o", lib,
          os.path.join(C.FIXTURES, "perf", "libhot.c")]).returncode or \
   C.run(["gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-o", main, os.path.join(C.FIXTURES, "perf", "shlib_main.c"),
          "-L" + tmp, "-lhot", "-Wl,-rpath," + tmp]).returncode:
    tap.skip("gcc cannot build the shared-library fixture")
else:
    data = record("shlib", main)
    pb = os.path.join(tmp, "shlib.pb.gz")
    C.run([PERF_LOOPS, "report", "-i", data, "--format=pprof", "-o", pb])
    raw = pprof("-raw", pb)
    first = re.search(r"^Mappings\n1: \S+ (\S+) ", raw, re.M)
    dsos = report(data, "-s", "dso")
    tap.ok(first is not None and first.group(1) == main,
           "pprof -raw: the first Mapping is the program's binary (%s), libhot.so holding most samples" %
           (first.group(1) if first else None))
    tap.diag(" ".join(l.split()[-1] for l in dsos.splitlines() if "%" in l))
    tap.ok("_text" not in raw and ("[kernel.kallsyms]" in raw or "[kernel.kallsyms]" not in dsos),
           "pprof -raw: the kernel's Mapping is [kernel.kallsyms]")
    js = C.run([PERF_LOOPS, "report", "-i", data, "--format=json"]).stdout
    tap.ok("[kernel.kallsyms]_text" not in js and ('"dso":"[kernel.kallsyms]"' in js or "kallsyms" not in dsos),
           "--format=json: the kernel is [kernel.kallsyms]")
tap.done()
