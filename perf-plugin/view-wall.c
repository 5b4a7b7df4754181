/* view-wall.c - --wall: where a recording's threads spent their time, on
 * the CPU and off it, per calling context (with inline frames and loops)
 * and per loop, all contexts of a loop together.
 *
 * On-CPU time is the clock event's period (cpu-clock, task-clock: ns per
 * sample); off-CPU time is the sched_switch samples' period, which
 * offcpu.c made the interval until the thread ran again, split by reason.
 * Wall time is their sum: the time the threads existed in the context,
 * whether they ran or waited.  Times are inclusive (a loop's include what
 * its callees and nested loops took).  With --format=json, the per-loop
 * summary alone (and the recording's totals), for programs. */
#include "offcpu.h"
#include "support/json_writer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct wall {
	uint64_t on, off, why[PL_OFF_NREASONS];
};

/* NAME is the clock event CLOCK, with modifiers or not (cpu-clock:u)? */
static int is_clock(const char *name, const char *clock)
{
	size_t n = strlen(clock);
	return !strncmp(name, clock, n) && (!name[n] || name[n] == ':');
}

long pl_offcpu_clock_event(const pl_report *rep)
{
	for (size_t e = 0; e < rep->nev; e++) {
		const char *name = pd_attr_at(rep->r, e)->name;
		if (e != rep->off_ev && name && (is_clock(name, "cpu-clock") || is_clock(name, "task-clock")))
			return (long)e;
	}
	return -1;
}

pl_off_reasons *pl_off_reasons_inclusive(const pl_report *rep)
{
	const pl_tree *t = &rep->tree;
	if (!rep->offcpu || (rep->opt->callee && !rep->opt->wall))
		return NULL; /* the turned-over tree's nodes are not the ones counted */
	pl_off_reasons *why = pl_xcalloc(t->n ? t->n : 1, sizeof *why);
	/* children have higher indices than their parents: one backward pass */
	for (uint32_t n = (uint32_t)t->n; n-- > 1;)
		for (int k = 0; k < PL_OFF_NREASONS; k++) {
			if (n < rep->noff_why)
				why[n][k] += rep->off_why[n][k];
			why[t->nodes[n].parent][k] += why[n][k];
		}
	return why;
}

/* Every node's inclusive times. */
static struct wall *sum_walls(const pl_report *rep, long on_ev)
{
	const pl_tree *t = &rep->tree;
	struct wall *w = pl_xcalloc(t->n ? t->n : 1, sizeof *w);
	pl_off_reasons *why = pl_off_reasons_inclusive(rep);
	for (uint32_t n = 0; n < t->n; n++) {
		w[n].on = on_ev >= 0 ? pl_cost(t, n, (size_t)on_ev)[PL_TOTAL_PERIOD] : 0;
		w[n].off = pl_cost(t, n, rep->off_ev)[PL_TOTAL_PERIOD];
		if (why) /* NULL: no off-CPU data, nothing by reason */
			memcpy(w[n].why, why[n], sizeof w[n].why);
	}
	w[0].on = on_ev >= 0 ? rep->ev_period[on_ev] : 0;
	w[0].off = rep->ev_period[rep->off_ev];
	free(why);
	return w;
}

static void print_times(const pl_report *rep, const struct wall *w)
{
	fprintf(rep->out, "%10.1f %9.1f %9.1f", (w->on + w->off) / 1e6, w->on / 1e6, w->off / 1e6);
	for (int k = 0; k < PL_OFF_NREASONS; k++)
		fprintf(rep->out, " %8.1f", w->why[k] / 1e6);
}

static void print_column_header(const pl_report *rep, const char *what)
{
	fprintf(rep->out, "# %8s %9s %9s", "Wall ms", "On-CPU", "Off-CPU");
	for (int k = 0; k < PL_OFF_NREASONS; k++)
		fprintf(rep->out, " %8s", pl_off_reason_names[k]);
	fprintf(rep->out, "  %s\n", what);
}

struct walk {
	pl_report *rep;
	const struct wall *w;
	uint64_t limit;        /* nodes under it (wall ns) are not shown */
};

static int cmp_wall(const void *pa, const void *pb, void *arg)
{
	const struct wall *w = arg;
	uint32_t x = *(const uint32_t *)pa, y = *(const uint32_t *)pb;
	uint64_t a = w[x].on + w[x].off, b = w[y].on + w[y].off;
	return a != b ? (a > b ? -1 : 1) : (x > y) - (x < y);
}

static void print_node(struct walk *k, uint32_t n, int depth)
{
	const pl_tree *t = &k->rep->tree;
	if (n) {
		char label[1024];
		pl_node_label(k->rep, n, label, sizeof label);
		print_times(k->rep, &k->w[n]);
		fprintf(k->rep->out, "  %*s%s\n", 2 * (depth - 1), "", label);
	}
	size_t nc = 0;
	for (uint32_t c = t->nodes[n].first_child; c; c = t->nodes[c].next_sibling)
		nc++;
	uint32_t *kids = pl_xmalloc((nc ? nc : 1) * sizeof *kids);
	nc = 0;
	for (uint32_t c = t->nodes[n].first_child; c; c = t->nodes[c].next_sibling)
		if (k->w[c].on + k->w[c].off >= k->limit && k->w[c].on + k->w[c].off)
			kids[nc++] = c;
	qsort_r(kids, nc, sizeof *kids, cmp_wall, (void *)k->w);
	for (size_t i = 0; i < nc; i++)
		print_node(k, kids[i], depth + 1);
	free(kids);
}

/* Is loop node N inside another node of the same loop (recursion)? */
static int nested_in_itself(const pl_tree *t, uint32_t n)
{
	for (uint32_t p = t->nodes[n].parent; p; p = t->nodes[p].parent)
		if (t->nodes[p].kind == PL_LOOP && t->nodes[p].scope == t->nodes[n].scope)
			return 1;
	return 0;
}

static int cmp_scope(const void *pa, const void *pb, void *arg)
{
	const pl_tree *t = arg;
	uintptr_t a = (uintptr_t)t->nodes[*(const uint32_t *)pa].scope, b = (uintptr_t)t->nodes[*(const uint32_t *)pb].scope;
	return (a > b) - (a < b);
}

/* The procedure or inlined function a loop node is in, for its label. */
static uint32_t enclosing_function(const pl_tree *t, uint32_t n)
{
	while (n && t->nodes[n].kind != PL_PROC && t->nodes[n].kind != PL_INLINE)
		n = t->nodes[n].parent;
	return n;
}

/* The loops, each once: its contexts' times added (a loop inside itself
 * through recursion counted at its outermost instance), by wall time. */
struct loop_sums {
	struct wall *sums;
	uint32_t *first; /* per loop: its first context's node */
	uint32_t *idx;   /* into sums, largest wall time first */
	size_t n;
};

static void sum_loops(struct walk *k, struct loop_sums *ls)
{
	const pl_tree *t = &k->rep->tree;
	uint32_t *v = pl_xmalloc((t->n ? t->n : 1) * sizeof *v);
	size_t nv = 0;
	for (uint32_t n = 1; n < t->n; n++)
		if (t->nodes[n].kind == PL_LOOP && t->nodes[n].scope && !nested_in_itself(t, n))
			v[nv++] = n;
	qsort_r(v, nv, sizeof *v, cmp_scope, (void *)t);
	ls->sums = pl_xcalloc(nv ? nv : 1, sizeof *ls->sums);
	ls->first = pl_xmalloc((nv ? nv : 1) * sizeof *ls->first);
	ls->n = 0;
	for (size_t i = 0; i < nv; i++) {
		if (!i || t->nodes[v[i]].scope != t->nodes[v[i - 1]].scope)
			ls->first[ls->n++] = v[i];
		struct wall *s = &ls->sums[ls->n - 1];
		const struct wall *w = &k->w[v[i]];
		s->on += w->on;
		s->off += w->off;
		for (int r = 0; r < PL_OFF_NREASONS; r++)
			s->why[r] += w->why[r];
	}
	ls->idx = pl_xmalloc((ls->n ? ls->n : 1) * sizeof *ls->idx);
	for (size_t i = 0; i < ls->n; i++)
		ls->idx[i] = (uint32_t)i;
	qsort_r(ls->idx, ls->n, sizeof *ls->idx, cmp_wall, ls->sums);
	free(v);
}

static void free_loop_sums(struct loop_sums *ls)
{
	free(ls->sums);
	free(ls->first);
	free(ls->idx);
}

/* The name of loop LS's I-th (in wall order) function and of the loop. */
static void loop_names(pl_report *rep, const struct loop_sums *ls, size_t i, char *fn, size_t fnlen, char *loop,
                       size_t looplen)
{
	uint32_t f = enclosing_function(&rep->tree, ls->first[ls->idx[i]]);
	if (f)
		pl_node_label(rep, f, fn, fnlen);
	else
		snprintf(fn, fnlen, "??");
	pl_node_label(rep, ls->first[ls->idx[i]], loop, looplen);
}

static void print_loops(struct walk *k)
{
	pl_report *rep = k->rep;
	struct loop_sums ls;
	sum_loops(k, &ls);
	fprintf(rep->out, "\n# Loops by wall time, all calling contexts together\n#\n");
	print_column_header(rep, "Loop");
	for (size_t i = 0; i < ls.n; i++) {
		const struct wall *s = &ls.sums[ls.idx[i]];
		if (s->on + s->off < k->limit || !(s->on + s->off))
			continue;
		char fn[512], loop[1024];
		loop_names(rep, &ls, i, fn, sizeof fn, loop, sizeof loop);
		print_times(rep, s);
		fprintf(rep->out, "  %s: %s\n", fn, loop);
	}
	free_loop_sums(&ls);
}

/* "wall_ns", "on_cpu_ns", "off_cpu_ns" and "off_cpu": {REASON: ns} */
static void json_times(ls_jw *j, const struct wall *w)
{
	ls_jw_key(j, "wall_ns"); ls_jw_uint(j, w->on + w->off);
	ls_jw_key(j, "on_cpu_ns"); ls_jw_uint(j, w->on);
	ls_jw_key(j, "off_cpu_ns"); ls_jw_uint(j, w->off);
	ls_jw_key(j, "off_cpu");
	ls_jw_object(j);
	for (int r = 0; r < PL_OFF_NREASONS; r++) {
		ls_jw_key(j, pl_off_reason_names[r]);
		ls_jw_uint(j, w->why[r]);
	}
	ls_jw_object_end(j);
}

/* --wall --format=json: the per-loop summary (every loop with time, all
 * its contexts together, by wall time), and the whole recording's. */
static void json_wall(struct walk *k)
{
	pl_report *rep = k->rep;
	struct loop_sums ls;
	sum_loops(k, &ls);
	ls_jw j;
	ls_jw_init(&j, rep->out, LS_JW_PRETTY);
	ls_jw_object(&j);
	ls_jw_key(&j, "recording"); ls_jw_string(&j, pd_name(rep->r));
	ls_jw_key(&j, "on_cpu_event");
	ls_jw_string(&j, rep->on_ev >= 0 ? pd_attr_at(rep->r, (size_t)rep->on_ev)->name : NULL);
	ls_jw_key(&j, "off_cpu_event"); ls_jw_string(&j, pd_attr_at(rep->r, rep->off_ev)->name);
	ls_jw_key(&j, "all");
	ls_jw_object(&j);
	json_times(&j, &k->w[0]);
	ls_jw_object_end(&j);
	ls_jw_key(&j, "loops");
	ls_jw_array(&j);
	for (size_t i = 0; i < ls.n; i++) {
		const struct wall *s = &ls.sums[ls.idx[i]];
		if (!(s->on + s->off))
			continue;
		char fn[512], loop[1024];
		loop_names(rep, &ls, i, fn, sizeof fn, loop, sizeof loop);
		const pl_node *x = &rep->tree.nodes[ls.first[ls.idx[i]]];
		ls_jw_object(&j);
		ls_jw_key(&j, "function"); ls_jw_string(&j, fn);
		ls_jw_key(&j, "loop"); ls_jw_string(&j, loop);
		char hdr[32];
		snprintf(hdr, sizeof hdr, "0x%" PRIx64, ls_loop_header(x->scope));
		ls_jw_key(&j, "header"); ls_jw_string(&j, hdr);
		json_times(&j, s);
		ls_jw_object_end(&j);
	}
	ls_jw_array_end(&j);
	ls_jw_object_end(&j);
	ls_jw_newline(&j);
	ls_jw_finish(&j);
	free_loop_sums(&ls);
}

int pl_wall_width(const pl_report *rep)
{
	return rep->offcpu && !rep->opt->field_sep ? 35 : 0;
}

const char *pl_wall_header(const pl_report *rep)
{
	return pl_wall_width(rep) ? "  On-CPU ms Off-CPU ms    Wall ms  " : "";
}

void pl_print_wall_cells(const pl_report *rep, const pl_tree *t, uint32_t n)
{
	if (!pl_wall_width(rep))
		return;
	uint64_t on = rep->on_ev >= 0 ? pl_cost(t, n, (size_t)rep->on_ev)[PL_TOTAL_PERIOD] : 0;
	uint64_t off = pl_cost(t, n, rep->off_ev)[PL_TOTAL_PERIOD];
	fprintf(rep->out, "%11.1f%11.1f%11.1f  ", on / 1e6, off / 1e6, (on + off) / 1e6);
}

int pl_view_wall(pl_report *rep)
{
	if (!rep->offcpu && pd_is_pipe(rep->r)) {
		fprintf(stderr, "perf-loops: %s: --wall reads the recording twice (the switches, then the samples): "
			"not from a pipe; write the recording to a file\n", pd_name(rep->r));
		return 1;
	}
	if (!rep->offcpu) {
		fprintf(stderr, "perf-loops: %s: no off-CPU data (sched:sched_switch samples and switch records): record "
			"with perf loops record --off-cpu\n", pd_name(rep->r));
		return 1;
	}
	long on_ev = rep->on_ev;
	struct wall *w = sum_walls(rep, on_ev);
	double pct = rep->opt->percent_limit > 0 ? rep->opt->percent_limit : 0.5;
	struct walk k = { rep, w, (uint64_t)((w[0].on + w[0].off) * pct / 100.0) };
	if (rep->opt->format == PL_FMT_JSON) {
		json_wall(&k);
		free(w);
		return 0;
	}
	char on[256];
	if (on_ev >= 0)
		snprintf(on, sizeof on, "%s samples' period", pd_attr_at(rep->r, (size_t)on_ev)->name);
	else
		snprintf(on, sizeof on, "none (no cpu-clock or task-clock event recorded)");
	fprintf(rep->out, "# perf loops --wall: %s\n# On-CPU: %s; Off-CPU: from each sched:sched_switch "
		"to the thread's next switch-in, by reason\n# (sleep, io, futex: the wait's kernel code; preempt: "
		"runnable, waiting for a CPU); times in ms, inclusive;\n# contexts under %.1f%% of the wall time "
		"are not shown\n#\n", pd_name(rep->r), on, pct);
	print_column_header(rep, "Calling context");
	print_times(rep, &w[0]);
	fprintf(rep->out, "  [all]\n");
	print_node(&k, 0, 0);
	print_loops(&k);
	free(w);
	return 0;
}
