#!/bin/sh
# tests/lib-install.sh - libloopscope as a program outside the tree sees it:
# the exported symbols are exactly loopscope.h's functions, in the version
# nodes of loopscope.map, LOOPSCOPE_0.1 being release 0.1.0's as it was
# (tests/fixtures/lib/loopscope-0.1/loopscope.map); the library, its header and loopscope.pc install
# (into a scratch DESTDIR); a program built with
# `pkg-config --cflags --libs loopscope` against that copy runs lookups that
# agree with `loopscope lookup --json`.
. "$top_srcdir/tests/lib.sh"

SO="$top_builddir/.libs/libloopscope.so"
[ -f "$SO" ] || skip_all "no $SO (shared library not built)"
command -v nm >/dev/null || skip_all "nm not found"
command -v pkg-config >/dev/null || skip_all "pkg-config not found"

# 1. The export list: the functions declared in loopscope.h (comments
# stripped; its static inline wrappers are the caller's), and those of
# release 0.1.0's, against nm -D's defined symbols.
python3 - "$top_srcdir/libloopscope/loopscope.h" "$FIXTURES/lib/loopscope-0.1/loopscope.map" >"$TMP/api" <<'PY'
import re, sys
src = re.sub(r"/\*.*?\*/|//[^\n]*", "", open(sys.argv[1]).read(), flags=re.S)
inline = set(re.findall(r"static\s+inline\s+[\w\s\*]*?\b(ls_[a-z0-9_]+)\s*\(", src))
names = set(re.findall(r"\b(ls_[a-z0-9_]+)\s*\(", src)) - inline
names |= set(re.findall(r"^\s*(ls_[a-z0-9_]+);", open(sys.argv[2]).read(), flags=re.M))
print("\n".join(sorted(names)))
PY
nm -D --defined-only "$SO" >"$TMP/nm"
awk '$2 == "T" { print $3 }' "$TMP/nm" | sed 's/@.*//' | sort -u >"$TMP/exported"
if diff "$TMP/api" "$TMP/exported" >"$TMP/diff"; then
	pass "nm -D exports exactly loopscope.h's and 0.1.0's $(wc -l <"$TMP/api") functions"
else
	fail "nm -D exports exactly loopscope.h's and 0.1.0's functions"; sed 's/^/# /' "$TMP/diff"
fi
other=$(awk '$2 != "T" && !($2 == "A" && $3 ~ /^LOOPSCOPE_/)' "$TMP/nm")
check_eq "$other" "" "no other defined dynamic symbol (data, weak, unversioned)"
unversioned=$(awk '$2 == "T" && $3 !~ /@@?LOOPSCOPE_0\.[12]$/' "$TMP/nm")
check_eq "$unversioned" "" "every exported function is in version node LOOPSCOPE_0.1 or LOOPSCOPE_0.2"
# 0.1 is released: what it exports never changes (0.2 adds beside it).
sed -n 's/^[[:space:]]*\(ls_[a-z0-9_]*\);$/\1/p' "$FIXTURES/lib/loopscope-0.1/loopscope.map" | sort >"$TMP/v01"
awk '$2 == "T" && $3 ~ /@@?LOOPSCOPE_0\.1$/ { print $3 }' "$TMP/nm" | sed 's/@.*//' | sort >"$TMP/exported01"
if diff "$TMP/v01" "$TMP/exported01" >"$TMP/diff"; then
	pass "LOOPSCOPE_0.1 exports release 0.1.0's $(wc -l <"$TMP/v01") functions, no more, no fewer"
else
	fail "LOOPSCOPE_0.1 exports release 0.1.0's functions"; sed 's/^/# /' "$TMP/diff"
fi

# 2. Install the library, the header and the .pc file into a scratch root.
ROOT="$TMP/root"
if make -s -C "$top_builddir" DESTDIR="$ROOT" install-libLTLIBRARIES install-includeHEADERS install-nodist_includeHEADERS \
	install-pkgconfigDATA >"$TMP/install.log" 2>&1; then
	pass "make install (library, header, loopscope.pc) into a DESTDIR"
else
	fail "make install into a DESTDIR"; sed 's/^/# /' "$TMP/install.log"; done_testing
fi
pc=$(find "$ROOT" -name loopscope.pc | head -n 1)
[ -n "$pc" ]; ok $? "loopscope.pc installed"
[ -n "$pc" ] || done_testing
export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$ROOT"
flags=$(pkg-config --cflags --libs loopscope 2>"$TMP/pc.err")
ok $? "pkg-config --cflags --libs loopscope: $flags"

# 3. A program outside the tree, built from the installed copy only.
mkdir -p "$TMP/user"
cp "$FIXTURES/lib/lookup.c" "$TMP/user/"
# shellcheck disable=SC2086 # flags are words
if (cd "$TMP/user" && cc -o lookup lookup.c $flags) 2>"$TMP/cc.err"; then
	pass "an outside program builds with pkg-config's flags"
else
	fail "an outside program builds with pkg-config's flags"; sed 's/^/# /' "$TMP/cc.err"; done_testing
fi
libdir=$(pkg-config --variable=libdir loopscope) # with the sysroot in front
needed=$(LD_LIBRARY_PATH="$libdir" ldd "$TMP/user/lookup" | awk '/libloopscope/ { print $3 }')
check_eq "$needed" "$libdir/libloopscope.so.0" "it runs against the installed copy"

build_fixture gcc -O2 loops.c "$TMP/loops" || { fail "gcc -O2 loops.c"; done_testing; }
LD_LIBRARY_PATH="$libdir" "$TMP/user/lookup" "$TMP/loops" main 3 >"$TMP/out" 2>"$TMP/err"
ok $? "lookup ran (exit 0)"
check_eq "$(head -n 1 "$TMP/out")" "proc main" "main's entry is in proc main"
# The CLI (the build tree's library) at the same addresses, as the oracle.
addrs=$(tail -n +2 "$TMP/out" | sed -n 's/^{"addr":"\([^"]*\)".*/\1/p')
"$LOOPSCOPE" lookup --json "$TMP/loops" $addrs >"$TMP/cli" 2>/dev/null
tail -n +2 "$TMP/out" >"$TMP/lib"
n=$(wc -l <"$TMP/lib")
[ "$n" -gt 10 ] && cmp -s "$TMP/lib" "$TMP/cli"
ok $? "its $n chains equal loopscope lookup --json's, byte for byte"
done_testing
