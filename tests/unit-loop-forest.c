/* unit-loop-forest.c - the loop nesting forest (libloopscope/loops/loop_forest.c) on
 * synthetic CFGs: natural, nested, shared-header, irreducible and self
 * loops, unreachable cycles, natural loops headed by an irreducible loop's
 * entries; random graphs checked against the recursive
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
 * by the DFS; the loops nested in L are those of L minus its header.  Then
 * loop_forest.c merges an irreducible loop into its irreducible parent when
 * it holds another of the parent's entries, and adds the natural loops
 * headed by an irreducible loop's entries (by dominators, computed here
 * the plain iterative way); the reference does the same. */
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

static void test_random(void)
{
	int agree = 0, total = 0, irreducible_seen = 0, merges = 0, entry_loops = 0;
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

		/* Reference: the same DFS order (successor order) for headers. */
		struct ref r = { .n = n, .cfg = &cfg };
		r.pre = malloc(n * sizeof *r.pre);
		for (size_t i = 0; i < n; i++)
			r.pre[i] = UINT32_MAX;
		uint32_t *st = malloc(n * sizeof *st), *k = calloc(n, sizeof *k), c = 0;
		size_t sp = 0;
		st[sp++] = 0;
		r.pre[0] = c++;
		while (sp) {
			uint32_t v = st[sp - 1];
			const struct ls_block *b = &cfg.blocks[v];
			if (k[v] < b->nsucc) {
				uint32_t w = cfg.edges[cfg.succ[b->first_succ + k[v]++]].to;
				if (r.pre[w] == UINT32_MAX) {
					r.pre[w] = c++;
					st[sp++] = w;
				}
			} else
				sp--;
		}
		uint8_t *reach = calloc(n, 1);
		for (size_t i = 0; i < n; i++)
			reach[i] = r.pre[i] != UINT32_MAX;
		ref_scc(&r, reach, -1);

		/* Entries of each reference loop; then the merge rule. */
		size_t nl = r.nloops;
		bool *irr = calloc(nl + 1, sizeof *irr), *merged = calloc(nl + 1, sizeof *merged);
		uint8_t **entry = calloc(nl + 1, sizeof *entry);
		int *fparent = calloc(nl + 1, sizeof *fparent);
		unsigned *depth = calloc(nl + 1, sizeof *depth);
		for (size_t l = 0; l < nl; l++) {
			entry[l] = calloc(n, 1);
			size_t nentries = 1;
			for (size_t b = 0; b < n; b++) {
				if (!r.loops[l].mask[b] || b == r.loops[l].header)
					continue;
				const struct ls_block *blk = &cfg.blocks[b];
				for (uint32_t q = 0; q < blk->npred; q++) {
					uint32_t p = cfg.edges[cfg.pred[blk->first_pred + q]].from;
					if (reach[p] && !r.loops[l].mask[p]) {
						entry[l][b] = 1;
						nentries++;
						break;
					}
				}
			}
			irr[l] = nentries > 1;
		}
		for (size_t l = 0; l < nl; l++) {
			int p = r.loops[l].parent;
			if (p >= 0 && merged[p])
				p = fparent[p];
			fparent[l] = p;
			if (p >= 0 && irr[l] && irr[p])
				for (size_t b = 0; b < n && !merged[l]; b++)
					merged[l] = r.loops[l].mask[b] && entry[p][b];
			merges += merged[l];
			depth[l] = p >= 0 ? depth[p] + 1 : 1;
		}

		/* Then the natural loops headed by an irreducible loop's
		 * entries (loop_forest.c's add_entry_loops): for entry H of L,
		 * the edges T -> H from L with H dominating T, and what reaches
		 * them without passing H. */
		uint32_t dom[16];
		for (size_t b = 0; b < n; b++)
			dom[b] = b == 0 ? 1u : (1u << n) - 1;
		for (bool changed = true; changed;) {
			changed = false;
			for (size_t b = 1; b < n; b++) {
				if (!reach[b])
					continue;
				uint32_t d = (1u << n) - 1;
				const struct ls_block *blk = &cfg.blocks[b];
				for (uint32_t q = 0; q < blk->npred; q++) {
					uint32_t p = cfg.edges[cfg.pred[blk->first_pred + q]].from;
					if (reach[p])
						d &= dom[p];
				}
				d |= 1u << b;
				changed |= d != dom[b];
				dom[b] = d;
			}
		}
		size_t nbase = nl;
		for (size_t l = 0; l < nbase; l++) {
			if (merged[l] || !irr[l])
				continue;
			for (uint32_t h = 0; h < n; h++) {
				if (!(h == r.loops[l].header || entry[l][h]))
					continue;
				bool taken = false;
				for (size_t o = 0; o < nbase; o++)
					taken |= !merged[o] && o != l && r.loops[o].header == h;
				if (taken)
					continue;
				uint8_t *body = calloc(n, 1);
				uint32_t stack[64];
				size_t sp2 = 0;
				bool any = false;
				const struct ls_block *hb = &cfg.blocks[h];
				for (uint32_t q = 0; q < hb->npred; q++) {
					uint32_t t = cfg.edges[cfg.pred[hb->first_pred + q]].from;
					if (reach[t] && r.loops[l].mask[t] && (dom[t] >> h & 1)) {
						any = true;
						if (t != h && !body[t]) {
							body[t] = 1;
							stack[sp2++] = t;
						}
					}
				}
				body[h] = 1;
				while (sp2) {
					const struct ls_block *blk = &cfg.blocks[stack[--sp2]];
					for (uint32_t q = 0; q < blk->npred; q++) {
						uint32_t p = cfg.edges[cfg.pred[blk->first_pred + q]].from;
						if (reach[p] && !body[p]) {
							body[p] = 1;
							stack[sp2++] = p;
						}
					}
				}
				if (!any) {
					free(body);
					continue;
				}
				r.loops = realloc(r.loops, (nl + 1) * sizeof *r.loops);
				r.loops[nl] = (struct rloop){ h, (int)l, body };
				entry = realloc(entry, (nl + 2) * sizeof *entry);
				entry[nl] = calloc(n, 1);
				merged = realloc(merged, (nl + 2) * sizeof *merged);
				merged[nl] = false;
				fparent = realloc(fparent, (nl + 2) * sizeof *fparent);
				fparent[nl] = (int)l;
				depth = realloc(depth, (nl + 2) * sizeof *depth);
				for (size_t o = 0; o < nbase; o++)
					if (!merged[o] && fparent[o] == (int)l && body[r.loops[o].header])
						fparent[o] = (int)nl;
				nl++;
				entry_loops++;
			}
		}
		for (size_t l = 0; l < nl; l++) { /* depths after the moves */
			depth[l] = 1;
			for (int p = fparent[l]; p >= 0; p = fparent[p])
				depth[l]++;
		}

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
			for (size_t i = 0; i < f.nloops && strcmp(got, want) != 0; i++)
				if (f.loops[i].header == r.loops[l].header)
					snprintf(got, sizeof got, "%u:%s", f.loops[i].depth, blockset(&f.loops[i]));
			if (strcmp(got, want) != 0) {
				same = false;
				if (total - agree < 3)
					printf("# round %d header %u: got '%s' want '%s'\n", round, r.loops[l].header, got, want);
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
		free(E);
		ls_loop_forest_free(&f);
		free_cfg(&cfg);
	}
	ok(agree == total, "random graphs: forest = recursive SCCs minus headers, irreducible nests merged, entry loops "
	   "added (%d/%d agree)", agree, total);
	ok(irreducible_seen > 40 && merges > 5 && entry_loops > 5,
	   "random graphs: irreducible loops (%d), merged nests (%d) and entry loops (%d) exercised", irreducible_seen,
	   merges, entry_loops);
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

int main(void)
{
	test_natural();
	test_nested();
	test_shared_header();
	test_irreducible();
	test_self_and_unreachable();
	test_threaded_dispatch();
	test_entry_loops();
	test_random();
	test_cost();
	return done_testing();
}
