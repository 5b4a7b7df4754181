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
	tests/corpus-placement.py \
	tests/corpus-unwind.py \
	tests/corpus-stripped.py \
	tests/corpus-record.py \
	tests/corpus-data.py \
	tests/corpus-decode-fast.sh
SLOW_TESTS += $(CORPUS_SLOW_TESTS)
EXTRA_DIST += $(CORPUS_SLOW_TESTS) tests/corpus/corpus.py tests/corpus/bench.lua tests/fixtures/data_eigen_cg.cpp
# corpus-record.py (and bench/record.py) build xz and LevelDB's db_bench with
# their own build systems and Debian's flags (tests/corpus/packages.py).
CORPUS_SOURCES += xz-utils leveldb
EXTRA_DIST += tests/corpus/packages.py bench/record.py
check-corpus:
	@$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(CORPUS_SLOW_TESTS)'
.PHONY: check-corpus
