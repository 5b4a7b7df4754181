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

static double pct(const pl_report *rep, uint64_t v)
{
	uint64_t all = rep->ev_period[rep->primary];
	return all ? 100.0 * (double)v / (double)all : 0.0;
}

/* The views name nodes through rep->tree: print from a swapped-in tree. */
static void print_flat(pl_report *rep, uint32_t n, int depth)
{
	const pl_tree *t = &rep->tree;
	uint64_t *c = pl_cost(t, n, rep->primary);
	if (!c[PL_TOTAL])
		return;
	double total = pct(rep, c[PL_TOTAL_PERIOD]);
	if (total < rep->opt->percent_limit)
		return;
	char label[1024];
	pl_node_label(rep, n, label, sizeof label);
	if (rep->opt->children)
		fprintf(rep->out, "%9.2f%% %9.2f%% %9llu  ", total, pct(rep, c[PL_SELF_PERIOD]),
			(unsigned long long)c[PL_TOTAL]);
	else
		fprintf(rep->out, "%9.2f%% %9llu  ", pct(rep, c[PL_SELF_PERIOD]), (unsigned long long)c[PL_SELF]);
	fprintf(rep->out, "%*s%s", depth * 2, "", label);
	if (t->nodes[n].kind == PL_PROC && t->nodes[n].dso)
		fprintf(rep->out, "  [%s]", t->nodes[n].dso->short_name);
	fputc('\n', rep->out);
	uint32_t *kids;
	size_t k = pl_sorted_children(rep, t, n, &kids);
	for (size_t i = 0; i < k; i++)
		print_flat(rep, kids[i], depth + 1);
	free(kids);
}

int pl_view_flat(pl_report *rep)
{
	pl_tree flat, cct = rep->tree;
	pl_fold_per_proc(rep, &flat);
	rep->tree = flat;
	pl_print_header(rep, "flat: every procedure with its inlined calls, loops and statements, all contexts folded");
	if (rep->opt->children)
		fprintf(rep->out, "#  Children      Self   Samples  Scope\n"
				  "# .........  ........  ........  .....\n#\n");
	else
		fprintf(rep->out, "#  Overhead   Samples  Scope\n"
				  "# .........  ........  .....\n#\n");
	uint32_t *kids;
	size_t k = pl_sorted_children(rep, &rep->tree, 0, &kids);
	for (size_t i = 0; i < k; i++)
		print_flat(rep, kids[i], 0);
	free(kids);
	fputc('\n', rep->out);
	rep->tree = cct;
	pl_tree_free(&flat);
	return 0;
}
