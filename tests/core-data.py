# tests/core-data.py - the accesses stage (`loopscope lookup --data`)
# against an oracle that shares no code with it (tests/data_oracle.py:
# objdump's operands, pyelftools' DWARF and .eh_frame), on fixtures with
# known layouts (tests/fixtures/data_layout.c, data_layout.cpp, data_pointers.c,
# data_template.cpp: Eigen's sparse product's shape; data_heap.c: a heap
# block named by the field it is stored into; data_stepped.c, data_addr.c:
# pointers stepped in loops), gcc and clang at -O2 and -O3.
#
# For every memory operand of the fixture procedures, loopscope's variable,
# type, offset and field path equal the oracle's.  Where the oracle has no
# answer, loopscope must have none either, except in the categories of
# ALLOWED below (each says why the oracle cannot answer there).  Then the
# answers a reader of the source expects must be among them (EXPECTED),
# so that a stage that names nothing cannot pass by agreeing with "none".
import json
import os
import sys

import importlib.util

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location(
    "core_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)
Tap, run, scratch_dir, skip_all, need_tools = C.Tap, C.run, C.scratch_dir, C.skip_all, C.need_tools
LOOPSCOPE, FIXTURES = C.LOOPSCOPE, C.FIXTURES

data_oracle = C.import_data_oracle()

# Where the oracle cannot answer and loopscope may: none yet (every
# disagreement fails).
ALLOWED = set()

FIXTURES_DATA = [
    ("data_layout.c", ["sum_grid", "fill_global", "stack_array"], "c"),
    ("data_layout.cpp", ["_ZN7Derived4workEi", "_Z9use_shapeP5Shapei"], "c++"),
    ("data_template.cpp", ["_Z2cgRK10TransposedI9SparseRefIdiEEl"], "c++"),
    ("data_pointers.c", ["list_ends", "owner_walk", "tree_children", "global_head", "reassign",
                         "entry_after_use"], "c"),
    ("data_heap.c", ["fill", "smooth"], "c"),
    ("data_stepped.c", ["touch_bytes", "match_len", "scale_rows", "sum_y"], "c"),
    ("data_addr.c", ["touch_heap"], "c"),
]

# (fixture, expression) that each build must show at least once: the
# fixture's layouts, named as a reader of the source would.
EXPECTED = {
    "data_layout.c": ["g_table[]", "g_grid.n", "g_grid.cells[].p.y", "g_grid.cells[].q", "calls",
                      "gr->n"],
    "data_layout.cpp": ["this->Base::id", "this->h.value", "this->extra"],
    "data_layout.c.so": ["g_table[]", "g_grid.n", "g_grid.cells[].p.y", "calls"],
    # pointers loaded from named variables' fields (register-field-load)
    "data_pointers.c": ["s->head->val", "s->tail->val", "s->head->next->val", "o->items->head->val",
                        "o->index->left->weight", "t->left->weight", "t->right->key", "g_list->head->val",
                        "g_list->count"],
    "data_pointers.c.so": ["s->head->val", "g_list->head->val"],
    # Eigen's sparse product's shape: a class template's arrays (a base
    # class's members, named as source writes them), through the matrix
    # pointer (gcc -O3 spills and reloads it) and a vector's data pointer
    # in a register piece (clang); (expression, build name part)
    "data_template.cpp": [("*mat->m_matrix->m_innerIndices", "gcc"), ("*mat->m_matrix->m_values", "gcc"),
                          ("*mat->m_matrix->m_outerIndex", "gcc"), ("*m->m_innerIndices", "clang"),
                          ("*m->m_values", "clang"), ("*p.m_data", "clang"), ("*z.m_data", "clang")],
    # malloc's block, stored into b->r on one path, loaded from it on the
    # other (register-named-value where the loop's register holds either)
    "data_heap.c": ["*b->r", "b->r", "b->n", "*tmp.data", "*x"],
    "data_heap.c.so": ["*b->r", "b->r"],
    # pointers stepped by a constant or back by a register (register-stepped):
    # an element of a base type, the struct pointer's field left unknown
    "data_stepped.c": ["rows[][]", "p[]", ("cur[]", "gcc"), ("deltas[]", "gcc")],
    "data_stepped.c.so": ["rows[][]", "p[]", ("cur[]", "gcc")],
    "data_addr.c": ["p[]"],
    "data_addr.c.so": ["p[]"],
}


# The reaching-definition rules, which the oracle answers itself (the
# others it does not name: it answers by the variable).
NEW_RULES = ("register-field-load", "register-entry-value", "register-named-value", "register-stepped")
# (rule, build name part) each build of a fixture must show: gcc keeps
# data_pointers.c's reassign() parameter in its register, clang moves it.
RULES_EXPECTED = {
    "data_pointers.c": [("register-field-load", ""), ("register-entry-value", "clang")],
    "data_pointers.c.so": [("register-field-load", ""), ("register-entry-value", "clang")],
    # gcc -O2 loads b->r again after the merge (register-field-load); gcc
    # -O3 and clang keep malloc's result or the loaded pointer in one register
    "data_heap.c": [("register-named-value", "clang"), ("register-named-value", "gcc-O3")],
    "data_heap.c.so": [("register-named-value", "clang")],
    # gcc steps touch_bytes' p by a page, match_len's cur - delta back by a
    # register; both step scale_rows' row pointer
    "data_stepped.c": [("register-stepped", "")],
    "data_stepped.c.so": [("register-stepped", "")],
    "data_addr.c": [("register-stepped", "gcc")],
    "data_addr.c.so": [("register-stepped", "gcc")],
}


def build(t, src, compiler, opt, lang, shared=False):
    exe = os.path.join(scratch, "%s-%s%s%s" % (os.path.basename(src), compiler, opt, ".so" if shared else ""))
    cc = compiler if lang == "c" else {"gcc": "g++", "clang": "clang++"}[compiler]
    r = run([cc, "-g", opt, "-o", exe, src] + (["-fPIC", "-shared"] if shared else []))
    if r.returncode != 0:
        t.diag(r.stderr)
        return None
    return exe


def loopscope_accesses(exe, addrs):
    r = run([LOOPSCOPE, "lookup", "--data", "--json", exe] + ["0x%x" % a for a in addrs])
    out = {}
    for line in r.stdout.splitlines():
        o = json.loads(line)
        out[int(o["addr"], 16)] = o
    return r.returncode, out


def compare(t, exe, fixture, funcs):
    oracle = data_oracle.Oracle(exe)
    answers = {}
    for f in funcs:
        answers.update(oracle.accesses(f))
    cache_agrees(t, exe, sorted(answers))  # first: its first run is cold
    rc, got = loopscope_accesses(exe, sorted(answers))
    t.ok(rc == 0, "%s: lookup --data exits 0 (%d)" % (os.path.basename(exe), rc))
    bad, agreed, named, categories, exprs, rules = [], 0, 0, {}, set(), {}
    for addr in sorted(answers):
        mine = [a for a in got.get(addr, {}).get("accesses", [])]
        want = answers[addr]
        if len(mine) != len(want):
            bad.append("0x%x: %d accesses, the oracle %d" % (addr, len(mine), len(want)))
            continue
        for m, w in zip(mine, want):
            if m["expr"]:
                exprs.add(m["expr"])
            if w.category:
                categories[w.category] = categories.get(w.category, 0) + 1
                if m["variable"] is None or w.category in ALLOWED:
                    agreed += 1
                else:
                    bad.append("0x%x %s: loopscope %s, the oracle none (%s)" % (addr, m["operand"], m["expr"], w.category))
                continue
            mk = (m["variable"], m["type"], m["offset"], m["field"])
            rules[m["rule"]] = rules.get(m["rule"], 0) + 1
            if m["rule"] in NEW_RULES and m["rule"] != w.rule or w.rule and m["rule"] != w.rule:
                bad.append("0x%x %s: loopscope's rule %s, the oracle's %s" % (addr, m["operand"], m["rule"], w.rule))
            elif mk == w.key():
                agreed += 1
                named += 1
            else:
                bad.append("0x%x %s: loopscope %r, the oracle %r" % (addr, m["operand"], mk, w.key()))
    name = os.path.basename(exe)
    for b in bad[:20]:
        t.diag(b)
    t.ok(not bad, "%s: %d memory operands, %d agree (%d named a variable), %d differ" %
         (name, agreed + len(bad), agreed, named, len(bad)))
    t.diag("%s: the oracle's unanswered: %s" % (name, ", ".join("%s %d" % kv for kv in sorted(categories.items()))))
    t.diag("%s: rules: %s" % (name, ", ".join("%s %d" % kv for kv in sorted(rules.items()))))
    want_rules = [r for r in RULES_EXPECTED.get(fixture, []) if r[1] in name or r[1] == ""]
    t.ok(all(rules.get(r) for r, _ in want_rules), "%s: shows the rules %s" %
         (name, ", ".join(r for r, _ in want_rules) or "(none asked)"))
    want = [e if isinstance(e, str) else e[0] for e in EXPECTED[fixture] if isinstance(e, str) or e[1] in name]
    missing = [e for e in want if e not in exprs]
    t.ok(not missing, "%s: names %s" % (name, ", ".join(want) if not missing else "not " + ", ".join(missing)))


def bad_input(t, exe):
    """Without DWARF, or outside every procedure: exit 1, the file named."""
    stripped = exe + ".stripped"
    run(["strip", "-o", stripped, exe])
    nm = run(["nm", exe]).stdout.split()
    entry = "0x" + nm[nm.index("sum_grid") - 2]
    r = run([LOOPSCOPE, "lookup", "--data", stripped, entry])
    t.ok(r.returncode == 1 and stripped in r.stdout and "no debug information" in r.stdout,
         "no DWARF: exit 1 (%d), the message names the file: %s" % (r.returncode, r.stdout.strip()))
    r = run([LOOPSCOPE, "lookup", "--data", "--json", exe, "0x1"])
    o = json.loads(r.stdout.splitlines()[0]) if r.stdout else {}
    t.ok(r.returncode == 1 and o.get("accesses") == [] and exe in o.get("error", ""),
         "an address in no procedure: exit 1 (%d), JSON error names the file" % r.returncode)


def timing(stderr, stage, path):
    """The LOOPSCOPE_TIMING line of STAGE for module PATH, or None."""
    for line in stderr.splitlines():
        if line.startswith("loopscope: timing: %s " % stage) and path in line:
            return line
    return None


def cache_agrees(t, exe, addrs):
    """The accesses are cached (format 13): the first run computes and
    stores them, the second reads them from the cache entry without the
    DWARF (LOOPSCOPE_TIMING: no dwarf stage, every procedure's accesses
    from the cache), --no-cache computes them again: all three the same."""
    args = ["lookup", "--data", "--json", exe] + ["0x%x" % a for a in addrs]
    env = dict(os.environ, LOOPSCOPE_TIMING="1")
    first = run([LOOPSCOPE] + args, env=env)
    second = run([LOOPSCOPE] + args, env=env)
    fresh = run([LOOPSCOPE, "lookup", "--no-cache"] + args[1:]).stdout
    name = os.path.basename(exe)
    t.ok(first.stdout and first.stdout == second.stdout == fresh,
         "%s: the same accesses cold, from the cache and with --no-cache" % name)
    cold, warm = timing(first.stderr, "accesses", exe), timing(second.stderr, "accesses", exe)
    t.ok(cold and " 0 from the cache" in cold and warm and " 0 computed" in warm and
         timing(second.stderr, "dwarf", exe) is None and timing(first.stderr, "dwarf", exe),
         "%s: the first run computes the accesses (%s), the second reads them from the cache, "
         "without the DWARF (%s)" % (name, cold, warm))


def cache_corrupt(t, exe, addrs):
    """A flipped byte in an accesses record (its strings: the expression
    g_grid.cells[].q is in no other record) is caught by its checksum: the
    accesses are computed again, -v says why, the answer is --no-cache's."""
    import glob
    args = ["lookup", "--data", "--json", exe] + ["0x%x" % a for a in addrs]
    fresh = run([LOOPSCOPE, "lookup", "--no-cache"] + args[1:]).stdout
    run([LOOPSCOPE] + args)
    hit = None
    for f in glob.glob(os.path.join(os.environ["XDG_CACHE_HOME"], "loopscope", "*.lsc")):
        b = bytearray(open(f, "rb").read())
        k = b.find(b"g_grid.cells[].q\0")
        if k >= 0:
            b[k + 2] ^= 0x20
            open(f, "wb").write(bytes(b))
            hit = f
    t.ok(hit, "an entry holds the accesses' strings")
    r = run([LOOPSCOPE, "lookup", "-v"] + args[1:])
    t.ok(r.stdout == fresh and "the accesses of the procedure at" in r.stderr and "checksum" in r.stderr,
         "a flipped byte in an accesses record: -v says so (%s), the answer is --no-cache's" %
         ([l for l in r.stderr.splitlines() if "accesses of" in l][:1]))
    again = run([LOOPSCOPE, "lookup", "-v"] + args[1:])
    t.ok(again.stdout == fresh and "accesses of" not in again.stderr,
         "the next run reads the accesses stored again")


def main():
    global scratch
    need_tools("gcc", "clang", "objdump")
    scratch = scratch_dir()
    t = Tap()
    for fixture, funcs, lang in FIXTURES_DATA:
        src = os.path.join(FIXTURES, fixture)
        for compiler in ("gcc", "clang"):
            for opt in ("-O2", "-O3"):
                exe = build(t, src, compiler, opt, lang)
                if not t.ok(exe is not None, "%s %s %s builds" % (fixture, compiler, opt)):
                    continue
                compare(t, exe, fixture, funcs)
                if compiler == "gcc" and opt == "-O2" and fixture == "data_layout.c":
                    bad_input(t, exe)
                    cache_corrupt(t, exe, sorted(data_oracle.Oracle(exe).accesses("sum_grid")) +
                                  sorted(data_oracle.Oracle(exe).accesses("fill_global")))
            if lang == "c":
                # a shared library: its globals through the GOT
                so = build(t, src, compiler, "-O2", lang, shared=True)
                if t.ok(so is not None, "%s %s -O2 -fPIC -shared builds" % (fixture, compiler)):
                    compare(t, so, fixture + ".so", funcs)
    t.done()


main()
