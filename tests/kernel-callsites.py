# tests/kernel-callsites.py - every call-site return address of Debian's debug
# vmlinux (what a stack trace is made of) against llvm-symbolizer.
#
# objdump gives every call instruction of .text; the address after it is a
# return address.  For each, `loopscope lookup --json` and
# `llvm-symbolizer --inlining` must agree on the innermost file:line and on
# the chain of functions (outermost procedure and inlined calls, gcc's clone
# suffixes aside): >= 99.5% of them, and none may be "not in any procedure"
# (a return address just past a procedure's end, after a call that never
# returns, belongs to the call's procedure, as addr2line says).
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

C.need_tools("objdump", "llvm-symbolizer")
VMLINUX = K.vmlinux_or_skip()
tmp = C.scratch_dir()
t = C.Tap()

rets = []
p = subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", "-j", ".text", VMLINUX], stdout=subprocess.PIPE,
                     universal_newlines=True, errors="replace")
INSN = re.compile(r"^([0-9a-f]{16}):\t(\S+)")
pending = False
for line in p.stdout:
    m = INSN.match(line)
    if not m:
        continue
    if pending:
        rets.append(int(m.group(1), 16))
    pending = m.group(2).startswith("call")
p.wait()
t.ok(len(rets) > 100000, "%d call-site return addresses in .text" % len(rets))

addrs = "".join("0x%x\n" % a for a in rets)
r = subprocess.run([C.LOOPSCOPE, "lookup", "--json", VMLINUX], input=addrs, stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE, universal_newlines=True)
ours = [json.loads(l) for l in r.stdout.splitlines()]
t.ok(r.returncode == 0 and len(ours) == len(rets), "loopscope lookup answers every address (%d)" % len(ours))
nowhere = [o["addr"] for o in ours if not o.get("chain")]
t.ok(not nowhere, "none is outside every procedure (%d are: %s)" % (len(nowhere), nowhere[:5]))

r = subprocess.run(["llvm-symbolizer", "--inlining", "--obj=" + VMLINUX], input=addrs, stdout=subprocess.PIPE,
                   universal_newlines=True)
blocks = r.stdout.split("\n\n")


def theirs(block):
    lines = block.strip().splitlines()
    names = [K.plain(l) for l in lines[0::2]]
    m = re.match(r"^(.*):(\d+):\d+$", lines[1]) if len(lines) > 1 else None
    return names, (m.group(1), int(m.group(2))) if m else None


def mine(o):
    ch = o.get("chain", [])
    names = [K.plain(c["name"]) for c in ch if c["kind"] in ("proc", "inline")][::-1]
    st = [c for c in ch if c["kind"] == "stmt"]
    return names, ((st[-1]["file"], st[-1]["line"]) if st else None)


def norm(fl):
    return (re.sub(r"^.*?debian/build/build_[^/]+/", "", os.path.normpath(fl[0] or "??")), fl[1]) if fl else None


agree, bad = 0, []
for a, o, b in zip(rets, ours, blocks):
    n1, l1 = mine(o)
    n2, l2 = theirs(b)
    # past a procedure's DWARF end (after a call that never returns)
    # llvm-symbolizer names no function; addr2line, and we, the procedure
    if (n1 == n2 or (n2 == ["??"] and len(n1) == 1)) and norm(l1) == norm(l2):
        agree += 1
    elif len(bad) < 6:
        bad.append(("0x%x" % a, n1, norm(l1), n2, norm(l2)))
t.ok(agree >= 0.995 * len(rets), "%d/%d (%.2f%%) agree with llvm-symbolizer on the chain and the line (want >= 99.5%%)" %
     (agree, len(rets), 100.0 * agree / max(len(rets), 1)))
for b in bad:
    t.diag("%s\n  ours:            %s %s\n  llvm-symbolizer: %s %s" % b)
t.done()
