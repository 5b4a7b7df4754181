#!/bin/sh
# bench/gdb-latency.sh - latency of the GDB `structure` command on libc.
#
#   bench/gdb-latency.sh [BUILDDIR]        (BUILDDIR: where make ran; default .)
#
# Stops a small program in libc's printf (libc6-dbg supplies the DWARF) and
# times, inside GDB, `structure` at $pc: the first call (which analyzes libc),
# then later calls at $pc and at other libc functions (each a lookup in the
# analysis already built).  Then a second GDB session, where the first call
# loads the analysis from the on-disk cache.  Later calls must take < 50 ms;
# the script exits 1 if one does not.
#
# One run (2 cores, Debian 12, gdb 13.1, glibc 2.36 + libc6-dbg):
#   first structure in libc, empty cache      2130 ms   (the analysis of libc)
#   first structure in libc, disk cache        775 ms
#   later structure at $pc (libc), n=30     median 0.02 ms, max 0.11 ms
#   later structure FUNCTION (libc), n=24   median 0.66 ms, max 11 ms (GDB's own symbol lookup included)
#   later structure in a caller frame, n=10 median 0.06 ms, max 1.4 ms
set -eu
builddir=$(cd "${1:-.}" && pwd)
srcdir=$(cd "$(dirname "$0")/.." && pwd)
ext="$builddir/gdb-ext/loopscope.py"
[ -f "$ext" ] || ext="$srcdir/gdb-ext/loopscope.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ls-gdbbench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"

gcc -O2 -g -o "$tmp/prog" "$srcdir/tests/fixtures/gdb/loops.c"
cat >"$tmp/bench.py" <<'PY'
import os, statistics, time
import gdb

def timed(cmd):
    t = time.perf_counter()
    out = gdb.execute(cmd, to_string=True)
    return (time.perf_counter() - t) * 1000.0, out

def stats(name, v):
    print("RESULT %-34s n=%-3d median_ms=%8.2f max_ms=%8.2f" % (name, len(v), statistics.median(v), max(v)))

label = os.environ["LS_BENCH_LABEL"]
first_ms, out = timed("structure")
print("first call at $pc in libc (%s):" % label)
print("\n".join(l for l in out.splitlines() if not l.startswith("loopscope: warning")))
import loopscope_gdb
for m in loopscope_gdb.ANALYSES._by_key.values():
    if hasattr(m, "from_cache"):
        print("  %s: structure %s" % (m.path, "loaded from the disk cache" if m.from_cache else "analyzed"))
print("RESULT %-34s first_ms=%.1f" % ("first structure (libc, " + label + ")", first_ms))
at_pc = [timed("structure")[0] for _ in range(30)]
stats("later structure at $pc (libc)", at_pc)
# By name: GDB's own symbol lookup (decode_line) plus our lookup.
by_name = []
for fn in ("qsort", "strtod", "__vfprintf_internal", "malloc", "memchr", "getenv", "fopen", "regexec"):
    try:
        timed("structure " + fn)  # the first time, GDB expands the symbol table
        by_name += [timed("structure " + fn)[0] for _ in range(3)]
    except gdb.error as e:
        print("  (%s: %s)" % (fn, e))
if by_name:
    stats("later structure FUNCTION (libc)", by_name)
gdb.execute("up", to_string=True)
first_main, _ = timed("structure")
print("RESULT %-34s first_ms=%.1f" % ("first structure (program, " + label + ")", first_main))
in_caller = [timed("structure")[0] for _ in range(10)]
stats("later structure in caller frame", in_caller)
worst = max(at_pc + by_name + in_caller)
print("RESULT later calls under 50 ms: %s (worst %.2f ms)" % ("yes" if worst < 50.0 else "NO", worst))
PY
run() { # LABEL
	echo "== $1"
	LS_BENCH_LABEL=$1 gdb -nx -batch -ex "source $ext" -ex 'break printf' -ex run \
		-ex "source $tmp/bench.py" -ex kill --args "$tmp/prog" 7 5 2>&1 | grep -v '^\[\|^Using host\|^Breakpoint\|^Kill\|^$' | sed -n '/^first call/,$p'
}
run "analysis, empty cache" | tee "$tmp/out"
run "disk cache" | tee -a "$tmp/out"
grep -q 'under 50 ms: NO' "$tmp/out" && exit 1
grep -q 'under 50 ms: yes' "$tmp/out"
