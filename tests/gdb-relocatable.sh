#!/bin/sh
# gdb-relocatable.sh - a relocatable object (a .o, as a kernel module's .ko
# is) added with add-symbol-file, each code section at an address of its
# own (-s .text.unlikely ADDR2) and laid out by GDB (-o BASE).  gcc moves
# work()'s unlikely part to .text.unlikely (work.cold); `structure` there
# must be `loopscope lookup --json` at the link-time address it names, and
# that address must be the right one: its procedure is the function GDB
# names (`info symbol`: work[cold]) and its statement line GDB's (`info
# line *PC`).  Mapped with one bias for all sections, work.cold resolved to
# other(), at the start of .text.  The loop headers `info loops work` prints
# are checked against GDB's line table (their lines), and `structure
# work.cold+2` (a clone's name in an offset) resolves.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
[ -x "$LOOPSCOPE" ] || skip_all "loopscope CLI not built"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed (clang does not split functions without a profile)"

OBJ=$TMP/cold.o
build_fixture gcc -O2 gdb/cold.c "$OBJ" -c || fail_all "gcc -O2 -c cold.c does not build"
readelf -sW "$OBJ" | grep -q ' work\.cold$' || fail_all "gcc did not make work.cold (no .text.unlikely part)"

json_field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2" 2>/dev/null; }
# chain_is JSON PROC LINE: the chain's procedure and its statement's line
chain_is() { python3 -c '
import json, sys
c = json.loads(sys.argv[1])["chain"]
sys.exit(0 if c and c[0]["kind"] == "proc" and c[0]["name"] == sys.argv[2] and
         [x for x in c if x["kind"] == "stmt"][-1]["line"] == int(sys.argv[3]) else 1)' "$@" 2>/dev/null; }

# one_layout WHAT ADD-SYMBOL-FILE-ARGS
one_layout() {
	what=$1; shift
	out=$(gdb_run -ex 'set architecture i386:x86-64' -ex "add-symbol-file $OBJ $*" \
		-ex 'structure -json work.cold' -ex "info symbol &'work.cold'" -ex 'info line work.cold' \
		-ex 'structure -json work.cold+2' -ex 'info loops work')
	j=$(echo "$out" | grep '^{' | sed -n 1p)
	j2=$(echo "$out" | grep '^{' | sed -n 2p)
	addr=$(json_field "$j" addr)
	pc=$(json_field "$j" pc)
	if [ -z "$addr" ]; then
		fail "$what: structure -json work.cold prints a chain"; echo "$out" | sed 's/^/# /'; return
	fi
	gsym=$(echo "$out" | sed -n 's/^\([A-Za-z_]*\)\[cold\] in section \(.*\)/\1 \2/p')
	check_eq "$gsym" "work .text.unlikely" "$what: GDB puts work.cold ($pc) in work's .text.unlikely"
	gline=$(echo "$out" | sed -n 's/^Line \([0-9]*\) of "[^"]*" starts at address \(0x[0-9a-f]*\) <work\.cold>.*/\1 \2/p' | head -n 1)
	check_eq "${gline#* }" "$pc" "$what: structure's pc is GDB's address of work.cold"
	chain_is "$j" work "${gline% *}"
	ok $? "$what: link-time $addr is in work, at GDB's line ${gline% *} (info line)"
	$CHECK compare "$j" "$("$LOOPSCOPE" lookup --json "$OBJ" "$addr")"
	ok $? "$what: structure work.cold equals loopscope lookup --json at $addr"
	check_eq "$(json_field "$j2" addr)" "$(printf '0x%x' $((addr + 2)))" "$what: structure work.cold+2 is 2 bytes further"
	for h in $(echo "$out" | sed -n 's/.*loop at [^ ]*  header \(0x[0-9a-f]*\).*/\1/p'); do
		l=$(gdb_run -ex 'set architecture i386:x86-64' -ex "add-symbol-file $OBJ $*" -ex "info line *$h" |
			sed -n 's/^Line \([0-9]*\) of .*/\1/p' | head -n 1)
		want=$(echo "$out" | grep "header $h " | sed -n 's/.*loop at [^:]*:\([0-9]*\) .*/\1/p')
		[ -n "$l" ] && [ -n "$want" ] && [ "$l" -ge "$want" ] && [ "$l" -le "$((want + 2))" ]
		ok $? "$what: the loop header at $h is in the loop's lines for GDB too (line $l, the loop's $want)"
	done
}

one_layout "-s .text.unlikely" "0x400000 -s .text.unlikely 0x500000 -s .rodata.str1.1 0x600000"
one_layout "-s, .text.unlikely below .text" "0x700000 -s .text.unlikely 0x480000"
one_layout "-o BASE" "-o 0x400000"
done_testing
