/* scope.h - the scope tree (scope.c): what the analysis makes and
 * the cache, the lookups and the writers read. */
#ifndef LOOPSCOPE_SCOPE_H
#define LOOPSCOPE_SCOPE_H

#include "support/base.h"

/* ---- the scope tree (scope.c) ------------------------------------------- */

/* What the compiler made a loop for, when no loop of the source is it
 * (loops/loop_kind.c finds them; ls_loop_compiler_made() names them). */
enum ls_loop_made {
	LS_MADE_NONE,            /* a loop of the source */
	LS_MADE_MEMCPY,          /* an inlined memcpy/memmove/memset expanded into a loop */
	LS_MADE_MEMMOVE,
	LS_MADE_MEMSET,
	LS_MADE_STACK_PROBE,     /* -fstack-clash-protection's page-by-page probe of a big frame */
	LS_MADE_ARRAY_CTOR,      /* new T[n]'s loop of constructor calls */
	LS_MADE_ARRAY_DTOR,      /* delete[]'s loop of destructor calls */
	LS_MADE_COUNT
};

/* How sure the loop's line is: the rule that chose it, when that rule is
 * a fallback (loops/loop_line.c; ls_loop_line_guessed() names them). */
enum ls_loop_guess {
	LS_GUESS_NONE,           /* the loop's own statement: its test, or read in the source */
	LS_GUESS_BEFORE_BODY,    /* no test of its own: the line before its first */
	LS_GUESS_SLIDES,         /* the slides' ranking of its branches */
	LS_GUESS_HEADER,         /* its header's first line */
	LS_GUESS_ENTRY,          /* no line of its own: the branch entering it */
	LS_GUESS_COUNT
};

struct ls_loop_info {
	uint64_t header;
	uint64_t *entries;   size_t nentries;
	ls_edge *backedges;  size_t nbackedges;
	ls_edge *exits;      size_t nexits;
	unsigned depth;
	bool irreducible;
	uint8_t made;        /* enum ls_loop_made */
	uint8_t guess;       /* enum ls_loop_guess */
	uint16_t part, nparts; /* one source loop made into NPARTS machine loops: this is PART (from 1); 0, 0 */
};

/* The names of enum ls_loop_made and enum ls_loop_guess values (NULL for
 * NONE and out of range). */
const char *ls_loop_made_name(unsigned made);
const char *ls_loop_guess_name(unsigned guess);

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
