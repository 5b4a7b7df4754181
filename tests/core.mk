# tests/core.mk - the analysis (libloopscope) through the loopscope CLI and
# its unit tests: inline chains, lines, loops, procedures, the cache, hostile
# and bad input, threads.  See tests/README.md (tiers, oracles, adding one).
#
# CORE_TESTS (scripts) and CORE_UNIT_TESTS (programs) run in `make check`,
# CORE_SLOW_TESTS in `make check-slow`; `make check-core` runs the first two.
CORE_TESTS = \
	tests/core-inline.py \
	tests/core-badinput.sh \
	tests/core-unresolved.sh \
	tests/core-sources.sh \
	tests/core-dir0.sh \
	tests/core-repro-loops.py \
	tests/core-cache.sh \
	tests/core-cache-key.sh \
	tests/core-hostile.sh \
	tests/core-threads.sh \
	tests/core-symbolizer.py \
	tests/core-loops.py \
	tests/core-probes.py \
	tests/struct-output.py \
	tests/line0.py \
	tests/core-deep-inline.sh \
	tests/core-truncate.sh \
	tests/core-escapes.sh \
	tests/core-source-hostile.sh \
	tests/core-cache-trust.sh \
	tests/core-cache-swap.sh \
	tests/unwind-recipes.py \
	tests/core-data.py \
	tests/core-blame.py \
	tests/core-decode-fast.sh
CORE_UNIT_TESTS = tests/unit-output tests/unit-loop-forest tests/unit-cfg tests/unit-dwarf tests/unit-line-files tests/unit-source \
	tests/unit-procs tests/unit-strtab tests/unit-sort
CORE_SLOW_TESTS =
TESTS += $(CORE_TESTS) $(CORE_UNIT_TESTS)
SLOW_TESTS += $(CORE_SLOW_TESTS)
EXTRA_DIST += $(CORE_TESTS) $(CORE_SLOW_TESTS) tests/core-common.py tests/hostile-elf.py
# The unwind recipes against the compilers' CFI (libdw) and the kernel's ORC
# tables, instruction by instruction: the program unwind-recipes.py,
# corpus-unwind.py and kernel-unwind.py run, and the classes of disagreement
# they share (who is right, and why).
check_PROGRAMS += tests/unwind-oracle
tests_unwind_oracle_SOURCES = tests/unwind-oracle.c
tests_unwind_oracle_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_unwind_oracle_LDADD = libloopscope-internal.la $(ELFUTILS_LIBS)
EXTRA_DIST += tests/unwind_classes.py tests/fixtures/unwind.s
# The fast x86-64 decoder against libopcodes on real binaries
# (tests/core-decode-fast.sh, tests/corpus-decode-fast.sh).
check_PROGRAMS += tests/decode-diff
tests_decode_diff_SOURCES = tests/decode-diff.c tests/decode-compare.h
tests_decode_diff_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_decode_diff_LDADD = libloopscope-internal.la $(ELFUTILS_LIBS)
check-core:
	@$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(CORE_TESTS) $(CORE_UNIT_TESTS)'
.PHONY: check-core

check_PROGRAMS += $(CORE_UNIT_TESTS)
tests_unit_output_SOURCES = tests/unit-output.c
tests_unit_output_LDADD = libloopscope-internal.la
tests_unit_loop_forest_SOURCES = tests/unit-loop-forest.c
tests_unit_loop_forest_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_unit_loop_forest_LDADD = libloopscope-internal.la
tests_unit_cfg_SOURCES = tests/unit-cfg.c
tests_unit_cfg_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_unit_cfg_LDADD = libloopscope-internal.la $(ELFUTILS_LIBS)
tests_unit_dwarf_SOURCES = tests/unit-dwarf.c tests/unit-module.h
tests_unit_dwarf_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_unit_dwarf_LDADD = libloopscope-internal.la $(ELFUTILS_LIBS)
tests_unit_line_files_SOURCES = tests/unit-line-files.c
tests_unit_line_files_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_unit_line_files_LDADD = libloopscope-internal.la $(ELFUTILS_LIBS)
tests_unit_procs_SOURCES = tests/unit-procs.c tests/unit-module.h
tests_unit_procs_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_unit_procs_LDADD = libloopscope-internal.la $(ELFUTILS_LIBS)
tests_unit_strtab_SOURCES = tests/unit-strtab.c
tests_unit_strtab_LDADD = libloopscope-internal.la
tests_unit_sort_SOURCES = tests/unit-sort.c
tests_unit_sort_LDADD = libloopscope-internal.la
tests_unit_source_SOURCES = tests/unit-source.c
tests_unit_source_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_unit_source_LDADD = libloopscope-internal.la

# The fixtures the core tests compile at test time.
EXTRA_DIST += \
	tests/fixtures/small.cpp tests/fixtures/inline_deep.c tests/fixtures/recursion.c \
	tests/fixtures/cold.c tests/fixtures/shlib.c tests/fixtures/shlib_main.c \
	tests/fixtures/loops.c tests/fixtures/loop_lines.c tests/fixtures/loop_lines_dwarf.c tests/fixtures/fmt_align.cc tests/fixtures/made.cpp tests/fixtures/line0.c \
	tests/fixtures/ctor_dtor.h tests/fixtures/ctor_dtor_a.cpp tests/fixtures/ctor_dtor_b.cpp \
	tests/fixtures/bad_decode.s tests/fixtures/decode_prefixed.s tests/fixtures/bad_jumptable.s tests/fixtures/bad_overlap.s \
	tests/fixtures/jump_tables.s tests/fixtures/eh_sleb.s \
	tests/fixtures/dir0/sub/dir0_main.c tests/fixtures/dir0/sub/dir0_local.h tests/fixtures/dir0/inc/dir0_sum.h \
	tests/fixtures/dir0/dir0_entries.s \
	tests/fixtures/data_layout.c tests/fixtures/data_layout.cpp tests/fixtures/data_pointers.c tests/fixtures/data_template.cpp tests/fixtures/data_heap.c tests/fixtures/data_stepped.c tests/data_oracle.py \
	tests/fixtures/blame_fig35.c tests/fixtures/blame_fig315.c tests/fixtures/blame_calls.c tests/blame_expect.py
# Issue 28's hostile inputs (shared with perf.mk's and gdb.mk's tests).
EXTRA_DIST += tests/fixtures/many_funcs.py tests/fixtures/escapes.py tests/fixtures/hostile_source.sh \
	tests/fixtures/cache_forge.py
# issue 22's reproducers (tests/core-repro-loops.py), copied from the shared ones.
EXTRA_DIST += \
	tests/fixtures/repro-loops/README \
	tests/fixtures/repro-loops/cgoto_nested.s \
	tests/fixtures/repro-loops/cgoto_reg.s \
	tests/fixtures/repro-loops/cgoto_spill.s \
	tests/fixtures/repro-loops/cgoto_spill_main.c \
	tests/fixtures/repro-loops/jt_8defs.s \
	tests/fixtures/repro-loops/jt_9defs.s \
	tests/fixtures/repro-loops/jt_copycycle.s \
	tests/fixtures/repro-loops/jt_hoist.c \
	tests/fixtures/repro-loops/jt_manydefs_main.c \
	tests/fixtures/repro-loops/jt_nocycle.s

# The core's libFuzzer targets (scripts/fuzz-ci builds and runs them all):
# ./configure --enable-fuzz CC=clang, then make fuzz-module (build) or make
# fuzz-module-run (seeds + 5 minutes).  The core's objects are linked in
# directly (not the shared library) and every object is built with the
# fuzzer's coverage and ASan.
EXTRA_DIST += tests/fuzz-module.c tests/fuzz-debuginfo.c tests/fuzz-cache.c tests/fuzz-kmap.c \
	tests/fuzz-source.c tests/fuzz-cachedir.c tests/fuzz-data.c tests/fuzz-input.h tests/fuzz-decode.c
EXTRA_DIST += tests/fuzz-seeds/README tests/fuzz-seeds/fuzz-cache/format-v1-recursion.lsc \
	tests/fuzz-seeds/fuzz-cache/regress-ubsan-1 tests/fuzz-seeds/fuzz-perf-data/regress-ubsan-1 \
	tests/fuzz-seeds/fuzz-perf-report/regress-ubsan-1 tests/fuzz-seeds/fuzz-data/regress-ubsan-1 \
	tests/fuzz-seeds/fuzz-decode/regress-wrap-1
if ENABLE_FUZZ
AM_CFLAGS += -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_LINK_FLAGS = -fsanitize=fuzzer,address,undefined
noinst_PROGRAMS += fuzz-module fuzz-debuginfo fuzz-cache fuzz-kmap fuzz-source fuzz-cachedir fuzz-data fuzz-decode
fuzz_module_SOURCES = tests/fuzz-module.c
fuzz_module_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
fuzz_module_LDFLAGS = $(FUZZ_LINK_FLAGS)
fuzz_module_LDADD = $(libloopscope_internal_la_OBJECTS) $(libloopscope_internal_la_LIBADD)
fuzz_debuginfo_SOURCES = tests/fuzz-debuginfo.c
fuzz_debuginfo_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
fuzz_debuginfo_LDFLAGS = $(FUZZ_LINK_FLAGS)
fuzz_debuginfo_LDADD = $(libloopscope_internal_la_OBJECTS) $(libloopscope_internal_la_LIBADD)
fuzz_cache_SOURCES = tests/fuzz-cache.c
fuzz_cache_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
fuzz_cache_LDFLAGS = $(FUZZ_LINK_FLAGS)
fuzz_cache_LDADD = $(libloopscope_internal_la_OBJECTS) $(libloopscope_internal_la_LIBADD)
# a running kernel's files (kallsyms, /proc/modules, /sys/module) as ls_kmap reads them
fuzz_kmap_SOURCES = tests/fuzz-kmap.c
fuzz_kmap_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
fuzz_kmap_LDFLAGS = $(FUZZ_LINK_FLAGS)
fuzz_kmap_LDADD = $(libloopscope_internal_la_OBJECTS) $(libloopscope_internal_la_LIBADD)
# The source files DWARF names, and the cache directory checks (issue 28).
fuzz_source_SOURCES = tests/fuzz-source.c
fuzz_source_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
fuzz_source_LDFLAGS = $(FUZZ_LINK_FLAGS)
fuzz_source_LDADD = $(libloopscope_internal_la_OBJECTS) $(libloopscope_internal_la_LIBADD)
fuzz_cachedir_SOURCES = tests/fuzz-cachedir.c
fuzz_cachedir_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
fuzz_cachedir_LDFLAGS = $(FUZZ_LINK_FLAGS)
fuzz_cachedir_LDADD = $(libloopscope_internal_la_OBJECTS) $(libloopscope_internal_la_LIBADD)
# The fast x86-64 decoder against libopcodes on random bytes.
fuzz_decode_SOURCES = tests/fuzz-decode.c tests/decode-compare.h
fuzz_decode_LDFLAGS = $(FUZZ_LINK_FLAGS)
fuzz_decode_LDADD = $(libloopscope_internal_la_OBJECTS) $(libloopscope_internal_la_LIBADD)
# The accesses' readers of DWARF: location expressions, types, field paths (issue 25).
fuzz_data_SOURCES = tests/fuzz-data.c
fuzz_data_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS) -I$(srcdir)/libloopscope
fuzz_data_LDFLAGS = $(FUZZ_LINK_FLAGS)
fuzz_data_LDADD = $(libloopscope_internal_la_OBJECTS) $(libloopscope_internal_la_LIBADD)
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
