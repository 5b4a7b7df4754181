/* stat-print.c - `perf loops stat`'s report: per loop its entries,
 * iterations, trip count per entry and exits by edge (each marked when
 * derived by flow conservation), then the probes' hits and what they cost;
 * as text or JSON. */
#include "report.h"
#include "stat.h"
#include "support/json_writer.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static uint64_t total_hits(const struct stat_plan *p)
{
	uint64_t h = 0;
	for (size_t i = 0; i < p->nctr; i++)
		h += p->ctr[i].value;
	return h;
}

/* Does Q count with a probe that was on in --burst's windows only? */
static bool windowed(const struct stat_plan *p, const struct stat_qty *q)
{
	for (int i = 0; i < q->nterms; i++)
		if (p->ctr[q->terms[i].counter].windowed)
			return true;
	return false;
}

static void text_qty(FILE *out, const struct stat_plan *p, const char *what, const struct stat_qty *q)
{
	if (q->known && windowed(p, q))
		fprintf(out, "  %-12s %14s  (probed in bursts: estimated below)\n", what, "?");
	else if (q->known)
		fprintf(out, "  %-12s %14" PRId64 "%s\n", what, stat_value(p, q), q->derived ? "  (derived)" : "");
	else
		fprintf(out, "  %-12s %14s  (no countable edge)\n", what, "?");
}

static void edge_name(char *buf, size_t size, const ls_loop_point *pt)
{
	if (pt->kind == LS_POINT_LEAVE)
		snprintf(buf, size, "%#" PRIx64 " %s", pt->from, pt->to ? "tail call" : "return");
	else if (pt->how == LS_HOW_COND)
		snprintf(buf, size, "%#" PRIx64 " -> %#" PRIx64 " j%s %s", pt->from, pt->to, pt->cond_name,
		         pt->taken ? "taken" : "not taken");
	else
		snprintf(buf, size, "%#" PRIx64 " -> %#" PRIx64 " %s", pt->from, pt->to, ls_point_how_name(pt->how));
}

/* The histogram's rows: each trip count with its entries, or with more
 * than 16 distinct counts, power-of-two ranges of them. */
static void text_trips(FILE *out, const struct stat_trips *t)
{
	if (!t->usable) {
		fprintf(out, "  %-12s %14s  (its entries are derived: no event starts a trip)\n", "trips", "?");
		return;
	}
	if (!t->ntrips)
		return;
	fprintf(out, "  %-12s min %" PRIu64 ", max %" PRIu64 ", mean %.2f  (%" PRIu64 " traced entries; histogram:)\n",
	        "trips", t->min, t->max, (double)t->sum / t->ntrips, t->ntrips);
	size_t distinct = 0;
	for (uint64_t i = 0; i < t->ntrips; i++)
		distinct += i == 0 || t->trip[i] != t->trip[i - 1];
	for (uint64_t i = 0; i < t->ntrips;) {
		uint64_t lo = t->trip[i], hi = lo;
		if (distinct > 16)
			for (hi = 1; hi <= lo && hi; hi <<= 1)
				;
		uint64_t j = i;
		while (j < t->ntrips && (distinct > 16 ? t->trip[j] < hi || hi == 0 : t->trip[j] == lo))
			j++;
		char label[64];
		if (distinct > 16)
			snprintf(label, sizeof label, "%" PRIu64 "..%" PRIu64, lo ? hi >> 1 : 0, hi ? hi - 1 : UINT64_MAX);
		else
			snprintf(label, sizeof label, "%" PRIu64, lo);
		fprintf(out, "    %-24s %10" PRIu64 " %s\n", label, j - i, j - i == 1 ? "entry" : "entries");
		i = j;
	}
}

static void text_estimate(FILE *out, const struct stat_burst_est *e)
{
	if (e->iterations < 0) {
		fprintf(out, "  %-12s %14s  (no whole trip in %u bursts: no ratio; trips longer than ON under the probes?)\n", "~iterations", "?",
		        e->windows);
		return;
	}
	fprintf(out, "  %-12s %14.0f  +- %.0f (%.2f%%; %u bursts, %.2f%% of the run, saw %" PRIu64
	        " iterations in %" PRIu64 " whole trips)\n", "~iterations", e->iterations, e->stderr_,
	        e->iterations > 0 ? 100 * e->stderr_ / e->iterations : 0, e->windows, 100 * e->on_fraction,
	        e->win_iter, e->win_entries);
}

static void text_loop(FILE *out, const struct stat_plan *p, const struct stat_loop *L)
{
	fprintf(out, "loop %s:%u  %s:%u  header %#" PRIx64 "%s\n", L->function, L->index, L->file ? L->file : "??",
	        L->line, L->header, L->irreducible ? "  irreducible" : "");
	if (L->hot_share >= 0)
		fprintf(out, "  %-12s %13.2f%%  of the recording's samples (its own: --hot)\n", "hot", L->hot_share);
	text_qty(out, p, "entries", &L->entries);
	text_qty(out, p, "iterations", &L->iterations);
	if (L->est)
		text_estimate(out, L->est);
	if (L->entries.known && L->iterations.known && !windowed(p, &L->iterations) && stat_value(p, &L->entries) > 0)
		fprintf(out, "  %-12s %14.2f\n", "trip count", (double)stat_value(p, &L->iterations) / stat_value(p, &L->entries));
	if (L->trips)
		text_trips(out, L->trips);
	int64_t sum = 0;
	bool all = true;
	for (size_t i = 0; i < L->nexits; i++) {
		all = all && L->exits[i].q.known;
		sum += L->exits[i].q.known ? stat_value(p, &L->exits[i].q) : 0;
	}
	if (all)
		fprintf(out, "  %-12s %14" PRId64 "\n", "exits", sum);
	for (size_t i = 0; i < L->nexits; i++) {
		char name[128];
		edge_name(name, sizeof name, &L->exits[i].pt);
		const struct stat_qty *q = &L->exits[i].q;
		if (q->known)
			fprintf(out, "    %-36s %10" PRId64 "%s\n", name, stat_value(p, q), q->derived ? "  (derived)" : "");
		else
			fprintf(out, "    %-36s %10s\n", name, "?");
	}
}

static void json_qty(ls_jw *w, const struct stat_plan *p, const char *key, const struct stat_qty *q)
{
	ls_jw_key(w, key);
	if (q->known && !windowed(p, q))
		ls_jw_uint(w, (uint64_t)stat_value(p, q));
	else
		ls_jw_null(w);
}

static void json_trips(ls_jw *w, const struct stat_trips *t)
{
	ls_jw_key(w, "trips");
	if (!t->usable) {
		ls_jw_null(w);
		return;
	}
	ls_jw_object(w);
	ls_jw_key(w, "entries"); ls_jw_uint(w, t->ntrips);
	ls_jw_key(w, "min"); ls_jw_uint(w, t->min);
	ls_jw_key(w, "max"); ls_jw_uint(w, t->max);
	ls_jw_key(w, "iterations"); ls_jw_uint(w, t->sum);
	ls_jw_key(w, "histogram"); /* [trip count, entries] for each count seen */
	ls_jw_array(w);
	for (uint64_t i = 0; i < t->ntrips;) {
		uint64_t j = i;
		while (j < t->ntrips && t->trip[j] == t->trip[i])
			j++;
		ls_jw_array(w);
		ls_jw_uint(w, t->trip[i]);
		ls_jw_uint(w, j - i);
		ls_jw_array_end(w);
		i = j;
	}
	ls_jw_array_end(w);
	ls_jw_object_end(w);
}

static void json_loop(ls_jw *w, const struct stat_plan *p, const struct stat_loop *L)
{
	ls_jw_object(w);
	ls_jw_key(w, "function"); ls_jw_string(w, L->function);
	ls_jw_key(w, "index"); ls_jw_uint(w, L->index);
	ls_jw_key(w, "file"); ls_jw_string(w, L->file);
	ls_jw_key(w, "line"); ls_jw_line(w, L->line);
	ls_jw_key(w, "header"); ls_jw_hex(w, L->header);
	ls_jw_key(w, "depth"); ls_jw_uint(w, L->depth);
	ls_jw_key(w, "irreducible"); ls_jw_bool(w, L->irreducible);
	json_qty(w, p, "entries", &L->entries);
	ls_jw_key(w, "entries_derived"); ls_jw_bool(w, L->entries.derived);
	json_qty(w, p, "iterations", &L->iterations);
	json_qty(w, p, "header_hits", &L->header_hits);
	ls_jw_key(w, "hot_share");
	if (L->hot_share >= 0)
		ls_jw_double(w, L->hot_share);
	else
		ls_jw_null(w);
	if (L->trips)
		json_trips(w, L->trips);
	if (L->est) {
		ls_jw_key(w, "iterations_estimate");
		ls_jw_object(w);
		ls_jw_key(w, "value");
		if (L->est->iterations >= 0)
			ls_jw_double(w, L->est->iterations);
		else
			ls_jw_null(w);
		ls_jw_key(w, "stderr"); ls_jw_double(w, L->est->stderr_);
		ls_jw_key(w, "windows"); ls_jw_uint(w, L->est->windows);
		ls_jw_key(w, "window_iterations"); ls_jw_uint(w, L->est->win_iter);
		ls_jw_key(w, "window_entries"); ls_jw_uint(w, L->est->win_entries);
		ls_jw_key(w, "on_fraction"); ls_jw_double(w, L->est->on_fraction);
		ls_jw_object_end(w);
	}
	ls_jw_key(w, "exits");
	ls_jw_array(w);
	for (size_t i = 0; i < L->nexits; i++) {
		const struct stat_edge *x = &L->exits[i];
		ls_jw_object(w);
		ls_jw_key(w, "kind"); ls_jw_string(w, ls_point_kind_name(x->pt.kind));
		ls_jw_key(w, "how"); ls_jw_string(w, ls_point_how_name(x->pt.how));
		ls_jw_key(w, "from"); ls_jw_hex(w, x->pt.from);
		ls_jw_key(w, "to"); ls_jw_hex(w, x->pt.to);
		json_qty(w, p, "count", &x->q);
		ls_jw_key(w, "derived"); ls_jw_bool(w, x->q.derived);
		ls_jw_object_end(w);
	}
	ls_jw_array_end(w);
	ls_jw_object_end(w);
}

/* "hits_by_class": {CLASS: {"hits", "cost_per_hit_ns"}} for the classes probed */
static void json_costs(ls_jw *w, const struct stat_plan *p)
{
	ls_jw_key(w, "hits_by_class");
	ls_jw_object(w);
	for (int c = 0; c < STAT_NCLASSES; c++) {
		uint64_t hits = 0;
		bool used = false;
		for (size_t i = 0; i < p->nctr; i++)
			if (p->ctr[i].insn_class == c) {
				hits += p->ctr[i].value;
				used = true;
			}
		if (!used)
			continue;
		ls_jw_key(w, stat_class_names[c]);
		ls_jw_object(w);
		ls_jw_key(w, "hits"); ls_jw_uint(w, hits);
		ls_jw_key(w, "cost_per_hit_ns");
		if (p->class_cost_us[c] >= 0)
			ls_jw_uint(w, (uint64_t)(p->class_cost_us[c] * 1e3 + 0.5));
		else
			ls_jw_null(w);
		ls_jw_object_end(w);
	}
	ls_jw_object_end(w);
}

/* "probes: N uprobes, H hits = S s of overhead (a hit measured: C us
 * CLASS x HITS, ...)" */
static void text_costs(FILE *out, const struct stat_plan *p)
{
	fprintf(out, "probes: %zu uprobes, %" PRIu64 " hits", p->nctr, total_hits(p));
	if (p->overhead_s < 0) {
		fprintf(out, " (cost of a hit not measured)\n");
		return;
	}
	fprintf(out, " = %.3f s of overhead (a hit, measured:", p->overhead_s);
	const char *sep = " ";
	for (int c = 0; c < STAT_NCLASSES; c++) {
		uint64_t hits = 0;
		bool used = false;
		for (size_t i = 0; i < p->nctr; i++)
			if (p->ctr[i].insn_class == c) {
				hits += p->ctr[i].value;
				used = true;
			}
		if (used)
			fprintf(out, "%s%.2f us %s x %" PRIu64, sep, p->class_cost_us[c], stat_class_names[c], hits);
		sep = used ? ", " : sep;
	}
	fprintf(out, ")\n");
}

static void json_report(FILE *out, const struct stat_plan *p, const char *binary)
{
	ls_jw w;
	ls_jw_init(&w, out, LS_JW_PRETTY);
	ls_jw_object(&w);
	ls_jw_key(&w, "binary"); ls_jw_string(&w, binary);
	ls_jw_key(&w, "status"); ls_jw_uint(&w, (uint64_t)p->status);
	ls_jw_key(&w, "milliseconds"); ls_jw_uint(&w, (uint64_t)(p->seconds * 1e3 + 0.5));
	ls_jw_key(&w, "cpu_milliseconds");
	if (p->cpu_seconds >= 0)
		ls_jw_uint(&w, (uint64_t)(p->cpu_seconds * 1e3 + 0.5));
	else
		ls_jw_null(&w);
	ls_jw_key(&w, "mode"); ls_jw_string(&w, p->mode ? p->mode : "count");
	ls_jw_key(&w, "lost"); ls_jw_uint(&w, p->lost);
	ls_jw_key(&w, "probes"); ls_jw_uint(&w, p->nctr);
	ls_jw_key(&w, "hits"); ls_jw_uint(&w, total_hits(p));
	ls_jw_key(&w, "cost_per_hit_ns"); /* the mean over the hits */
	if (p->cost_us >= 0)
		ls_jw_uint(&w, (uint64_t)(p->cost_us * 1e3 + 0.5));
	else
		ls_jw_null(&w);
	ls_jw_key(&w, "overhead_ms");
	if (p->overhead_s >= 0)
		ls_jw_double(&w, p->overhead_s * 1e3);
	else
		ls_jw_null(&w);
	json_costs(&w, p);
	ls_jw_key(&w, "loops");
	ls_jw_array(&w);
	for (size_t i = 0; i < p->nloops; i++)
		json_loop(&w, p, &p->loops[i]);
	ls_jw_array_end(&w);
	ls_jw_object_end(&w);
	ls_jw_newline(&w);
	ls_jw_finish(&w);
}

int stat_print(const struct stat_plan *p, const char *binary, const struct stat_opts *o)
{
	FILE *out = o->output ? fopen(o->output, "w") : stdout;
	if (!out) {
		perror(o->output);
		return -1;
	}
	if (o->json) {
		json_report(out, p, binary);
	} else {
		fprintf(out, "perf loops stat: %s  (exit %d, %.3f s", binary, p->status, p->seconds);
		if (p->cpu_seconds >= 0)
			fprintf(out, ", %.3f s CPU", p->cpu_seconds);
		fprintf(out, ")\n");
		for (size_t i = 0; i < p->nloops; i++)
			text_loop(out, p, &p->loops[i]);
		text_costs(out, p);
	}
	int rc = 0;
	if (fflush(out) != 0 || (out != stdout && fclose(out) != 0)) {
		perror(o->output ? o->output : "stdout");
		rc = -1;
	}
	/* the program's own failure is ours, as with perf stat */
	return rc < 0 ? -1 : p->status;
}
