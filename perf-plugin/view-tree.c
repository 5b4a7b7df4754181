/* view-tree.c - the calling-context view: dynamic frames fused with static
 * structure, one line per node, indented by depth, with inclusive
 * ("Children") and exclusive ("Self") percentages as perf report prints them.
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

static double pct(const pl_report *rep, uint64_t v)
{
	uint64_t all = rep->ev_period[rep->primary];
	return all ? 100.0 * (double)v / (double)all : 0.0;
}

static void print_node(pl_report *rep, uint32_t n, int depth)
{
	const pl_tree *t = &rep->tree;
	const uint64_t *c = pl_cost(t, n, rep->primary);
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
	char dso[300];
	if (t->nodes[n].kind == PL_PROC && t->nodes[n].dso)
		fprintf(rep->out, "  %s", pl_dso_shown(t->nodes[n].dso, dso, sizeof dso));
	fputc('\n', rep->out);
	uint32_t *kids;
	size_t k = pl_event_children(rep, t, n, &kids);
	for (size_t i = 0; i < k; i++)
		print_node(rep, kids[i], depth + 1);
	free(kids);
}

/* The header every text view starts with, as perf report's. */
void pl_print_header(pl_report *rep, const char *what)
{
	FILE *f = rep->out;
	size_t e = rep->primary;
	fprintf(f, "# perf loops: %s\n#\n", what);
	fprintf(f, "# Total Lost Samples: %llu\n#\n", (unsigned long long)pl_session_lost_samples(rep->s));
	fprintf(f, "# Samples: %llu  of event '%s'\n", (unsigned long long)rep->ev_samples[e],
		pd_attr_at(rep->r, e)->name);
	fprintf(f, "# Event count (approx.): %llu\n#\n", (unsigned long long)rep->ev_period[e]);
}

void pl_print_indented_tree(pl_report *rep, const char *what, const char *column)
{
	pl_print_header(rep, what);
	if (rep->opt->children)
		fprintf(rep->out, "#  Children      Self   Samples  %s\n"
				  "# .........  ........  ........  %.*s\n#\n",
			column, (int)strlen(column), "..........");
	else
		fprintf(rep->out, "#  Overhead   Samples  %s\n"
				  "# .........  ........  %.*s\n#\n",
			column, (int)strlen(column), "..........");
	uint32_t *kids;
	size_t k = pl_event_children(rep, &rep->tree, 0, &kids);
	for (size_t i = 0; i < k; i++)
		print_node(rep, kids[i], 0);
	free(kids);
	fputc('\n', rep->out);
}

int pl_view_tree(pl_report *rep)
{
	pl_print_indented_tree(rep, "calling-context tree: procedures, [I] inlined calls, loops, statements",
			       "Context");
	return 0;
}
