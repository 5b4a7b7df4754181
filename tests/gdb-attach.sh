#!/bin/sh
# gdb-attach.sh - `gdb -p PID` on a running program (spin.c, gcc -O2), from
# the same mount namespace and from another one (unshare -m, the program's
# directory covered there, so that GDB reads it as target:PATH): bt with
# loop lines, structure, info loops, $_loop_depth(), loop-next,
# loop-finish, detach, then GDB ended by SIGTERM as an IDE ends it, ten
# times each, with no internal error.  The checks are in
# tests/fixtures/gdb/attach.py.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace

mkdir -p "$TMP/bin"
build_fixture gcc -O2 gdb/spin.c "$TMP/bin/spin" || fail_all "gcc builds spin.c"
BODY=$(grep -n '@spin-body' "$FIXTURES/gdb/spin.c" | cut -d: -f1)
report() { # FILE RC
	while IFS= read -r line; do
		case $line in
		"ok - "*) pass "${line#ok - }" ;;
		"not ok - "*) fail "${line#not ok - }" ;;
		*) echo "$line" ;;
		esac
	done <"$1"
	ok "$2" "the sessions ran to their end"
}
python3 "$FIXTURES/gdb/attach.py" "$GDB" "$GDBEXT" "$TMP/bin/spin" "$BODY" 10 >"$TMP/same" 2>&1
report "$TMP/same" $?
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 &&
   unshare -m --propagation private sh -c 'mount -t tmpfs none "$0"' "$TMP/bin" 2>/dev/null; then
	python3 "$FIXTURES/gdb/attach.py" "$GDB" "$GDBEXT" "$TMP/bin/spin" "$BODY" 10 --unshare >"$TMP/other" 2>&1
	report "$TMP/other" $?
else
	skip "another mount namespace: needs root and unshare -m (mount namespaces not allowed here)"
fi
done_testing
