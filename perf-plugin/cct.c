/* cct.c - the calling-context tree of `perf loops report`: its nodes (a
 * child per (parent, key), found by hashing), its costs (sparse in events:
 * an entry per (node, event) that has any), the sums that turn the counts at
 * the leaves into totals and own costs (pl_tree_finish), and what the views
 * ask of it: names and labels of nodes, children in order, and the nodes of
 * one event.  attribute.c fills it; view-*.c print it.
 */
#include "report.h"
#include "support/text_escape.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the tree -------------------------------------------------------------- */

void pl_tree_init(pl_tree *t, size_t nev)
{
	memset(t, 0, sizeof *t);
	t->nev = nev ? nev : 1;
	t->cap = 1024;
	t->nodes = pl_xcalloc(t->cap, sizeof *t->nodes);
	t->nslots = 4096;
	t->slots = pl_xcalloc(t->nslots, sizeof *t->slots);
	t->cap_costs = 1024;
	t->costs = pl_xcalloc(t->cap_costs, sizeof *t->costs);
	t->ncosts = 1; /* entry 0: none */
	t->ncslots = 2048;
	t->cslots = pl_xcalloc(t->ncslots, sizeof *t->cslots);
	t->n = 1; /* node 0: the root */
	t->nodes[0].kind = PL_ROOT;
}

static void ev_index_free(struct pl_ev_index *x);

void pl_tree_free(pl_tree *t)
{
	ev_index_free(t->evx);
	free(t->nodes);
	free(t->costs);
	free(t->cslots);
	free(t->slots);
	memset(t, 0, sizeof *t);
}

static inline size_t cost_hash(uint32_t node, size_t ev)
{
	uint64_t h = ((uint64_t)node << 16 ^ (uint64_t)ev) * 0x9e3779b97f4a7c15ULL;
	return (size_t)(h ^ (h >> 31));
}

const uint64_t *pl_cost(const pl_tree *t, uint32_t node, size_t ev)
{
	static const uint64_t zero[PL_NCOST];
	uint32_t head = t->nodes[node].costs;
	if (!head)
		return zero;
	if (t->costs[head].ev == ev) /* see pl_cost_at */
		return t->costs[head].c;
	for (size_t h = cost_hash(node, ev) & (t->ncslots - 1);; h = (h + 1) & (t->ncslots - 1)) {
		uint32_t c = t->cslots[h];
		if (!c)
			return zero;
		if (t->costs[c].node == node && t->costs[c].ev == ev)
			return t->costs[c].c;
	}
}

uint64_t *pl_cost_at(pl_tree *t, uint32_t node, size_t ev)
{
	/* The head of the node's chain is its newest entry: with one event
	 * (most recordings) it is the one asked for, without a hash probe. */
	uint32_t head = t->nodes[node].costs;
	if (head && t->costs[head].ev == ev)
		return t->costs[head].c;
	size_t h = cost_hash(node, ev) & (t->ncslots - 1);
	for (;; h = (h + 1) & (t->ncslots - 1)) {
		uint32_t c = t->cslots[h];
		if (!c)
			break;
		if (t->costs[c].node == node && t->costs[c].ev == ev)
			return t->costs[c].c;
	}
	if (t->ncosts == t->cap_costs) {
		t->cap_costs *= 2;
		t->costs = pl_xrealloc(t->costs, t->cap_costs * sizeof *t->costs);
	}
	uint32_t c = (uint32_t)t->ncosts++;
	pl_cost_entry *e = &t->costs[c];
	memset(e, 0, sizeof *e);
	e->node = node;
	e->ev = (uint32_t)ev;
	e->next = t->nodes[node].costs;
	t->nodes[node].costs = c;
	t->cslots[h] = c;
	if (t->ncosts * 2 > t->ncslots) {
		size_t n = t->ncslots * 2;
		uint32_t *slots = pl_xcalloc(n, sizeof *slots);
		for (uint32_t k = 1; k < t->ncosts; k++) {
			size_t j = cost_hash(t->costs[k].node, t->costs[k].ev) & (n - 1);
			while (slots[j])
				j = (j + 1) & (n - 1);
			slots[j] = k;
		}
		free(t->cslots);
		t->cslots = slots;
		t->ncslots = n;
	}
	return t->costs[c].c;
}

static inline size_t child_hash(uint32_t parent, uintptr_t key, int kind)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ULL;
	h ^= ((uint64_t)parent << 3 | (uint64_t)kind) * 0xc2b2ae3d27d4eb4fULL;
	return (size_t)(h ^ (h >> 29));
}

static void tree_rehash(pl_tree *t)
{
	size_t n = t->nslots * 2;
	uint32_t *slots = pl_xcalloc(n, sizeof *slots);
	for (size_t i = 0; i < t->nslots; i++) {
		uint32_t c = t->slots[i];
		if (!c)
			continue;
		const pl_node *x = &t->nodes[c];
		size_t h = child_hash(x->parent, x->key, x->kind) & (n - 1);
		while (slots[h])
			h = (h + 1) & (n - 1);
		slots[h] = c;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
}

uint32_t pl_tree_child(pl_tree *t, uint32_t parent, uintptr_t key, int kind)
{
	size_t h = child_hash(parent, key, kind) & (t->nslots - 1);
	for (;;) {
		uint32_t c = t->slots[h];
		if (!c)
			break;
		const pl_node *x = &t->nodes[c];
		if (x->key == key && x->parent == parent && x->kind == kind)
			return c;
		h = (h + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		t->cap *= 2;
		t->nodes = pl_xrealloc(t->nodes, t->cap * sizeof *t->nodes);
	}
	uint32_t c = (uint32_t)t->n++;
	pl_node *x = &t->nodes[c];
	memset(x, 0, sizeof *x);
	x->parent = parent;
	x->key = key;
	x->kind = (uint8_t)kind;
	x->next_sibling = t->nodes[parent].first_child;
	t->nodes[parent].first_child = c;
	t->slots[h] = c;
	if (t->n * 2 > t->nslots)
		tree_rehash(t);
	return c;
}

/* Samples were counted at their leaf only.  Children have higher indices
 * than their parents: one backward pass gives every node its total (its
 * own samples and its children's totals).  Only the (node, event) entries
 * that exist are visited; pl_cost_at may move the entries, so they are
 * named by index. */
static void sum_totals(pl_tree *t)
{
	for (size_t n = t->n; n-- > 0;) {
		uint32_t parent = t->nodes[n].parent;
		for (uint32_t ci = t->nodes[n].costs; ci; ci = t->costs[ci].next) {
			t->costs[ci].c[PL_TOTAL] += t->costs[ci].c[PL_SELF];
			t->costs[ci].c[PL_TOTAL_PERIOD] += t->costs[ci].c[PL_SELF_PERIOD];
			if (!n)
				continue;
			uint64_t total = t->costs[ci].c[PL_TOTAL], total_period = t->costs[ci].c[PL_TOTAL_PERIOD];
			uint64_t *p = pl_cost_at(t, parent, t->costs[ci].ev);
			p[PL_TOTAL] += total;
			p[PL_TOTAL_PERIOD] += total_period;
		}
	}
}

/* Self becomes the exclusive cost of each scope in its frame: a loop's
 * self is what its statements cost, not its callees (a procedure node
 * starts a frame, so nothing is carried across it). */
static void frame_selfs(pl_tree *t)
{
	for (size_t n = t->n; n-- > 1;) {
		const pl_node *x = &t->nodes[n];
		if (x->kind == PL_PROC || !x->parent)
			continue;
		uint32_t parent = x->parent;
		for (uint32_t ci = t->nodes[n].costs; ci; ci = t->costs[ci].next) {
			uint64_t self = t->costs[ci].c[PL_SELF], self_period = t->costs[ci].c[PL_SELF_PERIOD];
			if (!self && !self_period)
				continue;
			uint64_t *p = pl_cost_at(t, parent, t->costs[ci].ev);
			p[PL_SELF] += self;
			p[PL_SELF_PERIOD] += self_period;
		}
	}
}

void pl_tree_finish(pl_tree *t)
{
	ev_index_free(t->evx);
	t->evx = NULL;
	sum_totals(t);
	frame_selfs(t);
}

uint64_t pl_node_own(const pl_tree *t, uint32_t n, size_t ev, int k)
{
	/* self is per scope in its frame (pl_tree_finish): take back what the
	 * scopes inside it hold; procedures below are other frames */
	if (!n)
		return 0;
	uint64_t own = pl_cost(t, n, ev)[k];
	if (t->nodes[n].kind != PL_STMT)
		for (uint32_t c = t->nodes[n].first_child; c; c = t->nodes[c].next_sibling)
			if (t->nodes[c].kind != PL_PROC)
				own -= pl_cost(t, c, ev)[k];
	return own;
}

/* ---- -g callee: the tree turned over ------------------------------------------
 *
 * perf report's callee order lists where the samples landed first, then who
 * called it.  Here the frames of each calling context are put in the other
 * order, innermost first, and each frame keeps its own scopes top-down
 * (procedure, inlined calls, loops, statement), so the first level is the
 * procedures by their own cost, each followed by its callers.  A sample
 * counts in the total of every node of its (turned) path; its self stays
 * where it landed, in the first frame. */

size_t pl_tree_path(const pl_tree *src, uint32_t n, uint32_t **path, size_t *cap)
{
	size_t len = 0;
	for (uint32_t m = n; m; m = src->nodes[m].parent)
		len++;
	if (len > *cap) {
		*cap = len * 2;
		*path = pl_xrealloc(*path, *cap * sizeof **path);
	}
	size_t i = len;
	for (uint32_t m = n; m; m = src->nodes[m].parent)
		(*path)[--i] = m;
	return len;
}

/* The node of DST under PARENT standing for node M of SRC. */
static uint32_t copy_node(pl_tree *dst, uint32_t parent, const pl_tree *src, uint32_t m)
{
	const pl_node *x = &src->nodes[m];
	uint32_t c = pl_tree_child(dst, parent, x->key, x->kind);
	pl_node *y = &dst->nodes[c];
	y->scope = x->scope;
	y->name = x->name;
	y->dso = x->dso;
	y->how = x->how;
	return c;
}

void pl_tree_invert(pl_tree *t)
{
	pl_tree inv;
	pl_tree_init(&inv, t->nev);
	uint32_t *path = NULL, *turned = NULL;
	size_t cap = 0, cap_turned = 0;
	for (uint32_t n = 1; n < t->n; n++) {
		if (!t->nodes[n].costs)
			continue;
		size_t len = pl_tree_path(t, n, &path, &cap);
		assert(len >= 1); /* the path ends with N itself */
		if (len > cap_turned) {
			cap_turned = cap;
			turned = pl_xrealloc(turned, cap_turned * sizeof *turned);
		}
		/* the frames of the path (each starts at a procedure node),
		 * innermost first, each in its own top-down order */
		size_t k = 0, leaf = 0, end = len;
		while (end > 0) {
			size_t start = end - 1;
			while (start > 0 && t->nodes[path[start]].kind != PL_PROC)
				start--;
			uint32_t parent = k ? turned[k - 1] : 0;
			for (size_t i = start; i < end; i++)
				parent = turned[k++] = copy_node(&inv, parent, t, path[i]);
			if (end == len)
				leaf = k - 1;
			end = start;
		}
		for (uint32_t ci = t->nodes[n].costs; ci; ci = t->costs[ci].next) {
			const uint64_t *c = t->costs[ci].c;
			if (!c[PL_SELF] && !c[PL_SELF_PERIOD])
				continue;
			size_t ev = t->costs[ci].ev;
			for (size_t i = 0; i < k; i++) {
				uint64_t *d = pl_cost_at(&inv, turned[i], ev);
				d[PL_TOTAL] += c[PL_SELF];
				d[PL_TOTAL_PERIOD] += c[PL_SELF_PERIOD];
			}
			uint64_t *d = pl_cost_at(&inv, turned[leaf], ev);
			d[PL_SELF] += c[PL_SELF];
			d[PL_SELF_PERIOD] += c[PL_SELF_PERIOD];
		}
	}
	/* the root holds every sample */
	for (uint32_t ci = 1; ci < inv.ncosts; ci++) {
		if (inv.nodes[inv.costs[ci].node].parent || !inv.costs[ci].node)
			continue;
		uint64_t *r = pl_cost_at(&inv, 0, inv.costs[ci].ev);
		r[PL_TOTAL] += inv.costs[ci].c[PL_TOTAL];
		r[PL_TOTAL_PERIOD] += inv.costs[ci].c[PL_TOTAL_PERIOD];
	}
	frame_selfs(&inv);
	free(path);
	free(turned);
	pl_tree_free(t);
	*t = inv;
}

/* ---- names for the views ------------------------------------------------------------ */

const char *pl_node_name(const pl_report *rep, uint32_t n)
{
	const pl_node *x = &rep->tree.nodes[n];
	if (x->name)
		return x->name;
	if (x->scope) {
		/* --no-demangle: the symbol table's name where it differs */
		const char *linkage = rep->opt->no_demangle ? ls_scope_linkage_name(x->scope) : NULL;
		return linkage ? linkage : ls_scope_name(x->scope);
	}
	return NULL;
}

const char *pl_node_file(const pl_report *rep, uint32_t n)
{
	const pl_node *x = &rep->tree.nodes[n];
	return x->scope ? ls_scope_file(x->scope) : NULL;
}

unsigned pl_node_line(const pl_report *rep, uint32_t n)
{
	const pl_node *x = &rep->tree.nodes[n];
	return x->scope ? ls_scope_line(x->scope) : 0;
}

static const char *base_name(const char *p)
{
	if (!p)
		return "??";
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* "FILE:LINE" in BUF, or "[no line]": line 0 is never shown as a line. */
static const char *location(char *buf, size_t len, const char *file, unsigned line)
{
	if (line)
		snprintf(buf, len, "%s:%u", base_name(file), line);
	else
		snprintf(buf, len, "[no line]");
	return buf;
}

/* "loop at a.c:9 (part 2 of 2) [irreducible, compiler-made: memcpy, line
 * guessed: before-body]": the loop's marks, so that two machine loops of
 * one source loop, a loop with several entries, a loop no statement is
 * behind and a line that is a guess can be told from the rest. */
static void loop_label(char *buf, size_t len, const ls_scope *loop, const char *where)
{
	unsigned nparts, part = ls_loop_part(loop, &nparts);
	size_t n = (size_t)snprintf(buf, len, "loop at %s", where);
	if (part && n < len)
		n += (size_t)snprintf(buf + n, len - n, " (part %u of %u)", part, nparts);
	const char *marks[3] = { ls_loop_irreducible(loop) ? "irreducible" : NULL, ls_loop_compiler_made(loop),
	                         ls_loop_line_guessed(loop) };
	static const char *const prefix[3] = { "", "compiler-made: ", "line guessed: " };
	bool any = false;
	for (int i = 0; i < 3 && n < len; i++)
		if (marks[i]) {
			n += (size_t)snprintf(buf + n, len - n, "%s%s%s", any ? ", " : " [", prefix[i], marks[i]);
			any = true;
		}
	if (any && n < len)
		snprintf(buf + n, len - n, "]");
}

void pl_node_label(const pl_report *rep, uint32_t n, char *buf, size_t len)
{
	const pl_node *x = &rep->tree.nodes[n];
	const char *name = pl_node_name(rep, n);
	char loc[512];
	char shortened[1024];
	if (!rep->opt->full_names && !rep->opt->no_demangle)
		name = pl_short_name(name, shortened, sizeof shortened);
	switch (x->kind) {
	case PL_ROOT:
		snprintf(buf, len, "[all]");
		break;
	case PL_PROC:
		snprintf(buf, len, "%s%s", name ? name : "[unknown]", pl_how_mark(x->how));
		break;
	case PL_INLINE:
		snprintf(buf, len, "[I] %s (at %s)", name ? name : "??",
			 location(loc, sizeof loc, ls_scope_call_file(x->scope), ls_scope_call_line(x->scope)));
		break;
	case PL_ALIEN:
		snprintf(buf, len, "[A] %s",
			 location(loc, sizeof loc, ls_scope_file(x->scope), ls_scope_line(x->scope)));
		break;
	case PL_LOOP:
		loop_label(buf, len, x->scope, location(loc, sizeof loc, ls_scope_file(x->scope), ls_scope_line(x->scope)));
		break;
	case PL_STMT:
		snprintf(buf, len, "%s", location(loc, sizeof loc, ls_scope_file(x->scope), ls_scope_line(x->scope)));
		break;
	}
	/* names and paths from DWARF and perf.data: no control character
	 * reaches the terminal or splits a line (support/text_escape.h) */
	ls_text_escape_in_place(buf, len, 0);
}

struct sort_ctx {
	const pl_report *rep;
	const pl_tree *tree;
};

static int cmp_total(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *sc = arg;
	uint32_t x = *(const uint32_t *)pa, y = *(const uint32_t *)pb;
	uint64_t cx = pl_cost(sc->tree, x, sc->rep->primary)[PL_TOTAL_PERIOD];
	uint64_t cy = pl_cost(sc->tree, y, sc->rep->primary)[PL_TOTAL_PERIOD];
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return x < y ? -1 : x > y;
}

size_t pl_sorted_children(const pl_report *rep, const pl_tree *t, uint32_t n, uint32_t **out)
{
	size_t k = 0;
	for (uint32_t c = t->nodes[n].first_child; c; c = t->nodes[c].next_sibling)
		k++;
	uint32_t *v = pl_xmalloc((k ? k : 1) * sizeof *v);
	k = 0;
	for (uint32_t c = t->nodes[n].first_child; c; c = t->nodes[c].next_sibling)
		v[k++] = c;
	struct sort_ctx sc = { rep, t };
	qsort_r(v, k, sizeof *v, cmp_total, &sc);
	*out = v;
	return k;
}

/* ---- per-event children ------------------------------------------------------------ */

struct pl_ev_index {
	uint32_t *ev_start;  /* the cost entries grouped by event: CSR over nev */
	uint32_t *ev_nodes;  /* their nodes */
	size_t built_ev;     /* the event PAIRS is for; SIZE_MAX: none */
	uint64_t *pairs;     /* parent << 32 | node, of the event's nodes with a total, sorted */
	size_t npairs;
};

static void ev_index_free(struct pl_ev_index *x)
{
	if (!x)
		return;
	free(x->ev_start);
	free(x->ev_nodes);
	free(x->pairs);
	free(x);
}

static struct pl_ev_index *ev_index(const pl_tree *t)
{
	if (t->evx)
		return t->evx;
	struct pl_ev_index *x = pl_xcalloc(1, sizeof *x);
	x->ev_start = pl_xcalloc(t->nev + 2, sizeof *x->ev_start);
	x->ev_nodes = pl_xmalloc((t->ncosts + 1) * sizeof *x->ev_nodes);
	for (size_t c = 1; c < t->ncosts; c++)
		if (t->costs[c].ev < t->nev)
			x->ev_start[t->costs[c].ev + 1]++;
	for (size_t e = 0; e < t->nev; e++)
		x->ev_start[e + 1] += x->ev_start[e];
	uint32_t *fill = pl_xmalloc((t->nev + 1) * sizeof *fill);
	memcpy(fill, x->ev_start, (t->nev + 1) * sizeof *fill);
	for (size_t c = 1; c < t->ncosts; c++)
		if (t->costs[c].ev < t->nev)
			x->ev_nodes[fill[t->costs[c].ev]++] = t->costs[c].node;
	free(fill);
	x->built_ev = SIZE_MAX;
	((pl_tree *)t)->evx = x; /* a cache: the tree itself does not change */
	return x;
}

size_t pl_event_nodes(const pl_tree *t, size_t ev, const uint32_t **out)
{
	struct pl_ev_index *x = ev_index(t);
	if (ev >= t->nev) {
		*out = x->ev_nodes;
		return 0;
	}
	*out = x->ev_nodes + x->ev_start[ev];
	return x->ev_start[ev + 1] - x->ev_start[ev];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

size_t pl_event_children(const pl_report *rep, const pl_tree *t, uint32_t n, uint32_t **out)
{
	struct pl_ev_index *x = ev_index(t);
	if (x->built_ev != rep->primary) {
		const uint32_t *nodes;
		size_t m = pl_event_nodes(t, rep->primary, &nodes);
		x->pairs = pl_xrealloc(x->pairs, (m + 1) * sizeof *x->pairs);
		x->npairs = 0;
		for (size_t i = 0; i < m; i++)
			if (nodes[i] && pl_cost(t, nodes[i], rep->primary)[PL_TOTAL])
				x->pairs[x->npairs++] = (uint64_t)t->nodes[nodes[i]].parent << 32 | nodes[i];
		qsort(x->pairs, x->npairs, sizeof *x->pairs, cmp_u64);
		x->built_ev = rep->primary;
	}
	size_t lo = 0, hi = x->npairs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if ((x->pairs[mid] >> 32) < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t k = 0;
	while (lo + k < x->npairs && (x->pairs[lo + k] >> 32) == n)
		k++;
	uint32_t *v = pl_xmalloc((k ? k : 1) * sizeof *v);
	for (size_t i = 0; i < k; i++)
		v[i] = (uint32_t)x->pairs[lo + i];
	struct sort_ctx sc = { rep, t };
	qsort_r(v, k, sizeof *v, cmp_total, &sc);
	*out = v;
	return k;
}
