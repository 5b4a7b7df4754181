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
EXTRA_DIST += tests/fuzz-module.c tests/fuzz-debuginfo.c tests/fuzz-cache.c tests/fuzz-kmap.c
EXTRA_DIST += bench/lookup.sh
EXTRA_DIST += bench/struct.sh
EXTRA_DIST += bench/README.md
# The core's libFuzzer target: ./configure --enable-fuzz CC=clang, then
# make fuzz-module (build) or make fuzz-module-run (seeds + 5 minutes).
# The core's objects are linked in directly (not the shared library) and
# every object is built with the fuzzer's coverage and ASan.
if ENABLE_FUZZ
AM_CFLAGS += -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_LINK_FLAGS = -fsanitize=fuzzer,address,undefined
noinst_PROGRAMS += fuzz-module
fuzz_module_SOURCES = tests/fuzz-module.c
fuzz_module_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
fuzz_module_LDFLAGS = $(FUZZ_LINK_FLAGS)
fuzz_module_LDADD = $(libloopscope_internal_la_OBJECTS) $(libloopscope_internal_la_LIBADD)
# Issue 14: separate debug files, and the cache reader (scripts/fuzz-ci runs all).
noinst_PROGRAMS += fuzz-debuginfo fuzz-cache
fuzz_debuginfo_SOURCES = tests/fuzz-debuginfo.c
fuzz_debuginfo_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
fuzz_debuginfo_LDFLAGS = $(FUZZ_LINK_FLAGS)
fuzz_debuginfo_LDADD = $(libloopscope_internal_la_OBJECTS) $(libloopscope_internal_la_LIBADD)
fuzz_cache_SOURCES = tests/fuzz-cache.c
fuzz_cache_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
fuzz_cache_LDFLAGS = $(FUZZ_LINK_FLAGS)
fuzz_cache_LDADD = $(libloopscope_internal_la_OBJECTS) $(libloopscope_internal_la_LIBADD)
# Issue 21: a running kernel's files as ls_kmap reads them.
noinst_PROGRAMS += fuzz-kmap
fuzz_kmap_SOURCES = tests/fuzz-kmap.c
fuzz_kmap_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
fuzz_kmap_LDFLAGS = $(FUZZ_LINK_FLAGS)
fuzz_kmap_LDADD = $(libloopscope_internal_la_OBJECTS) $(libloopscope_internal_la_LIBADD)
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
TESTS += tests/gdb-backtrace.sh tests/gdb-mi.sh tests/gdb-loop-step.sh tests/gdb-install.sh tests/gdb-progress.sh tests/gdb-tui.sh
EXTRA_DIST += tests/gdb-backtrace.sh tests/gdb-mi.sh tests/gdb-loop-step.sh tests/gdb-install.sh tests/gdb-progress.sh tests/gdb-tui.sh
EXTRA_DIST += tests/fixtures/gdb/leave.cpp
EXTRA_DIST += tests/fixtures/gdb/mi.py tests/fixtures/gdb/mi_check.py
EXTRA_DIST += tests/gdb-lib.sh
EXTRA_DIST += tests/fixtures/gdb/loops.c
EXTRA_DIST += tests/fixtures/gdb/check.py
check_PROGRAMS += tests/unit-output
TESTS += tests/unit-output
tests_unit_output_SOURCES = tests/unit-output.c
tests_unit_output_LDADD = libloopscope-internal.la
TESTS += tests/struct-output.py
EXTRA_DIST += tests/struct-output.py
TESTS += tests/gdb-shlib.sh
EXTRA_DIST += tests/fixtures/gdb/shlib.c
EXTRA_DIST += tests/fixtures/gdb/shlib_main.c
check_PROGRAMS += tests/unit-loop-forest
TESTS += tests/unit-loop-forest
tests_unit_loop_forest_SOURCES = tests/unit-loop-forest.c
tests_unit_loop_forest_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_unit_loop_forest_LDADD = libloopscope-internal.la
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
tests_unit_cfg_LDADD = libloopscope-internal.la $(ELFUTILS_LIBS)
check_PROGRAMS += tests/unit-dwarf
TESTS += tests/unit-dwarf
tests_unit_dwarf_SOURCES = tests/unit-dwarf.c
tests_unit_dwarf_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_unit_dwarf_LDADD = libloopscope-internal.la $(ELFUTILS_LIBS)
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
# Issue 14: hostile files (cache tampering, non-regular files, amplification).
TESTS += tests/core-cache.sh
EXTRA_DIST += tests/core-cache.sh tests/hostile-elf.py
# Issue 21: every input of the analysis is in the cache's key.
TESTS += tests/core-cache-key.sh
EXTRA_DIST += tests/core-cache-key.sh
TESTS += tests/perf-hostile.sh tests/perf-order.sh
EXTRA_DIST += tests/perf-hostile.sh tests/perf-order.sh tests/hostile-perf.py
TESTS += tests/gdb-hostile.sh
EXTRA_DIST += tests/gdb-hostile.sh
TESTS += tests/core-hostile.sh
EXTRA_DIST += tests/core-hostile.sh tests/fixtures/eh_sleb.s
EXTRA_DIST += tests/fuzz-seeds/README tests/fuzz-seeds/fuzz-cache/format-v1-recursion.lsc \
	tests/fuzz-seeds/fuzz-cache/regress-ubsan-1 tests/fuzz-seeds/fuzz-perf-data/regress-ubsan-1 \
	tests/fuzz-seeds/fuzz-perf-report/regress-ubsan-1
TESTS += tests/core-threads.sh
EXTRA_DIST += tests/core-threads.sh tests/fixtures/perf/nolibc_work.c
EXTRA_DIST += bench/growth.sh bench/irreducible-nest.py
# Issue 8 (loop placement, loop lines, line 0): the source reader's unit
# test, and the loop-line and placement tests on the real-code corpus.
check_PROGRAMS += tests/unit-source
TESTS += tests/unit-source
tests_unit_source_SOURCES = tests/unit-source.c
tests_unit_source_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_unit_source_LDADD = libloopscope-internal.la
TESTS += tests/corpus-lines.py
TESTS += tests/corpus-placement.py
EXTRA_DIST += tests/corpus-lines.py
EXTRA_DIST += tests/corpus-placement.py
TESTS += tests/line0.py
EXTRA_DIST += tests/line0.py
EXTRA_DIST += tests/fixtures/line0.c
EXTRA_DIST += tests/fixtures/ctor_dtor.h
EXTRA_DIST += tests/fixtures/ctor_dtor_a.cpp
EXTRA_DIST += tests/fixtures/ctor_dtor_b.cpp
TESTS += tests/gdb-inlined-loops.sh
EXTRA_DIST += tests/gdb-inlined-loops.sh
EXTRA_DIST += tests/fixtures/gdb/inlined_only.c
# Issue 27 (GDB in real sessions): MI stops, threads.
TESTS += tests/gdb-mi-stops.sh tests/gdb-threads.sh tests/gdb-break-loop.sh tests/gdb-quote-fuzz.sh \
	tests/gdb-nonutf8.sh tests/gdb-attach.sh tests/gdb-chain-fields.sh tests/gdb-commands.sh
EXTRA_DIST += tests/gdb-mi-stops.sh tests/gdb-threads.sh tests/gdb-break-loop.sh tests/gdb-quote-fuzz.sh \
	tests/gdb-nonutf8.sh tests/gdb-attach.sh tests/gdb-chain-fields.sh tests/gdb-commands.sh
EXTRA_DIST += tests/fixtures/gdb/quote_fuzz.py tests/fixtures/gdb/udl.cpp
EXTRA_DIST += tests/fixtures/gdb/copies.c tests/fixtures/gdb/dlopen_main.c
EXTRA_DIST += tests/fixtures/gdb/spin.c tests/fixtures/gdb/attach.py
EXTRA_DIST += tests/fixtures/gdb/tui_loops.c tests/fixtures/gdb/tui_column.py tests/fixtures/gdb/gen_inline.py
EXTRA_DIST += tests/fixtures/gdb/qsort_cmp.c
# Slow tier (needs the real-code corpus: lzip's Debian source, built by gcc
# and clang): break-loop on a loop inlined 61 times, an exception, MI, gdb -p.
TESTS += tests/gdb-real.py
EXTRA_DIST += tests/gdb-real.py
EXTRA_DIST += tests/fixtures/gdb/mi3.py tests/fixtures/gdb/mi_stops.py tests/fixtures/gdb/threads_leave.cpp
EXTRA_DIST += tests/fixtures/loop_lines.c
# The library's boundary (issue 10): exports, install, pkg-config.
TESTS += tests/lib-install.sh
EXTRA_DIST += tests/lib-install.sh tests/fixtures/lib/lookup.c
# Issue 21: a program built against release 0.1.0's header and library runs
# on this one (the LOOPSCOPE_0.1 ls_options without a size field).
TESTS += tests/lib-abi.sh
EXTRA_DIST += tests/lib-abi.sh tests/fixtures/lib/abi01.c \
	tests/fixtures/lib/loopscope-0.1/loopscope.h tests/fixtures/lib/loopscope-0.1/loopscope.map
check_PROGRAMS += tests/file-info
tests_file_info_SOURCES = tests/file-info.c
tests_file_info_LDADD = libloopscope.la
TESTS += tests/lib-file.sh
EXTRA_DIST += tests/lib-file.sh
# Issue 21: the one disassembler (ls_disassemble) against objdump, and
# decode's Code: listing.
TESTS += tests/lib-disasm.sh
EXTRA_DIST += tests/lib-disasm.sh
# Issue 21: the one search for debug files (decode's, perf loops') and
# debuginfod, against a local server of its protocol.
TESTS += tests/lib-debuginfo.sh
EXTRA_DIST += tests/lib-debuginfo.sh
# Issue 21: decode of raw addresses through kallsyms, /proc/modules and
# /sys/module as libloopscope reads them (ls_kmap), against the module
# loader's layout.
TESTS += tests/cli-decode-maps.sh
EXTRA_DIST += tests/cli-decode-maps.sh
TESTS += tests/perf-install.sh
TESTS += tests/perf-report-options.sh
EXTRA_DIST += tests/perf-report-options.sh tests/fixtures/perf/cxx_names.cpp
TESTS += tests/perf-pprof.py
EXTRA_DIST += tests/perf-pprof.py
# Issue 10: the one JSON writer, on its own.
check_PROGRAMS += tests/unit-json
TESTS += tests/unit-json
tests_unit_json_SOURCES = tests/unit-json.c
tests_unit_json_LDADD = libloopscope-json.la
# Issue 10: loopscope's option parser, --help, --usage and -V everywhere.
TESTS += tests/cli-options.sh
EXTRA_DIST += tests/cli-options.sh
# perf loops' shortened C++ names (perf-plugin/names.c), on known answers.
check_PROGRAMS += tests/unit-names
TESTS += tests/unit-names
tests_unit_names_SOURCES = tests/unit-names.c perf-plugin/names.c
tests_unit_names_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/perf-plugin
# Issue 10: the public API's status codes (LS_ERR_NOT_FOUND, LS_ERR_DWARF,
# LS_ERR_NOMEM through every allocation made to fail in turn).
check_PROGRAMS += tests/unit-errors
TESTS += tests/unit-errors
tests_unit_errors_SOURCES = tests/unit-errors.c
tests_unit_errors_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_unit_errors_LDADD = libloopscope-internal.la $(ELFUTILS_LIBS)
# perf loops annotate and the terminal browser (issue 12)
TESTS += tests/perf-annotate.sh
EXTRA_DIST += tests/perf-annotate.sh tests/fixtures/perf/annotate_check.py
TESTS += tests/perf-browser.sh
EXTRA_DIST += tests/perf-browser.sh
