# tests/core-symbolizer.py - the differential test of inline chains and
# statement lines against llvm-symbolizer (design.md, "How we know it is
# right").
#
# For every instruction address inside a function of every fixture binary
# (gcc and clang, -O0/-O2/-O3, C and C++, a PIE, an ET_EXEC, a shared
# library, a binary whose DWARF is found by build-id; and glibc's
# libc.so.6 with libc6-dbg), compare loopscope's
# chain -- the proc, each inline entry (callee name, call file:line) and the
# stmt line, loops and aliens skipped -- with llvm-symbolizer --inlining fed
# the same addresses (one process per binary).  One TAP line per binary:
# on the fixtures every address must agree (the answer is known, and the
# differences named below are not disagreements); on libc.so.6, real code,
# the agreement must be >= 99.5%.  The same comparison against the second
# oracle, eu-addr2line -a -i -f -C, over all the fixture binaries gives one
# more line, exact as well (where it has a line: elfutils 0.188 reads no
# lines from clang 14's DWARF 5) but for one named allow-list: addresses
# where the two oracles differ and loopscope agrees with llvm-symbolizer
# (class "(accepted) oracles-differ:...": eu-addr2line's -i chains repeat
# or drop a frame now and then).
#
# One correction of the oracles, rule oracle-dir0-doubled (undouble_dir0):
# both join a relative DW_AT_comp_dir with DWARF directory entry 0, which
# is the compilation directory itself, and name glibc's nptl/lowlevellock.c
# ./nptl/./nptl/lowlevellock.c.  Exactly that doubled prefix, of one of the
# binary's own relative comp_dirs, is undone in their answers, and counted
# as "(oracle corrected)"; the fixture dir0 (tests/fixtures/dir0, built
# from a relative directory, gcc and clang) has such files.
#
# Two names of the same function are counted and shown as "name-form"
# differences, not disagreements: name-form:signature ("do_work(int)" and
# "do_work"), name-form:llvm-left-mangled (llvm-symbolizer 14 cannot
# demangle some libstdc++ names; c++filt's form equals ours),
# name-form:gcc-clone-symbol (foo.cold, foo.part.0 against foo),
# name-form:llvm-symbol-alias (llvm-symbolizer names a procedure by a
# symbol-table alias of the same address, glibc's __GI_ names).  Two
# differences of design (issue 8) are not counted either, see compare():
# in-loop-of-callee and line-0:enclosing-statement.  Every disagreement is
# put in a class so that a new kind stands out:
#   line-0          llvm-symbolizer reports line 0 (compiler-generated code);
#                   loopscope gives a line other than its loop's
#   stmt-line       the statement line differs (":discriminator" when the
#                   row has a DWARF discriminator)
#   stmt-file       the statement's file differs
#   inline-depth    a different number of inline levels
#   call-site       an inline entry's call file:line differs
#   proc-name / inline-name   a different function
# Separately (its own TAP line, same threshold): the declaration file:line
# of the proc and of each callee against llvm-symbolizer's StartFileName:
# StartLine, classes "(decl) decl-line" and "(decl) decl-file".
#   no-chain        loopscope has no chain where llvm-symbolizer has one
import bisect
import importlib.util
import json
import os
import subprocess
import sys
from collections import Counter

_spec = importlib.util.spec_from_file_location(
    "core_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)

THRESHOLD = 99.5
LLVM_SYMBOLIZER = next((t for t in ("llvm-symbolizer", "llvm-symbolizer-14") if C.shutil.which(t)), None)


def base_name(name):
    """The function name without its parameter list and qualifiers, so the
    demangled "ns::f(int) const" and DW_AT_name "f" forms compare."""
    if not name:
        return ""
    depth = 0
    for i, ch in enumerate(name):
        if ch in "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0 and not name.startswith("(anonymous", i):
            name = name[:i]
            break
    return name.strip()


def short_name(name):
    """The last component of a qualified name, template arguments dropped:
    DW_AT_name of an inlined member function is "push_back" where the
    demangled linkage name is "std::vector<int, ...>::push_back(int const&)"."""
    b = base_name(name)
    depth = 0
    out = []
    for ch in b:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out).split("::")[-1].strip()


_demangled = {}


def demangle_all(names):
    """c++filt over the names llvm-symbolizer 14 leaves mangled (its
    demangler gives up on some of libstdc++'s enable_if return types)."""
    todo = sorted({n for n in names if n.startswith("_Z") and n not in _demangled})
    if todo and C.shutil.which("c++filt"):
        r = subprocess.run(["c++filt"], input="\n".join(todo) + "\n", stdout=subprocess.PIPE,
                           universal_newlines=True)
        for m, d in zip(todo, r.stdout.splitlines()):
            _demangled[m] = d


def name_form_difference(got, want):
    """"" when the names are the same, the kind of name-form difference when
    they name the same function differently, None when they differ."""
    if got == want:
        return ""
    if want.startswith("_Z") and _demangled.get(want) == got:
        return "name-form:llvm-left-mangled"
    for suffix in (".cold", ".part.", ".constprop.", ".isra.", ".lto_priv."):
        # gcc's split-off parts and clones: one side names them by their
        # symbol (foo.cold, foo.part.0), the other by the function's name.
        if want.startswith(got + suffix) or got.startswith(want + suffix):
            return "name-form:gcc-clone-symbol"
    if base_name(got) == base_name(want) or short_name(got) == short_name(want):
        return "name-form:signature"
    return None


def norm_path(p):
    return os.path.normpath(p) if p else ""


def relative_comp_dirs(binary):
    """The relative DW_AT_comp_dir values of BINARY's units (or of its
    debug file found by build-id), longest first."""
    dirs = set()
    for f in (binary, C.debug_file_by_build_id(binary)):
        if not f:
            continue
        out = C.run(["readelf", "--debug-dump=info", "--dwarf-depth=1", f]).stdout
        for line in out.splitlines():
            if "DW_AT_comp_dir" in line:
                d = line.rsplit(": ", 1)[-1].strip()
                if d and not d.startswith("/"):
                    dirs.add(d)
    return sorted(dirs, key=len, reverse=True)


def undouble_dir0(frames, comp_dirs):
    """Rule oracle-dir0-doubled: the oracles' paths of a file of DWARF
    directory entry 0 under a relative DW_AT_comp_dir C.  Entry 0 is the
    compilation directory itself (DWARF 5 section 6.2.4), so the file is
    C/name; llvm-symbolizer 14 and eu-addr2line 0.188 (and addr2line,
    GDB 13) join C with entry 0 once more and give C/C/name, glibc's
    ./nptl/./nptl/lowlevellock.c.  Exactly that prefix, C/C/ with C one of
    the binary's own relative comp_dirs, is made C/ in FRAMES' FileName
    and StartFileName (in place); nothing else is.  True if it was."""
    fixed = False
    for f in frames:
        for key in ("FileName", "StartFileName"):
            p = f.get(key) or ""
            for c in comp_dirs:
                if p.startswith(c + "/" + c + "/"):
                    f[key] = p[len(c) + 1:]
                    fixed = True
                    break
    return fixed


def symbolize(binary, addrs, extra=()):
    """{addr: [frames innermost first]} from one llvm-symbolizer process."""
    inp = "".join("0x%x\n" % a for a in addrs)
    r = subprocess.run([LLVM_SYMBOLIZER, "--inlining", "--output-style=JSON", "--demangle"] + list(extra) +
                       ["-e", binary], input=inp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    out = {}
    for line in r.stdout.splitlines():
        try:
            o = json.loads(line)
        except ValueError:
            continue
        out[int(o["Address"], 16)] = o.get("Symbol", [])
    return out


def eu_addr2line(binary, addrs, extra=()):
    """{addr: [frames innermost first]} from one eu-addr2line -a -i -f -C
    process, in llvm-symbolizer's frame shape (names, file, line)."""
    inp = "".join("0x%x\n" % a for a in addrs)
    r = subprocess.run(["eu-addr2line", "-a", "-i", "-f", "-C"] + list(extra) + ["-e", binary], input=inp,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    out = {}
    cur = None
    lines = r.stdout.splitlines()
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("0x") and " " not in ln:
            cur = out.setdefault(int(ln, 16), [])
            i += 1
            continue
        if cur is None or i + 1 >= len(lines):
            break
        name = ln.split(" inlined at ")[0]
        loc = lines[i + 1]
        parts = loc.rsplit(":", 2)
        if len(parts) == 3 and parts[1].isdigit():
            f, line = parts[0], int(parts[1])
        elif len(parts) >= 2 and parts[-1].isdigit():
            f, line = loc.rsplit(":", 1)[0], int(parts[-1])
        else:
            f, line = "", 0
        cur.append({"FunctionName": name, "FileName": "" if f == "??" else f, "Line": line})
        i += 2
    return out


def compare(ours, frames, symbols=None):
    """(classes of disagreement, name-form difference, declaration
    difference) for one address.  SYMBOLS(name): the start addresses of the
    function symbols of that name (aliases share one).

    Two differences are by design (issue 8) and not counted, when the rest
    agrees: in-loop-of-callee, an instruction inside a loop that sits in an
    inlined callee the instruction itself is not from (a spill, a line-0
    instruction, or one of the few the compiler labelled with the caller's
    line; the loop takes the callee that owns its code): the chain holds
    the callee's frames above the loop, llvm-symbolizer's does not; and
    line-0:enclosing-statement, an instruction at line 0 that loopscope
    gives to the statement of the loop it sits in."""
    full = ours.get("chain", [])
    chain = [e for e in full if e.get("kind") in ("proc", "inline", "stmt")]
    inlines = [e for e in chain if e["kind"] == "inline"]
    loops = [i for i, e in enumerate(full) if e.get("kind") == "loop"]
    cl, nf, decl = compare_chain(chain, inlines, full, frames, symbols)
    if cl and loops and len(frames) - 1 < len(inlines):
        # The loop's own inline frames above it, minus those the
        # instruction does not come from, must give llvm's chain.
        j = loops[-1]
        above = [e for e in full[:j] if e.get("kind") == "inline"]
        below = [e for e in full[j:] if e.get("kind") == "inline"]
        k = len(frames) - 1 - len(below)
        if 0 <= k < len(above):
            alt = above[:k] + below
            cl2, nf2, decl2 = compare_chain(chain, alt, full, frames, symbols)
            if not cl2:
                return [], "in-loop-of-callee", decl2
    return cl, nf, decl


def compare_chain(chain, inlines, full, frames, symbols):
    procs = [e for e in chain if e["kind"] == "proc"]
    stmts = [e for e in chain if e["kind"] == "stmt"]
    if not procs or not stmts:
        return ["no-chain"], "", ""
    outer = list(reversed(frames))          # llvm: innermost first
    classes = []
    name_form = ""
    # Names: proc is the outermost frame, inline k is frame k.
    want_names = [f.get("FunctionName", "") for f in outer]
    got_names = [procs[0].get("name", "")] + [e.get("name", "") for e in inlines]
    if len(got_names) != len(want_names):
        classes.append("inline-depth")
    for k, (g, w) in enumerate(zip(got_names, want_names)):
        form = name_form_difference(g, w)
        if form is None and k == 0 and symbols and symbols(g) & symbols(w):
            # llvm-symbolizer names the procedure by a symbol-table alias
            # of the same code (glibc's __GI___printf_fp_l for
            # __printf_fp_l); loopscope by its DWARF name.
            form = "name-form:llvm-symbol-alias"
        if form is None:
            classes.append("proc-name" if k == 0 else "inline-name")
            break
        if form:
            name_form = form
    # Call sites: inline k was called at frame k-1's location.
    for k, e in enumerate(inlines[:len(outer) - 1]):
        caller = outer[k]
        if (e.get("call_line") or 0) == caller.get("Line") == 0:  # JSON null: no line
            continue
        if caller.get("Line", 0) == 0:
            classes.append("line-0")
            break
        if (e.get("call_line") or 0) != caller.get("Line") or norm_path(e.get("call_file")) != norm_path(caller.get("FileName")):
            classes.append("call-site")
            break
    # Declarations: the proc's and each callee's decl file:line are
    # llvm-symbolizer's StartFileName:StartLine of that frame.
    # (llvm-symbolizer 14 leaves StartFileName empty for gcc's DWARF 5.)
    decl = ""
    for e, f in zip(procs[:1] + inlines, outer):
        if not f.get("StartLine"):
            continue
        if e.get("line") != f.get("StartLine"):
            decl = "decl-line"
            break
        if f.get("StartFileName") and norm_path(e.get("file")) != norm_path(f.get("StartFileName")):
            decl = "decl-file"
            break
    # The statement: the innermost frame's location.
    inner = frames[0]
    stmt = stmts[-1]
    if inner.get("Line", 0) == 0:
        scope = full[-2] if len(full) >= 2 else {}
        if stmt.get("line") in (0, None):
            pass
        elif scope.get("kind") == "loop" and stmt.get("line") == scope.get("line"):
            name_form = name_form or "line-0:enclosing-statement"
        else:
            classes.append("line-0")
    elif stmt.get("line") != inner.get("Line"):
        classes.append("stmt-line:discriminator" if inner.get("Discriminator") else "stmt-line")
    elif norm_path(stmt.get("file")) != norm_path(inner.get("FileName")):
        classes.append("stmt-file")
    return classes, name_form, decl


def check_binary(tap, label, binary, totals, lookup_args=(), symbolizer_args=(), env=None, threshold=None):
    """One binary against llvm-symbolizer (and eu-addr2line where TOTALS
    counts it).  THRESHOLD None: a fixture, every address must agree (the
    name-form and design differences of the header are not disagreements);
    a number: real code, the agreement in percent it must reach."""
    franges = C.function_ranges(binary)
    addrs = C.instruction_addresses(binary, franges)
    name_starts = {}
    for lo, hi, name in franges:
        name_starts.setdefault(name, set()).add(lo)

    def symbols(name):
        return name_starts.get(name, set())
    if not addrs:
        tap.ok(False, "%s: no instruction addresses found" % label)
        return
    want = symbolize(binary, addrs, symbolizer_args)
    comp_dirs = relative_comp_dirs(binary)
    demangle_all(f.get("FunctionName", "") for frames in want.values() for f in frames)
    got, proc = C.lookup(binary, addrs, lookup_args, env)
    if proc.returncode != 0 or proc.returncode >= 128:
        tap.ok(False, "%s: loopscope lookup exited %d" % (label, proc.returncode))
        tap.diag(proc.stderr[-2000:])
        return
    n = agree = name_forms = decl_agree = 0
    llvm_agrees = set()  # addresses where loopscope and llvm-symbolizer agree
    classes = Counter()
    examples = {}
    for a in addrs:
        frames = want.get(a) or []
        if not frames or not frames[0].get("FileName") or frames[-1].get("FunctionName") in ("", "??"):
            classes["excluded:no-dwarf"] += 1  # llvm-symbolizer has no DWARF for it either
            continue
        n += 1
        if undouble_dir0(frames, comp_dirs):
            classes["(oracle corrected) oracle-dir0-doubled"] += 1
        ours = got.get(a)
        if ours is None:
            cl = ["no-output"]
            nf = decl = ""
        else:
            cl, nf, decl = compare(ours, frames, symbols)
        if decl:
            classes["(decl) " + decl] += 1
            examples.setdefault(decl, (a, ours, frames))
        else:
            decl_agree += 1
        if nf:
            name_forms += 1
            classes["(not counted) " + nf] += 1
        if not cl:
            agree += 1
            llvm_agrees.add(a)
            continue
        for c in cl:
            classes[c] += 1
            examples.setdefault(c, (a, ours, frames))
    pct = 100.0 * agree / n if n else 0.0
    classes = Counter({k: v for k, v in classes.items()})
    totals["n"] += n
    totals["agree"] += agree
    totals["decl_agree"] += decl_agree
    totals["classes"].update(classes)
    totals["name_forms"] += name_forms
    if "eu_n" in totals and C.shutil.which("eu-addr2line"):
        # The second oracle, elfutils: same comparison, no declarations.
        eu = eu_addr2line(binary, addrs, ["--debuginfo-path=" + symbolizer_args[0].split("=", 1)[1]]
                          if symbolizer_args else [])
        for a in addrs:
            frames = eu.get(a) or []
            if not frames or not frames[0].get("FileName") or frames[-1].get("FunctionName") in ("", "??"):
                # elfutils 0.188 gives ??:0 for clang 14's DWARF 5 lines.
                totals["eu_classes"]["excluded:no-line"] += 1
                totals["eu_examples"].setdefault("excluded:no-line", (a, got.get(a), frames))
                continue
            totals["eu_n"] += 1
            if undouble_dir0(frames, comp_dirs):
                c = "(oracle corrected) oracle-dir0-doubled"
                totals["eu_classes"][c] += 1
                totals["eu_examples"].setdefault(c, (a, got.get(a), frames))
            cl, nf, decl = compare(got.get(a, {}), frames, symbols) if a in got else (["no-output"], "", "")
            if cl and a in llvm_agrees:
                # The two oracles differ here and loopscope sides with
                # llvm-symbolizer: eu-addr2line 0.188 repeats or drops
                # inline frames now and then (it walks gcc's abstract
                # origins of C1/C2 constructors as well).  Accepted, shown.
                totals["eu_oracles_differ"] += 1
                for c in cl:
                    c = "(accepted) oracles-differ:" + c
                    totals["eu_classes"][c] += 1
                    totals["eu_examples"].setdefault(c, (a, got.get(a), frames))
            elif cl:
                for c in cl:
                    totals["eu_classes"][c] += 1
                    totals["eu_examples"].setdefault(c, (a, got.get(a), frames))
            else:
                totals["eu_agree"] += 1
    if threshold is None:
        tap.ok(n > 0 and agree == n, "%s: all %d addresses agree (%d do)" % (label, n, agree))
    else:
        tap.ok(n > 0 and pct >= threshold, "%s: %d/%d addresses agree (%.2f%%) >= %.1f%%"
               % (label, agree, n, pct, threshold))
    if classes:
        tap.diag("  classes: " + ", ".join("%s=%d" % kv for kv in sorted(classes.items())))
    if name_forms:
        tap.diag("  name-form differences (not counted): %d" % name_forms)
    for c, (a, ours, frames) in sorted(examples.items()):
        short = [(f.get("FunctionName"), os.path.basename(f.get("FileName", "")), f.get("Line")) for f in frames]
        tap.diag("  e.g. %s at 0x%x: loopscope %s / llvm %s" % (
            c, a, json.dumps((ours or {}).get("chain"))[:400], short))


def main():
    if not LLVM_SYMBOLIZER:
        C.skip_all("llvm-symbolizer not installed")
    C.need_tools("objdump", "readelf", "objcopy")
    tmp = C.scratch_dir()
    tap = C.Tap()
    totals = {"n": 0, "agree": 0, "decl_agree": 0, "classes": Counter(), "name_forms": 0,
              "eu_n": 0, "eu_agree": 0, "eu_oracles_differ": 0, "eu_classes": Counter(), "eu_examples": {}}
    # (label suffix, sources, C++?, extra flags)
    programs = [
        ("small", ["small.cpp"], True, []),
        ("inline_deep", ["inline_deep.c"], False, []),
        ("recursion", ["recursion.c"], False, []),
        ("cold", ["cold.c"], False, []),
        ("loops", ["loops.c"], False, []),
        ("shlib.so", ["shlib.c"], False, ["-fPIC", "-shared"]),
        ("shlib_main-pie", ["shlib_main.c"], False, ["-fPIE", "-pie"]),
        # gcc's C1/C2 and D0/D1/D2 variants, instantiated in two units,
        # each describing the one copy the linker kept.
        ("ctor_dtor", ["ctor_dtor_a.cpp", "ctor_dtor_b.cpp"], True, []),
    ]
    for cc, cxx in C.compilers("c"):
        for opt in ("-O0", "-O2", "-O3"):
            for name, srcs, cplus, extra in programs:
                out = os.path.join(tmp, "%s-%s%s" % (name, cc, opt))
                if name == "shlib.so":
                    out = os.path.join(tmp, "libshlib-%s%s.so" % (cc, opt))
                if name == "shlib_main-pie":
                    extra = extra + [os.path.join(tmp, "libshlib-%s%s.so" % (cc, opt))]
                err = C.compile_fixture(cxx if cplus else cc, opt, srcs, out, extra)
                if err:
                    tap.ok(False, "%s %s %s: compile" % (cc, opt, name))
                    tap.diag(err)
                    continue
                check_binary(tap, "%s %s %s" % (cc, opt, name), out, totals)
    # DWARF directory entry 0 under a relative comp_dir ("./sub", as glibc's
    # "./nptl"): built in the fixture's sub/ with the prefix map; the
    # oracles double entry 0's files (rule oracle-dir0-doubled).
    root = os.path.join(tmp, "dir0")
    C.shutil.copytree(os.path.join(C.FIXTURES, "dir0"), root)
    for cc, v in (("gcc", 5), ("gcc", 4), ("clang", 5)):
        if not C.shutil.which(cc):
            continue
        out = os.path.join(tmp, "dir0-%s-dwarf%d" % (cc, v))
        r = C.run([cc, "-O2", "-gdwarf-%d" % v, "-fdebug-prefix-map=%s=." % root, "-I../inc", "-o", out,
                   "dir0_main.c"], cwd=os.path.join(root, "sub"))
        if r.returncode != 0:
            tap.ok(False, "%s -gdwarf-%d dir0: compile" % (cc, v))
            tap.diag(r.stderr)
            continue
        check_binary(tap, "%s -O2 -gdwarf-%d dir0 (relative comp_dir)" % (cc, v), out, totals)
    # ET_EXEC (no PIE) C++.
    out = os.path.join(tmp, "small-nopie")
    if not C.compile_fixture("g++", "-O2", "small.cpp", out, ["-no-pie", "-fno-PIE"]):
        check_binary(tap, "g++ -O2 -no-pie small", out, totals)
    # DWARF only in a separate file found by build-id.
    out = os.path.join(tmp, "small-buildid")
    if not C.compile_fixture("g++", "-O2", "small.cpp", out, ["-Wl,--build-id=sha1"]):
        dbgdir = os.path.join(tmp, "debug")
        bid = C.run(["readelf", "-n", out]).stdout.split("Build ID:")[1].split()[0]
        dest = os.path.join(dbgdir, ".build-id", bid[:2], bid[2:] + ".debug")
        os.makedirs(os.path.dirname(dest))
        C.run(["objcopy", "--only-keep-debug", out, dest])
        C.run(["objcopy", "--strip-debug", out])
        env = dict(os.environ, LOOPSCOPE_DEBUG_DIR=dbgdir)
        args = ["--debug-dir=" + dbgdir] if "--debug-dir" in C.run([C.LOOPSCOPE, "--help"]).stdout else []
        check_binary(tap, "g++ -O2 small, DWARF by build-id", out, totals, args,
                     ["--debug-file-directory=" + dbgdir], env)
    en, ea = totals["eu_n"], totals["eu_agree"]
    epct = 100.0 * ea / en if en else 0.0
    tap.diag("eu-addr2line: %d/%d agree (%.3f%%)" % (ea, en, epct))
    for c, k in sorted(totals["eu_classes"].items(), key=lambda kv: -kv[1]):
        a, ours, frames = totals["eu_examples"][c]
        tap.diag("  %-28s %d   e.g. 0x%x: loopscope %s / eu-addr2line %s" % (
            c, k, a, json.dumps((ours or {}).get("chain"))[:300],
            [(f["FunctionName"], os.path.basename(f["FileName"]), f["Line"]) for f in frames]))
    od = totals["eu_oracles_differ"]
    tap.ok(en > 0 and ea + od == en, "fixtures: all %d addresses agree with eu-addr2line -i -f (%d do), but for "
           "the %d where it differs from llvm-symbolizer and loopscope sides with llvm-symbolizer" % (en, ea, od))
    # Code nobody here wrote: glibc, DWARF from libc6-dbg by build-id.  Its
    # 330,000 addresses would drown the fixtures in the overall figure, so
    # it has its own line with the same threshold.
    libc = os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6")
    if os.path.exists(libc) and C.debug_file_by_build_id(libc):
        lt = {"n": 0, "agree": 0, "decl_agree": 0, "classes": Counter(), "name_forms": 0}
        check_binary(tap, "libc.so.6 (libc6-dbg)", libc, lt, threshold=THRESHOLD)
    else:
        tap.skip("libc.so.6 with libc6-dbg not installed")
    n, agree = totals["n"], totals["agree"]
    pct = 100.0 * agree / n if n else 0.0
    tap.diag("overall: %d/%d agree (%.3f%%); name-form differences not counted: %d" % (
        agree, n, pct, totals["name_forms"]))
    for c, k in sorted(totals["classes"].items(), key=lambda kv: -kv[1]):
        tap.diag("  %-28s %d" % (c, k))
    tap.ok(n > 0 and agree == n, "fixtures: all %d addresses agree with llvm-symbolizer (%d do)" % (n, agree))
    tap.ok(n > 0 and totals["decl_agree"] == n, "fixtures: declaration file:line of procs and callees agree at all "
           "%d addresses (%d do)" % (n, totals["decl_agree"]))
    tap.done()


if __name__ == "__main__":
    main()
