#!/bin/sh
# gdb-hostile.sh - the GDB extension in front of what kills GDB or makes it
# lie: an unbalanced quote in a location (GDB 13's decode_line dies on it),
# the program's file truncated in place after the analysis (a read through
# the old mapping is a SIGBUS), the program rebuilt while it runs (another
# build-id), and a program whose path is not UTF-8.  Each time GDB must stay
# alive (it prints "alive" last), say clearly what is wrong, and show no
# Python exception, in commands or in `bt`.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"

bin="$TMP/loops"
build_fixture gcc -O2 gdb/loops.c "$bin" || fail_all "gcc builds the fixture"
loop_line=$(line_of inner-body)
[ -n "$loop_line" ] || skip_all "the fixture has no @inner-body marker"

# alive LABEL OUTPUT: GDB got to the end, with no crash and no Python exception.
alive() {
	if echo "$2" | grep -q '^alive$' && ! echo "$2" | grep -qiE 'fatal signal|internal error|traceback|Python Exception'; then
		pass "$1: GDB stays alive, no Python exception"
	else
		fail "$1: GDB stays alive, no Python exception"
		echo "$2" | tail -n 15 | sed 's/^/# /'
	fi
}
says() {
	if echo "$3" | grep -qE "$2"; then pass "$1"; else fail "$1"; echo "$3" | tail -n 15 | sed 's/^/# /'; fi
}

# An unbalanced quote never reaches gdb.decode_line.
out=$(gdb_run "$bin" -ex "structure 'main" -ex 'info loops "main' -ex "python print('alive')")
alive "unbalanced quotes" "$out"
says "unbalanced quote: structure says so" "structure: unmatched quote in the location" "$out"
says "unbalanced quote: info loops says so" "info loops: unmatched quote in the function name" "$out"
long=$(head -c 2000 /dev/zero | tr '\0' 'x')
out=$(gdb_run "$bin" -ex "structure $long" -ex "python print('alive')")
alive "a 2000-character location" "$out"
says "a 2000-character location is refused" "location is 2000 characters long" "$out"

# Truncated in place after the analysis: never read through the old mapping.
cp "$bin" "$TMP/trunc"
out=$(gdb_run "$TMP/trunc" -ex 'structure main' -ex "shell truncate -s 100 '$TMP/trunc'" \
	-ex 'info loops no_such_name' -ex 'structure main' -ex "python print('alive')")
alive "the file truncated in place after the analysis" "$out"
says "truncated: it is analyzed again, and the new file refused with the reason" \
	"changed on disk since it was analyzed.*|cannot analyze .*trunc: truncated ELF file" "$out"

# Rebuilt while the program runs: the new file's structure is not the
# program's; the build-ids differ.
gdb_need_ptrace
cp "$bin" "$TMP/rebuilt"
out=$(gdb_run -ex "break loops.c:$loop_line" -ex run -ex structure \
	-ex "shell gcc -O1 -g -o '$TMP/rebuilt' '$GDB_FIXTURE'" -ex structure -ex bt -ex kill \
	-ex "python print('alive')" --args "$TMP/rebuilt")
alive "the program rebuilt while it runs" "$out"
says "rebuilt: structure names both build-ids" "is not the file GDB loaded: its build-id is [0-9a-f]+ on disk and [0-9a-f]+ in GDB" "$out"
says "rebuilt: bt still shows the frames" "^#1 .* main" "$out"

# A path that is not UTF-8.
weird="$TMP/prog-$(printf '\377\376')-x"
cp "$bin" "$weird"
out=$(gdb_run -ex 'structure main' -ex "break loops.c:$loop_line" -ex run -ex bt -ex structure \
	-ex 'info loops' -ex 'print $_loop_depth()' -ex kill -ex "python print('alive')" --args "$weird")
alive "a program path that is not UTF-8" "$out"
says "not UTF-8: structure works (the path's bytes shown escaped)" "^  proc +main" "$out"
says "not UTF-8: bt shows the loop of the frame" "^    in loop \(depth=[0-9]+, header=0x[0-9a-f]+.*\) at .*loops\.c:[0-9]+" "$out"
says "not UTF-8: \$_loop_depth works" '^\$1 = [1-9]' "$out"
done_testing
