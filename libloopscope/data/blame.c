/* blame.c - the blame stage: which program variables each instruction of
 * a procedure is blamed on, after Rutar's variable blame (seed 004,
 * chapter 3), on machine code instead of LLVM IR (loopscope.h's
 * ls_blame_*; the contract is design.md's "Blame").  Computed on demand,
 * one procedure at a time, never cached.
 *
 * Locations.  The data flow runs over the general registers, the flags,
 * the vector registers and memory cells: frame slots (SP- or BP-relative,
 * turned into CFA offsets by the unwind recipes, so a push or a call that
 * moves SP does not rename them) and static addresses, a cell per
 * starting address (two ints side by side are two cells; a wider access
 * over both is a third, not matched with them).
 * Memory reached through any other pointer is not a location: a value
 * stored there and loaded back is not followed (the seed's down pointers;
 * see below for what a store through a pointer blames).
 *
 * Explicit blame (the seed's data flow).  An instruction is blamed on V
 *   - "store": it stores to memory the accesses stage (accesses.c) names V
 *     in (a frame slot, a static, or through the pointer V: the seed's
 *     doStore blames the pointer variable x of `x[1] = z`);
 *   - "register": it writes a register DWARF's location (list) names V in
 *     at the next instruction;
 *   - "return": it is a `ret` of a procedure with a return type: blamed on
 *     the exit variable <return>, with what flows into %rax/%xmm0;
 *   - "flow": a value it writes reaches an instruction blamed on V (a use
 *     of the value, reaching definitions over the CFG): the backward slice
 *     of V's writes, through registers, frame slots and statics, so a load
 *     of z that feeds a store to x carries z's latest writes to x too, as
 *     the seed's Temp Blame Set does.
 * The slice is computed as a backward may-analysis, the dual of reaching
 * definitions: after an instruction, each location holds the set of
 * variables its current value will flow into ("future blame").  Walking an
 * instruction backward: its blame is its seeds plus the future blame of
 * every location it writes; then each location it writes in full is
 * killed (registers are not SSA: a redefinition ends the old value's life,
 * so what the old value flowed into before is not charged to the new
 * one's producers, the seed's kill of the Temp Blame Set on a rewrite);
 * then every location it reads gets its blame.  A partial write (%al, %ax,
 * a conditional move, a read-modify-write) reads the location too and does
 * not kill.  A 32-bit write zero-extends: a full write.  At a block's end,
 * the future blame is the union over its successors; iterated to the
 * fixed point.  Exactly the def-use chains of reaching definitions,
 * without materializing them.
 *
 * Implicit blame (the seed's genImplicitCond and genImplicitLoops, by
 * control dependence).  Post-dominators on the CFG (a virtual exit after
 * every block without successors) give each conditional branch the blocks
 * it controls (Ferrante et al.: on each edge A->B, B and its
 * post-dominators up to A's immediate post-dominator), transitively (a
 * block inside a nested if is controlled by the outer condition too).  The
 * variables written ("store" and "register" seeds) in the controlled
 * blocks blame the branch, and the same backward slice carries that
 * blame to the instructions computing the condition: the compare, the
 * loads and arithmetic feeding it, as the seed's Table 3.3 charges
 * statements 2:6 to x.  A loop's exit branch controls the loop's blocks,
 * so a loop's test is blamed on what the loop writes, as genImplicitLoops
 * does.  Implicit blame is kept apart from explicit blame.
 *
 * Interprocedural blame (exit variables, the seed's transfer functions).
 * Pointer parameters (what is stored through them outlives the call) and
 * the return value are exit variables, flagged in ls_blame_var.  The
 * caller resolves them post mortem along a sample's call chain
 * (perf-plugin/data-keys.c): a pointer parameter to the caller's variable
 * the argument register came from (ls_blame_arg_sources), the return value
 * to the caller's blame of the call instruction, which writes %rax.  A
 * call's blame flows back into its argument registers, the seed's transfer
 * function for a return value computed from the arguments.
 *
 * Several variables may be blamed for one instruction: a sample counts for
 * each, and the shares of the variables add up to more than 100%.
 */
#include "analyze.h"
#include "data/accesses.h"
#include "data/location.h"
#include "data/types.h"
#include "cfg/cfg.h"
#include "cfg/decode.h"
#include "elf/module.h"

#include <dwarf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	LOC_FLAGS = 16,      /* after the 16 general registers */
	LOC_VEC = 17,        /* the decoder's vector registers 32..63 */
	LOC_NVEC = 32,
	LOC_MEM = LOC_VEC + LOC_NVEC, /* memory cells from here */
	MAX_LOCS = 1024,     /* cells beyond are not tracked */
	MAX_FLOW_WORDS = 32u << 20, /* 256 MiB of per-block sets: a larger procedure is refused */
	MAX_CD_PAIRS = 4u << 20,    /* control dependences kept (beyond: not followed) */
	MAX_VARS = 4096,
	MAX_OPS = 16,        /* locations one instruction reads or writes (a call: 6 + 8 arguments) */
};

struct var_rec {
	char *name;
	int exit;            /* LS_BLAME_LOCAL, LS_BLAME_EXIT_PARAM, LS_BLAME_EXIT_RETURN */
	int param;           /* EXIT_PARAM: the argument's position */
};

/* One instruction's data flow facts. */
struct insn_facts {
	uint64_t addr;
	uint8_t kind, len;
	uint64_t target;
	uint32_t block;
	uint16_t nuse, ndef;
	uint32_t use[MAX_OPS]; /* locations read */
	uint32_t def[MAX_OPS]; /* locations written (a call: %rax, %xmm0, the flags, 9 clobbers) */
	uint8_t kill[MAX_OPS]; /* def[i] is written in full */
	int copy_from;       /* mov %r,%d: the register copied, else -1 */
	int load_var;        /* a load's accessed variable (var index), else -1 */
	int store_base;      /* a store through a pointer: its base register, else -1 */
	int cell;            /* the memory cell its memory operand is (a lea's too), else -1 */
	int nseed;
	struct { uint32_t var; uint8_t rule; } seed[8];
	int nnames;          /* the variables DWARF places in registers here (before it runs) */
	struct { uint32_t loc, var; } name[8];
};

struct ls_blame {
	uint64_t proc;
	struct var_rec *vars;
	size_t nvars, cap_vars;
	struct insn_facts *in;
	size_t nin;
	size_t words;        /* bitset words per set */
	uint64_t *exp, *imp, *direct; /* per instruction, WORDS each */
	uint8_t *rule_of;    /* per (instruction, variable) explicit seed rule: filled lazily in entries */
	ls_blame_entry *entries; /* all, grouped by instruction */
	size_t nentries;
	uint32_t *first_entry;   /* per instruction, nin + 1 */
	uint64_t mem_keys[MAX_LOCS];
	uint32_t nmem;
	int ret_loc;         /* where a ret returns the value: %rax, %xmm0, -1 (void) */
	int32_t cell_var[MAX_LOCS]; /* per memory cell: a variable an access there names, + 1 */
};

/* ---- variables ------------------------------------------------------------------------ */

static uint32_t var_id(struct ls_blame *b, const char *name, int exit, int param)
{
	for (size_t i = 0; i < b->nvars; i++)
		if (b->vars[i].exit == exit && !strcmp(b->vars[i].name, name))
			return (uint32_t)i;
	if (b->nvars >= MAX_VARS)
		return UINT32_MAX;
	b->vars = ls_grow(b->vars, &b->cap_vars, b->nvars + 1, sizeof *b->vars);
	b->vars[b->nvars] = (struct var_rec){ ls_xstrdup(name), exit, param };
	return (uint32_t)b->nvars++;
}

/* A DWARF variable or parameter with its scope, for "which variable is in
 * register R at PC". */
struct dvar {
	Dwarf_Die die, scope;
	bool pointer_param;  /* a pointer parameter of the procedure itself: an exit variable */
	int param;
};

struct dvars {
	struct dvar *v;
	size_t n, cap;
	int nparams;
};

static bool is_pointer_type(Dwarf_Die *var)
{
	Dwarf_Attribute a;
	Dwarf_Die t;
	if (!dwarf_attr_integrate(var, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
		return false;
	for (int i = 0; i < 8; i++) {
		int tag = dwarf_tag(&t);
		if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type)
			return true;
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
		    tag != DW_TAG_restrict_type)
			return false;
		if (!dwarf_attr_integrate(&t, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
			return false;
	}
	return false;
}

static void collect_dvars(struct dvars *d, Dwarf_Die *scope, int depth)
{
	Dwarf_Die c;
	if (depth > 32 || dwarf_child(scope, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);
		if (tag == DW_TAG_variable || tag == DW_TAG_formal_parameter) {
			d->v = ls_grow(d->v, &d->cap, d->n + 1, sizeof *d->v);
			struct dvar *x = &d->v[d->n++];
			*x = (struct dvar){ c, *scope, false, -1 };
			if (tag == DW_TAG_formal_parameter && depth == 0) {
				x->param = d->nparams++;
				x->pointer_param = is_pointer_type(&c);
			}
		} else if (tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) {
			collect_dvars(d, &c, depth + 1);
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

static bool find_sub(Dwarf_Die *die, uint64_t pc, Dwarf_Die *out, int depth)
{
	Dwarf_Die c;
	if (depth > 16 || dwarf_child(die, &c) != 0)
		return false;
	do {
		int tag = dwarf_tag(&c);
		if (tag == DW_TAG_subprogram && dwarf_haspc(&c, pc) == 1) {
			*out = c;
			return true;
		}
		if ((tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type) &&
		    find_sub(&c, pc, out, depth + 1))
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

static bool subprogram_at(const ls_module *m, uint64_t entry, Dwarf_Die *out)
{
	Dwarf_Die cu;
	if (!m->dwarf)
		return false;
	if (dwarf_addrdie(m->dwarf, entry, &cu) && find_sub(&cu, entry, out, 0))
		return true;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(m->dwarf, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(m->dwarf, off + hsize, &cu) && dwarf_haspc(&cu, entry) == 1 && find_sub(&cu, entry, out, 0))
			return true;
		off = next;
	}
	return false;
}

/* The location of DWARF register DWREG, or -1. */
static int loc_of_dwarf(int dwreg)
{
	static const int map[8] = { 0, 2, 1, 3, 6, 7, 5, 4 };
	if (dwreg >= 0 && dwreg < 8)
		return map[dwreg];
	if (dwreg < 16)
		return dwreg;
	if (dwreg >= 17 && dwreg < 33)
		return LOC_VEC + (dwreg - 17);
	return -1;
}

static void add_name(struct insn_facts *f, int dwreg, uint32_t v)
{
	int l = loc_of_dwarf(dwreg);
	if (l < 0 || l == 4 || v == UINT32_MAX || f->nnames >= 8)
		return;
	f->name[f->nnames].loc = (uint32_t)l;
	f->name[f->nnames++].var = v;
}

/* The pieces of composite location LOC that are registers: "se.sX" in
 * %rbp, "se.sY" in %rbx (gcc and clang split a struct of pointers so). */
static void piece_names(struct ls_blame *b, struct dvar *x, const char *name, const struct ls_loc *loc,
                        struct insn_facts *f)
{
	struct ls_loc_piece pieces[16];
	size_t n = ls_loc_pieces(loc->ops, loc->nops, pieces, 16);
	Dwarf_Attribute a;
	Dwarf_Die t;
	bool typed = dwarf_attr_integrate(&x->die, DW_AT_type, &a) && dwarf_formref_die(&a, &t);
	for (size_t i = 0; i < n && i < 16; i++) {
		if (pieces[i].loc.kind != LS_LOC_REG)
			continue;
		struct ls_field fp = { .path = "" };
		if (typed)
			ls_type_field_path(&t, pieces[i].obj_off, (unsigned)pieces[i].size, true, &fp);
		char full[LS_FIELD_PATH_MAX + 128];
		snprintf(full, sizeof full, "%s%s%s", name, fp.path[0] && fp.path[0] != '[' ? "." : "", fp.path);
		add_name(f, pieces[i].loc.reg, var_id(b, full, LS_BLAME_LOCAL, -1));
	}
}

/* The variables of D whose value (or a piece of it) DWARF places in a
 * register at F's address (before it runs): F->name. */
static void names_at(struct ls_blame *b, struct dvars *d, struct insn_facts *f)
{
	for (size_t i = 0; i < d->n && f->nnames < 8; i++) {
		Dwarf_Attribute a;
		struct ls_loc loc;
		if (!dwarf_attr(&d->v[i].die, DW_AT_location, &a) || !ls_loc_at(&a, f->addr, &loc) ||
		    (loc.kind != LS_LOC_REG && loc.kind != LS_LOC_OTHER))
			continue;
		/* a single expression holds over the scope only */
		if (dwarf_whatform(&a) != DW_FORM_sec_offset && dwarf_whatform(&a) != DW_FORM_loclistx &&
		    dwarf_tag(&d->v[i].scope) != DW_TAG_subprogram && dwarf_haspc(&d->v[i].scope, f->addr) != 1)
			continue;
		const char *name = dwarf_diename(&d->v[i].die);
		if (!name)
			continue;
		if (loc.kind == LS_LOC_OTHER) {
			piece_names(b, &d->v[i], name, &loc, f);
			continue;
		}
		bool exit = d->v[i].pointer_param;
		add_name(f, loc.reg, var_id(b, name, exit ? LS_BLAME_EXIT_PARAM : LS_BLAME_LOCAL, exit ? d->v[i].param : -1));
	}
}

/* ---- locations ------------------------------------------------------------------------ */

static int loc_of_reg(int r)
{
	if (r >= 0 && r < 16)
		return r;
	if (r >= 32 && r < 32 + LOC_NVEC)
		return LOC_VEC + (r - 32);
	return -1;
}

static int mem_cell(struct ls_blame *b, uint64_t key)
{
	for (uint32_t i = 0; i < b->nmem; i++)
		if (b->mem_keys[i] == key)
			return (int)(LOC_MEM + i);
	if (b->nmem >= MAX_LOCS - LOC_MEM)
		return -1;
	b->mem_keys[b->nmem] = key;
	return (int)(LOC_MEM + b->nmem++);
}

/* The memory cell operand OP of the instruction at PC is, or -1: a frame
 * slot (CFA-relative) or a static address; anything else is not tracked. */
static int mem_loc_of(struct ls_blame *b, const ls_module *m, uint64_t pc, const struct ls_operand *op);

static int mem_loc(struct ls_blame *b, const ls_module *m, struct insn_facts *f, const struct ls_operand *op)
{
	int cell = mem_loc_of(b, m, f->addr, op);
	if (cell >= 0)
		f->cell = cell;
	return cell;
}

static int mem_loc_of(struct ls_blame *b, const ls_module *m, uint64_t pc, const struct ls_operand *op)
{
	if (op->seg || op->index >= 0)
		return -1;
	if (op->base == LS_REG_RIP || op->base < 0)
		return mem_cell(b, (uint64_t)op->disp << 1 | 1); /* odd: a static */
	if (op->base != 4 && op->base != 5)
		return -1;
	ls_unwind_recipe r;
	ls_error err;
	if (ls_unwind_recipe_at(m, pc, &r, &err) != 0)
		return -1;
	int64_t cfa;
	if (op->base == 4 && r.sp_known)
		cfa = r.sp_offset + op->disp;
	else if (op->base == 5 && r.frame_pointer)
		cfa = r.fp_offset + op->disp;
	else
		return -1;
	return mem_cell(b, (uint64_t)cfa << 1); /* even: a frame slot */
}

/* ---- what an instruction reads and writes --------------------------------------------- */

static bool starts(const char *m, const char *p) { return strncmp(m, p, strlen(p)) == 0; }

static void add_use(struct insn_facts *f, int loc)
{
	if (loc < 0 || loc == 4 || f->nuse >= MAX_OPS) /* %rsp: the frame, not data */
		return;
	for (int i = 0; i < f->nuse; i++)
		if (f->use[i] == (uint32_t)loc)
			return;
	f->use[f->nuse++] = (uint32_t)loc;
}

static void add_def(struct insn_facts *f, int loc, bool kill)
{
	if (loc < 0 || loc == 4 || f->ndef >= MAX_OPS)
		return;
	for (int i = 0; i < f->ndef; i++)
		if (f->def[i] == (uint32_t)loc) {
			f->kill[i] &= kill;
			return;
		}
	f->kill[f->ndef] = kill;
	f->def[f->ndef++] = (uint32_t)loc;
}

/* The registers an address reads. */
static void address_uses(struct insn_facts *f, const struct ls_operand *op)
{
	if (op->base >= 0 && op->base < 16)
		add_use(f, op->base);
	if (op->index >= 0 && op->index < 16)
		add_use(f, op->index);
}

/* Operand OP read as a value. */
static void value_use(struct ls_blame *b, const ls_module *m, struct insn_facts *f, const struct ls_operand *op)
{
	if (op->kind == LS_OP_REG)
		add_use(f, loc_of_reg(op->reg));
	else if (op->kind == LS_OP_MEM) {
		int loc = mem_loc(b, m, f, op);
		if (loc < 0) /* a frame slot's base is the frame, not data */
			address_uses(f, op);
		add_use(f, loc);
	}
}

/* Operand OP written; PARTIAL: the old value survives in part. */
static void value_def(struct ls_blame *b, const ls_module *m, struct insn_facts *f, const struct ls_operand *op,
                      bool partial)
{
	if (op->kind == LS_OP_REG) {
		int loc = loc_of_reg(op->reg);
		bool part = partial || (loc < 16 && op->size && op->size < 4);
		if (part)
			add_use(f, loc);
		add_def(f, loc, !part);
	} else if (op->kind == LS_OP_MEM) {
		int loc = mem_loc(b, m, f, op);
		if (loc < 0)
			address_uses(f, op);
		/* through a pointer: not a frame slot (%rbp as the frame pointer) */
		if (loc < 0 && op->base >= 0 && op->base < 16 && op->base != 4 && !op->seg)
			f->store_base = op->base;
		if (partial)
			add_use(f, loc);
		add_def(f, loc, !partial);
	}
}

static const int arg_regs[6] = { 7, 6, 2, 1, 8, 9 }; /* rdi rsi rdx rcx r8 r9 */

static void call_facts(struct insn_facts *f, const struct ls_insn *insn)
{
	for (int i = 0; i < 6; i++)
		add_use(f, arg_regs[i]);
	for (int i = 0; i < 8; i++)
		add_use(f, LOC_VEC + i);
	if (insn->nops && insn->op[0].kind == LS_OP_MEM)
		address_uses(f, &insn->op[0]);
	else if (insn->nops && insn->op[0].kind == LS_OP_REG)
		add_use(f, loc_of_reg(insn->op[0].reg));
	add_def(f, 0, true);
	add_def(f, LOC_VEC, true);
	add_def(f, LOC_FLAGS, true);
	/* the clobbered ones die: nothing before flows past the call in them */
	for (int r = 1; r < 16; r++)
		if (insn->writes & (1u << r))
			add_def(f, r, true);
}

/* Two- and three-operand instructions: AT&T, the destination last. */
static void operand_facts(struct ls_blame *b, const ls_module *m, struct insn_facts *f, const struct ls_insn *insn,
                          const char *mn)
{
	int d = insn->nops - 1;
	const struct ls_operand *dst = &insn->op[d];
	bool compare = (starts(mn, "cmp") && !starts(mn, "cmpxchg") && !starts(mn, "cmpps") && !starts(mn, "cmppd") &&
	                !starts(mn, "cmpss") && !starts(mn, "cmpsd")) || starts(mn, "test") || starts(mn, "bt") ||
	               starts(mn, "ucomis") || starts(mn, "comis") || starts(mn, "vucomis") || starts(mn, "vcomis") ||
	               starts(mn, "ptest") || starts(mn, "vptest");
	if (compare) {
		for (int i = 0; i < insn->nops; i++)
			value_use(b, m, f, &insn->op[i]);
		add_def(f, LOC_FLAGS, true);
		return;
	}
	/* xor %r,%r, sub %r,%r, pxor %x,%x: zero, no read */
	bool zero = insn->nops == 2 && dst->kind == LS_OP_REG && insn->op[0].kind == LS_OP_REG &&
	            insn->op[0].reg == dst->reg && (starts(mn, "xor") || starts(mn, "sub") || starts(mn, "pxor") ||
	                                            starts(mn, "vpxor") || starts(mn, "xorp") || starts(mn, "vxorp"));
	bool move = insn->opcode == LS_MN_MOV || insn->opcode == LS_MN_MOVSXD || insn->opcode == LS_MN_MOVZX ||
	            insn->opcode == LS_MN_LEA || insn->opcode == LS_MN_VMOV || starts(mn, "mov") || starts(mn, "cvt") ||
	            starts(mn, "vcvt") || starts(mn, "vbroadcast") || starts(mn, "pshuf") || zero;
	bool cmov = starts(mn, "cmov");
	for (int i = 0; i < d && !zero; i++) {
		if (insn->opcode == LS_MN_LEA && insn->op[i].kind == LS_OP_MEM) {
			address_uses(f, &insn->op[i]);
			mem_loc(b, m, f, &insn->op[i]); /* &var: the caller's argument (ls_blame_arg_sources) */
		}
		else
			value_use(b, m, f, &insn->op[i]);
	}
	if (cmov)
		add_use(f, LOC_FLAGS);
	/* a scalar SSE move or operation keeps the upper lanes: a full
	 * write is still how the value is used (the lanes are not data) */
	value_def(b, m, f, dst, !move || cmov);
	if (!move && !starts(mn, "v") && !starts(mn, "p") && !starts(mn, "add") && !starts(mn, "sub") && !starts(mn, "mul") &&
	    !starts(mn, "div") && !starts(mn, "sqrt") && !starts(mn, "max") && !starts(mn, "min"))
		add_def(f, LOC_FLAGS, true);
	else if (!move && (starts(mn, "add") || starts(mn, "sub")) && dst->kind != LS_OP_REG)
		add_def(f, LOC_FLAGS, true);
	else if (!move && (starts(mn, "add") || starts(mn, "sub")) && dst->reg < 16)
		add_def(f, LOC_FLAGS, true);
	if (insn->opcode == LS_MN_MOV && insn->nops == 2 && insn->op[0].kind == LS_OP_REG && dst->kind == LS_OP_REG &&
	    insn->op[0].reg < 16 && dst->reg < 16)
		f->copy_from = insn->op[0].reg;
}

/* Operand-less and one-operand instructions. */
static void short_facts(struct ls_blame *b, const ls_module *m, struct insn_facts *f, const struct ls_insn *insn,
                        const char *mn)
{
	if (insn->opcode == LS_MN_CLTQ || starts(mn, "cwtl") || starts(mn, "cbtw")) {
		add_use(f, 0);
		add_def(f, 0, true);
	} else if (starts(mn, "cqto") || starts(mn, "cltd") || starts(mn, "cwtd")) {
		add_use(f, 0);
		add_def(f, 2, true);
	} else if (insn->nops == 1 && (starts(mn, "mul") || starts(mn, "imul") || starts(mn, "div") || starts(mn, "idiv"))) {
		value_use(b, m, f, &insn->op[0]);
		add_use(f, 0);
		add_use(f, 2);
		add_def(f, 0, true);
		add_def(f, 2, true);
		add_def(f, LOC_FLAGS, true);
	} else if (insn->nops == 1 && starts(mn, "set")) {
		add_use(f, LOC_FLAGS);
		value_def(b, m, f, &insn->op[0], true);
	} else if (insn->nops == 1 && (starts(mn, "push"))) {
		value_use(b, m, f, &insn->op[0]);
	} else if (insn->nops == 1 && starts(mn, "pop")) {
		value_def(b, m, f, &insn->op[0], false);
	} else if (insn->nops == 1 && (starts(mn, "inc") || starts(mn, "dec") || starts(mn, "neg") || starts(mn, "not") ||
	                               starts(mn, "sh") || starts(mn, "sa") || starts(mn, "ro") || starts(mn, "bswap"))) {
		value_use(b, m, f, &insn->op[0]);
		value_def(b, m, f, &insn->op[0], false);
		add_def(f, LOC_FLAGS, true);
	} else {
		for (int i = 0; i < insn->nops; i++)
			value_use(b, m, f, &insn->op[i]);
	}
}

static void insn_facts(struct ls_blame *b, const ls_module *m, struct insn_facts *f, const struct ls_insn *insn,
                       const char *mn)
{
	f->addr = insn->addr;
	f->len = insn->len;
	f->kind = insn->kind;
	f->target = insn->target;
	f->copy_from = -1;
	f->load_var = -1;
	f->store_base = -1;
	f->cell = -1;
	switch (insn->kind) {
	case LS_INSN_CJUMP: add_use(f, LOC_FLAGS); return;
	case LS_INSN_CALL:
	case LS_INSN_ICALL: call_facts(f, insn); return;
	case LS_INSN_RET: add_use(f, b->ret_loc); return;
	case LS_INSN_JUMP: return;
	case LS_INSN_IJUMP:
		if (insn->nops && insn->op[0].kind == LS_OP_MEM)
			address_uses(f, &insn->op[0]);
		else if (insn->nops)
			add_use(f, loc_of_reg(insn->op[0].reg));
		/* a tail call through a pointer passes the arguments on */
		for (int i = 0; i < 6; i++)
			add_use(f, arg_regs[i]);
		return;
	default: break;
	}
	if (insn->opcode == LS_MN_NOP || insn->opcode == LS_MN_ENDBR || insn->opcode == LS_MN_LEAVE ||
	    insn->opcode == LS_MN_ENTER || starts(mn, "prefetch"))
		return;
	if (insn->nops >= 2)
		operand_facts(b, m, f, insn, mn);
	else
		short_facts(b, m, f, insn, mn);
}

/* ---- seeds: the direct blame ---------------------------------------------------------------- */

static void add_seed(struct insn_facts *f, uint32_t var, int rule)
{
	if (var == UINT32_MAX || f->nseed >= 8)
		return;
	for (int i = 0; i < f->nseed; i++)
		if (f->seed[i].var == var)
			return;
	f->seed[f->nseed].var = var;
	f->seed[f->nseed++].rule = (uint8_t)rule;
}

/* Stores the accesses stage names, returns; and the names of the
 * registers (the "register" seeds come from those, by register_seeds). */
static void seeds(struct ls_blame *b, const ls_accesses *acc, struct dvars *dv, bool returns, struct insn_facts *f)
{
	size_t first, n = ls_accesses_at(acc, f->addr, &first);
	for (size_t k = 0; k < n; k++) {
		const ls_access *a = ls_accesses_get(acc, first + k);
		if (!a->variable)
			continue;
		/* the variable's own name: a pointer parameter of the procedure
		 * is the exit variable (in its register, or -O0's slot) */
		int exit = LS_BLAME_LOCAL, param = -1;
		for (size_t i = 0; i < dv->n; i++) {
			const char *nm = dwarf_diename(&dv->v[i].die);
			if (dv->v[i].pointer_param && nm && !strcmp(nm, a->variable)) {
				exit = LS_BLAME_EXIT_PARAM;
				param = dv->v[i].param;
			}
		}
		uint32_t v = var_id(b, a->variable, exit, param);
		if (f->cell >= LOC_MEM && v != UINT32_MAX && !b->cell_var[f->cell - LOC_MEM] && a->rule == LS_RULE_FRAME)
			b->cell_var[f->cell - LOC_MEM] = (int32_t)v + 1;
		if (a->kind & LS_ACCESS_STORE)
			add_seed(f, v, LS_BLAME_STORE);
		else if (f->load_var < 0)
			f->load_var = (int)v;
	}
	names_at(b, dv, f);
	if (f->kind == LS_INSN_RET && returns)
		add_seed(f, var_id(b, "<return>", LS_BLAME_EXIT_RETURN, -1), LS_BLAME_RETURN);
}

/* ---- the backward slice --------------------------------------------------------------------- */

struct flow {
	struct ls_blame *b;
	const struct ls_cfg *cfg;
	size_t nlocs;
	uint64_t *in;        /* per block: nlocs sets, the future blame at its start */
	uint64_t *seed;      /* per instruction: WORDS, the seeds of this pass */
	uint64_t *out_sets;  /* per instruction: the result of this pass */
	bool names_only;     /* the "register" pass: values reach the names
	                      * DWARF gives their register later, not uses */
};

static void set_or(uint64_t *d, const uint64_t *s, size_t w, bool *changed)
{
	for (size_t i = 0; i < w; i++) {
		uint64_t x = d[i] | s[i];
		if (x != d[i]) {
			d[i] = x;
			if (changed)
				*changed = true;
		}
	}
}

/* Block BI backward from its successors' entry sets; true when its own
 * entry set changed. */
static bool flow_block(struct flow *fl, size_t bi, uint64_t *live, uint64_t *cur)
{
	struct ls_blame *b = fl->b;
	const struct ls_cfg *cfg = fl->cfg;
	const struct ls_block *blk = &cfg->blocks[bi];
	size_t w = b->words, nl = fl->nlocs;
	memset(live, 0, nl * w * sizeof *live);
	for (uint32_t e = 0; e < blk->nsucc; e++) {
		uint32_t to = cfg->edges[cfg->succ[blk->first_succ + e]].to;
		set_or(live, fl->in + (size_t)to * nl * w, nl * w, NULL);
	}
	for (uint32_t k = blk->ninsns; k-- > 0;) {
		uint32_t ii = blk->first_insn + k;
		struct insn_facts *f = &b->in[ii];
		memcpy(cur, fl->seed + (size_t)ii * w, w * sizeof *cur);
		bool call = f->kind == LS_INSN_CALL || f->kind == LS_INSN_ICALL;
		for (int d = 0; d < f->ndef; d++) /* a call's clobbers die, they carry no result */
			if (f->def[d] < nl && (!call || f->def[d] == 0 || f->def[d] == LOC_VEC))
				set_or(cur, live + (size_t)f->def[d] * w, w, NULL);
		set_or(fl->out_sets + (size_t)ii * w, cur, w, NULL);
		for (int d = 0; d < f->ndef; d++)
			if (f->kill[d] && f->def[d] < nl)
				memset(live + (size_t)f->def[d] * w, 0, w * sizeof *live);
		for (int u = 0; u < f->nuse && !fl->names_only; u++)
			if (f->use[u] < nl)
				set_or(live + (size_t)f->use[u] * w, cur, w, NULL);
		for (int k2 = 0; k2 < f->nnames && fl->names_only; k2++)
			live[(size_t)f->name[k2].loc * w + f->name[k2].var / 64] |= 1ull << (f->name[k2].var % 64);
	}
	bool changed = false;
	set_or(fl->in + bi * nl * w, live, nl * w, &changed);
	return changed;
}

static void flow_run(struct flow *fl)
{
	size_t w = fl->b->words, nl = fl->nlocs, nb = fl->cfg->nblocks;
	fl->in = ls_xcalloc(nb * nl * w + 1, sizeof *fl->in);
	uint64_t *live = ls_xcalloc(nl * w + 1, sizeof *live), *cur = ls_xcalloc(w + 1, sizeof *cur);
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t bi = nb; bi-- > 0;)
			changed |= flow_block(fl, bi, live, cur);
	}
	free(live);
	free(cur);
	free(fl->in);
}

/* ---- control dependence --------------------------------------------------------------------- */

/* Immediate post-dominators (Cooper, Harvey, Kennedy on the reversed CFG;
 * block NB is the virtual exit).  IPDOM[x] = NB when only the exit
 * post-dominates x, or for a block that never reaches an exit. */
static uint32_t *post_dominators(const struct ls_cfg *cfg)
{
	size_t nb = cfg->nblocks;
	uint32_t *order = ls_xmalloc((nb + 1) * sizeof *order), *rank = ls_xmalloc((nb + 1) * sizeof *rank);
	uint32_t *ipdom = ls_xmalloc((nb + 1) * sizeof *ipdom), *stack = ls_xmalloc((nb + 1) * 2 * sizeof *stack);
	uint8_t *seen = ls_xcalloc(nb + 1, 1);
	size_t norder = 0, sp = 0;
	/* postorder of the reversed graph from the exit, iteratively */
	for (size_t x = 0; x < nb; x++)
		if (cfg->blocks[x].nsucc == 0 && !seen[x]) {
			seen[x] = 1;
			stack[sp++] = (uint32_t)x;
			stack[sp++] = 0;
			while (sp) {
				uint32_t i = stack[sp - 1], node = stack[sp - 2];
				const struct ls_block *blk = &cfg->blocks[node];
				if (i < blk->npred) {
					stack[sp - 1]++;
					uint32_t from = cfg->edges[cfg->pred[blk->first_pred + i]].from;
					if (!seen[from]) {
						seen[from] = 1;
						stack[sp++] = from;
						stack[sp++] = 0;
					}
				} else {
					order[norder++] = node;
					sp -= 2;
				}
			}
		}
	for (size_t i = 0; i <= nb; i++)
		ipdom[i] = UINT32_MAX, rank[i] = 0;
	for (size_t i = 0; i < norder; i++)
		rank[order[i]] = (uint32_t)i;
	rank[nb] = (uint32_t)norder;
	ipdom[nb] = (uint32_t)nb;
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t k = norder; k-- > 0;) {
			uint32_t x = order[k], best = UINT32_MAX;
			const struct ls_block *blk = &cfg->blocks[x];
			uint32_t ns = blk->nsucc ? blk->nsucc : 1;
			for (uint32_t e = 0; e < ns; e++) {
				uint32_t s = blk->nsucc ? cfg->edges[cfg->succ[blk->first_succ + e]].to : (uint32_t)nb;
				if (ipdom[s] == UINT32_MAX)
					continue;
				if (best == UINT32_MAX) {
					best = s;
					continue;
				}
				uint32_t a = s, c = best; /* intersect */
				while (a != c) {
					while (rank[a] < rank[c])
						a = ipdom[a];
					while (rank[c] < rank[a])
						c = ipdom[c];
				}
				best = a;
			}
			if (best != UINT32_MAX && ipdom[x] != best) {
				ipdom[x] = best;
				changed = true;
			}
		}
	}
	for (size_t i = 0; i < nb; i++)
		if (ipdom[i] == UINT32_MAX)
			ipdom[i] = (uint32_t)nb;
	free(order);
	free(rank);
	free(stack);
	free(seen);
	return ipdom;
}

/* The implicit seeds: each conditional branch gets the variables written
 * (directly) in the blocks it controls, transitively. */
static void implicit_seeds(struct ls_blame *b, const struct ls_cfg *cfg, uint64_t *seed)
{
	size_t nb = cfg->nblocks, w = b->words, npairs = 0, cap = 0;
	uint32_t *ipdom = post_dominators(cfg);
	uint64_t *writes = ls_xcalloc(nb * w + 1, sizeof *writes); /* per block */
	uint64_t *ctl = ls_xcalloc(nb * w + 1, sizeof *ctl);       /* per branch block */
	uint32_t(*cd)[2] = NULL;                                   /* (a, x): x depends on a */
	for (size_t x = 0; x < nb; x++)
		for (uint32_t k = 0; k < cfg->blocks[x].ninsns; k++) {
			const struct insn_facts *f = &b->in[cfg->blocks[x].first_insn + k];
			for (int s = 0; s < f->nseed; s++)
				if (f->seed[s].rule != LS_BLAME_RETURN)
					writes[x * w + f->seed[s].var / 64] |= 1ull << (f->seed[s].var % 64);
		}
	for (size_t a = 0; a < nb; a++) {
		const struct ls_block *blk = &cfg->blocks[a];
		if (blk->nsucc < 2)
			continue;
		for (uint32_t e = 0; e < blk->nsucc; e++)
			for (uint32_t r = cfg->edges[cfg->succ[blk->first_succ + e]].to; r < nb && r != ipdom[a]; r = ipdom[r]) {
				set_or(ctl + a * w, writes + r * w, w, NULL);
				if (r != a && npairs < MAX_CD_PAIRS) {
					cd = ls_grow(cd, &cap, npairs + 1, sizeof *cd);
					cd[npairs][0] = (uint32_t)a;
					cd[npairs++][1] = r;
				}
			}
	}
	for (bool changed = true; changed;) { /* nested: the outer branch controls the inner's blocks' too */
		changed = false;
		for (size_t i = 0; i < npairs; i++)
			set_or(ctl + (size_t)cd[i][0] * w, ctl + (size_t)cd[i][1] * w, w, &changed);
	}
	for (size_t a = 0; a < nb; a++) {
		const struct ls_block *blk = &cfg->blocks[a];
		if (blk->nsucc >= 2 && blk->ninsns)
			set_or(seed + (size_t)(blk->first_insn + blk->ninsns - 1) * w, ctl + a * w, w, NULL);
	}
	free(ipdom);
	free(writes);
	free(ctl);
	free(cd);
}

static size_t reaching_def(const ls_blame *b, size_t i, uint32_t loc);

/* Stores through a pointer blame the pointer's variables too, the seed's
 * up pointers and aliases (doStore): the variables DWARF places in the
 * base register there (x and y alike after x = y), and those the
 * pointer's value flows into from its definition (s.i = malloc(4);
 * s.i[0] = z blames what the malloc result is stored to or named).  EXP:
 * the explicit sets of a first pass. */
static bool pointer_seeds(struct ls_blame *b, const uint64_t *exp)
{
	size_t w = b->words;
	bool added = false;
	for (size_t i = 0; i < b->nin; i++) {
		struct insn_facts *f = &b->in[i];
		if (f->store_base < 0)
			continue;
		int before = f->nseed;
		for (int k = 0; k < f->nnames; k++)
			if (f->name[k].loc == (uint32_t)f->store_base)
				add_seed(f, f->name[k].var, LS_BLAME_STORE);
		size_t d = reaching_def(b, i, (uint32_t)f->store_base);
		if (d != SIZE_MAX && b->in[d].load_var >= 0) /* the pointer loaded from a variable: t4 = @x */
			add_seed(f, (uint32_t)b->in[d].load_var, LS_BLAME_STORE);
		for (size_t v = 0; d != SIZE_MAX && v < b->nvars; v++)
			if (exp[d * w + v / 64] >> (v % 64) & 1)
				add_seed(f, (uint32_t)v, LS_BLAME_STORE);
		added |= f->nseed != before;
	}
	return added;
}

/* ---- a procedure ------------------------------------------------------------------------------ */

static void decode_all(struct ls_blame *b, const ls_module *m, const struct ls_cfg *cfg, struct ls_decoder *d)
{
	b->in = ls_xcalloc(cfg->ninsns + 1, sizeof *b->in);
	b->nin = cfg->ninsns;
	for (size_t bi = 0; bi < cfg->nblocks; bi++)
		for (uint32_t k = 0; k < cfg->blocks[bi].ninsns; k++)
			b->in[cfg->blocks[bi].first_insn + k].block = (uint32_t)bi;
	for (size_t i = 0; i < cfg->ninsns; i++) {
		const struct ls_insn *ci = &cfg->insns[i];
		const struct ls_text *t = ls_text_find(m, ci->addr);
		struct ls_insn insn;
		if (!t || ci->addr + ci->len > t->addr + t->size ||
		    ls_decode(d, t->data + (ci->addr - t->addr), ci->len, ci->addr, &insn) == 0) {
			b->in[i].addr = ci->addr;
			b->in[i].len = ci->len;
			b->in[i].copy_from = b->in[i].load_var = b->in[i].store_base = b->in[i].cell = -1;
			continue;
		}
		insn_facts(b, m, &b->in[i], &insn, ls_decoder_mnemonic(d));
	}
}

/* The entries (variable, kind, rule) of every instruction, from the sets. */
static void make_entries(struct ls_blame *b, const uint64_t *exp, const uint64_t *imp)
{
	size_t w = b->words, cap = 0;
	b->first_entry = ls_xcalloc(b->nin + 1, sizeof *b->first_entry);
	for (size_t i = 0; i < b->nin; i++) {
		b->first_entry[i] = (uint32_t)b->nentries;
		for (size_t v = 0; v < b->nvars; v++) {
			bool e = exp[i * w + v / 64] >> (v % 64) & 1, im = imp[i * w + v / 64] >> (v % 64) & 1;
			if (!e && !im)
				continue;
			int rule = e ? LS_BLAME_FLOW : LS_BLAME_CONTROL;
			for (int s = 0; e && s < b->in[i].nseed; s++)
				if (b->in[i].seed[s].var == v)
					rule = b->in[i].seed[s].rule;
			b->entries = ls_grow(b->entries, &cap, b->nentries + 1, sizeof *b->entries);
			b->entries[b->nentries++] = (ls_blame_entry){ b->in[i].addr, v, e ? LS_BLAME_EXPLICIT : LS_BLAME_IMPLICIT,
				                                      (ls_blame_rule)rule, e && im };
		}
	}
	b->first_entry[b->nin] = (uint32_t)b->nentries;
}

static bool analyze(struct ls_blame *b, const ls_module *m, const struct ls_cfg *cfg, const ls_accesses *acc,
                    struct dvars *dv, bool returns)
{
	for (size_t i = 0; i < b->nin; i++)
		seeds(b, acc, dv, returns, &b->in[i]);
	b->words = (b->nvars + 63) / 64 + 1;
	size_t w = b->words;
	size_t nlocs = LOC_MEM + b->nmem;
	if ((double)cfg->nblocks * (double)nlocs * (double)w > MAX_FLOW_WORDS)
		return false;
	uint64_t *seed = ls_xcalloc(b->nin * w + 1, sizeof *seed);
	uint64_t *exp = ls_xcalloc(b->nin * w + 1, sizeof *exp), *imp = ls_xcalloc(b->nin * w + 1, sizeof *imp);
	/* "register": a value written to a register DWARF names V in at some
	 * point of its life there (gcc's i is named in %rcx at the loop's
	 * head only, not after the increment that computes it) */
	struct flow names = { b, cfg, nlocs, NULL, seed, exp, true };
	flow_run(&names);
	for (size_t i = 0; i < b->nin; i++)
		for (size_t v = 0; v < b->nvars; v++)
			if (exp[i * w + v / 64] >> (v % 64) & 1)
				add_seed(&b->in[i], (uint32_t)v, LS_BLAME_REGISTER);
	memset(exp, 0, (b->nin * w + 1) * sizeof *exp);
	for (size_t i = 0; i < b->nin; i++)
		for (int s = 0; s < b->in[i].nseed; s++)
			seed[i * w + b->in[i].seed[s].var / 64] |= 1ull << (b->in[i].seed[s].var % 64);
	struct flow fl = { b, cfg, nlocs, NULL, seed, exp, false };
	flow_run(&fl);
	if (pointer_seeds(b, exp)) { /* once more with them */
		memset(exp, 0, (b->nin * w + 1) * sizeof *exp);
		for (size_t i = 0; i < b->nin; i++)
			for (int k = 0; k < b->in[i].nseed; k++)
				seed[i * w + b->in[i].seed[k].var / 64] |= 1ull << (b->in[i].seed[k].var % 64);
		flow_run(&fl);
	}
	memset(seed, 0, (b->nin * w + 1) * sizeof *seed);
	implicit_seeds(b, cfg, seed);
	fl.out_sets = imp;
	flow_run(&fl);
	(void)m;
	make_entries(b, exp, imp);
	free(seed);
	free(exp);
	free(imp);
	return true;
}

static ls_blame *proc_blame(const ls_module *m, const ls_scope *proc, ls_error *err)
{
	ls_accesses *acc = ls_accesses_of(m, ls_scope_low(proc), err);
	if (!acc)
		return NULL;
	ls_data_read_dwarf(m); /* the accesses may have come from the cache without it */
	struct ls_decoder *d = ls_decoder_new(m->ehdr.e_machine);
	if (!d) {
		ls_accesses_free(acc);
		ls_set_error(err, LS_ERR_UNSUPPORTED, "%s: blame needs x86-64 code", m->path);
		return NULL;
	}
	struct ls_blame *b = ls_xcalloc(1, sizeof *b);
	b->proc = ls_scope_low(proc);
	struct ls_proc lp = { .name = proc->name, .linkage_name = proc->linkage_name, .ranges = proc->ranges,
	                      .nranges = proc->nranges, .entry = b->proc };
	struct ls_cfg cfg;
	struct ls_cfg_env env = { .m = m, .dec = d };
	if (!proc->nranges || ls_cfg_build_alone(&env, &lp, &cfg) != 0) {
		ls_decoder_free(d);
		ls_accesses_free(acc);
		ls_blame_free(b);
		ls_set_error(err, LS_ERR_NOT_FOUND, "%s: no code to analyze at 0x%" PRIx64, m->path, lp.entry);
		return NULL;
	}
	struct dvars dv = { 0 };
	Dwarf_Die sub;
	bool returns = false;
	b->ret_loc = 0; /* no DWARF for it: %rax may be the value */
	if (subprogram_at(m, b->proc, &sub)) {
		collect_dvars(&dv, &sub, 0);
		Dwarf_Attribute a;
		Dwarf_Die t;
		returns = dwarf_attr_integrate(&sub, DW_AT_type, &a) != NULL;
		b->ret_loc = returns ? 0 : -1;
		if (returns && dwarf_formref_die(&a, &t) && dwarf_peel_type(&t, &t) == 0 && dwarf_tag(&t) == DW_TAG_base_type) {
			Dwarf_Word enc;
			if (dwarf_attr(&t, DW_AT_encoding, &a) && dwarf_formudata(&a, &enc) == 0 &&
			    (enc == DW_ATE_float || enc == DW_ATE_complex_float))
				b->ret_loc = LOC_VEC;
		}
	}
	decode_all(b, m, &cfg, d);
	bool ok = analyze(b, m, &cfg, acc, &dv, returns);
	size_t nblocks = cfg.nblocks;
	free(dv.v);
	ls_cfg_free(&cfg);
	ls_decoder_free(d);
	ls_accesses_free(acc);
	if (!ok) {
		ls_set_error(err, LS_ERR_UNSUPPORTED, "%s: the procedure at 0x%" PRIx64 " is too large for blame (%zu blocks, "
		             "%zu variables)", m->path, b->proc, nblocks, b->nvars);
		ls_blame_free(b);
		return NULL;
	}
	return b;
}

/* ---- interface ---------------------------------------------------------------------------------- */

ls_blame *ls_blame_of(const ls_module *m, uint64_t addr, ls_error *err)
{
	const ls_scope *proc = ls_lookup_proc(m, addr);
	if (!proc) {
		ls_set_error(err, LS_ERR_NOT_FOUND, "%s: no procedure holds 0x%" PRIx64, m->path, addr);
		return NULL;
	}
	if (!m->dwarf_found) {
		ls_set_error(err, LS_ERR_DWARF, "%s: no debug information: blame needs DWARF", m->path);
		return NULL;
	}
	struct ls_oom_guard guard;
	ls_oom_push(&guard);
	if (setjmp(guard.env)) {
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory computing the blame", m->path);
		return NULL;
	}
	ls_blame *b = proc_blame(m, proc, err);
	ls_oom_pop(&guard);
	return b;
}

uint64_t ls_blame_proc(const ls_blame *b) { return b ? b->proc : 0; }
size_t ls_blame_nvars(const ls_blame *b) { return b ? b->nvars : 0; }

const char *ls_blame_var_name(const ls_blame *b, size_t v, int *exit, int *param)
{
	if (!b || v >= b->nvars)
		return NULL;
	if (exit)
		*exit = b->vars[v].exit;
	if (param)
		*param = b->vars[v].param;
	return b->vars[v].name;
}

static size_t insn_index(const ls_blame *b, uint64_t addr)
{
	size_t lo = 0, hi = b->nin;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->in[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->nin && b->in[lo].addr == addr ? lo : SIZE_MAX;
}

size_t ls_blame_at(const ls_blame *b, uint64_t addr, const ls_blame_entry **out)
{
	size_t i = b ? insn_index(b, addr) : SIZE_MAX;
	if (i == SIZE_MAX || !b->entries) { /* no entries at all: ENTRIES is NULL, no base for an offset */
		*out = NULL;
		return 0;
	}
	*out = b->entries + b->first_entry[i];
	return b->first_entry[i + 1] - b->first_entry[i];
}

uint64_t ls_blame_call_in(const ls_blame *b, uint64_t lo, uint64_t hi, uint64_t target)
{
	uint64_t indirect = 0, any = 0;
	for (size_t i = 0; b && i < b->nin; i++) {
		const struct insn_facts *f = &b->in[i];
		if (f->addr < lo || f->addr >= hi || (f->kind != LS_INSN_CALL && f->kind != LS_INSN_ICALL))
			continue;
		if (f->kind == LS_INSN_CALL && f->target == target)
			return f->addr;
		if (f->kind == LS_INSN_ICALL && !indirect)
			indirect = f->addr;
		if (!any)
			any = f->addr;
	}
	return indirect ? indirect : any;
}

/* The definition of LOC that reaches instruction I, walking back in
 * address order while control falls through (a jump or a return before
 * ends it: another path's definition would be a guess); SIZE_MAX when
 * none is found that way. */
static size_t reaching_def(const ls_blame *b, size_t i, uint32_t loc)
{
	for (int hops = 0; hops < 256 && i > 0; hops++) {
		const struct insn_facts *f = &b->in[--i];
		if (f->kind == LS_INSN_JUMP || f->kind == LS_INSN_IJUMP || f->kind == LS_INSN_RET ||
		    f->kind == LS_INSN_HALT || b->in[i + 1].addr != f->addr + f->len)
			return SIZE_MAX;
		for (int d = 0; d < f->ndef; d++)
			if (f->def[d] == loc)
				return i;
	}
	return SIZE_MAX;
}

size_t ls_blame_arg_sources(const ls_blame *b, uint64_t call, int param, size_t *vars, size_t cap)
{
	size_t i = b ? insn_index(b, call) : SIZE_MAX, n = 0;
	if (i == SIZE_MAX || param < 0 || param >= 6)
		return 0;
	uint32_t loc = (uint32_t)arg_regs[param];
	for (int hops = 0; hops < 16; hops++) {
		size_t d = reaching_def(b, i, loc);
		if (d == SIZE_MAX)
			break;
		const struct insn_facts *f = &b->in[d];
		for (int s = 0; s < f->nseed && n < cap; s++)
			if (f->seed[s].rule == LS_BLAME_REGISTER)
				vars[n++] = f->seed[s].var; /* DWARF names the register there */
		if (n)
			break;
		if (f->load_var >= 0 && n < cap) {
			vars[n++] = (size_t)f->load_var;
			break;
		}
		/* lea of a frame slot: the address of the variable there */
		if (f->copy_from < 0 && f->cell >= LOC_MEM && b->cell_var[f->cell - LOC_MEM] && n < cap) {
			vars[n++] = (size_t)(b->cell_var[f->cell - LOC_MEM] - 1);
			break;
		}
		if (f->copy_from < 0)
			break;
		loc = (uint32_t)f->copy_from;
		i = d;
	}
	return n;
}

void ls_blame_free(ls_blame *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nvars; i++)
		free(b->vars[i].name);
	free(b->vars);
	free(b->in);
	free(b->entries);
	free(b->first_entry);
	free(b);
}

const char *ls_blame_rule_name(ls_blame_rule r)
{
	switch (r) {
	case LS_BLAME_STORE: return "store";
	case LS_BLAME_REGISTER: return "register";
	case LS_BLAME_RETURN: return "return";
	case LS_BLAME_FLOW: return "flow";
	case LS_BLAME_CONTROL: return "control";
	}
	return "?";
}

const char *ls_blame_kind_name(ls_blame_kind k)
{
	return k == LS_BLAME_EXPLICIT ? "explicit" : k == LS_BLAME_IMPLICIT ? "implicit" : "?";
}
