#!/usr/bin/env python3
# tests/perf-unwind.py - call chains of code without frame pointers, end to
# end through real `perf record` data:
#
#  1. repaired frame-pointer chains: tests/fixtures/perf/fp_main.c (built
#     with frame pointers) calling fp_lib.c (built without), recorded with
#     --call-graph=dwarf,65528; PERF_LOOPS_FP_CHECK walks, in each sample's
#     stack copy, the fp chain the kernel would have recorded for the same
#     sample and repairs it: every inferred frame must be where the CFI's
#     unwinding of that sample has it (no wrong insertion: the fixture
#     tempts with two candidate callers, an indirect call and a tail call,
#     which must be refused), and >= 95% of the samples whose fp chain
#     skipped a frame in the repairable case (a frameless leaf) must equal
#     the CFI's chain once repaired;
#  2. the same program recorded with --call-graph=fp (the kernel's chains):
#     the tree shows app_leaf [inferred] between lib_leaf and main, JSON says
#     "frame": "inferred", and the share of samples left unrepaired is said
#     on stderr once, with the command that records complete chains - as it
#     is for a program with no frame pointers at all; and with the library
#     built without any CFI, the recipes tell the frameless leaf instead;
#  3. code with no CFI at all (compiled -g0 without unwind tables): a
#     --call-graph=dwarf recording reaches main through frames the unwind
#     recipes found, marked [recipes] (and "frame": "recipes" in JSON);
#  4. perf loops record with no options: --call-graph=fp for code that keeps
#     frame pointers, --call-graph=dwarf,N (N from the program's frames, then
#     from the depth the recording measured) for code that does not, each
#     choice said on stderr; --call-graph as given wins.
import importlib.util
import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("core_common", os.path.join(HERE, "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)

PERF_LOOPS = os.environ.get("PERF_LOOPS") or os.path.join(C.TOP_BUILDDIR, "perf-loops")
PERF_FIX = os.path.join(C.FIXTURES, "perf")


def run(cmd, env=None, cwd=None):
    return C.run(cmd, env=env, cwd=cwd)


def build(tap, tmp):
    lib = os.path.join(tmp, "libfpl.so")
    exe = os.path.join(tmp, "fp_main")
    r1 = run(["gcc", "-O2", "-g", "-fomit-frame-pointer", "-fPIC", "-shared", "-o", lib,
              os.path.join(PERF_FIX, "fp_lib.c")])
    r2 = run(["gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-o", exe, os.path.join(PERF_FIX, "fp_main.c"),
              "-L" + tmp, "-lfpl", "-Wl,-rpath," + tmp])
    ok = tap.ok(r1.returncode == 0 and r2.returncode == 0,
                "fp_main (frame pointers) and libfpl.so (none) build")
    if not ok:
        tap.diag(r1.stderr + r2.stderr)
    return exe if ok else None


def upto_main(chain):
    out = []
    for x in chain:
        out.append(x)
        if x == "main":
            return out
    return None


def check_repair_against_cfi(tap, tmp, exe):
    data = os.path.join(tmp, "dwarf.data")
    r = run(["perf", "record", "-q", "-e", "cpu-clock", "--call-graph=dwarf,65528", "-o", data, exe, "2"])
    if not tap.ok(r.returncode == 0, "perf record --call-graph=dwarf,65528 fp_main"):
        tap.diag(r.stderr)
        return
    check = os.path.join(tmp, "check.txt")
    run([PERF_LOOPS, "report", "-q", "--stdio", "-i", data], env=dict(os.environ, PERF_LOOPS_FP_CHECK=check))
    skipped = inferred = wrong = leaf_cases = leaf_equal = tempting = tempting_inserted = 0
    for line in open(check):
        f = line.rstrip("\n").split("\t")
        if len(f) < 4 or f[0] != "skipped":
            continue
        dw = upto_main(f[2].split(";"))
        fp = f[3].split(";")
        if dw is None:
            continue
        skipped += 1
        for i, x in enumerate(fp):
            if x.endswith("*"):
                inferred += 1
                below = fp[i - 1].rstrip("*")
                if not any(dw[k] == below and k + 1 < len(dw) and dw[k + 1] == x[:-1] for k in range(len(dw))):
                    wrong += 1
                    if wrong <= 5:
                        tap.diag("wrong: %s | %s" % (f[2], f[3]))
        if dw[:2] == ["lib_leaf", "app_leaf"]:
            leaf_cases += 1
            leaf_equal += upto_main([x.rstrip("*") for x in fp]) == dw
        # the leaf's caller skipped, and the code does not say which it was
        if len(dw) > 1 and dw[0] in ("lib_leaf", "lib_leaf2") and dw[1] in ("lib_mid1", "lib_mid2", "app_indirect",
                                                                             "app_tail"):
            tempting += 1
            tempting_inserted += any(x.endswith("*") for x in fp)
    tap.diag("%d samples skipped a frame; %d frames inferred, %d wrong; frameless leaf: %d of %d repaired equal to "
             "the CFI's chain; tempting cases: %d samples, %d with a frame inserted" %
             (skipped, inferred, wrong, leaf_equal, leaf_cases, tempting, tempting_inserted))
    tap.ok(skipped > 100 and inferred > 50 and wrong == 0,
           "every inferred frame (%d) is where the CFI's unwinding of the same sample has it" % inferred)
    tap.ok(leaf_cases > 50 and leaf_equal >= 0.95 * leaf_cases,
           "a frameless leaf skipped its caller in %d samples: %d (>= 95%%) repaired to the CFI's chain" %
           (leaf_cases, leaf_equal))
    tap.ok(tempting > 50 and tempting_inserted == 0,
           "two candidate callers, an indirect call, a tail call (%d samples): nothing inserted" % tempting)


def check_fp_recording(tap, tmp, exe):
    data = os.path.join(tmp, "fp.data")
    r = run(["perf", "record", "-q", "-e", "cpu-clock", "--call-graph=fp", "-o", data, exe, "1"])
    if not tap.ok(r.returncode == 0, "perf record --call-graph=fp fp_main"):
        return
    r = run([PERF_LOOPS, "report", "--stdio", "-i", data])
    m = re.search(r"^\s*([\d.]+)%.*app_leaf \[inferred\]", r.stdout, re.M)
    tap.ok(m is not None and re.search(r"main  \[fp_main\]\n(?:.*\n)*?.*app_leaf \[inferred\]", r.stdout) is not None,
           "the tree: app_leaf [inferred] under main (%s%%)" % (m.group(1) if m else "-"))
    warn = [l for l in r.stderr.splitlines() if "could not be repaired" in l]
    share = re.search(r"([\d.]+)% of the samples \((\d+) of (\d+)\)", warn[0]) if warn else None
    tap.ok(len(warn) == 1 and share and "perf loops record -- COMMAND" in warn[0] and "libfpl.so" in warn[0],
           "stderr says once which share of the samples could not be repaired (%s%%), where, and how to record "
           "complete chains" % (share.group(1) if share else "-"))
    if share:
        tap.ok(abs(float(share.group(1)) - 100.0 * int(share.group(2)) / int(share.group(3))) < 0.1 and
               0 < int(share.group(2)) < int(share.group(3)), "the share is the count over the samples")
    j = run([PERF_LOOPS, "report", "--format=json", "-q", "-i", data])
    names = []

    def walk(n):
        if n.get("frame") == "inferred":
            names.append(n.get("name"))
        for c in n.get("children", []):
            walk(c)
    try:
        walk(json.loads(j.stdout)["tree"])
    except ValueError:
        pass
    # (app_two and app_tail are inferred rightly where the sample is in
    # lib_mid1 or lib_tail themselves; app_indirect calls through a pointer)
    tap.ok("app_leaf" in names and "app_indirect" not in names,
           'JSON: "frame": "inferred" on app_leaf, never on app_indirect (an indirect call)')
    check_fp_recording_no_cfi(tap, tmp)
    # no frame pointers anywhere: nothing to repair, everything said
    nofp = os.path.join(tmp, "nofp_main")
    run(["gcc", "-O2", "-g", "-fomit-frame-pointer", "-o", nofp, os.path.join(PERF_FIX, "fp_main.c"),
         os.path.join(PERF_FIX, "fp_lib.c")])
    data2 = os.path.join(tmp, "nofp.data")
    run(["perf", "record", "-q", "-e", "cpu-clock", "--call-graph=fp", "-o", data2, nofp, "1"])
    r = run([PERF_LOOPS, "report", "--stdio", "-i", data2])
    warn = [l for l in r.stderr.splitlines() if "could not be repaired" in l]
    share = re.search(r"([\d.]+)% of the samples", warn[0]) if warn else None
    tap.ok(len(warn) == 1 and share and float(share.group(1)) > 50,
           "a program without frame pointers, fp chains: the warning once, %s%% unrepaired" %
           (share.group(1) if share else "-"))


def check_fp_recording_no_cfi(tap, tmp):
    """Whether a frame keeps the fp chain comes from the CFI where there is
    one, else from the unwind recipes: the library built without unwind
    tables must be repaired the same way."""
    lib = os.path.join(tmp, "nocfi", "libfpl.so")
    exe = os.path.join(tmp, "nocfi", "fp_main")
    os.makedirs(os.path.dirname(lib), exist_ok=True)
    # (-g0: with -g, gcc puts the CFI in .debug_frame, read as well)
    r1 = run(["gcc", "-O2", "-g0", "-fomit-frame-pointer", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables",
              "-fPIC", "-shared", "-o", lib, os.path.join(PERF_FIX, "fp_lib.c")])
    r2 = run(["gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-o", exe, os.path.join(PERF_FIX, "fp_main.c"),
              "-L" + os.path.dirname(lib), "-lfpl", "-Wl,-rpath," + os.path.dirname(lib)])
    fdes = [(int(a, 16), int(b, 16)) for a, b in
            re.findall(r"FDE .*pc=([0-9a-f]+)\.\.([0-9a-f]+)", run(["readelf", "--debug-dump=frames", lib]).stdout)]
    funcs = [int(l.split()[0], 16) for l in run(["nm", lib]).stdout.splitlines() if " T lib_" in l]
    if not tap.ok(r1.returncode == 0 and r2.returncode == 0 and funcs and
                  not any(a <= f < b for f in funcs for a, b in fdes),
                  "fp_main and a libfpl.so whose %d lib_* functions no FDE covers build" % len(funcs)):
        tap.diag(r1.stderr + r2.stderr)
        return
    data = os.path.join(tmp, "nocfi", "fp.data")
    run(["perf", "record", "-q", "-e", "cpu-clock", "--call-graph=fp", "-o", data, exe, "1"])
    r = run([PERF_LOOPS, "report", "--stdio", "-i", data])
    tap.ok(re.search(r"main  \[fp_main\]\n(?:.*\n)*?.*app_leaf \[inferred\]", r.stdout) is not None,
           "a library without CFI: the recipes tell its frameless leaf, app_leaf [inferred] under main")


def check_recipes_where_no_cfi(tap, tmp):
    obj = os.path.join(tmp, "nocfi.o")
    exe = os.path.join(tmp, "nocfi_main")
    src = os.path.join(tmp, "nocfi.c")
    main = os.path.join(tmp, "nocfi_main.c")
    with open(src, "w") as f:
        f.write("volatile long nsink;\n"
                "__attribute__((noinline)) long nocfi_leaf(long x) { long s = 0; for (long i = 0; i < x; i++)"
                " s += (i * 5) ^ (s >> 2); return s; }\n"
                "__attribute__((noinline)) long nocfi_mid(long x) { long a[8]; for (int i = 0; i < 8; i++)"
                " a[i] = nocfi_leaf(x + i) ^ nsink; long s = 0; for (int i = 0; i < 8; i++) s += a[i]; return s; }\n")
    with open(main, "w") as f:
        f.write("#include <stdio.h>\n#include <stdlib.h>\nlong nocfi_mid(long x);\n"
                "__attribute__((noinline)) long work(long n) { long s = 0; for (int r = 0; r < n; r++)"
                " s += nocfi_mid(20000 + r); return s; }\n"
                "int main(int argc, char **argv) { printf(\"%ld\\n\", work(argc > 1 ? atol(argv[1]) : 100) & 0xff);"
                " return 0; }\n")
    r1 = run(["gcc", "-O2", "-g0", "-fomit-frame-pointer", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables",
              "-c", "-o", obj, src])
    r2 = run(["gcc", "-O2", "-g", "-o", exe, main, obj])
    fdes = run(["readelf", "--debug-dump=frames", exe]).stdout
    if not tap.ok(r1.returncode == 0 and r2.returncode == 0 and "nocfi" not in fdes,
                  "nocfi_main: nocfi_mid and nocfi_leaf have no CFI"):
        return
    lo = int(run(["nm", exe]).stdout.split("nocfi_leaf")[0].split("\n")[-1].split()[0], 16)
    tap.ok(not re.search(r"pc=0*%x\.\." % lo, run(["readelf", "--debug-dump=frames", exe]).stdout),
           "no FDE covers nocfi_leaf")
    data = os.path.join(tmp, "nocfi.data")
    run(["perf", "record", "-q", "-e", "cpu-clock", "--call-graph=dwarf", "-o", data, exe, "2000"])
    r = run([PERF_LOOPS, "report", "--stdio", "-i", data])
    m = re.search(r"^\s*([\d.]+)%\s+[\d.]+%\s+\d+\s+main  \[nocfi_main\]", r.stdout, re.M)
    tap.ok(m is not None and float(m.group(1)) >= 99.0,
           "the samples reach main through code without CFI: %s%% (>= 99%%)" % (m.group(1) if m else "-"))
    tap.ok(re.search(r"nocfi_mid \[recipes\]", r.stdout) is not None and
           re.search(r"work \[recipes\]", r.stdout) is not None,
           "the frames the unwind recipes found are marked [recipes]: nocfi_mid, work")
    j = run([PERF_LOOPS, "report", "--format=json", "-q", "-i", data])
    tap.ok('"name":"work"' in j.stdout and '"frame":"recipes"' in j.stdout, 'JSON: "frame": "recipes"')


def check_record_choice(tap, tmp, exe):
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache-record"))
    data = os.path.join(tmp, "rec.data")
    # 2 s, not less: the samples of the dynamic loader at start-up (a page
    # fault in _dl_map_object, whose chain may stop short of _dl_start) are a
    # fixed few, and a loaded machine gives a short run few others
    r = run([PERF_LOOPS, "record", "-o", data, "--", exe, "2"], env=env)
    m = re.search(r"perf loops: --call-graph=dwarf,(\d+): (.*) keep no frame pointers", r.stderr)
    tap.ok(r.returncode == 0 and m and "libfpl.so" in m.group(2) and "fp_main" not in m.group(2),
           "record, fp program with a library without frame pointers: --call-graph=dwarf,%s, the library named" %
           (m.group(1) if m else "-"))
    meas = re.search(r"([\d.]+)% of (\d+) samples unwound to their first frame, reading up to (\d+) bytes", r.stderr)
    tap.ok(meas is not None and float(meas.group(1)) >= 99.0,
           "the recording is unwound once after: %s%% to the first frame, %s bytes of stack" %
           (meas.group(1) if meas else "-", meas.group(3) if meas else "-"))
    r2 = run([PERF_LOOPS, "record", "-o", data, "--", exe, "0.2"], env=env)
    m2 = re.search(r"--call-graph=dwarf,(\d+): .*from the depth the last recording of this program measured",
                   r2.stderr)
    tap.ok(m2 is not None, "the next recording sizes its stack copy from the depth measured (%s bytes)" %
           (m2.group(1) if m2 else "-"))
    fpexe = os.path.join(tmp, "allfp")
    b = run(["gcc", "-O1", "-fno-inline", "-fno-omit-frame-pointer", "-g", "-static", "-nostdlib", "-o", fpexe,
             os.path.join(PERF_FIX, "nolibc_work.c")])
    r3 = run([PERF_LOOPS, "record", "-o", data, "--", fpexe], env=env)
    tap.ok(b.returncode == 0 and "perf loops: --call-graph=fp: the code keeps frame pointers (allfp)" in r3.stderr,
           "record, a program that keeps frame pointers everywhere: --call-graph=fp, said why")
    r4 = run([PERF_LOOPS, "record", "--call-graph=lbr", "-o", data, "--", exe, "0.1"], env=env)
    tap.ok("call chains as given" in r4.stderr and "--call-graph=dwarf" not in r4.stderr,
           "the user's --call-graph wins")


def eh_frame_hdr_after(lib):
    """Whether LIB's .eh_frame_hdr comes after its .eh_frame in the section table."""
    r = run(["readelf", "-SW", lib])
    names = re.findall(r"\]\s+(\.eh_frame(?:_hdr)?)\s", r.stdout)
    return ".eh_frame" in names and ".eh_frame_hdr" in names and \
        names.index(".eh_frame_hdr") > names.index(".eh_frame")


def check_cfi_by_segment(tap, tmp):
    """libdw 0.188 uses .eh_frame_hdr's search table only when that section
    comes before .eh_frame; in the other order (Debian's libLLVM) the unwinder
    reads the CFI through PT_GNU_EH_FRAME.  Same chains either way."""
    clang = shutil.which("clang")
    lib = None
    if clang:
        r = run(["ldd", os.path.realpath(clang)])
        m = re.search(r"(/\S*libLLVM\S*\.so\S*)", r.stdout)
        lib = m.group(1) if m else None
    if not lib or not eh_frame_hdr_after(lib):
        tap.skip("no clang linked to a libLLVM whose .eh_frame_hdr follows its .eh_frame here")
        return
    src = os.path.join(tmp, "cfi_by_segment.c")
    with open(src, "w") as f:
        f.write("static int g(int x) { return x * 3; }\nint f(int n) { int s = 0; for (int i = 0; i < n; i++)"
                " s += g(i); return s; }\n")
    data = os.path.join(tmp, "clang-dwarf.data")
    r = run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "--call-graph=dwarf,16384", "-o", data, "--",
             clang, "-O2", "-c", src, "-o", os.devnull])
    if not tap.ok(r.returncode == 0, "perf record --call-graph=dwarf of clang -O2 -c"):
        tap.diag(r.stderr)
        return
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache-cfi"))
    by_segment = run([PERF_LOOPS, "report", "-v", "--stdio", "-i", data], env=env)
    by_name = run([PERF_LOOPS, "report", "-v", "--stdio", "-i", data], env=dict(env, PERF_LOOPS_CFI_BY_NAME="1"))
    said = "%s: .eh_frame_hdr after .eh_frame: its CFI read through PT_GNU_EH_FRAME" % lib
    tap.ok(by_segment.returncode == 0 and said in by_segment.stderr and said not in by_name.stderr,
           "%s: the CFI read through PT_GNU_EH_FRAME (-v says so)" % os.path.basename(lib))
    frames = by_segment.stdout.count("[" + os.path.basename(lib) + "]")
    tap.ok(frames > 0 and by_segment.stdout == by_name.stdout,
           "the same report as through the section (libdw's linear search): %d rows in %s" %
           (frames, os.path.basename(lib)))


def main():
    C.need_tools("gcc", "perf", "readelf", "nm")
    if not os.access(PERF_LOOPS, os.X_OK):
        C.skip_all("perf-loops not built")
    tmp = C.scratch_dir()
    probe = run(["perf", "record", "-q", "-e", "cpu-clock", "-o", os.path.join(tmp, "probe.data"), "true"])
    if probe.returncode != 0:
        C.skip_all("perf record does not work here: %s" % (probe.stderr.strip().splitlines() or ["?"])[0])
    tap = C.Tap()
    exe = build(tap, tmp)
    if exe:
        check_repair_against_cfi(tap, tmp, exe)
        check_fp_recording(tap, tmp, exe)
        check_record_choice(tap, tmp, exe)
    check_recipes_where_no_cfi(tap, tmp)
    check_cfi_by_segment(tap, tmp)
    tap.done()


if __name__ == "__main__":
    main()
