#!/bin/sh
# tests/core-dir0.sh - DWARF directory entry 0 is the compilation directory
# itself (DWARF 5 section 6.2.4; what index 0 means in DWARF 2-4 too), so a
# file of entry 0 is not joined with DW_AT_comp_dir once more.  Under a
# relative comp_dir (Debian's -ffile-prefix-map builds: glibc's "./nptl")
# that join doubled the path: nptl/nptl/lowlevellock.c.
#
# tests/fixtures/dir0 built from its sub/ directory with
# -fdebug-prefix-map=ROOT=. (comp_dir and entry 0 "./sub"), by gcc
# -gdwarf-5, gcc -gdwarf-4 and clang -gdwarf-5: the source paths of
# struct's JSON are exactly the three files, each one on disk at the
# printed path (from ROOT, where the prefix map points), each loop's line
# there a `for` (3 loops; clang splits one); LOOPSCOPE_SOURCE_PATH=ROOT
# finds every source.  glibc (libc6-dbg): no path doubled, lowlevellock.c's
# path exact.  And a longer directory entry that begins like entry 0
# keeps its own files (tests/fixtures/dir0/dir0_entries.s).
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

[ -x "$LOOPSCOPE" ] || skip_all "$LOOPSCOPE not built"
command -v gcc >/dev/null || skip_all "gcc not installed"
mkdir -p "$TMP/root"
cp -R "$FIXTURES/dir0/sub" "$FIXTURES/dir0/inc" "$TMP/root/"
mkdir "$TMP/elsewhere"

# The relative source paths of a struct JSON, sorted, one line.
paths() {
	python3 -c '
import json, sys
seen = set()
def walk(n):
    if isinstance(n, dict):
        for k, v in n.items():
            if k in ("file", "call_file") and isinstance(v, str) and not v.startswith("/"):
                seen.add(v)
            walk(v)
    elif isinstance(n, list):
        for x in n:
            walk(x)
walk(json.load(open(sys.argv[1])))
print(" ".join(sorted(seen)))' "$1"
}

# "file:line" of every loop of a struct JSON, one a line.
loops() {
	python3 -c '
import json, sys
def walk(n):
    if n.get("kind") == "loop":
        print("%s:%s" % (n.get("file"), n.get("line")))
    for c in n.get("children", []):
        walk(c)
walk(json.load(open(sys.argv[1])))' "$1"
}

for build in "gcc 5" "gcc 4" "clang 5"; do
	# shellcheck disable=SC2086 # two words: compiler, DWARF version
	set -- $build
	cc=$1 v=$2 tag="$1-dwarf$2"
	if ! command -v "$cc" >/dev/null; then
		skip "$tag: $cc not installed"
		continue
	fi
	(cd "$TMP/root/sub" && "$cc" -O2 -gdwarf-"$v" -fdebug-prefix-map="$TMP/root"=. -I../inc \
		-o "$TMP/$tag" dir0_main.c) || { fail "$tag: compile"; continue; }
	comp=$(readelf --debug-dump=info --dwarf-depth=1 "$TMP/$tag" 2>/dev/null |
		sed -n 's/.*DW_AT_comp_dir *:.*: \(.*\)$/\1/p' | head -n 1)
	check_eq "$comp" "./sub" "$tag: the fixture's DW_AT_comp_dir is relative"
	cd "$TMP/elsewhere" || fail_all "cd $TMP/elsewhere"
	"$LOOPSCOPE" struct --no-cache --format=json "$TMP/$tag" >"$TMP/$tag.json" 2>"$TMP/err"
	ok $? "$tag: struct exits 0"
	check_eq "$(paths "$TMP/$tag.json")" "inc/dir0_sum.h sub/dir0_local.h sub/dir0_main.c" \
		"$tag: the source paths are the files' own (not sub/sub/...)"
	cd "$TMP/root" || fail_all "cd $TMP/root"
	n=0 bad=""
	for l in $(loops "$TMP/$tag.json"); do
		n=$((n + 1))
		f=${l%:*} line=${l##*:}
		sed -n "${line}p" "$f" 2>/dev/null | grep -q 'for (' || bad="$bad $l"
	done
	[ "$n" -ge 3 ] && [ -z "$bad" ]
	ok $? "$tag: each of the $n loops' file is on disk at its printed path, a for at its line ($bad)"
	cd "$TMP/elsewhere" || fail_all "cd $TMP/elsewhere"
	LOOPSCOPE_SOURCE_PATH="$TMP/root" "$LOOPSCOPE" struct --no-cache "$TMP/$tag" >/dev/null 2>"$TMP/err"
	check_eq "$(grep -c 'not found' "$TMP/err")" 0 "$tag: LOOPSCOPE_SOURCE_PATH=ROOT finds every source at its path"
	if command -v llvm-symbolizer >/dev/null; then
		main=$(nm "$TMP/$tag" | sed -n 's/^\([0-9a-f]*\) T main$/\1/p')
		diag "$tag: llvm-symbolizer names main's file $(echo "0x$main" |
			llvm-symbolizer -e "$TMP/$tag" | sed -n 2p) (directory 0 joined with comp_dir)"
	fi
done

# Which entry a name is of, read back from it (libdw keeps no index): a
# longer entry that begins like entry 0 claims its files.
cp "$FIXTURES/dir0/dir0_entries.s" "$TMP/root/sub/"
if (cd "$TMP/root/sub" && gcc -gdwarf-5 -Wa,--debug-prefix-map="$(pwd)"=./sub -c -o "$TMP/entries.o" dir0_entries.s &&
    gcc -nostdlib -e main -o "$TMP/entries" "$TMP/entries.o"); then
	got=$("$LOOPSCOPE" lookup --json "$TMP/entries" main+0x0 main+0x2 main+0x3 2>&1 | python3 -c '
import json, sys
for l in sys.stdin:
    s = json.loads(l)["chain"][-1]
    print("%s:%s" % (s["file"], s["line"]))' | tr '\n' ' ')
	check_eq "$got" "sub/a.c:3 sub/sub/x/b.c:5 sub/x/c.c:7 " \
		"entries 0 (./sub), 1 (./sub/x, relative to comp_dir ./sub) and 2 (x): each file of its own"
else
	fail "gas assembles dir0_entries.s (.file 0 needs binutils 2.35)"
fi

# glibc as Debian builds it: comp_dir and directory 0 "./nptl" and the like.
libc=$(realpath /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null)
bid=$(readelf -n "$libc" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\)/\1/p')
if [ -n "$bid" ] && [ -r "/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug" ]; then
	"$LOOPSCOPE" struct --no-cache --format=json "$libc" >"$TMP/libc.json" 2>/dev/null
	ok $? "libc.so.6: struct exits 0"
	all=$(paths "$TMP/libc.json" | tr ' ' '\n')
	doubled=$(echo "$all" | grep -E '^([^/]+)/\1/' | head -n 3 | tr '\n' ' ')
	check_eq "$(echo "$all" | wc -l | tr -d ' '):$doubled" "$(echo "$all" | wc -l | tr -d ' '):" \
		"libc.so.6: no relative source path begins with a doubled directory"
	got=$("$LOOPSCOPE" lookup --json "$libc" __lll_lock_wait+0x0 2>/dev/null |
		python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["chain"][0]["file"])')
	check_eq "$got" "nptl/lowlevellock.c" "libc.so.6: __lll_lock_wait is in nptl/lowlevellock.c"
else
	skip "libc.so.6's debug information (libc6-dbg) is not installed"
fi
done_testing
