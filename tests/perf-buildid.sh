#!/bin/sh
# perf-buildid.sh - a binary whose build-id is not the recorded one is not
# used unless --force (issue 23, issue 24's -k).
#
# The rebuilt binary: a fixture recorded with perf record --no-buildid-cache
# (so no copy is kept), then rebuilt in place with one more statement.  The
# report names the file and both build-ids (readelf's, and perf
# buildid-list's of the recording), also under -q; no sample is attributed
# to the new code: every frame of the binary is an address, and the -s
# dso,sym rows of the binary are perf report's own on the same file (perf
# shows such frames by address too).  --force uses the file, and says so.
#
# -k VMLINUX of another kernel: a recording of kernel samples written here
# (tests/fixtures/perf/kernel_perfdata.py) whose kernel build-id is made up;
# -k with an ELF file of another build-id is refused with both build-ids
# named, and the fallback is said once, with how to get the debug image;
# --force uses it (the samples land in its code); a -k whose build-id is the
# recorded one is used without a word.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
command -v readelf >/dev/null 2>&1 || skip_all "readelf not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed"
export HOME="$TMP/home" # perf's build-id cache: private, and empty
mkdir -p "$HOME"
cd "$TMP" || exit 1
build_id() { readelf -n "$1" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -n 1; }

cp "$FIXTURES/perf/split_loops.c" "$TMP/prog.c"
gcc -O2 -g -fno-omit-frame-pointer -o "$TMP/prog" "$TMP/prog.c" || fail_all "gcc builds the fixture"
perf record -q -N --no-buildid-cache -e cpu-clock --call-graph=fp -o "$TMP/rec.data" "$TMP/prog" 4 \
	>/dev/null 2>"$TMP/rec.err" || skip_all "perf record does not work here: $(head -n 1 "$TMP/rec.err")"
old=$(build_id "$TMP/prog")
recorded=$(perf buildid-list -i "$TMP/rec.data" 2>/dev/null | awk -v f="$TMP/prog" '$2 == f { print $1 }')
check_eq "$recorded" "$old" "the recording names the binary's build-id (perf buildid-list)"

# rebuilt in place: a function more before the others moves all the code
{ printf 'int rebuilt_in_place(int x) { return x * 3 + 1; }\n'; cat "$TMP/prog.c"; } >"$TMP/prog2.c"
gcc -O2 -g -fno-omit-frame-pointer -o "$TMP/prog" "$TMP/prog2.c" || fail "the rebuild"
new=$(build_id "$TMP/prog")
[ -n "$new" ] && [ "$new" != "$old" ]
ok $? "rebuilt in place: build-id $old became $new"

R() { "$PERF_LOOPS" report -i "$TMP/rec.data" --stdio --no-pager "$@"; }
R -s dso,sym >"$TMP/sym" 2>"$TMP/err"
check_eq "$?" 0 "the report of the rebuilt binary's recording runs"
grep -q "^perf-loops: $TMP/prog: build-id $new is not the recorded $old .*--force uses it anyway" "$TMP/err"
ok $? "the message names the file, its build-id and the recorded one: $(head -n 1 "$TMP/err")"
R -s dso,sym -q >/dev/null 2>"$TMP/errq"
grep -q "^perf-loops: $TMP/prog: build-id $new is not the recorded $old" "$TMP/errq"
ok $? "... also under -q"
# no sample attributed to the new binary's code: the binary's rows are addresses
rows() { awk '$0 ~ /^ *[0-9.]+%/ && $(NF - 2) == "prog" { print $1, $NF }' "$1" | sort; }
rows "$TMP/sym" >"$TMP/mine"
[ -s "$TMP/mine" ] && ! awk '$2 !~ /^0x[0-9a-f]+$/ || length($2) != 18' "$TMP/mine" | grep -q .
ok $? "every sample of the binary is shown by address: $(wc -l <"$TMP/mine") rows, none named"
perf report -i "$TMP/rec.data" --stdio -q -g none --no-children -s dso,sym 2>/dev/null >"$TMP/psym"
rows "$TMP/psym" >"$TMP/theirs"
cmp -s "$TMP/mine" "$TMP/theirs"
ok $? "... the same addresses and percentages as perf report -s dso,sym"
cmp -s "$TMP/mine" "$TMP/theirs" || { diag "perf loops: $(tr '\n' ' ' <"$TMP/mine")"; diag "perf: $(tr '\n' ' ' <"$TMP/theirs")"; }
R --format=json 2>/dev/null | python3 -c '
import json, sys
def procs(n):
    if n.get("kind") == "proc":
        yield n
    for c in n.get("children", []):
        yield from procs(c)
ps = [p for p in procs(json.load(sys.stdin)["tree"]) if (p.get("dso") or "").endswith("/prog")]
sys.exit(not ps or any(not p["name"].startswith("0x") or p.get("file") for p in ps))'
ok $? "--format=json: no procedure, file or line of the new binary"
R -s dso,sym --force >"$TMP/forced" 2>"$TMP/err"
grep -q "^perf-loops: $TMP/prog: build-id $new is not the recorded $old; used anyway (--force)" "$TMP/err" &&
	grep -q " prog  *\[\.\] [a-z]" "$TMP/forced"
ok $? "--force: the file is used, and that is said"

# -k VMLINUX: a recording of kernel samples, in a function of an ELF file
# that stands for the kernel image here (_text is 0: link = runtime address)
gcc -O2 -g -o "$TMP/vmlinux" "$FIXTURES/perf/split_loops.c" || fail "the stand-in kernel image"
vm=$(build_id "$TMP/vmlinux")
run=$(nm "$TMP/vmlinux" | awk '$3 == "run" { print "0x" $1 }')
fake=0123456789abcdef0123456789abcdef01234567
gen() { # gen OUT KERNEL-BUILD-ID
	python3 "$FIXTURES/perf/kernel_perfdata.py" "$1" 6.1.0-9-fake 0 "$2" \
		/lib/modules/6.1.0-9-fake/kernel/fs/ext4/ext4.ko 0xffffffffc0a00000 00 cat 0 \
		$(i=0; while [ $i -lt 40 ]; do printf 'k:%s ' "$((run + 4))"; i=$((i + 1)); done)
}
gen "$TMP/k.data" "$fake" || fail "kernel_perfdata.py"
K() { "$PERF_LOOPS" report -i "$TMP/k.data" --stdio --no-pager -s sym "$@"; }
K -k "$TMP/vmlinux" >"$TMP/k" 2>"$TMP/err"
check_eq "$?" 0 "-k with another kernel's image: the report runs"
check_eq "$(grep -c "^perf-loops: $TMP/vmlinux: build-id $vm is not the recorded kernel's $fake: not used (--force uses it anyway)" "$TMP/err")" 1 \
	"-k of another build-id: refused, both build-ids named"
check_eq "$(grep -c "kernel frames (100.0% of the samples) are named by address.*no debug image of kernel 6.1.0-9-fake with build-id $fake.*-k VMLINUX gives one (Debian: linux-image-6.1.0-9-fake-dbg)" "$TMP/err")" 1 \
	"... the fallback said once, with the release, the build-id and how to get the image"
! grep -q "\[k\] run" "$TMP/k"
ok $? "... and no sample in the refused image's code"
K -k "$TMP/vmlinux" -q >/dev/null 2>"$TMP/err"
check_eq "$(grep -c "not the recorded kernel's $fake" "$TMP/err")" 1 "... refused under -q too"
K -k "$TMP/vmlinux" --force >"$TMP/kf" 2>"$TMP/err"
grep -q "build-id $vm is not the recorded kernel's $fake; used anyway (--force)" "$TMP/err" &&
	grep -q "100.00%  *40  \[k\] run$" "$TMP/kf"
ok $? "-k --force: used, said, and the 40 samples are in its run"
gen "$TMP/k2.data" "$vm" || fail "kernel_perfdata.py"
"$PERF_LOOPS" report -i "$TMP/k2.data" --stdio --no-pager -s sym -k "$TMP/vmlinux" >"$TMP/k2" 2>"$TMP/err"
[ ! -s "$TMP/err" ] && grep -q "100.00%  *40  \[k\] run$" "$TMP/k2"
ok $? "-k with the recorded build-id: used without a word ($(head -c 200 "$TMP/err"))"
done_testing
