# tests/gdb-lib.sh - shared set-up of the GDB extension tests (tests/gdb-*.sh).
#   . "$top_srcdir/tests/gdb-lib.sh"     (after tests/lib.sh)
# Provides: $GDBEXT (the script to source), gdb_run BIN [CORE] -- GDB ARGS...,
# line_of MARKER (the fixture's line holding "@MARKER"), gdb_compilers,
# $CHECK (tests/fixtures/gdb/check.py: compares and checks chains).
GDB=${GDB:-gdb}
command -v "$GDB" >/dev/null 2>&1 || skip_all "gdb not installed"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
GDBEXT="$top_builddir/gdb-ext/loopscope.py"
[ -f "$GDBEXT" ] || GDBEXT="$top_srcdir/gdb-ext/loopscope.py"
[ -f "$top_builddir/gdb-ext/.libs/_loopscope.so" ] || [ -f "$(dirname "$GDBEXT")/_loopscope.so" ] ||
	[ -f "${LOOPSCOPE_GDB_LIBDIR:-/nonexistent}/_loopscope.so" ] ||
	skip_all "the GDB extension module was not built (configure found no GDB Python?)"
GDB_FIXTURE="$FIXTURES/gdb/loops.c"
CHECK="python3 $FIXTURES/gdb/check.py"

# gdb_run ARGS...: GDB in batch mode with the extension loaded; ARGS are
# gdb's own (program, core, -ex commands).  All output on stdout.
gdb_run() {
	"$GDB" -nx -batch -ex "source $GDBEXT" "$@" 2>&1
}

line_of() {
	grep -n "@$1\\b" "$GDB_FIXTURE" | head -n 1 | cut -d: -f1
}

# compilers: the ones the tests cover that are installed.
gdb_compilers() {
	for cc in gcc clang; do
		command -v "$cc" >/dev/null 2>&1 && echo "$cc"
	done
}

# ok_show STATUS DESCRIPTION FILE: ok, and FILE as diagnostics when it failed.
ok_show() {
	ok "$1" "$2"
	[ "$1" -eq 0 ] || sed 's/^/# /' "$3"
}

# gdb_need_ptrace: skip the whole test where GDB cannot run programs
# (containers without ptrace); probed once on /bin/true.
gdb_need_ptrace() {
	"$GDB" -nx -batch -ex run /bin/true 2>&1 | grep -q 'exited normally' ||
		skip_all "gdb cannot run programs here (ptrace not permitted?)"
}

# bt_loop_line OUTPUT LEVEL FUNCTION: the line of the loop `bt` shows under
# frame #LEVEL (the elided "    in loop (depth=D, header=A) at FILE:LINE"
# line), if that frame is in FUNCTION; empty if there is none.
bt_loop_line() {
	echo "$1" | awk -v lv="#$2" -v fn="$3" '
		/^#[0-9]+ / { cur = ($1 == lv && index($0, " " fn " (") > 0); next }
		cur && /^    in loop \(/ { n = split($0, p, ":"); print p[n]; exit }
		{ cur = 0 }'
}
