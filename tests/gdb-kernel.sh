#!/bin/sh
# gdb-kernel.sh - `structure` and `info loops` on Debian's debug vmlinux
# (`gdb vmlinux`, no process) and on ext4.ko added with add-symbol-file at a
# module address.  The chain `structure -json` prints must be `loopscope
# lookup --json`'s at the link-time address, and its statement line GDB's own
# (`info line *ADDR`); on the .ko the link-time address must be the symbol's
# readelf value plus the offset (objdump's layout), and the loop headers
# `info loops` prints must be GDB's runtime addresses of those instructions.
# Then ext4.ko with a -s for .text.unlikely and other sections (each its own
# bias): `structure` on a .cold function (in .text.unlikely) must be in its
# function (GDB's `info symbol`) at GDB's line, and equal `loopscope lookup`
# at the link-time address; a loop whose header is in .text.unlikely must be
# shown there.  add-module-file puts .text at the base given (readelf's value
# + BASE is GDB's address) and each section at a /sys/module tree's address.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
[ -x "$LOOPSCOPE" ] || skip_all "loopscope CLI not built"
VMLINUX=$("$top_srcdir/scripts/setup-kernel-dbg" 2>"$TMP/setup.err") || skip_all "no kernel debug info: $(tail -n 1 "$TMP/setup.err")"
REL=$(basename "$VMLINUX" | sed 's/^vmlinux-//')
KO=/usr/lib/debug/lib/modules/$REL/kernel/fs/ext4/ext4.ko

# stmt_line JSON: the statement's line of a chain
stmt_line() { python3 -c 'import json,sys; c=json.loads(sys.argv[1])["chain"]; print([x for x in c if x["kind"]=="stmt"][-1]["line"])' "$1"; }
same_chain() { python3 -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
strip = lambda c: [{k: v for k, v in x.items() if k not in ("header",)} for x in c]
sys.exit(0 if strip(a["chain"]) == strip(b["chain"]) and a["chain"] else 1)' "$1" "$2"; }

out=$(gdb_run "$VMLINUX" -ex 'structure -json ktime_get+26' -ex 'info line *(ktime_get+26)' -ex 'info loops ktime_get')
json=$(echo "$out" | grep '^{' | head -n 1)
addr=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["addr"])' "$json" 2>/dev/null)
[ -n "$json" ]
ok $? "gdb vmlinux: structure -json ktime_get+26 prints a chain ($addr)"
cli=$("$LOOPSCOPE" lookup --json "$VMLINUX" "$addr" 2>/dev/null)
same_chain "$json" "$cli"
ok $? "gdb vmlinux: the chain is loopscope lookup's"
gline=$(echo "$out" | sed -n 's/^Line \([0-9]*\) of .*/\1/p' | head -n 1)
check_eq "$(stmt_line "$json")" "$gline" "gdb vmlinux: the statement line is GDB's (info line)"
echo "$out" | grep -q '^1 loop in ktime_get' && echo "$out" | grep -q 'loop at timekeeping.c:[0-9]*  header 0xffffffff8'
ok $? "gdb vmlinux: info loops ktime_get shows its seqcount loop at a vmlinux address"
echo "$json" | grep -q '"kind": *"loop"'
ok $? "gdb vmlinux: ktime_get+26 is in that loop"

if [ ! -f "$KO" ]; then
	skip "no ext4.ko in the debug package"
	done_testing
fi
BASE=0xffffffffc0a00000
out=$(gdb_run "$VMLINUX" -ex "add-symbol-file $KO -o $BASE" -ex 'structure -json ext4_readdir+0x4de' \
	-ex 'info line *(ext4_readdir+0x4de)' -ex 'info loops ext4_readdir' -ex 'print/x &ext4_readdir')
json=$(echo "$out" | grep '^{' | head -n 1)
[ -n "$json" ]
ok $? "add-symbol-file ext4.ko -o $BASE: structure -json ext4_readdir+0x4de prints a chain"
sym=$(readelf -sW "$KO" | awk '$4 == "FUNC" && $8 == "ext4_readdir" { print $2; exit }')
want=$(printf '0x%x' $((0x$sym + 0x4de)))
got=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["addr"])' "$json" 2>/dev/null)
check_eq "$got" "$want" "the link-time address is readelf's ext4_readdir value + 0x4de (objdump's layout)"
cli=$("$LOOPSCOPE" lookup --json "$KO" "$want" 2>/dev/null)
same_chain "$json" "$cli"
ok $? "the chain is loopscope lookup's on ext4.ko"
gline=$(echo "$out" | sed -n 's/^Line \([0-9]*\) of .*/\1/p' | head -n 1)
check_eq "$(stmt_line "$json")" "$gline" "the statement line is GDB's (info line)"
rt=$(echo "$out" | sed -n 's/^\$[0-9]* = \(0x[0-9a-f]*\).*/\1/p' | tail -n 1)
hdr=$(echo "$out" | sed -n 's/.*loop at [^ ]*  header \(0x[0-9a-f]*\).*/\1/p' | head -n 1)
link_hdr=$("$LOOPSCOPE" struct "$KO" 2>/dev/null | awk '$1 == "proc" && $2 == "ext4_readdir" { p = 1; next } $1 == "proc" { p = 0 } p && /loop at/' |
	sed -n 's/.*header \(0x[0-9a-f]*\).*/\1/p' | head -n 1)
python3 -c 'import sys; h, r, l, s = (int(x, 16) for x in sys.argv[1:]); sys.exit(0 if h - r == l - s else 1)' \
	"${hdr:-0}" "${rt:-1}" "${link_hdr:-0}" "0x$sym"
ok $? "info loops ext4_readdir: headers at GDB's addresses ($hdr, &ext4_readdir is $rt; in ext4.ko $link_hdr, 0x$sym)"

# cold WHAT GDB-ARGS...: structure on ext4_setup_system_zone.cold, GDB's
# info symbol and info line of it, and its function's loops
cold() {
	what=$1; shift
	out=$(gdb_run "$VMLINUX" "$@" -ex 'structure -json ext4_setup_system_zone.cold' \
		-ex "info symbol &'ext4_setup_system_zone.cold'" -ex 'info line ext4_setup_system_zone.cold' \
		-ex 'info loops ext4_setup_system_zone' -ex "info line *&'ext4_setup_system_zone.cold'+0x2d")
	json=$(echo "$out" | grep '^{' | head -n 1)
	pc=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["pc"])' "$json" 2>/dev/null)
	addr=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["addr"])' "$json" 2>/dev/null)
	if [ -z "$addr" ]; then
		fail "$what: structure -json ext4_setup_system_zone.cold prints a chain"; echo "$out" | sed 's/^/# /'; return
	fi
	check_eq "$(echo "$out" | sed -n 's/^\([a-z_0-9]*\)\[cold\] in section \([^ ]*\) of .*/\1 \2/p')" \
		"ext4_setup_system_zone .text.unlikely" "$what: GDB has ext4_setup_system_zone.cold ($pc) in .text.unlikely"
	gline=$(echo "$out" | sed -n 's/^Line \([0-9]*\) of .* starts at address \(0x[0-9a-f]*\) <ext4_setup_system_zone\.cold>.*/\1 \2/p' | head -n 1)
	check_eq "${gline#* }" "$pc" "$what: structure's pc is GDB's address of the .cold part"
	python3 -c '
import json, sys
c = json.loads(sys.argv[1])["chain"]
sys.exit(0 if c[0]["name"] == "ext4_setup_system_zone" and [x for x in c if x["kind"] == "stmt"][-1]["line"] == int(sys.argv[2]) else 1)' \
		"$json" "${gline% *}" 2>/dev/null
	ok $? "$what: link-time $addr is in ext4_setup_system_zone at GDB's line ${gline% *}"
	cli=$("$LOOPSCOPE" lookup --json "$KO" "$addr" 2>/dev/null)
	same_chain "$json" "$cli"
	ok $? "$what: structure on the .cold function equals loopscope lookup on ext4.ko at $addr"
	# the loop of debug_print_tree (inlined) is in the .cold part: at GDB's address
	chdr=$(echo "$out" | sed -n 's/.*loop at block_validity.c:136  header \(0x[0-9a-f]*\).*/\1/p' | head -n 1)
	hline=$(gdb_run "$VMLINUX" "$@" -ex "info line *${chdr:-0}" | sed -n 's/^Line \([0-9]*\) of .*block_validity.c.*/\1/p' | head -n 1)
	python3 -c 'import sys; h, p = int(sys.argv[1], 16), int(sys.argv[2], 16); sys.exit(0 if p <= h < p + 0x7c else 1)' "${chdr:-0}" "$pc" &&
		[ -n "$hline" ] && [ "$hline" -ge 136 ] && [ "$hline" -le 138 ]
	ok $? "$what: the loop at block_validity.c:136 has its header in the .cold part ($chdr, GDB's line $hline)"
}
cold "add-symbol-file -s" -ex "add-symbol-file $KO 0xffffffffc0a00000 -s .text.unlikely 0xffffffffc0b00000 -s .static_call.text 0xffffffffc0c00000 -s .exit.text 0xffffffffc0c10000"
cold "add-symbol-file -s, .text.unlikely first" -ex "add-symbol-file $KO 0xffffffffc0d00000 -s .text.unlikely 0xffffffffc0a00000"
SYS=$TMP/sys-module
mkdir -p "$SYS/ext4/sections"
echo 0xffffffffc0e00000 >"$SYS/ext4/sections/.text"
echo 0xffffffffc0c80040 >"$SYS/ext4/sections/.text.unlikely"
echo 0xffffffffc0f00000 >"$SYS/ext4/sections/.data"
echo 0 >"$SYS/ext4/sections/.bss"
cold "add-module-file -sys-module" -ex "add-module-file -sys-module $SYS $KO"
out=$(gdb_run "$VMLINUX" -ex "add-module-file $KO $BASE" -ex 'print/x &ext4_readdir' -ex 'structure -json ext4_readdir+0x4de')
check_eq "$(echo "$out" | sed -n 's/^\$[0-9]* = \(0x[0-9a-f]*\).*/\1/p' | tail -n 1)" "$(printf '0x%x' $((BASE + 0x$sym)))" \
	"add-module-file ext4.ko BASE: ext4_readdir at BASE + readelf's value (.text at the base, as the kernel has it)"
json=$(echo "$out" | grep '^{' | head -n 1)
same_chain "$json" "$("$LOOPSCOPE" lookup --json "$KO" "$want" 2>/dev/null)"
ok $? "add-module-file ext4.ko BASE: structure ext4_readdir+0x4de equals loopscope lookup at $want"
done_testing
