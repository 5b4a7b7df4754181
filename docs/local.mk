# The project's documents and developer configuration, in the distribution
# (make dist, make distcheck) so that a tarball has every file README.md and
# the sources point to.
EXTRA_DIST += docs/design.md
