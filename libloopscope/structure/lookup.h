/* lookup.h - the lookup index (lookup.c): reads the scope tree, makes
 * the address -> statement index the lookups search. */
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
/* Index every statement range of the tree below ROOT. */
int ls_lookup_index_build(struct ls_lookup_index *ix, const struct ls_scope *root, ls_error *err);
void ls_lookup_index_free(struct ls_lookup_index *ix);

#endif
