#!/usr/bin/env python3
# bench/record.py - call chains of programs built without frame pointers:
# what `perf loops record` records by default, against --call-graph=fp,
# --call-graph=dwarf (8 KB of stack a sample) and the complete reference,
# --call-graph=dwarf,65528; and `perf loops report`/`annotate` against perf
# report/annotate on the same --call-graph=dwarf file.
#
#   bench/record.py [BUILD_DIR] [--programs xz,db_bench,lua5.4] [--runs N]
#
# The programs, built as Debian builds them (dpkg-buildflags: -O2 -g, no
# frame pointers; tests/corpus/packages.py builds them from Debian's source
# packages): xz -6 on 24 MB, LevelDB's db_bench (fillseq, fillrandom,
# readrandom, readseq on 1,000,000 keys; a compaction thread), and the
# corpus's lua5.4 (gcc -O2) running bench.lua 120.  `perf loops record` runs
# twice: the first recording of a program sizes its stack copy from an
# estimate, the second from the depth the first measured.  For each way of recording:
# the run time (median of N; the run without perf beside it: the overhead),
# the CPU time of perf and the program together (median of N; the program
# alone beside it: the overhead - CPU, not wall time, which the other jobs
# of a shared machine make meaningless), the perf.data size, its samples,
# and the share of samples whose chain reaches main or start_thread; for the
# default recording and the reference, every loop over 1% with its Total
# in both.  The same comparison is
# made on one run, without sampling noise: the reference recording unwound
# as if perf had copied only the default's stack size
# (PERF_LOOPS_STACK_LIMIT).  Then the report and annotate times, perf loops
# against perf, on the --call-graph=dwarf (8 KB) recording.
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "corpus"))
import corpus  # noqa: E402
import packages  # noqa: E402


def run(cmd, env=None, cwd=None, out=subprocess.DEVNULL):
    t = time.monotonic()
    r = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, env=env, cwd=cwd, universal_newlines=True)
    return time.monotonic() - t, r


def cpu_run(cmd, env=None):
    """(wall seconds, CPU seconds of the command and all its descendants
    - perf and the program it records -, the result)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t, r = run(cmd, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return t, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), r


def workloads(tmp):
    """{name: (argv, setup)}: setup() runs before each run (a fresh database)."""
    w = {}
    xz = packages.build("xz")
    if xz:
        data = os.path.join(tmp, "input.bin")
        if not os.path.exists(data):
            packages.make_input(data, 24 * 1000 * 1000)
        w["xz"] = ([xz, "-6", "-T1", "-c", data], lambda: None)
    db = packages.build("db_bench")
    if db:
        dbdir = os.path.join(tmp, "leveldb")
        w["db_bench"] = ([db, "--benchmarks=fillseq,fillrandom,readrandom,readseq", "--num=1000000",
                          "--db=" + dbdir], lambda: shutil.rmtree(dbdir, ignore_errors=True))
    lua = [p for p in corpus.PROGRAMS if p.name == "lua5.4"][0]
    b = corpus.build(lua, "gcc", "-O2")
    if b:
        w["lua5.4"] = ([b.path, os.path.join(HERE, "..", "tests", "corpus", "bench.lua"), "120"], lambda: None)
    return w


def reach(perf_loops, data, env=None):
    """(samples whose chain reaches main or start_thread, all samples), from
    the JSON tree: the Total of the first such frame on each path."""
    _, r = run([perf_loops, "report", "--format=json", "-q", "-i", data], env=env, out=subprocess.PIPE)
    doc = json.loads(r.stdout)
    tot = [0]

    def walk(n):
        if n.get("kind") == "proc" and n.get("name") in ("main", "start_thread"):
            tot[0] += sum(n.get("total", [0]))
            return
        for c in n.get("children", []):
            walk(c)
    walk(doc["tree"])
    return tot[0], sum(doc["tree"].get("total", [0]))


ROW = re.compile(r"^\s*([\d.]+)%\s+([\d.]+)%\s+(\d+)\s+(loop at .*)$")


def loops(perf_loops, data, env=None):
    _, r = run([perf_loops, "report", "--format=loops", "--stdio", "-q", "-i", data], env=env, out=subprocess.PIPE)
    return {m.group(4): float(m.group(1)) for m in map(ROW.match, r.stdout.splitlines()) if m}


def header_count(data, what):
    _, r = run(["perf", "report", "-i", data, "--header-only"], out=subprocess.PIPE)
    m = re.search(r"sample_stack_user = (\d+)", r.stdout) if what == "stack" else None
    return int(m.group(1)) if m else 0


def samples_of(perf_loops, data):
    _, r = run([perf_loops, "report", "--stdio", "-q", "-s", "dso", "-i", data], out=subprocess.PIPE)
    m = re.search(r"^# Samples: (\d+)", r.stdout, re.M)
    return int(m.group(1)) if m else 0


def compare_loops(a, b):
    """Loops over 1% in either, and the largest difference of Total."""
    keys = [k for k in set(a) | set(b) if a.get(k, 0) > 1.0 or b.get(k, 0) > 1.0]
    worst = max(((abs(a.get(k, 0) - b.get(k, 0)), k) for k in keys), default=(0.0, "-"))
    return len(keys), worst


def bench_program(args, name, argv, setup, tmp, env):
    pl = args.perf_loops
    modes = [
        ("none", None),
        ("perf loops record", [pl, "record"]),
        ("again (measured)", [pl, "record"]),
        ("--call-graph=fp", ["perf", "record", "-e", "cpu-clock", "--call-graph=fp"]),
        ("--call-graph=dwarf", ["perf", "record", "-e", "cpu-clock", "--call-graph=dwarf"]),
        ("dwarf,65528", ["perf", "record", "-m", "256M", "-e", "cpu-clock", "--call-graph=dwarf,65528"]),
    ]
    res = {}
    for label, rec in modes:
        times, cpus = [], []
        data = os.path.join(tmp, "%s-%s.data" % (name, re.sub(r"[^a-z0-9,=]+", "_", label).strip("_")))
        for _ in range(args.runs):
            setup()
            cmd = argv if rec is None else rec + ["-q", "-o", data, "--"] + argv
            t, cpu, r = cpu_run(cmd, env=env)
            if r.returncode != 0:
                print("# %s: %s failed: %s" % (name, label, r.stderr[-300:]))
            times.append(t)
            cpus.append(cpu)
        res[label] = {"time": statistics.median(times), "cpu": statistics.median(cpus), "data": data if rec else None}
        if rec:
            res[label]["size"] = os.path.getsize(data)
            res[label]["samples"] = samples_of(pl, data)
            res[label]["stack"] = header_count(data, "stack")
    base = res["none"]["cpu"]
    print("== %s: %s" % (name, " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(argv))))
    print("%-20s %8s %8s %9s %10s %9s %8s %9s" % ("recording", "wall", "CPU", "overhead", "perf.data", "samples",
                                                  "stack", "to main"))
    for label, _ in modes:
        r = res[label]
        reached = ""
        if r.get("data"):
            got, total = reach(args.perf_loops, r["data"])
            reached = "%.2f%%" % (100.0 * got / max(1, total))
        print("%-20s %7.2fs %7.2fs %8.1f%% %9.1fM %9s %8s %9s" % (
            label, r["time"], r["cpu"], 100.0 * (r["cpu"] - base) / base, r.get("size", 0) / 1e6,
            r.get("samples", "-"), r.get("stack") or "-", reached))
    d, ref = res["again (measured)"]["data"], res["dwarf,65528"]["data"]
    ld, lr = loops(pl, d), loops(pl, ref)
    n, (worst, where) = compare_loops(ld, lr)
    print("loops over 1%%: %d; the largest difference of Total, default (measured) vs reference, two runs: %.2f "
          "points (%s)" % (n, worst, where))
    n0, (worst0, where0) = compare_loops(loops(pl, res["perf loops record"]["data"]), ld)
    print("the same between the two default runs (noise between runs): %.2f points (%s)" % (worst0, where0))
    limit = res["again (measured)"]["stack"]
    env_lim = dict(env, PERF_LOOPS_STACK_LIMIT=str(limit))
    rs, ls = reach(pl, ref, env_lim), loops(pl, ref, env_lim)
    n2, (worst2, where2) = compare_loops(ls, lr)
    print("one run, the reference unwound with the default's %d-byte copy: reaching %.2f%%, loops over 1%%: %d, "
          "largest difference %.2f points (%s)" % (limit, 100.0 * rs[0] / max(1, rs[1]), n2, worst2, where2))
    return res


def bench_speed(args, name, res, reps=3):
    """perf loops report/annotate vs perf report/annotate on the dwarf (8 KB) file."""
    data = res["--call-graph=dwarf"]["data"]
    pl = args.perf_loops
    run(["perf", "report", "-i", data, "--stdio"])  # warm perf's caches
    run([pl, "report", "-i", data, "--stdio"])
    cmds = [("perf loops report --stdio", [pl, "report", "--stdio", "-i", data]),
            ("perf report --stdio", ["perf", "report", "--stdio", "-i", data]),
            ("perf loops annotate --stdio", [pl, "annotate", "--stdio", "-i", data]),
            ("perf annotate --stdio", ["perf", "annotate", "--stdio", "-i", data])]
    t = {}
    for label, cmd in cmds:
        t[label] = statistics.median(run(cmd)[0] for _ in range(reps))
    print("report and annotate on the --call-graph=dwarf file (%.0f MB, %s samples), median of %d:" %
          (res["--call-graph=dwarf"]["size"] / 1e6, res["--call-graph=dwarf"]["samples"], reps))
    print("  perf loops report --stdio   %6.2fs   perf report --stdio   %6.2fs   ratio %.1fx" %
          (t[cmds[0][0]], t[cmds[1][0]], t[cmds[1][0]] / t[cmds[0][0]]))
    print("  perf loops annotate --stdio %6.2fs   perf annotate --stdio %6.2fs   ratio %.1fx" %
          (t[cmds[2][0]], t[cmds[3][0]], t[cmds[3][0]] / t[cmds[2][0]]))


def main():
    ap = argparse.ArgumentParser(description="perf loops record against perf record: time, size, call chains")
    ap.add_argument("build", nargs="?", default=os.path.join(HERE, ".."))
    ap.add_argument("--programs", default="xz,db_bench,lua5.4")
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    args.perf_loops = os.path.abspath(os.path.join(args.build, "perf-loops"))
    tmp = tempfile.mkdtemp(prefix="record-bench.", dir=os.environ.get("TMPDIR", "/var/tmp"))
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
    try:
        print("# bench/record.py %s, %d cores, load %s; %s" % (
            time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), os.cpu_count(),
            " ".join("%.2f" % x for x in os.getloadavg()),
            subprocess.run(["perf", "version"], stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()))
        w = workloads(tmp)
        for name in args.programs.split(","):
            if name not in w:
                print("== %s: cannot be built here" % name)
                continue
            argv, setup = w[name]
            res = bench_program(args, name, argv, setup, tmp, env)
            bench_speed(args, name, res)
            for r in res.values():
                if r.get("data") and os.path.exists(r["data"]):
                    os.unlink(r["data"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
