# tests/kernel-debuginfod.py - the kernel's debug files from a real
# debuginfod server (Debian's `debuginfod` on 127.0.0.1, scanning Debian's
# debug vmlinux and ext4.ko) when the local ones are hidden (--debug-dir
# of an empty directory, binaries stripped of their DWARF by objcopy):
#   1. struct of the stripped ext4.ko equals struct of the debug ext4.ko;
#   2. lookup of FUNC+OFF/SIZE in the stripped ext4.ko and vmlinux equals
#      lookup in the debug files;
#   3. decode of a vmlinux frame (--build-id: the image of that build) and
#      an [ext4 BUILDID] frame annotates both as with the local files;
#   3b. perf loops report of a synthetic recording of that kernel (no -k,
#      the local image hidden) equals the report with -k VMLINUX;
#   4. the server stopped: "server unreachable", not "not found".
# The answers are loopscope's own on the local debug files, which the
# other kernel tests check against faddr2line and llvm-symbolizer.
import os
import re
import socket
import subprocess
import time
import urllib.request
import importlib.util

_spec = importlib.util.spec_from_file_location(
    "kernel_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel-common.py"))
K = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(K)
C = K.C

C.need_tools("debuginfod", "objcopy", "readelf")
try:
    import ctypes
    ctypes.CDLL("libdebuginfod.so.1")
except OSError:
    C.skip_all("libdebuginfod.so.1 not installed")
VMLINUX = K.vmlinux_or_skip()
REL = K.release_of(VMLINUX)
EXT4 = K.module_path(VMLINUX, "fs/ext4/ext4.ko")
if not EXT4:
    C.skip_all("no ext4.ko in the debug package")
tmp = C.scratch_dir()
t = C.Tap()


def build_id(path):
    m = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE,
                                                           universal_newlines=True).stdout)
    return m.group(1)


def ls(*args, env=None, stdin=None):
    return subprocess.run([C.LOOPSCOPE] + list(args), input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env)


VID, KID = build_id(VMLINUX), build_id(EXT4)
srv, empty = os.path.join(tmp, "srv"), os.path.join(tmp, "empty")
os.makedirs(srv)
os.makedirs(empty)
os.symlink(VMLINUX, os.path.join(srv, "vmlinux"))
os.symlink(EXT4, os.path.join(srv, "ext4.ko"))
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
server = subprocess.Popen(["debuginfod", "-F", "-L", "--disable-source-scan", "-c", "1", "-p", str(port),
                           "-d", os.path.join(tmp, "db.sqlite"), "-t", "0", "-g", "0", srv],
                          stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "server.log"), "w"))
url = "http://127.0.0.1:%d" % port


def served(bid):
    try:
        # (debuginfod answers GET only; one byte of it is enough)
        with urllib.request.urlopen("%s/buildid/%s/debuginfo" % (url, bid), timeout=5) as r:
            return r.status == 200 and len(r.read(1)) == 1
    except Exception:
        return False


deadline = time.time() + 120
while time.time() < deadline and not (served(VID) and served(KID)) and server.poll() is None:
    time.sleep(1)
if not (served(VID) and served(KID)):
    server.kill()
    C.skip_all("the local debuginfod server did not index the files (%s)" %
               open(os.path.join(tmp, "server.log")).read()[-300:])

# stripped copies: the build-id stays, the DWARF goes
ko, vm = os.path.join(tmp, "ext4.ko"), os.path.join(tmp, "vmlinux")
subprocess.run(["objcopy", "--strip-debug", EXT4, ko], check=True)
subprocess.run(["objcopy", "--strip-debug", VMLINUX, vm], check=True)
env = dict(os.environ, DEBUGINFOD_URLS=url, DEBUGINFOD_CACHE_PATH=os.path.join(tmp, "dcache"))
t.ok(build_id(ko) == KID and build_id(vm) == VID, "ext4.ko and vmlinux stripped of their DWARF, build-ids kept")

# ---- 1. struct -------------------------------------------------------------------------
want = ls("struct", EXT4)
got = ls("struct", "--debug-dir", empty, ko, env=env)


def body(out):
    # the binary's own path is in the first lines; the tree is what counts
    return [l for l in out.splitlines() if EXT4 not in l and ko not in l]


t.ok(want.returncode == 0 and got.returncode == 0 and "loop" in want.stdout and body(want.stdout) == body(got.stdout),
     "struct of the stripped ext4.ko: its DWARF from debuginfod, the tree as from the debug file (%d lines)%s" %
     (len(want.stdout.splitlines()), "" if got.returncode == 0 else ": " + got.stderr[-300:]))
t.ok("no DWARF" not in got.stderr, "... and no 'no DWARF' warning")

# ---- 2. lookup -------------------------------------------------------------------------
for what, debug, stripped, names in (
        ("ext4.ko", EXT4, ko, ["ext4_readdir+0x4e6/0xb60", "ext4_map_blocks+0x12/0x5f0"]),
        ("vmlinux", VMLINUX, vm, ["tcp_write_xmit+0x29/0x1480", "ktime_get+0x1a/0xa0"])):
    want = ls("lookup", "--json", debug, *names)
    got = ls("lookup", "--json", "--debug-dir", empty, stripped, *names, env=env)
    strip = lambda out: re.sub(r'"module":"[^"]*"', "", out)
    t.ok(want.returncode == 0 and got.returncode == 0 and '"line"' in want.stdout and
         strip(want.stdout) == strip(got.stdout),
         "lookup in the stripped %s: %s as in the debug file, from debuginfod%s" %
         (what, ", ".join(names), "" if got.returncode == 0 else ": " + got.stderr[-300:]))
    if strip(want.stdout) != strip(got.stdout):
        t.diag("want: %s\ngot:  %s" % (want.stdout[:400], got.stdout[:400]))

# ---- 3. decode -------------------------------------------------------------------------
log = ("[ 1.000000] CPU: 1 PID: 4242 Comm: cp Not tainted %s #1\n"
       "[ 1.000001]  tcp_write_xmit+0x29/0x1480\n"
       "[ 1.000002]  ext4_readdir+0x4e6/0xb60 [ext4 %s]\n" % (REL, KID))
want = ls("decode", "-r", REL, stdin=log)
got = ls("decode", "--debug-dir", empty, "--build-id", VID, stdin=log, env=env)
t.ok(want.returncode == 0 and got.returncode == 0 and want.stdout.count("# ") >= 4 and want.stdout == got.stdout,
     "decode: vmlinux (--build-id) and the [ext4 BUILDID] frame from debuginfod, annotated as with the local "
     "files%s" % ("" if want.stdout == got.stdout else ": " + got.stdout[-300:] + got.stderr[-300:]))

# ---- 3b. perf loops report: the recorded kernel's image by its build-id -----------------
# a recording of kernel samples of Debian's 6.1 (tests/fixtures/perf/kernel_perfdata.py):
# without -k and with the local image hidden (LOOPSCOPE_DEBUG_DIR of an empty directory),
# the report equals the one with -k VMLINUX
PERF_LOOPS = os.environ.get("PERF_LOOPS") or os.path.join(C.TOP_BUILDDIR, "perf-loops")
syms = {s.name: s.addr for s in K.symbols(VMLINUX) if s.type == "FUNC"}
text = next(s.addr for s in K.symbols(VMLINUX) if s.name == "_text")
kdata = os.path.join(tmp, "k.data")
stacks = ["k:0x%x,0x%x" % (syms["tcp_write_xmit"] + 0x29, syms["ktime_get"] + 0x1a)] * 30
gen = subprocess.run(["python3", os.path.join(C.TOP_SRCDIR, "tests", "fixtures", "perf", "kernel_perfdata.py"), kdata,
                      REL, "0", VID, "/lib/modules/%s/kernel/fs/ext4/ext4.ko" % REL, "0xffffffffc0a00000", "00",
                      "cp", "0x%x" % text] + stacks, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     universal_newlines=True)
home = os.path.join(tmp, "home")
os.makedirs(home, exist_ok=True)


def report(*args, e=None):
    return subprocess.run([PERF_LOOPS, "report", "-i", kdata, "--stdio", "--no-pager"] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=dict(e or os.environ, HOME=home, LOOPSCOPE_DEBUG_DIR=empty))


if gen.returncode or not os.access(PERF_LOOPS, os.X_OK):
    t.ok(False, "perf loops report of a recording of 6.1: %s" % (gen.stderr[-300:] or PERF_LOOPS + " not built"))
else:
    want = report("-k", VMLINUX)
    got = report(e=env)
    t.ok(want.returncode == 0 and "tcp_write_xmit" in want.stdout and "loop at" in want.stdout and
         want.stdout == got.stdout,
         "perf loops report without -k: vmlinux by the recorded build-id from debuginfod, the tree as with -k "
         "(%d lines)%s" % (len(want.stdout.splitlines()), "" if want.stdout == got.stdout else ": " + got.stderr[-300:]))

# ---- 4. the server stopped ----------------------------------------------------------------
server.terminate()
server.wait()
env["DEBUGINFOD_CACHE_PATH"] = os.path.join(tmp, "dcache2")
if not gen.returncode:
    got = report(e=env)
    t.ok(re.search(r"no debug image of kernel %s with build-id %s was found \(.*debuginfod: server unreachable "
                   r"\(%s: Connection refused\)\)" % (re.escape(REL), VID, re.escape(url)), got.stderr),
         "perf loops report, the server stopped: the kernel's line says it is unreachable: %s" %
         got.stderr.strip().splitlines()[-1:])
got = ls("decode", "--debug-dir", empty, "--build-id", VID, stdin=log, env=env)
t.ok("server unreachable" in got.stdout + got.stderr and "Connection refused" in got.stdout + got.stderr,
     "decode, the server stopped: says it is unreachable: %s" %
     [l for l in (got.stdout + got.stderr).splitlines() if "unreachable" in l][:1])
got = ls("lookup", "--debug-dir", empty, ko, "ext4_readdir+0x4e6/0xb60", env=env)
t.ok("server unreachable" in got.stderr, "lookup, the server stopped: the 'no DWARF' warning says the server is "
     "unreachable: %s" % got.stderr.strip().splitlines()[:1])
t.done()
