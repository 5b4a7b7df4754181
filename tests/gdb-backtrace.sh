#!/bin/sh
# gdb-backtrace.sh - `bt` in real GDB (gcc and clang -O2, C and C++): frame
# lines are exactly GDB's own (the extension only adds "in loop" lines under
# them), `set loopscope backtrace off` gives GDB's own backtrace back, and the
# settings have show and help texts.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace

IB=$(line_of inner-body); IL=$(line_of inner-loop); IE=$(line_of inner-end)
OL=$(line_of outer-loop); OE=$(line_of outer-end)
# plain_bt BIN ARGS...: bt as GDB prints it without the extension.
plain_bt() {
	_bin=$1; shift
	"$GDB" -nx -batch "$@" -ex bt --args "$_bin" 3 8 2>&1 | grep '^#'
}

for cc in $(gdb_compilers); do
	case $cc in gcc) cxx=g++ ;; clang) cxx=clang++ ;; esac
	bin="$TMP/loops-$cc"
	if ! build_fixture "$cc" -O2 gdb/loops.c "$bin"; then
		fail "$cc: build the fixture"; continue
	fi
	plain=$(plain_bt "$bin" -ex "break loops.c:$IB" -ex run)
	out=$(gdb_run -ex "break loops.c:$IB" -ex run -ex bt -ex 'echo ==off\n' \
		-ex 'set loopscope backtrace off' -ex bt -ex 'echo ==hide\n' -ex 'set loopscope backtrace on' \
		-ex 'bt -hide' --args "$bin" 3 8)
	on=$(echo "$out" | sed '/^==off/,$d' | grep '^#\|^    in loop (')
	off=$(echo "$out" | sed -n '/^==off/,/^==hide/p' | grep '^#')
	hide=$(echo "$out" | sed -n '/^==hide/,$p' | grep '^#')
	check_eq "$(echo "$on" | grep -v '^    in loop (')" "$plain" \
		"$cc: bt frame lines are GDB's own, names included (only loop lines added)"
	l=$(bt_loop_line "$on" 0 sum_row)
	[ -n "$l" ] && [ "$l" -ge "$IL" ] && [ "$l" -le "$IE" ]
	ok $? "$cc: setting on: frame #0 (inlined sum_row) shows the inner loop (line '$l' in $IL-$IE)"
	l=$(bt_loop_line "$on" 1 main)
	[ -n "$l" ] && [ "$l" -ge "$OL" ] && [ "$l" -le "$OE" ]
	ok $? "$cc: setting on: frame #1 (main) shows the outer loop (line '$l' in $OL-$OE)"
	echo "$on" | grep -q '^    in loop (depth=2, header=0x[0-9a-f]*.*) at '
	ok $? "$cc: the loop line gives depth and header"
	check_eq "$off" "$plain" "$cc: set loopscope backtrace off: bt is GDB's own, line for line"
	check_eq "$hide" "$plain" "$cc: bt -hide leaves the loop lines out"

	# C++: GDB names frames without their parameter lists; so must we.
	cxxbin="$TMP/small-$cc"
	if "$cxx" -O2 -g -o "$cxxbin" "$top_srcdir/examples/small.cpp" 2>"$TMP/cc.err"; then
		plain=$(plain_bt "$cxxbin" -ex 'break small.cpp:14' -ex run)
		out=$(gdb_run -ex 'break small.cpp:14' -ex run -ex bt --args "$cxxbin" 3 8 | grep '^#\|^    in loop (')
		check_eq "$(echo "$out" | grep '^#')" "$plain" "$cxx: C++ frame names are GDB's (main, not main(int, char**))"
		echo "$out" | grep -A1 '^#[0-9]  .*main (' | grep -q '^    in loop (depth=1, .*) at .*small.cpp:'
		ok $? "$cxx: main's frame shows its loop"
	else
		fail "$cxx: build examples/small.cpp"
	fi
done

out=$(gdb_run -ex 'show loopscope' -ex 'help set loopscope backtrace' -ex 'help show loopscope cache' \
	-ex 'help set loopscope debug-file-directory' -ex 'set loopscope backtrace off' -ex 'show loopscope backtrace' \
	-ex 'set loopscope debug-file-directory /tmp/dbg' -ex 'show loopscope debug-file-directory')
for want in '^Loop lines in backtraces are auto (currently on)\.' '^The loopscope analysis cache is on\.' \
            'GDB.s debug-file-directory ("' 'frame is in' 'on-disk analysis cache' 'build-id' \
            '^Loop lines in backtraces are off\.' 'separate debug files are "/tmp/dbg"'; do
	echo "$out" | grep -q "$want"
	ok $? "settings: show and help: /$want/"
done
done_testing
