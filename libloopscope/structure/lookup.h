/* lookup.h - the lookups (lookup.c): address -> statement, through each
 * procedure's statements by address (analyze.c makes them). */
#ifndef LOOPSCOPE_LOOKUP_H
#define LOOPSCOPE_LOOKUP_H

#include "structure/scope.h"

/* ---- the lookup index (lookup.c) ------------------------------------------ */

struct ls_stmt_seg {
	uint64_t lo, hi;
	const struct ls_scope *stmt;
};
struct ls_lookup_index {
	struct ls_stmt_seg *segs;
	size_t nsegs;
};
/* SEGS (N) sorted by address, overlaps clipped (a later one starts where
 * the one before ends): how many are left. */
size_t ls_lookup_segs_sort(struct ls_stmt_seg *segs, size_t n);
/* Index every statement range of the tree below ROOT (the checks). */
int ls_lookup_index_build(struct ls_lookup_index *ix, const struct ls_scope *root, ls_error *err);
void ls_lookup_index_free(struct ls_lookup_index *ix);

#endif
