/* reg_names.c - per instruction of one procedure, the general registers
 * some variable's DWARF location uses there (reg_names.h).  Built once per
 * procedure, on the first operand whose register the accesses stage
 * follows with ls_reg_origin_named, so that the search asks libdw only at
 * the instructions where a location can name the register. */
#include "data/reg_names.h"
#include "support/base.h"

#include <dwarf.h>
#include <stdlib.h>

struct ls_reg_names {
	uint16_t *mask;       /* [insn]: bit N, decode.h's register N */
	size_t n;
	struct ls_reg_name *names; /* grouped by instruction: [first[i], first[i + 1]) */
	size_t *first;        /* [n + 1] */
};

/* While building: each entry and the instructions it covers. */
struct entry {
	struct ls_reg_name name;
	uint64_t lo, hi;
};

struct build {
	struct ls_reg_names *n;
	const struct ls_cfg *cfg;
	struct entry *e;
	size_t ne, cap;
};

/* DWARF's x86-64 register numbers -> the decoder's (rax 0, rcx 1, rdx 2,
 * rbx 3, rsp 4, rbp 5, rsi 6, rdi 7, r8..r15). */
static int decoder_reg(uint64_t dw)
{
	static const int map[8] = { 0, 2, 1, 3, 6, 7, 5, 4 };
	return dw < 8 ? map[dw] : dw < 16 ? (int)dw : -1;
}

static uint16_t expr_regs(const Dwarf_Op *ops, size_t nops)
{
	uint16_t m = 0;
	for (size_t i = 0; i < nops; i++) {
		uint8_t a = ops[i].atom;
		int r = -1;
		if (a >= DW_OP_reg0 && a <= DW_OP_reg31)
			r = decoder_reg(a - DW_OP_reg0);
		else if (a >= DW_OP_breg0 && a <= DW_OP_breg31)
			r = decoder_reg(a - DW_OP_breg0);
		else if (a == DW_OP_regx || a == DW_OP_bregx)
			r = decoder_reg(ops[i].number);
		if (r >= 0)
			m |= (uint16_t)(1u << r);
	}
	return m;
}

/* The instructions [*FROM, *TO) of the CFG in [LO, HI). */
static void covered(const struct ls_cfg *cfg, uint64_t lo, uint64_t hi, size_t *from, size_t *to)
{
	size_t i = lo ? LS_FIRST_ABOVE(cfg->insns, cfg->ninsns, addr, lo - 1) : 0;
	size_t j = hi ? LS_FIRST_ABOVE(cfg->insns, cfg->ninsns, addr, hi - 1) : 0;
	*from = i;
	*to = j > i ? j : i;
}

static void variable(struct build *b, Dwarf_Die *var, Dwarf_Off scope)
{
	Dwarf_Attribute a;
	if (!dwarf_attr(var, DW_AT_location, &a))
		return;
	Dwarf_Addr base, start, end;
	Dwarf_Op *expr;
	size_t len;
	ptrdiff_t off = 0;
	while ((off = dwarf_getlocations(&a, off, &base, &start, &end, &expr, &len)) > 0) {
		uint16_t regs = expr_regs(expr, len);
		if (!regs)
			continue;
		b->e = ls_grow(b->e, &b->cap, b->ne + 1, sizeof *b->e);
		b->e[b->ne++] = (struct entry){ { dwarf_dieoffset(var), scope, regs }, start, end };
	}
}

static void walk(struct build *b, Dwarf_Die *die, int depth)
{
	Dwarf_Die c;
	if (depth > 64 || dwarf_child(die, &c) != 0)
		return;
	Dwarf_Off scope = dwarf_dieoffset(die);
	do {
		int tag = dwarf_tag(&c);
		if (tag == DW_TAG_variable || tag == DW_TAG_formal_parameter)
			variable(b, &c, scope);
		else if (tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine)
			walk(b, &c, depth + 1);
	} while (dwarf_siblingof(&c, &c) == 0);
}

struct ls_reg_names *ls_reg_names_build(Dwarf_Die *sub, const struct ls_cfg *cfg)
{
	struct ls_reg_names *n = ls_xcalloc(1, sizeof *n);
	struct build b = { .n = n, .cfg = cfg };
	n->n = cfg->ninsns;
	n->mask = ls_xcalloc(n->n + 1, sizeof *n->mask);
	n->first = ls_xcalloc(n->n + 1, sizeof *n->first);
	if (sub)
		walk(&b, sub, 0);
	/* counts, then each instruction's entries in place (DIE order kept) */
	size_t total = 0, from, to;
	for (size_t k = 0; k < b.ne; k++) {
		covered(cfg, b.e[k].lo, b.e[k].hi, &from, &to);
		for (size_t i = from; i < to; i++) {
			n->mask[i] |= b.e[k].name.regs;
			n->first[i + 1]++;
			total++;
		}
	}
	for (size_t i = 0; i < n->n; i++)
		n->first[i + 1] += n->first[i];
	n->names = ls_xmalloc((total ? total : 1) * sizeof *n->names);
	size_t *fill = ls_xcalloc(n->n + 1, sizeof *fill);
	for (size_t k = 0; k < b.ne; k++) {
		covered(cfg, b.e[k].lo, b.e[k].hi, &from, &to);
		for (size_t i = from; i < to; i++)
			n->names[n->first[i] + fill[i]++] = b.e[k].name;
	}
	free(fill);
	free(b.e);
	return n;
}

bool ls_reg_names_may(const struct ls_reg_names *n, uint32_t insn, int reg)
{
	return n && insn < n->n && reg >= 0 && reg < 16 && (n->mask[insn] & (1u << reg));
}

const struct ls_reg_name *ls_reg_names_at(const struct ls_reg_names *n, uint32_t insn, size_t *count)
{
	if (!n || insn >= n->n) {
		*count = 0;
		return NULL;
	}
	*count = n->first[insn + 1] - n->first[insn];
	return &n->names[n->first[insn]];
}

void ls_reg_names_free(struct ls_reg_names *n)
{
	if (!n)
		return;
	free(n->names);
	free(n->first);
	free(n->mask);
	free(n);
}
