/* view-json.c - the calling-context tree with numbers, as design.md's
 * `perf loops report --format=json` contract says: one object, events first,
 * then the tree; cost arrays follow the order of "events".  Strings are
 * escaped by json_writer.c as every JSON of loopscope is. */
#include "report.h"
#include "offcpu.h"
#include "support/json_writer.h"

#include <stdlib.h>
#include <string.h>

/* "KEY":[...]: one cost of node N per shown event. */
static void costs(ls_jw *w, pl_report *rep, uint32_t n, int k, const char *key)
{
	ls_jw_key(w, key);
	ls_jw_array(w);
	for (size_t i = 0; i < rep->nshown; i++)
		ls_jw_uint(w, pl_cost(&rep->tree, n, rep->shown[i])[k]);
	ls_jw_array_end(w);
}

static const char *const kind_names[] = { "root", "proc", "inline", "alien", "loop", "stmt" };

/* Whether child N of the tree is shown: it has samples of a shown event, and
 * its share of the primary event passes --percent-limit. */
static bool shown_child(pl_report *rep, uint32_t n)
{
	const pl_tree *t = &rep->tree;
	/* a node with samples of another event only still shows */
	int any = 0;
	for (size_t e = 0; e < rep->nshown; e++)
		any |= pl_cost(t, n, rep->shown[e])[PL_TOTAL] != 0;
	if (!any)
		return false;
	uint64_t all = rep->ev_period[rep->primary];
	const uint64_t *c = pl_cost(t, n, rep->primary);
	return !(rep->opt->percent_limit > 0 && all &&
	         100.0 * (double)c[PL_TOTAL_PERIOD] / (double)all < rep->opt->percent_limit);
}

/* A recording with off-CPU data: the node's off-CPU ns by reason
 * (inclusive; their sum is the sched_switch event's total_period). */
static void off_cpu(ls_jw *w, const pl_off_reasons *why, uint32_t n)
{
	if (!why)
		return;
	ls_jw_key(w, "off_cpu");
	ls_jw_object(w);
	for (int k = 0; k < PL_OFF_NREASONS; k++) {
		ls_jw_key(w, pl_off_reason_names[k]);
		ls_jw_uint(w, why[n][k]);
	}
	ls_jw_object_end(w);
}

static void node(ls_jw *w, pl_report *rep, const pl_off_reasons *why, uint32_t n)
{
	const pl_tree *t = &rep->tree;
	const pl_node *x = &t->nodes[n];
	ls_jw_object(w);
	ls_jw_key(w, "kind");
	ls_jw_string(w, kind_names[x->kind]);
	if (x->kind == PL_PROC || x->kind == PL_INLINE) {
		ls_jw_key(w, "name");
		ls_jw_string(w, pl_node_name(rep, n));
	}
	if (x->kind != PL_ROOT) {
		ls_jw_key(w, "file");
		ls_jw_string(w, pl_node_file(rep, n));
		ls_jw_key(w, "line");
		ls_jw_line(w, pl_node_line(rep, n));
	}
	if (x->kind == PL_INLINE) {
		ls_jw_key(w, "call_file");
		ls_jw_string(w, ls_scope_call_file(x->scope));
		ls_jw_key(w, "call_line");
		ls_jw_line(w, ls_scope_call_line(x->scope));
	}
	if (x->kind == PL_LOOP) {
		/* The loop's marks, as loopscope struct --format=json has them. */
		unsigned nparts, part = ls_loop_part(x->scope, &nparts);
		ls_jw_key(w, "irreducible");
		ls_jw_bool(w, ls_loop_irreducible(x->scope));
		if (ls_loop_compiler_made(x->scope)) {
			ls_jw_key(w, "compiler_made");
			ls_jw_string(w, ls_loop_compiler_made(x->scope));
		}
		if (ls_loop_line_guessed(x->scope)) {
			ls_jw_key(w, "line_guessed");
			ls_jw_string(w, ls_loop_line_guessed(x->scope));
		}
		if (part) {
			ls_jw_key(w, "part");
			ls_jw_uint(w, part);
			ls_jw_key(w, "parts");
			ls_jw_uint(w, nparts);
		}
	}
	if (x->kind == PL_PROC) {
		ls_jw_key(w, "dso");
		ls_jw_string(w, x->dso ? pl_dso_path(x->dso) : NULL);
		if (x->how == PL_HOW_INFERRED || x->how == PL_HOW_RECIPE) {
			/* inferred: a frame-pointer chain skipped it (fp-repair.c);
			 * recipes: unwound by binary analysis where CFI stopped */
			ls_jw_key(w, "frame");
			ls_jw_string(w, x->how == PL_HOW_INFERRED ? "inferred" : "recipes");
		}
	}
	costs(w, rep, n, PL_TOTAL, "total");
	costs(w, rep, n, PL_SELF, "self");
	costs(w, rep, n, PL_TOTAL_PERIOD, "total_period");
	costs(w, rep, n, PL_SELF_PERIOD, "self_period");
	off_cpu(w, why, n);
	ls_jw_key(w, "children");
	ls_jw_array(w);
	uint32_t *kids;
	size_t k = pl_sorted_children(rep, t, n, &kids);
	for (size_t i = 0; i < k; i++)
		if (shown_child(rep, kids[i]))
			node(w, rep, why, kids[i]);
	free(kids);
	ls_jw_array_end(w);
	ls_jw_object_end(w);
}

int pl_view_json(pl_report *rep)
{
	ls_jw w;
	ls_jw_init(&w, rep->out, LS_JW_COMPACT);
	ls_jw_object(&w);
	ls_jw_key(&w, "events");
	ls_jw_array(&w);
	for (size_t i = 0; i < rep->nshown; i++) {
		size_t e = rep->shown[i];
		ls_jw_object(&w);
		ls_jw_key(&w, "name");
		ls_jw_string(&w, pd_attr_at(rep->r, e)->name);
		ls_jw_key(&w, "samples");
		ls_jw_uint(&w, rep->ev_samples[e]);
		ls_jw_key(&w, "period");
		ls_jw_uint(&w, rep->ev_period[e]);
		ls_jw_object_end(&w);
	}
	ls_jw_array_end(&w);
	pl_off_reasons *why = pl_off_reasons_inclusive(rep);
	if (why) {
		/* the event whose period is the off-CPU ns, and the on-CPU one */
		ls_jw_key(&w, "off_cpu_event");
		ls_jw_string(&w, pd_attr_at(rep->r, rep->off_ev)->name);
		ls_jw_key(&w, "on_cpu_event");
		ls_jw_string(&w, rep->on_ev >= 0 ? pd_attr_at(rep->r, (size_t)rep->on_ev)->name : NULL);
	}
	ls_jw_key(&w, "tree");
	node(&w, rep, why, 0);
	if (rep->opt->sort_mask & PL_DATA_KEYS)
		pl_data_json(&w, rep);
	free(why);
	ls_jw_object_end(&w);
	ls_jw_newline(&w);
	ls_jw_finish(&w);
	return 0;
}
