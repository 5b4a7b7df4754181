/* stat-plan.c - `perf loops stat`'s plan: which uprobe counters to place
 * and which sums of them are each loop's entries, iterations and exits.
 *
 * Rules (cheapest first, since a probe hit costs microseconds):
 *   - an edge out of a non-branch or a jump: a probe on its source;
 *   - an edge out of a conditional branch: a probe on its target when the
 *     target has no other way in, else a probe on the branch filtered on
 *     the flags for that outcome;
 *   - entries: the entry edges (cold); if one cannot be counted, header
 *     hits minus back edges;
 *   - iterations: the header's hits; an irreducible loop (several entry
 *     blocks): entries plus back edges;
 *   - exits: each edge; one whose counter would fire on every iteration (a
 *     filtered probe on the latch) is derived instead, as entries minus
 *     the other exits (flow conservation), unless --all-edges. */
#include "report.h"
#include "stat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int counter(struct stat_plan *p, uint64_t addr, uint64_t offset, int cond, int taken)
{
	for (size_t i = 0; i < p->nctr; i++)
		if (p->ctr[i].addr == addr && p->ctr[i].cond == cond && (cond < 0 || p->ctr[i].taken == taken))
			return (int)i;
	if (p->nctr == p->capctr) {
		p->capctr = p->capctr ? 2 * p->capctr : 32;
		p->ctr = realloc(p->ctr, p->capctr * sizeof *p->ctr);
		if (!p->ctr) {
			fprintf(stderr, "perf loops stat: out of memory\n");
			exit(1);
		}
	}
	p->ctr[p->nctr] = (struct stat_counter){ .addr = addr, .offset = offset, .cond = cond, .taken = taken };
	return (int)p->nctr++;
}

static void add_term(struct stat_qty *q, int c, int sign)
{
	if (q->nterms >= STAT_MAX_TERMS) {
		q->known = false;
		return;
	}
	q->terms[q->nterms].counter = c;
	q->terms[q->nterms++].sign = sign;
}

static void add_qty(struct stat_qty *to, const struct stat_qty *from, int sign)
{
	to->known = to->known && from->known;
	for (int i = 0; i < from->nterms; i++)
		add_term(to, from->terms[i].counter, sign * from->terms[i].sign);
}

/* Whether counting PT needs a filtered probe on its branch. */
static bool needs_flags(const ls_loop_point *pt)
{
	return pt->how == LS_HOW_COND && !(pt->to_single_pred && pt->to_probe_offset);
}

/* Whether point_qty can count PT. */
static bool countable(const ls_loop_point *pt)
{
	if (pt->to_single_pred && pt->to_probe_offset && (pt->how == LS_HOW_COND || pt->how == LS_HOW_INDIRECT))
		return true;
	if (!pt->probe_offset || pt->how == LS_HOW_INDIRECT)
		return false;
	return pt->how != LS_HOW_COND || pt->cond >= 0;
}

/* The counter(s) of one point, into Q (known false if it cannot be counted). */
static void point_qty(struct stat_plan *p, const ls_loop_point *pt, struct stat_qty *q)
{
	memset(q, 0, sizeof *q);
	q->known = true;
	bool by_target = pt->to_single_pred && pt->to_probe_offset;
	if (!pt->probe_offset && !by_target) {
		q->known = false;
		return;
	}
	switch (pt->how) {
	case LS_HOW_BLOCK: case LS_HOW_FALLTHROUGH: case LS_HOW_JUMP: case LS_HOW_RETURN:
		add_term(q, counter(p, pt->probe, pt->probe_offset, -1, 0), 1);
		break;
	case LS_HOW_COND:
		if (by_target)
			add_term(q, counter(p, pt->to_probe, pt->to_probe_offset, -1, 0), 1);
		else if (pt->cond >= 0 && pt->probe_offset)
			add_term(q, counter(p, pt->probe, pt->probe_offset, pt->cond, pt->taken), 1);
		else
			q->known = false;
		break;
	case LS_HOW_INDIRECT:
		if (by_target)
			add_term(q, counter(p, pt->to_probe, pt->to_probe_offset, -1, 0), 1);
		else
			q->known = false;
		break;
	}
}

static int loop_points(const ls_module *m, const ls_scope *loop, ls_loop_point **pts)
{
	ls_error err;
	int n = ls_loop_points(m, loop, NULL, 0, &err);
	if (n < 0) {
		fprintf(stderr, "perf loops stat: %s\n", err.message);
		return -1;
	}
	*pts = pl_xcalloc((size_t)n + 1, sizeof **pts);
	return ls_loop_points(m, loop, *pts, (size_t)n, &err);
}

/* Entries and iterations of L from its points. */
static void plan_counts(struct stat_plan *p, struct stat_loop *L, const ls_loop_point *pts, int n)
{
	struct stat_qty e = { .known = true }, b = { .known = true }, q;
	int nentries = 0;
	for (int i = 0; i < n; i++) {
		if (pts[i].kind == LS_POINT_HEADER) {
			point_qty(p, &pts[i], &L->header_hits);
		} else if (pts[i].kind == LS_POINT_ENTRY) {
			point_qty(p, &pts[i], &q);
			add_qty(&e, &q, 1);
			nentries++;
		}
	}
	if (nentries == 0)
		e.known = false; /* entered through a jump table: no edge seen */
	bool need_back = L->irreducible || !e.known;
	for (int i = 0; i < n && need_back; i++)
		if (pts[i].kind == LS_POINT_BACKEDGE) {
			point_qty(p, &pts[i], &q);
			add_qty(&b, &q, 1);
		}
	if (e.known) {
		L->entries = e;
	} else {
		L->entries = L->header_hits;
		add_qty(&L->entries, &b, -1);
		L->entries.derived = true;
	}
	if (L->irreducible) {
		L->iterations = L->entries;
		add_qty(&L->iterations, &b, 1);
	} else
		L->iterations = L->header_hits;
}

/* The exits and returns of L; the hot one derived, unless ALL. */
static void plan_exits(struct stat_plan *p, struct stat_loop *L, const ls_loop_point *pts, int n, bool all)
{
	L->exits = pl_xcalloc((size_t)n + 1, sizeof *L->exits);
	int derive = -1;
	for (int i = 0; i < n; i++) {
		if (pts[i].kind != LS_POINT_EXIT && pts[i].kind != LS_POINT_LEAVE)
			continue;
		struct stat_edge *x = &L->exits[L->nexits];
		x->pt = pts[i];
		if (derive < 0 && !all && (needs_flags(&pts[i]) || !countable(&pts[i])))
			derive = (int)L->nexits;
		else
			point_qty(p, &pts[i], &x->q);
		L->nexits++;
	}
	/* A loop with no exit edge is left by returns alone, or never. */
	L->exits_complete = true;
	for (size_t i = 0; i < L->nexits; i++)
		if ((int)i != derive && !L->exits[i].q.known)
			L->exits_complete = false;
	if (derive >= 0) {
		struct stat_qty *d = &L->exits[derive].q;
		*d = L->entries;
		d->derived = true;
		for (size_t i = 0; i < L->nexits; i++)
			if ((int)i != derive)
				add_qty(d, &L->exits[i].q, -1);
		if (!L->exits_complete)
			d->known = false;
	}
}

static int plan_loop(struct stat_plan *p, const ls_scope *loop, const struct stat_opts *o)
{
	struct stat_loop *L = &p->loops[p->nloops++];
	const ls_scope *proc = loop;
	while (proc && ls_scope_kind_of(proc) != LS_SCOPE_PROC)
		proc = ls_scope_parent(proc);
	L->function = proc ? ls_scope_name(proc) : "?";
	L->file = ls_scope_file(loop);
	L->line = ls_scope_line(loop);
	L->header = ls_loop_header(loop);
	L->irreducible = ls_loop_irreducible(loop);
	L->depth = ls_loop_depth(loop);
	const char *name = proc ? (ls_scope_linkage_name(proc) ? ls_scope_linkage_name(proc) : L->function) : NULL;
	const ls_scope *siblings[4096];
	ls_error err;
	int ns = name ? ls_loops_find(p->m, name, siblings, 4096, &err) : 0;
	for (int i = 0; i < ns && i < 4096; i++)
		if (siblings[i] == loop)
			L->index = (unsigned)i + 1;
	ls_loop_point *pts;
	int n = loop_points(p->m, loop, &pts);
	if (n < 0)
		return -1;
	plan_counts(p, L, pts, n);
	plan_exits(p, L, pts, n, o->all_edges || o->trace); /* --trace: every exit closes a trip */
	free(pts);
	return 0;
}

/* The loops the --loop arguments name (every loop without one), each once. */
static size_t chosen_loops(const ls_module *m, const struct stat_opts *o, const ls_scope ***out, double **share)
{
	ls_error err;
	int all = ls_loops_find(m, NULL, NULL, 0, &err);
	size_t cap = (size_t)(all > 0 ? all : 0) + 1, n = 0;
	const ls_scope **v = pl_xcalloc(cap, sizeof *v);
	double *sh = pl_xcalloc(cap, sizeof *sh);
	for (size_t i = 0; i < cap; i++)
		sh[i] = -1;
	if (o->nloops == 0)
		n = (size_t)ls_loops_find(m, NULL, v, cap, &err);
	for (int k = 0; k < o->nloops; k++) {
		const ls_scope *found[4096];
		int nf = ls_loops_find(m, o->loops[k], found, 4096, &err);
		if (nf < 0) {
			fprintf(stderr, "perf loops stat: %s\n", err.message);
			free(v);
			free(sh);
			return (size_t)-1;
		}
		for (int i = 0; i < nf && i < 4096; i++) {
			bool seen = false;
			for (size_t j = 0; j < n; j++)
				seen |= v[j] == found[i];
			if (!seen && n < cap) {
				sh[n] = o->owned[k] ? o->hot_share[k] : -1;
				v[n++] = found[i];
			}
		}
	}
	*out = v;
	*share = sh;
	return n;
}

int stat_plan_build(struct stat_plan *p, const char *binary, const struct stat_opts *o)
{
	ls_options opt;
	ls_options_init(&opt);
	ls_error err;
	p->cost_us = p->overhead_s = p->cpu_seconds = -1;
	for (int c = 0; c < STAT_NCLASSES; c++)
		p->class_cost_us[c] = -1;
	p->m = ls_module_open(binary, &opt, &err);
	if (!p->m) {
		fprintf(stderr, "perf loops stat: %s\n", err.message);
		return -1;
	}
	const ls_scope **loops;
	double *share;
	size_t n = chosen_loops(p->m, o, &loops, &share);
	if (n == (size_t)-1)
		return -1;
	if (n == 0) {
		fprintf(stderr, "perf loops stat: %s: no loops to count\n", binary);
		free(loops);
		free(share);
		return -1;
	}
	p->loops = pl_xcalloc(n, sizeof *p->loops);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		p->loops[i].hot_share = share[i];
		rc = plan_loop(p, loops[i], o);
	}
	free(loops);
	free(share);
	return rc;
}

void stat_plan_free(struct stat_plan *p)
{
	for (size_t i = 0; i < p->nloops; i++) {
		free(p->loops[i].exits);
		if (p->loops[i].trips)
			free(p->loops[i].trips->trip);
		free(p->loops[i].trips);
		free(p->loops[i].est);
	}
	free(p->loops);
	free(p->ctr);
	if (p->m)
		ls_module_close(p->m);
}

int64_t stat_value(const struct stat_plan *p, const struct stat_qty *q)
{
	int64_t v = 0;
	for (int i = 0; i < q->nterms; i++)
		v += q->terms[i].sign * (int64_t)p->ctr[q->terms[i].counter].value;
	return v;
}

const char *stat_filter(int cond, int taken)
{
	static const char *const when[16] = {
		"of == 1", "of == 0", "cf == 1", "cf == 0", "zf == 1", "zf == 0",
		"cf == 1 || zf == 1", "cf == 0 && zf == 0", "sf == 1", "sf == 0", "pf == 1", "pf == 0",
		"(sf == 1 && of == 0) || (sf == 0 && of == 1)", "(sf == 1 && of == 1) || (sf == 0 && of == 0)",
		"zf == 1 || (sf == 1 && of == 0) || (sf == 0 && of == 1)",
		"zf == 0 && ((sf == 1 && of == 1) || (sf == 0 && of == 0))",
	};
	/* x86 condition codes come in pairs that differ in the low bit: one the other's negation */
	return cond >= 0 && cond < 16 ? when[taken ? cond : cond ^ 1] : NULL;
}
