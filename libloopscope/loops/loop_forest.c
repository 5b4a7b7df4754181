/* loop_forest.c - the loop nesting forest of a CFG (Havlak, "Nesting of
 * reducible and irreducible loops", TOPLAS 1997), irreducible loops with
 * all their entries.
 *
 * 1. Iterative depth-first search from the entry: preorder numbers and, per
 *    node, the last preorder number of its subtree (ancestor test in O(1)).
 *    No recursion: procedures have 100k blocks.  The same walk gives the
 *    lowest common DFS ancestor of the two ends of every edge (Tarjan's
 *    offline LCA, union-find).
 * 2. Predecessors split into back-edge sources (the node is their DFS
 *    ancestor) and the others.
 * 3. Headers bottom-up (decreasing preorder): the body of W is what reaches
 *    a back-edge source of W backwards through non-back predecessors, with
 *    inner loops collapsed into their headers by union-find (path halving,
 *    so FIND is near-constant).  A predecessor Y outside W's DFS subtree
 *    enters W's loop at a block other than W: the loop is irreducible.
 *    Havlak moves such an edge up to W, to be looked at again by every
 *    enclosing header until one is an ancestor of Y - once per level, so a
 *    nest of irreducible loops cost O(n^2) (129 MB for 2,500 blocks, 6.9 GB
 *    for 20,000).  Here the edge goes, once, into a mergeable heap keyed by
 *    LCA(X, Y): a header W is an ancestor of Y exactly when W <= that key,
 *    so W pops the entries with keys >= W (Y joins its body) and passes the
 *    rest, all at once, to its parent by melding heaps; an irreducible loop
 *    is one whose heap is not empty.  O((N + E) log E) in all.
 * 4. Irreducible loops merged (see merge_irreducible) on the tree of
 *    headers, before any per-loop list exists.
 * 5. The forest: loops in preorder (parents before children, siblings by
 *    header address), each with its header, entries (header first), back
 *    edges (into any entry from inside), exits and all its blocks.
 * 6. A procedure with an irreducible loop is searched again on Havlak's
 *    normalized graph (see normalize): a natural loop inside an irreducible
 *    region is then found as a loop inside it whatever the DFS order, for
 *    every handler of an interpreter alike.
 *
 * Loops are natural loops (and Havlak's irreducible ones): a block that
 * never gets back to the header - the exit() that ends a loop, a C++
 * cleanup ending in _Unwind_Resume - is outside, reached by an exit edge,
 * as in LLVM's LoopInfo.  Only unreachable alignment padding between a
 * loop's blocks is put in the loop of the block before it.
 */
#include "loops/loop_forest.h"

#include <stdlib.h>
#include <string.h>

enum { NONHEADER, SELF, REDUCIBLE, IRREDUCIBLE };

#define NONE UINT32_MAX

static uint32_t uf_find(uint32_t *uf, uint32_t x)
{
	while (uf[x] != x) {
		uf[x] = uf[uf[x]];
		x = uf[x];
	}
	return x;
}

/* ---- entering edges waiting for their header: leftist max-heaps ---------- */

struct heap_entry {
	uint32_t key;          /* preorder of LCA(target, source) */
	uint32_t node;         /* the source, Y */
	uint32_t left, right;  /* entries; 0: none */
	uint32_t rank;         /* length of the right spine */
};

struct heaps {
	struct heap_entry *v;  /* v[0] unused: 0 is the empty heap */
	size_t n, cap;
};

static uint32_t heap_new(struct heaps *h, uint32_t key, uint32_t node)
{
	h->v = ls_grow(h->v, &h->cap, h->n + 1, sizeof *h->v);
	h->v[h->n] = (struct heap_entry){ key, node, 0, 0, 1 };
	return (uint32_t)h->n++;
}

/* Recursion along right spines only: depth <= 2 log2(entries). */
static uint32_t heap_meld(struct heaps *h, uint32_t a, uint32_t b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (h->v[a].key < h->v[b].key) {
		uint32_t t = a;
		a = b;
		b = t;
	}
	h->v[a].right = heap_meld(h, h->v[a].right, b);
	struct heap_entry *e = &h->v[a];
	uint32_t rl = e->left ? h->v[e->left].rank : 0, rr = e->right ? h->v[e->right].rank : 0;
	if (rl < rr) {
		uint32_t t = e->left;
		e->left = e->right;
		e->right = t;
		rr = rl;
	}
	e->rank = rr + 1;
	return a;
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
 * never merged, so reducible code keeps Havlak's (and LLVM's) forest.
 *
 * It is decided on the tree of headers, before any loop lists its blocks:
 * L holds an entry of its parent P exactly when an edge Y -> X with X in L
 * comes from outside P, i.e. when LCA(X, Y) is above P's header in
 * preorder; MINKEY[L] is the least such LCA over the edges entering L. */
static void merge_irreducible(struct ls_loop *loops, size_t *nloops, const uint32_t *hdr_pre,
			      uint8_t *irreducible, const uint32_t *minkey, int32_t *newidx)
{
	size_t n = *nloops;
	int32_t *final_parent = ls_xmalloc((n + 1) * sizeof *final_parent);
	uint8_t *merged = ls_xcalloc(n + 1, 1);
	for (size_t l = 0; l < n; l++) {       /* preorder: parents first */
		int32_t p = loops[l].parent;
		if (p >= 0 && merged[p])
			p = final_parent[p];
		final_parent[l] = p;
		if (p >= 0 && irreducible[l] && irreducible[p] && minkey[l] < hdr_pre[p])
			merged[l] = 1;
	}
	/* Renumber the survivors (preorder is kept), fix parents and depths. */
	size_t k = 0;
	for (size_t l = 0; l < n; l++) {
		if (merged[l]) {
			newidx[l] = -1;
			continue;
		}
		newidx[l] = (int32_t)k;
		struct ls_loop L = loops[l];
		L.parent = final_parent[l] >= 0 ? newidx[final_parent[l]] : -1;
		L.depth = L.parent >= 0 ? loops[L.parent].depth + 1 : 1;
		irreducible[k] = irreducible[l];
		loops[k++] = L;
	}
	/* A merged loop's blocks go to the loop it was merged into. */
	for (size_t l = 0; l < n; l++)
		if (merged[l])
			newidx[l] = newidx[final_parent[l]];
	*nloops = k;
	free(final_parent);
	free(merged);
}

/* ---- the build ------------------------------------------------------------ */

/* The graph the search runs on: the CFG's blocks (nodes 0..nblocks-1)
 * and, after the normalization, one node in front of each header of a
 * natural loop hidden in an irreducible region (see normalize). */
struct graph {
	size_t n, nblocks;
	size_t nedges;
	uint32_t *from, *to;         /* per edge */
	uint32_t *sstart, *succ;     /* CSR: edges out of each node, in the CFG's order */
	uint32_t *pstart, *pred;     /* CSR: edges into each node */
	uint32_t *real;              /* per node: its block (a new node: the header it leads to) */
};

struct build {
	const struct ls_cfg *cfg;
	const struct graph *g;
	size_t N;                /* nodes */
	uint32_t R;              /* reachable blocks (preorder numbers 0..R-1) */
	uint32_t *number;        /* block -> preorder, NONE if unreachable */
	uint32_t *node;          /* preorder -> block */
	uint32_t *last;          /* preorder -> last preorder of its subtree */
	uint32_t *edge_lca;      /* edge -> preorder of LCA(from, to), NONE if not reached */
	uint32_t *bstart, *backp;          /* back-edge sources per preorder (CSR) */
	uint32_t *nstart, *nonbackp, *nlca; /* other predecessors, with the edge's LCA */
	uint32_t *header;        /* preorder -> enclosing header's preorder, NONE */
	uint8_t *type;
	uint32_t *minkey;        /* preorder -> least LCA of an edge entering its loop from outside */
};

#define IS_ANCESTOR(b, w, v) ((w) <= (v) && (v) <= (b)->last[w])

/* 1. DFS preorder, subtree ends, and every edge's LCA (Tarjan's offline
 *    algorithm: an edge is answered when its second end is first seen). */
static void dfs(struct build *b)
{
	const struct graph *g = b->g;
	size_t N = b->N;
	b->number = ls_xmalloc(N * sizeof *b->number);
	b->node = ls_xmalloc(N * sizeof *b->node);
	b->last = ls_xmalloc(N * sizeof *b->last);
	b->edge_lca = ls_xmalloc((g->nedges + 1) * sizeof *b->edge_lca);
	uint32_t *stack = ls_xmalloc(N * sizeof *stack);
	uint32_t *next_succ = ls_xcalloc(N, sizeof *next_succ);
	uint32_t *luf = ls_xmalloc(N * sizeof *luf), *anc = ls_xmalloc(N * sizeof *anc);
	for (size_t i = 0; i < N; i++)
		b->number[i] = NONE;
	for (size_t e = 0; e < g->nedges; e++)
		b->edge_lca[e] = NONE;
	uint32_t R = 0;
	size_t sp = 0;
	for (uint32_t u = 0;;) { /* u: the block being entered, or NONE */
		if (u != NONE) {
			b->number[u] = R;
			b->node[R++] = u;
			luf[u] = anc[u] = u;
			stack[sp++] = u;
			for (uint32_t k = g->pstart[u]; k < g->pstart[u + 1]; k++) {
				uint32_t e = g->pred[k], y = g->from[e];
				if (y != u && b->number[y] != NONE)
					b->edge_lca[e] = b->number[anc[uf_find(luf, y)]];
			}
			for (uint32_t k = g->sstart[u]; k < g->sstart[u + 1]; k++) {
				uint32_t e = g->succ[k], x = g->to[e];
				if (x != u && b->number[x] != NONE)
					b->edge_lca[e] = b->number[anc[uf_find(luf, x)]];
			}
		}
		if (!sp)
			break;
		uint32_t v = stack[sp - 1];
		u = NONE;
		if (next_succ[v] < g->sstart[v + 1] - g->sstart[v]) {
			uint32_t w = g->to[g->succ[g->sstart[v] + next_succ[v]++]];
			if (b->number[w] == NONE)
				u = w;
		} else {
			b->last[b->number[v]] = R - 1;
			sp--;
			if (sp) { /* v's subtree joins its parent's set */
				uint32_t p = stack[sp - 1], rp = uf_find(luf, p);
				luf[uf_find(luf, v)] = rp;
				anc[rp] = p;
			}
		}
	}
	b->R = R;
	free(stack);
	free(next_succ);
	free(luf);
	free(anc);
}

/* 2. Predecessors by preorder number, back and non-back (CSR). */
static void split_preds(struct build *b)
{
	const struct graph *g = b->g;
	uint32_t R = b->R;
	b->bstart = ls_xcalloc(R + 1, sizeof *b->bstart);
	b->nstart = ls_xcalloc(R + 1, sizeof *b->nstart);
	for (int pass = 0; pass < 2; pass++) {
		uint32_t *bf = NULL, *nf = NULL;
		if (pass) {
			for (uint32_t w = 0; w < R; w++) {
				b->bstart[w + 1] += b->bstart[w];
				b->nstart[w + 1] += b->nstart[w];
			}
			b->backp = ls_xmalloc((b->bstart[R] + 1) * sizeof *b->backp);
			b->nonbackp = ls_xmalloc((b->nstart[R] + 1) * sizeof *b->nonbackp);
			b->nlca = ls_xmalloc((b->nstart[R] + 1) * sizeof *b->nlca);
			bf = ls_xmalloc((R + 1) * sizeof *bf);
			nf = ls_xmalloc((R + 1) * sizeof *nf);
			memcpy(bf, b->bstart, R * sizeof *bf);
			memcpy(nf, b->nstart, R * sizeof *nf);
		}
		for (uint32_t w = 0; w < R; w++) {
			uint32_t x = b->node[w];
			for (uint32_t k = g->pstart[x]; k < g->pstart[x + 1]; k++) {
				uint32_t e = g->pred[k];
				uint32_t v = b->number[g->from[e]];
				if (v == NONE)
					continue; /* from unreachable code */
				bool back = IS_ANCESTOR(b, w, v);
				if (!pass) {
					(back ? b->bstart : b->nstart)[w + 1]++;
				} else if (back) {
					b->backp[bf[w]++] = v;
				} else {
					b->nlca[nf[w]] = b->edge_lca[e];
					b->nonbackp[nf[w]++] = v;
				}
			}
		}
		free(bf);
		free(nf);
	}
}

/* 3. Headers bottom-up; see the file's comment. */
static void collapse(struct build *b)
{
	uint32_t R = b->R;
	uint32_t *uf = ls_xmalloc(R * sizeof *uf);
	uint32_t *in_body = ls_xcalloc(R, sizeof *in_body);  /* == w+1: in W's body */
	uint32_t *heap_of = ls_xcalloc(R, sizeof *heap_of);  /* a header's pending entries */
	uint32_t *body = ls_xmalloc(R * sizeof *body);
	struct heaps hp = { 0 };
	heap_new(&hp, 0, 0); /* entry 0: the empty heap */
	b->header = ls_xmalloc(R * sizeof *b->header);
	b->type = ls_xcalloc(R, 1);
	b->minkey = ls_xmalloc(R * sizeof *b->minkey);
	for (uint32_t i = 0; i < R; i++) {
		uf[i] = i;
		b->header[i] = b->minkey[i] = NONE;
	}
#define ADD_TO_BODY(y) do { \
		uint32_t yr_ = uf_find(uf, (y)); \
		if (yr_ != w && in_body[yr_] != w + 1) { \
			in_body[yr_] = w + 1; \
			body[nbody++] = yr_; \
		} \
	} while (0)
	for (uint32_t w = R; w-- > 0;) {
		size_t nbody = 0;
		for (uint32_t k = b->bstart[w]; k < b->bstart[w + 1]; k++) {
			if (b->backp[k] == w)
				b->type[w] = SELF;
			else
				ADD_TO_BODY(b->backp[k]);
		}
		if (nbody)
			b->type[w] = REDUCIBLE;
		uint32_t heap = 0, minkey = NONE;
		for (size_t i = 0; i < nbody; i++) {
			uint32_t x = body[i];
			for (uint32_t k = b->nstart[x]; k < b->nstart[x + 1]; k++) {
				uint32_t y = b->nonbackp[k];
				if (IS_ANCESTOR(b, w, y)) {
					ADD_TO_BODY(y);
				} else { /* enters W's loop at X: waits for a header above Y's LCA */
					heap = heap_meld(&hp, heap, heap_new(&hp, b->nlca[k], y));
					if (b->nlca[k] < minkey)
						minkey = b->nlca[k];
				}
			}
			/* X was a header: its entering edges from inside W join W's
			 * body; the others are W's too, and wait further up. */
			uint32_t hx = heap_of[x];
			while (hx && hp.v[hx].key >= w) {
				uint32_t y = hp.v[hx].node;
				hx = heap_meld(&hp, hp.v[hx].left, hp.v[hx].right);
				ADD_TO_BODY(y);
			}
			if (hx) {
				heap = heap_meld(&hp, heap, hx);
				if (b->minkey[x] < minkey)
					minkey = b->minkey[x];
			}
			heap_of[x] = 0;
		}
		if (heap)
			b->type[w] = IRREDUCIBLE;
		heap_of[w] = heap;
		b->minkey[w] = minkey;
		for (size_t i = 0; i < nbody; i++) {
			b->header[body[i]] = w;
			uf[body[i]] = w;
		}
	}
#undef ADD_TO_BODY
	/* For the merge: edges into the header itself from outside count too. */
	for (uint32_t w = 0; w < R; w++)
		for (uint32_t k = b->nstart[w]; k < b->nstart[w + 1]; k++)
			if (b->nlca[k] < b->minkey[w])
				b->minkey[w] = b->nlca[k];
	free(uf);
	free(in_body);
	free(heap_of);
	free(body);
	free(hp.v);
}

/* 4. The loops in preorder of the loop tree (siblings by header address):
 *    header, parent, depth; LOOP_OF_HDR maps a header's preorder to its loop. */
static size_t number_loops(const struct build *b, struct ls_loop **out, int32_t *loop_of_hdr, uint32_t **hdr_pre)
{
	const struct ls_cfg *cfg = b->cfg;
	const uint32_t *real = b->g->real;
	uint32_t R = b->R;
	size_t nloops = 0;
	for (uint32_t w = 0; w < R; w++)
		nloops += b->type[w] != NONHEADER;
	*out = NULL;
	if (!nloops)
		return 0;
	/* child lists: CSR keyed by parent header preorder (+1, 0 = roots). */
	uint32_t *cstart = ls_xcalloc(R + 2, sizeof *cstart);
	for (uint32_t w = 0; w < R; w++)
		if (b->type[w] != NONHEADER)
			cstart[(b->header[w] == NONE ? 0 : b->header[w] + 1) + 1]++;
	for (uint32_t i = 0; i <= R; i++)
		cstart[i + 1] += cstart[i];
	uint32_t *children = ls_xmalloc(nloops * sizeof *children);
	uint32_t *fill = ls_xmalloc((R + 1) * sizeof *fill);
	memcpy(fill, cstart, (R + 1) * sizeof *fill);
	for (uint32_t w = 0; w < R; w++)
		if (b->type[w] != NONHEADER)
			children[fill[b->header[w] == NONE ? 0 : b->header[w] + 1]++] = w;
	free(fill);
	/* Siblings by header address (insertion sort: short, nearly sorted lists). */
	for (uint32_t sl = 0; sl <= R; sl++)
		for (uint32_t i = cstart[sl] + 1; i < cstart[sl + 1]; i++) {
			uint32_t c = children[i], j = i;
			uint64_t key = cfg->blocks[real[b->node[c]]].start;
			for (; j > cstart[sl] && cfg->blocks[real[b->node[children[j - 1]]]].start > key; j--)
				children[j] = children[j - 1];
			children[j] = c;
		}
	struct ls_loop *loops = ls_xcalloc(nloops, sizeof *loops);
	*hdr_pre = ls_xmalloc(nloops * sizeof **hdr_pre);
	uint32_t *st_slot = ls_xmalloc((nloops + 1) * sizeof *st_slot);
	uint32_t *st_pos = ls_xmalloc((nloops + 1) * sizeof *st_pos);
	int32_t *st_loop = ls_xmalloc((nloops + 1) * sizeof *st_loop);
	size_t d = 0, next = 0;
	st_slot[0] = 0;
	st_pos[0] = cstart[0];
	st_loop[0] = -1;
	for (;;) {
		if (st_pos[d] < cstart[st_slot[d] + 1]) {
			uint32_t h = children[st_pos[d]++];
			loops[next] = (struct ls_loop){ .header = real[b->node[h]], .parent = st_loop[d], .depth = (unsigned)d + 1 };
			loop_of_hdr[h] = (int32_t)next;
			(*hdr_pre)[next] = h;
			d++;
			st_slot[d] = h + 1;
			st_pos[d] = cstart[h + 1];
			st_loop[d] = (int32_t)next++;
		} else if (d-- == 0) {
			break;
		}
	}
	free(st_slot);
	free(st_pos);
	free(st_loop);
	free(cstart);
	free(children);
	*out = loops;
	return nloops;
}

/* 5. Blocks (nested loops' included), entries, back edges and exits of
 *    every loop of F. */
static void fill_loops(const struct ls_cfg *cfg, struct ls_loop_forest *f, const uint32_t *number, const uint8_t *irr)
{
	size_t N = cfg->nblocks, nloops = f->nloops;
	/* The preorder of the loop tree makes each loop's subtree a range. */
	uint32_t *subtree_end = ls_xmalloc((nloops + 1) * sizeof *subtree_end);
	uint32_t *st = ls_xmalloc((nloops + 1) * sizeof *st);
	size_t sp = 0;
	for (size_t l = 0; l <= nloops; l++) {
		unsigned depth = l < nloops ? f->loops[l].depth : 0;
		while (sp && f->loops[st[sp - 1]].depth >= depth)
			subtree_end[st[--sp]] = (uint32_t)l;
		if (l < nloops)
			st[sp++] = (uint32_t)l;
	}
	free(st);
	struct loop_build *lb = ls_xcalloc(nloops, sizeof *lb);
	for (size_t bi = 0; bi < N; bi++)
		for (int32_t l = f->block_loop[bi]; l >= 0; l = f->loops[l].parent) {
			lb[l].blocks = ls_grow(lb[l].blocks, &lb[l].cap, lb[l].n + 1, sizeof *lb[l].blocks);
			lb[l].blocks[lb[l].n++] = (uint32_t)bi;
		}
#define IN_LOOP(l, blk) (f->block_loop[blk] >= (int32_t)(l) && (uint32_t)f->block_loop[blk] < subtree_end[l])
	uint8_t *is_entry = ls_xcalloc(N, 1);
	for (size_t l = 0; l < nloops; l++) {
		struct loop_build *B = &lb[l];
		uint32_t hb = f->loops[l].header;
		/* Entries: the header, then blocks with a reachable predecessor outside. */
		B->entries = ls_grow(B->entries, &B->capentries, 1, sizeof *B->entries);
		B->entries[B->nentries++] = hb;
		is_entry[hb] = 1;
		for (size_t i = 0; i < B->n; i++) {
			uint32_t bk = B->blocks[i];
			if (bk == hb)
				continue;
			const struct ls_block *blk = &cfg->blocks[bk];
			for (uint32_t k = 0; k < blk->npred; k++) {
				uint32_t p = cfg->edges[cfg->pred[blk->first_pred + k]].from;
				if (number[p] != NONE && !IN_LOOP(l, p)) {
					B->entries = ls_grow(B->entries, &B->capentries, B->nentries + 1, sizeof *B->entries);
					B->entries[B->nentries++] = bk;
					is_entry[bk] = 1;
					break;
				}
			}
		}
		/* Back edges (into an entry from inside) and exits. */
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
		L->irreducible = irr[l] || B->nentries > 1;
		L->blocks = B->blocks;
		L->nblocks = B->n;
		L->entries = B->entries;
		L->nentries = B->nentries;
		L->backedges = B->back;
		L->nbackedges = B->nback;
		L->exits = B->exits;
		L->nexits = B->nexits;
	}
#undef IN_LOOP
	free(is_entry);
	free(lb);
	free(subtree_end);
}

/* ---- the graph, and the normalization ------------------------------------ */

/* G's CSR lists from its edges. */
static void graph_index(struct graph *g)
{
	size_t n = g->n, ne = g->nedges;
	g->sstart = ls_xcalloc(n + 2, sizeof *g->sstart);
	g->pstart = ls_xcalloc(n + 2, sizeof *g->pstart);
	g->succ = ls_xmalloc((ne + 1) * sizeof *g->succ);
	g->pred = ls_xmalloc((ne + 1) * sizeof *g->pred);
	for (size_t e = 0; e < ne; e++) {
		g->sstart[g->from[e] + 2]++;
		g->pstart[g->to[e] + 2]++;
	}
	for (size_t i = 2; i < n + 2; i++) {
		g->sstart[i] += g->sstart[i - 1];
		g->pstart[i] += g->pstart[i - 1];
	}
	for (size_t e = 0; e < ne; e++) { /* stable: each node's edges keep the CFG's order */
		g->succ[g->sstart[g->from[e] + 1]++] = (uint32_t)e;
		g->pred[g->pstart[g->to[e] + 1]++] = (uint32_t)e;
	}
}

static void graph_of_cfg(const struct ls_cfg *cfg, struct graph *g)
{
	size_t n = cfg->nblocks;
	*g = (struct graph){ .n = n, .nblocks = n };
	/* Edges in the order of the blocks' successor lists: the DFS follows it. */
	g->nedges = 0;
	for (size_t b = 0; b < n; b++)
		g->nedges += cfg->blocks[b].nsucc;
	g->from = ls_xmalloc((g->nedges + 1) * sizeof *g->from);
	g->to = ls_xmalloc((g->nedges + 1) * sizeof *g->to);
	size_t e = 0;
	for (size_t b = 0; b < n; b++)
		for (uint32_t k = 0; k < cfg->blocks[b].nsucc; k++, e++) {
			g->from[e] = (uint32_t)b;
			g->to[e] = cfg->edges[cfg->succ[cfg->blocks[b].first_succ + k]].to;
		}
	g->real = ls_xmalloc((n + 1) * sizeof *g->real);
	for (size_t i = 0; i < n; i++)
		g->real[i] = (uint32_t)i;
	graph_index(g);
}

static void graph_free(struct graph *g)
{
	free(g->from);
	free(g->to);
	free(g->sstart);
	free(g->succ);
	free(g->pstart);
	free(g->pred);
	free(g->real);
}

/* LT's EVAL with path compression, iteratively (paths are long in a
 * procedure of 100k blocks): the node of least semidominator on V's path
 * up the forest LINKed so far. */
static uint32_t lt_eval(uint32_t v, uint32_t *ancestor, uint32_t *label, const uint32_t *semi, uint32_t *path)
{
	if (ancestor[v] == NONE)
		return v;
	size_t n = 0;
	for (uint32_t x = v; ancestor[ancestor[x]] != NONE; x = ancestor[x])
		path[n++] = x;
	while (n--) {
		uint32_t x = path[n], a = ancestor[x];
		if (semi[label[a]] < semi[label[x]])
			label[x] = label[a];
		ancestor[x] = ancestor[a];
	}
	return label[v];
}

/* Dominators of G's nodes reachable from node 0, by Lengauer and Tarjan's
 * algorithm with path compression (O(E log N) whatever the graph: an
 * iteration to a fixed point takes as many passes as the graph's loop
 * nest is deep, and irreducible nests are deep), as preorder intervals of
 * the dominator tree: X dominates Y when DPRE[X] <= DPRE[Y] <= DLAST[X]. */
static void dominators(const struct graph *g, uint32_t *dpre, uint32_t *dlast)
{
	size_t n = g->n;
	uint32_t *semi = ls_xmalloc((n + 1) * sizeof *semi), *vertex = ls_xmalloc((n + 1) * sizeof *vertex);
	uint32_t *parent = ls_xmalloc((n + 1) * sizeof *parent), *ancestor = ls_xmalloc((n + 1) * sizeof *ancestor);
	uint32_t *label = ls_xmalloc((n + 1) * sizeof *label), *idom = ls_xmalloc((n + 1) * sizeof *idom);
	uint32_t *bhead = ls_xmalloc((n + 1) * sizeof *bhead), *bnext = ls_xmalloc((n + 1) * sizeof *bnext);
	uint32_t *stack = ls_xmalloc((n + 1) * sizeof *stack), *next = ls_xcalloc(n + 1, sizeof *next);
	for (size_t i = 0; i < n; i++) {
		semi[i] = idom[i] = ancestor[i] = bhead[i] = NONE;
		label[i] = (uint32_t)i;
	}
	/* DFS preorder: semi[v] = v's number until it is the semidominator's. */
	uint32_t R = 0;
	size_t sp = 0;
	stack[sp++] = 0;
	semi[0] = R;
	vertex[R++] = 0;
	parent[0] = NONE;
	while (sp) {
		uint32_t v = stack[sp - 1];
		if (next[v] < g->sstart[v + 1] - g->sstart[v]) {
			uint32_t w = g->to[g->succ[g->sstart[v] + next[v]++]];
			if (semi[w] == NONE) {
				semi[w] = R;
				vertex[R++] = w;
				parent[w] = v;
				stack[sp++] = w;
			}
		} else {
			sp--;
		}
	}
	for (uint32_t i = R; i-- > 1;) {
		uint32_t w = vertex[i];
		for (uint32_t q = g->pstart[w]; q < g->pstart[w + 1]; q++) {
			uint32_t v = g->from[g->pred[q]];
			if (semi[v] == NONE)
				continue; /* unreachable */
			uint32_t u = lt_eval(v, ancestor, label, semi, stack);
			if (semi[u] < semi[w])
				semi[w] = semi[u];
		}
		uint32_t sd = vertex[semi[w]];
		bnext[w] = bhead[sd];
		bhead[sd] = w;
		uint32_t p = parent[w];
		ancestor[w] = p;
		for (uint32_t v = bhead[p]; v != NONE; v = bnext[v]) {
			uint32_t u = lt_eval(v, ancestor, label, semi, stack);
			idom[v] = semi[u] < semi[v] ? u : p;
		}
		bhead[p] = NONE;
	}
	idom[0] = 0;
	for (uint32_t i = 1; i < R; i++) {
		uint32_t w = vertex[i];
		if (idom[w] != vertex[semi[w]])
			idom[w] = idom[idom[w]];
	}
	/* The tree's preorder intervals: children by CSR, an explicit stack. */
	uint32_t *cstart = ls_xcalloc(n + 2, sizeof *cstart), *child = ls_xmalloc((n + 1) * sizeof *child);
	for (uint32_t i = 1; i < R; i++)
		cstart[idom[vertex[i]] + 2]++;
	for (size_t i = 2; i < n + 2; i++)
		cstart[i] += cstart[i - 1];
	for (uint32_t i = 1; i < R; i++)
		child[cstart[idom[vertex[i]] + 1]++] = vertex[i];
	for (size_t i = 0; i < n; i++) {
		dpre[i] = dlast[i] = NONE;
		next[i] = cstart[i];
	}
	uint32_t c = 0;
	sp = 0;
	stack[sp++] = 0;
	dpre[0] = c++;
	while (sp) {
		uint32_t v = stack[sp - 1];
		if (next[v] < cstart[v + 1]) {
			uint32_t w = child[next[v]++];
			dpre[w] = c++;
			stack[sp++] = w;
		} else {
			dlast[v] = c - 1;
			sp--;
		}
	}
	free(cstart);
	free(child);
	free(semi);
	free(vertex);
	free(parent);
	free(ancestor);
	free(label);
	free(idom);
	free(bhead);
	free(bnext);
	free(stack);
	free(next);
}

/* A normalization of ours, run before Havlak's search ("Nesting of
 * reducible and irreducible loops", TOPLAS 1997), whose forest inside an
 * irreducible region depends on the DFS: a header H whose natural loop
 * (the blocks that reach an edge T -> H with H dominating T, without
 * passing H) is a loop in one order is folded into an irreducible loop
 * in another, because the DFS may reach other entries of the region
 * below H, and their edges into H then look like back edges.  In an
 * interpreter whose every handler ends with its own copy of the dispatch,
 * some handlers' self-loops were kept and others folded (clang's
 * CPython: 58 and 93).  So each such H gets a
 * new node in front of it that takes H's entering edges (those from
 * blocks H does not dominate); H's only way in is then that node, every
 * DFS enters H's natural loop through H, and the search finds it, as a
 * reducible loop, inside whatever the region becomes.  A header with a
 * single entering edge needs no node (its source is always H's DFS
 * ancestor).  Reducible graphs are never changed: their loops are the
 * natural loops whatever the order.  Returns false when no node is
 * needed. */
static bool normalize(const struct graph *g, const uint32_t *number, struct graph *out)
{
	size_t n = g->n;
	uint32_t *dpre = ls_xmalloc((n + 1) * sizeof *dpre), *dlast = ls_xmalloc((n + 1) * sizeof *dlast);
	dominators(g, dpre, dlast);
#define DOMINATES(x, y) (dpre[x] <= dpre[y] && dpre[y] <= dlast[x])
	uint32_t *virt = ls_xmalloc((n + 1) * sizeof *virt);
	size_t k = 0;
	for (size_t h = 1; h < n; h++) {
		virt[h] = NONE;
		if (number[h] == NONE)
			continue;
		size_t back = 0, entering = 0;
		for (uint32_t q = g->pstart[h]; q < g->pstart[h + 1]; q++) {
			uint32_t t = g->from[g->pred[q]];
			if (number[t] == NONE)
				continue;
			if (DOMINATES(h, t))
				back++;
			else
				entering++;
		}
		if (back && entering >= 2)
			virt[h] = (uint32_t)(n + k++);
	}
	virt[0] = NONE;
	if (!k) {
		free(dpre);
		free(dlast);
		free(virt);
		return false;
	}
	*out = (struct graph){ .n = n + k, .nblocks = g->nblocks, .nedges = g->nedges + k };
	out->from = ls_xmalloc((out->nedges + 1) * sizeof *out->from);
	out->to = ls_xmalloc((out->nedges + 1) * sizeof *out->to);
	out->real = ls_xmalloc((out->n + 1) * sizeof *out->real);
	memcpy(out->real, g->real, n * sizeof *out->real);
	for (size_t e = 0; e < g->nedges; e++) {
		uint32_t f = g->from[e], t = g->to[e];
		out->from[e] = f;
		out->to[e] = virt[t] != NONE && !(number[f] != NONE && DOMINATES(t, f)) ? virt[t] : t;
	}
	size_t e = g->nedges;
	for (size_t h = 1; h < n; h++)
		if (virt[h] != NONE) {
			out->from[e] = virt[h];
			out->to[e++] = (uint32_t)h;
			out->real[virt[h]] = g->real[h];
		}
#undef DOMINATES
	graph_index(out);
	free(dpre);
	free(dlast);
	free(virt);
	return true;
}

/* Havlak's search on G: F's loops (headers as blocks) and the blocks'
 * innermost loops; *IRR: per loop, whether the search found it entered
 * elsewhere than at its header; *NUMBER: per node, its preorder (NONE:
 * unreachable). */
static void havlak(const struct ls_cfg *cfg, const struct graph *g, struct ls_loop_forest *f, uint8_t **irr,
                   uint32_t **number)
{
	struct build b = { .cfg = cfg, .g = g, .N = g->n };
	dfs(&b);
	split_preds(&b);
	collapse(&b);
	uint32_t R = b.R;
	int32_t *loop_of_hdr = ls_xmalloc((R + 1) * sizeof *loop_of_hdr);
	uint32_t *hdr_pre = NULL;
	f->nloops = number_loops(&b, &f->loops, loop_of_hdr, &hdr_pre);
	size_t n = f->nloops;
	*irr = ls_xmalloc(n + 1);
	if (n) {
		/* Havlak's loops, then the irreducible nests merged. */
		uint32_t *minkey = ls_xmalloc(n * sizeof *minkey);
		for (size_t l = 0; l < n; l++) {
			minkey[l] = b.minkey[hdr_pre[l]];
			(*irr)[l] = b.type[hdr_pre[l]] == IRREDUCIBLE;
		}
		int32_t *newidx = ls_xmalloc(n * sizeof *newidx);
		merge_irreducible(f->loops, &f->nloops, hdr_pre, *irr, minkey, newidx);
		/* Innermost loop of every reachable block (not of the nodes the
		 * normalization added). */
		for (uint32_t v = 0; v < R; v++) {
			uint32_t h = b.type[v] != NONHEADER ? v : b.header[v];
			if (h != NONE && b.node[v] < g->nblocks)
				f->block_loop[b.node[v]] = newidx[loop_of_hdr[h]];
		}
		free(minkey);
		free(newidx);
	}
	*number = b.number;
	free(hdr_pre);
	free(loop_of_hdr);
	free(b.node);
	free(b.last);
	free(b.edge_lca);
	free(b.bstart);
	free(b.backp);
	free(b.nstart);
	free(b.nonbackp);
	free(b.nlca);
	free(b.header);
	free(b.type);
	free(b.minkey);
}

int ls_loop_forest_build(const struct ls_cfg *cfg, struct ls_loop_forest *f)
{
	memset(f, 0, sizeof *f);
	size_t N = cfg->nblocks;
	f->block_loop = ls_xmalloc((N + 1) * sizeof *f->block_loop);
	for (size_t i = 0; i < N; i++)
		f->block_loop[i] = -1;
	if (N == 0)
		return 0;
	struct graph g;
	graph_of_cfg(cfg, &g);
	uint8_t *irr;
	uint32_t *number;
	havlak(cfg, &g, f, &irr, &number);
	bool any = false;
	for (size_t l = 0; l < f->nloops && !any; l++)
		any = irr[l];
	/* An irreducible region: the search again on the normalized graph,
	 * so that every natural loop in it is found whatever the DFS. */
	struct graph norm;
	if (any && normalize(&g, number, &norm)) {
		free(f->loops);
		free(irr);
		free(number);
		f->loops = NULL;
		f->nloops = 0;
		for (size_t i = 0; i < N; i++)
			f->block_loop[i] = -1;
		havlak(cfg, &norm, f, &irr, &number);
		graph_free(&norm);
	}
	if (f->nloops) {
		adopt_padding(cfg, f, number);
		fill_loops(cfg, f, number, irr);
	}
	graph_free(&g);
	free(irr);
	free(number);
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
