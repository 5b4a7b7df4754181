# tests/kernel-common.py - shared helpers of the kernel tests (kernel-*.py):
# Debian's debug kernel (scripts/setup-kernel-dbg installs linux-image-amd64-dbg
# when it is missing, but not under make check, which never installs: make
# check-slow-setup does; the tests skip when it is not there), the kernel's own
# scripts/faddr2line (from Debian's linux-source), and the symbol table as
# readelf prints it.  Loaded with load() below, not run as a test.
#
# The answers never come from loopscope: lines and inline chains come from
# faddr2line, addr2line (as faddr2line runs it: addr2line_chains) and
# llvm-symbolizer, control flow from objdump.
import importlib.util
import os
import re
import subprocess

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("core_common", os.path.join(_here, "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)

SETUP = os.path.join(C.TOP_SRCDIR, "scripts", "setup-kernel-dbg")


def _setup(arg=None):
    cmd = [SETUP] + ([arg] if arg else [])
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["setup-kernel-dbg failed"])[-1]
    return r.stdout.strip(), None


def vmlinux_or_skip():
    """The debug vmlinux, or a TAP skip of the whole test.  Installed if
    missing, but not under make (LOOPSCOPE_NO_KERNEL_DBG=1): there make
    check-slow-setup installs it before the slow tier's tests."""
    path, why = _setup()
    if not path:
        C.skip_all("no kernel debug info: " + why)
    return path


def release_of(vmlinux):
    return os.path.basename(vmlinux)[len("vmlinux-"):]


def module_path(vmlinux, rel):
    """The debug .ko REL (e.g. fs/ext4/ext4.ko) of vmlinux's release, or None."""
    p = os.path.join("/usr/lib/debug/lib/modules", release_of(vmlinux), "kernel", rel)
    return p if os.path.exists(p) else None


def faddr2line():
    """The kernel's scripts/faddr2line (from linux-source), or None."""
    path, _ = _setup("--faddr2line")
    return path if path and os.access(path, os.X_OK) else None


class Sym:
    __slots__ = ("addr", "size", "type", "bind", "ndx", "name", "order")

    def __init__(self, addr, size, type_, bind, ndx, name, order):
        self.addr, self.size, self.type, self.bind, self.ndx, self.name, self.order = \
            addr, size, type_, bind, ndx, name, order


_SYM = re.compile(r"^\s*\d+:\s+([0-9a-f]+)\s+(\d+|0x[0-9a-f]+)\s+(\w+)\s+(\w+)\s+\w+\s+(\w+)\s*(\S*)")


def symbols(path):
    """Every symbol of PATH as `readelf -sW` lists it."""
    out = subprocess.run(["readelf", "-sW", path], stdout=subprocess.PIPE, universal_newlines=True,
                         errors="replace").stdout
    syms = []
    for i, line in enumerate(out.splitlines()):
        m = _SYM.match(line)
        if m:
            size = int(m.group(2), 0)
            syms.append(Sym(int(m.group(1), 16), size, m.group(3), m.group(4), m.group(5), m.group(6), i))
    return syms


def kallsyms_sizes(syms, section_ends):
    """faddr2line's size of every FUNC symbol: the distance to the first
    symbol of its section at least st_size further (the section's end if none).
    Returns {(name, addr): size}."""
    by_sec = {}
    for s in syms:
        if s.ndx.isdigit():
            by_sec.setdefault(s.ndx, []).append(s.addr)
    for v in by_sec.values():
        v.sort()
    import bisect
    sizes = {}
    for s in syms:
        if s.type != "FUNC" or not s.ndx.isdigit():
            continue
        addrs = by_sec[s.ndx]
        i = bisect.bisect_left(addrs, s.addr + max(s.size, 1))
        end = addrs[i] if i < len(addrs) else section_ends.get(s.ndx, s.addr + s.size)
        sizes[(s.name, s.addr)] = end - s.addr
    return sizes


def section_ends(path, relocatable=False):
    """{section index: end} (vmlinux: addresses; .ko: sizes)."""
    out = subprocess.run(["readelf", "-SW", path], stdout=subprocess.PIPE, universal_newlines=True).stdout
    ends = {}
    for line in out.splitlines():
        m = re.match(r"^\s*\[\s*(\d+)\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m:
            addr = 0 if relocatable else int(m.group(3), 16)
            ends[m.group(1)] = addr + int(m.group(4), 16)
    return ends


def parse_faddr2line(text):
    """faddr2line's output -> {token: [[(func, file, line), ...] per match]}, innermost first."""
    res, cur = {}, None
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"^(\S+\+0x[0-9a-f]+/0x[0-9a-f]+):$", line)
        if m:
            cur = []
            res.setdefault(m.group(1), []).append(cur)
            continue
        m = re.match(r"^(?:\(inlined by\) )?(\S+) at (\S+):(\d+)", line)
        if m and cur is not None:
            cur.append((m.group(1), m.group(2), int(m.group(3))))
    return res


def addr2line_chains(objfile, addrs, section=None):
    """What faddr2line prints for each address, in one addr2line run:
    faddr2line turns FUNC+OFF/SIZE into an address (the symbol's value plus
    OFF, SIZE choosing among same-named symbols) and then runs addr2line with
    exactly these options on it (and --section for a relocatable .ko); one
    run for all addresses reads the DWARF once instead of once per frame
    (faddr2line: 3 to 15 s a frame on vmlinux).
    Returns {address: [(func, file, line), ...] innermost first}."""
    args = ["addr2line", "--functions", "--pretty-print", "--inlines", "--addresses", "--exe=" + objfile]
    if section:
        args.append("--section=" + section)
    out = subprocess.run(args + ["0x%x" % a for a in addrs], stdout=subprocess.PIPE,
                         universal_newlines=True, errors="replace").stdout
    res, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^0x([0-9a-f]+): (.*)$", line)
        if m:
            cur = res.setdefault(int(m.group(1), 16), [])
            line = m.group(2)
        m = re.match(r"^\s*(?:\(inlined by\) )?(\S+) at (\S+):(\d+)", line)
        if m and cur is not None:
            cur.append((m.group(1), m.group(2), int(m.group(3))))
    return res


CLONE = re.compile(r"\.(isra|part|constprop|cold|lto_priv|llvm)\b.*$")


def plain(name):
    """A function name without gcc's clone suffixes (foo.isra.0 -> foo)."""
    return CLONE.sub("", name)
