#!/bin/sh
# gdb-chain-fields.sh - every field of the scope chain reaches GDB (the C
# module's chain() over the library's public accessors): `structure -json`
# is, byte for byte, `loopscope lookup --json` plus the runtime "pc", on a
# procedure with an indirect jump loopscope cannot resolve
# ("unresolved_jumps", tests/fixtures/jump_tables.s) and on a chain deeper
# than LS_MAX_CHAIN ("cut", gen_inline.py); and `info loops` on that
# procedure says its loops may be incomplete, with the analysis made
# (cache cold) and read from the cache (warm).  Before, the GDB script
# rewrote the JSON by hand, dropped both fields, and said "has no loops".
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
[ -x "$LOOPSCOPE" ] || skip_all "loopscope CLI not built"

# same GDB-OUTPUT CLI-OUTPUT LABEL: the first JSON line of each, GDB's without "pc", equal bytes.
same() {
	g=$(echo "$1" | grep '^{' | head -n 1 | sed 's/,"pc":"0x[0-9a-f]*"//')
	c=$(echo "$2" | head -n 1)
	if [ -n "$c" ] && [ "$g" = "$c" ]; then pass "$3"; else fail "$3"; diag "gdb: $g"; diag "cli: $c"; fi
}

jt="$TMP/jt"
if gcc -pie -o "$jt" "$FIXTURES/jump_tables.s" 2>"$TMP/cc.err"; then
	addr=0x$(nm "$jt" | sed -n 's/^\([0-9a-f]*\) [Tt] jt_unresolved$/\1/p')
	for state in cold warm; do
		out=$(gdb_run -ex 'info loops jt_unresolved' -ex "structure -json *$addr" -ex 'maint info loopscope' "$jt")
		echo "$out" | grep -q '^note: jt_unresolved has 1 indirect jump that could not be resolved (a jump table?): its loops may be incomplete$'
		ok_show $? "info loops jt_unresolved (cache $state) says its loops may be incomplete" "$(echo "$out" >"$TMP/o"; echo "$TMP/o")"
		echo "$out" | grep -q '^jt_unresolved in .* has no loops loopscope could find\.$'
		ok $? "... and that no loop is what loopscope could find, not that there is none (cache $state)"
		want=analyzed; [ $state = warm ] && want=from
		echo "$out" | grep -q "^    $want "
		ok $? "... the analysis was $([ $state = cold ] && echo made || echo read from the cache)"
		same "$out" "$("$LOOPSCOPE" lookup --json "$jt" "$addr" 2>/dev/null)" \
			"structure -json at jt_unresolved is lookup --json's object (unresolved_jumps included), cache $state"
	done
else
	fail "jump_tables.s links: $(head -c 200 "$TMP/cc.err")"
fi

deep="$TMP/deep300"
if python3 "$FIXTURES/gdb/gen_inline.py" 300 "$deep.s" && gcc -c -o "$deep.o" "$deep.s" 2>/dev/null &&
   gcc -o "$deep" "$deep.o" 2>/dev/null; then
	a=$(printf '0x%x' $((0x$(nm "$deep" | sed -n 's/^\([0-9a-f]*\) T deep$/\1/p') + 4)))
	out=$(gdb_run -ex "structure -json *$a" -ex "structure *$a" "$deep")
	cli=$("$LOOPSCOPE" lookup --json "$deep" "$a" 2>/dev/null)
	echo "$cli" | grep -q '"cut":[1-9]'
	ok $? "the CLI cuts the 300-deep chain (\"cut\")"
	same "$out" "$cli" "structure -json on the 300-deep chain is lookup --json's object (cut included)"
	echo "$out" | grep -q '^  \.\.\.     [0-9]* deeper scopes cut (the chain is [0-9]* deep)$'
	ok $? "structure says how many scopes are cut"
else
	fail "gen_inline.py writes the 300-deep chain and gcc builds it"
fi
done_testing
