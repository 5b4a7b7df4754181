# loopscope_step.py - running the program loop by loop.
#
#   loop-finish [-count]              run until the loop at $pc is left
#   loop-next [N] [-depth D]          run to the start of the N-th next iteration
#   break-loop [-exit] LOCATION       breakpoints at a loop's header, or its exits
#
# Owns the breakpoints that watch a loop of one physical frame: its header,
# its exits (the targets of every edge leaving it, as loopscope found them),
# the caller's resume address (a return out of the loop), and the two ways
# out that no edge shows: longjmp (internal breakpoints on glibc's __longjmp,
# then single steps to where it lands) and C++ exceptions (an internal
# breakpoint on __cxa_begin_catch: the handler's frame is its caller).  A
# landing is a way out when the loop's frame is gone, or when it is the
# newest frame again with its pc outside the loop.
import gdb

import loopscope_gdb as ls


class FrameBreakpoint(gdb.Breakpoint):
    """An internal breakpoint that only counts in one physical frame
    (recursion safe); it stops after STOP_AFTER hits (never if None)."""

    def __init__(self, addr, frame, stop_after=1, temporary=True):
        super().__init__("*%s" % ls._hex(addr), gdb.BP_BREAKPOINT, internal=True, temporary=temporary)
        self.addr = addr
        self.want = frame
        self.stop_after = stop_after
        self.hits = 0
        self.silent = True

    def stop(self):
        try:
            here = ls._physical(gdb.newest_frame())
        except gdb.error:
            return False
        if self.want is not None and here != self.want:
            return False
        self.hits += 1
        return self.stop_after is not None and self.hits >= self.stop_after


class EventBreakpoint(gdb.Breakpoint):
    """An internal breakpoint on a library function (__longjmp,
    __cxa_begin_catch) that always stops; None if GDB has no such function."""

    def __init__(self, spec):
        super().__init__(spec, gdb.BP_BREAKPOINT, internal=True)
        self.silent = True
        self.hits = 0

    def stop(self):
        self.hits += 1
        return True

    @classmethod
    def make(cls, spec):
        try:  # asked first: a breakpoint on an unknown name would say so on the console
            gdb.execute("info address %s" % spec, to_string=True)
        except gdb.error:
            return None
        try:
            bp = cls(spec)
        except (gdb.error, RuntimeError):
            return None
        if bp.pending or not getattr(bp, "locations", [True]):
            bp.delete()
            return None
        return bp


# glibc's longjmp, siglongjmp and _longjmp all end in __longjmp (its
# fortified twin is ____longjmp_chk); these are local symbols that
# libc6-dbg's symbol table gives.  Without them, the exported entry points.
LONGJMP_SPECS = (("__longjmp", "____longjmp_chk"), ("longjmp", "_longjmp", "siglongjmp", "__longjmp_chk"))


def _live_process():
    inf = gdb.selected_inferior()
    if inf.pid == 0:
        return False
    conn = getattr(inf, "connection", None)
    return not (conn is not None and conn.type == "core")


def _in_ranges(link, loop):
    return any(lo <= link < hi for lo, hi in loop["ranges"])


def _frame_on_stack(phys):
    """Whether physical frame PHYS is still on the current thread's stack."""
    f = gdb.newest_frame()
    n = 0
    while f is not None and n < 100000:
        if f == phys:
            return True
        f = f.older()
        n += 1
    return False


class LoopWatch:
    """The breakpoints that tell where the program goes next relative to LOOP
    of physical frame PHYS; run() continues until one of them decides."""

    def __init__(self, place, loop, phys, header_stops=None, count_header=False):
        self.place, self.loop, self.phys = place, loop, phys
        self.bps = []
        self.exit_bps = []
        self.ret_bp = self.header_bp = None
        self.longjmp_bps, self.catch_bp = [], None
        try:
            for t in sorted({e[1] for e in loop["exits"]}):
                bp = FrameBreakpoint(place.runtime(t), phys)
                self.exit_bps.append(bp)
            caller = phys.older()
            if caller is not None:
                self.ret_bp = FrameBreakpoint(caller.pc(), ls._physical(caller))
            if header_stops is not None or count_header:
                self.header_bp = FrameBreakpoint(place.runtime(loop["header"]), phys,
                                                 stop_after=header_stops, temporary=False)
            for specs in LONGJMP_SPECS:
                self.longjmp_bps = [bp for bp in map(EventBreakpoint.make, specs) if bp]
                if self.longjmp_bps:
                    break
            self.catch_bp = EventBreakpoint.make("__cxa_begin_catch")
        except BaseException:
            self.delete()
            raise
        self.bps = self.exit_bps + [b for b in (self.ret_bp, self.header_bp, self.catch_bp) if b] + self.longjmp_bps

    def delete(self):
        for b in self.exit_bps + [self.ret_bp, self.header_bp, self.catch_bp] + self.longjmp_bps:
            if b is not None and b.is_valid():
                b.delete()

    def _still_inside(self):
        """After a longjmp or a catch: is the program still in the loop (or
        deeper, in frames the loop's frame called)?"""
        if not _frame_on_stack(self.phys):
            return False
        newest = ls._physical(gdb.newest_frame())
        if newest != self.phys:
            return True  # a landing in a callee of the loop's frame
        link = gdb.newest_frame().pc() - self.place.bias
        return _in_ranges(link, self.loop)

    def _land_longjmp(self):
        """From the entry of __longjmp, run to where it jumps: to its final
        indirect jump (a silent breakpoint), then one instruction.  Single
        steps all the way would print a line each."""
        frame = gdb.newest_frame()
        start = frame.name()  # __longjmp is assembly without DWARF: its minimal symbol names it
        jump = None
        try:
            for insn in frame.architecture().disassemble(frame.pc(), count=200):
                asm = insn["asm"].split()
                if asm and asm[0] in ("jmp", "jmpq", "bnd", "notrack") and "jmp" in " ".join(asm[:2]) \
                        and ("*" in insn["asm"] or (asm[-1].isalnum() and not asm[-1].startswith("0x"))):
                    jump = insn["addr"]
                    break
        except gdb.error:
            jump = None
        if jump is not None:
            bp = EventBreakpoint("*%s" % ls._hex(jump))
            try:
                gdb.execute("continue", to_string=True)
            finally:
                if bp.is_valid():
                    bp.delete()
            gdb.execute("stepi", to_string=True)
            return
        for _ in range(4000):
            gdb.execute("stepi", to_string=True)
            if gdb.newest_frame().name() != start:
                return
        raise ls.LoopscopeError("longjmp did not land within 4000 instructions")

    def run(self, from_tty):
        """Continue until the loop is left, the header count is reached, or
        something else stops the program.  Returns (how, breakpoint):
        how in "exit", "return", "longjmp", "exception", "header", None."""
        while True:
            for b in self.bps:
                if isinstance(b, EventBreakpoint):
                    b.hits = 0
            gdb.execute("continue", to_string=not from_tty)
            if not _live_process():
                return None, None
            if any(b.hits for b in self.longjmp_bps):
                self._land_longjmp()
                if self._still_inside():
                    continue
                return "longjmp", None
            if self.catch_bp is not None and self.catch_bp.hits:
                gdb.execute("finish", to_string=True)  # into the handler
                if self._still_inside():
                    continue
                return "exception", None
            for b in self.exit_bps:
                if b.stop_after is not None and b.hits >= b.stop_after:
                    return "exit", b
            if self.ret_bp is not None and self.ret_bp.hits:
                return "return", self.ret_bp
            if self.header_bp is not None and self.header_bp.stop_after is not None \
                    and self.header_bp.hits >= self.header_bp.stop_after:
                return "header", self.header_bp
            return None, None


# ---- choosing the loop ------------------------------------------------------------


def frame_loops(frame, place):
    """The loops FRAME is in, outermost first: those of its own inline level,
    or if it has none, those of the functions it is inlined into."""
    k = ls._inline_depth(frame)
    for level in range(k, -1, -1):
        seg_loops = [s for s in ls._segment(place.chain, level) if s["kind"] == "loop"]
        if seg_loops:
            return [s for s in place.chain[:place.chain.index(seg_loops[-1]) + 1] if s["kind"] == "loop"]
    return []


def selected_loop(command, depth=None):
    """(frame, Place, loop, physical frame) for the selected frame's innermost
    loop, or its loop at DEPTH."""
    if not _live_process():
        raise ls.LoopscopeError("%s: the program is not running (a core file or no process): start it first"
                                % command)
    frame = gdb.selected_frame()
    place = ls.Place(ls._lookup_pc(frame))
    loops = frame_loops(frame, place)
    if not loops:
        raise ls.LoopscopeError("%s: pc %s (%s in %s) is not inside any loop%s" % (
            command, ls._hex(frame.pc()), ls._where(place.chain[-1]) if place.chain else "??",
            place.chain[0].get("name") if place.chain else "??",
            "; " + place.why_poor() if place.why_poor() else ""))
    if depth is None:
        return frame, place, loops[-1], ls._physical(frame)
    for loop in loops:
        if loop["depth"] == depth:
            return frame, place, loop, ls._physical(frame)
    raise ls.LoopscopeError("%s: no loop of depth %d here (the loops at pc have depths %s)" % (
        command, depth, ", ".join(str(s["depth"]) for s in loops)))


def loop_desc(place, loop):
    return "loop %s (header %s, depth %d)" % (ls._loop_at(loop), ls._saddr(ls._hex(place.runtime(loop["header"]))),
                                              loop["depth"])


def where_now():
    frame = gdb.selected_frame()
    sal = frame.find_sal()
    here = ls._loc(sal.symtab.filename, sal.line) if sal.symtab else ls._saddr(ls._hex(frame.pc()))
    return "%s in %s (%s)" % (here, ls._sfunc(frame.name() or "??"), ls._saddr(ls._hex(frame.pc())))


def how_left(watch, how, bp, phys_name):
    place, loop = watch.place, watch.loop
    if how == "return":
        return "by returning from %s" % (phys_name or "??")
    if how == "longjmp":
        return "by longjmp"
    if how == "exception":
        return "by a C++ exception, caught in %s" % (gdb.selected_frame().name() or "??")
    froms = [e[0] for e in loop["exits"] if place.runtime(e[1]) == bp.addr]
    return "via exit %s -> %s" % (ls._hex(place.runtime(froms[0])) if froms else "?", ls._hex(bp.addr))


# ---- loop-finish --------------------------------------------------------------------


class LoopFinishCommand(gdb.Command):
    """Run until the innermost loop containing the selected frame's pc is left.

Usage: loop-finish [-count]

Sets temporary breakpoints on every exit of the loop (as loopscope found
them: the targets of all edges leaving the loop) and at the return address
of the frame, watches longjmp and C++ exception handlers, continues, and
reports how the loop was left: via which exit, by returning, by longjmp, or
by an exception (and where it was caught).  With -count, also reports how
many times the loop header was reached until then.  A user breakpoint hit
first stops it, and it says so.  Needs a live process."""

    def __init__(self):
        super().__init__("loop-finish", gdb.COMMAND_RUNNING, gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        ls.STYLES.refresh()
        arg = arg.strip()
        if arg not in ("", "-count", "--count", "-c"):
            raise ls.LoopscopeError("loop-finish: unknown argument %s (only -count)" % arg)
        frame, place, loop, phys = selected_loop("loop-finish")
        if not loop["exits"] and phys.older() is None:
            raise ls.LoopscopeError("loop-finish: the loop %s has no exits and no caller to return to"
                                    % ls._loop_at(loop))
        phys_name = phys.name()
        watch = LoopWatch(place, loop, phys, count_header=bool(arg))
        try:
            how, bp = watch.run(from_tty)
            counted = watch.header_bp.hits if watch.header_bp is not None else None
        finally:
            watch.delete()
        desc = loop_desc(place, loop)
        if how is None:
            ls._write(("The program ended before leaving the %s.\n" if not _live_process()
                       else "Stopped before leaving the %s.\n") % desc)
            return
        msg = "left %s %s; now at %s" % (desc, how_left(watch, how, bp, phys_name), where_now())
        if counted is not None:
            msg += "; header reached %d time%s" % (counted, "" if counted == 1 else "s")
        ls._write(msg + "\n")
        if from_tty:  # like `finish`: show where we are
            gdb.execute("frame")


# ---- loop-next --------------------------------------------------------------------


class LoopNextCommand(gdb.Command):
    """Run to the start of the next iteration of the loop at the selected frame's pc.

Usage: loop-next [N] [-depth D]

Continues until the loop's header is reached N times (default 1) in this
frame: the start of the N-th next iteration.  The loop is the innermost one
at pc, or with -depth D the one of nesting depth D around pc (1: the
outermost loop of the procedure).  Stops early, and says so, when the loop is
left (an exit, a return, longjmp, an exception) or a user breakpoint is hit.
Needs a live process."""

    def __init__(self):
        super().__init__("loop-next", gdb.COMMAND_RUNNING, gdb.COMPLETE_NONE)

    @staticmethod
    def _parse(arg):
        n, depth = 1, None
        words = gdb.string_to_argv(arg)
        i = 0
        try:
            while i < len(words):
                w = words[i]
                if w in ("-depth", "--depth"):
                    depth = int(words[i + 1], 0)
                    i += 2
                    continue
                n = int(w, 0)
                i += 1
        except (ValueError, IndexError):
            raise ls.LoopscopeError("loop-next: usage: loop-next [N] [-depth D] (got %r)" % arg)
        if n < 1 or (depth is not None and depth < 1):
            raise ls.LoopscopeError("loop-next: N and D are at least 1")
        return n, depth

    def invoke(self, arg, from_tty):
        ls.STYLES.refresh()
        n, depth = self._parse(arg)
        frame, place, loop, phys = selected_loop("loop-next", depth)
        phys_name = phys.name()
        watch = LoopWatch(place, loop, phys, header_stops=n)
        try:
            how, bp = watch.run(from_tty)
            done = watch.header_bp.hits
        finally:
            watch.delete()
        desc = loop_desc(place, loop)
        if how == "header":
            ls._write("at the header of the %s, %d iteration%s on; now at %s\n" % (
                desc, n, "" if n == 1 else "s", where_now()))
        elif how is None:
            ls._write(("The program ended after %d of %d iterations of the %s.\n" if not _live_process()
                       else "Stopped after %d of %d iterations of the %s.\n") % (done, n, desc))
            return
        else:
            ls._write("left %s %s after %d of %d iterations; now at %s\n" % (
                desc, how_left(watch, how, bp, phys_name), done, n, where_now()))
        if from_tty:
            gdb.execute("frame")


# ---- break-loop --------------------------------------------------------------------


def _loops_in(node):
    for c in node.get("children", ()):
        if c["kind"] == "loop":
            yield c
        yield from _loops_in(c)


def loop_at_location(arg, command):
    """(Place, loop) for LOCATION: the outermost loop whose source line is
    LOCATION's line, else the innermost loop around LOCATION's address."""
    pc, label = ls._pc_of_location(arg, command)[0]
    place = ls.Place(pc)
    line = None
    try:
        line = gdb.find_pc_line(pc).line if ":" in arg or arg.isdigit() else None
        if arg.rsplit(":", 1)[-1].isdigit():
            line = int(arg.rsplit(":", 1)[-1])
    except gdb.error:
        pass
    proc = place.module.proc_at(place.link)
    if proc is not None and line:
        same = [c for c in _loops_in(proc) if c.get("line") == line]
        if same:
            return place, min(same, key=lambda c: c["depth"])
    loops = place.loops()
    if loops:
        return place, loops[-1]
    # A function's entry is outside its loops: its one outermost loop.
    outer = [c for c in _loops_in(proc) if c["depth"] == 1] if proc is not None else []
    if len(outer) == 1:
        return place, outer[0]
    if outer:
        raise ls.LoopscopeError("%s: %s has %d outermost loops (at %s): name one by FILE:LINE" % (
            command, label, len(outer), ", ".join(ls._where(c) for c in outer)))
    raise ls.LoopscopeError("%s: no loop at %s (%s)" % (command, label, ls._hex(pc)))


def _spec(place, proc, link):
    """A breakpoint location for link-time address LINK that GDB re-resolves
    when the program is (re)loaded: relative to its procedure's symbol."""
    name = proc.get("linkage_name") or proc.get("name") if proc else None
    if name and proc.get("ranges"):
        start = min(lo for lo, hi in proc["ranges"])
        try:
            sym = ls._function_pc(name)
        except gdb.GdbError:
            sym = None
        if sym is not None and sym - place.bias == start:
            return "*'%s'+%d" % (name, link - start)
    return "*%s" % ls._hex(place.runtime(link))


class BreakLoopCommand(gdb.Command):
    """Set breakpoints at a loop's header, or at all of its exits.

Usage: break-loop [-exit] LOCATION

LOCATION (FILE:LINE, FUNCTION, *ADDRESS) names the loop: the loop whose
source line is LOCATION's line, else the innermost loop around LOCATION's
address, else (a FUNCTION) the function's one outermost loop.  Without -exit, one breakpoint at the loop header (reached at the
start of every iteration); with -exit, one at the target of every edge that
leaves the loop.  They are ordinary breakpoints (see "info breakpoints")."""

    def __init__(self):
        super().__init__("break-loop", gdb.COMMAND_BREAKPOINTS, gdb.COMPLETE_LOCATION)

    def invoke(self, arg, from_tty):
        ls.STYLES.refresh()
        words = arg.split()
        exits = "-exit" in words or "--exit" in words
        loc = " ".join(w for w in words if w not in ("-exit", "--exit"))
        if not loc:
            raise ls.LoopscopeError("break-loop: usage: break-loop [-exit] LOCATION")
        place, loop = loop_at_location(loc, "break-loop")
        proc = place.module.proc_at(place.link)
        targets = sorted({e[1] for e in loop["exits"]}) if exits else [loop["header"]]
        if not targets:
            raise ls.LoopscopeError("break-loop: the loop %s has no exits" % ls._loop_at(loop))
        desc = loop_desc(place, loop)
        for t in targets:
            bp = gdb.Breakpoint(_spec(place, proc, t))
            ls._write("Breakpoint %d: %s of the %s\n" % (bp.number, "exit" if exits else "header", desc))


def register():
    LoopFinishCommand()
    LoopNextCommand()
    BreakLoopCommand()
