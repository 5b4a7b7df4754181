/* view-data.c - `perf loops report --format=data` (and --format=loops with
 * -s type or typeoff): per procedure and per loop, the samples by the
 * variable and by the type and field their memory access reaches (the
 * access -s type takes: data-keys.c's pl_data_access, the skid rule
 * included), all calling contexts folded:
 *
 *     95.57%       566  sum_grid  [data_layout_clang]
 *     95.40%       565      variable  gr
 *     95.40%       565      type      struct grid +26 (cells[].flag)
 *     94.91%       562    loop at data_layout.c:37
 *     ...
 *
 * A procedure's rows count all its samples, a loop's those whose innermost
 * loop it is (its own).  Where the samples carry a data address (perf
 * record -d), "address" rows say where it was (data-addr.c): a global
 * variable and field, the stack, the heap.  The same groups go into
 * --format=json's "data" (pl_data_json) when -s type or typeoff asks. */
#include "report.h"
#include "support/json_writer.h"
#include "support/text_escape.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum { ROW_VAR, ROW_TYPE, ROW_ADDR };

struct drow {
	int kind;
	char *what;
	uint64_t samples, period;
};

struct dgroup {
	const void *proc_key, *loop_key; /* the scopes (or names) folded over contexts */
	uint32_t proc, loop;             /* a node of each, for its label */
	uint64_t samples, period;
	struct drow *rows;
	size_t nrows, cap;
	uint64_t proc_period;            /* the procedure's: the order */
	const char *proc_name;           /* ties broken by names and addresses, never by pointers */
	uint64_t loop_addr;
};

struct dgroups {
	struct dgroup *v;
	size_t n, cap;
	uint64_t own, skid, none; /* samples at an access, before one (skid), without a variable */
};

static const void *node_key(const pl_tree *t, uint32_t n)
{
	return t->nodes[n].scope ? (const void *)t->nodes[n].scope : (const void *)t->nodes[n].name;
}

static struct dgroup *group_of(struct dgroups *g, const pl_tree *t, uint32_t proc, uint32_t loop)
{
	const void *pk = node_key(t, proc), *lk = loop ? node_key(t, loop) : NULL;
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].proc_key == pk && g->v[i].loop_key == lk && t->nodes[g->v[i].proc].dso == t->nodes[proc].dso)
			return &g->v[i];
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 32;
		g->v = pl_xrealloc(g->v, g->cap * sizeof *g->v);
	}
	g->v[g->n] = (struct dgroup){ .proc_key = pk, .loop_key = lk, .proc = proc, .loop = loop };
	return &g->v[g->n++];
}

static void add_row(struct dgroup *gr, int kind, const char *what, const pl_place *pl)
{
	for (size_t i = 0; i < gr->nrows; i++)
		if (gr->rows[i].kind == kind && !strcmp(gr->rows[i].what, what)) {
			gr->rows[i].samples += pl->samples;
			gr->rows[i].period += pl->period;
			return;
		}
	if (gr->nrows == gr->cap) {
		gr->cap = gr->cap ? 2 * gr->cap : 8;
		gr->rows = pl_xrealloc(gr->rows, gr->cap * sizeof *gr->rows);
	}
	gr->rows[gr->nrows++] = (struct drow){ kind, pl_xstrdup(what), pl->samples, pl->period };
}

static void add_place(struct dgroup *gr, const ls_access *a, const pl_place *pl)
{
	char typeoff[1024];
	gr->samples += pl->samples;
	gr->period += pl->period;
	if (!a || !a->variable) {
		add_row(gr, ROW_VAR, "(no variable)", pl);
		add_row(gr, ROW_TYPE, "(unknown)", pl);
		return;
	}
	add_row(gr, ROW_VAR, a->variable, pl);
	if (a->field[0])
		snprintf(typeoff, sizeof typeoff, "%s +%" PRId64 " (%s)", a->type, a->offset, a->field);
	else
		snprintf(typeoff, sizeof typeoff, "%s +%" PRId64, a->type, a->offset);
	add_row(gr, ROW_TYPE, typeoff, pl);
}

static int cmp_row(const void *x, const void *y)
{
	const struct drow *a = x, *b = y;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	return strcmp(a->what, b->what);
}

/* Procedures by their cost, each followed by its loops by theirs. */
static int cmp_group(const void *x, const void *y)
{
	const struct dgroup *a = x, *b = y;
	if (a->proc_key != b->proc_key || a->proc_period != b->proc_period) {
		if (a->proc_period != b->proc_period)
			return a->proc_period > b->proc_period ? -1 : 1;
		int c = strcmp(a->proc_name ? a->proc_name : "", b->proc_name ? b->proc_name : "");
		if (c)
			return c;
		return a->proc_key < b->proc_key ? -1 : 1; /* namesakes: rare, in any order */
	}
	if (!a->loop_key != !b->loop_key)
		return a->loop_key ? 1 : -1;
	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	return a->loop_addr < b->loop_addr ? -1 : a->loop_addr > b->loop_addr;
}

/* The data addresses (data-addr.c) of event EV's samples, as ROW_ADDR rows
 * of the groups of their procedure and innermost loop. */
static void add_addresses(pl_report *rep, size_t ev, struct dgroups *g)
{
	const pl_tree *t = &rep->tree;
	const struct pl_daddr *v;
	size_t n = pl_daddr_entries(&v);
	for (size_t i = 0; i < n; i++) {
		if (v[i].ev != ev)
			continue;
		uint32_t loop = 0, proc = v[i].node;
		for (; proc && t->nodes[proc].kind != PL_PROC; proc = t->nodes[proc].parent)
			if (!loop && t->nodes[proc].kind == PL_LOOP)
				loop = proc;
		if (!proc || !pl_proc_selected(rep, proc))
			continue;
		pl_place pl = { .samples = v[i].samples, .period = v[i].period };
		for (int k = 0; k < 1 + (loop != 0); k++) {
			add_row(group_of(g, t, proc, k ? loop : 0), ROW_ADDR, v[i].what, &pl);
		}
	}
}

/* Event EV's groups (rep->places of the selected procedures). */
static void collect(pl_report *rep, size_t ev, struct dgroups *g)
{
	const pl_tree *t = &rep->tree;
	for (size_t i = 0; i < rep->places.n; i++) {
		const pl_place *pl = &rep->places.v[i];
		if (pl->ev != ev)
			continue;
		uint32_t loop = 0, proc = pl->node;
		for (; proc && t->nodes[proc].kind != PL_PROC; proc = t->nodes[proc].parent)
			if (!loop && t->nodes[proc].kind == PL_LOOP)
				loop = proc;
		if (!proc || !pl_proc_selected(rep, proc))
			continue;
		const ls_accesses *set;
		int skid;
		const ls_access *a = pl_data_access(rep, pl, &set, &skid);
		*(!a || !a->variable ? &g->none : skid ? &g->skid : &g->own) += pl->samples;
		add_place(group_of(g, t, proc, 0), a, pl);
		if (loop)
			add_place(group_of(g, t, proc, loop), a, pl);
	}
	add_addresses(rep, ev, g);
	for (size_t i = 0; i < g->n; i++) {
		for (size_t j = 0; j < g->n; j++)
			if (!g->v[j].loop_key && g->v[j].proc_key == g->v[i].proc_key &&
			    t->nodes[g->v[j].proc].dso == t->nodes[g->v[i].proc].dso)
				g->v[i].proc_period = g->v[j].period;
		qsort(g->v[i].rows, g->v[i].nrows, sizeof *g->v[i].rows, cmp_row);
		g->v[i].proc_name = pl_node_name(rep, g->v[i].proc);
		const ls_scope *ls = g->v[i].loop ? t->nodes[g->v[i].loop].scope : NULL;
		g->v[i].loop_addr = ls ? ls_scope_low(ls) : 0;
	}
	if (g->n)
		qsort(g->v, g->n, sizeof *g->v, cmp_group);
}

static void groups_free(struct dgroups *g)
{
	for (size_t i = 0; i < g->n; i++) {
		for (size_t j = 0; j < g->v[i].nrows; j++)
			free(g->v[i].rows[j].what);
		free(g->v[i].rows);
	}
	free(g->v);
}

static void print_cost(pl_report *rep, uint64_t samples, uint64_t period, uint64_t all)
{
	uint64_t c[PL_NCOST] = { 0 };
	c[PL_SELF] = samples;
	c[PL_SELF_PERIOD] = period;
	pl_print_columns(rep, c, all);
}

static void print_group(pl_report *rep, const struct dgroup *gr, uint64_t all)
{
	FILE *out = rep->out;
	char label[1024], dso[300];
	print_cost(rep, gr->samples, gr->period, all);
	pl_node_label(rep, gr->loop ? gr->loop : gr->proc, label, sizeof label);
	fputs(gr->loop ? "    " : "  ", out);
	ls_text_fputs(label, out);
	if (!gr->loop && rep->tree.nodes[gr->proc].dso) {
		fputs("  ", out);
		ls_text_fputs(pl_dso_shown(rep->tree.nodes[gr->proc].dso, dso, sizeof dso), out);
	}
	fputc('\n', out);
	for (size_t i = 0; i < gr->nrows; i++) {
		const struct drow *r = &gr->rows[i];
		if (all && 100.0 * (double)r->period / (double)all < rep->opt->percent_limit)
			continue;
		print_cost(rep, r->samples, r->period, all);
		fprintf(out, "%s%s  ", gr->loop ? "        " : "      ",
			r->kind == ROW_VAR ? "variable" : r->kind == ROW_TYPE ? "type    " : "address ");
		ls_text_fputs(r->what, out);
		fputc('\n', out);
	}
}

int pl_view_data(pl_report *rep)
{
	pl_report_options o = *rep->opt;
	const pl_report_options *saved = rep->opt;
	o.fields &= ~PL_COL_CHILDREN; /* a row is its own samples: there is no inclusive column */
	if (!o.fields)
		o.fields = PL_COL_SELF;
	rep->opt = &o;
	struct dgroups g = { 0 };
	collect(rep, rep->primary, &g);
	pl_print_header(rep, "per procedure and loop, the samples by the variable and by the type and field their"
			     " memory access reaches (all calling contexts folded; a loop's: those whose innermost"
			     " loop it is)");
	pl_print_column_header(rep, "Procedure, loop: variable, type +offset (field)");
	uint64_t all = rep->ev_period[rep->primary];
	for (size_t i = 0; i < g.n; i++)
		if (!all || 100.0 * (double)g.v[i].period / (double)all >= o.percent_limit)
			print_group(rep, &g.v[i], all);
	fprintf(rep->out,
		"# data types: %" PRIu64 " samples at a memory access, %" PRIu64 " at an instruction without one "
		"(the IP skids past the one that took the time: the last access before it in its block taken), "
		"%" PRIu64 " with no variable found\n",
		g.own, g.skid, g.none);
	groups_free(&g);
	pl_data_keys_end(rep, 0);
	fputc('\n', rep->out);
	rep->opt = saved;
	return 0;
}

/* --format=json with -s type or typeoff: "data": per shown event, its groups. */
void pl_data_json(ls_jw *w, pl_report *rep)
{
	ls_jw_key(w, "data");
	ls_jw_array(w);
	for (size_t e = 0; e < rep->nshown; e++) {
		struct dgroups g = { 0 };
		collect(rep, rep->shown[e], &g);
		ls_jw_object(w);
		ls_jw_key(w, "event");
		ls_jw_string(w, pd_attr_at(rep->r, rep->shown[e])->name);
		ls_jw_key(w, "groups");
		ls_jw_array(w);
		for (size_t i = 0; i < g.n; i++) {
			const struct dgroup *gr = &g.v[i];
			char label[1024];
			ls_jw_object(w);
			ls_jw_key(w, "procedure");
			ls_jw_string(w, pl_node_name(rep, gr->proc));
			ls_jw_key(w, "dso");
			ls_jw_string(w, rep->tree.nodes[gr->proc].dso ? pl_dso_path(rep->tree.nodes[gr->proc].dso) : NULL);
			ls_jw_key(w, "loop");
			if (gr->loop) {
				pl_node_label(rep, gr->loop, label, sizeof label);
				ls_jw_string(w, label);
			} else {
				ls_jw_string(w, NULL);
			}
			ls_jw_key(w, "samples");
			ls_jw_uint(w, gr->samples);
			ls_jw_key(w, "period");
			ls_jw_uint(w, gr->period);
			for (int k = ROW_VAR; k <= ROW_ADDR; k++) {
				static const char *const keys[] = { "variables", "types", "addresses" };
				static const char *const names[] = { "variable", "typeoff", "address" };
				ls_jw_key(w, keys[k]);
				ls_jw_array(w);
				for (size_t j = 0; j < gr->nrows; j++) {
					if (gr->rows[j].kind != k)
						continue;
					ls_jw_object(w);
					ls_jw_key(w, names[k]);
					ls_jw_string(w, gr->rows[j].what);
					ls_jw_key(w, "samples");
					ls_jw_uint(w, gr->rows[j].samples);
					ls_jw_key(w, "period");
					ls_jw_uint(w, gr->rows[j].period);
					ls_jw_object_end(w);
				}
				ls_jw_array_end(w);
			}
			ls_jw_object_end(w);
		}
		ls_jw_array_end(w);
		ls_jw_object_end(w);
		groups_free(&g);
	}
	ls_jw_array_end(w);
	pl_data_keys_end(rep, 0);
}

/* The browser's data view (browser.c, key d): the groups of the procedure
 * whose scope (or name) is PROC_KEY in DSO, as --format=data prints them,
 * for event rep->primary; a malloc'd string, NULL when it has no samples. */
char *pl_data_text(pl_report *rep, const void *proc_key, const pl_dso *dso)
{
	struct dgroups g = { 0 };
	collect(rep, rep->primary, &g);
	char *buf = NULL;
	size_t len = 0, shown = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		groups_free(&g);
		return NULL;
	}
	pl_report_options o = *rep->opt;
	const pl_report_options *saved = rep->opt;
	FILE *saved_out = rep->out;
	int saved_color = rep->color;
	o.fields = PL_COL_SELF | PL_COL_SAMPLES;
	rep->opt = &o;
	rep->out = f;
	rep->color = 0;
	fprintf(f, "  Overhead   Samples  Procedure, loop: variable, type +offset (field)\n");
	uint64_t all = rep->ev_period[rep->primary];
	for (size_t i = 0; i < g.n; i++)
		if (g.v[i].proc_key == proc_key && rep->tree.nodes[g.v[i].proc].dso == dso) {
			print_group(rep, &g.v[i], all);
			shown++;
		}
	fprintf(f, "# data types: %" PRIu64 " samples at a memory access, %" PRIu64 " before one (skid), %" PRIu64
		   " with no variable found (all procedures)\n", g.own, g.skid, g.none);
	rep->opt = saved;
	rep->out = saved_out;
	rep->color = saved_color;
	fclose(f);
	groups_free(&g);
	pl_data_keys_end(rep, 0);
	if (!shown) {
		free(buf);
		return NULL;
	}
	return buf;
}
