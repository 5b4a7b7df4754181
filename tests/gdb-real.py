#!/usr/bin/env python3
# gdb-real.py - the GDB commands on a real program: lzip (Debian's source,
# C++ with exceptions), built -O2 -g PIE by gcc and clang through the corpus
# (tests/corpus/corpus.py; slow tier: it fetches and builds the source the
# first time).  On it:
#   - break-loop encoder_base.h:243, a loop inlined 61 times by gcc: one
#     breakpoint per copy, as many as `loopscope struct` finds, each stop in
#     that loop (issue 27: 1 of 61);
#   - loop-finish left by a C++ exception (a write past `ulimit -f`), and
#     every *stopped record of loop-next and loop-finish under MI complete,
#     parsed by the strict MI3 parser;
#   - gdb -p on a running lzip: bt with loop lines, structure, info loops,
#     loop-next in encode_member's frame, detach, SIGTERM: no internal error.
# Prints TAP.
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "corpus"))
sys.path.insert(0, os.path.join(HERE, "fixtures", "gdb"))
import corpus  # noqa: E402
from mi3 import Mi  # noqa: E402

top_builddir = os.environ.get("top_builddir", os.path.dirname(HERE))
GDB = os.environ.get("GDB", "gdb")
EXT = os.path.join(top_builddir, "gdb-ext", "loopscope.py")
LOOPSCOPE = os.environ.get("LOOPSCOPE", os.path.join(top_builddir, "loopscope"))
n = 0


def ok(cond, what, detail=None):
    global n
    n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, what))
    if not cond and detail:
        for line in str(detail).splitlines()[-30:]:
            print("# " + line)


def skip_all(why):
    print("1..0 # SKIP %s" % why)
    sys.exit(0)


def gdb_batch(program, commands, args=(), env=None, timeout=600):
    argv = [GDB, "-nx", "-batch", "-ex", "source " + EXT, "-ex", "set width 0"]
    for c in commands:
        argv += ["-ex", c]
    argv += ["--args", program] + list(args)
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, env=env,
                       universal_newlines=True, errors="replace")
    return r.stdout


if not os.path.exists(os.path.join(top_builddir, "gdb-ext", ".libs", "_loopscope.so")):
    skip_all("the GDB extension module was not built")
LZIP = corpus.Program("lzip", "lzip", ["*.cc"], lang="c++", cflags=['-DPROGVERSION="1.23"'],
                      kind="compressor, C++ exceptions")
tmp = tempfile.mkdtemp(prefix="ls-gdbreal.")
os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
# Input: text that compresses, big enough that ulimit -f 400 (blocks) cuts the output.
data = os.path.join(tmp, "big.txt")
with open(data, "w") as f:
    x = 12345
    for i in range(400000):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        f.write('{"id": %d, "name": "item%d", "value": %d}\n' % (i, x % 1000, x))
limitf = os.path.join(tmp, "limitf")
with open(limitf, "w") as f:
    f.write('#!/bin/sh\nulimit -f 400\ntrap "" XFSZ\nexec "$@"\n')
os.chmod(limitf, 0o755)
builds = []
for cc in ("gcc", "clang"):
    b = corpus.build(LZIP, cc, "-O2")
    if b is not None:
        builds.append((cc, b))
if not builds:
    skip_all("lzip's Debian source is not there (make check-slow-setup fetches it; no network, no deb-src?)")
src = builds[0][1].srcdir
ENC_LOOP = 243  # encoder_base.h: Range_encoder::shift_low's loop, inlined all over
with open(os.path.join(src, "encoder_base.h")) as f:
    if "for( ; ff_count > 0; --ff_count )" not in f.read().splitlines()[ENC_LOOP - 1]:
        skip_all("lzip's encoder_base.h:%d is not shift_low's loop in this version" % ENC_LOOP)

for cc, b in builds:
    prog = b.path
    # The oracle: the loops loopscope struct finds at that line.
    r = subprocess.run([LOOPSCOPE, "struct", "--format=json", prog], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, universal_newlines=True)
    import json

    def walk(node):
        if node["kind"] == "loop" and node.get("line") == ENC_LOOP and (node.get("file") or "").endswith(
                "encoder_base.h"):
            yield node
        for c in node.get("children", []):
            yield from walk(c)
    want = len(list(walk(json.loads(r.stdout)))) if r.returncode == 0 else None
    out = gdb_batch(prog, ["break-loop encoder_base.h:%d" % ENC_LOOP, "python\n"
                           "hits = set()\n"
                           "gdb.events.stop.connect(lambda ev: hits.update(b.number for b in getattr(ev, 'breakpoints', [])))\n"
                           "gdb.execute('run', to_string=True)\n"
                           "bad = 0\n"
                           "for k in range(40):\n"
                           "    if not gdb.selected_inferior().pid: break\n"
                           "    t = gdb.execute('structure', to_string=True)\n"
                           "    bad += ('encoder_base.h:%d  header' not in t)\n"
                           "    gdb.execute('continue', to_string=True)\n"
                           "print('distinct=%%d bad=%%d' %% (len(hits), bad))\n"
                           "end" % ENC_LOOP, "kill"], ["-c", data], timeout=900)
    head = "Breakpoint%s 1%s: header of the loop at encoder_base.h:%d, in each of its %s copies" % (
        "s" if want and want > 1 else "", "-%d" % want if want and want > 1 else "", ENC_LOOP, want)
    ok(want and (head in out if want > 1 else "Breakpoint 1: header of the loop at encoder_base.h" in out),
       "lzip %s: break-loop encoder_base.h:%d sets one breakpoint per copy (%s, as loopscope struct finds)"
       % (cc, ENC_LOOP, want), out[-2000:])
    ok("bad=0" in out and "distinct=" in out and int(out.split("distinct=")[1].split()[0]) >= 1,
       "lzip %s: ... the program stops there, each time in that loop" % cc, out[-1500:])

    # A C++ exception out of encode_member's loop: write past ulimit -f.
    out = gdb_batch(prog, ["set exec-wrapper " + limitf, "handle SIGXFSZ nostop noprint pass",
                           "break encoder.cc:508", "run -c %s > %s" % (data, os.path.join(tmp, "out.lz")),
                           "delete", "loop-finish", "bt 3", "kill"], timeout=600)
    ok("by a C++ exception, caught in " in out and "left loop at encoder.cc:" in out,
       "lzip %s: loop-finish in encode_member, left by a C++ exception (write past ulimit -f)" % cc, out[-2500:])

    # MI: every *stopped of loop-next and loop-finish complete.
    log = open(os.path.join(tmp, "mi-%s.log" % cc), "w")
    mi = Mi([GDB, "-nx", "-q", "--interpreter=mi3", "-ex", "source " + EXT, prog], log)
    mi.cmd("-exec-arguments -c %s" % data)
    mi.cmd("-inferior-tty-set /dev/null")
    mi.cmd("-break-insert encoder.cc:508")
    mi.cmd("-exec-run", wait_stop=True, timeout=300)
    mi.cmd("-break-delete")
    stops = []
    for c in ('-interpreter-exec console "loop-next"', '-interpreter-exec console "loop-next 3"',
              '-interpreter-exec console "loop-finish"'):
        r, recs = mi.cmd(c, wait_stop=True, timeout=300)
        recs += mi.drain(0.5)
        stops += [x for x in recs if x[0] == "exec" and x[2] == "stopped"]
    incomplete = [s[3] for s in stops if not ("reason" in s[3] and "thread-id" in s[3]
                                              and isinstance(s[3].get("frame"), dict))]
    ok(len(stops) >= 3 and not incomplete and not mi.bad,
       "lzip %s: MI: %d *stopped records of loop-next and loop-finish, each with reason, frame, thread-id; "
       "every line MI3" % (cc, len(stops)), "%r\n%r" % (incomplete[:3], mi.bad[:3]))
    mi.close()
    log.close()

# gdb -p on a running lzip, as an IDE attaches and ends GDB.
cc, b = builds[0]
big = os.path.join(tmp, "bigger.txt")
with open(big, "w") as f:
    for i in range(8):
        f.write(open(data).read())
p = subprocess.Popen([b.path, "-9", "-c", big], stdout=subprocess.DEVNULL)
time.sleep(1.0)
g = subprocess.Popen([GDB, "-nx", "-q", "-ex", "source " + EXT, "-p", str(p.pid)], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
g.stdin.write(b"""set pagination off
set width 0
bt
frame function LZ_encoder::encode_member
structure
info loops
loop-next
detach
echo @@done\\n
""")
g.stdin.flush()
out = b""
end = time.time() + 300
while b"@@done" not in out and time.time() < end:
    chunk = os.read(g.stdout.fileno(), 65536)
    if not chunk:
        break
    out += chunk
g.send_signal(signal.SIGTERM)
try:
    rest = g.communicate(timeout=60)[0]
except subprocess.TimeoutExpired:
    g.kill()
    rest = g.communicate()[0]
text = (out + rest).decode("utf-8", "replace")
p.kill()
p.wait()
ok("    in loop (depth=" in text, "lzip %s attached: bt shows loop lines" % cc, text[-2500:])
ok("  proc    LZ_encoder::encode_member" in text and "loops in LZ_encoder::encode_member" in text,
   "lzip %s attached: structure and info loops in encode_member's frame" % cc, text[-2500:])
ok("at the header of the loop at " in text or "left loop at " in text,
   "lzip %s attached: loop-next in encode_member's frame" % cc, text[-2500:])
ok("detached]" in text and "internal-error" not in text and "internal problem" not in text
   and "Fatal signal" not in text, "lzip %s attached: detach, SIGTERM: no internal error" % cc, text[-1500:])
import shutil
shutil.rmtree(tmp, ignore_errors=True)
print("1..%d" % n)
