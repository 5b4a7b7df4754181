#!/bin/sh
# gdb-progress.sh - the first analysis of a big module (libc, with libc6-dbg)
# shows GDB-style progress (module name, percentage) on the terminal, and
# Ctrl-C during it leaves GDB usable; in a real GDB under tmux (a terminal).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace
command -v tmux >/dev/null 2>&1 || skip_all "tmux not installed"
libc=/lib/x86_64-linux-gnu/libc.so.6
[ -f "$libc" ] || skip_all "no $libc"
bin="$TMP/loops"
build_fixture gcc -O2 gdb/loops.c "$bin" || fail_all "gcc builds the fixture"

. "$top_srcdir/tests/tmux.sh"
# every screen seen goes to $TMP/seen: the meter shows only for a moment
pane=ls pane_opts="-J -S -200" seen="$TMP/seen"
start_gdb() { # CACHE-DIR [PREFIX: a command GDB runs under]
	: >"$TMP/seen"
	T kill-server 2>/dev/null
	sock="$TMP/tmux-$(basename "$1").sock"
	T new-session -d -s ls -x 220 -y 60 "env XDG_CACHE_HOME=$1 ${2:-} $GDB -nx -q -ex 'source $GDBEXT' \
		-ex 'set breakpoint pending on' -ex 'break write' -ex run --args $bin 3 4; sleep 30"
	wait_for '^Breakpoint 1, ' 60
}

# libc's analysis takes 0.4 s here and the meter shows after 0.3 s: too
# short to be seen, or to press Ctrl-C in.  So GDB shares one CPU, at a
# lower priority, with a busy loop: the same work takes ten times as long.
spinner= slow=
if command -v taskset >/dev/null 2>&1; then
	taskset -c 0 sh -c 'while :; do :; done' &
	spinner=$!
	slow="taskset -c 0 nice -n 10"
	trap 'kill $spinner 2>/dev/null; tmux_cleanup' EXIT
fi

# 1. Progress of a first `bt` into libc, then the backtrace with its loops.
if start_gdb "$TMP/cache1" "$slow"; then
	T send-keys -t ls 'bt' Enter
	wait_for ' in main (' 120
	ok $? "the first bt into libc completes"
	grep -q "^loopscope: analyzing $libc\.\.\." "$TMP/seen"
	ok $? "progress names the module: 'loopscope: analyzing $libc...'"
	grep -q "^loopscope: analyzing $libc\.\.\. [0-9]*%" "$TMP/seen"
	ok $? "progress shows a percentage"
	! grep -q "^loopscope: analyzing" "$TMP/pane"
	ok $? "the progress line is erased when the analysis is done"
	grep -q '^    in loop (depth=' "$TMP/pane"
	ok $? "the backtrace shows loops of libc frames"
else
	fail "gdb stopped at write"; sed 's/^/# /' "$TMP/pane"
fi

# 2. Ctrl-C during the analysis: Quit, and GDB goes on.
if start_gdb "$TMP/cache2" "$slow"; then
	T send-keys -t ls 'bt' Enter
	wait_for "^loopscope: analyzing $libc" 60
	ok $? "the analysis is under way"
	T send-keys -t ls C-c
	wait_for 'interrupted; it starts again on next use' 30
	ok $? "Ctrl-C interrupts it, and says so"
	grep -q '^Quit' "$TMP/pane"
	ok $? "... GDB reports Quit"
	T send-keys -t ls 'print 6*7' Enter
	wait_for '^\$1 = 42' 10
	ok $? "GDB is usable after the interrupt (print 6*7)"
	T send-keys -t ls 'bt' Enter
	wait_for ' in main (' 120
	grep -q '^    in loop (depth=' "$TMP/pane"
	ok $? "a later bt analyzes libc again and shows its loops"
	! grep -qi 'traceback\|Python Exception' "$TMP/seen"
	ok $? "no Python error"
else
	fail "gdb stopped at write"; sed 's/^/# /' "$TMP/pane"
fi
[ -n "$spinner" ] && kill "$spinner" 2>/dev/null
done_testing
