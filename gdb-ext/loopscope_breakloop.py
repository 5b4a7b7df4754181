# loopscope_breakloop.py - break-loop: breakpoints at the loops a location names.
#
#   break-loop [-exit] [-temporary] LOCATION [thread N] [task N] [-force-condition] [if COND]
#
# Owns the choice of the loops (every copy of a loop whose code was inlined
# in many places, as `break FILE:LINE` gets every copy of a line), the
# breakpoints set on them (one per copy's header, or per exit target of
# every copy), the temporary groups (the first hit deletes the group), and
# the pending requests: a LOCATION in a shared library not loaded yet waits
# for it (a pending GDB breakpoint stands for the request in `info
# breakpoints`), and becomes the loop's breakpoints when the library is
# loaded.
#
# The breakpoints are GDB's own `break *ADDRESS [thread N] [if COND]`
# (tbreak for -temporary), made through GDB's command so that conditions,
# threads and MI's =breakpoint-created are exactly what `break` gives; the
# address is written relative to the procedure's symbol where GDB finds it
# (*'func'+OFF), so that a re-run that loads the code elsewhere moves them.
import re

import gdb

import loopscope_args as args
import loopscope_gdb as ls

_d = args.escape

BREAK_LOOP_ARGS = args.Spec("break-loop", {"-exit": None, "-temporary": None},
                            location="location", keywords=True)


def _loops_in(node):
    for c in node.get("children", ()):
        if c["kind"] == "loop":
            yield c
        yield from _loops_in(c)


def _line_of(location):
    """(file or None, line) of a FILE:LINE or LINE location, or None."""
    m = re.match(r"^(?:(.+):)?\+?(\d+)$", location.strip("'\""))
    if not m:
        return None
    return (m.group(1).strip("'\"") if m.group(1) else None), int(m.group(2))


def _outermost(loops):
    """LOOPS without those nested in another of them (a loop at the same
    line as the loop around it: one copy is one loop)."""
    out = []
    for loop in loops:
        if not any(o is not loop and o["header"] != loop["header"] and
                   any(lo <= loop["header"] < hi for lo, hi in o["ranges"]) for o in loops):
            out.append(loop)
    return out


class Copy:
    """One copy of the loop: where (object file, bias), its procedure and loop."""

    def __init__(self, place, proc, loop):
        self.place, self.proc, self.loop = place, proc, loop
        self.key = (place.path, loop["header"])


def _copies_at_line(places, file, line):
    """Every loop at FILE:LINE in the object files of PLACES: loopscope's own
    search (each inlined copy, also those GDB's line table lookup skips)."""
    found = {}
    for place in places:
        try:
            hits = place.module.loops_at(line, file if file and "/" in file else None)
        except Exception:
            continue
        if file and "/" not in file:
            hits = [(p, l) for p, l in hits if ls._short(l.get("file")) == file]
        by_proc = {}
        for proc, loop in hits:
            by_proc.setdefault(proc["ranges"][0][0] if proc["ranges"] else id(proc), (proc, []))[1].append(loop)
        for proc, loops in by_proc.values():
            for loop in _outermost(loops):
                c = Copy(place, proc, loop)
                found.setdefault(c.key, c)
    return list(found.values())


def _copy_around(place, label, command):
    """The loop a FUNCTION or *ADDRESS location names at PLACE: the innermost
    loop around it, else the function's one outermost loop."""
    proc = place.module.proc_at(place.link)
    loops = place.loops()
    if loops:
        return Copy(place, proc, loops[-1])
    outer = [c for c in _loops_in(proc) if c["depth"] == 1] if proc is not None else []
    if len(outer) == 1:
        return Copy(place, proc, outer[0])
    if outer:
        raise ls.LoopscopeError("%s: %s has %d outermost loops (at %s): name one by FILE:LINE" % (
            command, _d(label), len(outer), ", ".join(ls._where(c) for c in outer)))
    raise ls.LoopscopeError("%s: no loop at %s (%s)" % (command, _d(label), ls._hex(place.pc)))


def loop_copies(location, command):
    """[Copy] of the loop LOCATION names: for FILE:LINE, every loop whose
    line it is, in every copy (inlined code has one per call); else the
    loop around (or the one loop of) each address LOCATION resolves to."""
    pcs = ls._pc_of_location(location, command)
    places = []
    for pc, label in pcs:
        place = ls.Place.at(pc)
        if all(p.path != place.path for p in places):
            places.append(place)
    line = _line_of(location)
    if line is not None:
        copies = _copies_at_line(places, line[0], line[1])
        if copies:
            return copies
    found = {}
    for pc, label in pcs:
        c = _copy_around(ls.Place.at(pc), label, command)
        found.setdefault(c.key, c)
    return list(found.values())


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _spec(copy, link):
    """The location of link-time address LINK of COPY: *func+OFF when GDB
    resolves the procedure's name (its linkage name first) to the
    procedure, so that the breakpoint moves with the code (a PIE before
    `run`, a re-run that loads it elsewhere); else *ADDRESS."""
    proc, place = copy.proc, copy.place
    if proc and proc.get("ranges"):
        start = min(lo for lo, hi in proc["ranges"])
        # The linkage (mangled) name is an identifier for C++ too; GDB's
        # expression parser finds it as a minimal symbol.
        for name in (proc.get("linkage_name"), proc.get("name")):
            if not name or not _IDENT.match(name):
                continue
            try:
                sym = int(gdb.parse_and_eval("(unsigned long)&%s" % name))
            except gdb.error:
                continue
            if place.link_of(sym) == start:
                return "*%s+%d" % (name, link - start)
    return "*%s" % ls._hex(place.runtime(link))


def _global_thread(n, command):
    """GDB's `thread N` takes the thread's number in the inferior."""
    if n is None:
        return None
    for t in gdb.selected_inferior().threads():
        if t.num == n:
            return n
    raise ls.LoopscopeError("%s: unknown thread %d" % (command, n))


def _new_breakpoint(spec, parsed):
    """A breakpoint made by GDB's break (or tbreak) command, its output
    kept: (breakpoint, GDB's words)."""
    before = set(b.number for b in gdb.breakpoints())
    words = ["tbreak" if parsed.has("-temporary") else "break", spec]
    if parsed.thread is not None:
        words.append("thread %d" % parsed.thread)
    if parsed.task is not None:
        words.append("task %d" % parsed.task)
    if parsed.force_condition:
        words.append("-force-condition")
    if parsed.condition is not None:
        words.append("if " + parsed.condition)
    try:
        out = ls._execute(" ".join(words))
    except gdb.error as e:
        out = str(e)
    new = [b for b in gdb.breakpoints() if b.number not in before]
    return (new[0] if new else None), out


# Temporary groups: the copies of one `break-loop -temporary`; the first hit
# deletes the others (GDB deletes the one hit).
_TEMP_GROUPS = []


def _on_stop(event):
    hit = getattr(event, "breakpoints", None) or []
    numbers = set(b.number for b in hit if b.is_valid())
    if not numbers:
        return
    for group in list(_TEMP_GROUPS):
        if numbers & set(group):
            for b in gdb.breakpoints():
                if b.number in group and b.number not in numbers:
                    b.delete()
            _TEMP_GROUPS.remove(group)


def _ranges(numbers):
    numbers = sorted(numbers)
    if len(numbers) == 1:
        return "Breakpoint %d" % numbers[0]
    if numbers == list(range(numbers[0], numbers[-1] + 1)):
        return "Breakpoints %d-%d" % (numbers[0], numbers[-1])
    return "Breakpoints %s" % " ".join(map(str, numbers))


def set_loop_breakpoints(copies, parsed, command):
    """The breakpoints of COPIES (headers, or exits with -exit); the report."""
    exits = parsed.has("-exit")
    made, failed = [], []
    for copy in copies:
        targets = sorted({e[1] for e in copy.loop["exits"]}) if exits else [copy.loop["header"]]
        for t in targets:
            bp, out = _new_breakpoint(_spec(copy, t), parsed)
            if bp is None:
                failed.append(out.strip().splitlines()[-1] if out.strip() else "no breakpoint made")
                continue
            made.append(bp.number)
    if not made:
        if exits and not any(c.loop["exits"] for c in copies):
            raise ls.LoopscopeError("%s: the loop %s has no exits" % (command, ls._loop_at(copies[0].loop)))
        raise ls.LoopscopeError("%s: %s" % (command, _d(failed[0]) if failed else "no breakpoint made"))
    if parsed.has("-temporary") and len(made) > 1:
        _TEMP_GROUPS.append(made)
    loop = copies[0].loop
    what = "exits" if exits else "header"
    where = "the loop %s" % ls._loop_at(loop)
    if len(copies) == 1:
        place = copies[0].place
        ls._write("%s: %s of %s (header %s, depth %d) in %s%s\n" % (
            _ranges(made), what, where, ls._saddr(ls._hex(place.runtime(loop["header"]))), loop["depth"],
            ls._sfunc(copies[0].proc.get("name") if copies[0].proc else "??"), _extras(parsed)))
    else:
        hosts = []
        for c in copies:
            name = c.proc.get("name") if c.proc else "??"
            if name not in hosts:
                hosts.append(name)
        shown = ", ".join(ls._sfunc(h) for h in hosts[:4]) + (", ..." if len(hosts) > 4 else "")
        ls._write("%s: %s of %s, in each of its %d copies (in %s)%s\n" % (
            _ranges(made), what, where, len(copies), shown, _extras(parsed)))
    if failed:
        ls._write("%s: %d breakpoint%s not made: %s\n" % (command, len(failed), "" if len(failed) == 1 else "s",
                                                         _d(failed[0])))
    return made


def _extras(parsed):
    words = []
    if parsed.has("-temporary"):
        words.append("temporary")
    if parsed.thread is not None:
        words.append("thread %d" % parsed.thread)
    if parsed.condition is not None:
        words.append("if %s" % _d(parsed.condition))
    return "; " + ", ".join(words) if words else ""


# ---- pending requests ---------------------------------------------------------------


class PendingLoop(gdb.Breakpoint):
    """Stands for a break-loop whose LOCATION is in no object file yet: a
    pending breakpoint on LOCATION that never stops (its stop method says
    no), replaced by the loop's breakpoints once LOCATION resolves."""

    def __init__(self, parsed, argument):
        super().__init__(parsed.location)
        self.parsed = parsed
        self.argument = argument

    def stop(self):
        return False


_PENDING = []


def _resolve_pending(*unused):
    """A new object file: the pending requests whose location it defines."""
    for req in list(_PENDING):
        if not req.is_valid():
            _PENDING.remove(req)
            continue
        try:
            ls.command_start()
            copies = loop_copies(req.parsed.location, "break-loop")
        except gdb.GdbError:
            continue  # not this object file
        _PENDING.remove(req)
        number = req.number
        req.delete()
        try:
            made = set_loop_breakpoints(copies, req.parsed, "break-loop")
            ls._write("break-loop: pending breakpoint %d (%s) resolved\n" % (number, _d(req.argument)))
        except gdb.GdbError as e:
            ls._write("break-loop: pending breakpoint %d (%s) deleted: %s\n" % (number, _d(req.argument), e),
                      gdb.STDERR)


def _not_found(message):
    """Whether decode_line's MESSAGE says the location is in no object file
    loaded yet (then the request can wait), not that it is wrong."""
    return any(s in message for s in ("No source file named", "not defined", "No symbol table is loaded",
                                      "No symbol \""))


def make_pending(parsed, argument, command, why):
    setting = gdb.parameter("breakpoint pending")
    if setting is False:
        raise ls.LoopscopeError("%s: %s (and `set breakpoint pending` is off)" % (command, why))
    req = PendingLoop(parsed, argument)
    _PENDING.append(req)
    ls._write("%s: %s; breakpoint %d stands for it until a shared library defines it, then it becomes "
              "the loop's breakpoints\n" % (command, why.rstrip("."), req.number))


class BreakLoopCommand(gdb.Command):
    """Set breakpoints at a loop's header, or at all of its exits.

Usage: break-loop [-exit] [-temporary] LOCATION [thread N] [if COND]

LOCATION (FILE:LINE, FUNCTION, *ADDRESS) names the loop: for FILE:LINE, the
loop whose source line it is, in every copy of it (code inlined in many
places has one copy per call, as `break` has one location per copy); else
the innermost loop around LOCATION's address, or a FUNCTION's one outermost
loop.  Without -exit, a breakpoint at the loop header of each copy (reached
at the start of every iteration); with -exit, one at the target of every
edge that leaves each copy.  They are ordinary breakpoints (see "info
breakpoints"); thread N, task N, -force-condition and if COND apply to each,
as with `break`.  -temporary makes them temporary, and the first one hit
deletes the others.  A LOCATION in a shared library not loaded yet makes a
pending breakpoint that becomes the loop's breakpoints when it is loaded
(unless `set breakpoint pending off`)."""

    def __init__(self):
        super().__init__("break-loop", gdb.COMMAND_BREAKPOINTS)

    def complete(self, text, word):
        return args.complete(BREAK_LOOP_ARGS, text, word)

    def invoke(self, arg, from_tty):
        parsed = args.parse(BREAK_LOOP_ARGS, arg)
        if not parsed.location:
            raise ls.LoopscopeError("break-loop: usage: %s" % BREAK_LOOP_ARGS.usage())
        ls.command_start()
        _global_thread(parsed.thread, "break-loop")
        try:
            copies = loop_copies(parsed.location, "break-loop")
        except ls.LoopscopeError as e:
            if not _not_found(str(e)) or parsed.location.startswith("*"):
                raise
            make_pending(parsed, arg.strip(), "break-loop", str(e).split(": ", 1)[-1])
            return
        set_loop_breakpoints(copies, parsed, "break-loop")


def register():
    BreakLoopCommand()
    gdb.events.stop.connect(ls.quietly(_on_stop))
    gdb.events.new_objfile.connect(ls.quietly(_resolve_pending))
