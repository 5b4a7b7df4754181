/* recipes.h - the unwind recipes stage (recipes.c): reads a procedure's
 * code through its CFG (cfg/cfg.h) and the scope tree's procedures; makes,
 * lazily per procedure, m->unwind: where the caller's frame is from every
 * instruction.  The public interface is loopscope.h's ls_unwind_*. */
#ifndef LOOPSCOPE_RECIPES_H
#define LOOPSCOPE_RECIPES_H

#include "support/base.h"

/* The recipes computed so far, per procedure (opaque: recipes.c). */
struct ls_unwind_cache;

/* Frees m->unwind: called by ls_module_close. */
void ls_unwind_free(ls_module *m);

#endif
