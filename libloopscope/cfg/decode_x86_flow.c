/* decode_x86_flow.c - the control flow of the common x86-64 instructions:
 * length, kind, direct target and LS_MN_* opcode, no operands
 * (ls_decode_flow in decode.h).
 *
 * Why: the noreturn proofs (noreturn.c's quick_returns) read only those
 * fields of the instructions they sweep, and the fast decoder spends most
 * of its work on what they do not read: operands, mnemonics, written
 * registers (issue 23: 8% of a cold system-wide report).
 *
 * What it owns: for the instructions below with no legacy prefix and at
 * most one REX byte -- a subset of what decode_x86_fast.c takes, under its
 * conditions -- the answer decode_x86_fast.c gives.  Anything else,
 * and any instruction cut short, returns 0 and ls_decode_flow hands the
 * bytes to ls_decode (the fast decoder, then libopcodes).  Held to
 * ls_decode's answer by tests/decode-diff.c (tests/core-decode-fast.sh:
 * real binaries) and tests/fuzz-decode.c (random bytes).
 */
#include "cfg/decode_x86_fast.h"
#include "support/base.h"

enum { W = 8, R = 4, B = 1 };

/* The bytes of a ModRM operand from B (AVAIL bytes there): the ModRM,
 * a SIB, a displacement; 0 when they are not all there. */
static size_t modrm_bytes(const uint8_t *b, size_t avail)
{
	if (avail < 1)
		return 0;
	uint8_t mod = b[0] >> 6, rm = b[0] & 7;
	if (mod == 3)
		return 1;
	size_t n = 1;
	uint8_t base = rm;
	if (rm == 4) {
		if (avail < 2)
			return 0;
		base = b[1] & 7;
		n = 2;
	}
	n += mod == 1 ? 1 : mod == 2 || (mod == 0 && base == 5) ? 4 : 0;
	return n <= avail ? n : 0;
}

static const uint8_t alu_opcodes[8] = { LS_MN_ADD, 0, 0, 0, LS_MN_AND, LS_MN_SUB, 0, LS_MN_CMP };
static const uint8_t jcc_opcodes[16] = { [2] = LS_MN_JB, [3] = LS_MN_JAE, [6] = LS_MN_JBE, [7] = LS_MN_JA };

struct flow {
	uint8_t kind, opcode;
	size_t imm;     /* immediate bytes after the ModRM operand */
	size_t rel;     /* rel8/rel32 bytes (a direct branch), when no ModRM */
	bool modrm;     /* a ModRM operand follows the opcode */
	bool mem_only;  /* refused with a register operand (lea, nop) */
	int reg;        /* required ModRM reg field, or -1; -2: see group() */
};

/* f6/f7, fe/ff: what the ModRM reg field makes of them (decode_x86_fast.c's
 * dec_group3 and dec_group5); false when the fast decoder refuses it. */
static bool group(uint8_t op, uint8_t reg, uint8_t rex, struct flow *fl)
{
	if (op == 0xf6 || op == 0xf7) {
		if (reg == 1)
			return false;
		fl->imm = reg == 0 ? (op == 0xf6 ? 1 : 4) : 0;
		return true;
	}
	if (reg <= 1)
		return true; /* inc, dec */
	if (op == 0xfe || (rex & (W | R)))
		return false;
	if (reg == 2)
		fl->kind = LS_INSN_ICALL;
	else if (reg == 4) {
		fl->kind = LS_INSN_IJUMP;
		fl->opcode = LS_MN_JMP;
	} else if (reg == 6)
		fl->opcode = LS_MN_PUSH;
	else
		return false;
	return true;
}

/* The one-byte opcodes, REX (low nibble) when HAS_REX; false: not here. */
static bool onebyte(uint8_t op, bool has_rex, uint8_t rex, struct flow *fl)
{
	if (op < 0x40) {
		int form = op & 7;
		if (form >= 6 || (form == 4 && has_rex))
			return false;
		fl->opcode = alu_opcodes[op >> 3];
		fl->modrm = form < 4;
		fl->imm = form == 4 ? 1 : form == 5 ? 4 : 0;
		return true;
	}
	if (op >= 0x50 && op <= 0x5f) {
		fl->opcode = op < 0x58 ? LS_MN_PUSH : LS_MN_POP;
		return !(rex & ~B);
	}
	if (op >= 0xb0 && op <= 0xbf) {
		bool movabs = op >= 0xb8 && (rex & W);
		fl->opcode = movabs ? 0 : LS_MN_MOV;
		fl->imm = op < 0xb8 ? 1 : movabs ? 8 : 4;
		return true;
	}
	switch (op) {
	case 0x63:
		fl->opcode = LS_MN_MOVSXD;
		fl->modrm = true;
		return rex & W;
	case 0x69: case 0x6b:
		fl->modrm = true;
		fl->imm = op == 0x69 ? 4 : 1;
		return true;
	case 0x80: case 0x81: case 0x83:
		fl->modrm = true;
		fl->reg = -2; /* the opcode is the reg field's ALU operation */
		fl->imm = op == 0x81 ? 4 : 1;
		return true;
	case 0xc6: case 0xc7:
		fl->opcode = LS_MN_MOV;
		fl->modrm = true;
		fl->reg = 0;
		fl->imm = op == 0xc6 ? 1 : 4;
		return true;
	case 0x84: case 0x85:
		fl->modrm = true;
		return true;
	case 0x88: case 0x89: case 0x8a: case 0x8b:
		fl->opcode = LS_MN_MOV;
		fl->modrm = true;
		return true;
	case 0x8d:
		fl->opcode = LS_MN_LEA;
		fl->modrm = fl->mem_only = true;
		return true;
	case 0xc0: case 0xc1: case 0xd0: case 0xd1: case 0xd2: case 0xd3:
		fl->modrm = true;
		fl->imm = op <= 0xc1 ? 1 : 0;
		return true;
	case 0xf6: case 0xf7: case 0xfe: case 0xff:
		fl->modrm = true;
		fl->reg = -3; /* group() */
		return true;
	case 0x98:
		fl->opcode = rex & W ? LS_MN_CLTQ : 0;
		return !(rex & ~W);
	case 0x99:
		return !(rex & ~W);
	default:
		break;
	}
	if (has_rex)
		return false;
	if (op >= 0x70 && op <= 0x7f) {
		fl->kind = LS_INSN_CJUMP;
		fl->opcode = jcc_opcodes[op & 15];
		fl->rel = 1;
		return true;
	}
	switch (op) {
	case 0x68: case 0x6a:
		fl->opcode = LS_MN_PUSH;
		fl->imm = op == 0x68 ? 4 : 1;
		return true;
	case 0x90:
		fl->opcode = LS_MN_NOP;
		return true;
	case 0xa8: case 0xa9:
		fl->imm = op == 0xa8 ? 1 : 4;
		return true;
	case 0xc3:
		fl->kind = LS_INSN_RET;
		return true;
	case 0xc9:
		fl->opcode = LS_MN_LEAVE;
		return true;
	case 0xcc:
		fl->kind = LS_INSN_HALT;
		return true;
	case 0xf4:
		fl->kind = LS_INSN_HALT;
		fl->opcode = LS_MN_HLT;
		return true;
	case 0xe8:
		fl->kind = LS_INSN_CALL;
		fl->rel = 4;
		return true;
	case 0xe9: case 0xeb:
		fl->kind = LS_INSN_JUMP;
		fl->opcode = LS_MN_JMP;
		fl->rel = op == 0xe9 ? 4 : 1;
		return true;
	default:
		return false;
	}
}

/* 0f OP; false: not here. */
static bool twobyte(uint8_t op, bool has_rex, uint8_t rex, struct flow *fl)
{
	fl->modrm = true;
	if (op >= 0x80 && op <= 0x8f) {
		fl->kind = LS_INSN_CJUMP;
		fl->opcode = jcc_opcodes[op & 15];
		fl->modrm = false;
		fl->rel = 4;
		return !has_rex;
	}
	if ((op >= 0x90 && op <= 0x9f) || (op >= 0x40 && op <= 0x4f) || op == 0xaf || op == 0xbe || op == 0xbf)
		return true;
	switch (op) {
	case 0x10: case 0x11: case 0x28: case 0x29:
		fl->opcode = LS_MN_VMOV;
		return !(rex & W);
	case 0x57:
		return !(rex & W);
	case 0xb6: case 0xb7:
		fl->opcode = LS_MN_MOVZX;
		return true;
	case 0x1f:
		fl->opcode = LS_MN_NOP;
		fl->mem_only = true;
		fl->reg = 0;
		return !has_rex;
	default:
		return false;
	}
}

size_t ls_x86_flow_decode(const uint8_t *b, size_t len, uint64_t addr, struct ls_insn *insn)
{
	if (addr > UINT64_MAX - 16 || len < 1)
		return 0;
	size_t p = 0;
	bool has_rex = (b[0] & 0xf0) == 0x40;
	uint8_t rex = has_rex ? b[0] & 15 : 0;
	p += has_rex;
	if (p >= len)
		return 0;
	struct flow fl = { .kind = LS_INSN_OTHER, .reg = -1 };
	uint8_t op = b[p++];
	if (op == 0x0f) {
		if (p >= len || !twobyte(b[p++], has_rex, rex, &fl))
			return 0;
	} else if (!onebyte(op, has_rex, rex, &fl)) {
		return 0;
	}
	if (fl.modrm) {
		size_t n = modrm_bytes(b + p, len - p);
		if (!n)
			return 0;
		uint8_t mod = b[p] >> 6, reg = b[p] >> 3 & 7;
		if (fl.mem_only && mod == 3)
			return 0;
		if (fl.reg >= 0 && reg != fl.reg)
			return 0;
		if (fl.reg == -2)
			fl.opcode = alu_opcodes[reg];
		else if (fl.reg == -3 && !group(op, reg, rex, &fl))
			return 0;
		p += n;
	}
	p += fl.imm;
	if (p + fl.rel > len)
		return 0;
	insn->target = 0;
	if (fl.rel) {
		int64_t rel = fl.rel == 1 ? (int8_t)b[p] : ls_s32le(b + p);
		p += fl.rel;
		insn->target = addr + p + (uint64_t)rel;
	}
	insn->addr = addr;
	insn->len = (uint8_t)p;
	insn->kind = fl.kind;
	insn->opcode = fl.opcode;
	insn->nops = 0;
	insn->writes = 0;
	return p;
}
