# Manual pages and shell completion (issue 11).  perf runs `man perf-loops`
# for `perf loops --help`, as it runs `man perf-report` for perf report;
# man finds PREFIX/share/man through PREFIX/bin on PATH.
dist_man1_MANS = man/loopscope.1 man/perf-loops.1
bashcompletiondir = $(datadir)/bash-completion/completions
dist_bashcompletion_DATA = man/completion/loopscope man/completion/perf-loops

# The distribution (make dist, make distcheck): files no other rule lists.
EXTRA_DIST += examples/small.cpp bench/perf-report.sh \
	scripts/build scripts/check scripts/demo scripts/setup-deps scripts/distcheck \
	tests/perf-loops.sh tests/perf-badinput.sh tests/perf-command.sh tests/perf-install.sh
# The developer scripts and notes the tests and bench/ name (issues 9-14).
EXTRA_DIST += scripts/check-sanitizers scripts/fuzz-ci scripts/fuzz-coverage \
	scripts/longest-functions scripts/mutate-campaign docs/contract-changes.md
