#!/bin/sh
# gdb-install.sh - the installed GDB extension loads through its auto-load
# drop-in: `make install` into a staging directory (DESTDIR) with the
# system-gdbinit switch's variable set, then a GDB that reads only that
# drop-in (its path moved into the staging directory) must have the commands,
# loaded from the installed copy, not from the build tree.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
[ -f "$top_builddir/Makefile" ] || skip_all "no Makefile in $top_builddir"
dest="$TMP/dest"
${MAKE:-make} -s -C "$top_builddir" install DESTDIR="$dest" gdb_system_gdbinit_dir=/etc/gdb/gdbinit.d \
	>"$TMP/install.log" 2>&1
ok_show $? "make install DESTDIR=... gdb_system_gdbinit_dir=/etc/gdb/gdbinit.d" "$TMP/install.log"

dropin="$dest/etc/gdb/gdbinit.d/loopscope.gdb"
[ -f "$dropin" ]
ok $? "the drop-in is installed in the system gdbinit directory"
script=$(sed -n 's/^source //p' "$dropin")
[ "$(grep -vc '^#' "$dropin")" = 1 ] && [ -f "$dest$script" ] && [ -f "$(dirname "$dest$script")/_loopscope.so" ]
ok $? "the drop-in is one line, sourcing the installed script beside the installed module ($script)"
case $script in */lib/loopscope/gdb/loopscope.py|*/lib*/loopscope/gdb/loopscope.py) r=0 ;; *) r=1 ;; esac
ok $r "the extension is installed under \$libdir/loopscope/gdb"
[ -n "$(find "$dest" -path '*/man1/loopscope-gdb.1')" ]
ok $? "the man page loopscope-gdb(1) is installed"

lib=$(dirname "$(find "$dest" -name 'libloopscope.so.0' | head -n 1)")
sed "s|^source |source $dest|" "$dropin" >"$TMP/dropin.gdb"
bin="$TMP/loops"
build_fixture gcc -O2 gdb/loops.c "$bin" || fail "build the fixture"
out=$(env -u LOOPSCOPE_GDB_LIBDIR LD_LIBRARY_PATH="$lib" "$GDB" -nx -batch -x "$TMP/dropin.gdb" \
	-ex 'python import loopscope_gdb, _loopscope; print("from=" + loopscope_gdb.__file__); print("so=" + _loopscope.__file__)' \
	-ex 'structure main' -ex 'help loop-next' "$bin" 2>&1)
echo "$out" | grep -q "^from=$dest/.*/loopscope/gdb/loopscope_gdb.py"
ok $? "GDB loaded the Python part from the installed copy"
echo "$out" | grep -q "^so=$dest/.*/loopscope/gdb/_loopscope.so"
ok $? "... and the C module from the installed copy"
echo "$out" | grep -q '^  proc    main  at loops.c:'
ok $? "structure works in the GDB started with the drop-in"
echo "$out" | grep -q '^Usage: loop-next'
ok $? "... and the other commands are there (help loop-next)"
[ -z "$(echo "$out" | grep -i 'traceback\|error')" ]
ok $? "no error while loading"
done_testing
