/* reg_origin.c - reaching definitions of one register, backwards over the
 * CFG (cfg/cfg.c), for the accesses stage: where a pointer the compiler
 * keeps in a register with no DWARF variable for it comes from (the array
 * base of a loop, `lea g_table(%rip),%rax`; `s->head` loaded for
 * `s->head->val`; a parameter's entry register after its location list
 * has ended).
 *
 * Registers are not SSA: a redefinition ends the search on that path, and
 * what it sets decides: a static address, a 64-bit load from memory (the
 * caller resolves that operand), the procedure's entry (the register's
 * entry value) - done; a copy or address arithmetic from another register
 * (the search goes on with that one), a step of the register by a
 * constant or back by another register (the search goes on, the result becomes
 * indexed: the loop's induction pointer, xz's cur - delta); anything else (the answer is "unknown").  Every
 * path must agree on one origin: one address, one load (a few
 * instructions, which the caller checks read one field, or one
 * RIP-relative slot), or one entry register, with one offset.
 *
 * With the caller's naming of frame slots (ls_slot_env), a spill slot is
 * one more place a value is copied through: a reload from it follows the
 * slot back to the spills that wrote it, and each spill on to the
 * register it saved (gcc spills an Eigen matrix's pointer across calls
 * and reloads it before the product loop).
 *
 * When no origin is found, ls_reg_origin_named asks the caller's DWARF
 * (struct ls_name_env) along the paths instead: the value is one DWARF
 * names at another PC - earlier on the path, in a register a location
 * list named before it ended (gcc's var-tracking drops Eigen's tmp vector
 * while its data pointer lives on in %r12), or, for an allocation call's
 * result, later, where the program puts the block (a named register, a
 * store into a variable's field: the blame seed's `@(s.i) = malloc(4)`). */
#include "data/reg_origin.h"
#include "support/base.h"

#include <stdlib.h>
#include <string.h>

enum { VISITS_MAX = 4096 };

enum { IN_SLOT = 16 };  /* item.reg: the value is in the frame slot item.slot */

struct item {
	uint32_t block, end;   /* scan block's instructions [first, end) backwards */
	int reg;               /* 0..15, or IN_SLOT */
	int64_t slot;          /* IN_SLOT: its offset from the CFA */
	bool indexed;
	int64_t add;           /* what the path adds to the address (not indexed) */
};

struct search {
	const struct ls_cfg *cfg;
	struct item *work;
	size_t nwork, cap;
	uint8_t *seen;         /* [block * 16 + reg] */
	const struct ls_slot_env *env;
	struct { uint32_t block; int64_t slot; } *seen_slots; /* the slots' seen, a few */
	size_t nseen_slots, seen_slots_cap;
	bool have;
	bool stepped;          /* some path steps the register: the paths that merge carry it */
	bool reg_stepped;      /* some path steps it by a register */
	struct ls_reg_origin found;
	int64_t found_add;
};

static void push(struct search *s, struct item it)
{
	s->work = ls_grow(s->work, &s->cap, s->nwork + 1, sizeof *s->work);
	s->work[s->nwork++] = it;
}

/* A definition that ends the path with origin O (its add and indexed
 * taken from IT): false if another path said otherwise. */
static bool found(struct search *s, struct ls_reg_origin o, const struct item *it)
{
	o.indexed = it->indexed;
	if (!s->have) {
		s->have = true;
		s->found = o;
		s->found_add = it->add;
		return true;
	}
	struct ls_reg_origin *f = &s->found;
	if (f->kind != o.kind || f->slot != o.slot)
		return false;
	if (o.kind == LS_ORIGIN_STATIC) {
		/* two addresses (or two offsets into one): not one variable's */
		if (f->addr + (uint64_t)s->found_add != o.addr + (uint64_t)it->add)
			return false;
	} else if (s->found_add != it->add) {
		return false;
	} else if (o.kind == LS_ORIGIN_LOAD && !o.slot) {
		bool known = false;
		for (unsigned k = 0; k < f->nloads; k++)
			known |= f->load[k] == o.load[0];
		if (!known && f->nloads == LS_REG_ORIGIN_LOADS)
			return false;
		if (!known)
			f->load[f->nloads++] = o.load[0];
	} else if (o.kind == LS_ORIGIN_LOAD ? f->addr != o.addr : f->entry_reg != o.entry_reg) {
		return false;
	}
	f->indexed |= it->indexed;
	return true;
}

static bool is_gpr(const struct ls_operand *op) { return op->kind == LS_OP_REG && op->reg >= 0 && op->reg < 16; }

/* INSN writes IT->reg: follow it.  Returns 1 to go on scanning (IT
 * updated), 0 when the path ended well, -1 when it cannot say. */
static int follow_def(struct search *s, uint32_t j, const struct ls_insn *in, struct item *it)
{
	if (in->nops != 2 || !is_gpr(&in->op[1]) || in->op[1].reg != it->reg || in->op[1].size != 8)
		return -1;
	const struct ls_operand *src = &in->op[0];
	if (in->opcode == LS_MN_LEA && src->kind == LS_OP_MEM && !src->seg) {
		if (src->base == LS_REG_RIP && src->index < 0)
			return found(s, (struct ls_reg_origin){ .kind = LS_ORIGIN_STATIC, .addr = (uint64_t)src->disp }, it) ? 0 : -1;
		if (src->base < 0 || src->base >= 16)
			return -1;
		/* lea k(%b,%i,s),%r: the address in %b, plus */
		it->indexed |= src->index >= 0;
		if (src->base == it->reg && src->index < 0)
			it->indexed = s->stepped = true; /* lea k(%r),%r: a step */
		else
			it->add = (int64_t)((uint64_t)it->add + (uint64_t)src->disp); /* wraps as addresses do */
		it->reg = src->base;
		return 1;
	}
	if (in->opcode == LS_MN_MOV && src->kind == LS_OP_IMM && src->imm > 0x1000)
		return found(s, (struct ls_reg_origin){ .kind = LS_ORIGIN_STATIC, .addr = (uint64_t)src->imm }, it) ? 0 : -1;
	int64_t spill;
	if (in->opcode == LS_MN_MOV && src->kind == LS_OP_MEM && !src->seg && s->env &&
	    s->env->slot_of(s->env->arg, in, src, true, &spill)) {
		it->reg = IN_SLOT; /* a reload: the spills before it */
		it->slot = spill;
		return 1;
	}
	if (in->opcode == LS_MN_MOV && src->kind == LS_OP_MEM && !src->seg) {
		/* a pointer loaded from memory: a RIP-relative slot (the GOT's, or
		 * a global pointer) is one however many loads read it */
		bool slot = src->base == LS_REG_RIP && src->index < 0;
		struct ls_reg_origin o = { .kind = LS_ORIGIN_LOAD, .load = { j }, .nloads = 1, .slot = slot,
		                           .addr = slot ? (uint64_t)src->disp : 0 };
		return found(s, o, it) ? 0 : -1;
	}
	if (in->opcode == LS_MN_MOV && is_gpr(src) && src->size == 8) {
		it->reg = src->reg;
		return 1;
	}
	if ((in->opcode == LS_MN_ADD || in->opcode == LS_MN_SUB) && src->kind == LS_OP_IMM) {
		it->indexed = s->stepped = true; /* a pointer stepped: which element is not known */
		return 1;
	}
	if (in->opcode == LS_MN_SUB && is_gpr(src) && src->size == 8 && src->reg != it->reg) {
		/* stepped back by a register (xz's cur - delta): by an unknown
		 * amount.  Not add %r: of p + q the pointer may be either (dst +
		 * (cur - begin) computed as cur - begin + dst); of p - q it is
		 * p, or the difference is no address at all */
		it->indexed = s->stepped = s->reg_stepped = true;
		return 1;
	}
	return -1;
}

static bool is_reg64(const struct ls_operand *op)
{
	return op->kind == LS_OP_REG && op->reg >= 0 && op->reg < 16 && op->size == 8;
}

/* What IN does to the spill slot IT->slot: 0 nothing (or reads it), 1 a
 * spill of a register (IT now follows that register), -1 anything else
 * that may write it. */
static int follow_slot(struct search *s, const struct ls_insn *in, struct item *it)
{
	for (int i = 0; i < in->nops && i < 3; i++) {
		const struct ls_operand *op = &in->op[i];
		int64_t at;
		if (op->kind != LS_OP_MEM || op->seg || (op->base != 4 && op->base != 5) ||
		    !s->env->slot_of(s->env->arg, in, op, false, &at))
			continue;
		if ((uint64_t)(at - it->slot + 7) >= 15)
			continue; /* another slot */
		if (in->opcode == LS_MN_LEA)
			return -1;
		/* AT&T: a source operand (not the last) is read; cmp reads both */
		if (i < in->nops - 1 || in->opcode == LS_MN_CMP || in->opcode == LS_MN_PUSH)
			continue;
		if (in->opcode != LS_MN_MOV || in->nops != 2 || i != 1 || at != it->slot || !is_reg64(&in->op[0]) ||
		    in->op[0].reg == 4)
			return -1;
		it->reg = in->op[0].reg;
		return 1;
	}
	return 0;
}

/* Whether block B was seen with stack slot SLOT (marks it).  The slots a
 * search meets are few: a list. */
static bool slot_seen_before(struct search *s, uint32_t b, int64_t slot)
{
	for (size_t k = 0; k < s->nseen_slots; k++)
		if (s->seen_slots[k].block == b && s->seen_slots[k].slot == slot)
			return true;
	s->seen_slots = ls_grow(s->seen_slots, &s->seen_slots_cap, s->nseen_slots + 1, sizeof *s->seen_slots);
	s->seen_slots[s->nseen_slots].block = b;
	s->seen_slots[s->nseen_slots++].slot = slot;
	return false;
}

/* Whether block B was seen with IT's location (marks it). */
static bool seen_before(struct search *s, uint32_t b, const struct item *it)
{
	if (it->reg == IN_SLOT)
		return slot_seen_before(s, b, it->slot);
	uint8_t *seen = &s->seen[(size_t)b * 16 + it->reg];
	bool was = *seen;
	*seen = 1;
	return was;
}

/* Whether block B is only nops (the padding between a jump and the next
 * aligned label): a block no edge reaches, but not code a missed edge
 * (an unresolved jump, a landing pad) may reach. */
static bool only_padding(const struct ls_cfg *cfg, const struct ls_block *b)
{
	for (uint32_t j = b->first_insn; j < b->first_insn + b->ninsns; j++)
		if (cfg->insns[j].opcode != LS_MN_NOP)
			return false;
	return true;
}

/* Scans one item's block backwards; pushes its predecessors when the
 * register is not written in it.  False when the answer is "unknown". */
static bool scan(struct search *s, struct item it)
{
	const struct ls_cfg *cfg = s->cfg;
	const struct ls_block *b = &cfg->blocks[it.block];
	for (uint32_t j = it.end; j-- > b->first_insn;) {
		const struct ls_insn *in = &cfg->insns[j];
		if (it.reg == IN_SLOT) {
			int r = follow_slot(s, in, &it);
			if (r < 0)
				return false;
			continue;
		}
		if (!(in->writes & (1u << it.reg)))
			continue;
		int r = follow_def(s, j, in, &it);
		if (r <= 0)
			return r == 0;
		if (it.reg == IN_SLOT && follow_slot(s, in, &it) != 0)
			return false; /* a reload that also writes its slot: not one */
	}
	if (it.block == 0 && (it.reg == IN_SLOT ||
	                      !found(s, (struct ls_reg_origin){ .kind = LS_ORIGIN_ENTRY, .entry_reg = it.reg }, &it)))
		return false; /* the entry's value: a parameter's, on this path (a slot's: none) */
	if (it.block != 0 && b->npred == 0)
		return only_padding(cfg, b); /* alignment nops after a jump: no path comes through them */
	for (uint32_t k = 0; k < b->npred; k++) {
		uint32_t p = cfg->edges[cfg->pred[b->first_pred + k]].from;
		if (seen_before(s, p, &it))
			continue;
		const struct ls_block *pb = &cfg->blocks[p];
		push(s, (struct item){ p, pb->first_insn + pb->ninsns, it.reg, it.slot, it.indexed, it.add });
	}
	return true;
}

bool ls_reg_origin(const struct ls_cfg *cfg, uint32_t insn, int reg, struct ls_reg_origin *out)
{
	return ls_reg_origin_env(cfg, insn, reg, NULL, out);
}

bool ls_reg_origin_env(const struct ls_cfg *cfg, uint32_t insn, int reg, const struct ls_slot_env *env,
                       struct ls_reg_origin *out)
{
	if (reg < 0 || reg >= 16 || reg == 4 || insn >= cfg->ninsns)
		return false;
	int32_t b = ls_cfg_block_of(cfg, cfg->insns[insn].addr);
	if (b < 0)
		return false;
	struct search s = { .cfg = cfg, .env = env };
	s.seen = ls_xcalloc(cfg->nblocks * 16, 1);
	push(&s, (struct item){ (uint32_t)b, insn, reg, 0, false, 0 });
	bool ok = true;
	for (size_t visits = 0; ok && s.nwork; visits++)
		ok = visits < VISITS_MAX && scan(&s, s.work[--s.nwork]);
	free(s.work);
	free(s.seen);
	free(s.seen_slots);
	if (!ok || !s.have)
		return false;
	*out = s.found;
	out->indexed |= s.stepped;
	out->stepped = s.stepped;
	out->reg_stepped = s.reg_stepped;
	out->add = s.found_add;
	return true;
}

/* ---- a value DWARF names at another PC ------------------------------------------------ */

struct named_search {
	const struct ls_cfg *cfg;
	const struct ls_slot_env *slots;
	const struct ls_name_env *env;
	struct ls_reg_named *out;
	struct { uint32_t block, end; int reg; int64_t slot; } *work; /* backwards: [first, end) of block */
	size_t nwork, cap;
	uint8_t *seen;             /* backwards: [block * 16 + reg] */
	struct search slot_search; /* backwards through spill slots: follow_slot's and seen_before's */
	uint16_t *fwd_seen;        /* forwards: the registers already carried into each block */
	struct { uint32_t block, start; uint16_t regs; } *fwd;
	size_t nfwd, fwd_cap;
	size_t visits;
};

static bool add_end(struct named_search *s, enum ls_named_end_kind kind, uint32_t insn, int reg)
{
	struct ls_reg_named *o = s->out;
	for (unsigned k = 0; k < o->nends; k++)
		if (o->end[k].kind == kind && o->end[k].insn == insn && o->end[k].reg == reg)
			return true;
	if (o->nends == LS_REG_NAMED_ENDS)
		return false;
	o->end[o->nends].kind = kind;
	o->end[o->nends].insn = insn;
	o->end[o->nends++].reg = reg;
	return true;
}

static bool is_copy(const struct ls_insn *in)
{
	return in->opcode == LS_MN_MOV && in->nops == 2 && is_reg64(&in->op[0]) && is_reg64(&in->op[1]);
}

static void push_fwd(struct named_search *s, uint32_t block, uint32_t start, uint16_t regs)
{
	if (start == s->cfg->blocks[block].first_insn) {
		if ((s->fwd_seen[block] & regs) == regs)
			return; /* carried into this block in these registers before */
		s->fwd_seen[block] |= regs;
	}
	s->fwd = ls_grow(s->fwd, &s->fwd_cap, s->nfwd + 1, sizeof *s->fwd);
	s->fwd[s->nfwd].block = block;
	s->fwd[s->nfwd].start = start;
	s->fwd[s->nfwd++].regs = regs;
}

/* One forward item: the value in REGS before instruction START of BLOCK.
 * False when the answer is "unknown" (too many ends). */
static bool scan_forward(struct named_search *s, uint32_t block, uint32_t start, uint16_t regs)
{
	const struct ls_cfg *cfg = s->cfg;
	const struct ls_block *b = &cfg->blocks[block];
	for (uint32_t j = start; j < b->first_insn + b->ninsns; j++) {
		const struct ls_insn *in = &cfg->insns[j];
		for (int r = 0; r < 16; r++)
			if ((regs & (1u << r)) && s->env->named(s->env->arg, j, r))
				return add_end(s, LS_NAMED_AT, j, r); /* the first name on this path */
		const struct ls_operand *dst = &in->op[1];
		int64_t at;
		if (in->opcode == LS_MN_MOV && in->nops == 2 && is_reg64(&in->op[0]) && (regs & (1u << in->op[0].reg)) &&
		    dst->kind == LS_OP_MEM && !dst->seg &&
		    !(s->slots && s->slots->slot_of(s->slots->arg, in, dst, true, &at)))
			return add_end(s, LS_NAMED_STORE, j, in->op[0].reg); /* put into memory (not a spill) */
		if (is_copy(in) && (regs & (1u << in->op[0].reg)))
			regs |= (uint16_t)(1u << in->op[1].reg);
		else
			regs &= (uint16_t)~in->writes;
		if (!regs || in->kind == LS_INSN_RET)
			return true; /* lost unnamed (freed, dead, returned): no name on this path */
	}
	for (uint32_t k = 0; k < b->nsucc; k++) {
		uint32_t to = cfg->edges[cfg->succ[b->first_succ + k]].to;
		push_fwd(s, to, cfg->blocks[to].first_insn, regs);
	}
	return true;
}

/* The allocation call INSN's result, forwards to where it is put. */
static bool forward_from_alloc(struct named_search *s, uint32_t insn)
{
	const struct ls_cfg *cfg = s->cfg;
	int32_t b = ls_cfg_block_of(cfg, cfg->insns[insn].addr);
	if (b < 0)
		return false;
	s->out->alloc = true;
	const struct ls_block *blk = &cfg->blocks[b];
	uint16_t rax = 1u << 0;
	if (insn + 1 < blk->first_insn + blk->ninsns) {
		s->fwd = ls_grow(s->fwd, &s->fwd_cap, s->nfwd + 1, sizeof *s->fwd);
		s->fwd[s->nfwd].block = (uint32_t)b;
		s->fwd[s->nfwd].start = insn + 1;
		s->fwd[s->nfwd++].regs = rax;
	} else {
		for (uint32_t k = 0; k < blk->nsucc; k++) {
			uint32_t to = cfg->edges[cfg->succ[blk->first_succ + k]].to;
			push_fwd(s, to, cfg->blocks[to].first_insn, rax);
		}
	}
	while (s->nfwd) {
		if (++s->visits > VISITS_MAX)
			return false;
		s->nfwd--;
		if (!scan_forward(s, s->fwd[s->nfwd].block, s->fwd[s->nfwd].start, s->fwd[s->nfwd].regs))
			return false;
	}
	return true;
}

/* Whether IN steps 64-bit register REG as follow_def follows a step:
 * add/sub $k, lea k(%REG),%REG, sub %r,%REG. */
static bool is_step(const struct ls_insn *in, int reg)
{
	const struct ls_operand *src = &in->op[0];
	if (in->nops != 2 || !is_reg64(&in->op[1]) || in->op[1].reg != reg)
		return false;
	if (in->opcode == LS_MN_LEA)
		return src->kind == LS_OP_MEM && !src->seg && src->base == reg && src->index < 0;
	if (in->opcode == LS_MN_ADD || in->opcode == LS_MN_SUB)
		return src->kind == LS_OP_IMM || (in->opcode == LS_MN_SUB && is_reg64(src) && src->reg != reg);
	return false;
}

/* The definition J of REG: 1 to go on (*REG, *SLOT updated), 0 when the
 * path ended well, -1 when it cannot say. */
static int named_def(struct named_search *s, uint32_t j, int *reg, int64_t *slot)
{
	const struct ls_insn *in = &s->cfg->insns[j];
	int64_t at;
	if (is_copy(in) && in->op[1].reg == *reg) {
		*reg = in->op[0].reg; /* the same value, before J in the source */
		return 1;
	}
	if (s->env->zeroes && s->env->zeroes(s->env->arg, j))
		return 0; /* a null pointer: no object on this path */
	if (is_step(in, *reg)) {
		s->out->stepped = true; /* the named value, stepped */
		return 1;
	}
	if ((in->kind == LS_INSN_CALL || in->kind == LS_INSN_ICALL) && *reg == 0 && s->env->alloc_call &&
	    s->env->alloc_call(s->env->arg, j))
		return forward_from_alloc(s, j) ? 0 : -1;
	if (in->opcode != LS_MN_MOV || in->nops != 2 || in->op[0].kind != LS_OP_MEM || in->op[0].seg ||
	    !is_reg64(&in->op[1]) || in->op[1].reg != *reg)
		return -1;
	if (s->slots && s->slots->slot_of(s->slots->arg, in, &in->op[0], true, &at)) {
		*reg = IN_SLOT; /* a reload: the spills before it */
		*slot = at;
		return 1;
	}
	return add_end(s, LS_NAMED_LOAD, j, *reg) ? 0 : -1;
}

/* Backwards over one block for the value in REG (or the spill slot SLOT)
 * before END: false when the answer is "unknown". */
static bool scan_named(struct named_search *s, uint32_t block, uint32_t end, int reg, int64_t slot)
{
	const struct ls_cfg *cfg = s->cfg;
	const struct ls_block *b = &cfg->blocks[block];
	for (uint32_t j = end; j-- > b->first_insn;) {
		const struct ls_insn *in = &cfg->insns[j];
		if (reg == IN_SLOT) {
			struct item it = { .reg = IN_SLOT, .slot = slot };
			if (follow_slot(&s->slot_search, in, &it) < 0)
				return false;
			reg = it.reg; /* a spill: its register, before J */
			if (reg != IN_SLOT && s->env->named(s->env->arg, j, reg))
				return add_end(s, LS_NAMED_AT, j, reg);
			continue;
		}
		if (in->writes & (1u << reg)) {
			int r = named_def(s, j, &reg, &slot);
			if (r <= 0)
				return r == 0;
			if (reg == IN_SLOT)
				continue;
		}
		if (s->env->named(s->env->arg, j, reg))
			return add_end(s, LS_NAMED_AT, j, reg);
	}
	if (block == 0)
		return false; /* the entry's value: ls_reg_origin's rules, not this one */
	if (b->npred == 0)
		return only_padding(cfg, b);
	for (uint32_t k = 0; k < b->npred; k++) {
		uint32_t p = cfg->edges[cfg->pred[b->first_pred + k]].from;
		uint8_t *seen = reg == IN_SLOT ? NULL : &s->seen[(size_t)p * 16 + reg];
		if (seen ? *seen : slot_seen_before(&s->slot_search, p, slot))
			continue;
		if (seen)
			*seen = 1;
		s->work = ls_grow(s->work, &s->cap, s->nwork + 1, sizeof *s->work);
		s->work[s->nwork].block = p;
		s->work[s->nwork].end = cfg->blocks[p].first_insn + cfg->blocks[p].ninsns;
		s->work[s->nwork].reg = reg;
		s->work[s->nwork++].slot = slot;
	}
	return true;
}

bool ls_reg_origin_named(const struct ls_cfg *cfg, uint32_t insn, int reg, const struct ls_slot_env *slots,
                         const struct ls_name_env *env, struct ls_reg_named *out)
{
	if (reg < 0 || reg >= 16 || reg == 4 || insn >= cfg->ninsns || !env || !env->named)
		return false;
	int32_t b = ls_cfg_block_of(cfg, cfg->insns[insn].addr);
	if (b < 0)
		return false;
	memset(out, 0, sizeof *out);
	struct named_search s = { .cfg = cfg, .slots = slots, .env = env, .out = out };
	s.seen = ls_xcalloc(cfg->nblocks * 16, 1);
	s.fwd_seen = ls_xcalloc(cfg->nblocks, sizeof *s.fwd_seen);
	s.slot_search.cfg = cfg;
	s.slot_search.env = slots;
	bool ok = scan_named(&s, (uint32_t)b, insn, reg, 0);
	while (ok && s.nwork) {
		s.nwork--;
		ok = ++s.visits <= VISITS_MAX &&
		     scan_named(&s, s.work[s.nwork].block, s.work[s.nwork].end, s.work[s.nwork].reg, s.work[s.nwork].slot);
	}
	free(s.work);
	free(s.seen);
	free(s.slot_search.seen_slots);
	free(s.fwd);
	free(s.fwd_seen);
	return ok && out->nends > 0;
}
