#!/usr/bin/env python3
# perf-cxx-names.py - C++ names in perf loops, against perf report's own, on
# a real recording (perf record -e cpu-clock --call-graph=fp) of
# tests/fixtures/perf/cxx_operators.cpp: every overloadable operator as a
# member of a class template, a conversion operator and a template of one,
# operator new/delete (and []), co_await, a literal operator, free operator
# templates, and an overloaded function; built with g++ and clang++ -O2 -g.
#
#   - -s sym: every operator of the fixture has its row, the operator whole
#     (followed by its parameters or its template arguments, never cut);
#   - each of perf report -s sym's rows has one row of ours with the same
#     samples (perf report -n), whose shortened name elides whole template
#     argument and parameter lists of perf's name and nothing else: the
#     check walks both names and lets each "<...>" and "(...)" of ours
#     stand only for one balanced group of perf's;
#   - perf loops annotate SYMBOL takes each name as perf report prints it
#     and annotates that function; a name of two functions (an overload)
#     lists both instead.
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
if not os.access(PERF_LOOPS, os.X_OK):
    C.skip_all("perf-loops not built")
tmp = C.scratch_dir()
os.environ["HOME"] = tmp
tap = C.Tap()
SRC = os.path.join(C.FIXTURES, "perf", "cxx_operators.cpp")
# the fixture's operators as C++ writes them after the keyword
OPERATORS = ["+", "-", "*", "/", "%", "^", "&", "|", "~", "!", "=", "<", ">", "+=", "-=", "*=", "/=", "%=",
             "^=", "&=", "|=", "<<", ">>", "<<=", ">>=", "==", "!=", "<=", ">=", "<=>", "&&", "||", "++", "--",
             ",", "->*", "->", "()", "[]", " long", " int*", " new", " new[]", " delete", " delete[]",
             " co_await", "\"\" _spins"]
_row = re.compile(r"^\s*([\d.]+)%\s+(\d+)\s+\[([.k])\] (.*?)\s*$")


def run(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def rows(text):
    """{name: samples} of a -s sym histogram (perf report -n or ours)."""
    out = {}
    for l in text.splitlines():
        m = _row.match(l)
        if m and m.group(3) == ".":
            out[m.group(4)] = out.get(m.group(4), 0) + int(m.group(2))
    return out


def group_end(s, i, open_, close):
    depth = 0
    for j in range(i, len(s)):
        if s[j] == open_:
            depth += 1
        elif s[j] == close:
            depth -= 1
            if depth == 0:
                return j + 1
    return -1


def elides(mine, theirs):
    """Is MINE THEIRS with whole <...> groups written "<...>" and the
    parameter list "(...)" added, qualifiers and a clone suffix after it?"""
    mine = re.sub(r"\(\.\.\.\)( const)?( \(\.[a-z]+\.\d+\))?$", "", mine)
    i = j = 0
    while i < len(mine):
        if mine.startswith("<...>", i) and j < len(theirs) and theirs[j] == "<":
            j = group_end(theirs, j, "<", ">")
            if j < 0:
                return False
            i += 5
        elif j < len(theirs) and mine[i] == theirs[j]:
            i += 1
            j += 1
        else:
            return False
    return j == len(theirs)


for cxx in ("g++", "clang++"):
    if not shutil.which(cxx):
        tap.skip("%s not installed" % cxx)
        continue
    exe = os.path.join(tmp, "ops-" + cxx)
    r = run([cxx, "-std=c++20", "-O2", "-g", "-fno-omit-frame-pointer", "-o", exe, SRC])
    if r.returncode:
        tap.ok(False, "%s builds the fixture: %s" % (cxx, r.stderr[-300:]))
        continue
    data = os.path.join(tmp, "ops-%s.data" % cxx)
    r = run(["perf", "record", "-q", "-N", "-e", "cpu-clock", "--call-graph=fp", "-o", data, exe])
    if r.returncode:
        C.skip_all("perf record does not work here: " + r.stderr[:200])
    mine = rows(run([PERF_LOOPS, "report", "-i", data, "--stdio", "-s", "sym"]).stdout)
    theirs = rows(run(["perf", "report", "-i", data, "--stdio", "-q", "-n", "-g", "none", "--no-children",
                       "-s", "sym"]).stdout)
    # every operator whole: "operatorT(" or "operatorT <" in some row
    missing = [op for op in OPERATORS
               if not any(re.search(r"operator%s(\(|<| <)" % re.escape(op), n) for n in mine)]
    tap.ok(not missing, "%s: every operator of the fixture has its row, the operator whole (%d; missing: %s)"
           % (cxx, len(OPERATORS), " ".join(missing) or "none"))
    # each of perf's rows: one of ours, the same samples, a name that only elides
    bad = []
    for name, n in sorted(theirs.items()):
        if "operator" not in name and "tally" not in name:
            continue
        mates = [m for m in mine if elides(m, name)]
        if len(mates) != 1 or mine[mates[0]] != n:
            bad.append("%s (%d): %s" % (name, n, ", ".join("%s (%d)" % (m, mine[m]) for m in mates) or "none"))
    tap.ok(not bad and theirs, "%s: each of perf report's %d operator and overload rows is one of ours, "
           "same samples, its name elided only" % (cxx, sum("operator" in k or "tally" in k for k in theirs)))
    for b in bad[:10]:
        tap.diag(b)
    # annotate SYMBOL as perf report prints it
    wrong = []
    for name in sorted(theirs):
        if "operator" not in name:
            continue
        r = run([PERF_LOOPS, "annotate", "-i", data, "--stdio", "-s", name])
        head = r.stdout.splitlines()[0] if r.stdout else ""
        m = re.match(r"# perf loops annotate: (.*?)  \(", head)
        if r.returncode or not m or not elides(m.group(1), name):
            wrong.append("%s: %s%s" % (name, head, r.stderr.strip()[-200:]))
    tap.ok(not wrong, "%s: annotate -s NAME takes every operator's name as perf report prints it" % cxx)
    for w in wrong[:10]:
        tap.diag(w)
    r = run([PERF_LOOPS, "annotate", "-i", data, "--stdio", "ops::tally"])
    tap.ok(r.returncode != 0 and "'ops::tally' names 2 functions" in r.stderr and "ops::tally(int)" in r.stderr
           and "ops::tally(double)" in r.stderr,
           "%s: annotate ops::tally (an overload): both candidates listed (%s)" % (cxx, r.stderr.strip()[:300]))
    r = run([PERF_LOOPS, "annotate", "-i", data, "--stdio", "ops::tally(double)"])
    tap.ok(r.returncode == 0 and r.stdout.startswith("# perf loops annotate: ops::tally(...)"),
           "%s: annotate ops::tally(double): the full name picks one" % cxx)
tap.done()
