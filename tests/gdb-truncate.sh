#!/bin/sh
# tests/gdb-truncate.sh - the program GDB debugs truncated while the
# extension analyzes it (`cp` over it): the library's read of the mapping
# raised SIGBUS, and GDB died ("Fatal signal: Bus error", in ls_decode).
# Now `info loops` says which file changed, GDB lives on, and a later
# command on the restored file answers.  As in tests/core-truncate.sh, GDB
# stops itself at a known point of the analysis (LOOPSCOPE_TIMING=stop:STAGE
# raises SIGSTOP once STAGE is done), the file is cut to 64 KiB, and GDB
# continued; the variable is then unset, so the second analysis runs on.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"

command -v gcc >/dev/null || skip_all "gcc not installed"
# No DWARF: GDB reads line tables lazily through its own mapping, and would
# die of the truncation by itself (the extension's part is what is tested).
python3 "$FIXTURES/many_funcs.py" 100000 "$TMP/many.s" --no-lines && gcc -o "$TMP/many" "$TMP/many.s" 2>"$TMP/cc.err" ||
	skip_all "the 100,000-function fixture does not build: $(head -c 200 "$TMP/cc.err")"
cp "$TMP/many" "$TMP/prog"

LOOPSCOPE_TIMING="stop:line map" "$GDB" -nx -batch -ex "source $GDBEXT" -ex 'set loopscope cache off' -ex 'info loops f5' \
	-ex 'python import os; del os.environ["LOOPSCOPE_TIMING"]' -ex 'echo alive\n' -ex "shell cp $TMP/many $TMP/prog" -ex 'info loops f7' -ex 'echo alive again\n' \
	"$TMP/prog" >"$TMP/out" 2>&1 &
pid=$!
n=0
while [ "$(sed 's/^.*) \(.\).*/\1/' /proc/$pid/stat 2>/dev/null)" != T ] && [ $n -lt 1200 ] && kill -0 $pid 2>/dev/null; do
	sleep 0.05
	n=$((n + 1))
done
truncate -s 64K "$TMP/prog"
kill -CONT $pid 2>/dev/null
wait $pid
rc=$?
grep -v 'timing:' "$TMP/out" >"$TMP/said"

! grep -q 'Fatal signal' "$TMP/said" && grep -q '^alive$' "$TMP/said" && [ $rc -eq 0 ]
ok_show $? "GDB survives the program truncated during the analysis (exit $rc, no 'Fatal signal')" "$TMP/said"
grep -q "prog: truncated while being read (now 65536 bytes): not analyzed" "$TMP/said"
ok_show $? "info loops says the file was truncated while being read" "$TMP/said"
grep -q '^alive again$' "$TMP/said" && grep -A3 'info loops\|f7' "$TMP/said" | grep -q 'loop'
ok_show $? "the file restored, the next info loops analyzes it again and shows f7's loop" "$TMP/said"
done_testing
