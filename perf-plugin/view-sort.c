/* view-sort.c - `-s/--sort KEYS`: perf report's histogram (as with
 * --no-children), one line per distinct combination of the keys of the
 * sampled place: its binary (dso), procedure (sym), statement (srcline),
 * innermost loop (loop), and perf report's keys that are not scopes:
 * the thread's command (comm), thread (pid, as perf's Pid:Command), CPU,
 * source file (srcfile), symbol and offset (symoff) and the size of the
 * binary's map (dso_size).  The places are places.c's, one per sample's
 * leaf, so the lines add up to 100%. */
#include "report.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	char *key;         /* the key columns, separated by \x1f */
	uint64_t samples, period;
};

static const char *const key_title[PL_NKEYS] = {
	"Shared Object", "Symbol", "Source:Line", "Loop", "Command", "Pid:Command", "CPU", "Source File",
	"Symbol Offset", "DSO size", "Data Type", "Data Type Offset", "Variable",
};

/* The procedure node of node N (0: none) and its innermost loop (*LOOP). */
static uint32_t proc_of(const pl_tree *t, uint32_t n, uint32_t *loop)
{
	*loop = 0;
	for (; n && t->nodes[n].kind != PL_PROC; n = t->nodes[n].parent)
		if (!*loop && t->nodes[n].kind == PL_LOOP)
			*loop = n;
	return n;
}

/* "[.] name" or "[k] name": the procedure's shown name, kernel or not. */
static void sym_part(const pl_report *rep, uint32_t proc, char *part, size_t len)
{
	const pl_dso *d = proc ? rep->tree.nodes[proc].dso : NULL;
	const char *name = proc ? pl_node_name(rep, proc) : NULL;
	char shortened[1024];
	if (!rep->opt->full_names && !rep->opt->no_demangle)
		name = pl_short_name(name, shortened, sizeof shortened);
	int kernel = d && (d->kind == PL_DSO_KERNEL || d->kind == PL_DSO_KMODULE);
	snprintf(part, len, "[%c] %s", kernel ? 'k' : '.', name ? name : "[unknown]");
}

/* perf's symoff: the symbol holding the address (ELF's or kallsyms') and
 * the offset in it; a C++ symbol by its procedure's shortened name (perf
 * demangles it); without a symbol (a binary whose symbols are in its debug
 * file alone) the procedure and the offset from its lowest address. */
static void symoff_part(pl_report *rep, const pl_place *pl, uint32_t proc, char *part, size_t len)
{
	uint64_t off, link;
	const char *sym = pl_attrib_symbol(rep->attrib, pl->map, pl->addr, &off);
	const pl_node *x = proc ? &rep->tree.nodes[proc] : NULL;
	if (!sym && x && x->scope && pl->map && !pl_attrib_link_addr(rep->attrib, pl->map, pl->addr, &link) &&
	    link >= ls_scope_low(x->scope)) {
		sym = "";
		off = link - ls_scope_low(x->scope);
	}
	char name[512];
	sym_part(rep, proc, name, sizeof name);
	if (sym && *sym && strncmp(sym, "_Z", 2)) {
		const pl_dso *d = pl->map ? pl->map->dso : NULL;
		int kernel = !d || d->kind == PL_DSO_KERNEL || d->kind == PL_DSO_KMODULE;
		snprintf(name, sizeof name, "[%c] %s", kernel ? 'k' : '.', sym);
	}
	if (sym)
		snprintf(part, len, "%s+0x%llx", name, (unsigned long long)off);
	else
		snprintf(part, len, "%s", name);
}

/* One key column of place PL (its leaf node N); COUNT: the first data key. */
static void key_part(pl_report *rep, int key, const pl_place *pl, int count, char *part, size_t len)
{
	const pl_tree *t = &rep->tree;
	uint32_t n = pl->node, loop, proc = proc_of(t, n, &loop);
	const pl_dso *d = proc ? t->nodes[proc].dso : NULL;
	switch (key) {
	case PL_KEY_DSO: snprintf(part, len, "%s", d ? d->short_name : "[unknown]"); break;
	case PL_KEY_SYM: sym_part(rep, proc, part, len); break;
	case PL_KEY_SRCLINE:
		if (t->nodes[n].kind == PL_STMT)
			pl_node_label(rep, n, part, len);
		else
			snprintf(part, len, "??");
		break;
	case PL_KEY_LOOP:
		if (loop)
			pl_node_label(rep, loop, part, len);
		else
			snprintf(part, len, "[not in a loop]");
		break;
	case PL_KEY_COMM: snprintf(part, len, "%s", pl->comm ? pl->comm : ""); break;
	case PL_KEY_PID: snprintf(part, len, "%7u:%s", pl->tid, pl->comm ? pl->comm : ""); break;
	case PL_KEY_CPU: snprintf(part, len, "%3.3d", pl->cpu); break;
	case PL_KEY_SRCFILE: {
		const char *f = t->nodes[n].kind == PL_STMT ? pl_node_file(rep, n) : NULL;
		const char *slash = f ? strrchr(f, '/') : NULL;
		snprintf(part, len, "%s", slash ? slash + 1 : f ? f : "");
		break;
	}
	case PL_KEY_SYMOFF: symoff_part(rep, pl, proc, part, len); break;
	case PL_KEY_TYPE:
	case PL_KEY_TYPEOFF: pl_data_key(rep, pl, key, count, part, len); break;
	case PL_KEY_VAR: part[0] = 0; break; /* pl_view_var's */
	case PL_KEY_DSO_SIZE:
		if (pl->map)
			snprintf(part, len, "%llu", (unsigned long long)(pl->map->end - pl->map->start));
		else
			part[0] = 0;
		break;
	}
}

/* The key columns of place PL, into BUF. */
static void place_key(pl_report *rep, const pl_place *pl, char *buf, size_t len)
{
	char part[1024];
	size_t used = 0;
	int counted = 0;
	for (size_t i = 0; i < rep->opt->nsort; i++) {
		int k = rep->opt->sort[i], data = k == PL_KEY_TYPE || k == PL_KEY_TYPEOFF;
		key_part(rep, k, pl, data && !counted++, part, sizeof part);
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
static size_t collect(pl_report *rep, struct entry **out)
{
	const pl_tree *t = &rep->tree;
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < rep->places.n; i++) {
		const pl_place *pl = &rep->places.v[i];
		uint32_t loop, proc = proc_of(t, pl->node, &loop);
		if (pl->ev != rep->primary || (proc && !pl_proc_selected(rep, proc)))
			continue;
		char key[4096];
		place_key(rep, pl, key, sizeof key);
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			v = pl_xrealloc(v, cap * sizeof *v);
		}
		v[n++] = (struct entry){ pl_xstrdup(key), pl->samples, pl->period };
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
	const char *sep = rep->opt->field_sep;
	for (size_t c = 0; c < k; c++)
		used += snprintf(label + used, used < len ? len - used : 0, "%s%-*s", c ? sep ? sep : "  " : "",
				 c + 1 < k && !sep ? w[c] : 0, key_title[rep->opt->sort[c]]);
}

int pl_view_sort(pl_report *rep)
{
	if (rep->opt->sort_mask & (1u << PL_KEY_VAR))
		return pl_view_var(rep);
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
				if (o.field_sep)
					fprintf(rep->out, "%s%.*s", k ? o.field_sep : "", l, p);
				else
					fprintf(rep->out, "%s%.*s%*s", k ? "  " : "", l, p, k + 1 < o.nsort ? w[k] - l : 0, "");
				p = e ? e + 1 : p + l;
			}
			fputc('\n', rep->out);
		}
		free(v[i].key);
	}
	free(v);
	pl_data_keys_end(rep, (o.sort_mask & (1u << PL_KEY_TYPE | 1u << PL_KEY_TYPEOFF)) != 0);
	fputc('\n', rep->out);
	rep->opt = saved;
	return 0;
}
