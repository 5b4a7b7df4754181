/* view-loops.c - loops ranked by inclusive cost, all calling contexts
 * folded, each with its procedure and the inlined calls it sits in.
 * Beside the inclusive cost ("Total": nested loops and callees in it), the
 * loop's own cost ("Own"): the samples whose innermost loop it is (its own
 * statements and the inlined calls in it, not its nested loops, not its
 * callees), so that the hot loop of a nest stands out. */
#include "report.h"
#include "offcpu.h"

#include <stdlib.h>
#include <string.h>


static uint32_t enclosing_proc(const pl_tree *t, uint32_t n)
{
	while (n && t->nodes[n].kind != PL_PROC)
		n = t->nodes[n].parent;
	return n;
}

/* own[n] for every loop node of the folded tree T: its Self (exclusive in
 * its frame: nested loops included) minus the Self of the loops nested
 * directly in it. */
static uint64_t *own_costs(const pl_tree *t, size_t ev, int k)
{
	uint64_t *own = pl_xcalloc(t->n ? t->n : 1, sizeof *own);
	for (uint32_t n = 1; n < t->n; n++)
		if (t->nodes[n].kind == PL_LOOP)
			own[n] += pl_cost(t, n, ev)[k];
	for (uint32_t n = 1; n < t->n; n++) {
		if (t->nodes[n].kind != PL_LOOP)
			continue;
		for (uint32_t p = t->nodes[n].parent; p && t->nodes[p].kind != PL_PROC; p = t->nodes[p].parent)
			if (t->nodes[p].kind == PL_LOOP) {
				own[p] -= pl_cost(t, n, ev)[k];
				break;
			}
	}
	return own;
}

/* --sort=own: loops by Own, then Total (qsort_r over REP's own costs) */
struct by_own {
	const pl_report *rep;
	const uint64_t *own;
};

static int cmp_own(const void *pa, const void *pb, void *arg)
{
	const struct by_own *b = arg;
	uint32_t x = *(const uint32_t *)pa, y = *(const uint32_t *)pb;
	if (b->own[x] != b->own[y])
		return b->own[x] > b->own[y] ? -1 : 1;
	return pl_cmp_total(pa, pb, (void *)b->rep);
}

int pl_view_loops(pl_report *rep)
{
	pl_tree cct = rep->tree;
	const pl_tree flat = *pl_flat_tree(rep);
	rep->tree = flat;
	int by_own = rep->opt->sort_own;
	pl_print_header(rep, by_own ? "loops ranked by their own cost (all calling contexts folded); Own: samples"
				      " whose innermost loop it is, Total: the loop with its nested loops and callees"
				    : "loops ranked by inclusive cost (all calling contexts folded); Total: the loop with"
				      " its nested loops and callees, Own: samples whose innermost loop it is");
	fprintf(rep->out, "%s", by_own ? "# The hot loops first: a loop nest's outer loops follow their inner ones.\n#\n"
				       : "# Outer loops (a program's main loop) come first; the hot loops are those with the "
					 "largest Own (--sort=own ranks by it).\n#\n");
	const char *sep = rep->opt->field_sep;
	if (sep)
		fprintf(rep->out, "# Total%sOwn%sSamples%sLoop%s(procedure [binary], inlined calls around it)\n#\n", sep,
			sep, sep, sep);
	else
		fprintf(rep->out, "#     Total        Own   Samples  %sLoop  (procedure [binary], inlined calls around it)\n"
				  "#     .....        ...   .......  %s....\n#\n", pl_wall_header(rep),
			pl_wall_width(rep) ? "  ...... .. ....... ..    .... ..  " : "");
	uint64_t *own = own_costs(&flat, rep->primary, PL_SELF_PERIOD);
	/* the nodes with this event's samples only, not every node */
	const uint32_t *nodes;
	size_t nn = pl_event_nodes(&rep->tree, rep->primary, &nodes);
	uint32_t *loops = pl_xmalloc((nn + 1) * sizeof *loops);
	size_t nl = 0;
	for (size_t i = 0; i < nn; i++) {
		uint32_t n = nodes[i];
		if (n && flat.nodes[n].kind == PL_LOOP && pl_cost(&flat, n, rep->primary)[PL_TOTAL] &&
		    pl_proc_selected(rep, enclosing_proc(&flat, n)))
			loops[nl++] = n;
	}
	struct by_own bo = { rep, own };
	if (by_own)
		qsort_r(loops, nl, sizeof *loops, cmp_own, &bo);
	else
		qsort_r(loops, nl, sizeof *loops, pl_cmp_total, rep); /* rep->tree is the folded tree here */
	uint64_t all = rep->ev_period[rep->primary];
	for (size_t i = 0; i < nl; i++) {
		uint32_t n = loops[i];
		const uint64_t *c = pl_cost(&flat, n, rep->primary);
		double total = all ? 100.0 * c[PL_TOTAL_PERIOD] / all : 0;
		if ((by_own ? (all ? 100.0 * own[n] / all : 0) : total) < rep->opt->percent_limit)
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
		pl_fit_width(rep, 33 + pl_wall_width(rep) + (int)strlen(label) + 4, ctx, sizeof ctx);
		if (sep)
			fprintf(rep->out, "%.2f%%%s%.2f%%%s%llu%s%s%s(%s)\n", total, sep, all ? 100.0 * own[n] / all : 0.0,
				sep, (unsigned long long)c[PL_TOTAL], sep, label, sep, ctx);
		else
		{
			fprintf(rep->out, "%9.2f%% %9.2f%% %9llu  ", total, all ? 100.0 * own[n] / all : 0.0,
				(unsigned long long)c[PL_TOTAL]);
			pl_print_wall_cells(rep, &flat, n);
			fprintf(rep->out, "%s  (%s)\n", label, ctx);
		}
	}
	if (!nl)
		fprintf(rep->out, "# no samples in loops\n");
	fputc('\n', rep->out);
	free(loops);
	rep->flat = rep->tree; /* its per-event index was made */
	free(own);
	rep->tree = cct;
	return 0;
}
