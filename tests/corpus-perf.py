#!/usr/bin/env python3
# tests/corpus-perf.py - perf loops on a real interpreter: the hottest loop
# is the dispatch loop.
#
# Lua 5.4 (computed goto) and Lua 5.3 (switch) of the corpus
# (tests/corpus/corpus.py; PIE, gcc and clang -O2), run under `perf loops
# record` on tests/corpus/bench.lua (plain Lua code: calls, arithmetic,
# tables, closures, strings; Debian's lua sources ship no benchmark).
# `perf loops report --format=loops` must rank first a loop of luaV_execute
# that holds its dispatch: the loop must be one of those around
# luaV_execute's indirect jumps (their addresses from llvm-objdump, their
# loops from loopscope lookup), and luaV_execute must take the largest
# share of the samples of any procedure (self, perf loops --format=flat),
# so that the dispatch loop is the right answer.  Call graphs come from
# DWARF (--call-graph=dwarf): the corpus has no frame pointers.
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
sys.path.insert(0, os.path.join(HERE, "corpus"))
import corpus  # noqa: E402

PERF_LOOPS = os.environ.get("PERF_LOOPS") or os.path.join(C.TOP_BUILDDIR, "perf-loops")
DISPATCH = "luaV_execute"
WANT = [("lua5.4", "gcc", "-O2"), ("lua5.3", "gcc", "-O2"), ("lua5.4", "clang", "-O2"), ("lua5.3", "clang", "-O2")]

# A loops-view row: "loop at FILE:LINE", its marks where they apply ("(part
# N of M)", "[irreducible, line guessed: RULE]"), then "(PROC [MODULE])".
_row = re.compile(r"^\s*([\d.]+)%\s+([\d.]+)%\s+(\d+)\s+loop at (\S+):(\d+)"
                  r"(?: \(part \d+ of \d+\))?(?: \[[^\]]*\])?\s+\((\S+) \[([^\]]+)\]")
_flat = re.compile(r"^\s*([\d.]+)%\s+([\d.]+)%\s+(\d+)\s+(\S.*?)\s+\[([^\]]+)\]\s*$")


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, **kw)


def dispatch_loops(binary, env):
    """(file basename, line) of every loop around luaV_execute's indirect
    jumps, per loopscope lookup."""
    rng = None
    for line in run(["nm", "-S", binary]).stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[3] == DISPATCH:
            rng = (int(f[0], 16), int(f[0], 16) + int(f[1], 16))
    if not rng:
        return set(), 0
    dis = run(["llvm-objdump", "-d", "--no-show-raw-insn", "--start-address=%#x" % rng[0],
               "--stop-address=%#x" % rng[1], binary]).stdout
    jumps = [m.group(1) for m in re.finditer(r"^\s*([0-9a-f]+):\s+jmpq?\s+\*", dis, re.M)]
    r = run([C.LOOPSCOPE, "lookup", "--json", binary] + ["0x" + j for j in jumps], env=env)
    loops = set()
    for line in r.stdout.splitlines():
        for x in json.loads(line).get("chain", []):
            if x["kind"] == "loop":
                loops.add((os.path.basename(x["file"] or "??"), x["line"]))
    return loops, len(jumps)


def main():
    for tool in ("perf", "llvm-objdump", "nm"):
        if not shutil.which(tool):
            C.skip_all("%s not installed" % tool)
    if not os.access(PERF_LOOPS, os.X_OK) or not os.access(C.LOOPSCOPE, os.X_OK):
        C.skip_all("perf-loops or loopscope not built")
    tmp = C.scratch_dir()
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(PERF_LOOPS)) + os.pathsep + os.environ["PATH"])
    probe = run(["perf", "record", "-q", "-e", "cpu-clock", "-o", os.path.join(tmp, "probe.data"), "true"])
    if probe.returncode != 0:
        C.skip_all("perf record does not work here: %s" % (probe.stderr.strip().splitlines() or ["?"])[0])
    os.environ.setdefault("LOOPSCOPE_CORPUS_QUIET", "1")
    tap = C.Tap()
    for name, cc, opt in WANT:
        program = [p for p in corpus.PROGRAMS if p.name == name][0]
        b = corpus.build(program, cc, opt)
        label = "%s %s %s" % (name, cc, opt)
        if b is None:
            tap.skip("%s: not in the corpus (make check-slow-setup fetches and builds it)" % label)
            continue
        data = os.path.join(tmp, "%s-%s.data" % (name, cc))
        # Call graphs from DWARF: the corpus is built as distributions build,
        # without frame pointers, so frame-pointer chains would be garbage.
        rec = run(["perf-loops", "record", "--call-graph=dwarf", "-o", data, "--"] + b.command(), env=env, cwd=tmp)
        if not tap.ok(rec.returncode == 0 and "checksum" in rec.stdout,
                      "%s: perf loops record --call-graph=dwarf -- %s bench.lua 12" % (label, name)):
            tap.diag(rec.stderr[-800:])
            continue
        rep = run(["perf-loops", "report", "-i", data, "--stdio", "--format=loops"], env=env)
        rows = [m for m in map(_row.match, rep.stdout.splitlines()) if m]
        if not tap.ok(rep.returncode == 0 and rows, "%s: perf loops report --format=loops ranks loops" % label):
            tap.diag(rep.stdout[-800:] + rep.stderr[-800:])
            continue
        for m in rows[:4]:
            tap.diag("%s: %s%% loop at %s:%s (%s)" % (label, m.group(1), m.group(4), m.group(5), m.group(6)))
        top = rows[0]
        around, njumps = dispatch_loops(b.path, env)
        first = (os.path.basename(top.group(4)), int(top.group(5)))
        tap.ok(top.group(6) == DISPATCH and first in around,
               "%s: the first loop (%s%%, loop at %s:%d in %s) is a dispatch loop of %s (around its %d "
               "indirect jumps: %s)" % (label, top.group(1), first[0], first[1], top.group(6), DISPATCH, njumps,
                                        ", ".join("%s:%d" % x for x in sorted(around)[:6]) +
                                        (", ..." if len(around) > 6 else "") if around else "none"))
        flat = run(["perf-loops", "report", "-i", data, "--stdio", "--format=flat"], env=env)
        procs = [(float(m.group(2)), m.group(4)) for m in map(_flat.match, flat.stdout.splitlines())
                 if m and not m.group(4).startswith(("loop at", "[I]", "[unknown]"))]
        procs = [p for p in procs if ":" not in p[1] or "(" in p[1]]
        hottest = max(procs) if procs else (0.0, "none")
        tap.ok(hottest[1] == DISPATCH, "%s: %s is the hottest procedure (%.2f%% self)" % (label, hottest[1],
                                                                                           hottest[0]))
    tap.done()


if __name__ == "__main__":
    main()
