# tests/gdb.mk - the GDB extension (gdb-ext/) in a real GDB: structure, info
# loops, bt, loop-next/-finish/break-loop, MI, the TUI window, core files,
# shared libraries, progress, bad and hostile input, the installed drop-in.
# See tests/README.md (tiers, oracles, adding a test).
#
# GDB_TESTS run in `make check`, GDB_SLOW_TESTS in `make check-slow`;
# `make check-gdb` runs the first.
GDB_TESTS = \
	tests/gdb-structure.sh \
	tests/gdb-data.sh \
	tests/gdb-loop-finish.sh \
	tests/gdb-core.sh \
	tests/gdb-bad-input.sh \
	tests/gdb-backtrace.sh \
	tests/gdb-bt-facts.sh \
	tests/gdb-mi.sh \
	tests/gdb-mi-line0.sh \
	tests/gdb-loop-step.sh \
	tests/gdb-install.sh \
	tests/gdb-progress.sh \
	tests/gdb-tui.sh \
	tests/gdb-loop-marks.sh \
	tests/gdb-shlib.sh \
	tests/gdb-hostile.sh \
	tests/gdb-inlined-loops.sh \
	tests/gdb-mi-stops.sh \
	tests/gdb-threads.sh \
	tests/gdb-break-loop.sh \
	tests/gdb-quote-fuzz.sh \
	tests/gdb-nonutf8.sh \
	tests/gdb-attach.sh \
	tests/gdb-remote.sh \
	tests/gdb-chain-fields.sh \
	tests/gdb-commands.sh \
	tests/gdb-truncate.sh \
	tests/gdb-source-hostile.sh \
	tests/gdb-relocatable.sh \
	tests/gdb-mi-marks.sh
# gdb-real.py builds lzip (Debian's source) through the corpus' build.
GDB_SLOW_TESTS = \
	tests/gdb-kernel.sh \
	tests/gdb-real.py
CORPUS_SOURCES += lzip
TESTS += $(GDB_TESTS)
SLOW_TESTS += $(GDB_SLOW_TESTS)
EXTRA_DIST += $(GDB_TESTS) $(GDB_SLOW_TESTS) tests/gdb-lib.sh
# gdb-install.sh's `make install` relinks the GDB module where it lies:
# libtool moves gdb-ext/.libs/_loopscope.so aside and links a new one in its
# place, so a GDB of another test loading the build tree's module then reads a
# half-written file ("file too short").  It runs after every other test of the
# same `make check`.
tests/gdb-install.log: $(filter-out tests/gdb-install.log,$(TEST_LOGS))
check-gdb:
	@$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(GDB_TESTS)'
.PHONY: check-gdb

EXTRA_DIST += \
	tests/fixtures/gdb/loops.c tests/fixtures/gdb/leave.cpp tests/fixtures/gdb/inlined_only.c \
	tests/fixtures/gdb/shlib.c tests/fixtures/gdb/shlib_main.c \
	tests/fixtures/gdb/check.py tests/fixtures/gdb/mi.py tests/fixtures/gdb/mi_check.py tests/fixtures/gdb/mi_marks.py \
	tests/fixtures/gdb/quote_fuzz.py tests/fixtures/gdb/udl.cpp \
	tests/fixtures/gdb/copies.c tests/fixtures/gdb/dlopen_main.c \
	tests/fixtures/gdb/spin.c tests/fixtures/gdb/attach.py tests/fixtures/gdb/remote.py \
	tests/fixtures/gdb/tui_loops.c tests/fixtures/gdb/tui_column.py tests/fixtures/gdb/gen_inline.py \
	tests/fixtures/gdb/qsort_cmp.c \
	tests/fixtures/gdb/mi3.py tests/fixtures/gdb/mi_stops.py tests/fixtures/gdb/threads_leave.cpp \
	tests/fixtures/gdb/cold.c tests/fixtures/gdb/bt_levels.cpp
