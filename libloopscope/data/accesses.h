/* accesses.h - the accesses stage (accesses.c): what each memory operand of
 * a procedure reaches, computed on demand, one procedure at a time. */
#ifndef LOOPSCOPE_DATA_ACCESSES_H
#define LOOPSCOPE_DATA_ACCESSES_H

#include "support/base.h"

/* The module's index of variables at static addresses (built on first use,
 * freed with the module). */
struct ls_data_globals;
void ls_data_free(ls_module *m);

#endif
