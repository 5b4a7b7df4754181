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
import gdb

import loopscope_gdb as ls


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
    return str(v)


def _edges(edges):
    return [{"from": ls._hex(a), "to": ls._hex(b)} for a, b in edges]


def loop_tuple(loop, bias):
    """A loop as the lookup JSON has it, with its edges and runtime header."""
    return {"kind": "loop", "file": loop.get("file"), "line": loop.get("line"),
            "header": ls._hex(loop["header"]), "header_pc": ls._hex(loop["header"] + bias),
            "depth": loop["depth"], "irreducible": loop["irreducible"],
            "entries": [ls._hex(e) for e in loop["entries"]],
            "exits": _edges(loop["exits"]), "backedges": _edges(loop["backedges"])}


def loop_nest(node, bias):
    """The loops under NODE, and the inlined calls and alien code that hold
    loops, as nested tuples ("children")."""
    out = []
    for c in node.get("children", ()):
        kind = c["kind"]
        if kind == "loop":
            t = loop_tuple(c, bias)
            t["children"] = loop_nest(c, bias)
            out.append(t)
        elif kind in ("inline", "alien"):
            sub = loop_nest(c, bias)
            if sub:
                t = {"kind": kind, "file": c.get("file"), "line": c.get("line")}
                if kind == "inline":
                    t.update(name=c.get("name"), call_file=c.get("call_file"), call_line=c.get("call_line"))
                t["children"] = sub
                out.append(t)
    return out


def _args(argv, command, most):
    if len(argv) > most:
        raise ls.LoopscopeError("%s: too many arguments (%s)" % (command, " ".join(argv)))


class MiStructure(gdb.MICommand):
    """-loopscope-structure [LOCATION]"""

    def __init__(self):
        super().__init__("-loopscope-structure")

    def invoke(self, argv):
        _args(argv, "-loopscope-structure", 1)
        pc = ls._pc_of_location(argv[0] if argv else "", "-loopscope-structure")[0][0]
        return mi_value(ls.chain_json(ls.Place(pc)))


class MiLoops(gdb.MICommand):
    """-loopscope-loops [FUNCTION]"""

    def __init__(self):
        super().__init__("-loopscope-loops")

    def invoke(self, argv):
        _args(argv, "-loopscope-loops", 1)
        pc, place, proc = ls.function_proc(argv[0] if argv else "", "-loopscope-loops")
        return mi_value({"function": proc.get("name"), "file": proc.get("file"), "line": proc.get("line"),
                         "module": place.path, "loops": loop_nest(proc, place.bias)})


class MiStack(gdb.MICommand):
    """-loopscope-stack [LOW [HIGH]]"""

    def __init__(self):
        super().__init__("-loopscope-stack")

    def invoke(self, argv):
        _args(argv, "-loopscope-stack", 2)
        try:
            low = int(argv[0]) if argv else 0
            high = int(argv[1]) if len(argv) > 1 else None
        except ValueError:
            raise ls.LoopscopeError("-loopscope-stack: LOW and HIGH are frame levels: %s" % " ".join(argv))
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
        t = {"level": str(frame.level()), "addr": ls._hex(frame.pc()), "func": frame.name() or "??"}
        try:
            place = ls.Place(ls._lookup_pc(frame), quiet=True)
        except (gdb.error, gdb.GdbError, RuntimeError) as e:
            t["error"] = str(e)
            return t
        seg = ls._segment(place.chain, ls._inline_depth(frame))
        t["module"] = place.path
        t["loops"] = [mi_value(dict(loop_tuple(s, place.bias), exits=None, backedges=None, entries=None))
                      for s in seg if s["kind"] == "loop"]
        return t


def register():
    MiStructure()
    MiLoops()
    MiStack()
