#!/bin/sh
# tests/lib-abi.sh - a program built and linked against release 0.1.0's
# libloopscope runs on this one (loopscope.h, "ABI rules").
#
# 0.1's ls_options had no size field; 0.2 put one first and added fields,
# which an old program's struct does not have.  The program here is built
# against the 0.1 header (tests/fixtures/lib/loopscope-0.1/loopscope.h, a
# copy of it as released) and linked against a stand-in for the 0.1
# library (each function of the 0.1 map, empty, under its soname and
# version node: what the linker records is the same), then run on the
# library of this tree.  It must bind to LOOPSCOPE_0.1's functions, and
# every option it sets must arrive: its chains equal `loopscope lookup
# --json`'s byte for byte, its cache entry lands in its cache directory, no
# loops with want_loops 0, warnings go to its sink.  A program built now
# (0.2) binds to LOOPSCOPE_0.2, and ls_version() is configure's version.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

LIBDIR="$top_builddir/.libs"
[ -f "$LIBDIR/libloopscope.so" ] || skip_all "no $LIBDIR/libloopscope.so (shared library not built)"
command -v cc >/dev/null || skip_all "no C compiler"
OLD="$FIXTURES/lib/loopscope-0.1"

# 1. The 0.1 library as a linker sees it: its soname, its version node, its
# functions (empty: never run).
mkdir -p "$TMP/v01"
sed -n 's/^[[:space:]]*\(ls_[a-z0-9_]*\);$/\1/p' "$OLD/loopscope.map" >"$TMP/v01/names"
sed 's/.*/void &(void) {}/' "$TMP/v01/names" >"$TMP/v01/stub.c"
if cc -shared -fPIC -o "$TMP/v01/libloopscope.so" "$TMP/v01/stub.c" -Wl,-soname,libloopscope.so.0 \
	-Wl,--version-script="$OLD/loopscope.map" 2>"$TMP/cc.err"; then
	pass "a stand-in for the 0.1 library ($(wc -l <"$TMP/v01/names") functions, node LOOPSCOPE_0.1)"
else
	fail "a stand-in for the 0.1 library"; sed 's/^/# /' "$TMP/cc.err"; done_testing
fi

# 2. The old program: 0.1's header, linked against 0.1.
if cc -o "$TMP/abi01" -I"$OLD" "$FIXTURES/lib/abi01.c" -L"$TMP/v01" -lloopscope 2>"$TMP/cc.err"; then
	pass "the program builds against 0.1's header and library"
else
	fail "the program builds against 0.1's header and library"; sed 's/^/# /' "$TMP/cc.err"; done_testing
fi
refs=$(readelf --dyn-syms -W "$TMP/abi01" | grep -o 'ls_[a-z_]*@LOOPSCOPE_[0-9.]*' | sort -u | tr '\n' ' ')
case "$refs" in
*ls_module_open@LOOPSCOPE_0.1*ls_options_init@LOOPSCOPE_0.1*) pass "it binds to LOOPSCOPE_0.1: $refs" ;;
*) fail "it binds to LOOPSCOPE_0.1"; diag "$refs" ;;
esac

# 3. Run on this tree's library.
build_fixture gcc -O2 loops.c "$TMP/loops" || { fail "gcc -O2 loops.c"; done_testing; }
LD_LIBRARY_PATH="$LIBDIR" "$TMP/abi01" "$TMP/loops" main 3 "$TMP/c1" loops >"$TMP/out" 2>"$TMP/err"
ok $? "it runs on the new library (exit 0)"
[ ! -s "$TMP/err" ]; ok $? "nothing on stderr"
grep '^{' "$TMP/out" >"$TMP/lib"
addrs=$(sed -n 's/^{"addr":"\([^"]*\)".*/\1/p' "$TMP/lib")
"$LOOPSCOPE" lookup --no-cache --json "$TMP/loops" $addrs >"$TMP/cli" 2>/dev/null
n=$(wc -l <"$TMP/lib")
[ "$n" -gt 10 ] && cmp -s "$TMP/lib" "$TMP/cli" && grep -q '"kind":"loop"' "$TMP/lib"
ok $? "its $n chains equal loopscope lookup --json's, byte for byte, loops included"
id=$(readelf -n "$TMP/loops" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -f "$TMP/c1/$id.lsc" ]; ok $? "its cache_dir arrived: the entry is $TMP/c1/$id.lsc"
check_eq "$(grep '^entry' "$TMP/out")" "entry $id" "ls_cache_list (0.1) lists it in the same directory"

LD_LIBRARY_PATH="$LIBDIR" "$TMP/abi01" "$TMP/loops" main 3 "$TMP/c2" noloops >"$TMP/out2" 2>"$TMP/err2"
rc=$?
[ $rc -eq 0 ] && ! grep -q '"kind":"loop"' "$TMP/out2" && [ -f "$TMP/c2/$id-noloops.lsc" ]
ok $? "want_loops 0 arrived: no loops, a -noloops entry (exit $rc)"

strip --strip-debug -o "$TMP/stripped" "$TMP/loops"
LD_LIBRARY_PATH="$LIBDIR" "$TMP/abi01" "$TMP/stripped" main 3 "$TMP/c3" loops >"$TMP/out3" 2>"$TMP/err3"
rc=$?
w=$(sed -n 's/^warnings //p' "$TMP/out3")
[ $rc -eq 0 ] && [ "${w:-0}" -ge 1 ] && [ ! -s "$TMP/err3" ]
ok $? "warn and warn_ctx arrived: $w warning(s) in its sink, none on stderr"

# 4. A program built now binds to LOOPSCOPE_0.2 and reads the version.
cat >"$TMP/v02.c" <<'EOF'
#include <loopscope.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	ls_options opt;
	ls_options_init(&opt);
	opt.read_sources = 0;
	ls_error err;
	ls_module *m = ls_module_open(argv[1], &opt, &err);
	printf("%s %s %d\n", LS_VERSION, ls_version(), m != NULL);
	ls_module_close(m);
	return 0;
}
EOF
if cc -o "$TMP/v02" -I"$top_srcdir/libloopscope" -I"$top_builddir/libloopscope" "$TMP/v02.c" \
	-L"$LIBDIR" -lloopscope 2>"$TMP/cc.err"; then
	refs=$(readelf --dyn-syms -W "$TMP/v02" | grep -o 'ls_[a-z_]*@LOOPSCOPE_[0-9.]*' | sort -u | tr '\n' ' ')
	case "$refs" in
	*ls_module_open@LOOPSCOPE_0.2*ls_options_init_sized@LOOPSCOPE_0.2*) pass "a program built now binds to LOOPSCOPE_0.2: $refs" ;;
	*) fail "a program built now binds to LOOPSCOPE_0.2"; diag "$refs" ;;
	esac
	version=$(sed -n 's/^AC_INIT(\[loopscope\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")
	check_eq "$(LD_LIBRARY_PATH="$LIBDIR" "$TMP/v02" "$TMP/loops")" "$version $version 1" \
		"LS_VERSION and ls_version() are configure.ac's $version"
else
	fail "a program builds against this header"; sed 's/^/# /' "$TMP/cc.err"
fi
done_testing
