# loopscope.py - what GDB sources to load the loopscope commands.
#
#   (gdb) source PREFIX/lib/loopscope/gdb/loopscope.py
#   (gdb) source BUILDDIR/gdb-ext/loopscope.py
#
# To have the commands in every session, copy the drop-in
# PREFIX/share/loopscope/gdbinit.d/loopscope.gdb (that one `source` line)
# into GDB's system gdbinit directory, or add the line to ~/.gdbinit.
# `man loopscope-gdb` and `help structure`, `help info loops`, `help
# loop-next`, `help loop-finish`, `help break-loop`, `help show loopscope`,
# `help function _loop_depth` and `help maint info loopscope` describe them.
#
# This file only finds the C module _loopscope (next to this file once
# installed, in .libs/ in a build tree, or in $LOOPSCOPE_GDB_LIBDIR) and
# imports the implementation, loopscope_gdb.py, as a real module so that its
# names stay out of GDB's __main__.  Sourcing it twice is harmless.
import os as _os
import sys as _sys


def _loopscope_load():
    here = _os.path.dirname(_os.path.abspath(__file__))
    candidates = [_os.environ.get("LOOPSCOPE_GDB_LIBDIR"), here, _os.path.join(here, ".libs")]
    found = None
    for d in candidates:
        if d and _os.path.exists(_os.path.join(d, "_loopscope.so")):
            found = d
            break
    if found is None:
        raise ImportError("loopscope: _loopscope.so is neither in %s nor in %s/.libs "
                          "(build it with make, or set LOOPSCOPE_GDB_LIBDIR)" % (here, here))
    for d in (here, found):
        if d not in _sys.path:
            _sys.path.insert(0, d)
    import loopscope_gdb
    loopscope_gdb.register()


_loopscope_load()
del _loopscope_load
