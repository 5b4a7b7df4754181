# loopscope_module.py - add-module-file: a kernel module's symbols where
# the kernel put its sections (loaded by loopscope_gdb.register()).
#
#   add-module-file [-sys-module DIR] MODULE.ko [BASE]
#
# GDB's own `add-symbol-file M.ko -o BASE` lays the .ko out its own way:
# every allocated section in header order from BASE, the notes first, so
# ext4.ko's .text lands at BASE+0x60 and .text.unlikely after it, where the
# kernel has neither.  The kernel's module loader puts .text at the base
# (what /proc/modules and an oops' module list print) and the other code
# sections after it (libloopscope's ls_module_kernel_layout); a running
# kernel tells each section's address in /sys/module/M/sections.  This
# command runs add-symbol-file with a -s for each section from one or the
# other, so that GDB's symbols and lines and loopscope's chains are at the
# addresses the kernel's RIPs have.
import os

import gdb

import _loopscope
import loopscope_gdb as ls


def _sys_module_sections(top, name):
    """{section: address} of module NAME in a /sys/module tree TOP (the
    running kernel's, or a copy of another machine's); {} if not loaded."""
    d = os.path.join(top, name, "sections")
    out = {}
    try:
        names = sorted(os.listdir(d))
    except OSError:
        return out
    for sec in names:
        try:
            with open(os.path.join(d, sec)) as f:
                addr = int(f.read().strip(), 16)
        except (OSError, ValueError):
            continue
        if addr:  # (0: addresses hidden from a user without CAP_SYSLOG)
            out[sec] = addr
    return out


def _loader_sections(path, base):
    """{section: address} of the code sections of PATH (a .ko) as the
    kernel's module loader lays them out from BASE."""
    module = ls.ANALYSES.get(path)  # (LoopscopeError if it cannot be analyzed)
    return {name: base + off for name, off, size, addr in module.kernel_layout()}


class AddModuleFileCommand(gdb.Command):
    """Add a kernel module's symbols at the kernel's own layout of its sections.

Usage: add-module-file [-sys-module DIR] MODULE.ko [BASE]

With BASE (the module's base: /proc/modules' address, where .text starts),
the code sections are placed as the kernel's module loader lays them out
from there (.text at BASE, then .text.unlikely, .static_call.text, ... each
at its alignment).  Without BASE, every section is placed where
DIR/M/sections/SECTION says (default DIR: /sys/module, the running
kernel's; M is the file's name without .ko, '-' read as '_').  Then it runs
add-symbol-file MODULE.ko with a -s for each section, so that GDB's symbols
and loopscope's structure agree with the kernel's addresses (unlike
add-symbol-file -o BASE, which puts .text after the notes)."""

    def __init__(self):
        super().__init__("add-module-file", gdb.COMMAND_FILES, gdb.COMPLETE_FILENAME)

    def invoke(self, arg, from_tty):
        argv = gdb.string_to_argv(arg)
        top = "/sys/module"
        if len(argv) >= 2 and argv[0] == "-sys-module":
            top, argv = argv[1], argv[2:]
        if not argv or len(argv) > 2 or argv[0].startswith("-"):
            raise ls.LoopscopeError("usage: add-module-file [-sys-module DIR] MODULE.ko [BASE]")
        path = os.path.expanduser(argv[0])
        if not os.path.isfile(path):
            raise ls.LoopscopeError("add-module-file: %s: no such file" % ls._d(path))
        if len(argv) == 2:
            try:
                base = int(gdb.parse_and_eval(argv[1]).cast(gdb.lookup_type("unsigned long")))
            except gdb.error as e:
                raise ls.LoopscopeError("add-module-file: BASE: %s" % e)
            secs = _loader_sections(path, base)
            if ".text" not in secs:
                raise ls.LoopscopeError("add-module-file: %s is not a kernel module with a .text (a .ko)"
                                        % ls._d(path))
        else:
            name = os.path.basename(path).split(".ko")[0].replace("-", "_")
            secs = _sys_module_sections(top, name)
            if ".text" not in secs:
                raise ls.LoopscopeError(
                    "add-module-file: %s is not loaded (no %s/%s/sections/.text with an address): "
                    "give its base (/proc/modules), or -sys-module DIR for another machine's tree"
                    % (name, ls._d(top), name))
        rest = " ".join("-s %s %s" % (sec, ls._hex(addr)) for sec, addr in sorted(secs.items())
                        if sec != ".text")
        cmd = "add-symbol-file %s %s %s" % (_quoted(path), ls._hex(secs[".text"]), rest)
        gdb.execute(cmd.rstrip(), from_tty)


def _quoted(path):
    return '"%s"' % path.replace("\\", "\\\\").replace('"', '\\"') if any(c in path for c in ' "\'\\') else path


def register():
    AddModuleFileCommand()
