#!/bin/sh
# perf-debuginfod.sh - perf loops report gets a user binary's debug file
# and the kernel's image from a real debuginfod server (Debian's
# `debuginfod` on 127.0.0.1), by the build-ids of the recording, through
# libloopscope's one search (issue 24).
#
#   - a real recording (perf record -e cpu-clock) of inline_loop.c built
#     -O2 -g, then stripped in place (the build-id stays): its debug file is
#     only on the server.  The report with DEBUGINFOD_URLS equals the report
#     of the unstripped binary (the oracle: the same build-id, its DWARF
#     local), and shows the inlined `work` and its loop; so does annotate;
#   - a synthetic recording of kernel samples (tests/fixtures/perf/
#     kernel_perfdata.py) whose kernel build-id is that of an ELF file
#     standing for vmlinux, on the server only: the report without -k
#     equals the report with -k of the same file;
#   - a download shows its progress on a terminal (script(1)), not in a file;
#   - a build-id the server does not have: "no server has build-id";
#     the server stopped: "server unreachable", for the binary and the
#     kernel, and never the other's words.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed"
command -v debuginfod >/dev/null 2>&1 || skip_all "debuginfod (the server) not installed"
command -v objcopy >/dev/null 2>&1 || skip_all "objcopy not installed"
python3 -c 'import ctypes; ctypes.CDLL("libdebuginfod.so.1")' 2>/dev/null ||
	skip_all "libdebuginfod.so.1 not installed"
unset DEBUGINFOD_URLS
export HOME="$TMP/home" # perf's build-id cache: private, and empty
mkdir -p "$HOME" "$TMP/srv"
cd "$TMP" || exit 1
build_id() { readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -n 1; }
INNER=$(grep -n LOOP-INNER "$FIXTURES/perf/inline_loop.c" | head -n 1 | cut -d: -f1)

build_fixture gcc -O2 perf/inline_loop.c "$TMP/prog.full" -fno-omit-frame-pointer || fail_all "gcc builds the fixture"
objcopy --only-keep-debug "$TMP/prog.full" "$TMP/srv/prog.debug"
objcopy --strip-debug "$TMP/prog.full" "$TMP/prog"
pid=$(build_id "$TMP/prog")
check_eq "$(build_id "$TMP/srv/prog.debug")" "$pid" "the stripped binary and its debug file share build-id $pid"
perf record -q -N -e cpu-clock --call-graph=fp -o "$TMP/rec.data" "$TMP/prog" 20000 \
	>/dev/null 2>"$TMP/rec.err" || skip_all "perf record does not work here: $(head -n 1 "$TMP/rec.err")"

# the stand-in kernel image, served whole (as Debian's vmlinux is)
gcc -O2 -g -o "$TMP/srv/vmlinux" "$FIXTURES/perf/split_loops.c" || fail_all "the stand-in kernel image"
vm=$(build_id "$TMP/srv/vmlinux")
run=$(nm "$TMP/srv/vmlinux" | awk '$3 == "run" { print "0x" $1 }')
gen() { # gen OUT KERNEL-BUILD-ID
	python3 "$FIXTURES/perf/kernel_perfdata.py" "$1" 6.1.0-9-fake 0 "$2" \
		/lib/modules/6.1.0-9-fake/kernel/fs/ext4/ext4.ko 0xffffffffc0a00000 00 cat 0 \
		$(i=0; while [ $i -lt 40 ]; do printf 'k:%s ' "$((run + 4 + i % 3 * 8))"; i=$((i + 1)); done)
}
gen "$TMP/k.data" "$vm" || fail_all "kernel_perfdata.py"
fake=0123456789abcdef0123456789abcdef01234567
gen "$TMP/kfake.data" "$fake" || fail_all "kernel_perfdata.py"

# the oracles: the unstripped binary (same build-id) and -k
R() { # R NAME DATA [OPTIONS]: a report, its own analysis cache
	_name=$1 _data=$2; shift 2
	XDG_CACHE_HOME="$TMP/cache-$_name" "$PERF_LOOPS" report -i "$_data" --stdio --no-pager "$@" \
		>"$TMP/$_name.out" 2>"$TMP/$_name.err"
}
cp "$TMP/prog" "$TMP/prog.stripped"
cp "$TMP/prog.full" "$TMP/prog"
R want "$TMP/rec.data"
A() { # A NAME: perf loops annotate main, its own analysis cache
	XDG_CACHE_HOME="$TMP/cache-$1" "$PERF_LOOPS" annotate -i "$TMP/rec.data" --stdio main \
		>"$TMP/$1.out" 2>"$TMP/$1.err"
}
A awant
cp "$TMP/prog.stripped" "$TMP/prog"
grep -q "inline_loop.c:$INNER" "$TMP/want.out"
ok $? "the oracle (the unstripped binary) shows the loop at inline_loop.c:$INNER"
R nourl "$TMP/rec.data"
! grep -q "inline_loop.c:$INNER" "$TMP/nourl.out"
ok $? "stripped, no DEBUGINFOD_URLS: no loop lines (the debug file is not here)"
R kwant "$TMP/k.data" -s sym -k "$TMP/srv/vmlinux"
grep -q "\[k\] run" "$TMP/kwant.out"
ok $? "the kernel oracle (-k): the samples are in the image's run"

# Debian's debuginfod over srv/, on a free port
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
debuginfod -F -L --disable-source-scan -c 1 -p "$port" -d "$TMP/db.sqlite" -t 0 -g 0 "$TMP/srv" \
	>/dev/null 2>"$TMP/server.log" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$TMP"' EXIT
url="http://127.0.0.1:$port"
served() { python3 -c 'import sys, urllib.request
try:
    r = urllib.request.urlopen(sys.argv[1], timeout=5); sys.exit(0 if r.status == 200 and r.read(1) else 1)
except Exception:
    sys.exit(1)' "$url/buildid/$1/debuginfo"; }
i=0
while [ $i -lt 120 ] && ! { served "$pid" && served "$vm"; }; do sleep 1; i=$((i + 1)); done
served "$pid" && served "$vm" || skip_all "the local debuginfod server did not index the files: $(tail -c 300 "$TMP/server.log")"

export DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$TMP/dcache"
R got "$TMP/rec.data"
check_eq "$(cat "$TMP/got.out")" "$(cat "$TMP/want.out")" \
	"stripped binary, its debug file from debuginfod: the report equals the unstripped binary's"
grep -q "inline_loop.c:$INNER" "$TMP/got.out" && grep -q "work" "$TMP/got.out"
ok $? "... with the inlined work and its loop at inline_loop.c:$INNER"
grep -q "no DWARF\|without debug information" "$TMP/got.err" && diag "$(cat "$TMP/got.err")"
A agot
grep -q "loop at inline_loop.c:$INNER" "$TMP/agot.out" && cmp -s "$TMP/agot.out" "$TMP/awant.out"
ok $? "perf loops annotate main: its loops from the debuginfod file, as from the unstripped binary"
R kgot "$TMP/k.data" -s sym
check_eq "$(cat "$TMP/kgot.out")" "$(cat "$TMP/kwant.out")" \
	"kernel samples without -k: the image of the recorded build-id from debuginfod, the report as with -k"
grep -q "kernel frames" "$TMP/kgot.err" && diag "$(cat "$TMP/kgot.err")"
R kfake "$TMP/kfake.data" -s sym
grep -q "no debug image of kernel 6.1.0-9-fake with build-id $fake was found (.*debuginfod: no server has build-id $fake ($url))" "$TMP/kfake.err"
ok $? "a kernel build-id the server does not have: 'no server has build-id', said with the fallback"
grep -q "unreachable" "$TMP/kfake.err" && diag "$(cat "$TMP/kfake.err")"

# a download's progress: on a terminal (script(1) gives one), not in a pipe
if command -v script >/dev/null 2>&1; then
	XDG_CACHE_HOME="$TMP/cache-tty" DEBUGINFOD_CACHE_PATH="$TMP/dcache-tty" \
		script -qec "'$PERF_LOOPS' report -i '$TMP/rec.data' --stdio --no-pager" /dev/null >"$TMP/tty.out" 2>&1
	grep -q "loopscope: debuginfod: downloading $(echo "$pid" | cut -c1-16)" "$TMP/tty.out" &&
		! grep -q "downloading" "$TMP/got.err"
	ok $? "a download shows its progress on a terminal, and not when stderr is a file"
else
	skip "script(1) not installed: no terminal for the progress check"
fi

# the server stopped: unreachable, for both
kill $server
wait $server 2>/dev/null
export DEBUGINFOD_CACHE_PATH="$TMP/dcache-down"
R down "$TMP/rec.data"
grep -q "^perf-loops: warning: $TMP/prog: no DWARF debug information; debuginfod: server unreachable ($url: Connection refused)" "$TMP/down.err"
ok $? "the server stopped: the binary's warning says 'server unreachable'"
grep -q "no server has" "$TMP/down.err" && diag "$(cat "$TMP/down.err")"
R kdown "$TMP/k.data" -s sym
grep -q "no debug image of kernel 6.1.0-9-fake with build-id $vm was found (.*debuginfod: server unreachable ($url: Connection refused))" "$TMP/kdown.err"
ok $? "the server stopped: the kernel's fallback says 'server unreachable'"
R kdownq "$TMP/k.data" -s sym -q
! grep -q "unreachable" "$TMP/kdownq.err"
ok $? "... not under -q"
done_testing
