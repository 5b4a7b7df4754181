/* check.h - the invariants of the indexes and of the scope tree
 * (check.c): what the unit tests and --enable-debug-checks check. */
#ifndef LOOPSCOPE_CHECK_H
#define LOOPSCOPE_CHECK_H

#include "elf/module.h"

/* ---- invariants (check.c) --------------------------------------------------- */

/* What ls_check_module checks: the indexes the analysis reads, and the
 * scope tree it makes. */
enum ls_check {
	LS_CHECK_INLINE_SEGMENTS, /* sorted, non-overlapping, none lexical */
	LS_CHECK_INLINE_NODES,    /* subprograms are roots, inlined depth = parent + 1 */
	LS_CHECK_PROCS,           /* address index and entries sorted, unique */
	LS_CHECK_LINES,           /* rows sorted, in text, gaps single, table closed */
	LS_CHECK_TREE,            /* module > file > proc > ...; links, ranges, loops */
	LS_CHECK_LOOKUP,          /* the lookup index is the tree's (also when read from the cache) */
	LS_NCHECKS
};
/* NULL if invariant WHICH holds in M, else where it breaks (a thread's
 * static buffer).  ABSOLUTE_FILES: line rows must name absolute files. */
const char *ls_check_module(const ls_module *m, enum ls_check which, bool absolute_files);
/* configure --enable-debug-checks: every check, at the end of each
 * ls_module_open, aborting with the broken one; otherwise nothing. */
void ls_debug_check_module(const ls_module *m);

#endif
