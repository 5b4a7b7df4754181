# loopscope_mi.py - the loopscope MI commands, for IDEs (gdb --interpreter=mi3).
#
#   -loopscope-structure [LOCATION]   the scope chain at LOCATION (default: the
#                                     selected frame's pc), in the shape of
#                                     `loopscope lookup --json`, plus "pc"
#   -loopscope-loops [FUNCTION]       the loop nest of FUNCTION (default: the
#                                     selected frame's function)
#   -loopscope-stack [LOW [HIGH]]     the loops of every frame of the current
#                                     thread (levels LOW..HIGH)
#
# Results are MI tuples and lists, not text.  MI has only strings: numbers are
# decimal strings, booleans "true"/"false", addresses "0x..." hex, and a
# field that the JSON gives as null is left out.  Addresses named as in the
# JSON ("addr", "header", "entries", "exits", "backedges") are link-time
# addresses of the object file, as the CLI prints them; the ones ending in
# "pc" ("pc", "header_pc") are the runtime addresses GDB uses.
#
# A byte of a name or path that is not UTF-8 is written as the four
# characters \ooo (octal, as GDB prints such bytes): GDB 13 encodes the
# strings of Python MI results in its host charset, which cannot carry the
# byte itself.  The arguments go through loopscope_args, as the CLI's do.
import re

import gdb

import loopscope_args as args
import loopscope_gdb as ls

_SURROGATE = re.compile("[\udc80-\udcff]")


def mi_text(s):
    return _SURROGATE.sub(lambda m: "\\%03o" % (ord(m.group(0)) - 0xDC00), s)


def mi_value(v):
    """A Python value as MI data: dict -> tuple, list -> list, the rest -> str."""
    if isinstance(v, dict):
        return {k: mi_value(x) for k, x in v.items() if x is not None}
    if isinstance(v, (list, tuple)):
        return [mi_value(x) for x in v]
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return mi_text(str(v))


def _line(v):
    """A line as every command gives it: line 0 is "no line", left out (as
    -loopscope-structure's chain and the CLI's JSON null have it), never
    line="0"."""
    return v or None


def _edges(edges):
    return [{"from": ls._hex(a), "to": ls._hex(b)} for a, b in edges]


def loop_tuple(loop, runtime):
    """A loop as the lookup JSON has it, with its edges and runtime header."""
    t = {"kind": "loop", "file": loop.get("file"), "line": _line(loop.get("line")),
         "header": ls._hex(loop["header"]), "header_pc": ls._hex(runtime(loop["header"])),
         "depth": loop["depth"], "irreducible": loop["irreducible"],
         "entries": [ls._hex(e) for e in loop["entries"]],
         "exits": _edges(loop["exits"]), "backedges": _edges(loop["backedges"])}
    # The marks, when they apply (as in loopscope struct --format=json).
    for k in ("compiler_made", "line_guessed"):
        if loop.get(k):
            t[k] = loop[k]
    if loop.get("part"):
        t["part"] = loop["part"]
        t["parts"] = loop["parts"]
    return t


def loop_nest(node, runtime):
    """The loops under NODE, and the inlined calls and alien code that hold
    loops, as nested tuples ("children")."""
    out = []
    for c in node.get("children", ()):
        kind = c["kind"]
        if kind == "loop":
            t = loop_tuple(c, runtime)
            t["children"] = loop_nest(c, runtime)
            out.append(t)
        elif kind in ("inline", "alien"):
            sub = loop_nest(c, runtime)
            if sub:
                t = {"kind": kind, "file": c.get("file"), "line": _line(c.get("line"))}
                if kind == "inline":
                    t.update(name=c.get("name"), call_file=c.get("call_file"), call_line=_line(c.get("call_line")))
                t["children"] = sub
                out.append(t)
    return out


STRUCTURE_ARGS = args.Spec("-loopscope-structure", location="location")
LOOPS_ARGS = args.Spec("-loopscope-loops", location="function")
STACK_ARGS = args.Spec("-loopscope-stack", words=2)


def _argument(argv):
    """MI has split the arguments (and taken their quotes): one string again."""
    return " ".join(argv)


class MiStructure(gdb.MICommand):
    """-loopscope-structure [LOCATION]"""

    def __init__(self):
        super().__init__("-loopscope-structure")

    def invoke(self, argv):
        location = args.parse(STRUCTURE_ARGS, _argument(argv)).location
        ls.command_start()
        pc = ls._pc_of_location(location, "-loopscope-structure")[0][0]
        return mi_value(ls.chain_json(ls.Place.at(pc)))


class MiLoops(gdb.MICommand):
    """-loopscope-loops [FUNCTION]"""

    def __init__(self):
        super().__init__("-loopscope-loops")

    def invoke(self, argv):
        name = args.parse(LOOPS_ARGS, _argument(argv)).location
        ls.command_start()
        pc, place, proc = ls.function_proc(name, "-loopscope-loops")
        return mi_value({"function": proc.get("name"), "file": proc.get("file"), "line": _line(proc.get("line")),
                         "module": place.path, "unresolved_jumps": proc.get("unresolved_jumps") or None,
                         "loops": loop_nest(proc, place.runtime)})


class MiStack(gdb.MICommand):
    """-loopscope-stack [LOW [HIGH]]"""

    def __init__(self):
        super().__init__("-loopscope-stack")

    def invoke(self, argv):
        words = args.parse(STACK_ARGS, _argument(argv)).words
        ls.command_start()
        try:
            low = int(words[0]) if words else 0
            high = int(words[1]) if len(words) > 1 else None
        except ValueError:
            raise ls.LoopscopeError("-loopscope-stack: LOW and HIGH are frame levels: %s" % args.escape(" ".join(words)))
        if low < 0 or (high is not None and high < low):
            raise ls.LoopscopeError("-loopscope-stack: LOW and HIGH are frame levels, LOW <= HIGH")
        try:
            frame = gdb.newest_frame()
        except gdb.error as e:
            raise ls.LoopscopeError("-loopscope-stack: %s" % e)
        frames = []
        while frame is not None and (high is None or frame.level() <= high):
            if frame.level() >= low:
                frames.append(self._frame(frame))
            frame = frame.older()
        return {"frames": frames}

    @staticmethod
    def _frame(frame):
        t = {"level": str(frame.level()), "addr": ls._hex(frame.pc()),
             "func": mi_text(ls._host_bytes_as_str(frame.name) or "??")}
        t.update(MiStack._location(frame))
        try:
            place = ls.Place.at(ls._lookup_pc(frame), quiet=True)
        except (gdb.error, gdb.GdbError, RuntimeError) as e:
            t["error"] = str(e)
            return t
        seg = ls._segment(place.chain, ls._inline_depth(frame))
        t["module"] = mi_text(place.path)
        t["loops"] = [mi_value(dict(loop_tuple(s, place.runtime), exits=None, backedges=None, entries=None))
                      for s in seg if s["kind"] == "loop"]
        return t


    @staticmethod
    def _location(frame):
        """file, fullname and line of FRAME as -stack-list-frames gives them.
        With the backtrace decorator on and frame filters enabled, GDB 13
        prints frames through its frame-filter printer, which writes no
        fullname (py_print_frame: file and line only); an IDE has them
        here, per level, whatever the filters."""
        try:
            sal = frame.find_sal()
            if sal.symtab is None:
                return {}
            got = {"file": ls._host_bytes_as_str(lambda: sal.symtab.filename),
                   "fullname": ls._host_bytes_as_str(sal.symtab.fullname), "line": str(sal.line)}
        except (gdb.error, RuntimeError):
            return {}
        return {k: mi_text(v) for k, v in got.items() if v}


def register():
    MiStructure()
    MiLoops()
    MiStack()
