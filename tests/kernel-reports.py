# tests/kernel-reports.py - `loopscope decode` on the reports the kernel
# prints (WARN, lockdep, KASAN, hung task, panic), made of real code
# addresses of Debian's debug vmlinux and ext4.ko, in 6.1's formats.
#
#   1. every frame of each report is annotated, though the kernel release
#      is named after the first frame (a WARN's and a KASAN report's `CPU:`
#      line follows the frame on their first line, lockdep's `CPU:` line
#      comes after its dependency chains) or not at all (a hung task, with
#      -r): no --vmlinux is given, so vmlinux and ext4.ko are found by the
#      release the log names;
#   2. return addresses are shown at their call: for each of the 300
#      return-address frames of a generated log (`?` frames among them) the
#      inline chain and file:line per level equal llvm-symbolizer's at the
#      address - 1, and the RIP frame's at the address itself;
#      --faddr2line-lines gives llvm-symbolizer's at the address printed;
#   3. the reproducers: F+SIZE/SIZE after a noreturn call is F's, a WARN in
#      a loop is in it, a WARN's CPU line after its RIP;
#   4. KASLR: a panic's `Kernel Offset:` line after the raw addresses maps
#      them, a bare address outside vmlinux gets a hint, and a [<ADDR>]
#      F+OFF pair that disagrees with --kaslr-offset is named; with
#      --kallsyms and no -r, the release is still the log's.
# The answers come from readelf, objdump and llvm-symbolizer, never from
# loopscope.
import os
import random
import re
import struct
import subprocess
import importlib.util

_spec = importlib.util.spec_from_file_location(
    "kernel_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel-common.py"))
K = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(K)
C = K.C

C.need_tools("objdump", "readelf", "llvm-symbolizer")
VMLINUX = K.vmlinux_or_skip()
REL = K.release_of(VMLINUX)
EXT4 = K.module_path(VMLINUX, "fs/ext4/ext4.ko")
REPRO = os.environ.get("LOOPSCOPE_REPRO", "/work/shared/repro/kernel")
tmp = C.scratch_dir()
t = C.Tap()
rng = random.Random(24)

syms = K.symbols(VMLINUX)
sizes = K.kallsyms_sizes(syms, K.section_ends(VMLINUX))
by_name = {}
for s in syms:
    if s.type == "FUNC" and s.ndx == "1":
        by_name.setdefault(s.name, []).append(s)
funcs = sorted((s.addr, s.addr + s.size, s.name) for v in by_name.values() if len(v) == 1 for s in v if s.size)


def owner(a, table=funcs):
    import bisect
    i = bisect.bisect_right(table, (a, float("inf"), "")) - 1
    return table[i] if i >= 0 and table[i][0] <= a < table[i][1] else None


def calls_in(path, lo=None, hi=None):
    """[(address after a call, address of the call)] and [other instruction addresses]."""
    cmd = ["objdump", "-d", "--no-show-raw-insn", "-j", ".text"]
    if lo:
        cmd += ["--start-address=0x%x" % lo, "--stop-address=0x%x" % hi]
    out = subprocess.run(cmd + [path], stdout=subprocess.PIPE, universal_newlines=True, errors="replace").stdout
    rets, others, pending = [], [], None
    for m in re.finditer(r"^\s*([0-9a-f]+):\t(\S+)", out, re.M):
        a = int(m.group(1), 16)
        if pending is not None:
            rets.append((a, pending))
        pending = a if m.group(2).startswith("call") else None
        if pending is None and not m.group(2).startswith(("nop", "int3", "ud2", "xchg")):
            others.append(a)
    return rets, others


def token(a, table=funcs, size_of=None):
    f = owner(a - 1, table)  # %pB: the function of the call
    size = size_of(f) if size_of else sizes[(f[2], f[0])]
    return "%s+0x%x/0x%x" % (f[2], a - f[0], size)


def symbolize(obj, addrs):
    """llvm-symbolizer's inline chain per address: [(func, file, line)], innermost first."""
    out = subprocess.run(["llvm-symbolizer", "--inlining", "--obj=" + obj] + ["0x%x" % a for a in addrs],
                         stdout=subprocess.PIPE, universal_newlines=True).stdout
    res = []
    for blk in out.strip("\n").split("\n\n"):
        ls = blk.splitlines()
        chain = []
        for fn, loc in zip(ls[0::2], ls[1::2]):
            m = re.match(r"^(.*):(\d+):\d+$", loc)
            chain.append((fn, norm(m.group(1)) if m else loc, int(m.group(2)) if m else 0))
        res.append(chain)
    return res


def norm(p):
    p = re.sub(r"^.*?(debian/build/build_[^/]+/|linux-[0-9][^/]*/)", "", p)
    while p.startswith("./"):
        p = p[2:]
    return p.replace("/./", "/")


# ---- decoding and reading the annotations ------------------------------------------------

ANN = re.compile(r"^(\[[ 0-9.]+\])?\s+# ")
FRAME_LINE = re.compile(r"#\s+(?:\(inlined by\) )?(\S+) at (\S+):(\d+)$")


def decode(log, *args):
    r = subprocess.run([C.LOOPSCOPE, "decode"] + list(args), input=log.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def blocks_of(out):
    """{input line index: [annotation lines]} and the input lines."""
    blocks, kept, k = {}, [], -1
    for l in out.split("\n"):
        if ANN.match(l):
            blocks.setdefault(k, []).append(l)
        else:
            k += 1
            kept.append(l)
    return blocks, kept


def chain_of(block):
    return [(m.group(1), norm(m.group(2)), int(m.group(3))) for m in (FRAME_LINE.search(l) for l in block) if m]


def annotated(block):
    c = chain_of(block)
    return bool(c) and all(f != "??" and line > 0 for f, _, line in c[-1:])


# ---- 1. return addresses at their call: a 300-frame log --------------------------------

LO, HI = 0xffffffff81300000, 0xffffffff81400000
rets, others = calls_in(VMLINUX, LO, HI)
rets = [(a, c) for a, c in rets if owner(a - 1) and owner(c) == owner(a - 1)]
cand = rng.sample(rets, min(900, len(rets)))
known = symbolize(VMLINUX, [a - 1 for a, _ in cand])
cand = [x for x, ch in zip(cand, known) if ch and ch[0][0] != "??"]
frames = cand[:300]
t.ok(len(frames) == 300, "300 return addresses of calls in vmlinux with debug info (of %d calls)" % len(rets))
rip = next(a for a in rng.sample(others, 200) if owner(a) and symbolize(VMLINUX, [a])[0][0][0] != "??")

lines = ["[ 100.000000] BUG: unable to handle page fault for address: ffffffffffffff00",
         "[ 100.000001] RIP: 0010:%s+0x%x/0x%x" % (owner(rip)[2], rip - owner(rip)[0], sizes[owner(rip)[2], owner(rip)[0]]),
         "[ 100.000002] CPU: 3 PID: 77 Comm: cc1 Not tainted %s #1 Debian 6.1.192-2" % REL,
         "[ 100.000003] Call Trace:", "[ 100.000004]  <TASK>"]
first = len(lines)
for i, (a, _) in enumerate(frames):
    lines.append("[ 100.%06d]  %s%s" % (5 + i, "? " if i % 5 == 2 else "", token(a)))
lines.append("[ 100.999999]  </TASK>")
log = "\n".join(lines) + "\n"
rc, out, err = decode(log)
t.ok(rc == 0, "decode of the 300-frame log exits 0 (%s)" % err.strip()[-200:])
blocks, kept = blocks_of(out)
t.ok("\n".join(kept) == log, "the decoded log without its annotations is the input")
want = symbolize(VMLINUX, [a - 1 for a, _ in frames])
bad = [(lines[first + i], chain_of(blocks.get(first + i, [])), w) for i, w in enumerate(want)
       if chain_of(blocks.get(first + i, [])) != w]
t.ok(not bad, "%d/300 return-address frames: inline chain and file:line per level are llvm-symbolizer's at "
     "the address - 1" % (300 - len(bad)))
for b in bad[:3]:
    t.diag("%s\n  ours:            %s\n  llvm-symbolizer: %s" % b)
rip_want = symbolize(VMLINUX, [rip])[0]
t.ok(chain_of(blocks.get(1, [])) == rip_want, "the RIP frame is llvm-symbolizer's at the address itself: %s" %
     (rip_want[:1],))
# the old contract: every frame at the address printed
rc, out2, _ = decode(log, "--faddr2line-lines")
blocks2, _ = blocks_of(out2)
want2 = symbolize(VMLINUX, [a for a, _ in frames])


def same_at_return(ours, theirs):
    # just past a function that ends in a call that never returns,
    # llvm-symbolizer names no function ("??") where addr2line and
    # faddr2line (and loopscope) name the one that made the call
    if len(theirs) == 1 and theirs[0][0] == "??" and len(ours) == 1:
        return ours[0][1:] == theirs[0][1:]
    return ours == theirs


same = sum(same_at_return(chain_of(blocks2.get(first + i, [])), w) for i, w in enumerate(want2))
differ = sum(w != v for w, v in zip(want, want2))
t.ok(same == 300, "--faddr2line-lines: %d/300 frames are llvm-symbolizer's at the return address "
     "(%d of them differ from the call's)" % (same, differ))
for i, w in enumerate(want2):
    if not same_at_return(chain_of(blocks2.get(first + i, [])), w):
        t.diag("%s\n  ours:            %s\n  llvm-symbolizer: %s" % (lines[first + i], chain_of(blocks2.get(first + i, [])), w))

# ---- 2. the reports the kernel prints, the release after the first frame ----------------

def vm_frames(n):
    return [token(a) for a, _ in rng.sample(frames, n)]


kret, kothers = calls_in(EXT4) if EXT4 else ([], [])
ksyms = K.symbols(EXT4) if EXT4 else []
ksizes = K.kallsyms_sizes(ksyms, K.section_ends(EXT4, relocatable=True)) if EXT4 else {}
text_idx = None
if EXT4:
    text_idx = re.search(r"\[\s*(\d+)\]\s+\.text\s", subprocess.run(["readelf", "-SW", EXT4], stdout=subprocess.PIPE,
                                                                   universal_newlines=True).stdout).group(1)
kfuncs = sorted((s.addr, s.addr + s.size, s.name) for s in ksyms
                if s.type == "FUNC" and s.ndx == text_idx and s.size and
                sum(1 for x in ksyms if x.name == s.name) == 1)


def ko_frames(n):
    ok = [(a, c) for a, c in kret if owner(a - 1, kfuncs) and owner(c, kfuncs) == owner(a - 1, kfuncs)]
    return [token(a, kfuncs, lambda f: ksizes[(f[2], f[0])]) + " [ext4]" for a, _ in rng.sample(ok, n)]


def warn_site():
    sec = re.search(r"\]\s+__bug_table\s+PROGBITS\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)",
                    subprocess.run(["readelf", "-SW", VMLINUX], stdout=subprocess.PIPE,
                                   universal_newlines=True).stdout)
    addr, off, size = (int(x, 16) for x in sec.groups())
    with open(VMLINUX, "rb") as fp:
        fp.seek(off)
        bt = fp.read(size)
    for at in range(0, size - 11, 12 * 7):
        if struct.unpack_from("<H", bt, at + 10)[0] & 1:
            a = addr + at + struct.unpack_from("<i", bt, at)[0]
            if owner(a):
                return a
    return None


ws = warn_site()
ws_tok = "%s+0x%x/0x%x" % (owner(ws)[2], ws - owner(ws)[0], sizes[(owner(ws)[2], owner(ws)[0])])
cpu = "CPU: 1 PID: 4120 Comm: cp Not tainted %s #1 Debian 6.1.192-2" % REL


def report(kind, with_release=True):
    """The lines of a report of KIND and the indexes of its frame lines."""
    L, F = [], []

    def frame(s, indent=" "):
        F.append(len(L))
        L.append(indent + s)

    def stack(n, k=0):
        L.append("Call Trace:")
        L.append(" <TASK>")
        for i, s in enumerate(vm_frames(n) + ko_frames(k)):
            frame(("? " if i % 4 == 3 else "") + s)
        L.append(" </TASK>")
    if kind == "warn":
        L.append("------------[ cut here ]------------")
        frame("WARNING: CPU: 1 PID: 4120 at kernel/x.c:10 %s" % ws_tok, "")
        L.append("Modules linked in: ext4 crc16 mbcache jbd2")
        frame("RIP: 0010:%s" % ws_tok, "")
        L.append(cpu)
        L.append("RSP: 0018:ffffb0d5c0003e38 EFLAGS: 00010246")
        stack(8, 3)
        L.append("---[ end trace 0000000000000000 ]---")
    elif kind == "kasan":
        L.append("==================================================================")
        frame("BUG: KASAN: slab-use-after-free in %s" % vm_frames(1)[0], "")
        L.append("Read of size 8 at addr ffff888100f0c018 by task cp/4120")
        L.append("")
        L.append(cpu)
        stack(6, 2)
        L.append("")
        L.append("Allocated by task 1:")
        for s in vm_frames(4):
            frame(s)
        L.append("The buggy address belongs to the object at ffff888100f0c000")
        L.append("==================================================================")
    elif kind == "lockdep":
        L.append("======================================================")
        L.append("WARNING: possible circular locking dependency detected")
        if with_release:
            L.append("%s #1 Not tainted" % REL)
        L.append("------------------------------------------------------")
        L.append("cp/4120 is trying to acquire lock:")
        frame("ffff888100f0 (&sb->s_type->i_mutex_key#14){++++}-{3:3}, at: %s" % ko_frames(1)[0], "")
        L.append("the existing dependency chain (in reverse order) is:")
        L.append("-> #1 (jbd2_handle){++++}-{0:0}:")
        for s in vm_frames(5) + ko_frames(2):
            frame(s, "       ")
        L.append("stack backtrace:")
        L.append(cpu)
        stack(6, 1)
    elif kind == "hung":
        L.append("INFO: task jbd2/vda1-8:213 blocked for more than 120 seconds.")
        if with_release:
            L.append("      Not tainted %s #1 Debian 6.1.192-2" % REL)
        L.append('"echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.')
        L.append("task:jbd2/vda1-8     state:D stack:0     pid:213   ppid:2      flags:0x00004000")
        stack(7, 2)
    return L, F


def check_report(kind, args, with_release=True, label=None):
    L, F = report(kind, with_release)
    stamped = ["[ 5%03d.%06d] %s" % (i // 1000, i, l) for i, l in enumerate(L)]
    log = "\n".join(stamped) + "\n"
    rc, out, err = decode(log, *args)
    blocks, kept = blocks_of(out)
    missing = [stamped[i] for i in F if not annotated(blocks.get(i, []))]
    t.ok(rc == 0 and "\n".join(kept) == log and not missing,
         "%s: all %d frames annotated, the log kept byte for byte%s" % (label or kind, len(F),
                                                                        "" if not missing else ": missing %s (%s)" % (
                                                                            missing[:2], err.strip()[-300:])))
    return err


if EXT4:
    for kind in ("warn", "kasan", "lockdep", "hung"):
        check_report(kind, [])
    check_report("lockdep", [], with_release=False, label="lockdep, its `CPU:` line after 8 frames")
    err = check_report("hung", ["-r", REL], with_release=False, label="hung task naming no release, with -r")
    # two reports in one log: the second names no release, the first's holds
    L1, F1 = report("warn")
    L2, F2 = report("hung", with_release=False)
    log = "\n".join(L1 + L2) + "\n"
    rc, out, err = decode(log)
    blocks, _ = blocks_of(out)
    missing = [i for i in F1 + [len(L1) + j for j in F2] if not annotated(blocks.get(i, []))]
    t.ok(rc == 0 and not missing, "a hung task after a WARN: its frames use the release the WARN named "
         "(%d missing)" % len(missing))
    # no release anywhere, no -r: the message says what was tried
    L, F = report("hung", with_release=False)
    rc, out, err = decode("\n".join(L) + "\n")
    t.ok(rc == 0 and "names no kernel release" in err and "-r" in err and "this machine's" in err,
         "a log naming no release says so, and what it tries: %s" % err.strip().splitlines()[:1])
else:
    t.skip("no ext4.ko in the debug package")

# ---- 3. the reproducers ---------------------------------------------------------------

def repro(name, *args):
    p = os.path.join(REPRO, name)
    if not os.path.exists(p):
        return None
    with open(p) as fp:
        log = fp.read()
    return decode(log, *args), log


r = repro("warn-order.txt")
if r:
    (rc, out, err), log = r
    blocks, kept = blocks_of(out)
    idx = [i for i, l in enumerate(log.splitlines()) if re.search(r"\+0x[0-9a-f]+/0x", l)]
    t.ok(all(annotated(blocks.get(i, [])) for i in idx), "warn-order.txt: its %d frames annotated (the release "
         "comes after the first)" % len(idx))
    r2 = repro("warn-order2.txt")
    (rc, out, err), log = r2
    blocks, kept = blocks_of(out)
    idx = [i for i, l in enumerate(log.splitlines()) if re.search(r"\+0x[0-9a-f]+/0x", l)]
    t.ok(all(annotated(blocks.get(i, [])) for i in idx), "warn-order2.txt: its %d frames annotated" % len(idx))
    (rc, out, err), log = repro("stackprot.txt")
    blocks, _ = blocks_of(out)
    mk = [i for i, l in enumerate(log.splitlines()) if "ext4_mknod+0x200/0x200" in l]
    t.ok(all(chain_of(blocks.get(i, []))[-1:] and chain_of(blocks[i])[-1][0] == "ext4_mknod" for i in mk),
         "stackprot.txt: ext4_mknod+0x200/0x200 (after a noreturn call) is ext4_mknod's, %d times" % len(mk))
    (rc, out, err), log = repro("noreturn.txt", "--vmlinux", VMLINUX)
    blocks, _ = blocks_of(out)
    i = next(i for i, l in enumerate(log.splitlines()) if "handle_stack_overflow+" in l)
    c = chain_of(blocks.get(i, []))
    t.ok(c and c[-1][0] == "handle_stack_overflow" and c[-1][2] > 0,
         "noreturn.txt: handle_stack_overflow+0x58/0x60 is at %s" % (c[-1:],))
    (rc, out, err), log = repro("warn-in-loop.txt", "--vmlinux", VMLINUX)
    blocks, _ = blocks_of(out)
    t.ok(all(any("# in loop at" in l for l in blocks.get(i, [])) for i in (0, 1)),
         "warn-in-loop.txt: the WARN in pids_uncharge's loop is in that loop (WARN continues after its ud2)")
else:
    t.skip("no reproducers at %s" % REPRO)

# ---- 4. KASLR ----------------------------------------------------------------------------

OFF = 0x2c200000
a1, a2 = frames[0][0], frames[1][0]
panic = ["[ 9.000001] Call Trace:",
         "[ 9.000002]  [<%x>] %s" % (a1 + OFF, token(a1)),
         "[ 9.000003]  ? 0x%x" % (a2 + OFF),
         "[ 9.000004] Kernel panic - not syncing: Fatal exception",
         "[ 9.000005] Kernel Offset: 0x%x from 0xffffffff81000000 (relocation range: 0xffffffff80000000-0xffffffffbfffffff)" % OFF,
         "[ 9.000006] ---[ end Kernel panic - not syncing: Fatal exception ]---"]
rc, out, err = decode("\n".join(panic) + "\n", "--vmlinux", VMLINUX)
blocks, _ = blocks_of(out)
t.ok(chain_of(blocks.get(2, [])) == want[1], "a bare raw address before the panic's `Kernel Offset:` line is "
     "mapped with it, at its call: %s" % chain_of(blocks.get(2, []))[:1])
rc, out, err = decode("[ 9.000003]  ? 0x%x\n" % (a2 + OFF), "--vmlinux", VMLINUX)
t.ok("outside vmlinux's code" in out and "--kaslr-offset" in out,
     "a bare address outside vmlinux, no offset known: a hint names --kaslr-offset")
rc, out, err = decode("\n".join(panic[:3]) + "\n", "--vmlinux", VMLINUX, "--kaslr-offset", "0x%x" % (OFF + 0x1000))
t.ok("says the KASLR offset is 0x%x, not 0x%x" % (OFF, OFF + 0x1000) in out and "disagree" in err,
     "a [<ADDR>] F+OFF pair that disagrees with --kaslr-offset is named")
rc, out, err = decode("\n".join(panic[:3]) + "\n", "--vmlinux", VMLINUX)
blocks, _ = blocks_of(out)
t.ok(chain_of(blocks.get(2, [])) == want[1], "no offset given: the log's [<ADDR>] F+OFF pair gives it")
# --kallsyms and no -r: the offset from kallsyms' _text, vmlinux from the release the log
# names (not this machine's), though the report names it after its frames
text = next(s.addr for s in syms if s.name == "_text")
with open(os.path.join(tmp, "kallsyms"), "w") as fp:
    fp.write("%016x T _text\n%016x T _stext\n" % (text + OFF, text + OFF))
rc, out, err = decode("\n".join(panic[:1] + panic[2:3] + ["[ 9.000004] " + cpu]) + "\n",
                      "--kallsyms", os.path.join(tmp, "kallsyms"))
blocks, _ = blocks_of(out)
t.ok(chain_of(blocks.get(1, [])) == want[1], "--kallsyms, no -r: the release the log names after the frame, "
     "the offset kallsyms gives: %s (%s)" % (chain_of(blocks.get(1, []))[:1], err.strip()[-200:]))

# ---- 5. file names without the build directory, C and assembly alike --------------------
# gcc names a C file relative to the build (debian/build/build_amd64_none_amd64/...), the
# assembler with the absolute build directory (/build/reproducible-path/linux-6.1.192/...):
# both are shown from the top of the tree, as norm() cuts llvm-symbolizer's paths.
def raw_files(text):
    return [m.group(2) for m in (FRAME_LINE.search(l) for l in text.split("\n") if ANN.match(l)) if m] + \
        re.findall(r"# in loop at (\S+):\d+", text)


asm = [f for f in funcs if f[1] - f[0] > 1]
starts = [f[0] + 1 for f in asm]
raw = subprocess.run(["llvm-symbolizer", "--obj=" + VMLINUX] + ["0x%x" % a for a in starts],
                     stdout=subprocess.PIPE, universal_newlines=True).stdout.strip("\n").split("\n\n")
asm = [f for f, r in zip(asm, raw) if re.search(r"\.S:\d+:\d+$", r)]
asm = rng.sample(asm, min(20, len(asm)))
alog = "[ 1.000000] CPU: 0 PID: 1 Comm: sh Not tainted %s #1\n" % REL + "".join(
    "[ 1.%06d]  %s+0x1/0x%x\n" % (i + 1, n, sizes[n, lo]) for i, (lo, hi, n) in enumerate(asm))
rc, aout, err = decode(alog)
shown = raw_files(aout)
wantf = [norm(re.sub(r":\d+:\d+$", "", r.splitlines()[1])) for r in
         subprocess.run(["llvm-symbolizer", "--obj=" + VMLINUX] + ["0x%x" % lo for lo, _, _ in asm],
                        stdout=subprocess.PIPE, universal_newlines=True).stdout.strip("\n").split("\n\n")]
t.ok(len(asm) >= 10 and shown == wantf,
     "%d assembly frames: each file shown from the top of the tree, as llvm-symbolizer's without its "
     "build directory (%s)" % (len(asm), shown[:2]))
if shown != wantf:
    t.diag("ours: %s\nwant: %s" % (shown[:5], wantf[:5]))
cfiles = raw_files(out2)
t.ok(cfiles and all(f == norm(f) and not f.startswith("/") for f in cfiles),
     "the 300-frame log: %d file names, none with a build directory" % len(cfiles))
t.done()
