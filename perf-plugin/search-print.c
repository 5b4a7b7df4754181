/* search-print.c - `perf loops search`'s answer: the hypothesis tree (why:
 * the hypothesis; where: the focus, from the whole program down to loops
 * and call sites; how much: the time and its share against the threshold),
 * each hypothesis saying how it was measured, pruned foci marked, and the
 * bottleneck loops' counts; as text or --json. */
#include "search.h"
#include "support/json_writer.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const measured[SH_N] = {
	"on-CPU time: the cpu-clock samples' period",
	"off-CPU time, sched:sched_switch to the thread's next switch-in, waiting in D state or in "
	"read/write/poll/socket code",
	"off-CPU time, sched:sched_switch to the thread's next switch-in, waiting in futex code "
	"(mutexes, condition variables, joins)",
	"off-CPU time, sched:sched_switch to the thread's next switch-in, still runnable at the switch "
	"(preempted)",
	"off-CPU time, sched:sched_switch to the thread's next switch-in, any other sleep (nanosleep, "
	"pause, wait)",
};

static const char *focus_kind(const pl_tree *t, uint32_t n)
{
	const pl_node *x = &t->nodes[n];
	switch (x->kind) {
	case PL_ROOT: return "program";
	case PL_PROC: return "procedure";
	case PL_INLINE: return "inlined";
	case PL_ALIEN: return "alien";
	case PL_LOOP: return "loop";
	default:
		for (uint32_t c = x->first_child; c; c = t->nodes[c].next_sibling)
			if (t->nodes[c].kind == PL_PROC && t->nodes[c].dso && t->nodes[c].dso->kind != PL_DSO_KERNEL &&
			    t->nodes[c].dso->kind != PL_DSO_KMODULE)
				return "call site";
		return "statement"; /* its samples' kernel frames are not calls of the program's */
	}
}

static void focus_label(const struct search_tree *st, uint32_t n, char *buf, size_t len)
{
	if (!n) {
		snprintf(buf, len, "whole program");
		return;
	}
	char label[1024];
	pl_node_label(&st->rep, n, label, sizeof label);
	const pl_node *x = &st->rep.tree.nodes[n];
	if (x->kind == PL_LOOP && x->scope)
		snprintf(buf, len, "%s (header %#" PRIx64 ")", label, ls_loop_header(x->scope)); /* "loop at ..." */
	else if (x->kind == PL_PROC && x->dso && x->dso->kind != PL_DSO_USER)
		snprintf(buf, len, "%s %s [%s]", focus_kind(&st->rep.tree, n), label, x->dso->short_name);
	else
		snprintf(buf, len, "%s %s", focus_kind(&st->rep.tree, n), label);
}

static void text_counts(FILE *out, const struct search_loop *L, int indent)
{
	fprintf(out, "%*s= counted: ", indent, "");
	if (!L->done) {
		fprintf(out, "not (%s)\n", L->why_not ? L->why_not : "the counting run failed");
		return;
	}
	if (L->entries_known)
		fprintf(out, "entries %" PRId64, L->entries);
	if (L->iterations_known)
		fprintf(out, ", iterations %" PRId64, L->iterations);
	else if (L->est >= 0)
		fprintf(out, ", iterations ~%.0f +- %.0f (bursts)", L->est, L->est_err);
	else if (L->burst)
		fprintf(out, ", iterations ? (no whole trip inside a burst)");
	if (L->entries_known && L->iterations_known && L->entries > 0)
		fprintf(out, ", trip count %.2f", (double)L->iterations / (double)L->entries);
	if (L->exits_known)
		fprintf(out, ", exits %" PRId64, L->exits);
	fprintf(out, "  [uprobes%s", L->burst ? ", iteration probes in bursts" : ", exact");
	if (L->overhead_s >= 0)
		fprintf(out, "; the run's probes cost %.2f s", L->overhead_s);
	fprintf(out, "]\n");
}

/* Experiment E passes all its time on to its only child, and neither is a
 * loop nor counted: the text puts them on one line (_start > ... > main). */
static int passes_on(const struct search_tree *st, int e)
{
	const struct search_exp *x = &st->v[e];
	if (!x->holds || x->first < 0 || st->v[x->first].next >= 0 || x->more_pruned || x->counted >= 0 || !x->focus)
		return -1;
	const struct search_exp *c = &st->v[x->first];
	const pl_tree *t = &st->rep.tree;
	if (!c->holds || c->ns != x->ns || c->counted >= 0 || t->nodes[x->focus].kind == PL_LOOP ||
	    t->nodes[c->focus].kind == PL_LOOP)
		return -1;
	return x->first;
}

static void text_exp(FILE *out, const struct search_tree *st, const struct search_opts *o, int e, int depth)
{
	char label[8192];
	focus_label(st, st->v[e].focus, label, sizeof label);
	for (int c; (c = passes_on(st, e)) >= 0; e = c) {
		size_t n = strlen(label);
		if (n + 16 >= sizeof label)
			break;
		snprintf(label + n, sizeof label - n, " > ");
		focus_label(st, st->v[c].focus, label + n + 3, sizeof label - n - 3);
	}
	const struct search_exp *x = &st->v[e];
	fprintf(out, "%*s%c %-7s %6.2f%% %s %g%%  %9.1f ms  %s%s\n", 2 * depth, "", x->holds ? '+' : '-',
	        search_hyp_names[x->hyp], x->share, x->share >= o->threshold[x->hyp] ? ">=" : "< ",
	        o->threshold[x->hyp], x->ns / 1e6, label, x->holds ? "" : "  [pruned]");
	if (x->counted >= 0)
		text_counts(out, &st->loops[x->counted], 2 * depth + 2);
	for (int c = x->first; c >= 0; c = st->v[c].next)
		text_exp(out, st, o, c, depth + 1);
	if (x->more_pruned)
		fprintf(out, "%*s- %u more foci under %g%% [pruned]\n", 2 * depth + 2, "", x->more_pruned,
		        o->threshold[x->hyp]);
}

static void text_report(FILE *out, const struct search_tree *st, const struct search_opts *o)
{
	fprintf(out, "# perf loops search: %s\n", st->binary ? st->binary : "?");
	fprintf(out, "# threads' time %.1f ms = on-CPU %.1f ms (%" PRIu64 " cpu-clock samples) + off-CPU %.1f ms "
	        "(%" PRIu64 " switches: io %.1f, futex %.1f, preempt %.1f, sleep %.1f)\n", st->total_ns / 1e6,
	        st->on_ns / 1e6, st->on_samples, (st->total_ns - st->on_ns) / 1e6, st->off_samples,
	        st->off_ns[PL_OFF_IO] / 1e6, st->off_ns[PL_OFF_FUTEX] / 1e6, st->off_ns[PL_OFF_PREEMPT] / 1e6,
	        st->off_ns[PL_OFF_SLEEP] / 1e6);
	fprintf(out, "# shares are of %s, %.1f ms; a hypothesis holds at a focus when its time there is at "
	        "least its threshold\n", st->base_elapsed ? "the run's elapsed time (first to last sample)" :
	        "the threads' time", st->base_ns / 1e6);
	fprintf(out, "# true ones (+) are refined down the calling-context tree (procedures, loops, call sites), "
	        "false ones (-) pruned\n");
	for (int h = 0; h < SH_N; h++)
		fprintf(out, "#   %-7s %s\n", search_hyp_names[h], measured[h]);
	fprintf(out, "# bottleneck loops (true, no true loop of their binary inside) counted with uprobes (= lines); "
	        "iterations in bursts\n# for loops with no call or >= %g ms of their own on the CPU\n#\n", o->hot_ms);
	for (size_t e = 0; e < st->n; e++)
		if (st->v[e].parent < 0)
			text_exp(out, st, o, (int)e, 0);
}

static void json_counts(ls_jw *w, const struct search_loop *L)
{
	ls_jw_key(w, "counts");
	ls_jw_object(w);
	ls_jw_key(w, "header");
	char hex[32];
	snprintf(hex, sizeof hex, "%#" PRIx64, L->header);
	ls_jw_string(w, hex);
	ls_jw_key(w, "binary");
	ls_jw_string(w, L->binary ? L->binary : "");
	ls_jw_key(w, "mode");
	ls_jw_string(w, !L->done ? "none" : L->burst ? "burst" : "exact");
	if (!L->done) {
		ls_jw_key(w, "why_not");
		ls_jw_string(w, L->why_not ? L->why_not : "the counting run failed");
	}
	if (L->done && L->entries_known) {
		ls_jw_key(w, "entries");
		ls_jw_int(w, L->entries);
	}
	if (L->done && L->iterations_known) {
		ls_jw_key(w, "iterations");
		ls_jw_int(w, L->iterations);
	}
	if (L->done && L->est >= 0) {
		ls_jw_key(w, "iterations_estimate");
		ls_jw_double(w, L->est);
		ls_jw_key(w, "iterations_stderr");
		ls_jw_double(w, L->est_err);
	}
	if (L->done && L->exits_known) {
		ls_jw_key(w, "exits");
		ls_jw_int(w, L->exits);
	}
	if (L->done) {
		ls_jw_key(w, "probe_hit_us");
		ls_jw_double(w, L->cost_us);
		ls_jw_key(w, "run_overhead_s");
		ls_jw_double(w, L->overhead_s);
	}
	ls_jw_object_end(w);
}

static void json_focus(ls_jw *w, const struct search_tree *st, uint32_t n)
{
	char label[1400];
	ls_jw_key(w, "focus");
	ls_jw_object(w);
	ls_jw_key(w, "kind");
	ls_jw_string(w, focus_kind(&st->rep.tree, n));
	ls_jw_key(w, "label");
	if (n)
		pl_node_label(&st->rep, n, label, sizeof label);
	else
		snprintf(label, sizeof label, "whole program");
	ls_jw_string(w, label);
	const pl_node *x = &st->rep.tree.nodes[n];
	if (n && x->scope && (x->kind == PL_LOOP || x->kind == PL_STMT)) {
		ls_jw_key(w, "file");
		ls_jw_string(w, pl_node_file(&st->rep, n) ? pl_node_file(&st->rep, n) : "");
		ls_jw_key(w, "line");
		ls_jw_int(w, pl_node_line(&st->rep, n));
	}
	if (n && x->kind == PL_LOOP && x->scope) {
		snprintf(label, sizeof label, "%#" PRIx64, ls_loop_header(x->scope));
		ls_jw_key(w, "header");
		ls_jw_string(w, label);
	}
	ls_jw_object_end(w);
}

static void json_exp(ls_jw *w, const struct search_tree *st, const struct search_opts *o, int e)
{
	const struct search_exp *x = &st->v[e];
	ls_jw_object(w);
	ls_jw_key(w, "hypothesis");
	ls_jw_string(w, search_hyp_names[x->hyp]);
	json_focus(w, st, x->focus);
	ls_jw_key(w, "ns");
	ls_jw_int(w, (int64_t)x->ns);
	ls_jw_key(w, "share");
	ls_jw_double(w, x->share);
	ls_jw_key(w, "threshold");
	ls_jw_double(w, o->threshold[x->hyp]);
	ls_jw_key(w, "holds");
	ls_jw_bool(w, x->holds);
	if (x->parent < 0) {
		ls_jw_key(w, "measured");
		ls_jw_string(w, measured[x->hyp]);
	}
	if (x->counted >= 0)
		json_counts(w, &st->loops[x->counted]);
	ls_jw_key(w, "more_pruned");
	ls_jw_int(w, x->more_pruned);
	ls_jw_key(w, "children");
	ls_jw_array(w);
	for (int c = x->first; c >= 0; c = st->v[c].next)
		json_exp(w, st, o, c);
	ls_jw_array_end(w);
	ls_jw_object_end(w);
}

static void json_report(FILE *out, const struct search_tree *st, const struct search_opts *o)
{
	ls_jw w;
	ls_jw_init(&w, out, LS_JW_PRETTY);
	ls_jw_object(&w);
	ls_jw_key(&w, "binary");
	ls_jw_string(&w, st->binary ? st->binary : "");
	ls_jw_key(&w, "seconds");
	ls_jw_object(&w);
	ls_jw_key(&w, "record");
	ls_jw_double(&w, st->record_s);
	ls_jw_key(&w, "count");
	ls_jw_double(&w, st->count_s);
	ls_jw_object_end(&w);
	ls_jw_key(&w, "elapsed_ns");
	ls_jw_int(&w, (int64_t)st->base_ns);
	ls_jw_key(&w, "time_ns");
	ls_jw_object(&w);
	ls_jw_key(&w, "threads");
	ls_jw_int(&w, (int64_t)st->total_ns);
	ls_jw_key(&w, "on_cpu");
	ls_jw_int(&w, (int64_t)st->on_ns);
	for (int k = 0; k < PL_OFF_NREASONS; k++) {
		ls_jw_key(&w, pl_off_reason_names[k]);
		ls_jw_int(&w, (int64_t)st->off_ns[k]);
	}
	ls_jw_object_end(&w);
	ls_jw_key(&w, "hypotheses");
	ls_jw_array(&w);
	for (size_t e = 0; e < st->n; e++)
		if (st->v[e].parent < 0)
			json_exp(&w, st, o, (int)e);
	ls_jw_array_end(&w);
	ls_jw_object_end(&w);
	ls_jw_finish(&w);
	fputc('\n', out);
}

int search_print(struct search_tree *st, const struct search_opts *o)
{
	FILE *out = stdout;
	if (o->output && !(out = fopen(o->output, "w"))) {
		perror(o->output);
		return 1;
	}
	if (o->json)
		json_report(out, st, o);
	else
		text_report(out, st, o);
	int bad = ferror(out);
	if (out != stdout)
		bad |= fclose(out) != 0;
	else
		bad |= fflush(out) != 0;
	return bad ? 1 : 0;
}
