/* accesses.h - the accesses stage (accesses.c): what each memory operand of
 * a procedure reaches, computed on demand, one procedure at a time. */
#ifndef LOOPSCOPE_DATA_ACCESSES_H
#define LOOPSCOPE_DATA_ACCESSES_H

#include "support/base.h"

/* The module's index of variables at static addresses (built on first use,
 * freed with the module). */
struct ls_data_globals;
void ls_data_free(ls_module *m);
/* The DWARF read as the accesses read it (and that index built), for a
 * stage that reads the DWARF after accesses from the cache (blame.c).
 * Under an out-of-memory guard. */
void ls_data_read_dwarf(const ls_module *m);

/* For the cache (cache/cache_accesses.c), which stores a procedure's
 * accesses and makes the set again from what it stored. */
/* What the layout of access I of SET needs: its type's DIE (0: none) and
 * whether its CU is C. */
uint64_t ls_accesses_type_die(const ls_accesses *set, size_t i, bool *c_lang);
/* The starts of the basic blocks, ascending. */
size_t ls_accesses_blocks(const ls_accesses *set, const uint64_t **blocks);
/* An empty set of procedure PROC (its lowest address) of M, to which
 * ls_accesses_add adds; STRINGS (malloc'ed, or NULL), where the strings of
 * the accesses added point, and BLOCKS (malloc'ed: NBLOCKS starts,
 * ascending) are the set's, freed with it. */
ls_accesses *ls_accesses_new(const ls_module *m, uint64_t proc, char *strings, uint64_t *blocks, size_t nblocks);
void ls_accesses_add(ls_accesses *set, const ls_access *a, uint64_t type_die, bool c_lang);

#endif
