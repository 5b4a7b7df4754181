/* browser.c - the terminal browser of `perf loops report` and `perf loops
 * annotate` (ncurses), the default on a terminal as perf report's TUI is.
 *
 * It shows the same report data as --stdio, never a second attribution:
 * the calling-context tree (rep->tree), the flat tree (pl_flat_tree) and
 * the loops of the flat tree, with the same columns (Children, Self,
 * Samples of the sort event, Children of every other event, and for a
 * recording with off-CPU data On-CPU, Off-CPU and Wall ms), and
 * annotate.c's rows for the annotate view.
 *
 * Keys follow perf report's browser where they fit:
 *   Up/Down/PgUp/PgDn/Home/End (j/k)  move       Enter, +  expand/collapse
 *   -  collapse (or go to the parent)   e  expand/collapse the whole subtree
 *   E  expand all    C  collapse all    H  the hottest entry (most own samples)
 *   L  jump to the next hottest loop    /  search the rows, n  the next match
 *   v  switch tree / flat / loops view  a  annotate the entry's procedure
 *   <  >  scroll the Context column     O  loops view: by Own or by Total
 *   S  switch the sort event            h, ?  help      q, ESC  quit
 * In the annotate view: s toggles source / assembly, TAB and H the next hot
 * and the hottest line, q/ESC/Left go back.
 *
 * The status line shows the selected entry's full name (C++ names are
 * shortened in the rows, as in --stdio).  Deep rows are indented as
 * --stdio's are on a terminal (up to 30 columns before the edge, then
 * their depth in brackets), so the hot rows of a DWARF tree 40 levels deep
 * stay readable at 80 columns.
 */
#include "offcpu.h"
#include "report.h"

#ifndef HAVE_NCURSES

int pl_browser(pl_report *rep)
{
	if (rep->opt->ui == PL_UI_TUI && !rep->opt->quiet)
		fprintf(stderr, "perf-loops: built without ncurses: no browser; printing the --stdio report\n");
	return -1;
}

int pl_browser_annotate(pl_report *rep, uint32_t proc)
{
	(void)proc;
	return pl_browser(rep);
}

#else

#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { V_TREE, V_FLAT, V_LOOPS, V_NVIEWS };
static const char *const view_names[V_NVIEWS] = { "calling-context tree", "flat (all contexts folded)",
						   "loops (by inclusive cost)" };

struct row {
	uint32_t node;
	int depth;
	int has_kids;
};

struct browser {
	pl_report *rep;
	int view;
	uint8_t *open[2];      /* expanded nodes of the tree and of the flat tree */
	struct row *rows;
	size_t nrows, cap;
	size_t cur, top;
	size_t next_loop;      /* L: how many loops were visited */
	int hscroll;           /* < >: columns of the Context column scrolled off */
	int loops_by_own;      /* O: the loops view ranks by Own */
	char search[128];
	char msg[1024];
};

static const pl_tree *tree_of(const struct browser *b)
{
	return b->view == V_TREE ? &b->rep->tree : pl_flat_tree(b->rep);
}

/* A node's label and a cost read through the views' helpers, which name
 * nodes of rep->tree: the flat tree is swapped in meanwhile (view-flat.c). */
static void node_label(struct browser *b, uint32_t n, char *buf, size_t len)
{
	pl_report *rep = b->rep;
	if (b->view == V_TREE) {
		pl_node_label(rep, n, buf, len);
		return;
	}
	pl_tree cct = rep->tree;
	rep->tree = *pl_flat_tree(rep);
	pl_node_label(rep, n, buf, len);
	rep->tree = cct;
}

static void add_row(struct browser *b, uint32_t n, int depth, int kids)
{
	if (b->nrows == b->cap)
		b->rows = pl_xrealloc(b->rows, (b->cap = b->cap ? b->cap * 2 : 1024) * sizeof *b->rows);
	b->rows[b->nrows++] = (struct row){ n, depth, kids };
}

static void add_subtree(struct browser *b, const pl_tree *t, uint32_t n, int depth)
{
	uint32_t *kids;
	size_t k = pl_event_children(b->rep, t, n, &kids);
	if (n)
		add_row(b, n, depth, k > 0);
	if (!n || b->open[b->view == V_TREE ? 0 : 1][n])
		for (size_t i = 0; i < k; i++)
			add_subtree(b, t, kids[i], n ? depth + 1 : 0);
	free(kids);
}

/* The Self of the loops nested in loop N, nearest first (through inlined
 * calls): what the loop's Own leaves out, as in --format=loops. */
static uint64_t nested_self(const pl_tree *t, uint32_t n, size_t ev)
{
	uint64_t sum = 0;
	for (uint32_t k = t->nodes[n].first_child; k; k = t->nodes[k].next_sibling) {
		if (t->nodes[k].kind == PL_LOOP)
			sum += pl_cost(t, k, ev)[PL_SELF_PERIOD];
		else if (t->nodes[k].kind != PL_PROC)
			sum += nested_self(t, k, ev);
	}
	return sum;
}

static uint64_t loop_own(const pl_tree *t, uint32_t n, size_t ev)
{
	return pl_cost(t, n, ev)[PL_SELF_PERIOD] - nested_self(t, n, ev);
}

/* O: loops by Own, then by Total (qsort_r) */
static int cmp_own(const void *pa, const void *pb, void *arg)
{
	const pl_report *rep = arg;
	uint32_t x = *(const uint32_t *)pa, y = *(const uint32_t *)pb;
	uint64_t ox = loop_own(&rep->tree, x, rep->primary), oy = loop_own(&rep->tree, y, rep->primary);
	if (ox != oy)
		return ox > oy ? -1 : 1;
	return pl_cmp_total(pa, pb, arg);
}

/* Loops of the flat tree with samples of the sort event, largest first
 * (by Own if BY_OWN). */
static size_t sorted_loops(struct browser *b, const pl_tree *t, int by_own, uint32_t **out)
{
	const uint32_t *nodes;
	size_t nn = pl_event_nodes(t, b->rep->primary, &nodes), k = 0;
	uint32_t *v = pl_xmalloc((nn + 1) * sizeof *v);
	for (size_t i = 0; i < nn; i++)
		if (nodes[i] && t->nodes[nodes[i]].kind == PL_LOOP && pl_cost(t, nodes[i], b->rep->primary)[PL_TOTAL])
			v[k++] = nodes[i];
	pl_report *rep = b->rep;
	pl_tree cct = rep->tree;
	rep->tree = *t; /* pl_cmp_total reads rep->tree */
	qsort_r(v, k, sizeof *v, by_own ? cmp_own : pl_cmp_total, rep);
	rep->tree = cct;
	*out = v;
	return k;
}

static size_t hot_loops(struct browser *b, const pl_tree *t, uint32_t **out)
{
	return sorted_loops(b, t, 0, out);
}

/* The loops view's rows: by Total, or by Own after O. */
static size_t view_loops(struct browser *b, const pl_tree *t, uint32_t **out)
{
	return sorted_loops(b, t, b->loops_by_own, out);
}

static void rebuild(struct browser *b)
{
	uint32_t keep = b->nrows && b->cur < b->nrows ? b->rows[b->cur].node : 0;
	b->nrows = 0;
	const pl_tree *t = tree_of(b);
	if (b->view == V_LOOPS) {
		uint32_t *v;
		size_t k = view_loops(b, t, &v);
		for (size_t i = 0; i < k; i++)
			add_row(b, v[i], 0, 0);
		free(v);
	} else {
		add_subtree(b, t, 0, 0);
	}
	b->cur = 0;
	for (size_t i = 0; keep && i < b->nrows; i++)
		if (b->rows[i].node == keep)
			b->cur = i;
}

/* ---- drawing ------------------------------------------------------------------ */

/* S at (Y, X), cut at the right edge (curses would wrap it). */
static void put(int y, int x, const char *s)
{
	if (x < COLS)
		mvaddnstr(y, x, s, COLS - x);
}

static double pct(uint64_t part, uint64_t all)
{
	return all ? 100.0 * (double)part / (double)all : 0.0;
}

/* Children and Self of the sort event, Samples, then Children of the
 * others: --stdio's columns for one event.  In the loops view, Total and Own. */
static int draw_cells(struct browser *b, int y, uint32_t n)
{
	pl_report *rep = b->rep;
	const pl_tree *t = tree_of(b);
	const uint64_t *c = pl_cost(t, n, rep->primary);
	uint64_t all = rep->ev_period[rep->primary];
	uint64_t self = c[PL_SELF_PERIOD];
	if (b->view == V_LOOPS)
		self -= nested_self(t, n, rep->primary);
	char buf[64];
	snprintf(buf, sizeof buf, "%9.2f%% %9.2f%% %9llu", pct(c[PL_TOTAL_PERIOD], all), pct(self, all),
		 (unsigned long long)c[PL_TOTAL]);
	put(y, 0, buf);
	int x = 31;
	for (size_t i = 0; i < rep->nshown; i++) {
		size_t e = rep->shown[i];
		if (e == rep->primary)
			continue;
		snprintf(buf, sizeof buf, " %9.2f%%", pct(pl_cost(t, n, e)[PL_TOTAL_PERIOD], rep->ev_period[e]));
		put(y, x, buf);
		x += 11;
	}
	if (pl_wall_width(rep)) { /* a recording with off-CPU data: --stdio's On-CPU, Off-CPU, Wall ms */
		uint64_t on = rep->on_ev >= 0 ? pl_cost(t, n, (size_t)rep->on_ev)[PL_TOTAL_PERIOD] : 0;
		uint64_t off = pl_cost(t, n, rep->off_ev)[PL_TOTAL_PERIOD];
		snprintf(buf, sizeof buf, " %10.1f %10.1f %10.1f", on / 1e6, off / 1e6, (on + off) / 1e6);
		put(y, x, buf);
		x += 33;
	}
	return x;
}

/* "  (main [inl] > [I] work (at a.c:19))": where a loop of the loops view is. */
static void loop_context(struct browser *b, uint32_t n, char *buf, size_t len)
{
	const pl_tree *t = tree_of(b);
	uint32_t chain[64];
	size_t k = 0, used = 0;
	for (uint32_t p = t->nodes[n].parent; p && k < 64; p = t->nodes[p].parent)
		if (t->nodes[p].kind == PL_PROC || t->nodes[p].kind == PL_INLINE)
			chain[k++] = p;
	used = (size_t)snprintf(buf, len, "  (");
	while (k-- > 0 && used < len) {
		char part[1024], dso[300] = "";
		node_label(b, chain[k], part, sizeof part);
		const pl_node *x = &t->nodes[chain[k]];
		if (x->kind == PL_PROC && x->dso)
			pl_dso_shown(x->dso, dso, sizeof dso);
		used += (size_t)snprintf(buf + used, len - used, "%s%s%s%s", x->kind == PL_PROC ? "" : " > ", part,
					 dso[0] ? " " : "", dso);
	}
	if (used < len)
		snprintf(buf + used, len - used, ")");
}

/* The text of row R after its cost columns, as --stdio prints it: the
 * entry's label and binary (in the loops view, where the loop is), with
 * the expand mark.  Deep rows stop moving right 30 columns before the
 * edge of a terminal COLS wide (COL: where the text starts) and say their
 * depth instead, as --stdio's tree does. */
static void row_text(struct browser *b, const struct row *r, int col, char *text, size_t len)
{
	char label[1024];
	node_label(b, r->node, label, sizeof label);
	const pl_tree *t = tree_of(b);
	const pl_node *x = &t->nodes[r->node];
	char mark = !r->has_kids ? ' ' : b->view != V_LOOPS && b->open[b->view == V_TREE ? 0 : 1][r->node] ? '-' : '+';
	char dso[1024] = "";
	if (x->kind == PL_PROC && x->dso) {
		dso[0] = ' ';
		dso[1] = ' ';
		pl_dso_shown(x->dso, dso + 2, sizeof dso - 2);
	} else if (b->view == V_LOOPS) {
		loop_context(b, r->node, dso, sizeof dso);
	}
	int indent = 2 * r->depth, cap = COLS - col - 2 - 30;
	char deep[16] = "";
	if (indent > cap) {
		indent = cap > 0 ? cap : 0;
		snprintf(deep, sizeof deep, "[%d] ", r->depth);
	}
	snprintf(text, len, "  %*s%c %s%s%s", indent, "", mark, deep, label, dso);
}

static void draw_row(struct browser *b, int y, const struct row *r, int selected)
{
	if (selected)
		attron(A_REVERSE);
	move(y, 0);
	clrtoeol();
	int col = draw_cells(b, y, r->node);
	char text[2048];
	row_text(b, r, col, text, sizeof text);
	int skip = (int)strlen(text) < b->hscroll ? (int)strlen(text) : b->hscroll;
	put(y, col, text + skip);
	if (selected) {
		for (int i = getcurx(stdscr); i < COLS && i > 0; i++)
			addch(' ');
		attroff(A_REVERSE);
	}
}

/* The selected entry: kind, full name, place; its figures. */
static void draw_status(struct browser *b)
{
	char line[2048] = "";
	if (b->nrows) {
		const pl_tree *t = tree_of(b);
		uint32_t n = b->rows[b->cur].node;
		const pl_node *x = &t->nodes[n];
		const char *name = x->name ? x->name : x->scope ? ls_scope_name(x->scope) : NULL;
		char label[1024];
		node_label(b, n, label, sizeof label);
		if ((x->kind == PL_PROC || x->kind == PL_INLINE) && name)
			snprintf(line, sizeof line, "%s %s", x->kind == PL_PROC ? "proc" : "inlined", name);
		else
			snprintf(line, sizeof line, "%s", label);
	}
	if (b->msg[0]) {
		size_t len = strlen(line);
		snprintf(line + len, sizeof line - len, "%s[%s]", len ? "   " : "", b->msg);
	}
	attron(A_REVERSE);
	mvprintw(LINES - 2, 0, "%-*.*s", COLS, COLS, line);
	attroff(A_REVERSE);
	mvprintw(LINES - 1, 0, "%-*.*s", COLS, COLS,
		 b->view == V_LOOPS ? "O by Own/Total  < > scroll  / search  v view  a annotate  H hottest  h help  q quit"
				    : "Enter/+ expand  - collapse  E/C all  H hottest  L hot loop  < > scroll  / search"
				      "  v view  a annotate  h help  q quit");
}

static void draw(struct browser *b)
{
	pl_report *rep = b->rep;
	int h = LINES - 4;
	if (h < 1)
		h = 1;
	if (b->cur < b->top)
		b->top = b->cur;
	if (b->cur >= b->top + (size_t)h)
		b->top = b->cur - (size_t)h + 1;
	erase();
	char buf[1024];
	snprintf(buf, sizeof buf, "perf loops: %s   Samples: %llu of event '%s' (sort)",
		 b->view == V_LOOPS && b->loops_by_own ? "loops (by own cost)" : view_names[b->view],
		 (unsigned long long)rep->ev_samples[rep->primary], pd_attr_at(rep->r, rep->primary)->name);
	put(0, 0, buf);
	size_t len = (size_t)snprintf(buf, sizeof buf, "%10s %10s %9s", b->view == V_LOOPS ? "Total" : "Children",
				      b->view == V_LOOPS ? "Own" : "Self", "Samples");
	for (size_t i = 0; i < rep->nshown && len < sizeof buf; i++)
		if (rep->shown[i] != rep->primary)
			len += (size_t)snprintf(buf + len, sizeof buf - len, " %10.10s", pd_attr_at(rep->r, rep->shown[i])->name);
	if (pl_wall_width(rep) && len < sizeof buf)
		len += (size_t)snprintf(buf + len, sizeof buf - len, " %10s %10s %10s", "On-CPU ms", "Off-CPU ms", "Wall ms");
	if (len < sizeof buf)
		snprintf(buf + len, sizeof buf - len, "  %s", b->view == V_LOOPS ? "Loop" : b->view == V_TREE ? "Context" : "Scope");
	put(1, 0, buf);
	for (int i = 0; i < h && b->top + (size_t)i < b->nrows; i++)
		draw_row(b, 2 + i, &b->rows[b->top + (size_t)i], b->top + (size_t)i == b->cur);
	if (!b->nrows)
		mvprintw(2, 0, b->view == V_LOOPS ? "no samples in loops" : "no samples");
	draw_status(b);
	refresh();
}

/* ---- moving around ------------------------------------------------------------ */

static uint8_t *open_of(struct browser *b)
{
	return b->open[b->view == V_TREE ? 0 : 1];
}

static void select_node(struct browser *b, uint32_t n)
{
	for (size_t i = 0; i < b->nrows; i++)
		if (b->rows[i].node == n) {
			b->cur = i;
			return;
		}
}

/* Open the ancestors of N so that it is a row, and select it. */
static void reveal(struct browser *b, uint32_t n)
{
	const pl_tree *t = tree_of(b);
	if (b->view != V_LOOPS)
		for (uint32_t p = t->nodes[n].parent; p; p = t->nodes[p].parent)
			open_of(b)[p] = 1;
	rebuild(b);
	select_node(b, n);
}

static void set_subtree(const pl_tree *t, uint8_t *open, uint32_t n, uint8_t v)
{
	open[n] = v;
	for (uint32_t k = t->nodes[n].first_child; k; k = t->nodes[k].next_sibling)
		set_subtree(t, open, k, v);
}

/* L: the next hottest loop of the view's tree (the hottest first). */
static void jump_loop(struct browser *b)
{
	uint32_t *v;
	size_t k = hot_loops(b, tree_of(b), &v);
	if (!k) {
		snprintf(b->msg, sizeof b->msg, "no loop has samples of this event");
	} else {
		size_t i = b->next_loop++ % k;
		reveal(b, v[i]);
		snprintf(b->msg, sizeof b->msg, "loop %zu of %zu by inclusive cost (L: the next)", i + 1, k);
	}
	free(v);
}

/* H: the hottest entry, the one with the most samples of its own (the
 * sort event's period): a statement in the trees, in the loops view the
 * loop with the largest Own. */
static void go_hottest(struct browser *b)
{
	const pl_tree *t = tree_of(b);
	size_t ev = b->rep->primary;
	const uint32_t *nodes;
	size_t nn = pl_event_nodes(t, ev, &nodes);
	uint32_t best = 0;
	uint64_t bc = 0;
	for (size_t i = 0; i < nn; i++) {
		uint32_t n = nodes[i];
		if (!n || (b->view == V_LOOPS && t->nodes[n].kind != PL_LOOP))
			continue;
		uint64_t c = b->view == V_LOOPS ? loop_own(t, n, ev) : pl_node_own(t, n, ev, PL_SELF_PERIOD);
		if (c > bc || (c == bc && c && n < best)) {
			bc = c;
			best = n;
		}
	}
	if (!best)
		return;
	reveal(b, best);
	snprintf(b->msg, sizeof b->msg, "the hottest entry: %.2f%% of its own", pct(bc, b->rep->ev_period[ev]));
}

/* The nodes of the view in display order (all of them, opened or not). */
static void all_nodes(struct browser *b, const pl_tree *t, uint32_t n, uint32_t **v, size_t *nv, size_t *cap)
{
	uint32_t *kids;
	size_t k = pl_event_children(b->rep, t, n, &kids);
	for (size_t i = 0; i < k; i++) {
		if (*nv == *cap)
			*v = pl_xrealloc(*v, (*cap = *cap ? *cap * 2 : 1024) * sizeof **v);
		(*v)[(*nv)++] = kids[i];
		if (b->view != V_LOOPS)
			all_nodes(b, t, kids[i], v, nv, cap);
	}
	free(kids);
}

/* /: the next entry (after the selected one, wrapping) whose label or
 * full name holds the text. */
static void find_next(struct browser *b)
{
	if (!b->search[0])
		return;
	const pl_tree *t = tree_of(b);
	uint32_t *v = NULL;
	size_t nv = 0, cap = 0, at = 0;
	if (b->view == V_LOOPS)
		nv = view_loops(b, t, &v);
	else
		all_nodes(b, t, 0, &v, &nv, &cap);
	uint32_t cur = b->nrows ? b->rows[b->cur].node : 0;
	for (size_t i = 0; i < nv; i++)
		if (v[i] == cur)
			at = i;
	b->msg[0] = 0;
	for (size_t j = 1; j <= nv; j++) {
		uint32_t n = v[(at + j) % nv];
		/* the whole row as shown (the loops view's procedure and
		 * inlined calls too), and the entry's full name */
		struct row r = { n, 0, 0 };
		char text[2048];
		row_text(b, &r, 0, text, sizeof text);
		const pl_node *x = &t->nodes[n];
		const char *full = x->name ? x->name : x->scope ? ls_scope_name(x->scope) : NULL;
		if (strstr(text, b->search) || (full && strstr(full, b->search))) {
			reveal(b, n);
			free(v);
			return;
		}
	}
	snprintf(b->msg, sizeof b->msg, "not found: %s", b->search);
	free(v);
}

static void prompt(const char *what, char *buf, int len)
{
	attron(A_REVERSE);
	mvprintw(LINES - 2, 0, "%-*s", COLS, what);
	move(LINES - 2, (int)strlen(what));
	echo();
	curs_set(1);
	getnstr(buf, len - 1);
	noecho();
	curs_set(0);
	attroff(A_REVERSE);
}

static void help(void)
{
	static const char *const lines[] = {
		"perf loops browser keys (perf report's where they fit)",
		"",
		"Up/Down/PgUp/PgDn/Home/End, j/k   move",
		"Enter, +       expand or collapse the entry",
		"-              collapse the entry, or go to its parent",
		"e              expand or collapse the entry's whole subtree",
		"E / C          expand / collapse everything",
		"H              the hottest entry (the most samples of its own)",
		"< >            scroll the Context column left / right",
		"O              loops view: rank by Own (the hot loops) or by Total",
		"L              jump to the next hottest loop",
		"/  n           search a name; the next match",
		"v              switch the tree / flat / loops views",
		"a              annotate the entry's procedure (s: source/asm, TAB: next hot line)",
		"d              the entry's procedure and loops by variable and by type and field",
		"S              switch the sort event",
		"q, ESC         quit (from annotate: back)",
		"",
		"press any key",
	};
	erase();
	for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
		mvaddnstr(1 + (int)i, 2, lines[i], COLS > 2 ? COLS - 2 : 0);
	refresh();
	getch();
}

/* ---- the annotate view ------------------------------------------------------------ */

struct annot_view {
	pl_report *rep;
	uint32_t proc;         /* in the flat tree */
	int with_asm;
	pl_ann ann;
	size_t cur, top;
	char msg[1024];
};

static int annot_load(struct annot_view *a)
{
	char err[1024];
	pl_ann ann;
	if (pl_annotate_build(a->rep, a->proc, a->with_asm, &ann, err, sizeof err)) {
		snprintf(a->msg, sizeof a->msg, "%s", err);
		return -1;
	}
	pl_ann_free(&a->ann);
	a->ann = ann;
	a->cur = a->top = 0;
	return 0;
}

/* The row's cost of the sort event (0 without a cost). */
static uint64_t row_cost(const struct annot_view *a, const pl_ann_row *r)
{
	if (!r->has_cost || (r->kind != PL_ANN_SRC && r->kind != PL_ANN_ASM))
		return 0;
	for (size_t i = 0; i < a->rep->nshown; i++)
		if (a->rep->shown[i] == a->rep->primary)
			return r->period[i];
	return 0;
}

static void annot_draw(struct annot_view *a)
{
	pl_report *rep = a->rep;
	int h = LINES - 4;
	if (h < 1)
		h = 1;
	if (a->cur < a->top)
		a->top = a->cur;
	if (a->cur >= a->top + (size_t)h)
		a->top = a->cur - (size_t)h + 1;
	erase();
	char shortened[1024], buf[4096];
	snprintf(buf, sizeof buf, "Annotate %s: %s  (%s)", a->with_asm ? "asm" : "source",
		 pl_short_name(a->ann.name, shortened, sizeof shortened), a->ann.binary);
	put(0, 0, buf);
	size_t len = 0;
	for (size_t i = 0; i < rep->nshown && len < sizeof buf; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%18.18s", pd_attr_at(rep->r, rep->shown[i])->name);
	put(1, 0, buf);
	for (int y = 0; y < h && a->top + (size_t)y < a->ann.n; y++) {
		const pl_ann_row *r = &a->ann.rows[a->top + (size_t)y];
		len = 0;
		for (size_t i = 0; i < rep->nshown; i++) {
			if (r->has_cost)
				pl_ann_cell(buf + len, sizeof buf - len, r->samples[i], r->period[i], rep->ev_period[rep->shown[i]]);
			else
				snprintf(buf + len, sizeof buf - len, "%18s", "");
			len = strlen(buf);
		}
		const char *m = r->margin ? r->margin : "";
		if (r->kind == PL_ANN_SRC) {
			char call[1024];
			pl_ann_call_text(rep, r, call, sizeof call);
			snprintf(buf + len, sizeof buf - len, "  %5u %s: %s%s", r->line, m, r->text, call);
		}
		else if (r->kind == PL_ANN_LOOP)
			snprintf(buf + len, sizeof buf - len, "        %s-- %s", m, r->text);
		else if (r->kind == PL_ANN_FILE)
			snprintf(buf + len, sizeof buf - len, "  ## %s", r->text);
		else
			snprintf(buf + len, sizeof buf - len, "        %s: %s", m, r->text);
		int sel = a->top + (size_t)y == a->cur;
		if (sel)
			attron(A_REVERSE);
		put(2 + y, 0, buf);
		if (sel) {
			for (int i = getcurx(stdscr); i < COLS && i > 0; i++)
				addch(' ');
			attroff(A_REVERSE);
		}
	}
	attron(A_REVERSE);
	snprintf(buf, sizeof buf, "proc %s", a->ann.name);
	mvprintw(LINES - 2, 0, "%-*.*s", COLS, COLS, a->msg[0] ? a->msg : buf);
	attroff(A_REVERSE);
	mvprintw(LINES - 1, 0, "%-*.*s", COLS, COLS, "s source/asm  TAB next hot line  H hottest  q/ESC back");
	refresh();
}

/* TAB: the next row with a cost of the sort event, below, wrapping. */
static void annot_next_hot(struct annot_view *a, int hottest)
{
	size_t best = a->cur;
	uint64_t bc = 0;
	for (size_t j = 1; j <= a->ann.n; j++) {
		size_t i = hottest ? j - 1 : (a->cur + j) % a->ann.n;
		uint64_t c = row_cost(a, &a->ann.rows[i]);
		if (c && !hottest) {
			best = i;
			break;
		}
		if (c > bc) {
			bc = c;
			best = i;
		}
	}
	a->cur = best;
}

/* Select the source row of LINE of FILE (an [I] entry's call site), if
 * the annotation shows it. */
static void annot_focus(struct annot_view *a, const char *file, unsigned line)
{
	const char *in = NULL;
	for (size_t i = 0; file && line && i < a->ann.n; i++) {
		const pl_ann_row *r = &a->ann.rows[i];
		if (r->kind == PL_ANN_FILE)
			in = r->text;
		else if (r->kind == PL_ANN_SRC && r->line == line && in && !strcmp(in, file)) {
			a->cur = i;
			return;
		}
	}
}

/* The annotate view of flat-tree procedure PROC until q/ESC/Left: 0, or
 * 'Q' when the whole browser is to end. */
static int annot_run(pl_report *rep, uint32_t proc, const char *file, unsigned line, char *msg, size_t msglen)
{
	struct annot_view a = { .rep = rep, .proc = proc, .with_asm = rep->opt->asm_view };
	if (annot_load(&a)) {
		snprintf(msg, msglen, "%s", a.msg);
		return 0;
	}
	annot_focus(&a, file, line);
	int h = LINES - 4 > 1 ? LINES - 4 : 1;
	for (;;) {
		annot_draw(&a);
		int c = getch();
		a.msg[0] = 0;
		size_t n = a.ann.n;
		switch (c) {
		case KEY_UP: case 'k': if (a.cur) a.cur--; break;
		case KEY_DOWN: case 'j': if (a.cur + 1 < n) a.cur++; break;
		case KEY_PPAGE: a.cur = a.cur > (size_t)h ? a.cur - (size_t)h : 0; break;
		case KEY_NPAGE: a.cur = a.cur + (size_t)h < n ? a.cur + (size_t)h : n ? n - 1 : 0; break;
		case KEY_HOME: a.cur = 0; break;
		case KEY_END: a.cur = n ? n - 1 : 0; break;
		case '\t': annot_next_hot(&a, 0); break;
		case 'H': annot_next_hot(&a, 1); break;
		case 's':
			a.with_asm = !a.with_asm;
			if (annot_load(&a))
				a.with_asm = !a.with_asm;
			break;
		case 'h': case '?': help(); break;
		case 'q': case 27: case KEY_LEFT: case ERR:
			pl_ann_free(&a.ann);
			return 0;
		case 'Q':
			pl_ann_free(&a.ann);
			return 'Q';
		default: break;
		}
	}
}

/* The flat-tree procedure of the entry N of the view (for a). */
/* ---- the data view (key d): --format=data for one procedure ---------------------- */

/* TEXT's lines, scrolled with the movement keys; any other key goes back. */
static void text_view(const char *title, char *text)
{
	size_t n = 0, cap = 0, top = 0;
	char **lines = NULL;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (n == cap)
			lines = pl_xrealloc(lines, (cap = cap ? 2 * cap : 64) * sizeof *lines);
		lines[n++] = l;
	}
	for (;;) {
		int h = LINES > 2 ? LINES - 2 : 1;
		erase();
		attron(A_REVERSE);
		mvaddnstr(0, 0, title, COLS);
		attroff(A_REVERSE);
		for (int y = 0; y < h && top + (size_t)y < n; y++)
			mvaddnstr(1 + y, 0, lines[top + (size_t)y], COLS);
		mvaddnstr(LINES - 1, 0, "Up/Down/PgUp/PgDn: scroll   q: back", COLS);
		refresh();
		int c = getch();
		if (c == KEY_DOWN || c == 'j')
			top += top + (size_t)h < n;
		else if (c == KEY_UP || c == 'k')
			top -= top > 0;
		else if (c == KEY_NPAGE || c == ' ')
			top = top + 2 * (size_t)h < n ? top + (size_t)h : n > (size_t)h ? n - (size_t)h : 0;
		else if (c == KEY_PPAGE)
			top = top > (size_t)h ? top - (size_t)h : 0;
		else
			break;
	}
	free(lines);
}

static uint32_t proc_of(struct browser *b, uint32_t n);

static void data_view(struct browser *b, uint32_t n)
{
	const pl_tree *t = tree_of(b);
	while (n && t->nodes[n].kind != PL_PROC)
		n = t->nodes[n].parent;
	if (!n) {
		snprintf(b->msg, sizeof b->msg, "no procedure here");
		return;
	}
	const pl_node *x = &t->nodes[n];
	char *text = pl_data_text(b->rep, x->scope ? (const void *)x->scope : (const void *)x->name, x->dso);
	if (!text) {
		snprintf(b->msg, sizeof b->msg, "no samples of this procedure for the data view");
		return;
	}
	char title[1024], label[512];
	node_label(b, n, label, sizeof label);
	snprintf(title, sizeof title, "data: %s by variable and by type and field (samples of event %s)", label,
		 pd_attr_at(b->rep->r, b->rep->primary)->name);
	text_view(title, text);
	free(text);
}

static uint32_t proc_of(struct browser *b, uint32_t n)
{
	const pl_tree *t = tree_of(b);
	while (n && t->nodes[n].kind != PL_PROC)
		n = t->nodes[n].parent;
	if (!n || b->view != V_TREE)
		return n;
	const pl_tree *flat = pl_flat_tree(b->rep);
	for (uint32_t f = flat->nodes[0].first_child; f; f = flat->nodes[f].next_sibling)
		if (flat->nodes[f].kind == PL_PROC && flat->nodes[f].key == t->nodes[n].key)
			return f;
	return 0;
}

/* Where annotate opens for entry N: an [I] entry at its call site, a
 * loop or a statement at its line (the procedure itself at its top). */
static void focus_of(struct browser *b, uint32_t n, const char **file, unsigned *line)
{
	const pl_node *x = &tree_of(b)->nodes[n];
	if (!x->scope)
		return;
	if (x->kind == PL_INLINE) {
		*file = ls_scope_call_file(x->scope);
		*line = ls_scope_call_line(x->scope);
	} else if (x->kind == PL_STMT || x->kind == PL_LOOP) {
		*file = ls_scope_file(x->scope);
		*line = ls_scope_line(x->scope);
	}
}

/* ---- the tree views --------------------------------------------------------------- */

static void toggle(struct browser *b, int subtree)
{
	if (!b->nrows || b->view == V_LOOPS)
		return;
	uint32_t n = b->rows[b->cur].node;
	uint8_t v = !open_of(b)[n];
	if (subtree)
		set_subtree(tree_of(b), open_of(b), n, v);
	else
		open_of(b)[n] = v;
	rebuild(b);
}

static void collapse(struct browser *b)
{
	if (!b->nrows || b->view == V_LOOPS)
		return;
	uint32_t n = b->rows[b->cur].node;
	if (open_of(b)[n]) {
		open_of(b)[n] = 0;
		rebuild(b);
	} else if (tree_of(b)->nodes[n].parent) {
		select_node(b, tree_of(b)->nodes[n].parent);
	}
}

static void next_event(struct browser *b)
{
	pl_report *rep = b->rep;
	for (size_t i = 0; i < rep->nshown; i++)
		if (rep->shown[i] == rep->primary) {
			rep->primary = rep->shown[(i + 1) % rep->nshown];
			break;
		}
	b->next_loop = 0;
	rebuild(b);
	snprintf(b->msg, sizeof b->msg, "sorted by event '%s'", pd_attr_at(rep->r, rep->primary)->name);
}

/* One key of the tree views: 0 to go on, 1 to quit. */
static int tree_key(struct browser *b, int c)
{
	int h = LINES - 4 > 1 ? LINES - 4 : 1;
	size_t n = b->nrows;
	switch (c) {
	case KEY_UP: case 'k': if (b->cur) b->cur--; break;
	case KEY_DOWN: case 'j': if (b->cur + 1 < n) b->cur++; break;
	case KEY_PPAGE: b->cur = b->cur > (size_t)h ? b->cur - (size_t)h : 0; break;
	case KEY_NPAGE: b->cur = b->cur + (size_t)h < n ? b->cur + (size_t)h : n ? n - 1 : 0; break;
	case KEY_HOME: b->cur = 0; break;
	case KEY_END: b->cur = n ? n - 1 : 0; break;
	case '\n': case '\r': case KEY_ENTER: case '+': toggle(b, 0); break;
	case '-': case KEY_LEFT: collapse(b); break;
	case 'e': toggle(b, 1); break;
	case 'E': memset(open_of(b), 1, tree_of(b)->n); rebuild(b); break;
	case 'C': memset(open_of(b), 0, tree_of(b)->n); rebuild(b); break;
	case 'H': go_hottest(b); break;
	case '>': case KEY_SRIGHT: b->hscroll += 10; break;
	case '<': case KEY_SLEFT: b->hscroll = b->hscroll > 10 ? b->hscroll - 10 : 0; break;
	case 'O':
		if (b->view == V_LOOPS) {
			b->loops_by_own = !b->loops_by_own;
			rebuild(b);
			snprintf(b->msg, sizeof b->msg, "loops by %s", b->loops_by_own ? "Own (the hot loops first)" : "Total");
		}
		break;
	case 'L': jump_loop(b); break;
	case '/':
		prompt("search: ", b->search, sizeof b->search);
		find_next(b);
		break;
	case 'n': find_next(b); break;
	case 'v':
		b->view = (b->view + 1) % V_NVIEWS;
		b->next_loop = 0;
		b->nrows = 0;
		rebuild(b);
		break;
	case 'S': next_event(b); break;
	case 'a': {
		uint32_t p = n ? proc_of(b, b->rows[b->cur].node) : 0;
		const char *call_file = NULL;
		unsigned call_line = 0;
		if (p)
			focus_of(b, b->rows[b->cur].node, &call_file, &call_line);
		if (!p)
			snprintf(b->msg, sizeof b->msg, "no procedure to annotate here");
		else if (annot_run(b->rep, p, call_file, call_line, b->msg, sizeof b->msg) == 'Q')
			return 1;
		break;
	}
	case 'd':
		if (n)
			data_view(b, b->rows[b->cur].node);
		break;
	case 'h': case '?': help(); break;
	case 'q': case 'Q': case 27: case ERR: return 1;
	default: break;
	}
	return 0;
}

/* curses on the terminal, even when stdout is not one (-o, a pipe):
 * perf's browser needs a terminal on stdin and stdout. */
static int start_curses(const pl_report *rep)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		if (rep->opt->ui == PL_UI_TUI && !rep->opt->quiet)
			fprintf(stderr, "perf-loops: --tui needs a terminal; printing the --stdio report\n");
		return -1;
	}
	if (!getenv("ESCDELAY"))
		setenv("ESCDELAY", "25", 1);
	if (!initscr())
		return -1;
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	return 0;
}

int pl_browser(pl_report *rep)
{
	if (!rep->nshown)
		return -1; /* --stdio says there are no samples */
	if (start_curses(rep))
		return -1;
	struct browser b = { .rep = rep, .view = V_TREE };
	b.open[0] = pl_xcalloc(rep->tree.n + 1, 1);
	b.open[1] = pl_xcalloc(pl_flat_tree(rep)->n + 1, 1);
	rebuild(&b);
	for (;;) {
		draw(&b);
		int c = getch();
		b.msg[0] = 0;
		if (tree_key(&b, c))
			break;
	}
	endwin();
	free(b.rows);
	free(b.open[0]);
	free(b.open[1]);
	return 0;
}

int pl_browser_annotate(pl_report *rep, uint32_t proc)
{
	if (start_curses(rep))
		return -1;
	char msg[256] = "";
	annot_run(rep, proc, NULL, 0, msg, sizeof msg);
	endwin();
	if (msg[0]) {
		fprintf(stderr, "perf-loops: %s\n", msg);
		return 1;
	}
	return 0;
}

#endif
