# tests/cli.mk - the loopscope command line itself: its option parser,
# --help, --usage, -V, every option in the man page and the completion; and
# decode's runtime inputs (kallsyms, /proc/modules, /sys/module, the KASLR
# offset) on a made-up kernel.  (What the commands print is checked with the
# analysis, in tests/core.mk, and on Debian's kernel, in tests/kernel.mk.)
# See tests/README.md (tiers, oracles, adding a test).
#
# CLI_TESTS run in `make check`, CLI_SLOW_TESTS in `make check-slow`;
# `make check-cli` runs the first.
CLI_TESTS = \
	tests/cli-options.sh \
	tests/cli-decode-maps.sh
CLI_SLOW_TESTS =
TESTS += $(CLI_TESTS)
SLOW_TESTS += $(CLI_SLOW_TESTS)
EXTRA_DIST += $(CLI_TESTS) $(CLI_SLOW_TESTS)
check-cli:
	@$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(CLI_TESTS)'
.PHONY: check-cli
