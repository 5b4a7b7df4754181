#!/usr/bin/env python3
# bench/offcpu.py - what off-CPU profiling per loop costs, and what it
# tells, against the peer a user would otherwise use.
#
#   bench/offcpu.py [BUILD_DIR] [--runs N]     (default: the source tree, 3)
#
# perf 6.x's own `perf record --off-cpu` needs BPF skeletons, which
# Debian's perf is built without: perf ignores the option ("option
# `off-cpu' is being ignored because no BUILD_BPF_SKEL=1", said below if
# so).  The peer is then perf's scheduler analysis: `perf sched record -g`
# (system-wide scheduler tracepoints with kernel call chains) and `perf
# sched timehist` (each switch-in with the thread's wait time, scheduling
# delay and the chain where it left).  The program is
# tests/fixtures/perf/off_cpu.c (gcc -O2): a CPU-bound loop, then loops
# that sleep, read a pipe and wait on a mutex, about 0.2 s each.
#
# In one run, N rounds (medians), each way in turn in every round so that
# the machine's load falls on all alike: the CPU time (user + system, of
# perf and the program together) and the data written, of the plain run,
# `perf loops record --off-cpu` and `perf sched record -g`; the analysis
# time of `perf loops report --wall` and of `perf sched timehist` on the
# files; and the program's off-CPU total as each tells it (perf loops: the
# [all] row; timehist: wait time + sch delay summed over the program's
# threads), beside what the program measured itself.  Needs root.
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, **kw):
    """(wall s, CPU s of the children, CompletedProcess)"""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, **kw)
    t1 = time.monotonic()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return t1 - t0, cpu, p


def known_off(out):
    return sum(int(l.split()[2]) for l in out.splitlines() if len(l.split()) >= 3 and l.split()[1] == "off_ns")


def perf_loops_off(text):
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 8 and f[-1] == "[all]":
            return float(f[2]) * 1e6
    return None


def loop_off(text, funcs):
    """perf loops --wall: the off-CPU time of FUNCS' outermost loops (ns)."""
    best = {}
    for line in text.split("# Loops by wall time", 1)[-1].splitlines():
        m = re.match(r"\s*([\d.]+)\s+[\d.]+\s+([\d.]+)\s+(?:[\d.]+\s+){4}(\S+): loop at", line)
        if m and m.group(3) in funcs and float(m.group(1)) > best.get(m.group(3), (0, 0))[0]:
            best[m.group(3)] = (float(m.group(1)), float(m.group(2)) * 1e6)
    return sum(v[1] for v in best.values())


def timehist_off(text, comm):
    """wait time + sch delay (ms columns) of COMM's threads, summed (ns)."""
    total = 0.0
    for line in text.splitlines():
        m = re.match(r"\s*[\d.]+\s+\[\d+\]\s+(\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", line)
        if m and m.group(1).startswith(comm + "["):
            total += (float(m.group(2)) + float(m.group(3))) * 1e6
    return total


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--runs")]
    runs = 3
    for i, a in enumerate(sys.argv):
        if a.startswith("--runs"):
            runs = int(a.split("=", 1)[1]) if "=" in a else int(sys.argv[i + 1])
            args = [x for x in args if x != sys.argv[i + 1]] if "=" not in a else args
    build = args[0] if args else HERE
    perf_loops = os.environ.get("PERF_LOOPS") or os.path.join(build, "perf-loops")
    if os.geteuid() != 0:
        sys.exit("offcpu.py: needs root (the scheduler's tracepoints)")
    work = tempfile.mkdtemp(prefix="offcpu-bench.")
    try:
        bench(perf_loops, work, runs)
    finally:
        shutil.rmtree(work, True)


def bench(perf_loops, work, runs):
    exe = os.path.join(work, "off_cpu")
    subprocess.run(["gcc", "-O2", "-g", "-pthread", "-o", exe, os.path.join(HERE, "tests/fixtures/perf/off_cpu.c")],
                   check=True)
    native = subprocess.run(["perf", "record", "--off-cpu", "-o", os.path.join(work, "native.data"), "true"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True).stdout
    said = [re.sub(r"(BUILD_BPF_SKEL=1).*", r"\1", l.strip()) for l in native.splitlines() if "off-cpu" in l]
    print("# bench/offcpu.py %s, %d cores, load %s; %s" % (
        time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), os.cpu_count(), " ".join("%.2f" % x for x in os.getloadavg()),
        subprocess.run(["perf", "version"], stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()))
    print("# perf record --off-cpu here: %s" % (said[0] if said else "accepted (BPF skeletons built in)"))
    ploops, psched = os.path.join(work, "loops.data"), os.path.join(work, "sched.data")
    ways = {
        "plain": [exe],
        "perf loops record --off-cpu": [perf_loops, "record", "--off-cpu", "-o", ploops, "--", exe],
        "perf sched record -g": ["perf", "sched", "record", "-g", "-o", psched, "--", exe],
    }
    cpu = {k: [] for k in ways}
    size = {}
    known = []
    an = {"perf loops report --wall": [], "perf sched timehist": []}
    told = {}
    for _ in range(runs):
        for k, cmd in ways.items():
            _, c, p = timed(cmd)
            if p.returncode:
                sys.exit("offcpu.py: %s failed: %s" % (k, p.stderr[-500:]))
            cpu[k].append(c)
            known.append(known_off(p.stdout))
        size["perf loops record --off-cpu"] = os.path.getsize(ploops)
        size["perf sched record -g"] = os.path.getsize(psched)
        w, _, p = timed([perf_loops, "report", "-q", "--stdio", "--wall", "-i", ploops])
        an["perf loops report --wall"].append(w)
        told["perf loops report --wall"] = perf_loops_off(p.stdout)
        told["loops"] = loop_off(p.stdout, ("sleep_loop", "pipe_loop", "mutex_loop"))
        w, _, p = timed(["perf", "sched", "timehist", "-i", psched])
        an["perf sched timehist"].append(w)
        told["perf sched timehist"] = timehist_off(p.stdout, "off_cpu")
    base = statistics.median(cpu["plain"])
    print("\n%-30s %9s %9s %10s" % ("recording", "CPU s", "vs plain", "data"))
    for k in ways:
        m = statistics.median(cpu[k])
        print("%-30s %9.3f %8.2fx %9s" % (k, m, m / base if base else 0,
                                         "%.1f MB" % (size[k] / 1e6) if k in size else "-"))
    a0 = statistics.median(an["perf sched timehist"])
    print("\n%-30s %9s %9s %14s" % ("analysis (median)", "wall s", "vs peer", "off-CPU told"))
    for k in an:
        m = statistics.median(an[k])
        print("%-30s %9.3f %8.2fx %11.1f ms" % (k, m, m / a0 if a0 else 0, (told[k] or 0) / 1e6))
    print("\noff-CPU time of the three waiting loops (sleep_loop, pipe_loop, mutex_loop), last round:")
    print("  the program measured (median of its runs)  %8.1f ms" % (statistics.median(known) / 1e6))
    print("  perf loops report --wall, their loops      %8.1f ms" % (told["loops"] / 1e6))
    print("  perf sched timehist                        (per thread and switch only: no user frames, no loops)")


if __name__ == "__main__":
    main()
