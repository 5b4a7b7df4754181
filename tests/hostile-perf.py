#!/usr/bin/env python3
"""hostile-perf.py - writes perf.data files built to cost a reader time or
memory (tests/perf-hostile.sh and bench/growth.sh use them).

  hostile-perf.py auxtrace OUT [HIDDEN] [CUT]   10 samples around an AUXTRACE
                                        record whose payload hides HIDDEN samples
                                        (default 7); CUT: the file ends in it
  hostile-perf.py forkchain OUT [N] [NMAPS]  NMAPS mmaps (default 2000), then a
                                        chain of N forks (default 10000)
  hostile-perf.py forkremap OUT          forked processes that map over
                                        their parent's maps (copy on write)
  hostile-perf.py ids OUT [NATTRS]      NATTRS events (default 4096) whose id
                                        sections all point at one 1 MiB range
  hostile-perf.py zstd OUT [N] [MIB]    N COMPRESSED records (default 20), each
                                        inflating to MIB MiB (default 60) of
                                        records nobody keeps
  hostile-perf.py events OUT [NEV] [N]  NEV events (default 4096) and N samples
                                        (default 50000) on distinct kernel
                                        addresses: nodes x events costs
  hostile-perf.py mmaps OUT N           N MMAP records of one process, in
                                        random order, then one sample per map
  hostile-perf.py plain OUT [N]         the legitimate baseline: one event, N
                                        samples on distinct kernel addresses
  hostile-perf.py deep OUT [DEPTH]      one sample whose call chain is DEPTH
                                        (default 600) kernel frames

Every file is file-mode perf.data (PERFILE2), little-endian, with
sample_type IDENTIFIER|IP|TID|TIME|PERIOD|CALLCHAIN, so that perf itself
reads the mmaps one too.
"""
import random
import struct
import subprocess
import sys

SAMPLE_IDENTIFIER, SAMPLE_IP, SAMPLE_TID, SAMPLE_TIME = 1 << 16, 1, 2, 4
SAMPLE_PERIOD, SAMPLE_CALLCHAIN = 1 << 8, 1 << 5
SAMPLE_TYPE = SAMPLE_IDENTIFIER | SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME | SAMPLE_PERIOD | SAMPLE_CALLCHAIN
CONTEXT_KERNEL = (1 << 64) - 128
ATTR_SIZE = 128
FEAT_OSRELEASE = 4


def attr(config=0):
    """perf_event_attr (128 bytes): software cpu-clock."""
    flags = (1 << 18)  # sample_id_all
    a = struct.pack("<IIQQQQQ", 1, ATTR_SIZE, config, 4000, SAMPLE_TYPE, 0, flags)
    return a + b"\0" * (ATTR_SIZE - len(a))


def record(rtype, body, misc=0):
    body += b"\0" * (-len(body) % 8)
    return struct.pack("<IHH", rtype, misc, 8 + len(body)) + body


def sample(ident, ip, pid, time, chain, misc=1):
    body = struct.pack("<QQIIQQQ", ident, ip, pid, pid, time, 1, len(chain))
    body += b"".join(struct.pack("<Q", x) for x in chain)
    return record(9, body, misc)


def sample_id(ident, pid, time):
    """sample_id_all trailer for SAMPLE_TYPE: TID, TIME, IDENTIFIER."""
    return struct.pack("<IIQQ", pid, pid, time, ident)


def mmap(pid, start, length, pgoff, name, time, ident):
    body = struct.pack("<IIQQQ", pid, pid, start, length, pgoff) + name.encode() + b"\0"
    body += b"\0" * (-len(body) % 8)
    return record(1, body + sample_id(ident, pid, time), misc=2)


def write_file(out, attrs_with_ids, data, features=None, extra=b""):
    """attrs_with_ids: [(attr bytes, ids offset or None, ids size)]; ids
    offsets None mean 'right after the attrs' (filled in here)."""
    features = features or {}
    hdr_size = 104
    attrs_off = hdr_size
    file_attr_size = ATTR_SIZE + 16
    attrs_size = file_attr_size * len(attrs_with_ids)
    extra_off = attrs_off + attrs_size
    data_off = extra_off + len(extra)
    data_off += -data_off % 8
    feat_bits = bytearray(32)
    for f in features:
        feat_bits[f // 8] |= 1 << (f % 8)
    attrs = b""
    for a, ids_off, ids_size in attrs_with_ids:
        attrs += a + struct.pack("<QQ", ids_off if ids_off is not None else extra_off, ids_size)
    head = b"PERFILE2" + struct.pack("<QQQQQQQQ", hdr_size, file_attr_size, attrs_off, attrs_size,
                                     data_off, len(data), 0, 0) + bytes(feat_bits)
    feat_sections = b""
    feat_data = b""
    feat_off = data_off + len(data) + 16 * len(features)
    for f in sorted(features):
        feat_sections += struct.pack("<QQ", feat_off + len(feat_data), len(features[f]))
        feat_data += features[f]
    with open(out, "wb") as fh:
        fh.write(head + attrs + extra)
        fh.write(b"\0" * (data_off - (hdr_size + attrs_size + len(extra))))
        fh.write(data + feat_sections + feat_data)


def perf_string(s):
    b = s.encode() + b"\0"
    b += b"\0" * (-len(b) % 64)
    return struct.pack("<I", len(b)) + b


def osrelease():
    # Not this machine's kernel: kallsyms is not used, kernel frames are named
    # by address, so every distinct address is a node.
    return {FEAT_OSRELEASE: perf_string("0.0.0-hostile")}


def kernel_samples(nev, n, seed=1):
    rnd = random.Random(seed)
    data = []
    for i in range(n):
        ev = i % nev
        base = 0xffffffff81000000 + rnd.randrange(1 << 20) * 16
        chain = [CONTEXT_KERNEL, base, base + 0x100000 + (i % 97) * 16]
        data.append(sample(1000 + ev, base, 0, 1000 + i, chain))
    return b"".join(data)


def cmd_ids(out, nattrs=4096):
    # One 1 MiB id range shared by every event: 131072 ids claimed nattrs times.
    ids = b"".join(struct.pack("<Q", 1000 + i) for i in range(1 << 17))
    attrs = [(attr(), None, len(ids)) for _ in range(nattrs)]
    data = sample(1000, 0xffffffff81000000, 0, 1, [CONTEXT_KERNEL, 0xffffffff81000000])
    write_file(out, attrs, data, osrelease(), extra=ids)


def zstd_frame(raw):
    p = subprocess.run(["zstd", "-q", "-19", "-c"], input=raw, stdout=subprocess.PIPE, check=True)
    return p.stdout


def cmd_zstd(out, n=20, mib=60):
    # MIB MiB of records of a type no reader keeps (99), as one zstd frame.
    junk = record(99, b"\0" * (65528 - 8))
    count = (mib << 20) // len(junk)
    frame = zstd_frame(junk * count)
    if len(frame) > 65000:
        raise SystemExit("zstd frame too large for one record: %d" % len(frame))
    # PERF_RECORD_COMPRESSED2: u64 data size, then the data (padded)
    data = record(83, struct.pack("<Q", len(frame)) + frame) * n
    data += sample(1000, 0xffffffff81000000, 0, 1, [CONTEXT_KERNEL, 0xffffffff81000000])
    ids = struct.pack("<Q", 1000)
    write_file(out, [(attr(), None, 8)], data, osrelease(), extra=ids)


def cmd_events(out, nev=4096, n=50000):
    ids = b"".join(struct.pack("<Q", 1000 + i) for i in range(nev))
    attrs = [(attr(config=0), None, 8) for _ in range(nev)]
    # each attr names its own id: ids_off moves along the extra bytes
    attrs = [(a, 0, 8) for a, _, _ in attrs]
    hdr_size, file_attr_size = 104, ATTR_SIZE + 16
    extra_off = hdr_size + file_attr_size * nev
    attrs = [(a, extra_off + 8 * i, 8) for i, (a, _, _) in enumerate(attrs)]
    write_file(out, attrs, kernel_samples(nev, n), osrelease(), extra=ids)


def cmd_plain(out, n=50000):
    ids = struct.pack("<Q", 1000)
    write_file(out, [(attr(), None, 8)], kernel_samples(1, n), osrelease(), extra=ids)


def cmd_mmaps(out, n):
    rnd = random.Random(2)
    starts = [0x10000000 + i * 0x2000 for i in range(n)]
    rnd.shuffle(starts)
    data = []
    pid = 4242
    for t, s in enumerate(starts):
        data.append(mmap(pid, s, 0x1000, 0, "/nonexistent/lib%d.so" % (t % 64), 10 + t, 1000))
    for t, s in enumerate(sorted(starts)):
        data.append(sample(1000, s + 0x10, pid, 10 + n + t, [(1 << 64) - 512, s + 0x10], misc=2))
    ids = struct.pack("<Q", 1000)
    write_file(out, [(attr(), None, 8)], b"".join(data), extra=ids)


def cmd_rounds(out):
    """Records written out of time order across FINISHED_ROUND records, as
    perf record writes them: a mapping arrives a round after a sample that
    needs it, and is then replaced.  Replayed in time order (perf's
    ordered events): samples at t=200 and 150 fall in early.so, the one at
    t=400 in late.so."""
    pid, base, ident = 4242, 0x10000000, 1000
    user = 2  # PERF_RECORD_MISC_USER
    rnd = lambda: record(68, b"")
    data = [sample(ident, base + 0x10, pid, 200, [(1 << 64) - 512, base + 0x10], misc=user), rnd(),
            mmap(pid, base, 0x1000, 0, "/nonexistent/early.so", 100, ident),
            mmap(pid, base, 0x1000, 0, "/nonexistent/late.so", 300, ident),
            sample(ident, base + 0x20, pid, 400, [(1 << 64) - 512, base + 0x20], misc=user), rnd(),
            sample(ident, base + 0x30, pid, 150, [(1 << 64) - 512, base + 0x30], misc=user), rnd()]
    write_file(out, [(attr(), None, 8)], b"".join(data), extra=struct.pack("<Q", ident))


def cmd_attrs_in_data(out, n=20000):
    """A file whose data holds records that perf writes in pipe mode only
    and that would change the file's events: a HEADER_ATTR naming a second
    event and an ID_INDEX, half-way through n kernel samples.  With the
    reader thread (session.c) they are ignored with a warning; the samples
    are all reported either way."""
    samples = kernel_samples(1, n)
    half = (n // 2) * struct.unpack_from("<H", samples, 6)[0]  # the samples are all one size
    extra_attr = record(64, attr(config=1) + struct.pack("<Q", 2000))
    id_index = record(69, struct.pack("<QQQQQ", 1, 2000, 1, 0, 0))
    data = samples[:half] + extra_attr + id_index + samples[half:]
    write_file(out, [(attr(), None, 8)], data, osrelease(), extra=struct.pack("<Q", 1000))


def cmd_deep(out, depth=600):
    chain = [CONTEXT_KERNEL] + [0xffffffff81000000 + 16 * i for i in range(depth)]
    data = sample(1000, chain[1], 0, 1, chain)
    write_file(out, [(attr(), None, 8)], data, osrelease(), extra=struct.pack("<Q", 1000))


def cmd_auxtrace(out, hidden=7, cut=0):
    """5 samples; AUX (11) and ITRACE_START (12); an AUXTRACE record (71)
    whose payload, as Intel PT's trace would be, holds HIDDEN sample
    records that are not samples; 5 samples.  CUT > 0: the file ends CUT
    bytes into the payload."""
    pid, base = 4242, 0x400000
    data = [mmap(pid, base, 0x1000, 0, "/nonexistent/prog", 1, 1000)]
    s = lambda t: sample(1000, base + 0x10 + t, pid, t, [(1 << 64) - 512, base + 0x10 + t], misc=2)
    data += [s(10 + i) for i in range(5)]
    data.append(record(11, struct.pack("<QQQ", 0, 1 << 20, 0) + sample_id(1000, pid, 20)))
    data.append(record(12, struct.pack("<II", pid, pid) + sample_id(1000, pid, 21)))
    payload = b"".join(s(30 + i) for i in range(hidden)) + b"\xff" * 4096
    data.append(record(71, struct.pack("<QQQIII", len(payload), 0, 0, 0, pid, 0)))
    data.append(payload[:cut] if cut else payload)
    if not cut:
        data += [s(40 + i) for i in range(5)]
    write_file(out, [(attr(), None, 8)], b"".join(data), extra=struct.pack("<Q", 1000))


def cmd_forkchain(out, n=10000, nmaps=2000):
    """NMAPS mmaps in one process, then a chain of N forks (each child
    forks the next, inheriting every map), one sample in the last child."""
    pid, base, t = 4242, 0x555555554000, 1
    data = [mmap(pid, base + 0x100000 * i, 0x1000, 0x1000, "/nonexistent/lib%d.so" % i, t + i, 1000)
            for i in range(nmaps)]
    t += nmaps + 10
    parent = pid
    for i in range(n):
        child = 100000 + i
        data.append(record(7, struct.pack("<IIIIQ", child, parent, child, parent, t) + sample_id(1000, child, t)))
        parent, t = child, t + 1
    data.append(sample(1000, base + 0x1a8, parent, t, [(1 << 64) - 512, base + 0x1a8], misc=2))
    write_file(out, [(attr(), None, 8)], b"".join(data), extra=struct.pack("<Q", 1000))


def cmd_forkremap(out):
    """Copy on write of a forked process's maps: the parent maps
    /nonexistent/a.so; child 1 is forked and maps /nonexistent/b.so over
    it; child 2 is forked from the parent after that; the parent maps
    /nonexistent/c.so over its own; a sample at the same address in each:
    a.so (child 2), b.so (child 1), c.so (the parent)."""
    pid, base, t = 4242, 0x400000, 1
    fork = lambda c, par, t: record(7, struct.pack("<IIIIQ", c, par, c, par, t) + sample_id(1000, c, t))
    s = lambda p, t: sample(1000, base + 0x10, p, t, [(1 << 64) - 512, base + 0x10], misc=2)
    data = [mmap(pid, base, 0x1000, 0, "/nonexistent/a.so", 1, 1000), fork(5001, pid, 2),
            mmap(5001, base, 0x1000, 0, "/nonexistent/b.so", 3, 1000), fork(5002, pid, 4),
            mmap(pid, base, 0x1000, 0, "/nonexistent/c.so", 5, 1000), s(5002, 6), s(5001, 7), s(pid, 8)]
    write_file(out, [(attr(), None, 8)], b"".join(data), extra=struct.pack("<Q", 1000))


def main(argv):
    cmds = {"forkremap": cmd_forkremap, "forkchain": cmd_forkchain, "auxtrace": cmd_auxtrace, "ids": cmd_ids, "zstd": cmd_zstd, "events": cmd_events, "mmaps": cmd_mmaps, "plain": cmd_plain,
            "deep": cmd_deep, "rounds": cmd_rounds, "attrs_in_data": cmd_attrs_in_data}
    if len(argv) < 3 or argv[1] not in cmds:
        sys.stderr.write(__doc__)
        return 2
    cmds[argv[1]](argv[2], *[int(x) for x in argv[3:]])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
