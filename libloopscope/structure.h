/* structure.h - the structure builder and the normalization passes. */
#ifndef LOOPSCOPE_STRUCTURE_H
#define LOOPSCOPE_STRUCTURE_H

#include "cfg.h"
#include "loop_forest.h"

/* Build PROC's scope subtree (a LS_SCOPE_PROC node, not yet linked into the
 * module) from its CFG and loop forest.  CFG may be NULL (no decoder for the
 * architecture, or the CFG could not be built): then statements come from
 * the line map alone and there are no loops.  Allocates from ARENA only, so
 * that procedures can be built on several threads. */
struct ls_scope *ls_structure_build_proc(const ls_module *m, const struct ls_proc *proc,
                                         const struct ls_cfg *cfg, const struct ls_loop_forest *lf,
                                         struct ls_arena *arena);

/* normalize.c: merge perfectly nested loops with identical ranges, remove
 * empty scopes, and give every scope the sorted union of its children's
 * ranges. */
void ls_normalize_proc(struct ls_scope *proc, struct ls_arena *arena);

#endif
