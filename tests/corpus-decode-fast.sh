#!/bin/sh
# tests/corpus-decode-fast.sh - tests/core-decode-fast.sh on the big real
# code: every ELF file the real-code corpus built (gcc and clang, -O2 and
# -O3: LLVM's vector code, Eigen's AVX), libLLVM, cc1plus and the Debian
# kernel's vmlinux where installed; every instruction of a linear sweep and
# every byte offset of the first MiB of each code section decoded both
# ways (tests/decode-diff), struct ls_insn and the mnemonic compared with
# libopcodes'.  Slow tier: it needs the corpus (tests/corpus/corpus.py).
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
DIFF="$top_builddir/tests/decode-diff"
[ -x "$DIFF" ] || skip_all "$DIFF not built (make check builds it)"
CORPUS=${LOOPSCOPE_CORPUS_DIR:-/var/tmp/loopscope-corpus}
[ -d "$CORPUS/build" ] || skip_all "no corpus in $CORPUS (make check-slow-setup builds it)"
find "$CORPUS/build" -type f -size +8k | while read -r f; do
	[ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] && echo "$f"
done >"$TMP/corpus-files"
n=$(wc -l <"$TMP/corpus-files")
[ "$n" -gt 0 ] || skip_all "no ELF file in $CORPUS/build"
# The corpus in one run: one TAP line per file from decode-diff, summed
# here (-z: some objects hold only tables).
xargs "$DIFF" -z -b 1048576 <"$TMP/corpus-files" >"$TMP/out" 2>&1
st=$?
bad=$(grep -c '^not ok' "$TMP/out")
mism=$(sed -n 's/.*; \([0-9]*\) mismatches$/\1/p' "$TMP/out" | awk '{ s += $1 } END { print s + 0 }')
[ $st -eq 0 ] && [ "$bad" -eq 0 ]
ok $? "the corpus: $n ELF files, $mism mismatches, $bad files failed"
[ $st -eq 0 ] || grep -E '^(not ok|#)' "$TMP/out" | head -n 60
# The debug kernel: the one scripts/setup-kernel-dbg installs (not
# necessarily the running one).
vmlinux=$(ls /usr/lib/debug/boot/vmlinux-* 2>/dev/null | tail -n 1)
for bin in /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1 /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1 \
	/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus "${vmlinux:-/usr/lib/debug/boot/vmlinux}"; do
	[ -f "$bin" ] || { skip "$bin: not installed"; continue; }
	"$DIFF" -b 1048576 "$bin" >"$TMP/out" 2>&1
	st=$?
	ok $st "$(grep -E '^(not )?ok ' "$TMP/out" | head -n 1 | sed 's/^\(not \)\{0,1\}ok [0-9]* - //')"
	[ $st -eq 0 ] || grep '^#' "$TMP/out" | head -n 40
done
done_testing
