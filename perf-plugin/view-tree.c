/* view-tree.c - the calling-context view: dynamic frames fused with static
 * structure, one line per node, indented by depth, with inclusive
 * ("Children") and exclusive ("Self") percentages as perf report prints them.
 * Also the columns every table view shares (-F, -n, --show-total-period),
 * and the -S/--symbol-filter selection of procedures. */
#include "support/text_escape.h"
#include "report.h"
#include "offcpu.h"

#include <stdlib.h>
#include <string.h>

/* perf's colours: red from 5%, green from 0.5% */
static void print_pct(const pl_report *rep, double p, int first)
{
	const char *on = "";
	if (rep->color)
		on = p >= 5.0 ? "\033[31m" : p >= 0.5 ? "\033[32m" : "";
	fprintf(rep->out, "%s%s%9.2f%%%s", first ? "" : " ", on, p, *on ? "\033[m" : "");
}

/* -t SEP: the columns unpadded, each followed by SEP (the text comes last) */
static void print_separated(const pl_report *rep, const uint64_t *c, double scale)
{
	unsigned f = rep->opt->fields;
	const char *sep = rep->opt->field_sep;
	int incl = (f & PL_COL_CHILDREN) != 0;
	if (f & PL_COL_CHILDREN)
		fprintf(rep->out, "%.2f%%%s", scale * (double)c[PL_TOTAL_PERIOD], sep);
	if (f & PL_COL_SELF)
		fprintf(rep->out, "%.2f%%%s", scale * (double)c[PL_SELF_PERIOD], sep);
	if (f & PL_COL_SAMPLES)
		fprintf(rep->out, "%llu%s", (unsigned long long)c[incl ? PL_TOTAL : PL_SELF], sep);
	if (f & PL_COL_PERIOD)
		fprintf(rep->out, "%llu%s", (unsigned long long)c[incl ? PL_TOTAL_PERIOD : PL_SELF_PERIOD], sep);
}

void pl_print_columns(const pl_report *rep, const uint64_t *c, uint64_t base)
{
	unsigned f = rep->opt->fields;
	if (rep->opt->field_sep) {
		print_separated(rep, c, base ? 100.0 / (double)base : 0.0);
		return;
	}
	int first = 1;
	double scale = base ? 100.0 / (double)base : 0.0;
	if (f & PL_COL_CHILDREN) {
		print_pct(rep, scale * (double)c[PL_TOTAL_PERIOD], first);
		first = 0;
	}
	if (f & PL_COL_SELF) {
		print_pct(rep, scale * (double)c[PL_SELF_PERIOD], first);
		first = 0;
	}
	/* with Children shown, counts are inclusive too, as perf report -n */
	int incl = (f & PL_COL_CHILDREN) != 0;
	if (f & PL_COL_SAMPLES) {
		fprintf(rep->out, "%s%9llu", first ? "" : " ", (unsigned long long)c[incl ? PL_TOTAL : PL_SELF]);
		first = 0;
	}
	if (f & PL_COL_PERIOD)
		fprintf(rep->out, "%s%12llu", first ? "" : " ",
			(unsigned long long)c[incl ? PL_TOTAL_PERIOD : PL_SELF_PERIOD]);
	fputs("  ", rep->out);
}

void pl_print_column_header(const pl_report *rep, const char *label)
{
	unsigned f = rep->opt->fields;
	char line[512] = "#";
	size_t n = 1;
	const char *self = f & PL_COL_CHILDREN ? "Self" : "Overhead";
	struct { unsigned bit; const char *name; int width; } cols[] = {
		{ PL_COL_CHILDREN, "Children", 10 }, { PL_COL_SELF, self, 10 },
		{ PL_COL_SAMPLES, "Samples", 9 }, { PL_COL_PERIOD, "Period", 12 },
	};
	const char *sep = rep->opt->field_sep;
	for (size_t i = 0; i < 4; i++)
		if ((f & cols[i].bit) && sep)
			n += snprintf(line + n, sizeof line - n, "%s%s%s", n > 1 ? "" : " ", cols[i].name, sep);
		else if (f & cols[i].bit)
			n += snprintf(line + n, sizeof line - n, "%s%*s", n > 1 ? " " : "", cols[i].width, cols[i].name);
	snprintf(line + n, sizeof line - n, "%s%s", sep ? "" : "  ", label);
	fprintf(rep->out, "%s\n", line);
	if (sep) { /* perf report -t prints no rule */
		fprintf(rep->out, "#\n");
		return;
	}
	/* the rule under it: every name as dots */
	for (char *p = line + 1; *p; p++)
		if (*p != ' ')
			*p = '.';
	fprintf(rep->out, "%s\n#\n", line);
}

int pl_proc_selected(const pl_report *rep, uint32_t n)
{
	const pl_report_options *o = rep->opt;
	if (!o->nsymbols && !o->symbol_filter)
		return 1;
	const char *name = pl_node_name(rep, n);
	if (!name)
		return 0;
	for (size_t i = 0; i < o->nsymbols; i++)
		if (!strcmp(name, o->symbols[i]))
			return 1;
	return o->symbol_filter && strstr(name, o->symbol_filter);
}

/* The characters pl_print_columns prints. */
static int columns_width(const pl_report *rep)
{
	unsigned f = rep->opt->fields;
	int w = 2, n = 0;
	static const struct { unsigned bit; int width; } cols[] = {
		{ PL_COL_CHILDREN, 10 }, { PL_COL_SELF, 10 }, { PL_COL_SAMPLES, 9 }, { PL_COL_PERIOD, 12 },
	};
	for (size_t i = 0; i < 4; i++)
		if (f & cols[i].bit)
			w += cols[i].width + (n++ ? 1 : 0);
	return w + pl_wall_width(rep);
}

void pl_fit_width(const pl_report *rep, int used, char *label, size_t len)
{
	if (rep->width <= 0)
		return;
	int room = rep->width - used;
	if (room < 6)
		room = 6; /* a stub at least */
	/* columns, not bytes: a UTF-8 name is cut between characters, and a
	 * wide character counts two (support/text_escape.h) */
	if (ls_text_width(label) <= (size_t)room)
		return;
	size_t keep = ls_text_prefix(label, (size_t)room - 3);
	if (keep + 4 <= len)
		memcpy(label + keep, "...", 4);
}

static double pct(uint64_t v, uint64_t base)
{
	return base ? 100.0 * (double)v / (double)base : 0.0;
}

/* -S roots are the procedure wherever it was called: each says where
 * ("malloc [libc.so.6]  (from main at small.cpp:14)"), or rows of one
 * procedure could not be told apart. */
static void caller_note(const pl_report *rep, uint32_t n, char *buf, size_t len)
{
	const pl_tree *t = &rep->tree;
	uint32_t site = t->nodes[n].parent, c = site;
	while (c && t->nodes[c].kind != PL_PROC && t->nodes[c].kind != PL_INLINE)
		c = t->nodes[c].parent;
	char where[512] = "", who[512] = "";
	if (t->nodes[site].kind == PL_STMT)
		pl_node_label(rep, site, where, sizeof where);
	if (c)
		snprintf(who, sizeof who, "%s", pl_node_name(rep, c) ? pl_node_name(rep, c) : "?");
	char shortened[512];
	const char *name = rep->opt->full_names ? who : pl_short_name(who, shortened, sizeof shortened);
	size_t used = strlen(buf);
	snprintf(buf + used, len - used, "%s(from %s%s%s)", used ? "  " : "", c ? name : "?", where[0] ? " at " : "",
		 where);
}

static void print_node(pl_report *rep, uint32_t n, int depth, uint64_t parent_total)
{
	const pl_tree *t = &rep->tree;
	const pl_report_options *o = rep->opt;
	const uint64_t *c = pl_cost(t, n, rep->primary);
	if (!c[PL_TOTAL])
		return;
	uint64_t all = rep->ev_period[rep->primary];
	uint64_t base = o->fractal && depth ? parent_total : all;
	double total = pct(c[PL_TOTAL_PERIOD], all);
	if (total < o->percent_limit)
		return;
	if (depth && pct(c[PL_TOTAL_PERIOD], base) < o->cg_threshold)
		return;
	char label[1024];
	pl_node_label(rep, n, label, sizeof label);
	char dso[1024] = "";
	if (t->nodes[n].kind == PL_PROC && t->nodes[n].dso)
		pl_dso_shown(t->nodes[n].dso, dso, sizeof dso);
	if (!depth && t->nodes[n].parent)
		caller_note(rep, n, dso, sizeof dso);
	/* on a terminal, deep rows stop moving right 30 columns before its
	 * edge, and say their depth instead */
	int indent = depth * 2, cap = rep->width - columns_width(rep) - 30;
	char deep[16] = "";
	if (rep->width > 0 && indent > cap) {
		indent = cap > 0 ? cap : 0;
		snprintf(deep, sizeof deep, "[%d] ", depth);
	}
	int least = columns_width(rep) + (int)strlen(deep) + 6 + (*dso ? 2 + (int)strlen(dso) : 0);
	if (*deep && indent + least > rep->width)
		indent = rep->width > least ? rep->width - least : 0;
	pl_fit_width(rep, columns_width(rep) + indent + (int)strlen(deep) + (*dso ? 2 + (int)strlen(dso) : 0), label,
		     sizeof label);
	pl_print_columns(rep, c, base);
	pl_print_wall_cells(rep, t, n);
	if (o->field_sep) /* the label's field: the dso after another separator */
		fprintf(rep->out, "%*s%s%s%s%s\n", indent, "", deep, label, *dso ? o->field_sep : "", dso);
	else
		fprintf(rep->out, "%*s%s%s%s%s\n", indent, "", deep, label, *dso ? "  " : "", dso);
	uint32_t *kids;
	size_t k = pl_event_children(rep, t, n, &kids);
	for (size_t i = 0; i < k; i++)
		print_node(rep, kids[i], depth + 1, c[PL_TOTAL_PERIOD]);
	free(kids);
}

/* -S/--symbol-filter: the subtrees of the selected procedures, wherever
 * they were called (outermost call of each; recursion is inside it). */
static size_t selected_roots(pl_report *rep, uint32_t **out)
{
	const pl_tree *t = &rep->tree;
	uint32_t *v = pl_xmalloc((t->n ? t->n : 1) * sizeof *v);
	uint8_t *in_sel = pl_xcalloc(t->n ? t->n : 1, 1);
	size_t k = 0;
	for (uint32_t n = 1; n < t->n; n++) {
		uint32_t p = t->nodes[n].parent;
		in_sel[n] = in_sel[p];
		if (!in_sel[n] && t->nodes[n].kind == PL_PROC && pl_proc_selected(rep, n)) {
			in_sel[n] = 1;
			v[k++] = n;
		}
	}
	free(in_sel);
	*out = v;
	return k;
}

int pl_cmp_total(const void *pa, const void *pb, void *arg)
{
	const pl_report *rep = arg;
	uint32_t x = *(const uint32_t *)pa, y = *(const uint32_t *)pb;
	uint64_t cx = pl_cost(&rep->tree, x, rep->primary)[PL_TOTAL_PERIOD];
	uint64_t cy = pl_cost(&rep->tree, y, rep->primary)[PL_TOTAL_PERIOD];
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return x < y ? -1 : x > y;
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

/* What a report holds besides its reader (the caller closes that). */
void pl_report_free(pl_report *rep)
{
	pl_attrib_free(rep->attrib);
	pl_offcpu_free(rep->offcpu);
	free(rep->off_why);
	pl_tree_free(&rep->tree);
	pl_places_free(&rep->places);
	pl_daddr_free();
	if (rep->have_flat)
		pl_tree_free(&rep->flat);
	pl_session_free(rep->s);
	free(rep->ev_samples);
	free(rep->ev_period);
	free(rep->shown);
}

void pl_print_indented_tree(pl_report *rep, const char *what, const char *column)
{
	pl_print_header(rep, what);
	char label[256];
	snprintf(label, sizeof label, "%s%s", pl_wall_header(rep), column);
	pl_print_column_header(rep, label);
	uint32_t *kids;
	size_t k;
	if (rep->opt->nsymbols || rep->opt->symbol_filter) {
		k = selected_roots(rep, &kids);
		qsort_r(kids, k, sizeof *kids, pl_cmp_total, rep);
	} else {
		k = pl_event_children(rep, &rep->tree, 0, &kids);
	}
	uint64_t all = rep->ev_period[rep->primary];
	for (size_t i = 0; i < k; i++)
		print_node(rep, kids[i], 0, all);
	free(kids);
	fputc('\n', rep->out);
}

int pl_view_tree(pl_report *rep)
{
	int children = (rep->opt->fields & PL_COL_CHILDREN) != 0;
	const char *what;
	if (rep->opt->callee)
		what = children ? "callee-ordered calling-context tree (-g callee): where the samples landed, then its "
				  "callers; Children: the samples of each path, Self: own statements of the first frame"
				: "callee-ordered calling-context tree (-g callee): where the samples landed, then its "
				  "callers; Overhead: own statements of the first frame";
	else
		what = children ? "calling-context tree: procedures, [I] inlined calls, loops, statements;"
				  " Children: with callees, Self: own statements (callees excluded)"
				: "calling-context tree: procedures, [I] inlined calls, loops, statements;"
				  " Overhead: own statements (callees excluded)";
	pl_print_indented_tree(rep, what, "Context");
	return 0;
}
