/* accesses.c - the accesses stage: for every instruction of a procedure
 * with a memory operand, whether it loads, stores or both, how wide, and
 * what it reaches (loopscope.h's ls_access; the contract is design.md's
 * "Accesses").
 *
 * It owns the decision of which variable an operand reaches, by one rule
 * per operand shape, tried in this order and recorded in ls_access.rule:
 *   - a static address (RIP-relative, or absolute with or without an index)
 *     inside a variable whose location is DW_OP_addr: LS_RULE_STATIC;
 *   - SP- or BP-relative: the unwind recipe at that PC (unwind/recipes.c)
 *     turns it into an offset from the CFA, matched against the frame slots
 *     of the variables in scope there (DW_OP_fbreg over a frame base of
 *     DW_OP_call_frame_cfa, %rsp or %rbp; DW_OP_breg7/breg6), innermost
 *     inlined scope first: LS_RULE_FRAME;
 *   - any other base register: the variable DWARF's location (list) says
 *     is in that register at that PC, innermost scope first: a pointer
 *     (DW_OP_regN: LS_RULE_REGISTER), a pointer computed from it (DW_OP_bregN
 *     off; DW_OP_stack_value: LS_RULE_REGISTER_VALUE) or an object in memory
 *     at it (DW_OP_bregN off: LS_RULE_REGISTER_MEMORY);
 *   - else where every definition of the register reaching the PC comes
 *     from (reg_origin.c): one static address (LS_RULE_REGISTER_STATIC),
 *     a pointer loaded from a variable's field, that load's own operand
 *     resolved by these rules (LS_RULE_REGISTER_FIELD_LOAD), or the
 *     register's entry value, a parameter's (LS_RULE_REGISTER_ENTRY_VALUE);
 *   - else, for the operand itself, a value DWARF names elsewhere on every
 *     path (reg_origin.c's ls_reg_origin_named): a variable in scope at the
 *     PC whose location names the register at an earlier PC, a load, or an
 *     allocation's block where it is put (LS_RULE_REGISTER_NAMED_VALUE).
 * The field path inside the type comes from types.c, the location
 * expressions from location.c.  Nothing else is guessed: an operand no rule
 * matches is LS_RULE_NONE, without a variable.
 *
 * Cached (cache/cache_accesses.c): a procedure's accesses computed once are
 * kept with the module's cache entry, so that a later run (perf loops
 * report -s type of a recording whose structure is cached) reads them
 * without the DWARF.  Only a type's layout (ls_accesses_layout) reads the
 * DWARF then.
 */
#include "analyze.h"
#include "cache/cache.h"
#include "data/accesses.h"
#include "data/location.h"
#include "data/reg_names.h"
#include "data/reg_origin.h"
#include "data/types.h"
#include "cfg/cfg.h"
#include "cfg/decode.h"
#include "elf/module.h"
#include "elf/symbols.h"
#include "pipeline.h"

#include <dwarf.h>
#include <elf.h>
#include <gelf.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One access and the storage its strings point into. */
struct access_slot {
	ls_access a;
	char variable[LS_TYPE_NAME_MAX];
	char type[LS_TYPE_NAME_MAX];
	char field[LS_FIELD_PATH_MAX + 8];
	char leaf[LS_TYPE_NAME_MAX];
	char expr[LS_TYPE_NAME_MAX + LS_FIELD_PATH_MAX + 16];
	char source[LS_TYPE_NAME_MAX + LS_FIELD_PATH_MAX + 16]; /* expr as source writes it: no "Base::" */
	char operand[64];
	Dwarf_Off type_die;   /* the type's DIE (ls_access.type), for its layout; 0: none */
	bool c_lang;
};

struct ls_accesses {
	const ls_module *m;   /* whose DWARF the type DIEs are in */
	uint64_t proc;
	struct access_slot *v;
	size_t n, cap;
	uint64_t *blocks;      /* the CFG's block starts, sorted: what a skid stays inside */
	size_t nblocks;
	char *strings;         /* a set read from the cache: where its strings are */
};

/* ---- the module's static variables ------------------------------------------- */

struct global_var {
	uint64_t addr, size;
	Dwarf_Off die;
};

struct ls_data_globals {
	struct global_var *v;
	size_t n;
};

static pthread_mutex_t data_lock = PTHREAD_MUTEX_INITIALIZER;

static void add_global(struct ls_data_globals *g, size_t *cap, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	struct ls_loc loc;
	Dwarf_Die t;
	if (!dwarf_attr(die, DW_AT_location, &a) || !ls_loc_at(&a, 0, &loc) || loc.kind != LS_LOC_ADDR)
		return;
	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
		return;
	int64_t size = ls_type_size(&t);
	if (size <= 0)
		return;
	g->v = ls_grow(g->v, cap, g->n + 1, sizeof *g->v);
	g->v[g->n++] = (struct global_var){ (uint64_t)loc.off, (uint64_t)size, dwarf_dieoffset(die) };
}

/* Every DW_TAG_variable below DIE (file scope, and function-static ones). */
static void collect_globals(struct ls_data_globals *g, size_t *cap, Dwarf_Die *die, int depth)
{
	Dwarf_Die c;
	if (depth > 64 || dwarf_child(die, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);
		if (tag == DW_TAG_variable)
			add_global(g, cap, &c);
		else if (dwarf_haschildren(&c) && tag != DW_TAG_structure_type && tag != DW_TAG_union_type &&
		         tag != DW_TAG_enumeration_type)
			collect_globals(g, cap, &c, depth + 1);
	} while (dwarf_siblingof(&c, &c) == 0);
}

static int cmp_global(const void *a, const void *b)
{
	const struct global_var *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->size > y->size ? -1 : x->size < y->size;
}

/* The index, and DWARF read, once per module (under data_lock). */
static struct ls_data_globals *module_globals(const ls_module *cm)
{
	ls_module *m = (ls_module *)cm; /* logically const: a memo */
	/* On demand, the DWARF is read under the analysis lock, by the
	 * analysis's own stage (lookups of other procedures may run it now);
	 * opened whole, or every procedure from the cache, nothing else
	 * reads it after the open, and data_lock is enough. */
	ls_analysis_want_indexes(m);
	pthread_mutex_lock(&data_lock);
	struct ls_oom_guard guard;
	ls_oom_push(&guard);
	if (setjmp(guard.env)) {
		pthread_mutex_unlock(&data_lock);
		ls_oom_raise();
	}
	if (!m->data_globals) {
		ls_error err;
		if (!m->dwarf_tried)
			ls_elf_load_dwarf(m, &err);
		struct ls_data_globals *g = ls_xcalloc(1, sizeof *g);
		size_t cap = 0;
		Dwarf_Off off = 0, next;
		size_t hsize;
		while (m->dwarf && dwarf_nextcu(m->dwarf, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			Dwarf_Die cu;
			if (dwarf_offdie(m->dwarf, off + hsize, &cu))
				collect_globals(g, &cap, &cu, 0);
			off = next;
		}
		if (g->n)
			qsort(g->v, g->n, sizeof *g->v, cmp_global);
		m->data_globals = g;
	}
	ls_oom_pop(&guard);
	pthread_mutex_unlock(&data_lock);
	return m->data_globals;
}

/* The DWARF alone read (ls_elf_load_dwarf), under the analysis lock as
 * the analysis' own stage reads it on demand. */
static void module_dwarf(const ls_module *cm)
{
	ls_module *m = (ls_module *)cm; /* logically const: a memo */
	pthread_mutex_t *lock = m->an ? &m->an->lock : &data_lock;
	pthread_mutex_lock(lock);
	struct ls_oom_guard guard;
	ls_oom_push(&guard);
	if (setjmp(guard.env)) {
		pthread_mutex_unlock(lock);
		ls_oom_raise();
	}
	ls_error err;
	ls_elf_load_dwarf(m, &err);
	ls_oom_pop(&guard);
	pthread_mutex_unlock(lock);
}

void ls_data_read_dwarf(const ls_module *m)
{
	module_globals(m);
}

void ls_data_free(ls_module *m)
{
	if (!m->data_globals)
		return;
	free(m->data_globals->v);
	free(m->data_globals);
	m->data_globals = NULL;
}

/* The innermost (smallest) variable holding ADDR. */
static const struct global_var *global_at(const struct ls_data_globals *g, uint64_t addr)
{
	const struct global_var *best = NULL;
	size_t hi = LS_FIRST_ABOVE(g->v, g->n, addr, addr);
	/* Variables do not nest except for aliases at one address: look
	 * back over those that start at or below ADDR. */
	for (size_t i = hi; i-- > 0 && hi - i <= 64;) {
		const struct global_var *v = &g->v[i];
		if (addr < v->addr + v->size && (!best || v->size < best->size))
			best = v;
	}
	return best;
}

/* ---- operands: load or store, width ------------------------------------------------ */

static bool starts(const char *m, const char *p) { return strncmp(m, p, strlen(p)) == 0; }

/* A one-operand instruction's use of its memory operand. */
static ls_access_kind single_operand_kind(const char *m)
{
	if (starts(m, "set") || starts(m, "pop") || starts(m, "fst") || starts(m, "fist") || starts(m, "fnst"))
		return LS_ACCESS_STORE;
	if (starts(m, "inc") || starts(m, "dec") || starts(m, "not") || starts(m, "neg") || starts(m, "sh") ||
	    starts(m, "sa") || starts(m, "ro") || starts(m, "rc"))
		return LS_ACCESS_BOTH;
	return LS_ACCESS_LOAD; /* push, call, jmp, mul, div, fld, ... */
}

/* The use of memory operand I of INSN, whose mnemonic is M (AT&T: the
 * destination is the last operand). */
static ls_access_kind access_kind(const struct ls_insn *insn, int i, const char *m)
{
	if (insn->nops == 1)
		return single_operand_kind(m);
	if (i != insn->nops - 1)
		return starts(m, "xchg") || starts(m, "xadd") ? LS_ACCESS_BOTH : LS_ACCESS_LOAD;
	if (starts(m, "cmp") && !starts(m, "cmpxchg"))
		return LS_ACCESS_LOAD;
	if (starts(m, "test") || starts(m, "bt") || starts(m, "ucomis") || starts(m, "comis") ||
	    starts(m, "vucomis") || starts(m, "vcomis") || starts(m, "ptest") || starts(m, "vptest"))
		return LS_ACCESS_LOAD;
	if (starts(m, "mov") || starts(m, "vmov") || starts(m, "stos") || starts(m, "set") ||
	    starts(m, "pextr") || starts(m, "vpextr") || starts(m, "extractps") || starts(m, "vextract") ||
	    starts(m, "cvt") || starts(m, "vcvt"))
		return LS_ACCESS_STORE;
	return LS_ACCESS_BOTH; /* add, or, xchg, cmpxchg, ...: read-modify-write */
}

/* The bytes the operand covers, or 0 when not known (x87, vector gathers). */
static unsigned access_width(const struct ls_insn *insn, int i, const char *m)
{
	size_t n = strlen(m);
	if (starts(m, "movzb") || starts(m, "movsb"))
		return 1;
	if (starts(m, "movzw") || starts(m, "movsw"))
		return 2;
	if (strcmp(m, "movslq") == 0 || strcmp(m, "movsxd") == 0)
		return 4;
	if (starts(m, "push") || starts(m, "pop") || starts(m, "call") || starts(m, "jmp"))
		return 8;
	/* scalar SSE: addsd, movss, cvtsd2ss (the source's width), ... */
	bool vec = false;
	for (int k = 0; k < insn->nops; k++)
		vec |= insn->op[k].kind == LS_OP_REG && insn->op[k].reg >= 32 && insn->op[k].reg < 90;
	if (vec) {
		const char *cvt = strstr(m, "cvt");
		const char *tail = cvt ? cvt + 3 : m + (n >= 2 ? n - 2 : 0);
		if (strncmp(tail, "ss", 2) == 0 || strncmp(tail, "si", 2) == 0 || strcmp(m, "movd") == 0 || strcmp(m, "vmovd") == 0)
			return 4;
		if (strncmp(tail, "sd", 2) == 0 || strcmp(m, "movq") == 0 || strcmp(m, "vmovq") == 0 ||
		    strstr(m, "lp") || strstr(m, "hp"))
			return 8;
	}
	for (int k = 0; k < insn->nops; k++)
		if (k != i && insn->op[k].kind == LS_OP_REG && insn->op[k].size)
			return insn->op[k].size;
	switch (n ? m[n - 1] : 0) {
	case 'b': return 1;
	case 'w': return 2;
	case 'l': return 4;
	case 'q': return 8;
	default: return 0;
	}
}

/* The decoder's register numbers (rax 0, rcx 1, rdx 2, rbx 3, rsp 4, rbp 5,
 * rsi 6, rdi 7, r8..r15) -> DWARF's for x86-64. */
static int dwarf_reg(int r)
{
	static const int map[8] = { 0, 2, 1, 3, 7, 6, 4, 5 };
	return r < 0 ? -1 : r < 8 ? map[r] : r < 16 ? r : -1;
}

static const char *reg_name(int r)
{
	static const char *const names[16] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
		                               "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };
	return r == LS_REG_RIP ? "rip" : r >= 0 && r < 16 ? names[r] : "?";
}

static void format_operand(const struct ls_operand *op, char *buf, size_t len)
{
	if (op->base == LS_REG_RIP) {
		snprintf(buf, len, "0x%" PRIx64 "(%%rip)", (uint64_t)op->disp);
		return;
	}
	char disp[24] = "";
	if (op->disp || (op->base < 0 && op->index < 0))
		snprintf(disp, sizeof disp, "%s0x%" PRIx64, op->disp < 0 ? "-" : "",
		         op->disp < 0 ? -(uint64_t)op->disp : (uint64_t)op->disp);
	if (op->base < 0 && op->index < 0)
		snprintf(buf, len, "%s", disp);
	else if (op->index < 0)
		snprintf(buf, len, "%s(%%%s)", disp, reg_name(op->base));
	else
		snprintf(buf, len, "%s(%s%s,%%%s,%u)", disp, op->base >= 0 ? "%" : "", op->base >= 0 ? reg_name(op->base) : "",
		         reg_name(op->index), op->scale ? (unsigned)op->scale : 1u);
}

/* Offsets come from untrusted DWARF and code: sums and differences wrap
 * (as the addresses they stand for do) instead of overflowing. */
static int64_t add64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t sub64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
/* X in [START, START + SIZE), SIZE > 0. */
static bool within(int64_t x, int64_t start, int64_t size) { return (uint64_t)sub64(x, start) < (uint64_t)size; }

/* ---- variables in scope at one PC ------------------------------------------------------ */

struct walk;

struct pc_ctx {
	uint64_t pc;
	Dwarf_Die *scopes;    /* dwarf_getscopes: innermost first, the CU last */
	int nscopes;
	bool c_lang;
	struct ls_loc frame_base;
	ls_unwind_recipe recipe;
	bool have_recipe;
	const struct ls_cfg *cfg;  /* the procedure's, for reg_origin.c; NULL if it could not be built */
	const struct walk *w;      /* the procedure's walk: a load's PC gets a context of its own */
	int *loads_left;           /* register-field-load's budget for this operand (NULL: a fresh one) */
};

/* What an operand was matched to. */
struct target {
	Dwarf_Die var;
	Dwarf_Die obj_type;   /* the object at offset 0: the variable's type, or the pointee's */
	bool have_type;
	bool pointer;         /* through a pointer variable */
	int64_t off;
	ls_access_rule rule;
	bool indexed;         /* the rule found an index or a step the operand does not show */
	bool element;         /* an element of the array the pointer points into: "[]" whatever OFF is */
	char name[LS_TYPE_NAME_MAX]; /* register-field-load: the loading expression, shown as the variable */
};

static bool var_type(Dwarf_Die *var, Dwarf_Die *t)
{
	Dwarf_Attribute a;
	return dwarf_attr_integrate(var, DW_AT_type, &a) && dwarf_formref_die(&a, t);
}

typedef bool var_fn(struct pc_ctx *cx, Dwarf_Die *var, const struct ls_loc *loc, void *arg);

/* Calls FN on each variable and parameter of the scopes at the PC that has
 * a location there, innermost scope first, until FN says it matched. */
static bool each_variable(struct pc_ctx *cx, var_fn *fn, void *arg)
{
	for (int i = 0; i < cx->nscopes; i++) {
		Dwarf_Die c;
		if (dwarf_child(&cx->scopes[i], &c) != 0)
			continue;
		do {
			int tag = dwarf_tag(&c);
			Dwarf_Attribute a;
			struct ls_loc loc;
			if ((tag != DW_TAG_variable && tag != DW_TAG_formal_parameter) ||
			    !dwarf_attr(&c, DW_AT_location, &a) || !ls_loc_at(&a, cx->pc, &loc))
				continue;
			if (fn(cx, &c, &loc, arg))
				return true;
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	return false;
}

/* A frame slot's offset from the CFA: false when the recipe cannot say. */
static bool slot_from_cfa(const struct pc_ctx *cx, const struct ls_loc *loc, int64_t *out)
{
	const ls_unwind_recipe *r = &cx->recipe;
	const struct ls_loc *fb = &cx->frame_base;
	if (loc->kind == LS_LOC_FBREG) {
		int64_t base;
		if (fb->kind == LS_LOC_CFA)
			base = 0;
		else if ((fb->kind == LS_LOC_REG || fb->kind == LS_LOC_BREG) && fb->reg == 7 && cx->have_recipe && r->sp_known)
			base = add64(r->sp_offset, fb->kind == LS_LOC_BREG ? fb->off : 0);
		else if ((fb->kind == LS_LOC_REG || fb->kind == LS_LOC_BREG) && fb->reg == 6 && cx->have_recipe && r->frame_pointer)
			base = add64(r->fp_offset, fb->kind == LS_LOC_BREG ? fb->off : 0);
		else
			return false;
		*out = add64(base, loc->off);
		return true;
	}
	if (loc->kind == LS_LOC_BREG && loc->reg == 7 && cx->have_recipe && r->sp_known) {
		*out = add64(r->sp_offset, loc->off);
		return true;
	}
	if (loc->kind == LS_LOC_BREG && loc->reg == 6 && cx->have_recipe && r->frame_pointer) {
		*out = add64(r->fp_offset, loc->off);
		return true;
	}
	return false;
}

struct frame_query {
	int64_t cfa_rel;      /* the operand's address - CFA */
	struct target *out;
};

/* The object's offset the frame address Q->cfa_rel is at, if LOC (one
 * part, or each piece of a composite: clang splits a stack array into
 * slots of its own) puts bytes of it there. */
static bool frame_offset(const struct pc_ctx *cx, const struct ls_loc *loc, int64_t size, int64_t cfa_rel, int64_t *off)
{
	int64_t start;
	if (loc->kind != LS_LOC_OTHER)
		return slot_from_cfa(cx, loc, &start) && within(cfa_rel, start, size) && (*off = sub64(cfa_rel, start), true);
	struct ls_loc_piece pieces[64];
	size_t n = ls_loc_pieces(loc->ops, loc->nops, pieces, 64);
	for (size_t i = 0; i < n && i < 64; i++)
		if (slot_from_cfa(cx, &pieces[i].loc, &start) && pieces[i].size &&
		    within(cfa_rel, start, (int64_t)pieces[i].size)) {
			*off = pieces[i].obj_off + sub64(cfa_rel, start);
			return true;
		}
	return false;
}

static bool match_frame(struct pc_ctx *cx, Dwarf_Die *var, const struct ls_loc *loc, void *arg)
{
	struct frame_query *q = arg;
	int64_t size, off;
	Dwarf_Die t;
	if (!var_type(var, &t) || (size = ls_type_size(&t)) <= 0 || !frame_offset(cx, loc, size, q->cfa_rel, &off))
		return false;
	*q->out = (struct target){ .var = *var, .obj_type = t, .have_type = true, .off = off, .rule = LS_RULE_FRAME };
	return true;
}

struct reg_query {
	int reg;              /* DWARF number */
	int64_t disp;
	struct target *out;
	Dwarf_Die *out_var;   /* match_entry_value's answer (points into VAR_STORE) */
	Dwarf_Die var_store;
};

static bool die_is_c(Dwarf_Die *die);

/* The pointee of pointer type T (typedefs and qualifiers looked through). */
static bool pointee(Dwarf_Die *t, Dwarf_Die *out, bool *have)
{
	Dwarf_Die s;
	if (!ls_type_strip(t, &s))
		return false;
	int tag = dwarf_tag(&s);
	if (tag != DW_TAG_pointer_type && tag != DW_TAG_reference_type && tag != DW_TAG_rvalue_reference_type)
		return false;
	*have = var_type(&s, out);
	return true;
}

/* A composite variable (DW_OP_piece) one of whose 8-byte pieces is
 * register Q->reg (DW_OP_regN) and holds a pointer member: gcc keeps an
 * inlined Eigen vector's data pointer in a register, its size elsewhere.
 * The target is the member's pointee, named "var.member" as C++ writes it. */
static bool match_register_piece(Dwarf_Die *var, Dwarf_Die *t, const struct ls_loc *loc, struct reg_query *q)
{
	struct ls_loc_piece pieces[64];
	size_t n = ls_loc_pieces(loc->ops, loc->nops, pieces, 64);
	for (size_t i = 0; i < n && i < 64; i++) {
		if (pieces[i].loc.kind != LS_LOC_REG || pieces[i].loc.reg != q->reg || pieces[i].size != 8)
			continue;
		struct ls_field f;
		ls_type_field_path(t, pieces[i].obj_off, 8, die_is_c(var), &f);
		Dwarf_Die leaf = f.leaf_die;
		struct target tg = { .var = *var, .pointer = true, .off = q->disp, .rule = LS_RULE_REGISTER };
		if (f.rest != 0 || f.bitfield || !f.member[0] || !pointee(&leaf, &tg.obj_type, &tg.have_type))
			return false;
		Dwarf_Attribute at;
		const char *name = dwarf_formstring(dwarf_attr_integrate(var, DW_AT_name, &at));
		int room = (int)sizeof tg.name / 2;
		snprintf(tg.name, sizeof tg.name, "%.*s%s%.*s", room, name ? name : "<anon>", f.member[0] == '[' ? "" : ".",
		         room - 2, f.member);
		*q->out = tg;
		return true;
	}
	return false;
}

static bool match_register(struct pc_ctx *cx, Dwarf_Die *var, const struct ls_loc *loc, void *arg)
{
	struct reg_query *q = arg;
	Dwarf_Die t;
	if (loc->kind == LS_LOC_OTHER && var_type(var, &t))
		return match_register_piece(var, &t, loc, q);
	if (loc->reg != q->reg || !var_type(var, &t))
		return false;
	struct target tg = { .var = *var };
	if (loc->kind == LS_LOC_BREG) {
		int64_t size = ls_type_size(&t);
		if (size <= 0 || !within(q->disp, loc->off, size))
			return false;
		tg.obj_type = t;
		tg.have_type = true;
		tg.off = sub64(q->disp, loc->off);
		tg.rule = LS_RULE_REGISTER_MEMORY;
	} else if (loc->kind == LS_LOC_REG || loc->kind == LS_LOC_REG_VALUE) {
		if (!pointee(&t, &tg.obj_type, &tg.have_type))
			return false;
		tg.pointer = true;
		tg.off = sub64(q->disp, loc->kind == LS_LOC_REG_VALUE ? loc->off : 0);
		tg.rule = loc->kind == LS_LOC_REG ? LS_RULE_REGISTER : LS_RULE_REGISTER_VALUE;
	} else {
		return false;
	}
	*q->out = tg;
	return true;
}

/* A variable whose value at the PC is the entry value of register Q->reg:
 * DW_OP_entry_value(DW_OP_regN); DW_OP_stack_value (libdw: the block's
 * length in number, its bytes at number2). */
static bool match_entry_value(struct pc_ctx *cx, Dwarf_Die *var, const struct ls_loc *loc, void *arg)
{
	(void)cx;
	struct reg_query *q = arg;
	const Dwarf_Op *o = loc->ops;
	if (loc->nops != 2 || (o[0].atom != DW_OP_entry_value && o[0].atom != DW_OP_GNU_entry_value) ||
	    o[1].atom != DW_OP_stack_value || o[0].number != 1 || q->reg < 0 || q->reg > 31 ||
	    *(const uint8_t *)(uintptr_t)o[0].number2 != DW_OP_reg0 + q->reg)
		return false;
	q->var_store = *var;
	q->out_var = &q->var_store;
	return true;
}

/* ---- one operand ------------------------------------------------------------------------ */

static bool match_static(const ls_module *m, uint64_t addr, struct target *out)
{
	const struct ls_data_globals *g = module_globals(m);
	const struct global_var *v = g ? global_at(g, addr) : NULL;
	Dwarf_Die die;
	if (!v || !dwarf_offdie(m->dwarf, v->die, &die))
		return false;
	*out = (struct target){ .var = die, .off = (int64_t)(addr - v->addr), .rule = LS_RULE_STATIC };
	out->have_type = var_type(&die, &out->obj_type);
	return true;
}

/* The address dynamic relocation SLOT's relocation puts there (the GOT's
 * R_X86_64_GLOB_DAT or _64: a symbol this module defines; _RELATIVE: its
 * addend), or false: another module's symbol, or no relocation. */
static bool got_target(const ls_module *m, uint64_t slot, uint64_t *out)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(m->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !(sh.sh_flags & SHF_ALLOC) ||
		    !(data = elf_getdata(scn, NULL)) || sh.sh_entsize == 0)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			if (!gelf_getrela(data, (int)i, &r) || r.r_offset != slot)
				continue;
			unsigned type = GELF_R_TYPE(r.r_info);
			if (type == R_X86_64_RELATIVE) {
				*out = (uint64_t)r.r_addend;
				return true;
			}
			GElf_Sym sym;
			Elf_Scn *symscn = elf_getscn(m->elf, sh.sh_link);
			Elf_Data *symdata = symscn ? elf_getdata(symscn, NULL) : NULL;
			if ((type != R_X86_64_GLOB_DAT && type != R_X86_64_64) || !symdata ||
			    !gelf_getsym(symdata, (int)GELF_R_SYM(r.r_info), &sym) || sym.st_shndx == SHN_UNDEF)
				return false;
			*out = sym.st_value + (uint64_t)r.r_addend;
			return true;
		}
	}
	return false;
}

/* Forward: resolve_operand recurs through a load's own operand. */
static bool resolve_operand(const ls_module *m, struct pc_ctx *cx, const struct ls_operand *op, struct target *out,
                            int depth);
static void describe(struct target *tg, unsigned width, struct access_slot *slot);
static void pc_ctx_init(const struct walk *w, uint64_t pc, struct pc_ctx *cx);
static bool proc_param_at_entry(const struct walk *w, int reg, Dwarf_Die *out);
static bool match_origin(const ls_module *m, struct pc_ctx *cx, const struct ls_operand *op, struct target *out,
                         int depth);
static bool match_named(const ls_module *m, struct pc_ctx *cx, const struct ls_operand *op, struct target *out);

/* How many loads register-field-load follows back (s->a->b->c), and how
 * many it resolves for one operand in all (copies of loads on several
 * paths, at each depth: without a bound, LS_REG_ORIGIN_LOADS^4). */
enum { FIELD_LOADS_MAX = 4, FIELD_LOADS_BUDGET = 32 };

/* The pointer instruction LOAD loads (its operand OPI 0) or stores (OPI
 * 1: into a memory operand) is a named variable's field (or the variable
 * itself) of pointer type: its pointee into OUT, the expression
 * ("s->next") as the name. */
static bool field_at(const ls_module *m, const struct pc_ctx *cx, const struct ls_insn *load, int opi,
                     struct target *out, int depth)
{
	struct pc_ctx lcx;
	struct target in;
	if (*cx->loads_left <= 0)
		return false;
	--*cx->loads_left;
	pc_ctx_init(cx->w, load->addr, &lcx);
	lcx.loads_left = cx->loads_left;
	bool ok = resolve_operand(m, &lcx, &load->op[opi], &in, depth + 1) && in.have_type;
	free(lcx.scopes);
	if (!ok)
		return false;
	struct access_slot *inner = ls_xcalloc(1, sizeof *inner);
	describe(&in, 8, inner);
	struct ls_field f;
	int64_t size = ls_type_size(&in.obj_type), off = in.off;
	if (in.pointer && size > 0 && (off < 0 || off >= size))
		off = ((off % size) + size) % size; /* as describe() does: an element of the array */
	ls_type_field_path(&in.obj_type, off, 8, true, &f);
	Dwarf_Die leaf = f.leaf_die;
	*out = (struct target){ .var = in.var, .pointer = true };
	ok = f.rest == 0 && !f.bitfield && pointee(&leaf, &out->obj_type, &out->have_type);
	/* "*p" loaded: (*p)->x, as C would write it (a base class's members
	 * unqualified, as source writes them: Eigen's paths run to kilobytes) */
	bool paren = inner->source[0] == '*';
	int room = (int)sizeof out->name - 3;
	snprintf(out->name, sizeof out->name, "%s%.*s%s", paren ? "(" : "", room, inner->source, paren ? ")" : "");
	free(inner);
	return ok;
}

/* The pointer LOAD loads (a memory operand of the CFG's instruction) is
 * a named variable's field (or the variable itself) of pointer type:
 * its pointee into OUT, the loading expression ("s->next") as the name. */
static bool field_load(const ls_module *m, const struct pc_ctx *cx, const struct ls_insn *load, struct target *out,
                       int depth)
{
	return field_at(m, cx, load, 0, out, depth);
}

/* ---- spill slots ---------------------------------------------------------------------- */

/* OP's address as an offset from the CFA at PC, if it is a frame slot
 * (SP-relative, or BP-relative with BP the frame pointer; no index). */
static bool frame_slot_at(const ls_module *m, uint64_t pc, const struct ls_operand *op, int64_t *cfa_rel)
{
	ls_unwind_recipe r;
	ls_error err;
	if (op->kind != LS_OP_MEM || op->seg || op->index >= 0 || (op->base != 4 && op->base != 5) ||
	    ls_unwind_recipe_at(m, pc, &r, &err) != 0)
		return false;
	if (op->base == 4 && r.sp_known)
		return *cfa_rel = add64(r.sp_offset, op->disp), true;
	if (op->base == 5 && r.frame_pointer)
		return *cfa_rel = add64(r.fp_offset, op->disp), true;
	return false;
}

static bool slot_of(void *arg, const struct ls_insn *in, const struct ls_operand *mem, bool reload, int64_t *cfa_rel);

/* A base register no variable is in: what every path here loads it with
 * (reg_origin.c): a static address (register-static), a pointer from a
 * variable's field (register-field-load), or the procedure's entry value
 * of a parameter's register (register-entry-value). */
static bool match_register_origin(const ls_module *m, struct pc_ctx *cx, const struct ls_operand *op,
                                  struct target *out, int depth)
{
	const struct ls_cfg *cfg = cx->cfg;
	if (!cfg || op->base < 0 || op->base >= 16)
		return false;
	int budget = FIELD_LOADS_BUDGET;
	if (!cx->loads_left)
		cx->loads_left = &budget; /* the operand's own context: reset below */
	bool ok = match_origin(m, cx, op, out, depth);
	if (!ok && depth == 0) {
		budget = FIELD_LOADS_BUDGET; /* the ends' loads: a budget of their own */
		ok = match_named(m, cx, op, out);
	}
	if (cx->loads_left == &budget)
		cx->loads_left = NULL;
	return ok;
}

/* Whether type T, typedefs and qualifiers looked through, is a base type
 * or an array of them (of arrays of them). */
static bool base_elements(Dwarf_Die *t)
{
	Dwarf_Die s;
	for (int i = 0; i < 8 && ls_type_strip(t, &s); i++) {
		if (dwarf_tag(&s) == DW_TAG_base_type)
			return true;
		if (dwarf_tag(&s) != DW_TAG_array_type || !var_type(&s, t))
			return false;
	}
	return false;
}

/* register-stepped: OUT, a pointer with a step of unknown count on the
 * way, reaches an element of the array it points into, if its pointee is
 * made of base types (no field to get wrong, as sum_grid's struct pointer
 * stepped by a constant did): the element's type, and the operand's
 * offset within one element. */
static bool stepped_element(struct target *out)
{
	Dwarf_Die t = out->obj_type;
	int64_t size = out->have_type ? ls_type_size(&t) : 0;
	if (!out->pointer || size <= 0 || !base_elements(&t))
		return false;
	out->off = ((out->off % size) + size) % size;
	out->element = true;
	out->rule = LS_RULE_REGISTER_STEPPED;
	return true;
}

static bool match_origin(const ls_module *m, struct pc_ctx *cx, const struct ls_operand *op, struct target *out,
                         int depth)
{
	const struct ls_cfg *cfg = cx->cfg;
	size_t i = LS_FIRST_ABOVE(cfg->insns, cfg->ninsns, addr, cx->pc);
	struct ls_reg_origin origin;
	struct ls_slot_env env = { slot_of, (void *)cx->w };
	if (i == 0 || cfg->insns[i - 1].addr != cx->pc || !ls_reg_origin_env(cfg, (uint32_t)(i - 1), op->base, &env, &origin))
		return false;
	uint64_t base = origin.addr;
	int64_t off = add64(origin.add, op->disp);
	bool is_static = origin.kind == LS_ORIGIN_STATIC ||
	                 (origin.kind == LS_ORIGIN_LOAD && origin.slot && got_target(m, origin.addr, &base));
	if (is_static) {
		if (origin.reg_stepped || !match_static(m, base + (uint64_t)off, out))
			return false;
		out->rule = LS_RULE_REGISTER_STATIC;
	} else if (origin.kind == LS_ORIGIN_LOAD) {
		if (depth >= FIELD_LOADS_MAX || !field_load(m, cx, &cfg->insns[origin.load[0]], out, depth))
			return false;
		/* copies of the load on other paths (tail duplication) must read
		 * the same field of the same variable */
		for (unsigned k = 1; k < origin.nloads; k++) {
			struct target other;
			if (!field_load(m, cx, &cfg->insns[origin.load[k]], &other, depth) || strcmp(other.name, out->name) != 0 ||
			    other.have_type != out->have_type ||
			    (out->have_type && dwarf_dieoffset(&other.obj_type) != dwarf_dieoffset(&out->obj_type)))
				return false;
		}
		out->off = off;
		out->rule = LS_RULE_REGISTER_FIELD_LOAD;
	} else {
		Dwarf_Die param, t;
		struct reg_query q = { .reg = dwarf_reg(origin.entry_reg) };
		if (!each_variable(cx, match_entry_value, &q) && !proc_param_at_entry(cx->w, q.reg, &param))
			return false;
		if (q.out_var)
			param = *q.out_var;
		if (!var_type(&param, &t))
			return false;
		*out = (struct target){ .var = param, .pointer = true, .off = off, .rule = LS_RULE_REGISTER_ENTRY_VALUE };
		if (!pointee(&t, &out->obj_type, &out->have_type))
			return false;
	}
	out->indexed = origin.indexed;
	/* a pointer stepped through a loaded or entry pointer's object: where
	 * in it is not known (the step may come before the use), unless every
	 * place in it is one of its elements, of a base type */
	return !origin.stepped || is_static || stepped_element(out);
}

/* Which rule's variable memory operand OP reaches, if any (DEPTH: how many
 * loads register-field-load has followed to get here). */
static bool resolve_operand(const ls_module *m, struct pc_ctx *cx, const struct ls_operand *op, struct target *out,
                            int depth)
{
	if (op->seg)
		return false; /* %fs:0x28: thread-local, not a variable DWARF places */
	if (op->base == LS_REG_RIP || op->base < 0)
		return match_static(m, (uint64_t)op->disp, out);
	const ls_unwind_recipe *r = &cx->recipe;
	if (op->base == 4 && cx->have_recipe && r->sp_known) {
		struct frame_query q = { add64(r->sp_offset, op->disp), out };
		return each_variable(cx, match_frame, &q);
	}
	if (op->base == 5 && cx->have_recipe && r->frame_pointer) {
		struct frame_query q = { add64(r->fp_offset, op->disp), out };
		return each_variable(cx, match_frame, &q);
	}
	struct reg_query q = { .reg = dwarf_reg(op->base), .disp = op->disp, .out = out };
	if (q.reg >= 0 && each_variable(cx, match_register, &q))
		return true;
	return match_register_origin(m, cx, op, out, depth);
}

static bool die_is_c(Dwarf_Die *die)
{
	Dwarf_Die cu;
	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return false;
	int lang = dwarf_srclang(&cu);
	return lang == DW_LANG_C || lang == DW_LANG_C89 || lang == DW_LANG_C99 || lang == DW_LANG_C11 ||
	       lang == 0x2c /* DW_LANG_C17 */;
}

/* The type of what is at offset 0, without its cv-qualifiers. */
static Dwarf_Off object_type_name(struct target *tg, bool c_lang, char *buf, size_t len)
{
	Dwarf_Die t = tg->obj_type;
	for (int i = 0; i < 8; i++) {
		int tag = dwarf_tag(&t);
		if (tag != DW_TAG_const_type && tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type)
			break;
		if (!var_type(&t, &t)) {
			snprintf(buf, len, "void");
			return 0;
		}
	}
	ls_type_name(&t, c_lang, buf, len);
	return dwarf_dieoffset(&t);
}

/* Fills SLOT's variable, type, field and expression from TG. */
static void describe(struct target *tg, unsigned width, struct access_slot *slot)
{
	ls_access *a = &slot->a;
	bool c_lang = die_is_c(&tg->var);
	Dwarf_Attribute at;
	const char *name = tg->name[0] ? tg->name : dwarf_formstring(dwarf_attr_integrate(&tg->var, DW_AT_name, &at));
	snprintf(slot->variable, sizeof slot->variable, "%s", name ? name : "<anon>");
	a->variable = slot->variable;
	a->rule = tg->rule;
	a->offset = tg->off;
	if (!tg->have_type) {
		snprintf(slot->type, sizeof slot->type, "void");
		a->type = slot->type;
		snprintf(slot->expr, sizeof slot->expr, "%s%s", tg->pointer ? "*" : "", slot->variable);
		snprintf(slot->source, sizeof slot->source, "%s", slot->expr);
		a->expr = slot->expr;
		return;
	}
	slot->type_die = object_type_name(tg, c_lang, slot->type, sizeof slot->type);
	slot->c_lang = c_lang;
	a->type = slot->type;
	int64_t off = tg->off, size = ls_type_size(&tg->obj_type);
	struct ls_field f;
	char prefix[4] = "";
	if (tg->pointer && size > 0 && (tg->element || off < 0 || off >= size)) {
		/* beyond the pointee: an element of the array it points into */
		off = ((off % size) + size) % size;
		snprintf(prefix, sizeof prefix, "[]");
	}
	ls_type_field_path(&tg->obj_type, off, width, c_lang, &f);
	snprintf(slot->field, sizeof slot->field, "%s%s%s", prefix, prefix[0] && f.path[0] && f.path[0] != '[' ? "." : "", f.path);
	snprintf(slot->leaf, sizeof slot->leaf, "%s", f.leaf);
	a->field = slot->field;
	a->field_type = slot->leaf;
	a->bitfield = f.bitfield;
	const char *sep = slot->field[0] == 0 || slot->field[0] == '[' ? "" : tg->pointer ? "->" : ".";
	snprintf(slot->expr, sizeof slot->expr, "%s%s%s%s", tg->pointer && slot->field[0] == 0 ? "*" : "", slot->variable,
	         sep, slot->field);
	a->expr = slot->expr;
	char member[LS_FIELD_PATH_MAX + 8];
	snprintf(member, sizeof member, "%s%s%s", prefix, prefix[0] && f.member[0] && f.member[0] != '[' ? "." : "",
	         f.member);
	sep = member[0] == 0 || member[0] == '[' ? "" : tg->pointer ? "->" : ".";
	snprintf(slot->source, sizeof slot->source, "%s%s%s%s", tg->pointer && member[0] == 0 ? "*" : "", slot->variable,
	         sep, member);
}

/* ---- a procedure ------------------------------------------------------------------------------ */

/* The subprogram DIE below DIE whose code holds PC (into namespaces and
 * classes, where C++ puts some), or false. */
static bool find_subprogram(Dwarf_Die *die, uint64_t pc, Dwarf_Die *out, int depth)
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
		    find_subprogram(&c, pc, out, depth + 1))
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* The concrete scopes holding PC, innermost first, down from the
 * subprogram SUB.  Not dwarf_getscopes: past an inlined call it goes on in
 * the callee's abstract definition, and the caller's variables, which are
 * there in registers, would be out of sight. */
static int concrete_scopes(Dwarf_Die *sub, uint64_t pc, Dwarf_Die **out)
{
	enum { MAX = 64 };
	Dwarf_Die chain[MAX];
	int n = 0;
	chain[n++] = *sub;
	for (bool deeper = true; deeper && n < MAX;) {
		deeper = false;
		Dwarf_Die c;
		if (dwarf_child(&chain[n - 1], &c) != 0)
			break;
		do {
			int tag = dwarf_tag(&c);
			if ((tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) && dwarf_haspc(&c, pc) == 1) {
				chain[n++] = c;
				deeper = true;
				break;
			}
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	*out = ls_xmalloc(n * sizeof **out);
	for (int i = 0; i < n; i++)
		(*out)[i] = chain[n - 1 - i];
	return n;
}

/* The subprogram DIE of the procedure at ENTRY: in the CU .debug_aranges
 * names, else in the first CU whose ranges hold it (clang writes no
 * .debug_aranges). */
static bool proc_subprogram(const ls_module *m, uint64_t entry, Dwarf_Die *out)
{
	Dwarf_Die cu;
	if (!m->dwarf)
		return false;
	/* The inline tree, when the analysis read it, knows the subprogram's
	 * DIE: no walk of a whole CU (Eigen's are large: 14% of -s type). */
	const struct ls_inl_node *n = m->inl.nsegs ? ls_inline_find(&m->inl, entry) : NULL;
	while (n && n->parent)
		n = n->parent;
	if (n && n->kind == LS_INL_SUBPROGRAM && dwarf_offdie(m->dwarf, n->die, out) &&
	    dwarf_tag(out) == DW_TAG_subprogram && dwarf_haspc(out, entry) == 1)
		return true;
	if (dwarf_addrdie(m->dwarf, entry, &cu) && find_subprogram(&cu, entry, out, 0))
		return true;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(m->dwarf, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(m->dwarf, off + hsize, &cu) && dwarf_haspc(&cu, entry) == 1 &&
		    find_subprogram(&cu, entry, out, 0))
			return true;
		off = next;
	}
	return false;
}

/* One procedure's walk: what every instruction's accesses read. */
struct walk {
	const ls_module *m;
	Dwarf_Die *sub;            /* its subprogram DIE, or NULL */
	const struct ls_cfg *cfg;  /* its CFG, or NULL */
	struct ls_decoder *dec;
	struct ls_accesses *acc;
	struct ls_reg_names **names; /* register-named-value's index, built on its first use */
};

/* Whether the procedure takes the address of the frame slot at CFA_REL
 * (a lea of it, or of anything within 8 bytes of it below: an object the
 * slot may be part of is as far as this looks). */
static bool slot_address_taken(const struct walk *w, int64_t cfa_rel)
{
	const struct ls_cfg *cfg = w->cfg;
	for (size_t i = 0; i < cfg->ninsns; i++) {
		const struct ls_insn *in = &cfg->insns[i];
		int64_t at;
		if (in->opcode == LS_MN_LEA && in->nops == 2 && frame_slot_at(w->m, in->addr, &in->op[0], &at) &&
		    at <= cfa_rel && cfa_rel - at < 64)
			return true;
	}
	return false;
}

/* reg_origin.c's naming of frame slots (struct ls_slot_env): through the
 * unwind recipes; a reload's slot must be no variable's and never have
 * its address taken. */
static bool slot_of(void *arg, const struct ls_insn *in, const struct ls_operand *mem, bool reload, int64_t *cfa_rel)
{
	const struct walk *w = arg;
	if (!frame_slot_at(w->m, in->addr, mem, cfa_rel))
		return false;
	if (!reload)
		return true;
	struct pc_ctx cx;
	struct target tg;
	struct frame_query q = { *cfa_rel, &tg };
	pc_ctx_init(w, in->addr, &cx);
	bool var = each_variable(&cx, match_frame, &q);
	free(cx.scopes);
	return !var && !slot_address_taken(w, *cfa_rel);
}

/* The procedure's own parameter whose location at its entry is DWARF
 * register REG (DW_OP_regN): whose entry value the register holds.  Later
 * its list may have ended, moved elsewhere, or say DW_OP_entry_value. */
static bool proc_param_at_entry(const struct walk *w, int reg, Dwarf_Die *out)
{
	Dwarf_Die c;
	if (!w->sub || reg < 0 || dwarf_child(w->sub, &c) != 0)
		return false;
	do {
		Dwarf_Attribute a;
		struct ls_loc loc;
		if (dwarf_tag(&c) == DW_TAG_formal_parameter && dwarf_attr(&c, DW_AT_location, &a) &&
		    ls_loc_at(&a, w->acc->proc, &loc) && loc.kind == LS_LOC_REG && loc.reg == reg) {
			*out = c;
			return true;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

static void pc_ctx_init(const struct walk *w, uint64_t pc, struct pc_ctx *cx)
{
	memset(cx, 0, sizeof *cx);
	cx->pc = pc;
	cx->frame_base.kind = LS_LOC_NONE;
	cx->cfg = w->cfg;
	cx->w = w;
	ls_error err;
	cx->have_recipe = ls_unwind_recipe_at(w->m, pc, &cx->recipe, &err) == 0;
	if (!w->sub || dwarf_haspc(w->sub, pc) != 1)
		return;
	cx->nscopes = concrete_scopes(w->sub, pc, &cx->scopes);
	Dwarf_Attribute a;
	if (dwarf_attr(w->sub, DW_AT_frame_base, &a))
		ls_loc_at(&a, pc, &cx->frame_base);
}

/* ---- register-named-value ------------------------------------------------------------ */

struct named_arg {
	const struct walk *w;
	const struct pc_ctx *use;  /* the operand's PC */
	int64_t disp;              /* the operand's */
};

/* The variable DWARF names in register REG (decode.h's) at the PC of the
 * CFG's instruction INSN, before it runs, as the register rule names it
 * for an operand DISP(%REG) there; only a variable of the scopes at the
 * operand's own PC: one a reader of the source sees there, whose location
 * list ended while its value lived on (not an inlined helper's parameter,
 * elsewhere, that saw the same pointer: std::fill_n's __first, the
 * allocator's result). */
static bool named_target(const struct named_arg *a, uint32_t insn, int reg, struct target *out)
{
	const struct walk *w = a->w;
	if (!*w->names)
		*w->names = ls_reg_names_build(w->sub, w->cfg);
	if (!ls_reg_names_may(*w->names, insn, reg))
		return false;
	size_t n;
	const struct ls_reg_name *names = ls_reg_names_at(*w->names, insn, &n);
	struct pc_ctx cx = *a->use;
	cx.pc = w->cfg->insns[insn].addr; /* the locations there, of the variables in scope at the use */
	struct reg_query q = { .reg = dwarf_reg(reg), .disp = a->disp, .out = out };
	/* as each_variable would, innermost scope first, over the variables
	 * whose locations there use the register only */
	for (int i = 0; i < cx.nscopes; i++) {
		Dwarf_Off scope = dwarf_dieoffset(&cx.scopes[i]);
		for (size_t k = 0; k < n; k++) {
			Dwarf_Die var;
			Dwarf_Attribute at;
			struct ls_loc loc;
			if (names[k].scope == scope && (names[k].regs & (1u << reg)) &&
			    dwarf_offdie(w->m->dwarf, names[k].var, &var) && dwarf_attr(&var, DW_AT_location, &at) &&
			    ls_loc_at(&at, cx.pc, &loc) && match_register(&cx, &var, &loc, &q))
				return true;
		}
	}
	return false;
}

static bool named_at(void *arg, uint32_t insn, int reg)
{
	struct target tg;
	return named_target(arg, insn, reg, &tg);
}

/* The allocation functions whose result is a fresh heap block, by linkage
 * name (a PLT slot's symbol, or the callee's own symbol): C's, glibc's and
 * C++'s operator new (plain, nothrow, aligned).  posix_memalign is not
 * among them: its block comes back through memory, not %rax. */
static bool is_allocator(const char *name)
{
	static const char *const names[] = {
		"malloc", "calloc", "realloc", "reallocarray", "aligned_alloc", "memalign", "valloc", "pvalloc",
		"strdup", "strndup", "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
		"_ZnwmSt11align_val_t", "_ZnamSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t",
		"_ZnamSt11align_val_tRKSt9nothrow_t",
	};
	size_t len = strcspn(name, "@"); /* malloc@GLIBC_2.2.5 */
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strlen(names[i]) == len && strncmp(name, names[i], len) == 0)
			return true;
	return false;
}

static bool alloc_call(void *arg, uint32_t insn)
{
	const struct named_arg *a = arg;
	uint64_t target = a->w->cfg->insns[insn].target;
	const char *name, *names[8];
	if (!target)
		return false;
	if (ls_plt_slot_name(a->w->m, target, &name) == 1)
		return is_allocator(name);
	size_t n = ls_module_names_at(a->w->m, target, names, 8);
	for (size_t i = 0; i < n && i < 8; i++)
		if (is_allocator(names[i]))
			return true;
	return false;
}

/* Whether INSN zeroes its destination register: xor or sub of itself, or
 * mov $0 (re-decoded for its mnemonic: decode.h has no xor). */
static bool zeroes(void *arg, uint32_t insn)
{
	const struct named_arg *a = arg;
	const struct ls_insn *in = &a->w->cfg->insns[insn];
	const struct ls_operand *src = &in->op[0], *dst = &in->op[1];
	if (in->nops != 2 || dst->kind != LS_OP_REG || dst->reg < 0 || dst->reg >= 16 || (dst->size != 4 && dst->size != 8))
		return false;
	if (in->opcode == LS_MN_MOV)
		return src->kind == LS_OP_IMM && src->imm == 0;
	if (src->kind != LS_OP_REG || src->reg != dst->reg || src->size != dst->size)
		return false;
	if (in->opcode == LS_MN_SUB)
		return true;
	const struct ls_text *t = ls_text_find(a->w->m, in->addr);
	struct ls_insn d;
	if (!t || !ls_decode(a->w->dec, t->data + (in->addr - t->addr), t->addr + t->size - in->addr, in->addr, &d))
		return false;
	const char *mn = ls_decoder_mnemonic(a->w->dec);
	return strcmp(mn, "xor") == 0 || strcmp(mn, "xorl") == 0 || strcmp(mn, "xorq") == 0;
}

/* End K of RN as a target for operand OP. */
static bool named_end(const ls_module *m, struct pc_ctx *cx, const struct ls_operand *op, const struct ls_reg_named *rn,
                      unsigned k, struct target *out)
{
	const struct ls_insn *in = &cx->cfg->insns[rn->end[k].insn];
	struct named_arg arg = { cx->w, cx, op->disp };
	if (rn->end[k].kind == LS_NAMED_AT)
		return named_target(&arg, rn->end[k].insn, rn->end[k].reg, out);
	if (!field_at(m, cx, in, rn->end[k].kind == LS_NAMED_STORE ? 1 : 0, out, 0))
		return false;
	out->off = op->disp;
	return true;
}

static const char *target_name(struct target *t)
{
	Dwarf_Attribute at;
	const char *name = t->name[0] ? t->name : dwarf_formstring(dwarf_attr_integrate(&t->var, DW_AT_name, &at));
	return name ? name : "";
}

static bool same_target(struct target *a, struct target *b)
{
	return strcmp(target_name(a), target_name(b)) == 0 && a->have_type == b->have_type && a->pointer == b->pointer &&
	       a->off == b->off && (!a->have_type || dwarf_dieoffset(&a->obj_type) == dwarf_dieoffset(&b->obj_type));
}

/* register-named-value (reg_origin.h's ls_reg_origin_named): every path's
 * value is one DWARF names elsewhere, all one variable's one field. */
static bool match_named(const ls_module *m, struct pc_ctx *cx, const struct ls_operand *op, struct target *out)
{
	const struct ls_cfg *cfg = cx->cfg;
	size_t i = LS_FIRST_ABOVE(cfg->insns, cfg->ninsns, addr, cx->pc);
	struct named_arg arg = { cx->w, cx, op->disp };
	struct ls_slot_env slots = { slot_of, (void *)cx->w };
	struct ls_name_env env = { named_at, alloc_call, zeroes, &arg };
	struct ls_reg_named rn;
	if (!cx->w || i == 0 || cfg->insns[i - 1].addr != cx->pc ||
	    !ls_reg_origin_named(cfg, (uint32_t)(i - 1), op->base, &slots, &env, &rn) || !named_end(m, cx, op, &rn, 0, out))
		return false;
	for (unsigned k = 1; k < rn.nends; k++) {
		struct target other;
		if (!named_end(m, cx, op, &rn, k, &other) || !same_target(out, &other))
			return false;
	}
	out->rule = LS_RULE_REGISTER_NAMED_VALUE;
	out->indexed |= rn.stepped;
	return !rn.stepped || stepped_element(out); /* a step after the name: as register-stepped */
}

static struct access_slot *new_slot(struct ls_accesses *acc)
{
	acc->v = ls_grow(acc->v, &acc->cap, acc->n + 1, sizeof *acc->v);
	struct access_slot *s = &acc->v[acc->n++];
	memset(s, 0, sizeof *s);
	return s;
}

/* The accesses of the instruction INSN (mnemonic MN). */
static void insn_accesses(const struct walk *w, const struct ls_insn *insn, const char *mn)
{
	if (insn->opcode == LS_MN_LEA || insn->opcode == LS_MN_NOP || insn->opcode == LS_MN_ENDBR ||
	    strncmp(mn, "prefetch", 8) == 0 || strncmp(mn, "clflush", 7) == 0)
		return; /* an address computed, not memory reached */
	struct pc_ctx cx;
	bool ready = false;
	for (int i = 0; i < insn->nops && i < 3; i++) {
		const struct ls_operand *op = &insn->op[i];
		if (op->kind != LS_OP_MEM)
			continue;
		if (!ready) {
			pc_ctx_init(w, insn->addr, &cx);
			ready = true;
		}
		struct access_slot *slot = new_slot(w->acc);
		ls_access *a = &slot->a;
		a->addr = insn->addr;
		a->len = insn->len;
		a->operand_index = i;
		a->kind = access_kind(insn, i, mn);
		a->width = access_width(insn, i, mn);
		a->indexed = op->index >= 0;
		format_operand(op, slot->operand, sizeof slot->operand);
		struct target tg;
		if (resolve_operand(w->m, &cx, op, &tg, 0)) {
			describe(&tg, a->width, slot);
			a->indexed |= tg.indexed;
		}
	}
	if (ready)
		free(cx.scopes);
}

/* The string pointers, once the array has stopped moving. */
static void point_strings(struct ls_accesses *acc)
{
	for (size_t i = 0; i < acc->n; i++) {
		struct access_slot *s = &acc->v[i];
		s->a.operand = s->operand;
		if (!s->a.rule)
			continue;
		s->a.variable = s->variable;
		s->a.type = s->type;
		s->a.field = s->field;
		s->a.field_type = s->leaf[0] ? s->leaf : s->type;
		s->a.expr = s->expr;
	}
}

static void range_accesses(const struct walk *w, ls_range r)
{
	const struct ls_text *t = ls_text_find(w->m, r.lo);
	if (!t)
		return;
	uint64_t end = r.hi < t->addr + t->size ? r.hi : t->addr + t->size;
	for (uint64_t pc = r.lo; pc < end;) {
		struct ls_insn insn;
		size_t n = ls_decode(w->dec, t->data + (pc - t->addr), end - pc, pc, &insn);
		if (n == 0) {
			pc++;
			continue;
		}
		char mn[32]; /* register-named-value may decode again (zeroes) */
		snprintf(mn, sizeof mn, "%s", ls_decoder_mnemonic(w->dec));
		insn_accesses(w, &insn, mn);
		pc += n;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static ls_accesses *proc_accesses(const ls_module *m, const ls_scope *proc, ls_error *err)
{
	struct ls_decoder *d = ls_decoder_new(m->ehdr.e_machine);
	if (!d) {
		ls_set_error(err, LS_ERR_UNSUPPORTED, "%s: the accesses need x86-64 code", m->path);
		return NULL;
	}
	module_globals(m); /* reads the DWARF too */
	struct ls_accesses *acc = ls_xcalloc(1, sizeof *acc);
	acc->proc = ls_scope_low(proc);
	acc->m = m;
	Dwarf_Die sub;
	/* The CFG as the unwind recipes build it: alone, every call returning. */
	struct ls_proc lp = { .name = proc->name, .linkage_name = proc->linkage_name, .ranges = proc->ranges,
	                      .nranges = proc->nranges, .entry = acc->proc };
	struct ls_cfg cfg;
	struct ls_cfg_env env = { .m = m, .dec = d };
	bool have_cfg = proc->nranges && ls_cfg_build_alone(&env, &lp, &cfg) == 0;
	struct ls_reg_names *names = NULL;
	struct walk w = { m, proc_subprogram(m, acc->proc, &sub) ? &sub : NULL, have_cfg ? &cfg : NULL, d, acc, &names };
	for (size_t i = 0; i < ls_scope_nranges(proc); i++)
		range_accesses(&w, ls_scope_range(proc, i));
	ls_reg_names_free(names);
	if (have_cfg) {
		acc->blocks = ls_xmalloc((cfg.nblocks + 1) * sizeof *acc->blocks);
		for (size_t i = 0; i < cfg.nblocks; i++)
			acc->blocks[i] = cfg.blocks[i].start;
		acc->nblocks = cfg.nblocks;
		qsort(acc->blocks, acc->nblocks, sizeof *acc->blocks, cmp_u64);
		ls_cfg_free(&cfg);
	}
	ls_decoder_free(d);
	point_strings(acc);
	return acc;
}

/* ---- interface ---------------------------------------------------------------------------------- */

ls_accesses *ls_accesses_of(const ls_module *m, uint64_t addr, ls_error *err)
{
	const ls_scope *proc = ls_lookup_proc(m, addr);
	if (!proc) {
		ls_set_error(err, LS_ERR_NOT_FOUND, "%s: no procedure holds 0x%" PRIx64, m->path, addr);
		return NULL;
	}
	if (!m->dwarf_found) {
		ls_set_error(err, LS_ERR_DWARF, "%s: no debug information: the accesses need DWARF", m->path);
		return NULL;
	}
	struct ls_oom_guard guard;
	ls_oom_push(&guard);
	if (setjmp(guard.env)) {
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory reading the accesses", m->path);
		return NULL;
	}
	/* The directory's index of the procedure: where the cache keeps its
	 * accesses (none without the cache). */
	size_t i;
	uint64_t low = ls_scope_low(proc);
	bool cached = m->cache_acc && ls_analysis_owner(m, addr, &i);
	ls_accesses *acc = cached ? ls_cache_load_accesses(m, i, &low) : NULL;
	if (acc) {
		ls_oom_pop(&guard);
		return acc;
	}
	double t0 = ls_stage_clock();
	acc = proc_accesses(m, proc, err);
	if (acc && m->dwarf && cached)
		ls_cache_keep_accesses(m, i, acc, ls_stage_clock() - t0);
	ls_oom_pop(&guard);
	if (acc && !m->dwarf) {
		ls_accesses_free(acc);
		ls_set_error(err, LS_ERR_DWARF, "%s: cannot read the debug information the accesses need", m->path);
		return NULL;
	}
	return acc;
}

size_t ls_accesses_count(const ls_accesses *a) { return a ? a->n : 0; }
uint64_t ls_accesses_proc(const ls_accesses *a) { return a ? a->proc : 0; }

const ls_access *ls_accesses_get(const ls_accesses *a, size_t i)
{
	return a && i < a->n ? &a->v[i].a : NULL;
}

size_t ls_accesses_at(const ls_accesses *a, uint64_t addr, size_t *first)
{
	size_t n = 0;
	for (size_t i = 0; a && i < a->n; i++)
		if (a->v[i].a.addr == addr) {
			if (n++ == 0 && first)
				*first = i;
		}
	return n;
}

uint64_t ls_accesses_block_of(const ls_accesses *a, uint64_t addr)
{
	if (!a || !a->nblocks)
		return 0;
	size_t lo = 0, hi = a->nblocks; /* the first start above ADDR */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->blocks[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? a->blocks[lo - 1] : 0;
}

const ls_access *ls_accesses_before(const ls_accesses *a, uint64_t addr)
{
	uint64_t block = ls_accesses_block_of(a, addr);
	const ls_access *best = NULL;
	for (size_t i = 0; block && i < a->n; i++) {
		const ls_access *x = &a->v[i].a;
		if (x->addr < addr && x->addr >= block && (!best || x->addr >= best->addr))
			best = x;
	}
	return best;
}

void ls_accesses_free(ls_accesses *a)
{
	if (!a)
		return;
	free(a->blocks);
	free(a->v);
	free(a->strings);
	free(a);
}

/* ---- for the cache ------------------------------------------------------------------------------ */

uint64_t ls_accesses_type_die(const ls_accesses *set, size_t i, bool *c_lang)
{
	*c_lang = set->v[i].c_lang;
	return set->v[i].type_die;
}

size_t ls_accesses_blocks(const ls_accesses *set, const uint64_t **blocks)
{
	*blocks = set->blocks;
	return set->nblocks;
}

ls_accesses *ls_accesses_new(const ls_module *m, uint64_t proc, char *strings, uint64_t *blocks, size_t nblocks)
{
	struct ls_accesses *acc = ls_xcalloc(1, sizeof *acc);
	acc->m = m;
	acc->proc = proc;
	acc->strings = strings;
	acc->blocks = blocks;
	acc->nblocks = nblocks;
	return acc;
}

void ls_accesses_add(ls_accesses *set, const ls_access *a, uint64_t type_die, bool c_lang)
{
	struct access_slot *s = new_slot(set);
	s->a = *a; /* its strings are the set's (ls_accesses_new) */
	s->type_die = (Dwarf_Off)type_die;
	s->c_lang = c_lang;
}

const char *ls_access_kind_name(ls_access_kind k)
{
	switch (k) {
	case LS_ACCESS_LOAD: return "load";
	case LS_ACCESS_STORE: return "store";
	case LS_ACCESS_BOTH: return "load+store";
	}
	return "?";
}

const char *ls_access_rule_name(ls_access_rule r)
{
	switch (r) {
	case LS_RULE_NONE: return "none";
	case LS_RULE_STATIC: return "static";
	case LS_RULE_FRAME: return "frame";
	case LS_RULE_REGISTER: return "register";
	case LS_RULE_REGISTER_VALUE: return "register-value";
	case LS_RULE_REGISTER_MEMORY: return "register-memory";
	case LS_RULE_REGISTER_STATIC: return "register-static";
	case LS_RULE_REGISTER_FIELD_LOAD: return "register-field-load";
	case LS_RULE_REGISTER_ENTRY_VALUE: return "register-entry-value";
	case LS_RULE_REGISTER_NAMED_VALUE: return "register-named-value";
	case LS_RULE_REGISTER_STEPPED: return "register-stepped";
	}
	return "?";
}

/* ---- a type's layout ------------------------------------------------------------------------ */

struct ls_type_layout {
	ls_type_member *v;
	size_t n, cap;
};

static void add_member(void *arg, const char *name, const char *type, int64_t off, int64_t size, int depth)
{
	struct ls_type_layout *l = arg;
	l->v = ls_grow(l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n++] = (ls_type_member){ ls_xstrdup(name), ls_xstrdup(type), off, size, (unsigned)depth };
}

ls_type_layout *ls_accesses_layout(const ls_accesses *set, const ls_access *a, ls_error *err)
{
	const struct access_slot *slot = (const struct access_slot *)a; /* a is its slot's first member */
	if (!set || !a || a < &set->v[0].a || a > &set->v[set->n - 1].a || !slot->type_die) {
		ls_set_error(err, LS_ERR_NOT_FOUND, "%s: the access has no type", set ? set->m->path : "(none)");
		return NULL;
	}
	struct ls_type_layout *volatile l = NULL; /* set after setjmp */
	struct ls_oom_guard guard;
	ls_oom_push(&guard);
	/* a set from the cache: the DWARF not read yet (the type's DIE is all
	 * the layout reads: not the indexes nor the statics) */
	if (!set->m->dwarf && set->m->dwarf_found && !set->m->dwarf_tried) {
		if (setjmp(guard.env)) {
			ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory reading a type's layout", set->m->path);
			return NULL;
		}
		module_dwarf(set->m);
	}
	pthread_mutex_lock(&data_lock);
	if (setjmp(guard.env)) {
		pthread_mutex_unlock(&data_lock);
		ls_type_layout_free(l);
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory reading a type's layout", set->m->path);
		return NULL;
	}
	Dwarf_Die t;
	if (set->m->dwarf && dwarf_offdie(set->m->dwarf, slot->type_die, &t)) {
		l = ls_xcalloc(1, sizeof *l);
		ls_type_members(&t, slot->c_lang, add_member, l);
	}
	pthread_mutex_unlock(&data_lock);
	ls_oom_pop(&guard);
	if (!l)
		ls_set_error(err, LS_ERR_DWARF, "%s: cannot read the type %s", set->m->path, a->type);
	return l;
}

size_t ls_type_layout_count(const ls_type_layout *l) { return l ? l->n : 0; }

const ls_type_member *ls_type_layout_get(const ls_type_layout *l, size_t i)
{
	return l && i < l->n ? &l->v[i] : NULL;
}

void ls_type_layout_free(ls_type_layout *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free((char *)l->v[i].name);
		free((char *)l->v[i].type);
	}
	free(l->v);
	free(l);
}

/* ---- a data address ------------------------------------------------------------------------- */

ls_accesses *ls_data_static_at(const ls_module *m, uint64_t addr, ls_error *err)
{
	if (!m->dwarf_found) {
		ls_set_error(err, LS_ERR_DWARF, "%s: no debug information: the variables need DWARF", m->path);
		return NULL;
	}
	struct ls_oom_guard guard;
	ls_oom_push(&guard);
	if (setjmp(guard.env)) {
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory reading the variables", m->path);
		return NULL;
	}
	struct ls_accesses *acc = ls_xcalloc(1, sizeof *acc);
	acc->m = m;
	struct target tg;
	if (match_static(m, addr, &tg)) {
		struct access_slot *slot = new_slot(acc);
		slot->a.addr = addr;
		slot->a.kind = LS_ACCESS_LOAD;
		describe(&tg, 0, slot);
		point_strings(acc);
	}
	ls_oom_pop(&guard);
	if (!acc->n) {
		ls_accesses_free(acc);
		ls_set_error(err, LS_ERR_NOT_FOUND, "%s: no static variable holds 0x%" PRIx64, m->path, addr);
		return NULL;
	}
	return acc;
}
