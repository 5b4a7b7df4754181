/* stack_slots.c - values kept in stack slots, for the jump-table walk
 * (jump_tables.c): the stack pointer's height before every instruction,
 * the slot a SP- or BP-relative operand names, and the stores that write it.
 *
 * gcc spills the address of CPython's label table (opcode_targets) to the
 * stack once and reloads it before each computed goto, `mov 8(%rsp),%rsi;
 * jmp *(%rsi,%rdx,8)`; the walk follows the reload back to the store and
 * the store to the register it saved.  Slots are named by their distance
 * below the stack pointer at the procedure's entry, so that a push or a
 * `sub $N,%rsp` between the store and the load does not change the name,
 * and an SP-relative store and a BP-relative load of one slot agree.
 *
 * Heights are found forward over the same graph the walk goes back over
 * (direct branches, fall-through, the jump-table edges resolved so far,
 * landing pads): at the entry SP is 0; push, pop, `sub/add $N,%rsp`,
 * `lea N(%rsp),%rsp`, `mov %rbp,%rsp` and leave move it by a known amount,
 * a call leaves it where it was; anything else that writes SP (`and
 * $-32,%rsp`, alloca) makes it unknown from there, as does a join of two
 * different heights.  BP is followed while it is a frame pointer (`mov
 * %rsp,%rbp`), unknown once anything else writes it.  The unwind recipes
 * (CFI) would say the same for SP; they are per address and this walk
 * needs them for every instruction of a procedure at once, so the few
 * rules above are applied here directly.
 *
 * Stores: `mov %r,slot` (8 bytes) and `push %r` define the slot with %r's
 * value; any other write that overlaps it (a narrower store, an
 * arithmetic one, a vector spill) defines it with an unknown value, as
 * does an SP-relative write whose height is unknown.  Writes through
 * other registers (BP too, where it is not a frame pointer) are taken not
 * to alias the frame: a frame slot whose address escapes holds no jump
 * table's base. */
#include "cfg/cfg_private.h"

#include <stdlib.h>
#include <string.h>

static int32_t h_add(int32_t h, int64_t d)
{
	if (h == LS_HEIGHT_UNSET || h == LS_HEIGHT_UNKNOWN)
		return h;
	int64_t v = (int64_t)h + d;
	return v > INT32_MIN + 2 && v < INT32_MAX ? (int32_t)v : LS_HEIGHT_UNKNOWN;
}

static int32_t h_meet(int32_t a, int32_t b)
{
	if (a == LS_HEIGHT_UNSET)
		return b;
	if (b == LS_HEIGHT_UNSET || a == b)
		return a;
	return LS_HEIGHT_UNKNOWN;
}

static bool is_reg(const struct ls_operand *o, int reg)
{
	return o->kind == LS_OP_REG && o->reg == reg;
}

/* SP after instruction IN, given SP and BP before it. */
static int32_t sp_after(const struct ls_insn *in, int32_t sp, int32_t bp)
{
	const struct ls_operand *src = &in->op[0], *dst = in->nops ? &in->op[in->nops - 1] : NULL;
	if (in->kind == LS_INSN_CALL || in->kind == LS_INSN_ICALL)
		return sp; /* the callee pops its return address */
	if (in->opcode == LS_MN_PUSH)
		return h_add(sp, -(in->op[0].size == 2 ? 2 : 8));
	if (in->opcode == LS_MN_POP)
		return is_reg(src, LS_REG_SP) ? LS_HEIGHT_UNKNOWN : h_add(sp, in->op[0].size == 2 ? 2 : 8);
	if (in->opcode == LS_MN_LEAVE)
		return h_add(bp, 8);
	if (!(in->writes & (1u << LS_REG_SP)))
		return sp;
	if (in->nops == 2 && is_reg(dst, LS_REG_SP)) {
		if ((in->opcode == LS_MN_ADD || in->opcode == LS_MN_SUB) && src->kind == LS_OP_IMM)
			return h_add(sp, in->opcode == LS_MN_ADD ? src->imm : -src->imm);
		if (in->opcode == LS_MN_LEA && src->kind == LS_OP_MEM && src->index < 0 &&
		    (src->base == LS_REG_SP || src->base == LS_REG_BP))
			return h_add(src->base == LS_REG_SP ? sp : bp, src->disp);
		if (in->opcode == LS_MN_MOV && is_reg(src, LS_REG_BP))
			return bp;
	}
	return LS_HEIGHT_UNKNOWN;
}

/* BP after instruction IN, while it is a frame pointer. */
static int32_t bp_after(const struct ls_insn *in, int32_t sp, int32_t bp)
{
	if (!(in->writes & (1u << LS_REG_BP)))
		return bp;
	const struct ls_operand *src = &in->op[0];
	if (in->nops == 2 && is_reg(&in->op[1], LS_REG_BP)) {
		if (in->opcode == LS_MN_MOV && is_reg(src, LS_REG_SP))
			return sp;
		if (in->opcode == LS_MN_LEA && src->kind == LS_OP_MEM && src->index < 0 && src->base == LS_REG_SP)
			return h_add(sp, src->disp);
	}
	return LS_HEIGHT_UNKNOWN;
}

/* Forward, in address order until nothing changes: a height only goes
 * from unset to known to unknown, so this ends (after a few passes: the
 * depth of the back edges that bring a height first). */
static void compute_heights(struct builder *b)
{
	struct flow *f = b->flow;
	const struct ls_cfg *cfg = b->cfg;
	size_t n = cfg->ninsns;
	if (!f->sp) {
		f->sp = ls_xmalloc((n + 1) * sizeof *f->sp);
		f->bp = ls_xmalloc((n + 1) * sizeof *f->bp);
	}
	for (size_t i = 0; i < n; i++)
		f->sp[i] = f->bp[i] = LS_HEIGHT_UNSET;
	for (int pass = 0; pass < 64; pass++) {
		bool changed = false;
		for (size_t x = 0; x < n; x++) {
			int32_t sp = (int64_t)x == f->entry ? 0 : LS_HEIGHT_UNSET;
			int32_t bp = (int64_t)x == f->entry ? LS_HEIGHT_UNKNOWN : LS_HEIGHT_UNSET;
			uint32_t lo = f->in_start[x], hi = f->in_start[x + 1];
			bool through = x > 0 && ls_jt_falls_into(b, (int64_t)x - 1);
			for (uint32_t k = lo; k < hi + through; k++) {
				size_t p = k < hi ? f->in_src[k] : x - 1;
				const struct ls_insn *in = &cfg->insns[p];
				if (f->sp[p] == LS_HEIGHT_UNSET)
					continue;
				sp = h_meet(sp, sp_after(in, f->sp[p], f->bp[p]));
				bp = h_meet(bp, bp_after(in, f->sp[p], f->bp[p]));
			}
			if (bp == LS_HEIGHT_UNSET && sp != LS_HEIGHT_UNSET)
				bp = LS_HEIGHT_UNKNOWN;
			if (sp != f->sp[x] || bp != f->bp[x]) {
				f->sp[x] = sp;
				f->bp[x] = bp;
				changed = true;
			}
		}
		if (!changed)
			break;
	}
	f->heights_ready = true;
}

int32_t ls_sp_height(struct builder *b, int64_t at)
{
	if (!b->flow->heights_ready)
		compute_heights(b);
	return b->flow->sp[at];
}

/* The slot MEM names before instruction P runs, from P's heights. */
static int32_t slot_offset(const struct flow *f, int64_t p, const struct ls_operand *mem)
{
	int32_t h = mem->base == LS_REG_SP ? f->sp[p] : f->bp[p];
	return h_add(h, mem->disp);
}

int ls_slot_of(struct builder *b, int64_t at, const struct ls_operand *mem, int size, struct ls_slot *slot)
{
	if (!b->flow->heights_ready)
		compute_heights(b);
	if (mem->index >= 0 || (mem->base != LS_REG_SP && mem->base != LS_REG_BP))
		return LS_SLOT_UNKNOWN;
	const struct flow *f = b->flow;
	if (f->sp[at] == LS_HEIGHT_UNSET)
		return LS_SLOT_UNREACHED;
	int32_t off = slot_offset(f, at, mem);
	if (off == LS_HEIGHT_UNSET || off == LS_HEIGHT_UNKNOWN)
		return LS_SLOT_UNKNOWN;
	if (off >= 0)
		return LS_SLOT_ARGUMENT; /* the return address, the caller's arguments */
	*slot = (struct ls_slot){ off, (uint8_t)size };
	return LS_SLOT_OK;
}

/* Whether P only reads its last (memory) operand. */
static bool reads_only(const struct ls_insn *in)
{
	return in->opcode == LS_MN_CMP || in->opcode == LS_MN_NOP || in->opcode == LS_MN_ENDBR ||
	       in->opcode == LS_MN_PUSH || in->kind != LS_INSN_OTHER;
}

int ls_slot_store(const struct builder *b, int64_t p, const void *ctx)
{
	const struct ls_slot *s = ctx;
	const struct flow *f = b->flow;
	const struct ls_insn *in = &b->cfg->insns[p];
	int32_t lo;
	int size;
	if (in->opcode == LS_MN_PUSH) {
		lo = h_add(f->sp[p], -8);
		size = in->op[0].size == 2 ? 2 : 8;
	} else {
		const struct ls_operand *dst = in->nops ? &in->op[in->nops - 1] : NULL;
		if (!dst || dst->kind != LS_OP_MEM || reads_only(in) || dst->index >= 0 ||
		    (dst->base != LS_REG_SP && dst->base != LS_REG_BP))
			return WALK_THROUGH;
		/* BP not known as a frame pointer: a register like any other
		 * (gcc -O2 keeps CPython's frame object in %rbp). */
		if (dst->base == LS_REG_BP && (f->bp[p] == LS_HEIGHT_UNKNOWN || f->bp[p] == LS_HEIGHT_UNSET))
			return WALK_THROUGH;
		lo = slot_offset(f, p, dst);
		/* A memory operand's width is its register's (libopcodes
		 * names it only for an immediate store: 8, the widest). */
		size = dst->size ? dst->size : in->op[0].kind == LS_OP_REG && in->op[0].size ? in->op[0].size : 8;
	}
	if (lo == LS_HEIGHT_UNSET || lo == LS_HEIGHT_UNKNOWN)
		return WALK_DEF; /* a write to the frame at a height not known: it may be the slot */
	return (int64_t)lo < (int64_t)s->off + s->size && (int64_t)s->off < (int64_t)lo + size ? WALK_DEF
	                                                                                       : WALK_THROUGH;
}

int ls_slot_stored_reg(const struct builder *b, int64_t p, const struct ls_slot *slot)
{
	const struct flow *f = b->flow;
	const struct ls_insn *in = &b->cfg->insns[p];
	const struct ls_operand *src = &in->op[0];
	if (src->kind != LS_OP_REG || src->reg < 0 || src->reg >= 16)
		return -1;
	if (in->opcode == LS_MN_PUSH)
		return src->size == 8 && h_add(f->sp[p], -8) == slot->off ? src->reg : -1;
	const struct ls_operand *dst = &in->op[1];
	if (in->opcode != LS_MN_MOV || in->nops != 2 || dst->kind != LS_OP_MEM || src->size != 8)
		return -1;
	return slot_offset(f, p, dst) == slot->off && slot->size == 8 ? src->reg : -1;
}
