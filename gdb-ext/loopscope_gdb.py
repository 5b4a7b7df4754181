# loopscope_gdb.py - the loopscope GDB commands (loaded by loopscope.py).
#
# Owns the GDB side of the extension: which object file a runtime address
# belongs to and its load bias, the per-objfile analyses (built lazily,
# cached by build-id here and on disk by the core), and the user interface:
#
#   structure [-json] [LOCATION]   scope chain at LOCATION (default: the selected frame's pc)
#   info loops [FUNCTION]          loop nest of FUNCTION (default: the selected frame's)
#   bt                             a line under each frame in a loop (frame filter, elided
#                                  frames); frame names stay GDB's
#   $_loop_depth([ADDR])           loop depth at $pc (or ADDR)
#   info loopscope                 the analyses made so far (debug info, cache, warnings)
#
# and GDB's styles for text output.  The rest lives beside it:
# loopscope_settings.py (set/show loopscope), loopscope_step.py (loop-next,
# loop-finish, break-loop), loopscope_mi.py (MI commands), loopscope_tui.py
# (the TUI window and `layout loops`); _loopscope.c is the C module.
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
import stat
import time

import gdb
import gdb.FrameDecorator
import gdb.frames
from gdb.FrameDecorator import FrameDecorator

import _loopscope
import loopscope_settings


def _safe(text):
    """TEXT printable by GDB: paths are handled as bytes (surrogate escapes
    for what is not UTF-8), and GDB cannot print lone surrogates."""
    if not isinstance(text, str):
        text = str(text)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


class LoopscopeError(gdb.GdbError):
    """A message for the user, without a Python traceback."""

    def __init__(self, message):
        super().__init__(_safe(message))


def _write(text, stream=None):
    if stream is None:
        gdb.write(_safe(text))
    else:
        gdb.write(_safe(text), stream)


def _hex(a):
    return "0x%x" % a


def _short(path):
    return os.path.basename(path) if path else "??"


# ---- talking to GDB about files whose names are not UTF-8 --------------------
#
# GDB hands file names to Python decoded with its host charset (strict), and
# the output of gdb.execute(to_string=True) always as strict UTF-8: a program
# whose path is not UTF-8 made every command raise UnicodeDecodeError.  Here
# names are asked for with the host charset set to ISO-8859-1 (every byte
# decodes), turned back into bytes, and kept as str with surrogate escapes,
# which os.* and _loopscope take as the original bytes.


class _RawNames:
    """with _RawNames(): GDB's file names decode byte for byte (ISO-8859-1)."""

    def __enter__(self):
        try:
            self._saved = gdb.parameter("host-charset")
            if self._saved != "ISO-8859-1":
                gdb.execute("set host-charset ISO-8859-1", to_string=True)
        except gdb.error:
            self._saved = None
        return self

    def __exit__(self, *exc):
        if self._saved not in (None, "ISO-8859-1"):
            try:
                gdb.execute("set host-charset %s" % self._saved, to_string=True)
            except gdb.error:
                pass
        return False


def _raw(name):
    """A name GDB gave under _RawNames, as a str with surrogate escapes."""
    if name is None:
        return None
    try:
        return os.fsdecode(name.encode("latin-1"))
    except UnicodeEncodeError:  # the charset switch did not happen: as it is
        return name


# Asked once and kept until GDB's object files change (register() connects
# _forget_names to those events): switching the charset costs a command.
_NAMES = {}


def _forget_names(*unused):
    _NAMES.clear()


def _progspace_filename():
    key = ("progspace", gdb.current_progspace())
    if key not in _NAMES:
        with _RawNames():
            _NAMES[key] = _raw(gdb.current_progspace().filename)
    return _NAMES[key]


def _objfile_names():
    """[(path, objfile)] of every objfile GDB has loaded."""
    key = ("objfiles", len(gdb.objfiles()))
    if key not in _NAMES:
        out = []
        with _RawNames():
            for obj in gdb.objfiles():
                try:
                    out.append((_raw(obj.filename), obj))
                except (RuntimeError, gdb.error):
                    continue
        _NAMES[key] = out
    return [(name, obj) for name, obj in _NAMES[key] if obj.is_valid()]


def _execute(command):
    """The output of a GDB command; bytes that are not UTF-8 (a file name)
    come as surrogate escapes instead of raising UnicodeDecodeError."""
    try:
        return gdb.execute(command, to_string=True)
    except UnicodeDecodeError:
        pass
    # gdb.execute(to_string=True) decodes strictly: have GDB log to a file.
    import tempfile
    fd, tmp = tempfile.mkstemp(prefix="loopscope-gdb-")
    os.close(fd)
    names = ("logging file", "logging overwrite", "logging redirect", "logging enabled")
    saved = {}
    try:
        for n in names:
            saved[n] = gdb.parameter(n)
        # (Not to_string: logging set up inside a capture ends with it.)
        if saved["logging enabled"]:
            gdb.execute("set logging enabled off", to_string=False)
        gdb.execute("set logging file %s" % tmp, to_string=True)
        gdb.execute("set logging overwrite on", to_string=True)
        gdb.execute("set logging redirect on", to_string=True)
        gdb.execute("set logging enabled on", to_string=False)
        try:
            gdb.execute(command, to_string=False)
        finally:
            gdb.execute("set logging enabled off", to_string=False)
        with open(tmp, "rb") as f:
            return f.read().decode("utf-8", "surrogateescape")
    finally:
        for n in names[:3]:
            if n in saved:
                value = saved[n]
                if isinstance(value, bool):
                    value = "on" if value else "off"
                try:
                    gdb.execute("set %s %s" % (n, value), to_string=True)
                except gdb.error:
                    pass
        if saved.get("logging enabled"):
            gdb.execute("set logging enabled on", to_string=False)
        os.unlink(tmp)


# ---- locations the user typed -----------------------------------------------

_MAX_LOCATION = 1024


def _check_location(text, command):
    """Refuse what must not reach gdb.decode_line: GDB 13 corrupts its state
    (and dies) on an unbalanced quote, with or without loopscope."""
    if len(text) > _MAX_LOCATION:
        raise LoopscopeError("%s: the location is %d characters long (at most %d)"
                             % (command, len(text), _MAX_LOCATION))
    quote = None
    for c in text:
        if quote is None and c in "'\"":
            quote = c
        elif c == quote:
            quote = None
    if quote is not None:
        raise LoopscopeError("%s: unbalanced %s in the location: %s" % (
            command, "single quote" if quote == "'" else "double quote", text))
    if any(ord(c) < 32 for c in text):
        raise LoopscopeError("%s: control characters in the location" % command)


def _loc(path, line):
    """FILE:LINE, short form; "[no line]" for line 0 (compiler-made code,
    never shown as a line), as the CLI and perf loops print it; the file in
    GDB's file name style."""
    return "%s:%d" % (_sfile(_short(path)), line) if line else "[no line]"


# ---- GDB's styles ------------------------------------------------------------
#
# GDB 13's Python cannot print in a named style, so text output takes the
# colours of GDB's own settings ("show style filename", "function",
# "address") as ANSI escapes, when "style enabled" is on and stdout is a
# terminal, as GDB's own output does.  STYLES.refresh() reads them once per
# command.

_SGR_COLOR = {"black": 0, "red": 1, "green": 2, "yellow": 3, "blue": 4, "magenta": 5, "cyan": 6, "white": 7}
_SGR_INTENSITY = {"bold": "1", "faint": "2"}


class Styles:
    KINDS = ("filename", "function", "address")

    def __init__(self):
        self.sgr = {}

    def refresh(self):
        self.sgr = {}
        try:
            if not gdb.parameter("style enabled") or not os.isatty(1):
                return
            for kind in self.KINDS:
                codes = []
                fg = gdb.parameter("style %s foreground" % kind)
                bg = gdb.parameter("style %s background" % kind)
                inten = gdb.parameter("style %s intensity" % kind)
                if fg in _SGR_COLOR:
                    codes.append(str(30 + _SGR_COLOR[fg]))
                if bg in _SGR_COLOR:
                    codes.append(str(40 + _SGR_COLOR[bg]))
                if inten in _SGR_INTENSITY:
                    codes.append(_SGR_INTENSITY[inten])
                if codes:
                    self.sgr[kind] = "\033[%sm" % ";".join(codes)
        except (gdb.error, RuntimeError, OSError):
            self.sgr = {}

    def __call__(self, kind, text):
        on = self.sgr.get(kind)
        return "%s%s\033[m" % (on, text) if on and text else text


STYLES = Styles()


def _sfile(text):
    return STYLES("filename", text)


def _sfunc(text):
    return STYLES("function", text)


def _saddr(text):
    return STYLES("address", text)


def _loop_at(loop):
    """"at FILE:LINE" of a loop, or "at [no line]"."""
    return "at " + _where(loop)


def _where(d):
    """FILE:LINE of a scope dict, short form, in GDB's file name style."""
    return _loc(d.get("file"), d.get("line"))


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
        # New and cleared object files, stops and exits invalidate the map
        # through events (register()); this only notices a switch of
        # inferior or program.  It runs for every frame of a backtrace.
        inf = gdb.selected_inferior()
        return (inf.num, inf.pid, _progspace_filename())

    def _elf_sections(self, path):
        try:
            st = os.stat(path)
            key = (st.st_mtime_ns, st.st_size)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None  # a FIFO would block open() for ever
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
        text = _execute("info files")
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
        rel = [name for name, _ in _objfile_names()
               if name and name not in known and name.endswith((".ko", ".o", ".ko.debug"))]
        if not rel:
            return []
        try:
            text = _execute("maint info sections -all-objects")
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
        main = _progspace_filename()
        for p in [main] + [sec[2] for sec in self._sections]:
            if p and p not in seen and (p == main or self.bias_of(p) is not None):
                seen.append(p)
        return seen


# ---- analyses, one per object file --------------------------------------------


class Analyses:
    """_loopscope.Module per object file, keyed by build-id (path and mtime
    when there is none).  Failures are remembered too, so that `bt` does not
    retry a hopeless file on every frame.  Before each use the file's
    identity (device, inode, size, mtime) is checked against the analyzed
    one: a file rebuilt or truncated since is analyzed again, never read
    through what was mapped of the old one."""

    def __init__(self):
        self._by_key = {}
        self._key_of_path = {}
        self._identity = {}  # key -> the file's identity when analyzed

    @staticmethod
    def identity(path):
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def _key(self, path):
        real = os.path.realpath(path)
        for name, obj in _objfile_names():
            if name == path or (name and os.path.realpath(name) == real):
                if obj.build_id:
                    return "build-id:" + obj.build_id
                break
        ident = self.identity(path)
        return "file:%s:%s" % (real, ident) if ident else "file:" + path

    def get(self, path, quiet=False):
        """The analysis of PATH; raises LoopscopeError if it cannot be analyzed.
        QUIET: do not print its warnings (in the middle of a backtrace)."""
        key = self._key_of_path.get(path)
        if key is None:
            key = self._key(path)
            self._key_of_path[path] = key
        got = self._by_key.get(key)
        ident = self.identity(path)
        if got is not None and self._identity.get(key) != ident:
            if not isinstance(got, LoopscopeError) and not quiet:
                _write("loopscope: %s changed on disk since it was analyzed; analyzing it again\n" % path,
                       gdb.STDERR)
            got = None
        if got is None:
            try:
                # Ctrl-C (KeyboardInterrupt) goes through: nothing is
                # remembered, the next use starts the analysis again.
                progress = Progress(path)
                try:
                    got = _loopscope.Module(path, cache=loopscope_settings.use_cache(),
                                            debug_file_path=loopscope_settings.debug_file_path(),
                                            progress=progress)
                except KeyboardInterrupt:
                    progress.end(interrupted=True)
                    raise
                progress.end()
                if not quiet:
                    _print_warnings(got)
            except _loopscope.Error as e:
                got = LoopscopeError("cannot analyze %s" % e.args[0] if e.args else path)
            self._by_key[key] = got
            self._identity[key] = ident
        if isinstance(got, LoopscopeError):
            raise got
        return got

    def entries(self):
        return list(self._by_key.items())

    def has(self, path):
        key = self._key_of_path.get(path)
        return key is not None and key in self._by_key

    def clear(self):
        """Drop every analysis (the debug directories changed)."""
        self._by_key.clear()
        self._key_of_path.clear()

    def forget(self, *unused):
        # Object files may be rebuilt between runs: look their keys up again.
        self._key_of_path.clear()


def _gdb_build_id(path):
    """The build-id GDB read from PATH when it loaded it, or None."""
    real = os.path.realpath(path)
    for name, obj in _objfile_names():
        if name == path or (name and os.path.realpath(name) == real):
            return obj.build_id
    return None


class Progress:
    """GDB-style progress of a first analysis, on a terminal only:
        loopscope: analyzing /lib/x86_64-linux-gnu/libc.so.6... 42%
    rewritten in place, erased when done; called by _loopscope every 0.1 s
    while the analysis runs (the core counts procedures: 0 of 0 while it
    reads DWARF).  A cache hit usually ends before anything is shown."""

    SHOW_AFTER = 0.3  # seconds: no flicker for quick ones

    def __init__(self, path):
        self.path = path
        self.start = time.monotonic()
        self.shown = False
        self.tty = _stderr_is_tty()

    def __call__(self, done, total):
        if not self.tty or time.monotonic() - self.start < self.SHOW_AFTER:
            return
        pct = " %d%%" % (100 * done // total) if total else ""
        gdb.write("\rloopscope: analyzing %s...%s\033[K" % (self.path, pct), gdb.STDERR)
        gdb.flush()
        self.shown = True

    def end(self, interrupted=False):
        if self.shown:
            gdb.write("\r\033[K", gdb.STDERR)
        if interrupted:
            gdb.write("loopscope: analysis of %s interrupted; it starts again on next use\n" % self.path,
                      gdb.STDERR)


def _stderr_is_tty():
    try:
        return os.isatty(2)
    except OSError:
        return False


def _print_warnings(module):
    for w in module.warnings[:5]:
        _write("loopscope: warning: %s\n" % w, gdb.STDERR)
    if len(module.warnings) > 5:
        _write("loopscope: ... and %d more warnings\n" % (len(module.warnings) - 5), gdb.STDERR)


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
        # A file rebuilt while GDB (or the process) holds the old one: its
        # structure is not the program's, whatever the addresses say.
        in_gdb = _gdb_build_id(self.path)
        on_disk = self.module.build_id
        if in_gdb and on_disk and in_gdb != on_disk:
            raise LoopscopeError(
                "%s is not the file GDB loaded: its build-id is %s on disk and %s in GDB (rebuilt "
                "since?); run `file %s` (and the program again) to load the new one"
                % (self.path, on_disk, in_gdb, self.path))
        self.chain = self.module.lookup(self.link)
        self.depth = self.module.depth(self.link) if self.chain else 0

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
            d["call_line"] = s.get("call_line") or None
        d["file"] = s.get("file")
        d["line"] = s.get("line") or None  # null, not 0, as the CLI's JSON
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
        lines.append("%s is %s+%s:" % (_saddr(_hex(place.pc)), _sfile(place.path), _hex(place.link)))
    else:
        lines.append("%s in %s:" % (_saddr(_hex(place.pc)), _sfile(place.path)))
    if not place.chain:
        lines.append("  not inside any procedure loopscope knows")
    for i, s in enumerate(place.chain):
        kind = s["kind"]
        if i == len(place.chain) - 1 and place.depth > len(place.chain):
            lines.append("  ...     %d deeper scopes cut (the chain is %d deep)"
                         % (place.depth - len(place.chain), place.depth))
        if kind == "proc":
            lines.append("  proc    %s%s" % (_sfunc(s.get("name") or "??"), "  at " + _where(s) if s.get("file") else ""))
        elif kind == "inline":
            lines.append("  inline  %s  called at %s  (defined at %s)" % (
                _sfunc(s.get("name") or "??"), _loc(s.get("call_file"), s.get("call_line")), _where(s)))
        elif kind == "loop":
            extra = ""
            if s["irreducible"]:
                extra = "  irreducible, %d entries" % len(s["entries"])
            lines.append("  loop    %s  header %s  depth %d%s" % (
                _loop_at(s), _saddr(_hex(place.runtime(s["header"]))), s["depth"], extra))
        elif kind == "alien":
            lines.append("  alien   code from %s" % _where(s))
        elif kind == "stmt":
            lines.append("  stmt    %s" % _where(s))
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
        STYLES.refresh()
        arg = arg.strip()
        as_json = False
        if arg == "-json" or arg.startswith("-json "):
            as_json = True
            arg = arg[5:].strip()
        _check_location(arg, "structure")
        for pc, label in _pc_of_location(arg, "structure"):
            place = Place(pc)
            if as_json:
                obj = chain_json(place)
                if place.depth > len(place.chain):
                    obj["cut"] = place.depth - len(place.chain)
                _write(json.dumps(obj) + "\n")
            else:
                _write(format_chain(place) + "\n")


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
        if path != _progspace_filename() and not ANALYSES.has(path):
            continue  # analyzing every library to find one name costs too much
        try:
            hit = ANALYSES.get(path).symbol(name)
        except (gdb.GdbError, _loopscope.Error):
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
                "  " * indent, _loop_at(c), _saddr(_hex(c["header"] + place_bias)), c["depth"],
                len(c["exits"]), "" if len(c["exits"]) == 1 else "s",
                len(c["backedges"]), "" if len(c["backedges"]) == 1 else "s", extra))
            _loop_lines(c, place_bias, indent + 1, out)
        elif kind in ("inline", "alien"):
            sub = []
            _loop_lines(c, place_bias, indent + 1, sub)
            if sub:  # show inlined calls only where they hold loops
                if kind == "inline":
                    out.append("%sinlined %s  called at %s" % (
                        "  " * indent, _sfunc(c.get("name") or "??"), _loc(c.get("call_file"), c.get("call_line"))))
                else:
                    out.append("%scode from %s" % ("  " * indent, _where(c)))
                out.extend(sub)


def _count_loops(node):
    n = 0
    for c in node.get("children", ()):
        n += (c["kind"] == "loop") + _count_loops(c)
    return n


def _inlined_instances(name):
    """[(path, bias, host proc dict, inline dict)] of every inlined call of
    function NAME, in the main program and the object files analyzed so
    far, and whether NAME is also a procedure of its own there."""
    found, own = [], False
    for path in ADDRESSES.paths():
        if path != _progspace_filename() and not ANALYSES.has(path):
            continue  # analyzing every library to find one name costs too much
        try:
            module = ANALYSES.get(path)
        except gdb.GdbError:
            continue
        own = own or module.symbol(name) is not None
        bias = ADDRESSES.bias_of(path) or 0
        found += [(path, bias, proc, inl) for proc, inl in module.inlined(name)]
    return found, own


def _write_instances(instances, name, only_inlined):
    """The loops of each inlined call of NAME, under its host procedure and
    call site; calls whose code holds no loop are counted, not listed."""
    with_loops = [i for i in instances if _count_loops(i[3])]
    n = sum(_count_loops(i[3]) for i in with_loops)
    head = "%s exists only inlined" % name if only_inlined else "%s is also inlined" % name
    _write("%s: %d inlined call%s, %d with loops (%d loop%s):\n" % (
        head, len(instances), "" if len(instances) == 1 else "s", len(with_loops), n, "" if n == 1 else "s"))
    for path, bias, proc, inl in with_loops:
        _write("  in %s%s, %s called at %s:\n" % (
            proc.get("name") or "??", " (%s)" % path if path != _progspace_filename() else "",
            inl.get("name") or name, _loc(inl.get("call_file"), inl.get("call_line"))))
        out = []
        _loop_lines(inl, bias, 2, out)
        _write("\n".join(out) + "\n")


def function_proc(name, command):
    """(pc, Place, proc dict with its subtree) of function NAME, or of the
    selected frame's function when NAME is empty."""
    _check_location(name, command)
    if name:
        pc = _function_pc(name)
        if pc is None:
            pc = _loopscope_symbol_pc(name)
        if pc is None:
            raise LoopscopeError("%s: no function named %s" % (command, name))
    else:
        frame = _selected_frame_or_none()
        if frame is None:
            raise LoopscopeError("%s: no process and no FUNCTION given: name a function" % command)
        pc = _lookup_pc(frame)
    place = Place(pc)
    proc = place.module.proc_at(place.link)
    if proc is None:
        raise LoopscopeError("%s: %s (%s) is not inside any procedure loopscope knows%s" % (
            command, name or _hex(pc), _hex(place.link),
            "; " + place.why_poor() if place.why_poor() else ""))
    return pc, place, proc


class InfoLoopsCommand(gdb.Command):
    """List the loop nest of a function, as loopscope recovered it from machine code.

Usage: info loops [FUNCTION]

FUNCTION defaults to the function of the selected frame.  Each loop shows its
source line, header address, nesting depth, its exits and back edges; loops
that come from an inlined callee are listed under that inlined call.  For a
FUNCTION that exists only inlined, the loops of every inlined call of it are
listed, each under its host procedure and call site (and, for a FUNCTION
that is a procedure and is inlined too, after the procedure's own)."""

    def __init__(self):
        super().__init__("info loops", gdb.COMMAND_STATUS, gdb.COMPLETE_SYMBOL)

    def invoke(self, arg, from_tty):
        STYLES.refresh()
        name = arg.strip()
        instances = []
        if name:
            instances, own = _inlined_instances(name)
            if instances and not own:
                _write_instances(instances, name, True)
                return
        pc, place, proc = function_proc(name, "info loops")
        n = _count_loops(proc)
        head = "%s%s in %s" % (_sfunc(proc.get("name") or "??"), " (%s)" % _where(proc) if proc.get("file") else "",
                               _sfile(place.path))
        if n == 0:
            _write("%s has no loops.\n" % head)
        else:
            _write("%d loop%s in %s:\n" % (n, "" if n == 1 else "s", head))
            out = []
            _loop_lines(proc, place.bias, 1, out)
            _write("\n".join(out) + "\n")
        if name and instances:
            _write_instances(instances, name, False)
        why = place.why_poor()
        if why:
            _write("note: " + why + "\n")


# ---- bt: frame decorator -----------------------------------------------------------
#
# Frame names stay GDB's own (IDEs match them against their symbols, also
# through MI with -enable-frame-filters): the loop a frame is in is shown as
# an elided line under the frame, the place GDB gives frame filters for extra
# lines.  GDB prints an elided line that borrows its frame without a level:
#
#   #2  0x0000555555555147 in do_work (num=1000) at ../small.cpp:14
#       in loop (depth=2, header=0x555555555122) at ../small.cpp:13
#
# `bt -hide` and `set loopscope backtrace off` leave it out.


def backtrace_enabled():
    return loopscope_settings.backtrace_on()


def frame_loop(frame):
    """(innermost loop dict, Place) of FRAME's own part of the chain (its
    inline level), or (None, Place); raises on frames loopscope cannot place."""
    place = Place(_lookup_pc(frame), quiet=True)
    seg = _segment(place.chain, _inline_depth(frame))
    loops = [s for s in seg if s["kind"] == "loop"]
    return (loops[-1] if loops else None), place


def _same_file_as_frame(frame, path):
    """PATH as GDB names the frame's file when it is that file (so both lines
    of a frame read alike), else PATH itself."""
    try:
        symtab = frame.find_sal().symtab
    except (gdb.error, RuntimeError):
        symtab = None
    if symtab is not None and path and symtab.fullname() == path:
        return symtab.filename
    return path


class _LoopArg:
    """One "NAME=VALUE" of the loop line (the frame-filter argument protocol)."""

    def __init__(self, name, value):
        self._name, self._value = name, value

    def symbol(self):
        return self._name

    def value(self):
        return self._value


_void_ptr = None


def _as_pointer(addr):
    global _void_ptr
    if _void_ptr is None:
        _void_ptr = gdb.lookup_type("void").pointer()
    return gdb.Value(addr).cast(_void_ptr)


class LoopLineDecorator(FrameDecorator):
    """The elided line "in loop (depth=D, header=0x...) at FILE:LINE"."""

    def __init__(self, fobj, loop, place):
        super().__init__(fobj)
        self._loop, self._place = loop, place

    def function(self):
        return "in loop"

    def address(self):
        return None

    def filename(self):
        if not self._loop.get("file"):
            return None
        return _same_file_as_frame(self.inferior_frame(), self._loop["file"])

    def line(self):
        return self._loop.get("line") if self._loop.get("file") else None

    def frame_args(self):
        args = [_LoopArg("depth", self._loop["depth"]),
                _LoopArg("header", _as_pointer(self._place.runtime(self._loop["header"])))]
        if self._loop["irreducible"]:
            args.append(_LoopArg("entries", len(self._loop["entries"])))
        return args

    def frame_locals(self):
        return None

    def elided(self):
        return None


class _FrameLoopCache:
    """(thread, level, pc) -> (loop, place) of the frames of the current stop:
    a second `bt` (or `bt` after `frame N`) costs a dict lookup per frame.
    Emptied whenever the frames may have changed."""

    def __init__(self):
        self.entries = {}

    def clear(self, *unused):
        self.entries.clear()

    def get(self, frame):
        try:
            thread = gdb.selected_thread()
            key = (thread.global_num if thread else 0, frame.level(), frame.pc())
        except (gdb.error, RuntimeError):
            return frame_loop(frame)
        got = self.entries.get(key)
        if got is None:
            got = frame_loop(frame)
            self.entries[key] = got
        return got


FRAME_LOOPS = _FrameLoopCache()


class LoopFrameDecorator(FrameDecorator):
    """Keeps GDB's function name and adds the frame's innermost loop as an
    elided line.

    filename, line and frame_args give what FrameDecorator gives, from one
    find_sal per frame instead of four (a backtrace's cost is per frame)."""

    def _plain(self):
        return type(self._base) in (gdb.Frame, FrameDecorator)

    def _sal(self):
        try:
            return self._sal_v
        except AttributeError:
            self._sal_v = self.inferior_frame().find_sal()
            return self._sal_v

    def _limited(self):
        sal = self._sal()
        return (not sal.symtab or not sal.symtab.filename
                or self.inferior_frame().type() in (gdb.DUMMY_FRAME, gdb.SIGTRAMP_FRAME))

    def filename(self):
        if not self._plain():
            return super().filename()
        sal = self._sal()
        if not sal.symtab or not sal.symtab.filename:
            return gdb.solib_name(self.inferior_frame().pc())
        return sal.symtab.filename

    def line(self):
        if not self._plain():
            return super().line()
        return None if self._limited() else self._sal().line

    def frame_args(self):
        if not self._plain():
            return super().frame_args()
        if self._limited():
            return None
        return gdb.FrameDecorator.FrameVars(self.inferior_frame()).fetch_frame_args()

    def function(self):
        # FrameDecorator's default is str(symbol), "main(int, char**)" in C++;
        # GDB's own backtrace and MI say "main" (frame.name()).  Whatever
        # goes wrong here, `bt` shows the frame as GDB would: a decorator
        # must never put an exception in place of a frame.
        try:
            frame = self.inferior_frame()
            if (type(self._base) not in (gdb.Frame, FrameDecorator)  # another filter's decorator
                    or frame.type() in (gdb.DUMMY_FRAME, gdb.SIGTRAMP_FRAME)):
                return super().function()
            name = frame.name()
        except Exception:
            name = None
        return name if name is not None else "??"

    def elided(self):
        # (The filter is only enabled while the setting is on: no check here,
        # gdb.parameter costs more than the lookup.)
        base = super().elided()
        try:
            loop, place = FRAME_LOOPS.get(self.inferior_frame())
        except Exception:  # never an exception in place of a frame
            return base
        if loop is None:
            return base
        line = LoopLineDecorator(self._base, loop, place)
        return [line] + list(base) if base else [line]


class LoopFrameFilter:
    """Registered always; enabled only while `loopscope backtrace` is on, so
    that with it off GDB prints frames its own way (no Python frame filter
    path at all: MI keeps its "fullname" fields, for one)."""

    def __init__(self):
        self.name = "loopscope-loops"
        self.priority = 100

    @property
    def enabled(self):
        return backtrace_enabled()

    @enabled.setter
    def enabled(self, value):  # `disable frame-filter global loopscope-loops`
        gdb.set_parameter("loopscope backtrace", bool(value))

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
            _write("loopscope %s: nothing analyzed yet (structures are built on first use).\n"
                      % _loopscope.version)
            return
        _write("loopscope %s analyses:\n" % _loopscope.version)
        for key, got in entries:
            if isinstance(got, LoopscopeError):
                _write("  %s\n" % got)
                continue
            _write("  %s\n    debug info: %s\n    build-id: %s\n    %s, %d warning%s\n" % (
                got.path, got.debug_path or "none", got.build_id or "none",
                "from the disk cache" if got.from_cache else "analyzed in this session",
                len(got.warnings), "" if len(got.warnings) == 1 else "s"))
            for w in got.warnings:
                _write("      %s\n" % w)


# ---- registration -------------------------------------------------------------------

_registered = False


def register():
    global _registered
    if _registered:
        return
    loopscope_settings.register(ANALYSES.clear)
    StructureCommand()
    InfoLoopsCommand()
    import loopscope_step  # they use this module's names: imported once they exist
    import loopscope_tui
    loopscope_step.register()
    loopscope_tui.register()
    LoopDepthFunction()
    InfoLoopscopeCommand()
    gdb.frame_filters["loopscope-loops"] = LoopFrameFilter()
    if hasattr(gdb, "MICommand"):  # GDB 13 and later
        import loopscope_mi
        loopscope_mi.register()
    for ev in ("new_objfile", "clear_objfiles", "exited", "stop"):
        registry = getattr(gdb.events, ev, None)
        if registry is not None:
            registry.connect(ADDRESSES.invalidate)
    for ev in ("new_objfile", "clear_objfiles"):
        registry = getattr(gdb.events, ev, None)
        if registry is not None:
            registry.connect(ANALYSES.forget)
            registry.connect(_forget_names)
    for ev in ("new_objfile", "clear_objfiles", "exited", "stop", "cont", "inferior_call",
               "memory_changed", "register_changed"):
        registry = getattr(gdb.events, ev, None)
        if registry is not None:
            registry.connect(FRAME_LOOPS.clear)
    _registered = True
