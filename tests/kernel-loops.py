# tests/kernel-loops.py - loops of Debian's debug vmlinux against an
# independent loop finder written here, over objdump's control flow.
#
# The oracle: every FUNC symbol of .text is a procedure over [value,
# value+size); objdump's instructions make its blocks; edges are fall-through
# (not after jmp, ret, ud2, int3), jumps and conditional jumps into the
# procedure, and the kernel's conventions are modelled as the kernel means
# them:
#   - a call or jump to __x86_indirect_thunk_REG is an indirect call/jump,
#     a jump to __x86_return_thunk a return (retpolines, return thunks);
#   - a jump into .altinstr_aux (static_cpu_has()) goes on in that fragment,
#     whose jumps come back into the procedure;
#   - hlt goes on (idle loops); a call returns unless its target is one of
#     objtool's noreturn functions or a function with no return at all
#     (no ret, return thunk, indirect or outside jump in its body);
#   - a jump label's site (a nop or jmp listed in __jump_table, which the
#     kernel patches at run time) branches to its target or goes on, and a
#     WARN's ud2 (BUGFLAG_WARNING in __bug_table) goes on: both tables are
#     read here from the file's bytes, as the kernel reads them;
# then dominators (Cooper, Harvey and Kennedy's iterative algorithm) and
# natural loops: a back edge u->h with h dominating u makes h a loop header.
# Every such header must be a loop header (or an entry of an irreducible
# loop) of `loopscope struct`: >= 99.9% of them, and all of
# those of a list of known loop functions (spinlock waits behind static
# keys among them).
import os
import re
import struct
import subprocess
import importlib.util

_spec = importlib.util.spec_from_file_location(
    "kernel_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel-common.py"))
K = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(K)
C = K.C

C.need_tools("objdump", "readelf")
VMLINUX = K.vmlinux_or_skip()
tmp = C.scratch_dir()
t = C.Tap()

KNOWN = ["copy_page_range", "unmap_page_range", "tcp_write_xmit", "ktime_get", "filemap_read",
         "__schedule", "do_select", "do_sys_poll", "tcp_sendmsg_locked", "get_page_from_freelist",
         "native_queued_spin_lock_slowpath", "select_task_rq_fair", "shrink_lruvec", "___slab_alloc"]
NORETURN = {"__stack_chk_fail", "panic", "do_exit", "do_task_dead", "kthread_exit", "make_task_dead",
            "__module_put_and_kthread_exit", "kthread_complete_and_exit", "rewind_stack_and_make_dead",
            "rewind_stack_do_exit", "do_group_exit", "stop_this_cpu", "cpu_startup_entry",
            "__ubsan_handle_builtin_unreachable", "machine_real_restart", "usercopy_abort", "fortify_panic",
            "snp_abort", "sev_es_terminate", "hlt_play_dead", "__invalid_creds", "cpu_bringup_and_idle"}

syms = K.symbols(VMLINUX)
names = {}
funcs = []  # (start, end, name)
seen = set()
for s in syms:
    if s.ndx == "1" and s.type in ("FUNC", "NOTYPE"):
        names.setdefault(s.addr, s.name)
    if s.type == "FUNC" and s.ndx == "1" and s.size > 0 and s.addr not in seen:
        seen.add(s.addr)
        funcs.append((s.addr, s.addr + s.size, s.name))
funcs.sort()
thunk_ind = {s.addr for s in syms if s.name.startswith("__x86_indirect_thunk_")}
thunk_ret = {s.addr for s in syms if s.name in ("__x86_return_thunk", "srso_return_thunk", "srso_alias_return_thunk")}
noret_addr = {s.addr for s in syms if s.name in NORETURN}

# ---- the kernel's tables: jump labels and WARN sites -----------------------------------

SECTIONS = []  # (addr, size, file offset) of every section with bytes
for line in subprocess.run(["readelf", "-SW", VMLINUX], stdout=subprocess.PIPE, universal_newlines=True).stdout.splitlines():
    m = re.match(r"^\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
    if m and m.group(2) != "NOBITS" and int(m.group(3), 16):
        SECTIONS.append((int(m.group(3), 16), int(m.group(5), 16), int(m.group(4), 16), m.group(1)))


def read_at(addr, n):
    for a, size, off, _ in SECTIONS:
        if a <= addr and addr + n <= a + size:
            with open(VMLINUX, "rb") as fp:
                fp.seek(off + addr - a)
                return fp.read(n)
    return None


def s32(b, at):
    return struct.unpack_from("<i", b, at)[0]


sym_at = {s.name: s.addr for s in syms if s.name in ("__start___jump_table", "__stop___jump_table")}
jl_target = {}  # site -> target
jt = read_at(sym_at["__start___jump_table"], sym_at["__stop___jump_table"] - sym_at["__start___jump_table"])
for at in range(0, len(jt or b""), 16):
    base = sym_at["__start___jump_table"] + at
    jl_target[base + s32(jt, at)] = base + 4 + s32(jt, at + 4)
bug = next(((a, size) for a, size, off, name in SECTIONS if name == "__bug_table"), None)
warn_sites = set()
bt = read_at(bug[0], bug[1]) if bug else b""
for at in range(0, len(bt) - 11, 12):  # { s32 bug_addr, s32 file, u16 line, u16 flags }
    if struct.unpack_from("<H", bt, at + 10)[0] & 1:  # BUGFLAG_WARNING
        warn_sites.add(bug[0] + at + s32(bt, at))
t.ok(len(jl_target) > 5000 and len(warn_sites) > 1000,
     "__jump_table: %d jump labels; __bug_table: %d WARN sites" % (len(jl_target), len(warn_sites)))

# ---- objdump's instructions: addr -> (kind, target) ------------------------------------

INSN = re.compile(r"^([0-9a-f]{16}):\t(\S+)\s*(\S*)")
insns = {}     # .text: addr -> (mnemonic class, target or None, next addr)
aux = {}       # .altinstr_aux
aux_lo = aux_hi = 0
out = subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", "-j", ".text", "-j", ".altinstr_aux", VMLINUX],
                       stdout=subprocess.PIPE, universal_newlines=True, errors="replace")
cur = insns
prev = None
for line in out.stdout:
    if line.startswith("Disassembly of section"):
        cur = aux if ".altinstr_aux" in line else insns
        prev = None
        continue
    m = INSN.match(line)
    if not m:
        continue
    a = int(m.group(1), 16)
    mn = m.group(2)
    op = m.group(3)
    if prev is not None:
        cur[prev] = cur[prev][:2] + (a,)
    if mn.startswith("j"):
        kind = "jmp" if mn == "jmp" else "jcc"
        tgt = int(op, 16) if re.match(r"^[0-9a-f]+$", op) else None
    elif mn.startswith("call"):
        kind, tgt = "call", (int(op, 16) if re.match(r"^[0-9a-f]+$", op) else None)
    elif mn.startswith("ret") or mn.startswith("iret") or mn in ("sysretq", "sysretl", "sysexit"):
        kind, tgt = "ret", None
    elif mn == "ud2" and a in warn_sites:
        kind, tgt = "other", None  # WARN: the handler resumes after it
    elif mn in ("ud2", "int3", "ud1", "ud0"):
        kind, tgt = "halt", None
    elif mn == "(bad)":
        kind, tgt = "halt", None
    else:
        kind, tgt = "other", None
    if a in jl_target and (mn == "jmp" or mn.startswith("nop") or mn.startswith("xchg")):
        kind, tgt = "jcc", jl_target[a]  # a jump label: patched to either way
    cur[a] = (kind, tgt, None)
    prev = a
out.wait()
t.ok(len(insns) > 1000000, "objdump: %d instructions in .text, %d in .altinstr_aux" % (len(insns), len(aux)))
if aux:
    aux_lo, aux_hi = min(aux), max(aux) + 16
starts = [f[0] for f in funcs]


def in_func(f, a):
    return f[0] <= a < f[1]


# ---- noreturn functions: no way out of their body ----------------------------------


def exits(f):
    a = f[0]
    while a is not None and a < f[1] and a in insns:
        kind, tgt, nxt = insns[a]
        if kind == "ret":
            return True
        if kind in ("jmp", "jcc") and (tgt is None or not in_func(f, tgt)) and not (aux_lo <= (tgt or 0) < aux_hi):
            return True
        a = nxt
    return False


for f in funcs:
    if not exits(f):
        noret_addr.add(f[0])

# ---- per function: blocks, edges, dominators, loop headers ---------------------------


def cfg(f):
    """succ: {block start: [succ starts]}, entry."""
    body = []
    a = f[0]
    while a is not None and a < f[1] and a in insns:
        body.append((a,) + insns[a])
        a = insns[a][2]
    frag = []
    todo = [tgt for (_, k, tgt, _) in body if k in ("jmp", "jcc") and tgt is not None and aux_lo <= tgt < aux_hi]
    done = set()
    while todo:
        b = todo.pop()
        while b in aux and b not in done:
            done.add(b)
            k, tgt, nxt = aux[b]
            frag.append((b, k, tgt, nxt))
            if k in ("jmp", "jcc") and tgt is not None and aux_lo <= tgt < aux_hi:
                todo.append(tgt)
            if k in ("jmp", "ret", "halt"):
                break
            b = nxt
    allins = sorted(body + frag)
    owned = set(x[0] for x in allins)

    def internal(tgt):
        return tgt is not None and tgt in owned and tgt != f[0] or tgt == f[0] and False

    def falls(k, tgt):
        if k in ("jmp", "ret", "halt"):
            return False
        if k == "call" and tgt is not None and (tgt in noret_addr):
            return False
        return True

    leaders = {f[0]}
    for (a, k, tgt, nxt) in allins:
        if k in ("jmp", "jcc", "call", "ret", "halt") and nxt is not None:
            leaders.add(nxt)
        if k in ("jmp", "jcc") and tgt in owned:
            leaders.add(tgt)
    succ = {}
    cur = None
    for i, (a, k, tgt, nxt) in enumerate(allins):
        if a in leaders:
            cur = a
            succ.setdefault(cur, [])
        if cur is None:
            continue
        last = i + 1 == len(allins) or allins[i + 1][0] in leaders or allins[i + 1][0] != nxt
        if not last:
            continue
        if k in ("jmp", "jcc") and tgt in owned and tgt not in thunk_ind and tgt not in thunk_ret:
            succ[cur].append(tgt)
        if falls(k, tgt) and nxt in owned and (i + 1 < len(allins) and allins[i + 1][0] == nxt):
            succ[cur].append(nxt)
        cur = None
    return succ, f[0]


def loop_headers(succ, entry):
    # reverse postorder from the entry
    order, seen, stack = [], {entry}, [(entry, iter(succ.get(entry, [])))]
    while stack:
        n, it = stack[-1]
        for s in it:
            if s not in seen and s in succ:
                seen.add(s)
                stack.append((s, iter(succ[s])))
                break
        else:
            order.append(n)
            stack.pop()
    order.reverse()
    idx = {n: i for i, n in enumerate(order)}
    preds = {n: [] for n in order}
    for n in order:
        for s in succ[n]:
            if s in idx:
                preds[s].append(n)
    idom = {entry: entry}
    changed = True
    while changed:
        changed = False
        for n in order[1:]:
            new = None
            for p in preds[n]:
                if p in idom:
                    if new is None:
                        new = p
                    else:
                        a, b = p, new
                        while a != b:
                            while idx[a] > idx[b]:
                                a = idom[a]
                            while idx[b] > idx[a]:
                                b = idom[b]
                        new = a
            if new is not None and idom.get(n) != new:
                idom[n] = new
                changed = True

    def dominates(h, n):
        while True:
            if n == h:
                return True
            if n == entry or n not in idom:
                return False
            n = idom[n]

    heads = set()
    for n in order:
        for s in succ[n]:
            if s in idx and dominates(s, n):
                heads.add(s)
    return heads


oracle = {}  # function name -> set of header addresses
for f in funcs:
    succ, entry = cfg(f)
    if len(succ) < 2:
        continue
    h = loop_headers(succ, entry)
    if h:
        oracle.setdefault(f[2], set()).update(h)
total = sum(len(v) for v in oracle.values())
t.ok(total > 20000, "the oracle finds %d loops in %d functions" % (total, len(oracle)))

# ---- loopscope's loops ------------------------------------------------------------------

# (the text form: the JSON of all of vmlinux is gigabytes once parsed)
r = subprocess.run([C.LOOPSCOPE, "struct", "-o", os.path.join(tmp, "v.txt"), VMLINUX],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
t.ok(r.returncode == 0, "loopscope struct vmlinux")
# a cold analysis (the scratch directory's cache is empty) of Debian's own kernel says
# nothing that is not true and actionable: the sources of its loops' lines are not here
# (LOOPSCOPE_SOURCE_PATH); no warning about pvh_start_xen's 32-bit code, which is no
# part of x86-64's control flow (cfg/kernel_edges.c)
noise = [l for l in r.stderr.splitlines() if "source files of its loops not found" not in l]
t.ok(not noise, "a cold struct of vmlinux warns of nothing but its missing sources (%d other lines%s)" %
     (len(noise), ": " + noise[0][:200] if noise else ""))
ours = set()
# A loop's text line, with its marks where they apply: "(part N of M)" after
# the line, and ", compiler-made: KIND" or ", line guessed: RULE" after the
# irreducible loop's entries.
LOOP = re.compile(r"loop at (?:\S+|\[no line\])(?: \(part \d+ of \d+\))? \[header (0x[0-9a-f]+), depth \d+"
                  r"(?:, irreducible: entries ([0-9a-fx, ]+?))?(?:, [a-z -]+: [^,\]]+)*\]")
unparsed = []
with open(os.path.join(tmp, "v.txt")) as fp:
    for line in fp:
        if not line.lstrip().startswith("loop at"):
            continue
        m = LOOP.search(line)
        if not m:
            unparsed.append(line.strip())
            continue
        ours.add(int(m.group(1), 16))
        for e in (m.group(2) or "").split(","):
            if e.strip():
                ours.add(int(e, 16))
t.ok(not unparsed, "every loop line of loopscope struct's text parsed (%d not)" % len(unparsed))
for line in unparsed[:5]:
    t.diag("unparsed: " + line)
found = sum(1 for v in oracle.values() for h in v if h in ours)
t.ok(found >= 0.999 * total, "%d/%d (%.2f%%) of the oracle's loops are loopscope's (want >= 99.9%%)" %
     (found, total, 100.0 * found / max(total, 1)))
missed = sorted(((n, h) for n, v in oracle.items() for h in v if h not in ours))
for n, h in missed[:8]:
    t.diag("missed: %s loop at 0x%x" % (n, h))
for name in KNOWN:
    want = oracle.get(name, set())
    got = {h for h in want if h in ours}
    t.ok(want and got == want, "%s: %d/%d of its loops" % (name, len(got), len(want)))
t.done()
