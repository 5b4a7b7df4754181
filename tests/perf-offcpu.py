#!/usr/bin/env python3
# tests/perf-offcpu.py - off-CPU and wall-clock time per loop, end to end:
# tests/fixtures/perf/off_cpu.c (gcc and clang -O2) recorded with
# `perf loops record --off-cpu`, reported with `perf loops report --wall`.
#
#  1. each waiting loop's off-CPU time of its reason is within 10% of the
#     time the program measured around its blocking calls (CLOCK_MONOTONIC),
#     and the rest of its off-CPU time is preemption (a loaded machine's,
#     between the calls, which the program does not time): sleep_loop (nanosleep) sleep,
#     pipe_loop (read of an empty pipe) io, mutex_loop (a mutex another
#     thread holds) futex; the CPU-bound loop's on-CPU time is within 10%
#     of its thread CPU time and none of its off-CPU time is a wait;
#  2. the independent count: perf script of the same file (perf's own
#     unwinding and symbols, its own parse of the tracepoint): per loop
#     function, the sched_switch samples whose chain passes through it,
#     each to the thread's next PERF_RECORD_SWITCH IN, summed: within 2%
#     of perf loops' numbers, with the same state (prev_state) and the
#     same kernel wait (futex, pipe) as perf loops' reasons;
#  3. a recording without off-CPU data: --wall says so (exit 1), and
#     record --off-cpu as a non-root user says that it needs root (when
#     perf_event_paranoid does not allow it).
# Needs root and the sched tracepoints: skips without them, saying which.
import collections
import importlib.util
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("core_common", os.path.join(HERE, "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)

PERF_LOOPS = os.environ.get("PERF_LOOPS") or os.path.join(C.TOP_BUILDDIR, "perf-loops")
WAITS = {"sleep_loop": "sleep", "pipe_loop": "io", "mutex_loop": "futex"}
REASONS = ("sleep", "io", "futex", "preempt")


def known_values(out):
    v = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3 and f[1] in ("off_ns", "cpu_ns"):
            v[f[0]] = int(f[2])
    return v


def wall_loops(text):
    """The --wall view's loop rows: function -> its outermost loop's times
    (ns; the row of the function with the most wall time)."""
    loops = {}
    body = text.split("# Loops by wall time", 1)[-1]
    for line in body.splitlines():
        m = re.match(r"\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+): loop at",
                     line)
        if not m:
            continue
        vals = [float(x) * 1e6 for x in m.groups()[:7]]
        row = dict(zip(("wall", "on", "off") + REASONS, vals))
        fn = m.group(8)
        if fn not in loops or row["wall"] > loops[fn]["wall"]:
            loops[fn] = row
    return loops


def perf_script_offcpu(data, funcs):
    """perf's own view of the file: per function, the off-CPU time of the
    switches whose call chain passes through it, by prev_state and by the
    kernel function it waited in."""
    r = C.run(["perf", "script", "-i", data, "--ns", "--show-switch-events", "-F", "tid,time,event,ip,sym,trace"])
    pending = {}
    total = collections.Counter()
    states = collections.defaultdict(collections.Counter)
    waits = collections.defaultdict(collections.Counter)
    cur = None
    for line in r.stdout.splitlines():
        m = re.match(r"\s*(\d+)\s+(\d+)\.(\d+):\s+(.*)", line)
        if m:
            tid, t = int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0")[:9])
            rest = m.group(4)
            cur = None
            if rest.startswith("sched:sched_switch:"):
                st = re.search(r"prev_state=(\S+)", rest).group(1)
                cur = pending[tid] = {"t": t, "state": st, "syms": []}
            elif rest.startswith("PERF_RECORD_SWITCH IN") and tid in pending:
                p = pending.pop(tid)
                syms = [s.split(".")[0] for s in p["syms"]]
                wait = "futex" if any("futex" in s for s in syms) else \
                    "pipe" if any("pipe_read" in s for s in syms) else "other"
                for fn in funcs:
                    if fn in syms:
                        total[fn] += t - p["t"]
                        states[fn][p["state"]] += t - p["t"]
                        waits[fn][wait] += t - p["t"]
            continue
        f = line.split()
        if cur is not None and len(f) >= 2:
            cur["syms"].append(f[1])
    return total, states, waits, r


def within(x, want, frac):
    return want > 0 and abs(x - want) <= frac * want


def check_build(tap, tmp, cc):
    exe = os.path.join(tmp, "off_cpu-" + cc)
    err = C.compile_fixture(cc, "-O2", os.path.join("perf", "off_cpu.c"), exe, extra=("-pthread",))
    if not tap.ok(err is None, "%s -O2 off_cpu.c builds" % cc):
        tap.diag(err)
        return
    data = os.path.join(tmp, "off_cpu-%s.data" % cc)
    rec = C.run([PERF_LOOPS, "record", "--off-cpu", "-o", data, "--", exe])
    if not tap.ok(rec.returncode == 0, "%s: perf loops record --off-cpu runs the program" % cc):
        tap.diag(rec.stderr)
        return
    known = known_values(rec.stdout)
    rep = C.run([PERF_LOOPS, "report", "-q", "--stdio", "--wall", "-i", data])
    loops = wall_loops(rep.stdout)
    if not tap.ok(rep.returncode == 0 and all(f in loops for f in list(WAITS) + ["cpu_loop"]),
                  "%s: --wall shows a loop in each of cpu_loop, sleep_loop, pipe_loop, mutex_loop" % cc):
        tap.diag(rep.stdout + rep.stderr)
        return
    for fn, reason in WAITS.items():
        row = loops[fn]
        # The program times its blocking calls; a loaded machine also
        # preempts the loop's thread between them (R at the switch: reason
        # "preempt"), which is off-CPU time of the loop the program does
        # not see.  So the wait's own reason is what must equal the
        # program's figure, and the rest must be preemption.
        other = sum(row[k] for k in REASONS if k not in (reason, "preempt"))
        tap.ok(within(row[reason], known[fn], 0.10), "%s: %s's loop waits (%s) %.1f ms, the program measured "
               "%.1f ms (10%%)" % (cc, fn, reason, row[reason] / 1e6, known[fn] / 1e6))
        tap.ok(other <= 0.1 * row[reason], "%s: %s's other off-CPU time is preemption (%.1f ms), no other wait "
               "(%.1f ms)" % (cc, fn, row["preempt"] / 1e6, other / 1e6))
    cpu = loops["cpu_loop"]
    tap.ok(within(cpu["on"], known["cpu_loop"], 0.10), "%s: cpu_loop's loop is on the CPU %.1f ms, its thread CPU "
           "time is %.1f ms (10%%)" % (cc, cpu["on"] / 1e6, known["cpu_loop"] / 1e6))
    tap.ok(cpu["sleep"] + cpu["io"] + cpu["futex"] == 0, "%s: cpu_loop never waits (off the CPU only when "
           "preempted: %.1f ms)" % (cc, cpu["preempt"] / 1e6))
    check_json(tap, cc, data, rep.stdout)
    cross_check(tap, cc, data, loops)


def check_json(tap, cc, data, wall):
    """--format=json: the root's off_cpu reasons are the --wall [all] row's,
    and they add up to the sched_switch event's period."""
    import json
    r = C.run([PERF_LOOPS, "report", "-q", "--format=json", "-i", data])
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        tap.ok(False, "%s: --format=json parses" % cc)
        tap.diag(r.stderr)
        return
    names = [e["name"] for e in doc["events"]]
    off = doc["tree"].get("off_cpu", {})
    row = next((l.split() for l in wall.splitlines() if l.rstrip().endswith("[all]")), [])
    ev_period = doc["events"][names.index("sched:sched_switch")]["period"] if "sched:sched_switch" in names else -1
    tap.ok(doc.get("off_cpu_event") == "sched:sched_switch" and sum(off.values()) == ev_period and
           len(row) >= 8 and all(abs(off[k] / 1e6 - float(row[3 + i])) <= 0.05 for i, k in enumerate(REASONS)),
           "%s: --format=json's off_cpu reasons add up to sched_switch's period and are --wall's" % cc)


def cross_check(tap, cc, data, loops):
    total, states, waits, r = perf_script_offcpu(data, list(WAITS) + ["cpu_loop"])
    if not tap.ok(r.returncode == 0 and total, "%s: perf script reads the recording" % cc):
        tap.diag(r.stderr[-2000:])
        return
    for fn in WAITS:
        tap.ok(within(loops[fn]["off"], total[fn], 0.02), "%s: %s off the CPU: perf loops %.2f ms, perf script "
               "%.2f ms (2%%)" % (cc, fn, loops[fn]["off"] / 1e6, total[fn] / 1e6))
    s, w = states, waits
    def runnable(fn):  # preempted (R at the switch): a loaded machine's part
        return sum(v for k, v in s[fn].items() if k.startswith("R"))
    tap.ok(s["sleep_loop"]["S"] + runnable("sleep_loop") >= 0.9 * total["sleep_loop"] and
           w["sleep_loop"]["other"] >= 0.9 * total["sleep_loop"],
           "%s: perf script: sleep_loop leaves in state S (or preempted), in no futex or pipe wait" % cc)
    tap.ok(s["pipe_loop"]["S"] + runnable("pipe_loop") >= 0.9 * total["pipe_loop"] and
           w["pipe_loop"]["pipe"] + runnable("pipe_loop") >= 0.9 * total["pipe_loop"],
           "%s: perf script: pipe_loop leaves in state S, waiting in pipe_read (or preempted)" % cc)
    tap.ok(w["mutex_loop"]["futex"] + runnable("mutex_loop") >= 0.9 * total["mutex_loop"],
           "%s: perf script: mutex_loop waits in futex code (or is preempted)" % cc)
    pre = sum(v for k, v in s["cpu_loop"].items() if k.startswith("R"))
    # a fraction of a millisecond: 2% of it is a few microseconds, less than
    # one switch whose chain passes through cpu_loop outside its loop
    near = abs(loops["cpu_loop"]["preempt"] - pre) <= max(0.02 * pre, 0.5e6)
    tap.ok(pre == total["cpu_loop"] and near,
           "%s: perf script: cpu_loop leaves only preempted (R), %.2f ms, perf loops %.2f ms"
           % (cc, pre / 1e6, loops["cpu_loop"]["preempt"] / 1e6))


def check_refusals(tap, tmp):
    data = os.path.join(tmp, "plain.data")
    rec = C.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", data, "true"])
    rep = C.run([PERF_LOOPS, "report", "--stdio", "--wall", "-i", data])
    tap.ok(rec.returncode == 0 and rep.returncode == 1 and "no off-CPU data" in rep.stderr and
           "--off-cpu" in rep.stderr, "--wall on a recording without off-CPU data says so, exit 1")
    paranoid = int(open("/proc/sys/kernel/perf_event_paranoid").read().split()[0])
    if paranoid <= -1 or not shutil.which("setpriv"):
        tap.skip("perf_event_paranoid is %d: a non-root user may trace the scheduler here" % paranoid)
        return
    r = C.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", PERF_LOOPS, "record", "--off-cpu",
               "-o", os.path.join(tmp, "x.data"), "--", "true"])
    tap.ok(r.returncode == 1 and "run as root" in r.stderr, "record --off-cpu as a non-root user: needs root, "
           "exit 1")
    if r.returncode != 1:
        tap.diag(r.stderr)


def main():
    C.need_tools("gcc", "perf")
    if not os.access(PERF_LOOPS, os.X_OK):
        C.skip_all("perf-loops not built")
    if os.geteuid() != 0:
        C.skip_all("not root: tracing the scheduler (sched:sched_switch) needs root")
    if not any(os.path.exists(d + "/events/sched/sched_switch") for d in ("/sys/kernel/tracing",
                                                                          "/sys/kernel/debug/tracing")):
        C.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"])
    if not os.path.exists("/sys/kernel/tracing/events/sched/sched_switch") and \
            not os.path.exists("/sys/kernel/debug/tracing/events/sched/sched_switch"):
        C.skip_all("no tracefs with the sched:sched_switch tracepoint")
    tmp = C.scratch_dir()
    tap = C.Tap()
    for cc in ("gcc", "clang"):
        if shutil.which(cc):
            check_build(tap, tmp, cc)
    check_refusals(tap, tmp)
    tap.done()


if __name__ == "__main__":
    main()
