# Tests (tests/README.md says how to run them, add one, and which oracle
# each uses).  Every test prints TAP; fixtures are compiled at test time.
#
# One registry per component, each test in exactly one, with its fixtures
# and programs beside it: core.mk (the analysis through the CLI), lib.mk (the
# library's public boundary), cli.mk, perf.mk, gdb.mk, kernel.mk, corpus.mk.
#
# Two tiers:
#   make check        the fast tier (TESTS): nothing but the Debian packages of
#                     scripts/setup-deps; never installs or downloads anything
#   make check-slow   the slow tier (SLOW_TESTS): the kernel's debug image and
#                     the real-code corpus, set up first (both may download)
#   make check-all    everything CI runs: scripts/check (.ci/run), both tiers,
#                     the -Werror build, sanitizers, fuzzing, distcheck
SLOW_TESTS =
# Debian source packages that slow tests build themselves, beyond the
# corpus' own programs (fetched by check-slow-setup: tests never download).
CORPUS_SOURCES =
# tests/README.md's table against the registries (any component's).
TESTS += tests/tests-readme.sh
EXTRA_DIST += tests/README.md tests/tests-readme.sh tests/lib.sh tests/tap.h tests/tmux.sh
include $(srcdir)/tests/core.mk
include $(srcdir)/tests/lib.mk
include $(srcdir)/tests/cli.mk
include $(srcdir)/tests/perf.mk
include $(srcdir)/tests/gdb.mk
include $(srcdir)/tests/kernel.mk
include $(srcdir)/tests/corpus.mk

# The slow tier's set-up, before its tests: the kernel's debug image and
# faddr2line (scripts/setup-kernel-dbg), perf 6.12 built with a fix (about
# 1.5 minutes: scripts/setup-perf612 --build; else Debian's package, seconds),
# and the corpus (about 30 minutes the first time).
# Where one cannot be had (no network, LOOPSCOPE_NO_KERNEL_DBG=1) the tests
# that need it skip, saying why.
check-slow-setup:
	@echo "check-slow: the kernel's debug image (scripts/setup-kernel-dbg)"
	@$(top_srcdir)/scripts/setup-kernel-dbg >/dev/null && \
	 $(top_srcdir)/scripts/setup-kernel-dbg --faddr2line >/dev/null || \
	 echo "check-slow: no kernel debug image: the kernel tests will skip"
	@echo "check-slow: perf 6.12 (scripts/setup-perf612 --build, else Debian's package)"
	@$(top_srcdir)/scripts/setup-perf612 --build >/dev/null || $(top_srcdir)/scripts/setup-perf612 >/dev/null || \
	 echo "check-slow: no perf 6.12: the comparison with its data types will skip"
	@echo "check-slow: the real-code corpus (tests/corpus/corpus.py)"
	@python3 $(top_srcdir)/tests/corpus/corpus.py >/dev/null || \
	 echo "check-slow: a part of the corpus could not be built: its tests will skip it"
	@test -z "$(CORPUS_SOURCES)" || python3 $(top_srcdir)/tests/corpus/corpus.py --fetch $(CORPUS_SOURCES) || \
	 echo "check-slow: a source package could not be fetched: the tests that build it will skip"
check-slow: check-slow-setup
	@$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(SLOW_TESTS)'
# scripts/check builds in its own tree and the sanitizer and fuzz runs copy
# a git checkout: elsewhere (a tarball, a build outside the sources) both
# tiers are make check and make check-slow.
check-all:
	@if test "$(abs_top_srcdir)" != "$(abs_top_builddir)" || test ! -e "$(abs_top_srcdir)/.git"; then \
	  echo "check-all runs scripts/check in a git checkout built in place; here: make check check-slow" >&2; \
	  exit 1; fi
	cd "$(abs_top_srcdir)" && scripts/check --all
.PHONY: check-slow-setup check-slow check-all

# The benchmarks and scripts the tests name.
EXTRA_DIST += bench/README.md bench/lookup.sh bench/struct.sh bench/decode.sh bench/on-demand.sh \
	bench/growth.sh bench/irreducible-nest.py scripts/setup-kernel-dbg scripts/time-tests \
	scripts/build-copy.sh scripts/show-regressions bench/annotate.sh \
	scripts/check-werror scripts/setup-perf612 scripts/perf612-jump-parse-ref.patch
