/* decode_x86.c - x86-64 instruction decoding with libopcodes (decode.h).
 *
 * libopcodes prints an instruction as a stream of styled tokens (mnemonic,
 * register, immediate, address offset, text, comment).  We never build the
 * text: the styled callback parses each token as it arrives into struct
 * ls_insn (kind, direct target, up to three operands with rip-relative
 * addresses resolved), so the hot path costs one libopcodes call and a few
 * string compares per instruction.
 *
 * Thread safety: binutils 2.40's i386-dis.c keeps all its state in a
 * struct instr_info on the stack of print_insn (the object has no .data and
 * no .bss, only relocated read-only tables), so decoders on several threads
 * are safe as long as each has its own disassemble_info - i.e. one
 * ls_decoder per thread, as decode.h says.
 */
#include "cfg/decode.h"
#include "cfg/decode_x86_fast.h"
#include "cfg/opcodes.h"

#include <assert.h>
#include <dis-asm.h>
#include <elf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TOKEN_MAX = LS_X86_MNEMONIC_MAX };

struct ls_decoder {
	disassemble_info info;
	disassembler_ftype print_insn;

	/* Parse state of the instruction being decoded. */
	struct ls_insn *insn;
	struct ls_x86_parsed p; /* what classify() reads: both decoders fill it */
	int opi;           /* operand being filled, -1 before the first */
	int paren_pos;     /* -1 outside "(...)", else 0 base, 1 index, 2 scale */
	bool in_comment;   /* after "# ": the resolved rip-relative address follows */
	bool imm_pending;  /* saw '$' */
	bool neg_pending;  /* saw a '-' token: the displacement that follows is negative */
	bool too_many_ops;
};

/* ---- token parsing --------------------------------------------------------- */

static int64_t parse_number(const char *s, size_t n)
{
	bool neg = false;
	size_t i = 0;
	if (i < n && (s[i] == '$'))
		i++;
	if (i < n && s[i] == '-') {
		neg = true;
		i++;
	}
	uint64_t v = 0;
	if (i + 1 < n && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		for (i += 2; i < n; i++) {
			char c = s[i];
			unsigned d;
			if (c >= '0' && c <= '9')
				d = c - '0';
			else if (c >= 'a' && c <= 'f')
				d = c - 'a' + 10;
			else if (c >= 'A' && c <= 'F')
				d = c - 'A' + 10;
			else
				break;
			v = v << 4 | d;
		}
	} else {
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			v = v * 10 + (s[i] - '0');
	}
	return neg ? -(int64_t)v : (int64_t)v;
}

/* Register name (without '%') -> number and size.  General registers share
 * one number across their widths (rax/eax/ax/al = 0, r8..r15 = 8..15), so a
 * `cmp $N,%eax` bounds a `(,%rax,8)` index; vector registers are 32+N;
 * anything else is 90. */
static int reg_number(const char *s, size_t n, uint8_t *size)
{
	static const char gpr16[8][3] = { "ax", "cx", "dx", "bx", "sp", "bp", "si", "di" };
	*size = 0;
	if (n >= 2 && s[0] == 'r' && s[1] >= '0' && s[1] <= '9') {
		int num = s[1] - '0';
		size_t i = 2;
		if (i < n && s[i] >= '0' && s[i] <= '9')
			num = num * 10 + (s[i++] - '0');
		if (i == n)
			*size = 8;
		else if (s[i] == 'd')
			*size = 4;
		else if (s[i] == 'w')
			*size = 2;
		else if (s[i] == 'b')
			*size = 1;
		return num;
	}
	if (n == 3 && (s[0] == 'r' || s[0] == 'e') && s[1] == 'i' && s[2] == 'p') {
		*size = s[0] == 'r' ? 8 : 4;
		return LS_REG_RIP;
	}
	if (n == 3 && (s[0] == 'r' || s[0] == 'e')) {
		for (int k = 0; k < 8; k++)
			if (s[1] == gpr16[k][0] && s[2] == gpr16[k][1]) {
				*size = s[0] == 'r' ? 8 : 4;
				return k;
			}
	}
	if (n == 2) {
		for (int k = 0; k < 8; k++)
			if (s[0] == gpr16[k][0] && s[1] == gpr16[k][1]) {
				*size = 2;
				return k;
			}
		if (s[1] == 'l' || s[1] == 'h') {
			static const char lo[4] = { 'a', 'c', 'd', 'b' };
			for (int k = 0; k < 4; k++)
				if (s[0] == lo[k]) {
					*size = 1;
					return k;
				}
		}
	}
	if (n == 3 && s[2] == 'l') { /* spl bpl sil dil */
		for (int k = 4; k < 8; k++)
			if (s[0] == gpr16[k][0] && s[1] == gpr16[k][1]) {
				*size = 1;
				return k;
			}
	}
	if (n >= 4 && s[1] == 'm' && s[2] == 'm' && (s[0] == 'x' || s[0] == 'y' || s[0] == 'z')) {
		int num = (int)parse_number(s + 3, n - 3);
		*size = s[0] == 'x' ? 16 : s[0] == 'y' ? 32 : 64;
		return 32 + (num & 31);
	}
	return 90;
}

static struct ls_operand *cur_op(struct ls_decoder *d)
{
	if (d->opi < 0) {
		d->opi = 0;
		d->insn->nops = 1;
	}
	return d->too_many_ops ? NULL : &d->insn->op[d->opi];
}

static void next_op(struct ls_decoder *d)
{
	if (d->opi < 0)
		cur_op(d);
	if (d->opi + 1 >= 3) {
		d->too_many_ops = true;
		return;
	}
	d->opi++;
	d->insn->nops = d->opi + 1;
	struct ls_operand *op = &d->insn->op[d->opi];
	op->reg = op->base = op->index = -1;
}

static bool is_prefix(const char *m)
{
	static const char *const prefixes[] = {
		"cs", "ds", "es", "ss", "fs", "gs", "rep", "repz", "repe", "repnz", "repne", "lock",
		"notrack", "bnd", "data16", "data32", "addr16", "addr32", "xacquire", "xrelease", "{vex}",
		"{vex3}", "{evex}", "rex", "rex.W",
	};
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (strcmp(m, prefixes[i]) == 0)
			return true;
	return strncmp(m, "rex.", 4) == 0;
}

/* A displacement: the operand becomes memory even before the parenthesis
 * (absolute "0x601040" is memory too).  i386-dis.c prints a negative
 * one's '-' as a token of its own ("-", "0x18" for -0x18(%rbp)). */
static void on_displacement(struct ls_decoder *d, const char *s, size_t n)
{
	struct ls_operand *op = cur_op(d);
	if (!op)
		return;
	op->kind = LS_OP_MEM;
	if (n == 1 && s[0] == '-') {
		d->neg_pending = true;
		return;
	}
	op->disp = parse_number(s, n);
	if (d->neg_pending)
		op->disp = -op->disp;
	d->neg_pending = false;
}

static void on_token(struct ls_decoder *d, enum disassembler_style style, const char *s, size_t n)
{
	/* Tokens come only from print_insn inside ls_decode, which points
	 * d->insn at the instruction being filled. */
	assert(d->insn);
	if (d->in_comment || n == 0)
		return;
	switch (style) {
	case dis_style_mnemonic: {
		while (n > 0 && s[n - 1] == ' ')
			n--;
		if (n >= TOKEN_MAX)
			n = TOKEN_MAX - 1;
		char m[TOKEN_MAX];
		memcpy(m, s, n);
		m[n] = 0;
		/* The last mnemonic word is the instruction; earlier ones are
		 * prefixes ("notrack jmp", "cs nopw", "rep stos"). */
		if (d->p.mnemonic[0] == 0 || !is_prefix(m) || is_prefix(d->p.mnemonic))
			memcpy(d->p.mnemonic, m, n + 1);
		return;
	}
	case dis_style_sub_mnemonic:
	case dis_style_assembler_directive:
	case dis_style_symbol:
		return;
	case dis_style_comment_start:
		d->in_comment = true;
		return;
	case dis_style_register: {
		struct ls_operand *op = cur_op(d);
		if (!op || n < 2)
			return;
		uint8_t size;
		int r = reg_number(s + 1, n - 1, &size);
		if (d->paren_pos == 0) {
			op->base = r;
		} else if (d->paren_pos == 1) {
			op->index = r;
		} else if (op->kind == LS_OP_NONE) {
			op->kind = LS_OP_REG;
			op->reg = r;
			op->size = size;
		}
		return;
	}
	case dis_style_immediate: {
		struct ls_operand *op = cur_op(d);
		if (!op)
			return;
		if (n == 1 && s[0] == '$') {
			d->imm_pending = true;
			return;
		}
		int64_t v = parse_number(s, n);
		if (d->paren_pos == 2) {
			op->scale = (uint8_t)v;
		} else if (op->kind == LS_OP_NONE) {
			op->kind = LS_OP_IMM;
			op->imm = v;
		}
		d->imm_pending = false;
		return;
	}
	case dis_style_address:
	case dis_style_address_offset:
		on_displacement(d, s, n);
		return;
	case dis_style_text:
	default:
		for (size_t i = 0; i < n; i++) {
			char c = s[i];
			struct ls_operand *op;
			switch (c) {
			case '*':
				d->p.indirect = true;
				break;
			case '(':
				if ((op = cur_op(d))) {
					op->kind = LS_OP_MEM;
					d->paren_pos = 0;
				}
				break;
			case ')':
				d->paren_pos = -1;
				break;
			case ',':
				if (d->paren_pos >= 0) {
					d->paren_pos++;
				} else if (d->opi >= 0) {
					next_op(d);
				}
				break;
			case ':':
				/* %fs:0x28 - a segment-relative memory operand. */
				if ((op = cur_op(d)) && op->kind == LS_OP_REG) {
					op->kind = LS_OP_MEM;
					op->reg = -1;
					op->seg = 1;
				}
				break;
			default:
				break;
			}
		}
		return;
	}
}

static int styled_printf(void *stream, enum disassembler_style style, const char *fmt, ...)
{
	struct ls_decoder *d = stream;
	va_list ap;
	va_start(ap, fmt);
	/* i386-dis.c prints every token through "%.*s"; take the fast path. */
	if (fmt[0] == '%' && fmt[1] == '.' && fmt[2] == '*' && fmt[3] == 's' && fmt[4] == 0) {
		int n = va_arg(ap, int);
		const char *s = va_arg(ap, const char *);
		size_t len = strnlen(s, n < 0 ? 0 : (size_t)n);
		on_token(d, style, s, len);
	} else if (!strchr(fmt, '%')) {
		on_token(d, style, fmt, strlen(fmt));
	} else {
		char buf[128];
		int n = vsnprintf(buf, sizeof buf, fmt, ap);
		if (n > 0)
			on_token(d, style, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
	}
	va_end(ap);
	return 0;
}

static int plain_printf(void *stream, const char *fmt, ...)
{
	struct ls_decoder *d = stream;
	char buf[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0)
		on_token(d, dis_style_text, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
	return 0;
}

/* Called for a direct branch target and for the resolved address of a
 * rip-relative operand (after the "# " comment). */
static void print_address(bfd_vma addr, struct disassemble_info *info)
{
	struct ls_decoder *d = info->stream;
	if (d->in_comment) {
		for (int i = 0; i < d->insn->nops && i < 3; i++)
			if (d->insn->op[i].kind == LS_OP_MEM && d->insn->op[i].base == LS_REG_RIP) {
				d->insn->op[i].disp = (int64_t)addr;
				break;
			}
		return;
	}
	d->p.have_target = true;
	d->insn->target = addr;
}

static void memory_error(int status, bfd_vma addr, struct disassemble_info *info)
{
	/* Truncated instruction at the end of the buffer: reported as invalid. */
}

/* ---- classification ---------------------------------------------------------- */

/* Strip one AT&T size suffix when the rest is BASE: "cmpl" -> "cmp". */
static bool is_mn(const char *m, const char *base)
{
	size_t n = strlen(base);
	if (strncmp(m, base, n) != 0)
		return false;
	return m[n] == 0 || ((m[n] == 'b' || m[n] == 'w' || m[n] == 'l' || m[n] == 'q') && m[n + 1] == 0);
}

/* The SSE/AVX whole-register moves (M without a 'v' prefix): what spills,
 * reloads and copies of vector and floating-point values use. */
static bool is_vector_move(const char *m)
{
	static const char *const moves[] = {
		"movaps", "movups", "movapd", "movupd", "movdqa", "movdqu", "movss", "movsd", "movd",
		"movdqa32", "movdqa64", "movdqu8", "movdqu16", "movdqu32", "movdqu64",
	};
	for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++)
		if (strcmp(m, moves[i]) == 0)
			return true;
	return false;
}

/* classify() of the jumps: jmp, and the conditional ones whose condition
 * the jump-table bounds read. */
static void classify_jump(const struct ls_decoder *d, struct ls_insn *insn, const char *m)
{
	if (is_mn(m, "jmp")) {
		insn->opcode = LS_MN_JMP;
		insn->kind = d->p.indirect || !d->p.have_target ? LS_INSN_IJUMP : LS_INSN_JUMP;
		return;
	}
	insn->kind = d->p.have_target ? LS_INSN_CJUMP : LS_INSN_IJUMP;
	/* "ja,pt": branch hints follow a comma. */
	char c[8];
	size_t k = 0;
	while (m[k] && m[k] != ',' && k < sizeof c - 1) {
		c[k] = m[k];
		k++;
	}
	c[k] = 0;
	if (strcmp(c, "ja") == 0 || strcmp(c, "jnbe") == 0)
		insn->opcode = LS_MN_JA;
	else if (strcmp(c, "jae") == 0 || strcmp(c, "jnb") == 0 || strcmp(c, "jnc") == 0)
		insn->opcode = LS_MN_JAE;
	else if (strcmp(c, "jb") == 0 || strcmp(c, "jc") == 0 || strcmp(c, "jnae") == 0)
		insn->opcode = LS_MN_JB;
	else if (strcmp(c, "jbe") == 0 || strcmp(c, "jna") == 0)
		insn->opcode = LS_MN_JBE;
}

/* classify() of the moves the jump-table reader follows. */
static void classify_move(struct ls_insn *insn, const char *m)
{
	if (is_mn(m, "mov"))
		insn->opcode = LS_MN_MOV;
	else if (strcmp(m, "movslq") == 0 || strcmp(m, "movsxd") == 0 || strcmp(m, "movsxdq") == 0)
		insn->opcode = LS_MN_MOVSXD;
	else if (strncmp(m, "movz", 4) == 0) {
		insn->opcode = LS_MN_MOVZX;
		/* movzbl/movzwl: the source's width (a byte index bounds
		 * a jump table to 256 entries). */
		if (insn->nops >= 1 && insn->op[0].size == 0)
			insn->op[0].size = m[4] == 'b' ? 1 : m[4] == 'w' ? 2 : 0;
	} else if (is_vector_move(m)) {
		insn->opcode = LS_MN_VMOV;
	}
}

static void classify(struct ls_decoder *d, struct ls_insn *insn)
{
	const char *m = d->p.mnemonic;
	insn->kind = LS_INSN_OTHER;
	insn->opcode = LS_MN_OTHER;
	switch (m[0]) {
	case 'j':
		classify_jump(d, insn, m);
		return;
	case 'c':
		if (strcmp(m, "cltq") == 0) {
			insn->opcode = LS_MN_CLTQ;
		} else if (is_mn(m, "call")) {
			insn->kind = d->p.indirect || !d->p.have_target ? LS_INSN_ICALL : LS_INSN_CALL;
		} else if (is_mn(m, "cmp")) {
			insn->opcode = LS_MN_CMP;
		}
		return;
	case 'l':
		if (strcmp(m, "loop") == 0 || strcmp(m, "loope") == 0 || strcmp(m, "loopne") == 0 ||
		    strcmp(m, "loopz") == 0 || strcmp(m, "loopnz") == 0)
			insn->kind = d->p.have_target ? LS_INSN_CJUMP : LS_INSN_OTHER;
		else if (is_mn(m, "lea"))
			insn->opcode = LS_MN_LEA;
		else if (is_mn(m, "ljmp"))
			insn->kind = LS_INSN_IJUMP;
		else if (is_mn(m, "lcall"))
			insn->kind = LS_INSN_ICALL;
		else if (is_mn(m, "lret"))
			insn->kind = LS_INSN_RET;
		else if (is_mn(m, "leave"))
			insn->opcode = LS_MN_LEAVE;
		return;
	case 'r':
		if (is_mn(m, "ret"))
			insn->kind = LS_INSN_RET;
		return;
	case 'i':
		if (strcmp(m, "int3") == 0)
			insn->kind = LS_INSN_HALT;
		else if (is_mn(m, "iret"))
			insn->kind = LS_INSN_RET;
		return;
	case 'h':
		if (strcmp(m, "hlt") == 0) {
			insn->kind = LS_INSN_HALT;
			insn->opcode = LS_MN_HLT;
		}
		return;
	case 'u':
		if (strncmp(m, "ud", 2) == 0 && (m[2] == '0' || m[2] == '1' || m[2] == '2'))
			insn->kind = LS_INSN_HALT;
		return;
	case 's':
		if (is_mn(m, "sub"))
			insn->opcode = LS_MN_SUB;
		else if (strncmp(m, "sysret", 6) == 0 || strcmp(m, "sysexit") == 0)
			insn->kind = LS_INSN_RET;
		return;
	case 'a':
		if (is_mn(m, "add"))
			insn->opcode = LS_MN_ADD;
		else if (is_mn(m, "and"))
			insn->opcode = LS_MN_AND;
		return;
	case 'e':
		if (strncmp(m, "endbr", 5) == 0)
			insn->opcode = LS_MN_ENDBR;
		else if (is_mn(m, "enter"))
			insn->opcode = LS_MN_ENTER;
		return;
	case 'p':
		/* push/pop of one stack slot: the unwind recipes count them
		 * (pushw moves SP by 2: marked by its operand size). */
		if (is_mn(m, "push") || is_mn(m, "pushf")) {
			insn->opcode = LS_MN_PUSH;
			if (m[4] == 'w' || (m[4] == 'f' && m[5] == 'w'))
				insn->op[0].size = 2;
		} else if (is_mn(m, "pop") || is_mn(m, "popf")) {
			insn->opcode = LS_MN_POP;
			if (m[3] == 'w' || (m[3] == 'f' && m[4] == 'w'))
				insn->op[0].size = 2;
		}
		return;
	case 'n':
		if (is_mn(m, "nop"))
			insn->opcode = LS_MN_NOP;
		return;
	case 'm':
		classify_move(insn, m);
		return;
	case 'v':
		if (m[1] == 'm' && is_vector_move(m + 1))
			insn->opcode = LS_MN_VMOV;
		return;
	case 'x':
		/* xbegin: on abort, control resumes at its target. */
		if (strcmp(m, "xbegin") == 0 && d->p.have_target)
			insn->kind = LS_INSN_CJUMP;
		else if (strcmp(m, "xchg") == 0 && insn->nops == 2 && insn->op[0].kind == LS_OP_REG &&
		    insn->op[1].kind == LS_OP_REG && insn->op[0].reg == 0 && insn->op[1].reg == 0)
			insn->opcode = LS_MN_NOP; /* xchg %ax,%ax: a 2-byte nop */
		return;
	case '(':
		insn->kind = LS_INSN_INVALID; /* "(bad)" */
		return;
	default:
		return;
	}
}

/* The general registers INSN may write, for the jump-table analysis's
 * reaching definitions (cfg.c).  Erring towards "writes" is safe (the
 * analysis then gives up); missing a write is not, so every instruction
 * that writes a register it does not name as its last operand is listed.
 * Called after classify(). */
enum {
	R_AX = 1 << 0, R_CX = 1 << 1, R_DX = 1 << 2, R_BX = 1 << 3, R_SP = 1 << 4, R_BP = 1 << 5,
	R_SI = 1 << 6, R_DI = 1 << 7,
	/* What a call may change (SysV ABI: the caller-saved registers). */
	R_CALLER_SAVED = R_AX | R_CX | R_DX | R_SI | R_DI | 0x0f00,
};

static bool starts(const char *m, const char *prefix)
{
	return strncmp(m, prefix, strlen(prefix)) == 0;
}

static bool gpr_op(const struct ls_insn *insn, int i)
{
	return i < insn->nops && insn->op[i].kind == LS_OP_REG && insn->op[i].reg >= 0 && insn->op[i].reg < 16;
}

static bool any_vector_op(const struct ls_insn *insn)
{
	for (int i = 0; i < insn->nops && i < 3; i++)
		if (insn->op[i].kind == LS_OP_REG && insn->op[i].reg >= 32 && insn->op[i].reg < 90)
			return true;
	return false;
}

/* What the instruction writes besides its last operand (by its first
 * letter: this runs on every instruction).  String instructions: movs's
 * register forms (movsbl, movslq) name their destination; SSE's cmpsd and
 * insertps use vector registers. */
static uint16_t implicit_writes(const char *m, const struct ls_insn *insn)
{
	enum { STRING = R_SI | R_DI | R_CX };
	switch (m[0]) {
	case 'c':
		if (insn->opcode == LS_MN_CLTQ || is_mn(m, "cwtl") || is_mn(m, "cbtw"))
			return R_AX;
		if (is_mn(m, "cqto") || is_mn(m, "cltd") || is_mn(m, "cwtd"))
			return R_DX;
		if (starts(m, "cmpxchg"))
			return starts(m, "cmpxchg8b") || starts(m, "cmpxchg16b") ? R_AX | R_DX : R_AX;
		if (is_mn(m, "cpuid"))
			return R_AX | R_BX | R_CX | R_DX;
		if (starts(m, "cmps") && !any_vector_op(insn))
			return STRING;
		return 0;
	case 'm':
		if (m[1] == 'o') /* mov*: a string move has two memory operands */
			return starts(m, "movs") && insn->nops == 2 && insn->op[0].kind == LS_OP_MEM &&
			       insn->op[1].kind == LS_OP_MEM ? STRING : 0;
		if (is_mn(m, "mul") && insn->nops == 1)
			return R_AX | R_DX;
		if (starts(m, "mulx") && gpr_op(insn, 1) && insn->nops == 3)
			return (uint16_t)(1u << insn->op[1].reg);
		return 0;
	case 'i':
		if ((is_mn(m, "imul") && insn->nops == 1) || is_mn(m, "idiv"))
			return R_AX | R_DX;
		return starts(m, "ins") && !any_vector_op(insn) ? STRING : 0;
	case 'd':
		return is_mn(m, "div") ? R_AX | R_DX : 0;
	case 'x':
		if ((starts(m, "xchg") || starts(m, "xadd")) && insn->nops == 2 && gpr_op(insn, 0))
			return (uint16_t)(1u << insn->op[0].reg); /* both operands */
		if (is_mn(m, "xlat"))
			return R_AX;
		return is_mn(m, "xgetbv") ? R_AX | R_DX : 0;
	case 'l':
		if (is_mn(m, "lahf"))
			return R_AX;
		if (starts(m, "lods"))
			return STRING | R_AX;
		if (starts(m, "loop"))
			return R_CX;
		return is_mn(m, "leave") ? R_SP | R_BP : 0;
	case 'r':
		if (is_mn(m, "rdtscp"))
			return R_AX | R_DX | R_CX;
		return is_mn(m, "rdtsc") || is_mn(m, "rdmsr") || is_mn(m, "rdpmc") ? R_AX | R_DX : 0;
	case 's':
		if (starts(m, "syscall") || starts(m, "sysenter"))
			return R_AX | R_CX | 0x0800; /* rcx, r11 */
		return (starts(m, "stos") || starts(m, "scas")) && !any_vector_op(insn) ? STRING : 0;
	case 'o':
		return starts(m, "outs") ? STRING : 0;
	case 'p':
		return starts(m, "push") || starts(m, "pop") ? R_SP : 0;
	case 'e':
		return is_mn(m, "enter") ? R_SP | R_BP : 0;
	case 'j':
		return starts(m, "jrcxz") || starts(m, "jecxz") ? R_CX : 0;
	default:
		return 0;
	}
}

static uint16_t gpr_writes(const struct ls_decoder *d, const struct ls_insn *insn)
{
	const char *m = d->p.mnemonic;
	if (insn->opcode == LS_MN_NOP || insn->opcode == LS_MN_ENDBR)
		return 0; /* xchg %ax,%ax too */
	if (insn->kind == LS_INSN_CALL || insn->kind == LS_INSN_ICALL)
		return R_CALLER_SAVED | R_SP;
	if (insn->kind == LS_INSN_JUMP || insn->kind == LS_INSN_IJUMP || insn->kind == LS_INSN_RET)
		return insn->kind == LS_INSN_RET ? R_SP : 0;
	uint16_t w = implicit_writes(m, insn);
	/* The destination: the last operand, unless the instruction only
	 * reads it. */
	bool reads_only = insn->opcode == LS_MN_CMP || insn->kind == LS_INSN_CJUMP ||
	                  (m[0] == 't' && is_mn(m, "test")) || (m[0] == 'b' && is_mn(m, "bt")) ||
	                  (m[0] == 'p' && is_mn(m, "push"));
	if (!reads_only && insn->nops && gpr_op(insn, insn->nops - 1))
		w |= (uint16_t)(1u << insn->op[insn->nops - 1].reg);
	return w;
}

/* ---- interface ------------------------------------------------------------------ */

struct ls_decoder *ls_decoder_new(int e_machine)
{
	if (e_machine != EM_X86_64)
		return NULL;
	struct ls_decoder *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->print_insn = ls_opcodes_init(&d->info, e_machine, NULL, d, plain_printf, styled_printf);
	if (!d->print_insn) {
		free(d);
		return NULL;
	}
	d->info.memory_error_func = memory_error;
	d->info.print_address_func = print_address;
	return d;
}

void ls_decoder_free(struct ls_decoder *d)
{
	if (!d)
		return;
	disassemble_free_target(&d->info);
	free(d);
}

const char *ls_decoder_mnemonic(const struct ls_decoder *d)
{
	return d->p.mnemonic;
}

static void clear_insn(struct ls_insn *insn, uint64_t addr)
{
	memset(insn, 0, sizeof *insn);
	insn->addr = addr;
	insn->kind = LS_INSN_INVALID;
	for (int i = 0; i < 3; i++)
		insn->op[i].reg = insn->op[i].base = insn->op[i].index = -1;
}

/* What both decoders share once the operands and d->p are filled: the
 * classification, the registers written, the target kept for direct
 * branches only. */
static size_t finish(struct ls_decoder *d, struct ls_insn *insn, size_t n)
{
	insn->len = (uint8_t)n;
	classify(d, insn);
	if (insn->kind == LS_INSN_INVALID) {
		insn->len = 0;
		return 0;
	}
	insn->writes = gpr_writes(d, insn);
	if (insn->kind != LS_INSN_JUMP && insn->kind != LS_INSN_CJUMP && insn->kind != LS_INSN_CALL)
		insn->target = 0;
	return n;
}

size_t ls_decode_opcodes(struct ls_decoder *d, const uint8_t *bytes, size_t len, uint64_t addr,
                         struct ls_insn *insn)
{
	clear_insn(insn, addr);
	if (len == 0)
		return 0;
	d->insn = insn;
	d->p.mnemonic[0] = 0;
	d->opi = -1;
	d->paren_pos = -1;
	d->p.indirect = d->in_comment = d->p.have_target = d->imm_pending = d->too_many_ops = d->neg_pending = false;
	d->info.buffer = (bfd_byte *)bytes;
	d->info.buffer_vma = addr;
	d->info.buffer_length = len;
	d->info.insn_info_valid = 0;
	int n = d->print_insn(addr, &d->info);
	d->insn = NULL;
	if (n <= 0 || (size_t)n > len || d->p.mnemonic[0] == 0) {
		insn->kind = LS_INSN_INVALID;
		return 0;
	}
	return finish(d, insn, (size_t)n);
}

size_t ls_decode_fast_only(struct ls_decoder *d, const uint8_t *bytes, size_t len, uint64_t addr,
                           struct ls_insn *insn)
{
	clear_insn(insn, addr);
	/* It classifies as classify() and gpr_writes() would (the tests
	 * compare every field). */
	size_t n = ls_x86_fast_decode(bytes, len, addr, insn, &d->p);
	if (n == 0) {
		clear_insn(insn, addr);
		d->p.mnemonic[0] = 0;
	}
	return n;
}

/* The fast decoder first; libopcodes for what it does not handle. */
size_t ls_decode(struct ls_decoder *d, const uint8_t *bytes, size_t len, uint64_t addr,
                 struct ls_insn *insn)
{
	size_t n = ls_decode_fast_only(d, bytes, len, addr, insn);
	if (n)
		return n;
	return ls_decode_opcodes(d, bytes, len, addr, insn);
}

size_t ls_decode_flow(struct ls_decoder *d, const uint8_t *bytes, size_t len, uint64_t addr,
                      struct ls_insn *insn)
{
	size_t n = ls_x86_flow_decode(bytes, len, addr, insn);
	if (n) {
		d->p.mnemonic[0] = 0;
		return n;
	}
	/* whatever it does not take: the whole decode */
	return ls_decode(d, bytes, len, addr, insn);
}
