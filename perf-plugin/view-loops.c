/* view-loops.c - loops ranked by inclusive cost, all calling contexts
 * folded, each with its procedure and the inlined calls it sits in. */
#include "report.h"

#include <stdlib.h>
#include <string.h>


static int cmp_loops(const void *pa, const void *pb, void *arg)
{
	const pl_report *rep = arg;
	uint32_t x = *(const uint32_t *)pa, y = *(const uint32_t *)pb;
	uint64_t cx = pl_cost(&rep->tree, x, rep->primary)[PL_TOTAL_PERIOD];
	uint64_t cy = pl_cost(&rep->tree, y, rep->primary)[PL_TOTAL_PERIOD];
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return x < y ? -1 : x > y;
}

int pl_view_loops(pl_report *rep)
{
	pl_tree cct = rep->tree;
	const pl_tree flat = *pl_flat_tree(rep);
	rep->tree = flat;
	pl_print_header(rep, "loops ranked by inclusive cost (all calling contexts folded)");
	fprintf(rep->out, "#  Children      Self   Samples  Loop  (procedure [binary], inlined calls around it)\n"
			  "# .........  ........  ........  ....\n#\n");
	/* the nodes with this event's samples only, not every node */
	const uint32_t *nodes;
	size_t nn = pl_event_nodes(&rep->tree, rep->primary, &nodes);
	uint32_t *loops = pl_xmalloc((nn + 1) * sizeof *loops);
	size_t nl = 0;
	for (size_t i = 0; i < nn; i++)
		if (nodes[i] && flat.nodes[nodes[i]].kind == PL_LOOP && pl_cost(&flat, nodes[i], rep->primary)[PL_TOTAL])
			loops[nl++] = nodes[i];
	qsort_r(loops, nl, sizeof *loops, cmp_loops, rep);
	uint64_t all = rep->ev_period[rep->primary];
	for (size_t i = 0; i < nl; i++) {
		uint32_t n = loops[i];
		const uint64_t *c = pl_cost(&flat, n, rep->primary);
		double total = all ? 100.0 * c[PL_TOTAL_PERIOD] / all : 0;
		if (total < rep->opt->percent_limit)
			break;
		char label[1024], ctx[2048] = "";
		pl_node_label(rep, n, label, sizeof label);
		/* the enclosing procedure and inline chain, innermost last */
		uint32_t chain[256];
		size_t k = 0;
		for (uint32_t p = flat.nodes[n].parent; p && k < 256; p = flat.nodes[p].parent)
			if (flat.nodes[p].kind == PL_PROC || flat.nodes[p].kind == PL_INLINE)
				chain[k++] = p;
		size_t len = 0;
		while (k-- > 0) {
			char part[1024];
			pl_node_label(rep, chain[k], part, sizeof part);
			const pl_node *x = &flat.nodes[chain[k]];
			char dso[300];
			if (x->kind == PL_PROC && x->dso)
				len += snprintf(ctx + len, sizeof ctx - len > 0 ? sizeof ctx - len : 0, "%s %s", part,
				                pl_dso_shown(x->dso, dso, sizeof dso));
			else
				len += snprintf(ctx + len, sizeof ctx - len > 0 ? sizeof ctx - len : 0, " > %s", part);
			if (len >= sizeof ctx)
				len = sizeof ctx - 1;
		}
		fprintf(rep->out, "%9.2f%% %9.2f%% %9llu  %s  (%s)\n", total,
			all ? 100.0 * c[PL_SELF_PERIOD] / all : 0.0, (unsigned long long)c[PL_TOTAL], label, ctx);
	}
	if (!nl)
		fprintf(rep->out, "# no samples in loops\n");
	fputc('\n', rep->out);
	free(loops);
	rep->flat = rep->tree; /* its per-event index was made */
	rep->tree = cct;
	return 0;
}
