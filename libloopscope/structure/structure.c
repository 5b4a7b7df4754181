/* structure.c - the structure builder: places every instruction of a
 * procedure in proc > inline/alien > loop > stmt (hpcstruct's method, with
 * the slides' refinements).
 *
 * For every instruction we know three things: its inline context (the
 * deepest DW_TAG_inlined_subroutine covering it), its line, and the
 * innermost loop of its basic block.  Loops are placed inside the inline
 * chain at the least common ancestor (LCA) of the contexts of their
 * instructions: a loop wholly inside an inlined callee sits inside that
 * [I] node, a loop of the caller around the call sits outside it, and a
 * loop is never made a child of a node inserted inside the loop.
 *
 * Not every instruction votes for the LCA (struct ls_place): an instruction
 * at line 0 belongs to no statement (clang puts merged and hoisted code at
 * line 0 and often outside the inlined callee's ranges: one such
 * instruction in a loop's header used to pull the loop out to the caller's
 * call line), and a spill, reload or register copy only moves a value for
 * the loop, with the line (and inline context) of whatever statement the
 * value came from (gcc's pulled loops two levels out).  A loop with no
 * voting instruction uses all of them.
 *
 * Each instruction's path is then: the inline nodes down to its outermost
 * loop's LCA, that loop, the inline nodes down to the next loop's LCA,
 * ..., the rest of its inline chain, an alien node if its line comes from
 * another file with no inline record, and its statement.  A non-voting
 * instruction whose context is not below its loop's gets, inside the loop,
 * the part of its chain below the two contexts' LCA (the slides' "take the
 * path below the LCA and insert that inside the loop").  Paths are
 * inserted into a trie, so equal contexts share one node and a statement
 * (one line in one context) gets all its instructions' ranges.
 *
 * Line 0 is never a statement's line: a line-0 instruction directly in a
 * loop (in the loop's own context) belongs to the loop's statement, the
 * enclosing statement of its scope; anywhere else it goes to the "[no
 * line]" statement of its scope (line 0, no file), which the outputs print
 * as such.
 */
#include "structure/structure.h"
#include "support/sort.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the trie of scopes: (parent, kind, key, line) -> child ---- */

struct child_map {
	struct child_slot {
		const struct ls_scope *parent;
		const void *key;
		uint64_t line;             /* a statement's line, and its cut above 32 bits */
		ls_scope_kind kind;
		struct ls_scope *child;
	} *slots;
	size_t nslots, count;
};

static uint64_t slot_hash(const struct ls_scope *parent, ls_scope_kind kind, const void *key, uint64_t line)
{
	uint64_t h = (uint64_t)(uintptr_t)parent * 0x9E3779B97F4A7C15ull;
	h ^= (uint64_t)(uintptr_t)key * 0xC2B2AE3D27D4EB4Full;
	h ^= (line << 8 ^ line >> 40 ^ kind) * 0x165667B19E3779F9ull;
	return h ^ (h >> 29);
}

static void child_map_grow(struct child_map *cm)
{
	size_t n = cm->nslots ? cm->nslots * 2 : 256;
	struct child_slot *slots = ls_xcalloc(n, sizeof *slots);
	for (size_t i = 0; i < cm->nslots; i++) {
		struct child_slot *s = &cm->slots[i];
		if (!s->child)
			continue;
		size_t j = slot_hash(s->parent, s->kind, s->key, s->line) & (n - 1);
		while (slots[j].child)
			j = (j + 1) & (n - 1);
		slots[j] = *s;
	}
	free(cm->slots);
	cm->slots = slots;
	cm->nslots = n;
}

/* The child of PARENT with this identity; *CREATED tells whether it is new. */
static struct ls_scope *child_get(struct child_map *cm, struct ls_arena *arena, struct ls_scope *parent,
                                  ls_scope_kind kind, const void *key, uint64_t line, bool *created)
{
	if ((cm->count + 1) * 2 > cm->nslots)
		child_map_grow(cm);
	size_t j = slot_hash(parent, kind, key, line) & (cm->nslots - 1);
	for (;; j = (j + 1) & (cm->nslots - 1)) {
		struct child_slot *s = &cm->slots[j];
		if (!s->child)
			break;
		if (s->parent == parent && s->kind == kind && s->key == key && s->line == line) {
			*created = false;
			return s->child;
		}
	}
	struct ls_scope *c = ls_scope_new(arena, kind, parent);
	c->key = key;
	cm->slots[j] = (struct child_slot){ parent, key, line, kind, c };
	cm->count++;
	*created = true;
	return c;
}

/* ---- inline contexts ---- */

/* The inline context of a DWARF node: its nearest inlined-call ancestor (or
 * itself); NULL stands for the procedure's own body. */
static const struct ls_inl_node *context_of(const struct ls_inl_node *n)
{
	while (n && n->kind == LS_INL_LEXICAL)
		n = n->parent;
	return n && n->kind == LS_INL_INLINED ? n : NULL;
}

/* N is an inlined call, never the procedure's body (NULL, the root of the
 * contexts): callers walk up only while context_depth() says there is more. */
static const struct ls_inl_node *context_parent(const struct ls_inl_node *n)
{
	assert(n);
	return context_of(n->parent);
}

static unsigned context_depth(const struct ls_inl_node *n)
{
	return n ? n->depth : 0; /* an inlined node counts the inlined nodes up to its subprogram */
}

/* Context C cut to its outermost LS_MAX_INLINE_SCOPES levels; *CUT says
 * how many were left out.  MEMO holds the last answer: consecutive
 * instructions mostly share a context, so that a deep one is walked up
 * once, not once per instruction. */
struct kept_memo {
	const struct ls_inl_node *from, *to;
	uint32_t cut;
};

static const struct ls_inl_node *kept_context(const struct ls_inl_node *c, struct kept_memo *memo, uint32_t *cut)
{
	*cut = 0;
	if (context_depth(c) <= LS_MAX_INLINE_SCOPES)
		return c;
	if (memo->from != c) {
		const struct ls_inl_node *k = c;
		while (context_depth(k) > LS_MAX_INLINE_SCOPES)
			k = context_parent(k);
		*memo = (struct kept_memo){ c, k, context_depth(c) - LS_MAX_INLINE_SCOPES };
	}
	*cut = memo->cut;
	return memo->to;
}

/* The subprogram node an inline node belongs to. */
static const struct ls_inl_node *subprogram_of(const struct ls_inl_node *n)
{
	while (n && n->parent)
		n = n->parent;
	return n;
}

static const struct ls_inl_node *context_lca(const struct ls_inl_node *a, const struct ls_inl_node *b)
{
	unsigned da = context_depth(a), db = context_depth(b);
	for (; da > db; da--)
		a = context_parent(a);
	for (; db > da; db--)
		b = context_parent(b);
	while (a != b) {
		a = context_parent(a);
		b = context_parent(b);
	}
	return a;
}

/* Whether context C is A or inside it. */
static bool context_within(const struct ls_inl_node *c, const struct ls_inl_node *a)
{
	for (; c; c = context_parent(c))
		if (c == a)
			return true;
	return a == NULL;
}

/* ---- per-instruction facts ---- */

#define place ls_place

/* Whether an instruction only moves a value: a copy between registers, or
 * a spill or reload (a stack slot on %rsp on one side), or is a padding
 * nop.  Such an instruction carries the line of the statement the value
 * belongs to, not of the code it sits in. */
static bool only_moves_data(const struct ls_insn *in)
{
	enum { RSP = 4 };
	if (in->opcode == LS_MN_NOP || in->opcode == LS_MN_ENDBR)
		return true;
	if ((in->opcode != LS_MN_MOV && in->opcode != LS_MN_VMOV) || in->nops != 2)
		return false;
	const struct ls_operand *a = &in->op[0], *b = &in->op[1];
	if (a->kind == LS_OP_REG && b->kind == LS_OP_REG)
		return true;
	const struct ls_operand *mem = a->kind == LS_OP_MEM ? a : b, *reg = a->kind == LS_OP_MEM ? b : a;
	return reg->kind == LS_OP_REG && mem->kind == LS_OP_MEM && mem->base == RSP && mem->index < 0;
}

/* The inline context of ADDR, trusted only if it belongs to this procedure's
 * subprogram (a DWARF range overrunning into a neighbour must not drag the
 * neighbour's inline tree in). */
static const struct ls_inl_node *inline_context_at(const ls_module *m, const struct ls_proc *proc,
                                                   uint64_t addr)
{
	const struct ls_inl_node *n = ls_inline_find(&m->inl, addr);
	if (!n)
		return NULL;
	if (proc->die_node && subprogram_of(n) != proc->die_node)
		return NULL;
	return context_of(n);
}

static void fill_line(const ls_module *m, struct place *p)
{
	const struct ls_line_row *r = ls_linemap_find(&m->lines, p->addr);
	if (r && r->file) {
		p->file = r->file;
		p->line = r->line;
	}
}

static int cmp_place(const void *a, const void *b)
{
	const struct place *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The first inline-segment edge above ADDR, or UINT64_MAX. */
static uint64_t next_inline_boundary(const struct ls_inline_index *ix, uint64_t addr)
{
	size_t lo = LS_FIRST_ABOVE(ix->segs, ix->nsegs, hi, addr); /* first segment ending above addr */
	if (lo == ix->nsegs)
		return UINT64_MAX;
	return ix->segs[lo].lo > addr ? ix->segs[lo].lo : ix->segs[lo].hi;
}

/* Instructions from the CFG, or, without one, the pieces of the proc's
 * ranges cut at every line-row and inline-segment boundary. */
static struct place *collect_places(const ls_module *m, const struct ls_proc *proc, const struct ls_cfg *cfg,
                                    const struct ls_loop_forest *lf, size_t *nplaces)
{
	struct place *pl;
	size_t n = 0;
	if (cfg) {
		pl = ls_xmalloc((cfg->ninsns + 1) * sizeof *pl);
		for (size_t b = 0; b < cfg->nblocks; b++) {
			const struct ls_block *blk = &cfg->blocks[b];
			int32_t loop = lf && lf->block_loop ? lf->block_loop[b] : -1;
			for (uint32_t k = 0; k < blk->ninsns; k++) {
				const struct ls_insn *in = &cfg->insns[blk->first_insn + k];
				struct place *p = &pl[n++];
				*p = (struct place){ .addr = in->addr, .end = in->addr + (in->len ? in->len : 1), .loop = loop,
				                     .votes = !only_moves_data(in) };
			}
		}
	} else {
		size_t cap = 0;
		pl = NULL;
		for (size_t r = 0; r < proc->nranges; r++) {
			uint64_t a = proc->ranges[r].lo, hi = proc->ranges[r].hi;
			while (a < hi) {
				uint64_t next = hi;
				const struct ls_line_row *row = ls_linemap_find(&m->lines, a);
				if (row && row + 1 < m->lines.rows + m->lines.nrows && row[1].addr > a && row[1].addr < next)
					next = row[1].addr;
				uint64_t cut = next_inline_boundary(&m->inl, a);
				if (cut > a && cut < next)
					next = cut;
				pl = ls_grow(pl, &cap, n + 1, sizeof *pl);
				pl[n++] = (struct place){ .addr = a, .end = next, .loop = -1, .votes = true };
				a = next;
			}
		}
		if (!pl)
			pl = ls_xmalloc(sizeof *pl);
	}
	/* Blocks start at the entry; code below it (a .cold part) comes after,
	 * so sort: place_index searches by address.  (Mostly they are in order
	 * already; when strictly, any sort leaves them so.) */
	size_t up = 1;
	while (up < n && pl[up - 1].addr < pl[up].addr)
		up++;
	if (up < n)
		ls_sort_runs(pl, n, sizeof *pl, cmp_place);
	struct kept_memo memo = { 0 };
	for (size_t i = 0; i < n; i++) {
		pl[i].ctx = kept_context(inline_context_at(m, proc, pl[i].addr), &memo, &pl[i].cut);
		fill_line(m, &pl[i]);
		if (!pl[i].line)
			pl[i].votes = false;
	}
	*nplaces = n;
	return pl;
}

int ls_place_index(const struct place *pl, size_t n, uint64_t addr)
{
	size_t lo = LS_FIRST_ABOVE(pl, n, end, addr);
	return lo < n && pl[lo].addr <= addr ? (int)lo : -1;
}

/* Whether the ends of PL (N) never go down: ls_place_index's search then
 * has one answer, the first place ending above the address. */
static bool ends_ascend(const struct place *pl, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (pl[i].end < pl[i - 1].end)
			return false;
	return true;
}

/* ls_place_index of CFG's instruction K in PL (N, ends ascending): the
 * places are the instructions, in address order, so that is usually
 * place K itself -- when place K starts there and the one before it ends
 * at or below it; else the search. */
static int place_of_insn(const struct place *pl, size_t n, const struct ls_cfg *cfg, uint32_t k)
{
	uint64_t addr = cfg->insns[k].addr;
	if (k < n && pl[k].addr == addr && pl[k].end > addr && (k == 0 || pl[k - 1].end <= addr))
		return (int)k;
	return ls_place_index(pl, n, addr);
}

/* ---- building ---- */

static void fill_inline_scope(struct ls_scope *s, const struct ls_inl_node *n)
{
	s->name = n->name;
	s->file = n->decl_file;
	s->line = n->decl_line;
	s->call_file = n->call_file;
	s->call_line = n->call_line;
	s->call_column = n->call_column;
}

/* Descends from scope AT (whose context is FROM) through the inline nodes
 * down to context TO (TO must be FROM or below it; contexts are at most
 * LS_MAX_INLINE_SCOPES deep: kept_context). */
static struct ls_scope *descend_inlines(struct child_map *cm, struct ls_arena *arena, struct ls_scope *at,
                                        const struct ls_inl_node *from, const struct ls_inl_node *to)
{
	const struct ls_inl_node *path[LS_MAX_INLINE_SCOPES];
	size_t n = 0;
	for (const struct ls_inl_node *c = to; c && c != from; c = context_parent(c)) {
		assert(n < LS_MAX_INLINE_SCOPES);
		path[n++] = c;
	}
	while (n--) {
		bool created;
		struct ls_scope *s = child_get(cm, arena, at, LS_SCOPE_INLINE, path[n], 0, &created);
		if (created)
			fill_inline_scope(s, path[n]);
		at = s;
	}
	return at;
}

/* Whether the rule that chose a loop's line is a fallback: a guess. */
static uint8_t guess_of(enum ls_line_rule rule)
{
	switch (rule) {
	case LS_LINE_BEFORE_BODY:
	case LS_LINE_ABOVE_SWITCH:
		return LS_GUESS_BEFORE_BODY;
	case LS_LINE_SLIDES:
		return LS_GUESS_SLIDES;
	case LS_LINE_HEADER:
		return LS_GUESS_HEADER;
	case LS_LINE_ENTRY:
		return LS_GUESS_ENTRY;
	default:
		return LS_GUESS_NONE;
	}
}

/* The nearest loop above loop scope S in its procedure, not across an
 * inlined call, or NULL. */
static struct ls_scope *loop_above(struct ls_scope *s)
{
	for (struct ls_scope *p = s->parent; p; p = p->parent) {
		if (p->kind == LS_SCOPE_LOOP)
			return p;
		if (p->kind != LS_SCOPE_ALIEN)
			return NULL;
	}
	return NULL;
}

static size_t uf_root(size_t *uf, size_t x)
{
	while (uf[x] != x)
		x = uf[x] = uf[uf[x]];
	return x;
}

static _Thread_local struct ls_scope **g_parts_loops; /* qsort has no context argument */

static int cmp_line_then_order(const void *pa, const void *pb)
{
	size_t x = *(const size_t *)pa, y = *(const size_t *)pb;
	const struct ls_scope *a = g_parts_loops[x], *b = g_parts_loops[y];
	if (a->file != b->file)
		return (uintptr_t)a->file < (uintptr_t)b->file ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* One source loop the compiler made into several machine loops (nested:
 * gcc splits a loop with several back edges; or one after another: a
 * vectorized loop and its remainder) gives them all the source loop's
 * line, and rows that cannot be told apart.  Number them: the loops of
 * PROC with one file and line that nest directly in one another or sit
 * side by side under one scope are parts 1..N of one loop, in preorder
 * (the outermost first). */
static void number_parts(struct ls_scope *proc)
{
	struct ls_scope **loops = NULL;
	size_t n = 0, cap = 0;
	for (struct ls_scope *s = proc->first_child; s;) {
		if (s->kind == LS_SCOPE_LOOP && s->loop && s->line) {
			loops = ls_grow(loops, &cap, n + 1, sizeof *loops);
			loops[n++] = s;
		}
		if (s->first_child) {
			s = s->first_child;
			continue;
		}
		while (s != proc && !s->next_sibling)
			s = s->parent;
		if (s == proc)
			break;
		s = s->next_sibling;
	}
	if (n < 2) {
		free(loops);
		return;
	}
	size_t *uf = ls_xmalloc(n * sizeof *uf), *count = ls_xcalloc(n, sizeof *count);
	size_t *order = ls_xmalloc(n * sizeof *order);
	for (size_t i = 0; i < n; i++)
		uf[i] = order[i] = i;
	/* Loops with one file and line are consecutive in ORDER (preorder
	 * kept among them); each is compared with the 64 before it. */
	g_parts_loops = loops;
	ls_sort_runs(order, n, sizeof *order, cmp_line_then_order);
	for (size_t x = 1; x < n; x++)
		for (size_t y = x; y-- > 0 && x - y <= 64;) {
			const struct ls_scope *a = loops[order[y]], *b = loops[order[x]];
			if (a->line != b->line || a->file != b->file)
				break;
			if (loop_above(loops[order[x]]) == a || a->parent == b->parent)
				uf[uf_root(uf, order[x])] = uf_root(uf, order[y]);
		}
	free(order);
	for (size_t i = 0; i < n; i++)
		count[uf_root(uf, i)]++;
	size_t *next = ls_xcalloc(n, sizeof *next);
	for (size_t i = 0; i < n; i++) {
		size_t r = uf_root(uf, i);
		if (count[r] > 1 && count[r] <= UINT16_MAX) {
			loops[i]->loop->part = (uint16_t)++next[r];
			loops[i]->loop->nparts = (uint16_t)count[r];
		}
	}
	free(next);
	free(count);
	free(uf);
	free(loops);
}

static struct ls_loop_info *make_loop_info(struct ls_arena *arena, const struct ls_cfg *cfg, const struct ls_loop *L)
{
	struct ls_loop_info *li = ls_arena_alloc(arena, sizeof *li);
	li->header = cfg->blocks[L->header].start;
	li->depth = L->depth;
	li->irreducible = L->irreducible || L->nentries > 1;
	li->nentries = L->nentries;
	li->entries = ls_arena_alloc(arena, (L->nentries + 1) * sizeof *li->entries);
	for (size_t i = 0; i < L->nentries; i++)
		li->entries[i] = cfg->blocks[L->entries[i]].start;
	const struct ls_cfg_edge *lists[2] = { L->backedges, L->exits };
	size_t counts[2] = { L->nbackedges, L->nexits };
	ls_edge *out[2];
	for (int k = 0; k < 2; k++) {
		out[k] = ls_arena_alloc(arena, (counts[k] + 1) * sizeof(ls_edge));
		for (size_t i = 0; i < counts[k]; i++) {
			const struct ls_block *from = &cfg->blocks[lists[k][i].from];
			out[k][i].from = cfg->insns[from->first_insn + from->ninsns - 1].addr;
			out[k][i].to = cfg->blocks[lists[k][i].to].start;
		}
	}
	li->backedges = out[0];
	li->nbackedges = counts[0];
	li->exits = out[1];
	li->nexits = counts[1];
	return li;
}

/* The file an inline context's (or the procedure's) own lines come from. */
static const char *context_file(const struct ls_inl_node *ctx, const char *proc_file)
{
	return ctx ? ctx->decl_file : proc_file;
}

/* The LCA of the contexts of the instructions of loop L's blocks (nested
 * loops' included) that vote, or of all of them when none votes; with the
 * LCA of its control instructions (the header's first, the last of its
 * exit tests and back-edge sources) in *CTL, and the instructions'
 * contexts in CTXS (*NCTXS of them). */
static const struct ls_inl_node *loop_lca(const struct ls_cfg *cfg, const struct ls_loop_forest *lf, int32_t k,
                                          const struct ls_places *ps, const struct ls_inl_node ***ctxs,
                                          size_t *nctxs, size_t *cap, const struct ls_inl_node **ctl)
{
	const struct ls_loop *L = &lf->loops[k];
	const struct ls_inl_node *all = NULL, *control = NULL;
	bool have_all = false, have_control = false;
	*nctxs = 0;
	for (int pass = 0; pass < 2 && !have_all; pass++) {
		for (size_t b = 0; b < L->nblocks; b++) {
			uint32_t bi = L->blocks[b];
			const struct ls_block *blk = &cfg->blocks[bi];
			bool ctl_block = false;
			for (uint32_t s = 0; s < blk->nsucc && lf->block_loop[bi] == k; s++) {
				const struct ls_cfg_edge *e = &cfg->edges[cfg->succ[blk->first_succ + s]];
				int32_t l = lf->block_loop[e->to];
				while (l >= 0 && l != k)
					l = lf->loops[l].parent;
				if (l != k || e->to == L->header)
					ctl_block = true; /* an exit or a back edge */
			}
			bool first = bi == L->header;
			for (uint32_t i = 0; i < blk->ninsns; i++) {
				int x = ls_block_place(ps, cfg, blk, i);
				if (x < 0 || (pass == 0 && !ps->pl[x].votes))
					continue;
				const struct ls_inl_node *c = ps->pl[x].ctx;
				all = have_all ? context_lca(all, c) : c;
				have_all = true;
				*ctxs = ls_grow(*ctxs, cap, *nctxs + 1, sizeof **ctxs);
				(*ctxs)[(*nctxs)++] = c;
				if (first || (ctl_block && i + 1 == blk->ninsns)) {
					control = have_control ? context_lca(control, c) : c;
					have_control = true;
					first = false;
				}
			}
		}
	}
	*ctl = have_control ? control : all;
	return all;
}

/* The inline context of each loop.  hpcstruct's rule is the LCA of the
 * contexts of all the loop's instructions.  Two refinements, from real
 * code: only voting instructions count (see the file's comment); and a
 * loop whose own control (header, exit tests, back edges) lies deeper, in
 * a context holding at least 9 in 10 of its voting instructions, goes
 * there - gcc labels a few computations of an inlined std::fill_n's
 * buffer growth with the caller's line (3 of 45 instructions in fmt's
 * write()), which must not pull the loop out of the callee that owns the
 * rest.  Children are folded into parents (parents come before children
 * in the forest), so a loop is never placed below its nested loops. */
static void loop_contexts(const struct ls_cfg *cfg, const struct ls_loop_forest *lf, const struct ls_places *ps,
                          const struct ls_inl_node **lca)
{
	const struct ls_inl_node **ctxs = NULL;
	size_t nctxs, cap = 0;
	for (size_t k = 0; k < lf->nloops; k++) {
		const struct ls_inl_node *ctl;
		const struct ls_inl_node *all = loop_lca(cfg, lf, (int32_t)k, ps, &ctxs, &nctxs, &cap, &ctl);
		const struct ls_inl_node *c = ctl;
		for (; c != all && c; c = context_parent(c)) {
			size_t inside = 0;
			for (size_t i = 0; i < nctxs; i++)
				inside += context_within(ctxs[i], c);
			if (inside * 10 >= nctxs * 9)
				break;
		}
		lca[k] = c;
	}
	for (size_t k = lf->nloops; k-- > 0;) {
		int32_t p = lf->loops[k].parent;
		if (p >= 0)
			lca[p] = context_lca(lca[p], lca[k]);
	}
	free(ctxs);
}

/* Puts instruction P into the tree: below LOOP (the scope of its innermost
 * loop, whose context is LOOP_CTX), or below the procedure PS. */
static void place_instruction(struct child_map *cm, struct ls_arena *arena, struct ls_scope *ps,
                              const struct place *p, struct ls_scope *loop,
                              const struct ls_inl_node *loop_ctx, const char *proc_file)
{
	struct ls_scope *at = loop ? loop : ps;
	const struct ls_inl_node *from = loop ? loop_ctx : NULL;
	if (loop && !context_within(p->ctx, loop_ctx))
		from = context_lca(loop_ctx, p->ctx); /* a non-voting stray: its chain below the LCA */
	at = descend_inlines(cm, arena, at, from, p->ctx);
	bool created;
	if (!p->line) {
		/* Line 0: the enclosing statement, the loop's own, when it sits
		 * right in the loop; else its scope's [no line] statement. */
		const char *file = NULL;
		unsigned line = 0;
		if (loop && at == loop && loop->line) {
			file = loop->file;
			line = loop->line;
		}
		struct ls_scope *st = child_get(cm, arena, at, LS_SCOPE_STMT, file, (uint64_t)p->cut << 32 | line,
		                                &created);
		if (created) {
			st->file = file;
			st->line = line;
			st->cut = p->cut;
		}
		ls_scope_add_range(arena, st, p->addr, p->end);
		return;
	}
	/* Code from another file with no inline record: an alien scope
	 * (macros, #include'd code, inline records the compiler dropped). */
	const char *cf = context_file(p->ctx, proc_file);
	if (p->file && cf && p->file != cf) {
		struct ls_scope *al = child_get(cm, arena, at, LS_SCOPE_ALIEN, p->file, 0, &created);
		if (created) {
			al->file = p->file;
			al->line = p->line;
		} else if (p->line < al->line) {
			al->line = p->line;
		}
		at = al;
	}
	/* One statement per line and per number of inlined calls cut above
	 * it, so that each address's chain says exactly how many. */
	struct ls_scope *st = child_get(cm, arena, at, LS_SCOPE_STMT, p->file, (uint64_t)p->cut << 32 | p->line,
	                                &created);
	if (created) {
		st->file = p->file;
		st->line = p->line;
		st->cut = p->cut;
	}
	ls_scope_add_range(arena, st, p->addr, p->end);
}

struct ls_scope *ls_structure_build_proc(const ls_module *m, const struct ls_proc *proc,
                                         const struct ls_cfg *cfg, const struct ls_loop_forest *lf,
                                         struct ls_arena *arena)
{
	struct ls_scope *ps = ls_scope_new(arena, LS_SCOPE_PROC, NULL);
	ps->name = ls_proc_name(m, proc);
	ps->linkage_name = proc->linkage_name;
	ps->file = proc->file;
	ps->line = proc->line;
	ps->key = proc;

	size_t npl;
	struct place *pl = collect_places(m, proc, cfg, lf, &npl);
	uint32_t cut = 0;
	for (size_t i = 0; i < npl; i++)
		cut = pl[i].cut > cut ? pl[i].cut : cut;
	if (cut)
		ls_warn_proc_marks(&m->opt, m->path, ps, false, cut);
	/* Places must be sorted by address for place_index (blocks are). */

	/* Where the procedure's own body lines come from: the line at its entry
	 * (a method declared in a header is defined in the .cpp), unless the
	 * entry is already in an inlined call (a constructor inlined first
	 * thing would make the procedure's own lines look foreign). */
	const char *proc_file = proc->file;
	{
		const struct ls_line_row *r = ls_linemap_find(&m->lines, proc->entry);
		if (r && r->file && !inline_context_at(m, proc, proc->entry))
			proc_file = r->file;
	}

	size_t nloops = cfg && lf ? lf->nloops : 0;
	const struct ls_inl_node **lca = ls_xcalloc(nloops + 1, sizeof *lca);
	struct ls_scope **loop_scope = ls_xcalloc(nloops + 1, sizeof *loop_scope);
	struct ls_loop_line *lines = ls_xcalloc(nloops + 1, sizeof *lines);
	uint8_t *made = ls_xcalloc(nloops + 1, 1);
	struct child_map cm = { 0 };
	if (nloops) {
		/* Each block's first place (blocks and places are both in
		 * address order; a block's instructions are consecutive). */
		uint32_t *block_first = ls_xmalloc((cfg->nblocks + 1) * sizeof *block_first);
		bool ascending = ends_ascend(pl, npl);
		for (size_t b = 0; b < cfg->nblocks; b++) {
			const struct ls_block *blk = &cfg->blocks[b];
			int i = !blk->ninsns ? -1
			        : ascending ? place_of_insn(pl, npl, cfg, blk->first_insn)
			                    : ls_place_index(pl, npl, cfg->insns[blk->first_insn].addr);
			block_first[b] = i < 0 ? UINT32_MAX : (uint32_t)i;
		}
		struct ls_places places = { pl, npl, block_first };
		loop_contexts(cfg, lf, &places, lca);
		ls_loop_lines(m, proc, cfg, lf, &places, lca, proc_file, lines);
		ls_loop_kinds(m, cfg, lf, &places, lca, lines, made);
		free(block_first);
	}
	for (size_t k = 0; k < nloops; k++) {
		const struct ls_loop *L = &lf->loops[k];
		struct ls_scope *at = ps;
		const struct ls_inl_node *from = NULL;
		if (L->parent >= 0 && loop_scope[L->parent]) {
			at = loop_scope[L->parent];
			from = lca[L->parent];
		}
		at = descend_inlines(&cm, arena, at, from, lca[k]);
		bool created;
		struct ls_scope *ls = child_get(&cm, arena, at, LS_SCOPE_LOOP, L, 0, &created);
		ls->loop = make_loop_info(arena, cfg, L);
		ls->loop->made = made[k];
		ls->loop->guess = guess_of(lines[k].rule);
		ls->file = lines[k].file;
		ls->line = lines[k].line;
		loop_scope[k] = ls;
		if (m->debug_loop_lines)
			fprintf(stderr, "loopscope: loop line: %s header 0x%" PRIx64 " depth %u: %s:%u by %s\n",
			        proc->name ? proc->name : "??", ls->loop->header, L->depth,
			        ls->file ? ls->file : "??", ls->line, ls_line_rule_name(lines[k].rule));
	}
	for (size_t i = 0; i < npl; i++) {
		const struct place *p = &pl[i];
		int32_t l = p->loop >= 0 && (size_t)p->loop < nloops ? p->loop : -1;
		place_instruction(&cm, arena, ps, p, l >= 0 ? loop_scope[l] : NULL, l >= 0 ? lca[l] : NULL,
		                  proc_file);
	}

	free(cm.slots);
	free(lca);
	free(lines);
	free(made);
	free(loop_scope);
	free(pl);
	ls_normalize_proc(ps, arena);
	number_parts(ps);
	return ps;
}
