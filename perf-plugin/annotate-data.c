/* annotate-data.c - `perf loops annotate --data-type[=TYPE]`: each data
 * type the samples' memory accesses reach (the access -s type takes:
 * data-keys.c, pl_data_access), with its layout (ls_accesses_layout) and
 * each field's cost, printed as perf annotate --data-type (perf 6.12)
 * prints it:
 *
 *   Annotate type: 'struct grid' in /path/to/binary (587 samples):
 *   ============================================================================
 *    Percent     offset       size  field
 *     100.00          0      0x284  struct grid	 {
 *       0.00          0        0x4      int	n;
 *     100.00        0x8      0x280      cell_t[16]	cells;
 *                                   };
 *
 * A sample counts at the access's offset (an indexed operand's: element
 * 0's; beyond the type, through a pointer into an array of them: folded
 * into the element), a member's cost is that of the offsets inside it, as
 * perf's type histogram adds them.  Types are per binary (perf's dso,type
 * keys), the most costly first; percentages are of the type's own cost,
 * one column per event. */
#include "report.h"
#include "support/text_escape.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct hit {
	int64_t off;
	size_t ev;            /* index in rep->shown */
	uint64_t samples, period;
};

struct dtype {
	const pl_dso *dso;
	char *type;
	ls_type_layout *layout;
	struct hit *hits;
	size_t nhits, cap;
	uint64_t *samples, *period; /* the type's, per shown event */
	uint64_t all_period;  /* over the events: the order */
};

struct dtypes {
	struct dtype *v;
	size_t n, cap;
	uint64_t skid, own, none;
};

static struct dtype *type_of(pl_report *rep, struct dtypes *ts, const pl_dso *dso, const ls_accesses *set,
			     const ls_access *a)
{
	for (size_t i = 0; i < ts->n; i++)
		if (ts->v[i].dso == dso && !strcmp(ts->v[i].type, a->type))
			return &ts->v[i];
	if (ts->n == ts->cap) {
		ts->cap = ts->cap ? 2 * ts->cap : 16;
		ts->v = pl_xrealloc(ts->v, ts->cap * sizeof *ts->v);
	}
	struct dtype *t = &ts->v[ts->n++];
	ls_error err;
	*t = (struct dtype){ .dso = dso, .type = pl_xstrdup(a->type), .layout = ls_accesses_layout(set, a, &err) };
	t->samples = pl_xcalloc(rep->nshown, sizeof *t->samples);
	t->period = pl_xcalloc(rep->nshown, sizeof *t->period);
	return t;
}

/* The shown column of event E, or -1. */
static int shown_index(const pl_report *rep, size_t e)
{
	for (size_t i = 0; i < rep->nshown; i++)
		if (rep->shown[i] == e)
			return (int)i;
	return -1;
}

static void add_hit(struct dtype *t, int64_t off, size_t ev, const pl_place *pl)
{
	const ls_type_member *whole = ls_type_layout_get(t->layout, 0);
	int64_t size = whole ? whole->size : 0;
	if (size > 0)
		off = ((off % size) + size) % size; /* through a pointer into an array of them */
	t->samples[ev] += pl->samples;
	t->period[ev] += pl->period;
	t->all_period += pl->period;
	for (size_t i = 0; i < t->nhits; i++)
		if (t->hits[i].off == off && t->hits[i].ev == ev) {
			t->hits[i].samples += pl->samples;
			t->hits[i].period += pl->period;
			return;
		}
	if (t->nhits == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 8;
		t->hits = pl_xrealloc(t->hits, t->cap * sizeof *t->hits);
	}
	t->hits[t->nhits++] = (struct hit){ off, ev, pl->samples, pl->period };
}

static void collect(pl_report *rep, struct dtypes *ts)
{
	for (size_t i = 0; i < rep->places.n; i++) {
		const pl_place *pl = &rep->places.v[i];
		int ev = shown_index(rep, pl->ev);
		if (ev < 0)
			continue;
		const ls_accesses *set;
		int skid;
		const ls_access *a = pl_data_access(rep, pl, &set, &skid);
		if (!a || !a->variable) {
			ts->none += pl->samples;
			continue;
		}
		*(skid ? &ts->skid : &ts->own) += pl->samples;
		add_hit(type_of(rep, ts, pl->map->dso, set, a), a->offset, (size_t)ev, pl);
	}
}

static int cmp_type(const void *x, const void *y)
{
	const struct dtype *a = x, *b = y;
	if (a->all_period != b->all_period)
		return a->all_period > b->all_period ? -1 : 1;
	int c = strcmp(a->type, b->type);
	return c ? c : strcmp(a->dso->name, b->dso->name);
}

/* perf's TYPE match: with or without the "struct " or "union " keyword. */
static int type_matches(const char *want, const char *type)
{
	if (!want)
		return 1;
	if (strncmp(want, "struct ", 7) && !strncmp(type, "struct ", 7))
		type += 7;
	else if (strncmp(want, "union ", 6) && !strncmp(type, "union ", 6))
		type += 6;
	return !strcmp(want, type);
}

/* One column per event: perf's Percent (of the type's cost), -n Samples
 * or --show-total-period Period. */
static int value_width(const pl_report *rep)
{
	return rep->opt->show_period ? 11 : 7;
}

static void print_value(const pl_report *rep, const struct dtype *t, size_t ev, int64_t lo, int64_t size)
{
	uint64_t s = 0, p = 0;
	for (size_t i = 0; i < t->nhits; i++)
		if (t->hits[i].ev == ev && t->hits[i].off >= lo && t->hits[i].off < lo + (size > 0 ? size : 1)) {
			s += t->hits[i].samples;
			p += t->hits[i].period;
		}
	if (rep->opt->show_period)
		fprintf(rep->out, " %11" PRIu64, p);
	else if (rep->opt->show_samples)
		fprintf(rep->out, " %7" PRIu64, s);
	else
		fprintf(rep->out, " %7.2f", t->period[ev] ? 100.0 * (double)p / (double)t->period[ev] : 0.0);
}

/* Member I and, inside braces, its children (the next members one level
 * deeper): perf's print_annotated_data_type.  Returns the next member's
 * index. */
static size_t print_member(pl_report *rep, const struct dtype *t, size_t i)
{
	const ls_type_member *m = ls_type_layout_get(t->layout, i);
	FILE *out = rep->out;
	for (size_t e = 0; e < rep->nshown; e++)
		print_value(rep, t, e, m->offset, m->size);
	int indent = 4 * (int)m->depth;
	fprintf(out, " %#10" PRIx64 " %#10" PRIx64 "  %*s", (uint64_t)m->offset, (uint64_t)(m->size > 0 ? m->size : 0),
		indent, "");
	ls_text_fputs(m->type, out);
	fputc('\t', out);
	ls_text_fputs(m->name, out);
	size_t next = i + 1;
	const ls_type_member *c = ls_type_layout_get(t->layout, next);
	if (c && c->depth > m->depth) {
		fputs(" {\n", out);
		while ((c = ls_type_layout_get(t->layout, next)) && c->depth > m->depth)
			next = print_member(rep, t, next);
		fprintf(out, "%*s}", (value_width(rep) + 1) * (int)rep->nshown + 24 + indent, "");
	}
	fputs(";\n", out);
	return next;
}

static void print_type(pl_report *rep, const struct dtype *t)
{
	FILE *out = rep->out;
	uint64_t samples = 0;
	for (size_t e = 0; e < rep->nshown; e++)
		samples += t->samples[e];
	fputs("Annotate type: '", out);
	ls_text_fputs(t->type, out);
	fputs("' in ", out);
	ls_text_fputs(t->dso->name, out);
	fprintf(out, " (%" PRIu64 " samples):\n", samples);
	if (rep->nshown > 1)
		for (size_t e = 0; e < rep->nshown; e++)
			fprintf(out, " event[%zu] = %s\n", e, pd_attr_at(rep->r, rep->shown[e])->name);
	fputs("============================================================================\n", out);
	const char *hdr = rep->opt->show_period ? "Period" : rep->opt->show_samples ? "Samples" : "Percent";
	fprintf(out, "%*s %10s %10s  %s\n", (value_width(rep) + 1) * (int)rep->nshown, hdr, "offset", "size", "field");
	if (ls_type_layout_count(t->layout))
		print_member(rep, t, 0);
	else
		fputs("  (its layout could not be read from the DWARF)\n", out);
	fputc('\n', out);
}

int pl_annotate_data_types(pl_report *rep)
{
	struct dtypes ts = { 0 };
	collect(rep, &ts);
	if (ts.n)
		qsort(ts.v, ts.n, sizeof *ts.v, cmp_type);
	if (rep->out == stdout)
		pl_pager_start(rep->opt);
	size_t printed = 0;
	for (size_t i = 0; i < ts.n; i++)
		if (type_matches(rep->opt->data_type_name, ts.v[i].type)) {
			print_type(rep, &ts.v[i]);
			printed++;
		}
	fprintf(rep->out,
		"# data types: %" PRIu64 " samples at a memory access, %" PRIu64 " at an instruction without one "
		"(the IP skids past the one that took the time: the last access before it in its block taken), "
		"%" PRIu64 " with no variable found\n",
		ts.own, ts.skid, ts.none);
	int rc = 0;
	if (!printed && rep->opt->data_type_name) {
		fprintf(stderr, "perf-loops: %s: no sample reached the data type '%s'\n", pd_name(rep->r),
			rep->opt->data_type_name);
		rc = 1;
	}
	for (size_t i = 0; i < ts.n; i++) {
		free(ts.v[i].type);
		ls_type_layout_free(ts.v[i].layout);
		free(ts.v[i].hits);
		free(ts.v[i].samples);
		free(ts.v[i].period);
	}
	free(ts.v);
	pl_data_keys_end(rep, 0);
	return rc;
}
