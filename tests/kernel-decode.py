# tests/kernel-decode.py - `loopscope decode` on oops logs of Debian's debug
# kernel (vmlinux and ext4.ko), and SYMBOL+OFF/SIZE as scripts/faddr2line
# resolves it.
#
# The log is made of real call sites: return addresses of calls in known loop
# functions and in a sample of all functions (objdump finds the calls), shown
# as FUNC+0xOFF/0xSIZE with faddr2line's sizes, in <IRQ>/<TASK> sections, with
# `? ` frames, [ext4] and [ext4 BUILDID] frames, a RIP line, a Code: line
# with the real bytes, timestamps.  Checked:
#   1. the decoded log, annotation lines left out, is the input byte for byte;
#   2. every frame gets annotated; with --faddr2line-lines (every frame at
#      the address printed, not a return address's call: the comparison
#      with the kernel's scripts; tests/kernel-reports.py checks the call
#      lines) each annotation's chain (function, file, line per inline
#      level) is faddr2line's on the same FUNC+OFF/SIZE (addr2line as
#      faddr2line runs it, on every frame; faddr2line itself on a fixed
#      sample: it costs 3 s a frame), and its function chain
#      llvm-symbolizer's on the address;
#   3. --decodecode marks the trapping instruction and the loop it is in;
#   4. lookup of FUNC+OFF/SIZE for static functions with several copies:
#      each copy gives faddr2line's line, /SIZE choosing the copy, with and
#      without the cache (faddr2line itself on the copies of one name); a
#      wrong size and an offset past the size are errors that say so.
import os
import random
import re
import subprocess
import sys
import importlib.util

_spec = importlib.util.spec_from_file_location(
    "kernel_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel-common.py"))
K = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(K)
C = K.C

C.need_tools("objdump", "readelf", "llvm-symbolizer")
VMLINUX = K.vmlinux_or_skip()
EXT4 = K.module_path(VMLINUX, "fs/ext4/ext4.ko")
FADDR2LINE = K.faddr2line()
tmp = C.scratch_dir()
t = C.Tap()

LOOP_FUNCS = ["copy_page_range", "unmap_page_range", "tcp_write_xmit", "ktime_get", "filemap_read",
              "__x64_sys_exit_group", "do_syscall_64"]


def call_sites(path, wanted, relocatable=False):
    """{function: [return addresses of its calls]} for the functions in WANTED."""
    out = subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", path], stdout=subprocess.PIPE,
                           universal_newlines=True, errors="replace")
    sites, cur, pending = {}, None, None
    head = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
    insn = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)")
    for line in out.stdout:
        m = head.match(line)
        if m:
            cur = m.group(2) if m.group(2) in wanted else None
            pending = None
            continue
        if cur is None:
            continue
        m = insn.match(line)
        if not m:
            continue
        a = int(m.group(1), 16)
        if pending is not None:
            sites.setdefault(cur, []).append(a)
            pending = None
        if m.group(2).startswith("call"):
            pending = a
    out.wait()
    return sites


syms = K.symbols(VMLINUX)
sizes = K.kallsyms_sizes(syms, K.section_ends(VMLINUX))
funcs = {}
for s in syms:
    if s.type == "FUNC" and s.ndx == "1":  # .text
        funcs.setdefault(s.name, []).append(s)
unique = sorted(n for n, v in funcs.items() if len(v) == 1)
rng = random.Random(9)
sample = set(LOOP_FUNCS) | set(rng.sample(unique, 16))
sites = call_sites(VMLINUX, sample)


def token(name, addr_of_sym, addr, size):
    return "%s+0x%x/0x%x" % (name, addr - addr_of_sym, size)


vm_frames = []  # (token, address)
for name in sorted(sites):
    if name not in funcs or len(funcs[name]) != 1:
        continue
    s = funcs[name][0]
    size = sizes[(name, s.addr)]
    for a in sites[name][1:2] or sites[name][:1]:
        if a - s.addr <= size:
            vm_frames.append((token(name, s.addr, a, size), a))
t.ok(len(vm_frames) >= 15, "%d vmlinux call sites to build the log from" % len(vm_frames))

ko_frames = []
build_id = None
if EXT4:
    ksyms = K.symbols(EXT4)
    ksizes = K.kallsyms_sizes(ksyms, K.section_ends(EXT4, relocatable=True))
    text_idx = re.search(r"\[\s*(\d+)\]\s+\.text\s", subprocess.run(["readelf", "-SW", EXT4], stdout=subprocess.PIPE,
                                                                   universal_newlines=True).stdout).group(1)
    kfuncs = {}
    for s in ksyms:
        if s.type == "FUNC" and s.ndx == text_idx:
            kfuncs.setdefault(s.name, []).append(s)
    want = {"ext4_readdir", "ext4_map_blocks", "ext4_file_write_iter", "ext4_da_write_begin", "ext4_lookup",
            "ext4_fill_super", "ext4_mb_regular_allocator", "ext4_find_entry"}
    ksites = call_sites(EXT4, want)
    for name in sorted(ksites):
        if name in kfuncs and len(kfuncs[name]) == 1:
            s = kfuncs[name][0]
            size = ksizes[(name, s.addr)]
            for a in ksites[name][1:2]:
                ko_frames.append((token(name, s.addr, a, size), a))
    m = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(["readelf", "-n", EXT4], stdout=subprocess.PIPE,
                                                          universal_newlines=True).stdout)
    build_id = m.group(1) if m else None

# ---- the log -------------------------------------------------------------------

release = K.release_of(VMLINUX)
rip_tok = next(tok for tok, a in vm_frames if tok.startswith("ktime_get+")) if any(
    tok.startswith("ktime_get+") for tok, _ in vm_frames) else vm_frames[0][0]
# the RIP: inside ktime_get's seqcount retry loop (its first load of tk_core)
kt = funcs["ktime_get"][0]
rip_addr = kt.addr + 0x1a
rip_tok = token("ktime_get", kt.addr, rip_addr, sizes[("ktime_get", kt.addr)])


def text_bytes(addr, n):
    out = subprocess.run(["readelf", "-SW", VMLINUX], stdout=subprocess.PIPE, universal_newlines=True).stdout
    m = re.search(r"\]\s+\.text\s+PROGBITS\s+([0-9a-f]+)\s+([0-9a-f]+)", out)
    base, off = int(m.group(1), 16), int(m.group(2), 16)
    with open(VMLINUX, "rb") as f:
        f.seek(off + addr - base)
        return f.read(n)


code = text_bytes(rip_addr - 21, 42)
code_line = "Code: " + " ".join(("<%02x>" if i == 21 else "%02x") % b for i, b in enumerate(code))

ts = [0.0]


def stamp():
    ts[0] += 0.000011
    return "[%12.6f]" % (4242.0 + ts[0])


lines = [
    "%s BUG: kernel NULL pointer dereference, address: 0000000000000008" % stamp(),
    "%s #PF: supervisor read access in kernel mode" % stamp(),
    "%s CPU: 1 PID: 4242 Comm: cp Tainted: G        W          %s #1  Debian" % (stamp(), release),
    "%s RIP: 0010:%s" % (stamp(), rip_tok),
    "%s %s" % (stamp(), code_line),
    "%s RSP: 0018:ffffb0d5c0003e38 EFLAGS: 00010246" % stamp(),
    "%s Call Trace:" % stamp(),
    "%s  <IRQ>" % stamp(),
]
frames = []  # (line index, token, module, address)
for i, (tok, a) in enumerate(vm_frames[:len(vm_frames) // 2]):
    q = "? " if i % 3 == 1 else ""
    frames.append((len(lines), tok, "", a))
    lines.append("%s  %s%s" % (stamp(), q, tok))
lines.append("%s  </IRQ>" % stamp())
lines.append("%s  <TASK>" % stamp())
for i, (tok, a) in enumerate(ko_frames):
    tag = "[ext4 %s]" % build_id if (i % 2 and build_id) else "[ext4]"
    frames.append((len(lines), tok, "ext4", a))
    lines.append("%s  %s%s %s" % (stamp(), "? " if i % 4 == 3 else "", tok, tag))
for tok, a in vm_frames[len(vm_frames) // 2:]:
    frames.append((len(lines), tok, "", a))
    lines.append("%s  %s" % (stamp(), tok))
lines.append("%s  </TASK>" % stamp())
lines.append("%s Modules linked in: ext4 crc16 mbcache jbd2" % stamp())
lines.append("%s ---[ end trace 0000000000000000 ]---" % stamp())
log = ("\n".join(lines) + "\n").encode()

moddir = os.path.dirname(EXT4) if EXT4 else None
cmd = [C.LOOPSCOPE, "decode", "--vmlinux", VMLINUX, "--decodecode", "--faddr2line-lines"] + (["--modules", moddir] if moddir else [])
r = subprocess.run(cmd, input=log, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
t.ok(r.returncode == 0, "decode exits 0 (%s)" % r.stderr.decode(errors="replace").strip()[-200:])
out = r.stdout.split(b"\n")
if os.environ.get("LS_TEST_KEEP"):
    open(os.environ["LS_TEST_KEEP"] + ".in", "wb").write(log)
    open(os.environ["LS_TEST_KEEP"] + ".out", "wb").write(r.stdout)
ANN = re.compile(rb"^\[[ 0-9.]+\]\s+# ")
kept = [l for l in out if not ANN.match(l)]
t.ok(b"\n".join(kept) == log, "the decoded log without its annotations is the input, byte for byte (%d lines)" % len(lines))

# annotation blocks per input line
blocks, k = {}, -1
for l in out:
    if ANN.match(l):
        blocks.setdefault(k, []).append(l.decode(errors="replace"))
    else:
        k += 1
missing = [tok for (i, tok, mod, a) in frames if i not in blocks]
t.ok(not missing, "every frame line is annotated (%d frames; missing: %s)" % (len(frames), missing[:3]))
rip_block = blocks.get(3, [])
t.ok(any("in loop at kernel/time/timekeeping.c" in l for l in rip_block),
     "the RIP frame in ktime_get is in its seqcount loop: %s" % (rip_block[-1:] or ["nothing"])[0].strip())
code_block = blocks.get(4, [])
trap = [l for l in code_block if "<-- trapping instruction" in l]
t.ok(trap and ("%x:" % rip_addr) in trap[0] and "[loop at kernel/time/timekeeping.c" in trap[0],
     "--decodecode marks the trapping instruction at 0x%x and its loop" % rip_addr)

FRAME_LINE = re.compile(r"#\s+(?:\(inlined by\) )?(\S+) at (\S+):(\d+)$")


def our_chain(block):
    return [(m.group(1), m.group(2), int(m.group(3))) for m in (FRAME_LINE.search(l) for l in block) if m]


def strip_prefix(f):
    return re.sub(r"^.*?debian/build/build_[^/]+/", "", f)


# ---- against faddr2line and llvm-symbolizer -------------------------------------------
# Every frame's chain is checked against faddr2line's answer made as faddr2line makes
# it: addr2line with faddr2line's options on the symbol's value plus the offset, one
# run per object (K.addr2line_chains).  faddr2line itself costs 3 s a frame on vmlinux
# (it sorts the whole symbol table and reads the DWARF again for each), so it runs on a
# fixed sample, every FADDR2LINE_EVERY-th frame: its chain must be that same chain and
# ours, which checks what the rest assumes (FUNC+OFF/SIZE is the symbol's value plus
# OFF, the sizes in the log are the ones faddr2line accepts).
FADDR2LINE_EVERY = 5


def norm(chain):
    return [(K.plain(f), strip_prefix(p), l) for (f, p, l) in chain]


def compare(objfile, group, what, section=None):
    want = K.addr2line_chains(objfile, [a for (_, _, _, a) in group], section)
    good, bad = 0, []
    for (i, tok, mod, a) in group:
        theirs = norm(want.get(a, []))
        ours = norm(our_chain(blocks.get(i, [])))
        if theirs and theirs == ours:
            good += 1
        else:
            bad.append((tok, ours, theirs))
    t.ok(group and not bad, "%s: %d/%d frames' chains (function, file:line per level) are faddr2line's "
         "(addr2line as faddr2line runs it)" % (what, good, len(group)))
    for b in bad[:3]:
        t.diag("%s\n  ours:        %s\n  faddr2line:  %s" % b)
    if not FADDR2LINE:
        t.skip("%s: faddr2line itself: not available (linux-source cannot be installed)" % what)
        return
    sample = group[::FADDR2LINE_EVERY]
    fa = K.parse_faddr2line(subprocess.run([FADDR2LINE, objfile] + [tok for (_, tok, _, _) in sample],
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           universal_newlines=True).stdout)
    bad = []
    for (i, tok, mod, a) in sample:
        theirs = norm((fa.get(tok) or [[]])[0])
        if not theirs or theirs != norm(want.get(a, [])) or theirs != norm(our_chain(blocks.get(i, []))):
            bad.append((tok, norm(want.get(a, [])), theirs))
    t.ok(sample and not bad, "%s: faddr2line itself on %d of the %d frames (%s): the same chains" %
         (what, len(sample), len(group), ", ".join(tok for (_, tok, _, _) in sample)))
    for b in bad[:3]:
        t.diag("%s\n  addr2line:   %s\n  faddr2line:  %s" % b)


vm_group = [f for f in frames if f[2] == ""]
ko_group = [f for f in frames if f[2] == "ext4"]
compare(VMLINUX, vm_group, "vmlinux")
if EXT4:
    compare(EXT4, ko_group, "ext4.ko", ".text")
else:
    t.skip("no ext4.ko in the debug package")

# the inline chain (function names) against llvm-symbolizer on the address
sym = subprocess.run(["llvm-symbolizer", "--inlining", "--obj=" + VMLINUX] + ["0x%x" % a for (_, _, _, a) in vm_group],
                     stdout=subprocess.PIPE, universal_newlines=True).stdout.split("\n\n")
good, bad = 0, []
for (i, tok, mod, a), blk in zip(vm_group, sym):
    names = [K.plain(l) for l in blk.strip().splitlines()[0::2]]
    ours = [K.plain(f) for (f, _, _) in our_chain(blocks.get(i, []))]
    # past a procedure's DWARF end (after a call that never returns)
    # llvm-symbolizer names no function; addr2line, and we, the procedure
    if names == ours or (names == ["??"] and len(ours) == 1):
        good += 1
    else:
        bad.append((tok, ours, names))
t.ok(len(bad) == 0, "vmlinux: %d/%d frames' inline chains are llvm-symbolizer's" % (good, len(vm_group)))
for b in bad[:3]:
    t.diag("%s\n  ours:            %s\n  llvm-symbolizer: %s" % b)

# ---- SYMBOL+OFF/SIZE with duplicated names ------------------------------------------

dups = sorted(n for n, v in funcs.items() if len(v) >= 2 and len({sizes[(n, s.addr)] for s in v}) == len(v))
dups = rng.sample(dups, min(6, len(dups)))
t.ok(len(dups) >= 6, "%d static functions with several copies of different sizes" % len(dups))
toks, tok_addr = [], {}
for n in dups:
    for s in funcs[n]:
        tok = "%s+0x%x/0x%x" % (n, min(4, sizes[(n, s.addr)]), sizes[(n, s.addr)])
        toks.append(tok)
        tok_addr[tok] = s.addr + min(4, sizes[(n, s.addr)])
# The answer for every copy: addr2line as faddr2line runs it, at that copy's address.
dup_want = K.addr2line_chains(VMLINUX, sorted(tok_addr.values()))
for cache in ("--no-cache", None):
    args = [C.LOOPSCOPE, "lookup", "--json"] + ([cache] if cache else []) + [VMLINUX] + toks
    got = [__import__("json").loads(l) for l in subprocess.run(args, stdout=subprocess.PIPE,
                                                                universal_newlines=True).stdout.splitlines()]
    label = "without the cache" if cache else "with the cache"
    t.ok(len(got) == len(toks), "%s: one answer per FUNC+OFF/SIZE of a duplicated name (%d)" % (label, len(toks)))
    agree = 0
    for tok, g in zip(toks, got):
        st = [c for c in g.get("chain", []) if c["kind"] == "stmt"]
        theirs = dup_want.get(tok_addr[tok])
        if st and theirs and (strip_prefix(st[0]["file"]), st[0]["line"]) == (strip_prefix(theirs[0][1]), theirs[0][2]):
            agree += 1
    t.ok(agree == len(toks), "%s: %d/%d copies resolve to faddr2line's file:line (/SIZE picks the copy)" %
         (label, agree, len(toks)))
# faddr2line itself (15 s a copy here) on the copies of one name (the one with the
# fewest): /SIZE picks the copy whose address the answers above assumed.
if FADDR2LINE:
    n1 = min(dups, key=lambda n: (len(funcs[n]), n))
    one = [tok for tok in toks if tok.startswith(n1 + "+")]
    fa = K.parse_faddr2line(subprocess.run([FADDR2LINE, VMLINUX] + one, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, universal_newlines=True).stdout)
    same = [tok for tok in one if fa.get(tok) and len(fa[tok]) == 1 and
            norm(fa[tok][0]) == norm(dup_want.get(tok_addr[tok], []))]
    t.ok(len(same) == len(one), "faddr2line itself on the %d copies of %s: /SIZE picks the copy (%d/%d)" %
         (len(one), n1, len(same), len(one)))
else:
    t.skip("faddr2line itself on the copies of a duplicated name: not available")
n0 = dups[0]
s0 = funcs[n0][0]
size0 = sizes[(n0, s0.addr)]
r = C.run([C.LOOPSCOPE, "lookup", VMLINUX, "%s+0x%x/0x%x" % (n0, size0 + 0x10, size0), "%s+0x4/0x%x" % (n0, 0xfffff0)])
t.ok("past the end of %s (size 0x%x)" % (n0, size0) in r.stdout, "an offset past the size is an error that says so")
t.ok("no %s of size 0xfffff0" % n0 in r.stdout, "a size no copy has is an error that lists the sizes")
r = C.run([C.LOOPSCOPE, "lookup", VMLINUX, "%s+0x4" % n0])
t.ok(r.stdout.count("\n0x") + r.stdout.startswith("0x") == len(funcs[n0]),
     "without /SIZE every copy of %s is shown, as faddr2line does (%d)" % (n0, len(funcs[n0])))
t.done()
