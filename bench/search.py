#!/usr/bin/env python3
# bench/search.py - `perf loops search` on a real program, against the
# plain run (its overhead) and against valgrind's callgrind with
# --collect-jumps=yes (an independent count of the loops it counted).
#
#   bench/search.py [BUILD_DIR] [--runs N] [--lzip PATH] [--keep DIR]
#
# The program: lzip 1.23 built from Debian's source package by the corpus
# (tests/corpus/corpus.py: /var/tmp/loopscope-corpus/build/lzip-gcc-O2),
# compressing (-1) 2 MB of seeded text that a feeder writes into its stdin
# 32 KB every 10 ms: an I/O-bound phase (lzip waits in read for the feeder)
# interleaved with CPU-bound ones (the encoder).  The pipeline is the
# command (sh -c 'python3 feed | lzip -1 -c >/dev/null'), so the search's
# tree also holds the feeder's sleeps.
#
# Overhead: the search's wall time (its recording run, its counting runs,
# the analysis) against the median plain run of the pipeline.
# Callgrind: the same pipeline with lzip under callgrind (--dump-instr=yes,
# --collect-jumps=yes): per counted loop of lzip, the executions of its
# header instruction (its iterations; reducible loops) and the traversals
# of its entry edges (loopscope probes' entry points: an unconditional
# edge's instruction executions, a conditional one's jcnd followed or not
# followed count), beside perf loops search's counts.
# Needs root (uprobes, sched tracepoints) and valgrind.
import argparse
import collections
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

FEED = r'''
import sys, time
data = open(sys.argv[1], 'rb').read()
out = sys.stdout.buffer
for i in range(0, len(data), 32768):
    out.write(data[i:i + 32768]); out.flush()
    time.sleep(0.01)
'''
PIE_BASE = 0x108000  # where valgrind maps a position-independent executable


def make_input(path, size=2_000_000):
    rnd = random.Random(26)
    words = [''.join(rnd.choice('etaoinshrdlucmfwyp') for _ in range(rnd.randint(2, 9))) for _ in range(3000)]
    out, n = [], 0
    while n < size:
        line = ' '.join(rnd.choice(words) for _ in range(12)) + '\n'
        out.append(line)
        n += len(line)
    with open(path, 'w') as f:
        f.write(''.join(out)[:size])


def timed(cmd):
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return time.monotonic() - t0, r


def callgrind_counts(out, binary):
    """Per instruction of BINARY (link-time address): executions, and per
    conditional branch: (followed, executed, target)."""
    ir = collections.Counter()
    jcnd = {}
    ob_ok = False
    pending = None
    skip = False  # the line after calls= is the call's inclusive cost
    names = {}
    with open(out) as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('ob='):
                v = line[3:]
                m = v.split(') ', 1)
                if v.startswith('(') and len(m) == 2:
                    names[m[0] + ')'] = m[1]
                    v = m[1]
                elif v.startswith('('):
                    v = names.get(v, v)
                ob_ok = os.path.realpath(v) == os.path.realpath(binary)
            elif line.startswith('jcnd='):
                cnt, target = line[5:].split()
                fol, exe = cnt.split('/')
                pending = (int(fol), int(exe), int(target, 16))
            elif line.startswith('jump='):
                pending = None
            elif line.startswith('calls='):
                skip = True
            elif line.startswith('0x'):
                f2 = line.split()
                addr = int(f2[0], 16)
                addr -= PIE_BASE if addr >= PIE_BASE else 0  # valgrind 3.19 reports link-time addresses
                if ob_ok and pending:
                    jcnd[addr] = pending
                if ob_ok and not skip and len(f2) >= 2:
                    ir[addr] += int(f2[1])
                pending, skip = None, False
    return ir, jcnd


def cg_entries(points, ir, jcnd):
    total = 0
    for p in points:
        if p['kind'] != 'entry':
            continue
        src = int(p['from'], 16)
        if p['how'] == 'cond':
            fol, exe, tgt = jcnd.get(src, (0, ir.get(src, 0), None))
            total += fol if p.get('taken') else exe - fol
        else:
            total += ir.get(int(p['probe'], 16), 0)
    return total


def search_loops(doc):
    seen = {}
    def walk(e):
        c = e.get('counts')
        if c and c['mode'] != 'none':
            seen[(c['binary'], c['header'])] = (c, e['focus']['label'])
        for k in e['children']:
            walk(k)
    for h in doc['hypotheses']:
        walk(h)
    return seen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('build', nargs='?', default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--lzip', default='/var/tmp/loopscope-corpus/build/lzip-gcc-O2/lzip')
    ap.add_argument('--keep')
    ap.add_argument('--callgrind-only', action='store_true', help='reuse --keep DIR\'s search.json')
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit('bench/search.py: needs root (uprobes, sched:sched_switch)')
    if not os.access(a.lzip, os.X_OK):
        sys.exit('bench/search.py: %s: not built (python3 tests/corpus/corpus.py builds it)' % a.lzip)
    perf_loops = os.path.join(a.build, 'perf-loops')
    work = a.keep or tempfile.mkdtemp(prefix='search-bench.')
    os.makedirs(work, exist_ok=True)
    inp, feed = os.path.join(work, 'input.txt'), os.path.join(work, 'feed.py')
    make_input(inp)
    with open(feed, 'w') as f:
        f.write(FEED)
    pipe = 'python3 %s %s | %s -1 -c > /dev/null' % (feed, inp, a.lzip)
    plain = statistics.median(timed(['sh', '-c', pipe])[0] for _ in range(a.runs))
    out = os.path.join(work, 'search.json')
    if not a.callgrind_only:
        t, r = timed([perf_loops, 'search', '--count', '6', '--json', '-o', out, '--', 'sh', '-c', pipe])
        if r.returncode:
            sys.exit('perf loops search failed:\n' + r.stderr)
    doc = json.load(open(out))
    print('# %s -1 on 2 MB fed 32 KB / 10 ms (sh -c "%s")' % (a.lzip, pipe))
    print('%-34s %8.3f s' % ('plain (median of %d)' % a.runs, plain))
    if not a.callgrind_only:
        print('%-34s %8.3f s  %6.2fx plain  (recording run %.3f s, counting runs %.3f s)' % (
            'perf loops search --count 6', t, t / plain, doc['seconds']['record'], doc['seconds']['count']))
    cg = os.path.join(work, 'cg.out')
    cgpipe = ('python3 %s %s | valgrind -q --tool=callgrind --collect-jumps=yes --dump-instr=yes --dump-line=no '
              '--compress-pos=no --compress-strings=no --callgrind-out-file=%s %s -1 -c > /dev/null' %
              (feed, inp, cg, a.lzip))
    tc, rc = timed(['sh', '-c', cgpipe])
    if rc.returncode:
        sys.exit('callgrind failed:\n' + rc.stderr)
    print('%-34s %8.3f s  %6.2fx plain' % ('callgrind --collect-jumps=yes', tc, tc / plain))
    ir, jcnd = callgrind_counts(cg, a.lzip)
    print('\n# loops of lzip counted by the search, against callgrind')
    print('%-10s %-30s %-6s %12s %12s %16s %16s' % ('header', 'loop', 'mode', 'entries', 'cg entries',
                                                    'iterations', 'cg header runs'))
    for (binary, header), (c, label) in sorted(search_loops(doc).items()):
        if os.path.realpath(binary) != os.path.realpath(a.lzip):
            continue
        pr = subprocess.run([os.path.join(a.build, 'loopscope'), 'probes', '--json', a.lzip, header],
                            stdout=subprocess.PIPE, universal_newlines=True)
        points = json.loads(pr.stdout)['loops'][0]['points']
        it = c.get('iterations')
        its = str(it) if it is not None else '~%.0f+-%.0f' % (c.get('iterations_estimate', -1),
                                                              c.get('iterations_stderr', 0))
        print('%-10s %-30s %-6s %12s %12d %16s %16d' % (header, label[:30], c['mode'], c.get('entries'),
                                                       cg_entries(points, ir, jcnd), its,
                                                       ir.get(int(header, 16), 0)))


if __name__ == '__main__':
    main()
