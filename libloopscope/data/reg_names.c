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

static void mark(struct ls_reg_names *n, const struct ls_cfg *cfg, uint64_t lo, uint64_t hi, uint16_t regs)
{
	size_t i = LS_FIRST_ABOVE(cfg->insns, cfg->ninsns, addr, lo == 0 ? 0 : lo - 1);
	for (; i < cfg->ninsns && cfg->insns[i].addr < hi; i++)
		if (cfg->insns[i].addr >= lo)
			n->mask[i] |= regs;
}

static void variable(struct ls_reg_names *n, const struct ls_cfg *cfg, Dwarf_Die *var)
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
		if (regs)
			mark(n, cfg, start, end, regs);
	}
}

static void walk(struct ls_reg_names *n, const struct ls_cfg *cfg, Dwarf_Die *die, int depth)
{
	Dwarf_Die c;
	if (depth > 64 || dwarf_child(die, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);
		if (tag == DW_TAG_variable || tag == DW_TAG_formal_parameter)
			variable(n, cfg, &c);
		else if (tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine)
			walk(n, cfg, &c, depth + 1);
	} while (dwarf_siblingof(&c, &c) == 0);
}

struct ls_reg_names *ls_reg_names_build(Dwarf_Die *sub, const struct ls_cfg *cfg)
{
	struct ls_reg_names *n = ls_xcalloc(1, sizeof *n);
	n->n = cfg->ninsns;
	n->mask = ls_xcalloc(cfg->ninsns ? cfg->ninsns : 1, sizeof *n->mask);
	if (sub)
		walk(n, cfg, sub, 0);
	return n;
}

bool ls_reg_names_may(const struct ls_reg_names *n, uint32_t insn, int reg)
{
	return n && insn < n->n && reg >= 0 && reg < 16 && (n->mask[insn] & (1u << reg));
}

void ls_reg_names_free(struct ls_reg_names *n)
{
	if (!n)
		return;
	free(n->mask);
	free(n);
}
