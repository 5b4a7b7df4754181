#!/bin/sh
# gdb-bad-input.sh - the GDB commands on input they cannot fully serve: no
# process and no location, unknown names, addresses outside every object
# file, a pc outside any loop, a binary without debug information, a
# stripped binary.  Each must say what is wrong, without a Python traceback.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"

bin="$TMP/loops"
nodebug="$TMP/loops-nodebug"
stripped="$TMP/loops-stripped"
build_fixture gcc -O2 gdb/loops.c "$bin" || fail_all "gcc builds the fixture"
gcc -O2 -o "$nodebug" "$GDB_FIXTURE" || fail_all "gcc builds the fixture without -g"
strip -o "$stripped" "$bin" || fail_all "strip"
main_addr=0x$(nm "$bin" | sed -n 's/^\([0-9a-f]*\) T main$/\1/p')

# expect LABEL PATTERN OUTPUT: OUTPUT matches PATTERN (grep -E) and has no traceback.
expect() {
	if echo "$3" | grep -qE "$2"; then pass "$1"; else fail "$1"; diag "want /$2/ in:"; echo "$3" | sed 's/^/# /'; fi
	if echo "$3" | grep -qiE 'traceback|Python Exception'; then fail "$1: no Python traceback"; echo "$3" | sed 's/^/# /'; fi
}

out=$(gdb_run "$bin" -ex structure)
expect "structure with no process and no LOCATION asks for one" "no process, no core file and no LOCATION" "$out"
out=$(gdb_run "$bin" -ex 'info loops')
expect "info loops with no process and no FUNCTION asks for one" "no process and no FUNCTION" "$out"
out=$(gdb_run "$bin" -ex 'print $_loop_depth()')
expect "\$_loop_depth() with no frame says so" "no frame" "$out"
out=$(gdb_run "$bin" -ex loop-finish)
expect "loop-finish with no process says the program is not running" "the program is not running" "$out"
out=$(gdb_run "$bin" -ex 'structure no_such_function')
expect "structure on an unknown function names it" 'no_such_function.*not defined' "$out"
out=$(gdb_run "$bin" -ex 'info loops no_such_function')
expect "info loops on an unknown function names it" 'no function named no_such_function' "$out"
out=$(gdb_run "$bin" -ex 'structure 0x7ffffffff000')
expect "structure outside every object file says so" 'not in any object file' "$out"

# A pc outside any loop: main's entry.
out=$(gdb_run "$bin" -ex "structure *$main_addr" -ex 'printf "depth=%d\n", $_loop_depth(main)')
expect "structure at main's entry says it is not in any loop" '\(not in any loop\)' "$out"
expect "\$_loop_depth at main's entry is 0" '^depth=0$' "$out"
if "$GDB" -nx -batch -ex run /bin/true 2>&1 | grep -q 'exited normally'; then
	out=$(gdb_run -ex 'break *main' -ex run -ex loop-finish -ex kill --args "$bin")
	expect "loop-finish at main's entry says the pc is not inside any loop" 'loop-finish: pc 0x[0-9a-f]+ .* is not inside any loop' "$out"
else
	skip "loop-finish at main's entry: gdb cannot run programs here"
fi

# No debug information: procedures only, and the output says why.
out=$(gdb_run "$nodebug" -ex 'structure main')
expect "no -g: structure names the procedure" 'proc +main' "$out"
expect "no -g: structure says there is no debug information" 'has no debug information' "$out"
if echo "$out" | grep -q '^  inline '; then fail "no -g: no inline scopes"; else pass "no -g: no inline scopes"; fi
out=$(gdb_run "$nodebug" -ex 'info loops main')
expect "no -g: info loops says there is no debug information" 'has no debug information' "$out"

# Stripped: GDB knows no main; an address still works.
out=$(gdb_run "$stripped" -ex "structure *$main_addr")
expect "stripped: structure at an address says why the chain is thin" 'has no debug information' "$out"
if echo "$out" | grep -q '^  stmt .*:[0-9]'; then fail "stripped: no source lines claimed"; else pass "stripped: no source lines claimed"; fi
done_testing
