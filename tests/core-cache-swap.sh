#!/bin/sh
# tests/core-cache-swap.sh - the cache directory swapped for a symbolic
# link after it was checked (issue 28): the checks (this user's, not
# writable by others, not a link, in a parent no other user controls) are
# made on the descriptor that is then used, and every entry is read,
# written, renamed and evicted relative to it.  Before, the entry was
# opened by path after the check: a directory swapped for a link in
# between was followed, and the entry at its target read.  Which file was
# read shows under -v: the link's target holds a copy of the entry with
# one byte changed, which is a miss ("corrupt"); the checked directory's
# entry is a hit.  (Whoever can make such a link could write a forged entry
# there instead: tests/core-cache-trust.sh.)
#
# The swap is made at a known point, not raced: loopscope runs with
# LOOPSCOPE_TIMING="stop:cache dir" and stops itself (SIGSTOP) each time
# the directory has been checked and opened, before an entry is read or
# written; the test swaps it there and lets it go on (SIGCONT).
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

[ -x "$LOOPSCOPE" ] || skip_all "$LOOPSCOPE not built"
command -v gcc >/dev/null || skip_all "gcc not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"
cat >"$TMP/p.c" <<'EOC'
volatile long sink;
__attribute__((noinline)) long work(long n) { long s = 0; for (long i = 0; i < n; i++) s += i * sink; return s; }
int main(int argc, char **argv) { (void)argv; sink = work(argc * 1000); return 0; }
EOC
gcc -O2 -g -o "$TMP/prog" "$TMP/p.c" || skip_all "gcc cannot build the fixture"
addr=0x$(nm "$TMP/prog" | awk '$3 == "work" { print $1 }')
"$LOOPSCOPE" lookup --no-cache "$TMP/prog" "$addr" >"$TMP/truth" 2>&1
grep -q "work" "$TMP/truth"
ok $? "no cache: lookup of $addr names work"

export XDG_CACHE_HOME="$TMP/xdg"
C="$XDG_CACHE_HOME/loopscope"

# run_swapping N ACTION ARGS...: loopscope ARGS; at its Nth stop ("cache
# dir"), ACTION (a shell command) is run; every stop is continued.
run_swapping() {
	_at=$1 _action=$2
	shift 2
	LOOPSCOPE_TIMING="stop:cache dir" "$LOOPSCOPE" "$@" >"$TMP/out" 2>"$TMP/err.all" &
	_pid=$! _stops=0 _n=0
	while kill -0 $_pid 2>/dev/null && [ $_n -lt 1200 ]; do
		if [ "$(sed 's/^.*) \(.\).*/\1/' /proc/$_pid/stat 2>/dev/null)" = T ]; then
			_stops=$((_stops + 1))
			[ $_stops -eq "$_at" ] && eval "$_action"
			kill -CONT $_pid
		fi
		sleep 0.05
		_n=$((_n + 1))
	done
	wait $_pid
	rc=$?
	grep -v 'timing:' "$TMP/err.all" >"$TMP/err"
}

# Reading: a real entry in the cache; a corrupt copy in a directory of
# this user's own (0700: it would pass every check itself).
"$LOOPSCOPE" lookup "$TMP/prog" "$addr" >/dev/null 2>&1 && ls "$C"/*.lsc >/dev/null 2>&1
ok $? "the entry is stored in $C"
mkdir -m 700 "$TMP/evil" && cp "$C"/*.lsc "$TMP/evil/" &&
	python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(200); b = f.read(1); f.seek(200); f.write(bytes([b[0] ^ 0x55]))' "$TMP"/evil/*.lsc
ok $? "a corrupt copy of it in $TMP/evil"
run_swapping 1 'mv "$C" "$C.checked" && ln -s "$TMP/evil" "$C"' lookup -v "$TMP/prog" "$addr"
[ $rc -eq 0 ] && cmp -s "$TMP/out" "$TMP/truth" && ! grep -q "cache miss" "$TMP/err"
ok $? "swapped for a link after the check: the checked directory's entry is read (a hit), not the link's (exit $rc)"
grep "cache miss" "$TMP/err" | sed 's/^/# /'
[ -L "$C" ] && [ -d "$C.checked" ]
ok $? "the swap was made (the test's own check)"

# Writing: an empty cache directory, swapped at the store's check (the
# second stop: the first is the read's) for a link to an empty directory.
rm -rf "$C" "$C.checked" "$TMP/target"
mkdir -m 700 "$C" "$TMP/target"
run_swapping 2 'mv "$C" "$C.checked" && ln -s "$TMP/target" "$C"' lookup "$TMP/prog" "$addr"
[ $rc -eq 0 ] && cmp -s "$TMP/out" "$TMP/truth"
ok $? "swapped before the store: the answer (exit $rc)"
[ -z "$(ls -A "$TMP/target")" ]
ok $? "nothing is written through the link (target: $(ls -A "$TMP/target" | tr '\n' ' '))"
ls "$C.checked"/*.lsc >/dev/null 2>&1 && [ -z "$(ls -A "$C.checked" | grep -v '\.lsc$')" ]
ok $? "the entry is in the directory that was checked, no temporary left ($(ls -A "$C.checked" | tr '\n' ' '))"
done_testing
