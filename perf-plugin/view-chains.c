/* view-chains.c - -g flat: perf report's flat call chains.  Every calling
 * context that has samples of its own (a path of the tree from its root to
 * a scope holding samples) is printed whole, one frame's scope a line, under
 * its cost, largest first: outermost first, or innermost first with -g
 * callee (perf's order of the chain).  The -F columns give the context's own
 * cost, so Children and Self are the same number here. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

struct context {
	uint32_t node;
	uint64_t samples, period;
};

static int cmp_context(const void *pa, const void *pb)
{
	const struct context *x = pa, *y = pb;
	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* Is some procedure on the path to N selected by -S/--symbol-filter? */
static int path_selected(const pl_report *rep, uint32_t n)
{
	for (; n; n = rep->tree.nodes[n].parent)
		if (rep->tree.nodes[n].kind == PL_PROC && pl_proc_selected(rep, n))
			return 1;
	return 0;
}

static void print_context(pl_report *rep, const struct context *cx, uint64_t all)
{
	const pl_tree *t = &rep->tree;
	uint64_t c[PL_NCOST] = { 0 };
	c[PL_TOTAL] = c[PL_SELF] = cx->samples;
	c[PL_TOTAL_PERIOD] = c[PL_SELF_PERIOD] = cx->period;
	pl_print_columns(rep, c, all);
	fputc('\n', rep->out);
	uint32_t *path = NULL;
	size_t cap = 0, depth = pl_tree_path(t, cx->node, &path, &cap);
	for (size_t k = 0; k < depth; k++) {
		uint32_t n = path[rep->opt->callee ? depth - 1 - k : k];
		char label[1024], dso[300] = "";
		pl_node_label(rep, n, label, sizeof label);
		if (t->nodes[n].kind == PL_PROC && t->nodes[n].dso)
			pl_dso_shown(t->nodes[n].dso, dso, sizeof dso);
		pl_fit_width(rep, 16 + (*dso ? 2 + (int)strlen(dso) : 0), label, sizeof label);
		fprintf(rep->out, "%16s%s%s%s\n", "", label, *dso ? "  " : "", dso);
	}
	fputc('\n', rep->out);
	free(path);
}

int pl_view_chains(pl_report *rep)
{
	const pl_tree *t = &rep->tree;
	const pl_report_options *o = rep->opt;
	size_t e = rep->primary;
	uint64_t all = rep->ev_period[e];
	double limit = o->percent_limit > o->cg_threshold ? o->percent_limit : o->cg_threshold;
	const uint32_t *nodes;
	size_t nn = pl_event_nodes(t, e, &nodes);
	struct context *v = pl_xmalloc((nn ? nn : 1) * sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < nn; i++) {
		uint32_t n = nodes[i];
		uint64_t period = pl_node_own(t, n, e, PL_SELF_PERIOD);
		uint64_t samples = pl_node_own(t, n, e, PL_SELF);
		if (!samples && !period)
			continue;
		if (all && 100.0 * (double)period / (double)all < limit)
			continue;
		if ((o->nsymbols || o->symbol_filter) && !path_selected(rep, n))
			continue;
		v[k++] = (struct context){ n, samples, period };
	}
	qsort(v, k, sizeof *v, cmp_context);
	pl_print_header(rep, o->callee ? "flat call chains: every calling context with samples of its own, "
					 "innermost scope first"
				       : "flat call chains: every calling context with samples of its own, "
					 "outermost frame first");
	pl_print_column_header(rep, "Context");
	for (size_t i = 0; i < k; i++)
		print_context(rep, &v[i], all);
	free(v);
	return 0;
}
