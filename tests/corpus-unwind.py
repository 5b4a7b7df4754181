#!/usr/bin/env python3
# tests/corpus-unwind.py - the unwind recipes against the compiler's CFI
# (libdw: .eh_frame, else .debug_frame) instruction by instruction, on code
# nobody here wrote: glibc's libc.so.6 (with its debug file when installed)
# and every program of the real-code corpus (tests/corpus/corpus.py: Debian
# sources, gcc and clang at -O2 and -O3, no frame pointers).  Each binary's
# CFA rules must agree on >= 99.5% of the instructions the CFI covers;
# every disagreement is counted under its explained class
# (tests/unwind_classes.py: who is right, and why), and what no class
# explains stays under 0.05%.  Slow tier: it needs the corpus.
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("core_common", os.path.join(HERE, "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "corpus"))
import corpus  # noqa: E402
import unwind_classes as U  # noqa: E402

ORACLE = os.path.join(C.TOP_BUILDDIR, "tests", "unwind-oracle")
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"


def check(tap, label, binary):
    counts, dis, err = U.run_oracle(ORACLE, binary)
    if not tap.ok(counts is not None, "%s: the oracle runs" % label):
        tap.diag(err)
        return
    unexplained = U.report(tap, label, counts, dis)
    share = 100.0 * counts["agree"] / max(1, counts["covered"])
    tap.ok(counts["covered"] > 1000 and share >= 99.5,
           "%s: the recipes' CFA is the CFI's on %.3f%% of %d instructions (>= 99.5%%)" % (label, share,
                                                                                         counts["covered"]))
    tap.ok(len(unexplained) <= 0.0005 * counts["covered"],
           "%s: %d disagreements no class explains (<= 0.05%%)" % (label, len(unexplained)))


def main():
    if not os.access(ORACLE, os.X_OK):
        C.skip_all("tests/unwind-oracle not built (make check builds it)")
    C.scratch_dir()
    os.environ.setdefault("LOOPSCOPE_CORPUS_QUIET", "1")
    tap = C.Tap()
    if os.path.exists(LIBC):
        check(tap, "libc.so.6", LIBC)
    for program in corpus.PROGRAMS:
        for cc in corpus.COMPILERS:
            for opt in corpus.OPTS:
                label = "%s %s %s" % (program.name, cc, opt)
                b = corpus.build(program, cc, opt)
                if b is None:
                    tap.skip("%s: not built (make check-slow-setup builds it)" % label)
                    continue
                check(tap, label, b.path)
    tap.done()


if __name__ == "__main__":
    main()
