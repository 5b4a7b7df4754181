"""blame_expect.py - the blame sets of the seed's examples (Rutar's Figures
3.5 and 3.15, tests/fixtures/blame_fig35.c and blame_fig315.c), derived by
hand for each instruction gcc and clang -O2 make of oneFunc and bar, for
tests/core-blame.py (exact, per instruction) and tests/perf-blame.py (the
per-variable shares of a recording from its sampled IPs).  No loopscope
code: objdump -dl gives the instructions and their lines.

How the sets follow from the seed's rules (design.md, "Blame"):
  bar: the loop guard `N > 0` controls the loop and both stores: implicit
  on everything they write (loopC, i where DWARF keeps it, x, y); loopC = 0
  and loopC++ are loopC's (DWARF names %eax loopC) and flow into the
  stores x[0] = loopC and y[0] = loopC (x, y explicit) and into the test
  loopC % 2 that decides between them (x, y implicit too); i = 0 and i++
  are i's (gcc only: clang counts N down and drops i) and feed the loop
  test, which controls loopC++ and i++: implicit loopC (and i); the test
  loopC % 2 is implicit x and y; the stores blame x and y.  On gcc's path
  for N <= 0 the constant 0 (loopC, but DWARF places loopC in %eax only
  inside the loop's range) flows into y[0] only.
  oneFunc: x = y makes x and y aliases (both in %rdi): x[1] = z blames
  both, the test of z before it is implicit x and y; z = two is z's (and
  the parameter two's, in the same register), flows into s.i[0] = z, a
  store through the pointer malloc returned, which is stored to sink (gcc
  names s.i, a piece of s, in %rax; clang the whole s) and is tested by
  if (z), which controls the malloc and the stores (implicit s.i or s,
  and sink); malloc's argument flows into the call, whose result is the
  pointer: sink and s.i (s).
  fill and norm (blame_calls.c, gcc only: the interprocedural case): the
  loop guard and the loop test control the stores to out[i] (through
  fill's pointer parameter out, an exit variable) and i's increments:
  implicit out and i; i, the constant 0.5 and the i % 7 arithmetic flow
  into the store: out; the zeroing pxor before cvtsi2sd is dead (the
  conversion writes the register whole); in norm, s = 0 and s += v[i] *
  v[i] are s's (DWARF names %xmm1 s) and flow into the returned value
  (<return>), the loads and the pointer step flow into s, the step and
  the end pointer feed the loop test: implicit s.
  gcc -O0's bar: the same sets through the frame slots (x and y stored
  to theirs at entry, loaded back as the pointers stored through; N's
  slot feeds the loop test: implicit loopC and i); the frame pointer's
  setup is nobody's.
Entry notation: "VAR E:RULE" explicit by RULE, "+I" implicit too, "VAR I"
implicit only (rule control).
"""
import re
import subprocess

EXPECT = {
    ("gcc", "bar"): [
        (19, "test %rdx,%rdx", "x I; y I; i I; loopC I"),
        (19, "jle bar+0x28", "x I; y I; i I; loopC I"),
        (19, "xor %ecx,%ecx", "i E:register+I; loopC I"),
        (18, "xor %eax,%eax", "x E:flow+I; y E:flow+I; loopC E:register"),
        (18, "nopl 0x0(%rax)", ""),
        (20, "add $0x1,%eax", "x E:flow+I; y E:flow+I; loopC E:register"),
        (19, "add $0x1,%rcx", "i E:register+I; loopC I"),
        (19, "cmp %rcx,%rdx", "i I; loopC I"),
        (19, "jne bar+0x10", "i I; loopC I"),
        (23, "test $0x1,%al", "x I; y I"),
        (23, "je bar+0x2a", "x I; y I"),
        (24, "mov %eax,(%rdi)", "x E:store"),
        (24, "ret", ""),
        (24, "nopl 0x0(%rax,%rax,1)", ""),
        (18, "xor %eax,%eax", "y E:flow"),
        (26, "mov %eax,(%rsi)", "y E:store"),
        (27, "ret", ""),
    ],
    # gcc -O0: every variable in its frame slot, the flow through the slots
    ("gcc-O0", "bar"): [
        (17, "push %rbp", ""),
        (17, "mov %rsp,%rbp", ""),
        (17, "mov %rdi,-0x18(%rbp)", "x E:store"),
        (17, "mov %rsi,-0x20(%rbp)", "y E:store"),
        (17, "mov %rdx,-0x28(%rbp)", "N E:store; loopC I; i I"),
        (18, "movl $0x0,-0x8(%rbp)", "x E:flow+I; y E:flow+I; loopC E:store"),
        (19, "movl $0x0,-0x4(%rbp)", "loopC I; i E:store+I"),
        (19, "jmp bar+0x2e", ""),
        (20, "addl $0x1,-0x8(%rbp)", "x E:flow+I; y E:flow+I; loopC E:store"),
        (21, "mov -0x8(%rbp),%eax", "x E:flow+I; y E:flow+I; loopC E:flow"),
        (21, "mov %eax,-0x8(%rbp)", "x E:flow+I; y E:flow+I; loopC E:store"),
        (19, "addl $0x1,-0x4(%rbp)", "loopC I; i E:store+I"),
        (19, "mov -0x4(%rbp),%eax", "loopC I; i I"),
        (19, "cltq", "loopC I; i I"),
        (19, "cmp %rax,-0x28(%rbp)", "loopC I; i I"),
        (19, "jg bar+0x20", "loopC I; i I"),
        (23, "mov -0x8(%rbp),%eax", "x I; y I"),
        (23, "and $0x1,%eax", "x I; y I"),
        (23, "test %eax,%eax", "x I; y I"),
        (23, "je bar+0x4e", "x I; y I"),
        (24, "mov -0x18(%rbp),%rax", "x E:flow"),
        (24, "mov -0x8(%rbp),%edx", "x E:flow"),
        (24, "mov %edx,(%rax)", "x E:store"),
        (27, "jmp bar+0x57", ""),
        (26, "mov -0x20(%rbp),%rax", "y E:flow"),
        (26, "mov -0x8(%rbp),%edx", "y E:flow"),
        (26, "mov %edx,(%rax)", "y E:store"),
        (27, "nop", ""),
        (27, "pop %rbp", ""),
        (27, "ret", ""),
    ],
    ("clang", "bar"): [
        (17, "xor %eax,%eax", "x E:flow+I; y E:flow+I; loopC E:register"),
        (19, "test %rdx,%rdx", "x I; y I; loopC I"),
        (19, "jle bar+0x1d", "x I; y I; loopC I"),
        (19, "nopw 0x0(%rax,%rax,1)", ""),
        (20, "add $0x1,%eax", "x E:flow+I; y E:flow+I; loopC E:register"),
        (19, "add $0xffffffffffffffff,%rdx", "loopC I"),
        (19, "jne bar+0x10", "loopC I"),
        (23, "test $0x1,%al", "x I; y I"),
        (23, "jne bar+0x20", "x I; y I"),
        (26, "mov %eax,(%rsi)", "y E:store"),
        (27, "ret", ""),
        (24, "mov %eax,(%rdi)", "x E:store"),
        (27, "ret", ""),
    ],
    ("gcc", "oneFunc"): [
        (19, "push %rbx", ""),
        (19, "mov %edx,%ebx", "two E:register; z E:register; s.i E:flow+I; sink E:flow+I"),
        (24, "test %esi,%esi", "y I; x I"),
        (24, "je oneFunc+0xa", "y I; x I"),
        (25, "mov %esi,0x4(%rdi)", "y E:store; x E:store"),
        (28, "test %ebx,%ebx", "s.i I; sink I"),
        (28, "jne oneFunc+0x10", "s.i I; sink I"),
        (33, "pop %rbx", ""),
        (33, "ret", ""),
        (29, "mov $0x4,%edi", "s.i E:flow; sink E:flow"),
        (29, "call malloc@plt", "s.i E:register; sink E:flow"),
        (30, "mov %ebx,(%rax)", "s.i E:store; sink E:store"),
        (33, "pop %rbx", ""),
        (31, "mov %rax,sink", "sink E:store"),
        (33, "ret", ""),
    ],
    ("gcc", "fill"): [
        (13, "test %rsi,%rsi", "out I; i I"),
        (13, "jle fill+0x5f", "out I; i I"),
        (13, "movsd _IO_stdin_used+0x8,%xmm1", "out E:flow"),
        (13, "xor %ecx,%ecx", "out E:flow+I; i E:register+I"),
        (14, "movabs $0x4924924924924925,%r8", "out E:flow"),
        (14, "nopl 0x0(%rax)", ""),
        (14, "mov %rcx,%rax", "out E:flow"),
        (14, "pxor %xmm0,%xmm0", ""),
        (14, "imul %r8", "out E:flow"),
        (14, "mov %rcx,%rax", "out E:flow"),
        (14, "sar $0x3f,%rax", "out E:flow"),
        (14, "sar %rdx", "out E:flow"),
        (14, "sub %rax,%rdx", "out E:flow"),
        (14, "lea 0x0(,%rdx,8),%rax", "out E:flow"),
        (14, "sub %rdx,%rax", "out E:flow"),
        (14, "mov %rcx,%rdx", "out E:flow"),
        (14, "sub %rax,%rdx", "out E:flow"),
        (14, "cvtsi2sd %rdx,%xmm0", "out E:flow"),
        (14, "mulsd %xmm1,%xmm0", "out E:flow"),
        (14, "movsd %xmm0,(%rdi,%rcx,8)", "out E:store"),
        (13, "add $0x1,%rcx", "out E:flow+I; i E:register+I"),
        (13, "cmp %rcx,%rsi", "out I; i I"),
        (13, "jne fill+0x20", "out I; i I"),
        (15, "ret", ""),
    ],
    ("gcc", "norm"): [
        (20, "test %rsi,%rsi", "s I"),
        (20, "jle norm+0x30", "s I"),
        (20, "lea (%rdi,%rsi,8),%rax", "s I"),
        (19, "pxor %xmm1,%xmm1", "s E:register; <return> E:flow"),
        (19, "nopl (%rax)", ""),
        (21, "movsd (%rdi),%xmm0", "s E:flow; <return> E:flow"),
        (20, "add $0x8,%rdi", "s E:flow+I; <return> E:flow"),
        (21, "mulsd %xmm0,%xmm0", "s E:flow; <return> E:flow"),
        (21, "addsd %xmm0,%xmm1", "s E:register; <return> E:flow"),
        (20, "cmp %rax,%rdi", "s I"),
        (20, "jne norm+0x10", "s I"),
        (23, "movapd %xmm1,%xmm0", "<return> E:flow"),
        (23, "ret", "<return> E:return"),
        (23, "nopw 0x0(%rax,%rax,1)", ""),
        (19, "pxor %xmm1,%xmm1", "<return> E:flow"),
        (23, "movapd %xmm1,%xmm0", "<return> E:flow"),
        (23, "ret", "<return> E:return"),
    ],
    ("clang", "oneFunc"): [
        (19, "push %rbx", ""),
        (19, "mov %edx,%ebx", "two E:register; z E:register; s E:flow+I; sink E:flow+I"),
        (24, "test %esi,%esi", "y I; x I"),
        (24, "je oneFunc+0xa", "y I; x I"),
        (25, "mov %esi,0x4(%rdi)", "y E:store; x E:store"),
        (28, "test %ebx,%ebx", "s I; sink I"),
        (28, "je oneFunc+0x21", "s I; sink I"),
        (29, "mov $0x4,%edi", "s E:flow; sink E:flow"),
        (29, "call malloc@plt", "s E:register; sink E:flow"),
        (30, "mov %ebx,(%rax)", "s E:store; sink E:store"),
        (31, "mov %rax,sink", "sink E:store"),
        (33, "pop %rbx", ""),
        (33, "ret", ""),
    ],
}


def parse_set(text):
    """'x E:flow+I; y I' -> {(var, kind, rule, implicit_too)}"""
    out = set()
    for part in filter(None, (p.strip() for p in text.split(";"))):
        var, how = part.split()
        if how == "I":
            out.add((var, "implicit", "control", False))
        else:
            rule = how[2:].replace("+I", "")
            out.add((var, "explicit", rule, how.endswith("+I")))
    return out


def disassemble(exe, func):
    """[(addr, line, text)] of FUNC, the text without addresses: a branch's
    target as <sym+off>, a RIP-relative operand as the symbol objdump names."""
    out = subprocess.run(["objdump", "-d", "-l", "--no-show-raw-insn", exe], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    rows, line, inside = [], None, False
    for l in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", l)
        if m:
            inside = m.group(1) == func
            continue
        if not inside:
            continue
        m = re.match(r"^/.*:(\d+)", l)
        if m:
            line = int(m.group(1))
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", l)
        if not m:
            continue
        text, comment = (m.group(2).split("#", 1) + [""])[:2]
        text = re.sub(r"\s+", " ", text).strip()
        text = re.sub(r"^(\S+) [0-9a-f]+ <(.*)>$", r"\1 \2", text)
        sym = re.search(r"<(.*)>", comment)
        if sym and "(%rip)" in text:
            text = re.sub(r"-?0x[0-9a-f]+\(%rip\)", sym.group(1), text)
        rows.append((int(m.group(1), 16), line, text))
    while rows and re.match(r"^(nop|cs nop|xchg %ax,%ax|int3)", rows[-1][2]):
        rows.pop()  # padding after the last ret: no procedure holds it
    return rows


def expected(cc, exe, func):
    """{addr: set} from the table, or (None, why) when the code is not the
    code the table was written for (another compiler version)."""
    rows, want = disassemble(exe, func), EXPECT[(cc, func)]
    got = [(l, t) for _, l, t in rows]
    if got != [(l, t) for l, t, _ in want]:
        return None, "the instructions are not the table's: %r" % got
    return {a: parse_set(w[2]) for (a, _, _), w in zip(rows, want)}, ""
