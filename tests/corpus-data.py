#!/usr/bin/env python3
# tests/corpus-data.py - issue 25's real-code case: an Eigen solver
# (tests/fixtures/data_eigen_cg.cpp: conjugate gradient on a sparse
# Poisson matrix, then a dense LU), g++ -O2 -g -DNDEBUG (as Eigen's
# benchmarks build: without it eigen_assert's checks are in the loops)
# against the corpus's Debian eigen3 headers.
#
#   - every memory operand of conjugate_gradient (366 on gcc 12) as
#     tests/data_oracle.py answers it (objdump + pyelftools, no code shared),
#     the rules the oracle answers itself included (register-field-load,
#     register-entry-value, register-named-value); the field paths may
#     differ only where loopscope truncates Eigen's kilobyte-long ones;
#   - the arrays a reader of ConjugateGradient.h names are named: the
#     matrix's values and indices, tmp (the product's result, which gcc's
#     location list drops while %r12 holds it: register-named-value),
#     residual, p, z;
#   - a cpu-clock recording's `perf loops report -s type --format=loops`:
#     of the three hottest loops, each names a variable for >= 90% of its
#     samples (thresholds: real code, sampled).
# Slow tier: the corpus's Eigen source, a C++ build of Eigen.
import importlib.util
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("core_common", os.path.join(HERE, "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)
sys.path.insert(0, os.path.join(HERE, "corpus"))
import corpus  # noqa: E402

data_oracle = C.import_data_oracle()
CG = "conjugate_gradient"
EXPECTED = ["*mat->m_matrix->m_values", "*mat->m_matrix->m_innerIndices", "*tmp.m_storage.m_data",
            "*residual.m_storage.m_data", "*p.m_storage.m_data", "*z.m_storage.m_data"]


def cg_symbol(binary):
    for line in C.run(["nm", binary]).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtWw" and "18conjugate_gradient" in parts[2]:
            return parts[2]
    return None


def compare(t, binary, func):
    oracle = data_oracle.Oracle(binary)
    answers = oracle.accesses(func)
    r = C.run([C.LOOPSCOPE, "lookup", "--data", "--json", binary] + ["0x%x" % a for a in sorted(answers)])
    got = {int(o["addr"], 16): o["accesses"] for o in map(json.loads, r.stdout.splitlines())}
    bad, truncated, rules, exprs = [], 0, {}, set()
    for addr in sorted(answers):
        mine, want = got.get(addr, []), answers[addr]
        if len(mine) != len(want):
            bad.append("0x%x: %d accesses, the oracle %d" % (addr, len(mine), len(want)))
            continue
        for m, w in zip(mine, want):
            if m["expr"]:
                exprs.add(m["expr"])
            if w.category:
                if m["variable"] is not None:
                    bad.append("0x%x %s: loopscope %s, the oracle none (%s)" % (addr, m["operand"], m["expr"], w.category))
                continue
            rules[m["rule"]] = rules.get(m["rule"], 0) + 1
            mk = (m["variable"], m["type"], m["offset"], m["field"])
            rule_ok = m["rule"] == w.rule if w.rule or m["rule"].startswith("register-") and m["rule"] not in (
                "register", "register-value", "register-memory", "register-static") else True
            if mk[:3] == w.key()[:3] and rule_ok and m["field"] != w.field and len(w.field or "") > 250 and \
                    (w.field or "").startswith(m["field"].split("::")[0]):
                truncated += 1  # loopscope's LS_FIELD_PATH_MAX cuts Eigen's base-class paths
            elif mk != w.key() or not rule_ok:
                bad.append("0x%x %s: loopscope %r %s, the oracle %r %s" % (addr, m["operand"], mk, m["rule"], w.key(), w.rule))
    for b in bad[:20]:
        t.diag(b)
    n = sum(len(v) for v in answers.values())
    t.ok(not bad, "%s: %d memory operands as the oracle answers them (%d field paths truncated), %d differ" %
         (CG, n, truncated, len(bad)))
    t.diag("rules: " + ", ".join("%s %d" % kv for kv in sorted(rules.items())))
    t.ok(rules.get("register-named-value"), "register-named-value among them (%d)" % rules.get("register-named-value", 0))
    missing = [e for e in EXPECTED if e not in exprs]
    t.ok(not missing, "names %s" % (", ".join(EXPECTED) if not missing else "not " + ", ".join(missing)))


_loop = re.compile(r"^\s*([\d.]+)%\s+(\d+)\s+loop at (\S+)")
_var = re.compile(r"^\s*([\d.]+)%\s+(\d+)\s+variable\s+(.*?)\s*$")


def hottest_loops(report, n):
    """[(loop, samples, {variable: samples})] of the first N loops of the
    report (it sorts loops by samples within their procedure)."""
    loops = []
    for line in report.splitlines():
        m = _loop.match(line)
        if m:
            loops.append((m.group(3), int(m.group(2)), {}))
            continue
        m = _var.match(line)
        if m and loops:
            loops[-1][2][m.group(3)] = int(m.group(2))
    return sorted(loops, key=lambda x: -x[1])[:n]


def recorded(t, tmp, binary):
    perf_loops = C.perf_loops_or_skip()
    data = os.path.join(tmp, "cg.data")
    r = C.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", data, binary, "300", "300"])
    if not t.ok(r.returncode == 0, "perf record -e cpu-clock of the solver"):
        t.diag(r.stderr[-500:])
        return
    r = C.run([perf_loops, "report", "-i", data, "--stdio", "-s", "type", "--format=loops"])
    t.ok(r.returncode == 0, "perf loops report -s type --format=loops exits 0")
    for loop, total, variables in hottest_loops(r.stdout, 3):
        unnamed = variables.get("(no variable)", 0)
        named = sorted(((v, k) for k, v in variables.items() if k != "(no variable)"), reverse=True)
        t.ok(total >= 50 and unnamed <= total * 0.10, "%s: %d samples, %d without a variable (%s)" %
             (loop, total, unnamed, ", ".join("%s %d" % (k, v) for v, k in named)))


def main():
    C.need_tools("g++", "objdump", "nm")
    src = corpus.source_dir("eigen3")
    if not src:
        C.skip_all("the corpus's Eigen source is not available (make check-slow-setup fetches it)")
    tmp = C.scratch_dir()
    t = C.Tap()
    binary = os.path.join(tmp, "cg")
    r = C.run(["g++", "-O2", "-g", "-DNDEBUG", "-I" + src, "-o", binary, os.path.join(C.FIXTURES, "data_eigen_cg.cpp")])
    if not t.ok(r.returncode == 0, "data_eigen_cg.cpp builds with g++ -O2 -g -DNDEBUG against %s" % src):
        t.diag(r.stderr[-2000:])
        t.done()
    func = cg_symbol(binary)
    if t.ok(func is not None, "the solver has an out-of-line conjugate_gradient"):
        compare(t, binary, func)
    recorded(t, tmp, binary)
    t.done()


main()
