#!/bin/sh
# tests/lib-debuginfo.sh - the one search for debug files
# (ls_find_debug_file: decode's and perf loops' vmlinux and .ko, a
# build-id's debug file) and debuginfod, on a debug tree made here:
#
#   - by build-id under the debug directory; a release's vmlinux under
#     DEBUGDIR/boot, a module's .ko under --modules and under
#     DEBUGDIR/lib/modules/R, '-' and '_' alike;
#   - with a build-id, a file of another build-id is passed over for one
#     that has it, and given (flagged) only when none has;
#   - debuginfod (a local server speaking its protocol): the stripped
#     binary's DWARF comes from it for `loopscope struct` (the same
#     structure as from the debug directory), and for the search; without
#     DEBUGINFOD_URLS neither libdebuginfod nor libcurl is loaded.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
INFO="$top_builddir/tests/file-info"
[ -x "$INFO" ] || skip_all "$INFO not built"
command -v objcopy >/dev/null || skip_all "objcopy not installed"
unset DEBUGINFOD_URLS

id_of() { readelf -n "$1" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p'; }
build_fixture gcc -O2 loops.c "$TMP/loops" || { fail "gcc -O2 loops.c"; done_testing; }
build_fixture gcc -O2 recursion.c "$TMP/other" || { fail "gcc -O2 recursion.c"; done_testing; }
build_fixture gcc -O2 inline_deep.c "$TMP/mod0.o" -c || { fail "gcc -c inline_deep.c"; done_testing; }
ld -r --build-id=sha1 -o "$TMP/mod.o" "$TMP/mod0.o" # as a module is linked
id=$(id_of "$TMP/loops")
other=$(id_of "$TMP/other")
D="$TMP/dbg"
R=9.9.9-loopscope-test
objcopy --only-keep-debug "$TMP/loops" "$TMP/loops.debug"
strip -g -o "$TMP/stripped" "$TMP/loops"
mkdir -p "$D/.build-id/$(echo "$id" | cut -c1-2)"
cp "$TMP/loops.debug" "$D/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"

# find KIND ID|- RELEASE|- [MODULE [DIRS]]: what the search gives, or its error
find() { "$INFO" "$D" find-debug "$@" 2>&1; }

check_eq "$(find build-id "$id" -)" "$D/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug" \
	"a build-id's debug file: DEBUGDIR/.build-id/xx/yyyy.debug"
case "$(find build-id "$other" -)" in
*"build-id $other: no debug file found (DEBUGINFOD_URLS is not set)"*) pass "a build-id without one: LS_ERR_NOT_FOUND saying so" ;;
*) fail "a build-id without one: not found"; diag "$(find build-id "$other" -)" ;;
esac

# vmlinux of release R: DEBUGDIR/boot/vmlinux-R; one of another build-id
# is taken only when nothing else is there, and flagged.
mkdir -p "$D/boot" "$D/lib/modules/$R"
cp "$TMP/other" "$D/boot/vmlinux-$R"
check_eq "$(find vmlinux - "$R")" "$D/boot/vmlinux-$R" "vmlinux of R without a build-id: DEBUGDIR/boot/vmlinux-R"
check_eq "$(find vmlinux "$other" "$R")" "$D/boot/vmlinux-$R" "... with its build-id"
check_eq "$(find vmlinux "$id" "$R")" "$D/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug" \
	"... with another build-id: the file that has it (by build-id) wins"
mv "$D/.build-id" "$TMP/build-id.aside"
cp "$TMP/loops" "$D/lib/modules/$R/vmlinux"
check_eq "$(find vmlinux "$id" "$R")" "$D/lib/modules/$R/vmlinux" \
	"... the next candidate by name that has it (DEBUGDIR/lib/modules/R/vmlinux)"
rm "$D/lib/modules/$R/vmlinux"
check_eq "$(find vmlinux "$id" "$R")" "$D/boot/vmlinux-$R differs" "... none has it: the file by name, flagged"
mv "$TMP/build-id.aside" "$D/.build-id"
case "$(find vmlinux - 0.0.0-none)" in
*"vmlinux 0.0.0-none: no debug file found"*) pass "vmlinux of a release not installed: not found" ;;
*) fail "vmlinux of a release not installed: not found" ;;
esac

# A module: NAME.ko under --modules (first), or DEBUGDIR/lib/modules/R.
mid=$(id_of "$TMP/mod.o")
mkdir -p "$TMP/mods/a/b" "$D/lib/modules/$R/kernel/fs"
cp "$TMP/mod.o" "$TMP/mods/a/b/nf-con_track.ko"
cp "$TMP/mod.o" "$D/lib/modules/$R/kernel/fs/nf_con-track.ko"
check_eq "$(find module - "$R" nf_con_track "$TMP/nothing:$TMP/mods")" "$TMP/mods/a/b/nf-con_track.ko" \
	"a module: NAME.ko anywhere under --modules, '-' and '_' alike"
check_eq "$(find module - "$R" nf-con-track)" "$D/lib/modules/$R/kernel/fs/nf_con-track.ko" \
	"a module: NAME.ko under DEBUGDIR/lib/modules/R"
if [ -n "$mid" ]; then
	cp "$TMP/other" "$TMP/mods/a/b/nf-con_track.ko"
	check_eq "$(find module "$mid" "$R" nf_con_track "$TMP/mods")" "$D/lib/modules/$R/kernel/fs/nf_con-track.ko" \
		"a module with a build-id: --modules' .ko of another build passed over"
else
	skip "the .o has no build-id"
fi

# debuginfod: a server of the protocol (GET /buildid/ID/debuginfo) on a free port.
if ! python3 -c 'import ctypes; ctypes.CDLL("libdebuginfod.so.1")' 2>/dev/null; then
	skip_rest="libdebuginfod.so.1 not installed"
else
	skip_rest=
	mkdir -p "$TMP/srv/buildid/$id" "$TMP/srv/buildid/$mid"
	cp "$TMP/loops.debug" "$TMP/srv/buildid/$id/debuginfo"
	cp "$TMP/mod.o" "$TMP/srv/buildid/$mid/debuginfo"
	python3 - "$TMP/srv" "$TMP/port" <<'PY' &
import http.server, os, sys
os.chdir(sys.argv[1])
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
open(sys.argv[2] + ".tmp", "w").write(str(s.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
s.serve_forever()
PY
	server=$!
	trap 'kill $server 2>/dev/null; rm -rf "$TMP"' EXIT
	i=0
	while [ ! -s "$TMP/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -s "$TMP/port" ] || skip_rest="the local debuginfod server did not start"
fi
if [ -n "$skip_rest" ]; then
	skip "debuginfod: $skip_rest"
	done_testing
fi
export DEBUGINFOD_URLS="http://127.0.0.1:$(cat "$TMP/port")" DEBUGINFOD_CACHE_PATH="$TMP/dcache"
empty="$TMP/empty"
mkdir -p "$empty"
got=$("$INFO" "$empty" find-debug build-id "$id" - 2>&1)
case "$got" in
"$TMP/dcache/"*" debuginfod") cmp -s "${got% debuginfod}" "$TMP/loops.debug"
	ok $? "a build-id's debug file from debuginfod, into its cache" ;;
*) fail "a build-id's debug file from debuginfod"; diag "$got" ;;
esac
"$LOOPSCOPE" struct --no-cache --debug-dir "$D" "$TMP/stripped" >"$TMP/want" 2>/dev/null
"$LOOPSCOPE" struct --no-cache --debug-dir "$empty" "$TMP/stripped" >"$TMP/got" 2>"$TMP/err"
grep -q "loop" "$TMP/want" && cmp -s "$TMP/want" "$TMP/got"
ok $? "loopscope struct of a stripped binary: its DWARF from debuginfod, the structure as from DEBUGDIR"
grep -q "no DWARF" "$TMP/err" && diag "$(cat "$TMP/err")"
# decode: a [module BUILDID] frame whose .ko is nowhere here
printf '[    1.000000]  two_sites+0x4/0x20 [mymod %s]\n' "$mid" |
	"$LOOPSCOPE" decode --no-cache -r "$R" --debug-dir "$empty" >"$TMP/decoded" 2>"$TMP/err"
grep -q "# .* at .*inline_deep.c:[0-9]" "$TMP/decoded"
ok $? "decode: a module frame's .ko by its build-id from debuginfod"
grep -q "#" "$TMP/decoded" || diag "$(cat "$TMP/decoded" "$TMP/err")"
# decode: a log of a release not here names no build-id for vmlinux; the
# message says how to give debuginfod one, and with it the server is asked
printf '[    1.000000] CPU: 0 PID: 1 Comm: sh Not tainted 0.0.0-none #1\n[    1.000000]  f+0x4/0x20\n' >"$TMP/vlog"
"$LOOPSCOPE" decode --no-cache --debug-dir "$empty" <"$TMP/vlog" >/dev/null 2>"$TMP/err"
grep -q "no build-id to ask debuginfod for); give --vmlinux FILE or -r RELEASE, or --build-id ID for debuginfod (readelf -n /sys/kernel/notes" "$TMP/err"
ok $? "decode, vmlinux of a release not here and no build-id: the message names --build-id for debuginfod"
grep -q "build-id ID for debuginfod" "$TMP/err" || diag "$(cat "$TMP/err")"
"$LOOPSCOPE" decode --no-cache --debug-dir "$empty" --build-id 0123456789abcdef0123456789abcdef01234567 \
	<"$TMP/vlog" >/dev/null 2>"$TMP/err"
grep -q "no server has build-id 0123456789abcdef" "$TMP/err" && ! grep -q "build-id ID for debuginfod" "$TMP/err"
ok $? "... with --build-id, the server is asked for it (no server has it)"
grep -q "no server has" "$TMP/err" || diag "$(cat "$TMP/err")"
LD_DEBUG=libs "$LOOPSCOPE" struct --no-cache --debug-dir "$empty" "$TMP/stripped" 2>&1 >/dev/null |
	grep -q "calling init: .*libcurl"
ok $? "with DEBUGINFOD_URLS, libcurl is loaded"
# why nothing came: a server that answers "no such build-id", one that cannot be reached
got=$("$INFO" "$empty" find-debug build-id 0123456789abcdef0123456789abcdef01234567 - 2>&1)
case "$got" in
*"no server has build-id 0123456789abcdef"*) pass "debuginfod: a build-id no server has is said so" ;;
*) fail "debuginfod: a build-id no server has is said so"; diag "$got" ;;
esac
DEBUGINFOD_URLS="http://127.0.0.1:1" DEBUGINFOD_CACHE_PATH="$TMP/dcache2" \
	"$INFO" "$empty" find-debug build-id "$id" - >"$TMP/got" 2>&1
grep -q "server unreachable (http://127.0.0.1:1: Connection refused)" "$TMP/got"
ok $? "debuginfod: a server that is down is 'unreachable', not 'not found'"
grep -q "unreachable" "$TMP/got" || diag "$(cat "$TMP/got")"
DEBUGINFOD_URLS="http://127.0.0.1:1" DEBUGINFOD_CACHE_PATH="$TMP/dcache3" \
	"$LOOPSCOPE" struct --no-cache --debug-dir "$empty" "$TMP/stripped" >/dev/null 2>"$TMP/err"
grep -q "no DWARF debug information; debuginfod: server unreachable" "$TMP/err"
ok $? "struct of a stripped binary, the server down: the warning says the server is unreachable"
grep -q "unreachable" "$TMP/err" || diag "$(cat "$TMP/err")"
unset DEBUGINFOD_URLS
LD_DEBUG=libs "$LOOPSCOPE" struct --no-cache --debug-dir "$empty" "$TMP/stripped" 2>&1 >/dev/null |
	grep "calling init: .*\(libcurl\|libdebuginfod\)" >"$TMP/loaded"
[ ! -s "$TMP/loaded" ]; ok $? "without DEBUGINFOD_URLS, neither libdebuginfod nor libcurl is loaded"
"$LOOPSCOPE" struct --no-cache --debug-dir "$empty" "$TMP/stripped" >"$TMP/got" 2>"$TMP/err"
! cmp -s "$TMP/want" "$TMP/got" && grep -q "no DWARF" "$TMP/err"
ok $? "... and the stripped binary has no DWARF then (the server was what gave it)"
done_testing
