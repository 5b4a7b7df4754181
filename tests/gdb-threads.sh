#!/bin/sh
# gdb-threads.sh - loop-finish and loop-next in one thread while another
# thread throws C++ exceptions or longjmps (threads_leave.cpp, g++ and
# clang++ -O2).  The other thread's events are not the loop's: the command
# finishes in its own thread, by the loop's own exit, after all of its
# trips; a breakpoint of the user's hit in the other thread stops it, and
# the message names that thread.  (Before: "left loop ... by a C++
# exception, caught in worker", in the other thread.)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace

src="$FIXTURES/gdb/threads_leave.cpp"
mark() { grep -n "@$1\\b" "$src" | head -n 1 | cut -d: -f1; }
SB=$(mark spin-body); SL=$(mark spin-loop)
N=2000000
value() { echo "$2" | sed -n "s/^$1=\\([0-9-]*\\)\$/\\1/p" | tail -n 1; }
for cxx in g++ clang++; do
	command -v "$cxx" >/dev/null 2>&1 || continue
	bin="$TMP/threads-$cxx"
	if ! build_fixture "$cxx" -O2 gdb/threads_leave.cpp "$bin" -pthread; then
		fail "$cxx: build the fixture"; continue
	fi
	for mode in exc jmp; do
		what="another thread throwing"; [ $mode = jmp ] && what="another thread longjmping"
		out=$(gdb_run -ex 'set print thread-events off' -ex "break threads_leave.cpp:$SB" -ex run -ex delete \
			-ex 'printf "t0=%d\n", $_thread' -ex loop-finish -ex 'printf "t1=%d\n", $_thread' \
			-ex 'printf "trips=%ld\n", spin_trips' -ex kill --args "$bin" $mode $N)
		echo "$out" | grep -q "^left loop at threads_leave.cpp:$SL (header 0x[0-9a-f]*, depth 1) via exit 0x[0-9a-f]* -> 0x[0-9a-f]*; now at threads_leave.cpp:[0-9]* in spin"
		ok_show $? "$cxx, $what: loop-finish leaves the loop by its exit, in spin" "$(echo "$out" >"$TMP/o"; echo "$TMP/o")"
		check_eq "$(value t1 "$out")" "$(value t0 "$out")" "$cxx, $what: ... in the thread it started in"
		check_eq "$(value trips "$out")" $N "$cxx, $what: ... after all $N trips"

		out=$(gdb_run -ex 'set print thread-events off' -ex "break threads_leave.cpp:$SB" -ex run -ex delete \
			-ex 'printf "a=%ld\n", spin_trips' -ex 'loop-next 3' -ex 'printf "t1=%d\n", $_thread' \
			-ex 'printf "b=%ld\n", spin_trips' -ex kill --args "$bin" $mode $N)
		echo "$out" | grep -q "^at the header of the loop at threads_leave.cpp:$SL (header 0x[0-9a-f]*, depth 1), 3 iterations on"
		ok $? "$cxx, $what: loop-next 3 gets to the header three trips on"
		check_eq "$(value t1 "$out")" 1 "$cxx, $what: ... in thread 1"
		check_eq "$(value b "$out")" "$(($(value a "$out") + 3))" "$cxx, $what: ... spin_trips + 3"

		# A breakpoint of the user's in the other thread stops loop-finish.
		out=$(gdb_run -ex 'set print thread-events off' -ex "break threads_leave.cpp:$SB" -ex run -ex delete \
			-ex "break note_event" -ex loop-finish -ex 'printf "t1=%d\n", $_thread' -ex kill \
			--args "$bin" $mode $((N * 100)))
		echo "$out" | grep -q "^Stopped before leaving the loop at threads_leave.cpp:$SL (header 0x[0-9a-f]*, depth 1) (the program stopped in thread 2 \"[^\"]*\", not in thread 1 where the loop runs)\\.\$"
		ok_show $? "$cxx, $what: a breakpoint hit in the other thread stops loop-finish, and it names that thread" "$(echo "$out" >"$TMP/o"; echo "$TMP/o")"
		echo "$out" | grep -q "^Thread 2 .* hit Breakpoint 2, "
		ok $? "$cxx, $what: ... as GDB reported the hit"
		! echo "$out" | grep -qiE 'traceback|Python Exception|internal-error'
		ok $? "$cxx, $what: no Python error"
	done
done
done_testing
