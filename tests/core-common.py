# tests/core-common.py - shared helpers of the core's differential tests
# (core-symbolizer.py, core-loops.py, core-inline.py): TAP output, fixture
# builds at test time, the instruction addresses of a binary, and running
# the loopscope CLI.  Loaded with load_common() below, not run as a test.
#
# The expected answers never come from loopscope itself: addresses come from
# objdump and nm, lines from grep over the fixture sources, chains from
# llvm-symbolizer, loops from clang's own loop annotations.
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP_SRCDIR = os.environ.get("top_srcdir") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP_BUILDDIR = os.environ.get("top_builddir") or TOP_SRCDIR
LOOPSCOPE = os.environ.get("LOOPSCOPE") or os.path.join(TOP_BUILDDIR, "loopscope")
FIXTURES = os.path.join(TOP_SRCDIR, "tests", "fixtures")


class Tap:
    """TAP on stdout; exit status 0 always (the harness reads the TAP)."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, desc):
        self.n += 1
        if cond:
            print("ok %d - %s" % (self.n, desc))
        else:
            print("not ok %d - %s" % (self.n, desc))
            self.failed += 1
        sys.stdout.flush()
        return cond

    def skip(self, desc):
        self.n += 1
        print("ok %d # SKIP %s" % (self.n, desc))

    def diag(self, msg):
        for line in str(msg).splitlines() or [""]:
            print("# " + line)
        sys.stdout.flush()

    def done(self):
        print("1..%d" % self.n)
        sys.exit(0)


def skip_all(reason):
    print("1..0 # SKIP " + reason)
    sys.exit(0)


def scratch_dir():
    """A scratch directory removed at exit, with its own loopscope cache."""
    d = tempfile.mkdtemp(prefix="ls-test.", dir=os.environ.get("TMPDIR", "/tmp"))
    import atexit
    atexit.register(shutil.rmtree, d, True)
    os.environ["XDG_CACHE_HOME"] = os.path.join(d, "cache")
    return d


def import_data_oracle():
    """tests/data_oracle.py, which needs pyelftools.  make's python3 may not
    be the system's, which has python3-pyelftools: run again under that one
    once; without pyelftools anywhere, skip the test."""
    try:
        import data_oracle
        return data_oracle
    except ImportError:
        if os.path.exists("/usr/bin/python3") and sys.executable != "/usr/bin/python3" and not os.environ.get("LS_REEXEC"):
            os.environ["LS_REEXEC"] = "1"
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        skip_all("pyelftools not installed (python3-pyelftools, scripts/setup-deps)")


def perf_loops_or_skip():
    """The perf-loops under test ($PERF_LOOPS, else the build's); the test
    skips when perf or perf-loops is missing."""
    perf_loops = os.environ.get("PERF_LOOPS") or os.path.join(TOP_BUILDDIR, "perf-loops")
    if not shutil.which("perf"):
        skip_all("perf not installed")
    if not os.access(perf_loops, os.X_OK):
        skip_all("perf-loops not built")
    return perf_loops


def need_tools(*tools):
    for t in tools:
        if not shutil.which(t):
            skip_all("%s not installed" % t)
    if not os.access(LOOPSCOPE, os.X_OK):
        skip_all("%s not built" % LOOPSCOPE)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, **kw)


def compile_fixture(cc, opt, srcs, out, extra=()):
    """Compile fixture sources (names under tests/fixtures) into OUT.
    Returns None on success, else the compiler's message."""
    if isinstance(srcs, str):
        srcs = [srcs]
    # Libraries go after the sources, or the linker drops them unused.
    libs = [e for e in extra if e.endswith(".so") or e.startswith("-l")]
    flags = [e for e in extra if e not in libs]
    cmd = [cc, opt, "-g"] + flags + ["-o", out] + [os.path.join(FIXTURES, s) for s in srcs] + libs
    r = run(cmd)
    return None if r.returncode == 0 else r.stderr


def fixture_builds(tap, tmp, src, stem, opts=("-O0", "-O2", "-O3")):
    """SRC (a fixture) built with gcc and clang (those installed) at each of
    OPTS into TMP/STEM-CCOPT: yields (cc, opt, tag, path), tag "cc opt src";
    a build that fails is a failed TAP line with the compiler's message."""
    for cc in ("gcc", "clang"):
        if not shutil.which(cc):
            continue
        for opt in opts:
            tag = "%s %s %s" % (cc, opt, src)
            out = os.path.join(tmp, "%s-%s%s" % (stem, cc, opt))
            err = compile_fixture(cc, opt, src, out)
            if err:
                tap.ok(False, tag + ": compile")
                tap.diag(err)
                continue
            yield cc, opt, tag, out


def compilers(lang):
    """(C compiler, C++ compiler) pairs that exist."""
    pairs = [("gcc", "g++"), ("clang", "clang++")]
    return [p for p in pairs if shutil.which(p[0]) and shutil.which(p[1])]


def debug_file_by_build_id(binary, root="/usr/lib/debug"):
    notes = run(["readelf", "-n", binary]).stdout
    if "Build ID:" not in notes:
        return None
    bid = notes.split("Build ID:")[1].split()[0]
    path = os.path.join(root, ".build-id", bid[:2], bid[2:] + ".debug")
    return path if os.path.exists(path) else None


def function_ranges(binary):
    """[(lo, hi, name)] of the defined function symbols with a size.  A
    binary without .symtab (libc.so.6) adds its debug file's."""
    files = [binary]
    if ".symtab" not in run(["readelf", "-SW", binary]).stdout:
        files.append(debug_file_by_build_id(binary))  # .dynsym + the debug file's .symtab
    text = "".join(run(["readelf", "-sW", f]).stdout for f in files if f)
    funcs = set()
    for line in text.splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) >= 8 and f[3] in ("FUNC", "IFUNC") and f[6] != "UND":
            size = int(f[2], 0) if f[2].startswith("0x") else int(f[2])
            if size > 0:
                lo = int(f[1], 16)
                funcs.add((lo, lo + size, f[7].split("@")[0]))
    return sorted(funcs)


_insn_re = re.compile(r"^\s*([0-9a-f]+):\t")


def instruction_addresses(binary, ranges=None):
    """Every instruction address objdump decodes in the executable sections,
    kept only when inside a function symbol's [value, value+size)."""
    if ranges is None:
        ranges = function_ranges(binary)
    r = run(["objdump", "-d", "--no-show-raw-insn", binary])
    addrs = []
    import bisect
    los = [lo for lo, hi, name in ranges]
    for line in r.stdout.splitlines():
        m = _insn_re.match(line)
        if not m or "(bad)" in line:
            continue
        a = int(m.group(1), 16)
        i = bisect.bisect_right(los, a) - 1
        if i >= 0 and ranges[i][0] <= a < ranges[i][1]:
            addrs.append(a)
    return sorted(set(addrs))


def lookup(binary, addrs, extra_args=(), env=None):
    """loopscope lookup --json over ADDRS on stdin: {addr: object}, plus the
    completed process (for its exit status and stderr)."""
    inp = "".join("0x%x\n" % a for a in addrs)
    r = subprocess.run([LOOPSCOPE, "lookup", "--json"] + list(extra_args) + [binary],
                       input=inp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=env)
    out = {}
    for line in r.stdout.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            o = json.loads(line)
        except ValueError:
            continue
        try:
            out[int(o.get("addr", "-1"), 16)] = o
        except (TypeError, ValueError):
            pass
    return out, r


def struct_json(binary, extra_args=(), env=None):
    """The whole tree of loopscope struct --format=json, or (None, process)."""
    r = subprocess.run([LOOPSCOPE, "struct", "--format=json", "--no-cache"] + list(extra_args) + [binary],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env)
    if r.returncode != 0:
        return None, r
    try:
        return json.loads(r.stdout), r
    except ValueError:
        return None, r


def walk(node, ancestors=()):
    """Yield (node, ancestors) over a struct JSON tree, outermost first."""
    yield node, ancestors
    for c in node.get("children", ()):
        yield from walk(c, ancestors + (node,))


def hexint(s):
    return int(s, 16) if isinstance(s, str) else int(s)


def markers(src):
    """Marker comments of a fixture: {tag: {name: [lines]}} for
    /* TAG:name */ and /* TAG:name@LINE */, and {tag: [lines]} under
    key (tag, None) for bare /* TAG */ markers."""
    res = {}
    pat = re.compile(r"/\*\s*([A-Z_]+)(?::([A-Za-z0-9_]+)(?:@(\d+))?)?\s*\*/")
    with open(os.path.join(FIXTURES, src)) as f:
        for n, line in enumerate(f, 1):
            for m in pat.finditer(line):
                tag, name, at = m.group(1), m.group(2), m.group(3)
                d = res.setdefault(tag, {})
                d.setdefault(name, []).append(int(at) if at else n)
    return res


def load_common():
    return sys.modules[__name__]
