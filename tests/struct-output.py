# tests/struct-output.py - `loopscope struct` in its three formats and the
# analysis cache, on fixtures compiled at test time (gcc and clang, -O0 and
# -O2).
#
# 1. JSON: parses; the root is the module (its absolute path); every scope
#    has a kind, half-open hex ranges and children; loops carry header,
#    depth, entries, back edges and exits.
# 2. The tree agrees with `lookup --json`: for every statement, the chain
#    of its first address ends in that statement (same file and line) and
#    runs through the same scopes (kinds, names, lines) as the tree.
# 3. text: one "proc NAME" line per procedure, one "loop at FILE:LINE
#    [header 0x.., depth D" line per loop of the JSON tree.
# 4. XML: xmllint --valid accepts it against its own DTD; as many P and L
#    elements as the JSON tree has procedures and loops.
# 5. Cache: the first run stores DIR/loopscope/<build-id>.lsc; the second
#    run's text, JSON, XML and lookups equal --no-cache's byte for byte;
#    truncated, bit-flipped, garbage and empty cache files are misses (same
#    output, exit 0, nothing on stderr but warnings) and get rewritten.
import importlib.util
import glob
import json
import os
import re
import shutil
import sys

_spec = importlib.util.spec_from_file_location(
    "core_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)

t = C.Tap()
C.need_tools("objdump")
tmp = C.scratch_dir()
cache_root = os.path.join(os.environ["XDG_CACHE_HOME"], "loopscope")
have_xmllint = shutil.which("xmllint") is not None

FIXTURES = [("small.cpp", True), ("loops.c", False), ("inline_deep.c", False)]


def struct(binary, fmt, cache=True):
    args = [C.LOOPSCOPE, "struct", "--format=" + fmt] + ([] if cache else ["--no-cache"]) + [binary]
    return C.run(args)


def check_json_tree(name, tree, binary):
    problems = []
    if tree.get("kind") != "module" or tree.get("name") != os.path.abspath(binary):
        problems.append("root is not the module %s: %r" % (binary, {k: tree.get(k) for k in ("kind", "name")}))
    nprocs = nloops = nstmts = 0
    for node, anc in C.walk(tree):
        kind = node.get("kind")
        if kind not in ("module", "file", "proc", "inline", "alien", "loop", "stmt"):
            problems.append("bad kind %r" % kind)
            continue
        if not isinstance(node.get("children"), list) or not isinstance(node.get("ranges"), list):
            problems.append("%s without children/ranges" % kind)
            continue
        for r in node["ranges"]:
            if len(r) != 2 or C.hexint(r[0]) >= C.hexint(r[1]):
                problems.append("bad range %r in %s" % (r, kind))
        nprocs += kind == "proc"
        nstmts += kind == "stmt"
        if kind == "loop":
            nloops += 1
            for k in ("header", "depth", "irreducible", "entries", "backedges", "exits"):
                if k not in node:
                    problems.append("loop without %s" % k)
            if node.get("irreducible") and len(node.get("entries", ())) < 2:
                problems.append("irreducible loop with %d entries" % len(node.get("entries", ())))
    t.ok(not problems, "%s: struct JSON well formed (%d procs, %d loops, %d stmts)"
         % (name, nprocs, nloops, nstmts))
    for p in problems[:5]:
        t.diag(p)
    return nprocs, nloops


def chain_key(node):
    """The fields a chain entry shares with its tree node."""
    keys = ("kind", "name", "file", "line", "call_file", "call_line", "header", "depth")
    return tuple(node.get(k) for k in keys)


def check_lookup_agrees(name, tree, binary):
    stmts = []
    for node, anc in C.walk(tree):
        if node["kind"] == "stmt" and node["ranges"]:
            path = [a for a in anc if a["kind"] not in ("module", "file")] + [node]
            stmts.append((C.hexint(node["ranges"][0][0]), path))
    res, proc = C.lookup(binary, [a for a, _ in stmts])
    bad = []
    for addr, path in stmts:
        o = res.get(addr)
        if o is None:
            bad.append("0x%x: no lookup answer" % addr)
            continue
        got = [chain_key(e) for e in o.get("chain", [])]
        want = [chain_key(n) for n in path]
        if got != want:
            bad.append("0x%x: chain %r, tree %r" % (addr, got, want))
    t.ok(proc.returncode == 0 and stmts and not bad,
         "%s: lookup --json agrees with the tree on all %d statements" % (name, len(stmts)))
    for b in bad[:5]:
        t.diag(b)


def check_text(name, text, tree):
    lines = text.splitlines()
    loops = [n for n, _ in C.walk(tree) if n["kind"] == "loop"]
    procs = [n for n, _ in C.walk(tree) if n["kind"] == "proc"]
    # A loop with no line (all its code at line 0) is "loop at [no line]";
    # its marks follow its header and depth, "(part N of M)" its line.
    def want_text(n):
        loc = "%s:%d" % (os.path.basename(n["file"]) if n["file"] else "??", n["line"]) if n["line"] else "[no line]"
        part = " (part %d of %d)" % (n["part"], n["parts"]) if "parts" in n else ""
        marks = "".join(", %s: %s" % (k, n[f]) for f, k in (("compiler_made", "compiler-made"),
                                                                  ("line_guessed", "line guessed")) if f in n)
        return "loop at %s%s [header %s, depth %d%s" % (loc, part, n["header"], n["depth"], marks)
    want_loops = sorted(want_text(n) for n in loops)
    got_loops = sorted(re.sub(r", irreducible: entries [^,\]]*(, 0x[0-9a-f]+)*", "", l.strip().split("]")[0])
                       for l in lines if l.strip().startswith("loop at "))
    got_procs = [l for l in lines if l.lstrip().startswith("proc ")]
    t.ok(lines and lines[0].startswith("module " + os.path.abspath(tree["name"])) and
         len(got_procs) == len(procs) and got_loops == want_loops,
         "%s: text tree has the module, %d proc lines and the %d loops of the JSON"
         % (name, len(procs), len(loops)))
    if got_loops != want_loops:
        t.diag("text loops: %r" % got_loops[:5])
        t.diag("json loops: %r" % want_loops[:5])


def check_xml(name, xml_path, nprocs, nloops):
    with open(xml_path) as f:
        x = f.read()
    np = x.count("<P i=")
    nl = x.count("<L i=")
    t.ok(np == nprocs and nl == nloops and '<HPCToolkitStructure i="0" version="4.9"' in x,
         "%s: XML has %d P and %d L elements (JSON: %d, %d)" % (name, np, nl, nprocs, nloops))
    if have_xmllint:
        r = C.run(["xmllint", "--noout", "--valid", xml_path])
        t.ok(r.returncode == 0, "%s: xmllint --valid accepts the structure file" % name)
        if r.returncode:
            t.diag(r.stderr[:2000])
    else:
        t.skip("xmllint not installed")


def cache_files():
    return sorted(glob.glob(os.path.join(cache_root, "*.lsc")))


def check_cache(name, binary, fresh):
    """FRESH: {fmt: --no-cache output}."""
    for f in cache_files():
        os.unlink(f)
    first = struct(binary, "json")
    files = cache_files()
    t.ok(first.returncode == 0 and first.stdout == fresh["json"] and len(files) == 1,
         "%s: first run stores one cache file (%s)" % (name, ", ".join(os.path.basename(f) for f in files)))
    if len(files) != 1:
        return
    cfile = files[0]
    same = all(struct(binary, fmt).stdout == fresh[fmt] for fmt in ("text", "json", "xml"))
    t.ok(same, "%s: cached text, JSON and XML equal --no-cache's" % name)

    stmt_addrs = [C.hexint(n["ranges"][0][0]) for n, _ in C.walk(json.loads(fresh["json"]))
                  if n["kind"] == "stmt" and n["ranges"]][:2000]
    cached, _ = C.lookup(binary, stmt_addrs)
    nocache, _ = C.lookup(binary, stmt_addrs, ["--no-cache"])
    t.ok(cached == nocache and cached, "%s: cached lookups equal --no-cache's (%d addresses)"
         % (name, len(stmt_addrs)))

    with open(cfile, "rb") as f:
        good = f.read()
    corruptions = [
        ("truncated to half", good[:len(good) // 2]),
        ("truncated to the header", good[:100]),
        ("empty", b""),
        ("a flipped byte in the middle", good[:len(good) // 2] + bytes([good[len(good) // 2] ^ 0x40]) + good[len(good) // 2 + 1:]),
        ("garbage", os.urandom(len(good))),
        ("a flipped byte in the magic", good[:3] + bytes([good[3] ^ 0x80]) + good[4:]),
        ("a flipped last byte", good[:-1] + bytes([good[-1] ^ 0x01])),
    ]
    all_ok = True
    for what, data in corruptions:
        with open(cfile, "wb") as f:
            f.write(data)
        r = struct(binary, "json")
        good_run = r.returncode == 0 and r.stdout == fresh["json"] and "rror" not in r.stderr
        rewritten = os.path.exists(cfile) and open(cfile, "rb").read() == good
        if not (good_run and rewritten):
            all_ok = False
            t.diag("%s: exit %d, same output %s, rewritten %s, stderr %s"
                   % (what, r.returncode, r.stdout == fresh["json"], rewritten, r.stderr[:300]))
    t.ok(all_ok, "%s: corrupt cache files (%s) are misses and get rewritten"
         % (name, ", ".join(w for w, _ in corruptions)))


for src, cxx in FIXTURES:
    for cc, cxxc in C.compilers("c"):
        for opt in ("-O0", "-O2"):
            name = "%s %s %s" % (src, cc, opt)
            binary = os.path.join(tmp, "%s-%s%s" % (src.split(".")[0], cc, opt))
            err = C.compile_fixture(cxxc if cxx else cc, opt, src, binary)
            if err:
                t.ok(False, "%s: compiles" % name)
                t.diag(err)
                continue
            fresh = {}
            for fmt in ("text", "json", "xml"):
                r = struct(binary, fmt, cache=False)
                fresh[fmt] = r.stdout if r.returncode == 0 else None
            if fresh["json"] is None:
                t.ok(False, "%s: loopscope struct --format=json succeeds" % name)
                continue
            try:
                tree = json.loads(fresh["json"])
            except ValueError as e:
                t.ok(False, "%s: struct JSON parses (%s)" % (name, e))
                continue
            nprocs, nloops = check_json_tree(name, tree, binary)
            check_lookup_agrees(name, tree, binary)
            check_text(name, fresh["text"] or "", tree)
            xml_path = binary + ".hpcstruct"
            with open(xml_path, "w") as f:
                f.write(fresh["xml"] or "")
            check_xml(name, xml_path, nprocs, nloops)
            check_cache(name, binary, fresh)

t.done()
