#!/bin/sh
# tests/gdb-source-hostile.sh - the GDB extension reads the source files a
# program's DWARF names through the library (issue 28's source-fifo.sh: a
# FIFO there made GDB block for ever, deaf to Ctrl-C and SIGTERM).  For
# each hostile source of tests/fixtures/hostile_source.sh, `info loops
# work` in a batch GDB ends at once, names both loops, and GDB is alive
# for the next command.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
. "$top_srcdir/tests/fixtures/hostile_source.sh"

command -v gcc >/dev/null || skip_all "gcc not installed"
make_sources "$TMP" >"$TMP/sources" || skip_all "cannot make a FIFO or a sparse file in $TMP"
mkfifo "$TMP/stdin" && exec 3<>"$TMP/stdin" || skip_all "cannot make a FIFO in $TMP"

while read -r name path; do
	mkbin "$TMP/$name" "$path" || { fail "$name: the fixture builds"; continue; }
	timeout 60 "$GDB" -nx -batch -ex "source $GDBEXT" -ex 'set loopscope cache off' -ex 'info loops work' \
		-ex 'echo alive\n' "$TMP/$name" <&3 >"$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] && grep -q '^alive$' "$TMP/out"
	ok_show $? "$name: GDB's info loops ends at once and GDB lives on (exit $rc; 124: killed after 60 s)" "$TMP/out"
	[ "$(grep -c "$(basename "$path"):1[01]" "$TMP/out")" -ge 2 ]
	ok_show $? "$name: both loops are listed, from DWARF" "$TMP/out"
done <"$TMP/sources"
done_testing
