#!/usr/bin/env python3
# tests/perf-offcpu-io.py - off-CPU time blocked on disk I/O (D state) per
# loop: tests/fixtures/perf/disk_io.c (gcc and clang -O2) reads a file on
# a real disk under /var/tmp with O_DIRECT (no page cache: each read waits
# for the device in D state), recorded with `perf loops record --off-cpu`.
#
#  1. io_loop's off-CPU time of reason io equals, within 1% and 0.2 ms,
#     what perf script of the same file says (perf's own parse: each
#     sched_switch out of the program in state D to its next
#     PERF_RECORD_SWITCH IN), and the rest of its off-CPU time is
#     preemption; the same in --wall --format=json's per-loop summary;
#  2. the program's own measure of its time off the CPU around its reads
#     (CLOCK_MONOTONIC less the thread's CPU time) agrees within a factor
#     of 2: it is printed, and on a quiet machine it is within 5%, but on
#     a loaded one it was once 30% below perf's D-state time (its cause is
#     not known: so perf script is the oracle, and this only a sanity bound);
#  3. perf script: the program's switches out are in state D.
# Needs root, the sched tracepoints and O_DIRECT on /var/tmp (tmpfs has
# none): skips without them, saying which.
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("core_common", os.path.join(HERE, "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)

PERF_LOOPS = os.environ.get("PERF_LOOPS") or os.path.join(C.TOP_BUILDDIR, "perf-loops")
REASONS = ("sleep", "io", "futex", "preempt")
ROUNDS = "200"


def wall_loops(text):
    """The --wall view's loop rows: function -> its loop's times (ns)."""
    loops = {}
    body = text.split("# Loops by wall time", 1)[-1]
    for line in body.splitlines():
        m = re.match(r"\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+): loop at",
                     line)
        if m:
            # whole ns, as printed: 8.2 ms is 8200000, not 8199999.999999999,
            # so that a JSON value half a printed unit away (8.25 ms) is within 0.05 ms
            vals = [round(float(x) * 1e6) for x in m.groups()[:7]]
            loops[m.group(8)] = dict(zip(("wall", "on", "off") + REASONS, vals))
    return loops


def d_state_ns(rec):
    """The time the program's threads spent switched out in state D, from
    perf script: each sched_switch out with prev_state D to the thread's
    next PERF_RECORD_SWITCH IN."""
    out = C.run(["perf", "script", "-i", rec, "--show-switch-events", "-F", "tid,time,event,trace"]).stdout
    pending, total = {}, 0
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\s+(\d+)\.(\d+):\s+(.*)$", line)
        if not m:
            continue
        tid, t = int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0")[:9])
        if m.group(4).startswith("sched:sched_switch:") and re.search(r"prev_pid=%d .*prev_state=D" % tid, m.group(4)):
            pending[tid] = t
        elif m.group(4).startswith("PERF_RECORD_SWITCH IN") and tid in pending:
            total += t - pending.pop(tid)
    return total


def check_build(tap, tmp, data, cc):
    exe = os.path.join(tmp, "disk_io-" + cc)
    err = C.compile_fixture(cc, "-O2", "perf/disk_io.c", exe)
    if not tap.ok(err is None, "%s -O2 disk_io.c: compile" % cc):
        tap.diag(err)
        return
    rec = os.path.join(tmp, cc + ".data")
    r = C.run([PERF_LOOPS, "record", "--off-cpu", "-o", rec, "--", exe, data, ROUNDS])
    m = re.search(r"io_loop off_ns (\d+)", r.stdout)
    if not tap.ok(r.returncode == 0 and m, "%s: perf loops record --off-cpu of disk_io" % cc):
        tap.diag(r.stdout + r.stderr)
        return
    measured = int(m.group(1))
    known = d_state_ns(rec)
    w = C.run([PERF_LOOPS, "report", "--wall", "--stdio", "-i", rec])
    row = wall_loops(w.stdout).get("io_loop")
    if not tap.ok(row is not None, "%s: --wall has io_loop's loop" % cc):
        tap.diag(w.stdout[-3000:] + w.stderr)
        return
    tap.ok(abs(row["io"] - known) <= 0.01 * known + 0.2e6,
           "%s: io_loop off-CPU for I/O %.1f ms, perf script's D-state time %.1f ms (within 1%% and 0.2 ms)"
           % (cc, row["io"] / 1e6, known / 1e6))
    tap.ok(known / 2 <= measured <= known * 2,
           "%s: the program measured %.1f ms off the CPU in its reads (%.0f%% of perf's D-state time)"
           % (cc, measured / 1e6, 100.0 * measured / max(known, 1)))
    tap.ok(row["sleep"] == 0 and row["futex"] == 0 and abs(row["off"] - row["io"] - row["preempt"]) < 0.2e6,
           "%s: io_loop's other off-CPU time is preemption only (sleep %.1f, futex %.1f, preempt %.1f ms)"
           % (cc, row["sleep"] / 1e6, row["futex"] / 1e6, row["preempt"] / 1e6))
    j = C.run([PERF_LOOPS, "report", "--wall", "--format=json", "-i", rec])
    try:
        loops = {l["function"]: l for l in json.loads(j.stdout)["loops"]}
    except ValueError:
        loops = {}
    jl = loops.get("io_loop")
    if not tap.ok(jl is not None and abs(jl["off_cpu"]["io"] - known) <= 0.01 * known + 0.2e6 and
                  all(abs(jl[k] - row[v]) <= 0.05e6
                      for k, v in (("wall_ns", "wall"), ("on_cpu_ns", "on"), ("off_cpu_ns", "off")))
                  and jl["off_cpu_ns"] == sum(jl["off_cpu"].values()),
                  "%s: --wall --format=json: io_loop's per-loop summary, I/O as perf script's, "
                  "equal to the text view's row, reasons summing to its off-CPU time" % cc):
        # it failed once on a loaded machine: say which part
        tap.diag("known %d ns; text row %r" % (known, row))
        tap.diag("JSON loop %r" % jl if jl is not None else j.stdout[-2000:] + j.stderr)
        tap.diag("JSON loops of io_loop: %d" % sum(1 for l in json.loads(j.stdout or "{}").get("loops", [])
                                                   if l.get("function") == "io_loop"))
    s = C.run(["perf", "script", "-i", rec, "-F", "comm,event,trace"])
    states = re.findall(r"^\s*disk_io-%s\s+sched:sched_switch:.*prev_state=(\S+)" % re.escape(cc), s.stdout, re.M)
    d = sum(1 for st in states if st.startswith("D"))
    tap.ok(len(states) >= int(ROUNDS) // 2 and d >= 0.9 * len(states),
           "%s: perf script: %d of the program's %d switches out are in state D (at least 90%%, at least %d)"
           % (cc, d, len(states), int(ROUNDS) // 2))


def direct_file(tmp):
    """A 16 MiB file on the disk under /var/tmp that O_DIRECT can read, or None."""
    path = os.path.join(tmp, "data")
    with open(path, "wb") as f:
        f.write(os.urandom(16 << 20))
        f.flush()
        os.fsync(f.fileno())
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
        os.close(fd)
    except OSError:
        return None
    return path


def main():
    C.need_tools("gcc", "perf")
    if not os.access(PERF_LOOPS, os.X_OK):
        C.skip_all("perf-loops not built")
    if os.geteuid() != 0:
        C.skip_all("not root: tracing the scheduler (sched:sched_switch) needs root")
    if not os.path.exists("/sys/kernel/tracing/events/sched/sched_switch"):
        C.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"])
    if not os.path.exists("/sys/kernel/tracing/events/sched/sched_switch") and \
            not os.path.exists("/sys/kernel/debug/tracing/events/sched/sched_switch"):
        C.skip_all("no tracefs with the sched:sched_switch tracepoint")
    tmp = C.scratch_dir()
    disk = tempfile.mkdtemp(prefix="ls-offcpu-io.", dir="/var/tmp")
    try:
        data = direct_file(disk)
        if data is None:
            C.skip_all("/var/tmp has no O_DIRECT (not a block device's file system)")
        tap = C.Tap()
        for cc in ("gcc", "clang"):
            if shutil.which(cc):
                check_build(tap, tmp, data, cc)
    finally:
        shutil.rmtree(disk, True)
    tap.done()


if __name__ == "__main__":
    main()
