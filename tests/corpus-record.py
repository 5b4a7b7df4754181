#!/usr/bin/env python3
# tests/corpus-record.py - `perf loops record` with no options on real
# programs built as Debian builds them (-O2 -g, no frame pointers): xz -6,
# LevelDB's db_bench (tests/corpus/packages.py builds both from Debian's
# source packages) and the corpus's lua5.4 (gcc -O2) on bench.lua.
#
#   - it chooses a DWARF-style stack copy, says why, and the second
#     recording of the program sizes the copy from the depth the first
#     measured;
#   - >= 99% of the samples' chains reach main or start_thread;
#   - against the complete reference, --call-graph=dwarf,65528 (one
#     recording, unwound in full and as if perf had copied only the
#     default's stack size: PERF_LOOPS_STACK_LIMIT, so that sampling noise
#     between two runs does not enter), every loop over 1% has the same
#     Total within 1 point, and as many samples reach main.
# The two-run comparison, sizes and overheads are bench/record.py's.
# Slow tier: Debian source builds, recordings of hundreds of megabytes.
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
_spec = importlib.util.spec_from_file_location("bench_record", os.path.join(C.TOP_SRCDIR, "bench", "record.py"))
B = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(B)

PERF_LOOPS = os.environ.get("PERF_LOOPS") or os.path.join(C.TOP_BUILDDIR, "perf-loops")


def record(cmd, env=None):
    """The command's stderr (its stdout, xz's compressed data, discarded)."""
    return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                          universal_newlines=True, errors="replace")


def check(tap, tmp, name, argv, setup, env):
    data = os.path.join(tmp, name + ".data")
    setup()
    r1 = record([PERF_LOOPS, "record", "-o", data, "--"] + argv, env=env)
    m1 = re.search(r"^perf loops: --call-graph=dwarf,(\d+): (.*)$", r1.stderr, re.M)
    tap.ok(r1.returncode == 0 and m1 is not None and "keep" in m1.group(2),
           "%s: perf loops record chooses a stack copy (dwarf,%s) and says why" % (name, m1.group(1) if m1 else "-"))
    setup()
    r2 = record([PERF_LOOPS, "record", "-o", data, "--"] + argv, env=env)
    m2 = re.search(r"--call-graph=dwarf,(\d+): .*from the depth the last recording of this program measured",
                   r2.stderr)
    tap.ok(r2.returncode == 0 and m2 is not None,
           "%s: the second recording sizes its copy from the measured depth: dwarf,%s" % (name, m2.group(1) if m2
                                                                                          else "-"))
    if r2.returncode != 0:
        return
    got, total = B.reach(PERF_LOOPS, data)
    tap.ok(total > 1000 and got >= 0.99 * total,
           "%s: %d of %d samples (%.2f%%) reach main or start_thread (>= 99%%)" %
           (name, got, total, 100.0 * got / max(1, total)))
    size = int(m2.group(1)) if m2 else 0
    os.unlink(data)
    ref = os.path.join(tmp, name + "-ref.data")
    setup()
    r = record(["perf", "record", "-q", "-m", "256M", "-e", "cpu-clock", "--call-graph=dwarf,65528", "-o", ref, "--"]
               + argv)
    if not tap.ok(r.returncode == 0, "%s: perf record --call-graph=dwarf,65528" % name):
        return
    full, cut = B.loops(PERF_LOOPS, ref), B.loops(PERF_LOOPS, ref, dict(env, PERF_LOOPS_STACK_LIMIT=str(size)))
    n, (worst, where) = B.compare_loops(cut, full)
    tap.ok(n > 3 and worst <= 1.0,
           "%s: the %d loops over 1%% have their Total within 1 point of the reference's with the default's %d-byte "
           "copy (largest difference %.2f, %s)" % (name, n, size, worst, where))
    rf, rc = B.reach(PERF_LOOPS, ref), B.reach(PERF_LOOPS, ref, dict(env, PERF_LOOPS_STACK_LIMIT=str(size)))
    tap.ok(rc[0] >= rf[0] - 0.01 * rf[1], "%s: reaching main: %d with the whole stack, %d with %d bytes of it" %
           (name, rf[0], rc[0], size))
    os.unlink(ref)


def main():
    C.need_tools("perf", "cmake", "make")
    if not os.access(PERF_LOOPS, os.X_OK):
        C.skip_all("perf-loops not built")
    tmp = C.scratch_dir()
    probe = C.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", os.path.join(tmp, "probe.data"), "true"])
    if probe.returncode != 0:
        C.skip_all("perf record does not work here")
    os.environ.setdefault("LOOPSCOPE_CORPUS_QUIET", "1")
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
    tap = C.Tap()
    w = B.workloads(tmp)
    for name in ("xz", "db_bench", "lua5.4"):
        if name not in w:
            tap.skip("%s: not built: its Debian source is not there (make check-slow-setup fetches it), "
                     "or its build failed" % name)
            continue
        argv, setup = w[name]
        check(tap, tmp, name, argv, setup, env)
    shutil.rmtree(tmp, ignore_errors=True)
    tap.done()


if __name__ == "__main__":
    main()
