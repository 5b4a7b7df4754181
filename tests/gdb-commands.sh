#!/bin/sh
# gdb-commands.sh - the smaller promises of the GDB commands: help fits 80
# columns; completion offers each command's own options (not GDB's
# location options) and `info loop<TAB>` is `info loops`; a typo in an
# option is named; $_loop_depth follows the selected (inline) frame, takes
# a frame level or a code address, and is an error (not 0) where the
# structure is unknown; loop-finish -count says it stops at every
# iteration, and gives the count when stopped early; structure's statement
# line is GDB's at every instruction (the is_stmt row); a loop line in a
# glibc frame names the file as GDB's frame line does (DWARF 5 directory 0
# under a relative compilation directory).  gcc and clang -O2.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace

expect() { # LABEL PATTERN OUTPUT
	if echo "$3" | grep -qE "$2"; then pass "$1"; else fail "$1"; diag "want /$2/ in:"; echo "$3" | tail -n 15 | sed 's/^/# /'; fi
}
bin="$TMP/loops-gcc"
build_fixture gcc -O2 gdb/loops.c "$bin" || fail_all "gcc builds the fixture"

# Help: no line longer than 80 columns.
out=$(gdb_run -ex 'help structure' -ex 'help info loops' -ex 'help loop-next' -ex 'help loop-finish' \
	-ex 'help break-loop' -ex 'help function _loop_depth' -ex 'help maint info loopscope' \
	-ex 'help show loopscope' -ex 'help set loopscope backtrace' -ex 'help set loopscope cache' "$bin")
long=$(echo "$out" | grep -v '^Type "help ' | awk 'length > 80' | head -n 3)
check_eq "$long" "" "help of every command fits 80 columns"

# Completion.
out=$(gdb_run -ex 'complete info loop' -ex 'complete structure -' -ex 'complete break-loop -' \
	-ex 'complete loop-next -' -ex 'complete loop-finish -' -ex 'complete structure -json sca' \
	-ex 'complete break-loop -exit loops.c:sca' "$bin")
check_eq "$(echo "$out" | grep '^info loop')" "info loops" "info loop<TAB> completes to info loops alone (info loopscope is deprecated)"
check_eq "$(echo "$out" | grep '^structure -' | grep -v 'sca' | tr '\n' ' ')" "structure -data structure -json " "structure -<TAB>: its own options, not GDB's location options"
check_eq "$(echo "$out" | grep '^break-loop -' | grep -v 'loops.c' | tr '\n' ' ')" "break-loop -exit break-loop -temporary " "break-loop -<TAB>: -exit, -temporary"
check_eq "$(echo "$out" | grep '^loop-next -')" "loop-next -depth" "loop-next -<TAB>: -depth"
check_eq "$(echo "$out" | grep '^loop-finish -')" "loop-finish -count" "loop-finish -<TAB>: -count"
echo "$out" | grep -q '^structure -json scale$'
ok $? "after an option, GDB's own location completion (structure -json sca<TAB>)"
echo "$out" | grep -q '^break-loop -exit loops.c:scale$'
ok $? "... and FILE:FUNCTION completion (break-loop -exit loops.c:sca<TAB>)"

# Typos.
out=$(gdb_run -ex 'structure -jsonx main' -ex 'loop-next abc' -ex 'loop-finish -counts' -ex 'break-loop -exitt main' \
	-ex 'info loopscope' "$bin")
expect "structure -jsonx main names the unknown option" '^structure: unknown option -jsonx \(options: -json, -data\)$' "$out"
expect "loop-next abc is a usage error" '^loop-next: usage: loop-next \[N\] \[-depth D\] \(got abc\)$' "$out"
expect "loop-finish -counts names it" '^loop-finish: unknown option -counts \(options: -count\)$' "$out"
expect "break-loop -exitt names it" '^break-loop: unknown option -exitt \(options: -exit, -temporary\)$' "$out"
expect "info loopscope still works, and says it is deprecated" "^Warning: command 'info loopscope' is deprecated" "$out"

IB=$(line_of inner-body); SB=$(line_of scale-body); OL=$(line_of outer-loop)
for cc in $(gdb_compilers); do
	b="$TMP/loops-$cc"
	[ -x "$b" ] || build_fixture "$cc" -O2 gdb/loops.c "$b" || { fail "$cc: build"; continue; }
	# $_loop_depth: frame #0 is sum_row inlined into main's outer loop, in its own inner loop.
	out=$(gdb_run -ex "break loops.c:$IB" -ex run -ex 'printf "d0=%d\n", $_loop_depth()' \
		-ex 'printf "d1=%d\n", $_loop_depth(1)' -ex 'printf "dpc=%d\n", $_loop_depth($pc)' -ex up \
		-ex 'printf "up=%d\n", $_loop_depth()' -ex 'print $_loop_depth(1, 2)' -ex 'print $_loop_depth("x")' \
		-ex 'print $_loop_depth(99)' -ex kill --args "$b" 7 5)
	expect "$cc: \$_loop_depth() in the inline frame: 2 (outer and inner loop)" '^d0=2$' "$out"
	expect "$cc: \$_loop_depth(1): frame #1 (main at the call, in the outer loop) is 1" '^d1=1$' "$out"
	expect "$cc: \$_loop_depth(\$pc): a code address, 2" '^dpc=2$' "$out"
	expect "$cc: after up, \$_loop_depth() follows the selected frame: 1" '^up=1$' "$out"
	expect "$cc: two arguments are an error" 'at most one argument' "$out"
	expect "$cc: a string is an error" 'frame level \(an integer\) or a code address' "$out"
	expect "$cc: a frame that does not exist is an error" 'no frame at level 99' "$out"

	# loop-finish -count: the note, the count, and the count when stopped early.
	out=$(gdb_run -ex "break loops.c:$IB" -ex run -ex delete -ex 'printf "t0=%d\n", inner_trips' \
		-ex 'loop-finish -count' -ex 'printf "t1=%d\n", inner_trips' -ex up -ex 'break scale' \
		-ex 'loop-finish -count' -ex kill --args "$b" 7 5)
	expect "$cc: loop-finish -count says the program stops at each iteration" '^loop-finish: counting iterations: the program stops at each one' "$out"
	n=$(echo "$out" | sed -n 's/^left loop .*; header reached \([0-9]*\) times*$/\1/p' | head -n 1)
	t0=$(echo "$out" | sed -n 's/^t0=//p'); t1=$(echo "$out" | sed -n 's/^t1=//p')
	# (one header visit per trip, or fewer where the compiler unrolled the loop)
	[ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -le $((t1 - t0 + 1)) ]
	ok $? "$cc: ... and how many times the header was reached ($n; the loop ran $((t1 - t0)) more trips)"
	expect "$cc: stopped early by a breakpoint, it gives the count so far" "^Stopped before leaving the loop at loops.c:$OL .*; header reached [0-9]+ times? so far\\.\$" "$out"

	# The statement line at every instruction of main is GDB's.
	out=$(gdb_run -ex 'python
import gdb, re
bad = n = 0
block = gdb.block_for_pc(int(gdb.parse_and_eval("(unsigned long)&main")))
fn = block.function
lo, hi = block.start, block.end
arch = gdb.selected_inferior().architecture() if gdb.selected_inferior().pid else None
pc = lo
while pc < hi:
    sal = gdb.find_pc_line(pc)
    if sal.symtab is not None and sal.line:
        text = gdb.execute("structure *%d" % pc, to_string=True)
        m = re.search(r"^  stmt    (\S+):(\d+)$", text, re.M)
        if m and m.group(1) == sal.symtab.filename.split("/")[-1]:
            n += 1
            if int(m.group(2)) != sal.line:
                bad += 1
                if bad <= 3:
                    print("pc 0x%x: structure says %s, GDB %d" % (pc, m.group(2), sal.line))
    pc += 1
print("compared=%d differ=%d" % (n, bad))
' "$b")
	expect "$cc: structure's statement line is GDB's at every byte of main" '^compared=[1-9][0-9]* differ=0$' "$out"
done

# A stripped program without its .eh_frame either: no procedure known at
# main's address, so no depth (it read 0, "not in a loop").  With .eh_frame
# (what strip leaves), main is a procedure again, sub_ADDR, found from its
# FDE: not in a loop at its entry.  GDB runs a PIE at 0x555555554000.
strip -o "$TMP/stripped" "$bin"
objcopy -R .eh_frame -R .eh_frame_hdr "$TMP/stripped" "$TMP/stripped-noeh"
main=$(nm "$bin" | sed -n 's/^\([0-9a-f]*\) T main$/\1/p')
out=$(gdb_run -ex "break *(0x555555554000 + 0x$main)" -ex run -ex 'print $_loop_depth()' -ex kill "$TMP/stripped-noeh")
expect "stripped, no .eh_frame: \$_loop_depth() is an error, not 0" '^\$_loop_depth: the structure at 0x[0-9a-f]+ is unknown' "$out"
out=$(gdb_run -ex "break *(0x555555554000 + 0x$main)" -ex run -ex 'print $_loop_depth()' -ex kill "$TMP/stripped")
expect "stripped: main is found from its FDE, \$_loop_depth() is 0 at its entry" '^\$1 = 0$' "$out"

# A loop in a glibc frame: the file as GDB's frame line names it.
q="$TMP/qsort"
if build_fixture gcc -O2 gdb/qsort_cmp.c "$q" &&
   gdb_run -ex 'info source' -ex 'break qsort' -ex run -ex 'info source' --args "$q" | grep -q 'Compilation directory is \./'; then
	out=$(gdb_run -ex 'break cmp' -ex run -ex 'bt 3' -ex kill --args "$q")
	frame=$(echo "$out" | sed -n 's/^#1 .* at \(.*msort\.c\):[0-9]*$/\1/p' | head -n 1)
	loop=$(echo "$out" | sed -n '/^#1 /,/^#2 /s/^    in loop (.*) at \(.*msort\.c\):[0-9]*$/\1/p' | head -n 1)
	[ -n "$frame" ] && [ "$frame" = "$loop" ]
	ok_show $? "glibc frame: the loop line names msort.c as the frame does ('$loop', '$frame')" \
		"$(echo "$out" >"$TMP/o"; echo "$TMP/o")"
else
	skip "glibc's debug information (libc6-dbg) with a relative compilation directory is not here"
fi
done_testing
