# tests/lib.mk - libloopscope's public boundary as a program outside the
# tree sees it: the exported symbols, the install (pkg-config) and the ABI
# of the previous release, the ls_file_* calls, the one disassembler, the
# one debug-file search, analysis on demand, the status codes, the JSON
# writer on its own.
# See tests/README.md (tiers, oracles, adding a test).
#
# LIB_TESTS (scripts) and LIB_UNIT_TESTS (programs) run in `make check`,
# LIB_SLOW_TESTS in `make check-slow`; `make check-lib` runs the first two.
LIB_TESTS = \
	tests/lib-install.sh \
	tests/lib-abi.sh \
	tests/lib-file.sh \
	tests/lib-disasm.sh \
	tests/lib-debuginfo.sh \
	tests/lib-on-demand.sh
LIB_UNIT_TESTS = tests/unit-errors tests/unit-json
LIB_SLOW_TESTS =
TESTS += $(LIB_TESTS) $(LIB_UNIT_TESTS)
SLOW_TESTS += $(LIB_SLOW_TESTS)
EXTRA_DIST += $(LIB_TESTS) $(LIB_SLOW_TESTS) tests/fixtures/lib/lookup.c
# lib-abi.sh: a program built against release 0.1.0's header and map
EXTRA_DIST += tests/fixtures/lib/abi01.c \
	tests/fixtures/lib/loopscope-0.1/loopscope.h tests/fixtures/lib/loopscope-0.1/loopscope.map
check-lib:
	@$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(LIB_TESTS) $(LIB_UNIT_TESTS)'
.PHONY: check-lib

check_PROGRAMS += $(LIB_UNIT_TESTS)
# The public API's status codes (LS_ERR_NOT_FOUND, LS_ERR_DWARF,
# LS_ERR_NOMEM through every allocation made to fail in turn).
tests_unit_errors_SOURCES = tests/unit-errors.c
tests_unit_errors_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
tests_unit_errors_LDADD = libloopscope-internal.la $(ELFUTILS_LIBS)
# The one JSON writer, on its own.
tests_unit_json_SOURCES = tests/unit-json.c
tests_unit_json_LDADD = libloopscope-json.la
# The helper of lib-file.sh, lib-disasm.sh and lib-debuginfo.sh: what the
# ls_file_*, ls_disassemble and ls_find_debug_file calls give, printed.
check_PROGRAMS += tests/file-info
tests_file_info_SOURCES = tests/file-info.c
tests_file_info_LDADD = libloopscope.la
# The helper of lib-on-demand.sh: analysis on demand against the whole
# analysis through the public API, lookups from several threads at once.
check_PROGRAMS += tests/on-demand
tests_on_demand_SOURCES = tests/on-demand.c
tests_on_demand_LDADD = libloopscope.la -lpthread
