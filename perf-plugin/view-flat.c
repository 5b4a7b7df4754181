/* view-flat.c - all calling contexts of a procedure folded into one: the
 * procedure with its inlined calls, loops and statements, cost summed over
 * every place it was called from.  Recursion counts a sample once. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

void pl_fold_per_proc(const pl_report *rep, pl_tree *flat)
{
	const pl_tree *t = &rep->tree;
	pl_tree_init(flat, t->nev);
	uint32_t *map = pl_xcalloc(t->n, sizeof *map);
	/* a parent is always made before its children: index order is a
	 * pre-order for this purpose */
	for (uint32_t n = 1; n < t->n; n++) {
		const pl_node *x = &t->nodes[n];
		uint32_t fparent = x->kind == PL_PROC ? 0 : map[x->parent];
		uint32_t f = pl_tree_child(flat, fparent, x->key, x->kind);
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
		for (size_t e = 0; e < t->nev; e++) {
			const uint64_t *c = pl_cost(t, n, e);
			uint64_t *d = pl_cost(flat, f, e);
			d[PL_SELF] += c[PL_SELF];
			d[PL_SELF_PERIOD] += c[PL_SELF_PERIOD];
			if (!nested) {
				d[PL_TOTAL] += c[PL_TOTAL];
				d[PL_TOTAL_PERIOD] += c[PL_TOTAL_PERIOD];
			}
		}
	}
	for (size_t e = 0; e < t->nev; e++)
		memcpy(pl_cost(flat, 0, e), pl_cost(t, 0, e), PL_NCOST * sizeof(uint64_t));
	free(map);
}

int pl_view_flat(pl_report *rep)
{
	pl_tree flat, cct = rep->tree;
	pl_fold_per_proc(rep, &flat);
	rep->tree = flat; /* the printer names nodes through rep->tree: swap the folded tree in */
	pl_print_indented_tree(rep, "flat: every procedure with its inlined calls, loops and statements, all contexts folded",
			       "Scope");
	rep->tree = cct;
	pl_tree_free(&flat);
	return 0;
}
