# tests/corpus/corpus.py - the real-code corpus: programs nobody on the team
# wrote, taken from Debian's source packages at test time and built as
# distributions build them (PIE, -g), with gcc and clang at -O2 and -O3.
#
# Why Debian source packages: they are real, versioned, patched the way users
# get them, and `apt-get source` reaches them from any Debian machine (the
# set-up adds a deb-src entry).  Nothing of their code is kept in this tree.
#
# What a build gives (build(...) returns a Build):
#   binaries  the programs, PIE, with DWARF;
#   clang builds also carry the loop oracle: clang's own machine-loop
#   annotations ("# =>This Loop Header: Depth=N") of every function, read
#   from the .s files, with each header label's address in the linked
#   program.  Each .s file's .LBB labels are renamed with a per-file prefix
#   (they repeat across files), assembled with -Wa,-L so they become symbols,
#   read with nm, then stripped again (objcopy), so that loopscope sees the
#   same program at the same addresses without them.
#
# Used by the corpus tests (tests/corpus-*.py) and by `python3
# tests/corpus/corpus.py [--list | PROGRAM... | --fetch PACKAGE...]`, which
# fetches and builds (or with --fetch only fetches: for the source packages
# that tests build themselves, such as gdb-real.py's lzip).
# The corpus lives in $LOOPSCOPE_CORPUS_DIR (default /var/tmp/loopscope-corpus)
# and is built once per compiler version and flags; a missing source package
# (no network, no deb-src) makes the tests skip, never fail.  Under make check
# (LOOPSCOPE_CORPUS_NO_FETCH=1) nothing is fetched: make check-slow-setup
# fetches and builds the corpus before the slow tier's tests.
import contextlib
import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

CORPUS_DIR = os.environ.get("LOOPSCOPE_CORPUS_DIR", "/var/tmp/loopscope-corpus")
HERE = os.path.dirname(os.path.abspath(__file__))  # workloads name their files under it as {here}
COMPILERS = ("gcc", "clang")
OPTS = ("-O2", "-O3")
FORMAT = 1  # bump when the build recipe changes, to rebuild stale corpora


class Program:
    """One program of the corpus: which Debian source package, which of its
    files, how to compile and link them, and a workload that exercises it."""

    def __init__(self, name, package, sources, lang="c", cflags=(), libs=(),
                 exclude=(), kind="", workload=None, headers=None, configure=None,
                 make_target=None, opts=OPTS):
        self.name = name            # the binary's name
        self.package = package      # Debian source package
        self.sources = sources      # globs relative to the unpacked package
        self.exclude = exclude      # basenames left out
        self.lang = lang            # "c" or "c++"
        self.cflags = list(cflags)  # -D and -I (relative -I: to the package)
        self.libs = list(libs)
        self.kind = kind            # what it stands for in the corpus
        self.workload = workload    # argv after the binary (a list; "{here}": this directory), or None
        self.headers = headers or {}  # {name: text}: headers Debian's build generates
        # A program built by its own build system instead (configure, then
        # `make MAKE_TARGET`, out of tree): the configure arguments.
        self.configure = configure
        self.make_target = make_target
        self.opts = opts            # the levels it is built at


PROGRAMS = [
    # A bytecode interpreter whose dispatch is a computed goto (ljumptab.h:
    # `goto *disptab[op]`, the table in .data.rel.ro of a PIE).
    Program("lua5.4", "lua5.4", ["src/*.c"], exclude=("luac.c",),
            cflags=["-DLUA_COMPAT_5_3", "-DLUA_USE_LINUX"], libs=["-lm", "-ldl"],
            kind="interpreter, computed goto", workload=["{here}/bench.lua", "12"],
            headers={"lua5.4-deb-multiarch.h": '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"\n'}),
    # A bytecode interpreter whose dispatch is a switch (lvm.c's vmdispatch).
    Program("lua5.3", "lua5.3", ["src/*.c"], exclude=("luac.c",),
            cflags=["-DLUA_COMPAT_5_2", "-DLUA_USE_POSIX", "-DLUA_USE_DLOPEN"], libs=["-lm", "-ldl"],
            kind="interpreter, switch", workload=["{here}/bench.lua", "12"],
            headers={"lua5.3-deb-multiarch.h": '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"\n'}),
    # A compression library and its command-line tool (with its own
    # benchmark, `zstd -b`).
    Program("zstd", "libzstd",
            ["lib/common/*.c", "lib/compress/*.c", "lib/decompress/*.c",
             "lib/dictBuilder/*.c", "programs/*.c"],
            cflags=["-Ilib", "-Ilib/common", "-DZSTD_DISABLE_ASM", "-DZSTD_NOBENCH=0",
                    "-DZSTD_LEGACY_SUPPORT=0", "-DBACKTRACE_ENABLE=0"],
            libs=["-lpthread"], kind="compression library",
            workload=["-b3", "-i1"]),
    # Numerical C++ with heavy inlining: Eigen's own benchmarks.
    Program("eigen-gemm", "eigen3", ["bench/bench_gemm.cpp"], lang="c++",
            cflags=["-I.", "-DNDEBUG"], kind="numerical C++, heavy inlining"),
    Program("eigen-solvers", "eigen3", ["bench/dense_solvers.cpp"], lang="c++",
            cflags=["-I.", "-DNDEBUG"], kind="numerical C++, heavy inlining"),
    # A C++ template library: {fmt}, driven by its own fuzzing harnesses
    # (test/fuzzing/main.cc runs a fuzzer over files).
    Program("fmt-one-arg", "fmtlib",
            ["src/format.cc", "test/fuzzing/one-arg.cc", "test/fuzzing/main.cc"],
            lang="c++", cflags=["-Iinclude", "-DFMT_FUZZ_SEPARATE_ALLOCATION=0"],
            kind="C++ template library"),
    Program("fmt-two-args", "fmtlib",
            ["src/format.cc", "test/fuzzing/two-args.cc", "test/fuzzing/main.cc"],
            lang="c++", cflags=["-Iinclude"], kind="C++ template library"),
    Program("fmt-chrono", "fmtlib",
            ["src/format.cc", "test/fuzzing/chrono-duration.cc", "test/fuzzing/main.cc"],
            lang="c++", cflags=["-Iinclude"], kind="C++ template library"),
    # A bytecode interpreter as distributions build it: CPython 3.11 with
    # Debian's configure arguments that matter for the code (computed
    # gotos), configure and `make python` (no PGO/LTO: the build stays
    # short).  gcc keeps the label table's address in a stack slot;
    # clang's dispatch is one irreducible region of 180 handlers.
    Program("python3.11", "python3.11", [], kind="interpreter, computed goto, configure+make",
            configure=["--with-computed-gotos", "--without-ensurepip", "--disable-test-modules"],
            make_target="python", opts=("-O2",),
            workload=["-c", "import json; sum(len(json.dumps(list(range(i)))) for i in range(3000))"]),
]


def log(msg):
    if os.environ.get("LOOPSCOPE_CORPUS_QUIET") != "1":
        sys.stderr.write("corpus: %s\n" % msg)
        sys.stderr.flush()


def run(cmd, cwd=None, env=None):
    return subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)


# ---- sources ----------------------------------------------------------------

@contextlib.contextmanager
def _locked(name):
    """Held while one process fetches or builds NAME: the corpus tests may
    run at the same time (make check -j) and share the corpus."""
    os.makedirs(os.path.join(CORPUS_DIR, "locks"), exist_ok=True)
    with open(os.path.join(CORPUS_DIR, "locks", name), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def source_dir(package):
    """The unpacked, Debian-patched source of PACKAGE, fetched on first use
    with `apt-get source`; None when it cannot be had."""
    with _locked("src-" + package):
        return _source_dir(package)


def _source_dir(package):
    root = os.path.join(CORPUS_DIR, "src", package)
    stamp = os.path.join(root, ".unpacked")
    if os.path.exists(stamp):
        with open(stamp) as f:
            return os.path.join(root, f.read().strip())
    if not shutil.which("apt-get") or not shutil.which("dpkg-source"):
        return None
    if os.environ.get("LOOPSCOPE_CORPUS_NO_FETCH") == "1":
        # make check sets it: tests never download (make check-slow-setup does)
        log("%s not fetched (LOOPSCOPE_CORPUS_NO_FETCH=1: make check-slow-setup fetches it)" % package)
        return None
    os.makedirs(root, exist_ok=True)
    log("fetching the Debian source package %s" % package)
    r = run(["apt-get", "source", "-qq", package], cwd=root)
    dirs = [d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))]
    if r.returncode != 0 or len(dirs) != 1:
        log("apt-get source %s failed: %s" % (package, r.stderr.strip()[-300:]))
        shutil.rmtree(root, ignore_errors=True)
        return None
    with open(stamp, "w") as f:
        f.write(dirs[0])
    return os.path.join(root, dirs[0])


# ---- builds -----------------------------------------------------------------

class Build:
    """One program built with one compiler at one level."""

    def __init__(self, program, compiler, opt, path, srcdir, oracle):
        self.program = program
        self.compiler = compiler
        self.opt = opt
        self.path = path          # the binary
        self.srcdir = srcdir      # its sources (DWARF names files under it)
        self.oracle = oracle      # clang: [{"func","label","addr","depth"}], else None

    @property
    def label(self):
        return "%s %s %s" % (self.program.name, self.compiler, self.opt)

    def command(self):
        """The program running its workload (argv), or None."""
        if self.program.workload is None:
            return None
        return [self.path] + [w.replace("{here}", HERE) for w in self.program.workload]


def _driver(compiler, lang):
    if compiler == "gcc":
        return "g++" if lang == "c++" else "gcc"
    return "clang++" if lang == "c++" else "clang"


def _version(cc):
    r = run([cc, "--version"])
    return r.stdout.splitlines()[0] if r.returncode == 0 and r.stdout else cc


def _sources(program, srcdir):
    files = []
    for g in program.sources:
        files += sorted(glob.glob(os.path.join(srcdir, g)))
    return [f for f in files if os.path.basename(f) not in program.exclude]


def _flags(program, srcdir, opt, gendir):
    flags = [opt, "-g", "-fPIE", "-w"]
    if program.headers:
        flags.append("-I" + gendir)
    for f in program.cflags:
        if f.startswith("-I") and not os.path.isabs(f[2:]):
            f = "-I" + os.path.join(srcdir, f[2:])
        flags.append(f)
    return flags


_lbb = re.compile(r"\.LBB(\d+)_(\d+)\b")


def _compile_one(cc, flags, src, obj, prefix, is_clang):
    """Compile SRC to OBJ.  For clang, through a .s kept beside OBJ, with its
    .LBB labels made unique (PREFIX) and kept as symbols."""
    if not is_clang:
        r = run([cc] + flags + ["-c", "-o", obj, src])
        return r.returncode == 0, r.stderr
    asm = obj[:-2] + ".s"
    r = run([cc] + flags + ["-S", "-o", asm, src])
    if r.returncode != 0:
        return False, r.stderr
    # Latin-1 round-trips every byte of the strings in .s files.
    with open(asm, encoding="latin-1") as f:
        text = f.read()
    with open(asm, "w", encoding="latin-1") as f:
        f.write(_lbb.sub(lambda m: ".LBB%s_%s_%s" % (prefix, m.group(1), m.group(2)), text))
    r = run([cc, "-c", "-Wa,-L", "-o", obj, asm])
    return r.returncode == 0, r.stderr


_label_re = re.compile(r"^(\.LBB\w+):")
_func_re = re.compile(r"^([A-Za-z_$][\w$.]*):")
_header_re = re.compile(r"=>\s*This (?:Inner )?Loop Header: Depth=(\d+)")


def clang_loops(asm_path):
    """[(function, label, depth)] of every loop clang's .s annotates."""
    loops = []
    func = label = None
    with open(asm_path, encoding="latin-1") as f:
        for line in f:
            m = _label_re.match(line)
            if m:
                label = m.group(1)
            else:
                m = _func_re.match(line)
                if m and not m.group(1).startswith("."):
                    func, label = m.group(1), None
            h = _header_re.search(line)
            if h and label:
                loops.append((func, label, int(h.group(1))))
    return loops


def _oracle(objs, labelled):
    """The clang loop oracle of a linked program: every annotated loop of
    every object, with its header label's address from nm."""
    addrs = {}
    for line in run(["nm", labelled]).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[2].startswith(".LBB"):
            addrs[f[2]] = int(f[0], 16)
    loops = []
    for obj in objs:
        for func, label, depth in clang_loops(obj[:-2] + ".s"):
            if label in addrs:
                loops.append({"func": func, "label": label, "addr": addrs[label], "depth": depth})
    return loops


def build(program, compiler, opt, jobs=None):
    """PROGRAM built with COMPILER at OPT; None when its source cannot be
    had or it does not build (the reason is logged)."""
    with _locked("build-%s-%s%s" % (program.name, compiler, opt)):
        if program.configure is not None:
            return _build_configured(program, compiler, opt, jobs)
        return _build(program, compiler, opt, jobs)


# ---- programs built by their own build system -------------------------------
#
# configure runs with the plain compiler; make runs with this file as the
# compiler (`python3 corpus.py --cc clang ARGS`, see compile_wrapper), which
# for clang compiles each object through its .s as _compile_one does and
# leaves the loops clang annotated beside the object (OBJ.loops, JSON).


def compile_wrapper(cc, args):
    """Run as the compiler of a configured build: `CC -c ... -o X.o SRC.c`
    goes through _compile_one's .s (clang), everything else straight to CC."""
    is_clang = "clang" in os.path.basename(cc)
    srcs = [a for a in args if a.endswith(".c") and not a.startswith("-")]
    if not is_clang or "-c" not in args or "-o" not in args or len(srcs) != 1:
        os.execvp(cc, [cc] + args)
    k = args.index("-o")
    obj = args[k + 1]
    if not obj.endswith(".o"):
        os.execvp(cc, [cc] + args)
    flags = [a for i, a in enumerate(args) if a != "-c" and a not in srcs and i not in (k, k + 1)]
    prefix = "h" + hashlib.sha1(os.path.abspath(obj).encode()).hexdigest()[:10]
    ok, err = _compile_one(cc, flags, srcs[0], obj, prefix, True)
    if not ok:
        sys.stderr.write(err)
        return 1
    asm = obj[:-2] + ".s"
    with open(obj + ".loops", "w") as f:
        json.dump(clang_loops(asm), f)
    with open(obj + ".args", "w") as f:  # to compile it again (llvm_loop_starts)
        json.dump({"cwd": os.getcwd(), "flags": flags, "src": srcs[0]}, f)
    os.unlink(asm)
    return 0


def _build_configured(program, compiler, opt, jobs):
    srcdir = source_dir(program.package)
    if srcdir is None:
        return None
    cc = _driver(compiler, program.lang)
    if not shutil.which(cc):
        log("%s not installed" % cc)
        return None
    out = os.path.join(CORPUS_DIR, "build", "%s-%s%s" % (program.name, compiler, opt))
    cflags = "%s -g -fPIE" % opt
    key = hashlib.sha1(json.dumps([FORMAT, _version(cc), cflags, program.configure, program.make_target,
                                   "args"]).encode()).hexdigest()[:12]
    binary = os.path.join(out, program.name)
    stamp = os.path.join(out, "build.json")
    if os.path.exists(stamp):
        with open(stamp) as f:
            info = json.load(f)
        if info.get("key") == key and os.path.exists(binary):
            return Build(program, compiler, opt, binary, srcdir, info.get("oracle"))
    shutil.rmtree(out, ignore_errors=True)
    obj = os.path.join(out, "obj")
    os.makedirs(obj)
    log("building %s with %s %s (configure and make %s)" % (program.name, compiler, opt, program.make_target))
    env = dict(os.environ, CC=cc, CFLAGS=cflags, LDFLAGS="-pie")
    r = run([os.path.join(srcdir, "configure")] + program.configure, cwd=obj, env=env)
    if r.returncode != 0:
        log("%s: configure failed: %s" % (program.name, (r.stdout + r.stderr)[-2000:]))
        return None
    wrapper = "%s %s --cc %s" % (sys.executable, os.path.abspath(__file__), cc)
    r = run(["make", "-j%d" % (jobs or os.cpu_count() or 2), "CC=" + wrapper, program.make_target], cwd=obj)
    if r.returncode != 0:
        log("%s: make failed: %s" % (program.name, (r.stdout + r.stderr)[-3000:]))
        return None
    built = os.path.join(obj, program.make_target)
    oracle = None
    if compiler == "clang":
        addrs = {}
        for line in run(["nm", built]).stdout.splitlines():
            f = line.split()
            if len(f) == 3 and f[2].startswith(".LBB"):
                addrs[f[2]] = int(f[0], 16)
        oracle = []
        for d, _, names in os.walk(obj):
            for name in sorted(names):
                if name.endswith(".o.loops"):
                    with open(os.path.join(d, name)) as f:
                        for func, label, depth in json.load(f):
                            if label in addrs:
                                oracle.append({"func": func, "label": label, "addr": addrs[label], "depth": depth})
        r = run(["objcopy", "--wildcard", "--strip-symbol=.L*", built, binary])
    else:
        r = run(["cp", built, binary])
    if r.returncode != 0:
        log("%s: %s" % (program.name, r.stderr))
        return None
    with open(stamp, "w") as f:
        json.dump({"key": key, "oracle": oracle}, f)
    return Build(program, compiler, opt, binary, srcdir, oracle)


def _build(program, compiler, opt, jobs):
    srcdir = source_dir(program.package)
    if srcdir is None:
        return None
    cc = _driver(compiler, program.lang)
    if not shutil.which(cc):
        log("%s not installed" % cc)
        return None
    out = os.path.join(CORPUS_DIR, "build", "%s-%s%s" % (program.name, compiler, opt))
    gendir = os.path.join(out, "gen")
    flags = _flags(program, srcdir, opt, gendir)
    key = hashlib.sha1(json.dumps([FORMAT, _version(cc), flags, program.sources, program.headers,
                                   program.exclude, program.libs]).encode()).hexdigest()[:12]
    binary = os.path.join(out, program.name)
    stamp = os.path.join(out, "build.json")
    if os.path.exists(stamp):
        with open(stamp) as f:
            info = json.load(f)
        if info.get("key") == key and os.path.exists(binary):
            return Build(program, compiler, opt, binary, srcdir, info.get("oracle"))
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    if program.headers:
        os.makedirs(gendir)
        for name, text in program.headers.items():
            with open(os.path.join(gendir, name), "w") as f:
                f.write(text)
    srcs = _sources(program, srcdir)
    if not srcs:
        log("%s: no sources matched in %s" % (program.name, srcdir))
        return None
    log("building %s with %s %s (%d files)" % (program.name, compiler, opt, len(srcs)))
    is_clang = compiler == "clang"
    objs = [os.path.join(out, "%03d-%s.o" % (i, os.path.splitext(os.path.basename(s))[0]))
            for i, s in enumerate(srcs)]
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda a: _compile_one(cc, flags, a[0], a[1], "f%d" % a[2], is_clang),
                                [(s, o, i) for i, (s, o) in enumerate(zip(srcs, objs))]))
    for (ok, err), src in zip(results, srcs):
        if not ok:
            log("%s: %s does not compile with %s %s:\n%s" % (program.name, src, cc, opt, err[-2000:]))
            return None
    link = binary + ".lbl" if is_clang else binary
    r = run([cc, "-pie", "-o", link] + objs + program.libs)
    if r.returncode != 0:
        log("%s: link failed: %s" % (program.name, r.stderr[-2000:]))
        return None
    oracle = None
    if is_clang:
        oracle = _oracle(objs, link)
        r = run(["objcopy", "--wildcard", "--strip-symbol=.L*", link, binary])
        if r.returncode != 0:
            log("%s: objcopy failed: %s" % (program.name, r.stderr))
            return None
        os.unlink(link)
    for o in objs:
        os.unlink(o)
        if is_clang:
            os.unlink(o[:-2] + ".s")  # the oracle keeps what it needs
    with open(stamp, "w") as f:
        json.dump({"key": key, "oracle": oracle}, f)
    return Build(program, compiler, opt, binary, srcdir, oracle)


# ---- clang's !llvm.loop start locations: an oracle of loop lines ----------
#
# clang gives each loop of its IR a !llvm.loop node whose first DILocation
# is where the loop's statement starts; the optimized IR keeps them (with
# the inlined-at chain) on the loops that survive.  The set of those
# (file, line) per function is an oracle of loop lines independent of the
# source-text rules: a loop of ours in function F whose line is one of F's
# starts agrees with clang.

_md_line = re.compile(r"^!(\d+) = (?:distinct )?(.*)$")
_define = re.compile(r'^define [^@]*@("?)([^"(]+)\1\(')
_loop_ref = re.compile(r"!llvm\.loop !(\d+)")


def _ir_loop_starts(ir):
    """{function: [(file, line)]} of one module's IR text."""
    md = {}
    funcs = {}
    cur = None
    for line in ir.splitlines():
        m = _md_line.match(line)
        if m:
            md[m.group(1)] = m.group(2)
            continue
        m = _define.match(line)
        if m:
            cur = funcs.setdefault(m.group(2), [])
            continue
        if line.startswith("}"):
            cur = None
        elif cur is not None:
            cur += _loop_ref.findall(line)

    def field(text, name):
        m = re.search(r"\b%s: (!?\d+|\"(?:[^\"\\]|\\.)*\")" % name, text)
        return m.group(1) if m else None

    def file_of(scope, depth=0):
        text = md.get(scope.lstrip("!"), "") if scope else ""
        if text.startswith("!DIFile("):
            name, d = field(text, "filename"), field(text, "directory")
            name = name.strip('"') if name else ""
            d = d.strip('"') if d else ""
            return os.path.normpath(name if name.startswith("/") else os.path.join(d, name))
        f = field(text, "file")
        if f and f.startswith("!"):
            return file_of(f, depth + 1)
        s = field(text, "scope")
        return file_of(s, depth + 1) if s and depth < 64 else None

    out = {}
    for fn, refs in funcs.items():
        starts = set()
        for r in set(refs):
            node = md.get(r, "")
            for op in re.findall(r"!(\d+)", node):
                loc = md.get(op, "")
                if loc.startswith("!DILocation("):
                    line, scope = field(loc, "line"), field(loc, "scope")
                    f = file_of(scope)
                    if f and line:
                        starts.add((f, int(line)))
                    break
        if starts:
            out[fn] = sorted(starts)
    return out


def llvm_loop_starts(b):
    """{function (linkage name): set((file, line))} of a clang build, from
    its sources compiled again to optimized IR (cached beside the build);
    None for a gcc build or one whose compile commands are not known."""
    if b.compiler != "clang":
        return None
    cache = os.path.join(os.path.dirname(b.path), "llvm-loops.json")
    if os.path.exists(cache):
        with open(cache) as f:
            return {k: {tuple(x) for x in v} for k, v in json.load(f).items()}
    jobs = []  # (cwd, argv)
    cc = _driver("clang", b.program.lang)
    if b.program.configure is None:
        gendir = os.path.join(os.path.dirname(b.path), "gen")
        flags = _flags(b.program, b.srcdir, b.opt, gendir)
        jobs = [(None, [cc] + flags + ["-S", "-emit-llvm", "-o", "-", s]) for s in _sources(b.program, b.srcdir)]
    else:
        for d, _, names in os.walk(os.path.join(os.path.dirname(b.path), "obj")):
            for name in names:
                if name.endswith(".o.args"):
                    with open(os.path.join(d, name)) as f:
                        a = json.load(f)
                    jobs.append((a["cwd"], [cc] + a["flags"] + ["-S", "-emit-llvm", "-o", "-", a["src"]]))
        if not jobs:
            return None
    merged = {}
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for r in pool.map(lambda j: subprocess.run(j[1], cwd=j[0], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                                   universal_newlines=True), jobs):
            for fn, starts in _ir_loop_starts(r.stdout).items():
                merged.setdefault(fn, set()).update(map(tuple, starts))
    with open(cache, "w") as f:
        json.dump({k: sorted(v) for k, v in merged.items()}, f)
    return merged


def build_all(compilers=COMPILERS, opts=OPTS, names=None):
    """Every program (or those NAMES) with every compiler and level; the
    builds that could be made, and the labels of those that could not.
    Two builds run at a time: each compiles its files in parallel, but
    Eigen's programs are one file and {fmt}'s three, which alone would
    leave a core idle for most of the corpus' first build."""
    wanted = [(p, c, o) for p in PROGRAMS if not names or p.name in names
              for c in compilers for o in opts if o in p.opts]
    with ThreadPoolExecutor(max_workers=2) as pool:
        made = list(pool.map(lambda w: build(*w), wanted))
    builds, missing = [], []
    for (p, c, o), b in zip(wanted, made):
        if b:
            builds.append(b)
        else:
            missing.append("%s %s %s" % (p.name, c, o))
    return builds, missing


def main(argv):
    if argv[1:2] == ["--cc"]:
        return compile_wrapper(argv[2], argv[3:])
    if argv[1:2] == ["--list"]:
        for p in PROGRAMS:
            print("%-16s %-10s %s" % (p.name, p.package, p.kind))
        return 0
    if argv[1:2] == ["--fetch"]:
        # the sources of PACKAGEs that tests build themselves (make
        # check-slow-setup: CORPUS_SOURCES of the test registries)
        missing = [pkg for pkg in argv[2:] if source_dir(pkg) is None]
        for pkg in missing:
            print("%s: not fetched" % pkg)
        return 1 if missing else 0
    builds, missing = build_all(names=set(argv[1:]) or None)
    for b in builds:
        extra = " (%d clang loops)" % len(b.oracle) if b.oracle is not None else ""
        print("%s: %s%s" % (b.label, b.path, extra))
    for m in missing:
        print("%s: not built" % m)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
