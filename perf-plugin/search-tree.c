/* search-tree.c - the Performance Consultant's search on a recording made
 * with `perf loops record --off-cpu`: hypotheses tested at foci, each true
 * one refined from the whole program down the calling-context tree of
 * `perf loops report` (procedures, inlined calls, loops, call sites and
 * statements), each false one pruned.
 *
 * A hypothesis holds at a focus when the threads' time there for its reason
 * is at least its threshold, as a share of the run's elapsed time (first
 * to last sample; the threads' times add up, so a share can pass 100%):
 * the same share at every level, as Paradyn tests a
 * refinement against the threshold of the whole program, so that a focus
 * holds only if it alone is a bottleneck of that size.  The times are the
 * report's inclusive ones: on-CPU from the cpu-clock samples' period,
 * off-CPU from each sched_switch to the thread's return, by reason
 * (offcpu.c: io, futex, preempt, sleep).
 *
 * Refinement stops at kernel frames: the focus is the program's code; the
 * kernel's part says why (the reason), not where.  Of a focus's false
 * children the largest few are listed as pruned, the rest counted. */
#include "search.h"
#include "offcpu.h"

#include <stdlib.h>
#include <string.h>

const char *const search_hyp_names[SH_N] = { "cpu", "io", "sync", "preempt", "sleep" };
static const int reason_of[SH_N] = { -1, PL_OFF_IO, PL_OFF_FUTEX, PL_OFF_PREEMPT, PL_OFF_SLEEP };
enum { PRUNED_LISTED = 3 };

uint64_t search_node_ns(const struct search_tree *st, uint32_t n, int h)
{
	const pl_report *rep = &st->rep;
	if (n == 0)
		return h == SH_CPU ? st->on_ns : st->off_ns[reason_of[h]];
	if (h == SH_CPU)
		return rep->on_ev >= 0 ? pl_cost(&rep->tree, n, (size_t)rep->on_ev)[PL_TOTAL_PERIOD] : 0;
	return st->why ? st->why[n][reason_of[h]] : 0;
}

static int add_exp(struct search_tree *st, const struct search_opts *o, int h, uint32_t focus, int parent)
{
	if (st->n == st->cap) {
		st->cap = st->cap ? 2 * st->cap : 64;
		st->v = pl_xrealloc(st->v, st->cap * sizeof *st->v);
	}
	struct search_exp *e = &st->v[st->n];
	*e = (struct search_exp){ .hyp = h, .focus = focus, .parent = parent, .first = -1, .next = -1,
	                          .counted = -1 };
	e->ns = search_node_ns(st, focus, h);
	e->share = st->base_ns ? 100.0 * (double)e->ns / (double)st->base_ns : 0;
	e->holds = e->ns > 0 && e->share >= o->threshold[h];
	if (parent >= 0) { /* appended to the parent's children */
		int *link = &st->v[parent].first;
		while (*link >= 0)
			link = &st->v[*link].next;
		*link = (int)st->n;
	}
	return (int)st->n++;
}

/* A node the search refines into: the program's code, not the kernel's. */
static int is_code(const pl_tree *t, uint32_t n)
{
	const pl_node *x = &t->nodes[n];
	return !(x->kind == PL_PROC && x->dso && (x->dso->kind == PL_DSO_KERNEL || x->dso->kind == PL_DSO_KMODULE));
}

struct by_ns {
	uint32_t node;
	uint64_t ns;
};

static int cmp_ns(const void *pa, const void *pb)
{
	const struct by_ns *a = pa, *b = pb;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return (a->node > b->node) - (a->node < b->node);
}

/* Experiment E holds: test its focus's children, refine the true ones. */
static void refine(struct search_tree *st, const struct search_opts *o, int e)
{
	const pl_tree *t = &st->rep.tree;
	int h = st->v[e].hyp;
	size_t nc = 0;
	for (uint32_t c = t->nodes[st->v[e].focus].first_child; c; c = t->nodes[c].next_sibling)
		nc++;
	struct by_ns *kids = pl_xmalloc((nc ? nc : 1) * sizeof *kids);
	nc = 0;
	for (uint32_t c = t->nodes[st->v[e].focus].first_child; c; c = t->nodes[c].next_sibling) {
		uint64_t ns = is_code(t, c) ? search_node_ns(st, c, h) : 0;
		if (ns)
			kids[nc++] = (struct by_ns){ c, ns };
	}
	qsort(kids, nc, sizeof *kids, cmp_ns);
	unsigned pruned = 0;
	for (size_t i = 0; i < nc; i++) {
		double share = st->base_ns ? 100.0 * (double)kids[i].ns / (double)st->base_ns : 0;
		if (share < o->threshold[h] && pruned >= PRUNED_LISTED) {
			st->v[e].more_pruned++;
			continue;
		}
		int c = add_exp(st, o, h, kids[i].node, e);
		if (st->v[c].holds)
			refine(st, o, c);
		else
			pruned++;
	}
	free(kids);
}

/* The file of the procedure around node N (a user binary), or NULL. */
static char *node_binary(struct search_tree *st, uint32_t n)
{
	const pl_tree *t = &st->rep.tree;
	while (n && t->nodes[n].kind != PL_PROC)
		n = t->nodes[n].parent;
	if (!n || !t->nodes[n].dso || t->nodes[n].dso->kind != PL_DSO_USER)
		return NULL;
	const char *f = pl_attrib_file(st->rep.attrib, t->nodes[n].dso);
	return f ? realpath(f, NULL) : NULL;
}

/* Is experiment A an ancestor of B, with no procedure of another binary
 * than A's in between?  (The program's loop around a library's loop is
 * the program's innermost one.) */
static int exp_above(const struct search_tree *st, int a, int b)
{
	const pl_tree *t = &st->rep.tree;
	const pl_dso *dso = NULL;
	for (uint32_t n = st->v[a].focus; n && !dso; n = t->nodes[n].parent)
		if (t->nodes[n].kind == PL_PROC)
			dso = t->nodes[n].dso;
	for (int p = st->v[b].parent; p >= 0; p = st->v[p].parent) {
		const pl_node *x = &t->nodes[st->v[p].focus];
		if (x->kind == PL_PROC && x->dso != dso)
			return 0;
		if (p == a)
			return 1;
	}
	return 0;
}

static int is_true_loop(const struct search_tree *st, int e)
{
	const pl_node *x = &st->rep.tree.nodes[st->v[e].focus];
	return st->v[e].holds && st->v[e].focus && x->kind == PL_LOOP && x->scope;
}

/* The on-CPU time of node N's callees (the procedure frames right below
 * its scopes); *CALLS: whether it has any. */
static uint64_t callee_cpu(const struct search_tree *st, uint32_t n, int *calls)
{
	const pl_tree *t = &st->rep.tree;
	uint64_t ns = 0;
	for (uint32_t c = t->nodes[n].first_child; c; c = t->nodes[c].next_sibling) {
		if (t->nodes[c].kind == PL_PROC) {
			*calls = 1;
			ns += search_node_ns(st, c, SH_CPU);
		} else
			ns += callee_cpu(st, c, calls);
	}
	return ns;
}

/* Too hot to probe each iteration: a loop with no call (its iterations
 * can be a few instructions each), or whose own code (not its callees)
 * ran HOT_MS on the CPU. */
static bool too_hot(const struct search_tree *st, uint32_t n, double hot_ms)
{
	int calls = 0;
	uint64_t callees = callee_cpu(st, n, &calls);
	uint64_t all = search_node_ns(st, n, SH_CPU);
	return !calls || (double)(all > callees ? all - callees : 0) >= hot_ms * 1e6;
}

static int cmp_exp_ns(const void *pa, const void *pb, void *arg)
{
	const struct search_tree *st = arg;
	int a = *(const int *)pa, b = *(const int *)pb;
	if (st->v[a].ns != st->v[b].ns)
		return st->v[a].ns > st->v[b].ns ? -1 : 1;
	return (a > b) - (a < b);
}

/* CAND (largest first) reordered so that each true hypothesis has its
 * largest loop counted before any has its second: in rounds, the next of
 * each hypothesis in turn, the waits' reasons before preemption (a
 * preempted loop is most often the CPU-bound one). */
static void round_robin(const struct search_tree *st, int *cand, size_t nc)
{
	static const int order[SH_N] = { SH_CPU, SH_IO, SH_SYNC, SH_SLEEP, SH_PREEMPT };
	int *out = pl_xmalloc((nc ? nc : 1) * sizeof *out);
	bool *taken = pl_xcalloc(nc ? nc : 1, sizeof *taken);
	size_t k = 0;
	while (k < nc)
		for (int h = 0; h < SH_N; h++)
			for (size_t i = 0; i < nc; i++)
				if (!taken[i] && st->v[cand[i]].hyp == order[h]) {
					taken[i] = true;
					out[k++] = cand[i];
					break;
				}
	memcpy(cand, out, nc * sizeof *cand);
	free(taken);
	free(out);
}

/* The bottleneck loops: true loops with no true loop of their binary below
 * them (the most specific foci in the program, and in each library), largest first, each loop once, the first O->count. */
static void pick_loops(struct search_tree *st, const struct search_opts *o)
{
	int *cand = pl_xmalloc((st->n ? st->n : 1) * sizeof *cand);
	size_t nc = 0;
	for (size_t e = 0; e < st->n; e++) {
		if (!is_true_loop(st, (int)e))
			continue;
		int inner = 0;
		for (size_t f = 0; f < st->n && !inner; f++)
			inner = f != e && is_true_loop(st, (int)f) && exp_above(st, (int)e, (int)f);
		if (!inner)
			cand[nc++] = (int)e;
	}
	qsort_r(cand, nc, sizeof *cand, cmp_exp_ns, st);
	round_robin(st, cand, nc);
	const pl_tree *t = &st->rep.tree;
	for (size_t i = 0; i < nc; i++) { /* every candidate: a loop counted in one context is in all */
		uint32_t n = st->v[cand[i]].focus;
		uint64_t header = ls_loop_header(t->nodes[n].scope);
		char *bin = node_binary(st, n);
		int dup = -1;
		for (int k = 0; k < st->nloops && dup < 0; k++)
			if (st->loops[k].header == header && bin && st->loops[k].binary &&
			    !strcmp(st->loops[k].binary, bin))
				dup = k;
		if (dup >= 0 || st->nloops >= o->count || st->nloops >= SEARCH_MAX_COUNT) {
			st->v[cand[i]].counted = dup;
			free(bin);
			continue;
		}
		struct search_loop *L = &st->loops[st->nloops];
		*L = (struct search_loop){ .focus = n, .exp = cand[i], .header = header, .binary = bin };
		L->burst = too_hot(st, n, o->hot_ms);
		if (!bin)
			L->why_not = pl_xstrdup("its binary is not found");
		st->v[cand[i]].counted = st->nloops++;
	}
	free(cand);
}

static void sum_times(struct search_tree *st)
{
	pl_report *rep = &st->rep;
	st->on_ns = rep->on_ev >= 0 ? rep->ev_period[rep->on_ev] : 0;
	st->on_samples = rep->on_ev >= 0 ? rep->ev_samples[rep->on_ev] : 0;
	st->off_samples = rep->ev_samples[rep->off_ev];
	st->why = pl_off_reasons_inclusive(rep);
	st->total_ns = st->on_ns;
	for (int k = 0; k < PL_OFF_NREASONS; k++) {
		st->off_ns[k] = st->why ? st->why[0][k] : 0;
		st->total_ns += st->off_ns[k];
	}
	/* the base of the shares: the run's elapsed time, first to last
	 * sample (the threads' time where the file does not say) */
	uint64_t first, last;
	st->base_ns = pd_sample_time_range(rep->r, &first, &last) == 0 && last > first ? last - first : st->total_ns;
	st->base_elapsed = st->base_ns != st->total_ns;
}

int search_tree_build(struct search_tree *st, const char *data, const struct search_opts *o)
{
	char *argv[] = { "report", "-q", "--stdio", "-i", (char *)data, NULL };
	int rc = pl_report_options_parse(5, argv, &st->ro);
	if (rc >= 0)
		return -1;
	if (pl_report_open(&st->ro, &st->rep) != 0)
		return -1;
	st->opened = true;
	if (!st->rep.offcpu || !st->rep.nshown) {
		fprintf(stderr, "perf loops search: %s: no samples with off-CPU data: nothing to search\n", data);
		return -1;
	}
	sum_times(st);
	for (int h = 0; h < SH_N; h++) {
		int e = add_exp(st, o, h, 0, -1);
		if (st->v[e].holds)
			refine(st, o, e);
	}
	pick_loops(st, o);
	return 0;
}

void search_tree_free(struct search_tree *st)
{
	for (int k = 0; k < st->nloops; k++) {
		free(st->loops[k].binary);
		free(st->loops[k].why_not);
	}
	free(st->v);
	free(st->why);
	if (st->opened)
		pl_report_close(&st->rep);
	pl_report_options_free(&st->ro);
	free(st->binary);
}
