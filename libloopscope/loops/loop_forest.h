/* loop_forest.h - the loop nesting forest of a CFG (Havlak, TOPLAS 1997),
 * irreducible loops included with all their entries. */
#ifndef LOOPSCOPE_LOOP_FOREST_H
#define LOOPSCOPE_LOOP_FOREST_H

#include "cfg/cfg.h"

struct ls_loop {
	uint32_t header;           /* block index */
	int32_t parent;            /* index into forest->loops, -1 for a top-level loop */
	unsigned depth;            /* 1 for top-level loops */
	bool irreducible;
	uint32_t *entries;         /* blocks entered from outside the loop (header first) */
	size_t nentries;
	struct ls_cfg_edge *backedges; /* edges into the header(s) from inside the loop */
	size_t nbackedges;
	struct ls_cfg_edge *exits; /* edges from inside the loop to outside */
	size_t nexits;
	uint32_t *blocks;          /* every block of the loop, nested loops' blocks included */
	size_t nblocks;
};

struct ls_loop_forest {
	struct ls_loop *loops;     /* parents before children */
	size_t nloops;
	int32_t *block_loop;       /* per block: the innermost loop containing it, or -1 */
};

int ls_loop_forest_build(const struct ls_cfg *cfg, struct ls_loop_forest *f);
void ls_loop_forest_free(struct ls_loop_forest *f);

#endif
