/* analyze.h - the per-procedure stages on N threads (analyze.c):
 * reads procs, lines, the inline tree; makes m->root. */
#ifndef LOOPSCOPE_ANALYZE_H
#define LOOPSCOPE_ANALYZE_H

#include "elf/module.h"

/* analyze.c: build m->root from procs, lines, inline tree, CFGs and loops. */
int ls_analyze(ls_module *m, ls_error *err);

#endif
