/* relocate.h - relocatable objects: the relocations of an ET_REL file applied to
 * its code (relocate.c; a part of opening the file, module.c). */
#ifndef LOOPSCOPE_RELOCATE_H
#define LOOPSCOPE_RELOCATE_H

#include "support/base.h"

/* ---- relocatable objects (relocate.c) --------------------------------------- */

/* An undefined symbol of an ET_REL file at the address relocate.c gave it. */
struct ls_extern {
	uint64_t addr;
	const char *name;          /* interned */
};

/* Applies the relocations of an ET_REL file's executable sections to private
 * copies of their bytes (m->text[].data), giving undefined symbols addresses
 * of their own (m->ext).  Nothing to do for other files. */
void ls_relocate_text(ls_module *m); /* cannot fail: bad relocations are skipped */
/* The undefined symbol relocate.c placed at ADDR, or NULL. */
const char *ls_extern_name(const ls_module *m, uint64_t addr);
void ls_relocate_free(ls_module *m);

#endif
