#!/usr/bin/env python3
"""hostile-elf.py - writes ELF files that are valid as far as headers go but
are built to cost a reader time or memory (tests/core-hostile.sh uses them).

  hostile-elf.py huge-function OUT [GIB]
      an x86-64 executable whose one function `main` is GIB GiB (default 1)
      of code, in a sparse file: a few KiB on disk, gigabytes declared.
"""
import struct
import sys


def strtab(names):
    data = b"\0"
    offs = {}
    for n in names:
        offs[n] = len(data)
        data += n.encode() + b"\0"
    return data, offs


def huge_function(out, gib):
    text_addr, text_off = 0x401000, 0x1000
    text_size = int(gib * (1 << 30))
    shstr, sh_off = strtab([".text", ".symtab", ".strtab", ".shstrtab"])
    symstr, sym_off = strtab(["main"])
    # Elf64_Sym: name, info, other, shndx, value, size
    syms = struct.pack("<IBBHQQ", 0, 0, 0, 0, 0, 0)
    syms += struct.pack("<IBBHQQ", sym_off["main"], 0x12, 0, 1, text_addr, text_size)  # GLOBAL FUNC
    tail = text_off + text_size
    symtab_off = tail
    strtab_off = symtab_off + len(syms)
    shstrtab_off = strtab_off + len(symstr)
    shdr_off = (shstrtab_off + len(shstr) + 7) & ~7
    shnum = 5
    ehdr = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    ehdr += struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, text_addr, 64, shdr_off, 0, 64, 56, 1, 64, shnum, 4)
    # PT_LOAD R+X over the text
    phdr = struct.pack("<IIQQQQQQ", 1, 5, text_off, text_addr, text_addr, text_size, text_size, 0x1000)

    def sh(name, typ, flags, addr, off, size, link=0, info=0, align=1, entsize=0):
        return struct.pack("<IIQQQQIIQQ", name, typ, flags, addr, off, size, link, info, align, entsize)

    shdrs = sh(0, 0, 0, 0, 0, 0)
    shdrs += sh(sh_off[".text"], 1, 6, text_addr, text_off, text_size, align=16)
    shdrs += sh(sh_off[".symtab"], 2, 0, 0, symtab_off, len(syms), link=3, info=1, align=8, entsize=24)
    shdrs += sh(sh_off[".strtab"], 3, 0, 0, strtab_off, len(symstr))
    shdrs += sh(sh_off[".shstrtab"], 3, 0, 0, shstrtab_off, len(shstr))
    with open(out, "wb") as f:
        f.write(ehdr + phdr)
        f.seek(text_off)
        f.write(b"\x55\x48\x89\xe5")  # a few real instructions; the rest is a hole (zeros)
        f.seek(symtab_off)
        f.write(syms + symstr + shstr)
        f.seek(shdr_off)
        f.write(shdrs)


def main(argv):
    if len(argv) < 3 or argv[1] != "huge-function":
        sys.stderr.write(__doc__)
        return 2
    huge_function(argv[2], float(argv[3]) if len(argv) > 3 else 1.0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
