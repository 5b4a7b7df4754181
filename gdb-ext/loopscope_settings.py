# loopscope_settings.py - the loopscope settings, as GDB parameters.
#
#   set loopscope backtrace on|off|auto     the loop line under each `bt` frame
#                                           (auto: on, except in MI sessions)
#   set loopscope cache on|off              read and write the on-disk analysis cache
#   set loopscope debug-file-directory DIR  where separate debug files are looked for
#                                           (empty: GDB's own debug-file-directory)
#   show loopscope [SETTING]
#
# Owns only the parameters and their help; the code that obeys them asks
# gdb.parameter("loopscope ...") when it runs, so a change takes effect at
# once.  Analyses made with the old debug directory are dropped when it
# changes (their debug information may come from elsewhere now).
import gdb


class SetLoopscope(gdb.Command):
    """Set loopscope settings (see "show loopscope")."""

    def __init__(self):
        super().__init__("set loopscope", gdb.COMMAND_DATA, gdb.COMPLETE_NONE, True)


class ShowLoopscope(gdb.Command):
    """Show loopscope settings.

Usage: show loopscope [backtrace|cache|debug-file-directory]"""

    def __init__(self):
        super().__init__("show loopscope", gdb.COMMAND_DATA, gdb.COMPLETE_NONE, True)

    def invoke(self, arg, from_tty):
        for name in ("backtrace", "cache", "debug-file-directory"):
            gdb.execute("show loopscope " + name, from_tty)


def _mi_session():
    """Whether GDB was started as an MI server (gdb --interpreter=mi...,
    gdb -i mi): what IDEs do.  GDB 13's Python cannot ask which interpreter
    is in charge, so its command line tells."""
    try:
        with open("/proc/self/cmdline", "rb") as f:
            argv = f.read().decode("utf-8", "replace").split("\0")
    except OSError:
        return False
    for i, a in enumerate(argv):
        for opt in ("--interpreter", "-interpreter", "-i"):
            if a.startswith(opt + "="):
                return a[len(opt) + 1:].startswith("mi")
            if a == opt and i + 1 < len(argv):
                return argv[i + 1].startswith("mi")
    return False


MI_SESSION = _mi_session()


class BacktraceParameter(gdb.Parameter):
    """Whether `bt` shows the loop each frame is in.

When on, every frame of a backtrace that is inside a loop gets a second line,
"in loop (depth=D, header=ADDR) at FILE:LINE", the innermost loop of that
frame (an elided frame of GDB's frame filters).  Frame names are never
changed.  auto (the default) is on, except in a GDB started with
--interpreter=mi, where IDEs read frames and -loopscope-stack gives the
loops instead; off leaves backtraces entirely to GDB.  `bt -hide` also
leaves the lines out."""

    set_doc = "Set whether backtraces show each frame's loop."
    show_doc = "Show whether backtraces show each frame's loop."

    def __init__(self):
        super().__init__("loopscope backtrace", gdb.COMMAND_STACK, gdb.PARAM_AUTO_BOOLEAN)
        self.value = None

    def get_show_string(self, svalue):
        if svalue == "auto":
            return "Loop lines in backtraces are auto (currently %s)." % ("on" if backtrace_on() else "off")
        return "Loop lines in backtraces are %s." % svalue


class CacheParameter(gdb.Parameter):
    """Whether loopscope uses its on-disk analysis cache.

When on, the structure of an object file is read from
$XDG_CACHE_HOME/loopscope (keyed by build-id) when it is there, and written
there after the first analysis.  Off: every object file is analyzed afresh
(once per session)."""

    set_doc = "Set whether loopscope uses its analysis cache."
    show_doc = "Show whether loopscope uses its analysis cache."

    def __init__(self):
        super().__init__("loopscope cache", gdb.COMMAND_DATA, gdb.PARAM_BOOLEAN)
        self.value = True

    def get_show_string(self, svalue):
        return "The loopscope analysis cache is %s." % svalue


class DebugDirParameter(gdb.Parameter):
    """Where loopscope looks for separate debug information files.

A colon-separated list of directories searched by build-id
(DIR/.build-id/xx/rest.debug) and by .gnu_debuglink name.  Empty (the
default): GDB's own "debug-file-directory".  Analyses already made are
dropped when it changes."""

    set_doc = "Set loopscope's debug file directories."
    show_doc = "Show loopscope's debug file directories."

    def __init__(self, on_change):
        super().__init__("loopscope debug-file-directory", gdb.COMMAND_FILES, gdb.PARAM_STRING)
        self.value = ""
        self._on_change = on_change

    def get_set_string(self):
        self._on_change()
        return ""

    def get_show_string(self, svalue):
        if not svalue:
            return ("The directories loopscope searches for separate debug files are "
                    "GDB's debug-file-directory (\"%s\")." % gdb.parameter("debug-file-directory"))
        return "The directories loopscope searches for separate debug files are \"%s\"." % svalue


def backtrace_on():
    try:
        v = gdb.parameter("loopscope backtrace")
    except (gdb.error, RuntimeError):
        return not MI_SESSION
    return (not MI_SESSION) if v is None else bool(v)


def use_cache():
    return bool(gdb.parameter("loopscope cache"))


def debug_file_path():
    """The debug directories to give the core, or None for its default."""
    d = gdb.parameter("loopscope debug-file-directory") or gdb.parameter("debug-file-directory")
    # The file's own directory and its .debug/ first, as GDB and libdwfl do.
    return ":.debug:" + d if d else None


def register(on_debug_dir_change):
    SetLoopscope()
    ShowLoopscope()
    BacktraceParameter()
    CacheParameter()
    DebugDirParameter(on_debug_dir_change)
