# tests/line0.py - line 0 is never shown as a line, in any front end.
#
# Line 0 in DWARF's line table is code the compiler made for no statement;
# clang -O2 gives it to loop bookkeeping and set-up (tests/fixtures/line0.c).
# Which addresses are at line 0 comes from llvm-symbolizer, not loopscope.
# At those addresses, and everywhere else:
#   lookup --json   no "line": 0 or "call_line": 0 in any chain (null is "no
#                   line"); a line-0 address's statement is either the
#                   "[no line]" statement (line null) or, right in a loop,
#                   that loop's own statement (its line);
#   lookup (text), struct (text)   no FILE:0 or ??:0, "[no line]" instead;
#   perf loops report, every view (tree, flat, loops, folded, json) of a real
#                   `perf record -e cpu-clock` run: the same; and the samples
#                   perf took at line-0 addresses are all counted, under
#                   "[no line]" or their loop's statement;
#   GDB             structure at line-0 addresses, info loops, and bt with
#                   the program stopped at a line-0 instruction of the loop.
# gcc gives this fixture no line-0 code; it runs through the same checks
# (nothing may print :0) without the line-0 specific ones.
import importlib.util
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("core_common", os.path.join(HERE, "core-common.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)

LLVM_SYMBOLIZER = next((t for t in ("llvm-symbolizer", "llvm-symbolizer-14") if C.shutil.which(t)), None)
PERF_LOOPS = os.environ.get("PERF_LOOPS") or os.path.join(C.TOP_BUILDDIR, "perf-loops")
GDB = os.environ.get("GDB", "gdb")
GDBEXT = os.path.join(C.TOP_BUILDDIR, "gdb-ext", "loopscope.py")
if not os.path.exists(GDBEXT):
    GDBEXT = os.path.join(C.TOP_SRCDIR, "gdb-ext", "loopscope.py")

# FILE:0 or ??:0 as a location ("0x..." addresses and ":0)" of counts are no
# locations: a location's file part ends in a name character or "??").
SHOWN_ZERO = re.compile(r"(\?\?|[\w.+-]\.[A-Za-z]+):0(?![\dx])")
JSON_ZERO = re.compile(r'"(call_)?line":\s*0(?!\d)')


def line0_addresses(binary, addrs):
    """{addr: frames} of the addresses llvm-symbolizer puts at line 0,
    inside a function with debug information."""
    inp = "".join("0x%x\n" % a for a in addrs)
    r = subprocess.run([LLVM_SYMBOLIZER, "--inlining", "--output-style=JSON", "-e", binary], input=inp,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    out = {}
    for line in r.stdout.splitlines():
        o = json.loads(line)
        frames = o.get("Symbol") or []
        if frames and frames[0].get("FileName") and frames[0].get("Line") == 0:
            out[int(o["Address"], 16)] = frames
    return out


def stmt_verdict(chain):
    """"no-line" or "loop-statement" for a good line-0 chain, else None."""
    if not chain or chain[-1].get("kind") != "stmt":
        return None
    stmt = chain[-1]
    if stmt.get("line") is None:
        return "no-line"
    parent = chain[-2] if len(chain) >= 2 else {}
    if parent.get("kind") == "loop" and stmt.get("line") == parent.get("line") and \
            stmt.get("file") == parent.get("file"):
        return "loop-statement"
    return None


def check_cli(tap, tag, binary, addrs, zero):
    got, proc = C.lookup(binary, addrs)
    raw = proc.stdout
    tap.ok(proc.returncode == 0 and not JSON_ZERO.search(raw),
           "%s: lookup --json on all %d addresses has no \"line\": 0" % (tag, len(addrs)))
    for m in JSON_ZERO.finditer(raw):
        tap.diag("  " + raw[max(0, m.start() - 200):m.end()])
        break
    if zero:
        verdicts = {a: stmt_verdict(got.get(a, {}).get("chain")) for a in zero}
        bad = [a for a, v in verdicts.items() if v is None]
        kinds = sorted({v for v in verdicts.values() if v})
        tap.ok(not bad, "%s: the %d line-0 addresses go to [no line] or their loop's statement (%s)"
               % (tag, len(zero), ", ".join(kinds)))
        for a in bad[:3]:
            tap.diag("  0x%x: %s" % (a, json.dumps(got.get(a, {}).get("chain"))))
        text = C.run([C.LOOPSCOPE, "lookup", binary] + ["0x%x" % a for a in sorted(zero)])
        tap.ok(text.returncode == 0 and not SHOWN_ZERO.search(text.stdout) and
               ("[no line]" in text.stdout) == ("no-line" in kinds),
               "%s: lookup (text) at the line-0 addresses prints no FILE:0, and [no line] where it is" % tag)
        if SHOWN_ZERO.search(text.stdout):
            tap.diag(text.stdout[:600])
    st = C.run([C.LOOPSCOPE, "struct", "--no-cache", binary])
    tap.ok(st.returncode == 0 and not SHOWN_ZERO.search(st.stdout) and "[no line]" in st.stdout,
           "%s: struct (text) prints no FILE:0 or ??:0; [no line] for the code with no line" % tag)
    if SHOWN_ZERO.search(st.stdout):
        m = SHOWN_ZERO.search(st.stdout)
        tap.diag("  ..." + st.stdout[max(0, m.start() - 120):m.end()])


def perf_works(tmp):
    if not C.shutil.which("perf") or not os.access(PERF_LOOPS, os.X_OK):
        return False
    r = C.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", os.path.join(tmp, "probe.data"), "true"])
    return r.returncode == 0


def sample_ips(data, binary):
    """Link-time addresses of the samples perf took in BINARY (the leaf
    frame of each sample, as SYMBOL+OFFSET, placed with the symbol table)."""
    syms = {name: lo for lo, hi, name in C.function_ranges(binary)}
    r = C.run(["perf", "script", "-i", data, "-F", "ip,sym,symoff,dso"])
    ips = []
    leaf = True
    for line in r.stdout.splitlines():
        if not line.strip():
            leaf = True
            continue
        if not leaf:
            continue
        leaf = False
        m = re.match(r"\s*[0-9a-f]+ (\S+)\+0x([0-9a-f]+) \((.*)\)$", line)
        if m and m.group(3) == binary and m.group(1) in syms:
            ips.append(syms[m.group(1)] + int(m.group(2), 16))
    return ips


def check_perf(tap, tag, binary, zero, tmp):
    data = os.path.join(tmp, tag.replace(" ", "_") + ".data")
    r = C.run(["perf", "record", "-q", "-e", "cpu-clock", "--call-graph=fp", "-o", data, binary, "300000000", "1"])
    if r.returncode != 0:
        tap.ok(False, "%s: perf record" % tag)
        tap.diag(r.stderr[-500:])
        return
    for view in ("tree", "flat", "loops", "folded", "json"):
        out = C.run([PERF_LOOPS, "report", "-i", data, "--format=" + view])
        bad = JSON_ZERO.search(out.stdout) if view == "json" else SHOWN_ZERO.search(out.stdout)
        tap.ok(out.returncode == 0 and out.stdout and not bad,
               "%s: perf loops report --format=%s shows no line 0" % (tag, view))
        if bad:
            tap.diag("  ..." + out.stdout[max(0, bad.start() - 200):bad.end()])
    if not zero:
        return
    ips = sample_ips(data, binary)
    at_zero = sum(1 for ip in ips if ip in zero)
    tree = json.loads(C.run([PERF_LOOPS, "report", "-i", data, "--format=json"]).stdout)
    counted = 0

    def walk(node, parent):
        nonlocal counted
        if node.get("kind") == "stmt" and (node.get("line") is None or (
                parent.get("kind") == "loop" and node.get("line") == parent.get("line"))):
            counted += node["self"][0]
        for c in node.get("children", ()):
            walk(c, node)
    walk(tree["tree"], {})
    if at_zero == 0:
        tap.skip("%s: perf took no sample at a line-0 address (%d samples in the binary)" % (tag, len(ips)))
        return
    tap.ok(counted >= at_zero, "%s: the %d samples at line-0 addresses (%.1f%% of the binary's %d) are under "
           "[no line] or their loop's statement (%d there)" % (tag, at_zero, 100.0 * at_zero / len(ips), len(ips),
                                                               counted))


def gdb_run(binary, *cmds):
    args = [GDB, "-nx", "-batch", "-ex", "source " + GDBEXT]
    for c in cmds:
        args += ["-ex", c]
    return C.run(args + ["--args", binary, "1000000", "3"])


def check_gdb(tap, tag, binary, zero):
    if not C.shutil.which(GDB):
        tap.skip("%s: gdb not installed" % tag)
        return
    r = gdb_run(binary, "info loops hot", *["structure *0x%x" % a for a in sorted(zero)[:6]])
    out = r.stdout + r.stderr
    tap.ok("loop at line0.c:" in out and not SHOWN_ZERO.search(out) and
           (not zero or "stmt    " in out), "%s: GDB info loops and structure at line-0 addresses show no "
           "FILE:0" % tag)
    if SHOWN_ZERO.search(out) or "loop at line0.c:" not in out:
        tap.diag(out[:1500])
    if not zero:
        return
    # Stopped at a line-0 instruction inside a loop: bt names the loop.
    procs = {name: lo for lo, hi, name in C.function_ranges(binary)}
    got, _ = C.lookup(binary, sorted(zero))
    in_loop = [a for a in sorted(zero) if any(e.get("kind") == "loop" for e in got.get(a, {}).get("chain", []))
               and a >= procs.get("hot", 1 << 62)]
    if not in_loop:
        tap.skip("%s: no line-0 instruction inside a loop of hot" % tag)
        return
    a = in_loop[0]
    r = gdb_run(binary, "break *hot+%d" % (a - procs["hot"]), "run", "bt 1", "structure")
    out = r.stdout + r.stderr
    ok = re.search(r"^    in loop \(depth=\d+, header=0x[0-9a-f]+.*\) at \S*line0\.c:\d+$", out, re.M) and not SHOWN_ZERO.search(out) and \
        re.search(r"stmt    (\[no line\]|line0\.c:\d+)", out)
    tap.ok(bool(ok), "%s: stopped at line-0 address 0x%x, bt shows the loop and structure the statement" % (tag, a))
    if not ok:
        tap.diag(out[-1500:])


def main():
    if not LLVM_SYMBOLIZER:
        C.skip_all("llvm-symbolizer not installed")
    C.need_tools("objdump", "readelf")
    tmp = C.scratch_dir()
    tap = C.Tap()
    have_perf = perf_works(tmp)
    for cc in ("clang", "gcc"):
        if not C.shutil.which(cc):
            tap.skip("%s not installed" % cc)
            continue
        tag = "%s -O2 line0.c" % cc
        binary = os.path.join(tmp, "line0-" + cc)
        err = C.compile_fixture(cc, "-O2", "line0.c", binary, ["-fno-omit-frame-pointer"])
        if err:
            tap.ok(False, tag + ": compile")
            tap.diag(err)
            continue
        addrs = C.instruction_addresses(binary)
        zero = line0_addresses(binary, addrs)
        tap.diag("%s: %d of %d addresses at line 0 (llvm-symbolizer)" % (tag, len(zero), len(addrs)))
        if cc == "clang":
            tap.ok(len(zero) > 0, "%s: clang gives some code line 0 (else this test tests nothing)" % tag)
        check_cli(tap, tag, binary, addrs, zero)
        if have_perf:
            check_perf(tap, tag, binary, zero, tmp)
        else:
            tap.skip("%s: perf record does not work here" % tag)
        check_gdb(tap, tag, binary, zero)
    tap.done()


if __name__ == "__main__":
    main()
