#!/bin/sh
# tests/gdb-mi-line0.sh - a loop without a line (a binary without DWARF:
# loopscope finds its loops from the code, no line is known) reads the same
# in every MI command: -loopscope-structure's chain left the line out (the
# CLI's JSON has null), -loopscope-stack and -loopscope-loops wrote
# line="0" (issue 28).  Now none writes line="0", and the loop of the
# stopped frame has the same fields in -loopscope-stack as in
# -loopscope-structure's chain and `loopscope lookup --json` at its pc.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace
[ -x "$LOOPSCOPE" ] || skip_all "loopscope CLI not built"
"$GDB" -nx -batch -ex 'python gdb.MICommand' >/dev/null 2>&1 || skip_all "this GDB has no gdb.MICommand (GDB 13 and later)"
command -v gcc >/dev/null || skip_all "gcc not installed"

cat >"$TMP/p.c" <<'EOC'
volatile long s;
__attribute__((noinline)) void work(long n) { for (long i = 0; i < n; i++) s += i * 3; }
int main(void) { for (int k = 0; k < 3; k++) work(1000); return 0; }
EOC
gcc -O2 -no-pie -o "$TMP/p" "$TMP/p.c" || fail_all "the fixture builds (gcc -O2 -no-pie, no -g)"
# The loop's header (not PIE: its link-time address is where it runs).
header=$("$LOOPSCOPE" struct --no-cache --format=json "$TMP/p" 2>/dev/null | python3 -c '
import json, sys
def walk(n, proc):
    if isinstance(n, dict):
        if n.get("kind") == "proc":
            proc = n.get("name")
        if n.get("kind") == "loop" and proc == "work":
            print(n["header"]); sys.exit(0)
        for v in n.values():
            walk(v, proc)
    elif isinstance(n, list):
        for v in n:
            walk(v, proc)
walk(json.load(sys.stdin), None)')
[ -n "$header" ] || fail_all "loopscope finds work's loop without DWARF"

cat >"$TMP/mi.py" <<'EOP'
import json, subprocess, sys
sys.path.insert(0, sys.argv[1])
from mi import Mi
gdb_prog, ext, loopscope, binary, header = sys.argv[2:7]
g = Mi([gdb_prog, "-nx", "-q", "--interpreter=mi3", "-ex", "source " + ext, "--args", binary])
g.cmd("-break-insert *%s" % header)
g.run_to_stop("-exec-run")
out = {}
for name, cmd in (("stack", "-loopscope-stack 0 0"), ("structure", "-loopscope-structure"),
                  ("loops", "-loopscope-loops work")):
    cls, res = g.cmd(cmd)
    out[name] = res if cls == "done" else {"error": res}
g.close()
stack_loops = out["stack"]["frames"][0].get("loops", []) if "frames" in out["stack"] else []
chain_loops = [s for s in out["structure"].get("chain", []) if s["kind"] == "loop"]
nest = out["loops"].get("loops", [])
js = json.loads(subprocess.run([loopscope, "lookup", "--json", "--no-cache", binary, header],
                               capture_output=True, text=True).stdout)
json_loops = [s for s in js["chain"] if s["kind"] == "loop"]
print(json.dumps({"stack": stack_loops, "chain": chain_loops, "nest": nest, "json": json_loops, "raw": out}))
EOP
python3 "$TMP/mi.py" "$FIXTURES/gdb" "$GDB" "$GDBEXT" "$LOOPSCOPE" "$TMP/p" "$header" >"$TMP/out" 2>"$TMP/err" ||
	{ sed 's/^/# /' "$TMP/err" | tail -5; fail_all "the MI session ran"; }

check() { # check DESCRIPTION PYTHON-EXPRESSION over s (stack), c (chain), n (nest), j (json)
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
s, c, n, j = d["stack"], d["chain"], d["nest"], d["json"]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$TMP/out" "$2"
	ok $? "$1"
}
check "the JSON at the header: one loop, without a line (null)" 'len(j) == 1 and j[0]["line"] is None'
check "-loopscope-structure: the loop, no line field" 'len(c) == 1 and "line" not in c[0]'
check "-loopscope-stack: frame 0 in the same loop (header), no line field (was line=\"0\")" \
	'len(s) == 1 and s[0]["header"] == c[0]["header"] and "line" not in s[0]'
check "-loopscope-stack's loop has the chain's fields, with the same values" \
	'all(s[0].get(k) == c[0].get(k) for k in ("file", "line", "header", "depth", "irreducible"))'
check "-loopscope-loops work: its loop, no line field either (was line=\"0\")" \
	'len(n) == 1 and n[0]["header"] == j[0]["header"] and "line" not in n[0]'
check "no MI result of the three holds line=\"0\" or call_line=\"0\"" \
	'"\"line\": \"0\"" not in json.dumps(d["raw"]) and "\"call_line\": \"0\"" not in json.dumps(d["raw"])'
[ "$(cat "$TMP/out" | wc -c)" -gt 0 ] || sed 's/^/# /' "$TMP/err"
done_testing
