/* loop_kind.c - loops the compiler made, with no loop statement of the
 * source behind them (for the structure builder, structure.c).
 *
 * They carry whatever line the compiler gave their code, which names no
 * loop: a memcpy gcc expanded into a copy loop is at string_fortified.h:29
 * (glibc's fortified memcpy, inlined), a stack-clash probe at the
 * function's `{`, the constructor loop of new T[n] at the new expression.
 * They are marked instead ("compiler-made: memcpy"), each kind by what the
 * code itself shows:
 *
 *   memcpy, memmove, memset   the loop lies in an inlined call of that name
 *                             (glibc's fortified wrappers in
 *                             string_fortified.h, __builtin_*);
 *   stack probe               its own code moves SP down by a page or more
 *                             and writes at the new top (`sub $0x1000,%rsp;
 *                             orq $0,(%rsp)`: -fstack-clash-protection);
 *   array constructor         most of it is on one line, the line of a call
 *                             of operator new[] just before it (a
 *   array destructor          constructor per element), or of operator
 *                             delete[] just after it (a destructor each).
 */
#include "structure/structure.h"

#include <string.h>

/* The kind of a call of NAME (an inlined function's name), or NONE. */
static unsigned mem_kind(const char *name)
{
	static const struct { const char *name; unsigned kind; } fns[] = {
		{ "memcpy", LS_MADE_MEMCPY }, { "__memcpy_chk", LS_MADE_MEMCPY }, { "mempcpy", LS_MADE_MEMCPY },
		{ "__builtin_memcpy", LS_MADE_MEMCPY }, { "memmove", LS_MADE_MEMMOVE },
		{ "__memmove_chk", LS_MADE_MEMMOVE }, { "__builtin_memmove", LS_MADE_MEMMOVE },
		{ "memset", LS_MADE_MEMSET }, { "__memset_chk", LS_MADE_MEMSET }, { "__builtin_memset", LS_MADE_MEMSET },
		{ "bzero", LS_MADE_MEMSET }, { "explicit_bzero", LS_MADE_MEMSET },
	};
	if (!name)
		return LS_MADE_NONE;
	size_t n = strcspn(name, "(");
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
		if (strlen(fns[i].name) == n && strncmp(fns[i].name, name, n) == 0)
			return fns[i].kind;
	return LS_MADE_NONE;
}

/* Whether loop K's own blocks move SP down by a page or more and write at
 * the new top of the stack. */
static bool probes_stack(const struct ls_cfg *cfg, const struct ls_loop_forest *lf, int32_t k)
{
	const struct ls_loop *L = &lf->loops[k];
	bool down = false, write = false;
	for (size_t b = 0; b < L->nblocks; b++) {
		const struct ls_block *blk = &cfg->blocks[L->blocks[b]];
		if (lf->block_loop[L->blocks[b]] != k)
			continue;
		for (uint32_t i = 0; i < blk->ninsns; i++) {
			const struct ls_insn *in = &cfg->insns[blk->first_insn + i];
			const struct ls_operand *src = &in->op[0], *dst = &in->op[in->nops ? in->nops - 1 : 0];
			if (in->nops != 2)
				continue;
			if (in->opcode == LS_MN_SUB && src->kind == LS_OP_IMM && src->imm >= 4096 && dst->kind == LS_OP_REG &&
			    dst->reg == 4 /* SP */)
				down = true;
			else if (dst->kind == LS_OP_MEM && dst->base == 4 && dst->index < 0 && dst->disp == 0 &&
			         in->opcode != LS_MN_CMP)
				write = true;
		}
	}
	return down && write;
}

/* Whether PROC_NAME (a callee's name, linkage or demangled) is operator
 * new[] (WANT_NEW) or operator delete[]. */
static bool is_array_op(const ls_module *m, const struct ls_proc *p, bool want_new)
{
	if (!p)
		return false;
	ls_proc_name(m, p);
	const char *ln = p->linkage_name ? p->linkage_name : p->name;
	if (ln && strncmp(ln, want_new ? "_Zna" : "_Zda", 4) == 0)
		return true;
	return p->name && strncmp(p->name, want_new ? "operator new[]" : "operator delete[]",
	                          want_new ? 14 : 17) == 0;
}

/* The line of place P seen from context LCA: its own, or the call line of
 * the inlined call below LCA it is in (an inlined constructor's code is at
 * the new expression).  False if P is not in LCA. */
static bool seen_from(const struct ls_place *p, const struct ls_inl_node *lca, const char **file, unsigned *line)
{
	const struct ls_inl_node *c = p->ctx, *below = NULL;
	for (; c && c != lca; c = c->parent)
		if (c->kind == LS_INL_INLINED)
			below = c;
	if (c != lca)
		return false;
	*file = below ? below->call_file : p->file;
	*line = below ? below->call_line : p->line;
	return true;
}

/* Whether block B calls operator new[] (WANT_NEW) or delete[] on LINE,
 * seen from LCA. */
static bool calls_array_op(const ls_module *m, const struct ls_cfg *cfg, uint32_t b, const struct ls_places *ps,
                           const struct ls_inl_node *lca, const struct ls_loop_line *line, bool want_new)
{
	const struct ls_block *blk = &cfg->blocks[b];
	for (uint32_t i = 0; i < blk->ninsns; i++) {
		const struct ls_insn *in = &cfg->insns[blk->first_insn + i];
		if (in->kind != LS_INSN_CALL && in->kind != LS_INSN_JUMP) /* delete[] is often a tail call */
			continue;
		int x = ls_block_place(ps, cfg, blk, i);
		const char *f;
		unsigned l;
		if (x >= 0 && seen_from(&ps->pl[x], lca, &f, &l) && l == line->line && f == line->file &&
		    is_array_op(m, ls_procs_at_entry(&m->procs, in->target), want_new))
			return true;
	}
	return false;
}

/* For a loop all on line LINE of FILE: whether a call of operator new[]
 * on that line comes just before it (in the blocks entering it, and the
 * few blocks before them that lead only there: the test that the count
 * is not 0 sits between), or one of operator delete[] just after it. */
static unsigned array_kind(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop_forest *lf,
                           int32_t k, const struct ls_places *ps, const struct ls_inl_node *lca,
                           const struct ls_loop_line *line)
{
	const struct ls_loop *L = &lf->loops[k];
	const struct ls_block *hb = &cfg->blocks[L->header];
	for (uint32_t e = 0; e < hb->npred; e++) {
		uint32_t b = cfg->edges[cfg->pred[hb->first_pred + e]].from;
		if (lf->block_loop[b] == k)
			continue;
		for (int steps = 0; steps < 3; steps++) {
			if (calls_array_op(m, cfg, b, ps, lca, line, true))
				return LS_MADE_ARRAY_CTOR;
			if (cfg->blocks[b].npred != 1)
				break;
			b = cfg->edges[cfg->pred[cfg->blocks[b].first_pred]].from;
		}
	}
	for (size_t e = 0; e < L->nexits; e++) {
		uint32_t b = L->exits[e].to;
		for (int steps = 0; steps < 3; steps++) {
			if (calls_array_op(m, cfg, b, ps, lca, line, false))
				return LS_MADE_ARRAY_DTOR;
			if (cfg->blocks[b].nsucc != 1)
				break;
			b = cfg->edges[cfg->succ[cfg->blocks[b].first_succ]].to;
		}
	}
	return LS_MADE_NONE;
}

/* Whether most (over half) of the voting instructions of loop L, seen from
 * LCA, are on LINE (gcc gives a destructor loop's compare the
 * destructor's line). */
static bool one_line(const struct ls_cfg *cfg, const struct ls_loop *L, const struct ls_places *ps,
                     const struct ls_inl_node *lca, const struct ls_loop_line *line)
{
	size_t on = 0, all = 0;
	for (size_t b = 0; b < L->nblocks; b++) {
		const struct ls_block *blk = &cfg->blocks[L->blocks[b]];
		for (uint32_t i = 0; i < blk->ninsns; i++) {
			int x = ls_block_place(ps, cfg, blk, i);
			const char *f;
			unsigned l;
			if (x < 0 || !ps->pl[x].votes)
				continue;
			all++;
			on += seen_from(&ps->pl[x], lca, &f, &l) && l == line->line && f == line->file;
		}
	}
	return all && on * 2 > all;
}

void ls_loop_kinds(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop_forest *lf,
                   const struct ls_places *ps, const struct ls_inl_node *const *lca,
                   const struct ls_loop_line *lines, uint8_t *made)
{
	for (size_t k = 0; k < lf->nloops; k++) {
		unsigned kind = LS_MADE_NONE;
		for (const struct ls_inl_node *c = lca[k]; c && !kind; c = c->parent)
			if (c->kind == LS_INL_INLINED)
				kind = mem_kind(c->name);
		if (!kind && probes_stack(cfg, lf, (int32_t)k))
			kind = LS_MADE_STACK_PROBE;
		if (!kind && lines[k].line && one_line(cfg, &lf->loops[k], ps, lca[k], &lines[k]))
			kind = array_kind(m, cfg, lf, (int32_t)k, ps, lca[k], &lines[k]);
		made[k] = (uint8_t)kind;
	}
}
