/* view-folded.c - FlameGraph input (flamegraph.pl): one line per distinct
 * stack "outer;...;inner COUNT", with loops and inlined calls as frames of
 * their own.  Statements are left out so that the graph stays readable;
 * their samples go to the frame that holds them.  Inlined frames end in
 * "_[i]" and kernel frames in "_[k]", the suffixes flamegraph.pl --colors
 * (java, js, ...) paints as inlined and kernel code.  Names are escaped
 * (support/text_escape.h): a ';' or a newline in one cannot break a line. */
#include "report.h"
#include "support/text_escape.h"

#include <stdlib.h>
#include <string.h>

struct lines {
	char **v;
	uint64_t *count;
	size_t n, cap;
};

struct walk {
	pl_report *rep;
	struct lines out;
	char *stack;
	size_t len, cap;
};

static void emit(struct walk *w, uint64_t count)
{
	if (!count || !w->len)
		return;
	if (w->out.n == w->out.cap) {
		w->out.cap = w->out.cap ? w->out.cap * 2 : 256;
		w->out.v = pl_xrealloc(w->out.v, w->out.cap * sizeof *w->out.v);
		w->out.count = pl_xrealloc(w->out.count, w->out.cap * sizeof *w->out.count);
	}
	char *s = pl_xmalloc(w->len + 1);
	memcpy(s, w->stack, w->len);
	s[w->len] = 0;
	w->out.v[w->out.n] = s;
	w->out.count[w->out.n] = count;
	w->out.n++;
}

static int kernel_proc(const pl_node *x)
{
	return x->dso && (x->dso->kind == PL_DSO_KERNEL || x->dso->kind == PL_DSO_KMODULE);
}

static void walk(struct walk *w, uint32_t n, int kernel)
{
	const pl_tree *t = &w->rep->tree;
	const pl_node *x = &t->nodes[n];
	/* self is per scope in its frame (pl_tree_finish): take back what
	 * the children that are shown as separate lines hold */
	if (!pl_cost(t, n, w->rep->primary)[PL_TOTAL])
		return;
	/* only the children with this event's samples (a child with a self
	 * cost has a total) */
	uint32_t *kids;
	size_t nkids = pl_event_children(w->rep, t, n, &kids);
	uint64_t self = pl_cost(t, n, w->rep->primary)[PL_SELF];
	if (x->kind != PL_STMT)
		for (size_t i = 0; i < nkids; i++)
			if (t->nodes[kids[i]].kind != PL_PROC)
				self -= pl_cost(t, kids[i], w->rep->primary)[PL_SELF];
	if (x->kind == PL_ROOT)
		self = 0;
	size_t saved = w->len;
	if (x->kind == PL_PROC)
		kernel = kernel_proc(x);
	if (x->kind != PL_STMT && x->kind != PL_ROOT) {
		char label[1024 + 8];
		pl_node_label(w->rep, n, label, 1024); /* room for the suffix */
		if (x->kind == PL_INLINE)
			strcat(label, "_[i]");
		else if (kernel)
			strcat(label, "_[k]");
		/* a frame's ';' would split it in two: escaped as \073, as the
		 * label's control characters already are (a newline would end
		 * the line) */
		ls_text_escape_in_place(label, sizeof label, LS_ESC_SEMICOLON);
		size_t l = strlen(label);
		if (w->len + l + 2 > w->cap) {
			w->cap = (w->len + l + 2) * 2;
			w->stack = pl_xrealloc(w->stack, w->cap);
		}
		if (w->len)
			w->stack[w->len++] = ';';
		memcpy(w->stack + w->len, label, l);
		w->len += l;
	}
	emit(w, self);
	for (size_t i = 0; i < nkids; i++)
		walk(w, kids[i], kernel);
	free(kids);
	w->len = saved;
}

static int cmp_str(const void *a, const void *b, void *arg)
{
	char **v = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(v[x], v[y]);
	return c ? c : (x < y ? -1 : x > y);
}

int pl_view_folded(pl_report *rep)
{
	struct walk w = { .rep = rep };
	walk(&w, 0, 0);
	size_t *order = pl_xmalloc((w.out.n ? w.out.n : 1) * sizeof *order);
	for (size_t i = 0; i < w.out.n; i++)
		order[i] = i;
	qsort_r(order, w.out.n, sizeof *order, cmp_str, w.out.v);
	for (size_t i = 0; i < w.out.n;) {
		size_t j = i;
		uint64_t sum = 0;
		while (j < w.out.n && !strcmp(w.out.v[order[i]], w.out.v[order[j]]))
			sum += w.out.count[order[j++]];
		fprintf(rep->out, "%s %llu\n", w.out.v[order[i]], (unsigned long long)sum);
		i = j;
	}
	for (size_t i = 0; i < w.out.n; i++)
		free(w.out.v[i]);
	free(w.out.v);
	free(w.out.count);
	free(w.stack);
	free(order);
	return 0;
}
