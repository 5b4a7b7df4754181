#!/bin/sh
# tests/core-cache-key.sh - every input that changes the analysis is in the
# cache's key: changed, it turns a hit into a miss, -v says which, and the
# output is then --no-cache's (the cache can only miss, never lie).
#
# The inputs: the source files the loop lines read (and those they looked
# for and did not find: a source that appears later must be a miss -- a
# binary analyzed while its source was missing kept the worse loop lines
# after it came back), the options LOOPSCOPE_NO_SOURCE, LOOPSCOPE_SOURCE_PATH
# and want_loops, the debug file (another one, changed, gone), the binary
# (core-cache.sh has more), and the build of libloopscope itself.  Each
# case also checks that the run after the miss is a hit again.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
[ -x "$LOOPSCOPE" ] || skip_all "$LOOPSCOPE not built"
command -v clang >/dev/null || skip_all "clang not installed (its loops without line rows need the sources)"
command -v objcopy >/dev/null || skip_all "objcopy not installed"
unset LOOPSCOPE_NO_SOURCE LOOPSCOPE_SOURCE_PATH LOOPSCOPE_NO_CACHE LOOPSCOPE_DEBUG_DIR

SRC="$TMP/src"
mkdir -p "$SRC"
cp "$FIXTURES/loop_lines.c" "$SRC/"
(cd "$SRC" && clang -O2 -g -o "$TMP/ll" loop_lines.c) || fail_all "clang -O2 builds loop_lines.c"

# case LABEL REGEX [VAR=VALUE...] -- [OPTIONS...]: struct -v of BIN ($TMP/ll
# unless set) with the cache, in that environment: a miss saying REGEX
# (or "" for a hit), the output --no-cache's; then a hit.
BIN="$TMP/ll"
case_run() {
	_label=$1 _why=$2
	shift 2
	_env=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do _env="$_env $1"; shift; done
	[ $# -gt 0 ] && shift
	# shellcheck disable=SC2086 # the environment's words
	env $_env "$LOOPSCOPE" struct -v --format=json "$@" "$BIN" >"$TMP/out" 2>"$TMP/err"
	env $_env "$LOOPSCOPE" struct --no-cache --format=json "$@" "$BIN" >"$TMP/ref" 2>/dev/null
	if [ -z "$_why" ]; then
		! grep -q "cache miss" "$TMP/err"; ok $? "$_label: a hit"
	else
		grep -q "cache miss: .*$_why" "$TMP/err"; ok $? "$_label: a miss, -v saying \"$_why\""
	fi
	grep "cache miss" "$TMP/err" | sed 's/.*\.lsc: /#   -v: /'
	[ -s "$TMP/ref" ] && cmp -s "$TMP/out" "$TMP/ref"; ok $? "$_label: the output is --no-cache's"
	env $_env "$LOOPSCOPE" struct -v --format=json "$@" "$BIN" >/dev/null 2>"$TMP/err"
	if [ -n "$_why" ]; then
		! grep -q "cache miss" "$TMP/err"; ok $? "$_label: the next run is a hit"
	fi
}
loop_lines() { grep -o '"kind":"loop","file":"[^"]*","line":[0-9null]*' "$1"; }

# ---- source files ----------------------------------------------------------------
mv "$SRC/loop_lines.c" "$TMP/aside.c"
case_run "the source missing (stored)" "no entry yet"
cp "$TMP/out" "$TMP/without-source.json"
mv "$TMP/aside.c" "$SRC/loop_lines.c"
case_run "the source back" "source file $SRC/loop_lines.c appeared since it was made"
n=$(loop_lines "$TMP/without-source.json" | diff - "$(loop_lines "$TMP/out" >"$TMP/l2"; echo "$TMP/l2")" | grep -c '^>')
[ "$n" -ge 1 ]; ok $? "with the source, $n loops have other lines than without it (what a stale hit kept)"
case_run "unchanged" ""
echo "/* a comment: the file is longer */" >>"$SRC/loop_lines.c"
case_run "the source edited" "source file $SRC/loop_lines.c changed"
touch -d '2001-02-03' "$SRC/loop_lines.c"
case_run "the source touched (mtime)" "source file $SRC/loop_lines.c changed"
mv "$SRC/loop_lines.c" "$TMP/aside.c"
case_run "the source gone" "source file $SRC/loop_lines.c is gone"

# LOOPSCOPE_SOURCE_PATH: where it is looked for when DWARF's path fails
mkdir -p "$TMP/alt"
case_run "LOOPSCOPE_SOURCE_PATH set" "made with another source path" LOOPSCOPE_SOURCE_PATH="$TMP/alt"
mv "$TMP/aside.c" "$TMP/alt/loop_lines.c"
case_run "the source appears under LOOPSCOPE_SOURCE_PATH" "source file $TMP/alt/loop_lines.c appeared" \
	LOOPSCOPE_SOURCE_PATH="$TMP/alt"
case_run "LOOPSCOPE_SOURCE_PATH unset" "made with another source path"
mv "$TMP/alt/loop_lines.c" "$SRC/loop_lines.c"
case_run "the source back at DWARF's path" "source file $SRC/loop_lines.c appeared"

# ---- options ---------------------------------------------------------------------
case_run "LOOPSCOPE_NO_SOURCE=1" "made reading the source files, which are not read now" LOOPSCOPE_NO_SOURCE=1
case_run "LOOPSCOPE_NO_SOURCE unset" "made without reading the source files"
# want_loops has no CLI option: an API client asks for a tree without loops
cat >"$TMP/client.c" <<'EOF'
#include <loopscope.h>
#include <stdio.h>
#include <stdlib.h>
/* client BINARY LOOPS CACHE: struct JSON, the cache on or off, -v's notes on stderr */
int main(int argc, char **argv)
{
	ls_options opt;
	ls_options_init(&opt);
	opt.want_loops = atoi(argv[2]);
	opt.use_cache = atoi(argv[3]);
	opt.verbose = 1;
	ls_error err;
	ls_module *m = ls_module_open(argv[1], &opt, &err);
	if (!m || ls_write_structure(m, LS_FORMAT_JSON, stdout, &err) < 0) {
		fprintf(stderr, "client: %s\n", err.message);
		return 1;
	}
	ls_module_close(m);
	return 0;
}
EOF
if cc -o "$TMP/client" -I"$top_srcdir/libloopscope" -I"$top_builddir/libloopscope" "$TMP/client.c" \
	-L"$top_builddir/.libs" -lloopscope 2>"$TMP/cc.err"; then
	export LD_LIBRARY_PATH="$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	"$TMP/client" "$BIN" 0 1 >"$TMP/out" 2>"$TMP/err"
	"$TMP/client" "$BIN" 0 0 >"$TMP/ref" 2>/dev/null
	grep -q "cache miss: .*-noloops.lsc: no entry yet" "$TMP/err" && cmp -s "$TMP/out" "$TMP/ref" &&
		! grep -q '"kind":"loop"' "$TMP/out"
	ok $? "want_loops 0: not the tree with loops (an entry of its own), the output without cache's"
	"$TMP/client" "$BIN" 1 1 >"$TMP/out" 2>"$TMP/err"
	! grep -q "cache miss" "$TMP/err" && grep -q '"kind":"loop"' "$TMP/out"
	ok $? "want_loops 1 again: the tree with loops, a hit"
else
	fail "an API client builds"; sed 's/^/# /' "$TMP/cc.err"
fi

# ---- the debug file -------------------------------------------------------------
id=$(readelf -n "$TMP/ll" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
d=$(echo "$id" | cut -c1-2) f=$(echo "$id" | cut -c3-)
objcopy --only-keep-debug "$TMP/ll" "$TMP/ll.debug"
strip -g -o "$TMP/stripped" "$TMP/ll"
mkdir -p "$TMP/d1/.build-id/$d" "$TMP/d2/.build-id/$d"
cp "$TMP/ll.debug" "$TMP/d1/.build-id/$d/$f.debug"
cp "$TMP/ll.debug" "$TMP/d2/.build-id/$d/$f.debug"
BIN="$TMP/stripped"
# (the entry under this build-id is the unstripped binary's)
case_run "the stripped binary, its debug file separate" "the binary is not the file it was made from" \
	-- --debug-dir "$TMP/d1"
grep -q '"kind":"inline"\|"kind":"loop","file":"/' "$TMP/out"; ok $? "... its DWARF was read"
touch -d '2001-02-03' "$TMP/d1/.build-id/$d/$f.debug"
case_run "the debug file touched" "its debug file $TMP/d1/.build-id/$d/$f.debug changed" -- --debug-dir "$TMP/d1"
case_run "another debug file (--debug-dir)" "made with another debug file ($TMP/d1/" -- --debug-dir "$TMP/d2"
rm -r "$TMP/d2"
case_run "the debug file gone" "made with debug information, which is not there now" -- --debug-dir "$TMP/d2"

# ---- the binary ------------------------------------------------------------------
BIN="$TMP/ll"
"$LOOPSCOPE" struct "$BIN" >/dev/null 2>&1 # stored (the entry was the stripped one's)
touch -d '2001-02-03' "$TMP/ll"
case_run "the binary touched" "the binary is not the file it was made from"

# ---- the build of libloopscope ----------------------------------------------------
# Another build: the same library with another build-id note (what a
# rebuild changes), under the loopscope binary behind the libtool wrapper.
REAL="$(dirname "$LOOPSCOPE")/.libs/$(basename "$LOOPSCOPE")"
SO=$(ls "$top_builddir"/.libs/libloopscope.so.0.* 2>/dev/null | head -n 1)
if [ -x "$REAL" ] && [ -f "$SO" ]; then
	mkdir -p "$TMP/lib2"
	cp "$SO" "$TMP/lib2/libloopscope.so.0"
	python3 - "$TMP/lib2/libloopscope.so.0" <<'PY'
import re, subprocess, sys
out = subprocess.run(["readelf", "-SW", sys.argv[1]], stdout=subprocess.PIPE, universal_newlines=True).stdout
off = int(re.search(r"\.note\.gnu\.build-id\s+NOTE\s+[0-9a-f]+\s+([0-9a-f]+)", out).group(1), 16)
with open(sys.argv[1], "r+b") as f:
    f.seek(off + 16)  # the note's header (12 bytes) and "GNU\0": its first byte
    b = f.read(1)
    f.seek(off + 16)
    f.write(bytes([b[0] ^ 0xff]))
PY
	"$LOOPSCOPE" struct "$BIN" >/dev/null 2>&1 # stored by this build
	LD_LIBRARY_PATH="$TMP/lib2" "$REAL" struct -v --format=json "$BIN" >"$TMP/out" 2>"$TMP/err"
	LD_LIBRARY_PATH="$TMP/lib2" "$REAL" struct --no-cache --format=json "$BIN" >"$TMP/ref" 2>/dev/null
	grep -q "cache miss: .*made by another build of libloopscope" "$TMP/err" && cmp -s "$TMP/out" "$TMP/ref"
	ok $? "another build of libloopscope: a miss, -v saying so, the output --no-cache's"
	LD_LIBRARY_PATH="$TMP/lib2" "$REAL" struct -v "$BIN" >/dev/null 2>"$TMP/err"
	! grep -q "cache miss" "$TMP/err"; ok $? "... then a hit for that build"
else
	skip "another build of libloopscope: not a libtool build tree ($REAL, $SO)"
fi
done_testing
