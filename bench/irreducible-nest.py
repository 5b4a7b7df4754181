#!/usr/bin/env python3
"""irreducible-nest.py N OUT.s - x86-64 assembly of one function `nest` of
about N basic blocks forming a nest of irreducible loops (bench/growth.sh).

K = N/3 loops nested in each other (headers h1 > h2 > ... > hK, then the
innermost body, then latches lK ... l1, each jumping back to its header).
Before the nest, a chain of K dispatch blocks jumps straight into each
latch: every loop is entered at its header and at the latches of all loops
inside it, so all K are irreducible, each holding its parent's entries -
Havlak's algorithm moves each of the K side entries up through every level
(K^2/2 moves); the result is one irreducible region with K+1 entries.
"""
import sys


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    n, out = int(argv[1]), argv[2]
    k = max(1, n // 3)
    lines = ["\t.text", "\t.globl nest", "\t.type nest, @function", "nest:"]
    # dispatch: d_j tests one bit of %edi and jumps into latch j
    for j in range(1, k + 1):
        lines += ["\ttestl $%d, %%edi" % (1 << (j % 31)), "\tjne .Llatch%d" % j]
    for j in range(1, k + 1):
        lines += [".Lhead%d:" % j, "\taddl $1, %eax"]
    lines += ["\taddl %esi, %eax"]  # the innermost body
    for j in range(k, 0, -1):
        lines += [".Llatch%d:" % j, "\tsubl $1, %ecx", "\tjne .Lhead%d" % j]
    lines += ["\tret", "\t.size nest, .-nest", "",
              "\t.globl main", "\t.type main, @function", "main:",
              "\tmovl $3, %ecx", "\txorl %eax, %eax", "\tcall nest", "\txorl %eax, %eax", "\tret",
              "\t.size main, .-main", "\t.section .note.GNU-stack,\"\",@progbits"]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
