# tests/corpus/packages.py - real programs built by their own build systems
# from Debian's source packages, with Debian's compiler flags
# (dpkg-buildflags: -O2 -g, no frame pointers), beside the corpus
# (corpus.py, whose programs are compiled file by file):
#
#   xz        xz-utils' xz (configure; liblzma linked in statically)
#   db_bench  LevelDB's db_bench (CMake; the static build Debian makes it in)
#
# What users run, as their distribution builds it: the programs of the
# unwinding tests and benchmarks (tests/corpus-record.py, bench/record.py).
# build(NAME) returns the binary, building it once into
# $LOOPSCOPE_CORPUS_DIR/build/pkg-NAME; None when the source package cannot
# be had (no network, no deb-src) or the build fails.
import os
import subprocess

import corpus

FORMAT = 1  # bump when a recipe changes


def _flags(var, srcdir):
    r = subprocess.run(["dpkg-buildflags", "--get", var], cwd=srcdir, stdout=subprocess.PIPE,
                       universal_newlines=True)
    return r.stdout.strip() if r.returncode == 0 else "-g -O2"


def _build_xz(srcdir, out):
    cflags = _flags("CFLAGS", srcdir) + " " + _flags("CPPFLAGS", srcdir)
    cmds = [[os.path.join(srcdir, "configure"), "--disable-shared", "--enable-static", "--disable-doc",
             "--disable-nls", "CFLAGS=" + cflags],
            ["make", "-j%d" % (os.cpu_count() or 2)]]
    return cmds, os.path.join(out, "src", "xz", "xz")


def _build_db_bench(srcdir, out):
    cpp = _flags("CPPFLAGS", srcdir)
    cmds = [["cmake", "-DCMAKE_BUILD_TYPE=None", "-DCMAKE_C_FLAGS=" + _flags("CFLAGS", srcdir) + " " + cpp,
             "-DCMAKE_CXX_FLAGS=" + _flags("CXXFLAGS", srcdir) + " " + cpp + " -DNDEBUG",
             "-DLEVELDB_BUILD_TESTS=OFF", "-DLEVELDB_BUILD_BENCHMARKS=ON", srcdir],
            ["make", "-j%d" % (os.cpu_count() or 2), "db_bench"]]
    return cmds, os.path.join(out, "db_bench")


PACKAGES = {"xz": ("xz-utils", _build_xz), "db_bench": ("leveldb", _build_db_bench)}


def build(name):
    package, recipe = PACKAGES[name]
    with corpus._locked("pkg-" + name):
        srcdir = corpus.source_dir(package)
        if srcdir is None:
            return None
        out = os.path.join(corpus.CORPUS_DIR, "build", "pkg-" + name)
        cmds, binary = recipe(srcdir, out)
        stamp = os.path.join(out, ".built")
        want = "%d %s" % (FORMAT, corpus._version("gcc"))
        if os.path.exists(stamp) and open(stamp).read() == want and os.path.exists(binary):
            return binary
        os.makedirs(out, exist_ok=True)
        corpus.log("building %s from %s with dpkg-buildflags" % (name, package))
        for cmd in cmds:
            r = subprocess.run(cmd, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
            if r.returncode != 0:
                corpus.log("%s: %s failed: %s" % (name, cmd[0], r.stderr.strip()[-400:]))
                return None
        with open(stamp, "w") as f:
            f.write(want)
        return binary if os.path.exists(binary) else None


def make_input(path, size):
    """SIZE bytes for xz to compress, the same on every machine: the corpus's
    sources (text) and libc (code), then a generated text to fill."""
    import hashlib
    with open(path, "wb") as f:
        n = 0
        for root in (os.path.join(corpus.CORPUS_DIR, "src", "lua5.4"), os.path.join(corpus.CORPUS_DIR, "src", "libzstd")):
            for dirpath, dirs, files in sorted(os.walk(root)):
                dirs.sort()
                for name in sorted(files):
                    if n >= size // 2:
                        break
                    try:
                        data = open(os.path.join(dirpath, name), "rb").read()
                    except OSError:
                        continue
                    f.write(data)
                    n += len(data)
        seed = b"loopscope"
        while n < size:
            seed = hashlib.sha256(seed).digest()
            line = (" ".join("w%d" % (b % 97) for b in seed) + "\n").encode()
            f.write(line)
            n += len(line)
