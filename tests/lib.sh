# tests/lib.sh - TAP helpers and fixture builds for the shell tests.
#   . "$top_srcdir/tests/lib.sh"
#   ok CONDITION-EXIT-STATUS "description"; skip_all "reason"; done_testing
# skip_all only for a missing facility (a tool not installed, perf record not
# permitted); when the product fails, or a fixture of ours does not build
# with the compiler that is there, the test cannot go on: fail_all "reason".
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${LOOPSCOPE:=$top_builddir/loopscope}"
: "${PERF_LOOPS:=$top_builddir/perf-loops}"
FIXTURES="$top_srcdir/tests/fixtures"
# Every test gets its own scratch directory and its own cache.
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ls-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export XDG_CACHE_HOME="$TMP/cache"
_tap_n=0
_tap_failed=0
ok() { # ok STATUS DESCRIPTION
	_tap_n=$((_tap_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $_tap_n - $2"
	else echo "not ok $_tap_n - $2"; _tap_failed=$((_tap_failed + 1)); fi
}
pass() { ok 0 "$1"; }
fail() { ok 1 "$1"; }
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n # SKIP $1"; }
diag() { echo "# $*"; }
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
fail_all() { fail "$1"; done_testing; }
done_testing() { echo "1..$_tap_n"; exit 0; }
# check_eq GOT WANT DESCRIPTION: pass when equal; else fail, say both, and return 1
check_eq() {
	if [ "$1" = "$2" ]; then pass "$3"; else fail "$3"; diag "got:  $1"; diag "want: $2"; return 1; fi
}
# build_fixture CC OPT SRC OUT [extra flags...]: compile a fixture at test time.
build_fixture() {
	_cc=$1 _opt=$2 _src=$3 _out=$4; shift 4
	"$_cc" "$_opt" -g "$@" -o "$_out" "$FIXTURES/$_src" 2>"$TMP/cc.err" || { cat "$TMP/cc.err" >&2; return 1; }
}
# sanitized PROGRAM: true if PROGRAM (or the binary behind its libtool
# wrapper) is built with ASan or TSan, which reserve terabytes of address
# space: no `ulimit -v` for them.
sanitized() {
	_bin="$(dirname "$1")/.libs/$(basename "$1")"
	[ -f "$_bin" ] || _bin=$1
	grep -q "__asan_init\|__tsan_init" "$_bin" 2>/dev/null
}

# without_fp_note FILE: FILE's lines but perf loops' one warning that
# frame-pointer chains skip frames of code without frame pointers (issue
# 29: a -g recording of gcc -O2 code, whose leaves keep no frame pointer
# even with -fno-omit-frame-pointer, loses their callers, and says so).
without_fp_note() {
	grep -v "have frame-pointer call chains that skip frames of code without frame pointers" "$1"
}
