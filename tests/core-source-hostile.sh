#!/bin/sh
# tests/core-source-hostile.sh - the source files DWARF names are anyone's
# paths (issue 28's source-fifo.sh): a FIFO planted where a binary built
# under /tmp points made loopscope struct and lookup block for ever in
# open().  For each hostile source -- a FIFO, /dev/zero, /dev/stdin (a
# pipe that never ends), /dev/tty, /proc/kmsg (whose read blocks, and
# consumes the kernel's log as root), a 4 GiB sparse file -- struct and
# lookup end at once (exit 0), one warning names the file and why it is
# not read, and the structure is the one LOOPSCOPE_NO_SOURCE=1 gives (the
# loop lines from DWARF alone).  The source reader is the library's safe
# open (support/file.c): tests/fixtures/hostile_source.sh makes the files.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
. "$top_srcdir/tests/fixtures/hostile_source.sh"

[ -x "$LOOPSCOPE" ] || skip_all "$LOOPSCOPE not built"
command -v gcc >/dev/null || skip_all "gcc not installed"
make_sources "$TMP" >"$TMP/sources" || skip_all "cannot make a FIFO or a sparse file in $TMP"
# stdin: a pipe that never ends nor holds data (a FIFO held open for
# writing here), so that a read of /dev/stdin would wait for ever
mkfifo "$TMP/stdin" && exec 3<>"$TMP/stdin" || skip_all "cannot make a FIFO in $TMP"

while read -r name path; do
	mkbin "$TMP/$name" "$path" || { fail "$name: the fixture builds"; continue; }
	LOOPSCOPE_NO_SOURCE=1 "$LOOPSCOPE" struct --no-cache "$TMP/$name" >"$TMP/want" 2>/dev/null
	timeout 30 "$LOOPSCOPE" struct --no-cache "$TMP/$name" <&3 >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc -eq 0 ] && cmp -s "$TMP/out" "$TMP/want"
	ok $? "$name: struct ends at once (exit $rc; 124: killed after 30 s) with the DWARF-alone structure"
	grep -q "warning: $path: source file not read: .*; its loop lines from DWARF alone" "$TMP/err"
	ok $? "$name: a warning names $path and why it is not read"
	[ "$name" = sparse ] && { grep -q "4096 MiB, more than the 16 MiB a source file may have" "$TMP/err"; ok $? "sparse: the warning says its size and the bound"; }
	[ "$name" = kmsg ] && { grep -q "a file of /proc" "$TMP/err"; ok $? "kmsg: refused as a file of /proc, not read"; }
	a=$(sed -n 's/^ *loop at .*:11 \[header \(0x[0-9a-f]*\),.*/\1/p' "$TMP/out")
	timeout 30 "$LOOPSCOPE" lookup --no-cache "$TMP/$name" "${a:-0x1000}" <&3 >"$TMP/lookup" 2>/dev/null
	rc=$?
	[ $rc -eq 0 ] && grep -q "loop at .*:11 (header" "$TMP/lookup"
	ok $? "$name: lookup ends at once (exit $rc) with the inner loop"
done <"$TMP/sources"
done_testing
