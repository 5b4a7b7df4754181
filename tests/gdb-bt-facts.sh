#!/bin/sh
# gdb-bt-facts.sh - `bt` from the facts the extension keeps per frame across
# stops (issue 27: a warm bt within 2x of GDB's own) prints exactly what it
# printed when it asked GDB for each frame (g++ and clang++ -O2): the same
# session with the facts turned off, byte for byte, at every stop, with
# `bt full`, `bt -frame-arguments presence`, `print demangle off` and a
# frame selected; the frame lines are GDB's own `bt` (the extension only
# adds loop lines); the loop lines are the fixture's loops; and a stack
# seen before adds no facts (they are kept, not found again).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace
GDB_FIXTURE="$FIXTURES/gdb/bt_levels.cpp"
LL=$(line_of level-loop); OL=$(line_of other-loop)

# session BIN [GDB ARGS...]: six stops at leaf (the levels' stack, other's
# twice, three rounds); at each, the extension's bt, bt full and bt with
# argument presence, then GDB's own bt; at the fourth, with demangling off.
session() {
	_bin=$1; shift
	set -- "$@" -ex 'break leaf' -ex run
	for s in 1 2 3 4 5 6; do
		[ "$s" = 4 ] && set -- "$@" -ex 'set print demangle off'
		set -- "$@" -ex "echo ==on $s\\n" -ex bt -ex "echo ==full $s\\n" -ex 'bt full' \
			-ex "echo ==presence $s\\n" -ex 'bt -frame-arguments presence' \
			-ex "echo ==up $s\\n" -ex 'up 2' -ex bt -ex 'down 2' \
			-ex "echo ==facts $s\\n" -ex 'python import loopscope_gdb; print(len(loopscope_gdb._facts_context() or ()))' \
			-ex 'set loopscope backtrace off' -ex "echo ==gdb $s\\n" -ex bt -ex 'set loopscope backtrace on'
		[ "$s" = 4 ] && set -- "$@" -ex 'set print demangle on'
		set -- "$@" -ex continue
	done
	gdb_run "$@" -ex kill --args "$_bin" 1 | grep -v '^\[Inferior 1 (process [0-9]*) killed\]'
}
# section OUTPUT NAME: the lines after "==NAME" up to the next "==".
section() {
	printf '%s\n' "$1" | awk -v want="==$2" '/^==/ { on = ($0 == want); next } on'
}

for cc in $(gdb_compilers); do
	case $cc in gcc) cxx=g++ ;; clang) cxx=clang++ ;; esac
	bin="$TMP/bt_levels-$cc"
	build_fixture "$cxx" -O2 gdb/bt_levels.cpp "$bin" || { fail "$cxx: build the fixture"; continue; }
	kept=$(session "$bin")
	asked=$(session "$bin" -ex 'python import loopscope_gdb; loopscope_gdb._facts_context = lambda: None')
	printf '%s\n' "$kept" >"$TMP/kept-$cc"
	printf '%s\n' "$asked" >"$TMP/asked-$cc"
	diff "$TMP/asked-$cc" "$TMP/kept-$cc" | grep -v '^==facts\|^[<>] [0-9]*$' >"$TMP/diff-$cc"
	# (the facts counts differ: none are kept in the second session)
	! grep -q '^[<>]' "$TMP/diff-$cc"
	ok_show $? "$cxx: six stops of bt, bt full, bt -frame-arguments presence, demangle off, a frame selected: the kept facts print what asking GDB prints, byte for byte" "$TMP/diff-$cc"
	same=0 loops=0 bad=
	for s in 1 2 3 4 5 6; do
		on=$(section "$kept" "on $s" | grep '^#\|^    in loop (')
		[ "$(printf '%s\n' "$on" | grep '^#')" = "$(section "$kept" "gdb $s" | grep '^#')" ] ||
			{ same=1; bad="$bad $s"; }
		# each inner and other frame is followed by its loop's line, as
		# the source has it (3 template levels at stops 1 and 4)
		printf '%s\n' "$on" | awk -v ll="$LL" -v ol="$OL" -v levels=$((s % 3 == 1 ? 3 : 0)) '
			want { if ($0 !~ ("^    in loop \\(depth=1, .*bt_levels.cpp:" want "$")) bad = 1; want = "" }
			/^#[0-9]+ .*(::inner|5innerEl) \(/ { want = ll; n++ }
			/^#[0-9]+ .*( other|_Z5otherl) \(/ { want = ol; o++ }
			END { exit (bad || want != "" || n != levels || (levels == 0 && o != 1)) }' || { loops=1; diag "stop $s: $on"; }
	done
	ok $same "$cxx: at every stop the frame lines are GDB's own bt's, line for line${bad:+ (not at:$bad)}"
	ok $loops "$cxx: every Level<N>::inner frame is in the loop at line $LL, other's in the one at line $OL"
	[ "$(section "$kept" "on 4" | grep -c '^#.* _Z[A-Za-z0-9_]* (')" -gt 0 ]
	ok $? "$cxx: demangling off: bt's names are mangled (compared with GDB's own above)"
	n1=$(section "$kept" "facts 1"); n3=$(section "$kept" "facts 3"); n6=$(section "$kept" "facts 6")
	[ "${n1:-0}" -gt 0 ] && [ "$n3" = "$n6" ] && [ "$(section "$asked" "facts 6")" = 0 ]
	ok $? "$cxx: facts kept after the first stop ($n1), none added by stacks seen before ($n3 after stop 3, $n6 after stop 6)"
done
done_testing
