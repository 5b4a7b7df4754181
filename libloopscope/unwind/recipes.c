/* recipes.c - unwind recipes: from every instruction of a procedure, where
 * the caller's frame is (the canonical frame address, CFA: the caller's SP
 * after the return), where the return address is and where the caller's BP
 * is, computed from the code (Tallent et al., PLDI 2009, section 2.2).
 *
 * The paper scans a procedure linearly and, after a return or a tail call,
 * restarts from a "canonical frame" it guesses, repairing the guess when a
 * return finds the stack in an unexpected state.  We have the procedure's
 * CFG (cfg/cfg.c, jump tables resolved, .cold parts as ranges of their
 * procedure), so the state flows along its edges instead: what reaches an
 * instruction after an epilogue is what the branch to it carries, with no
 * guess (gcc's shrink-wrapped early exits, several epilogues, code after a
 * tail call).  What is left of the paper's heuristics is where the CFG is
 * silent:
 *   - calls all return in a CFG built without the module's noreturn facts
 *     (cfg.h: ls_cfg_build_alone; the facts would cost a summary of every
 *     procedure, and are not there when the structure came from the
 *     cache).  A call's return edge is "weak": a state that a branch brings
 *     to the same block wins over it, and a call to a function that never
 *     returns by its name (abort, __stack_chk_fail, ...) has none;
 *   - code no path reaches (a jump table that could not be read, dead
 *     code) carries on from the instruction before it, as CFI does;
 *   - a block that ends in a return but whose state the forward analysis
 *     lost (SP from an untracked register) is worked back from the return,
 *     where CFA = SP + 8 (the paper's return repair);
 *   - a .cold part that is a procedure of its own (symbols without DWARF)
 *     starts with the state of the hot part's jump into it (the paper's
 *     hot/cold pattern: it jumps back into the interior of another
 *     procedure, which jumps to its start);
 *   - PLT stubs are counted straight through (push; jmp).
 *
 * The state tracks SP and BP as offsets from the CFA, whether BP holds the
 * caller's BP or where that was saved, and which other registers hold a
 * copy of SP (mov %rsp,%rbx ... mov %rbx,%rsp).  Once a frame pointer is
 * set up after the caller's BP was saved, the CFA is reckoned from BP (as
 * compilers' CFI does), so that alloca and `and $-32,%rsp` lose nothing.
 *
 * Recipes are computed the first time an address of the procedure is asked
 * about, under the module's unwind lock, and kept until the module closes:
 * the scope tree gives the procedure (so the answer is the same with and
 * without the cache).  x86-64 only.
 */
#include "unwind/recipes.h"
#include "cfg/cfg.h"
#include "dwarf/procs.h"
#include "elf/module.h"
#include "elf/relocate.h"
#include "elf/symbols.h"
#include "structure/scope.h"
#include "support/sort.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { R_SP = 4, R_BP = 5, NREGS = 16 };

/* ---- the state of the frame before an instruction ------------------------ */

enum {
	S_SP = 1,        /* SP = CFA - sp */
	S_FP = 2,        /* BP = CFA - fp */
	S_BP_CALLER = 4, /* BP still holds the caller's BP */
	S_BP_SAVED = 8,  /* the caller's BP is in the frame, at CFA - save */
	S_CFA_FP = 16,   /* the CFA is reckoned from BP: a frame pointer is set up */
	S_BP_LOST = 32,  /* BP was overwritten before the caller's was saved */
};

/* A realigned frame (and $-N,%rsp) loses SP's distance to the CFA; from
 * then on SP and BP are tracked from the anchor A, SP's value right after
 * the `and`: gcc's DRAP frames (lea 8(%rsp),%r10; and $-16,%rsp;
 * push -8(%r10); push %rbp; mov %rsp,%rbp; push %r10) keep the CFA in
 * R10, then in the frame at BP-N, where CFI says CFA = *(BP-N). */
enum {
	A_SP = 1,        /* SP = A - asp */
	A_FP = 2,        /* BP = A - afp */
	A_SAVE = 4,      /* the caller's BP is at A - asave */
	A_CSLOT = 8,     /* the slot at A - cslot holds CFA - cval */
	A_IN_SLOT = 16,  /* the slot, not a register, had the CFA last (CFI's choice) */
};

struct state {
	int32_t sp, fp, save;
	uint8_t f, a;
	uint16_t copies;         /* bit r: register r holds CFA - copy[r] */
	int32_t copy[NREGS];
	int32_t asp, afp, asave, cslot, cval;
};

static const struct state entry_state = { .sp = 8, .f = S_SP | S_BP_CALLER };

/* Equal in what the recipes say (copies aside: they meet at joins). */
static bool same_frame(const struct state *a, const struct state *b)
{
	if (a->f != b->f)
		return false;
	if ((a->f & S_SP) && a->sp != b->sp)
		return false;
	if ((a->f & S_FP) && a->fp != b->fp)
		return false;
	if ((a->f & S_BP_SAVED) && a->save != b->save)
		return false;
	if (a->a != b->a || ((a->a & A_SP) && a->asp != b->asp) || ((a->a & A_FP) && a->afp != b->afp))
		return false;
	if ((a->a & A_SAVE) && a->asave != b->asave)
		return false;
	return !(a->a & A_CSLOT) || (a->cslot == b->cslot && a->cval == b->cval);
}

/* The CFA is known from this state. */
static bool cfa_known(const struct state *s)
{
	return (s->f & S_SP) || (s->f & S_FP) || ((s->a & A_CSLOT) && (s->a & (A_SP | A_FP))) || s->copies;
}

static bool is_reg(const struct ls_operand *op, int r)
{
	return op->kind == LS_OP_REG && op->reg == r && op->size == 8;
}

static bool gpr(const struct ls_operand *op)
{
	return op->kind == LS_OP_REG && op->reg >= 0 && op->reg < NREGS && op->size == 8;
}

/* BP gets a value that is not the caller's and not a frame pointer. */
static void clobber_bp(struct state *s)
{
	if ((s->f & S_BP_CALLER) && !(s->f & S_BP_SAVED) && !(s->a & A_SAVE))
		s->f |= S_BP_LOST;
	s->f &= (uint8_t)~(S_BP_CALLER | S_FP | S_CFA_FP);
	s->a &= (uint8_t)~A_FP;
}

/* BP = CFA - FP.  It is a frame pointer, and the CFA's base, when it
 * points at the slot that holds the caller's BP (push %rbp; mov %rsp,%rbp,
 * realigned frames too); BP pointing elsewhere into the frame is a general
 * register that clang uses as a pointer (lea 0x10(%rsp),%rbp): tracked,
 * but the CFA stays with SP. */
static uint8_t set_fp(struct state *s, int32_t fp)
{
	clobber_bp(s);
	s->fp = fp;
	s->f |= S_FP;
	if ((s->f & S_BP_SAVED) && s->save == fp) {
		s->f |= S_CFA_FP;
		return LS_UNWIND_RULE_FRAME_SETUP;
	}
	return LS_UNWIND_RULE_UNKNOWN;
}

/* SP = CFA - SP_OFF, or unknown (from the anchor too). */
static void set_sp(struct state *s, bool known, int32_t sp_off)
{
	if (known) {
		s->sp = sp_off;
		s->f |= S_SP;
		s->a = 0; /* the anchor's frame is over */
	} else {
		s->f &= (uint8_t)~S_SP;
		s->a &= (uint8_t)~A_SP;
	}
}

/* The value of register R as CFA - *OFF, if known. */
static bool reg_value(const struct state *s, int r, int32_t *off)
{
	if (r == R_SP && (s->f & S_SP))
		*off = s->sp;
	else if (r == R_BP && (s->f & S_FP))
		*off = s->fp;
	else if (r >= 0 && r < NREGS && r != R_SP && r != R_BP && (s->copies & (1u << r)))
		*off = s->copy[r];
	else
		return false;
	return true;
}

/* BP loaded from the stack: the caller's BP is back when FROM_SAVE_SLOT
 * (the slot it was saved in), else BP is lost. */
static uint8_t load_bp_from(struct state *s, bool from_save_slot)
{
	if (!from_save_slot) {
		clobber_bp(s);
		return LS_UNWIND_RULE_UNKNOWN;
	}
	s->f &= (uint8_t)~(S_FP | S_CFA_FP | S_BP_SAVED | S_BP_LOST);
	s->f |= S_BP_CALLER;
	s->a &= (uint8_t)~(A_FP | A_SAVE);
	return LS_UNWIND_RULE_BP_RESTORE;
}

/* A pop into BP from the slot at CFA - SLOT: the caller's BP is back if
 * that is where it was saved. */
static uint8_t load_bp(struct state *s, bool slot_known, int32_t slot)
{
	return load_bp_from(s, (s->f & S_BP_SAVED) && slot_known && slot == s->save);
}

/* The same from the anchor's slot at A - ASLOT. */
static uint8_t load_bp_anchored(struct state *s, int32_t aslot)
{
	return load_bp_from(s, (s->a & A_SAVE) && aslot == s->asave);
}

/* A push while SP is only known from the anchor: the caller's BP, or a
 * register holding the CFA (DRAP), saved in the realigned frame. */
static uint8_t push_anchored(struct state *s, const struct ls_insn *in, int32_t n)
{
	s->asp += n;
	if (n != 8 || in->nops < 1 || !gpr(&in->op[0]))
		return LS_UNWIND_RULE_PUSH;
	int r = in->op[0].reg;
	if (r == R_BP && (s->f & S_BP_CALLER) && !(s->f & S_BP_SAVED) && !(s->a & A_SAVE)) {
		s->a |= A_SAVE;
		s->asave = s->asp;
		return LS_UNWIND_RULE_BP_SAVE;
	}
	if (r != R_SP && r != R_BP && (s->copies & (1u << r))) {
		s->a |= A_CSLOT | A_IN_SLOT;
		s->cslot = s->asp;
		s->cval = s->copy[r];
	}
	return LS_UNWIND_RULE_PUSH;
}

static uint8_t do_push(struct state *s, const struct ls_insn *in)
{
	int32_t n = in->op[0].size == 2 ? 2 : 8;
	if (!(s->f & S_SP) && (s->a & A_SP))
		return push_anchored(s, in, n);
	if (!(s->f & S_SP))
		return LS_UNWIND_RULE_PUSH;
	s->sp += n;
	if (n == 8 && in->nops >= 1 && is_reg(&in->op[0], R_BP) && (s->f & S_BP_CALLER) && !(s->f & S_BP_SAVED)) {
		s->f |= S_BP_SAVED;
		s->save = s->sp;
		return LS_UNWIND_RULE_BP_SAVE;
	}
	return LS_UNWIND_RULE_PUSH;
}

/* A pop while SP is only known from the anchor. */
static uint8_t pop_anchored(struct state *s, const struct ls_insn *in, int32_t n)
{
	int32_t aslot = s->asp;
	uint8_t rule = LS_UNWIND_RULE_POP;
	if (in->nops >= 1 && is_reg(&in->op[0], R_BP)) {
		rule = load_bp_anchored(s, aslot);
	} else if (in->nops >= 1 && gpr(&in->op[0])) {
		int r = in->op[0].reg;
		s->copies &= (uint16_t)~(1u << r);
		if ((s->a & A_CSLOT) && aslot == s->cslot) {
			s->copies |= (uint16_t)(1u << r);
			s->copy[r] = s->cval;
			s->a &= (uint8_t)~A_IN_SLOT;
		}
	}
	s->asp -= n;
	return rule == LS_UNWIND_RULE_UNKNOWN ? LS_UNWIND_RULE_POP : rule;
}

static uint8_t do_pop(struct state *s, const struct ls_insn *in)
{
	int32_t n = in->op[0].size == 2 ? 2 : 8;
	bool known = (s->f & S_SP) != 0;
	int32_t slot = s->sp;
	uint8_t rule = LS_UNWIND_RULE_POP;
	if (in->nops >= 1 && is_reg(&in->op[0], R_SP)) {
		set_sp(s, false, 0); /* pop %rsp */
		return LS_UNWIND_RULE_UNKNOWN;
	}
	if (!known && (s->a & A_SP))
		return pop_anchored(s, in, n);
	if (in->nops >= 1 && is_reg(&in->op[0], R_BP))
		rule = load_bp(s, known, slot);
	else if (in->nops >= 1 && gpr(&in->op[0]))
		s->copies &= (uint16_t)~(1u << in->op[0].reg);
	if (known)
		s->sp -= n;
	return rule == LS_UNWIND_RULE_UNKNOWN ? LS_UNWIND_RULE_POP : rule;
}

/* SP = BP; pop BP. */
static uint8_t do_leave(struct state *s)
{
	if (!(s->f & S_FP) && (s->a & A_FP)) {
		s->f &= (uint8_t)~S_SP;
		s->a |= A_SP;
		s->asp = s->afp;
		struct ls_insn pop = { .nops = 1, .op = { { .kind = LS_OP_REG, .reg = R_BP, .size = 8 } } };
		pop_anchored(s, &pop, 8);
		return LS_UNWIND_RULE_FRAME_TEARDOWN;
	}
	bool known = (s->f & S_FP) != 0;
	set_sp(s, known, s->fp);
	int32_t slot = s->sp;
	load_bp(s, known, slot);
	if (known)
		s->sp -= 8;
	return LS_UNWIND_RULE_FRAME_TEARDOWN;
}

/* enter $N,$0: push BP; BP = SP; SP -= N. */
static uint8_t do_enter(struct state *s, const struct ls_insn *in)
{
	struct ls_insn push = { .nops = 1, .op = { { .kind = LS_OP_REG, .reg = R_BP, .size = 8 } } };
	do_push(s, &push);
	if (!(s->f & S_SP)) {
		clobber_bp(s);
		return LS_UNWIND_RULE_UNKNOWN;
	}
	set_fp(s, s->sp);
	if (in->nops >= 1 && in->op[0].kind == LS_OP_IMM)
		s->sp += (int32_t)in->op[0].imm;
	else
		set_sp(s, false, 0);
	return LS_UNWIND_RULE_FRAME_SETUP;
}

/* sub/add $IMM,%rsp (SIGN -1 for add); by a register: alloca. */
static uint8_t adjust_sp(struct state *s, const struct ls_insn *in, int sign)
{
	if (in->op[0].kind == LS_OP_IMM && in->op[0].imm > -(1 << 30) && in->op[0].imm < (1 << 30)) {
		if (s->f & S_SP)
			s->sp += sign * (int32_t)in->op[0].imm;
		else if (s->a & A_SP)
			s->asp += sign * (int32_t)in->op[0].imm;
		return LS_UNWIND_RULE_SP_ADJUST;
	}
	set_sp(s, false, 0);
	return LS_UNWIND_RULE_VARIABLE;
}

/* SP and BP to each other while only the anchor knows them: false if the
 * move is not one of those. */
static bool copy_anchored(struct state *s, int dst, int src, int64_t disp, uint8_t *rule)
{
	int32_t d = (int32_t)disp;
	if (disp <= -(1 << 30) || disp >= (1 << 30))
		return false;
	if (dst == R_SP && src == R_BP && !(s->f & S_FP) && (s->a & A_FP)) {
		s->f &= (uint8_t)~S_SP;
		s->a |= A_SP;
		s->asp = s->afp - d;
		*rule = LS_UNWIND_RULE_FRAME_TEARDOWN;
		return true;
	}
	if (dst == R_BP && src == R_SP && !(s->f & S_SP) && (s->a & A_SP)) {
		clobber_bp(s);
		s->a |= A_FP;
		s->afp = s->asp - d;
		*rule = LS_UNWIND_RULE_FRAME_SETUP;
		return true;
	}
	return false;
}

/* lea DISP(BASE),DST and mov %SRC,%DST between SP, BP and the copies. */
static uint8_t copy_value(struct state *s, int dst, int src, int64_t disp)
{
	uint8_t arule;
	if (copy_anchored(s, dst, src, disp, &arule))
		return arule;
	int32_t v = 0; /* read only when known */
	bool known = reg_value(s, src, &v) && disp > -(1 << 30) && disp < (1 << 30);
	if (known)
		v -= (int32_t)disp;
	if (dst == R_SP) {
		set_sp(s, known, v);
		if (!known)
			return LS_UNWIND_RULE_UNKNOWN;
		if (src == R_BP)
			return LS_UNWIND_RULE_FRAME_TEARDOWN;
		return src == R_SP ? LS_UNWIND_RULE_SP_ADJUST : LS_UNWIND_RULE_SP_COPY;
	}
	if (dst == R_BP) {
		if (!known) {
			clobber_bp(s);
			return LS_UNWIND_RULE_UNKNOWN;
		}
		return set_fp(s, v);
	}
	if (known) {
		s->copies |= (uint16_t)(1u << dst);
		s->copy[dst] = v;
	} else {
		s->copies &= (uint16_t)~(1u << dst);
	}
	return LS_UNWIND_RULE_UNKNOWN;
}

/* mov %rbp,DISP(%rsp) saves the caller's BP; mov DISP(%rsp|%rbp),%rbp
 * may restore it. */
static bool bp_store_or_load(struct state *s, const struct ls_insn *in, uint8_t *rule)
{
	const struct ls_operand *src = &in->op[0], *dst = &in->op[1];
	if (is_reg(src, R_BP) && dst->kind == LS_OP_MEM && dst->index < 0 && (s->f & S_BP_CALLER) &&
	    !(s->f & S_BP_SAVED)) {
		int32_t base;
		if (!reg_value(s, dst->base, &base))
			return false;
		s->f |= S_BP_SAVED;
		s->save = base - (int32_t)dst->disp;
		*rule = LS_UNWIND_RULE_BP_SAVE;
		return true;
	}
	if (is_reg(dst, R_BP) && src->kind == LS_OP_MEM && src->index < 0) {
		int32_t base = 0; /* read only when known */
		bool known = reg_value(s, src->base, &base);
		*rule = load_bp(s, known, base - (int32_t)src->disp);
		return true;
	}
	return false;
}

/* mov N(%rbp|%rsp),%R from the realigned frame's slot that holds the CFA
 * (DRAP's epilogue: mov -8(%rbp),%r10): R holds it again. */
static bool load_cfa_copy(struct state *s, const struct ls_operand *src, int r)
{
	if (!(s->a & A_CSLOT) || src->index >= 0 || r == R_SP || r == R_BP)
		return false;
	int32_t aslot;
	if (src->base == R_BP && (s->a & A_FP))
		aslot = s->afp - (int32_t)src->disp;
	else if (src->base == R_SP && (s->a & A_SP))
		aslot = s->asp - (int32_t)src->disp;
	else
		return false;
	if (aslot != s->cslot)
		return false;
	s->copies |= (uint16_t)(1u << r);
	s->copy[r] = s->cval;
	s->a &= (uint8_t)~A_IN_SLOT;
	return true;
}

static uint8_t do_move(struct state *s, const struct ls_insn *in, bool lea)
{
	if (in->nops < 2)
		return LS_UNWIND_RULE_UNKNOWN;
	const struct ls_operand *src = &in->op[0], *dst = &in->op[1];
	uint8_t rule;
	if (!lea && bp_store_or_load(s, in, &rule))
		return rule;
	if (!gpr(dst))
		return 0xff; /* to memory, or a narrower register: writes below */
	if (!lea && src->kind == LS_OP_MEM && load_cfa_copy(s, src, dst->reg))
		return LS_UNWIND_RULE_UNKNOWN;
	if (lea && src->kind == LS_OP_MEM && src->index < 0 && src->base >= 0 && src->base < NREGS)
		return copy_value(s, dst->reg, src->base, src->disp);
	if (!lea && gpr(src))
		return copy_value(s, dst->reg, src->reg, 0);
	return 0xff;
}

/* What INSN does to S; returns the rule of the change (the recipe of the
 * next instruction names it).  Calls leave SP as it was (the callee pops
 * the return address). */
static uint8_t step(struct state *s, const struct ls_insn *in)
{
	uint8_t rule = 0xff;
	switch (in->opcode) {
	case LS_MN_PUSH: return do_push(s, in);
	case LS_MN_POP: return do_pop(s, in);
	case LS_MN_LEAVE: return do_leave(s);
	case LS_MN_ENTER: return do_enter(s, in);
	case LS_MN_SUB:
	case LS_MN_ADD:
		if (in->nops == 2 && is_reg(&in->op[1], R_SP))
			return adjust_sp(s, in, in->opcode == LS_MN_SUB ? 1 : -1);
		break;
	case LS_MN_AND:
		if (in->nops == 2 && is_reg(&in->op[1], R_SP)) {
			set_sp(s, false, 0);
			s->a = A_SP; /* a new anchor: SP's value now */
			s->asp = 0;
			return LS_UNWIND_RULE_ALIGN;
		}
		break;
	case LS_MN_MOV:
	case LS_MN_LEA:
		rule = do_move(s, in, in->opcode == LS_MN_LEA);
		if (rule != 0xff)
			return rule;
		break;
	default:
		break;
	}
	if (in->kind == LS_INSN_CALL || in->kind == LS_INSN_ICALL) {
		s->copies &= (uint16_t)~in->writes; /* the caller-saved ones */
		return LS_UNWIND_RULE_UNKNOWN;
	}
	/* Anything else that writes SP or BP: not tracked. */
	uint16_t w = in->writes;
	if (in->kind == LS_INSN_RET)
		w &= (uint16_t)~(1u << R_SP);
	if (w & (1u << R_SP)) {
		set_sp(s, false, 0);
		rule = LS_UNWIND_RULE_VARIABLE;
	}
	if (w & (1u << R_BP)) {
		clobber_bp(s);
		rule = LS_UNWIND_RULE_UNKNOWN;
	}
	s->copies &= (uint16_t)~w;
	return rule == 0xff ? LS_UNWIND_RULE_UNKNOWN : rule;
}

/* ---- the state along the CFG --------------------------------------------- */

/* A kernel jump label (static key, asm goto): the nop at SITE becomes a
 * jump to TARGET at run time.  The CFG does not see that edge; the code at
 * TARGET is reached through it only. */
struct label {
	uint64_t target, site;
};

enum { HAVE_NONE, HAVE_WEAK, HAVE_STRONG };

struct flow {
	const ls_module *m;
	const struct ls_cfg *cfg;
	struct state *in;        /* per block: the state at its start */
	uint8_t *have;           /* per block: HAVE_* */
	uint8_t *why;            /* per block: the rule of the state at its start */
	uint64_t *why_addr;      /* per block: the branch that brought it */
	uint32_t *work;
	uint8_t *queued;
	uint8_t *replaced;       /* per block: a better known frame replaced the first */
	size_t nwork;
	size_t conflicts;        /* two branches bring different frames to one block */
	int32_t canon_sp;        /* SP in the body's frame, after the prologue (-1: unknown) */
	const struct label *labels;
	size_t nlabels;
};

static void enqueue(struct flow *f, uint32_t b)
{
	if (!f->queued[b]) {
		f->queued[b] = 1;
		f->work[f->nwork++] = b;
	}
}

/* The meet of the registers holding copies of SP: those both agree on. */
static bool meet_copies(struct state *into, const struct state *s)
{
	uint16_t keep = into->copies & s->copies;
	for (int r = 0; r < NREGS; r++)
		if ((keep & (1u << r)) && into->copy[r] != s->copy[r])
			keep &= (uint16_t)~(1u << r);
	bool changed = keep != into->copies;
	into->copies = keep;
	return changed;
}

/* Two frames that differ only in SP while the CFA comes from the frame
 * pointer (an alloca on one path): SP becomes unknown, the CFA stays. */
static bool meet_sp(struct state *into, const struct state *s)
{
	if (!(into->f & S_CFA_FP) || !(into->f & S_SP))
		return false;
	struct state a = *into, b = *s;
	a.f &= (uint8_t)~S_SP;
	b.f &= (uint8_t)~S_SP;
	if (!same_frame(&a, &b))
		return false;
	into->f &= (uint8_t)~S_SP;
	return true;
}

/* State S arrives at block T along an edge of strength STRONG from the
 * instruction at FROM. */
static void arrive(struct flow *f, uint32_t t, const struct state *s, bool strong, uint64_t from)
{
	uint8_t h = strong ? HAVE_STRONG : HAVE_WEAK;
	if (f->have[t] == HAVE_NONE || (f->have[t] == HAVE_WEAK && strong && !same_frame(&f->in[t], s))) {
		f->in[t] = *s;
		f->have[t] = h;
		f->why[t] = LS_UNWIND_RULE_BRANCH;
		f->why_addr[t] = from;
		enqueue(f, t);
		return;
	}
	if (same_frame(&f->in[t], s)) {
		bool stronger = h > f->have[t];
		if (stronger)
			f->have[t] = h;
		if (meet_copies(&f->in[t], s) || stronger)
			enqueue(f, t);
		return;
	}
	if (meet_sp(&f->in[t], s)) {
		meet_copies(&f->in[t], s);
		enqueue(f, t);
		return;
	}
	/* Two frames of equal standing: one whose CFA is a known distance
	 * from SP or BP beats one that lost it (the code after a call that
	 * never returns - `call handle_stack_overflow; pop %rsp` - meets the
	 * real frame a branch brings), once per block; else the first to
	 * arrive stays. */
	if (strong == (f->have[t] == HAVE_STRONG)) {
		bool known = (s->f & (S_SP | S_FP)) != 0, had = (f->in[t].f & (S_SP | S_FP)) != 0;
		if (known && !had && !f->replaced[t]) {
			f->in[t] = *s;
			f->replaced[t] = 1;
			f->why[t] = LS_UNWIND_RULE_BRANCH;
			f->why_addr[t] = from;
			enqueue(f, t);
			return;
		}
		f->conflicts++;
	}
}

/* Whether NAME, or its demangled form, is a noreturn function's name. */
static bool noreturn_symbol(const ls_module *m, const char *name)
{
	if (ls_noreturn_name(m, name))
		return true;
	/* A demangled name on the list is std::__throw_* or std::terminate()
	 * (the rest are C names): demangle only what can spell one. */
	if (strncmp(name, "_Z", 2) != 0 || !(strstr(name, "__throw_") || strstr(name, "terminate")))
		return false;
	char *d = ls_demangle(name);
	bool yes = d && ls_noreturn_name(m, d);
	free(d);
	return yes;
}

/* Whether the procedure that starts at TARGET may have a noreturn name,
 * from the symbol tables alone: false only when it cannot.  In a linked
 * module without DWARF every procedure is one range named after the best
 * symbol at its start (demangled), its PLT slot's relocation, or sub_ADDR
 * (procs.c); so if no symbol at TARGET and no PLT slot there has a noreturn
 * name, the procedure there has none either.  With DWARF a procedure can
 * start a .cold range under its entry's name, or be named by DWARF alone:
 * then it may. */
static bool may_be_noreturn(const ls_module *m, uint64_t target)
{
	if (m->dwarf_found || m->relocatable || m->kernel)
		return true;
	const char *names[16], *plt;
	size_t n = ls_module_names_at(m, target, names, 16);
	if (n > 16)
		return true;
	for (size_t i = 0; i < n; i++)
		if (noreturn_symbol(m, names[i]))
			return true;
	int slot = ls_plt_slot_name(m, target, &plt);
	return slot < 0 || (slot > 0 && noreturn_symbol(m, plt));
}

/* Whether a call to TARGET never returns, by the name of what is there
 * (the analysis's proved facts are not there when the tree came from the
 * cache: names only, so that both give the same recipes).  The name is
 * the analyzed procedure's; the symbol tables rule out most callees first,
 * so that a report does not analyze (or load) every callee of every
 * procedure on a call chain only to learn its name. */
static bool call_never_returns(const ls_module *m, uint64_t target)
{
	if (!target)
		return false;
	const char *name = m->next ? ls_extern_name(m, target) : NULL;
	if (!name) {
		if (!may_be_noreturn(m, target))
			return false;
		/* the procedure that starts there (one of its ranges does) */
		const ls_scope *p = ls_lookup_proc(m, target);
		bool starts = false;
		for (size_t i = 0; p && i < p->nranges && !starts; i++)
			starts = p->ranges[i].lo == target;
		if (!starts)
			return false;
		name = p->name;
	}
	return name && ls_noreturn_name(m, name);
}

/* The state after block B's instructions. */
static struct state block_out(const struct flow *f, uint32_t b)
{
	const struct ls_block *blk = &f->cfg->blocks[b];
	struct state s = f->in[b];
	for (uint32_t k = 0; k < blk->ninsns; k++)
		step(&s, &f->cfg->insns[blk->first_insn + k]);
	return s;
}

/* The frame after the prologue: the paper's canonical frame, found as it
 * says - from the entry on, while the frame does not shrink and no branch
 * or call comes. */
static struct state prologue_state(const struct ls_cfg *cfg, const struct state *start)
{
	struct state s = *start;
	size_t i = cfg->nblocks ? cfg->blocks[0].first_insn : 0;
	for (; i < cfg->ninsns; i++) {
		const struct ls_insn *in = &cfg->insns[i];
		if (in->kind != LS_INSN_OTHER)
			break;
		struct state next = s;
		step(&next, in);
		if (!(next.f & S_SP) || next.sp < s.sp)
			break;
		s = next;
	}
	return s;
}

/* What a landing pad gets from the call in BLK (state S after it): the
 * unwinder discards the arguments the caller pushed for it
 * (DW_CFA_GNU_args_size in the CFI, which we do not read); the code pops
 * the same bytes right after the call on the normal path (add $16,%rsp),
 * so take that instruction's effect too. */
static struct state landing_pad_state(const struct ls_cfg *cfg, const struct ls_block *blk, const struct state *s,
                                      int32_t canon_sp)
{
	struct state pad = *s;
	size_t next = blk->first_insn + blk->ninsns;
	if (next >= cfg->ninsns)
		return pad;
	const struct ls_insn *in = &cfg->insns[next], *call = &cfg->insns[next - 1];
	/* Arguments pushed for the call leave SP below the body's frame (the
	 * canonical frame: not so the pushes of the prologue) and are popped
	 * right after it. */
	bool pops_args = in->addr == call->addr + call->len && in->nops == 2 && is_reg(&in->op[1], R_SP) &&
	                 in->opcode == LS_MN_ADD && in->op[0].kind == LS_OP_IMM && in->op[0].imm > 0 &&
	                 (s->f & S_SP) && canon_sp >= 0 && s->sp > canon_sp && s->sp - in->op[0].imm >= canon_sp;
	if (pops_args)
		step(&pad, in);
	return pad;
}

static void propagate(struct flow *f)
{
	const struct ls_cfg *cfg = f->cfg;
	while (f->nwork) {
		uint32_t b = f->work[--f->nwork];
		f->queued[b] = 0;
		const struct ls_block *blk = &cfg->blocks[b];
		struct state s = block_out(f, b);
		const struct ls_insn *last = &cfg->insns[blk->first_insn + blk->ninsns - 1];
		for (uint32_t k = 0; k < blk->nsucc; k++) {
			const struct ls_cfg_edge *e = &cfg->edges[cfg->succ[blk->first_succ + k]];
			bool strong = e->kind != LS_EDGE_CALL_RETURN;
			if (!strong && last->kind == LS_INSN_CALL && call_never_returns(f->m, last->target))
				continue;
			if (e->kind == LS_EDGE_EXCEPTION) {
				struct state pad = landing_pad_state(cfg, blk, &s, f->canon_sp);
				arrive(f, e->to, &pad, true, last->addr);
				continue;
			}
			arrive(f, e->to, &s, strong, last->addr);
		}
	}
}

/* ---- one procedure's recipes --------------------------------------------- */

enum { ROW_FP = 1, ROW_SP = 2, ROW_CHAIN = 4 };

struct row {
	uint64_t lo, hi, rule_addr;
	int32_t cfa_off, bp_off, fp_off, sp_off;
	uint8_t base, bp, rule, flags, cfa_reg;
};

/* Our register numbers (decode_x86.c's) to DWARF's. */
static const uint8_t dwarf_reg[NREGS] = { 0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15 };

struct call {
	uint64_t ret, target;    /* target 0: an indirect call */
};

struct uproc {
	uint64_t entry;
	struct row *rows;        /* by address, not overlapping */
	size_t nrows;
	struct call *calls;      /* by return address */
	size_t ncalls, nicalls;
	uint64_t *targets[2];    /* direct call targets, tail-call targets: sorted, unique */
	size_t ntargets[2], ntails;
	uint32_t frame_size;
	bool keeps_fp, variable;
	size_t unsure;           /* returns reached with an unexpected frame */
	size_t conflicts;
	/* The calls come from the CFG alone; the rows and the frame summary
	 * need the flow of states, several times the cost.  fp-repair asks
	 * only whether a return address follows a call, of thousands of
	 * procedures, so the flow runs when something first needs it. */
	bool flowed;
	int depth;               /* the first request's, which the flow is run at */
};

/* Where the CFA is when neither SP nor BP is a known distance from it: in
 * a slot of a realigned frame (CFA = *(BP + N)), or in a register. */
static void summarize_anchored(const struct state *s, struct row *r)
{
	int exact = -1, any = -1; /* registers holding the CFA itself, or CFA - k */
	for (int k = 0; k < NREGS; k++)
		if (s->copies & (1u << k)) {
			if (exact < 0 && s->copy[k] == 0)
				exact = k;
			if (any < 0)
				any = k;
		}
	bool slot = (s->a & A_CSLOT) && s->cval == 0 && (s->a & (A_FP | A_SP));
	if (slot && ((s->a & A_IN_SLOT) || exact < 0)) {
		r->base = (s->a & A_FP) ? LS_UNWIND_BP_DEREF : LS_UNWIND_SP_DEREF;
		r->cfa_off = (s->a & A_FP) ? s->afp - s->cslot : s->asp - s->cslot;
	} else if (exact >= 0 || any >= 0) {
		int k = exact >= 0 ? exact : any;
		r->base = LS_UNWIND_REG;
		r->cfa_reg = dwarf_reg[k];
		r->cfa_off = s->copy[k];
	}
}

/* The recipe that a state S says. */
static void summarize(const struct state *s, struct row *r)
{
	r->base = LS_UNWIND_UNKNOWN;
	r->cfa_off = 0;
	r->cfa_reg = 0;
	if ((s->f & S_CFA_FP) && (s->f & S_FP)) {
		r->base = LS_UNWIND_BP;
		r->cfa_off = s->fp;
	} else if (s->f & S_SP) {
		r->base = LS_UNWIND_SP;
		r->cfa_off = s->sp;
	} else if (s->f & S_FP) {
		r->base = LS_UNWIND_BP;
		r->cfa_off = s->fp;
	} else {
		summarize_anchored(s, r);
	}
	r->bp_off = 0;
	if (s->f & S_BP_SAVED) {
		r->bp = LS_UNWIND_BP_SAVED;
		r->bp_off = -s->save;
	} else if ((s->a & A_SAVE) && (s->a & A_FP)) {
		r->bp = LS_UNWIND_BP_SAVED_AT_BP;
		r->bp_off = s->afp - s->asave;
	} else {
		r->bp = (s->f & S_BP_CALLER) ? LS_UNWIND_BP_SAME : LS_UNWIND_BP_LOST;
	}
	r->flags = 0;
	if (((s->f & S_CFA_FP) && (s->f & S_FP) && (s->f & S_BP_SAVED) && s->fp == 16 && s->save == 16) ||
	    ((s->a & A_FP) && (s->a & A_SAVE) && s->afp == s->asave))
		r->flags |= ROW_CHAIN;
	r->fp_off = r->sp_off = 0;
	if (s->f & S_FP) {
		r->flags |= ROW_FP;
		r->fp_off = -s->fp;
	}
	if (s->f & S_SP) {
		r->flags |= ROW_SP;
		r->sp_off = -s->sp;
	}
}

static bool same_recipe(const struct row *a, const struct row *b)
{
	return a->base == b->base && a->cfa_off == b->cfa_off && a->bp == b->bp && a->bp_off == b->bp_off &&
	       a->flags == b->flags && a->fp_off == b->fp_off && a->sp_off == b->sp_off && a->cfa_reg == b->cfa_reg;
}

/* A state from a recipe (for a .cold part that starts where its hot part
 * jumped from). */
static struct state state_of_row(const struct row *r)
{
	struct state s = { 0 };
	if (r->flags & ROW_SP) {
		s.f |= S_SP;
		s.sp = -r->sp_off;
	}
	if (r->flags & ROW_FP) {
		s.f |= S_FP;
		s.fp = -r->fp_off;
		if (r->base == LS_UNWIND_BP)
			s.f |= S_CFA_FP;
	}
	if (r->bp == LS_UNWIND_BP_SAVED) {
		s.f |= S_BP_SAVED;
		s.save = -r->bp_off;
	} else if (r->bp == LS_UNWIND_BP_SAME) {
		s.f |= S_BP_CALLER;
	} else {
		s.f |= S_BP_LOST;
	}
	return s;
}

/* Per instruction of a procedure: the state before it, and why. */
struct insn_states {
	struct state *st;
	uint8_t *rule;
	uint64_t *rule_addr;
	uint8_t *done;
};

/* The states of the instructions, from their blocks'. */
static void reached_states(const struct flow *f, struct insn_states *is, uint8_t first_rule)
{
	const struct ls_cfg *cfg = f->cfg;
	for (uint32_t b = 0; b < cfg->nblocks; b++) {
		if (f->have[b] == HAVE_NONE)
			continue; /* (seed_unreached leaves none) */
		const struct ls_block *blk = &cfg->blocks[b];
		struct state s = f->in[b];
		uint8_t rule = b == 0 ? first_rule : f->why[b];
		uint64_t raddr = b == 0 ? 0 : f->why_addr[b];
		for (uint32_t k = 0; k < blk->ninsns; k++) {
			size_t i = blk->first_insn + k;
			is->st[i] = s;
			is->rule[i] = rule;
			is->rule_addr[i] = raddr;
			is->done[i] = 1;
			rule = step(&s, &cfg->insns[i]);
			raddr = cfg->insns[i].addr;
		}
	}
}

/* The state before IN, from the state AFTER it, for what a return repair
 * walks back over; false where the way back is not known. */
static bool step_back(struct state *s, const struct ls_insn *in)
{
	int32_t imm = in->nops >= 1 && in->op[0].kind == LS_OP_IMM ? (int32_t)in->op[0].imm : 0;
	bool to_sp = in->nops == 2 && is_reg(&in->op[1], R_SP);
	if (!(s->f & S_SP))
		return false;
	switch (in->opcode) {
	case LS_MN_PUSH:
		if (in->op[0].size == 2 || (in->nops >= 1 && is_reg(&in->op[0], R_BP)))
			return false;
		s->sp -= 8;
		return true;
	case LS_MN_POP:
		if (in->op[0].size == 2 || (in->nops >= 1 && is_reg(&in->op[0], R_SP)))
			return false;
		s->sp += 8;
		if (in->nops >= 1 && is_reg(&in->op[0], R_BP)) {
			s->f = (uint8_t)((s->f & ~S_BP_CALLER) | S_BP_SAVED);
			s->save = s->sp;
		}
		return true;
	case LS_MN_LEAVE:
		s->fp = s->save = s->sp + 8;
		s->f = S_FP | S_CFA_FP | S_BP_SAVED;
		return true;
	case LS_MN_SUB:
	case LS_MN_ADD:
		if (!to_sp)
			break;
		if (in->op[0].kind != LS_OP_IMM)
			return false;
		s->sp += in->opcode == LS_MN_SUB ? -imm : imm;
		return true;
	default:
		break;
	}
	return !(in->writes & ((1u << R_SP) | (1u << R_BP))) || in->kind == LS_INSN_RET ||
	       in->kind == LS_INSN_CALL || in->kind == LS_INSN_ICALL;
}

/* A return whose frame the forward analysis lost: worked back from the
 * return (CFA = SP + 8 there) over its block, as far as the way back is
 * known, for the instructions whose CFA was unknown. */
static void repair_return(const struct ls_cfg *cfg, struct insn_states *is, size_t ret, size_t first)
{
	struct state s = entry_state;
	for (size_t i = ret + 1; i-- > first;) {
		if (i < ret && !step_back(&s, &cfg->insns[i]))
			break;
		if (cfa_known(&is->st[i]))
			break;
		is->st[i] = s;
		is->rule[i] = LS_UNWIND_RULE_RET_REPAIR;
		is->rule_addr[i] = cfg->insns[ret].addr;
	}
}

/* The rows: runs of contiguous instructions with one recipe. */
static void make_rows(struct uproc *u, const struct ls_cfg *cfg, const struct insn_states *is)
{
	size_t cap = 0;
	for (size_t i = 0; i < cfg->ninsns; i++) {
		const struct ls_insn *in = &cfg->insns[i];
		struct row r;
		summarize(&is->st[i], &r);
		if (is->st[i].f & S_CFA_FP)
			u->keeps_fp = true;
		if ((is->st[i].f & S_SP) && is->st[i].sp > 0 && (uint32_t)is->st[i].sp > u->frame_size)
			u->frame_size = (uint32_t)is->st[i].sp;
		if (is->rule[i] == LS_UNWIND_RULE_VARIABLE || is->rule[i] == LS_UNWIND_RULE_ALIGN)
			u->variable = true;
		struct row *last = u->nrows ? &u->rows[u->nrows - 1] : NULL;
		/* a return repair keeps an interval of its own: it says why */
		bool repair = is->rule[i] == LS_UNWIND_RULE_RET_REPAIR;
		if (last && last->hi == in->addr && same_recipe(last, &r) &&
		    (last->rule == LS_UNWIND_RULE_RET_REPAIR) == repair) {
			last->hi = in->addr + in->len;
			continue;
		}
		r.lo = in->addr;
		r.hi = in->addr + in->len;
		r.rule = is->rule[i];
		r.rule_addr = is->rule_addr[i];
		u->rows = ls_grow(u->rows, &cap, u->nrows + 1, sizeof *u->rows);
		u->rows[u->nrows++] = r;
	}
}

/* Calls (by return address), their targets, and the tail calls: jumps to
 * code outside the procedure. */
static void collect_calls(struct uproc *u, const struct ls_cfg *cfg)
{
	size_t cap = 0, cap_t[2] = { 0, 0 };
	for (size_t i = 0; i < cfg->ninsns; i++) {
		const struct ls_insn *in = &cfg->insns[i];
		int kind = -1;
		if (in->kind == LS_INSN_CALL || in->kind == LS_INSN_ICALL) {
			u->calls = ls_grow(u->calls, &cap, u->ncalls + 1, sizeof *u->calls);
			u->calls[u->ncalls++] = (struct call){ in->addr + in->len,
			                                       in->kind == LS_INSN_CALL ? in->target : 0 };
			u->nicalls += in->kind == LS_INSN_ICALL;
			kind = in->kind == LS_INSN_CALL ? 0 : -1;
		} else if ((in->kind == LS_INSN_JUMP || in->kind == LS_INSN_CJUMP) && in->target &&
		           ls_cfg_block_of(cfg, in->target) < 0) {
			kind = 1;
			u->ntails++;
		}
		if (kind < 0 || !in->target)
			continue;
		u->targets[kind] = ls_grow(u->targets[kind], &cap_t[kind], u->ntargets[kind] + 1, sizeof(uint64_t));
		u->targets[kind][u->ntargets[kind]++] = in->target;
	}
	for (int k = 0; k < 2; k++)
		u->ntargets[k] = ls_sort_unique_u64(u->targets[k], u->ntargets[k]);
}

/* ---- the procedures, from the scope tree --------------------------------- */

struct ls_unwind_cache {
	pthread_mutex_t lock;
	struct ls_decoder *dec;
	bool no_decoder;
	bool labels_read;
	struct label *labels;    /* the kernel's jump labels and alternatives' jumps, by target */
	size_t nlabels, cap_labels;
	struct slot {
		const ls_scope *scope;
		struct uproc *u;
	} *slots;
	size_t nslots, count;
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Whether some direct jump in P's other ranges goes to the start of range K
 * (a .cold part is entered by jumps from its hot part, never the entry). */
static bool range_jumped_into(const ls_module *m, struct ls_decoder *dec, const ls_scope *p, size_t k)
{
	for (size_t r = 0; r < p->nranges; r++) {
		if (r == k)
			continue;
		for (uint64_t a = p->ranges[r].lo; a < p->ranges[r].hi;) {
			const struct ls_text *t = ls_text_find(m, a);
			struct ls_insn in;
			size_t n = t ? ls_decode(dec, t->data + (a - t->addr), t->addr + t->size - a, a, &in) : 0;
			if (!n)
				break;
			if ((in.kind == LS_INSN_JUMP || in.kind == LS_INSN_CJUMP) && in.target == p->ranges[k].lo)
				return true;
			a += n;
		}
	}
	return false;
}

/* P's entry: the analysis's own procedure when the tree was made here,
 * else the symbol its name is (the cache keeps no entries), else the first
 * range that no other range jumps into (the hot part, not its .cold part). */
static uint64_t proc_entry(const ls_module *m, struct ls_decoder *dec, const ls_scope *p)
{
	const struct ls_proc *lp = p->key;
	if (lp && m->procs.nprocs && lp >= m->procs.procs && lp < m->procs.procs + m->procs.nprocs)
		return lp->entry;
	if (p->nranges == 1)
		return p->ranges[0].lo;
	uint64_t a, size;
	const char *names[2] = { p->linkage_name, p->name };
	for (int k = 0; k < 2; k++) {
		if (!names[k] || ls_symindex_find(m, names[k], &a, &size) < 0)
			continue;
		for (size_t i = 0; i < p->nranges; i++)
			if (a >= p->ranges[i].lo && a < p->ranges[i].hi)
				return a;
	}
	for (size_t i = 0; i < p->nranges; i++)
		if (!range_jumped_into(m, dec, p, i))
			return p->ranges[i].lo;
	return p->ranges[0].lo;
}

static bool is_plt(const ls_module *m, const ls_scope *p, uint64_t entry)
{
	const struct ls_text *t = ls_text_find(m, entry);
	return ends_with(p->name, "@plt") || (t && (strncmp(t->name, ".plt", 4) == 0 || strcmp(t->name, ".iplt") == 0));
}

static struct uproc *get_proc(const ls_module *m, struct ls_unwind_cache *c, const ls_scope *p, int depth,
                             bool rows);

/* A procedure of its own that is a .cold part of another (symbols without
 * DWARF: foo.cold, or one found in stripped code): the paper's hot/cold
 * pattern - it jumps back into the interior of another procedure Q.  Its
 * frame is Q's at that place.  Returns whether it found one. */
static bool cold_entry_state(const ls_module *m, struct ls_unwind_cache *c, const ls_scope *p,
                             const struct ls_cfg *cfg, int depth, struct state *out, uint64_t *from)
{
	if (depth > 0 || !(strstr(p->name ? p->name : "", ".cold") || strncmp(p->name ? p->name : "", "sub_", 4) == 0))
		return false;
	for (size_t i = 0; i < cfg->ninsns; i++) {
		const struct ls_insn *in = &cfg->insns[i];
		if ((in->kind != LS_INSN_JUMP && in->kind != LS_INSN_CJUMP) || ls_cfg_block_of(cfg, in->target) >= 0)
			continue;
		const ls_scope *q = ls_lookup_proc(m, in->target);
		if (!q || q == p)
			continue;
		struct uproc *u = get_proc(m, c, q, depth + 1, true);
		if (!u || in->target == u->entry)
			continue; /* a tail call */
		size_t k = LS_FIRST_ABOVE(u->rows, u->nrows, hi, in->target);
		if (k >= u->nrows || u->rows[k].lo > in->target)
			continue;
		*out = state_of_row(&u->rows[k]);
		*from = in->target;
		return true;
	}
	return false;
}

/* A PLT stub, counted straight through: its control flow is all indirect
 * (jmp *GOT; push $N; jmp PLT0). */
static void plt_states(const struct ls_cfg *cfg, struct insn_states *is)
{
	struct state s = entry_state;
	uint8_t rule = LS_UNWIND_RULE_PLT;
	uint64_t raddr = 0;
	for (size_t i = 0; i < cfg->ninsns; i++) {
		is->st[i] = s;
		is->rule[i] = rule;
		is->rule_addr[i] = raddr;
		is->done[i] = 1;
		rule = step(&s, &cfg->insns[i]);
		raddr = cfg->insns[i].addr;
	}
}

/* The state before the instruction at ADDR of a block the flow reached. */
static bool state_at(const struct flow *f, uint64_t addr, struct state *out)
{
	int32_t b = ls_cfg_block_of(f->cfg, addr);
	if (b < 0 || f->have[b] == HAVE_NONE)
		return false;
	const struct ls_block *blk = &f->cfg->blocks[b];
	*out = f->in[b];
	for (uint32_t k = 0; k < blk->ninsns && f->cfg->insns[blk->first_insn + k].addr < addr; k++)
		step(out, &f->cfg->insns[blk->first_insn + k]);
	return true;
}

/* Blocks reached only through a jump label get the state of its site
 * (the nop does not change it).  TARGETS: the blocks some label goes to. */
static bool follow_labels(struct flow *f, const uint32_t *targets, size_t ntargets)
{
	bool any = false;
	for (size_t i = 0; i < ntargets; i++) {
		uint32_t b = targets[i];
		if (f->have[b] != HAVE_NONE)
			continue;
		uint64_t start = f->cfg->blocks[b].start;
		struct state s;
		for (size_t k = LS_FIRST_AT_LEAST(f->labels, f->nlabels, target, start);
		     k < f->nlabels && f->labels[k].target == start; k++)
			if (state_at(f, f->labels[k].site, &s)) {
				arrive(f, b, &s, true, f->labels[k].site);
				any = true;
				break;
			}
	}
	return any;
}

/* The blocks of the CFG that jump labels go to. */
static size_t label_targets(const struct flow *f, uint32_t **out)
{
	size_t n = 0;
	*out = NULL;
	if (!f->nlabels)
		return 0;
	*out = ls_xmalloc(f->cfg->nblocks * sizeof **out);
	for (uint32_t b = 0; b < f->cfg->nblocks; b++) {
		size_t k = LS_FIRST_AT_LEAST(f->labels, f->nlabels, target, f->cfg->blocks[b].start);
		if (k < f->nlabels && f->labels[k].target == f->cfg->blocks[b].start)
			(*out)[n++] = b;
	}
	return n;
}

static int cmp_block_start(const void *a, const void *b, void *cfg)
{
	const struct ls_block *x = &((const struct ls_cfg *)cfg)->blocks[*(const uint32_t *)a];
	const struct ls_block *y = &((const struct ls_cfg *)cfg)->blocks[*(const uint32_t *)b];
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The first block (address order) no path reaches - padding, dead code,
 * the targets of a jump table that could not be read - gets the state of
 * the instruction before it, as CFI goes on from row to row (after a
 * return: the state the return had, which gcc's CFI gives the padding
 * after an epilogue), or the canonical frame; weakly, so that a branch
 * that reaches it later wins.  False when every block has a state. */
static bool seed_unreached(struct flow *f, const uint32_t *order, size_t *cursor, const struct state *canon)
{
	const struct ls_cfg *cfg = f->cfg;
	for (size_t k = *cursor; k < cfg->nblocks; k++, (*cursor)++) {
		uint32_t b = order[k];
		if (f->have[b] != HAVE_NONE)
			continue;
		const struct ls_block *blk = &cfg->blocks[b];
		struct state s = *canon;
		uint64_t from = 0;
		if (blk->first_insn > 0) {
			const struct ls_insn *prev = &cfg->insns[blk->first_insn - 1];
			from = prev->addr;
			if (prev->addr + prev->len == blk->start && state_at(f, prev->addr, &s) &&
			    prev->kind != LS_INSN_RET && prev->kind != LS_INSN_HALT)
				step(&s, prev);
		}
		f->in[b] = s;
		f->have[b] = HAVE_WEAK;
		f->why[b] = LS_UNWIND_RULE_UNREACHED;
		f->why_addr[b] = from;
		enqueue(f, b);
		return true;
	}
	return false;
}

/* The flow from the entry (or from the hot part's jump, for a .cold part),
 * then what no path reaches, then the returns it lost. */
static void flow_states(const ls_module *m, const struct ls_unwind_cache *c, struct uproc *u, const struct ls_cfg *cfg,
                        struct insn_states *is, const struct state *start, uint8_t first_rule)
{
	size_t nb = cfg->nblocks;
	struct flow f = { .m = m, .cfg = cfg, .labels = c->labels, .nlabels = c->nlabels };
	f.in = ls_xmalloc(nb * sizeof *f.in);
	f.have = ls_xcalloc(nb, 1);
	f.why = ls_xcalloc(nb, 1);
	f.why_addr = ls_xcalloc(nb, sizeof *f.why_addr);
	f.work = ls_xmalloc(nb * sizeof *f.work);
	f.queued = ls_xcalloc(nb, 1);
	f.replaced = ls_xcalloc(nb, 1);
	struct state canon = prologue_state(cfg, start);
	f.canon_sp = (canon.f & S_SP) ? canon.sp : -1;
	uint32_t *order = ls_xmalloc(nb * sizeof *order);
	for (uint32_t b = 0; b < nb; b++)
		order[b] = b;
	qsort_r(order, nb, sizeof *order, cmp_block_start, (void *)cfg);
	f.in[0] = *start;
	f.have[0] = HAVE_STRONG;
	enqueue(&f, 0);
	uint32_t *targets;
	size_t ntargets = label_targets(&f, &targets), cursor = 0;
	do {
		do
			propagate(&f);
		while (follow_labels(&f, targets, ntargets));
	} while (seed_unreached(&f, order, &cursor, &canon));
	free(targets);
	free(order);
	reached_states(&f, is, first_rule);
	for (uint32_t b = 0; b < nb; b++) {
		const struct ls_block *blk = &cfg->blocks[b];
		size_t last = blk->first_insn + blk->ninsns - 1;
		if (f.have[b] == HAVE_NONE || cfg->insns[last].kind != LS_INSN_RET)
			continue;
		const struct state *s = &is->st[last];
		if (!cfa_known(s))
			repair_return(cfg, is, last, blk->first_insn);
		else if (!(s->f & S_SP) || s->sp != 8 || !(s->f & S_BP_CALLER))
			u->unsure++;
	}
	u->conflicts = f.conflicts;
	free(f.in);
	free(f.have);
	free(f.why);
	free(f.why_addr);
	free(f.work);
	free(f.queued);
	free(f.replaced);
}

/* The flow of states over CFG for P: U's rows and frame summary. */
static void flow(const ls_module *m, struct ls_unwind_cache *c, const ls_scope *p, struct uproc *u,
                 const struct ls_cfg *cfg)
{
	size_t n = cfg->ninsns;
	struct insn_states is = {
		ls_xmalloc(n * sizeof *is.st), ls_xcalloc(n, 1), ls_xcalloc(n, sizeof *is.rule_addr), ls_xcalloc(n, 1)
	};
	if (is_plt(m, p, u->entry)) {
		plt_states(cfg, &is);
	} else {
		struct state start = entry_state;
		uint64_t from = 0;
		bool cold = cold_entry_state(m, c, p, cfg, u->depth, &start, &from);
		flow_states(m, c, u, cfg, &is, &start, cold ? LS_UNWIND_RULE_COLD : LS_UNWIND_RULE_ENTRY);
		if (cold)
			is.rule_addr[cfg->blocks[0].first_insn] = from;
	}
	make_rows(u, cfg, &is);
	free(is.st);
	free(is.rule);
	free(is.rule_addr);
	free(is.done);
	u->flowed = true;
}

/* P's CFG, as the analysis of it here always builds it: false if nothing
 * decodes (no recipes then). */
static bool proc_cfg(const ls_module *m, struct ls_unwind_cache *c, const ls_scope *p, uint64_t entry,
                     struct ls_cfg *cfg)
{
	struct ls_proc proc = { .name = p->name, .linkage_name = p->linkage_name, .ranges = p->ranges,
	                        .nranges = p->nranges, .entry = entry };
	struct ls_cfg_env env = { .m = m, .dec = c->dec };
	return p->nranges && ls_cfg_build_alone(&env, &proc, cfg) == 0;
}

/* P's calls, and with ROWS its recipes and summary too. */
static struct uproc *analyze(const ls_module *m, struct ls_unwind_cache *c, const ls_scope *p, int depth,
                             bool rows)
{
	struct uproc *u = ls_xcalloc(1, sizeof *u);
	u->entry = proc_entry(m, c->dec, p);
	u->depth = depth;
	struct ls_cfg cfg;
	if (!proc_cfg(m, c, p, u->entry, &cfg)) {
		u->flowed = true;
		return u; /* nothing decodes: no recipes */
	}
	if (rows)
		flow(m, c, p, u, &cfg);
	collect_calls(u, &cfg);
	ls_cfg_free(&cfg);
	return u;
}

/* U's recipes and summary, when only its calls were made. */
static void add_rows(const ls_module *m, struct ls_unwind_cache *c, const ls_scope *p, struct uproc *u)
{
	struct ls_cfg cfg;
	if (!proc_cfg(m, c, p, u->entry, &cfg)) {
		u->flowed = true;
		return;
	}
	flow(m, c, p, u, &cfg);
	ls_cfg_free(&cfg);
}

/* ---- the module's recipes: computed once per procedure ------------------- */

static struct ls_unwind_cache *unwind_cache(const ls_module *cm)
{
	ls_module *m = (ls_module *)cm; /* logically const: a memo */
	struct ls_unwind_cache *c = __atomic_load_n(&m->unwind, __ATOMIC_ACQUIRE);
	if (c)
		return c;
	struct ls_unwind_cache *fresh = calloc(1, sizeof *fresh);
	if (!fresh)
		return NULL;
	pthread_mutex_init(&fresh->lock, NULL);
	struct ls_unwind_cache *expected = NULL;
	if (__atomic_compare_exchange_n(&m->unwind, &expected, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return fresh;
	pthread_mutex_destroy(&fresh->lock);
	free(fresh);
	return expected;
}

static void free_proc(struct uproc *u)
{
	if (!u)
		return;
	free(u->rows);
	free(u->calls);
	free(u->targets[0]);
	free(u->targets[1]);
	free(u);
}

void ls_unwind_free(ls_module *m)
{
	struct ls_unwind_cache *c = m->unwind;
	if (!c)
		return;
	for (size_t i = 0; i < c->nslots; i++)
		free_proc(c->slots[i].u);
	free(c->slots);
	free(c->labels);
	if (c->dec)
		ls_decoder_free(c->dec);
	pthread_mutex_destroy(&c->lock);
	free(c);
	m->unwind = NULL;
}

static size_t slot_of(const struct ls_unwind_cache *c, const ls_scope *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
	size_t i = (size_t)(h >> 20) & (c->nslots - 1);
	while (c->slots[i].scope && c->slots[i].scope != p)
		i = (i + 1) & (c->nslots - 1);
	return i;
}

static void grow_slots(struct ls_unwind_cache *c)
{
	size_t old = c->nslots;
	struct slot *prev = c->slots;
	c->nslots = old ? old * 2 : 64;
	c->slots = ls_xcalloc(c->nslots, sizeof *c->slots);
	for (size_t i = 0; i < old; i++)
		if (prev[i].scope)
			c->slots[slot_of(c, prev[i].scope)] = prev[i];
	free(prev);
}

static int cmp_label(const void *a, const void *b)
{
	const struct label *x = a, *y = b;
	return x->target < y->target ? -1 : x->target > y->target;
}

/* The bytes of the linked image at [LO, HI), or NULL. */
static const uint8_t *image_bytes(const ls_module *m, uint64_t lo, uint64_t hi)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_ALLOC) ||
		    lo < sh.sh_addr || hi > sh.sh_addr + sh.sh_size || hi < lo)
			continue;
		Elf_Data *d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return NULL;
		return (const uint8_t *)d->d_buf + (lo - sh.sh_addr);
	}
	return NULL;
}

/* The kernel's alternatives (.altinstructions: {s32 instr, s32 repl, u16
 * cpuid, u8 instrlen, u8 replacementlen}, the offsets relative to their
 * own fields): a replacement's direct jumps (static_cpu_has' "jmp t_yes")
 * go, once patched in, from the original site.  Caller holds the lock. */
static void load_alternatives(const ls_module *m, struct ls_unwind_cache *c)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(m->elf, &shstrndx) < 0)
		return;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(name = elf_strptr(m->elf, shstrndx, sh.sh_name)) || strcmp(name, ".altinstructions") != 0)
			continue;
		const uint8_t *d = image_bytes(m, sh.sh_addr, sh.sh_addr + sh.sh_size);
		for (uint64_t off = 0; d && off + 12 <= sh.sh_size; off += 12) {
			int32_t instr, repl;
			memcpy(&instr, d + off, 4);
			memcpy(&repl, d + off + 4, 4);
			uint64_t site = sh.sh_addr + off + (int64_t)instr, at = sh.sh_addr + off + 4 + (int64_t)repl;
			uint64_t end = at + d[off + 11];
			for (const struct ls_text *t; at < end && (t = ls_text_find(m, at));) {
				struct ls_insn in;
				size_t n = ls_decode(c->dec, t->data + (at - t->addr), end - at, at, &in);
				if (!n)
					break;
				if ((in.kind == LS_INSN_JUMP || in.kind == LS_INSN_CJUMP) && in.target) {
					c->labels = ls_grow(c->labels, &c->cap_labels, c->nlabels + 1, sizeof *c->labels);
					c->labels[c->nlabels++] = (struct label){ in.target, site };
				}
				at += n;
			}
		}
		return;
	}
}

/* Entries of STRIDE bytes between the symbols START and STOP whose first
 * two s32 fields are offsets from themselves: (site, target) pairs added
 * to c->labels. */
static void load_relative_pairs(const ls_module *m, struct ls_unwind_cache *c, const char *start, const char *stop,
                                size_t stride)
{
	uint64_t lo, hi, size;
	if (ls_symindex_find(m, start, &lo, &size) < 0 || ls_symindex_find(m, stop, &hi, &size) < 0 || hi <= lo ||
	    (hi - lo) % stride)
		return;
	const uint8_t *d = image_bytes(m, lo, hi);
	if (!d)
		return;
	size_t n = (hi - lo) / stride;
	c->labels = ls_grow(c->labels, &c->cap_labels, c->nlabels + n, sizeof *c->labels);
	for (size_t i = 0; i < n; i++) {
		int32_t site, target;
		memcpy(&site, d + stride * i, 4);
		memcpy(&target, d + stride * i + 4, 4);
		uint64_t at = lo + stride * i;
		c->labels[c->nlabels++] = (struct label){ at + 4 + (int64_t)target, at + (int64_t)site };
	}
}

/* The kernel's edges that its code does not show: jump labels
 * (__jump_table: {s32 code, s32 target, long key}, in .data), the fixups
 * of instructions that may fault (__ex_table: {s32 insn, s32 fixup, s32
 * data}), and the alternatives' jumps.  Only in a linked image (a .ko's
 * would need its relocations).  Caller holds the lock. */
static void load_labels(const ls_module *m, struct ls_unwind_cache *c)
{
	c->labels_read = true;
	if (!m->kernel || m->relocatable || !m->elf)
		return;
	load_relative_pairs(m, c, "__start___jump_table", "__stop___jump_table", 16);
	load_relative_pairs(m, c, "__start___ex_table", "__stop___ex_table", 12);
	load_alternatives(m, c);
	qsort(c->labels, c->nlabels, sizeof *c->labels, cmp_label);
}

/* P's calls (with ROWS, its recipes too), computed now if they were not
 * yet.  Caller holds c->lock. */
static struct uproc *get_proc(const ls_module *m, struct ls_unwind_cache *c, const ls_scope *p, int depth,
                             bool rows)
{
	if ((c->count + 1) * 2 > c->nslots)
		grow_slots(c);
	size_t i = slot_of(c, p);
	if (c->slots[i].scope) {
		struct uproc *u = c->slots[i].u;
		if (rows && !u->flowed)
			add_rows(m, c, p, u);
		return u;
	}
	struct uproc *u = analyze(m, c, p, depth, rows);
	if ((c->count + 1) * 2 > c->nslots) /* a .cold part's hot part came first */
		grow_slots(c);
	i = slot_of(c, p);
	if (!c->slots[i].scope) {
		c->slots[i] = (struct slot){ p, u };
		c->count++;
	} else {
		free_proc(u);
		u = c->slots[i].u;
		if (rows && !u->flowed)
			add_rows(m, c, p, u);
	}
	return u;
}

/* P's recipes under C's lock; running out of memory unlocks first. */
static const struct uproc *locked_get(const ls_module *m, struct ls_unwind_cache *const c, const ls_scope *p,
                                      bool rows, ls_error *err)
{
	struct ls_oom_guard g;
	pthread_mutex_lock(&c->lock);
	ls_oom_push(&g);
	if (setjmp(g.env)) {
		pthread_mutex_unlock(&c->lock);
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", m->path);
		return NULL;
	}
	if (!c->dec && !c->no_decoder) {
		c->dec = ls_decoder_new(m->ehdr.e_machine);
		c->no_decoder = !c->dec;
	}
	if (!c->labels_read)
		load_labels(m, c);
	const struct uproc *u = c->dec ? get_proc(m, c, p, 0, rows) : NULL;
	ls_oom_pop(&g);
	pthread_mutex_unlock(&c->lock);
	return u;
}

/* The calls of the procedure holding ADDR, with ROWS its recipes too
 * (NULL: none, ERR says why).  The lock guards the memo; running out of
 * memory inside unlocks first. */
static const struct uproc *proc_at(const ls_module *m, uint64_t addr, bool rows, ls_error *err)
{
	if (!m) {
		ls_set_error(err, LS_ERR_USAGE, "no module");
		return NULL;
	}
	if (m->ehdr.e_machine != EM_X86_64) {
		ls_set_error(err, LS_ERR_UNSUPPORTED, "%s: unwind recipes are for x86-64 code only", m->path);
		return NULL;
	}
	const ls_scope *p = ls_lookup_proc(m, addr);
	if (!p) {
		ls_set_error(err, LS_ERR_NOT_FOUND, "%s: no procedure at 0x%llx", m->path, (unsigned long long)addr);
		return NULL;
	}
	if (err)
		err->code = LS_OK;
	struct ls_unwind_cache *c = unwind_cache(m);
	if (!c) {
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", m->path);
		return NULL;
	}
	const struct uproc *u = locked_get(m, c, p, rows, err);
	if (!u && err && err->code == LS_OK)
		ls_set_error(err, LS_ERR_UNSUPPORTED, "%s: no decoder for its machine", m->path);
	return u;
}

/* ---- the interface --------------------------------------------------------- */

const char *ls_unwind_rule_name(ls_unwind_rule r)
{
	static const char *const names[] = {
		"entry", "push", "pop", "sp-adjust", "frame-setup", "frame-teardown", "bp-save", "bp-restore",
		"align", "variable", "sp-copy", "branch", "cold", "plt", "ret-repair", "unreached", "unknown",
	};
	return (unsigned)r < sizeof names / sizeof *names ? names[r] : "?";
}

static void to_recipe(const struct uproc *u, const struct row *r, ls_unwind_recipe *out)
{
	*out = (ls_unwind_recipe){
		.lo = r->lo, .hi = r->hi, .proc = u->entry,
		.cfa_base = (ls_unwind_base)r->base, .cfa_offset = r->cfa_off, .cfa_reg = r->cfa_reg,
		.ra_offset = r->base == LS_UNWIND_UNKNOWN ? 0 : -8,
		.fp_chain = (r->flags & ROW_CHAIN) != 0,
		.bp = (ls_unwind_bp)r->bp, .bp_offset = r->bp_off,
		.frame_pointer = (r->flags & ROW_FP) != 0, .fp_offset = r->fp_off,
		.sp_known = (r->flags & ROW_SP) != 0, .sp_offset = r->sp_off,
		.rule = (ls_unwind_rule)r->rule, .rule_addr = r->rule_addr,
	};
}

int ls_unwind_recipe_at(const ls_module *m, uint64_t addr, ls_unwind_recipe *out, ls_error *err)
{
	const struct uproc *u = proc_at(m, addr, true, err);
	if (!u)
		return -1;
	size_t k = LS_FIRST_ABOVE(u->rows, u->nrows, hi, addr);
	if (k >= u->nrows || u->rows[k].lo > addr) {
		ls_set_error(err, LS_ERR_NOT_FOUND, "%s: no instruction decodes at 0x%llx", m->path,
		             (unsigned long long)addr);
		return -1;
	}
	to_recipe(u, &u->rows[k], out);
	return 0;
}

size_t ls_unwind_recipes(const ls_module *m, uint64_t addr, ls_unwind_recipe *out, size_t cap)
{
	const struct uproc *u = proc_at(m, addr, true, NULL);
	if (!u)
		return 0;
	for (size_t i = 0; i < u->nrows && i < cap; i++)
		to_recipe(u, &u->rows[i], &out[i]);
	return u->nrows;
}

int ls_unwind_proc(const ls_module *m, uint64_t addr, ls_unwind_proc_info *out, ls_error *err)
{
	const struct uproc *u = proc_at(m, addr, true, err);
	if (!u)
		return -1;
	*out = (ls_unwind_proc_info){
		.entry = u->entry, .frame_size = u->frame_size, .keeps_frame_pointer = u->keeps_fp,
		.variable_frame = u->variable, .ncalls = u->ncalls, .nindirect_calls = u->nicalls,
		.ntail_calls = u->ntails, .nrecipes = u->nrows, .unsure = u->unsure,
	};
	return 0;
}

size_t ls_unwind_proc_targets(const ls_module *m, uint64_t addr, int kind, uint64_t *out, size_t cap)
{
	const struct uproc *u = kind == 0 || kind == 1 ? proc_at(m, addr, false, NULL) : NULL;
	if (!u)
		return 0;
	for (size_t i = 0; i < u->ntargets[kind] && i < cap; i++)
		out[i] = u->targets[kind][i];
	return u->ntargets[kind];
}

ls_call_kind ls_unwind_call_before(const ls_module *m, uint64_t ra, uint64_t *target)
{
	const struct uproc *u = ra ? proc_at(m, ra - 1, false, NULL) : NULL;
	if (!u)
		return LS_CALL_NONE;
	size_t k = LS_FIRST_AT_LEAST(u->calls, u->ncalls, ret, ra);
	if (k >= u->ncalls || u->calls[k].ret != ra)
		return LS_CALL_NONE;
	if (target)
		*target = u->calls[k].target;
	return u->calls[k].target ? LS_CALL_DIRECT : LS_CALL_INDIRECT;
}
