#!/usr/bin/env python3
"""perf-annotate.py - the oracles of tests/perf-annotate.sh and
tests/perf-browser.sh, on the text of `perf loops annotate --stdio`:

  counts BIN SCRIPT ANNOT PROC    per-line samples against `perf script -G -F
                                  ip,sym,symoff,dso` samples of BIN mapped
                                  through `loopscope lookup` (leaf in PROC)
  brackets STRUCT ANNOT PROC      each loop of PROC in `loopscope struct
                                  --format=json` has its summary row, and the
                                  margin of every source line has one bracket
                                  per loop of that file spanning the line
  asm STRUCT ANNOT PROC           (--asm) every loop head, back edge and exit
                                  that the struct JSON lists is marked
  row ANNOT FILE LINE             the Percent and Samples of a source line

Exit 0 when the check holds; else 1, with what differs on stdout ("# ...").
"""
import json
import os
import re
import subprocess
import sys

CELL = 18  # view-annotate.c: "%8.2f%% %8llu" per event


def nevents(lines):
    """view-annotate.c's header: a line "# event 'NAME': ..." per event"""
    return max(1, sum(1 for l in lines if l.startswith("# event '")))


def rows(path):
    """(kind, file, line, samples, margin, text) of each row."""
    lines = open(path, errors="replace").read().splitlines()
    nev = nevents(lines)
    out, cur = [], None
    for l in lines:
        if l.startswith("## "):
            cur = l[3:]
            continue
        if l.startswith("#") or not l.strip():
            continue
        cells, rest = l[: CELL * nev], l[CELL * nev:]
        m = re.match(r"\s+([\d.]+)%\s+(\d+)", cells)
        samples = int(m.group(2)) if m else None
        pct = m.group(1) if m else None
        m = re.match(r"  ([ \d]{5}) ([ |`,]*): (.*)$", rest)
        if m and m.group(1).strip():
            out.append(("src", cur, int(m.group(1)), samples, m.group(2), m.group(3), pct))
            continue
        m = re.match(r"        ([ |`,-]*)-- (loop at .*)$", rest)
        if m:
            out.append(("loop", cur, 0, samples, m.group(1), m.group(2), pct))
            continue
        m = re.match(r"        ([ |`,]*): (.*)$", rest)
        if m:
            out.append(("other", cur, 0, samples, m.group(1), m.group(2), pct))
    return out


def load_json_stream(text):
    dec, i, out = json.JSONDecoder(), 0, []
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        obj, i = dec.raw_decode(text, i)
        out.append(obj)
    return out


def fail(msg):
    print("# " + msg)
    sys.exit(1)


def counts(binary, script, annot, proc):
    syms = {}
    for l in subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True).stdout.splitlines():
        p = l.split()
        if len(p) == 3:
            syms.setdefault(p[2], int(p[0], 16))
    addrs = []
    for l in open(script, errors="replace"):
        m = re.match(r"\s*[0-9a-f]+\s+(\S+)\+0x([0-9a-f]+)\s+\((.*)\)\s*$", l)
        if m and os.path.realpath(m.group(3)) == os.path.realpath(binary) and m.group(1) in syms:
            addrs.append(syms[m.group(1)] + int(m.group(2), 16))
    want = {}
    if addrs:
        uniq = sorted(set(addrs))
        r = subprocess.run([os.environ["LOOPSCOPE"], "lookup", "--json", binary] + ["%#x" % a for a in uniq],
                           capture_output=True, text=True)
        where = {}
        for o in load_json_stream(r.stdout):
            ch = o.get("chain") or []
            if ch and ch[0].get("name") == proc and ch[-1].get("kind") == "stmt":
                where[int(o["addr"], 16)] = (ch[-1]["file"], ch[-1]["line"])
        for a in addrs:
            if a in where:
                want[where[a]] = want.get(where[a], 0) + 1
    got = {}
    for kind, f, line, s, _, _, _ in rows(annot):
        if kind == "src" and s is not None:
            got[(f, line)] = s
    bad = [(k, got.get(k), want.get(k, 0)) for k in set(got) | set(want) if got.get(k, 0) != want.get(k, 0)]
    if bad or not want:
        fail("per-line samples differ (file, line, annotate, perf script): %s" % sorted(bad, key=str)[:10])
    print("# %d lines, %d samples in %s agree with perf script" % (len(want), sum(want.values()), proc))


def proc_scope(struct, proc):
    d = json.load(open(struct))
    def find(s):
        if s.get("kind") == "proc" and s.get("name") == proc:
            return s
        for c in s.get("children", []):
            r = find(c)
            if r:
                return r
    p = find(d)
    if not p:
        fail("no proc %s in the struct JSON" % proc)
    return p


def loops_of(p):
    """Each loop of the proc: (file, line, lo, hi, header, backedges, exits);
    lo-hi: the lines of its statements in its own file, its call sites and
    its own line (inlined bodies are other spans)."""
    out = []
    def lines_in(s, f, acc):
        for c in s.get("children", []):
            k = c.get("kind")
            if k == "stmt" and c.get("file") == f and c.get("line"):
                acc.append(c["line"])
            elif k == "loop":
                if c.get("file") == f and c.get("line"):
                    acc.append(c["line"])
                lines_in(c, f, acc)
            elif k == "inline" and c.get("call_file", f) == f and c.get("call_line"):
                acc.append(c["call_line"])
    def walk(s):
        for c in s.get("children", []):
            if c.get("kind") == "loop":
                acc = [c["line"]] if c.get("line") else []
                lines_in(c, c.get("file"), acc)
                out.append((c.get("file"), c.get("line"), min(acc) if acc else 0, max(acc) if acc else 0,
                            int(c["header"], 16), [(int(a, 16), int(b, 16)) for a, b in c.get("backedges", [])],
                            [(int(a, 16), int(b, 16)) for a, b in c.get("exits", [])]))
            walk(c)
    walk(p)
    return out


def brackets(struct, annot, proc):
    loops = loops_of(proc_scope(struct, proc))
    if not loops:
        fail("%s has no loops in the struct JSON" % proc)
    rs = rows(annot)
    summaries = [t for k, _, _, _, _, t, _ in rs if k == "loop"]
    for f, line, lo, hi, *_ in loops:
        key = "loop at %s:%d, lines %d-%d," % (os.path.basename(f), line, lo, hi)
        n = sum(1 for t in summaries if t.startswith(key))
        if n < 1:
            fail("no summary row '%s'" % key)
    if len(summaries) != len(loops):
        fail("%d loop rows, %d loops in the struct JSON" % (len(summaries), len(loops)))
    nsrc = 0
    for k, f, line, _, margin, _, _ in rs:
        if k != "src":
            continue
        nsrc += 1
        want = sum(1 for lf, _, lo, hi, *_ in loops if lf == f and lo <= line <= hi)
        got = sum(1 for c in margin if c in "|`")
        if got != want:
            fail("%s:%d: %d brackets in the margin '%s', %d loops span it" % (f, line, got, margin, want))
        ends = sum(1 for lf, _, lo, hi, *_ in loops if lf == f and hi == line)
        if margin.count("`") != ends:
            fail("%s:%d: %d bracket ends, %d loops end there" % (f, line, margin.count("`"), ends))
    print("# %d loops, %d source lines: brackets as in the struct JSON" % (len(loops), nsrc))


def asm(struct, annot, proc):
    loops = loops_of(proc_scope(struct, proc))
    marks = {}
    for k, _, _, _, _, t, _ in rows(annot):
        m = re.match(r"\s*([0-9a-f]+):\s", t)
        if k == "other" and m:
            marks[int(m.group(1), 16)] = t
    n = 0
    for f, line, lo, hi, head, back, exits in loops:
        name = "loop at %s:%d" % (os.path.basename(f), line)
        if "head of " + name not in marks.get(head, ""):
            fail("%#x: no 'head of %s' mark" % (head, name))
        for a, b in back:
            if "back edge to %#x, %s" % (b, name) not in marks.get(a, ""):
                fail("%#x: no back edge mark of %s" % (a, name))
        for a, b in exits:
            if "exit to %#x from %s" % (b, name) not in marks.get(a, ""):
                fail("%#x: no exit mark of %s (to %#x)" % (a, name, b))
        n += 1 + len(back) + len(exits)
    print("# %d loops: %d heads, back edges and exits marked" % (len(loops), n))


def row(annot, f, line):
    for k, rf, l, s, _, _, pct in rows(annot):
        if k == "src" and os.path.basename(rf or "") == f and l == int(line):
            print(pct, s)
            return
    print("none")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"counts": counts, "brackets": brackets, "asm": asm, "row": row}[cmd](*args)
