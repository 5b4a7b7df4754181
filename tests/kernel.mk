# tests/kernel.mk - the analysis and `loopscope decode` on Debian's debug
# kernel (vmlinux, ext4.ko).  All in the slow tier: they need the kernel's
# debug image (scripts/setup-kernel-dbg installs linux-image-amd64-dbg, about
# 860 MB, and takes faddr2line from linux-source).  The front ends' kernel
# tests are in their own registries (perf-kernel.py, gdb-kernel.sh).
# See tests/README.md (tiers, oracles, adding a test).
#
# KERNEL_SLOW_TESTS run in `make check-slow`; `make check-kernel` runs them.
KERNEL_SLOW_TESTS = \
	tests/kernel-ko.py \
	tests/kernel-decode.py \
	tests/kernel-loops.py \
	tests/kernel-callsites.py \
	tests/kernel-reports.py \
	tests/kernel-debuginfod.py \
	tests/kernel-unwind.py
SLOW_TESTS += $(KERNEL_SLOW_TESTS)
EXTRA_DIST += $(KERNEL_SLOW_TESTS) tests/kernel-common.py
check-kernel:
	@$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(KERNEL_SLOW_TESTS)'
.PHONY: check-kernel
