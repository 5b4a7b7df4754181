#!/bin/sh
# tests/core-decode-fast.sh - the fast x86-64 decoder
# (libloopscope/cfg/decode_x86_fast.c) gives libopcodes' answer, its oracle,
# on every instruction it claims: tests/decode-diff decodes the code of each
# binary both ways (a linear sweep, and every byte offset of the first 256
# KiB of each code section) and compares struct ls_insn field by field and
# the mnemonic; and ls_decode_flow (decode_x86_flow.c, the noreturn
# proofs' decode) against ls_decode on length, kind, opcode and target.
# Binaries: libc, libstdc++, bash, python3, gdb, perf, objdump, ld, zlib
# where installed (real code of gcc -O2, with its nops,
# endbr64, AVX); the fixtures built now with gcc and clang at -O0 and -O2,
# and the hand-written assembly fixtures (undecodable bytes, jump tables,
# prefixed calls and pushes of immediates: all the fast decoder's).
# On the big real binaries the fast decoder must handle at least 85% of the
# instructions (the coverage is printed: libc 92%, bash 99%).  The slow
# tier's tests/corpus-decode-fast.sh does the same on the corpus, libLLVM,
# cc1plus and the kernel.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
DIFF="$top_builddir/tests/decode-diff"
[ -x "$DIFF" ] || skip_all "$DIFF not built (make check builds it)"
# check FILE MIN_COVERAGE: decode-diff's TAP line becomes one of ours.
check() {
	"$DIFF" -b 262144 "$1" >"$TMP/out" 2>&1
	st=$?
	line=$(grep -E '^(not )?ok ' "$TMP/out" | head -n 1 | sed 's/^\(not \)\{0,1\}ok [0-9]* - //')
	cov=$(echo "$line" | sed -n 's/.* instructions, \([0-9]*\)\.[0-9]*% by the fast decoder.*/\1/p')
	[ $st -eq 0 ] && [ -n "$cov" ] && [ "$cov" -ge "$2" ]
	ok $? "${line:-$1: no result} (coverage at least $2%)"
	[ $st -eq 0 ] || grep '^#' "$TMP/out" | head -n 40
}
for bin in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /usr/bin/bash \
	/usr/bin/python3 /usr/bin/gdb /usr/bin/perf /usr/bin/objdump /usr/bin/ld.bfd /usr/lib/x86_64-linux-gnu/libz.so.1; do
	[ -f "$bin" ] || { skip "$bin: not installed"; continue; }
	check "$(readlink -f "$bin")" 85
done
for cc in gcc clang; do
	command -v $cc >/dev/null 2>&1 || { skip "$cc: not installed"; continue; }
	for o in -O0 -O2; do
		for f in loops inline_deep recursion cold data_layout; do
			build_fixture $cc $o $f.c "$TMP/$f-$cc$o" || fail_all "$f.c does not build with $cc $o"
			check "$TMP/$f-$cc$o" 0
		done
	done
done
for s in bad_decode jump_tables eh_sleb unwind; do
	gcc -nostdlib -o "$TMP/$s" "$FIXTURES/$s.s" 2>"$TMP/cc.err" || gcc -o "$TMP/$s" "$FIXTURES/$s.s" 2>>"$TMP/cc.err" ||
		fail_all "$s.s does not assemble: $(head -c 300 "$TMP/cc.err")"
	check "$TMP/$s" 0
done
# Every instruction of this one is the fast decoder's (and libopcodes').
gcc -nostdlib -o "$TMP/decode_prefixed" "$FIXTURES/decode_prefixed.s" 2>"$TMP/cc.err" ||
	fail_all "decode_prefixed.s does not assemble: $(head -c 300 "$TMP/cc.err")"
check "$TMP/decode_prefixed" 100
done_testing
