#!/bin/sh
# tests/core-cache-trust.sh - the cache directory is trusted only if it is
# the user's own, not writable by others and not a symbolic link (issue
# 28's cache-forged-shared.sh and cache-dir-symlink-chmod.sh).  Two users
# made with setpriv (uids 4242 "mallory" and 4343 "victim"; no accounts
# added) and root:
#  - mallory makes the cache in a shared XDG_CACHE_HOME (a 1777 directory
#    standing for /tmp) and forges the entry of the victim's binary
#    (tests/fixtures/cache_forge.py: the checksum has no secret): the
#    victim's lookup gives the --no-cache answer, never "evil", with one
#    line saying the cache is off and why; nothing is written there;
#    `loopscope cache --list` refuses the directory, naming it;
#  - mallory points ~/.cache/loopscope at a root-owned 0755 directory and
#    root runs with that HOME (sudo -E): the directory keeps its mode, no
#    file is written there and its old backup.lsc is not evicted;
#  - and the victim's own private cache is still used (a hit under -v).
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

[ -x "$LOOPSCOPE" ] || skip_all "$LOOPSCOPE not built"
[ "$(id -u)" = 0 ] || skip_all "not root: setpriv cannot run as two other users"
command -v setpriv >/dev/null || skip_all "setpriv not installed"
command -v gcc >/dev/null && command -v python3 >/dev/null || skip_all "gcc or python3 not installed"
FORGE="$top_srcdir/tests/fixtures/cache_forge.py"
X=$TMP/x
mkdir -m 1777 "$X"
chmod 755 "$TMP"
cat >"$X/victim.c" <<'EOC'
volatile long sink;
__attribute__((noinline)) long work(long n) {
  long s = 0;
  for (long i = 0; i < n; i++)
    s += i * i;
  return s;
}
int main(int argc, char **argv) { (void)argv; sink = work(argc * 1000); return 0; }
EOC
gcc -O2 -g -o "$X/victimbin" "$X/victim.c" || skip_all "gcc cannot build the fixture"
chmod 755 "$X/victimbin"
addr=0x$(nm "$X/victimbin" | awk '$3 == "work" { print $1 }')
# as UID COMMAND...: COMMAND as that user, with a clean environment
as() { _u=$1; shift; setpriv --reuid="$_u" --regid="$_u" --clear-groups env -i PATH=/usr/bin:/bin HOME="$X" XDG_CACHE_HOME="$X/shared" "$@"; }
as 4343 true || skip_all "setpriv cannot switch users here"

as 4343 "$LOOPSCOPE" lookup --no-cache "$X/victimbin" "$addr" >"$TMP/truth" 2>&1
grep -q "work" "$TMP/truth"
ok $? "victim, no cache: lookup of $addr names work"

# mallory's forged entry
as 4242 "$LOOPSCOPE" struct -o /dev/null "$X/victimbin" && as 4242 chmod 755 "$X/shared" "$X/shared/loopscope" &&
	as 4242 sh -c "chmod 644 $X/shared/loopscope/*.lsc" && as 4242 python3 "$FORGE" "$X"/shared/loopscope/*.lsc work evil >/dev/null
ok $? "mallory: the entry is made in the shared cache and forged"
ls -l "$X/shared/loopscope" >"$TMP/before"
as 4343 "$LOOPSCOPE" lookup -v "$X/victimbin" "$addr" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && cmp -s "$TMP/out" "$TMP/truth" && ! grep -q evil "$TMP/out"
ok $? "victim, shared cache: the --no-cache answer, not the forged one (exit $rc)"
[ "$(grep -c "$X/shared/loopscope: the cache is off: the directory is owned by uid 4242, not by this user (uid 4343)" "$TMP/err")" = 1 ]
ok $? "victim: one line says the cache is off and why"
ls -l "$X/shared/loopscope" | cmp -s - "$TMP/before"
ok $? "victim: nothing is written in mallory's directory"
as 4343 "$LOOPSCOPE" cache --list >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -ne 0 ] && grep -q "$X/shared/loopscope: not used as the cache: the directory\|$X/shared/loopscope: not used as the cache: owned by uid 4242" "$TMP/err"
ok $? "victim: cache --list refuses the directory, naming it (exit $rc)"

# a cache directory in a directory mallory owns, not there yet
as 4242 mkdir -m 755 "$X/mal"
setpriv --reuid=4343 --regid=4343 --clear-groups env -i PATH=/usr/bin:/bin HOME="$X" XDG_CACHE_HOME="$X/mal" \
	"$LOOPSCOPE" lookup "$X/victimbin" "$addr" >"$TMP/out" 2>"$TMP/err"
cmp -s "$TMP/out" "$TMP/truth" && grep -q "$X/mal/loopscope: the cache is off: the directory is in $X/mal, a directory of uid 4242" "$TMP/err"
ok $? "victim: a cache to be made in mallory's directory is off too, said"

# root, with mallory's HOME: the symlinked cache directory
mkdir -m 755 "$X/precious"
echo "keep me" >"$X/precious/backup.lsc"
touch -d '1 day ago' "$X/precious/backup.lsc"
as 4242 sh -c "mkdir -p $X/home4242/.cache && ln -s $X/precious $X/home4242/.cache/loopscope"
ls -la "$X/precious" >"$TMP/before"
env -u XDG_CACHE_HOME HOME="$X/home4242" LOOPSCOPE_CACHE_SIZE=3940 "$LOOPSCOPE" lookup "$X/victimbin" "$addr" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && cmp -s "$TMP/out" "$TMP/truth"
ok $? "root, symlinked cache: the right answer (exit $rc)"
[ "$(stat -c %a "$X/precious")" = 755 ] && ls -la "$X/precious" | cmp -s - "$TMP/before"
ok $? "root: the link's target keeps its mode 755, gets no file, keeps backup.lsc"
grep -q "$X/home4242/.cache/loopscope: the cache is off: the directory is a symbolic link" "$TMP/err"
ok $? "root: one line says the cache is off: a symbolic link"

# the control: a private cache is used
mkdir -m 700 "$TMP/own"
XDG_CACHE_HOME=$TMP/own "$LOOPSCOPE" lookup "$X/victimbin" "$addr" >/dev/null 2>&1
XDG_CACHE_HOME=$TMP/own "$LOOPSCOPE" lookup -v "$X/victimbin" "$addr" >"$TMP/out" 2>"$TMP/err"
cmp -s "$TMP/out" "$TMP/truth" && ! grep -q "cache is off\|cache miss" "$TMP/err" && ls "$TMP/own/loopscope/"*.lsc >/dev/null 2>&1
ok $? "a private cache is still written and used"
done_testing
