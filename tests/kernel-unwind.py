#!/usr/bin/env python3
# tests/kernel-unwind.py - the unwind recipes on vmlinux (Debian's debug
# image, scripts/setup-kernel-dbg) against two oracles nobody here wrote:
# gcc's CFI in .debug_frame, and the ORC tables objtool made from the code
# (.orc_unwind_ip, .orc_unwind; read here for 6.1's 6-byte entries).  The
# kernel's edges its code does not show - jump labels (__jump_table), the
# fixups of faulting instructions (__ex_table), the alternatives' jumps -
# are followed.  Each oracle: >= 99.5% of the instructions it covers (ORC's
# "undefined" entries - padding, dead code - cover nothing) agree; every
# disagreement counted under its explained class (tests/unwind_classes.py),
# the unexplained under 0.05%.  Slow tier: an 800 MB image.
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("kernel_common", os.path.join(HERE, "kernel-common.py"))
K = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(K)
_spec = importlib.util.spec_from_file_location("core_common", os.path.join(HERE, "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)
sys.path.insert(0, HERE)
import unwind_classes as U  # noqa: E402

ORACLE = os.path.join(C.TOP_BUILDDIR, "tests", "unwind-oracle")


def main():
    if not os.access(ORACLE, os.X_OK):
        C.skip_all("tests/unwind-oracle not built (make check builds it)")
    vmlinux = K.vmlinux_or_skip()
    tap = C.Tap()
    for orc in (False, True):
        label = "vmlinux vs %s" % ("ORC" if orc else ".debug_frame")
        counts, dis, err = U.run_oracle(ORACLE, vmlinux, orc=orc)
        if not tap.ok(counts is not None, "%s: the oracle runs" % label):
            tap.diag(err)
            continue
        unexplained = U.report(tap, label, counts, dis)
        share = 100.0 * counts["agree"] / max(1, counts["covered"])
        tap.ok(counts["covered"] > 1000000 and share >= 99.5,
               "%s: the recipes' CFA is the oracle's on %.3f%% of %d instructions (>= 99.5%%)" %
               (label, share, counts["covered"]))
        tap.ok(len(unexplained) <= 0.0005 * counts["covered"],
               "%s: %d disagreements no class explains (<= 0.05%%)" % (label, len(unexplained)))
    tap.done()


if __name__ == "__main__":
    main()
