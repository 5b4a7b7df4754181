# tests/perf-kernel.py - perf loops on kernel samples: Debian's debug
# vmlinux and ext4.ko.
#
# The running kernel is not Debian's, so a real recording's kernel frames
# cannot be looked up in its debug vmlinux: the recording is written here
# (tests/fixtures/perf/kernel_perfdata.py, perf's pipe format) with the
# samples such a recording would hold: kernel stacks at KASLR-shifted
# addresses with the kernel's build-id and release, and an ext4 frame at the
# module's load address.  Checked against llvm-symbolizer (vmlinux) and
# addr2line -j .text (ext4.ko): the report's frames are the procedures with
# their inlined calls, the loop ktime_get's sample is in, the DSOs printed
# [kernel.kallsyms] and [ext4].  And a real `perf record` of a syscall-heavy
# program on the running kernel: its kernel frames are named (kallsyms) under
# [kernel.kallsyms].
import json
import os
import re
import subprocess
import importlib.util

_spec = importlib.util.spec_from_file_location(
    "kernel_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel-common.py"))
K = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(K)
C = K.C

C.need_tools("llvm-symbolizer", "addr2line", "readelf", "objdump")
PERF_LOOPS = os.environ.get("PERF_LOOPS") or os.path.join(C.TOP_BUILDDIR, "perf-loops")
if not os.access(PERF_LOOPS, os.X_OK):
    C.skip_all("perf-loops not built")
VMLINUX = K.vmlinux_or_skip()
KO = K.module_path(VMLINUX, "fs/ext4/ext4.ko")
tmp = C.scratch_dir()
t = C.Tap()


def build_id(path):
    m = re.search(r"Build ID: ([0-9a-f]+)", C.run(["readelf", "-n", path]).stdout)
    return m.group(1) if m else ""


syms = {}
for s in K.symbols(VMLINUX):
    if s.type in ("FUNC", "NOTYPE") and s.ndx == "1":
        syms.setdefault(s.name, s.addr)
text = syms["_text"]
kt = syms["ktime_get"] + 0x1a


def first_call_return(path, func, start, extra=()):
    out = C.run(["objdump", "-d", "--no-show-raw-insn", "--start-address=0x%x" % start,
                 "--stop-address=0x%x" % (start + 0x400)] + list(extra) + [path]).stdout
    prev = None
    for line in out.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)", line)
        if not m:
            continue
        if prev:
            return int(m.group(1), 16)
        prev = m.group(2).startswith("call") and int(m.group(1), 16) > start + 8
    return None


caller = first_call_return(VMLINUX, "do_syscall_64", syms["do_syscall_64"])
stacks = ["k:0x%x,k:0x%x" % (kt, caller)] * 30
ko_off = None
if KO:
    ks = {s.name: s.addr for s in K.symbols(KO) if s.type == "FUNC"}
    ko_off = ks["ext4_readdir"] + 0x4de
    iterate = first_call_return(VMLINUX, "iterate_dir", syms["iterate_dir"])
    stacks += ["m:0x%x,k:0x%x" % (ko_off, iterate)] * 20
KASLR, MODBASE = 0x1c600000, 0xffffffffc0a00000
data = os.path.join(tmp, "kernel.data")
gen = os.path.join(C.FIXTURES, "perf", "kernel_perfdata.py")
r = C.run(["python3", gen, data, K.release_of(VMLINUX), hex(KASLR), build_id(VMLINUX),
           "/lib/modules/%s/kernel/fs/ext4/ext4.ko" % K.release_of(VMLINUX), hex(MODBASE),
           build_id(KO) if KO else "00", "cat", hex(text)] + stacks)
t.ok(r.returncode == 0, "a perf.data of kernel samples of %s (%d samples)" % (K.release_of(VMLINUX), len(stacks)))

r = C.run([PERF_LOOPS, "report", "-i", data, "--format=json"])
t.ok(r.returncode == 0, "perf loops report --format=json (%s)" % r.stderr.strip()[-200:])
tree = json.loads(r.stdout) if r.returncode == 0 else {"tree": {}}


def paths(n, pre=()):
    here = pre + ((n.get("kind"), n.get("name"), n.get("file"), n.get("line"), n.get("dso")),)
    yield here, n
    for c in n.get("children", []):
        yield from paths(c, here)


def leaf_chain(total):
    """The proc/inline names down to the deepest node with TOTAL samples in a proc's subtree."""
    best = None
    for p, n in paths(tree["tree"]):
        if n.get("total", [0])[0] == total and n.get("kind") in ("stmt",):
            best = p
    return best


def symbolizer_chain(addr):
    out = C.run(["llvm-symbolizer", "--inlining", "--obj=" + VMLINUX, "0x%x" % addr]).stdout.strip().splitlines()
    return [K.plain(l) for l in out[0::2]][::-1]


p = leaf_chain(30)
names = [x[1] for x in p if x[0] in ("proc", "inline")] if p else []
want = symbolizer_chain(kt)
t.ok(p is not None and names[-len(want):] == want,
     "the ktime_get samples: %s (llvm-symbolizer: %s)" % (" > ".join(n or "?" for n in names), " > ".join(want)))
t.ok(p is not None and any(x[0] == "loop" and (x[2] or "").endswith("timekeeping.c") for x in p),
     "and they are in ktime_get's seqcount loop (%s)" % [("%s:%s" % (x[2], x[3])) for x in (p or []) if x[0] == "loop"])
procs = [x for x in (p or []) if x[0] == "proc"]
t.ok(procs and procs[0][1] == "do_syscall_64", "their caller do_syscall_64 comes first")
if KO:
    p = leaf_chain(20)
    names = [x[1] for x in p if x[0] in ("proc", "inline")] if p else []
    out = C.run(["addr2line", "-f", "-i", "-j", ".text", "-e", KO, "0x%x" % ko_off]).stdout.strip().splitlines()
    want = [K.plain(l) for l in out[0::2]][::-1]
    t.ok(p is not None and names[-len(want):] == want,
         "the ext4 samples, through ext4.ko: %s (addr2line: %s)" % (" > ".join(n or "?" for n in names), " > ".join(want)))
else:
    t.skip("no ext4.ko in the debug package")
r = C.run([PERF_LOOPS, "report", "-i", data, "--stdio"])
t.ok("[kernel.kallsyms]" in r.stdout and "[[kernel.kallsyms]]" not in r.stdout,
     "the tree view shows [kernel.kallsyms], bracketed once")
if KO:
    t.ok(re.search(r"ext4_readdir\s+\[ext4\]", r.stdout) is not None, "and ext4_readdir in [ext4]")

# -k names the kernel image when the release would not find it
r = C.run([PERF_LOOPS, "report", "-i", data, "--format=json", "-k", VMLINUX])
t.ok(r.returncode == 0 and '"ktime_get"' in r.stdout, "-k VMLINUX")

# a real recording on the running kernel: kernel frames by kallsyms
rec = os.path.join(tmp, "real.data")
r = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-g", "-o", rec, "--", "dd", "if=/dev/zero",
                    "of=/dev/null", "bs=1", "count=300000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   universal_newlines=True)
if r.returncode != 0:
    t.skip("perf record does not work here: %s" % r.stderr.strip()[:100])
else:
    r = C.run([PERF_LOOPS, "report", "-i", rec, "--stdio", "--percent-limit=5"])
    t.ok(re.search(r"\S+\s+\[kernel\.kallsyms\]", r.stdout) is not None and "[[kernel" not in r.stdout,
         "a real recording of dd: kernel frames named, in [kernel.kallsyms]")
t.done()
