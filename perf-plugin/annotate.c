/* annotate.c - `perf loops annotate`: one procedure's source, and the source
 * of the code inlined into it, line by line with the report's costs, and its
 * loop nests as brackets in the margin, each loop with its inclusive and own
 * cost.  With --asm, the instructions in address order under their lines,
 * with the loops' heads, back edges and exits marked.
 *
 * No second attribution: every cost comes from the report's folded tree
 * (pl_flat_tree: all calling contexts of the procedure summed), whose
 * statement nodes are the samples attributed by attribute.c.  A line's cost
 * is the Self of the statements at that line; a loop's is its node's Total
 * (with nested loops and callees) and its Own (the samples whose innermost
 * loop it is, as --format=loops computes it).  The static scope tree of the
 * procedure (libloopscope) gives what has no samples: the lines to show, the
 * loops' line spans and their edges.
 *
 * The result is a list of rows (report.h: pl_ann) that view-annotate.c
 * prints and browser.c scrolls.
 */
#include "report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- rows ----------------------------------------------------------------------- */

pl_ann_row *pl_ann_add(pl_ann *ann, int kind, const char *fmt, ...)
{
	if (ann->n == ann->cap) {
		ann->cap = ann->cap ? ann->cap * 2 : 256;
		ann->rows = pl_xrealloc(ann->rows, ann->cap * sizeof *ann->rows);
	}
	pl_ann_row *r = &ann->rows[ann->n++];
	memset(r, 0, sizeof *r);
	r->kind = (uint8_t)kind;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&r->text, fmt, ap) < 0)
		r->text = pl_xstrdup("");
	va_end(ap);
	return r;
}

void pl_ann_free(pl_ann *ann)
{
	for (size_t i = 0; i < ann->n; i++) {
		free(ann->rows[i].text);
		free(ann->rows[i].margin);
		free(ann->rows[i].samples);
		free(ann->rows[i].period);
		free(ann->rows[i].calls);
		free(ann->rows[i].call_samples);
		free(ann->rows[i].call_period);
	}
	free(ann->rows);
	free(ann->samples);
	free(ann->period);
	free(ann->binary);
	memset(ann, 0, sizeof *ann);
}

/* ---- what the walk of the procedure collects ------------------------------------ */

struct line_cost {
	const char *file;
	unsigned line;
	uint64_t *s, *p;       /* per shown event */
	/* the inlined calls made at this line: their Total, their names */
	uint64_t *cs, *cp;
	char *calls;
};

struct span {                  /* lines of a file to show */
	const char *file;
	unsigned lo, hi;
};

struct loop {
	const ls_scope *scope;
	const char *file;
	unsigned lo, hi;       /* its statements' lines in its own file */
	int col;               /* the margin column of its bracket */
	uint32_t node;         /* in the folded tree, 0: no samples */
	uint64_t *own_s, *own_p;
	uint64_t *tot_s, *tot_p; /* Total: with nested loops and callees */
};

/* --asm: the samples of each instruction (places.c), for the procedures
 * (flat-tree keys) the annotated code is in */
struct insn_cost {
	uintptr_t host;
	uint64_t addr;         /* link-time */
	uint64_t *s, *p;       /* per shown event */
};

struct walk {
	pl_report *rep;
	const pl_tree *flat;
	size_t nev;            /* rep->nshown */
	/* scope -> folded-tree node of the procedure's subtree, sorted by scope */
	struct scope_node { const ls_scope *scope; uint32_t node; } *map;
	size_t nmap;
	struct line_cost *lines;
	size_t nlines, cap_lines;
	struct span *spans;
	size_t nspans, cap_spans;
	struct loop *loops;
	size_t nloops, cap_loops;
	uint64_t *noline_s, *noline_p; /* samples at no line (line 0, or no statement) */
	/* every line a statement, call or loop is on: past the end of the
	 * source text only these are shown (a forged line number must not
	 * make a span of billions of rows) */
	struct span *marks;
	size_t nmarks, cap_marks;
	struct insn_cost *insn;
	size_t ninsn;
	uintptr_t host;        /* the procedure whose instructions are being listed */
};

static int cmp_scope_node(const void *a, const void *b)
{
	const ls_scope *x = ((const struct scope_node *)a)->scope, *y = ((const struct scope_node *)b)->scope;
	return x < y ? -1 : x > y;
}

static uint32_t node_of(const struct walk *w, const ls_scope *s)
{
	struct scope_node key = { s, 0 };
	const struct scope_node *hit = bsearch(&key, w->map, w->nmap, sizeof key, cmp_scope_node);
	return hit ? hit->node : 0;
}

/* The folded-tree nodes under PROC, by scope; the samples they hold that
 * no statement does go to w->noline. */
static void map_subtree(struct walk *w, uint32_t proc)
{
	const pl_tree *t = w->flat;
	size_t cap = w->nmap + 64;
	w->map = pl_xrealloc(w->map, cap * sizeof *w->map);
	uint32_t *stack = pl_xmalloc(t->n * sizeof *stack);
	size_t sp = 0;
	stack[sp++] = proc;
	while (sp) {
		uint32_t n = stack[--sp];
		const pl_node *x = &t->nodes[n];
		if (x->scope) {
			if (w->nmap == cap)
				w->map = pl_xrealloc(w->map, (cap *= 2) * sizeof *w->map);
			w->map[w->nmap++] = (struct scope_node){ x->scope, n };
		}
		int has_line = x->kind == PL_STMT && x->scope && ls_scope_line(x->scope);
		for (size_t i = 0; i < w->nev && !has_line; i++) {
			w->noline_s[i] += pl_node_own(t, n, w->rep->shown[i], PL_SELF);
			w->noline_p[i] += pl_node_own(t, n, w->rep->shown[i], PL_SELF_PERIOD);
		}
		for (uint32_t c = x->first_child; c; c = t->nodes[c].next_sibling)
			if (t->nodes[c].kind != PL_PROC)
				stack[sp++] = c;
	}
	free(stack);
}

static int same_file(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static struct line_cost *line_at(struct walk *w, const char *file, unsigned line)
{
	/* the lines of one procedure are few: a linear search from the end
	 * (statements of one line come together) */
	for (size_t i = w->nlines; i-- > 0;)
		if (w->lines[i].line == line && same_file(w->lines[i].file, file))
			return &w->lines[i];
	if (w->nlines == w->cap_lines) {
		w->cap_lines = w->cap_lines ? w->cap_lines * 2 : 64;
		w->lines = pl_xrealloc(w->lines, w->cap_lines * sizeof *w->lines);
	}
	struct line_cost *l = &w->lines[w->nlines++];
	size_t nev = w->nev ? w->nev : 1;
	*l = (struct line_cost){ file, line, pl_xcalloc(nev, sizeof(uint64_t)), pl_xcalloc(nev, sizeof(uint64_t)),
				 pl_xcalloc(nev, sizeof(uint64_t)), pl_xcalloc(nev, sizeof(uint64_t)), NULL };
	return l;
}

static size_t new_span(struct walk *w, const char *file, unsigned lo, unsigned hi)
{
	if (w->nspans == w->cap_spans) {
		w->cap_spans = w->cap_spans ? w->cap_spans * 2 : 16;
		w->spans = pl_xrealloc(w->spans, w->cap_spans * sizeof *w->spans);
	}
	w->spans[w->nspans] = (struct span){ file, lo, hi };
	return w->nspans++;
}

static void widen(unsigned *lo, unsigned *hi, unsigned line)
{
	if (!line)
		return;
	if (!*lo || line < *lo)
		*lo = line;
	if (line > *hi)
		*hi = line;
}

/* LINE of FILE is part of the body whose span is SPAN and of the loops on
 * STACK (the enclosing loops of that body). */
static void mark_line(struct walk *w, size_t span, const size_t *stack, size_t depth, const char *file, unsigned line)
{
	if (!line)
		return;
	if (w->nmarks == w->cap_marks)
		w->marks = pl_xrealloc(w->marks, (w->cap_marks = w->cap_marks ? w->cap_marks * 2 : 64) * sizeof *w->marks);
	w->marks[w->nmarks++] = (struct span){ file, line, line };
	if (same_file(w->spans[span].file, file))
		widen(&w->spans[span].lo, &w->spans[span].hi, line);
	else
		new_span(w, file, line, line);
	for (size_t i = 0; i < depth; i++)
		if (same_file(w->loops[stack[i]].file, file))
			widen(&w->loops[stack[i]].lo, &w->loops[stack[i]].hi, line);
}

static void add_cost(struct walk *w, uint64_t *s, uint64_t *p, uint32_t node, int ks, int kp)
{
	for (size_t i = 0; node && i < w->nev; i++) {
		const uint64_t *c = pl_cost(w->flat, node, w->rep->shown[i]);
		s[i] += c[ks];
		p[i] += c[kp];
	}
}

static void sub_cost(struct walk *w, uint64_t *s, uint64_t *p, uint32_t node)
{
	for (size_t i = 0; node && i < w->nev; i++) {
		const uint64_t *c = pl_cost(w->flat, node, w->rep->shown[i]);
		s[i] -= c[PL_SELF];
		p[i] -= c[PL_SELF_PERIOD];
	}
}

/* An inlined call C at its call line: its Total and its name there. */
static void note_call(struct walk *w, const ls_scope *c)
{
	uint32_t n = node_of(w, c);
	if (!n || !ls_scope_call_line(c))
		return;
	struct line_cost *l = line_at(w, ls_scope_call_file(c), ls_scope_call_line(c));
	add_cost(w, l->cs, l->cp, n, PL_TOTAL, PL_TOTAL_PERIOD);
	const char *name = ls_scope_name(c) ? ls_scope_name(c) : "?";
	char shortened[512];
	name = w->rep->opt->full_names ? name : pl_short_name(name, shortened, sizeof shortened);
	if (l->calls && strstr(l->calls, name))
		return;
	size_t old = l->calls ? strlen(l->calls) : 0;
	l->calls = pl_xrealloc(l->calls, old + strlen(name) + 3);
	snprintf(l->calls + old, strlen(name) + 3, "%s%s", old ? ", " : "", name);
}

/* Walk the static scopes under S: SPAN is the body they belong to (the
 * procedure's or an inlined callee's), STACK its enclosing loops, INNER the
 * innermost loop around S across inlined calls (for the loops' Own). */
static void walk_scopes(struct walk *w, const ls_scope *s, size_t span, size_t *stack, size_t depth, long inner)
{
	for (const ls_scope *c = ls_scope_first_child(s); c; c = ls_scope_next_sibling(c)) {
		switch (ls_scope_kind_of(c)) {
		case LS_SCOPE_STMT: {
			const char *file = ls_scope_file(c);
			unsigned line = ls_scope_line(c);
			mark_line(w, span, stack, depth, file, line);
			if (line) {
				struct line_cost *l = line_at(w, file, line);
				add_cost(w, l->s, l->p, node_of(w, c), PL_SELF, PL_SELF_PERIOD);
			}
			break;
		}
		case LS_SCOPE_LOOP: {
			if (w->nloops == w->cap_loops) {
				w->cap_loops = w->cap_loops ? w->cap_loops * 2 : 16;
				w->loops = pl_xrealloc(w->loops, w->cap_loops * sizeof *w->loops);
			}
			size_t k = w->nloops++;
			struct loop *L = &w->loops[k];
			size_t nev = w->nev ? w->nev : 1;
			*L = (struct loop){ .scope = c, .file = ls_scope_file(c), .node = node_of(w, c),
					    .own_s = pl_xcalloc(nev, sizeof(uint64_t)), .own_p = pl_xcalloc(nev, sizeof(uint64_t)),
					    .tot_s = pl_xcalloc(nev, sizeof(uint64_t)), .tot_p = pl_xcalloc(nev, sizeof(uint64_t)) };
			widen(&L->lo, &L->hi, ls_scope_line(c));
			add_cost(w, L->own_s, L->own_p, L->node, PL_SELF, PL_SELF_PERIOD);
			add_cost(w, L->tot_s, L->tot_p, L->node, PL_TOTAL, PL_TOTAL_PERIOD);
			if (inner >= 0) /* the enclosing loop's own cost is not its nested loops' */
				sub_cost(w, w->loops[inner].own_s, w->loops[inner].own_p, L->node);
			mark_line(w, span, stack, depth, L->file, ls_scope_line(c));
			stack[depth] = k;
			walk_scopes(w, c, span, stack, depth + 1, (long)k);
			break;
		}
		case LS_SCOPE_INLINE:
		case LS_SCOPE_ALIEN: {
			/* the call site is a line of the caller's body and loops,
			 * which shows the call's Total beside its own Self */
			if (ls_scope_kind_of(c) == LS_SCOPE_INLINE) {
				mark_line(w, span, stack, depth, ls_scope_call_file(c), ls_scope_call_line(c));
				note_call(w, c);
			}
			unsigned decl = ls_scope_kind_of(c) == LS_SCOPE_INLINE ? ls_scope_line(c) : 0;
			size_t body = new_span(w, ls_scope_file(c), decl, decl);
			walk_scopes(w, c, body, stack + depth, 0, inner);
			break;
		}
		default:
			break;
		}
	}
}

/* ---- the procedure -------------------------------------------------------------- */

static const char *node_name_of(const pl_tree *t, uint32_t n)
{
	const pl_node *x = &t->nodes[n];
	const char *name = x->name ? x->name : x->scope ? ls_scope_name(x->scope) : NULL;
	return name ? name : "?";
}

/* How well node X's function answers to WANT: 2 by its full or linkage
 * name (unambiguous), 1 by a name perf report or perf loops prints (its
 * name without parameters, or shortened), 0 not at all. */
static int name_match(const pl_node *x, const char *want)
{
	const char *name = x->scope ? ls_scope_name(x->scope) : x->name;
	const char *linkage = x->scope ? ls_scope_linkage_name(x->scope) : NULL;
	char buf[1024];
	if (!name)
		return 0;
	if (!strcmp(name, want) || (linkage && !strcmp(linkage, want)))
		return 2;
	return !strcmp(pl_perf_name(name, buf, sizeof buf), want) || !strcmp(pl_short_name(name, buf, sizeof buf), want);
}

/* The candidates for SYMBOL among the flat tree's KIND nodes (procedures,
 * or the inlined calls of every procedure), best match first kept: how
 * many, their nodes in V (at most CAP). */
static size_t candidates(const pl_tree *t, const char *symbol, int kind, uint32_t *v, size_t cap, int *best)
{
	size_t n = 0;
	*best = 0;
	for (uint32_t i = 1; i < t->n; i++) {
		const pl_node *x = &t->nodes[i];
		int m = x->kind == kind ? name_match(x, symbol) : 0;
		if (!m || m < *best)
			continue;
		if (m > *best) { /* a full name beats every shorter form */
			*best = m;
			n = 0;
		}
		/* one entry per function: its instances and copies go together */
		int seen = 0;
		for (size_t k = 0; k < n && k < cap && !seen; k++)
			seen = !strcmp(node_name_of(t, v[k]), node_name_of(t, i)) && t->nodes[v[k]].dso == x->dso;
		if (!seen && n < cap)
			v[n++] = i;
	}
	return n;
}

/* "'Seek' names 2 procedures: leveldb::Block::Iter::Seek(...) [db_bench], ..." */
static void list_candidates(pl_report *rep, const pl_tree *t, const char *symbol, const uint32_t *v, size_t n,
			    char *err, size_t errlen)
{
	size_t used = (size_t)snprintf(err, errlen, "%s: '%s' names %zu functions; give one of their names:", pd_name(rep->r),
				       symbol, n);
	for (size_t i = 0; i < n && used < errlen; i++) {
		char dso[300] = "";
		if (t->nodes[v[i]].dso)
			pl_dso_shown(t->nodes[v[i]].dso, dso, sizeof dso);
		used += (size_t)snprintf(err + used, errlen - used, "\n    %s  %s", node_name_of(t, v[i]), dso);
	}
}

/* The hottest procedure with structure (no SYMBOL given). */
static uint32_t hottest_proc(pl_report *rep, const pl_tree *t, char *err, size_t errlen)
{
	uint32_t best = 0, best_any = 0;
	uint64_t best_self = 0, best_any_self = 0;
	for (uint32_t n = t->nodes[0].first_child; n; n = t->nodes[n].next_sibling) {
		const pl_node *x = &t->nodes[n];
		if (x->kind != PL_PROC)
			continue;
		uint64_t self = pl_cost(t, n, rep->primary)[PL_SELF_PERIOD];
		if (!best_any || self > best_any_self) {
			best_any = n;
			best_any_self = self;
		}
		if (x->scope && (!best || self > best_self)) {
			best = n;
			best_self = self;
		}
	}
	if (!best && best_any)
		snprintf(err, errlen, "%s: %s has no structure (no debug information or no binary found): nothing to annotate",
			 pd_name(rep->r), t->nodes[best_any].name ? t->nodes[best_any].name : "the procedure");
	else if (!best)
		snprintf(err, errlen, "%s: no samples in a procedure with structure", pd_name(rep->r));
	return best;
}

uint32_t pl_annotate_find(pl_report *rep, const char *symbol, char *err, size_t errlen)
{
	const pl_tree *t = pl_flat_tree(rep);
	if (!symbol)
		return hottest_proc(rep, t, err, errlen);
	uint32_t v[16];
	int best;
	/* a procedure by that name; else a function only inlined, through
	 * its inlined instances */
	size_t n = candidates(t, symbol, PL_PROC, v, 16, &best);
	if (!n)
		n = candidates(t, symbol, PL_INLINE, v, 16, &best);
	if (n > 1) {
		list_candidates(rep, t, symbol, v, n, err, errlen);
		return 0;
	}
	if (n == 1 && !t->nodes[v[0]].scope)
		snprintf(err, errlen, "%s: %s has no structure (no debug information or no binary found): nothing to annotate",
			 pd_name(rep->r), t->nodes[v[0]].name ? t->nodes[v[0]].name : symbol);
	else if (!n)
		snprintf(err, errlen, "%s: no samples in a function named '%s' (perf loops report --stdio -s sym lists "
			 "those with samples)", pd_name(rep->r), symbol);
	return n == 1 && t->nodes[v[0]].scope ? v[0] : 0;
}

static void free_walk(struct walk *w)
{
	for (size_t i = 0; i < w->nlines; i++) {
		free(w->lines[i].s);
		free(w->lines[i].p);
		free(w->lines[i].cs);
		free(w->lines[i].cp);
		free(w->lines[i].calls);
	}
	for (size_t i = 0; i < w->nloops; i++) {
		free(w->loops[i].own_s);
		free(w->loops[i].own_p);
		free(w->loops[i].tot_s);
		free(w->loops[i].tot_p);
	}
	for (size_t i = 0; i < w->ninsn; i++) {
		free(w->insn[i].s);
		free(w->insn[i].p);
	}
	free(w->insn);
	free(w->lines);
	free(w->spans);
	free(w->marks);
	free(w->loops);
	free(w->map);
	free(w->noline_s);
	free(w->noline_p);
}

/* the source text: files read once per annotation */
struct source {
	const char *path;
	char *text;
	char **line;           /* line[i]: line i + 1 */
	unsigned n;
	char *why;             /* not read: why (the file named) */
};

/* PATH's text, through the library's safe open (a regular file of at most
 * LS_MAX_SOURCE_SIZE, not in /proc or /sys: a source named /dev/zero,
 * /dev/stdin, /proc/kmsg or a 4 GiB sparse file is refused at once, not
 * read until memory runs out or for ever); NULL with *WHY. */
static char *read_source(const char *path, size_t *len, char **why)
{
	ls_error err;
	int fd = ls_open_regular(path, LS_OPEN_SOURCE, &err);
	if (fd < 0) {
		*why = pl_xstrdup(err.message);
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *text = pl_xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (cap > LS_MAX_SOURCE_SIZE) /* it grew since it was checked */
				break;
			text = pl_xrealloc(text, (cap *= 2) + 1);
		}
		ssize_t k = read(fd, text + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	text[n] = 0;
	*len = n;
	return text;
}

static struct source *load_source(struct source **cache, size_t *ncache, const char *path)
{
	for (size_t i = 0; i < *ncache; i++)
		if (same_file((*cache)[i].path, path))
			return &(*cache)[i];
	*cache = pl_xrealloc(*cache, (*ncache + 1) * sizeof **cache);
	struct source *src = &(*cache)[(*ncache)++];
	*src = (struct source){ .path = path };
	size_t len = 0;
	src->text = path ? read_source(path, &len, &src->why) : NULL;
	if (!src->text)
		return src;
	size_t lcap = 256;
	src->line = pl_xmalloc(lcap * sizeof *src->line);
	for (char *p = src->text; p < src->text + len;) {
		char *nl = memchr(p, '\n', (size_t)(src->text + len - p));
		if (src->n == lcap)
			src->line = pl_xrealloc(src->line, (lcap *= 2) * sizeof *src->line);
		src->line[src->n++] = p;
		if (!nl)
			break;
		*nl = 0;
		p = nl + 1;
	}
	for (unsigned i = 0; i < src->n; i++) /* tabs as spaces: columns stay put */
		for (char *c = src->line[i]; *c; c++)
			if (*c == '\t' || *c == '\r')
				*c = ' ';
	return src;
}

static void free_sources(struct source *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].text);
		free(s[i].line);
		free(s[i].why);
	}
	free(s);
}

/* ---- the margin: loop brackets ------------------------------------------------- */

static int cmp_loop_place(const void *a, const void *b, void *walk)
{
	const struct walk *w = walk;
	const struct loop *x = &w->loops[*(const size_t *)a], *y = &w->loops[*(const size_t *)b];
	int f = strcmp(x->file ? x->file : "", y->file ? y->file : "");
	if (f)
		return f;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1; /* the outer loop first */
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* Each loop gets the leftmost column free over its lines (and the row of
 * its summary, just above its first line); the loops in their drawing
 * order, in ORDER.  Returns the margin's width. */
static int assign_columns(struct walk *w, size_t *order)
{
	int width = 0;
	for (size_t i = 0; i < w->nloops; i++)
		order[i] = i;
	qsort_r(order, w->nloops, sizeof *order, cmp_loop_place, w);
	for (size_t i = 0; i < w->nloops; i++) {
		struct loop *L = &w->loops[order[i]];
		L->col = -1;
		if (!L->lo)
			continue;
		for (int col = 0; L->col < 0; col++) {
			int taken = 0;
			for (size_t j = 0; j < i && !taken; j++) {
				const struct loop *M = &w->loops[order[j]];
				taken = M->col == col && same_file(M->file, L->file) && !(M->hi < L->lo || M->lo > L->hi);
			}
			if (!taken)
				L->col = col;
		}
		if (L->col + 1 > width)
			width = L->col + 1;
	}
	return width;
}

/* The margin of source line LINE of FILE: '|' in each loop's column, '`'
 * on its last line. */
static char *line_margin(const struct walk *w, int width, const char *file, unsigned line)
{
	char *m = pl_xmalloc((size_t)width + 1);
	memset(m, ' ', (size_t)width);
	m[width] = 0;
	for (size_t i = 0; i < w->nloops; i++) {
		const struct loop *L = &w->loops[i];
		if (L->col >= 0 && same_file(L->file, file) && line >= L->lo && line <= L->hi)
			m[L->col] = line == L->hi ? '`' : '|';
	}
	return m;
}

/* The margin of the summary row of loop ORDER[K]: ',' in its column, '|'
 * in those of the loops drawn before it that go on past it. */
static char *summary_margin(const struct walk *w, int width, const size_t *order, size_t k)
{
	const struct loop *L = &w->loops[order[k]];
	char *m = pl_xmalloc((size_t)width + 1);
	memset(m, ' ', (size_t)width);
	m[width] = 0;
	for (size_t j = 0; j < k; j++) {
		const struct loop *M = &w->loops[order[j]];
		if (M->col >= 0 && same_file(M->file, L->file) && M->hi >= L->lo)
			m[M->col] = '|';
	}
	m[L->col] = ',';
	for (int c = L->col + 1; c < width; c++)
		if (m[c] == ' ')
			m[c] = '-';
	return m;
}

/* ---- rows ----------------------------------------------------------------------- */

static void set_cost(pl_ann_row *r, size_t nev, const uint64_t *s, const uint64_t *p)
{
	r->has_cost = 1;
	r->samples = pl_xcalloc(nev ? nev : 1, sizeof(uint64_t));
	r->period = pl_xcalloc(nev ? nev : 1, sizeof(uint64_t));
	if (s)
		memcpy(r->samples, s, nev * sizeof(uint64_t));
	if (p)
		memcpy(r->period, p, nev * sizeof(uint64_t));
}

/* The inlined calls of line L on its row, with their Total. */
static void set_call(pl_ann_row *r, const struct walk *w, const struct line_cost *l)
{
	int any = 0;
	for (size_t i = 0; i < w->nev; i++)
		any |= l->cs[i] != 0;
	if (!l->calls || !any)
		return;
	r->calls = pl_xstrdup(l->calls);
	r->call_samples = pl_xcalloc(w->nev ? w->nev : 1, sizeof(uint64_t));
	r->call_period = pl_xcalloc(w->nev ? w->nev : 1, sizeof(uint64_t));
	memcpy(r->call_samples, l->cs, w->nev * sizeof(uint64_t));
	memcpy(r->call_period, l->cp, w->nev * sizeof(uint64_t));
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p ? p : "??";
}

/* "loop at FILE:LINE, lines LO-HI, own 75.00% (925)": its Total goes in
 * the cost columns, its Own (per event) in the text. */
static void add_loop_row(pl_ann *ann, const struct walk *w, const struct loop *L, char *margin)
{
	char own[512] = "";
	size_t len = 0;
	for (size_t i = 0; i < w->nev && len < sizeof own; i++) {
		uint64_t all = w->rep->ev_period[w->rep->shown[i]];
		len += (size_t)snprintf(own + len, sizeof own - len, "%s%.2f%% (%llu)", i ? ", " : "",
					all ? 100.0 * (double)L->own_p[i] / (double)all : 0.0,
					(unsigned long long)L->own_s[i]);
	}
	pl_ann_row *r = pl_ann_add(ann, PL_ANN_LOOP, "loop at %s:%u, lines %u-%u, own %s", base_name(L->file),
				   ls_scope_line(L->scope), L->lo, L->hi, own);
	r->margin = margin;
	set_cost(r, w->nev, L->tot_s, L->tot_p);
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

/* The lines of FILE that hold a statement, a call, a loop's ends or a
 * declaration, sorted. */
static unsigned *marked_lines(const struct walk *w, const char *file, size_t *n)
{
	unsigned *v = pl_xmalloc((w->nmarks + 2 * w->nloops + w->nspans + 1) * sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < w->nmarks; i++)
		if (same_file(w->marks[i].file, file))
			v[k++] = w->marks[i].lo;
	for (size_t i = 0; i < w->nspans; i++) /* a body's first line: its declaration */
		if (w->spans[i].lo && same_file(w->spans[i].file, file))
			v[k++] = w->spans[i].lo;
	for (size_t i = 0; i < w->nloops; i++)
		if (same_file(w->loops[i].file, file)) {
			v[k++] = w->loops[i].lo;
			v[k++] = w->loops[i].hi;
		}
	qsort(v, k, sizeof *v, cmp_uint);
	*n = k;
	return v;
}

/* The first of the N sorted MARKS at or after LINE; 0 if none. */
static unsigned next_marked(const unsigned *marks, size_t n, unsigned line)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (marks[mid] < line)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n ? marks[lo] : 0;
}

/* The source rows of FILE: its spans merged (gaps of a few lines filled),
 * each line with its statements' cost, each loop's summary above its
 * first line. */
static void add_file_rows(pl_ann *ann, struct walk *w, const size_t *order, struct source *src, const char *file)
{
	struct span *v = pl_xmalloc((w->nspans + 1) * sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < w->nspans; i++)
		if (w->spans[i].lo && same_file(w->spans[i].file, file))
			v[n++] = w->spans[i];
	qsort(v, n, sizeof *v, cmp_span);
	pl_ann_add(ann, PL_ANN_FILE, "%s", file ? file : "??")->margin = line_margin(w, ann->margin_width, NULL, 0);
	if (!src->line && src->why && !strstr(src->why, "No such file"))
		pl_ann_add(ann, PL_ANN_NOTE, "(the source is not read: %s)", src->why);
	else if (!src->line)
		pl_ann_add(ann, PL_ANN_NOTE, "(the source is not there: %s)", file ? file : "??");
	size_t nm;
	unsigned *marks = marked_lines(w, file, &nm);
	for (size_t i = 0; i < n;) {
		unsigned lo = v[i].lo, hi = v[i].hi;
		for (i++; i < n && (uint64_t)v[i].lo <= (uint64_t)hi + 4; i++)
			if (v[i].hi > hi)
				hi = v[i].hi;
		if (ann->n && ann->rows[ann->n - 1].kind == PL_ANN_SRC)
			pl_ann_add(ann, PL_ANN_GAP, "...")->margin = line_margin(w, ann->margin_width, NULL, 0);
		for (uint64_t ll = lo; ll <= hi; ll++) {
			unsigned l = (unsigned)ll;
			if (l > src->n) { /* past the text: the marked lines only */
				unsigned next = next_marked(marks, nm, l);
				if (next > hi || !next)
					break;
				if (next > l)
					pl_ann_add(ann, PL_ANN_GAP, "...")->margin = line_margin(w, ann->margin_width, NULL, 0);
				ll = l = next;
			}
			for (size_t k = 0; k < w->nloops; k++) {
				const struct loop *L = &w->loops[order[k]];
				if (L->col >= 0 && L->lo == l && same_file(L->file, file))
					add_loop_row(ann, w, L, summary_margin(w, ann->margin_width, order, k));
			}
			/* l - 1 < n: line 0 (no line) is never a source line */
			pl_ann_row *r = pl_ann_add(ann, PL_ANN_SRC, "%s", l - 1 < src->n ? src->line[l - 1] : "");
			r->line = l;
			r->margin = line_margin(w, ann->margin_width, file, l);
			for (size_t k = 0; k < w->nlines; k++)
				if (w->lines[k].line == l && same_file(w->lines[k].file, file)) {
					set_cost(r, w->nev, w->lines[k].s, w->lines[k].p);
					set_call(r, w, &w->lines[k]);
				}
		}
	}
	free(marks);
	free(v);
}

static void add_source_rows(pl_ann *ann, struct walk *w, const size_t *order)
{
	struct source *cache = NULL;
	size_t ncache = 0;
	for (size_t i = 0; i < w->nspans; i++) {
		const char *file = w->spans[i].file;
		int done = 0;
		for (size_t j = 0; j < i && !done; j++)
			done = same_file(w->spans[j].file, file) && w->spans[j].lo;
		if (done || !w->spans[i].lo)
			continue;
		/* the first span of a file with lines: the file's rows, once */
		int any = 0;
		for (size_t j = i; j < w->nspans && !any; j++)
			any = same_file(w->spans[j].file, file) && w->spans[j].lo;
		if (any)
			add_file_rows(ann, w, order, load_source(&cache, &ncache, file), file);
	}
	free_sources(cache, ncache);
}

static int cmp_insn(const void *a, const void *b)
{
	const struct insn_cost *x = a, *y = b;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const struct insn_cost *insn_cost_at(const struct walk *w, uint64_t addr)
{
	struct insn_cost key = { w->host, addr, NULL, NULL };
	return w->ninsn ? bsearch(&key, w->insn, w->ninsn, sizeof key, cmp_insn) : NULL;
}

/* ---- --asm: the instructions under their lines --------------------------------- */

struct stmt_range {
	uint64_t lo, hi;
	const ls_scope *stmt;
	int shown;             /* its cost is printed at its first run only */
};

enum { MARK_HEAD, MARK_BACK, MARK_EXIT };
struct mark {
	uint64_t addr, to;
	int kind;
	size_t loop;
};

static void collect_stmts(const ls_scope *s, struct stmt_range **v, size_t *n, size_t *cap)
{
	for (const ls_scope *c = ls_scope_first_child(s); c; c = ls_scope_next_sibling(c)) {
		if (ls_scope_kind_of(c) != LS_SCOPE_STMT) {
			collect_stmts(c, v, n, cap);
			continue;
		}
		for (size_t i = 0; i < ls_scope_nranges(c); i++) {
			if (*n == *cap)
				*v = pl_xrealloc(*v, (*cap = *cap ? *cap * 2 : 256) * sizeof **v);
			ls_range r = ls_scope_range(c, i);
			(*v)[(*n)++] = (struct stmt_range){ r.lo, r.hi, c, 0 };
		}
	}
}

static int cmp_stmt_range(const void *a, const void *b)
{
	const struct stmt_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int cmp_mark(const void *a, const void *b)
{
	const struct mark *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->kind - y->kind;
}

static struct stmt_range *stmt_at(struct stmt_range *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* the last range starting at or below ADDR */
		size_t mid = (lo + hi) / 2;
		if (v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < v[lo - 1].hi ? &v[lo - 1] : NULL;
}

/* Every loop's head, back edges and exits, by address. */
static struct mark *loop_marks(const struct walk *w, size_t *nout)
{
	size_t n = 0, cap = w->nloops * 4 + 1;
	struct mark *m = pl_xmalloc(cap * sizeof *m);
	for (size_t k = 0; k < w->nloops; k++) {
		const ls_scope *L = w->loops[k].scope;
		size_t nb = ls_loop_nbackedges(L), nx = ls_loop_nexits(L);
		if (n + 1 + nb + nx > cap)
			m = pl_xrealloc(m, (cap = (n + 1 + nb + nx) * 2) * sizeof *m);
		m[n++] = (struct mark){ ls_loop_header(L), 0, MARK_HEAD, k };
		for (size_t i = 0; i < nb; i++)
			m[n++] = (struct mark){ ls_loop_backedge(L, i).from, ls_loop_backedge(L, i).to, MARK_BACK, k };
		for (size_t i = 0; i < nx; i++)
			m[n++] = (struct mark){ ls_loop_exit(L, i).from, ls_loop_exit(L, i).to, MARK_EXIT, k };
	}
	qsort(m, n, sizeof *m, cmp_mark);
	*nout = n;
	return m;
}

static unsigned loop_depth_of(const ls_scope *s)
{
	unsigned d = 0;
	for (; s && ls_scope_kind_of(s) != LS_SCOPE_PROC; s = ls_scope_parent(s))
		d += ls_scope_kind_of(s) == LS_SCOPE_LOOP;
	return d;
}

static char *bars(int width, unsigned depth)
{
	char *m = pl_xmalloc((size_t)width + 1);
	memset(m, ' ', (size_t)width);
	for (unsigned i = 0; i < depth && (int)i < width; i++)
		m[i] = '|';
	m[width] = 0;
	return m;
}

/* The rows of one instruction: the loop summaries of the loops it heads,
 * its line when the statement changes, itself with its marks. */
static void add_insn_rows(pl_ann *ann, struct walk *w, const pl_insn_text *in, struct stmt_range *st,
			  const ls_scope **prev, const struct mark *m, size_t nm, struct source **cache, size_t *ncache)
{
	const ls_scope *stmt = st ? st->stmt : NULL;
	unsigned depth = loop_depth_of(stmt);
	for (size_t i = 0; i < nm; i++)
		if (m[i].kind == MARK_HEAD) {
			/* the bracket opens in the loop's column (its depth) */
			unsigned d = ls_loop_depth(w->loops[m[i].loop].scope);
			char *margin = bars(ann->margin_width, d ? d - 1 : 0);
			for (int c = d ? (int)d - 1 : 0; c < ann->margin_width; c++)
				margin[c] = c == (int)d - 1 ? ',' : '-';
			add_loop_row(ann, w, &w->loops[m[i].loop], margin);
		}
	if (stmt && stmt != *prev) {
		const char *file = ls_scope_file(stmt);
		unsigned line = ls_scope_line(stmt);
		struct source *src = load_source(cache, ncache, file);
		pl_ann_row *r = pl_ann_add(ann, PL_ANN_SRC, "%s:%u  %s", base_name(file), line,
					   line && line <= src->n ? src->line[line - 1] : "");
		r->line = line;
		r->margin = bars(ann->margin_width, depth);
		if (!st->shown) {
			/* every range of the statement counts as shown */
			uint64_t *s = pl_xcalloc(w->nev ? w->nev : 1, sizeof *s), *p = pl_xcalloc(w->nev ? w->nev : 1, sizeof *p);
			add_cost(w, s, p, node_of(w, stmt), PL_SELF, PL_SELF_PERIOD);
			set_cost(r, w->nev, s, p);
			free(s);
			free(p);
		}
	}
	*prev = stmt;
	char marks[1024] = "";
	size_t len = 0;
	for (size_t i = 0; i < nm && len < sizeof marks; i++) {
		char kind[64] = "head of";
		/* literal formats: -Wformat=2 (scripts/check-werror) checks them */
		if (m[i].kind == MARK_BACK)
			snprintf(kind, sizeof kind, "back edge to %#llx,", (unsigned long long)m[i].to);
		else if (m[i].kind == MARK_EXIT)
			snprintf(kind, sizeof kind, "exit to %#llx from", (unsigned long long)m[i].to);
		const ls_scope *L = w->loops[m[i].loop].scope;
		len += (size_t)snprintf(marks + len, sizeof marks - len, "%s%s loop at %s:%u", len ? "; " : "  # ", kind,
					base_name(ls_scope_file(L)), ls_scope_line(L));
	}
	pl_ann_row *r = len ? pl_ann_add(ann, PL_ANN_ASM, "%8llx:  %-40s%s", (unsigned long long)in->addr, in->text, marks)
			    : pl_ann_add(ann, PL_ANN_ASM, "%8llx:  %s", (unsigned long long)in->addr, in->text);
	r->addr = in->addr;
	r->margin = bars(ann->margin_width, depth);
	const struct insn_cost *ic = insn_cost_at(w, in->addr); /* the instruction's own samples */
	if (ic)
		set_cost(r, w->nev, ic->s, ic->p);
}

static int add_asm_rows(pl_ann *ann, struct walk *w, const ls_scope *proc, const char *bin, char *err, size_t errlen)
{
	if (!bin) {
		snprintf(err, errlen, "%s: the binary of %s is not found: no disassembly", pd_name(w->rep->r), ann->name);
		return -1;
	}
	struct stmt_range *sr = NULL;
	size_t nsr = 0, cap = 0, nm = 0, ncache = 0;
	collect_stmts(proc, &sr, &nsr, &cap);
	if (nsr) /* sr is NULL when there is none */
		qsort(sr, nsr, sizeof *sr, cmp_stmt_range);
	unsigned maxdepth = 0;
	for (size_t i = 0; i < w->nloops; i++)
		if (ls_loop_depth(w->loops[i].scope) > maxdepth)
			maxdepth = ls_loop_depth(w->loops[i].scope);
	ann->margin_width = (int)maxdepth;
	struct mark *m = loop_marks(w, &nm);
	struct source *cache = NULL;
	const ls_scope *prev = NULL;
	int rc = 0;
	size_t mi = 0;
	for (size_t r = 0; r < ls_scope_nranges(proc) && !rc; r++) {
		ls_range range = ls_scope_range(proc, r);
		pl_insn_text *insns;
		size_t n = pl_disassemble(bin, range.lo, range.hi, w->rep->opt->intel_syntax, &insns, err, errlen);
		if (!n)
			rc = -1;
		if (r && n)
			pl_ann_add(ann, PL_ANN_GAP, "...")->margin = bars(ann->margin_width, 0);
		for (size_t i = 0; i < n; i++) {
			while (mi < nm && m[mi].addr < insns[i].addr)
				mi++;
			size_t k = mi;
			while (k < nm && m[k].addr == insns[i].addr)
				k++;
			add_insn_rows(ann, w, &insns[i], stmt_at(sr, nsr, insns[i].addr), &prev, m + mi, k - mi, &cache, &ncache);
			/* a statement's cost is printed once, at its first run */
			struct stmt_range *st = stmt_at(sr, nsr, insns[i].addr);
			if (st && !st->shown)
				for (size_t j = 0; j < nsr; j++)
					if (sr[j].stmt == st->stmt)
						sr[j].shown = 1;
			free(insns[i].text);
		}
		free(insns);
	}
	free_sources(cache, ncache);
	free(m);
	free(sr);
	return rc;
}

static size_t count_loops(const ls_scope *s)
{
	size_t n = 0;
	for (const ls_scope *c = ls_scope_first_child(s); c; c = ls_scope_next_sibling(c))
		n += (ls_scope_kind_of(c) == LS_SCOPE_LOOP) + count_loops(c);
	return n;
}

/* ---- what is annotated ------------------------------------------------------------ */

/* The flat-tree nodes the annotation covers: the procedure NODE, or every
 * inlined instance of the function NODE is one of (same name, file and
 * line), instances inside another one aside.  How many, in *OUT. */
static size_t annotate_roots(const pl_tree *t, uint32_t node, uint32_t **out)
{
	uint32_t *v = pl_xmalloc((t->n + 1) * sizeof *v);
	size_t n = 0;
	const ls_scope *want = t->nodes[node].scope;
	if (t->nodes[node].kind != PL_INLINE) {
		v[n++] = node;
		*out = v;
		return n;
	}
	for (uint32_t i = 1; i < t->n; i++) {
		const ls_scope *sc = t->nodes[i].scope;
		if (t->nodes[i].kind != PL_INLINE || !sc || ls_scope_line(sc) != ls_scope_line(want) ||
		    !same_file(ls_scope_file(sc), ls_scope_file(want)) || strcmp(ls_scope_name(sc), ls_scope_name(want)))
			continue;
		int nested = 0;
		for (uint32_t p = t->nodes[i].parent; p && t->nodes[p].kind != PL_PROC && !nested; p = t->nodes[p].parent)
			nested = t->nodes[p].kind == PL_INLINE && t->nodes[p].scope &&
				 !strcmp(ls_scope_name(t->nodes[p].scope), ls_scope_name(want));
		if (!nested)
			v[n++] = i;
	}
	*out = v;
	return n;
}

/* The procedure (flat-tree node) holding node N. */
static uint32_t host_of(const pl_tree *t, uint32_t n)
{
	while (n && t->nodes[n].kind != PL_PROC)
		n = t->nodes[n].parent;
	return n;
}

/* The instances of one loop (a function inlined several times) drawn as
 * one: their costs summed into the first. */
static void merge_loops(struct walk *w)
{
	for (size_t i = 0; i < w->nloops; i++) {
		struct loop *L = &w->loops[i];
		for (size_t j = i + 1; j < w->nloops && L->lo; j++) {
			struct loop *M = &w->loops[j];
			if (!M->lo || M->lo != L->lo || M->hi != L->hi || !same_file(M->file, L->file) ||
			    ls_scope_line(M->scope) != ls_scope_line(L->scope))
				continue;
			for (size_t k = 0; k < w->nev; k++) {
				L->own_s[k] += M->own_s[k];
				L->own_p[k] += M->own_p[k];
				L->tot_s[k] += M->tot_s[k];
				L->tot_p[k] += M->tot_p[k];
			}
			M->lo = M->hi = 0; /* not drawn */
		}
	}
}

/* The samples of every instruction of the procedures HOSTS (flat-tree
 * nodes): the report's places whose procedure is one of them, by link
 * address, per shown event. */
static void collect_insn_costs(struct walk *w, const uint32_t *hosts, size_t nh)
{
	pl_report *rep = w->rep;
	const pl_tree *t = &rep->tree;
	size_t cap = 0;
	for (size_t i = 0; i < rep->places.n; i++) {
		const pl_place *pl = &rep->places.v[i];
		uint32_t proc = pl->node;
		while (proc && t->nodes[proc].kind != PL_PROC)
			proc = t->nodes[proc].parent;
		size_t h = 0, ev = 0;
		while (h < nh && (!proc || w->flat->nodes[hosts[h]].key != t->nodes[proc].key))
			h++;
		while (ev < w->nev && rep->shown[ev] != pl->ev)
			ev++;
		uint64_t link;
		if (h == nh || ev == w->nev || !pl->map || pl_attrib_link_addr(rep->attrib, pl->map, pl->addr, &link))
			continue;
		if (w->ninsn == cap)
			w->insn = pl_xrealloc(w->insn, (cap = cap ? cap * 2 : 64) * sizeof *w->insn);
		struct insn_cost *c = &w->insn[w->ninsn++];
		*c = (struct insn_cost){ w->flat->nodes[hosts[h]].key, link, pl_xcalloc(w->nev, sizeof(uint64_t)),
					 pl_xcalloc(w->nev, sizeof(uint64_t)) };
		c->s[ev] = pl->samples;
		c->p[ev] = pl->period;
	}
	qsort(w->insn, w->ninsn, sizeof *w->insn, cmp_insn);
	size_t m = 0; /* one entry per instruction: the places of other threads, events, nodes merged */
	for (size_t i = 0; i < w->ninsn; i++) {
		if (m && !cmp_insn(&w->insn[m - 1], &w->insn[i])) {
			for (size_t k = 0; k < w->nev; k++) {
				w->insn[m - 1].s[k] += w->insn[i].s[k];
				w->insn[m - 1].p[k] += w->insn[i].p[k];
			}
			free(w->insn[i].s);
			free(w->insn[i].p);
		} else {
			w->insn[m++] = w->insn[i];
		}
	}
	w->ninsn = m;
}

/* The rows of ROOTS: the source, or the disassembly of each root (an
 * inlined instance's under a line naming its procedure). */
static int add_rows(pl_ann *ann, struct walk *w, const uint32_t *roots, size_t nroots, const size_t *order,
		    char *err, size_t errlen)
{
	if (!ann->with_asm) {
		add_source_rows(ann, w, order);
		return 0;
	}
	int rc = 0;
	for (size_t i = 0; i < nroots && !rc; i++) {
		const pl_tree *t = w->flat;
		uint32_t host = host_of(t, roots[i]);
		const pl_node *h = &t->nodes[host];
		const char *bin = h->dso ? pl_attrib_file(w->rep->attrib, h->dso) : NULL;
		w->host = h->key;
		if (t->nodes[roots[i]].kind == PL_INLINE) {
			const ls_scope *sc = t->nodes[roots[i]].scope;
			pl_ann_add(ann, PL_ANN_FILE, "inlined in %s (at %s:%u)", node_name_of(t, host),
				   base_name(ls_scope_call_file(sc)), ls_scope_call_line(sc))->margin =
				line_margin(w, ann->margin_width, NULL, 0);
		}
		rc = add_asm_rows(ann, w, t->nodes[roots[i]].scope, bin, err, errlen);
	}
	return rc;
}

/* The function's own cost: its Self (an inlined function's, over its
 * instances). */
static void own_cost(pl_ann *ann, const pl_report *rep, const pl_tree *flat, const uint32_t *roots, size_t n)
{
	size_t nev = rep->nshown;
	ann->samples = pl_xcalloc(nev ? nev : 1, sizeof(uint64_t));
	ann->period = pl_xcalloc(nev ? nev : 1, sizeof(uint64_t));
	for (size_t r = 0; r < n; r++)
		for (size_t i = 0; i < nev; i++) {
			ann->samples[i] += pl_cost(flat, roots[r], rep->shown[i])[PL_SELF];
			ann->period[i] += pl_cost(flat, roots[r], rep->shown[i])[PL_SELF_PERIOD];
		}
}

int pl_annotate_build(pl_report *rep, uint32_t proc, int with_asm, pl_ann *ann, char *err, size_t errlen)
{
	const pl_tree *flat = pl_flat_tree(rep);
	const pl_node *x = &flat->nodes[proc];
	memset(ann, 0, sizeof *ann);
	if (!x->scope) {
		snprintf(err, errlen, "%s: the procedure has no structure: nothing to annotate", pd_name(rep->r));
		return -1;
	}
	size_t nev = rep->nshown;
	uint32_t *roots;
	size_t nroots = annotate_roots(flat, proc, &roots);
	const pl_node *host = &flat->nodes[host_of(flat, proc)];
	ann->proc = proc;
	ann->with_asm = with_asm;
	ann->inlined = x->kind == PL_INLINE;
	ann->name = ls_scope_name(x->scope);
	const char *bin = host->dso ? pl_attrib_file(rep->attrib, host->dso) : NULL;
	ann->binary = pl_xstrdup(bin ? bin : host->dso ? pl_dso_path(host->dso) : "??");
	own_cost(ann, rep, flat, roots, nroots);
	struct walk w = { .rep = rep, .flat = flat, .nev = nev };
	w.noline_s = pl_xcalloc(nev ? nev : 1, sizeof(uint64_t));
	w.noline_p = pl_xcalloc(nev ? nev : 1, sizeof(uint64_t));
	size_t nloops = 0;
	for (size_t r = 0; r < nroots; r++) {
		map_subtree(&w, roots[r]);
		nloops += count_loops(flat->nodes[roots[r]].scope);
	}
	if (w.nmap) /* w.map is NULL when there is none */
		qsort(w.map, w.nmap, sizeof *w.map, cmp_scope_node);
	size_t *stack = pl_xmalloc((nloops + 1) * sizeof *stack);
	for (size_t r = 0; r < nroots; r++) {
		const ls_scope *sc = flat->nodes[roots[r]].scope;
		size_t span = new_span(&w, ls_scope_file(sc), ls_scope_line(sc), ls_scope_line(sc));
		walk_scopes(&w, sc, span, stack, 0, -1);
	}
	free(stack);
	if (!with_asm)
		merge_loops(&w);
	size_t *order = pl_xmalloc((w.nloops + 1) * sizeof *order);
	ann->margin_width = assign_columns(&w, order);
	uint32_t *hosts = pl_xmalloc((nroots + 1) * sizeof *hosts);
	for (size_t r = 0; r < nroots; r++)
		hosts[r] = host_of(flat, roots[r]);
	if (with_asm)
		collect_insn_costs(&w, hosts, nroots);
	int rc = add_rows(ann, &w, roots, nroots, order, err, errlen);
	int noline = 0;
	for (size_t i = 0; i < nev; i++)
		noline |= w.noline_s[i] != 0;
	if (!rc && noline)
		set_cost(pl_ann_add(ann, PL_ANN_NOTE, "(samples at no source line)"), nev, w.noline_s, w.noline_p);
	free(hosts);
	free(roots);
	free(order);
	free_walk(&w);
	if (rc)
		pl_ann_free(ann);
	return rc;
}
