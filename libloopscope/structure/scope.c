/* scope.c - the scope tree's nodes: creation, linking, address ranges, the
 * public accessors of loopscope.h, and the warnings a procedure's scope
 * carries (said alike by the analysis and on a cache hit). */
#include "structure/scope.h"
#include "support/base.h"
#include "support/sort.h"

#include <stdlib.h>
#include <string.h>

struct ls_scope *ls_scope_new(struct ls_arena *a, ls_scope_kind kind, struct ls_scope *parent)
{
	struct ls_scope *s = ls_arena_alloc(a, sizeof *s);
	s->kind = kind;
	if (parent)
		ls_scope_add_child(parent, s);
	return s;
}

void ls_scope_add_child(struct ls_scope *parent, struct ls_scope *child)
{
	child->parent = parent;
	child->next_sibling = NULL;
	if (parent->last_child)
		parent->last_child->next_sibling = child;
	else
		parent->first_child = child;
	parent->last_child = child;
}

void ls_scope_unlink(struct ls_scope *child)
{
	struct ls_scope *p = child->parent;
	if (!p)
		return;
	struct ls_scope *prev = NULL;
	for (struct ls_scope *c = p->first_child; c; prev = c, c = c->next_sibling) {
		if (c != child)
			continue;
		if (prev)
			prev->next_sibling = c->next_sibling;
		else
			p->first_child = c->next_sibling;
		if (p->last_child == c)
			p->last_child = prev;
		break;
	}
	child->parent = NULL;
	child->next_sibling = NULL;
}

void ls_scope_add_range(struct ls_arena *a, struct ls_scope *s, uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return;
	if (s->nranges && s->ranges[s->nranges - 1].hi == lo) {
		s->ranges[s->nranges - 1].hi = hi;
		return;
	}
	if (s->nranges == s->cap_ranges) {
		/* Arena memory is not reallocated: copy into a bigger block; the
		 * old one is wasted until the module is freed (ranges are few). */
		size_t cap = s->cap_ranges ? s->cap_ranges * 2 : 2;
		ls_range *r = ls_arena_alloc(a, cap * sizeof *r);
		if (s->nranges)
			memcpy(r, s->ranges, s->nranges * sizeof *r);
		s->ranges = r;
		s->cap_ranges = cap;
	}
	s->ranges[s->nranges++] = (ls_range){ lo, hi };
}

static int cmp_range(const void *a, const void *b)
{
	const ls_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

void ls_scope_normalize_ranges(struct ls_scope *s)
{
	if (s->nranges < 2)
		return;
	ls_sort_runs(s->ranges, s->nranges, sizeof *s->ranges, cmp_range);
	size_t n = 0;
	for (size_t i = 0; i < s->nranges; i++) {
		if (n && s->ranges[i].lo <= s->ranges[n - 1].hi) {
			if (s->ranges[i].hi > s->ranges[n - 1].hi)
				s->ranges[n - 1].hi = s->ranges[i].hi;
		} else {
			s->ranges[n++] = s->ranges[i];
		}
	}
	s->nranges = n;
}

/* ---- public accessors ---- */

ls_scope_kind ls_scope_kind_of(const ls_scope *s) { return s->kind; }

const char *ls_scope_kind_name(ls_scope_kind k)
{
	static const char *const names[] = {
		[LS_SCOPE_MODULE] = "module", [LS_SCOPE_FILE] = "file", [LS_SCOPE_PROC] = "proc",
		[LS_SCOPE_INLINE] = "inline", [LS_SCOPE_ALIEN] = "alien", [LS_SCOPE_LOOP] = "loop",
		[LS_SCOPE_STMT] = "stmt",
	};
	return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

/* Every accessor takes NULL -- what ls_lookup answers outside any
 * procedure -- and gives NULL or 0: a caller printing the name of the
 * scope at an address must not crash on an address of nothing. */
const ls_scope *ls_scope_parent(const ls_scope *s) { return s ? s->parent : NULL; }
const ls_scope *ls_scope_first_child(const ls_scope *s) { return s ? s->first_child : NULL; }
const ls_scope *ls_scope_next_sibling(const ls_scope *s) { return s ? s->next_sibling : NULL; }
const char *ls_scope_name(const ls_scope *s) { return s ? s->name : NULL; }
const char *ls_scope_linkage_name(const ls_scope *s) { return s ? s->linkage_name : NULL; }
const char *ls_scope_file(const ls_scope *s) { return s ? s->file : NULL; }
unsigned ls_scope_line(const ls_scope *s) { return s ? s->line : 0; }
const char *ls_scope_call_file(const ls_scope *s) { return s ? s->call_file : NULL; }
unsigned ls_scope_call_line(const ls_scope *s) { return s ? s->call_line : 0; }
unsigned ls_scope_call_column(const ls_scope *s) { return s ? s->call_column : 0; }
unsigned ls_proc_unresolved_jumps(const ls_scope *s)
{
	return s && s->kind == LS_SCOPE_PROC ? s->unresolved_jumps : 0;
}
size_t ls_scope_nranges(const ls_scope *s) { return s ? s->nranges : 0; }

ls_range ls_scope_range(const ls_scope *s, size_t i)
{
	return s && i < s->nranges ? s->ranges[i] : (ls_range){ 0, 0 };
}

uint64_t ls_scope_low(const ls_scope *s)
{
	return s && s->nranges ? s->ranges[0].lo : 0;
}

static const struct ls_loop_info *loop_of(const ls_scope *s)
{
	static const struct ls_loop_info none;
	return s && s->kind == LS_SCOPE_LOOP && s->loop ? s->loop : &none;
}

uint64_t ls_loop_header(const ls_scope *s) { return loop_of(s)->header; }
unsigned ls_loop_depth(const ls_scope *s) { return loop_of(s)->depth; }
int ls_loop_irreducible(const ls_scope *s) { return loop_of(s)->irreducible; }
size_t ls_loop_nentries(const ls_scope *s) { return loop_of(s)->nentries; }
size_t ls_loop_nbackedges(const ls_scope *s) { return loop_of(s)->nbackedges; }
size_t ls_loop_nexits(const ls_scope *s) { return loop_of(s)->nexits; }

uint64_t ls_loop_entry(const ls_scope *s, size_t i)
{
	const struct ls_loop_info *l = loop_of(s);
	return i < l->nentries ? l->entries[i] : 0;
}

ls_edge ls_loop_backedge(const ls_scope *s, size_t i)
{
	const struct ls_loop_info *l = loop_of(s);
	return i < l->nbackedges ? l->backedges[i] : (ls_edge){ 0, 0 };
}

const char *ls_loop_made_name(unsigned made)
{
	static const char *const names[LS_MADE_COUNT] = {
		NULL, "memcpy", "memmove", "memset", "stack probe", "array constructor", "array destructor",
	};
	return made < LS_MADE_COUNT ? names[made] : NULL;
}

const char *ls_loop_guess_name(unsigned guess)
{
	static const char *const names[LS_GUESS_COUNT] = {
		NULL, "before-body", "slides", "header", "entry",
	};
	return guess < LS_GUESS_COUNT ? names[guess] : NULL;
}

const char *ls_loop_compiler_made(const ls_scope *s) { return ls_loop_made_name(loop_of(s)->made); }
const char *ls_loop_line_guessed(const ls_scope *s) { return ls_loop_guess_name(loop_of(s)->guess); }

unsigned ls_loop_part(const ls_scope *s, unsigned *nparts)
{
	const struct ls_loop_info *l = loop_of(s);
	if (nparts)
		*nparts = l->nparts;
	return l->part;
}

ls_edge ls_loop_exit(const ls_scope *s, size_t i)
{
	const struct ls_loop_info *l = loop_of(s);
	return i < l->nexits ? l->exits[i] : (ls_edge){ 0, 0 };
}

void ls_warn_proc_marks(const ls_options *opt, const char *path, const struct ls_scope *proc, bool jumps,
                        unsigned cut)
{
	const char *name = proc->name ? proc->name : "?";
	/* jump_tables.c says it so when it finds them */
	if (jumps && proc->unresolved_jumps)
		ls_warn(opt, "%s: %s: %u indirect jump%s not resolved (first at 0x%llx): its loops may be incomplete",
		        path, name, proc->unresolved_jumps, proc->unresolved_jumps == 1 ? "" : "s",
		        (unsigned long long)proc->first_unresolved);
	if (cut)
		ls_warn(opt, "%s: %s: inlined calls nested %u deep: the structure keeps the outermost %u (%u cut)",
		        path, name, cut + LS_MAX_CHAIN - 2, LS_MAX_CHAIN - 2, cut);
}
