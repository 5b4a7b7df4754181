#!/bin/sh
# gdb-nonutf8.sh - a program and its source under a directory whose name is
# not UTF-8 (Latin-1 "lat\351n1"): in the CLI, `bt` shows its loop lines and
# structure, info loops, $_loop_depth, loop-next work, the byte shown as GDB
# shows bytes (\351), never U+FFFD; `structure -json` carries the path's
# bytes (escaped \udce9: json.loads and os.fsencode give the file back);
# under MI the commands answer, with the byte written \351, and no setting
# is changed (GDB's host-charset stays as it was).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace

dir="$TMP/lat$(printf '\351')n1"
mkdir -p "$dir" || skip_all "cannot make a directory with a Latin-1 name here"
cp "$GDB_FIXTURE" "$dir/loops.c"
IB=$(line_of inner-body); IL=$(line_of inner-loop)
for cc in $(gdb_compilers); do
	bin="$dir/prog-$cc"
	"$cc" -O2 -g -o "$bin" "$dir/loops.c" || { fail "$cc: build in $dir"; continue; }
	out=$(gdb_run -ex "break loops.c:$IB" -ex run -ex bt -ex structure -ex 'structure -json' -ex 'info loops' \
		-ex 'printf "depth=%d\n", $_loop_depth()' -ex loop-next -ex 'maint info loopscope' -ex kill --args "$bin" 7 5)
	echo "$out" >"$TMP/out-$cc"
	! grep -qiE 'UnicodeDecodeError|Python Exception|Traceback' "$TMP/out-$cc"
	ok_show $? "$cc: no Python error anywhere" "$TMP/out-$cc"
	grep -q "^    in loop (depth=2, header=0x[0-9a-f]*.*) at .*lat\\\\351n1/loops.c:$IL\$" "$TMP/out-$cc"
	ok_show $? "$cc: bt shows the loop line, the byte as \\351" "$TMP/out-$cc"
	grep -q "^0x[0-9a-f]* is .*/lat\\\\351n1/prog-$cc+0x[0-9a-f]*:\$" "$TMP/out-$cc" && grep -q '^  loop    at loops.c:' "$TMP/out-$cc"
	ok $? "$cc: structure names the program, the byte as \\351"
	! grep -q "$(printf '\357\277\275')" "$TMP/out-$cc"
	ok $? "$cc: no U+FFFD anywhere"
	grep -q "^[0-9]* loops in main (loops.c:[0-9]*) in .*lat\\\\351n1/prog-$cc:\$" "$TMP/out-$cc"
	ok $? "$cc: info loops works"
	grep -q '^depth=2$' "$TMP/out-$cc"
	ok $? "$cc: \$_loop_depth() works"
	grep -q "^at the header of the loop at loops.c:$IL " "$TMP/out-$cc"
	ok $? "$cc: loop-next works"
	grep '^{' "$TMP/out-$cc" | head -n 1 >"$TMP/json-$cc"
	[ "$(python3 - "$TMP/json-$cc" "$bin" 2>&1 <<'PY'
import json, os, sys
raw = open(sys.argv[1], "rb").read()
obj = json.loads(raw)
ok = (b"\\udce9" in raw and b"\\ufffd" not in raw and "\ufffd".encode() not in raw
      and os.fsencode(obj["module"]) == os.fsencode(os.path.realpath(sys.argv[2]))
      and all(os.path.exists(os.fsencode(s["file"])) for s in obj["chain"] if s.get("file")))
print("ok" if ok else raw[:300])
PY
)" = ok ]
	ok_show $? "$cc: structure -json escapes the byte (\\udce9): the module and source paths name their files" "$TMP/json-$cc"
done

# MI: the same program, by an IDE.
bin="$dir/prog-gcc"
if [ -x "$bin" ] && "$GDB" -nx -batch -ex 'python gdb.MICommand' >/dev/null 2>&1; then
	python3 - "$GDB" "$GDBEXT" "$bin" "$IB" "$FIXTURES/gdb" >"$TMP/mi.out" 2>&1 <<'PY'
import os, re, sys
sys.path.insert(0, sys.argv[5])
from mi3 import Mi
gdb, ext, prog, ib = sys.argv[1:5]
mi = Mi([gdb, "-nx", "-q", "--interpreter=mi3", "-ex", "source " + ext])
c = lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
mi.cmd("-file-exec-and-symbols " + c(prog))
mi.cmd("-exec-arguments 7 5")
mi.cmd("-inferior-tty-set /dev/null")
mi.cmd("-break-insert loops.c:" + ib)
mi.cmd("-exec-run", wait_stop=True)
unescape = lambda s: re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8) + 0xDC00), s)
r1, _ = mi.cmd("-loopscope-structure")
r2, _ = mi.cmd("-loopscope-stack 0 1")
r3, _ = mi.cmd("-loopscope-loops")
r4, out4 = mi.cmd('-interpreter-exec console "loop-next"', wait_stop=True)
ok = all(r is not None and r[2] == "done" for r in (r1, r2, r3)) and r4 is not None and r4[2] in ("done", "running")
print("answers", ok, [r[2] if r else None for r in (r1, r2, r3, r4)])
if ok:
    mod = r1[3]["module"]
    print("module", os.fsencode(unescape(mod)) == os.fsencode(os.path.realpath(prog)), repr(mod))
    print("stack", r2[3]["frames"][0].get("loops") != [])
print("params", [l for l in mi.lines if l.startswith("=cmd-param-changed")])
print("unparsable", len(mi.bad))
mi.close()
PY
	grep -q '^answers True' "$TMP/mi.out"
	ok_show $? "MI: -loopscope-structure, -loopscope-stack, -loopscope-loops and loop-next answer" "$TMP/mi.out"
	grep -q '^module True' "$TMP/mi.out"
	ok_show $? "MI: the module path carries the byte as \\351 (undone, it names the file)" "$TMP/mi.out"
	grep -q '^stack True' "$TMP/mi.out"
	ok $? "MI: -loopscope-stack gives frame #0's loops"
	grep -q '^params \[\]$' "$TMP/mi.out"
	ok_show $? "MI: no =cmd-param-changed (host-charset untouched)" "$TMP/mi.out"
	grep -q '^unparsable 0$' "$TMP/mi.out"
	ok $? "MI: every line parses as MI3"
fi
done_testing
