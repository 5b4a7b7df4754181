# tests/tmux.sh - reading a program's screen under tmux, for the tests of the
# browsers, the GDB TUI, the progress meters and Ctrl-C.  Source it after
# tests/lib.sh; it replaces lib.sh's exit trap with one that also stops
# every tmux server the test started.
#
# A test sets, before reading the screen:
#   sock       the server's socket.  Start one server per session
#              ("$TMP/tmux-NAME.sock"): a new session on the socket of a
#              server just killed can find it gone.
#   pane       the session to read (tmux -t)
#   pane_opts  more capture-pane options ("-J -S -200": scrolled-off lines too)
#   seen       a file every screen read is appended to, to catch text that
#              shows for a moment (a progress meter), or empty
sock="$TMP/tmux.sock"
pane=
pane_opts=
seen=
T() { tmux -S "$sock" "$@"; }
tmux_cleanup() {
	for _s in "$TMP"/tmux*.sock; do tmux -S "$_s" kill-server 2>/dev/null; done
	rm -rf "$TMP"
}
trap tmux_cleanup EXIT
# screen: the pane's text into $TMP/pane
screen() {
	# shellcheck disable=SC2086 # pane_opts is a list of options
	T capture-pane -p $pane_opts -t "$pane" >"$TMP/pane" 2>/dev/null
	[ -z "$seen" ] || cat "$TMP/pane" >>"$seen"
}
# settle SECONDS COMMAND...: read the screen until COMMAND, run on it, is
# true; at most SECONDS.  No fixed sleeps after keystrokes: a check waits for
# the screen it expects, then reads the last screen (which says what went
# wrong if it never came).
settle() {
	_t=$1
	shift
	_i=0
	while [ "$_i" -lt $((_t * 20)) ]; do
		screen
		"$@" && return 0
		sleep 0.05
		_i=$((_i + 1))
	done
	return 1
}
shows() { grep -q -e "$1" "$TMP/pane"; }
# wait_for PATTERN SECONDS: until PATTERN shows on the screen
wait_for() { settle "$2" shows "$1"; }
