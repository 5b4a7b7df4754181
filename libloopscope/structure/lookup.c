/* lookup.c - address -> statement.  Each procedure's statements are
 * indexed by address (its ranges in one sorted array, analyze.c makes it
 * with the procedure), so a lookup is: the procedure owning the address
 * (the directory, analyze.h), that procedure analyzed if it was not yet,
 * a binary search in its statements, and a walk up the parents.
 *
 * On demand, an address is answered by the procedure that owns it, and by
 * no other: where two procedures' instructions overlap (an instruction
 * decoded past the end of one procedure's range into the next, code shared
 * by nested symbols), the owner's statement is the answer.  So a lookup
 * needs only the owner's analysis, and answers the same whatever else was
 * analyzed.  A module opened whole answers from one index of the whole
 * tree (analyze.h: an->whole), as it always has: there, the statement that
 * starts first.
 * Code no procedure owns has statements only where a procedure jumped
 * into a fragment of code (cfg.c); those need every procedure's analysis,
 * and are indexed together with the whole tree. */
#include "analyze.h"
#include "elf/module.h"
#include "structure/lookup.h"
#include "structure/scope.h"
#include "support/base.h"
#include "support/sort.h"

#include <stdlib.h>

static size_t count_segs(const struct ls_scope *s)
{
	size_t n = s->kind == LS_SCOPE_STMT ? s->nranges : 0;
	for (const struct ls_scope *c = s->first_child; c; c = c->next_sibling)
		n += count_segs(c);
	return n;
}

static void collect_segs(struct ls_lookup_index *ix, const struct ls_scope *s)
{
	if (s->kind == LS_SCOPE_STMT)
		for (size_t i = 0; i < s->nranges; i++)
			ix->segs[ix->nsegs++] = (struct ls_stmt_seg){ s->ranges[i].lo, s->ranges[i].hi, s };
	for (const struct ls_scope *c = s->first_child; c; c = c->next_sibling)
		collect_segs(ix, c);
}

static int cmp_seg(const void *a, const void *b)
{
	const struct ls_stmt_seg *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

size_t ls_lookup_segs_sort(struct ls_stmt_seg *segs, size_t nsegs)
{
	if (nsegs > 1)
		ls_sort_runs(segs, nsegs, sizeof *segs, cmp_seg);
	/* Statements never overlap (each instruction is in exactly one); if a
	 * corrupt input made them, the later one is clipped so lookups stay
	 * deterministic. */
	size_t n = 0;
	for (size_t i = 0; i < nsegs; i++) {
		struct ls_stmt_seg s = segs[i];
		if (n && s.lo < segs[n - 1].hi)
			s.lo = segs[n - 1].hi;
		if (s.lo < s.hi)
			segs[n++] = s;
	}
	return n;
}

int ls_lookup_index_build(struct ls_lookup_index *ix, const struct ls_scope *root, ls_error *err)
{
	(void)err;
	ls_lookup_index_free(ix);
	ix->segs = ls_xmalloc((count_segs(root) + 1) * sizeof *ix->segs);
	collect_segs(ix, root);
	ix->nsegs = ls_lookup_segs_sort(ix->segs, ix->nsegs);
	return 0;
}

void ls_lookup_index_free(struct ls_lookup_index *ix)
{
	free(ix->segs);
	ix->segs = NULL;
	ix->nsegs = 0;
}

const ls_scope *ls_lookup_proc(const ls_module *m, uint64_t addr)
{
	const ls_scope *s = ls_lookup(m, addr);
	while (s && s->kind != LS_SCOPE_PROC)
		s = s->parent;
	return s;
}

/* The statements that may hold ADDR: its owner's, or the fragments'. */
static const struct ls_stmt_seg *segs_at(const ls_module *m, uint64_t addr, size_t *n)
{
	size_t p;
	*n = 0;
	if (!m->an)
		return NULL;
	if (!m->opt.on_demand && __atomic_load_n(&m->an->complete, __ATOMIC_ACQUIRE)) {
		*n = m->an->whole.nsegs;
		return m->an->whole.segs;
	}
	if (ls_analysis_owner(m, addr, &p)) {
		const struct ls_proc_done *d = ls_analysis_get(m, p);
		if (!d)
			return NULL;
		*n = d->nsegs;
		return d->segs;
	}
	return ls_analysis_fragment_section(m, addr) ? ls_analysis_fragments(m, n) : NULL;
}

const ls_scope *ls_lookup(const ls_module *m, uint64_t addr)
{
	size_t n;
	const struct ls_stmt_seg *v = segs_at(m, addr, &n);
	size_t lo = LS_FIRST_ABOVE(v, n, hi, addr);
	if (lo < n && v[lo].lo <= addr && addr < v[lo].hi)
		return v[lo].stmt;
	return NULL;
}

/* A return address just past the end of a procedure: the call was its last
 * instruction (a call that never returns, __x64_sys_exit_group+0x14/0x20).
 * addr2line gives such an address the call's procedure and line (the last
 * line row runs on into the padding) and no inlined calls (their ranges
 * end before it): so do we, with *AFTER_END set.  The call's statement is
 * the one of ADDR - 1's owner ending at ADDR. */
static const ls_scope *lookup_or_call_before(const ls_module *m, uint64_t addr, bool *after_end)
{
	const ls_scope *s = ls_lookup(m, addr);
	*after_end = false;
	if (s || addr == 0)
		return s;
	*after_end = true;
	size_t n;
	const struct ls_stmt_seg *v = segs_at(m, addr - 1, &n);
	size_t lo = LS_FIRST_AT_LEAST(v, n, hi, addr);
	return lo < n && v[lo].hi == addr ? v[lo].stmt : NULL;
}

/* A chain stops at the procedure (file and module scopes are not in it). */
static bool chain_end(const ls_scope *s)
{
	return !s || s->kind == LS_SCOPE_FILE || s->kind == LS_SCOPE_MODULE;
}

/* The length of the chain from statement S up to its procedure; with
 * AFTER_END, [proc, stmt] (see lookup_or_call_before). */
static size_t chain_depth(const ls_scope *s, bool after_end)
{
	if (after_end) {
		while (s && s->kind != LS_SCOPE_PROC)
			s = s->parent;
		return s ? 2 : 0;
	}
	size_t n = 0;
	for (; !chain_end(s); s = s->parent) {
		n++;
		if (s->kind == LS_SCOPE_PROC)
			break;
	}
	return n;
}

size_t ls_lookup_depth(const ls_module *m, uint64_t addr)
{
	bool after_end;
	const ls_scope *stmt = lookup_or_call_before(m, addr, &after_end);
	size_t n = chain_depth(stmt, after_end);
	/* inlined calls nested deeper than the tree keeps count too */
	return n && !after_end ? n + stmt->cut : n;
}

size_t ls_lookup_chain(const ls_module *m, uint64_t addr, const ls_scope **chain, size_t cap)
{
	bool after_end;
	const ls_scope *stmt = lookup_or_call_before(m, addr, &after_end);
	size_t total = chain_depth(stmt, after_end);
	if (total == 0 || cap == 0)
		return 0;
	if (after_end) {
		const ls_scope *p = stmt;
		while (p->kind != LS_SCOPE_PROC)
			p = p->parent;
		chain[0] = p;
		if (cap > 1)
			chain[1] = stmt;
		return cap > 1 ? 2 : 1;
	}
	/* A chain deeper than CAP (a loop nest hundreds deep) keeps what tells
	 * where the code is: the procedure and the outermost scopes, then the
	 * statement; ls_lookup_depth() tells the caller how much was cut (with
	 * the inlined calls the tree itself left out above the statement). */
	size_t n = total <= cap ? total : cap;
	size_t keep_outer = total <= cap ? total : cap - 1;
	size_t i = total; /* index in the full chain of the scope below, outermost 0 */
	for (const ls_scope *s = stmt; i > 0; s = s->parent) {
		i--;
		if (i < keep_outer)
			chain[i] = s;
	}
	if (total > cap)
		chain[cap - 1] = stmt;
	return n;
}
