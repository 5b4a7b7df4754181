# tests/data_oracle.py - the accesses oracle of tests/core-data.py: what
# each memory operand of a procedure reaches, computed from objdump's
# disassembly and pyelftools' reading of the same DWARF and .eh_frame.  It
# shares no code with loopscope (no libdw, no libopcodes, no unwind
# recipes): the CFA comes from the compiler's CFI, the operands from
# objdump's text.  Loaded by core-data.py, not run as a test.
#
# It answers by the contract of design.md's "Accesses" section (the rules,
# the type names, the field paths) and says why when it cannot: each
# Answer without a variable carries a category, which core-data.py's
# allow-list names.
import re
import subprocess

from elftools.dwarf.descriptions import describe_reg_name  # noqa: F401 (import check)
from elftools.dwarf.dwarf_expr import DWARFExprParser
from elftools.dwarf.locationlists import LocationEntry, LocationExpr, LocationParser, BaseAddressEntry
from elftools.elf.elffile import ELFFile

# objdump's register names -> DWARF x86-64 numbers
DWARF_REG = {"rax": 0, "rdx": 1, "rcx": 2, "rbx": 3, "rsi": 4, "rdi": 5, "rbp": 6, "rsp": 7}
DWARF_REG.update({"r%d" % i: i for i in range(8, 16)})

MEM_RE = re.compile(r"^\*?(?:%(?P<seg>[a-z]s):)?(?P<disp>-?0x[0-9a-f]+|-?\d+)?"
                    r"\((?P<base>%\w+)?(?:,(?P<index>%\w+)(?:,(?P<scale>\d))?)?\)$")
ABS_RE = re.compile(r"^\*?(?:%(?P<seg>[a-z]s):)?(?P<disp>-?0x[0-9a-f]+)$")
REG64 = ["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi"] + ["r%d" % i for i in range(8, 16)]
CALLER_SAVED = {"rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"}
C_LANGS = {0x1, 0x2, 0xc, 0x1d, 0x2c}  # DW_LANG_C89, C, C99, C11, C17
# The allocation functions whose result in %rax is a fresh heap block (design.md's register-named-value)
ALLOCATORS = {"malloc", "calloc", "realloc", "reallocarray", "aligned_alloc", "memalign", "valloc", "pvalloc",
              "strdup", "strndup", "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
              "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t",
              "_ZnamSt11align_val_tRKSt9nothrow_t"}
NAMED_ENDS = 8  # loopscope's LS_REG_NAMED_ENDS


class Answer:
    def __init__(self, category=None, variable=None, type=None, offset=None, field=None):
        self.category, self.variable, self.type, self.offset, self.field = category, variable, type, offset, field
        self.leaf, self.rest, self.pointer = None, None, False  # the type the field path ends at
        self.type_offset = None
        self.member = None  # the field path as source writes it: no "Base::" (a loaded pointer's name)
        self.rule = None  # set by the reaching-definition rules: register-field-load, register-entry-value
        self.obj = None  # the type DIE of the object at offset 0 (describe's T)

    def expression(self):
        """The access as C writes it: s->next, g.a[], *p (a loaded pointer's name)."""
        f = self.field or ""
        if not f:
            return ("*" if self.pointer else "") + self.variable
        return self.variable + ("" if f.startswith("[") else "->" if self.pointer else ".") + f

    def source(self):
        """expression() with the base classes' members unqualified, as source
        writes them: the name a pointer loaded from here is shown by."""
        f = self.member if self.member is not None else (self.field or "")
        if not f:
            return ("*" if self.pointer else "") + self.variable
        return self.variable + ("" if f.startswith("[") else "->" if self.pointer else ".") + f

    def key(self):
        return (self.variable, self.type, self.offset, self.field)


def split_operands(text):
    ops, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            ops.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur:
        ops.append(cur)
    return [o.strip() for o in ops]


def disassemble(binary, func):
    """[(addr, mnemonic, [operands], comment_addr)] of FUNC, from objdump."""
    out = subprocess.run(["objdump", "-d", "-w", "--no-show-raw-insn", "--disassemble=" + func, binary],
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    insns = []
    for line in out.splitlines():
        m = re.match(r"^\s+([0-9a-f]+):\t(\S+)\s*(.*)$", line)
        if not m:
            continue
        addr, mn, rest = int(m.group(1), 16), m.group(2), m.group(3)
        while mn in ("rep", "repz", "repnz", "lock", "notrack", "bnd", "cs", "ds", "data16", "addr32") and rest:
            parts = rest.split(None, 1)
            mn, rest = parts[0], parts[1] if len(parts) > 1 else ""
        comment = None
        if "#" in rest:
            rest, c = rest.split("#", 1)
            cm = re.match(r"\s*([0-9a-f]+)", c)
            comment = int(cm.group(1), 16) if cm else None
        rest = re.sub(r"\s*<[^>]*>\s*$", "", rest.strip())
        insns.append((addr, mn, split_operands(rest) if rest else [], comment))
    return insns


def memory_operands(mn, ops, comment):
    """The memory operands of one instruction: dicts with seg, disp, base, index, rip."""
    if mn.startswith(("lea", "nop", "prefetch", "endbr", "clflush")):
        return []
    if mn.startswith(("j", "call")) and ops and not ops[0].startswith("*"):
        return []  # a direct target, not memory
    mems = []
    for o in ops:
        if o.startswith("$") or o.startswith("%"):
            continue
        m = MEM_RE.match(o) or ABS_RE.match(o)
        if not m:
            continue
        d = m.groupdict()
        mem = {"seg": d.get("seg"), "disp": int(d["disp"], 0) if d.get("disp") else 0,
               "base": (d.get("base") or "")[1:] or None, "index": (d.get("index") or "")[1:] or None}
        if mem["base"] == "rip":
            mem["disp"] = comment
        mems.append(mem)
    return mems


def reg64(name):
    """The 64-bit register a register name is part of, or None."""
    n = name.lstrip("%")
    if n in REG64:
        return n
    m = re.match(r"^r(\d+)[dwb]?$", n)
    if m:
        return "r" + m.group(1)
    legacy = {"ax": "rax", "cx": "rcx", "dx": "rdx", "bx": "rbx", "sp": "rsp", "bp": "rbp", "si": "rsi", "di": "rdi"}
    for short, full in legacy.items():
        if n in ("e" + short, short) or n == short[0] + "l" and short[1] == "x" or n in (short + "l",):
            return full
    return None


def writes(mn, ops):
    """The 64-bit registers an instruction writes (what the fixtures use)."""
    w = set()
    if mn.startswith("call"):
        return set(CALLER_SAVED)
    if mn in ("cltq", "cdqe", "cwtl"):
        w.add("rax")
    if mn in ("cqto", "cltd", "cqo", "cdq"):
        w.add("rdx")
    if mn.rstrip("bwlq") in ("mul", "div", "idiv") and len(ops) == 1 or mn.rstrip("bwlq") == "imul" and len(ops) == 1:
        w |= {"rax", "rdx"}
    if mn.startswith(("xchg", "xadd")) and ops == ["%ax", "%ax"]:
        return w  # xchg %ax,%ax: a two-byte nop (padding)
    if mn.startswith(("xchg", "xadd")) and ops and ops[0].startswith("%"):
        w.add(reg64(ops[0]))
    if mn.startswith(("push", "pop")):
        w.add("rsp")
    # string operations; not movslq, movsbl (sign extensions) nor movsd %xmm
    if re.match(r"^(rep\w*|(stos|movs|lods|scas|cmps)[bwlq]?)$", mn) and not any(o.startswith("%xmm") for o in ops):
        w |= {"rcx", "rdi", "rsi"}
    read_only = mn.startswith(("cmp", "test", "bt", "push", "j", "ucomis", "comis"))
    if ops and ops[-1].startswith("%") and not read_only:
        r = reg64(ops[-1])
        if r:
            w.add(r)
    return w


class Dwarf:
    """What the oracle needs of a binary's DWARF and CFI, through pyelftools."""

    def __init__(self, path):
        self.f = open(path, "rb")
        self.elf = ELFFile(self.f)
        self.di = self.elf.get_dwarf_info()
        self.loc_parser = LocationParser(self.di.location_lists())
        self.expr_parser = DWARFExprParser(self.di.structs)
        self.fdes = []
        if self.elf.has_dwarf_info() and self.di.has_EH_CFI():
            for e in self.di.EH_CFI_entries():
                if type(e).__name__ == "FDE":
                    self.fdes.append(e)
        self.globals = []
        self.subprograms = []
        for cu in self.di.iter_CUs():
            top = cu.get_top_DIE()
            lang = top.attributes.get("DW_AT_language")
            c_lang = bool(lang) and lang.value in C_LANGS
            for die in cu.iter_DIEs():
                if die.tag == "DW_TAG_variable" and "DW_AT_location" in die.attributes:
                    self._add_global(cu, die, c_lang)
                elif die.tag == "DW_TAG_subprogram" and "DW_AT_low_pc" in die.attributes:
                    self.subprograms.append((cu, die, c_lang))

    # ---- expressions and locations
    def ops(self, cu, expr):
        return self.expr_parser.parse_expr(expr)

    def addr_of(self, cu, op):
        if op.op_name == "DW_OP_addr":
            return op.args[0]
        if op.op_name in ("DW_OP_addrx", "DW_OP_GNU_addr_index"):
            return self.di.get_addr(cu, op.args[0])
        return None

    def location_at(self, cu, die, attr_name, pc):
        """The expression (list of ops) of DIE's ATTR_NAME at PC, or None."""
        attr = die.attributes.get(attr_name)
        if attr is None:
            return None
        loc = self.loc_parser.parse_from_attribute(attr, cu.header.version, die)
        if isinstance(loc, LocationExpr):
            return self.ops(cu, loc.loc_expr)
        base = self.cu_base(cu)
        for e in loc:
            if isinstance(e, BaseAddressEntry):
                base = e.base_address
            elif isinstance(e, LocationEntry):
                lo, hi = (e.begin_offset, e.end_offset) if e.is_absolute else (base + e.begin_offset, base + e.end_offset)
                if lo <= pc < hi:
                    return self.ops(cu, e.loc_expr)
        return None

    def cu_base(self, cu):
        low = cu.get_top_DIE().attributes.get("DW_AT_low_pc")
        return low.value if low else 0

    def _add_global(self, cu, die, c_lang):
        try:
            ops = self.location_at(cu, die, "DW_AT_location", 0)
        except Exception:
            return
        if not ops or len(ops) != 1:
            return
        addr = self.addr_of(cu, ops[0])
        t = self.type_die(die)
        size = self.size(t) if t is not None else None
        if addr is not None and size:
            self.globals.append((addr, size, cu, die, c_lang))

    # ---- ranges and scopes
    def ranges(self, cu, die):
        a = die.attributes
        if "DW_AT_low_pc" in a and "DW_AT_high_pc" in a:
            lo = a["DW_AT_low_pc"].value
            hi = a["DW_AT_high_pc"].value
            if a["DW_AT_high_pc"].form != "DW_FORM_addr":
                hi += lo
            return [(lo, hi)]
        if "DW_AT_ranges" in a:
            rl = self.di.range_lists()
            form = a["DW_AT_ranges"].form
            if form == "DW_FORM_rnglistx" and self._rnglistx_translated(cu, a["DW_AT_ranges"].value):
                # pyelftools (0.29) has turned the index into the list's offset
                lst = rl.get_range_list_at_offset(a["DW_AT_ranges"].value, cu=cu)
            elif form == "DW_FORM_rnglistx":
                lst = rl.get_range_list_at_offset_ex(self._rnglistx_offset(cu, a["DW_AT_ranges"].value))
            else:
                lst = rl.get_range_list_at_offset(a["DW_AT_ranges"].value, cu=cu)
            base, out = self.cu_base(cu), []
            for e in lst:
                if hasattr(e, "base_address"):
                    base = e.base_address
                elif e.is_absolute:
                    out.append((e.begin_offset, e.end_offset))
                else:
                    out.append((base + e.begin_offset, base + e.end_offset))
            return out
        return []

    def _rnglistx_translated(self, cu, value):
        """Whether an rnglistx VALUE is past the CU's offset table: already an offset."""
        import struct
        sec = self.di.range_lists().stream
        sec.seek(cu.get_top_DIE().attributes["DW_AT_rnglists_base"].value - 4)  # offset_entry_count
        return value >= struct.unpack("<I", sec.read(4))[0]

    def _rnglistx_offset(self, cu, index):
        top = cu.get_top_DIE()
        base = top.attributes["DW_AT_rnglists_base"].value
        sec = self.di.range_lists().stream
        import struct
        sec.seek(base + 4 * index)
        return base + struct.unpack("<I", sec.read(4))[0]

    def has_pc(self, cu, die, pc):
        return any(lo <= pc < hi for lo, hi in self.ranges(cu, die))

    def subprogram_at(self, entry):
        for cu, die, c_lang in self.subprograms:
            if self.has_pc(cu, die, entry):
                return cu, die, c_lang
        return None

    def scopes_at(self, cu, sub, pc):
        """The concrete scopes holding PC, innermost first."""
        chain = [sub]
        while True:
            nxt = None
            for c in chain[-1].iter_children():
                if c.tag in ("DW_TAG_lexical_block", "DW_TAG_inlined_subroutine") and self.has_pc(cu, c, pc):
                    nxt = c
                    break
            if nxt is None:
                return chain[::-1]
            chain.append(nxt)

    # ---- types
    def origin(self, die, name):
        """ATTR NAME of DIE, through DW_AT_abstract_origin / DW_AT_specification."""
        seen = 0
        while die is not None and seen < 8:
            if name in die.attributes:
                return die, die.attributes[name]
            nxt = None
            for link in ("DW_AT_abstract_origin", "DW_AT_specification"):
                if link in die.attributes:
                    nxt = die.get_DIE_from_attribute(link)
                    break
            die, seen = nxt, seen + 1
        return None, None

    def type_die(self, die):
        d, a = self.origin(die, "DW_AT_type")
        return d.get_DIE_from_attribute("DW_AT_type") if a is not None else None

    def name(self, die):
        _, a = self.origin(die, "DW_AT_name")
        return a.value.decode() if a is not None else None

    def strip(self, t):
        while t is not None and t.tag in ("DW_TAG_typedef", "DW_TAG_const_type", "DW_TAG_volatile_type",
                                          "DW_TAG_restrict_type", "DW_TAG_atomic_type"):
            t = self.type_die(t)
        return t

    def dims(self, t):
        out = []
        for s in t.iter_children():
            if s.tag != "DW_TAG_subrange_type":
                continue
            if "DW_AT_count" in s.attributes:
                out.append(s.attributes["DW_AT_count"].value)
            elif "DW_AT_upper_bound" in s.attributes:
                out.append(s.attributes["DW_AT_upper_bound"].value + 1)
            else:
                out.append(None)
        return out

    def size(self, t):
        s = self.strip(t)
        if s is None:
            return None
        if "DW_AT_byte_size" in s.attributes:
            return s.attributes["DW_AT_byte_size"].value
        if s.tag == "DW_TAG_array_type":
            n = 1
            for d in self.dims(s):
                if d is None:
                    return None
                n *= d
            e = self.size(self.type_die(s))
            return n * e if e else None
        if s.tag in ("DW_TAG_pointer_type", "DW_TAG_reference_type", "DW_TAG_rvalue_reference_type"):
            return 8
        return None

    def type_name(self, t, c_lang):
        if t is None:
            return "void"
        tag, nm = t.tag, self.name(t)
        if tag in ("DW_TAG_base_type", "DW_TAG_typedef", "DW_TAG_class_type", "DW_TAG_unspecified_type"):
            return nm or "<anon>"
        kw = {"DW_TAG_structure_type": "struct", "DW_TAG_union_type": "union", "DW_TAG_enumeration_type": "enum"}
        if tag in kw:
            return (kw[tag] + " " if c_lang or not nm else "") + (nm or "<anon>")
        inner = self.type_name(self.type_die(t), c_lang)
        if tag == "DW_TAG_const_type":
            return "const " + inner
        if tag == "DW_TAG_volatile_type":
            return "volatile " + inner
        if tag == "DW_TAG_pointer_type":
            return inner + " *"
        if tag == "DW_TAG_reference_type":
            return inner + " &"
        if tag == "DW_TAG_rvalue_reference_type":
            return inner + " &&"
        if tag == "DW_TAG_array_type":
            return inner + "".join("[%d]" % d if d is not None else "[]" for d in self.dims(t))
        if tag == "DW_TAG_subroutine_type":
            return "<function>"
        return inner

    def object_type_name(self, t, c_lang):
        while t is not None and t.tag in ("DW_TAG_const_type", "DW_TAG_volatile_type", "DW_TAG_restrict_type"):
            t = self.type_die(t)
        return self.type_name(t, c_lang)

    def member_range(self, m):
        a = m.attributes
        bits = a.get("DW_AT_bit_size")
        if bits and "DW_AT_data_bit_offset" in a:
            b = a["DW_AT_data_bit_offset"].value
            return b // 8, (b + bits.value + 7) // 8 - b // 8, True
        lo = a["DW_AT_data_member_location"].value if "DW_AT_data_member_location" in a else 0
        if isinstance(lo, list):
            ops = self.expr_parser.parse_expr(lo)
            if len(ops) != 1 or ops[0].op_name != "DW_OP_plus_uconst":
                return None
            lo = ops[0].args[0]
        size = self.size(self.type_die(m))
        return (lo, size, bool(bits)) if size is not None else None

    def field_path(self, t, off, width):
        """The path of bytes [OFF, OFF+WIDTH) inside T (field_path_leaf: with
        the type it ends at and the offset left inside that)."""
        return self.field_path_leaf(t, off, width)[0]

    def field_path_leaf(self, t, off, width, member=False):
        """MEMBER: the path without base classes (\"Base::\" left out)."""
        path, after_base = "", False
        for _ in range(24):
            s = self.strip(t)
            if s is None:
                break
            if s.tag == "DW_TAG_array_type":
                et = self.type_die(s)
                es = self.size(et)
                if not es:
                    break
                path += "[]" * max(1, len(self.dims(s)))
                off %= es
                t, after_base = et, False
                continue
            if s.tag not in ("DW_TAG_structure_type", "DW_TAG_union_type", "DW_TAG_class_type"):
                break
            best = None
            for m in s.iter_children():
                if m.tag not in ("DW_TAG_member", "DW_TAG_inheritance"):
                    continue
                if "DW_AT_external" in m.attributes or "DW_AT_declaration" in m.attributes:
                    continue
                r = self.member_range(m)
                if r is None or not r[0] <= off < r[0] + r[1]:
                    continue
                fits = not width or off + width <= r[0] + r[1]
                if best is None:
                    best = (m, r)
                    if fits:
                        break
                elif fits and not r[2]:
                    best = (m, r)
                    break
            if best is None:
                break
            m, (lo, _, bitfield) = best
            if m.tag == "DW_TAG_inheritance" and member:
                after_base = False  # the member inside follows the path with its "."
            elif m.tag == "DW_TAG_inheritance":
                part = self.type_name(self.type_die(m), False) + "::"
                path += ("" if after_base or not path else ".") + part
                after_base = True
            else:
                path += ("" if after_base or not path else ".") + (self.name(m) or "<anon>")
                after_base = False
            off -= lo
            t = self.type_die(m)
            if bitfield:
                return path, None, off
        return path, t, off


class Oracle:
    def __init__(self, binary):
        self.binary = binary
        self.dw = Dwarf(binary)
        self._insns, self._answers = {}, {}

    def cfa_rule(self, pc):
        """(register name, offset) of the CFA at PC from .eh_frame, or None."""
        for fde in self.dw.fdes:
            lo = fde.header["initial_location"]
            if lo <= pc < lo + fde.header["address_range"]:
                rule = None
                for row in fde.get_decoded().table:
                    if row["pc"] <= pc:
                        rule = row.get("cfa")
                if rule is None or rule.reg is None:
                    return None
                return {7: "rsp", 6: "rbp"}.get(rule.reg), rule.offset
        return None

    def global_at(self, addr):
        best = None
        for g in self.dw.globals:
            if g[0] <= addr < g[0] + g[1] and (best is None or g[1] < best[1]):
                best = g
        return best

    def answer(self, cu, sub, c_lang, pc, mem, width, where, depth=0):
        if mem["seg"]:
            return Answer("segment-relative")
        if mem["base"] in (None, "rip"):
            if mem["disp"] is None:
                return Answer("no address")
            g = self.global_at(mem["disp"])
            if g is None:
                return Answer("static: no variable there")
            addr, size, gcu, die, gc = g
            return self.describe(die, self.dw.type_die(die), mem["disp"] - addr, width, gc, False)
        scopes = self.dw.scopes_at(cu, sub, pc)
        cfa = self.cfa_rule(pc)
        if mem["base"] in ("rsp", "rbp") and (mem["base"] == "rsp" or (cfa and cfa[0] == "rbp")):
            return self.frame(cu, sub, scopes, c_lang, pc, mem, width, cfa)
        return self.register(cu, sub, scopes, c_lang, pc, mem, width, where, depth)

    def frame_slot(self, cu, sub, var_ops, pc, base, cfa):
        """The slot's address relative to register BASE (rsp or rbp), or None."""
        op = var_ops[0]
        if op.op_name == "DW_OP_fbreg":
            fb = self.dw.location_at(cu, sub, "DW_AT_frame_base", pc)
            if not fb or len(fb) != 1:
                return None
            f = fb[0].op_name
            if f == "DW_OP_call_frame_cfa":
                # CFA = reg + k: the slot is at reg + k + off
                return cfa[1] + op.args[0] if cfa and cfa[0] == base else None
            if f == "DW_OP_reg7" and base == "rsp" or f == "DW_OP_reg6" and base == "rbp":
                return op.args[0]
            return None
        if op.op_name == "DW_OP_breg7" and base == "rsp" or op.op_name == "DW_OP_breg6" and base == "rbp":
            return op.args[0]
        return None

    def variables(self, cu, scopes, pc):
        for sc in scopes:
            for v in sc.iter_children():
                if v.tag not in ("DW_TAG_variable", "DW_TAG_formal_parameter"):
                    continue
                ops = self.dw.location_at(cu, v, "DW_AT_location", pc)
                if ops:
                    yield v, ops

    def parts(self, ops):
        """[(ops of one part, object offset, size)]: one part covering all when OPS is no composite."""
        if not any(o.op_name == "DW_OP_piece" for o in ops):
            return [(ops, 0, None)]
        out, cur, off = [], [], 0
        for o in ops:
            if o.op_name == "DW_OP_piece":
                out.append((cur, off, o.args[0]))
                off += o.args[0]
                cur = []
            else:
                cur.append(o)
        return out

    def frame(self, cu, sub, scopes, c_lang, pc, mem, width, cfa):
        base = mem["base"]
        for v, ops in self.variables(cu, scopes, pc):
            t = self.dw.type_die(v)
            size = self.dw.size(t) if t is not None else None
            if not size:
                continue
            for part, obj_off, psize in self.parts(ops):
                if len(part) != 1:
                    continue
                start = self.frame_slot(cu, sub, part, pc, base, cfa)
                if start is not None and start <= mem["disp"] < start + (psize or size):
                    return self.describe(v, t, obj_off + mem["disp"] - start, width, c_lang, False)
        if cfa is None:
            return Answer("frame: no CFI row")
        return Answer("frame: no variable's slot there")

    def register(self, cu, sub, scopes, c_lang, pc, mem, width, where, depth):
        reg = DWARF_REG.get(mem["base"])
        if reg is None:
            return Answer("register: not a general register")
        a = self.in_register(cu, scopes, c_lang, pc, reg, mem, width)
        if a is not None:
            return a
        a = self.origin(cu, sub, scopes, c_lang, pc, mem, width, where, depth)
        if a.category and depth == 0:
            named = self.named_value(cu, sub, scopes, c_lang, mem, width, where)
            if named is not None:
                return named
        return a

    def in_register(self, cu, scopes, c_lang, pc, reg, mem, width):
        """What the variable of SCOPES whose location at PC is DWARF register
        REG (whole, a piece, or memory at it) says operand MEM reaches, or None."""
        for v, ops in self.variables(cu, scopes, pc):
            n0 = ops[0].op_name
            t = self.dw.type_die(v)
            if len(ops) == 1 and n0 == "DW_OP_reg%d" % reg:
                k, mode = 0, "pointer"
            elif len(ops) == 2 and n0 == "DW_OP_breg%d" % reg and ops[1].op_name == "DW_OP_stack_value":
                k, mode = ops[0].args[0], "pointer"
            elif any(o.op_name == "DW_OP_piece" for o in ops):
                # a composite: the first 8-byte piece in the register, a pointer member
                pieces = [pc for pc in self.parts(ops) if len(pc[0]) == 1 and pc[0][0].op_name == "DW_OP_reg%d" % reg
                          and pc[2] == 8]
                if not pieces or t is None:
                    continue
                _, obj_off, _ = pieces[0]
                member, leaf, rest = self.dw.field_path_leaf(t, obj_off, 8, member=True)
                ls = self.dw.strip(leaf) if leaf is not None else None
                if rest != 0 or not member or ls is None or ls.tag not in (
                        "DW_TAG_pointer_type", "DW_TAG_reference_type", "DW_TAG_rvalue_reference_type"):
                    continue
                name = self.dw.name(v) + ("" if member.startswith("[") else ".") + member
                return self.describe(None, self.dw.type_die(ls), mem["disp"], width, c_lang, True, name=name)
            elif len(ops) == 1 and n0 == "DW_OP_breg%d" % reg:
                size = self.dw.size(t) if t is not None else None
                k = ops[0].args[0]
                if size and k <= mem["disp"] < k + size:
                    return self.describe(v, t, mem["disp"] - k, width, c_lang, False)
                continue
            else:
                continue
            s = self.dw.strip(t) if t is not None else None
            if s is None or s.tag not in ("DW_TAG_pointer_type", "DW_TAG_reference_type",
                                          "DW_TAG_rvalue_reference_type"):
                continue
            return self.describe(v, self.dw.type_die(s), mem["disp"] - k, width, c_lang, True)
        return None

    def origin(self, cu, sub, scopes, c_lang, pc, mem, width, where, depth):
        """Through where every definition of the base register comes from."""
        insns, preds, i = where
        origin = self.reg_origin(insns, preds, i, reg64("%" + mem["base"]), (cu, sub, c_lang))
        if origin is None:
            return Answer("register: no variable in it, the paths disagree")
        kind, add = origin[0], origin[-2]
        if kind == "load" and origin[1][0] == "slot":
            target = self.got_target(origin[1][1])
            if target is not None:
                kind, origin = "static", ("static", target, add, origin[-1])
        if kind == "static":
            g = self.global_at(origin[1] + add + mem["disp"])
            if g is None:
                return Answer("register: a static address, no variable there")
            return self.describe(g[3], self.dw.type_die(g[3]), origin[1] + add + mem["disp"] - g[0], width, g[4], False)
        if kind == "static" and origin[-1] == "reg":
            return Answer("register: a static address stepped by a register")
        if origin[-1]:
            # a step of unknown count through a loaded or entry pointer's
            # object: only an element of base type is certain
            a = self.origin_unstepped(cu, sub, scopes, c_lang, pc, mem, width, where, depth, origin)
            return self.stepped_element(a, width, c_lang)
        return self.origin_unstepped(cu, sub, scopes, c_lang, pc, mem, width, where, depth, origin)

    def origin_unstepped(self, cu, sub, scopes, c_lang, pc, mem, width, where, depth, origin):
        insns, preds, i = where
        kind, add = origin[0], origin[-2]
        if kind == "entry":
            return self.entry_value(cu, sub, scopes, pc, insns[0][0], origin[1], add + mem["disp"], width, c_lang)
        # every load reaching here (copies on several paths) must read the
        # same field of the same variable
        key = origin[1]
        ps = key[1:] if key[0] == "insn" else key[-1:]
        answers = [self.loaded(cu, sub, c_lang, insns, preds, p, add + mem["disp"], width, depth) for p in ps]
        first = answers[0]
        for a in answers[1:]:
            if a.category or first.category or a.key() != first.key() or a.type_offset != first.type_offset:
                return Answer("register: loads on several paths read different things")
        return first

    def stepped_element(self, a, width, c_lang):
        """register-stepped: A, through a pointer stepped an unknown number of
        times, is an element of the array it points into when the pointee
        is a base type or an array of them: the element's type, the offset
        within one element, the field "[]"."""
        if a.category or not a.pointer or a.obj is None:
            return Answer("register: a stepped pointer into a loaded or entry pointer's object")
        t = self.dw.strip(a.obj)
        while t is not None and t.tag == "DW_TAG_array_type":
            t = self.dw.strip(self.dw.type_die(t))
        size = self.dw.size(a.obj)
        if t is None or t.tag != "DW_TAG_base_type" or not size:
            return Answer("register: a stepped pointer into an object of no base type (the field is not known)")
        b = self.describe(None, a.obj, a.offset % size, width, c_lang, True, name=a.variable, element=True)
        b.rule = "register-stepped"
        return b

    def entry_value(self, cu, sub, scopes, pc, entry, reg, off, width, c_lang):
        """Through the entry value of REG: a variable in scope at PC whose
        location there is DW_OP_entry_value(DW_OP_reg of it), stack_value
        (innermost first), else the subprogram's own parameter whose
        location at ENTRY is DW_OP_reg of it; a pointer."""
        regop = "DW_OP_reg%d" % DWARF_REG[reg]
        named = None
        for v, ops in self.variables(cu, scopes, pc):
            if (len(ops) == 2 and ops[0].op_name in ("DW_OP_entry_value", "DW_OP_GNU_entry_value") and
                    ops[1].op_name == "DW_OP_stack_value" and len(ops[0].args[0]) == 1 and
                    ops[0].args[0][0].op_name == regop):
                named = v
                break
        params = [named] if named is not None else [v for v in sub.iter_children() if v.tag == "DW_TAG_formal_parameter"]
        for v in params:
            ops = self.dw.location_at(cu, v, "DW_AT_location", entry) if named is None else [None]
            if named is not None or ops and len(ops) == 1 and ops[0].op_name == regop:
                s = self.dw.strip(self.dw.type_die(v))
                if s is None or s.tag not in ("DW_TAG_pointer_type", "DW_TAG_reference_type",
                                              "DW_TAG_rvalue_reference_type"):
                    return Answer("register: the entry value of a parameter no pointer")
                a = self.describe(v, self.dw.type_die(s), off, width, c_lang, True)
                a.rule = "register-entry-value"
                return a
        return Answer("register: the entry value of no parameter")

    def loaded(self, cu, sub, c_lang, insns, preds, p, off, width, depth):
        """Through a pointer loaded by instruction P: the pointee of the
        field (or variable) that load reads, named by the load's expression."""
        if depth >= 4:
            return Answer("register: loads nested too deep")
        addr, mn, ops, comment = insns[p]
        mems = memory_operands(mn, ops, comment)
        inner = self.answer(cu, sub, c_lang, addr, mems[0], 8, (insns, preds, p), depth + 1)
        if inner.category or inner.leaf is None or inner.rest != 0 or inner.type == "void":
            return Answer("register: a load from no variable's pointer field")
        s = self.dw.strip(inner.leaf)
        if s is None or s.tag not in ("DW_TAG_pointer_type", "DW_TAG_reference_type", "DW_TAG_rvalue_reference_type"):
            return Answer("register: a load from no variable's pointer field")
        name = inner.source()
        if name.startswith("*"):
            name = "(" + name + ")"
        pointee = self.dw.type_die(s)
        a = self.describe(None, pointee, off, width, c_lang, True, name=name)
        a.type_offset = pointee.offset if pointee is not None else None
        a.rule = "register-field-load"
        return a

    def describe(self, var, t, off, width, c_lang, pointer, name=None, element=False):
        name = name or self.dw.name(var)
        if t is None:
            return Answer(None, name, "void", off, None)
        tname = self.dw.object_type_name(t, c_lang)
        size = self.dw.size(t)
        prefix, o = "", off
        if pointer and size and (element or off < 0 or off >= size):
            prefix, o = "[]", off % size
        path, leaf, rest = self.dw.field_path_leaf(t, o, width)
        member = self.dw.field_path_leaf(t, o, width, member=True)[0]
        if prefix:
            path = prefix + ("." if path and not path.startswith("[") else "") + path
            member = prefix + ("." if member and not member.startswith("[") else "") + member
        a = Answer(None, name, tname, off, path)
        a.leaf, a.rest, a.pointer, a.member = leaf, rest, pointer, member
        a.obj = t
        return a

    # ---- a register's static origin, over objdump's instructions
    def graph(self, insns):
        """Each instruction's predecessors (indices): the one before unless it
        jumps away, and every direct jump to it.  None with an indirect jump."""
        at = {a: i for i, (a, _, _, _) in enumerate(insns)}
        preds = [[] for _ in insns]
        for i, (a, mn, ops, _) in enumerate(insns):
            ends = mn.startswith(("jmp", "ret")) or mn in ("ud2", "hlt")
            if mn.startswith("j") and ops:
                if ops[0].startswith("*"):
                    return None
                target = int(ops[0].split()[0], 16)
                if target in at:
                    preds[at[target]].append(i)
            if not ends and i + 1 < len(insns):
                preds[i + 1].append(i)
        return preds

    def slot_at(self, pc, mem):
        """A frame operand's offset from the CFA (the CFI's rule at PC), or None."""
        if mem is None or mem["seg"] or mem["index"] or mem["base"] not in ("rsp", "rbp"):
            return None
        cfa = self.cfa_rule(pc)
        return mem["disp"] - cfa[1] if cfa and cfa[0] == mem["base"] else None

    def spill_slot(self, ctx, insns, p):
        """The slot instruction P reloads a register from, if it is a spill
        slot: no variable's there, and no lea of the function reaches
        within 64 bytes below it."""
        addr, mn, ops, comment = insns[p]
        mems = memory_operands(mn, ops, comment)
        slot = self.slot_at(addr, mems[0]) if len(mems) == 1 else None
        if slot is None or ctx is None:
            return None
        cu, sub, c_lang = ctx
        scopes = self.dw.scopes_at(cu, sub, addr)
        a = self.frame(cu, sub, scopes, c_lang, addr, mems[0], 8, self.cfa_rule(addr))
        if a.category != "frame: no variable's slot there":
            return None
        for a2, mn2, ops2, c2 in insns:
            if mn2.startswith("lea") and ops2:
                m = memory_operands("mov", ops2[:1], c2)
                at = self.slot_at(a2, m[0]) if m else None
                if at is not None and at <= slot < at + 64:
                    return None
        return slot

    def slot_def(self, insn, slot):
        """What INSN does to spill slot SLOT: "through" (nothing, or reads
        it), the register a spill stores there, or None (anything else that
        may write it)."""
        addr, mn, ops, comment = insn
        for k, o in enumerate(ops):
            m = memory_operands("mov", [o], comment) if not o.startswith(("$", "%")) else []
            at = self.slot_at(addr, m[0]) if m else None
            if at is None or abs(at - slot) >= 8:
                continue
            if mn.startswith("lea"):
                return None
            if k < len(ops) - 1 or mn.startswith(("cmp", "push")):
                continue
            if mn in ("mov", "movq") and len(ops) == 2 and at == slot and reg64(ops[0]) == ops[0].lstrip("%") \
                    and reg64(ops[0]) != "rsp":
                return reg64(ops[0])
            return None
        return "through"

    def reg_origin(self, insns, preds, i, reg, ctx=None):
        """Where every definition of REG reaching insn I comes from, if they
        agree: ("static", address, add, indexed), ("load", ("slot", address,
        index) or ("insn", index), add, indexed), ("entry", register, add,
        indexed); None when they do not."""
        if preds is None:
            return None
        work, seen, found, stepped, reg_stepped = [(i, reg, 0, False)], set(), {}, False, False
        while work:
            j, r, add, _ = work.pop()
            if j == 0 and isinstance(r, tuple):
                return None  # a spill slot no spill reaches
            if j == 0:
                found.setdefault(("entry", r, add), None)
            elif not preds[j] and not (insns[j][1].startswith("nop") or insns[j][1:3] == ("xchg", ["%ax", "%ax"])):
                return None  # reached by no jump objdump shows, yet not alignment padding
            for p in preds[j]:
                if (p, r) in seen:
                    continue
                seen.add((p, r))
                _, mn, ops, comment = insns[p]
                if isinstance(r, tuple):  # in a spill slot: back to the spill
                    d = self.slot_def(insns[p], r[1])
                    if d is None:
                        return None
                    work.append((p, r if d == "through" else d, add, False))
                    continue
                if r not in writes(mn, ops):
                    work.append((p, r, add, False))
                    continue
                res = self.follow(mn, ops, comment, r, add)
                if res is None:
                    return None
                kind, val, add2, step = res
                stepped |= step in ("step", "regstep")
                reg_stepped |= step == "regstep"
                if kind == "found":
                    found.setdefault(("static", val + add2), None)
                elif kind == "slot":
                    found.setdefault(("slot", val, add2), p)
                elif kind == "load" and self.spill_slot(ctx, insns, p) is not None:
                    work.append((p, ("slot", self.spill_slot(ctx, insns, p)), add2, False))  # a reload
                elif kind == "load":
                    loads = found.setdefault(("insn", add2), [])
                    if len(loads) == 8:
                        return None  # loopscope's LS_REG_ORIGIN_LOADS
                    loads.append(p)
                else:
                    work.append((p, val, add2, False))
        if len(found) != 1:
            return None
        if reg_stepped:
            stepped = "reg"  # by a register: by how much is not known
        (f, p), = found.items()
        if f[0] == "static":
            return "static", f[1], 0, stepped
        if f[0] == "entry":
            return "entry", f[1], f[2], stepped
        if f[0] == "slot":
            return "load", ("slot", f[1], p), f[2], stepped
        return "load", ("insn",) + tuple(p), f[1], stepped

    # ---- register-named-value: a value DWARF names at another PC
    def named_value(self, cu, sub, scopes, c_lang, mem, width, where):
        """Every path's value of the base register at instruction I is one
        DWARF names elsewhere (one variable's one field): backwards over
        copies and spill slots to the first instruction before which a
        variable of the scopes at I has the register holding it as its
        location (or a piece), or to a load of it; a zeroing (xor %r,%r)
        ends a path with no name; an allocation call's result goes on
        forwards to its first register a variable of those scopes names, or
        to a store of it into memory no spill slot.  None unless every name
        agrees (at least one)."""
        insns, preds, i = where
        if preds is None:
            return None
        ctx, ends = (cu, sub, c_lang), {}
        self.named_stepped = False
        work, seen = [(i, reg64("%" + mem["base"]))], set()
        while work:
            j, r = work.pop()
            if j == 0:
                return None  # the entry's value: not this rule's
            if not preds[j]:
                if insns[j][1].startswith("nop") or insns[j][1:3] == ("xchg", ["%ax", "%ax"]):
                    continue  # alignment padding no path comes through
                return None
            for p in preds[j]:
                if (p, r) in seen:
                    continue
                seen.add((p, r))
                res = self.named_pred(ctx, scopes, insns, preds, p, r, mem, width, ends)
                if res is False:
                    return None
                if res is not None:
                    work.append((p, res))
        if not ends or len(ends) > NAMED_ENDS:
            return None
        answers = list(ends.values())
        if any(a is None or a.category for a in answers) or any(a.key() != answers[0].key() for a in answers):
            return None
        a = answers[0]
        a.rule = "register-named-value"
        if self.named_stepped:  # a step after the name: as register-stepped
            a = self.stepped_element(a, width, c_lang)
            return None if a.category else a
        return a

    def named_here(self, ctx, scopes, insns, p, r, mem, width):
        """The Answer of the variable of SCOPES whose location before insn P is register R, or None."""
        cu, sub, c_lang = ctx
        return self.in_register(cu, scopes, c_lang, insns[p][0], DWARF_REG[r], mem, width)

    def named_pred(self, ctx, scopes, insns, preds, p, r, mem, width, ends):
        """Back over predecessor P with the value in R (or a spill slot): the
        location before P to go on with, None when the path ended, False
        when it cannot say."""
        addr, mn, ops, comment = insns[p]
        cu, sub, c_lang = ctx
        if isinstance(r, tuple):  # in a spill slot: back to the spill
            d = self.slot_def(insns[p], r[1])
            if d is None:
                return False
            if d == "through":
                return r
            r = d
        elif r in writes(mn, ops):
            zero = len(ops) == 2 and reg64(ops[1]) == r and (
                mn in ("xor", "xorl", "xorq", "sub", "subl", "subq") and ops[0] == ops[1] or
                mn in ("mov", "movl", "movq") and ops[0] in ("$0x0", "$0"))
            if zero:
                return None  # a null pointer: no object on this path
            step = self.follow(mn, ops, comment, r, 0) if mn.startswith(("add", "sub", "lea")) else None
            if step is not None and step[0] == "reg" and step[1] == r and step[3] in ("step", "regstep"):
                self.named_stepped = True  # the named value, stepped: r goes on
            elif mn in ("mov", "movq") and len(ops) == 2 and ops[1] == "%" + r and reg64(ops[0]) == ops[0].lstrip("%"):
                r = reg64(ops[0])
            elif mn.startswith("call") and r == "rax" and self.allocator(ops):
                return False if not self.forward(ctx, scopes, insns, preds, p, mem, width, ends) else None
            elif mn in ("mov", "movq") and len(ops) == 2 and ops[1] == "%" + r and not ops[0].startswith(("$", "%")):
                m = memory_operands(mn, ops[:1], comment)
                if not m or m[0]["seg"]:
                    return False
                slot = self.spill_slot(ctx, insns, p)
                if slot is not None:
                    return ("slot", slot)  # a reload
                a = self.loaded(cu, sub, c_lang, insns, preds, p, mem["disp"], width, 0)
                ends[("load", p, r)] = a
                return None
            else:
                return False
        named = self.named_here(ctx, scopes, insns, p, r, mem, width)
        if named is not None:
            ends[("at", p, r)] = named
            return None
        return r

    def allocator(self, ops):
        """Whether a direct call's target is an allocation function: by the
        label objdump gives the code there (a PLT stub's malloc@plt, or the
        function's own symbol)."""
        if len(ops) != 1 or not re.match(r"^[0-9a-f]+$", ops[0]):
            return False
        if getattr(self, "_labels", None) is None:
            out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", self.binary], stdout=subprocess.PIPE,
                                 universal_newlines=True, check=True).stdout
            self._labels = {int(m.group(1), 16): m.group(2)
                            for m in re.finditer(r"^([0-9a-f]+) <([^>]+)>:$", out, re.M)}
        name = self._labels.get(int(ops[0], 16), "")
        name = name[:-4] if name.endswith("@plt") else name
        return name.split("@")[0] in ALLOCATORS

    def forward(self, ctx, scopes, insns, preds, c, mem, width, ends):
        """From allocation call C: every path to the first register a
        variable of SCOPES names with the block in it, or the first store of
        it into memory no spill slot; False with more than NAMED_ENDS ends."""
        cu, sub, c_lang = ctx
        at = {a: k for k, (a, _, _, _) in enumerate(insns)}
        work, seen = [(c + 1, frozenset({"rax"}))], {}
        while work:
            k, regs = work.pop()
            if k >= len(insns) or regs <= seen.get(k, frozenset()):
                continue
            seen[k] = seen.get(k, frozenset()) | regs
            addr, mn, ops, comment = insns[k]
            named = [r for r in sorted(regs) if self.named_here(ctx, scopes, insns, k, r, mem, width) is not None]
            if named:
                ends[("at", k, named[0])] = self.named_here(ctx, scopes, insns, k, named[0], mem, width)
                continue
            mems = memory_operands(mn, ops, comment)
            if (mn in ("mov", "movq") and len(ops) == 2 and reg64(ops[0]) == ops[0].lstrip("%") and
                    reg64(ops[0]) in regs and len(mems) == 1 and not mems[0]["seg"] and not ops[1].startswith("%")):
                if self.spill_slot(ctx, insns, k) is None:
                    a = self.loaded(cu, sub, c_lang, insns, preds, k, mem["disp"], width, 0)
                    ends[("store", k, reg64(ops[0]))] = a
                    continue
            if mn in ("mov", "movq") and len(ops) == 2 and reg64(ops[0]) == ops[0].lstrip("%") and \
                    reg64(ops[0]) in regs and reg64(ops[1]) == ops[1].lstrip("%"):
                regs = regs | {reg64(ops[1])}
            else:
                regs = regs - writes(mn, ops)
            if not regs or mn.startswith("ret") or mn in ("ud2", "hlt"):
                continue
            if mn.startswith("j") and ops and not ops[0].startswith("*"):
                t = int(ops[0].split()[0], 16)
                if t in at:
                    work.append((at[t], regs))
                if mn.startswith("jmp"):
                    continue
            elif mn.startswith("jmp"):
                continue
            work.append((k + 1, regs))
        return len(ends) <= NAMED_ENDS

    def got_target(self, slot):
        """What the dynamic relocation at SLOT puts there (a symbol of this
        file, or a RELATIVE's addend), or None."""
        from elftools.elf.relocation import RelocationSection
        elf = self.dw.elf
        for sec in elf.iter_sections():
            if not isinstance(sec, RelocationSection) or not sec["sh_flags"] & 2:  # SHF_ALLOC
                continue
            symtab = elf.get_section(sec["sh_link"])
            for r in sec.iter_relocations():
                if r["r_offset"] != slot:
                    continue
                t = r["r_info_type"]
                if t == 8:  # R_X86_64_RELATIVE
                    return r["r_addend"]
                if t in (1, 6):  # R_X86_64_64, GLOB_DAT
                    sym = symtab.get_symbol(r["r_info_sym"])
                    if sym["st_shndx"] == "SHN_UNDEF":
                        return None
                    return sym["st_value"] + r["r_addend"]
                return None
        return None

    def follow(self, mn, ops, comment, r, add):
        if len(ops) != 2 or reg64(ops[1]) != r or ops[1].lstrip("%") != r:
            return None
        src = ops[0]
        if mn.startswith("lea"):
            mem = memory_operands("mov", [src], comment)
            if not mem or mem[0]["seg"]:
                return None
            mem = mem[0]
            if mem["base"] == "rip":
                return ("found", mem["disp"], add, False) if mem["index"] is None else None
            if mem["base"] is None:
                return None
            b = reg64("%" + mem["base"])
            if b == r and mem["index"] is None:
                return ("reg", b, add, "step")
            return ("reg", b, add + mem["disp"], "index" if mem["index"] is not None else False)
        if mn in ("mov", "movq") and src.endswith("(%rip)") and comment is not None:
            return ("slot", comment, add, False)
        if mn in ("mov", "movq") and not src.startswith(("$", "%")) and memory_operands(mn, [src], comment):
            m = memory_operands(mn, [src], comment)[0]
            return None if m["seg"] else ("load", None, add, False)
        if mn in ("mov", "movq", "movabs") and src.startswith("$"):
            v = int(src[1:], 16)
            return ("found", v, add, False) if v > 0x1000 else None
        if mn in ("mov", "movq") and src.startswith("%") and reg64(src) == src.lstrip("%"):
            return ("reg", reg64(src), add, False)
        if mn.startswith(("add", "sub")) and src.startswith("$"):
            return ("reg", r, add, "step")
        if mn in ("sub", "subq") and src.startswith("%") and reg64(src) == src.lstrip("%") and reg64(src) != r:
            return ("reg", r, add, "regstep")  # p - n (of p + q either may be the pointer: not followed)
        return None

    def sampled(self, func, link):
        """The Answer a timer sample at LINK in FUNC takes: its instruction's
        first memory operand's, else (the IP skidded past the instruction
        that took the time) the last one before it in its basic block (a
        block ends at a jump, a call, a return; one starts at a jump's
        target); None when there is none."""
        insns = self._insns.get(func)
        if insns is None:
            insns = self._insns[func] = disassemble(self.binary, func)
            self._answers[func] = self.accesses(func)
        answers = self._answers[func]
        targets = set()
        for _, mn, ops, _ in insns:
            if mn.startswith("j") and ops and not ops[0].startswith("*"):
                targets.add(int(ops[0].split()[0], 16))
        idx = [i for i, x in enumerate(insns) if x[0] == link]
        if not idx:
            return None
        i = idx[0]
        if insns[i][0] in answers:
            return answers[insns[i][0]][0]
        while i > 0 and insns[i][0] not in targets:
            prev = insns[i - 1]
            if prev[1].startswith(("j", "call", "ret")):
                break
            i -= 1
            if prev[0] in answers:
                return answers[prev[0]][0]
        return None

    def accesses(self, func):
        """{addr: [Answer per memory operand]} of FUNC."""
        insns = disassemble(self.binary, func)
        if not insns:
            return {}
        found = self.dw.subprogram_at(insns[0][0])
        out = {}
        preds = self.graph(insns)
        for i, (addr, mn, ops, comment) in enumerate(insns):
            mems = memory_operands(mn, ops, comment)
            if not mems:
                continue
            if found is None:
                out[addr] = [Answer("no subprogram DIE") for _ in mems]
                continue
            cu, sub, c_lang = found
            out[addr] = [self.answer(cu, sub, c_lang, addr, m, None, (insns, preds, i)) for m in mems]
        return out
