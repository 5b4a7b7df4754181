# tests/corpus.mk - the real-code corpus: Debian source packages (Lua 5.4
# and 5.3, zstd, Eigen, {fmt}) built at test time with gcc and clang, -O2 and
# -O3 (tests/corpus/corpus.py; about 30 minutes the first time, kept in
# /var/tmp/loopscope-corpus).  All in the slow tier.
# See tests/README.md (tiers, oracles, adding a test).
#
# CORPUS_SLOW_TESTS run in `make check-slow`; `make check-corpus` runs them.
CORPUS_SLOW_TESTS = \
	tests/corpus-loops.py \
	tests/corpus-perf.py \
	tests/corpus-lines.py \
	tests/corpus-placement.py
SLOW_TESTS += $(CORPUS_SLOW_TESTS)
EXTRA_DIST += $(CORPUS_SLOW_TESTS) tests/corpus/corpus.py tests/corpus/bench.lua
check-corpus:
	@$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(CORPUS_SLOW_TESTS)'
.PHONY: check-corpus
