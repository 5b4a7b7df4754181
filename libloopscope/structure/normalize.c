/* normalize.c - the thesis' normalization passes over one procedure's
 * scope tree, run after the structure builder:
 *   - remove empty scopes (no instructions below them);
 *   - merge perfectly nested loops with identical ranges (the same loop
 *     seen twice, e.g. through two headers' views);
 *   - give every scope the sorted union of its children's ranges, so that
 *     ranges merge whenever scopes merge.
 * Duplicate statements never arise: the builder's trie makes one statement
 * per line per context. */
#include "structure/structure.h"

#include <string.h>

static bool same_ranges(const struct ls_scope *a, const struct ls_scope *b)
{
	if (a->nranges != b->nranges)
		return false;
	return memcmp(a->ranges, b->ranges, a->nranges * sizeof *a->ranges) == 0;
}

/* Moves all of FROM's children to the end of TO's. */
static void adopt_children(struct ls_scope *to, struct ls_scope *from)
{
	struct ls_scope *c = from->first_child;
	from->first_child = from->last_child = NULL;
	while (c) {
		struct ls_scope *next = c->next_sibling;
		ls_scope_add_child(to, c);
		c = next;
	}
}

static void union_children_ranges(struct ls_arena *arena, struct ls_scope *s)
{
	for (struct ls_scope *c = s->first_child; c; c = c->next_sibling)
		for (size_t i = 0; i < c->nranges; i++)
			ls_scope_add_range(arena, s, c->ranges[i].lo, c->ranges[i].hi);
	ls_scope_normalize_ranges(s);
}

/* Post-order: children first, so a parent sees its children's final ranges. */
static void normalize(struct ls_scope *s, struct ls_arena *arena)
{
	struct ls_scope *c = s->first_child;
	while (c) {
		struct ls_scope *next = c->next_sibling;
		normalize(c, arena);
		if (c->nranges == 0 && !c->first_child)
			ls_scope_unlink(c);
		c = next;
	}
	if (s->kind == LS_SCOPE_STMT) {
		ls_scope_normalize_ranges(s);
		return;
	}
	if (s->kind != LS_SCOPE_PROC)
		s->nranges = 0; /* recomputed from the children */
	union_children_ranges(arena, s);
	if (s->kind == LS_SCOPE_LOOP && s->first_child && s->first_child == s->last_child &&
	    s->first_child->kind == LS_SCOPE_LOOP && same_ranges(s, s->first_child)) {
		struct ls_scope *inner = s->first_child;
		ls_scope_unlink(inner);
		adopt_children(s, inner);
	}
}

void ls_normalize_proc(struct ls_scope *proc, struct ls_arena *arena)
{
	normalize(proc, arena);
}
