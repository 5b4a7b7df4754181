/* view-sort.c - `-s/--sort KEYS`: perf report's histogram (as with
 * --no-children), one line per distinct combination of the keys of the
 * sampled place: its binary (dso), procedure (sym), statement (srcline) and
 * innermost loop (loop).  The place is the leaf of each sample's chain, so
 * the lines add up to 100%. */
#include "report.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	char *key;         /* the key columns, separated by \x1f */
	uint64_t samples, period;
};

static const char *const key_title[PL_NKEYS] = { "Shared Object", "Symbol", "Source:Line", "Loop" };

/* The key columns of node N's place, into BUF. */
static void place_key(const pl_report *rep, uint32_t n, char *buf, size_t len)
{
	const pl_tree *t = &rep->tree;
	uint32_t proc = n, loop = 0;
	for (; proc && t->nodes[proc].kind != PL_PROC; proc = t->nodes[proc].parent)
		if (!loop && t->nodes[proc].kind == PL_LOOP)
			loop = proc;
	char part[1024];
	size_t used = 0;
	for (size_t i = 0; i < rep->opt->nsort; i++) {
		const pl_dso *d = proc ? t->nodes[proc].dso : NULL;
		switch (rep->opt->sort[i]) {
		case PL_KEY_DSO:
			snprintf(part, sizeof part, "%s", d ? d->short_name : "[unknown]");
			break;
		case PL_KEY_SYM: {
			const char *name = proc ? pl_node_name(rep, proc) : NULL;
			char shortened[1024];
			if (!rep->opt->full_names && !rep->opt->no_demangle)
				name = pl_short_name(name, shortened, sizeof shortened);
			int kernel = d && (d->kind == PL_DSO_KERNEL || d->kind == PL_DSO_KMODULE);
			snprintf(part, sizeof part, "[%c] %s", kernel ? 'k' : '.', name ? name : "[unknown]");
			break;
		}
		case PL_KEY_SRCLINE:
			if (t->nodes[n].kind == PL_STMT)
				pl_node_label(rep, n, part, sizeof part);
			else
				snprintf(part, sizeof part, "??");
			break;
		case PL_KEY_LOOP:
			if (loop)
				pl_node_label(rep, loop, part, sizeof part);
			else
				snprintf(part, sizeof part, "[not in a loop]");
			break;
		}
		used += snprintf(buf + used, used < len ? len - used : 0, "%s%s", i ? "\x1f" : "", part);
	}
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->key, ((const struct entry *)b)->key);
}

static int cmp_period(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* Entries of the sampled places, merged per key, largest first. */
static size_t collect(const pl_report *rep, struct entry **out)
{
	const pl_tree *t = &rep->tree;
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	for (uint32_t i = 1; i < t->n; i++) {
		uint64_t s = pl_node_own(t, i, rep->primary, PL_SELF);
		if (!s)
			continue;
		uint32_t proc = i;
		while (proc && t->nodes[proc].kind != PL_PROC)
			proc = t->nodes[proc].parent;
		if (proc && !pl_proc_selected(rep, proc))
			continue;
		char key[4096];
		place_key(rep, i, key, sizeof key);
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			v = pl_xrealloc(v, cap * sizeof *v);
		}
		v[n++] = (struct entry){ pl_xstrdup(key), s, pl_node_own(t, i, rep->primary, PL_SELF_PERIOD) };
	}
	if (n == 0) { /* V is NULL then, which qsort must not get */
		*out = v;
		return 0;
	}
	qsort(v, n, sizeof *v, cmp_key);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && !strcmp(v[m - 1].key, v[i].key)) {
			v[m - 1].samples += v[i].samples;
			v[m - 1].period += v[i].period;
			free(v[i].key);
		} else {
			v[m++] = v[i];
		}
	}
	qsort(v, m, sizeof *v, cmp_period);
	*out = v;
	return m;
}

/* Widths of the key columns, and the header label made of their titles. */
static void key_widths(const pl_report *rep, const struct entry *v, size_t n, int *w, char *label, size_t len)
{
	size_t k = rep->opt->nsort, used = 0;
	for (size_t c = 0; c < k; c++)
		w[c] = (int)strlen(key_title[rep->opt->sort[c]]);
	for (size_t i = 0; i < n; i++) {
		const char *p = v[i].key;
		for (size_t c = 0; c < k; c++) {
			const char *e = strchr(p, '\x1f');
			int l = e ? (int)(e - p) : (int)strlen(p);
			if (l > w[c])
				w[c] = l;
			p = e ? e + 1 : p + l;
		}
	}
	for (size_t c = 0; c < k; c++)
		used += snprintf(label + used, used < len ? len - used : 0, "%s%-*s", c ? "  " : "",
				 c + 1 < k ? w[c] : 0, key_title[rep->opt->sort[c]]);
}

int pl_view_sort(pl_report *rep)
{
	/* a histogram of leaf places: there is no inclusive column */
	pl_report_options o = *rep->opt;
	const pl_report_options *saved = rep->opt;
	o.fields &= ~PL_COL_CHILDREN;
	if (!o.fields)
		o.fields = PL_COL_SELF;
	rep->opt = &o;
	struct entry *v;
	size_t n = collect(rep, &v);
	/* -s keys are distinct (options.c): at most PL_NKEYS, each width set */
	assert(o.nsort <= PL_NKEYS);
	int w[PL_NKEYS] = { 0 };
	char label[512];
	key_widths(rep, v, n, w, label, sizeof label);
	pl_print_header(rep, "sampled places by --sort keys; Overhead: samples at that place");
	pl_print_column_header(rep, label);
	uint64_t all = rep->ev_period[rep->primary];
	for (size_t i = 0; i < n; i++) {
		uint64_t c[PL_NCOST] = { 0 };
		c[PL_SELF] = v[i].samples;
		c[PL_SELF_PERIOD] = v[i].period;
		if (all && 100.0 * (double)v[i].period / (double)all >= o.percent_limit) {
			pl_print_columns(rep, c, all);
			const char *p = v[i].key;
			for (size_t k = 0; k < o.nsort; k++) {
				const char *e = strchr(p, '\x1f');
				int l = e ? (int)(e - p) : (int)strlen(p);
				fprintf(rep->out, "%s%.*s%*s", k ? "  " : "", l, p, k + 1 < o.nsort ? w[k] - l : 0, "");
				p = e ? e + 1 : p + l;
			}
			fputc('\n', rep->out);
		}
		free(v[i].key);
	}
	free(v);
	fputc('\n', rep->out);
	rep->opt = saved;
	return 0;
}
