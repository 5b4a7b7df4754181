# loopscope_gdb.py - the loopscope GDB commands (loaded by loopscope.py).
#
# Owns the GDB side of the extension: which object file a runtime address
# belongs to and its load bias, the per-objfile analyses (built lazily,
# cached by build-id here and on disk by the core), and the user interface:
#
#   structure [-json] [LOCATION]   scope chain at LOCATION (default: the selected frame's pc)
#   info loops [FUNCTION]          loop nest of FUNCTION (default: the selected frame's)
#   loop-finish [-count]           run until the innermost loop containing $pc is left
#   bt                             frames show the innermost loop they are in (frame filter)
#   $_loop_depth([ADDR])           loop depth at $pc (or ADDR)
#   info loopscope                 the analyses made so far (debug info, cache, warnings)
#
# libloopscope speaks link-time addresses (as in the ELF file); GDB speaks
# runtime ones.  The difference per object file is its load bias, computed
# from the section addresses GDB reports (`info files`) against the section
# addresses in the ELF file itself (read by libloopscope: _loopscope.sections);
# this works alike for a live process, a
# core file and a bare executable (bias 0, or GDB's relocation of a PIE),
# `gdb vmlinux` and /proc/kcore.  Relocatable objects added with
# add-symbol-file (a kernel module's .ko) are mapped section by section, from
# `maint info sections -all-objects`, against the layout libloopscope gives
# them (.text at 0): each section has a bias of its own.
import json
import os
import re

import gdb
import gdb.frames
from gdb.FrameDecorator import FrameDecorator

import _loopscope


class LoopscopeError(gdb.GdbError):
    """A message for the user, without a Python traceback."""


def _hex(a):
    return "0x%x" % a


def _short(path):
    return os.path.basename(path) if path else "??"


def _loop_at(loop):
    """"at FILE:LINE" of a loop, or why there is no line."""
    return "at " + _where(loop) if loop.get("file") else "(no line information)"


def _where(d):
    """FILE:LINE of a scope dict, short form."""
    if not d.get("file"):
        return "??"
    return "%s:%s" % (_short(d["file"]), d.get("line") or "?")


# ---- ELF section addresses ------------------------------------------------


def elf_sections(path):
    """{section name: link-time address} of the ELF file PATH (allocated
    sections), read by libloopscope without analyzing the file."""
    try:
        return _loopscope.sections(path)
    except _loopscope.Error as e:
        raise LoopscopeError(e.args[0] if e.args else "%s: not an ELF file" % path)


# ---- runtime address -> object file and bias --------------------------------


_INFO_FILES_LINE = re.compile(
    r"^\s+0x([0-9a-fA-F]+) - 0x([0-9a-fA-F]+) is (\S+)(?: in (.+))?$")


class AddressMap:
    """Where runtime addresses live: (start, end, file, bias) per section.

    Parsed from `info files` (the exec file's part: the main program and its
    shared libraries), refreshed when the inferior or its objfiles change."""

    def __init__(self):
        self._key = None
        self._sections = []
        self._elf = {}  # path -> {section: addr}

    def invalidate(self, *unused):
        self._key = None

    def _state_key(self):
        inf = gdb.selected_inferior()
        return (inf.num, inf.pid, gdb.current_progspace().filename, len(gdb.objfiles()))

    def _elf_sections(self, path):
        try:
            st = os.stat(path)
            key = (st.st_mtime_ns, st.st_size)
        except OSError:
            return None
        cached = self._elf.get(path)
        if cached and cached[0] == key:
            return cached[1]
        try:
            secs = elf_sections(path)
        except (OSError, LoopscopeError):
            secs = None
        self._elf[path] = (key, secs)
        return secs

    def _refresh(self):
        key = self._state_key()
        if key == self._key:
            return
        text = gdb.execute("info files", to_string=True)
        exec_file = None
        in_exec = False
        sections = []
        for line in text.splitlines():
            if line and not line[0].isspace():
                # (warnings such as vmlinux's "Cannot find section for the
                # entry point" are not the start of another part)
                if not line.startswith("warning:"):
                    in_exec = line.startswith("Local exec file")
                continue
            if not in_exec:
                continue
            m = re.match(r"^\s+`(.*)', file type", line)
            if m:
                exec_file = m.group(1)
                continue
            m = _INFO_FILES_LINE.match(line)
            if not m:
                continue
            start, end, name, path = int(m.group(1), 16), int(m.group(2), 16), m.group(3), m.group(4)
            if path is None:
                path = exec_file
            if path is None or path.startswith("system-supplied DSO"):
                continue
            secs = self._elf_sections(path)
            if not secs or name not in secs:
                continue
            sections.append((start, end, path, start - secs[name]))
        sections.extend(self._relocatable_sections(set(sec[2] for sec in sections)))
        sections.sort()
        self._sections = sections
        self._key = key

    _MAINT_OBJFILE = re.compile(r"^Object file: `(.*)', file type")
    _MAINT_SECTION = re.compile(r"^\s*\[\s*\d+\]\s+0x([0-9a-fA-F]+)->0x([0-9a-fA-F]+) at 0x[0-9a-fA-F]+: (\S+) (.*)$")

    def _relocatable_sections(self, known):
        """(start, end, path, bias) of the code sections of relocatable object
        files GDB has (add-symbol-file ext4.ko ...): GDB lays a .ko's sections
        out its own way, so each section gets its own bias against the
        analysis' layout."""
        rel = [o.filename for o in gdb.objfiles()
               if o.filename and o.filename not in known and o.filename.endswith((".ko", ".o", ".ko.debug"))]
        if not rel:
            return []
        try:
            text = gdb.execute("maint info sections -all-objects", to_string=True)
        except gdb.error:
            return []
        out = []
        path = None
        for line in text.splitlines():
            m = self._MAINT_OBJFILE.match(line)
            if m:
                path = m.group(1) if m.group(1) in rel else None
                continue
            m = self._MAINT_SECTION.match(line)
            if not m or path is None or "CODE" not in m.group(4).split():
                continue
            start, end, name = int(m.group(1), 16), int(m.group(2), 16), m.group(3)
            try:
                where = ANALYSES.get(path, quiet=True).section(name)
            except LoopscopeError:
                where = None
            if where is None or end <= start:
                continue
            out.append((start, end, path, start - where[0]))
        return out

    def locate(self, pc):
        """(path, bias) of the object file holding runtime address PC, or None."""
        self._refresh()
        lo, hi = 0, len(self._sections)
        while lo < hi:  # last section starting at or below pc
            mid = (lo + hi) // 2
            if self._sections[mid][0] <= pc:
                lo = mid + 1
            else:
                hi = mid
        for i in (lo - 1, lo - 2):  # sections may nest (.tbss); look at two
            if 0 <= i < len(self._sections):
                start, end, path, bias = self._sections[i]
                if start <= pc < end:
                    return path, bias
        return None

    def bias_of(self, path):
        """The load bias of object file PATH, or None if it is not mapped."""
        self._refresh()
        for start, end, p, bias in self._sections:
            if p == path:
                return bias
        return None

    def paths(self):
        """Every mapped object file, the main program first."""
        self._refresh()
        seen = []
        main = gdb.current_progspace().filename
        for p in [main] + [sec[2] for sec in self._sections]:
            if p and p not in seen and (p == main or self.bias_of(p) is not None):
                seen.append(p)
        return seen


# ---- analyses, one per object file --------------------------------------------


class Analyses:
    """_loopscope.Module per object file, keyed by build-id (path and mtime
    when there is none).  Failures are remembered too, so that `bt` does not
    retry a hopeless file on every frame."""

    def __init__(self):
        self._by_key = {}
        self._key_of_path = {}

    def _key(self, path):
        for obj in gdb.objfiles():
            if obj.filename == path or (obj.filename and os.path.realpath(obj.filename) == os.path.realpath(path)):
                if obj.build_id:
                    return "build-id:" + obj.build_id
                break
        try:
            st = os.stat(path)
            return "file:%s:%d:%d" % (os.path.realpath(path), st.st_mtime_ns, st.st_size)
        except OSError:
            return "file:" + path

    def get(self, path, quiet=False):
        """The analysis of PATH; raises LoopscopeError if it cannot be analyzed.
        QUIET: do not print its warnings (in the middle of a backtrace)."""
        key = self._key_of_path.get(path)
        if key is None:
            key = self._key(path)
            self._key_of_path[path] = key
        got = self._by_key.get(key)
        if got is None:
            try:
                got = _loopscope.Module(path, cache=True)
                if not quiet:
                    _print_warnings(got)
            except _loopscope.Error as e:
                got = LoopscopeError("cannot analyze %s" % e.args[0] if e.args else path)
            self._by_key[key] = got
        if isinstance(got, LoopscopeError):
            raise got
        return got

    def entries(self):
        return list(self._by_key.items())

    def has(self, path):
        key = self._key_of_path.get(path)
        return key is not None and key in self._by_key

    def forget(self, *unused):
        # Object files may be rebuilt between runs: look their keys up again.
        self._key_of_path.clear()


def _print_warnings(module):
    for w in module.warnings[:5]:
        gdb.write("loopscope: warning: %s\n" % w, gdb.STDERR)
    if len(module.warnings) > 5:
        gdb.write("loopscope: ... and %d more warnings\n" % (len(module.warnings) - 5), gdb.STDERR)


ADDRESSES = AddressMap()
ANALYSES = Analyses()


class Place:
    """A runtime address resolved: object file, bias, link-time address, chain."""

    def __init__(self, pc, quiet=False):
        self.pc = pc
        where = ADDRESSES.locate(pc)
        if where is None:
            raise LoopscopeError("address %s is not in any object file GDB has loaded" % _hex(pc))
        self.path, self.bias = where
        self.link = pc - self.bias
        self.module = ANALYSES.get(self.path, quiet)
        self.chain = self.module.lookup(self.link)

    def loops(self):
        return [s for s in self.chain if s["kind"] == "loop"]

    def innermost_loop(self):
        loops = self.loops()
        return loops[-1] if loops else None

    def runtime(self, link_addr):
        return link_addr + self.bias

    def why_poor(self):
        """Why the chain is thin, or None."""
        if not self.module.has_dwarf:
            return ("%s has no debug information (stripped?): only procedures and loops "
                    "from machine code are known, without source lines or inlined calls"
                    % self.path)
        return None


# ---- frames -----------------------------------------------------------------


def _lookup_pc(frame):
    """The pc to look FRAME up at: a caller's pc is a return address, which may
    already be past the call's scope (the last instruction of a loop), so its
    call instruction (pc - 1) is looked up instead, as GDB does for blocks."""
    pc = frame.pc()
    f = frame
    while True:  # the youngest frame of this physical frame (inline frames share its pc)
        n = f.newer()
        if n is None:
            return pc
        if n.type() == gdb.INLINE_FRAME and n.pc() == pc:
            f = n
            continue
        return pc if n.type() == gdb.SIGTRAMP_FRAME else pc - 1


def _inline_depth(frame):
    """How many inline levels FRAME is below its physical frame's procedure."""
    k = 0
    f = frame
    while f is not None and f.type() == gdb.INLINE_FRAME:
        k += 1
        f = f.older()
    return k


def _physical(frame):
    while frame is not None and frame.type() == gdb.INLINE_FRAME:
        frame = frame.older()
    return frame


def _segment(chain, k):
    """The part of CHAIN that belongs to inline level K (0: the procedure)."""
    level = 0
    seg = []
    for s in chain:
        if s["kind"] == "inline":
            level += 1
            if level > k:
                break
            seg = []
            continue
        seg.append(s)
    return seg


def _selected_frame_or_none():
    try:
        return gdb.selected_frame()
    except gdb.error:
        return None


def _pc_of_location(arg, command):
    """Runtime addresses of LOCATION (list of (pc, label)); the selected frame's
    pc when ARG is empty."""
    if not arg:
        frame = _selected_frame_or_none()
        if frame is None:
            raise LoopscopeError(
                "%s: no process, no core file and no LOCATION: give one "
                "(FUNCTION, FILE:LINE or *ADDRESS), or start the program" % command)
        return [(_lookup_pc(frame), "frame #%d" % frame.level())]
    if re.match(r"^(0[xX][0-9a-fA-F]+)$", arg):
        return [(int(arg, 16), arg)]
    try:
        rest, sals = gdb.decode_line(arg)
    except gdb.error as e:
        try:
            val = gdb.parse_and_eval(arg)
            return [(int(val.cast(gdb.lookup_type("unsigned long"))), arg)]
        except gdb.error:
            raise LoopscopeError("%s: %s" % (command, e))
    if rest:
        raise LoopscopeError("%s: junk after the location: %s" % (command, rest))
    pcs = []
    for sal in sals or ():
        if sal.pc and (sal.pc, arg) not in pcs:
            pcs.append((sal.pc, arg))
    if not pcs:
        raise LoopscopeError("%s: %s has no code address" % (command, arg))
    return pcs


# ---- structure ----------------------------------------------------------------


def chain_json(place):
    """The chain in the CLI's `lookup --json` shape (design.md)."""
    out = []
    for s in place.chain:
        d = {"kind": s["kind"]}
        if s["kind"] in ("proc", "inline"):
            d["name"] = s.get("name")
        if s["kind"] == "inline":
            d["call_file"] = s.get("call_file")
            d["call_line"] = s.get("call_line")
        d["file"] = s.get("file")
        d["line"] = s.get("line")
        if s["kind"] == "loop":
            d["header"] = _hex(s["header"])
            d["depth"] = s["depth"]
            d["irreducible"] = s["irreducible"]
        out.append(d)
    obj = {"addr": _hex(place.link), "pc": _hex(place.pc), "module": place.module.path, "chain": out}
    if not place.chain:
        obj["error"] = "address %s is outside any procedure" % _hex(place.link)
    return obj


def format_chain(place):
    lines = []
    if place.bias:
        lines.append("%s is %s+%s:" % (_hex(place.pc), place.path, _hex(place.link)))
    else:
        lines.append("%s in %s:" % (_hex(place.pc), place.path))
    if not place.chain:
        lines.append("  not inside any procedure loopscope knows")
    for s in place.chain:
        kind = s["kind"]
        if kind == "proc":
            lines.append("  proc    %s%s" % (s.get("name") or "??", "  at " + _where(s) if s.get("file") else ""))
        elif kind == "inline":
            lines.append("  inline  %s  called at %s:%s  (defined at %s)" % (
                s.get("name") or "??", _short(s.get("call_file")), s.get("call_line") or "?", _where(s)))
        elif kind == "loop":
            extra = ""
            if s["irreducible"]:
                extra = "  irreducible, %d entries" % len(s["entries"])
            lines.append("  loop    %s  header %s  depth %d%s" % (
                _loop_at(s), _hex(place.runtime(s["header"])), s["depth"], extra))
        elif kind == "alien":
            lines.append("  alien   code from %s" % _where(s))
        elif kind == "stmt":
            lines.append("  stmt    %s" % (_where(s) if s.get("file") else "(no line information)"))
        else:
            lines.append("  %-7s %s" % (kind, _where(s)))
    if place.chain and not place.loops():
        lines.append("  (not in any loop)")
    why = place.why_poor()
    if why:
        lines.append("  note: " + why)
    return "\n".join(lines)


class StructureCommand(gdb.Command):
    """Show the static scope chain of a code address, as loopscope recovered it.

Usage: structure [-json] [LOCATION]

LOCATION is a linespec (FUNCTION, FILE:LINE, *ADDRESS) or an address; it
defaults to the pc of the selected frame.  The chain runs from the procedure
through inlined calls (with their call sites) and loops (source line, header
address, depth) down to the statement.  Works on a live process, a core file
and an executable alone.  With -json, print the chain in the shape of
`loopscope lookup --json` (link-time "addr", plus the runtime "pc")."""

    def __init__(self):
        super().__init__("structure", gdb.COMMAND_DATA, gdb.COMPLETE_LOCATION)

    def invoke(self, arg, from_tty):
        arg = arg.strip()
        as_json = False
        if arg == "-json" or arg.startswith("-json "):
            as_json = True
            arg = arg[5:].strip()
        for pc, label in _pc_of_location(arg, "structure"):
            place = Place(pc)
            if as_json:
                gdb.write(json.dumps(chain_json(place)) + "\n")
            else:
                gdb.write(format_chain(place) + "\n")


# ---- info loops -------------------------------------------------------------------


def _function_pc(name):
    """A runtime address inside function NAME, from GDB's symbols."""
    try:
        sym = gdb.lookup_symbol(name)[0]
    except gdb.error:
        sym = None
    if sym is None:
        sym = gdb.lookup_global_symbol(name) or gdb.lookup_static_symbol(name)
    if sym is not None and sym.addr_class == gdb.SYMBOL_LOC_BLOCK:
        return int(sym.value().address.cast(gdb.lookup_type("unsigned long")))
    try:  # a minimal symbol (no debug information)
        val = gdb.parse_and_eval("&%s" % name) if not name.startswith("*") else gdb.parse_and_eval(name[1:])
        return int(val.cast(gdb.lookup_type("unsigned long")))
    except gdb.error:
        pass
    try:
        return _pc_of_location(name, "info loops")[0][0]
    except gdb.GdbError:
        return None


def _loopscope_symbol_pc(name):
    """NAME looked up by loopscope itself (mangled, demangled or NAME@plt), in
    the main program and in the object files analyzed already: for names GDB
    does not know.  A runtime address, or None."""
    for path in ADDRESSES.paths():
        if path != gdb.current_progspace().filename and not ANALYSES.has(path):
            continue  # analyzing every library to find one name costs too much
        try:
            hit = ANALYSES.get(path).symbol(name)
        except gdb.GdbError:
            continue
        if hit is not None:
            bias = ADDRESSES.bias_of(path)
            return hit[0] + (bias or 0)
    return None


def _loop_lines(node, place_bias, indent, out, inline_note=None):
    for c in node.get("children", ()):
        kind = c["kind"]
        if kind == "loop":
            extra = ""
            if c["irreducible"]:
                extra = ", irreducible: %d entries %s" % (
                    len(c["entries"]), " ".join(_hex(e + place_bias) for e in c["entries"]))
            out.append("%sloop %s  header %s  depth %d  (%d exit%s, %d back edge%s%s)" % (
                "  " * indent, _loop_at(c), _hex(c["header"] + place_bias), c["depth"],
                len(c["exits"]), "" if len(c["exits"]) == 1 else "s",
                len(c["backedges"]), "" if len(c["backedges"]) == 1 else "s", extra))
            _loop_lines(c, place_bias, indent + 1, out)
        elif kind in ("inline", "alien"):
            sub = []
            _loop_lines(c, place_bias, indent + 1, sub)
            if sub:  # show inlined calls only where they hold loops
                if kind == "inline":
                    out.append("%sinlined %s  called at %s:%s" % (
                        "  " * indent, c.get("name") or "??", _short(c.get("call_file")), c.get("call_line") or "?"))
                else:
                    out.append("%scode from %s" % ("  " * indent, _where(c)))
                out.extend(sub)


def _count_loops(node):
    n = 0
    for c in node.get("children", ()):
        n += (c["kind"] == "loop") + _count_loops(c)
    return n


class InfoLoopsCommand(gdb.Command):
    """List the loop nest of a function, as loopscope recovered it from machine code.

Usage: info loops [FUNCTION]

FUNCTION defaults to the function of the selected frame.  Each loop shows its
source line, header address, nesting depth, its exits and back edges; loops
that come from an inlined callee are listed under that inlined call."""

    def __init__(self):
        super().__init__("info loops", gdb.COMMAND_STATUS, gdb.COMPLETE_SYMBOL)

    def invoke(self, arg, from_tty):
        name = arg.strip()
        if name:
            pc = _function_pc(name)
            if pc is None:
                pc = _loopscope_symbol_pc(name)
            if pc is None:
                raise LoopscopeError("info loops: no function named %s" % name)
        else:
            frame = _selected_frame_or_none()
            if frame is None:
                raise LoopscopeError("info loops: no process and no FUNCTION given: name a function")
            pc = _lookup_pc(frame)
        place = Place(pc)
        proc = place.module.proc_at(place.link)
        if proc is None:
            raise LoopscopeError("info loops: %s (%s) is not inside any procedure loopscope knows%s" % (
                name or _hex(pc), _hex(place.link),
                "; " + place.why_poor() if place.why_poor() else ""))
        n = _count_loops(proc)
        head = "%s%s in %s" % (proc.get("name") or "??", " (%s)" % _where(proc) if proc.get("file") else "",
                               place.path)
        if n == 0:
            gdb.write("%s has no loops.\n" % head)
        else:
            gdb.write("%d loop%s in %s:\n" % (n, "" if n == 1 else "s", head))
            out = []
            _loop_lines(proc, place.bias, 1, out)
            gdb.write("\n".join(out) + "\n")
        why = place.why_poor()
        if why:
            gdb.write("note: " + why + "\n")


# ---- loop-finish -----------------------------------------------------------------


class _FrameBreakpoint(gdb.Breakpoint):
    """A breakpoint that only counts in one physical frame (recursion safe)."""

    def __init__(self, addr, frame, stopping, temporary=True):
        super().__init__("*%s" % _hex(addr), gdb.BP_BREAKPOINT, internal=True, temporary=temporary)
        self.addr = addr
        self.want = frame
        self.stopping = stopping
        self.hits = 0
        self.silent = True

    def stop(self):
        try:
            here = _physical(gdb.newest_frame())
        except gdb.error:
            return False
        if self.want is not None and here != self.want:
            return False
        self.hits += 1
        return self.stopping


def _live_process():
    inf = gdb.selected_inferior()
    if inf.pid == 0:
        return False
    conn = getattr(inf, "connection", None)
    if conn is not None and conn.type == "core":
        return False
    return True


class LoopFinishCommand(gdb.Command):
    """Run until the innermost loop containing the selected frame's pc is left.

Usage: loop-finish [-count]

Sets temporary breakpoints on every exit of the loop (as loopscope found
them: the targets of all edges leaving the loop) and at the return address
of the frame (for exits through return or longjmp), continues, and reports
where the loop was left.  With -count, also reports how many times the loop
header was reached until then.  Needs a live process."""

    def __init__(self):
        super().__init__("loop-finish", gdb.COMMAND_RUNNING, gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        arg = arg.strip()
        count = False
        if arg in ("-count", "--count", "-c"):
            count = True
        elif arg:
            raise LoopscopeError("loop-finish: unknown argument %s (only -count)" % arg)
        if not _live_process():
            raise LoopscopeError("loop-finish: the program is not running (a core file or no process): "
                                 "start it first")
        frame = gdb.selected_frame()
        place = Place(_lookup_pc(frame))
        k = _inline_depth(frame)
        # The frame's own loops first; if its inlined function has none here,
        # the loops of the functions it is inlined into (never deeper ones).
        loop = None
        for level in range(k, -1, -1):
            seg_loops = [s for s in _segment(place.chain, level) if s["kind"] == "loop"]
            if seg_loops:
                loop = seg_loops[-1]
                break
        if loop is None:
            where = place.chain[0].get("name") if place.chain else "??"
            raise LoopscopeError("loop-finish: pc %s (%s in %s) is not inside any loop%s" % (
                _hex(frame.pc()), _where(place.chain[-1]) if place.chain else "??", where,
                "; " + place.why_poor() if place.why_poor() else ""))
        phys = _physical(frame)
        targets = sorted({e[1] for e in loop["exits"]})
        bps = []
        try:
            for t in targets:
                bps.append(_FrameBreakpoint(place.runtime(t), phys, True))
            caller = phys.older()
            ret_bp = None
            if caller is not None:
                caller_phys = _physical(caller)
                ret_bp = _FrameBreakpoint(caller.pc(), caller_phys, True)
                bps.append(ret_bp)
            header_bp = None
            if count:
                header_bp = _FrameBreakpoint(place.runtime(loop["header"]), phys, False, temporary=False)
                bps.append(header_bp)
            if not targets and ret_bp is None:
                raise LoopscopeError("loop-finish: the loop at %s has no exits and no caller to return to"
                                     % _loop_at(loop))
            gdb.execute("continue", to_string=not from_tty)
            hit = [b for b in bps if b.stopping and b.hits > 0]
            counted = header_bp.hits if header_bp is not None else None
        finally:
            for b in bps:
                if b.is_valid():
                    b.delete()

        loop_desc = "loop %s (header %s, depth %d)" % (_loop_at(loop), _hex(place.runtime(loop["header"])),
                                                        loop["depth"])
        if not hit:
            if not _live_process():
                gdb.write("The program ended before leaving the %s.\n" % loop_desc)
            else:
                gdb.write("Stopped before leaving the %s.\n" % loop_desc)
            return
        now_frame = gdb.selected_frame()
        now_pc = now_frame.pc()
        sal = now_frame.find_sal()
        now_where = "%s:%d" % (_short(sal.symtab.filename), sal.line) if sal.symtab else _hex(now_pc)
        fname = now_frame.name() or "??"
        b = hit[0]
        if b is ret_bp:
            how = "by returning from %s" % (phys.name() or "??")
        else:
            froms = [e[0] for e in loop["exits"] if place.runtime(e[1]) == b.addr]
            how = "via exit %s -> %s" % (_hex(place.runtime(froms[0])) if froms else "?", _hex(b.addr))
        msg = "left %s %s; now at %s in %s (%s)" % (loop_desc, how, now_where, fname, _hex(now_pc))
        if counted is not None:
            msg += "; header reached %d time%s" % (counted, "" if counted == 1 else "s")
        gdb.write(msg + "\n")
        if from_tty:  # like `finish`: show where we are
            gdb.execute("frame")


# ---- bt: frame decorator -----------------------------------------------------------


class LoopFrameDecorator(FrameDecorator):
    """Appends the innermost loop a frame is in to its function name."""

    def __init__(self, fobj):
        super().__init__(fobj)
        self._fobj = fobj

    def function(self):
        base = super().function()
        if not isinstance(base, str):
            # An address: GDB prints its minimal symbol, or nothing at all
            # where there is none; say "??" as plain `bt` does.
            try:
                if self.inferior_frame().name() is None:
                    base = "??"
            except gdb.error:
                pass
        try:
            frame = self.inferior_frame()
            place = Place(_lookup_pc(frame), quiet=True)
        except (gdb.error, gdb.GdbError, _loopscope.Error, RuntimeError):
            return base
        seg = _segment(place.chain, _inline_depth(frame))
        loops = [s for s in seg if s["kind"] == "loop"]
        if not isinstance(base, str) or base == "??":
            if place.chain and place.chain[0].get("name"):
                base = place.chain[0]["name"]
            if not isinstance(base, str):
                return base
        if not loops:
            return base
        inner = loops[-1]
        if inner.get("file"):
            return "%s [in loop at %s]" % (base, _where(inner))
        return "%s [in loop, header %s]" % (base, _hex(place.runtime(inner["header"])))


class LoopFrameFilter:
    def __init__(self):
        self.name = "loopscope-loops"
        self.priority = 100
        self.enabled = True

    def filter(self, frame_iter):
        return map(LoopFrameDecorator, frame_iter)


# ---- $_loop_depth -----------------------------------------------------------------


class LoopDepthFunction(gdb.Function):
    """$_loop_depth([ADDR]) - the loop nesting depth at ADDR (default: the selected frame's pc).

0 outside loops; counts every loop around the address, in the procedure and
in the inlined calls it sits in."""

    def __init__(self):
        super().__init__("_loop_depth")

    def invoke(self, *args):
        if args:
            pc = int(args[0].cast(gdb.lookup_type("unsigned long")))
        else:
            frame = _selected_frame_or_none()
            if frame is None:
                raise LoopscopeError("$_loop_depth: no frame (no process, no core file); pass an address")
            pc = _lookup_pc(frame)
        return len(Place(pc, quiet=True).loops())


# ---- info loopscope ------------------------------------------------------------------


class InfoLoopscopeCommand(gdb.Command):
    """List the object files loopscope analyzed in this session.

Usage: info loopscope

For each: where its debug information came from, its build-id, whether the
structure came from the on-disk cache, and the warnings of its analysis."""

    def __init__(self):
        super().__init__("info loopscope", gdb.COMMAND_STATUS, gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        entries = ANALYSES.entries()
        if not entries:
            gdb.write("loopscope %s: nothing analyzed yet (structures are built on first use).\n"
                      % _loopscope.version)
            return
        gdb.write("loopscope %s analyses:\n" % _loopscope.version)
        for key, got in entries:
            if isinstance(got, LoopscopeError):
                gdb.write("  %s\n" % got)
                continue
            gdb.write("  %s\n    debug info: %s\n    build-id: %s\n    %s, %d warning%s\n" % (
                got.path, got.debug_path or "none", got.build_id or "none",
                "from the disk cache" if got.from_cache else "analyzed in this session",
                len(got.warnings), "" if len(got.warnings) == 1 else "s"))
            for w in got.warnings:
                gdb.write("      %s\n" % w)


# ---- registration -------------------------------------------------------------------

_registered = False


def register():
    global _registered
    if _registered:
        return
    StructureCommand()
    InfoLoopsCommand()
    LoopFinishCommand()
    LoopDepthFunction()
    InfoLoopscopeCommand()
    gdb.frame_filters["loopscope-loops"] = LoopFrameFilter()
    for ev in ("new_objfile", "clear_objfiles", "exited", "stop"):
        registry = getattr(gdb.events, ev, None)
        if registry is not None:
            registry.connect(ADDRESSES.invalidate)
    for ev in ("new_objfile", "clear_objfiles"):
        registry = getattr(gdb.events, ev, None)
        if registry is not None:
            registry.connect(ANALYSES.forget)
    _registered = True
