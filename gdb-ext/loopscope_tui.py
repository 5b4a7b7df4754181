# loopscope_tui.py - the `loopscope` TUI window and the `loops` layout.
#
#   (gdb) layout loops          source on the left, the loopscope window on the right
#   (gdb) tui new-layout ... loopscope 1 ...     (any layout of your own)
#
# The window follows the selected frame (it is redrawn before every prompt,
# so after up, down, frame, step, ...): the frame, its scope chain (procedure,
# inlined calls with call sites, loops, statement) with the frame's own part
# marked, and the current loop of that frame: header, depth, exits and back
# edges.  Only the text is computed here; GDB owns the window.
import gdb

import loopscope_gdb as ls


def frame_lines(frame):
    """The window's text for FRAME, as a list of lines."""
    try:
        pc = ls._lookup_pc(frame)
        place = ls.Place(pc, quiet=True)
    except (gdb.error, gdb.GdbError, RuntimeError) as e:
        return ["frame #%d  %s" % (frame.level(), frame.name() or "??"), "", str(e)]
    out = ["frame #%d  %s  pc %s" % (frame.level(), frame.name() or "??", ls._hex(frame.pc())),
           "in %s" % place.path, ""]
    k = ls._inline_depth(frame)
    level = 0
    own = set(id(s) for s in ls._segment(place.chain, k))
    for s in place.chain:
        kind = s["kind"]
        if kind == "inline":
            level += 1
        mark = ">" if id(s) in own or (kind == "inline" and level == k) else " "
        if kind == "proc":
            text = "proc    %s  at %s" % (s.get("name") or "??", ls._where(s))
        elif kind == "inline":
            text = "inline  %s  called at %s:%s" % (s.get("name") or "??", ls._short(s.get("call_file")),
                                                    s.get("call_line") or "?")
        elif kind == "loop":
            text = "loop    %s  depth %d" % (ls._loop_at(s), s["depth"])
        elif kind == "stmt":
            text = "stmt    %s" % ls._where(s)
        else:
            text = "%-7s %s" % (kind, ls._where(s))
        out.append("%s %s%s" % (mark, "  " * max(level - (kind == "inline"), 0), text))
    loops = [s for s in ls._segment(place.chain, k) if s["kind"] == "loop"]
    out.append("")
    if not loops:
        out.append("frame not in a loop" if place.chain else "not inside any procedure loopscope knows")
        return out
    loop = loops[-1]
    exits = sorted({e[1] for e in loop["exits"]})
    out += ["current loop: %s" % ls._loop_at(loop),
            "  header %s  depth %d%s" % (ls._hex(place.runtime(loop["header"])), loop["depth"],
                                        "  irreducible" if loop["irreducible"] else ""),
            "  %d exit%s: %s" % (len(exits), "" if len(exits) == 1 else "s",
                                 " ".join(ls._hex(place.runtime(t)) for t in exits)),
            "  %d back edge%s" % (len(loop["backedges"]), "" if len(loop["backedges"]) == 1 else "s")]
    return out


class LoopscopeWindow:
    def __init__(self, tui):
        self._tui = tui
        tui.title = "loopscope"
        gdb.events.before_prompt.connect(self._before_prompt)

    def close(self):
        gdb.events.before_prompt.disconnect(self._before_prompt)

    def _before_prompt(self):
        self.render()

    def render(self):
        if not self._tui.is_valid():
            return
        try:
            frame = gdb.selected_frame()
        except gdb.error:
            lines = ["No frame selected.", "", "The scope chain of the selected frame shows here."]
        else:
            lines = frame_lines(frame)
        width = max(self._tui.width, 1)
        text = "\n".join(l[:width] for l in lines[:self._tui.height])
        self._tui.erase()
        self._tui.write(text)


def register():
    if not hasattr(gdb, "register_window_type"):
        return  # GDB older than 10, or built without the TUI
    gdb.register_window_type("loopscope", LoopscopeWindow)
    try:
        gdb.execute("tui new-layout loops {-horizontal src 3 loopscope 2} 2 status 0 cmd 1", to_string=True)
    except gdb.error:
        pass  # no TUI in this GDB
