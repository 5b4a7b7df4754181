/* scope.h - the scope tree (scope.c): what the analysis makes and
 * the cache, the lookups and the writers read. */
#ifndef LOOPSCOPE_SCOPE_H
#define LOOPSCOPE_SCOPE_H

#include "support/base.h"

/* ---- the scope tree (scope.c) ------------------------------------------- */

struct ls_loop_info {
	uint64_t header;
	uint64_t *entries;   size_t nentries;
	ls_edge *backedges;  size_t nbackedges;
	ls_edge *exits;      size_t nexits;
	unsigned depth;
	bool irreducible;
};

struct ls_scope {
	ls_scope_kind kind;
	struct ls_scope *parent, *first_child, *last_child, *next_sibling;
	const char *name;          /* proc, inline */
	const char *linkage_name;  /* proc */
	const char *file;
	unsigned line;
	const char *call_file;     /* inline */
	unsigned call_line, call_column;
	ls_range *ranges;          /* sorted, merged */
	size_t nranges, cap_ranges;
	struct ls_loop_info *loop; /* loop */
	unsigned unresolved_jumps; /* proc: indirect jumps that look like jump tables but have no
	                            * known targets (cfg.c): its loops may be incomplete */
	uint64_t first_unresolved; /* proc: the first of those jumps, for the warning */
	unsigned cut;              /* stmt: inlined calls of its context left out above it, past
	                            * LS_MAX_INLINE_SCOPES (structure.h) */
	const void *key;           /* builder's identity of the node (inl node, loop); not saved */
};

struct ls_scope *ls_scope_new(struct ls_arena *a, ls_scope_kind kind, struct ls_scope *parent);
void ls_scope_add_child(struct ls_scope *parent, struct ls_scope *child);
void ls_scope_unlink(struct ls_scope *child);
/* Append [lo,hi) to S's ranges, merging with the last one when adjacent. */
void ls_scope_add_range(struct ls_arena *a, struct ls_scope *s, uint64_t lo, uint64_t hi);
/* Sort and merge S's ranges. */
void ls_scope_normalize_ranges(struct ls_scope *s);
/* The warnings of procedure PROC of the binary at PATH: its unresolved
 * indirect jumps (if JUMPS: the analysis has said so already) and, if CUT,
 * its inlined calls nested too deep (CUT: the most cut above a statement,
 * ls_scope.cut).  The same words from the analysis and from a cache hit. */
void ls_warn_proc_marks(const ls_options *opt, const char *path, const struct ls_scope *proc, bool jumps,
                        unsigned cut);

#endif
