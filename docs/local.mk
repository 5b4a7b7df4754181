# The project's documents, developer configuration and the scripts CI runs
# that no other rule lists, in the distribution (make dist, make distcheck)
# so that a tarball has every file README.md and CONTRIBUTING.md point to.
EXTRA_DIST += docs/design.md CONTRIBUTING.md .editorconfig .clang-format gdb-ext/.clang-format \
	scripts/check-analyzers scripts/analyzer-suppressions scripts/mutate-forkserver.c
