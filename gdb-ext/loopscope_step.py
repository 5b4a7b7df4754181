# loopscope_step.py - running the program loop by loop.
#
#   loop-finish [-count]              run until the loop at $pc is left
#   loop-next [N] [-depth D]          run to the start of the N-th next iteration
#
# (break-loop is loopscope_breakloop.py's.)
#
# Owns the breakpoints that watch a loop of one physical frame (LoopWatch):
# its header, its exits (the targets of every edge leaving it, as loopscope
# found them), the caller's resume address (a return out of the loop), and
# the two ways out that no edge shows: longjmp (glibc's __longjmp, at its
# final indirect jump, where the landing pc and stack pointer are in
# registers) and C++ exceptions (__cxa_begin_catch: the handler's frame is
# its caller).  Every one of them is specific to the thread that started the
# command (as GDB's own finish and until are), and decides in its stop
# method, without stopping the program, whether the event leaves the loop:
# the program stops only when it does.  A landing leaves the loop when the
# loop's frame is gone, or when it is the newest frame again with its pc
# outside the loop.
#
# Stops and MI: a stop made by one of these breakpoints is silent on the
# console (the command says what happened, then shows the frame as finish
# does); in an MI session it is not silent, so that each *stopped record an
# IDE gets has its reason, frame and thread-id (GDB prints a bare *stopped
# for a silent breakpoint).
import os
import time

import gdb

import loopscope_args as args
import loopscope_gdb as ls
import loopscope_settings

_d = args.escape


def _visible_stops():
    """Whether our stops print GDB's stop record (MI sessions: a complete
    *stopped), or are silent (the CLI: the command prints its own words)."""
    return loopscope_settings.MI_SESSION


class WatchBreakpoint(gdb.Breakpoint):
    """An internal breakpoint of a LoopWatch, in thread THREAD only (global
    number).  Its stop method asks the watch; it never alters anything but
    the watch's own state (GDB forbids more in stop methods)."""

    def __init__(self, spec, watch, kind, thread):
        super().__init__(spec, gdb.BP_BREAKPOINT, internal=True)
        self.silent = not _visible_stops()
        if thread is not None:
            self.thread = thread
        self.watch = watch
        self.kind = kind
        self.hits = 0
        self.frame = None       # the physical frame it counts in (None: any)
        self.stop_after = 1     # stop at this many hits in that frame (None: count only)
        self.addr = None

    def stop(self):
        try:
            return self.watch.decide(self)
        except Exception:  # a stop method must not throw into GDB
            return False


def _reg(frame, name):
    """Register NAME of FRAME as an unsigned number."""
    return int(frame.read_register(name).cast(gdb.lookup_type("unsigned long")))


def _newest_physical():
    return ls._physical(gdb.newest_frame())


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


def _live_process():
    """A live process (not a core file, not nothing).  Asked of GDB's target
    stack in words: holding a gdb.TargetConnection (inferior.connection)
    made GDB 13 abort at exit after a SIGTERM (connpy_connection_dealloc)."""
    inf = gdb.selected_inferior()
    if inf.pid == 0:
        return False
    try:
        stack = ls._execute("maint print target-stack")
    except gdb.error:
        return True
    return "core" not in stack.split("The current target stack is:")[-1].split()


def _in_ranges(link, loop):
    return any(lo <= link < hi for lo, hi in loop["ranges"])


# glibc's longjmp, siglongjmp and _longjmp all end in __longjmp (its
# fortified twin is ____longjmp_chk); these are local symbols that
# libc6-dbg's symbol table gives.  Without them, the exported entry points.
LONGJMP_SPECS = (("__longjmp", "____longjmp_chk"), ("longjmp", "_longjmp", "siglongjmp", "__longjmp_chk"))


def _addresses_of(name):
    """The runtime addresses of every function called NAME (ld.so and libc
    each have a __longjmp): from each object file's symbols, else the one
    minimal symbol GDB finds (a library without debug information)."""
    found = []
    for obj in gdb.objfiles():
        for lookup in (obj.lookup_global_symbol, obj.lookup_static_symbol):
            try:
                sym = lookup(name)
                if sym is not None and sym.addr_class == gdb.SYMBOL_LOC_BLOCK:
                    addr = int(sym.value().address.cast(gdb.lookup_type("unsigned long")))
                    if addr not in found:
                        found.append(addr)
            except (gdb.error, RuntimeError):
                continue
    if found:
        return found
    try:
        gdb.execute("info address %s" % name, to_string=True)  # asked first: no noise if unknown
        return [int(gdb.parse_and_eval("(unsigned long)&%s" % name))]
    except gdb.error:
        return []


def _final_jump(addr):
    """(address, register) of the indirect jump that ends the longjmp routine
    at ADDR (glibc: `jmp *%rdx` after the registers are restored), or None."""
    try:
        arch = gdb.selected_frame().architecture()
        insns = arch.disassemble(addr, count=200)
    except (gdb.error, RuntimeError):
        return None
    for insn in insns:
        text = insn["asm"]
        words = text.replace(",", " ").split()
        if not words:
            continue
        if words[0] in ("ret", "retq", "hlt", "ud2"):
            return None
        if "jmp" in words[0] or (words[0] in ("notrack", "bnd") and len(words) > 1 and "jmp" in words[1]):
            target = words[-1]
            if target.startswith("*%"):
                return insn["addr"], target[2:]
    return None


class LoopWatch:
    """The breakpoints that tell where the program goes next relative to LOOP
    of physical frame PHYS, in the selected thread; run() continues until
    one of them stops the program."""

    def __init__(self, place, loop, phys, header_stops=None, count_header=False, progress=None):
        self.place, self.loop, self.phys = place, loop, phys
        self.thread = gdb.selected_thread()
        self.thread_num = self.thread.global_num
        self.fired = None
        self.bps = []
        self.exit_bps, self.ret_bp, self.header_bp = [], None, None
        self.catch_bp = None
        self.progress = progress
        try:
            self._arm(header_stops, count_header)
        except BaseException:
            self.delete()
            raise

    def _bp(self, addr_or_spec, kind, frame=None, stop_after=1):
        spec = addr_or_spec if isinstance(addr_or_spec, str) else "*%s" % ls._hex(addr_or_spec)
        bp = WatchBreakpoint(spec, self, kind, self.thread_num)
        bp.frame, bp.stop_after = frame, stop_after
        bp.addr = None if isinstance(addr_or_spec, str) else addr_or_spec
        self.bps.append(bp)
        return bp

    def _arm(self, header_stops, count_header):
        place, loop, phys = self.place, self.loop, self.phys
        self.exit_bps = [self._bp(place.runtime(t), "exit", phys) for t in sorted({e[1] for e in loop["exits"]})]
        caller = phys.older()
        if caller is not None:
            self.ret_bp = self._bp(caller.pc(), "return", ls._physical(caller))
            self.caller_sp = _reg(caller, "sp")
        else:
            self.caller_sp = None
        self.frame_sp = _reg(phys, "sp")
        if header_stops is not None or count_header:
            self.header_bp = self._bp(place.runtime(loop["header"]), "header", phys, stop_after=header_stops)
        for names in LONGJMP_SPECS:
            addrs = [a for name in names for a in _addresses_of(name)]
            for addr in addrs:
                jump = _final_jump(addr)
                if jump is not None:
                    self._bp(jump[0], "longjmp").reg = jump[1]
                else:  # not found: stop at the entry and step to the landing
                    self._bp(addr, "longjmp-entry")
            if addrs:
                break
        if _addresses_of("__cxa_begin_catch"):
            self.catch_bp = self._bp("__cxa_begin_catch", "catch")
            if self.catch_bp.pending:
                self.catch_bp.delete()
                self.bps.remove(self.catch_bp)
                self.catch_bp = None

    def delete(self):
        for b in self.bps:
            if b.is_valid():
                b.delete()
        self.bps = []

    # ---- the decisions, made in stop methods --------------------------------------

    def decide(self, bp):
        if gdb.selected_thread() is None or gdb.selected_thread().global_num != self.thread_num:
            return False  # (thread-specific already; belt and braces)
        if bp.kind in ("exit", "return", "header", "handler"):
            if bp.frame is not None and _newest_physical() != bp.frame:
                return False
            bp.hits += 1
            if bp.kind == "header" and self.progress:
                self.progress(bp.hits)
            if bp.stop_after is None or bp.hits < bp.stop_after:
                return False
        elif bp.kind == "longjmp":
            if not self._longjmp_leaves(bp.reg):
                return False
        elif bp.kind == "catch":
            if not self._catch_leaves():
                return False
        self.fired = bp
        return True

    def _leaves(self, sp, pc):
        """Whether a landing at stack pointer SP and pc PC is outside the
        loop: in a frame older than the loop's, or in the loop's own frame
        outside the loop's code."""
        if sp < self.frame_sp:
            return False  # a frame the loop's frame called: still inside
        if self.caller_sp is not None and sp >= self.caller_sp:
            return True
        return not _in_ranges(self.place.link_of(pc), self.loop)

    def _longjmp_leaves(self, reg):
        frame = gdb.newest_frame()
        pc = _reg(frame, reg)
        sp = _reg(frame, "sp")
        return self._leaves(sp, pc)

    def _catch_leaves(self):
        """At __cxa_begin_catch: its caller is the handler's frame."""
        if not _frame_on_stack(self.phys):
            return True
        handler = gdb.newest_frame().older()
        while handler is not None and handler.type() == gdb.INLINE_FRAME:
            handler = handler.older()
        if handler is None:
            return True
        if handler != self.phys:
            return False  # a callee of the loop's frame caught it
        return not _in_ranges(self.place.link_of(gdb.newest_frame().older().pc() - 1), self.loop)

    # ---- running ----------------------------------------------------------------------

    def _land_longjmp(self, bp):
        """From the longjmp routine, to where it lands: one instruction from
        its final jump, or steps from its entry."""
        if bp.kind == "longjmp":
            gdb.execute("stepi", to_string=True)
            return
        start = gdb.newest_frame().name()
        for _ in range(4000):
            gdb.execute("stepi", to_string=True)
            if gdb.newest_frame().name() != start:
                return
        raise ls.LoopscopeError("longjmp did not land within 4000 instructions")

    def run(self):
        """Continue until the loop is left, the header count is reached, or
        something else stops the program.  Returns (how, breakpoint): how in
        "exit", "return", "longjmp", "exception", "header", None (a stop
        that is not ours: a breakpoint of the user's, a signal, the end)."""
        while True:
            self.fired = None
            gdb.execute("continue", to_string=True)
            if not _live_process():
                return None, None
            bp = self.fired
            if bp is None:
                return None, None
            if bp.kind.startswith("longjmp"):
                self._land_longjmp(bp)
                if bp.kind == "longjmp-entry" and self._still_inside():
                    continue
                return "longjmp", None
            if bp.kind == "catch":
                return self._to_handler()
            return bp.kind, bp

    def _to_handler(self):
        """From __cxa_begin_catch to the handler that called it: a
        breakpoint where it returns, in that frame (not `finish`: its stop
        record under MI has no reason when Python runs it)."""
        handler = gdb.newest_frame().older()
        bp = self._bp(handler.pc(), "handler", ls._physical(handler))
        self.fired = None
        gdb.execute("continue", to_string=True)
        if self.fired is bp:
            return "exception", None
        return None, None

    def _still_inside(self):
        if not _frame_on_stack(self.phys):
            return False
        if _newest_physical() != self.phys:
            return True
        return _in_ranges(self.place.link_of(gdb.newest_frame().pc()), self.loop)


# ---- choosing the loop ------------------------------------------------------------


def frame_loops(frame, place):
    """The loops FRAME's code runs in, outermost first (its inline level's and
    those of the levels it is inlined into)."""
    return ls.enclosing_loops(place.chain, ls._inline_depth(frame))


def selected_loop(command, depth=None):
    """(frame, Place, loop, physical frame) for the selected frame's innermost
    loop, or its loop at DEPTH."""
    if not _live_process():
        raise ls.LoopscopeError("%s: the program is not running (a core file or no process): start it first"
                                % command)
    frame = gdb.selected_frame()
    place = ls.Place.at(ls._lookup_pc(frame))
    loops = frame_loops(frame, place)
    if not loops:
        raise ls.LoopscopeError("%s: pc %s (%s in %s) is not inside any loop%s" % (
            command, ls._hex(frame.pc()), ls._where(place.chain[-1]) if place.chain else "??",
            _d(place.chain[0].get("name")) if place.chain else "??",
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
    here = ls._loc(ls._host_bytes_as_str(lambda: sal.symtab.filename), sal.line) if sal.symtab \
        else ls._saddr(ls._hex(frame.pc()))
    return "%s in %s (%s)" % (here, ls._sfunc(ls._host_bytes_as_str(frame.name) or "??"), ls._saddr(ls._hex(frame.pc())))


def how_left(watch, how, bp, phys_name):
    place, loop = watch.place, watch.loop
    if how == "return":
        return "by returning from %s" % _d(phys_name or "??")
    if how == "longjmp":
        return "by longjmp"
    if how == "exception":
        return "by a C++ exception, caught in %s" % _d(gdb.selected_frame().name() or "??")
    froms = [e[0] for e in loop["exits"] if place.runtime(e[1]) == bp.addr]
    return "via exit %s -> %s" % (ls._hex(place.runtime(froms[0])) if froms else "?", ls._hex(bp.addr))


def stopped_elsewhere(watch):
    """Why the program stopped when none of the watch's breakpoints did:
    the thread it stopped in, when it is not the loop's."""
    try:
        thread = gdb.selected_thread()
    except gdb.error:
        thread = None
    if thread is None or thread.global_num == watch.thread_num:
        return ""
    name = thread.name or ""
    return " (the program stopped in thread %s%s, not in thread %s where the loop runs)" % (
        thread.num, ' "%s"' % _d(name) if name else "", watch.thread.num)


def show_frame(from_tty, how):
    """Like finish: the frame where the program is, unless GDB printed it
    already (MI sessions: the stop record did; a longjmp's landing and an
    exception's handler: the stepi and finish that reached them did)."""
    if from_tty and not _visible_stops() and how not in ("longjmp", "exception"):
        gdb.execute("frame")


class CountProgress:
    """loop-finish -count: the program stops at every iteration to count it
    (the header breakpoint), about a millisecond each; on a terminal, the
    count so far, once a second."""

    def __init__(self, command):
        self.command = command
        self.last = time.monotonic()
        self.shown = False
        self.tty = ls._stderr_is_tty()

    def __call__(self, hits):
        if not self.tty:
            return
        now = time.monotonic()
        if now - self.last >= 1.0:
            self.last = now
            gdb.write("\r%s: %d iterations so far (Ctrl-C stops)\033[K" % (self.command, hits), gdb.STDERR)
            gdb.flush()
            self.shown = True

    def end(self):
        if self.shown:
            gdb.write("\r\033[K", gdb.STDERR)


# ---- loop-finish --------------------------------------------------------------------

LOOP_FINISH_ARGS = args.Spec("loop-finish", {"-count": None})


class LoopFinishCommand(gdb.Command):
    """Run until the innermost loop around the selected frame's code is left.

Usage: loop-finish [-count]

Sets breakpoints on every exit of the loop (the targets of all edges that
leave it, as loopscope found them) and at the frame's return address,
watches longjmp and C++ exception handlers, continues, and reports how the
loop was left: via which exit, by returning, by longjmp, or by an exception
(and where it was caught).  Every breakpoint is specific to the selected
thread: another thread's exceptions and longjmps are not this loop's.  A
breakpoint of yours hit first stops it, and it says so, naming the thread.

With -count, also reports how many times the loop header was reached.  To
count, the program stops at every iteration (about a millisecond each, on a
terminal the count so far is shown once a second); Ctrl-C stops it, and the
count so far is reported.  Needs a live process."""

    def __init__(self):
        super().__init__("loop-finish", gdb.COMMAND_RUNNING)

    def complete(self, text, word):
        return args.complete(LOOP_FINISH_ARGS, text, word)

    def invoke(self, arg, from_tty):
        count = args.parse(LOOP_FINISH_ARGS, arg).has("-count")
        ls.command_start()
        frame, place, loop, phys = selected_loop("loop-finish")
        if not loop["exits"] and phys.older() is None:
            raise ls.LoopscopeError("loop-finish: the loop %s has no exits and no caller to return to"
                                    % ls._loop_at(loop))
        phys_name = phys.name()
        progress = CountProgress("loop-finish") if count else None
        if count:
            ls._write("loop-finish: counting iterations: the program stops at each one (about 1 ms each)\n")
        watch = LoopWatch(place, loop, phys, count_header=count, progress=progress)
        try:
            how, bp = watch.run()
        finally:
            counted = watch.header_bp.hits if watch.header_bp is not None else None
            watch.delete()
            if progress:
                progress.end()
        desc = loop_desc(place, loop)
        so_far = "; header reached %d time%s" % (counted, "" if counted == 1 else "s") if counted is not None else ""
        if how is None:
            ls._write((("The program ended before leaving the %s%s.\n" % (desc, so_far)) if not _live_process()
                       else "Stopped before leaving the %s%s%s.\n" % (desc, so_far + (" so far" if so_far else ""),
                                                                      stopped_elsewhere(watch))))
            return
        ls._write("left %s %s; now at %s%s\n" % (desc, how_left(watch, how, bp, phys_name), where_now(), so_far))
        show_frame(from_tty, how)


# ---- loop-next --------------------------------------------------------------------

LOOP_NEXT_ARGS = args.Spec("loop-next", {"-depth": lambda v: int(v, 0)}, words=1)


class LoopNextCommand(gdb.Command):
    """Run to the start of the next iteration of the loop at the selected frame.

Usage: loop-next [N] [-depth D]

Continues until the loop's header is reached N times (default 1) in this
frame: the start of the N-th next iteration.  The loop is the innermost one
around the selected frame's code, or with -depth D the one of nesting depth
D (1: the outermost loop of the procedure).  Stops early, and says so, when
the loop is left (an exit, a return, longjmp, an exception) or a breakpoint
of yours is hit.  Its breakpoints are specific to the selected thread.
Needs a live process."""

    def __init__(self):
        super().__init__("loop-next", gdb.COMMAND_RUNNING)

    def complete(self, text, word):
        return args.complete(LOOP_NEXT_ARGS, text, word)

    @staticmethod
    def _parse(arg):
        parsed = args.parse(LOOP_NEXT_ARGS, arg)
        depth = parsed.get("-depth")
        try:
            n = int(parsed.words[0], 0) if parsed.words else 1
        except ValueError:
            raise ls.LoopscopeError("loop-next: usage: loop-next [N] [-depth D] (got %s)" % _d(arg))
        if n < 1 or (depth is not None and depth < 1):
            raise ls.LoopscopeError("loop-next: N and D are at least 1")
        return n, depth

    def invoke(self, arg, from_tty):
        n, depth = self._parse(arg)
        ls.command_start()
        frame, place, loop, phys = selected_loop("loop-next", depth)
        phys_name = phys.name()
        watch = LoopWatch(place, loop, phys, header_stops=n)
        try:
            how, bp = watch.run()
            done = watch.header_bp.hits
        finally:
            watch.delete()
        desc = loop_desc(place, loop)
        if how == "header":
            ls._write("at the header of the %s, %d iteration%s on; now at %s\n" % (
                desc, n, "" if n == 1 else "s", where_now()))
        elif how is None:
            ls._write(("The program ended after %d of %d iterations of the %s.\n" % (done, n, desc))
                      if not _live_process() else
                      "Stopped after %d of %d iterations of the %s%s.\n" % (done, n, desc, stopped_elsewhere(watch)))
            return
        else:
            ls._write("left %s %s after %d of %d iterations; now at %s\n" % (
                desc, how_left(watch, how, bp, phys_name), done, n, where_now()))
        show_frame(from_tty, how)


def register():
    import loopscope_breakloop
    LoopFinishCommand()
    LoopNextCommand()
    loopscope_breakloop.register()
