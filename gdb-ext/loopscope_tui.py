# loopscope_tui.py - the `loopscope` TUI window and the `loops` layout.
#
#   (gdb) layout loops          source on the left, the loopscope window on the right
#   (gdb) tui new-layout ... loopscope 1 ...     (any layout of your own)
#
# The window follows the selected frame (it is redrawn before every prompt,
# so after up, down, frame, step, ...): the frame, its scope chain (procedure,
# inlined calls with call sites, loops, statement) with the frame's own part
# marked, and the current loop of that frame's code (in an inline frame, the
# innermost loop around it, its own or of the function it is inlined into):
# header, depth, every exit edge and back edge, counted as `info loops`
# counts them.  Each line takes one row, cut at the window's width (never
# wrapped); the window scrolls up and down (and sideways) when it has the
# focus (`focus loopscope`, then the arrow and page keys).  Only the text is
# computed here; GDB owns the window.
import gdb

import loopscope_args as args
import loopscope_gdb as ls

_d = args.escape


def _chain_lines(place, k):
    out = []
    level = 0
    own = set(id(s) for s in ls._segment(place.chain, k))
    for s in place.chain:
        kind = s["kind"]
        if kind == "inline":
            level += 1
        mark = ">" if id(s) in own or (kind == "inline" and level == k) else " "
        if kind == "proc":
            text = "proc    %s  at %s" % (_d(s.get("name") or "??"), ls._where(s))
        elif kind == "inline":
            text = "inline  %s  called at %s:%s" % (_d(s.get("name") or "??"), _d(ls._short(s.get("call_file"))),
                                                    s.get("call_line") or "?")
        elif kind == "loop":
            text = "loop    %s  depth %d" % (ls._loop_at(s), s["depth"])
        elif kind == "stmt":
            text = "stmt    %s" % ls._where(s)
        else:
            text = "%-7s %s" % (kind, ls._where(s))
        out.append("%s %s%s" % (mark, "  " * max(level - (kind == "inline"), 0), text))
    return out


def _loop_lines(place, loop):
    """The current loop: where, header, depth, then one line per exit edge and
    per back edge (as `info loops` counts them: edges, not targets)."""
    rt = place.runtime
    out = ["current loop: %s" % ls._loop_at(loop),
           "  header %s  depth %d%s" % (ls._hex(rt(loop["header"])), loop["depth"],
                                       "  irreducible" if loop["irreducible"] else ""),
           "  %d exit%s:" % (len(loop["exits"]), "" if len(loop["exits"]) == 1 else "s")]
    # Where each exit leads first: what fits a narrow window (the rest
    # scrolls sideways).  Back edges all lead to the header: where from.
    out += ["    to %s  from %s" % (ls._hex(rt(b)), ls._hex(rt(a))) for a, b in loop["exits"]]
    out.append("  %d back edge%s:" % (len(loop["backedges"]), "" if len(loop["backedges"]) == 1 else "s"))
    out += ["    from %s" % ls._hex(rt(a)) for a, b in loop["backedges"]]
    return out


def frame_lines(frame):
    """The window's text for FRAME, as a list of lines."""
    name = _d(ls._host_bytes_as_str(frame.name) or "??")
    try:
        place = ls.Place.at(ls._lookup_pc(frame), quiet=True)
    except (gdb.error, gdb.GdbError, RuntimeError) as e:
        return ["frame #%d  %s" % (frame.level(), name), "", str(e)]
    out = ["frame #%d  %s  pc %s" % (frame.level(), name, ls._hex(frame.pc())),
           "in %s" % _d(place.path), ""]
    k = ls._inline_depth(frame)
    out += _chain_lines(place, k)
    out.append("")
    loops = ls.enclosing_loops(place.chain, k)
    if not place.chain:
        out.append("not inside any procedure loopscope knows")
    elif not loops:
        out.append("frame not in a loop")
    else:
        out += _loop_lines(place, loops[-1])
    return out


class LoopscopeWindow:
    def __init__(self, tui):
        self._tui = tui
        self._top = 0    # first line shown (vertical scrolling)
        self._left = 0   # first column shown (horizontal scrolling)
        self._frame_key = None
        tui.title = "loopscope"
        gdb.events.before_prompt.connect(self._before_prompt)

    def close(self):
        gdb.events.before_prompt.disconnect(self._before_prompt)

    def _before_prompt(self):
        try:
            self.render()
        except Exception:  # never an exception out of a redraw
            pass

    def _lines(self):
        try:
            frame = gdb.selected_frame()
        except gdb.error:
            self._frame_key = None
            return ["No frame selected.", "", "The scope chain of the selected frame shows here."]
        key = (frame.level(), frame.pc())
        if key != self._frame_key:  # another frame: from the top again
            self._frame_key = key
            self._top = self._left = 0
        return frame_lines(frame)

    def render(self):
        if not self._tui.is_valid():
            return
        saved, ls.STYLES.sgr = ls.STYLES.sgr, {}  # plain text: widths are characters
        try:
            lines = self._lines()
        finally:
            ls.STYLES.sgr = saved
        width, height = max(self._tui.width, 1), max(self._tui.height, 1)
        self._top = max(0, min(self._top, len(lines) - height))
        shown = [line[self._left:self._left + width] for line in lines[self._top:self._top + height]]
        # Rows of exactly WIDTH characters: the terminal moves to the next
        # row by itself (a newline after a full row would leave a blank
        # one); the last row is not padded, so nothing scrolls.
        text = "".join(s.ljust(width) for s in shown[:-1]) + (shown[-1].rstrip() if shown else "")
        self._tui.erase()
        self._tui.write(text)

    def vscroll(self, num):
        self._top = max(0, self._top + num)
        self.render()

    def hscroll(self, num):
        self._left = max(0, self._left + num)
        self.render()


def register():
    if not hasattr(gdb, "register_window_type"):
        return  # GDB older than 10, or built without the TUI
    gdb.register_window_type("loopscope", LoopscopeWindow)
    try:
        gdb.execute("tui new-layout loops {-horizontal src 3 loopscope 2} 2 status 0 cmd 1", to_string=True)
    except gdb.error:
        pass  # no TUI in this GDB
