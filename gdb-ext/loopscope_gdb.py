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
#   $_loop_depth([FRAME])          loop depth of the selected (or FRAME's) frame
#   maint info loopscope           the analyses made so far (debug info, cache, warnings);
#                                  `info loopscope`, its old name, is deprecated
#
# and GDB's styles for text output.  The rest lives beside it:
# loopscope_args.py (the argument parser: every command's input goes
# through it first), loopscope_settings.py (set/show loopscope),
# loopscope_step.py (loop-next, loop-finish), loopscope_breakloop.py
# (break-loop), loopscope_mi.py
# (MI commands), loopscope_tui.py (the TUI window and `layout loops`);
# _loopscope.c is the C module.
#
# libloopscope speaks link-time addresses (as in the ELF file); GDB speaks
# runtime ones.  The difference per object file is its load bias, computed
# from the section addresses GDB reports (`info files`) against the section
# addresses in the ELF file itself (read by libloopscope: _loopscope.sections);
# this works alike for a live process, a core file and a bare executable
# (bias 0, or GDB's relocation of a PIE), `gdb vmlinux` and /proc/kcore.
# Relocatable objects added with add-symbol-file (a kernel module's .ko) are
# mapped section by section, from `maint info sections -all-objects`,
# against the layout libloopscope gives them (.text at 0).
#
# Object files GDB reads through the target ("target:/usr/bin/app": the
# program runs in another mount namespace, a container, or behind
# gdbserver) are read through /proc/PID/root when the process is on this
# machine (copied to a directory of ours: the library resolves that path
# back into GDB's namespace), else at the same path, else copied with
# `remote get`; the file found must have the build-id GDB read
# (local_file()).
#
# Strings that come from outside (names from DWARF, paths) are kept as the
# file system's bytes (str with surrogate escapes) and shown escaped
# (loopscope_args.escape: \ooo for a byte that is not UTF-8, as GDB prints
# them); JSON escapes such a byte as \udcXX (Python's surrogateescape
# convention) instead of replacing it, so a path still names its file.
import json
import os
import re
import stat
import tempfile
import time

import gdb
import gdb.FrameDecorator
import gdb.frames
from gdb.FrameDecorator import FrameDecorator

import _loopscope
import loopscope_args as args
import loopscope_settings

_d = args.escape  # for every string that comes from outside


_SURROGATES = re.compile("[\ud800-\udfff]")


def _safe(text):
    """TEXT printable by gdb.write.  Strings from outside are escaped where
    they are put into a message (_d); this is the net under it: a byte that
    is not UTF-8 (a surrogate escape) would make gdb.write raise."""
    if not isinstance(text, str):
        text = str(text)
    if text.isascii():
        return text
    return _SURROGATES.sub(lambda m: _d(m.group(0)), text)


class LoopscopeError(gdb.GdbError):
    """A message for the user, without a Python traceback."""

    def __init__(self, message):
        super().__init__(_safe(message))


def _write(text, stream=None):
    """Writes TEXT, made of escaped parts (see _d) and our own words."""
    text = _safe(text)
    if stream is None:
        gdb.write(text)
    else:
        gdb.write(text, stream)


def _hex(a):
    return "0x%x" % a


def _short(path):
    return os.path.basename(path) if path else "??"


def quietly(handler):
    """HANDLER for a GDB event: an exception there (a KeyboardInterrupt when
    GDB is ended by a signal, say) must not reach GDB's console."""
    def run(*a):
        try:
            handler(*a)
        except BaseException:
            pass
    return run


# ---- what GDB says, as bytes ---------------------------------------------------
#
# GDB hands Python file names decoded with its host charset, strictly, and
# gdb.execute(to_string=True) output as strict UTF-8: a name that is not
# UTF-8 raises UnicodeDecodeError.  The exception carries the bytes it could
# not decode (e.object): they are taken from there, with no setting changed
# (switching host-charset made MI report =cmd-param-changed).


def _host_bytes_as_str(getter):
    """The str GETTER() returns, as the bytes GDB holds (surrogate escapes
    for what is not UTF-8), or None."""
    try:
        value = getter()
    except UnicodeDecodeError as e:
        return os.fsdecode(e.object) if isinstance(e.object, bytes) else None
    if value is None or value.isascii():
        return value
    try:
        charset = gdb.host_charset()
    except (AttributeError, gdb.error):
        charset = "UTF-8"
    if charset.upper().replace("_", "-") in ("UTF-8", "UTF8"):
        return value
    try:
        return os.fsdecode(value.encode(charset))
    except (LookupError, UnicodeEncodeError):
        return value


def _execute(command):
    """The output of a GDB command (bytes that are not UTF-8 as surrogate
    escapes, never an exception for them)."""
    try:
        return gdb.execute(command, to_string=True)
    except UnicodeDecodeError as e:
        return e.object.decode("utf-8", "surrogateescape")


# Asked once and kept until GDB's object files change (register() connects
# _forget_names to those events, which also count in _GENERATION: a
# backtrace asks for each frame, and gdb.objfiles() builds a list).
_NAMES = {}
_GENERATION = [0]


def _forget_names(*unused):
    _NAMES.clear()
    _GENERATION[0] += 1


def _progspace_filename():
    key = ("progspace", gdb.current_progspace())
    if key not in _NAMES:
        _NAMES[key] = _host_bytes_as_str(lambda: gdb.current_progspace().filename)
    return _NAMES[key]


def _objfile_names():
    """[(path, objfile)] of every objfile GDB has loaded."""
    key = ("objfiles", _GENERATION[0])
    if key not in _NAMES:
        out = []
        for obj in gdb.objfiles():
            try:
                name = _host_bytes_as_str(lambda: obj.filename)
            except (RuntimeError, gdb.error):
                continue
            out.append((name, obj))
        _NAMES[key] = out
    return [(name, obj) for name, obj in _NAMES[key] if obj.is_valid()]


def _objfile_build_id(path):
    """The build-id GDB read from object file PATH (as GDB names it), or None."""
    key = ("build-id", path, _GENERATION[0])
    if key not in _NAMES:
        found = None
        names = _objfile_names()
        for name, obj in names:
            if name == path:
                found = obj.build_id
                break
        else:
            if not path.startswith(_TARGET):
                real = os.path.realpath(path)
                for name, obj in names:
                    if name and not name.startswith(_TARGET) and os.path.realpath(name) == real:
                        found = obj.build_id
                        break
        _NAMES[key] = found
    return _NAMES[key]


# ---- object files GDB reads through the target ("target:PATH") --------------------

_TARGET = "target:"


def _selected_pid():
    try:
        return gdb.selected_inferior().pid
    except (gdb.error, RuntimeError):
        return 0


def _private_dir():
    """A directory of ours alone for copies of target files (removed when GDB
    exits), or None."""
    prefix = "loopscope-gdb-%d-" % os.getuid()
    d = os.path.join(tempfile.gettempdir(), prefix + str(os.getpid()))
    try:
        if not os.path.isdir(d):
            import atexit
            import shutil
            atexit.register(shutil.rmtree, d, True)
            _remove_stale(prefix)
        os.makedirs(d, mode=0o700, exist_ok=True)
        st = os.lstat(d)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
            return None  # not ours alone: never write there
    except OSError:
        return None
    return d


def _remove_stale(prefix):
    """The private directories of earlier GDBs of ours that are gone (one
    ended by a signal may not have removed its own)."""
    import shutil
    tmp = tempfile.gettempdir()
    for name in os.listdir(tmp):
        if not name.startswith(prefix) or not name[len(prefix):].isdigit():
            continue
        try:
            os.kill(int(name[len(prefix):]), 0)
            continue  # still running
        except ProcessLookupError:
            pass
        except OSError:
            continue
        path = os.path.join(tmp, name)
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
            shutil.rmtree(path, True)


def _remote_copy(path, build_id):
    """PATH on the target, copied here with `remote get` (gdbserver and such)
    and named by BUILD_ID (the one GDB read), or None if that is not
    possible.  A copy made before with that build-id is not fetched again
    (a remote libc is megabytes over a serial line)."""
    d = _private_dir()
    if d is None:
        return None
    local = os.path.join(d, "%s-%s" % (build_id or "nobuildid", os.path.basename(path)))
    if build_id and os.path.exists(local):
        try:
            if _loopscope.build_id(local) == build_id:
                return local
        except _loopscope.Error:
            pass
    try:
        gdb.execute("remote get %s %s" % (path, local + ".tmp"), to_string=True)
        os.rename(local + ".tmp", local)
    except (gdb.error, UnicodeDecodeError, OSError):
        return None
    return local


def _copy_of(path, build_id):
    """A copy of PATH (a /proc/PID/root/... path, which the library would
    resolve back into this namespace), named by its build-id, or None."""
    import shutil
    d = _private_dir()
    if d is None:
        return None
    local = os.path.join(d, "%s-%s" % (build_id or "nobuildid", os.path.basename(path)))
    if not os.path.exists(local):
        try:
            shutil.copyfile(path, local + ".tmp")
            os.rename(local + ".tmp", local)
        except OSError:
            return None
    return local


def target_debug_dir(name):
    """For object file NAME read through the target: a directory of ours
    that holds, as DIR/.build-id/xx/yyyy.debug, the separate debug file GDB
    read for it (from the target too: target:/usr/lib/debug/.build-id/...,
    on the target alone when it is another machine or a container), for
    the core's build-id search; None when GDB read none, or it cannot be
    had here."""
    if not name or not name.startswith(_TARGET):
        return None
    for o in gdb.objfiles():
        owner = getattr(o, "owner", None)
        if owner is None or owner.filename != name or not o.build_id or not o.filename:
            continue
        d = _private_dir()
        src = local_file(o.filename) if o.filename.startswith(_TARGET) else o.filename
        if d is None or src is None:
            return None
        top = os.path.join(d, "debug")
        dest = os.path.join(top, ".build-id", o.build_id[:2], o.build_id[2:] + ".debug")
        try:
            if not os.path.exists(dest):
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                os.symlink(os.path.abspath(src), dest)
        except OSError:
            return None
        return top
    return None


_LOCAL = {}


def local_file(name):
    """The local path of object file NAME as GDB names it: NAME itself, or
    for "target:PATH" the same file reached from here: /proc/PID/root/PATH
    (GDB in another mount namespace than the program), PATH (the same file),
    or a copy made with `remote get`; each only if its build-id is the one
    GDB read.  None if there is none."""
    if not name or not name.startswith(_TARGET):
        return name
    pid = _selected_pid()
    want = _objfile_build_id(name)
    key = (name, pid, want)
    if key in _LOCAL:
        return _LOCAL[key]
    path = name[len(_TARGET):]
    candidates = []
    if pid and os.path.isdir("/proc/%d/root" % pid):
        candidates.append("/proc/%d/root%s" % (pid, path))
    candidates.append(path)
    found = None
    for c in candidates + [None]:
        if c is None:
            c = _remote_copy(path, want)
            if c is None:
                break
        try:
            if not stat.S_ISREG(os.stat(c).st_mode):
                continue
            got = _loopscope.build_id(c)
        except (OSError, _loopscope.Error):
            continue
        if want is None or got == want:
            found = c if not c.startswith("/proc/") else _copy_of(c, got)
            break
    _LOCAL[key] = found
    return found


# ---- locations the user typed -----------------------------------------------


def _loc(path, line):
    """FILE:LINE, short form; "[no line]" for line 0 (compiler-made code,
    never shown as a line), as the CLI and perf loops print it; the file in
    GDB's file name style."""
    return "%s:%d" % (_sfile(_d(_short(path))), line) if line else "[no line]"


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
    return STYLES("function", _d(text))


def _saddr(text):
    return STYLES("address", text)


def _loop_at(loop):
    """"at FILE:LINE" of a loop, or "at [no line]", with "(part N of M)"
    when one source loop became several machine loops."""
    part = " (part %d of %d)" % (loop["part"], loop["parts"]) if loop.get("part") else ""
    return "at " + _where(loop) + part


def _loop_marks(loop):
    """The marks of a loop besides irreducible, as loopscope struct prints
    them: ", compiler-made: memcpy", ", line guessed: before-body"."""
    out = ""
    if loop.get("compiler_made"):
        out += ", compiler-made: " + loop["compiler_made"]
    if loop.get("line_guessed"):
        out += ", line guessed: " + loop["line_guessed"]
    return out


def _where(d):
    """FILE:LINE of a scope dict, short form, in GDB's file name style."""
    return _loc(d.get("file"), d.get("line"))


# ---- runtime address -> object file and bias --------------------------------


_INFO_FILES_LINE = re.compile(
    r"^\s+0x([0-9a-fA-F]+) - 0x([0-9a-fA-F]+) is (\S+)(?: in (.+))?$")


class AddressMap:
    """Where runtime addresses live: (start, end, name, bias) per section,
    NAME as GDB names the object file.

    Parsed from `info files` (the exec file's part: the main program and its
    shared libraries), refreshed when the inferior or its objfiles change."""

    def __init__(self):
        self._key = None
        self._sections = []  # (start, end, path, bias or None, section name), sorted
        self._biases = {}    # (path, section, start) -> bias, of relocatable objects
        self._elf = {}  # local path -> (identity, ({section: addr}, relocatable))

    def invalidate(self, *unused):
        self._key = None

    def _state_key(self):
        # New and cleared object files and exits invalidate the map through
        # events (register()); this notices a switch of inferior or program,
        # and a library loaded or unloaded.  It runs for every frame of a
        # backtrace.
        inf = gdb.selected_inferior()
        return (inf.num, inf.pid, _progspace_filename(), _GENERATION[0])

    def _elf_sections(self, name):
        """({section: link-time address}, relocatable) of object file NAME,
        or (None, False) if it cannot be read."""
        path = local_file(name)
        if path is None:
            return None, False
        try:
            st = os.stat(path)
            key = (st.st_mtime_ns, st.st_size)
        except OSError:
            return None, False
        if not stat.S_ISREG(st.st_mode):
            return None, False  # a FIFO would block open() for ever
        cached = self._elf.get(path)
        if cached and cached[0] == key:
            return cached[1]
        try:
            secs = _loopscope.sections(path)
            with open(path, "rb") as f:
                head = f.read(18)
            # e_type ET_REL (1), in the byte order of EI_DATA (1: little-endian)
            rel = len(head) == 18 and int.from_bytes(head[16:18], "little" if head[5] == 1 else "big") == 1
        except (OSError, _loopscope.Error):
            secs, rel = None, False
        self._elf[path] = (key, (secs, rel))
        return secs, rel

    def _refresh(self):
        key = self._state_key()
        if key == self._key:
            return
        text = _execute("info files")
        exec_file = None
        in_exec = False
        sections = []
        relocatable = set()
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
            secs, rel = self._elf_sections(path)
            if rel:
                relocatable.add(path)  # (its sections: _relocatable_sections)
            if not secs or name not in secs or rel:
                continue
            sections.append((start, end, path, start - secs[name], name))
        sections.extend(self._relocatable_sections(relocatable))
        sections.sort()
        self._sections = sections
        self._biases = {}
        self._key = key

    _MAINT_OBJFILE = re.compile(r"^Object file: `(.*)', file type")
    _MAINT_SECTION = re.compile(r"^\s*\[\s*\d+\]\s+0x([0-9a-fA-F]+)->0x([0-9a-fA-F]+) at 0x[0-9a-fA-F]+: (\S+) (.*)$")

    def _relocatable_sections(self, seen):
        """(start, end, path, None, section) of the code sections of the
        relocatable object files GDB has (add-symbol-file ext4.ko ADDR -s
        .text.unlikely ADDR2 ..., or -o BASE): GDB puts each section where
        its -s said, or lays them out its own way from ADDR or BASE; the
        analysis lays them out one after another, .text at 0.  So each
        section has its own bias, found when an address in it is asked for
        (_bias: it needs the analysis).  SEEN: those `info files` lists;
        other object files are read only if named like one."""
        rel = [name for name, _ in _objfile_names() if name and (name in seen or (
            name.endswith((".ko", ".o", ".ko.debug")) and self._elf_sections(name)[1]))]
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
            if end > start:
                out.append((start, end, path, None, name))
        return out

    def _bias(self, i):
        """The bias of section entry I (computed for a relocatable object's
        section, from its analysis); None if the analysis has no such
        section.  Raises LoopscopeError if the file cannot be analyzed."""
        start, end, path, bias, name = self._sections[i]
        if bias is not None:
            return bias
        if (path, name, start) not in self._biases:
            where = ANALYSES.get(path, quiet=True).section(name)
            self._biases[(path, name, start)] = None if where is None else start - where[0]
        return self._biases[(path, name, start)]

    def locate(self, pc):
        """(name, bias) of the object file holding runtime address PC, or None."""
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
                start, end, path = self._sections[i][:3]
                if start <= pc < end:
                    bias = self._bias(i)
                    return None if bias is None else (path, bias)
        return None

    def relocation(self, path):
        """The Relocation of object file PATH, or None if it is not mapped.
        A relocatable object's needs its analysis (LoopscopeError if none)."""
        self._refresh()
        parts = []
        for i, (start, end, p, bias, name) in enumerate(self._sections):
            if p != path:
                continue
            if bias is not None:
                return Relocation([(None, None, bias)])
            bias = self._bias(i)
            if bias is not None:
                parts.append((start - bias, end - bias, bias))
        return Relocation(parts) if parts else None

    def runtime_of(self, path, link):
        """Link-time address LINK of object file PATH at run time, or None."""
        try:
            rel = self.relocation(path)
        except LoopscopeError:
            return None
        return None if rel is None else rel.runtime(link)

    def paths(self):
        """Every mapped object file, the main program first."""
        self._refresh()
        seen = []
        main = _progspace_filename()
        for p in [main] + [sec[2] for sec in self._sections]:
            if p and p not in seen:
                seen.append(p)
        return seen


class Relocation:
    """Where an object file's link-time addresses are at run time: one bias
    for all (a program, a library, vmlinux), or one per section (a
    relocatable object: PARTS are (link start, link end, bias) then)."""

    def __init__(self, parts):
        self.parts = sorted(parts, key=lambda p: (p[0] is not None, p[0]))

    def runtime(self, link):
        for lo, hi, bias in self.parts:
            if lo is None or lo <= link < hi:
                return link + bias
        return link + self.parts[0][2]  # (not in a code section GDB has: the first's)

    def link(self, pc):
        for lo, hi, bias in self.parts:
            if lo is None or lo <= pc - bias < hi:
                return pc - bias
        return pc - self.parts[0][2]


# ---- analyses, one per object file --------------------------------------------


class Analyses:
    """_loopscope.Module per object file, keyed by build-id (path and mtime
    when there is none).  Failures are remembered too, so that `bt` does not
    retry a hopeless file on every frame.  The file's identity (device,
    inode, size, mtime) is checked against the analyzed one once per stop of
    the program: a file rebuilt or truncated since is analyzed again, never
    read through what was mapped of the old one."""

    def __init__(self):
        self._by_key = {}
        self._key_of_path = {}
        self._identity = {}  # key -> the file's identity when analyzed
        self._checked = {}   # path -> key, checked since the last stop

    @staticmethod
    def identity(path):
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def _key(self, name, path):
        bid = _objfile_build_id(name)
        if bid:
            return "build-id:" + bid
        ident = self.identity(path)
        return "file:%s:%s" % (os.path.realpath(path), ident) if ident else "file:" + path

    def get(self, name, quiet=False):
        """The analysis of object file NAME (as GDB names it); raises
        LoopscopeError if it cannot be analyzed.  QUIET: do not print its
        warnings (in the middle of a backtrace)."""
        got = self._checked.get(name)
        if got is not None:
            if isinstance(got, LoopscopeError):
                raise got
            return got
        path = local_file(name)
        if path is None:
            err = LoopscopeError("cannot analyze %s: GDB reads it through the target, and no local file "
                                 "with its build-id was found (not in /proc/PID/root, not at the same "
                                 "path, no `remote get`)" % _d(name))
            self._checked[name] = err
            raise err
        key = self._key_of_path.get(name)
        if key is None:
            key = self._key(name, path)
            self._key_of_path[name] = key
        got = self._by_key.get(key)
        ident = self.identity(path)
        if got is not None and self._identity.get(key) != ident:
            if not isinstance(got, LoopscopeError) and not quiet:
                _write("loopscope: %s changed on disk since it was analyzed; analyzing it again\n" % _d(name),
                       gdb.STDERR)
            got = None
        if got is None:
            got = self._analyze(name, path, quiet)
            self._by_key[key] = got
            self._identity[key] = ident
        self._checked[name] = got
        if isinstance(got, LoopscopeError):
            raise got
        return got

    @staticmethod
    def _analyze(name, path, quiet):
        try:
            # Ctrl-C (KeyboardInterrupt) goes through: nothing is
            # remembered, the next use starts the analysis again.
            progress = Progress(name)
            debug_path = loopscope_settings.debug_file_path()
            fetched = target_debug_dir(name)
            if fetched:
                debug_path = (debug_path or ":.debug") + ":" + fetched
            try:
                got = _loopscope.Module(path, cache=loopscope_settings.use_cache(),
                                        debug_file_path=debug_path, progress=progress)
            except KeyboardInterrupt:
                progress.end(interrupted=True)
                raise
            progress.end()
            if not quiet:
                _print_warnings(got)
            return got
        except _loopscope.Error as e:
            return LoopscopeError("cannot analyze %s" % _d(e.args[0]) if e.args else _d(name))

    def stopped(self, *unused):
        """The program ran: files may have changed; check them again."""
        self._checked.clear()

    def entries(self):
        return list(self._by_key.items())

    def has(self, path):
        key = self._key_of_path.get(path)
        return key is not None and key in self._by_key

    def clear(self):
        """Drop every analysis (the debug directories changed)."""
        _GENERATION[0] += 1  # (what was found with them goes too)
        self._by_key.clear()
        self._key_of_path.clear()
        self._checked.clear()

    def forget(self, *unused):
        # Object files may be rebuilt between runs: look their keys up again.
        self._key_of_path.clear()
        self._checked.clear()


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
        gdb.write("\rloopscope: analyzing %s...%s\033[K" % (_d(self.path), pct), gdb.STDERR)
        gdb.flush()
        self.shown = True

    def end(self, interrupted=False):
        if self.shown:
            gdb.write("\r\033[K", gdb.STDERR)
        if interrupted:
            _write("loopscope: analysis of %s interrupted; it starts again on next use\n" % _d(self.path),
                   gdb.STDERR)


def _stderr_is_tty():
    try:
        return os.isatty(2)
    except OSError:
        return False


def _print_warnings(module):
    for w in module.warnings[:5]:
        _write("loopscope: warning: %s\n" % _d(w), gdb.STDERR)
    if len(module.warnings) > 5:
        _write("loopscope: ... and %d more warnings\n" % (len(module.warnings) - 5), gdb.STDERR)


ADDRESSES = AddressMap()
ANALYSES = Analyses()


class Place:
    """A runtime address resolved: object file (as GDB names it), bias,
    link-time address, and the lookup object of the core (obj: addr,
    module, chain, cut, depth, error)."""

    def __init__(self, pc, quiet=False, obj=None):
        self.pc = pc
        where = ADDRESSES.locate(pc)
        if where is None:
            raise LoopscopeError("address %s is not in any object file GDB has loaded" % _hex(pc))
        self.path, self.bias = where  # (the bias of the section holding pc)
        self.link = pc - self.bias
        self.module = ANALYSES.get(self.path, quiet)
        self.relocation = ADDRESSES.relocation(self.path)
        # A file rebuilt while GDB (or the process) holds the old one: its
        # structure is not the program's, whatever the addresses say.
        in_gdb = _objfile_build_id(self.path)
        on_disk = self.module.build_id
        if in_gdb and on_disk and in_gdb != on_disk:
            raise LoopscopeError(
                "%s is not the file GDB loaded: its build-id is %s on disk and %s in GDB (rebuilt "
                "since?); run `file %s` (and the program again) to load the new one"
                % (_d(self.path), on_disk, in_gdb, _d(self.path)))
        self.obj = obj if obj is not None else _chain_of(self.module, self.link)
        self.chain = self.obj["chain"]
        self.depth = self.obj["depth"]

    @classmethod
    def at(cls, pc, quiet=False):
        """Place(pc), from the places of the current stop when it is there."""
        key = (gdb.selected_inferior().num, pc)
        got = PLACES.get(key)
        if got is None:
            got = cls(pc, quiet)
            PLACES[key] = got
        return got

    def loops(self):
        return [s for s in self.chain if s["kind"] == "loop"]

    def innermost_loop(self):
        loops = self.loops()
        return loops[-1] if loops else None

    def runtime(self, link_addr):
        """LINK_ADDR at run time, through its own section's bias (a .ko's
        .text.unlikely is not where its .text is)."""
        return self.relocation.runtime(link_addr)

    def link_of(self, pc):
        """Runtime address PC of this object file at link time."""
        return self.relocation.link(pc)

    def proc(self):
        return self.chain[0] if self.chain and self.chain[0]["kind"] == "proc" else None

    def why_poor(self):
        """Why the chain is thin, or None."""
        if not self.module.has_dwarf:
            return ("%s has no debug information (stripped?): only procedures and loops "
                    "from machine code are known, without source lines or inlined calls"
                    % _d(self.path))
        return None


# The chain of a link-time address does not change while its analysis
# lives: kept per analysis (a bounded memo), so that a backtrace after the
# next stop at the same code looks nothing up again.
_CHAINS = {}
_CHAINS_MAX = 1 << 16


def _chain_of(module, link):
    memo = _CHAINS.get(id(module))
    if memo is None or memo[0] is not module:
        if len(_CHAINS) > 64:
            _CHAINS.clear()
        memo = _CHAINS[id(module)] = (module, {})
    got = memo[1].get(link)
    if got is None:
        if len(memo[1]) >= _CHAINS_MAX:
            memo[1].clear()
        got = memo[1][link] = module.chain(link)
    return got


# Places of the current stop, by (inferior, pc): a backtrace or a TUI redraw
# after the first costs a dict lookup.  Emptied whenever the program may have
# changed.
PLACES = {}


def _forget_places(*unused):
    PLACES.clear()


def command_start():
    """What every loopscope command does first: GDB's styles as they are
    now, and the analyzed files checked again (they may have been rebuilt
    while GDB sat at its prompt)."""
    STYLES.refresh()
    ANALYSES.stopped()
    PLACES.clear()


def unresolved_note(proc):
    """The words about PROC's indirect jumps that could not be resolved, or None."""
    n = proc.get("unresolved_jumps", 0) if proc else 0
    if not n:
        return None
    return ("%s has %d indirect jump%s that could not be resolved (a jump table?): its loops "
            "may be incomplete" % (_d(proc.get("name") or "??"), n, "" if n == 1 else "s"))


# ---- frames -----------------------------------------------------------------


# Frames of the current stop: (thread, level, pc) -> (lookup pc, inline
# depth), found for a whole physical frame at once (its inline frames
# share it): a backtrace walks each frame once instead of once per frame
# it asks about (frame.older() and .newer() cost microseconds each).
_SHAPES = {}


def _forget_shapes(*unused):
    _SHAPES.clear()


def _shape_key(frame):
    thread = gdb.selected_thread()
    return (thread.global_num if thread else 0, frame.level(), frame.pc())


def _frame_shape(frame):
    """(lookup pc, inline depth) of FRAME: see _lookup_pc and _inline_depth."""
    key = _shape_key(frame)
    got = _SHAPES.get(key)
    if got is not None:
        return got
    pc = frame.pc()
    group = [frame]  # the frames of this physical frame, newest first
    while True:
        n = group[0].newer()
        if n is None or n.type() != gdb.INLINE_FRAME or n.pc() != pc:
            break
        group.insert(0, n)
    newer = group[0].newer()
    lookup = pc if newer is None or newer.type() == gdb.SIGTRAMP_FRAME else pc - 1
    f = frame
    while f is not None and f.type() == gdb.INLINE_FRAME:
        f = f.older()
        if f is not None:
            group.append(f)
    depth = len(group) - 1 if group[-1].type() != gdb.INLINE_FRAME else len(group)
    for i, g in enumerate(group):
        _SHAPES[(key[0], g.level(), g.pc())] = (lookup, max(depth - i, 0))
    return _SHAPES[key]


def _lookup_pc(frame):
    """The pc to look FRAME up at: a caller's pc is a return address, which may
    already be past the call's scope (the last instruction of a loop), so its
    call instruction (pc - 1) is looked up instead, as GDB does for blocks."""
    return _frame_shape(frame)[0]


def _inline_depth(frame):
    """How many inline levels FRAME is below its physical frame's procedure."""
    return _frame_shape(frame)[1]


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


def enclosing_loops(chain, k):
    """The loops around inline level K's code, outermost first: those of its
    own part of CHAIN and of every level it is inlined into (an inlined
    call made inside a loop runs inside that loop)."""
    level = 0
    out = []
    for s in chain:
        if s["kind"] == "inline":
            level += 1
            if level > k:
                break
        elif s["kind"] == "loop":
            out.append(s)
    return out


def _selected_frame_or_none():
    try:
        return gdb.selected_frame()
    except gdb.error:
        return None


def _eval_address(expr, command):
    try:
        val = gdb.parse_and_eval(expr)
        return int(val.cast(gdb.lookup_type("unsigned long")))
    except gdb.error as e:
        raise LoopscopeError("%s: %s" % (command, e))


def _pc_of_location(arg, command):
    """Runtime addresses of LOCATION (list of (pc, label)), which
    loopscope_args checked; the selected frame's pc when ARG is empty."""
    if not arg:
        frame = _selected_frame_or_none()
        if frame is None:
            raise LoopscopeError(
                "%s: no process, no core file and no LOCATION: give one "
                "(FUNCTION, FILE:LINE or *ADDRESS), or start the program" % command)
        return [(_lookup_pc(frame), "frame #%d" % frame.level())]
    if re.match(r"^(0[xX][0-9a-fA-F]+)$", arg):
        return [(int(arg, 16), arg)]
    if arg.startswith("*"):  # an expression: never through decode_line (see loopscope_args)
        return [(_eval_address(arg[1:], command), arg)]
    if args.offset_expression(arg):  # FUNCTION+OFFSET: an expression too
        return [(_eval_address(args.as_expression(arg), command), arg)]
    try:
        rest, sals = gdb.decode_line(arg)
    except gdb.error as e:
        try:  # an expression that is not a linespec: ktime_get+26
            val = gdb.parse_and_eval(arg)
            return [(int(val.cast(gdb.lookup_type("unsigned long"))), arg)]
        except gdb.error:
            raise LoopscopeError("%s: %s" % (command, e))
    if rest:
        raise LoopscopeError("%s: junk after the location: %s" % (command, _d(rest)))
    pcs = []
    for sal in sals or ():
        if sal.pc and (sal.pc, arg) not in pcs:
            pcs.append((sal.pc, arg))
    if not pcs:
        raise LoopscopeError("%s: %s has no code address" % (command, _d(arg)))
    return pcs


# ---- structure ----------------------------------------------------------------


_SURROGATE = re.compile("[\udc80-\udcff]")


def json_text(obj):
    """OBJ as compact JSON, characters as they are, except a byte that is
    not UTF-8 (a surrogate escape), which becomes the escape \\udcXX
    (json.loads and os.fsencode give the byte back) instead of U+FFFD."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return _SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group(0)), text)


def scope_json(s):
    """A scope of a chain with the fields, in the order, of the lookup JSON
    (libloopscope's ls_write_chain_json)."""
    kind = s["kind"]
    d = {"kind": kind}
    if kind == "proc":
        d["name"] = s.get("name")
        if s.get("unresolved_jumps"):
            d["unresolved_jumps"] = s["unresolved_jumps"]
    elif kind == "inline":
        d["name"] = s.get("name")
        d["call_file"] = s.get("call_file")
        d["call_line"] = s.get("call_line") or None
    d["file"] = s.get("file")
    d["line"] = s.get("line") or None  # null, not 0, as the CLI's JSON
    if kind == "loop":
        d["header"] = _hex(s["header"])
        d["depth"] = s["depth"]
        d["irreducible"] = s["irreducible"]
        # The marks, when they apply, as ls_write_chain_json writes them.
        for k in ("compiler_made", "line_guessed"):
            if s.get(k):
                d[k] = s[k]
        if s.get("part"):
            d["part"] = s["part"]
            d["parts"] = s["parts"]
    return d


def chain_json(place):
    """The lookup object of design.md (what `loopscope lookup --json` prints),
    every field of it, plus the runtime "pc"."""
    obj = place.obj
    module = obj["module"] if not place.path.startswith(_TARGET) else place.path  # (not our copy's name)
    out = {"addr": _hex(obj["addr"]), "pc": _hex(place.pc), "module": module,
           "chain": [scope_json(s) for s in obj["chain"]]}
    if obj["cut"]:
        out["cut"] = obj["cut"]
    if obj["error"]:
        out["error"] = obj["error"]
    return out


def _gdb_line(pc, stmt):
    """GDB's line at PC when GDB names the same file as STMT (GDB takes the
    is_stmt row where several share the address; the core, as addr2line,
    the last one); else STMT's own line."""
    try:
        sal = gdb.find_pc_line(pc)
        if sal.symtab is not None and sal.line:
            full = _host_bytes_as_str(sal.symtab.fullname)
            if full and stmt.get("file") and (full == stmt["file"] or _short(full) == _short(stmt["file"])):
                return sal.line
    except (gdb.error, RuntimeError):
        pass
    return stmt.get("line")


def format_chain(place):
    lines = []
    if place.bias:
        lines.append("%s is %s+%s:" % (_saddr(_hex(place.pc)), _sfile(_d(place.path)), _hex(place.link)))
    else:
        lines.append("%s in %s:" % (_saddr(_hex(place.pc)), _sfile(_d(place.path))))
    if not place.chain:
        lines.append("  not inside any procedure loopscope knows")
    for i, s in enumerate(place.chain):
        kind = s["kind"]
        if i == len(place.chain) - 1 and place.depth > len(place.chain):
            lines.append("  ...     %d deeper scopes cut (the chain is %d deep)"
                         % (place.depth - len(place.chain), place.depth))
        if kind == "proc":
            note = "  (%d unresolved indirect jump%s: loops may be incomplete)" % (
                s["unresolved_jumps"], "" if s["unresolved_jumps"] == 1 else "s") if s.get("unresolved_jumps") else ""
            lines.append("  proc    %s%s%s" % (_sfunc(s.get("name") or "??"),
                                              "  at " + _where(s) if s.get("file") else "", note))
        elif kind == "inline":
            lines.append("  inline  %s  called at %s  (defined at %s)" % (
                _sfunc(s.get("name") or "??"), _loc(s.get("call_file"), s.get("call_line")), _where(s)))
        elif kind == "loop":
            extra = ""
            if s["irreducible"]:
                extra = "  irreducible, %d entries" % len(s["entries"])
            if _loop_marks(s):
                extra += "  " + _loop_marks(s)[2:]
            lines.append("  loop    %s  header %s  depth %d%s" % (
                _loop_at(s), _saddr(_hex(place.runtime(s["header"]))), s["depth"], extra))
        elif kind == "alien":
            lines.append("  alien   code from %s" % _where(s))
        elif kind == "stmt":
            lines.append("  stmt    %s" % _loc(s.get("file"), _gdb_line(place.pc, s)))
        else:
            lines.append("  %-7s %s" % (kind, _where(s)))
    if place.chain and not place.loops():
        lines.append("  (not in any loop)")
    why = place.why_poor()
    if why:
        lines.append("  note: " + why)
    return "\n".join(lines)


STRUCTURE_ARGS = args.Spec("structure", {"-json": None, "-data": None}, location="location")

ACCESS_FIELDS = ("operand", "kind", "width", "indexed", "rule", "variable", "type", "offset", "field",
                 "field_type", "bitfield", "expr")


def data_json(place, accesses):
    """What `loopscope lookup --data --json` prints for the place, plus the
    runtime "pc" (and "before" on an access taken from before the pc)."""
    module = place.obj["module"] if not place.path.startswith(_TARGET) else place.path
    out = []
    for a in accesses:
        d = {k: a[k] for k in ACCESS_FIELDS}
        if a.get("before"):
            d["addr"], d["before"] = _hex(a["addr"]), True
        out.append(d)
    return {"addr": _hex(place.link), "pc": _hex(place.pc), "module": module, "accesses": out}


def format_data(place, accesses):
    """The accesses at PLACE, one line each: kind, width, operand, the C
    expression, and the type +offset (field: its type) with the rule."""
    lines = [format_chain(place).split("\n")[0]]
    if not accesses:
        lines.append("  no memory access at this instruction, nor before it in its basic block")
    for a in accesses:
        where = ""
        if a.get("before"):
            where = "  (at %s: the last access before the pc in its block)" % _saddr(_hex(place.runtime(a["addr"])))
        if a["variable"] is None:
            what = "no variable found"
        else:
            field = " (%s: %s%s)" % (a["field"], a["field_type"], ", bit-field" if a["bitfield"] else "") \
                if a["field"] else ""
            what = "%s  %s +%d%s" % (_d(a["expr"]), _d(a["type"]), a["offset"], _d(field))
        lines.append("  %-10s %2s  %-22s %s  [%s]%s" % (
            a["kind"], a["width"] or "?", a["operand"], what, a["rule"], where))
    return "\n".join(lines)


class StructureCommand(gdb.Command):
    """Show the static scope chain of a code address, as loopscope recovered it.

Usage: structure [-json] [-data] [LOCATION]

LOCATION is a linespec (FUNCTION, FILE:LINE, *ADDRESS) or an address; it
defaults to the pc of the selected frame.  The chain runs from the procedure
through inlined calls (with their call sites) and loops (source line, header
address, depth) down to the statement (its line as GDB gives it).  Works on a
live process, a core file and an executable alone.  With -json, print the
chain as `loopscope lookup --json` does (link-time "addr", every field), plus
the runtime "pc"; a byte of a name that is not UTF-8 is written \\udcXX.
With -data, list the memory accesses of the instruction at LOCATION instead
(when it has none, the last one before it in its basic block: the one that
ran just before a stop there): load or store, width, operand, the variable,
its type, offset and field, and the rule that decided, as `loopscope lookup
--data` does (with -json, its JSON plus "pc")."""

    def __init__(self):
        super().__init__("structure", gdb.COMMAND_DATA)

    def complete(self, text, word):
        return args.complete(STRUCTURE_ARGS, text, word)

    def invoke(self, arg, from_tty):
        parsed = args.parse(STRUCTURE_ARGS, arg)
        command_start()
        for pc, label in _pc_of_location(parsed.location, "structure"):
            place = Place.at(pc)
            if parsed.has("-data"):
                try:
                    accesses = place.module.accesses(place.link, before=True)
                except _loopscope.Error as e:
                    raise LoopscopeError("structure -data: %s" % _d(str(e)))
                if parsed.has("-json"):
                    _write(json_text(data_json(place, accesses)) + "\n")
                else:
                    _write(format_data(place, accesses) + "\n")
            elif parsed.has("-json"):
                _write(json_text(chain_json(place)) + "\n")
            else:
                _write(format_chain(place) + "\n")


# ---- info loops -------------------------------------------------------------------


def _unquoted(name):
    """NAME without one pair of enclosing quotes ('ns::f(int)' -> ns::f(int))."""
    if len(name) >= 2 and name[0] in "'\"" and name[-1] == name[0]:
        return name[1:-1]
    return name


def _function_pc(name):
    """A runtime address inside function NAME, from GDB's symbols.  NAME is
    *EXPRESSION, or a name loopscope_args.is_function_name takes: GDB 13's
    symbol lookup aborts on some others (see there)."""
    if name.startswith("*"):
        try:
            return int(gdb.parse_and_eval(name[1:]).cast(gdb.lookup_type("unsigned long")))
        except gdb.error:
            return None
    if not args.is_function_name(name):
        return None
    bare = _unquoted(name)
    try:
        sym = gdb.lookup_symbol(bare)[0]
    except gdb.error:
        sym = None
    if sym is None:
        try:
            sym = gdb.lookup_global_symbol(bare) or gdb.lookup_static_symbol(bare)
        except gdb.error:
            sym = None
    if sym is not None and sym.addr_class == gdb.SYMBOL_LOC_BLOCK:
        return int(sym.value().address.cast(gdb.lookup_type("unsigned long")))
    try:  # a minimal symbol (no debug information)
        expr = "&'%s'" % bare if args.is_clone_name(name) else "&%s" % name
        val = gdb.parse_and_eval(expr)
        return int(val.cast(gdb.lookup_type("unsigned long")))
    except gdb.error:
        pass
    # As a linespec, only if GDB's lexer takes all of it (see loopscope_args).
    if name.startswith("*") or args.linespec_end(name) != len(name):
        return None
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
            hit = ANALYSES.get(path).symbol(_unquoted(name))
        except (gdb.GdbError, _loopscope.Error):
            continue
        if hit is not None:
            pc = ADDRESSES.runtime_of(path, hit[0])
            return hit[0] if pc is None else pc
    return None


def _loop_lines(node, runtime, indent, out, inline_note=None):
    """The loops under NODE as `info loops` lines; RUNTIME(link) gives a
    link-time address's runtime one."""
    for c in node.get("children", ()):
        kind = c["kind"]
        if kind == "loop":
            extra = ""
            if c["irreducible"]:
                extra = ", irreducible: %d entries %s" % (
                    len(c["entries"]), " ".join(_hex(runtime(e)) for e in c["entries"]))
            extra += _loop_marks(c)
            out.append("%sloop %s  header %s  depth %d  (%d exit%s, %d back edge%s%s)" % (
                "  " * indent, _loop_at(c), _saddr(_hex(runtime(c["header"]))), c["depth"],
                len(c["exits"]), "" if len(c["exits"]) == 1 else "s",
                len(c["backedges"]), "" if len(c["backedges"]) == 1 else "s", extra))
            _loop_lines(c, runtime, indent + 1, out)
        elif kind in ("inline", "alien"):
            sub = []
            _loop_lines(c, runtime, indent + 1, sub)
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
    """[(path, runtime, host proc dict, inline dict)] of every inlined call of
    function NAME, in the main program and the object files analyzed so
    far, and whether NAME is also a procedure of its own there."""
    found, own = [], False
    bare = _unquoted(name)
    for path in ADDRESSES.paths():
        if path != _progspace_filename() and not ANALYSES.has(path):
            continue  # analyzing every library to find one name costs too much
        try:
            module = ANALYSES.get(path)
            own = own or module.symbol(bare) is not None
        except (gdb.GdbError, _loopscope.Error):
            continue
        rel = ADDRESSES.relocation(path) or Relocation([(None, None, 0)])
        found += [(path, rel.runtime, proc, inl) for proc, inl in module.inlined(bare)]
    return found, own


def _write_instances(instances, name, only_inlined):
    """The loops of each inlined call of NAME, under its host procedure and
    call site; calls whose code holds no loop are counted, not listed."""
    with_loops = [i for i in instances if _count_loops(i[3])]
    n = sum(_count_loops(i[3]) for i in with_loops)
    head = "%s exists only inlined" % _d(name) if only_inlined else "%s is also inlined" % _d(name)
    _write("%s: %d inlined call%s, %d with loops (%d loop%s):\n" % (
        head, len(instances), "" if len(instances) == 1 else "s", len(with_loops), n, "" if n == 1 else "s"))
    for path, runtime, proc, inl in with_loops:
        _write("  in %s%s, %s called at %s:\n" % (
            _sfunc(proc.get("name") or "??"), " (%s)" % _d(path) if path != _progspace_filename() else "",
            _sfunc(inl.get("name") or name), _loc(inl.get("call_file"), inl.get("call_line"))))
        out = []
        _loop_lines(inl, runtime, 2, out)
        _write("\n".join(out) + "\n")
    notes = set(unresolved_note(i[2]) for i in instances) - {None}
    for note in sorted(notes):
        _write("note: %s\n" % note)


def function_proc(name, command):
    """(pc, Place, proc dict with its subtree) of function NAME, or of the
    selected frame's function when NAME is empty."""
    if name:
        pc = _function_pc(name)
        if pc is None:
            pc = _loopscope_symbol_pc(name)
        if pc is None:
            raise LoopscopeError("%s: no function named %s" % (command, _d(name)))
    else:
        frame = _selected_frame_or_none()
        if frame is None:
            raise LoopscopeError("%s: no process and no FUNCTION given: name a function" % command)
        pc = _lookup_pc(frame)
    place = Place.at(pc)
    proc = place.module.proc_at(place.link)
    if proc is None:
        raise LoopscopeError("%s: %s (%s) is not inside any procedure loopscope knows%s" % (
            command, _d(name) or _hex(pc), _hex(place.link),
            "; " + place.why_poor() if place.why_poor() else ""))
    return pc, place, proc


INFO_LOOPS_ARGS = args.Spec("info loops", location="function")


class InfoLoopsCommand(gdb.Command):
    """List the loop nest of a function, as loopscope recovered it from machine code.

Usage: info loops [FUNCTION]

FUNCTION defaults to the function of the selected frame.  Each loop shows its
source line, header address, nesting depth, its exits and back edges; loops
that come from an inlined callee are listed under that inlined call.  For a
FUNCTION that exists only inlined, the loops of every inlined call of it are
listed, each under its host procedure and call site (and, for a FUNCTION
that is a procedure and is inlined too, after the procedure's own).  A
function with an indirect jump loopscope could not resolve (a jump table it
could not read) is said to have loops that may be incomplete."""

    def __init__(self):
        super().__init__("info loops", gdb.COMMAND_STATUS)

    def complete(self, text, word):
        return args.complete(INFO_LOOPS_ARGS, text, word)

    def invoke(self, arg, from_tty):
        name = args.parse(INFO_LOOPS_ARGS, arg).location
        command_start()
        instances = []
        if name:
            instances, own = _inlined_instances(name)
            if instances and not own:
                _write_instances(instances, name, True)
                return
        pc, place, proc = function_proc(name, "info loops")
        n = _count_loops(proc)
        head = "%s%s in %s" % (_sfunc(proc.get("name") or "??"), " (%s)" % _where(proc) if proc.get("file") else "",
                               _sfile(_d(place.path)))
        if n == 0:
            _write("%s has no loops%s.\n" % (head, " loopscope could find" if proc.get("unresolved_jumps") else ""))
        else:
            _write("%d loop%s in %s:\n" % (n, "" if n == 1 else "s", head))
            out = []
            _loop_lines(proc, place.runtime, 1, out)
            _write("\n".join(out) + "\n")
        if name and instances:
            _write_instances(instances, name, False)
        for note in (unresolved_note(proc), place.why_poor()):
            if note:
                _write("note: " + note + "\n")


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


_SAME_FILE = {}


def _same_file_as_frame(frame, path, sal=None):
    """PATH as GDB names the frame's file when it is that file (so both lines
    of a frame read alike), else PATH itself; escaped.  SAL: the frame's, if
    the caller has it."""
    try:
        symtab = (sal or frame.find_sal()).symtab
        if symtab is None or not path:
            return _d(path)
        name = _host_bytes_as_str(lambda: symtab.filename)
        key = (path, name)
        got = _SAME_FILE.get(key)
        if got is None:
            full = _host_bytes_as_str(symtab.fullname)
            # (normalized; with a relative DW_AT_comp_dir, as glibc's ./nptl,
            # GDB 13's full name joins it with DWARF directory 0, which is
            # the compilation directory itself: "./nptl/./nptl/x.c", where
            # the library's path is nptl/x.c, GDB's file name's)
            norm = os.path.normpath(path)
            same = (bool(full) and os.path.normpath(full) == norm) or (
                bool(name) and not os.path.isabs(name) and os.path.normpath(name) == norm)
            got = _SAME_FILE[key] = _d(name if same else path)
            if len(_SAME_FILE) > 4096:
                _SAME_FILE.clear()
        return got
    except (gdb.error, RuntimeError):
        return _d(path)


# GDB 13's MI printer of frame-filter arguments loops for ever on an argument
# whose symbol MI does not print (an optimized-out one: sum_row's
# row=<optimized out>): enumerate_args `continue`s before taking the next
# argument.  Such an argument goes by name instead (GDB then asks nothing
# of its symbol); the value is the same.
_MI_SKIPPED = {getattr(gdb, "SYMBOL_LOC_" + n) for n in (
    "UNDEF", "CONST", "TYPEDEF", "LABEL", "BLOCK", "CONST_BYTES", "UNRESOLVED", "OPTIMIZED_OUT")
    if hasattr(gdb, "SYMBOL_LOC_" + n)}


def _mi_skips(sym):
    return isinstance(sym, gdb.Symbol) and sym.addr_class in _MI_SKIPPED


class _NamedArg:
    def __init__(self, sym, frame):
        self._sym, self._frame = sym, frame

    def symbol(self):
        return self._sym.print_name

    def value(self):
        try:
            return self._frame.read_var(self._sym)
        except (gdb.error, ValueError, RuntimeError):
            return self._sym.value(self._frame) if self._sym.needs_frame else self._sym.value()


class _LoopArg:
    """One "NAME=VALUE" of the loop line (the frame-filter argument protocol)."""

    def __init__(self, name, value):
        self._name, self._value = name, value

    def symbol(self):
        return self._name

    def value(self):
        return self._value


_void_ptr = None
_HEADERS = {}  # runtime header address -> the gdb.Value that prints it


def _as_pointer(addr):
    global _void_ptr
    if _void_ptr is None:
        _void_ptr = gdb.lookup_type("void").pointer()
    return gdb.Value(addr).cast(_void_ptr)


class LoopLineDecorator(FrameDecorator):
    """The elided line "in loop (depth=D, header=0x...) at FILE:LINE"."""

    def __init__(self, fobj, loop, place, sal=None):
        super().__init__(fobj)
        self._loop, self._place, self._sal = loop, place, sal

    def function(self):
        return "in loop"

    def address(self):
        return None

    def filename(self):
        if not self._loop.get("file"):
            return None
        return _same_file_as_frame(self.inferior_frame(), self._loop["file"], self._sal)

    def line(self):
        return self._loop.get("line") if self._loop.get("file") else None

    def frame_args(self):
        loop = self._loop
        addr = self._place.runtime(loop["header"])
        header = _HEADERS.get(addr)
        if header is None:
            if len(_HEADERS) > 4096:
                _HEADERS.clear()
            header = _HEADERS[addr] = _as_pointer(addr)
        args_ = [_LoopArg("depth", loop["depth"]), _LoopArg("header", header)]
        if loop["irreducible"]:
            args_.append(_LoopArg("entries", len(loop["entries"])))
        return args_

    def frame_locals(self):
        return None

    def elided(self):
        return None


# The loop of a frame is a function of its lookup pc and inline depth, in
# one process and one set of object files: kept across stops (stepping
# through a loop shows the same frames again and again).  Emptied when
# object files change (_GENERATION) and bounded.
_LOOP_MEMO = {}


def loop_of(frame, shape=None):
    """(innermost loop of FRAME's own inline level or None, Place): as
    frame_loop, from SHAPE ((lookup pc, inline depth), when the caller
    knows it) and the memo."""
    lookup, depth = shape if shape is not None else _frame_shape(frame)
    inf = gdb.selected_inferior()
    key = (inf.num, inf.pid, lookup, depth, _GENERATION[0])
    got = _LOOP_MEMO.get(key)
    if got is None:
        place = Place.at(lookup, quiet=True)
        loops = [s for s in _segment(place.chain, depth) if s["kind"] == "loop"]
        got = (loops[-1] if loops else None, place)
        if len(_LOOP_MEMO) >= 1 << 16:
            _LOOP_MEMO.clear()
        _LOOP_MEMO[key] = got
    return got


def _shaped(frame_iter):
    """The frames of a backtrace decorated, each with its (lookup pc, inline
    depth) found from its neighbours in the stream (the inline frames of a
    physical frame come before it): no frame is walked twice."""
    known = _facts_context()
    group, before, first = [], None, True
    for d in frame_iter:
        try:
            f = d.inferior_frame()
            t = f.type()
        except (gdb.error, RuntimeError):
            for gd, gf, gt in group:
                yield LoopFrameDecorator(gd)
            group, first = [], False
            yield LoopFrameDecorator(d)
            continue
        group.append((d, f, t))
        if t == gdb.INLINE_FRAME:
            continue
        if first:  # (not kept: see _FACTS)
            newest = group[0][1]
            lookup = newest.pc() if newest.level() == 0 else None
            for i, (gd, gf, gt) in enumerate(group):
                yield LoopFrameDecorator(gd, None if lookup is None else (lookup, len(group) - 1 - i), gf, gt)
            before, group, first = t, [], False
            continue
        pc = group[0][1].pc()  # (the same for each frame of the group)
        lookup = pc if before == gdb.SIGTRAMP_FRAME else pc - 1
        depth = len(group)
        for gd, gf, gt in group:
            depth -= 1
            facts = None if known is None else _facts_of(gd, gf, gt, pc, lookup, depth, known)
            yield LoopFrameDecorator(gd, (lookup, depth), gf, gt) if facts is None else _KnownFrame(gd, gf, facts)
        before, group = t, []
    for gd, gf, gt in group:
        yield LoopFrameDecorator(gd, None, gf, gt)


# What a frame's lines print (function, file, line, which arguments, its
# loop line) is a function of its pc, lookup pc, inline depth and type
# while the object files and `print demangle` stay: kept across stops, so
# that the first `bt` after a stop asks GDB for no name, symtab or block of
# a frame it has shown before (those calls were most of the extension's
# cost: bench/README.md, issue 27).  Not for the newest physical frame and
# its inline frames: what GDB shows there also depends on the inline
# frames it skipped at a breakpoint (thread state, not the pc).
_FACTS = {}  # context (_facts_context) -> {(pc, lookup pc, inline depth, type): _Facts}
_FACTS_MAX = 1 << 14


def _forget_facts(*unused):
    _FACTS.clear()


def _facts_context():
    """The facts kept for this backtrace's frames: those found under what
    they also depend on (inferior, object files, settings); None if that
    is not known, or under MI (its file names are full paths, which
    `set substitute-path` and `directory` change without an event)."""
    if loopscope_settings.MI_SESSION:
        return None
    try:
        inf = gdb.selected_inferior()
        ctx = (inf.num, inf.pid, _GENERATION[0], bool(gdb.parameter("print demangle")),
               gdb.host_charset())
    except (gdb.error, RuntimeError):
        return None
    got = _FACTS.get(ctx)
    if got is None:
        if len(_FACTS) >= 16:
            _FACTS.clear()
        got = _FACTS[ctx] = {}
    return got


def _facts_of(base, frame, ftype, pc, lookup, depth, known):
    """The facts of FRAME (BASE: GDB's decorator of it, plain; PC, its
    LOOKUP pc and inline DEPTH known), from KNOWN (_facts_context()) or
    found now; None when they cannot be kept."""
    if type(base) is not FrameDecorator:  # another filter's decorator
        return None
    key = (pc, lookup, depth, ftype)
    got = known.get(key)
    if got is None:
        got = _Facts.of(LoopFrameDecorator(base, (lookup, depth), frame, ftype))
        if got is None:
            return None
        if len(known) >= _FACTS_MAX:
            known.clear()
        known[key] = got
    return got


def _frame_arg_symbols(frame):
    """FRAME's arguments as FrameDecorator gives them: symbols whose values
    GDB reads in the frame it prints (so the same list serves any frame
    at the same code)."""
    return gdb.FrameDecorator.FrameVars(frame).fetch_frame_args()


def _frame_args(got, frame):
    """The frame_args answer for FRAME from its argument symbols GOT."""
    if got is None or not loopscope_settings.MI_SESSION:  # (the loop is MI's alone)
        return got
    return [_NamedArg(a.symbol(), frame) if _mi_skips(a.symbol()) else a for a in got]


class _Facts:
    __slots__ = ("pc", "function", "filename", "line", "args", "loop_line")

    @classmethod
    def of(cls, dec):
        """The facts of decorator DEC's frame, asked of GDB; None when they
        cannot be had (its loop is not known: an analysis that failed is
        tried again; or GDB failed: DEC then answers GDB itself, as before
        _FACTS, and any error is that frame's alone)."""
        try:
            loop, place = loop_of(dec.inferior_frame(), dec._shape)
            facts = cls()
            facts.pc = dec.inferior_frame().pc()
            facts.function = dec.function()
            facts.filename = dec.filename()
            facts.line = dec.line()
            facts.args = None if dec._limited() else _frame_arg_symbols(dec.inferior_frame())
            facts.loop_line = None
            if loop is not None:
                line = LoopLineDecorator(dec._base, loop, place, dec._sal())
                facts.loop_line = (line.filename(), line.line(), line.frame_args())
            return facts
        except Exception:
            return None


class _KnownFrame(FrameDecorator):
    """A frame whose facts are kept (_FACTS): what GDB asks of it answered
    from them, without a call into GDB; its locals (`bt full`) from GDB's
    decorator under it."""
    __slots__ = ("_frame", "_facts")

    def __init__(self, base, frame, facts):  # (FrameDecorator's, inlined)
        self._base, self._frame, self._facts = base, frame, facts

    def inferior_frame(self):
        return self._frame

    def function(self):
        return self._facts.function

    def address(self):
        return self._facts.pc

    def filename(self):
        return self._facts.filename

    def line(self):
        return self._facts.line

    def frame_args(self):
        return self._facts.args  # (not under MI: no _NamedArg)

    def frame_locals(self):
        return self._base.frame_locals()

    def elided(self):
        line = self._facts.loop_line
        return None if line is None else [_LoopLine(self._frame, line)]


class _LoopLine:
    """A loop line from its facts (filename, line, arguments): what GDB asks
    of an elided frame, all constant but the frame."""
    __slots__ = ("_frame", "_facts")

    def __init__(self, frame, facts):
        self._frame, self._facts = frame, facts

    def inferior_frame(self):
        return self._frame

    def function(self):
        return "in loop"

    def address(self):
        return None

    def filename(self):
        return self._facts[0]

    def line(self):
        return self._facts[1]

    def frame_args(self):
        return self._facts[2]

    def frame_locals(self):
        return None

    def elided(self):
        return None


class LoopFrameDecorator(FrameDecorator):
    """Keeps GDB's function name and adds the frame's innermost loop as an
    elided line.

    filename, line and frame_args give what FrameDecorator gives, from one
    find_sal per frame instead of four (a backtrace's cost is per frame).
    For a frame whose facts are kept, _KnownFrame instead."""

    def __init__(self, base, shape=None, frame=None, ftype=None):
        super().__init__(base)
        self._shape = shape
        self._frame, self._ftype = frame, ftype  # (from _shaped: asked once)

    def inferior_frame(self):
        if self._frame is None:
            self._frame = super().inferior_frame()
        return self._frame

    def _type(self):
        if self._ftype is None:
            self._ftype = self.inferior_frame().type()
        return self._ftype

    def _plain(self):
        return type(self._base) in (gdb.Frame, FrameDecorator)

    def _sal(self):
        try:
            return self._sal_v
        except AttributeError:
            self._sal_v = self.inferior_frame().find_sal()
            return self._sal_v

    def _limited(self):
        try:
            return self._limited_v
        except AttributeError:
            sal = self._sal()
            self._limited_v = (not sal.symtab or not _host_bytes_as_str(lambda: sal.symtab.filename)
                               or self._type() in (gdb.DUMMY_FRAME, gdb.SIGTRAMP_FRAME))
            return self._limited_v

    def filename(self):
        if not self._plain():
            return super().filename()
        sal = self._sal()
        try:
            if not sal.symtab:
                name = _host_bytes_as_str(lambda: gdb.solib_name(self.inferior_frame().pc()))
                return _d(name) if name else None
            # MI has no "fullname" from frame filters (GDB 13): the full path
            # then, which an IDE opens as it would the fullname.
            name = _host_bytes_as_str(sal.symtab.fullname if loopscope_settings.MI_SESSION
                                      else lambda: sal.symtab.filename)
        except (gdb.error, RuntimeError):
            return None
        return _d(name) if name else None

    def line(self):
        if not self._plain():
            return super().line()
        return None if self._limited() else self._sal().line

    def frame_args(self):
        if not self._plain():
            return super().frame_args()
        if self._limited():
            return None
        frame = self.inferior_frame()
        return _frame_args(_frame_arg_symbols(frame), frame)

    def function(self):
        # FrameDecorator's default is str(symbol), "main(int, char**)" in C++;
        # GDB's own backtrace and MI say "main" (frame.name()).  Whatever
        # goes wrong here, `bt` shows the frame as GDB would: a decorator
        # must never put an exception in place of a frame.
        try:
            frame = self.inferior_frame()
            if (type(self._base) not in (gdb.Frame, FrameDecorator)  # another filter's decorator
                    or self._type() in (gdb.DUMMY_FRAME, gdb.SIGTRAMP_FRAME)):
                return super().function()
            name = _host_bytes_as_str(frame.name)
        except Exception:
            name = None
        return _d(name) if name is not None else "??"

    def elided(self):
        # (The filter is only enabled while the setting is on: no check here,
        # gdb.parameter costs more than the lookup.)
        base = super().elided()
        try:
            loop, place = loop_of(self.inferior_frame(), self._shape)
        except Exception:  # never an exception in place of a frame
            return base
        if loop is None:
            return base
        line = LoopLineDecorator(self._base, loop, place, self._sal() if self._plain() else None)
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
        return _shaped(frame_iter)


# ---- $_loop_depth -----------------------------------------------------------------


def frame_by_level(level, what):
    try:
        frame = gdb.newest_frame()
    except gdb.error as e:
        raise LoopscopeError("%s: %s" % (what, e))
    while frame is not None and frame.level() < level:
        frame = frame.older()
    if frame is None or frame.level() != level:
        raise LoopscopeError("%s: no frame at level %d" % (what, level))
    return frame


def loop_depth_at_frame(frame, what):
    """How many loops run around FRAME's code (its inline level's, and those
    of the levels it is inlined into)."""
    place = Place.at(_lookup_pc(frame), quiet=True)
    if not place.chain:
        raise LoopscopeError("%s: the structure at %s is unknown (%s is not inside any procedure "
                             "loopscope knows%s)" % (what, _hex(frame.pc()), _hex(place.link),
                                                     "; " + place.why_poor() if place.why_poor() else ""))
    return len(enclosing_loops(place.chain, _inline_depth(frame)))


class LoopDepthFunction(gdb.Function):
    """$_loop_depth([FRAME]) - loop nesting depth of the selected frame, or FRAME.

Counts the loops around the frame's code: those of its own function and of
the functions it is inlined into (in an inline frame, the loops around its
code, not around the innermost frame's).  FRAME is a frame level (an
integer); a pointer (such as $pc or &function) is taken as a code address
instead.  0 outside loops; an error where loopscope does not know the
structure (no procedure there, or no symbols at all)."""

    def __init__(self):
        super().__init__("_loop_depth")

    def invoke(self, *argv):
        what = "$_loop_depth"
        if len(argv) > 1:
            raise LoopscopeError("%s: at most one argument (a frame level or a code address), got %d"
                                 % (what, len(argv)))
        if not argv:
            frame = _selected_frame_or_none()
            if frame is None:
                raise LoopscopeError("%s: no frame (no process, no core file); pass a code address" % what)
            return loop_depth_at_frame(frame, what)
        arg = argv[0]
        code = arg.type.strip_typedefs().code
        if code in (gdb.TYPE_CODE_PTR, gdb.TYPE_CODE_FUNC):
            pc = int(arg.address if code == gdb.TYPE_CODE_FUNC else arg.cast(gdb.lookup_type("unsigned long")))
            place = Place.at(pc, quiet=True)
            if not place.chain:
                raise LoopscopeError("%s: the structure at %s is unknown (not inside any procedure "
                                     "loopscope knows)" % (what, _hex(pc)))
            return len(place.loops())
        if code not in (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_CHAR, gdb.TYPE_CODE_BOOL):
            raise LoopscopeError("%s: the argument is a frame level (an integer) or a code address "
                                 "(a pointer), not %s" % (what, arg.type))
        return loop_depth_at_frame(frame_by_level(int(arg), what), what)


# ---- maint info loopscope ---------------------------------------------------------


class InfoLoopscopeCommand(gdb.Command):
    """List the object files loopscope analyzed in this session.

Usage: maint info loopscope

(`info loopscope`, its old name, still works: deprecated, so that
`info loop<TAB>` completes to `info loops` alone.)

For each: where its debug information came from, its build-id, whether the
structure came from the on-disk cache, and the warnings of its analysis."""

    def __init__(self, name="maint info loopscope"):
        super().__init__(name, gdb.COMMAND_MAINTENANCE, gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        args.parse(args.Spec("maint info loopscope"), arg)
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
                _d(got.path), _d(got.debug_path) or "none", got.build_id or "none",
                "from the disk cache" if got.from_cache else "analyzed in this session",
                len(got.warnings), "" if len(got.warnings) == 1 else "s"))
            for w in got.warnings:
                _write("      %s\n" % _d(w))


# ---- registration -------------------------------------------------------------------

_registered = False


def _connect(events, handler):
    for ev in events:
        registry = getattr(gdb.events, ev, None)
        if registry is not None:
            registry.connect(quietly(handler))


def register():
    global _registered
    if _registered:
        return
    loopscope_settings.register(ANALYSES.clear)
    StructureCommand()
    InfoLoopsCommand()
    import loopscope_step  # they use this module's names: imported once they exist
    import loopscope_tui
    import loopscope_module
    loopscope_step.register()
    loopscope_tui.register()
    loopscope_module.register()
    LoopDepthFunction()
    InfoLoopscopeCommand()
    InfoLoopscopeCommand("info loopscope")
    try:  # deprecated, so that completion leaves it out: `info loop<TAB>` is `info loops`
        gdb.execute('maint deprecate info loopscope "maint info loopscope"', to_string=True)
    except gdb.error:
        pass
    gdb.frame_filters["loopscope-loops"] = LoopFrameFilter()
    if hasattr(gdb, "MICommand"):  # GDB 13 and later
        import loopscope_mi
        loopscope_mi.register()
    _connect(("new_objfile", "clear_objfiles", "exited"), ADDRESSES.invalidate)
    _connect(("new_objfile", "clear_objfiles"), ANALYSES.forget)
    _connect(("new_objfile", "clear_objfiles"), _forget_names)
    # (Not before_prompt: GDB runs it once more when a SIGTERM ends it, with
    # Python's KeyboardInterrupt pending, and prints that.  Commands check
    # the files themselves: command_start.)
    _connect(("new_objfile", "clear_objfiles", "exited", "stop", "cont"), ANALYSES.stopped)
    changed = ("new_objfile", "clear_objfiles", "exited", "stop", "cont", "inferior_call",
               "memory_changed", "register_changed")
    _connect(changed, _forget_places)
    _connect(changed + ("new_thread",), _forget_shapes)
    _connect(("new_objfile", "clear_objfiles", "free_objfile"), _forget_facts)
    _registered = True
