#!/bin/sh
# gdb-remote.sh - the GDB commands on a program run under gdbserver
# (spin.c, gcc -O2): over a pipe with the file local and with GDB reading
# it from the target (target:PATH), over TCP, and, as root, from a PID and
# mount namespace of its own where the program is at a path that is empty
# here (as on another machine: the extension copies it with `remote get`),
# stripped there with its debug file on the target alone; and under MI.
# bt with loop lines, structure, info loops, $_loop_depth(), loop-next,
# loop-finish, the MI commands, the analyzed file's build-id.  The checks
# are in tests/fixtures/gdb/remote.py.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace
command -v gdbserver >/dev/null 2>&1 || skip_all "gdbserver not installed"

mkdir -p "$TMP/bin"
build_fixture gcc -O2 gdb/spin.c "$TMP/bin/spin" || fail_all "gcc builds spin.c"
objcopy --only-keep-debug "$TMP/bin/spin" "$TMP/spin.debug" || fail_all "objcopy --only-keep-debug spin"
BODY=$(grep -n '@spin-body' "$FIXTURES/gdb/spin.c" | cut -d: -f1)
ns=
# shellcheck disable=SC2016 # $0 is the inner shell's
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 &&
   unshare -p -f -m --mount-proc --propagation private sh -c 'mount -t tmpfs none "$0"' "$TMP/bin" 2>/dev/null; then
	ns=--namespaces
fi
python3 "$FIXTURES/gdb/remote.py" "$GDB" "$GDBEXT" "$TMP/bin/spin" "$TMP/spin.debug" "$BODY" "$TMP" $ns >"$TMP/out" 2>&1
rc=$?
while IFS= read -r line; do
	case $line in
	"ok - "*) pass "${line#ok - }" ;;
	"not ok - "*) fail "${line#not ok - }" ;;
	*) echo "$line" ;;
	esac
done <"$TMP/out"
ok $rc "the sessions ran to their end"
[ -n "$ns" ] || skip "the target in namespaces of its own: needs root and unshare -p -m"
done_testing
