/* places.c - where each sample was taken, beside the calling-context tree:
 * its leaf node, the map and runtime address of the sampled instruction,
 * and, when -s asks for them, its thread's command, pid and tid and its
 * CPU.  The tree is keyed by scopes (procedure, loop, statement) and keeps
 * no addresses; what needs them reads this histogram instead of doing a
 * second attribution: annotate --asm's per-instruction figures, and the -s
 * keys perf report has that are not scopes (symoff, dso_size, comm, pid,
 * cpu).  An entry per distinct place and event: at most one per sample.
 *
 * The nodes are those of the tree as attribution made it: a tree turned
 * over for -g callee (pl_tree_invert) makes new ones, and drops these.
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

static uint64_t place_hash(const pl_place *k)
{
	uint64_t h = (uint64_t)k->node * 0x9e3779b97f4a7c15ULL;
	h ^= (k->addr + k->ev) * 0xc2b2ae3d27d4eb4fULL;
	h ^= (uint64_t)(uintptr_t)k->map * 0x165667b19e3779f9ULL;
	h ^= ((uint64_t)k->tid << 32 | (uint32_t)k->cpu) * 0xff51afd7ed558ccdULL;
	h ^= (uint64_t)(uintptr_t)k->comm;
	return h ^ (h >> 29);
}

static int same_place(const pl_place *a, const pl_place *b)
{
	return a->node == b->node && a->ev == b->ev && a->map == b->map && a->addr == b->addr &&
	       a->comm == b->comm && a->pid == b->pid && a->tid == b->tid && a->cpu == b->cpu;
}

static void places_grow(pl_places *p)
{
	size_t n = p->nslots ? p->nslots * 2 : 4096;
	uint32_t *slots = pl_xcalloc(n, sizeof *slots);
	for (size_t i = 0; i < p->n; i++) {
		size_t h = place_hash(&p->v[i]) & (n - 1);
		while (slots[h])
			h = (h + 1) & (n - 1);
		slots[h] = (uint32_t)i + 1;
	}
	free(p->slots);
	p->slots = slots;
	p->nslots = n;
}

void pl_places_add(pl_places *p, const pl_place *key, uint64_t period)
{
	if ((p->n + 1) * 2 > p->nslots)
		places_grow(p);
	size_t h = place_hash(key) & (p->nslots - 1);
	for (; p->slots[h]; h = (h + 1) & (p->nslots - 1)) {
		pl_place *e = &p->v[p->slots[h] - 1];
		if (same_place(e, key)) {
			e->samples++;
			e->period += period;
			return;
		}
	}
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 1024;
		p->v = pl_xrealloc(p->v, p->cap * sizeof *p->v);
	}
	pl_place *e = &p->v[p->n];
	*e = *key;
	e->samples = 1;
	e->period = period;
	p->slots[h] = (uint32_t)++p->n;
}

void pl_places_free(pl_places *p)
{
	free(p->v);
	free(p->slots);
	memset(p, 0, sizeof *p);
}
