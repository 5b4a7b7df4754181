/* symbols.h - the symbol table by name and address (symbols.c), built on
 * first use from the ELF symbol table; what name lookups read. */
#ifndef LOOPSCOPE_SYMBOLS_H
#define LOOPSCOPE_SYMBOLS_H

#include "support/base.h"

/* ---- the symbol table by name and address (symbols.c) ---------------------- */

/* Built on first use, from the ELF symbol table (the same with and without
 * the cache); freed by ls_symindex_free. */
struct ls_symindex;
/* The symbol NAME (a function first, a global one first): its address and
 * st_size; -1 if there is none. */
int ls_symindex_find(const ls_module *m, const char *name, uint64_t *addr, uint64_t *size);
void ls_symindex_free(ls_module *m);

#endif
