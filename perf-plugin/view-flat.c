/* view-flat.c - all calling contexts of a procedure folded into one: the
 * procedure with its inlined calls, loops and statements, cost summed over
 * every place it was called from.  Recursion counts a sample once. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

static void fold_per_proc(const pl_report *rep, pl_tree *flat)
{
	const pl_tree *t = &rep->tree;
	pl_tree_init(flat, t->nev);
	uint32_t *map = pl_xcalloc(t->n, sizeof *map);
	/* a parent is always made before its children: index order is a
	 * pre-order for this purpose */
	for (uint32_t n = 1; n < t->n; n++) {
		const pl_node *x = &t->nodes[n];
		uint32_t fparent = x->kind == PL_PROC ? 0 : map[x->parent];
		/* a procedure's frames fold together, inferred and unwound alike
		 * (the key's low bits say how a frame was found) */
		uintptr_t key = x->kind == PL_PROC && x->scope ? x->key & ~(uintptr_t)3 : x->key;
		uint32_t f = pl_tree_child(flat, fparent, key, x->kind);
		pl_node *y = &flat->nodes[f];
		y->scope = x->scope;
		y->name = x->name;
		y->dso = x->dso;
		map[n] = f;
		/* inclusive cost once per sample: skip if an ancestor folds here too */
		int nested = 0;
		for (uint32_t p = x->parent; p; p = t->nodes[p].parent)
			if (map[p] == f) {
				nested = 1;
				break;
			}
		for (uint32_t ci = x->costs; ci; ci = t->costs[ci].next) {
			const uint64_t *c = t->costs[ci].c;
			uint64_t *d = pl_cost_at(flat, f, t->costs[ci].ev);
			d[PL_SELF] += c[PL_SELF];
			d[PL_SELF_PERIOD] += c[PL_SELF_PERIOD];
			if (!nested) {
				d[PL_TOTAL] += c[PL_TOTAL];
				d[PL_TOTAL_PERIOD] += c[PL_TOTAL_PERIOD];
			}
		}
	}
	for (uint32_t ci = t->nodes[0].costs; ci; ci = t->costs[ci].next)
		memcpy(pl_cost_at(flat, 0, t->costs[ci].ev), t->costs[ci].c, PL_NCOST * sizeof(uint64_t));
	free(map);
}

const pl_tree *pl_flat_tree(pl_report *rep)
{
	if (!rep->have_flat) {
		fold_per_proc(rep, &rep->flat);
		rep->have_flat = 1;
	}
	return &rep->flat;
}

int pl_view_flat(pl_report *rep)
{
	pl_tree cct = rep->tree;
	rep->tree = *pl_flat_tree(rep); /* the printer names nodes through rep->tree: swap the folded tree in */
	pl_print_indented_tree(rep, "flat: every procedure with its inlined calls, loops and statements, all contexts folded",
			       "Scope");
	rep->flat = rep->tree; /* its per-event index may have been made */
	rep->tree = cct;
	return 0;
}
