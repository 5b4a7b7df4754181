/* structure.c - the structure builder: places every instruction of a
 * procedure in proc > inline/alien > loop > stmt (hpcstruct's method, with
 * the slides' refinements).
 *
 * For every instruction we know three things: its inline context (the
 * deepest DW_TAG_inlined_subroutine covering it), its line, and the
 * innermost loop of its basic block.  Loops are placed inside the inline
 * chain at the least common ancestor (LCA) of the contexts of all their
 * instructions: a loop wholly inside an inlined callee sits inside that
 * [I] node, a loop of the caller around the call sits outside it, and a
 * loop is never made a child of a node inserted inside the loop.  Each
 * instruction's path is then: the inline nodes down to its outermost loop's
 * LCA, that loop, the inline nodes down to the next loop's LCA, ..., the
 * rest of its inline chain, an alien node if its line comes from another
 * file with no inline record, and its statement.  Paths are inserted into a
 * trie, so equal contexts share one node and a statement (one line in one
 * context) gets all its instructions' ranges.
 */
#include "structure.h"

#include <stdlib.h>
#include <string.h>

/* ---- the trie of scopes: (parent, kind, key, line) -> child ---- */

struct child_map {
	struct child_slot {
		const struct ls_scope *parent;
		const void *key;
		unsigned line;
		ls_scope_kind kind;
		struct ls_scope *child;
	} *slots;
	size_t nslots, count;
};

static uint64_t slot_hash(const struct ls_scope *parent, ls_scope_kind kind, const void *key, unsigned line)
{
	uint64_t h = (uint64_t)(uintptr_t)parent * 0x9E3779B97F4A7C15ull;
	h ^= (uint64_t)(uintptr_t)key * 0xC2B2AE3D27D4EB4Full;
	h ^= ((uint64_t)line << 8 | kind) * 0x165667B19E3779F9ull;
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
                                  ls_scope_kind kind, const void *key, unsigned line, bool *created)
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

static const struct ls_inl_node *context_parent(const struct ls_inl_node *n)
{
	return context_of(n->parent);
}

static unsigned context_depth(const struct ls_inl_node *n)
{
	unsigned d = 0;
	for (; n; n = context_parent(n))
		d++;
	return d;
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

/* ---- per-instruction facts ---- */

struct place {
	uint64_t addr, end;
	const struct ls_inl_node *ctx;  /* inline context, NULL: the procedure body */
	const char *file;               /* line map */
	unsigned line;
	int32_t loop;                   /* innermost loop, -1 none */
};

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
	size_t lo = 0, hi = ix->nsegs;
	while (lo < hi) { /* first segment ending above addr */
		size_t mid = lo + (hi - lo) / 2;
		if (ix->segs[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
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
				*p = (struct place){ .addr = in->addr, .end = in->addr + (in->len ? in->len : 1), .loop = loop };
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
				pl[n++] = (struct place){ .addr = a, .end = next, .loop = -1 };
				a = next;
			}
		}
		if (!pl)
			pl = ls_xmalloc(sizeof *pl);
	}
	/* Blocks start at the entry; code below it (a .cold part) comes after,
	 * so sort: place_index searches by address. */
	qsort(pl, n, sizeof *pl, cmp_place);
	for (size_t i = 0; i < n; i++) {
		pl[i].ctx = inline_context_at(m, proc, pl[i].addr);
		fill_line(m, &pl[i]);
	}
	*nplaces = n;
	return pl;
}

/* ---- loop lines: the slides' priority scheme ---- */

/* The line of instruction P as seen from context LCA: its own line if it is
 * in that context, else the call line of the inlined call below LCA that
 * leads to it (never a line deeper than the loop's context). */
static void line_in_context(const struct place *p, const struct ls_inl_node *lca, const char **file, unsigned *line)
{
	const struct ls_inl_node *c = p->ctx, *below = NULL;
	for (; c && c != lca; c = context_parent(c))
		below = c;
	if (below) {
		*file = below->call_file;
		*line = below->call_line;
	} else {
		*file = p->file;
		*line = p->line;
	}
}

static int place_index(const struct place *pl, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pl[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && pl[lo].addr <= addr ? (int)lo : -1;
}

/* Picks loop K's source line.  First the loop's own test, the one that
 * decides whether to go round again: a conditional branch with one side in
 * the loop and the other leaving it, the in-loop side being the header (a
 * back edge), else lying backward.  Then the slides' priority scheme: a
 * branch back to the header, a backward branch closing the loop, a taken
 * (true) branch, a fall-through edge; else the header's first line.  Only
 * the loop's own blocks count (not a nested loop's), lines are taken in the
 * loop's inline context, line 0 (compiler-made code) never counts, and
 * among equals the lexically last branch wins, as it closes the loop. */
static int edge_rank(const struct ls_cfg *cfg, const struct ls_loop_forest *lf, int32_t k,
                     const struct ls_block *blk, const struct ls_insn *last)
{
	const struct ls_loop *L = &lf->loops[k];
	int rank = 99;
	bool exits = false, cond = last->kind == LS_INSN_CJUMP;
	int32_t inside = -1;
	for (uint32_t s = 0; s < blk->nsucc; s++) {
		const struct ls_cfg_edge *e = &cfg->edges[cfg->succ[blk->first_succ + s]];
		/* In K or in a loop nested in K: walk up from the target's loop. */
		int32_t l = lf->block_loop[e->to];
		while (l >= 0 && l != k)
			l = lf->loops[l].parent;
		if (l != k) {
			exits = true;
			continue;
		}
		inside = (int32_t)e->to;
		if (lf->block_loop[e->to] != k)
			continue;
		bool branch = e->kind == LS_EDGE_TAKEN || e->kind == LS_EDGE_JUMP;
		bool to_entry = e->to == L->header;
		for (size_t n = 1; n < L->nentries && !to_entry; n++)
			to_entry = e->to == L->entries[n];
		int r;
		if (branch && to_entry)
			r = 2;
		else if (branch && cfg->blocks[e->to].start <= last->addr)
			r = 3;
		else if (e->kind == LS_EDGE_TAKEN)
			r = 4;
		else if (!branch && e->kind != LS_EDGE_SWITCH)
			r = 5;
		else
			continue;
		if (r < rank)
			rank = r;
	}
	if (cond && exits && inside >= 0) {
		bool to_entry = (uint32_t)inside == L->header;
		for (size_t n = 1; n < L->nentries && !to_entry; n++)
			to_entry = (uint32_t)inside == L->entries[n];
		if (to_entry)
			rank = 0;
		else if (cfg->blocks[inside].start <= last->addr && rank > 1)
			rank = 1;
	}
	return rank;
}

static void loop_line(const struct ls_cfg *cfg, const struct ls_loop_forest *lf, int32_t k,
                      const struct place *pl, size_t npl, const struct ls_inl_node *lca,
                      const char **file, unsigned *line)
{
	const struct ls_loop *L = &lf->loops[k];
	int best_rank = 99;
	uint64_t best_addr = 0;
	*file = NULL;
	*line = 0;
	for (size_t b = 0; b < L->nblocks; b++) {
		uint32_t from = L->blocks[b];
		const struct ls_block *blk = &cfg->blocks[from];
		if (!blk->ninsns || lf->block_loop[from] != k)
			continue;
		const struct ls_insn *last = &cfg->insns[blk->first_insn + blk->ninsns - 1];
		int rank = edge_rank(cfg, lf, k, blk, last);
		if (rank > best_rank || (rank == best_rank && last->addr <= best_addr))
			continue;
		int i = place_index(pl, npl, last->addr);
		if (i < 0)
			continue;
		const char *f;
		unsigned l;
		line_in_context(&pl[i], lca, &f, &l);
		if (!l)
			continue;
		best_rank = rank;
		best_addr = last->addr;
		*file = f;
		*line = l;
	}
	if (*line)
		return;
	const struct ls_block *hb = &cfg->blocks[L->header];
	for (uint32_t n = 0; n < hb->ninsns && !*line; n++) {
		int i = place_index(pl, npl, cfg->insns[hb->first_insn + n].addr);
		if (i >= 0)
			line_in_context(&pl[i], lca, file, line);
	}
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
 * down to context TO (TO must be FROM or below it). */
static struct ls_scope *descend_inlines(struct child_map *cm, struct ls_arena *arena, struct ls_scope *at,
                                        const struct ls_inl_node *from, const struct ls_inl_node *to)
{
	const struct ls_inl_node *path[LS_MAX_CHAIN];
	size_t n = 0;
	for (const struct ls_inl_node *c = to; c && c != from && n < LS_MAX_CHAIN; c = context_parent(c))
		path[n++] = c;
	while (n--) {
		bool created;
		struct ls_scope *s = child_get(cm, arena, at, LS_SCOPE_INLINE, path[n], 0, &created);
		if (created)
			fill_inline_scope(s, path[n]);
		at = s;
	}
	return at;
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

struct ls_scope *ls_structure_build_proc(const ls_module *m, const struct ls_proc *proc,
                                         const struct ls_cfg *cfg, const struct ls_loop_forest *lf,
                                         struct ls_arena *arena)
{
	struct ls_scope *ps = ls_scope_new(arena, LS_SCOPE_PROC, NULL);
	ps->name = proc->name;
	ps->linkage_name = proc->linkage_name;
	ps->file = proc->file;
	ps->line = proc->line;
	ps->key = proc;

	size_t npl;
	struct place *pl = collect_places(m, proc, cfg, lf, &npl);
	/* Places must be sorted by address for place_index (blocks are). */

	/* Where the procedure's own body lines come from: the line at its entry
	 * (a method declared in a header is defined in the .cpp). */
	const char *proc_file = proc->file;
	{
		const struct ls_line_row *r = ls_linemap_find(&m->lines, proc->entry);
		if (r && r->file)
			proc_file = r->file;
	}

	size_t nloops = cfg && lf ? lf->nloops : 0;
	const struct ls_inl_node **lca = ls_xcalloc(nloops + 1, sizeof *lca);
	bool *lca_set = ls_xcalloc(nloops + 1, sizeof *lca_set);
	struct ls_scope **loop_scope = ls_xcalloc(nloops + 1, sizeof *loop_scope);

	/* LCA of each loop's instructions, children folded into parents
	 * (parents come before children in the forest). */
	for (size_t i = 0; i < npl; i++) {
		int32_t l = pl[i].loop;
		if (l < 0 || (size_t)l >= nloops)
			continue;
		lca[l] = lca_set[l] ? context_lca(lca[l], pl[i].ctx) : pl[i].ctx;
		lca_set[l] = true;
	}
	for (size_t k = nloops; k-- > 0;) {
		int32_t p = lf->loops[k].parent;
		if (p < 0 || !lca_set[k])
			continue;
		lca[p] = lca_set[p] ? context_lca(lca[p], lca[k]) : lca[k];
		lca_set[p] = true;
	}

	struct child_map cm = { 0 };
	for (size_t k = 0; k < nloops; k++) {
		const struct ls_loop *L = &lf->loops[k];
		if (!lca_set[k])
			continue; /* a loop with no instructions (cannot happen; be safe) */
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
		loop_line(cfg, lf, (int32_t)k, pl, npl, lca[k], &ls->file, &ls->line);
		loop_scope[k] = ls;
	}

	for (size_t i = 0; i < npl; i++) {
		const struct place *p = &pl[i];
		struct ls_scope *at = ps;
		const struct ls_inl_node *from = NULL;
		if (p->loop >= 0 && (size_t)p->loop < nloops && loop_scope[p->loop]) {
			at = loop_scope[p->loop];
			from = lca[p->loop];
		}
		at = descend_inlines(&cm, arena, at, from, p->ctx);
		bool created;
		/* Code from another file with no inline record: an alien scope
		 * (macros, #include'd code, inline records the compiler dropped). */
		const char *cf = context_file(p->ctx, proc_file);
		if (p->file && cf && p->file != cf) {
			struct ls_scope *al = child_get(&cm, arena, at, LS_SCOPE_ALIEN, p->file, 0, &created);
			if (created) {
				al->file = p->file;
				al->line = p->line;
			} else if (p->line && (!al->line || p->line < al->line)) {
				al->line = p->line;
			}
			at = al;
		}
		struct ls_scope *st = child_get(&cm, arena, at, LS_SCOPE_STMT, p->file, p->line, &created);
		if (created) {
			st->file = p->file;
			st->line = p->line;
		}
		ls_scope_add_range(arena, st, p->addr, p->end);
	}

	free(cm.slots);
	free(lca);
	free(lca_set);
	free(loop_scope);
	free(pl);
	ls_normalize_proc(ps, arena);
	return ps;
}
