# Tests: each one prints TAP.  Fixtures are compiled at test time.
EXTRA_DIST += tests/lib.sh tests/tap.h
# Core: differential tests against llvm-symbolizer and clang's loop
# annotations, bad input (tests owned by "tests").
TESTS += tests/core-symbolizer.py
TESTS += tests/core-loops.py
TESTS += tests/core-inline.py
TESTS += tests/core-badinput.sh
TESTS += tests/core-unresolved.sh
EXTRA_DIST += tests/core-common.py
EXTRA_DIST += tests/core-symbolizer.py
EXTRA_DIST += tests/core-loops.py
EXTRA_DIST += tests/core-inline.py
EXTRA_DIST += tests/core-badinput.sh
EXTRA_DIST += tests/core-unresolved.sh
EXTRA_DIST += tests/fixtures/small.cpp
EXTRA_DIST += tests/fixtures/inline_deep.c
EXTRA_DIST += tests/fixtures/recursion.c
EXTRA_DIST += tests/fixtures/cold.c
EXTRA_DIST += tests/fixtures/shlib.c
EXTRA_DIST += tests/fixtures/shlib_main.c
EXTRA_DIST += tests/fixtures/loops.c
EXTRA_DIST += tests/fixtures/bad_decode.s
EXTRA_DIST += tests/fixtures/bad_jumptable.s
EXTRA_DIST += tests/fixtures/bad_overlap.s
EXTRA_DIST += tests/fixtures/jump_tables.s
EXTRA_DIST += tests/fuzz-module.c
EXTRA_DIST += bench/lookup.sh
EXTRA_DIST += bench/struct.sh
EXTRA_DIST += bench/README.md
# The core's libFuzzer target: ./configure --enable-fuzz CC=clang, then
# make fuzz-module (build) or make fuzz-module-run (seeds + 5 minutes).
# The core's objects are linked in directly (not the shared library) and
# every object is built with the fuzzer's coverage and ASan.
if ENABLE_FUZZ
AM_CFLAGS += -fsanitize=fuzzer-no-link,address -fno-omit-frame-pointer
noinst_PROGRAMS += fuzz-module
fuzz_module_SOURCES = tests/fuzz-module.c
fuzz_module_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
fuzz_module_LDFLAGS = -fsanitize=fuzzer,address
fuzz_module_LDADD = $(libloopscope_la_OBJECTS) $(libloopscope_la_LIBADD)
FUZZ_TIME = 300
fuzz-module-run: fuzz-module
	mkdir -p fuzz-corpus/seed fuzz-corpus/work
	for s in inline_deep recursion cold loops; do \
	  gcc -O2 -g -o fuzz-corpus/seed/$$s $(srcdir)/tests/fixtures/$$s.c || exit 1; \
	  strip -o fuzz-corpus/seed/$$s-stripped fuzz-corpus/seed/$$s; done
	gcc -O2 -g -o fuzz-corpus/seed/bad_decode $(srcdir)/tests/fixtures/bad_decode.s
	./fuzz-module -max_total_time=$(FUZZ_TIME) -rss_limit_mb=4096 -max_len=262144 \
	  -artifact_prefix=fuzz-corpus/ fuzz-corpus/work fuzz-corpus/seed
.PHONY: fuzz-module-run
endif
TESTS += tests/gdb-structure.sh
TESTS += tests/gdb-loop-finish.sh
TESTS += tests/gdb-core.sh
TESTS += tests/gdb-bad-input.sh
EXTRA_DIST += tests/gdb-lib.sh
EXTRA_DIST += tests/fixtures/gdb/loops.c
EXTRA_DIST += tests/fixtures/gdb/check.py
check_PROGRAMS += tests/unit-output
TESTS += tests/unit-output
tests_unit_output_SOURCES = tests/unit-output.c
tests_unit_output_LDADD = libloopscope.la
TESTS += tests/struct-output.py
EXTRA_DIST += tests/struct-output.py
TESTS += tests/gdb-shlib.sh
EXTRA_DIST += tests/fixtures/gdb/shlib.c
EXTRA_DIST += tests/fixtures/gdb/shlib_main.c
check_PROGRAMS += tests/unit-loop-forest
TESTS += tests/unit-loop-forest
tests_unit_loop_forest_SOURCES = tests/unit-loop-forest.c
tests_unit_loop_forest_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_unit_loop_forest_LDADD = libloopscope.la
TESTS += tests/perf-loops.sh
TESTS += tests/perf-badinput.sh
TESTS += tests/perf-command.sh
EXTRA_DIST += tests/fixtures/perf/inline_loop.c
EXTRA_DIST += tests/fixtures/perf/split_loops.c
EXTRA_DIST += tests/fixtures/perf/libhot.c
EXTRA_DIST += tests/fixtures/perf/shlib_main.c
EXTRA_DIST += tests/fixtures/perf/threads_fork.c
EXTRA_DIST += tests/fixtures/perf/tree.py
check_PROGRAMS += tests/unit-cfg
TESTS += tests/unit-cfg
tests_unit_cfg_SOURCES = tests/unit-cfg.c
tests_unit_cfg_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_unit_cfg_LDADD = libloopscope.la $(ELFUTILS_LIBS)
check_PROGRAMS += tests/unit-dwarf
TESTS += tests/unit-dwarf
tests_unit_dwarf_SOURCES = tests/unit-dwarf.c
tests_unit_dwarf_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_unit_dwarf_LDADD = libloopscope.la $(ELFUTILS_LIBS)
EXTRA_DIST += tests/fixtures/perf/bench_work.c
EXTRA_DIST += tests/gdb-structure.sh
EXTRA_DIST += tests/gdb-loop-finish.sh
EXTRA_DIST += tests/gdb-core.sh
EXTRA_DIST += tests/gdb-bad-input.sh
EXTRA_DIST += tests/gdb-shlib.sh
# The real-code corpus: Debian source packages built at test time
# (tests/corpus/corpus.py; `python3 tests/corpus/corpus.py --list`).
EXTRA_DIST += tests/corpus/corpus.py
# Kernel (issue 9): Debian's debug vmlinux and ext4.ko, installed by
# scripts/setup-kernel-dbg when missing (LOOPSCOPE_NO_KERNEL_DBG=1: never;
# the tests then skip).  Oracles: faddr2line, llvm-symbolizer, objdump, ld.
TESTS += tests/kernel-ko.py
TESTS += tests/kernel-decode.py
TESTS += tests/kernel-loops.py
TESTS += tests/kernel-callsites.py
EXTRA_DIST += tests/kernel-common.py tests/kernel-ko.py tests/kernel-decode.py
EXTRA_DIST += tests/kernel-loops.py tests/kernel-callsites.py
EXTRA_DIST += scripts/setup-kernel-dbg bench/decode.sh
TESTS += tests/perf-kernel.py
EXTRA_DIST += tests/perf-kernel.py tests/fixtures/perf/kernel_perfdata.py
TESTS += tests/gdb-kernel.sh
EXTRA_DIST += tests/gdb-kernel.sh
TESTS += tests/corpus-loops.py
EXTRA_DIST += tests/corpus-loops.py
TESTS += tests/corpus-perf.py
EXTRA_DIST += tests/corpus-perf.py
EXTRA_DIST += tests/corpus/bench.lua
TESTS += tests/perf-install.sh
TESTS += tests/perf-report-options.sh
EXTRA_DIST += tests/perf-report-options.sh tests/fixtures/perf/cxx_names.cpp
TESTS += tests/perf-pprof.py
EXTRA_DIST += tests/perf-pprof.py
