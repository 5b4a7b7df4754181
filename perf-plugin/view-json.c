/* view-json.c - the calling-context tree with numbers, as design.md's
 * `perf loops report --format=json` contract says: one object, events first,
 * then the tree; cost arrays follow the order of "events". */
#include "report.h"

#include <stdlib.h>
#include <string.h>

static void jstr(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void costs(pl_report *rep, uint32_t n, int k, const char *key)
{
	fprintf(rep->out, ",\"%s\":[", key);
	for (size_t i = 0; i < rep->nshown; i++)
		fprintf(rep->out, "%s%llu", i ? "," : "",
			(unsigned long long)pl_cost(&rep->tree, n, rep->shown[i])[k]);
	fputc(']', rep->out);
}

/* ,"KEY":LINE, with null for line 0 (no line: never shown as a line). */
static void jline(FILE *f, const char *key, unsigned line)
{
	if (line)
		fprintf(f, ",\"%s\":%u", key, line);
	else
		fprintf(f, ",\"%s\":null", key);
}

static const char *const kind_names[] = { "root", "proc", "inline", "alien", "loop", "stmt" };

static void node(pl_report *rep, uint32_t n)
{
	const pl_tree *t = &rep->tree;
	const pl_node *x = &t->nodes[n];
	FILE *f = rep->out;
	fprintf(f, "{\"kind\":\"%s\"", kind_names[x->kind]);
	if (x->kind == PL_PROC || x->kind == PL_INLINE) {
		fputs(",\"name\":", f);
		jstr(f, pl_node_name(rep, n));
	}
	if (x->kind != PL_ROOT) {
		fputs(",\"file\":", f);
		jstr(f, pl_node_file(rep, n));
		jline(f, "line", pl_node_line(rep, n));
	}
	if (x->kind == PL_INLINE) {
		fputs(",\"call_file\":", f);
		jstr(f, ls_scope_call_file(x->scope));
		jline(f, "call_line", ls_scope_call_line(x->scope));
	}
	if (x->kind == PL_PROC) {
		fputs(",\"dso\":", f);
		jstr(f, x->dso ? x->dso->name : NULL);
	}
	costs(rep, n, PL_TOTAL, "total");
	costs(rep, n, PL_SELF, "self");
	costs(rep, n, PL_TOTAL_PERIOD, "total_period");
	costs(rep, n, PL_SELF_PERIOD, "self_period");
	fputs(",\"children\":[", f);
	uint32_t *kids;
	size_t k = pl_sorted_children(rep, t, n, &kids);
	int first = 1;
	uint64_t all = rep->ev_period[rep->primary];
	for (size_t i = 0; i < k; i++) {
		const uint64_t *c = pl_cost(t, kids[i], rep->primary);
		/* a node with samples of another event only still shows */
		int any = 0;
		for (size_t e = 0; e < rep->nshown; e++)
			any |= pl_cost(t, kids[i], rep->shown[e])[PL_TOTAL] != 0;
		if (!any)
			continue;
		if (rep->opt->percent_limit > 0 && all &&
		    100.0 * (double)c[PL_TOTAL_PERIOD] / (double)all < rep->opt->percent_limit)
			continue;
		if (!first)
			fputc(',', f);
		first = 0;
		node(rep, kids[i]);
	}
	free(kids);
	fputs("]}", f);
}

int pl_view_json(pl_report *rep)
{
	FILE *f = rep->out;
	fputs("{\"events\":[", f);
	for (size_t i = 0; i < rep->nshown; i++) {
		size_t e = rep->shown[i];
		fprintf(f, "%s{\"name\":", i ? "," : "");
		jstr(f, pd_attr_at(rep->r, e)->name);
		fprintf(f, ",\"samples\":%llu,\"period\":%llu}", (unsigned long long)rep->ev_samples[e],
			(unsigned long long)rep->ev_period[e]);
	}
	fputs("],\"tree\":", f);
	node(rep, 0);
	fputs("}\n", f);
	return 0;
}
