#!/bin/sh
# tests/core-truncate.sh - a binary or its debug file truncated while
# loopscope analyzes it (`cp` over it, a rebuild writing in place): the
# stages read them through mappings, and a read past the new end raised
# SIGBUS (exit 135).  Now: exit 1, one line naming the file that shrank.
#
# The truncation is made at a known point, not raced: loopscope runs with
# LOOPSCOPE_TIMING=stop:STAGE and stops itself (SIGSTOP) once STAGE is done;
# the file is cut to 64 KiB, and it goes on (SIGCONT) inside the next stage.
# (Polling stderr for the stage's line and stopping it from here lost the
# race on a loaded machine.)  The binary: 100,000 small functions with a
# loop each and a line table (tests/fixtures/many_funcs.py), 1.5 s of
# analysis on one thread.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

[ -x "$LOOPSCOPE" ] || skip_all "$LOOPSCOPE not built"
command -v gcc >/dev/null || skip_all "gcc not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"
python3 "$FIXTURES/many_funcs.py" 100000 "$TMP/many.s" && gcc -g -o "$TMP/many" "$TMP/many.s" 2>"$TMP/cc.err" ||
	skip_all "the 100,000-function fixture does not build: $(head -c 200 "$TMP/cc.err")"

# cut_after STAGE FILE ARGS...: loopscope ARGS, FILE cut to 64 KiB once STAGE
# is done; rc and $TMP/err (without the timing lines).
cut_after() {
	_stage=$1 _file=$2
	shift 2
	LOOPSCOPE_TIMING="stop:$_stage" "$LOOPSCOPE" "$@" >/dev/null 2>"$TMP/err.all" &
	_pid=$!
	_n=0 # until it has stopped itself (state T) or ended
	while [ "$(sed 's/^.*) \(.\).*/\1/' /proc/$_pid/stat 2>/dev/null)" != T ] &&
		kill -0 $_pid 2>/dev/null && [ $_n -lt 1200 ]; do
		sleep 0.05
		_n=$((_n + 1))
	done
	truncate -s 64K "$_file"
	kill -CONT $_pid 2>/dev/null
	wait $_pid
	rc=$?
	grep -v 'timing:' "$TMP/err.all" >"$TMP/err"
}

for j in 1 2; do
	cp "$TMP/many" "$TMP/prog"
	cut_after "line map" "$TMP/prog" struct --no-cache -j $j "$TMP/prog"
	[ $rc -eq 1 ] && grep -q "^loopscope: $TMP/prog: truncated while being read (now 65536 bytes): not analyzed$" "$TMP/err"
	ok $? "struct -j $j, the binary truncated during the analysis: exit 1 (was 135, SIGBUS), the file named (exit $rc)"
	[ $rc -eq 1 ] || sed 's/^/# /' "$TMP/err" | head -5
done

# The debug file (.gnu_debuglink) truncated once opened, before its DWARF is
# read (cut before "dwarf", it is opened short: a warning, no lines).
cp "$TMP/many" "$TMP/linked"
objcopy --only-keep-debug "$TMP/linked" "$TMP/linked.debug" && strip -g "$TMP/linked" &&
	objcopy --add-gnu-debuglink="$TMP/linked.debug" "$TMP/linked" || skip_all "objcopy cannot make a debuglink"
cut_after "dwarf" "$TMP/linked.debug" struct --no-cache -j 2 "$TMP/linked"
[ $rc -eq 1 ] && grep -q "^loopscope: $TMP/linked.debug: truncated while being read (now 65536 bytes): not analyzed$" "$TMP/err"
ok $? "struct, the separate debug file truncated before its DWARF is read: exit 1, the debug file named (exit $rc)"

# lookup, and the same binary in the cache afterwards (a full one: no
# half-analyzed entry was stored).
cp "$TMP/many" "$TMP/prog2"
cut_after "line map" "$TMP/prog2" lookup "$TMP/prog2" 0x1000
[ $rc -eq 1 ] && grep -q "prog2: truncated while being read" "$TMP/err"
ok $? "lookup, the binary truncated during the analysis: exit 1 naming it (exit $rc)"
cp "$TMP/many" "$TMP/prog2"
f=$(nm "$TMP/prog2" | sed -n 's/^0*\([0-9a-f]*\) T f99999$/0x\1/p')
"$LOOPSCOPE" lookup -v "$TMP/prog2" "$f" >"$TMP/out" 2>"$TMP/err2"
grep -q 'cache miss' "$TMP/err2" && grep -q "^  f99999 at " "$TMP/out" && grep -q "/many.c:399997$" "$TMP/out"
ok $? "the binary restored: analyzed afresh (nothing was cached from the failed run), f99999 found"
done_testing
