# Tests: each one prints TAP.  Fixtures are compiled at test time.
EXTRA_DIST += tests/lib.sh
