/* decode_x86_fast.c - a hand-written decoder for the common x86-64
 * instructions, in front of libopcodes (decode_x86_fast.h).
 *
 * Why: decoding through libopcodes' text printer and parsing the text back
 * was 44% of a cold `perf loops report` (issue 23); mov, lea, the ALU
 * operations, push/pop, calls, jumps, nops and a few more make up the bulk
 * of real code, and each is a few table look-ups here.
 *
 * What it owns: for the instructions below, the exact answer binutils 2.40's
 * i386-dis.c (AT&T) gives through decode_x86.c's token parser: the length,
 * the mnemonic (with its suffix: 'b' for a byte operation on memory, w/l/q
 * for the 'Q' templates on memory, movzbl, movslq, movabs), the operands in
 * print order (source first) encoded as the parser encodes them (register
 * numbers shared across widths, %ah..%bh as 0..3, %riz as 90, a printed
 * SIB's scale, rip-relative displacements resolved, %fs:/%gs: as seg),
 * '*' and a direct target; and the classification (kind, opcode, writes)
 * that decode_x86.c's classify() and gpr_writes() make from that text,
 * without their string compares.
 *
 * Anything else returns 0 ("not handled") and goes to libopcodes: other
 * opcodes, VEX/EVEX, lock/rep/repne (but `repz ret` and endbr64), 0x67,
 * cs/ds/es/ss (but before nops), REX.W where libopcodes would print it as
 * an unused prefix (but a direct call's, with at most two 0x66: TLS code
 * pads its call of __tls_get_addr so), 0x66 where its meaning is not
 * verified, repeated prefixes, truncated bytes.  tests/decode-diff.c (run by
 * tests/core-decode-fast.sh and tests/corpus-decode-fast.sh) compares the
 * two paths field by field on real binaries, tests/fuzz-decode.c on random
 * bytes.
 */
#include "cfg/decode_x86_fast.h"
#include "support/base.h"

#include <stdint.h>
#include <string.h>

enum { REX_B = 1, REX_X = 2, REX_R = 4, REX_W = 8, MAX_LEN = 15, REG_RIZ = 90 };

struct fx {
	const uint8_t *b;
	size_t len, p;         /* bytes available, cursor */
	uint64_t addr;
	struct ls_insn *insn;
	struct ls_x86_parsed *out;
	uint8_t rex;           /* REX bits (low nibble), when has_rex */
	bool has_rex, o16, seg, f3, f2;
	int n66, n2e;
	/* ModRM */
	uint8_t mod, reg, rm;
	struct ls_operand mem; /* the memory operand when mod != 3 (set by parse_mem) */
	bool riprel;
	/* The classification decode_x86.c's classify() and gpr_writes() give
	 * the same mnemonic and operands (decode.h): */
	uint8_t kind, opcode;
	uint16_t implicit;     /* registers written besides the last operand */
	bool dest;             /* the last operand is written (not cmp, test, push, jumps) */
};

enum {
	R_AX = 1 << 0, R_CX = 1 << 1, R_DX = 1 << 2, R_BX = 1 << 3, R_SP = 1 << 4, R_BP = 1 << 5,
	R_SI = 1 << 6, R_DI = 1 << 7, R_11 = 1 << 11,
	R_CALLER_SAVED = R_AX | R_CX | R_DX | R_SI | R_DI | 0x0f00,
};

static void cls(struct fx *f, int kind, int opcode, uint16_t implicit, bool dest)
{
	f->kind = (uint8_t)kind;
	f->opcode = (uint8_t)opcode;
	f->implicit = implicit;
	f->dest = dest;
}

static bool fetch(struct fx *f, size_t n)
{
	return f->p + n <= f->len && f->p + n <= MAX_LEN;
}

static int64_t get_s8(struct fx *f)
{
	return (int8_t)f->b[f->p++];
}

static uint64_t get_u16(struct fx *f)
{
	uint64_t v = f->b[f->p] | (uint64_t)f->b[f->p + 1] << 8;
	f->p += 2;
	return v;
}

static int64_t get_s32(struct fx *f)
{
	int32_t v = ls_s32le(f->b + f->p);
	f->p += 4;
	return v;
}

/* ---- operands, in print order ------------------------------------------------ */

static struct ls_operand *new_op(struct fx *f)
{
	return &f->insn->op[f->insn->nops++];
}

/* A general register of SIZE bytes: the parser's numbering (%ah..%bh are
 * 0..3: without REX, byte registers 4..7 are the high bytes). */
static void op_gpr(struct fx *f, int r, int size)
{
	struct ls_operand *op = new_op(f);
	op->kind = LS_OP_REG;
	op->reg = (int8_t)(size == 1 && !f->has_rex && r >= 4 && r < 8 ? r - 4 : r);
	op->size = (uint8_t)size;
}

static void op_imm(struct fx *f, int64_t v)
{
	struct ls_operand *op = new_op(f);
	op->kind = LS_OP_IMM;
	op->imm = v;
}

/* The E operand (ModRM rm): a register of SIZE bytes or the memory operand. */
static void op_e(struct fx *f, int size)
{
	if (f->mod == 3)
		op_gpr(f, f->rm | (f->rex & REX_B ? 8 : 0), size);
	else
		*new_op(f) = f->mem;
}

static void op_g(struct fx *f, int size)
{
	op_gpr(f, f->reg | (f->rex & REX_R ? 8 : 0), size);
}

/* The SIB and displacement of a memory operand as OP_E_memory (64-bit
 * addressing) prints them: the base unless mod 0 with base 5; the index
 * (%riz when there is none) when a SIB has a scale, an index, or a base
 * other than %rsp/%r12; the displacement whenever mod != 0 or base 5. */
static bool parse_mem(struct fx *f)
{
	struct ls_operand *m = &f->mem;
	*m = (struct ls_operand){ .kind = LS_OP_MEM, .reg = -1, .base = -1, .index = -1, .seg = f->seg };
	int base = f->rm, vindex = 4, scale = 0;
	bool has_sib = base == 4, havebase = true;
	if (has_sib) {
		if (!fetch(f, 1))
			return false;
		uint8_t sib = f->b[f->p++];
		vindex = (sib >> 3 & 7) | (f->rex & REX_X ? 8 : 0);
		scale = sib >> 6;
		base = sib & 7;
	}
	int64_t disp = 0;
	if (f->mod == 0 && base == 5) {
		havebase = false;
		f->riprel = !has_sib;
		if (!fetch(f, 4))
			return false;
		disp = get_s32(f);
	} else if (f->mod == 1) {
		if (!fetch(f, 1))
			return false;
		disp = get_s8(f);
	} else if (f->mod == 2) {
		if (!fetch(f, 4))
			return false;
		disp = get_s32(f);
	}
	bool haveindex = has_sib && vindex != 4;
	bool havedisp = havebase || (has_sib && (haveindex || scale != 0));
	m->disp = disp;
	if (f->riprel)
		m->base = LS_REG_RIP;
	if (havedisp) {
		if (havebase)
			m->base = (int8_t)(base | (f->rex & REX_B ? 8 : 0));
		if (has_sib && (scale != 0 || haveindex || (havebase && base != 4))) {
			m->index = (int8_t)(haveindex ? vindex : REG_RIZ);
			m->scale = (uint8_t)(1 << scale);
		}
	}
	return true;
}

static bool parse_modrm(struct fx *f)
{
	if (!fetch(f, 1))
		return false;
	uint8_t modrm = f->b[f->p++];
	f->mod = modrm >> 6;
	f->reg = modrm >> 3 & 7;
	f->rm = modrm & 7;
	if (f->mod == 3)
		return !f->seg; /* fs/gs on a register-only instruction: libopcodes prints it */
	return parse_mem(f);
}

/* ---- mnemonics ------------------------------------------------------------------ */

static void mnem(struct fx *f, const char *base, char suffix)
{
	size_t n = strlen(base);
	memcpy(f->out->mnemonic, base, n);
	if (suffix)
		f->out->mnemonic[n++] = suffix;
	f->out->mnemonic[n] = 0;
}

static int vsize(const struct fx *f)
{
	return f->rex & REX_W ? 8 : f->o16 ? 2 : 4;
}

/* 'Q': w/l/q on a memory operand; 'A': b on a memory operand. */
static char q_suffix(const struct fx *f)
{
	if (f->mod == 3)
		return 0;
	return f->rex & REX_W ? 'q' : f->o16 ? 'w' : 'l';
}

static char a_suffix(const struct fx *f)
{
	return f->mod == 3 ? 0 : 'b';
}

static const char *const alu_names[8] = { "add", "or", "adc", "sbb", "and", "sub", "xor", "cmp" };
static const char *const shift_names[8] = { "rol", "ror", "rcl", "rcr", "shl", "shr", "shl", "sar" };
/* add/sub/and/cmp are what the jump-table analysis reads; cmp writes nothing. */
static void cls_alu(struct fx *f, int which)
{
	static const uint8_t opcodes[8] = { LS_MN_ADD, 0, 0, 0, LS_MN_AND, LS_MN_SUB, 0, LS_MN_CMP };
	cls(f, LS_INSN_OTHER, opcodes[which], 0, which != 7);
}

static const char *const cc_names[16] = { "o", "no", "b", "ae", "e", "ne", "be", "a",
                                          "s", "ns", "p", "np", "l", "ge", "le", "g" };

static void mnem_cc(struct fx *f, const char *base, int cc)
{
	char m[16];
	size_t n = strlen(base);
	memcpy(m, base, n);
	strcpy(m + n, cc_names[cc]);
	mnem(f, m, 0);
}

/* The conditional jumps; the jump-table bounds read ja/jae/jb/jbe. */
static void jcc(struct fx *f, int cc)
{
	static const uint8_t opcodes[16] = { [2] = LS_MN_JB, [3] = LS_MN_JAE, [6] = LS_MN_JBE, [7] = LS_MN_JA };
	mnem_cc(f, "j", cc);
	cls(f, LS_INSN_CJUMP, opcodes[cc], 0, false);
}

/* Iv: 32 bits sign-extended with REX.W, else zero-extended (16 with 0x66). */
static bool imm_v(struct fx *f)
{
	if (f->o16 && !(f->rex & REX_W)) {
		if (!fetch(f, 2))
			return false;
		op_imm(f, (int64_t)get_u16(f));
		return true;
	}
	if (!fetch(f, 4))
		return false;
	int64_t v = get_s32(f);
	op_imm(f, f->rex & REX_W ? v : (int64_t)(uint32_t)v);
	return true;
}

static bool imm_b(struct fx *f)
{
	if (!fetch(f, 1))
		return false;
	op_imm(f, f->b[f->p++]);
	return true;
}

/* sIb: sign-extended, then cut to the operand size unless REX.W. */
static bool imm_sb(struct fx *f)
{
	if (!fetch(f, 1))
		return false;
	int64_t v = get_s8(f);
	if (!(f->rex & REX_W))
		v &= f->o16 ? 0xffff : 0xffffffff;
	op_imm(f, v);
	return true;
}

static bool rel_target(struct fx *f, int bytes)
{
	if (!fetch(f, (size_t)bytes))
		return false;
	int64_t rel = bytes == 1 ? get_s8(f) : get_s32(f);
	f->insn->target = f->addr + f->p + (uint64_t)rel;
	f->out->have_target = true;
	return true;
}

/* ---- one-byte opcodes ------------------------------------------------------------ */

/* 00-3f: add/or/adc/sbb/and/sub/xor/cmp in their six forms. */
static bool dec_alu(struct fx *f, uint8_t op)
{
	int form = op & 7;
	mnem(f, alu_names[op >> 3], 0);
	cls_alu(f, op >> 3);
	if (form >= 4 && f->seg)
		return false; /* no memory operand: libopcodes prints the prefix */
	if (form == 4) {
		if (f->o16 || f->has_rex)
			return false;
		if (!imm_b(f))
			return false;
		op_gpr(f, 0, 1);
		return true;
	}
	if (form == 5) {
		if (!imm_v(f))
			return false;
		op_gpr(f, 0, vsize(f));
		return true;
	}
	if (!parse_modrm(f))
		return false;
	int size = form & 1 ? vsize(f) : 1;
	if (size == 1 && f->o16)
		return false;
	if (form < 2) {
		op_g(f, size);
		op_e(f, size);
	} else {
		op_e(f, size);
		op_g(f, size);
	}
	return true;
}

/* 80/81/83: the ALU operation with an immediate; c6/c7 /0: mov. */
static bool dec_group_imm(struct fx *f, uint8_t op)
{
	if (!parse_modrm(f))
		return false;
	bool byte = op == 0x80 || op == 0xc6;
	if (byte && f->o16)
		return false;
	if (op >= 0xc6) {
		if (f->reg != 0)
			return false;
		mnem(f, "mov", byte ? a_suffix(f) : q_suffix(f));
		cls(f, LS_INSN_OTHER, LS_MN_MOV, 0, true);
	} else {
		mnem(f, alu_names[f->reg], byte ? a_suffix(f) : q_suffix(f));
		cls_alu(f, f->reg);
	}
	bool ok = byte ? imm_b(f) : op == 0x83 ? imm_sb(f) : imm_v(f);
	if (!ok)
		return false;
	op_e(f, byte ? 1 : vsize(f));
	return true;
}

/* c0/c1/d0/d1/d2/d3: the rotations and shifts (by 1, %cl or an immediate). */
static bool dec_shift(struct fx *f, uint8_t op)
{
	if (!parse_modrm(f))
		return false;
	bool byte = !(op & 1);
	if (byte && f->o16)
		return false;
	mnem(f, shift_names[f->reg], byte ? a_suffix(f) : q_suffix(f));
	if (op <= 0xc1) {
		if (!imm_b(f))
			return false;
	} else if (op >= 0xd2) {
		op_gpr(f, 1, 1); /* %cl */
	}
	op_e(f, byte ? 1 : vsize(f));
	return true;
}

/* f6/f7: test $imm, not, neg, mul, imul, div, idiv. */
static bool dec_group3(struct fx *f, uint8_t op)
{
	static const char *const names[8] = { "test", NULL, "not", "neg", "mul", "imul", "div", "idiv" };
	if (!parse_modrm(f) || !names[f->reg])
		return false;
	bool byte = op == 0xf6;
	if (byte && f->o16)
		return false;
	mnem(f, names[f->reg], byte ? a_suffix(f) : q_suffix(f));
	/* mul, imul, div, idiv of one operand: %rdx:%rax, and the operand too
	 * (gpr_writes: the last operand is not read-only). */
	cls(f, LS_INSN_OTHER, 0, f->reg >= 4 ? R_AX | R_DX : 0, f->reg != 0);
	if (f->reg == 0 && !(byte ? imm_b(f) : imm_v(f)))
		return false;
	op_e(f, byte ? 1 : vsize(f));
	return true;
}

/* fe/ff: inc, dec; ff: call *, jmp *, push. */
static bool dec_group5(struct fx *f, uint8_t op)
{
	if (!parse_modrm(f))
		return false;
	bool byte = op == 0xfe;
	if (f->reg <= 1) {
		if (byte && f->o16)
			return false;
		mnem(f, f->reg ? "dec" : "inc", byte ? a_suffix(f) : q_suffix(f));
		op_e(f, byte ? 1 : vsize(f));
		return true;
	}
	if (byte || f->o16 || (f->rex & (REX_W | REX_R)))
		return false;
	switch (f->reg) {
	case 2:
	case 4:
		mnem(f, f->reg == 2 ? "call" : "jmp", 0);
		f->out->indirect = true;
		if (f->reg == 2)
			cls(f, LS_INSN_ICALL, 0, R_CALLER_SAVED | R_SP, false);
		else
			cls(f, LS_INSN_IJUMP, LS_MN_JMP, 0, false);
		op_e(f, 8);
		return true;
	case 6:
		mnem(f, "push", 0);
		cls(f, LS_INSN_OTHER, LS_MN_PUSH, R_SP, false);
		op_e(f, 8);
		return true;
	default:
		return false;
	}
}

/* 88-8b mov, 84/85 test, 86/87 xchg, 8d lea: the ModRM pairs. */
static bool dec_pair(struct fx *f, uint8_t op)
{
	if (!parse_modrm(f))
		return false;
	bool byte = !(op & 1) && op != 0x8d;
	if (byte && f->o16)
		return false;
	int size = byte ? 1 : vsize(f);
	switch (op) {
	case 0x84: case 0x85:
		mnem(f, "test", 0);
		cls(f, LS_INSN_OTHER, 0, 0, false);
		break;
	case 0x86: case 0x87:
		mnem(f, "xchg", 0);
		cls(f, LS_INSN_OTHER, 0, 0, true); /* and both operands: below */
		break;
	case 0x8d:
		if (f->mod == 3 || f->o16 || f->seg)
			return false;
		mnem(f, "lea", 0);
		cls(f, LS_INSN_OTHER, LS_MN_LEA, 0, true);
		op_e(f, size);
		op_g(f, size);
		return true;
	default:
		mnem(f, "mov", 0);
		cls(f, LS_INSN_OTHER, LS_MN_MOV, 0, true);
		if (op >= 0x8a) {
			op_e(f, size);
			op_g(f, size);
			return true;
		}
	}
	op_g(f, size);
	op_e(f, size);
	if (op == 0x86 || op == 0x87) {
		const struct ls_operand *o = f->insn->op;
		if (o[1].kind == LS_OP_REG && o[0].reg == 0 && o[1].reg == 0)
			cls(f, LS_INSN_OTHER, LS_MN_NOP, 0, false); /* classify(): xchg %ax,%ax as a nop */
		else /* the register operand, as printed (%ah is 0) */
			f->implicit = (uint16_t)(1u << o[0].reg);
	}
	return true;
}

/* ret, leave, int3, hlt, call, jmp, jcc: no operand size to choose. */
static bool dec_control(struct fx *f, uint8_t op)
{
	switch (op) {
	case 0xc3:
		mnem(f, "ret", 0);
		cls(f, LS_INSN_RET, 0, R_SP, false);
		return true;
	case 0xc9:
		mnem(f, "leave", 0);
		cls(f, LS_INSN_OTHER, LS_MN_LEAVE, R_SP | R_BP, false);
		return true;
	case 0xcc:
		mnem(f, "int3", 0);
		cls(f, LS_INSN_HALT, 0, 0, false);
		return true;
	case 0xf4:
		mnem(f, "hlt", 0);
		cls(f, LS_INSN_HALT, LS_MN_HLT, 0, false);
		return true;
	case 0xe8:
		mnem(f, "call", 0);
		cls(f, LS_INSN_CALL, 0, R_CALLER_SAVED | R_SP, false);
		return rel_target(f, 4);
	case 0xe9:
		mnem(f, "jmp", 0);
		cls(f, LS_INSN_JUMP, LS_MN_JMP, 0, false);
		return rel_target(f, 4);
	case 0xeb:
		mnem(f, "jmp", 0);
		cls(f, LS_INSN_JUMP, LS_MN_JMP, 0, false);
		return rel_target(f, 1);
	default:
		if (op >= 0x70 && op <= 0x7f) {
			jcc(f, op & 15);
			return rel_target(f, 1);
		}
		return false;
	}
}

/* The one-byte opcodes without a ModRM. */
static bool dec_plain(struct fx *f, uint8_t op)
{
	bool rex_w = f->rex & REX_W;
	if (op >= 0x50 && op <= 0x5f) {
		if (f->o16 || (f->rex & ~REX_B))
			return false;
		mnem(f, op < 0x58 ? "push" : "pop", 0);
		if (op < 0x58)
			cls(f, LS_INSN_OTHER, LS_MN_PUSH, R_SP, false);
		else
			cls(f, LS_INSN_OTHER, LS_MN_POP, R_SP, true);
		op_gpr(f, (op & 7) | (f->rex & REX_B ? 8 : 0), 8);
		return true;
	}
	if (op == 0x6a || op == 0x68) {
		/* push $imm, sign-extended (a lazy PLT slot's push $n) */
		if (f->o16 || f->has_rex || !fetch(f, op == 0x6a ? 1 : 4))
			return false;
		mnem(f, "push", 0);
		cls(f, LS_INSN_OTHER, LS_MN_PUSH, R_SP, false);
		op_imm(f, op == 0x6a ? get_s8(f) : get_s32(f));
		return true;
	}
	if (op >= 0xb0 && op <= 0xb7) {
		if (f->o16)
			return false;
		mnem(f, "mov", 0);
		cls(f, LS_INSN_OTHER, LS_MN_MOV, 0, true);
		if (!imm_b(f))
			return false;
		op_gpr(f, (op & 7) | (f->rex & REX_B ? 8 : 0), 1);
		return true;
	}
	if (op >= 0xb8 && op <= 0xbf) {
		int r = (op & 7) | (f->rex & REX_B ? 8 : 0);
		if (rex_w) {
			if (!fetch(f, 8))
				return false;
			uint64_t v = 0;
			for (int i = 7; i >= 0; i--)
				v = v << 8 | f->b[f->p + (size_t)i];
			f->p += 8;
			mnem(f, "movabs", 0);
			cls(f, LS_INSN_OTHER, 0, 0, true);
			op_imm(f, (int64_t)v);
		} else {
			mnem(f, "mov", 0);
			cls(f, LS_INSN_OTHER, LS_MN_MOV, 0, true);
			if (!imm_v(f))
				return false;
		}
		op_gpr(f, r, vsize(f));
		return true;
	}
	if (f->has_rex && !(op == 0x98 || op == 0x99))
		return false;
	switch (op) {
	case 0x90:
		if (f->o16) {
			mnem(f, "xchg", 0);
			op_gpr(f, 0, 2);
			op_gpr(f, 0, 2);
		} else {
			mnem(f, "nop", 0);
		}
		cls(f, LS_INSN_OTHER, LS_MN_NOP, 0, false);
		return true;
	case 0x98:
		mnem(f, rex_w ? "cltq" : f->o16 ? "cbtw" : "cwtl", 0);
		cls(f, LS_INSN_OTHER, rex_w ? LS_MN_CLTQ : 0, R_AX, false);
		return !(rex_w && f->o16) && (f->rex & ~REX_W) == 0;
	case 0x99:
		mnem(f, rex_w ? "cqto" : f->o16 ? "cwtd" : "cltd", 0);
		cls(f, LS_INSN_OTHER, 0, R_DX, false);
		return !(rex_w && f->o16) && (f->rex & ~REX_W) == 0;
	case 0xa8:
		mnem(f, "test", 0);
		cls(f, LS_INSN_OTHER, 0, 0, false);
		if (f->o16 || !imm_b(f))
			return false;
		op_gpr(f, 0, 1);
		return true;
	case 0xa9:
		mnem(f, "test", 0);
		cls(f, LS_INSN_OTHER, 0, 0, false);
		if (!imm_v(f))
			return false;
		op_gpr(f, 0, vsize(f));
		return true;
	default:
		break;
	}
	if (f->o16)
		return false;
	return dec_control(f, op);
}

/* 69/6b: imul $imm,E,G. */
static bool dec_imul3(struct fx *f, uint8_t op)
{
	if (!parse_modrm(f))
		return false;
	mnem(f, "imul", 0);
	cls(f, LS_INSN_OTHER, 0, 0, true);
	if (!(op == 0x6b ? imm_sb(f) : imm_v(f)))
		return false;
	op_e(f, vsize(f));
	op_g(f, vsize(f));
	return true;
}

static bool dec_onebyte(struct fx *f, uint8_t op)
{
	if (op < 0x40) {
		if ((op & 7) >= 6)
			return false;
		return dec_alu(f, op);
	}
	switch (op) {
	case 0x63:
		if (!(f->rex & REX_W) || f->o16 || !parse_modrm(f))
			return false;
		mnem(f, "movslq", 0);
		cls(f, LS_INSN_OTHER, LS_MN_MOVSXD, 0, true);
		op_e(f, 4);
		op_g(f, 8);
		return true;
	case 0x69: case 0x6b:
		return dec_imul3(f, op);
	case 0x80: case 0x81: case 0x83: case 0xc6: case 0xc7:
		return dec_group_imm(f, op);
	case 0x84: case 0x85: case 0x86: case 0x87: case 0x88: case 0x89: case 0x8a: case 0x8b: case 0x8d:
		return dec_pair(f, op);
	case 0xc0: case 0xc1: case 0xd0: case 0xd1: case 0xd2: case 0xd3:
		return dec_shift(f, op);
	case 0xf6: case 0xf7:
		return dec_group3(f, op);
	case 0xfe: case 0xff:
		return dec_group5(f, op);
	default:
		if (f->seg)
			return false; /* no memory operand below */
		return dec_plain(f, op);
	}
}

/* ---- two-byte opcodes (0f xx) ------------------------------------------------------ */

static bool dec_twobyte(struct fx *f)
{
	if (!fetch(f, 1))
		return false;
	uint8_t op = f->b[f->p++];
	if (op >= 0x80 && op <= 0x8f) {
		if (f->o16 || f->has_rex || f->seg)
			return false;
		jcc(f, op & 15);
		return rel_target(f, 4);
	}
	if (op >= 0x90 && op <= 0x9f) {
		if (f->o16 || !parse_modrm(f))
			return false;
		mnem_cc(f, "set", op & 15);
		cls(f, LS_INSN_OTHER, 0, 0, true);
		op_e(f, 1);
		return true;
	}
	if (op >= 0x40 && op <= 0x4f) {
		if (!parse_modrm(f))
			return false;
		mnem_cc(f, "cmov", op & 15);
		cls(f, LS_INSN_OTHER, 0, 0, true);
		op_e(f, vsize(f));
		op_g(f, vsize(f));
		return true;
	}
	switch (op) {
	case 0xb6: case 0xb7: case 0xbe: case 0xbf: {
		if (f->o16 || !parse_modrm(f))
			return false;
		char m[8] = "movzbl";
		if (op >= 0xbe)
			m[3] = 's';
		if (op & 1)
			m[4] = 'w';
		m[5] = f->rex & REX_W ? 'q' : 'l';
		mnem(f, m, 0);
		cls(f, LS_INSN_OTHER, op < 0xbe ? LS_MN_MOVZX : 0, 0, true);
		op_e(f, op & 1 ? 2 : 1);
		/* classify_move: a movz's memory source gets its width */
		if (op < 0xbe && f->mod != 3)
			f->insn->op[0].size = op & 1 ? 2 : 1;
		op_g(f, vsize(f));
		return true;
	}
	case 0xaf:
		if (!parse_modrm(f))
			return false;
		mnem(f, "imul", 0);
		cls(f, LS_INSN_OTHER, 0, 0, true);
		op_e(f, vsize(f));
		op_g(f, vsize(f));
		return true;
	case 0x05:
	case 0x0b:
		if (f->o16 || f->has_rex || f->seg)
			return false;
		mnem(f, op == 0x05 ? "syscall" : "ud2", 0);
		if (op == 0x05)
			cls(f, LS_INSN_OTHER, 0, R_AX | R_CX | R_11, false);
		else
			cls(f, LS_INSN_HALT, 0, 0, false);
		return true;
	default:
		return false;
	}
}

/* 0f 1f /0 with a memory operand, any number of 0x66 and cs prefixes
 * (the compilers' padding: "data16 cs nopw 0x0(%rax,%rax,1)"). */
static bool dec_nop(struct fx *f)
{
	if (f->has_rex || f->seg || !parse_modrm(f) || f->mod == 3 || f->reg != 0)
		return false;
	mnem(f, "nop", q_suffix(f));
	cls(f, LS_INSN_OTHER, LS_MN_NOP, 0, false);
	op_e(f, vsize(f));
	return true;
}

/* The SSE moves and zeroing idioms of compiled code: 0f 10/11 28/29 57
 * 6f/7f d6 7e ef, by mandatory prefix (none, 66, f3, f2).  DIR 0 is the
 * {XM, EX} template (printed EX,XM), 1 the stores {EX, XM}.  Returns 1
 * when decoded, 0 when OP is none of these (nothing read), -1 when it is
 * one but not decoded here. */
static int dec_sse(struct fx *f, uint8_t op, int pfx)
{
	static const struct {
		uint8_t op, dir, opcode;
		const char *name[4]; /* none, 66, f3, f2 */
	} table[] = {
		{ 0x10, 0, LS_MN_VMOV, { "movups", "movupd", "movss", "movsd" } },
		{ 0x11, 1, LS_MN_VMOV, { "movups", "movupd", "movss", "movsd" } },
		{ 0x28, 0, LS_MN_VMOV, { "movaps", "movapd", NULL, NULL } },
		{ 0x29, 1, LS_MN_VMOV, { "movaps", "movapd", NULL, NULL } },
		{ 0x57, 0, 0, { "xorps", "xorpd", NULL, NULL } },
		{ 0x6f, 0, LS_MN_VMOV, { NULL, "movdqa", "movdqu", NULL } },
		{ 0x7f, 1, LS_MN_VMOV, { NULL, "movdqa", "movdqu", NULL } },
		/* classify(): "movq" is mov with a q suffix */
		{ 0x7e, 0, LS_MN_MOV, { NULL, NULL, "movq", NULL } },
		{ 0xd6, 1, LS_MN_MOV, { NULL, "movq", NULL, NULL } },
		{ 0xef, 0, 0, { NULL, "pxor", NULL, NULL } },
	};
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
		if (table[i].op != op || !table[i].name[pfx])
			continue;
		f->p++;
		if ((f->rex & REX_W) || !parse_modrm(f))
			return -1;
		mnem(f, table[i].name[pfx], 0);
		cls(f, LS_INSN_OTHER, table[i].opcode, 0, false);
		struct ls_operand xm = { .kind = LS_OP_REG, .reg = (int8_t)(32 + (f->reg | (f->rex & REX_R ? 8 : 0))),
		                         .base = -1, .index = -1, .size = 16 };
		struct ls_operand ex = { .kind = LS_OP_REG, .reg = (int8_t)(32 + (f->rm | (f->rex & REX_B ? 8 : 0))),
		                         .base = -1, .index = -1, .size = 16 };
		if (f->mod != 3)
			ex = f->mem;
		*new_op(f) = table[i].dir ? xm : ex;
		*new_op(f) = table[i].dir ? ex : xm;
		return 1;
	}
	return 0;
}

/* ---- prefixes and the entry point ------------------------------------------------ */

static bool read_prefixes(struct fx *f)
{
	for (;;) {
		if (!fetch(f, 1))
			return false;
		uint8_t c = f->b[f->p];
		if (c == 0x66)
			f->n66++;
		else if (c == 0x2e)
			f->n2e++;
		else if ((c == 0x64 || c == 0x65) && !f->seg)
			f->seg = true;
		else if (c == 0xf3 && !f->f3)
			f->f3 = true;
		else if (c == 0xf2 && !f->f2)
			f->f2 = true;
		else
			break;
		f->p++;
	}
	f->o16 = f->n66 > 0;
	uint8_t c = f->b[f->p];
	if ((c & 0xf0) == 0x40) {
		f->has_rex = true;
		f->rex = c & 15;
		f->p++;
	}
	return true;
}

static bool dispatch(struct fx *f)
{
	if (!read_prefixes(f) || !fetch(f, 1))
		return false;
	uint8_t op = f->b[f->p++];
	if (op == 0x0f && fetch(f, 1) && f->b[f->p] == 0x1f) {
		/* The padding nops take the prefixes nothing else here takes. */
		if (f->f3)
			return false;
		f->p++;
		return dec_nop(f);
	}
	if (op == 0xe8 && f->n66 <= 2 && f->has_rex && f->rex == REX_W && !f->n2e && !f->seg && !f->f3 && !f->f2)
		return dec_control(f, op); /* TLS's `data16 data16 rex.W call __tls_get_addr` (REX.W wins) */
	if (f->n2e || f->n66 > 1)
		return false;
	if (op == 0x0f && fetch(f, 1) && f->n66 + f->f3 + f->f2 <= 1) {
		int pfx = f->n66 ? 1 : f->f3 ? 2 : f->f2 ? 3 : 0;
		int r = dec_sse(f, f->b[f->p], pfx);
		if (r)
			return r > 0;
	}
	if (f->f2)
		return false;
	if (f->f3) {
		/* endbr64 and `repz ret`, nothing else with f3. */
		if (f->n66 || f->has_rex || f->seg)
			return false;
		if (op == 0xc3) {
			mnem(f, "ret", 0);
			cls(f, LS_INSN_RET, 0, R_SP, false);
			return true;
		}
		if (op == 0x0f && fetch(f, 2) && f->b[f->p] == 0x1e && f->b[f->p + 1] == 0xfa) {
			f->p += 2;
			mnem(f, "endbr64", 0);
			cls(f, LS_INSN_OTHER, LS_MN_ENDBR, 0, false);
			return true;
		}
		return false;
	}
	if (f->o16 && (f->rex & REX_W))
		return false; /* libopcodes prints the 0x66 as data16 */
	return op == 0x0f ? dec_twobyte(f) : dec_onebyte(f, op);
}

size_t ls_x86_fast_decode(const uint8_t *bytes, size_t len, uint64_t addr, struct ls_insn *insn,
                          struct ls_x86_parsed *p)
{
	/* Field by field: a struct initializer zeroes the memory operand too,
	 * with a `rep stos` that cost a fifth of this function. */
	struct fx f;
	f.b = bytes;
	f.len = len;
	f.p = 0;
	f.addr = addr;
	f.insn = insn;
	f.out = p;
	f.rex = 0;
	f.has_rex = f.o16 = f.seg = f.f3 = f.f2 = f.riprel = false;
	f.n66 = f.n2e = 0;
	f.mod = f.reg = f.rm = 0;
	f.kind = LS_INSN_OTHER;
	f.opcode = LS_MN_OTHER;
	f.implicit = 0;
	f.dest = true;
	p->mnemonic[0] = 0;
	p->indirect = p->have_target = false;
	/* An instruction that would end past 2^64: libopcodes does not read
	 * it (tests/fuzz-decode.c found this), neither do we. */
	if (addr > UINT64_MAX - 16)
		return 0;
	if (!dispatch(&f))
		return 0;
	if (insn->nops > 3)
		return 0;
	if (f.riprel) {
		for (int i = 0; i < insn->nops; i++)
			if (insn->op[i].kind == LS_OP_MEM && insn->op[i].base == LS_REG_RIP) {
				insn->op[i].disp = (int64_t)(addr + f.p + (uint64_t)insn->op[i].disp);
				break;
			}
	}
	insn->len = (uint8_t)f.p;
	insn->kind = f.kind;
	insn->opcode = f.opcode;
	insn->writes = f.implicit;
	const struct ls_operand *last = insn->nops ? &insn->op[insn->nops - 1] : NULL;
	if (f.dest && last && last->kind == LS_OP_REG && last->reg >= 0 && last->reg < 16)
		insn->writes |= (uint16_t)(1u << last->reg);
	return f.p;
}
