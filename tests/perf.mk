# tests/perf.mk - perf loops (perf-plugin/): report, annotate, the browser,
# pprof output, bad and hostile perf.data, the install as perf runs it.
# See tests/README.md (tiers, oracles, adding a test).
#
# PERF_TESTS (scripts) and PERF_UNIT_TESTS (programs) run in `make check`,
# PERF_SLOW_TESTS in `make check-slow`; `make check-perf` runs the first two.
PERF_TESTS = \
	tests/perf-loops.sh \
	tests/perf-marks.sh \
	tests/perf-badinput.sh \
	tests/perf-command.sh \
	tests/perf-hostile.sh \
	tests/perf-order.sh \
	tests/perf-report-options.sh \
	tests/perf-pprof.py \
	tests/perf-annotate.sh \
	tests/perf-browser.sh \
	tests/perf-install.sh \
	tests/perf-escapes.sh \
	tests/perf-source-hostile.sh \
	tests/perf-payloads.sh \
	tests/perf-truncate.sh \
	tests/perf-fork-maps.sh \
	tests/perf-buildid.sh \
	tests/perf-debuginfod.sh \
	tests/perf-cxx-names.py \
	tests/perf-habits.sh \
	tests/perf-quiet.sh \
	tests/perf-record-signals.sh \
	tests/perf-annotate-asm.py \
	tests/perf-progress.sh \
	tests/perf-unwind.py \
	tests/perf-stat.sh \
	tests/perf-offcpu.py \
	tests/perf-offcpu-io.py \
	tests/perf-offcpu-tui.sh \
	tests/perf-stat-modes.sh \
	tests/perf-data.py \
	tests/perf-blame.py \
	tests/perf-data-annotate.py \
	tests/perf-data-view.py \
	tests/perf-data-addr.py \
	tests/perf-data-browser.sh
PERF_UNIT_TESTS = tests/unit-names
PERF_SLOW_TESTS = \
	tests/perf-search.py \
	tests/perf-kernel.py \
	tests/perf-browser-real.sh \
	tests/perf-data-perf612.py
TESTS += $(PERF_TESTS) $(PERF_UNIT_TESTS)
SLOW_TESTS += $(PERF_SLOW_TESTS)
EXTRA_DIST += $(PERF_TESTS) $(PERF_SLOW_TESTS) tests/hostile-perf.py
EXTRA_DIST += tests/fixtures/perf/marks.c tests/fixtures/data_addr.c
check-perf:
	@$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(PERF_TESTS) $(PERF_UNIT_TESTS)'
.PHONY: check-perf

check_PROGRAMS += $(PERF_UNIT_TESTS)
# perf loops' shortened C++ names (perf-plugin/names.c), on known answers.
tests_unit_names_SOURCES = tests/unit-names.c perf-plugin/names.c
tests_unit_names_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/perf-plugin

# The fixtures the perf tests compile (and the recordings they write) at test time.
EXTRA_DIST += \
	tests/fixtures/perf/inline_loop.c tests/fixtures/perf/split_loops.c \
	tests/fixtures/perf/libhot.c tests/fixtures/perf/shlib_main.c \
	tests/fixtures/perf/threads_fork.c tests/fixtures/perf/bench_work.c \
	tests/fixtures/perf/nolibc_work.c tests/fixtures/perf/cxx_names.cpp \
	tests/fixtures/perf/tree.py tests/fixtures/perf/annotate_check.py \
	tests/fixtures/perf/kernel_perfdata.py tests/fixtures/perf/cxx_operators.cpp \
	tests/fixtures/perf/lost_perfdata.py \
	tests/fixtures/perf/fp_main.c tests/fixtures/perf/fp_lib.c tests/fixtures/perf/loop_counts.c \
	tests/fixtures/perf/off_cpu.c tests/fixtures/perf/disk_io.c \
	tests/fixtures/perf/hot_loops.c tests/fixtures/perf/fork_loops.c tests/fixtures/perf/recurse_loops.c \
	tests/fixtures/perf/thread_trips.c tests/fixtures/perf/search_phases.c
