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

int ls_loop_forest_build(const struct ls_cfg *cfg, struct ls_loop_forest *f)
{
	memset(f, 0, sizeof *f);
	size_t N = cfg->nblocks;
	f->block_loop = ls_xmalloc((N + 1) * sizeof *f->block_loop);
	for (size_t i = 0; i < N; i++)
		f->block_loop[i] = -1;
	if (N == 0)
		return 0;

	/* 1. DFS preorder.  number[block] = preorder or UINT32_MAX; node[pre] = block. */
	uint32_t *number = ls_xmalloc(N * sizeof *number);
	uint32_t *node = ls_xmalloc(N * sizeof *node);
	uint32_t *last = ls_xmalloc(N * sizeof *last);
	uint32_t *stack = ls_xmalloc(N * sizeof *stack);
	uint32_t *next_succ = ls_xcalloc(N, sizeof *next_succ);
	for (size_t i = 0; i < N; i++)
		number[i] = UINT32_MAX;
	uint32_t R = 0;
	size_t sp = 0;
	number[0] = R;
	node[R++] = 0;
	stack[sp++] = 0;
	while (sp) {
		uint32_t v = stack[sp - 1];
		const struct ls_block *b = &cfg->blocks[v];
		if (next_succ[v] < b->nsucc) {
			uint32_t w = cfg->edges[cfg->succ[b->first_succ + next_succ[v]++]].to;
			if (number[w] == UINT32_MAX) {
				number[w] = R;
				node[R++] = w;
				stack[sp++] = w;
			}
		} else {
			last[number[v]] = R - 1;
			sp--;
		}
	}
	free(stack);
	free(next_succ);
#define IS_ANCESTOR(w, v) ((w) <= (v) && (v) <= last[w])

	/* 2. Predecessors by preorder number, back and non-back (CSR). */
	uint32_t *bstart = ls_xcalloc(R + 1, sizeof *bstart);
	uint32_t *nstart = ls_xcalloc(R + 1, sizeof *nstart);
	for (uint32_t w = 0; w < R; w++) {
		const struct ls_block *b = &cfg->blocks[node[w]];
		for (uint32_t k = 0; k < b->npred; k++) {
			uint32_t v = number[cfg->edges[cfg->pred[b->first_pred + k]].from];
			if (v == UINT32_MAX)
				continue; /* from unreachable code */
			if (IS_ANCESTOR(w, v))
				bstart[w + 1]++;
			else
				nstart[w + 1]++;
		}
	}
	for (uint32_t w = 0; w < R; w++) {
		bstart[w + 1] += bstart[w];
		nstart[w + 1] += nstart[w];
	}
	uint32_t *backp = ls_xmalloc((bstart[R] + 1) * sizeof *backp);
	uint32_t *nonbackp = ls_xmalloc((nstart[R] + 1) * sizeof *nonbackp);
	{
		uint32_t *bf = ls_xmalloc((R + 1) * sizeof *bf), *nf = ls_xmalloc((R + 1) * sizeof *nf);
		memcpy(bf, bstart, R * sizeof *bf);
		memcpy(nf, nstart, R * sizeof *nf);
		for (uint32_t w = 0; w < R; w++) {
			const struct ls_block *b = &cfg->blocks[node[w]];
			for (uint32_t k = 0; k < b->npred; k++) {
				uint32_t v = number[cfg->edges[cfg->pred[b->first_pred + k]].from];
				if (v == UINT32_MAX)
					continue;
				if (IS_ANCESTOR(w, v))
					backp[bf[w]++] = v;
				else
					nonbackp[nf[w]++] = v;
			}
		}
		free(bf);
		free(nf);
	}

	/* 3. Bottom-up collapse. */
	uint32_t *uf = ls_xmalloc(R * sizeof *uf);
	uint32_t *header = ls_xmalloc(R * sizeof *header); /* enclosing header, UINT32_MAX none */
	uint8_t *type = ls_xcalloc(R, 1);
	uint32_t *in_body = ls_xmalloc(R * sizeof *in_body);  /* == w+1: in W's body */
	uint32_t *moved = ls_xmalloc(R * sizeof *moved);      /* == w+1: already moved to W */
	uint32_t *extra_head = ls_xmalloc(R * sizeof *extra_head);
	struct extra *pool = NULL;
	size_t npool = 0, cappool = 0;
	uint32_t *body = ls_xmalloc(R * sizeof *body);
	for (uint32_t i = 0; i < R; i++) {
		uf[i] = i;
		header[i] = UINT32_MAX;
		in_body[i] = moved[i] = 0;
		extra_head[i] = UINT32_MAX;
	}
	for (uint32_t w = R; w-- > 0;) {
		size_t nbody = 0;
		for (uint32_t k = bstart[w]; k < bstart[w + 1]; k++) {
			uint32_t v = backp[k];
			if (v == w) {
				type[w] = SELF;
				continue;
			}
			uint32_t x = uf_find(uf, v);
			if (in_body[x] != w + 1 && x != w) {
				in_body[x] = w + 1;
				body[nbody++] = x;
			}
		}
		if (nbody)
			type[w] = REDUCIBLE;
		for (size_t i = 0; i < nbody; i++) {
			uint32_t x = body[i];
			/* x's own non-back predecessors, then the entering nodes
			 * moved up to x when x was a header. */
			uint32_t k = nstart[x], kend = nstart[x + 1], e = extra_head[x];
			for (;;) {
				uint32_t y;
				if (k < kend)
					y = nonbackp[k++];
				else if (e != UINT32_MAX) {
					y = pool[e].node;
					e = pool[e].next;
				} else
					break;
				uint32_t yr = uf_find(uf, y);
				if (!IS_ANCESTOR(w, yr)) {
					type[w] = IRREDUCIBLE;
					if (moved[yr] != w + 1) {
						moved[yr] = w + 1;
						pool = ls_grow(pool, &cappool, npool + 1, sizeof *pool);
						pool[npool] = (struct extra){ yr, extra_head[w] };
						extra_head[w] = (uint32_t)npool++;
					}
				} else if (yr != w && in_body[yr] != w + 1) {
					in_body[yr] = w + 1;
					body[nbody++] = yr;
				}
			}
		}
		for (size_t i = 0; i < nbody; i++) {
			header[body[i]] = w;
			uf[body[i]] = w;
		}
	}
	free(in_body);
	free(moved);
	free(extra_head);
	free(pool);
	free(body);
	free(uf);
	free(bstart);
	free(nstart);
	free(backp);
	free(nonbackp);

	/* 4. The forest.  Loops numbered in preorder of the loop tree. */
	size_t nloops = 0;
	for (uint32_t w = 0; w < R; w++)
		if (type[w] != NONHEADER)
			nloops++;
	if (nloops == 0) {
		free(number);
		free(node);
		free(last);
		free(header);
		free(type);
		return 0;
	}
	/* Children lists of the loop tree, by header preorder number. */
	uint32_t *parent_hdr = ls_xmalloc(R * sizeof *parent_hdr); /* enclosing loop header or UINT32_MAX */
	for (uint32_t w = 0; w < R; w++)
		parent_hdr[w] = header[w];
	/* Sort each sibling set by header address: collect headers, sort by
	 * (parent, start), then walk in preorder with an explicit stack. */
	uint32_t *hdrs = ls_xmalloc(nloops * sizeof *hdrs);
	size_t nh = 0;
	for (uint32_t w = 0; w < R; w++)
		if (type[w] != NONHEADER)
			hdrs[nh++] = w;
	/* child lists: CSR keyed by parent header preorder (+1, 0 = roots). */
	uint32_t *cstart = ls_xcalloc(R + 2, sizeof *cstart);
	for (size_t i = 0; i < nh; i++) {
		uint32_t p = parent_hdr[hdrs[i]];
		cstart[(p == UINT32_MAX ? 0 : p + 1) + 1]++;
	}
	for (uint32_t i = 0; i <= R; i++)
		cstart[i + 1] += cstart[i];
	uint32_t *children = ls_xmalloc(nh * sizeof *children);
	{
		uint32_t *fill = ls_xmalloc((R + 1) * sizeof *fill);
		memcpy(fill, cstart, (R + 1) * sizeof *fill);
		for (size_t i = 0; i < nh; i++) {
			uint32_t p = parent_hdr[hdrs[i]];
			uint32_t slot = p == UINT32_MAX ? 0 : p + 1;
			children[fill[slot]++] = hdrs[i];
		}
		free(fill);
	}
	/* Sort siblings by header address (insertion sort per list; lists are
	 * short, and already nearly sorted). */
	for (uint32_t s = 0; s <= R; s++) {
		for (uint32_t i = cstart[s] + 1; i < cstart[s + 1]; i++) {
			uint32_t c = children[i];
			uint64_t key = cfg->blocks[node[c]].start;
			uint32_t j = i;
			while (j > cstart[s] && cfg->blocks[node[children[j - 1]]].start > key) {
				children[j] = children[j - 1];
				j--;
			}
			children[j] = c;
		}
	}
	f->loops = ls_xcalloc(nloops, sizeof *f->loops);
	f->nloops = nloops;
	int32_t *loop_of_hdr = ls_xmalloc(R * sizeof *loop_of_hdr);
	uint32_t *subtree_end = ls_xmalloc(nloops * sizeof *subtree_end);
	{
		/* Preorder walk: stack of (list slot, position). */
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
				struct ls_loop *L = &f->loops[next];
				L->header = node[h];
				L->parent = st_loop[d];
				L->depth = (unsigned)d + 1;
				loop_of_hdr[h] = (int32_t)next;
				d++;
				st_slot[d] = h + 1;
				st_pos[d] = cstart[h + 1];
				st_loop[d] = (int32_t)next;
				next++;
			} else {
				if (st_loop[d] >= 0)
					subtree_end[st_loop[d]] = (uint32_t)next;
				if (d == 0)
					break;
				d--;
			}
		}
		free(st_slot);
		free(st_pos);
		free(st_loop);
	}
	free(cstart);
	free(children);
	free(hdrs);

	/* Innermost loop of every reachable block. */
	for (uint32_t v = 0; v < R; v++) {
		uint32_t h = type[v] != NONHEADER ? v : header[v];
		if (h != UINT32_MAX)
			f->block_loop[node[v]] = loop_of_hdr[h];
	}

	adopt_padding(cfg, f, number);

	/* Blocks of each loop, nested ones included (by block index). */
	struct loop_build *lb = ls_xcalloc(nloops, sizeof *lb);
	for (size_t bi = 0; bi < N; bi++)
		for (int32_t l = f->block_loop[bi]; l >= 0; l = f->loops[l].parent) {
			lb[l].blocks = ls_grow(lb[l].blocks, &lb[l].cap, lb[l].n + 1, sizeof *lb[l].blocks);
			lb[l].blocks[lb[l].n++] = (uint32_t)bi;
		}
#define IN_LOOP(l, b) (f->block_loop[b] >= (l) && (uint32_t)f->block_loop[b] < subtree_end[l])
	uint8_t *is_entry = ls_xcalloc(N, 1);
	for (size_t l = 0; l < nloops; l++) {
		struct loop_build *B = &lb[l];
		uint32_t hb = f->loops[l].header;
		/* Entries: the header, then blocks with a reachable predecessor outside. */
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
				if (number[p] != UINT32_MAX && !IN_LOOP(l, p)) {
					B->entries = ls_grow(B->entries, &B->capentries, B->nentries + 1,
					                     sizeof *B->entries);
					B->entries[B->nentries++] = b;
					is_entry[b] = 1;
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
		L->irreducible = type[number[hb]] == IRREDUCIBLE || B->nentries > 1;
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
#undef IS_ANCESTOR
	free(is_entry);
	free(lb);
	free(loop_of_hdr);
	free(subtree_end);
	free(parent_hdr);
	free(number);
	free(node);
	free(last);
	free(header);
	free(type);
	merge_irreducible(f, N);
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
