/* search-count.c - the search's second measurement: the bottleneck loops
 * the recording found (search-tree.c) counted with `perf loops stat`'s
 * machinery (stat-plan.c, stat-run.c, stat-burst.c): their entries,
 * iterations and exits through uprobes at their instrumentation points,
 * in a run of the program of its own (or a second attach of --duration).
 *
 * Bounded, as Paradyn bounds its instrumentation: only the top few loops
 * (--count), and a loop with no call in it whose on-CPU time is at least
 * --hot-ms (its iterations short and many: a probe on each would cost
 * more than the run) gets its iteration probes in bursts (--burst), with
 * exact entries and exits beside the estimate.  Each binary and each mode
 * is one run of stat; the probes are removed on every way out by stat. */
#include "search.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void take_counts(struct search_loop *L, const struct stat_plan *p, const struct stat_loop *S)
{
	L->done = true;
	L->entries_known = S->entries.known;
	L->entries = S->entries.known ? stat_value(p, &S->entries) : 0;
	bool windowed = false;
	for (int k = 0; k < S->iterations.nterms; k++)
		windowed = windowed || p->ctr[S->iterations.terms[k].counter].windowed;
	L->iterations_known = S->iterations.known && !windowed;
	L->iterations = L->iterations_known ? stat_value(p, &S->iterations) : 0;
	L->est = S->est ? S->est->iterations : -1;
	L->est_err = S->est ? S->est->stderr_ : 0;
	bool all = S->nexits > 0;
	int64_t sum = 0;
	for (size_t i = 0; i < S->nexits; i++) {
		all = all && S->exits[i].q.known;
		sum += S->exits[i].q.known ? stat_value(p, &S->exits[i].q) : 0;
	}
	L->exits_known = all;
	L->exits = sum;
	L->cost_us = p->cost_us;
	L->overhead_s = p->overhead_s;
}

/* One run of stat: the loops of BINARY counted in mode BURST. */
static int count_group(struct search_tree *st, const struct search_opts *o, const char *binary, bool burst)
{
	struct stat_opts so = { .binary = binary, .pid = o->pid, .duration = o->duration, .command = o->command,
	                        .ncommand = o->ncommand };
	char specs[SEARCH_MAX_COUNT][32];
	for (int i = 0; i < st->nloops; i++) {
		struct search_loop *L = &st->loops[i];
		if (L->done || L->why_not || L->burst != burst || strcmp(L->binary, binary))
			continue;
		snprintf(specs[so.nloops], sizeof specs[0], "%#" PRIx64, L->header);
		so.loops[so.nloops] = specs[so.nloops];
		so.nloops++;
	}
	if (!so.nloops)
		return 0;
	if (burst && sscanf(o->burst, "%lf/%lf", &so.burst_on_ms, &so.burst_period_ms) != 2)
		return -1;
	if (isatty(2))
		fprintf(stderr, "perf loops search: counting %d loop%s of %s%s...\n", so.nloops, so.nloops == 1 ? "" : "s",
		        binary, burst ? " (iterations in bursts)" : "");
	struct stat_plan plan = { 0 };
	int rc = stat_plan_build(&plan, binary, &so);
	if (rc == 0)
		rc = stat_run(&plan, binary, &so);
	st->count_s += plan.seconds;
	if (rc != 0) /* stat said why (a probe the kernel refuses, ...): the others still count */
		for (int i = 0; i < st->nloops; i++) {
			struct search_loop *L = &st->loops[i];
			if (!L->done && !L->why_not && L->burst == burst && !strcmp(L->binary, binary))
				L->why_not = pl_xstrdup("perf loops stat failed: its message is above");
		}
	for (size_t j = 0; rc == 0 && j < plan.nloops; j++)
		for (int i = 0; i < st->nloops; i++) {
			struct search_loop *L = &st->loops[i];
			if (!L->done && !L->why_not && L->burst == burst && !strcmp(L->binary, binary) &&
			    L->header == plan.loops[j].header)
				take_counts(L, &plan, &plan.loops[j]);
		}
	stat_plan_free(&plan);
	return rc;
}

int search_count(struct search_tree *st, const struct search_opts *o)
{
	for (int i = 0; i < st->nloops && !stat_caught_signal(); i++) {
		struct search_loop *L = &st->loops[i];
		if (L->done || L->why_not)
			continue;
		count_group(st, o, L->binary, false);
		if (!stat_caught_signal())
			count_group(st, o, L->binary, true);
	}
	return stat_caught_signal() ? -1 : 0;
}
