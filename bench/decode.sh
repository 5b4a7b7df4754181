#!/bin/sh
# bench/decode.sh - decoding an oops log: `loopscope decode` vs the kernel's
# scripts/faddr2line, on Debian's debug vmlinux (linux-image-amd64-dbg).
#
# The log: 3,000 frames FUNC+0xOFF/0xSIZE of real call sites (return
# addresses after the calls of every 60th function of .text, sizes as
# faddr2line computes them), with timestamps and <IRQ>/<TASK> markers.
#   loopscope cold:    empty cache (the whole of vmlinux analyzed, loops included)
#   loopscope cached:  the analysis read from the cache
#   open alone:        `loopscope lookup vmlinux ADDR`, empty cache: the analysis, the cache
#                      store and the lookup index, what any command pays cold (the floor)
#   analysis alone:    `loopscope struct --no-cache -o /dev/null vmlinux`
#   faddr2line:        on the first 30 frames only (it takes seconds per frame)
# Wall times, medians of RUNS rounds (faddr2line once).
#
# Usage: bench/decode.sh [LOOPSCOPE] [RUNS]     (from the build directory)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/.." && pwd)
LOOPSCOPE=${1:-${LOOPSCOPE:-./loopscope}}
RUNS=${2:-3}
VMLINUX=$("$srcdir/scripts/setup-kernel-dbg") || { echo "decode.sh: no kernel debug info" >&2; exit 1; }
FADDR2LINE=$("$srcdir/scripts/setup-kernel-dbg" --faddr2line) || FADDR2LINE=
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ls-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

python3 - "$VMLINUX" "$srcdir/tests/kernel-common.py" "$TMP" <<'PY'
import importlib.util, re, subprocess, sys
spec = importlib.util.spec_from_file_location("kc", sys.argv[2])
K = importlib.util.module_from_spec(spec)
spec.loader.exec_module(K)
vm, tmp = sys.argv[1], sys.argv[3]
syms = K.symbols(vm)
sizes = K.kallsyms_sizes(syms, K.section_ends(vm))
funcs = {}
for s in syms:
    if s.type == "FUNC" and s.ndx == "1":
        funcs.setdefault(s.name, []).append(s)
start = {s.addr: s for v in funcs.values() if len(v) == 1 for s in v}
names = sorted(start)[::60]
want = set(names)
p = subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", "-j", ".text", vm], stdout=subprocess.PIPE,
                     universal_newlines=True, errors="replace")
head = re.compile(r"^([0-9a-f]{16}) <([^>]+)>:$")
insn = re.compile(r"^([0-9a-f]{16}):\t(\S+)")
cur, pending, toks = None, False, []
for line in p.stdout:
    m = head.match(line)
    if m:
        a = int(m.group(1), 16)
        cur = start[a] if a in want else None
        pending = False
        continue
    m = insn.match(line)
    if not m or cur is None:
        continue
    a = int(m.group(1), 16)
    if pending:
        toks.append("%s+0x%x/0x%x" % (cur.name, a - cur.addr, sizes[(cur.name, cur.addr)]))
    pending = m.group(2).startswith("call")
p.wait()
toks = (toks * (3000 // max(len(toks), 1) + 1))[:3000]
with open(tmp + "/oops.log", "w") as f:
    f.write("[    1.000000] Call Trace:\n[    1.000000]  <TASK>\n")
    for i, t in enumerate(toks):
        f.write("[%12.6f]  %s%s\n" % (1 + i / 1e6, "? " if i % 7 == 3 else "", t))
    f.write("[    2.000000]  </TASK>\n")
with open(tmp + "/30", "w") as f:
    f.write(" ".join(toks[:30]))
PY

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
timed() { # NAME CMD...: appends the wall time to $TMP/t.NAME
	name=$1; shift
	/usr/bin/time -f '%e' -o "$TMP/time" "$@" >"$TMP/out.$name" 2>"$TMP/err.$name" || true
	tail -n 1 "$TMP/time" >>"$TMP/t.$name"
}
i=0
while [ $i -lt "$RUNS" ]; do
	rm -rf "$TMP/cache"
	XDG_CACHE_HOME=$TMP/cache timed cold "$LOOPSCOPE" decode --vmlinux "$VMLINUX" <"$TMP/oops.log"
	XDG_CACHE_HOME=$TMP/cache timed cached "$LOOPSCOPE" decode --vmlinux "$VMLINUX" <"$TMP/oops.log"
	rm -rf "$TMP/cache"
	XDG_CACHE_HOME=$TMP/cache timed open "$LOOPSCOPE" lookup "$VMLINUX" "$(sed -n 's/.*  \([a-z_0-9.]*+0x[0-9a-f]*\/0x[0-9a-f]*\)$/\1/p' "$TMP/oops.log" | head -n 1)"
	timed analysis "$LOOPSCOPE" struct --no-cache -o /dev/null "$VMLINUX"
	i=$((i + 1))
done
frames=$(grep -c '+0x' "$TMP/oops.log")
annotated=$(grep -c '^\[[ 0-9.]*\]  *# ' "$TMP/out.cached" || true)
echo "decode.sh: $frames frames of $(basename "$VMLINUX"), $annotated annotation lines"
printf '%-34s %10s\n' "run" "median s"
for n in cold cached open analysis; do
	printf '%-34s %10s\n' "loopscope $n" "$(median "$TMP/t.$n")"
done
if [ -n "$FADDR2LINE" ]; then
	# shellcheck disable=SC2046
	timed faddr2line "$FADDR2LINE" "$VMLINUX" $(cat "$TMP/30")
	printf '%-34s %10s\n' "faddr2line, 30 frames (once)" "$(cat "$TMP/t.faddr2line")"
fi
