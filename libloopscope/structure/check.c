/* check.c - the invariants of the indexes and of the scope tree, checked.
 *
 * The unit tests call ls_check_module on every fixture they load (each
 * invariant is a TAP line of its own); a build configured with
 * --enable-debug-checks (LS_DEBUG_CHECKS) also runs every check at the end
 * of each ls_module_open and aborts on a broken one, with the invariant's
 * name and the first place it fails: a bug in a stage shows where it is
 * made, not later as wrong output.  Release builds do not pay for them
 * (they walk every segment, row and scope once).
 *
 * A check returns NULL when it holds, else a description of the first
 * violation in a static buffer of the calling thread. */
#include "dwarf/inline_tree.h"
#include "dwarf/linemap.h"
#include "dwarf/procs.h"
#include "elf/module.h"
#include "analyze.h"
#include "structure/check.h"
#include "structure/lookup.h"
#include "structure/scope.h"

#include <stdio.h>
#include <stdlib.h>

static _Thread_local char problem[256];

static const char *fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(problem, sizeof problem, fmt, ap);
	va_end(ap);
	return problem;
}

/* Inline segments: sorted, non-overlapping, none of a lexical block. */
static const char *check_inline_segments(const ls_module *m)
{
	for (size_t i = 0; i < m->inl.nsegs; i++) {
		const struct ls_inl_seg *s = &m->inl.segs[i];
		if (s->lo >= s->hi || (i && s->lo < m->inl.segs[i - 1].hi) || !s->node ||
		    s->node->kind == LS_INL_LEXICAL)
			return fail("inline segment %zu [0x%llx, 0x%llx)", i, (unsigned long long)s->lo,
			            (unsigned long long)s->hi);
	}
	return NULL;
}

/* Inline nodes: subprograms are roots, an inlined call's depth is its
 * parent's plus one. */
static const char *check_inline_nodes(const ls_module *m)
{
	for (size_t i = 0; i < m->inl.nnodes; i++) {
		const struct ls_inl_node *n = m->inl.nodes[i];
		if (n->kind == LS_INL_SUBPROGRAM && (n->parent || n->depth))
			return fail("inline node %zu: a subprogram with a parent or a depth", i);
		if (n->kind == LS_INL_INLINED && (!n->parent || n->parent->kind == LS_INL_LEXICAL ||
		                                  n->depth != n->parent->depth + 1 || !n->name))
			return fail("inline node %zu (%s): parent or depth", i, n->name ? n->name : "?");
	}
	return NULL;
}

/* Procedures: the address index sorted and non-overlapping, entries
 * sorted and unique, every procedure named and with a range. */
static const char *check_procs(const ls_module *m)
{
	for (size_t i = 0; i < m->procs.nindex; i++) {
		const struct ls_proc_range *r = &m->procs.index[i];
		if (r->lo >= r->hi || (i && r->lo < m->procs.index[i - 1].hi) || r->proc >= m->procs.nprocs)
			return fail("procedure index entry %zu [0x%llx, 0x%llx)", i, (unsigned long long)r->lo,
			            (unsigned long long)r->hi);
	}
	for (size_t i = 1; i < m->procs.nprocs; i++)
		if (m->procs.procs[i].entry <= m->procs.procs[i - 1].entry)
			return fail("procedure %zu: entry 0x%llx not above the previous one", i,
			            (unsigned long long)m->procs.procs[i].entry);
	for (size_t i = 0; i < m->procs.nprocs; i++) {
		const struct ls_proc *p = &m->procs.procs[i];
		if (ls_procs_at_entry(&m->procs, p->entry) != p || !p->name || !p->nranges)
			return fail("procedure %zu at 0x%llx: not found at its entry, or no name or range", i,
			            (unsigned long long)p->entry);
	}
	return NULL;
}

/* Line rows: sorted, in text, absolute file names (when ABSOLUTE), one
 * row per gap, the table closed by a gap. */
static const char *check_lines(const ls_module *m, bool absolute)
{
	const struct ls_line_row *rows = m->lines.rows;
	for (size_t i = 0; i < m->lines.nrows; i++) {
		if ((i && rows[i].addr <= rows[i - 1].addr) || (i && !rows[i].file && !rows[i - 1].file) ||
		    (rows[i].file && (!ls_text_find(m, rows[i].addr) || (absolute && rows[i].file[0] != '/'))) ||
		    (rows[i].file && ls_linemap_find(&m->lines, rows[i].addr) != &rows[i]))
			return fail("line row %zu at 0x%llx", i, (unsigned long long)rows[i].addr);
	}
	if (m->lines.nrows && rows[m->lines.nrows - 1].file)
		return fail("line table not closed by a gap");
	return NULL;
}

/* Which kinds may hold a scope of kind K. */
static bool parent_allowed(ls_scope_kind k, ls_scope_kind parent)
{
	switch (k) {
	case LS_SCOPE_MODULE: return false;
	case LS_SCOPE_FILE: return parent == LS_SCOPE_MODULE;
	case LS_SCOPE_PROC: return parent == LS_SCOPE_FILE;
	default: return parent != LS_SCOPE_MODULE && parent != LS_SCOPE_FILE && parent != LS_SCOPE_STMT;
	}
}

/* One scope: its links, ranges and loop; NULL if it holds. */
static const char *check_scope(const struct ls_scope *s)
{
	const char *name = s->name ? s->name : s->file ? s->file : ls_scope_kind_name(s->kind);
	for (size_t r = 0; r < s->nranges; r++)
		if (s->ranges[r].lo >= s->ranges[r].hi || (r && s->ranges[r].lo <= s->ranges[r - 1].hi))
			return fail("%s %s: range %zu [0x%llx, 0x%llx) empty, unsorted or not merged",
			            ls_scope_kind_name(s->kind), name, r, (unsigned long long)s->ranges[r].lo,
			            (unsigned long long)s->ranges[r].hi);
	if (s->kind == LS_SCOPE_LOOP && (!s->loop || (s->loop->irreducible && s->loop->nentries < 2)))
		return fail("loop at 0x%llx: no loop information, or irreducible with fewer than two entries",
		            (unsigned long long)(s->nranges ? s->ranges[0].lo : 0));
	const struct ls_scope *last = NULL;
	for (const struct ls_scope *c = s->first_child; c; c = c->next_sibling) {
		if (c->parent != s || !parent_allowed(c->kind, s->kind))
			return fail("a %s under %s %s: wrong parent link or kind", ls_scope_kind_name(c->kind),
			            ls_scope_kind_name(s->kind), name);
		last = c;
	}
	if (last != s->last_child)
		return fail("%s %s: last_child is not its last child", ls_scope_kind_name(s->kind), name);
	return NULL;
}

/* The scope tree: a module at the root, then files, then procedures; every
 * scope's parent link, kind, ranges and loop information (check_scope).
 * Walked without recursion (loop nests may be hundreds deep). */
static const char *check_tree(const struct ls_scope *root)
{
	if (!root)
		return NULL;
	if (root->kind != LS_SCOPE_MODULE || root->parent)
		return fail("the root is not a module without a parent");
	const struct ls_scope *s = root;
	for (;;) {
		const char *why = check_scope(s);
		if (why)
			return why;
		if (s->first_child) {
			s = s->first_child;
			continue;
		}
		while (s != root && !s->next_sibling)
			s = s->parent;
		if (s == root)
			return NULL;
		s = s->next_sibling;
	}
}

/* Each procedure's index of statements is what lookup.c makes from its
 * tree: a cache entry stores it apart from the tree, and the two must not
 * drift apart. */
static const char *check_lookup(const ls_module *m)
{
	static __thread char why[200];
	const struct ls_analysis *an = m->an;
	for (size_t p = 0; an && p < an->dir.nprocs; p++) {
		const struct ls_proc_done *d = __atomic_load_n(&an->done[p], __ATOMIC_ACQUIRE);
		if (!d || !d->scope)
			continue;
		struct ls_lookup_index fresh = { 0 };
		ls_error err;
		if (ls_lookup_index_build(&fresh, d->scope, &err) < 0)
			return "the lookup index cannot be made from the tree";
		const char *r = NULL;
		if (fresh.nsegs != d->nsegs) {
			snprintf(why, sizeof why, "lookup index of %s: %zu segments, the tree makes %zu",
			         d->scope->name ? d->scope->name : "?", d->nsegs, fresh.nsegs);
			r = why;
		}
		for (size_t i = 0; !r && i < fresh.nsegs; i++) {
			const struct ls_stmt_seg *a = &d->segs[i], *b = &fresh.segs[i];
			if (a->lo != b->lo || a->hi != b->hi || a->stmt != b->stmt) {
				snprintf(why, sizeof why,
				         "lookup index: segment %zu is [%#llx,%#llx), the tree makes [%#llx,%#llx)", i,
				         (unsigned long long)a->lo, (unsigned long long)a->hi, (unsigned long long)b->lo,
				         (unsigned long long)b->hi);
				r = why;
			}
		}
		ls_lookup_index_free(&fresh);
		if (r)
			return r;
	}
	return NULL;
}

const char *ls_check_module(const ls_module *m, enum ls_check which, bool absolute_files)
{
	switch (which) {
	case LS_CHECK_INLINE_SEGMENTS: return check_inline_segments(m);
	case LS_CHECK_INLINE_NODES: return check_inline_nodes(m);
	case LS_CHECK_PROCS: return check_procs(m);
	case LS_CHECK_LINES: return check_lines(m, absolute_files);
	case LS_CHECK_TREE: return check_tree(m->root);
	case LS_CHECK_LOOKUP: return check_lookup(m);
	case LS_NCHECKS: break;
	}
	return NULL;
}

void ls_debug_check_module(const ls_module *m)
{
#ifdef LS_DEBUG_CHECKS
	for (int c = 0; c < LS_NCHECKS; c++) {
		/* Relocatable objects and odd DWARF may name files relatively. */
		const char *why = ls_check_module(m, (enum ls_check)c, false);
		if (why) {
			fprintf(stderr, "loopscope: internal error: %s: invariant broken: %s\n", m->path, why);
			abort();
		}
	}
#else
	(void)m;
#endif
}
