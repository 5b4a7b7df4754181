#!/bin/sh
# bench/decode.sh - decoding an oops log: `loopscope decode` against the
# kernel's scripts/decode_stacktrace.sh and scripts/faddr2line, on Debian's
# debug vmlinux (linux-image-amd64-dbg), for a one-frame log and a
# 3,000-frame one (issue 24).
#
# The logs: FUNC+0xOFF/0xSIZE frames of real call sites (return addresses
# after the calls of every 60th function of .text, sizes as faddr2line
# computes them), with timestamps and <TASK> markers; "one" is the first
# frame alone, "many" 3,000 frames.
#   loopscope cold:    empty cache (only the procedures the frames land in
#                      are analyzed: analysis on demand)
#   loopscope warm:    the same log again, on the entry the cold run left
#   decode_stacktrace.sh, faddr2line: the one-frame log, and the first 30
#                      frames of the big one (they take seconds a frame),
#                      once; their frames per second give the ratio.
# Wall and CPU (user + system) times, medians of RUNS rounds (the kernel's
# scripts once): on a loaded machine the CPU time is what a run costs.
#
# Usage: bench/decode.sh [LOOPSCOPE] [RUNS]     (from the build directory)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/.." && pwd)
LOOPSCOPE=${1:-${LOOPSCOPE:-./loopscope}}
# The program behind a libtool wrapper (a shell script that costs tens of
# milliseconds a run, which a warm one-frame decode would mostly be).
if [ -x "$(dirname "$LOOPSCOPE")/.libs/$(basename "$LOOPSCOPE")" ]; then
	export LD_LIBRARY_PATH="$(cd "$(dirname "$LOOPSCOPE")" && pwd)/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	LOOPSCOPE=$(dirname "$LOOPSCOPE")/.libs/$(basename "$LOOPSCOPE")
fi
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
with open(tmp + "/many.log", "w") as f:
    f.write("[    1.000000] Call Trace:\n[    1.000000]  <TASK>\n")
    for i, t in enumerate(toks):
        f.write("[%12.6f]  %s%s\n" % (1 + i / 1e6, "? " if i % 7 == 3 else "", t))
    f.write("[    2.000000]  </TASK>\n")
with open(tmp + "/30", "w") as f:
    f.write(" ".join(toks[:30]))
with open(tmp + "/one.log", "w") as f:
    f.write("[    1.000000] Call Trace:\n[    1.000000]  <TASK>\n[    1.000001]  %s\n[    2.000000]  </TASK>\n" % toks[0])
with open(tmp + "/thirty.log", "w") as f:
    f.write("[    1.000000] Call Trace:\n[    1.000000]  <TASK>\n")
    for i, t in enumerate(toks[:30]):
        f.write("[%12.6f]  %s\n" % (1 + i / 1e6, t))
    f.write("[    2.000000]  </TASK>\n")
PY

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
timed() { # NAME CMD...: appends the wall time to $TMP/t.NAME, the CPU time (user + system) to $TMP/c.NAME
	name=$1; shift
	/usr/bin/time -f '%e %U %S' -o "$TMP/time" "$@" >"$TMP/out.$name" 2>"$TMP/err.$name" || true
	tail -n 1 "$TMP/time" | awk '{ print $1 }' >>"$TMP/t.$name"
	tail -n 1 "$TMP/time" | awk '{ print $2 + $3 }' >>"$TMP/c.$name"
}
i=0
while [ $i -lt "$RUNS" ]; do
	for log in one many; do
		rm -rf "$TMP/cache"
		XDG_CACHE_HOME=$TMP/cache timed "$log.cold" "$LOOPSCOPE" decode --vmlinux "$VMLINUX" <"$TMP/$log.log"
		XDG_CACHE_HOME=$TMP/cache timed "$log.warm" "$LOOPSCOPE" decode --vmlinux "$VMLINUX" <"$TMP/$log.log"
	done
	i=$((i + 1))
done
annotated=$(grep -c '^\[[ 0-9.]*\]  *# ' "$TMP/out.many.warm" || true)
echo "decode.sh: logs of 1 and 3000 frames of $(basename "$VMLINUX"), $annotated annotation lines for the 3000"
printf '%-44s %10s %10s %12s\n' "run" "median s" "CPU s" "frames/s"
rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.1f", (t > 0 ? n / t : 0) }'; }
for n in one.cold one.warm many.cold many.warm; do
	t=$(median "$TMP/t.$n")
	case $n in one.*) frames=1 ;; *) frames=3000 ;; esac
	printf '%-44s %10s %10s %12s\n' "loopscope decode, $frames frame(s), ${n#*.}" "$t" "$(median "$TMP/c.$n")" "$(rate $frames "$t")"
	echo "$t" >"$TMP/m.$n"
done
peer() { # NAME FRAMES CMD...: once, stdin from $TMP/in
	name=$1 frames=$2; shift 2
	rm -f "$TMP/t.$name" "$TMP/c.$name"
	timed "$name" "$@" <"$TMP/in"
	t=$(cat "$TMP/t.$name")
	printf '%-44s %10s %10s %12s\n' "$name, $frames frame(s) (once)" "$t" "$(cat "$TMP/c.$name")" "$(rate "$frames" "$t")"
	echo "$t" >"$TMP/m.$name"
}
ratio() { awk -v a="$(cat "$TMP/m.$1")" -v b="$(cat "$TMP/m.$2")" 'BEGIN { printf "%.2gx", (b > 0 ? a / b : 0) }'; }
if [ -n "$FADDR2LINE" ]; then
	DECODE_STACKTRACE=$(dirname "$FADDR2LINE")/decode_stacktrace.sh
	cp "$TMP/one.log" "$TMP/in"
	peer "decode_stacktrace.sh" 1 "$DECODE_STACKTRACE" "$VMLINUX"
	mv "$TMP/m.decode_stacktrace.sh" "$TMP/m.ds1"
	cp "$TMP/thirty.log" "$TMP/in"
	peer "decode_stacktrace.sh" 30 "$DECODE_STACKTRACE" "$VMLINUX"
	mv "$TMP/m.decode_stacktrace.sh" "$TMP/m.ds30"
	: >"$TMP/in"
	peer "faddr2line" 1 "$FADDR2LINE" "$VMLINUX" "$(cut -d' ' -f1 "$TMP/30")"
	mv "$TMP/m.faddr2line" "$TMP/m.fa1"
	# shellcheck disable=SC2046
	peer "faddr2line" 30 "$FADDR2LINE" "$VMLINUX" $(cat "$TMP/30")
	mv "$TMP/m.faddr2line" "$TMP/m.fa30"
	echo "one frame, cold:  decode_stacktrace.sh / loopscope = $(ratio ds1 one.cold), faddr2line / loopscope = $(ratio fa1 one.cold)"
	echo "one frame, warm:  decode_stacktrace.sh / loopscope = $(ratio ds1 one.warm), faddr2line / loopscope = $(ratio fa1 one.warm)"
	# per frame: the scripts' 30 frames against loopscope's 3,000
	awk -v ds="$(cat "$TMP/m.ds30")" -v fa="$(cat "$TMP/m.fa30")" -v c="$(cat "$TMP/m.many.cold")" -v w="$(cat "$TMP/m.many.warm")" \
		'BEGIN { printf "per frame, 3000-frame log: decode_stacktrace.sh / loopscope = %.0fx cold, %.0fx warm; faddr2line / loopscope = %.0fx cold, %.0fx warm\n", (ds / 30) / (c / 3000), (ds / 30) / (w / 3000), (fa / 30) / (c / 3000), (fa / 30) / (w / 3000) }'
fi
