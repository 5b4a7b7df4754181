/* data-keys.c - perf report's data-type keys for `-s`: type (the type of
 * the object the sampled instruction's memory operand reaches) and typeoff
 * (that type, the offset and the field, as perf prints "struct grid +24
 * (cells[].q)"), from the core's accesses (ls_accesses_of, design.md's
 * "Accesses").
 *
 * A timer sample's IP (cpu-clock here: no PMU, no precise memory events)
 * points past the instruction that took the time: when the sampled
 * instruction has no memory operand, the last access before it in its
 * basic block is taken (ls_accesses_before), and the view says how many
 * samples that was.  The accesses are computed once per procedure and
 * kept until the view ends (pl_data_keys_end). */
#include "attribute.h"
#include "report.h"
#include "support/json_writer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each procedure's accesses and blame are asked for once, keyed by the
 * module and the procedure's entry: an open-addressing table, because a
 * system-wide -s type asks about thousands of procedures, place by place. */
struct memo_slot {
	const ls_module *mod;
	uint64_t proc;
	void *value; /* NULL (no DWARF) is kept too: asked once */
	bool used;
};

struct proc_memo {
	struct memo_slot *slots;
	size_t cap, n; /* cap: a power of two, at least twice n */
};

static size_t memo_hash(const ls_module *mod, uint64_t proc)
{
	uint64_t h = (uint64_t)(uintptr_t)mod * 0x9E3779B97F4A7C15u ^ proc * 0xC2B2AE3D27D4EB4Fu;
	return (size_t)(h ^ h >> 29);
}

static struct memo_slot *memo_find(struct memo_slot *slots, size_t cap, const ls_module *mod, uint64_t proc)
{
	for (size_t i = memo_hash(mod, proc) & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!slots[i].used || (slots[i].mod == mod && slots[i].proc == proc))
			return &slots[i];
}

/* The slot of (MOD, PROC): used if it was asked before, else to be filled
 * (memo_put). */
static struct memo_slot *memo_slot(struct proc_memo *pm, const ls_module *mod, uint64_t proc)
{
	if (2 * (pm->n + 1) > pm->cap) {
		size_t cap = pm->cap ? 2 * pm->cap : 64;
		struct memo_slot *slots = pl_xcalloc(cap, sizeof *slots);
		for (size_t i = 0; i < pm->cap; i++)
			if (pm->slots[i].used)
				*memo_find(slots, cap, pm->slots[i].mod, pm->slots[i].proc) = pm->slots[i];
		free(pm->slots);
		pm->slots = slots;
		pm->cap = cap;
	}
	return memo_find(pm->slots, pm->cap, mod, proc);
}

static void *memo_put(struct proc_memo *pm, struct memo_slot *s, const ls_module *mod, uint64_t proc, void *value)
{
	*s = (struct memo_slot){ mod, proc, value, true };
	pm->n++;
	return value;
}

/* Ends PM, each value freed with FREE_VALUE. */
static void memo_free(struct proc_memo *pm, void (*free_value)(void *))
{
	for (size_t i = 0; i < pm->cap; i++)
		if (pm->slots[i].used)
			free_value(pm->slots[i].value);
	free(pm->slots);
	*pm = (struct proc_memo){ 0 };
}

static struct proc_memo accesses_memo;
static uint64_t skid_samples, own_samples, none_samples;

static void free_accesses(void *acc)
{
	ls_accesses_free(acc);
}

static const ls_accesses *accesses_at(const ls_module *mod, uint64_t link)
{
	const ls_scope *proc = ls_lookup_proc(mod, link);
	if (!proc)
		return NULL;
	uint64_t entry = ls_scope_low(proc);
	struct memo_slot *s = memo_slot(&accesses_memo, mod, entry);
	if (s->used)
		return s->value;
	ls_error err;
	return memo_put(&accesses_memo, s, mod, entry, ls_accesses_of(mod, link, &err));
}

/* The access sample place PL took the time at, or NULL; *SKID when it is
 * the one before the sampled instruction. */
static const ls_access *sampled_access(pl_report *rep, const pl_place *pl, int *skid)
{
	*skid = 0;
	uint64_t link;
	if (!pl->map || pl_attrib_link_addr(rep->attrib, pl->map, pl->addr, &link))
		return NULL;
	struct dso_attr *d = pl_dso_attr(rep->attrib, pl->map->dso);
	const ls_accesses *acc = d && d->mod ? accesses_at(d->mod, link) : NULL;
	size_t first;
	if (!acc)
		return NULL;
	if (ls_accesses_at(acc, link, &first))
		return ls_accesses_get(acc, first);
	*skid = 1;
	return ls_accesses_before(acc, link);
}

void pl_data_key(pl_report *rep, const pl_place *pl, int key, int count, char *part, size_t len)
{
	int skid;
	const ls_access *a = sampled_access(rep, pl, &skid);
	if (count) { /* once per place, for the note */
		if (!a || !a->variable)
			none_samples += pl->samples;
		else if (skid)
			skid_samples += pl->samples;
		else
			own_samples += pl->samples;
	}
	if (!a || !a->variable) {
		snprintf(part, len, "(unknown)");
		return;
	}
	if (key == PL_KEY_TYPE)
		snprintf(part, len, "%s", a->type);
	else if (a->field[0])
		snprintf(part, len, "%s +%" PRId64 " (%s)", a->type, a->offset, a->field);
	else
		snprintf(part, len, "%s +%" PRId64, a->type, a->offset);
}

void pl_data_keys_end(pl_report *rep, int used)
{
	if (used && own_samples + skid_samples + none_samples)
		fprintf(rep->out,
			"# data types: %" PRIu64 " samples at a memory access, %" PRIu64 " at an instruction without one "
			"(the IP skids past the one that took the time: the last access before it in its block taken), "
			"%" PRIu64 " with no variable found\n",
			own_samples, skid_samples, none_samples);
	memo_free(&accesses_memo, free_accesses);
	skid_samples = own_samples = none_samples = 0;
}

const ls_access *pl_data_access(pl_report *rep, const pl_place *pl, const ls_accesses **set, int *skid)
{
	uint64_t link;
	size_t first;
	*set = NULL;
	*skid = 0;
	if (!pl->map || pl_attrib_link_addr(rep->attrib, pl->map, pl->addr, &link))
		return NULL;
	struct dso_attr *d = pl_dso_attr(rep->attrib, pl->map->dso);
	const ls_accesses *acc = d && d->mod ? accesses_at(d->mod, link) : NULL;
	if (!acc)
		return NULL;
	*set = acc;
	if (ls_accesses_at(acc, link, &first))
		return ls_accesses_get(acc, first);
	*skid = 1;
	return ls_accesses_before(acc, link);
}

/* ---- -s var: the variables the samples are blamed on ------------------------------------- */

struct var_row {
	char *name;
	uint64_t samples, explicit_samples; /* samples; those blamed explicitly */
};

struct var_view {
	pl_report *rep;
	struct proc_memo blames; /* each procedure's blame, kept until the view ends */
	struct var_row *rows;
	size_t nrows, rows_cap;
	/* one sample's variables: each counted once per sample */
	char *seen[256];
	int seen_kind[256];
	size_t nseen;
	uint64_t through_call; /* samples in code without blame, taken at the caller's call */
};

static void free_blame(void *b)
{
	ls_blame_free(b);
}

static const ls_blame *blame_at(struct var_view *vv, const ls_module *mod, uint64_t link)
{
	const ls_scope *proc = ls_lookup_proc(mod, link);
	if (!proc)
		return NULL;
	uint64_t entry = ls_scope_low(proc);
	struct memo_slot *s = memo_slot(&vv->blames, mod, entry);
	if (s->used)
		return s->value;
	ls_error err;
	return memo_put(&vv->blames, s, mod, entry, ls_blame_of(mod, link, &err));
}

/* The procedure node holding node N, 0 when none. */
static uint32_t proc_node_of(const pl_tree *t, uint32_t n)
{
	while (n && t->nodes[n].kind != PL_PROC)
		n = t->nodes[n].parent;
	return n;
}

static const ls_module *node_module(struct var_view *vv, uint32_t proc)
{
	const pl_node *x = &vv->rep->tree.nodes[proc];
	struct dso_attr *d = x->dso ? pl_dso_attr(vv->rep->attrib, x->dso) : NULL;
	return d ? d->mod : NULL;
}

/* Counts variable NAME for the sample being placed (KIND: its blame's). */
static void blame_var(struct var_view *vv, const char *name, int kind)
{
	for (size_t i = 0; i < vv->nseen; i++)
		if (!strcmp(vv->seen[i], name)) {
			if (kind == LS_BLAME_EXPLICIT)
				vv->seen_kind[i] = kind;
			return;
		}
	if (vv->nseen < 256) {
		vv->seen[vv->nseen] = pl_xstrdup(name);
		vv->seen_kind[vv->nseen++] = kind;
	}
}

/* The call in the caller frame above procedure node PROC that called it:
 * *CALLER (its procedure node), the caller's blame; 0 when not known. */
static uint64_t caller_call(struct var_view *vv, uint32_t proc, uint32_t *caller, const ls_blame **cb)
{
	const pl_tree *t = &vv->rep->tree;
	uint32_t site = t->nodes[proc].parent;
	*caller = proc_node_of(t, site);
	const ls_module *mod = *caller ? node_module(vv, *caller) : NULL;
	const ls_scope *sc = site ? t->nodes[site].scope : NULL;
	if (!mod || !sc || !ls_scope_nranges(sc))
		return 0;
	*cb = blame_at(vv, mod, ls_scope_range(sc, 0).lo);
	uint64_t target = t->nodes[proc].scope ? ls_scope_low(t->nodes[proc].scope) : 0;
	for (size_t i = 0; *cb && i < ls_scope_nranges(sc); i++) {
		ls_range r = ls_scope_range(sc, i);
		uint64_t call = ls_blame_call_in(*cb, r.lo, r.hi, target);
		if (call)
			return call;
	}
	return 0;
}

static void blame_entries(struct var_view *vv, uint32_t proc, const ls_blame *b, uint64_t addr, int kind, int depth,
                          const char *via);

/* Exit variable V of B (procedure node PROC) in the caller frame. */
static void blame_exit(struct var_view *vv, uint32_t proc, const ls_blame *b, size_t v, int kind, int depth)
{
	int exit, param;
	const char *name = ls_blame_var_name(b, v, &exit, &param);
	char via[600], label[1200];
	snprintf(via, sizeof via, "%s (%s)", name, pl_node_name(vv->rep, proc));
	uint32_t caller = 0;
	const ls_blame *cb = NULL;
	uint64_t call = depth < 32 ? caller_call(vv, proc, &caller, &cb) : 0;
	size_t found = 0;
	if (call && exit == LS_BLAME_EXIT_PARAM) {
		size_t vars[8];
		size_t n = ls_blame_arg_sources(cb, call, param, vars, 8);
		for (size_t i = 0; i < n; i++) {
			int cexit;
			const char *cname = ls_blame_var_name(cb, vars[i], &cexit, NULL);
			if (cexit != LS_BLAME_LOCAL) {
				blame_exit(vv, caller, cb, vars[i], kind, depth + 1);
			} else {
				snprintf(label, sizeof label, "%s (%s) <- %s", cname, pl_node_name(vv->rep, caller), via);
				blame_var(vv, label, kind);
			}
			found++;
		}
	} else if (call && exit == LS_BLAME_EXIT_RETURN) {
		const ls_blame_entry *e;
		found = ls_blame_at(cb, call, &e);
		blame_entries(vv, caller, cb, call, kind, depth + 1, via);
	}
	if (!found) { /* the caller is not known, or not where the value went */
		snprintf(label, sizeof label, "%s [%s, not resolved in the caller]", via,
		         exit == LS_BLAME_EXIT_RETURN ? "return value" : "parameter");
		blame_var(vv, label, kind);
	}
}

/* The variables instruction ADDR of B (procedure node PROC) is blamed on;
 * KIND caps the blame's kind (implicit through an implicit exit); VIA: the
 * callee's exit variable this came through, or NULL. */
static void blame_entries(struct var_view *vv, uint32_t proc, const ls_blame *b, uint64_t addr, int kind, int depth,
                          const char *via)
{
	const ls_blame_entry *e;
	size_t n = ls_blame_at(b, addr, &e);
	for (size_t i = 0; i < n; i++) {
		int exit;
		const char *name = ls_blame_var_name(b, e[i].var, &exit, NULL);
		int k = kind == LS_BLAME_IMPLICIT ? LS_BLAME_IMPLICIT : (int)e[i].kind;
		if (exit != LS_BLAME_LOCAL) {
			blame_exit(vv, proc, b, e[i].var, k, depth);
			continue;
		}
		char label[1200];
		snprintf(label, sizeof label, "%s (%s)%s%s", name, pl_node_name(vv->rep, proc), via ? " <- " : "",
		         via ? via : "");
		blame_var(vv, label, k);
	}
}

/* The variables of place PL's sample, into vv->seen. */
static void place_blame(struct var_view *vv, const pl_place *pl)
{
	pl_report *rep = vv->rep;
	uint32_t proc = proc_node_of(&rep->tree, pl->node);
	uint64_t link;
	const ls_module *mod = proc ? node_module(vv, proc) : NULL;
	const ls_blame *b = NULL;
	if (mod && pl->map && !pl_attrib_link_addr(rep->attrib, pl->map, pl->addr, &link))
		b = blame_at(vv, mod, link);
	if (b) {
		blame_entries(vv, proc, b, link, LS_BLAME_EXPLICIT, 0, NULL);
		return;
	}
	/* code without blame (no DWARF: libc's malloc): the caller's call
	 * instruction stands for it, as the seed's transfer functions do */
	uint32_t caller = 0;
	const ls_blame *cb = NULL;
	uint64_t call = proc ? caller_call(vv, proc, &caller, &cb) : 0;
	if (call) {
		vv->through_call += pl->samples;
		blame_entries(vv, caller, cb, call, LS_BLAME_EXPLICIT, 1, NULL);
	}
}

static void count_sample(struct var_view *vv, uint64_t samples)
{
	for (size_t i = 0; i < vv->nseen; i++) {
		size_t r = 0;
		while (r < vv->nrows && strcmp(vv->rows[r].name, vv->seen[i]))
			r++;
		if (r == vv->nrows) {
			if (vv->nrows == vv->rows_cap) {
				vv->rows_cap = vv->rows_cap ? 2 * vv->rows_cap : 64;
				vv->rows = pl_xrealloc(vv->rows, vv->rows_cap * sizeof *vv->rows);
			}
			vv->rows[vv->nrows++] = (struct var_row){ pl_xstrdup(vv->seen[i]), 0, 0 };
		}
		vv->rows[r].samples += samples;
		if (vv->seen_kind[i] == LS_BLAME_EXPLICIT)
			vv->rows[r].explicit_samples += samples;
		free(vv->seen[i]);
	}
	vv->nseen = 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct var_row *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void print_var_rows(struct var_view *vv, uint64_t all, uint64_t none)
{
	pl_report *rep = vv->rep;
	const char *sep = rep->opt->field_sep;
	fprintf(rep->out, "# %8s%s%9s%s%9s%s%s\n", "Overhead", sep ? sep : "  ", "Explicit", sep ? sep : "  ", "Implicit",
	        sep ? sep : "  ", "Variable (procedure) <- exit variable it came through");
	for (size_t i = 0; i < vv->nrows; i++) {
		const struct var_row *r = &vv->rows[i];
		double p = 100.0 * (double)r->samples / (double)all, e = 100.0 * (double)r->explicit_samples / (double)all;
		if (p >= rep->opt->percent_limit)
			fprintf(rep->out, "  %8.2f%%%s%8.2f%%%s%8.2f%%%s%s\n", p, sep ? sep : "  ", e, sep ? sep : "  ", p - e,
			        sep ? sep : "  ", r->name);
	}
	fprintf(rep->out,
		"#\n# blame: a sample counts for every variable its instruction is blamed on, so the shares add up to "
		"more than 100%%.\n# Explicit: through data flow; Implicit: only through the branches that decide whether "
		"the variable is written.\n# %" PRIu64 " samples, %" PRIu64 " blamed on no variable, %" PRIu64
		" in code without blame (no DWARF) taken at the caller's call.\n",
		all, none, vv->through_call);
}

/* --format=json: one object, the rows with their counts. */
static void print_var_json(struct var_view *vv, uint64_t all, uint64_t none)
{
	ls_jw w;
	ls_jw_init(&w, vv->rep->out, LS_JW_COMPACT);
	ls_jw_object(&w);
	ls_jw_key(&w, "view");
	ls_jw_string(&w, "var");
	ls_jw_key(&w, "samples");
	ls_jw_uint(&w, all);
	ls_jw_key(&w, "no_variable");
	ls_jw_uint(&w, none);
	ls_jw_key(&w, "through_call");
	ls_jw_uint(&w, vv->through_call);
	ls_jw_key(&w, "note");
	ls_jw_string(&w, "a sample counts for every variable its instruction is blamed on: the shares add up to more "
	                 "than 100%");
	ls_jw_key(&w, "variables");
	ls_jw_array(&w);
	for (size_t i = 0; i < vv->nrows; i++) {
		ls_jw_object(&w);
		ls_jw_key(&w, "variable");
		ls_jw_string(&w, vv->rows[i].name);
		ls_jw_key(&w, "samples");
		ls_jw_uint(&w, vv->rows[i].samples);
		ls_jw_key(&w, "explicit_samples");
		ls_jw_uint(&w, vv->rows[i].explicit_samples);
		ls_jw_key(&w, "share");
		ls_jw_double(&w, all ? (double)vv->rows[i].samples / (double)all : 0);
		ls_jw_object_end(&w);
	}
	ls_jw_array_end(&w);
	ls_jw_object_end(&w);
	ls_jw_newline(&w);
	ls_jw_finish(&w);
}

int pl_view_var(pl_report *rep)
{
	struct var_view vv = { .rep = rep };
	uint64_t all = 0, none = 0;
	for (size_t i = 0; i < rep->places.n; i++) {
		const pl_place *pl = &rep->places.v[i];
		uint32_t proc = proc_node_of(&rep->tree, pl->node);
		if (pl->ev != rep->primary || (proc && !pl_proc_selected(rep, proc)))
			continue;
		all += pl->samples;
		place_blame(&vv, pl);
		if (!vv.nseen)
			none += pl->samples;
		count_sample(&vv, pl->samples);
	}
	if (vv.nrows)
		qsort(vv.rows, vv.nrows, sizeof *vv.rows, cmp_row);
	if (rep->opt->format == PL_FMT_JSON) {
		print_var_json(&vv, all, none);
		goto out;
	}
	pl_print_header(rep, "variables the samples are blamed on (Rutar's variable blame); Overhead: samples "
	                     "whose instruction is blamed on the variable");
	if (all)
		print_var_rows(&vv, all, none);
	fputc('\n', rep->out);
out:
	for (size_t i = 0; i < vv.nrows; i++)
		free(vv.rows[i].name);
	free(vv.rows);
	memo_free(&vv.blames, free_blame);
	return 0;
}
