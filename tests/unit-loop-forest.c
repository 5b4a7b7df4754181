/* unit-loop-forest.c - the loop nesting forest (libloopscope/loops/loop_forest.c) on
 * synthetic CFGs: natural, nested, shared-header, irreducible and self
 * loops, unreachable cycles, natural loops headed by an irreducible loop's
 * entries, the same loops whatever the DFS order; random graphs checked
 * against the recursive
 * SCC definition of Havlak's forest; large graphs to show near-linear cost.
 * Prints TAP. */
#include "loops/loop_forest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tap.h"



/* A CFG of N blocks (block i at 0x1000 + 16 i) with the given edges, in
 * the order given (successor order drives the DFS). */
static void make_cfg(struct ls_cfg *cfg, size_t n, const uint32_t (*edges)[2], size_t ne)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->nblocks = n;
	cfg->blocks = calloc(n + 1, sizeof *cfg->blocks);
	cfg->nedges = ne;
	cfg->edges = calloc(ne + 1, sizeof *cfg->edges);
	cfg->succ = calloc(ne + 1, sizeof *cfg->succ);
	cfg->pred = calloc(ne + 1, sizeof *cfg->pred);
	for (size_t i = 0; i < n; i++) {
		cfg->blocks[i].start = 0x1000 + 16 * i;
		cfg->blocks[i].end = cfg->blocks[i].start + 16;
	}
	for (size_t e = 0; e < ne; e++) {
		cfg->edges[e] = (struct ls_cfg_edge){ edges[e][0], edges[e][1], LS_EDGE_JUMP };
		cfg->blocks[edges[e][0]].nsucc++;
		cfg->blocks[edges[e][1]].npred++;
	}
	uint32_t s = 0, p = 0;
	for (size_t i = 0; i < n; i++) {
		cfg->blocks[i].first_succ = s;
		cfg->blocks[i].first_pred = p;
		s += cfg->blocks[i].nsucc;
		p += cfg->blocks[i].npred;
		cfg->blocks[i].nsucc = cfg->blocks[i].npred = 0;
	}
	for (size_t e = 0; e < ne; e++) {
		struct ls_block *f = &cfg->blocks[edges[e][0]], *t = &cfg->blocks[edges[e][1]];
		cfg->succ[f->first_succ + f->nsucc++] = (uint32_t)e;
		cfg->pred[t->first_pred + t->npred++] = (uint32_t)e;
	}
}

static void free_cfg(struct ls_cfg *cfg)
{
	free(cfg->blocks);
	free(cfg->edges);
	free(cfg->succ);
	free(cfg->pred);
}

/* Set the blocks' reachable flags (as cfg.c does): from block 0. */
static void mark_reachable(struct ls_cfg *cfg)
{
	uint32_t *work = malloc((cfg->nblocks + 1) * sizeof *work);
	size_t nw = 0;
	cfg->blocks[0].reachable = true;
	work[nw++] = 0;
	while (nw) {
		const struct ls_block *b = &cfg->blocks[work[--nw]];
		for (uint32_t k = 0; k < b->nsucc; k++) {
			uint32_t t = cfg->edges[cfg->succ[b->first_succ + k]].to;
			if (!cfg->blocks[t].reachable) {
				cfg->blocks[t].reachable = true;
				work[nw++] = t;
			}
		}
	}
	free(work);
}

/* The loop whose header is block H, or NULL. */
static const struct ls_loop *loop_at(const struct ls_loop_forest *f, uint32_t h)
{
	for (size_t i = 0; i < f->nloops; i++)
		if (f->loops[i].header == h)
			return &f->loops[i];
	return NULL;
}

/* "1,2,5": the sorted list of a loop's blocks. */
static const char *blockset(const struct ls_loop *L)
{
	static char buf[4096];
	uint32_t *b = malloc((L->nblocks + 1) * sizeof *b);
	memcpy(b, L->blocks, L->nblocks * sizeof *b);
	for (size_t i = 1; i < L->nblocks; i++)
		for (size_t j = i; j > 0 && b[j - 1] > b[j]; j--) {
			uint32_t t = b[j];
			b[j] = b[j - 1];
			b[j - 1] = t;
		}
	buf[0] = 0;
	for (size_t i = 0; i < L->nblocks && strlen(buf) < sizeof buf - 16; i++)
		sprintf(buf + strlen(buf), "%s%u", i ? "," : "", b[i]);
	free(b);
	return buf;
}

static bool has_edge(const struct ls_cfg_edge *e, size_t n, uint32_t from, uint32_t to)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].from == from && e[i].to == to)
			return true;
	return false;
}

static void test_natural(void)
{
	static const uint32_t E[][2] = { { 0, 1 }, { 1, 2 }, { 2, 1 }, { 2, 3 } };
	struct ls_cfg cfg;
	struct ls_loop_forest f;
	make_cfg(&cfg, 4, E, 4);
	ok(ls_loop_forest_build(&cfg, &f) == 0 && f.nloops == 1, "natural loop: one loop");
	const struct ls_loop *L = loop_at(&f, 1);
	ok(L && L->depth == 1 && L->parent == -1 && !L->irreducible, "natural loop: header 1, depth 1, reducible");
	ok(L && strcmp(blockset(L), "1,2") == 0, "natural loop: blocks 1,2");
	ok(L && L->nentries == 1 && L->entries[0] == 1, "natural loop: one entry, the header");
	ok(L && L->nbackedges == 1 && has_edge(L->backedges, L->nbackedges, 2, 1), "natural loop: back edge 2->1");
	ok(L && L->nexits == 1 && has_edge(L->exits, L->nexits, 2, 3), "natural loop: exit 2->3");
	ok(f.block_loop[0] == -1 && f.block_loop[1] == 0 && f.block_loop[2] == 0 && f.block_loop[3] == -1,
	   "natural loop: innermost loop per block");
	ls_loop_forest_free(&f);
	free_cfg(&cfg);
}

static void test_nested(void)
{
	/* 1: outer header, 2: middle, 3: inner (3<->4), 5->2, 6->1, 6->7. */
	static const uint32_t E[][2] = { { 0, 1 }, { 1, 2 }, { 2, 3 }, { 3, 4 }, { 4, 3 }, { 4, 5 },
		                         { 5, 2 }, { 5, 6 }, { 6, 1 }, { 6, 7 } };
	struct ls_cfg cfg;
	struct ls_loop_forest f;
	make_cfg(&cfg, 8, E, sizeof E / sizeof E[0]);
	ok(ls_loop_forest_build(&cfg, &f) == 0 && f.nloops == 3, "nested: three loops");
	const struct ls_loop *o = loop_at(&f, 1), *m = loop_at(&f, 2), *i = loop_at(&f, 3);
	ok(o && m && i, "nested: headers 1, 2, 3");
	if (o && m && i) {
		ok(o->depth == 1 && m->depth == 2 && i->depth == 3, "nested: depths 1, 2, 3");
		ok(o->parent == -1 && &f.loops[m->parent] == o && &f.loops[i->parent] == m, "nested: parents");
		ok(o < m && m < i, "nested: parents before children");
		ok(strcmp(blockset(o), "1,2,3,4,5,6") == 0, "nested: outer blocks include nested ones");
		ok(strcmp(blockset(m), "2,3,4,5") == 0, "nested: middle blocks");
		ok(strcmp(blockset(i), "3,4") == 0, "nested: inner blocks");
		ok(has_edge(m->exits, m->nexits, 5, 6) && m->nexits == 1, "nested: middle exits 5->6");
		ok(has_edge(o->exits, o->nexits, 6, 7) && o->nexits == 1, "nested: outer exits 6->7");
		ok(f.block_loop[4] == i - f.loops && f.block_loop[5] == m - f.loops && f.block_loop[6] == o - f.loops,
		   "nested: innermost loop of blocks 4, 5, 6");
	}
	ls_loop_forest_free(&f);
	free_cfg(&cfg);
}

static void test_shared_header(void)
{
	/* Two latches (continue and loop end) share header 1. */
	static const uint32_t E[][2] = { { 0, 1 }, { 1, 2 }, { 1, 3 }, { 2, 1 }, { 3, 1 }, { 3, 4 } };
	struct ls_cfg cfg;
	struct ls_loop_forest f;
	make_cfg(&cfg, 5, E, sizeof E / sizeof E[0]);
	ok(ls_loop_forest_build(&cfg, &f) == 0 && f.nloops == 1, "shared header: one loop");
	const struct ls_loop *L = loop_at(&f, 1);
	ok(L && L->nbackedges == 2 && has_edge(L->backedges, 2, 2, 1) && has_edge(L->backedges, 2, 3, 1),
	   "shared header: back edges 2->1 and 3->1");
	ok(L && strcmp(blockset(L), "1,2,3") == 0 && !L->irreducible, "shared header: blocks 1,2,3, reducible");
	ls_loop_forest_free(&f);
	free_cfg(&cfg);
}

static void test_irreducible(void)
{
	/* 0 enters the cycle 1<->2 at both 1 and 2. */
	static const uint32_t E[][2] = { { 0, 1 }, { 0, 2 }, { 1, 2 }, { 2, 1 }, { 2, 3 } };
	struct ls_cfg cfg;
	struct ls_loop_forest f;
	make_cfg(&cfg, 4, E, sizeof E / sizeof E[0]);
	ok(ls_loop_forest_build(&cfg, &f) == 0 && f.nloops == 1, "irreducible: one loop");
	const struct ls_loop *L = f.nloops ? &f.loops[0] : NULL;
	ok(L && L->irreducible, "irreducible: flagged");
	ok(L && L->nentries == 2 && L->entries[0] == L->header && (L->entries[1] == 1 || L->entries[1] == 2) &&
	   L->entries[1] != L->header, "irreducible: two entries, header first");
	ok(L && strcmp(blockset(L), "1,2") == 0, "irreducible: blocks 1,2");
	ok(L && L->nbackedges == 2, "irreducible: back edges into both entries");
	ok(L && L->nexits == 1 && has_edge(L->exits, 1, 2, 3), "irreducible: exit 2->3");
	ls_loop_forest_free(&f);
	free_cfg(&cfg);

	/* A reducible loop around an irreducible one: 1 outer header; 2,3 the
	 * irreducible pair entered from 1 at both; 4 the latch. */
	static const uint32_t F[][2] = { { 0, 1 }, { 1, 2 }, { 1, 3 }, { 2, 3 }, { 3, 2 }, { 3, 4 },
		                         { 4, 1 }, { 4, 5 } };
	make_cfg(&cfg, 6, F, sizeof F / sizeof F[0]);
	ok(ls_loop_forest_build(&cfg, &f) == 0 && f.nloops == 2, "irreducible inside reducible: two loops");
	const struct ls_loop *o = loop_at(&f, 1);
	const struct ls_loop *in = f.nloops == 2 ? &f.loops[1] : NULL;
	ok(o && !o->irreducible && o->depth == 1 && strcmp(blockset(o), "1,2,3,4") == 0,
	   "irreducible inside reducible: outer reducible, blocks 1-4");
	ok(in && in->irreducible && in->depth == 2 && in->nentries == 2 && strcmp(blockset(in), "2,3") == 0,
	   "irreducible inside reducible: inner irreducible, 2 entries, depth 2");
	ls_loop_forest_free(&f);
	free_cfg(&cfg);
}

static void test_self_and_unreachable(void)
{
	/* 1 loops on itself; 3<->4 is a cycle nothing reaches. */
	static const uint32_t E[][2] = { { 0, 1 }, { 1, 1 }, { 1, 2 }, { 3, 4 }, { 4, 3 } };
	struct ls_cfg cfg;
	struct ls_loop_forest f;
	make_cfg(&cfg, 5, E, sizeof E / sizeof E[0]);
	ok(ls_loop_forest_build(&cfg, &f) == 0 && f.nloops == 1, "self loop: one loop, none for the unreachable cycle");
	const struct ls_loop *L = loop_at(&f, 1);
	ok(L && L->nblocks == 1 && L->nbackedges == 1 && has_edge(L->backedges, 1, 1, 1),
	   "self loop: block 1 alone, back edge 1->1");
	ok(f.block_loop[3] == -1 && f.block_loop[4] == -1, "unreachable blocks are in no loop");
	ls_loop_forest_free(&f);
	free_cfg(&cfg);

	static const uint32_t G[][2] = { { 0, 0 } };
	make_cfg(&cfg, 1, G, 1);
	ok(ls_loop_forest_build(&cfg, &f) == 0 && f.nloops == 1 && f.loops[0].header == 0 &&
	   f.loops[0].nentries == 1, "the entry block looping on itself");
	ls_loop_forest_free(&f);
	free_cfg(&cfg);
}

static void test_entry_loops(void)
{
	/* An interpreter with a copy of the dispatch in each handler: 1
	 * dispatches to handlers 2, 3, 4; handler 2 (blocks 2, 5, 6, 7) has
	 * an inner loop 5-6 and ends with its dispatch (7) to 2, 3, 4;
	 * handler 3 is one block that dispatches to 2, 3, 4; handler 4 exits.
	 * 2 and 3 are entries of one irreducible loop; inside it, each is the
	 * header of a natural loop (it runs twice in a row: LLVM's LoopInfo
	 * reports those), and 5-6 nests in 2's. */
	static const uint32_t E[][2] = {
		{ 0, 1 }, { 1, 2 }, { 1, 3 }, { 1, 4 }, { 2, 5 }, { 5, 6 }, { 6, 5 }, { 6, 7 },
		{ 7, 2 }, { 7, 3 }, { 7, 4 }, { 3, 2 }, { 3, 3 }, { 3, 4 }, { 4, 8 },
	};
	struct ls_cfg cfg;
	struct ls_loop_forest f;
	make_cfg(&cfg, 9, E, sizeof E / sizeof E[0]);
	for (size_t i = 0; i < cfg.nblocks; i++)
		cfg.blocks[i].reachable = true;
	ls_loop_forest_build(&cfg, &f);
	const struct ls_loop *P = f.nloops ? &f.loops[0] : NULL;
	ok(f.nloops == 4 && P && P->irreducible && P->nentries == 2 && P->depth == 1 &&
	   strcmp(blockset(P), "2,3,5,6,7") == 0,
	   "entry loops: one irreducible loop, entries 2 and 3, blocks 2,3,5,6,7 (%zu loops)", f.nloops);
	const struct ls_loop *N2 = NULL, *N3 = NULL, *I = loop_at(&f, 5);
	for (size_t i = 1; i < f.nloops; i++) {
		if (f.loops[i].header == 2)
			N2 = &f.loops[i];
		if (f.loops[i].header == 3)
			N3 = &f.loops[i];
	}
	ok(N2 && !N2->irreducible && N2->depth == 2 && N2->parent == 0 && strcmp(blockset(N2), "2,5,6,7") == 0 &&
	   N2->nentries == 1 && N2->nbackedges == 1 && N2->backedges[0].from == 7,
	   "entry loops: handler 2 is a natural loop 2,5,6,7 inside it, back edge 7->2");
	ok(N3 && !N3->irreducible && N3->depth == 2 && strcmp(blockset(N3), "3") == 0,
	   "entry loops: handler 3's self loop is a natural loop inside it");
	ok(I && I->depth == 3 && N2 && I->parent == (int32_t)(N2 - f.loops) && f.block_loop[6] == (int32_t)(I - f.loops) &&
	   f.block_loop[7] == (int32_t)(N2 - f.loops) && f.block_loop[3] == (int32_t)(N3 - f.loops),
	   "entry loops: the inner loop 5-6 moves under handler 2's loop; blocks' innermost loops follow");
	bool preorder = true;
	for (size_t i = 0; i < f.nloops; i++)
		preorder &= f.loops[i].parent < (int32_t)i;
	ok(preorder, "entry loops: parents before children");
	ls_loop_forest_free(&f);
	free_cfg(&cfg);
}

static void test_threaded_dispatch(void)
{
	/* An interpreter's threaded code: the entry dispatches to any of 50
	 * handlers, every handler dispatches to any other; handler 50 exits. */
	enum { H = 50 };
	uint32_t (*E)[2] = malloc((H + H * H + 2) * sizeof *E);
	size_t ne = 0;
	for (uint32_t h = 1; h <= H; h++) {
		E[ne][0] = 0;
		E[ne++][1] = h;
	}
	for (uint32_t h = 1; h <= H; h++)
		for (uint32_t g = 1; g <= H; g++) {
			E[ne][0] = h;
			E[ne++][1] = g;
		}
	E[ne][0] = H;
	E[ne++][1] = H + 1;
	struct ls_cfg cfg;
	struct ls_loop_forest f;
	make_cfg(&cfg, H + 2, (const uint32_t(*)[2])E, ne);
	ls_loop_forest_build(&cfg, &f);
	unsigned maxdepth = 0;
	for (size_t i = 0; i < f.nloops; i++)
		maxdepth = f.loops[i].depth > maxdepth ? f.loops[i].depth : maxdepth;
	ok(f.nloops >= 1 && f.loops[0].irreducible && f.loops[0].nentries == H && f.loops[0].nblocks == H,
	   "threaded dispatch: one irreducible loop with all %d handlers as entries", H);
	ok(maxdepth <= 2, "threaded dispatch: no deep nest of irreducible loops (max depth %u, %zu loops)", maxdepth,
	   f.nloops);
	ls_loop_forest_free(&f);
	free_cfg(&cfg);
	free(E);
}

/* ---- random graphs against the recursive SCC definition ------------------------ */

/* Havlak's forest is: the loops are the nontrivial SCCs (or self-looping
 * nodes) of the reachable graph; a loop's header is its node visited first
 * by the DFS; the loops nested in L are those of L minus its header.
 * loop_forest.c builds it on Havlak's normalized graph (a node in front of
 * each header of a natural loop with several entering edges, see
 * normalized() below), then merges an irreducible loop into its
 * irreducible parent when it holds another of the parent's entries; the
 * reference does the same, and the new nodes are dropped. */
struct rloop {
	uint32_t header;
	int parent;          /* index into ref.loops, -1 top level */
	uint8_t *mask;       /* its blocks */
};

struct ref {
	size_t n;
	const struct ls_cfg *cfg;
	uint32_t *pre;       /* DFS preorder, UINT32_MAX unreachable */
	struct rloop *loops; /* parents before children */
	size_t nloops;
};

static void ref_scc(struct ref *r, const uint8_t *in_set, int parent)
{
	size_t n = r->n;
	int *idx = malloc(n * sizeof *idx), *low = malloc(n * sizeof *low);
	uint8_t *on = calloc(n, 1);
	uint32_t *st = malloc(n * sizeof *st);
	size_t sp = 0;
	int counter = 0;
	for (size_t i = 0; i < n; i++)
		idx[i] = -1;
	/* Recursive Tarjan is fine for the small graphs of this test. */
	struct frame { uint32_t v, k; } *fs = malloc(n * sizeof *fs);
	for (size_t s = 0; s < n; s++) {
		if (!in_set[s] || idx[s] >= 0)
			continue;
		size_t fp = 0;
		fs[fp++] = (struct frame){ (uint32_t)s, 0 };
		idx[s] = low[s] = counter++;
		st[sp++] = (uint32_t)s;
		on[s] = 1;
		while (fp) {
			struct frame *fr = &fs[fp - 1];
			const struct ls_block *b = &r->cfg->blocks[fr->v];
			if (fr->k < b->nsucc) {
				uint32_t w = r->cfg->edges[r->cfg->succ[b->first_succ + fr->k++]].to;
				if (!in_set[w])
					continue;
				if (idx[w] < 0) {
					idx[w] = low[w] = counter++;
					st[sp++] = w;
					on[w] = 1;
					fs[fp++] = (struct frame){ w, 0 };
				} else if (on[w] && idx[w] < low[fr->v])
					low[fr->v] = idx[w];
			} else {
				uint32_t v = fr->v;
				fp--;
				if (fp && low[v] < low[fs[fp - 1].v])
					low[fs[fp - 1].v] = low[v];
				if (low[v] != idx[v])
					continue;
				uint8_t *comp = calloc(n, 1);
				size_t csize = 0;
				uint32_t w, hdr = v;
				do {
					w = st[--sp];
					on[w] = 0;
					comp[w] = 1;
					csize++;
					if (r->pre[w] < r->pre[hdr])
						hdr = w;
				} while (w != v);
				bool self = false;
				const struct ls_block *hb = &r->cfg->blocks[v];
				for (uint32_t k = 0; k < hb->nsucc; k++)
					if (r->cfg->edges[r->cfg->succ[hb->first_succ + k]].to == v)
						self = true;
				if (csize > 1 || self) {
					r->loops = realloc(r->loops, (r->nloops + 1) * sizeof *r->loops);
					uint8_t *mask = malloc(n);
					memcpy(mask, comp, n);
					r->loops[r->nloops] = (struct rloop){ hdr, parent, mask };
					int me = (int)r->nloops++;
					comp[hdr] = 0;
					ref_scc(r, comp, me);
				}
				free(comp);
			}
		}
	}
	free(fs);
	free(idx);
	free(low);
	free(on);
	free(st);
}

static unsigned long long rng_state = 88172645463325252ULL;
static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

/* Havlak's normalization as loop_forest.c describes it, computed here the
 * plain way (dominators as bitsets): a reachable block H with an edge
 * T -> H from a block it dominates and at least two entering edges from
 * blocks it does not gets a new node N + k in front of it, which takes
 * the entering edges.  Returns the new edge list (*NE2 edges, the new
 * nodes' edges last), *N2 nodes, REAL: node -> block. */
static uint32_t (*normalized(const struct ls_cfg *cfg, size_t n, const uint32_t (*E)[2], size_t ne, const uint8_t *reach,
                             size_t *n2, size_t *ne2, uint32_t *real))[2]
{
	uint32_t dom[16];
	for (size_t b = 0; b < n; b++)
		dom[b] = b == 0 ? 1u : (1u << n) - 1;
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t b = 1; b < n; b++) {
			if (!reach[b])
				continue;
			uint32_t d = (1u << n) - 1;
			const struct ls_block *blk = &cfg->blocks[b];
			for (uint32_t q = 0; q < blk->npred; q++) {
				uint32_t p = cfg->edges[cfg->pred[blk->first_pred + q]].from;
				if (reach[p])
					d &= dom[p];
			}
			d |= 1u << b;
			changed |= d != dom[b];
			dom[b] = d;
		}
	}
	uint32_t virt[16];
	size_t k = 0;
	for (size_t h = 0; h < n; h++) {
		real[h] = (uint32_t)h;
		virt[h] = UINT32_MAX;
		if (h == 0 || !reach[h])
			continue;
		int back = 0, entering = 0;
		for (size_t e = 0; e < ne; e++)
			if (E[e][1] == h && reach[E[e][0]]) {
				if (dom[E[e][0]] >> h & 1)
					back++;
				else
					entering++;
			}
		if (back && entering >= 2) {
			virt[h] = (uint32_t)(n + k);
			real[n + k++] = (uint32_t)h;
		}
	}
	uint32_t (*E2)[2] = malloc((ne + k + 1) * sizeof *E2);
	for (size_t e = 0; e < ne; e++) {
		uint32_t f = E[e][0], t = E[e][1];
		E2[e][0] = f;
		E2[e][1] = virt[t] != UINT32_MAX && !(reach[f] && (dom[f] >> t & 1)) ? virt[t] : t;
	}
	for (size_t h = 0, e = ne; h < n; h++)
		if (virt[h] != UINT32_MAX) {
			E2[e][0] = virt[h];
			E2[e++][1] = (uint32_t)h;
		}
	*n2 = n + k;
	*ne2 = ne + k;
	return E2;
}

/* Whether every natural loop of CFG (N blocks) is a loop of F. */
static bool natural_loops_found(const struct ls_cfg *cfg, size_t n, const uint8_t *reach, const struct ls_loop_forest *f)
{
	uint32_t dom[16];
	for (size_t b = 0; b < n; b++)
		dom[b] = b == 0 ? 1u : (1u << n) - 1;
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t b = 1; b < n; b++) {
			if (!reach[b])
				continue;
			uint32_t d = (1u << n) - 1;
			const struct ls_block *blk = &cfg->blocks[b];
			for (uint32_t q = 0; q < blk->npred; q++) {
				uint32_t p = cfg->edges[cfg->pred[blk->first_pred + q]].from;
				if (reach[p])
					d &= dom[p];
			}
			d |= 1u << b;
			changed |= d != dom[b];
			dom[b] = d;
		}
	}
	for (uint32_t h = 0; h < n; h++) {
		if (!reach[h])
			continue;
		uint32_t body = 1u << h, work = 0;
		bool any = false;
		const struct ls_block *hb = &cfg->blocks[h];
		for (uint32_t q = 0; q < hb->npred; q++) {
			uint32_t t = cfg->edges[cfg->pred[hb->first_pred + q]].from;
			if (reach[t] && (dom[t] >> h & 1)) {
				any = true;
				work |= (1u << t) & ~body;
				body |= 1u << t;
			}
		}
		if (!any)
			continue;
		while (work) {
			uint32_t v = (uint32_t)__builtin_ctz(work);
			work &= work - 1;
			const struct ls_block *blk = &cfg->blocks[v];
			for (uint32_t q = 0; q < blk->npred; q++) {
				uint32_t p = cfg->edges[cfg->pred[blk->first_pred + q]].from;
				if (reach[p] && !(body >> p & 1)) {
					body |= 1u << p;
					work |= 1u << p;
				}
			}
		}
		bool found = false;
		for (size_t i = 0; i < f->nloops && !found; i++) {
			if (f->loops[i].header != h || f->loops[i].nblocks != (size_t)__builtin_popcount(body))
				continue;
			found = true;
			for (size_t k = 0; k < f->loops[i].nblocks; k++)
				found &= body >> f->loops[i].blocks[k] & 1;
		}
		if (!found)
			return false;
	}
	return true;
}

static void test_random(void)
{
	int agree = 0, total = 0, irreducible_seen = 0, merges = 0, normalized_seen = 0, hidden_seen = 0;
	int natural_agree = 0, natural_total = 0;
	for (int round = 0; round < 1000; round++) {
		size_t n = 2 + rnd(14);
		size_t ne = rnd((uint32_t)(2 * n + 1));
		uint32_t (*E)[2] = malloc((ne + 1) * sizeof *E);
		for (size_t e = 0; e < ne; e++) {
			E[e][0] = rnd((uint32_t)n);
			E[e][1] = rnd((uint32_t)n);
		}
		struct ls_cfg cfg;
		struct ls_loop_forest f;
		make_cfg(&cfg, n, (const uint32_t(*)[2])E, ne);
		mark_reachable(&cfg);
		ls_loop_forest_build(&cfg, &f);
		uint8_t *reach = calloc(n, 1);
		for (size_t i = 0; i < n; i++)
			reach[i] = cfg.blocks[i].reachable;

		/* Every natural loop (a header H, the edges T -> H from blocks it
		 * dominates, what reaches them without passing H) is a loop of
		 * the forest with that header and those blocks: whatever the DFS. */
		natural_total++;
		natural_agree += natural_loops_found(&cfg, n, reach, &f);

		/* The reference runs on the normalized graph. */
		size_t n2, ne2;
		uint32_t real[32];
		uint32_t (*E2)[2] = normalized(&cfg, n, (const uint32_t(*)[2])E, ne, reach, &n2, &ne2, real);
		normalized_seen += n2 > n;
		struct ls_cfg cfg2;
		make_cfg(&cfg2, n2, (const uint32_t(*)[2])E2, ne2);
		mark_reachable(&cfg2);

		/* Reference: the same DFS order (successor order) for headers. */
		struct ref r = { .n = n2, .cfg = &cfg2 };
		r.pre = malloc(n2 * sizeof *r.pre);
		for (size_t i = 0; i < n2; i++)
			r.pre[i] = UINT32_MAX;
		uint32_t *st = malloc(n2 * sizeof *st), *k = calloc(n2, sizeof *k), c = 0;
		size_t sp = 0;
		st[sp++] = 0;
		r.pre[0] = c++;
		while (sp) {
			uint32_t v = st[sp - 1];
			const struct ls_block *b = &cfg2.blocks[v];
			if (k[v] < b->nsucc) {
				uint32_t w = cfg2.edges[cfg2.succ[b->first_succ + k[v]++]].to;
				if (r.pre[w] == UINT32_MAX) {
					r.pre[w] = c++;
					st[sp++] = w;
				}
			} else
				sp--;
		}
		uint8_t *reach2 = calloc(n2, 1);
		for (size_t i = 0; i < n2; i++)
			reach2[i] = r.pre[i] != UINT32_MAX;
		ref_scc(&r, reach2, -1);

		/* Entries of each reference loop; then the merge rule. */
		size_t nl = r.nloops;
		bool *irr = calloc(nl + 1, sizeof *irr), *merged = calloc(nl + 1, sizeof *merged);
		uint8_t **entry = calloc(nl + 1, sizeof *entry);
		int *fparent = calloc(nl + 1, sizeof *fparent);
		unsigned *depth = calloc(nl + 1, sizeof *depth);
		for (size_t l = 0; l < nl; l++) {
			entry[l] = calloc(n2, 1);
			size_t nen = 1;
			for (size_t b = 0; b < n2; b++) {
				if (!r.loops[l].mask[b] || b == r.loops[l].header)
					continue;
				const struct ls_block *blk = &cfg2.blocks[b];
				for (uint32_t q = 0; q < blk->npred; q++) {
					uint32_t p = cfg2.edges[cfg2.pred[blk->first_pred + q]].from;
					if (reach2[p] && !r.loops[l].mask[p]) {
						entry[l][b] = 1;
						nen++;
						break;
					}
				}
			}
			irr[l] = nen > 1;
		}
		for (size_t l = 0; l < nl; l++) {
			int p = r.loops[l].parent;
			if (p >= 0 && merged[p])
				p = fparent[p];
			fparent[l] = p;
			if (p >= 0 && irr[l] && irr[p])
				for (size_t b = 0; b < n2 && !merged[l]; b++)
					merged[l] = r.loops[l].mask[b] && entry[p][b];
			merges += merged[l];
			depth[l] = p >= 0 ? depth[p] + 1 : 1;
		}
		/* A natural loop inside an irreducible one with the same header:
		 * what the normalization is for. */
		for (size_t l = 0; l < nl; l++)
			if (!merged[l] && fparent[l] >= 0 && irr[fparent[l]] &&
			    real[r.loops[l].header] == real[r.loops[fparent[l]].header])
				hidden_seen++;

		/* Compare, on the blocks (the new nodes dropped). */
		bool same = true;
		size_t nexpect = 0;
		for (size_t l = 0; l < nl; l++) {
			if (merged[l])
				continue;
			nexpect++;
			char want[4096];
			snprintf(want, sizeof want, "%u:", depth[l]);
			bool first = true;
			for (size_t b = 0; b < n; b++)
				if (r.loops[l].mask[b]) {
					snprintf(want + strlen(want), sizeof want - strlen(want), "%s%zu", first ? "" : ",", b);
					first = false;
				}
			char got[4096] = "";
			uint32_t h = real[r.loops[l].header];
			for (size_t i = 0; i < f.nloops && strcmp(got, want) != 0; i++)
				if (f.loops[i].header == h)
					snprintf(got, sizeof got, "%u:%s", f.loops[i].depth, blockset(&f.loops[i]));
			if (strcmp(got, want) != 0) {
				same = false;
				if (total - agree < 3)
					printf("# round %d header %u: got '%s' want '%s'\n", round, h, got, want);
			}
		}
		if (nexpect != f.nloops)
			same = false;
		for (size_t l = 0; l < nl; l++) {
			free(entry[l]);
			free(r.loops[l].mask);
		}
		free(entry);
		free(irr);
		free(merged);
		free(fparent);
		free(depth);
		free(r.loops);
		/* Entries: exactly the blocks with a reachable predecessor outside. */
		for (size_t l = 0; l < f.nloops && same; l++) {
			const struct ls_loop *L = &f.loops[l];
			uint8_t *in = calloc(n, 1);
			for (size_t i = 0; i < L->nblocks; i++)
				in[L->blocks[i]] = 1;
			size_t want = 1;
			for (size_t i = 0; i < L->nblocks; i++) {
				uint32_t b = L->blocks[i];
				if (b == L->header)
					continue;
				const struct ls_block *blk = &cfg.blocks[b];
				for (uint32_t q = 0; q < blk->npred; q++) {
					uint32_t p = cfg.edges[cfg.pred[blk->first_pred + q]].from;
					if (reach[p] && !in[p]) {
						want++;
						break;
					}
				}
			}
			if (want != L->nentries || L->entries[0] != L->header || L->irreducible != (want > 1))
				same = false;
			irreducible_seen += L->irreducible;
			free(in);
		}
		agree += same;
		total++;
		free(r.pre);
		free(st);
		free(k);
		free(reach);
		free(reach2);
		free(E);
		free(E2);
		ls_loop_forest_free(&f);
		free_cfg(&cfg);
		free_cfg(&cfg2);
	}
	ok(natural_agree == natural_total, "random graphs: every natural loop is a loop of the forest, with its header "
	   "and blocks (%d/%d graphs)", natural_agree, natural_total);
	ok(agree == total, "random graphs: forest = recursive SCCs minus headers of the normalized graph, irreducible "
	   "nests merged (%d/%d agree)", agree, total);
	ok(irreducible_seen > 40 && merges > 5 && normalized_seen > 20 && hidden_seen > 5,
	   "random graphs: irreducible loops (%d), merged nests (%d), normalized graphs (%d) and natural loops inside "
	   "irreducible ones with their header (%d) exercised", irreducible_seen, merges, normalized_seen, hidden_seen);
}

/* ---- cost --------------------------------------------------------------------- */

/* A procedure-like graph of N blocks: runs of nested loops, some of them
 * irreducible (entered twice), switch-like fan-outs, long chains. */
/* This thread's CPU time: other processes on a shared machine do not count. */
static double seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Returns the forest's time; *BASE_OUT gets the time of building the CFG's
 * arrays (linear, with the same memory traffic): the yardstick. */
static double time_big(size_t n, size_t *nloops_out, double *base_out)
{
	size_t cap = 4 * n + 16, ne = 0;
	uint32_t (*E)[2] = malloc(cap * sizeof *E);
	size_t i = 0;
	while (i + 12 < n) {
		/* 12 blocks: i outer header, i+1 inner header, i+2..i+4 body,
		 * i+5 irreducible side entry, i+6..i+10 chain, i+11 latch. */
		E[ne][0] = i; E[ne++][1] = i + 1;
		E[ne][0] = i + 1; E[ne++][1] = i + 2;
		E[ne][0] = i + 2; E[ne++][1] = i + 3;
		E[ne][0] = i + 3; E[ne++][1] = i + 4;
		E[ne][0] = i + 4; E[ne++][1] = i + 1;     /* inner back edge */
		E[ne][0] = i + 4; E[ne++][1] = i + 5;
		E[ne][0] = i + 5; E[ne++][1] = i + 6;
		E[ne][0] = i + 6; E[ne++][1] = i + 5;     /* 5<->6 cycle ... */
		E[ne][0] = i; E[ne++][1] = i + 6;         /* ... entered at 6 too */
		for (size_t k = 6; k < 11; k++) {
			E[ne][0] = i + k; E[ne++][1] = i + k + 1;
		}
		E[ne][0] = i + 11; E[ne++][1] = i;        /* outer back edge */
		E[ne][0] = i + 11; E[ne++][1] = i + 12;
		i += 12;
	}
	struct ls_cfg cfg;
	struct ls_loop_forest f;
	double t0 = seconds();
	make_cfg(&cfg, n, (const uint32_t(*)[2])E, ne);
	double t1 = seconds();
	ls_loop_forest_build(&cfg, &f);
	double t2 = seconds();
	*nloops_out = f.nloops;
	*base_out = t1 - t0;
	ls_loop_forest_free(&f);
	free_cfg(&cfg);
	free(E);
	return t2 - t1;
}

/* Deep nesting: K loops nested inside each other, all entered a second
 * time by one edge from outside the outermost loop straight into the
 * innermost (each is irreducible with 2 entries) - the shape that makes a
 * naive Havlak pass edges up level after level.  (Havlak's nest is
 * quadratic in size here: every loop lists the blocks of all loops inside
 * it, before the nest is merged into one region.) */
static double time_deep(size_t k, size_t *nloops_out, bool *all_irreducible)
{
	size_t n = 2 * k + 3, ne = 0;
	uint32_t (*E)[2] = malloc((4 * n) * sizeof *E);
	/* 0 -> 1 (h1) -> 2 (h2) ... -> k (hk) -> k+1 (innermost body);
	 * latches k+2 .. 2k+1: body -> latch_k -> hk, latch_k -> latch_{k-1} ... */
	for (size_t i = 0; i < k; i++) {
		E[ne][0] = i; E[ne++][1] = i + 1;
	}
	E[ne][0] = k; E[ne++][1] = k + 1;
	uint32_t prev = k + 1;
	for (size_t j = k; j >= 1; j--) {
		uint32_t latch = (uint32_t)(k + 1 + (k - j + 1));
		E[ne][0] = prev; E[ne++][1] = latch;
		E[ne][0] = latch; E[ne++][1] = (uint32_t)j;   /* back edge to h_j */
		prev = latch;
	}
	E[ne][0] = prev; E[ne++][1] = (uint32_t)(n - 1);  /* exit */
	E[ne][0] = 0; E[ne++][1] = k + 1;                 /* the side entry */
	struct ls_cfg cfg;
	struct ls_loop_forest f;
	make_cfg(&cfg, n, (const uint32_t(*)[2])E, ne);
	double t0 = seconds();
	ls_loop_forest_build(&cfg, &f);
	double t1 = seconds();
	*nloops_out = f.nloops;
	*all_irreducible = f.nloops == 1 && f.loops[0].irreducible && f.loops[0].nentries == 2 &&
	                   f.loops[0].nblocks == 2 * k + 1;
	ls_loop_forest_free(&f);
	free_cfg(&cfg);
	free(E);
	return t1 - t0;
}

static void test_cost(void)
{
	size_t l1, l2;
	/* Warm up, then the best of seven for each size (the machine is
	 * shared: the minimum is the least noisy estimate).  The growth is
	 * measured against building the same CFG's arrays, which is linear
	 * and has the same cache behaviour. */
	double base;
	time_big(1 << 14, &l1, &base);
	double a = 1e9, b = 1e9, ba = 1e9, bb = 1e9;
	for (int r = 0; r < 7; r++) {
		double x = time_big(1 << 16, &l1, &base);
		ba = base < ba ? base : ba;
		a = x < a ? x : a;
		double y = time_big(1 << 18, &l2, &base);
		bb = base < bb ? base : bb;
		b = y < b ? y : b;
	}
	double growth = (b / (a > 0 ? a : 1e-9)) / (bb / (ba > 0 ? ba : 1e-9));
	printf("# %zu blocks: %.4f s (%zu loops); %zu blocks: %.4f s (%zu loops); 4x the blocks: %.2fx the time, "
	       "%.2fx the yardstick's growth\n",
	       (size_t)1 << 16, a, l1, (size_t)1 << 18, b, l2, b / (a > 0 ? a : 1e-9), growth);
	ok(l1 == 3 * (((1 << 16) - 1) / 12) && l2 == 3 * (((1 << 18) - 1) / 12), "big graphs: every loop found (%zu, %zu)", l1, l2);
	/* Linear grows like the yardstick (1x); quadratic 4x more.  Printed,
	 * not asserted: timed assertions do not belong in the test suite. */
	printf("# growth against a linear pass: %.2fx (1x linear, 4x quadratic)\n", growth);

	bool irr1, irr2;
	double d1 = time_deep(1000, &l1, &irr1), d2 = time_deep(3000, &l2, &irr2);
	printf("# deep irreducible nest: 1000 levels %.4f s, 3000 levels %.4f s\n", d1, d2);
	/* Havlak finds one irreducible loop per level; every inner one holds
	 * the side entry of its parent, so they merge into one region. */
	ok(l1 == 1 && l2 == 1 && irr1 && irr2, "deep nest: one irreducible region with 2 entries (%zu, %zu loops)", l1, l2);
}

/* The same loops whatever the DFS order: an interpreter of H handlers,
 * each two blocks (its work, then its own copy of the dispatch, which
 * goes to every handler, itself included), built with the dispatch's
 * successors in 24 different orders.  Every handler's two blocks are a
 * natural loop (the work block dominates the dispatch block), inside the
 * one irreducible region, in every order: clang's CPython had 58 handlers
 * kept as loops and 93 folded into the region, by DFS order. */
static void test_dfs_independence(void)
{
	enum { H = 12 };
	int all_orders = 0, orders = 0;
	for (unsigned seed = 1; seed <= 24; seed++) {
		/* blocks: 0 entry, 1..H work, H+1..2H dispatch, 2H+1 exit */
		uint32_t (*E)[2] = malloc((H + H * (H + 2) + 2) * sizeof *E);
		size_t ne = 0;
		uint32_t perm[H];
		for (uint32_t i = 0; i < H; i++)
			perm[i] = i;
		for (uint32_t i = H - 1; i > 0; i--) { /* a shuffle per order */
			uint32_t j = (seed * 2654435761u + i * 40503u) % (i + 1), t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		for (uint32_t h = 0; h < H; h++) {
			E[ne][0] = 0;
			E[ne++][1] = 1 + perm[h];
		}
		for (uint32_t h = 1; h <= H; h++) {
			E[ne][0] = h;
			E[ne++][1] = H + h;
			for (uint32_t g = 0; g < H; g++) {
				E[ne][0] = H + h;
				E[ne++][1] = 1 + perm[(g + h * seed) % H];
			}
		}
		E[ne][0] = 2 * H;
		E[ne++][1] = 2 * H + 1;
		struct ls_cfg cfg;
		struct ls_loop_forest f;
		make_cfg(&cfg, 2 * H + 2, (const uint32_t(*)[2])E, ne);
		mark_reachable(&cfg);
		ls_loop_forest_build(&cfg, &f);
		int natural = 0;
		for (uint32_t h = 1; h <= H; h++) {
			int32_t l = f.block_loop[H + h];
			const struct ls_loop *L = l >= 0 ? &f.loops[l] : NULL;
			char want[32];
			snprintf(want, sizeof want, "%u,%u", h, H + h);
			natural += L && L->header == h && !L->irreducible && L->depth == 2 &&
			           strcmp(blockset(L), want) == 0 && L->parent >= 0 && f.loops[L->parent].irreducible &&
			           f.loops[L->parent].nblocks == 2 * H && f.block_loop[h] == l;
		}
		all_orders += natural == H;
		orders++;
		if (natural != H)
			printf("# order %u: %d of %d handlers are natural loops inside the region\n", seed, natural, H);
		ls_loop_forest_free(&f);
		free_cfg(&cfg);
		free(E);
	}
	ok(all_orders == orders, "DFS order: every handler is a natural loop inside the dispatch region, in %d of %d "
	   "orders", all_orders, orders);
}

int main(void)
{
	test_natural();
	test_nested();
	test_shared_header();
	test_irreducible();
	test_self_and_unreachable();
	test_threaded_dispatch();
	test_entry_loops();
	test_dfs_independence();
	test_random();
	test_cost();
	return done_testing();
}
