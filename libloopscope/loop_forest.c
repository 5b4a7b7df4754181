/* loop_forest.c - the loop nesting forest of a CFG (Havlak, "Nesting of
 * reducible and irreducible loops", TOPLAS 1997), irreducible loops with
 * all their entries.
 *
 * 1. Iterative depth-first search from the entry: preorder numbers and, per
 *    node, the last preorder number of its subtree (ancestor test in O(1)).
 *    No recursion: procedures have 100k blocks.
 * 2. Predecessors split into back-edge sources (the node is their DFS
 *    ancestor) and the others.
 * 3. Headers bottom-up (decreasing preorder): the body of W is what reaches
 *    a back-edge source of W backwards through non-back predecessors, with
 *    inner loops collapsed into their headers by union-find (path halving,
 *    so FIND is near-constant).  A predecessor outside W's DFS subtree
 *    enters W's loop at a block other than W: the loop is irreducible, and
 *    that entering node moves up to W, to be seen again by the enclosing
 *    header.  Ramalingam ("Identifying loops in almost linear time", TOPLAS
 *    1999) showed that moving such edges naively is quadratic; here an
 *    entering node is moved at most once per (loop, distinct entering
 *    representative) pair - each move corresponds to an entry the result
 *    reports anyway - so the cost stays O((N + E) a(N) + output).
 * 4. The forest: loops in preorder (parents before children, siblings by
 *    header address), each with its header, entries (header first), back
 *    edges (into any entry from inside), exits and all its blocks.
 *
 * 5. An irreducible loop nested in an irreducible loop and holding another
 *    of its entries is merged into it (see merge_irreducible): one
 *    multi-entry region instead of Havlak's DFS-dependent chain.
 * 6. A natural loop headed by an entry of an irreducible loop, which
 *    Havlak folds into it, is added inside it (see add_entry_loops).
 *
 * Loops are natural loops (and Havlak's irreducible ones): a block that
 * never gets back to the header - the exit() that ends a loop, a C++
 * cleanup ending in _Unwind_Resume - is outside, reached by an exit edge,
 * as in LLVM's LoopInfo.  Only unreachable alignment padding between a
 * loop's blocks is put in the loop of the block before it.
 */
#include "loop_forest.h"

#include <stdlib.h>
#include <string.h>

enum { NONHEADER, SELF, REDUCIBLE, IRREDUCIBLE };

struct extra {        /* entering nodes moved up to a header */
	uint32_t node;
	uint32_t next;    /* index into the pool, UINT32_MAX ends */
};

static uint32_t uf_find(uint32_t *uf, uint32_t x)
{
	while (uf[x] != x) {
		uf[x] = uf[uf[x]];
		x = uf[x];
	}
	return x;
}

struct loop_build {
	uint32_t *blocks;
	size_t n, cap;
	struct ls_cfg_edge *back, *exits;
	size_t nback, capback, nexits, capexits;
	uint32_t *entries;
	size_t nentries, capentries;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Alignment padding (an unreachable run of nops or int3) goes with the
 * block just before it, so that the padding inside a loop's code stays in
 * the loop. */
static void adopt_padding(const struct ls_cfg *cfg, struct ls_loop_forest *f, const uint32_t *number)
{
	if (!cfg->insns)
		return;
	for (size_t b = 1; b < cfg->nblocks; b++) {
		const struct ls_block *blk = &cfg->blocks[b];
		if (number[b] != UINT32_MAX || cfg->blocks[b - 1].end != blk->start)
			continue;
		bool padding = blk->ninsns > 0;
		for (uint32_t k = 0; k < blk->ninsns && padding; k++) {
			const struct ls_insn *in = &cfg->insns[blk->first_insn + k];
			padding = in->opcode == LS_MN_NOP || in->kind == LS_INSN_HALT;
		}
		if (padding)
			f->block_loop[b] = f->block_loop[b - 1];
	}
}

/* Havlak nests an irreducible region as a chain of irreducible loops, one
 * per DFS-chosen header: an interpreter's dispatch (every handler jumps
 * through one table to every other) becomes a nest hundreds deep.  An
 * irreducible loop nested in an irreducible loop that contains another
 * entry of its parent is part of the same multi-entry region, not a loop
 * inside it: merge it into the parent (as Steensgaard's forest would, which
 * takes all entries out before looking for inner loops).  The parent's
 * blocks, entries, back edges and exits do not change; natural loops are
 * never merged, so reducible code keeps Havlak's (and LLVM's) forest. */
static void merge_irreducible(struct ls_loop_forest *f, size_t nblocks)
{
	size_t n = f->nloops;
	if (n < 2)
		return;
	bool any = false;
	for (size_t l = 0; l < n && !any; l++)
		any = f->loops[l].irreducible && f->loops[l].parent >= 0 && f->loops[f->loops[l].parent].irreducible;
	if (!any)
		return;
	int32_t *final_parent = ls_xmalloc(n * sizeof *final_parent); /* parent after merging */
	uint8_t *merged = ls_xcalloc(n, 1);
	int32_t *mark = ls_xmalloc(nblocks * sizeof *mark);
	for (size_t b = 0; b < nblocks; b++)
		mark[b] = -1;
	int32_t marked = -1;
	for (size_t l = 0; l < n; l++) {       /* preorder: parents first */
		int32_t p = f->loops[l].parent;
		if (p >= 0 && merged[p])
			p = final_parent[p];
		final_parent[l] = p;
		const struct ls_loop *L = &f->loops[l];
		if (p < 0 || !L->irreducible || !f->loops[p].irreducible)
			continue;
		const struct ls_loop *P = &f->loops[p];
		if (marked != p) {
			for (size_t e = 1; e < P->nentries; e++)
				mark[P->entries[e]] = p;
			marked = p;
		}
		bool has_entry = false;
		for (size_t b = 0; b < L->nblocks && !has_entry; b++)
			has_entry = mark[L->blocks[b]] == p;
		if (has_entry)
			merged[l] = 1;
	}
	/* Renumber the survivors (preorder is kept), fix parents and depths. */
	int32_t *newidx = ls_xmalloc(n * sizeof *newidx);
	size_t k = 0;
	for (size_t l = 0; l < n; l++) {
		if (merged[l]) {
			newidx[l] = -1;
			free(f->loops[l].entries);
			free(f->loops[l].backedges);
			free(f->loops[l].exits);
			free(f->loops[l].blocks);
			continue;
		}
		newidx[l] = (int32_t)k;
		struct ls_loop L = f->loops[l];
		L.parent = final_parent[l] >= 0 ? newidx[final_parent[l]] : -1;
		L.depth = L.parent >= 0 ? f->loops[L.parent].depth + 1 : 1;
		f->loops[k++] = L;
	}
	for (size_t b = 0; b < nblocks; b++) {
		int32_t l = f->block_loop[b];
		if (l < 0)
			continue;
		while (merged[l])
			l = final_parent[l];
		f->block_loop[b] = newidx[l];
	}
	f->nloops = k;
	free(final_parent);
	free(merged);
	free(mark);
	free(newidx);
}

/* Havlak gives a block at most one loop, so inside an irreducible region a
 * natural loop whose header is one of the region's entries is lost: in an
 * interpreter whose every handler ends with its own copy of the dispatch
 * jump, each handler that can run twice in a row is such a loop (LLVM's
 * LoopInfo, which has only natural loops, reports them).  For each entry H
 * of each irreducible loop P, the blocks that reach an edge back into H
 * from inside P without passing H form a natural loop when none of them can
 * be entered but through H: when that backward walk never leaves P (any
 * other way in is through another entry, which has a predecessor outside
 * P).  Such loops become children of P, P's loops inside them move under
 * them; nothing else of Havlak's forest changes.  Other entries' edges into
 * H (another handler dispatching to it) are not back edges: H does not
 * dominate their source. */
struct entry_loop {
	uint32_t header;
	int32_t parent;            /* P */
	uint32_t *blocks;          /* the body, header first */
	size_t nblocks;
};

/* The natural loop of entry H of the loop whose blocks are marked IN_P
 * (into BODY, marking MARK with TAG); 0 when there is none.  An edge
 * T -> H from inside P is a back edge when H dominates T: when walking
 * back from T, stopping at H and at what is known to be in the body,
 * never leaves P nor meets the procedure's entry.  SEEN and WORK are
 * scratch. */
static size_t natural_body(const struct ls_cfg *cfg, uint32_t h, const uint32_t *in_p, uint32_t p_tag,
                           uint32_t *mark, uint32_t tag, uint32_t *seen, uint32_t *seen_tag, uint32_t *body,
                           uint32_t *work, size_t *budget)
{
	size_t n = 0;
	bool self = false;
	mark[h] = tag;
	body[n++] = h;
	const struct ls_block *hb = &cfg->blocks[h];
	for (uint32_t k = 0; k < hb->npred; k++) {
		uint32_t t = cfg->edges[cfg->pred[hb->first_pred + k]].from;
		self |= t == h;
		if (in_p[t] != p_tag || mark[t] == tag || !cfg->blocks[t].reachable)
			continue; /* (unreachable padding is in P too: adopted) */
		uint32_t s = ++*seen_tag;
		size_t nw = 0;
		bool dominated = true;
		seen[t] = s;
		work[nw++] = t;
		for (size_t i = 0; i < nw && dominated; i++) {
			const struct ls_block *blk = &cfg->blocks[work[i]];
			if (work[i] == 0 || *budget == 0) {
				dominated = false; /* the procedure's entry, or too much work */
				break;
			}
			(*budget)--;
			for (uint32_t q = 0; q < blk->npred; q++) {
				uint32_t v = cfg->edges[cfg->pred[blk->first_pred + q]].from;
				if (mark[v] == tag || seen[v] == s || !cfg->blocks[v].reachable)
					continue;
				if (in_p[v] != p_tag) {
					dominated = false; /* entered from outside P: through another entry */
					break;
				}
				seen[v] = s;
				work[nw++] = v;
			}
		}
		if (!dominated)
			continue;
		for (size_t i = 0; i < nw; i++) {
			mark[work[i]] = tag;
			body[n++] = work[i];
		}
	}
	return n > 1 || self ? n : 0;
}

/* Loops in preorder of the tree PARENT (siblings by header address): the
 * order into ORDER, depths into DEPTH. */
static void loop_preorder(const struct ls_cfg *cfg, const uint32_t *header, const int32_t *parent, size_t n,
                          uint32_t *order, unsigned *depth)
{
	/* Children lists (CSR by parent + 1, 0 = roots), each sorted by header
	 * address with insertion sort (sibling sets are small). */
	uint32_t *start = ls_xcalloc(n + 2, sizeof *start);
	uint32_t *child = ls_xmalloc((n + 1) * sizeof *child);
	for (size_t l = 0; l < n; l++)
		start[(size_t)(parent[l] + 1) + 1]++;
	for (size_t i = 0; i <= n; i++)
		start[i + 1] += start[i];
	uint32_t *fill = ls_xmalloc((n + 2) * sizeof *fill);
	memcpy(fill, start, (n + 2) * sizeof *fill);
	for (size_t l = 0; l < n; l++) {
		uint32_t s = (uint32_t)(parent[l] + 1), j = fill[s]++;
		uint64_t key = cfg->blocks[header[l]].start;
		while (j > start[s] && cfg->blocks[header[child[j - 1]]].start > key) {
			child[j] = child[j - 1];
			j--;
		}
		child[j] = (uint32_t)l;
	}
	free(fill);
	/* Preorder with an explicit stack of (list slot, position). */
	uint32_t *st_slot = ls_xmalloc((n + 1) * sizeof *st_slot), *st_pos = ls_xmalloc((n + 1) * sizeof *st_pos);
	size_t d = 0, k = 0;
	st_slot[0] = 0;
	st_pos[0] = start[0];
	for (;;) {
		if (st_pos[d] < start[st_slot[d] + 1]) {
			uint32_t l = child[st_pos[d]++];
			order[k++] = l;
			depth[l] = (unsigned)d + 1;
			d++;
			st_slot[d] = l + 1;
			st_pos[d] = start[l + 1];
		} else if (d-- == 0) {
			break;
		}
	}
	free(st_slot);
	free(st_pos);
	free(start);
	free(child);
}

/* The forest's record of entry loop E (numbered L; OWNER: per block, the
 * entry loop holding it): one entry, its blocks, back edges, exits. */
static void entry_loop_fields(const struct ls_cfg *cfg, const struct entry_loop *E, const int32_t *owner, int32_t l,
                              struct ls_loop *L)
{
	L->header = E->header;
	L->entries = ls_xmalloc(sizeof *L->entries);
	L->entries[0] = E->header;
	L->nentries = 1;
	L->blocks = E->blocks;
	L->nblocks = E->nblocks;
	qsort(L->blocks, L->nblocks, sizeof *L->blocks, cmp_u32);
	size_t capb = 0, capx = 0;
	for (size_t q = 0; q < L->nblocks; q++) {
		const struct ls_block *blk = &cfg->blocks[L->blocks[q]];
		for (uint32_t s = 0; s < blk->nsucc; s++) {
			const struct ls_cfg_edge *ed = &cfg->edges[cfg->succ[blk->first_succ + s]];
			if (owner[ed->to] != l) {
				L->exits = ls_grow(L->exits, &capx, L->nexits + 1, sizeof *L->exits);
				L->exits[L->nexits++] = *ed;
			} else if (ed->to == E->header) {
				L->backedges = ls_grow(L->backedges, &capb, L->nbackedges + 1, sizeof *L->backedges);
				L->backedges[L->nbackedges++] = *ed;
			}
		}
	}
}

static void add_entry_loops(const struct ls_cfg *cfg, struct ls_loop_forest *f)
{
	size_t N = cfg->nblocks, n = f->nloops;
	bool any = false;
	for (size_t l = 0; l < n && !any; l++)
		any = f->loops[l].irreducible;
	if (!any)
		return;
	uint32_t *in_p = ls_xcalloc(N, sizeof *in_p), *mark = ls_xcalloc(N, sizeof *mark);
	uint32_t *body = ls_xmalloc(N * sizeof *body), *work = ls_xmalloc(N * sizeof *work);
	uint32_t *seen = ls_xcalloc(N, sizeof *seen), seen_tag = 0;
	uint8_t *is_header = ls_xcalloc(N, 1);
	for (size_t l = 0; l < n; l++)
		is_header[f->loops[l].header]++;
	size_t budget = 8 * N + 100000; /* blocks walked, in all: linear in practice */
	struct entry_loop *el = NULL;
	size_t nel = 0, cap = 0;
	uint32_t tag = 0;
	for (size_t l = 0; l < n; l++) {
		const struct ls_loop *P = &f->loops[l];
		if (!P->irreducible)
			continue;
		for (size_t i = 0; i < P->nblocks; i++)
			in_p[P->blocks[i]] = (uint32_t)l + 1;
		for (size_t e = 0; e < P->nentries; e++) {
			uint32_t h = P->entries[e];
			/* P's own header, or an entry no other loop is headed by. */
			if (is_header[h] > (e == 0 ? 1 : 0))
				continue;
			size_t m = natural_body(cfg, h, in_p, (uint32_t)l + 1, mark, ++tag, seen, &seen_tag, body, work,
			                        &budget);
			if (!m)
				continue;
			el = ls_grow(el, &cap, nel + 1, sizeof *el);
			el[nel] = (struct entry_loop){ h, (int32_t)l, ls_xmalloc(m * sizeof *body), m };
			memcpy(el[nel].blocks, body, m * sizeof *body);
			nel++;
		}
	}
	free(in_p);
	free(is_header);
	free(seen);
	free(work);
	if (!nel) {
		free(mark);
		free(body);
		free(el);
		return;
	}

	/* The tree with the new loops (numbered n..), blocks' innermost loops. */
	size_t total = n + nel;
	int32_t *parent = ls_xmalloc(total * sizeof *parent);
	uint32_t *header = ls_xmalloc(total * sizeof *header);
	for (size_t l = 0; l < n; l++) {
		parent[l] = f->loops[l].parent;
		header[l] = f->loops[l].header;
	}
	int32_t *owner = (int32_t *)mark; /* per block: the new loop holding it, or -1 */
	for (size_t b = 0; b < N; b++)
		owner[b] = -1;
	for (size_t k = 0; k < nel; k++) {
		parent[n + k] = el[k].parent;
		header[n + k] = el[k].header;
		for (size_t i = 0; i < el[k].nblocks; i++) {
			uint32_t b = el[k].blocks[i];
			owner[b] = (int32_t)(n + k);
			if (f->block_loop[b] == el[k].parent)
				f->block_loop[b] = (int32_t)(n + k);
		}
	}
	for (size_t l = 0; l < n; l++)
		if (parent[l] >= 0 && owner[header[l]] >= 0 && el[owner[header[l]] - (int32_t)n].parent == parent[l])
			parent[l] = owner[header[l]];
	uint32_t *order = ls_xmalloc(total * sizeof *order);
	unsigned *depth = ls_xmalloc(total * sizeof *depth);
	loop_preorder(cfg, header, parent, total, order, depth);

	struct ls_loop *loops = ls_xcalloc(total, sizeof *loops);
	int32_t *newidx = ls_xmalloc(total * sizeof *newidx);
	for (size_t i = 0; i < total; i++)
		newidx[order[i]] = (int32_t)i;
	for (size_t i = 0; i < total; i++) {
		size_t l = order[i];
		struct ls_loop *L = &loops[i];
		if (l < n)
			*L = f->loops[l];
		else
			entry_loop_fields(cfg, &el[l - n], owner, (int32_t)l, L);
		L->parent = parent[l] >= 0 ? newidx[parent[l]] : -1;
		L->depth = depth[l];
	}
	for (size_t b = 0; b < N; b++)
		if (f->block_loop[b] >= 0)
			f->block_loop[b] = newidx[f->block_loop[b]];
	free(f->loops);
	f->loops = loops;
	f->nloops = total;
	free(parent);
	free(header);
	free(order);
	free(depth);
	free(newidx);
	free(mark);
	free(body);
	free(el);
}

/* The depth-first numbering shared by steps 1 to 4. */
struct dfs {
	uint32_t R;         /* reachable blocks */
	uint32_t *number;   /* block -> preorder number, UINT32_MAX if unreachable */
	uint32_t *node;     /* preorder number -> block */
	uint32_t *last;     /* preorder number -> last number of its DFS subtree */
	uint32_t *header;   /* preorder number -> enclosing loop header, UINT32_MAX none */
	uint8_t *type;      /* preorder number -> NONHEADER, SELF, ... */
};

/* Is W a DFS ancestor of V (or V itself)?  Both preorder numbers. */
static inline bool is_ancestor(const struct dfs *d, uint32_t w, uint32_t v)
{
	return w <= v && v <= d->last[w];
}

/* 1. Iterative DFS from the entry: preorder numbers and subtree ends. */
static void dfs_number(const struct ls_cfg *cfg, struct dfs *d)
{
	size_t N = cfg->nblocks;
	d->number = ls_xmalloc(N * sizeof *d->number);
	d->node = ls_xmalloc(N * sizeof *d->node);
	d->last = ls_xmalloc(N * sizeof *d->last);
	uint32_t *stack = ls_xmalloc(N * sizeof *stack);
	uint32_t *next_succ = ls_xcalloc(N, sizeof *next_succ);
	for (size_t i = 0; i < N; i++)
		d->number[i] = UINT32_MAX;
	uint32_t R = 0;
	size_t sp = 0;
	d->number[0] = R;
	d->node[R++] = 0;
	stack[sp++] = 0;
	while (sp) {
		uint32_t v = stack[sp - 1];
		const struct ls_block *b = &cfg->blocks[v];
		if (next_succ[v] < b->nsucc) {
			uint32_t w = cfg->edges[cfg->succ[b->first_succ + next_succ[v]++]].to;
			if (d->number[w] == UINT32_MAX) {
				d->number[w] = R;
				d->node[R++] = w;
				stack[sp++] = w;
			}
		} else {
			d->last[d->number[v]] = R - 1;
			sp--;
		}
	}
	d->R = R;
	free(stack);
	free(next_succ);
}

/* 2. Predecessors by preorder number, back and non-back, in CSR form:
 * those of W are BACKP[BSTART[W] .. BSTART[W+1]) and likewise NONBACKP. */
struct preds {
	uint32_t *bstart, *nstart, *backp, *nonbackp;
};

static void split_preds(const struct ls_cfg *cfg, const struct dfs *d, struct preds *p)
{
	uint32_t R = d->R;
	p->bstart = ls_xcalloc(R + 1, sizeof *p->bstart);
	p->nstart = ls_xcalloc(R + 1, sizeof *p->nstart);
	for (uint32_t w = 0; w < R; w++) {
		const struct ls_block *b = &cfg->blocks[d->node[w]];
		for (uint32_t k = 0; k < b->npred; k++) {
			uint32_t v = d->number[cfg->edges[cfg->pred[b->first_pred + k]].from];
			if (v == UINT32_MAX)
				continue; /* from unreachable code */
			if (is_ancestor(d, w, v))
				p->bstart[w + 1]++;
			else
				p->nstart[w + 1]++;
		}
	}
	for (uint32_t w = 0; w < R; w++) {
		p->bstart[w + 1] += p->bstart[w];
		p->nstart[w + 1] += p->nstart[w];
	}
	p->backp = ls_xmalloc((p->bstart[R] + 1) * sizeof *p->backp);
	p->nonbackp = ls_xmalloc((p->nstart[R] + 1) * sizeof *p->nonbackp);
	uint32_t *bf = ls_xmalloc((R + 1) * sizeof *bf), *nf = ls_xmalloc((R + 1) * sizeof *nf);
	memcpy(bf, p->bstart, R * sizeof *bf);
	memcpy(nf, p->nstart, R * sizeof *nf);
	for (uint32_t w = 0; w < R; w++) {
		const struct ls_block *b = &cfg->blocks[d->node[w]];
		for (uint32_t k = 0; k < b->npred; k++) {
			uint32_t v = d->number[cfg->edges[cfg->pred[b->first_pred + k]].from];
			if (v == UINT32_MAX)
				continue;
			if (is_ancestor(d, w, v))
				p->backp[bf[w]++] = v;
			else
				p->nonbackp[nf[w]++] = v;
		}
	}
	free(bf);
	free(nf);
}

static void free_preds(struct preds *p)
{
	free(p->bstart);
	free(p->nstart);
	free(p->backp);
	free(p->nonbackp);
}

/* The state of the bottom-up collapse (step 3). */
struct collapse {
	uint32_t *uf;         /* union-find: inner loops collapsed into their headers */
	uint32_t *in_body;    /* == w+1: in W's body */
	uint32_t *moved;      /* == w+1: already moved to W */
	uint32_t *extra_head; /* entering nodes moved up to a header: list heads in POOL */
	struct extra *pool;
	size_t npool, cappool;
	uint32_t *body;
};

/* Grows W's body from its back-edge sources already in C->body (NBODY of
 * them) through non-back predecessors; an entering node outside W's subtree
 * makes W irreducible and moves up to W.  Returns the body's size. */
static size_t grow_body(const struct dfs *d, const struct preds *p, struct collapse *c, uint32_t w, size_t nbody)
{
	for (size_t i = 0; i < nbody; i++) {
		uint32_t x = c->body[i];
		/* x's own non-back predecessors, then the entering nodes
		 * moved up to x when x was a header. */
		uint32_t k = p->nstart[x], kend = p->nstart[x + 1], e = c->extra_head[x];
		for (;;) {
			uint32_t y;
			if (k < kend)
				y = p->nonbackp[k++];
			else if (e != UINT32_MAX) {
				y = c->pool[e].node;
				e = c->pool[e].next;
			} else
				break;
			uint32_t yr = uf_find(c->uf, y);
			if (!is_ancestor(d, w, yr)) {
				d->type[w] = IRREDUCIBLE;
				if (c->moved[yr] != w + 1) {
					c->moved[yr] = w + 1;
					c->pool = ls_grow(c->pool, &c->cappool, c->npool + 1, sizeof *c->pool);
					c->pool[c->npool] = (struct extra){ yr, c->extra_head[w] };
					c->extra_head[w] = (uint32_t)c->npool++;
				}
			} else if (yr != w && c->in_body[yr] != w + 1) {
				c->in_body[yr] = w + 1;
				c->body[nbody++] = yr;
			}
		}
	}
	return nbody;
}

/* 3. Headers bottom-up: fills D->type and D->header. */
static void collapse_loops(const struct dfs *d, const struct preds *p)
{
	uint32_t R = d->R;
	struct collapse c = {
		.uf = ls_xmalloc(R * sizeof *c.uf),
		.in_body = ls_xmalloc(R * sizeof *c.in_body),
		.moved = ls_xmalloc(R * sizeof *c.moved),
		.extra_head = ls_xmalloc(R * sizeof *c.extra_head),
		.body = ls_xmalloc(R * sizeof *c.body),
	};
	for (uint32_t i = 0; i < R; i++) {
		c.uf[i] = i;
		d->header[i] = UINT32_MAX;
		c.in_body[i] = c.moved[i] = 0;
		c.extra_head[i] = UINT32_MAX;
	}
	for (uint32_t w = R; w-- > 0;) {
		size_t nbody = 0;
		for (uint32_t k = p->bstart[w]; k < p->bstart[w + 1]; k++) {
			uint32_t v = p->backp[k];
			if (v == w) {
				d->type[w] = SELF;
				continue;
			}
			uint32_t x = uf_find(c.uf, v);
			if (c.in_body[x] != w + 1 && x != w) {
				c.in_body[x] = w + 1;
				c.body[nbody++] = x;
			}
		}
		if (nbody)
			d->type[w] = REDUCIBLE;
		nbody = grow_body(d, p, &c, w, nbody);
		for (size_t i = 0; i < nbody; i++) {
			d->header[c.body[i]] = w;
			c.uf[c.body[i]] = w;
		}
	}
	free(c.in_body);
	free(c.moved);
	free(c.extra_head);
	free(c.pool);
	free(c.body);
	free(c.uf);
}

/* The loop tree's child lists in CSR form, keyed by parent header preorder
 * number + 1 (0: the roots), each sorted by header address.  Returns the
 * list starts; *CHILDREN gets the NLOOPS headers. */
static uint32_t *loop_children(const struct ls_cfg *cfg, const struct dfs *d, size_t nloops, uint32_t **children)
{
	uint32_t R = d->R;
	uint32_t *hdrs = ls_xmalloc(nloops * sizeof *hdrs);
	size_t nh = 0;
	for (uint32_t w = 0; w < R; w++)
		if (d->type[w] != NONHEADER)
			hdrs[nh++] = w;
	uint32_t *cstart = ls_xcalloc(R + 2, sizeof *cstart);
	for (size_t i = 0; i < nh; i++) {
		uint32_t p = d->header[hdrs[i]];
		cstart[(p == UINT32_MAX ? 0 : p + 1) + 1]++;
	}
	for (uint32_t i = 0; i <= R; i++)
		cstart[i + 1] += cstart[i];
	uint32_t *ch = ls_xmalloc(nh * sizeof *ch);
	uint32_t *fill = ls_xmalloc((R + 1) * sizeof *fill);
	memcpy(fill, cstart, (R + 1) * sizeof *fill);
	for (size_t i = 0; i < nh; i++) {
		uint32_t p = d->header[hdrs[i]];
		uint32_t slot = p == UINT32_MAX ? 0 : p + 1;
		ch[fill[slot]++] = hdrs[i];
	}
	free(fill);
	free(hdrs);
	/* Sort siblings by header address (insertion sort per list; lists are
	 * short, and already nearly sorted). */
	for (uint32_t s = 0; s <= R; s++) {
		for (uint32_t i = cstart[s] + 1; i < cstart[s + 1]; i++) {
			uint32_t c = ch[i];
			uint64_t key = cfg->blocks[d->node[c]].start;
			uint32_t j = i;
			while (j > cstart[s] && cfg->blocks[d->node[ch[j - 1]]].start > key) {
				ch[j] = ch[j - 1];
				j--;
			}
			ch[j] = c;
		}
	}
	*children = ch;
	return cstart;
}

/* 4. The forest: F's loops numbered in preorder of the loop tree (header,
 * parent, depth), LOOP_OF_HDR[header preorder number] its loop, and
 * SUBTREE_END[loop] one past the last loop nested in it. */
static void number_loops(const struct ls_cfg *cfg, const struct dfs *d, size_t nloops, struct ls_loop_forest *f,
                         int32_t *loop_of_hdr, uint32_t *subtree_end)
{
	uint32_t *children;
	uint32_t *cstart = loop_children(cfg, d, nloops, &children);
	f->loops = ls_xcalloc(nloops, sizeof *f->loops);
	f->nloops = nloops;
	/* Preorder walk: stack of (list slot, position). */
	uint32_t *st_slot = ls_xmalloc((nloops + 1) * sizeof *st_slot);
	uint32_t *st_pos = ls_xmalloc((nloops + 1) * sizeof *st_pos);
	int32_t *st_loop = ls_xmalloc((nloops + 1) * sizeof *st_loop);
	size_t depth = 0, next = 0;
	st_slot[0] = 0;
	st_pos[0] = cstart[0];
	st_loop[0] = -1;
	for (;;) {
		if (st_pos[depth] < cstart[st_slot[depth] + 1]) {
			uint32_t h = children[st_pos[depth]++];
			struct ls_loop *L = &f->loops[next];
			L->header = d->node[h];
			L->parent = st_loop[depth];
			L->depth = (unsigned)depth + 1;
			loop_of_hdr[h] = (int32_t)next;
			depth++;
			st_slot[depth] = h + 1;
			st_pos[depth] = cstart[h + 1];
			st_loop[depth] = (int32_t)next;
			next++;
		} else {
			if (st_loop[depth] >= 0)
				subtree_end[st_loop[depth]] = (uint32_t)next;
			if (depth == 0)
				break;
			depth--;
		}
	}
	free(st_slot);
	free(st_pos);
	free(st_loop);
	free(cstart);
	free(children);
}

/* Is block B in loop L or a loop nested in it? */
#define IN_LOOP(l, b) (f->block_loop[b] >= (l) && (uint32_t)f->block_loop[b] < subtree_end[l])

/* Loop L's entries: the header, then blocks with a reachable predecessor
 * outside (marked in IS_ENTRY). */
static void loop_entries(const struct ls_cfg *cfg, const struct dfs *d, const struct ls_loop_forest *f,
                         const uint32_t *subtree_end, size_t l, struct loop_build *B, uint8_t *is_entry)
{
	uint32_t hb = f->loops[l].header;
	B->entries = ls_grow(B->entries, &B->capentries, 1, sizeof *B->entries);
	B->entries[B->nentries++] = hb;
	is_entry[hb] = 1;
	for (size_t i = 0; i < B->n; i++) {
		uint32_t b = B->blocks[i];
		if (b == hb)
			continue;
		const struct ls_block *blk = &cfg->blocks[b];
		for (uint32_t k = 0; k < blk->npred; k++) {
			uint32_t p = cfg->edges[cfg->pred[blk->first_pred + k]].from;
			if (d->number[p] != UINT32_MAX && !IN_LOOP(l, p)) {
				B->entries = ls_grow(B->entries, &B->capentries, B->nentries + 1, sizeof *B->entries);
				B->entries[B->nentries++] = b;
				is_entry[b] = 1;
				break;
			}
		}
	}
}

/* Every loop's blocks (nested ones included, by block index), entries,
 * back edges (into an entry from inside) and exits. */
static void loop_members(const struct ls_cfg *cfg, const struct dfs *d, struct ls_loop_forest *f,
                         const uint32_t *subtree_end)
{
	size_t N = cfg->nblocks, nloops = f->nloops;
	struct loop_build *lb = ls_xcalloc(nloops, sizeof *lb);
	for (size_t bi = 0; bi < N; bi++)
		for (int32_t l = f->block_loop[bi]; l >= 0; l = f->loops[l].parent) {
			lb[l].blocks = ls_grow(lb[l].blocks, &lb[l].cap, lb[l].n + 1, sizeof *lb[l].blocks);
			lb[l].blocks[lb[l].n++] = (uint32_t)bi;
		}
	uint8_t *is_entry = ls_xcalloc(N, 1);
	for (size_t l = 0; l < nloops; l++) {
		struct loop_build *B = &lb[l];
		uint32_t hb = f->loops[l].header;
		loop_entries(cfg, d, f, subtree_end, l, B, is_entry);
		for (size_t i = 0; i < B->n; i++) {
			const struct ls_block *blk = &cfg->blocks[B->blocks[i]];
			for (uint32_t k = 0; k < blk->nsucc; k++) {
				const struct ls_cfg_edge *e = &cfg->edges[cfg->succ[blk->first_succ + k]];
				if (!IN_LOOP(l, e->to)) {
					B->exits = ls_grow(B->exits, &B->capexits, B->nexits + 1, sizeof *B->exits);
					B->exits[B->nexits++] = *e;
				} else if (is_entry[e->to]) {
					B->back = ls_grow(B->back, &B->capback, B->nback + 1, sizeof *B->back);
					B->back[B->nback++] = *e;
				}
			}
		}
		for (size_t i = 0; i < B->nentries; i++)
			is_entry[B->entries[i]] = 0;
		/* The entries after the header in address order. */
		if (B->nentries > 2)
			qsort(B->entries + 1, B->nentries - 1, sizeof *B->entries, cmp_u32);

		struct ls_loop *L = &f->loops[l];
		L->irreducible = d->type[d->number[hb]] == IRREDUCIBLE || B->nentries > 1;
		L->blocks = B->blocks;
		L->nblocks = B->n;
		L->entries = B->entries;
		L->nentries = B->nentries;
		L->backedges = B->back;
		L->nbackedges = B->nback;
		L->exits = B->exits;
		L->nexits = B->nexits;
	}
	free(is_entry);
	free(lb);
}
#undef IN_LOOP

static void free_dfs(struct dfs *d)
{
	free(d->number);
	free(d->node);
	free(d->last);
	free(d->header);
	free(d->type);
}

/* The steps of the header comment, in order. */
int ls_loop_forest_build(const struct ls_cfg *cfg, struct ls_loop_forest *f)
{
	memset(f, 0, sizeof *f);
	size_t N = cfg->nblocks;
	f->block_loop = ls_xmalloc((N + 1) * sizeof *f->block_loop);
	for (size_t i = 0; i < N; i++)
		f->block_loop[i] = -1;
	if (N == 0)
		return 0;

	struct dfs d = { 0 };
	dfs_number(cfg, &d);
	d.header = ls_xmalloc(d.R * sizeof *d.header);
	d.type = ls_xcalloc(d.R, 1);
	struct preds p;
	split_preds(cfg, &d, &p);
	collapse_loops(&d, &p);
	free_preds(&p);

	size_t nloops = 0;
	for (uint32_t w = 0; w < d.R; w++)
		if (d.type[w] != NONHEADER)
			nloops++;
	if (nloops == 0) {
		free_dfs(&d);
		return 0;
	}
	int32_t *loop_of_hdr = ls_xmalloc(d.R * sizeof *loop_of_hdr);
	uint32_t *subtree_end = ls_xmalloc(nloops * sizeof *subtree_end);
	number_loops(cfg, &d, nloops, f, loop_of_hdr, subtree_end);
	/* Innermost loop of every reachable block. */
	for (uint32_t v = 0; v < d.R; v++) {
		uint32_t h = d.type[v] != NONHEADER ? v : d.header[v];
		if (h != UINT32_MAX)
			f->block_loop[d.node[v]] = loop_of_hdr[h];
	}
	adopt_padding(cfg, f, d.number);
	loop_members(cfg, &d, f, subtree_end);
	free(loop_of_hdr);
	free(subtree_end);
	free_dfs(&d);
	merge_irreducible(f, N);
	add_entry_loops(cfg, f);
	return 0;
}

void ls_loop_forest_free(struct ls_loop_forest *f)
{
	for (size_t i = 0; i < f->nloops; i++) {
		free(f->loops[i].entries);
		free(f->loops[i].backedges);
		free(f->loops[i].exits);
		free(f->loops[i].blocks);
	}
	free(f->loops);
	free(f->block_loop);
	memset(f, 0, sizeof *f);
}
