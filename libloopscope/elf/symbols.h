/* symbols.h - the symbol table by name and address (symbols.c), built on
 * first use from the ELF symbol table; what name lookups read. */
#ifndef LOOPSCOPE_SYMBOLS_H
#define LOOPSCOPE_SYMBOLS_H

#include "support/base.h"

#include <string.h>

/* ---- the symbol table by name and address (symbols.c) ---------------------- */

/* Built on first use, from the ELF symbol table (the same with and without
 * the cache); freed by ls_symindex_free. */
struct ls_symindex;
/* The symbol NAME (a function first, a global one first): its address and
 * st_size; -1 if there is none. */
int ls_symindex_find(const ls_module *m, const char *name, uint64_t *addr, uint64_t *size);
void ls_symindex_free(ls_module *m);

/* The names of the text symbols at ADDR exactly (the symbol table only,
 * never the analysis): how many there are, up to CAP of them in OUT. */
size_t ls_module_names_at(const ls_module *m, uint64_t addr, const char **out, size_t cap);

/* Whether a PLT slot of a linked module starts at ADDR (a jump through a
 * GOT slot, as procs.c finds them), and the name of the symbol the dynamic
 * relocation of that GOT slot names, read from the relocations alone:
 * 1 and *NAME; 0 if no slot starts there or no relocation names it; -1 if
 * the name cannot be told (an IRELATIVE slot, unreadable relocations). */
int ls_plt_slot_name(const ls_module *m, uint64_t addr, const char **name);

/* Relocation I of a section of TYPE (SHT_RELA or SHT_REL) whose data is
 * RD, in *OUT (addend 0 for SHT_REL); false past the data.  In a 64-bit
 * file (IS64) straight from the array (libelf has it in memory order):
 * gelf_getrela's copy of each was most of a walk over libLLVM's 355,000
 * dynamic relocations for the few that name GOT slots (procs.c, here). */
bool ls_rel_at(Elf_Data *rd, uint32_t type, bool is64, size_t i, GElf_Rela *out);
/* The type of relocation I of such a section, without reading the rest
 * (~0u past the data): most dynamic relocations are RELATIVE ones
 * (335,000 of libLLVM's 355,000), none of which names a PLT slot.
 * Inline: asked of each of them. */
static inline unsigned ls_rel_type_at(Elf_Data *rd, uint32_t type, bool is64, size_t i)
{
	size_t size = is64 ? (type == SHT_RELA ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel))
	                   : (type == SHT_RELA ? sizeof(Elf32_Rela) : sizeof(Elf32_Rel));
	size_t at = i * size + (is64 ? 8 : 4); /* r_info */
	if (!rd->d_buf || at + (is64 ? 8 : 4) > rd->d_size)
		return ~0u; /* ls_rel_at says why */
	if (is64) {
		uint64_t info;
		memcpy(&info, (const char *)rd->d_buf + at, sizeof info);
		return (unsigned)GELF_R_TYPE(info);
	}
	uint32_t info;
	memcpy(&info, (const char *)rd->d_buf + at, sizeof info);
	return ELF32_R_TYPE(info);
}

#endif
