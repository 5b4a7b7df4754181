/* relocate.c - the code of a relocatable object (.o, .ko) as the linked
 * program would run it.
 *
 * Owns m->ext (the undefined symbols) and m->reloc_bufs (the relocated copies
 * of the executable sections).
 *
 * In an ET_REL file every call and jump to another section or to another
 * object holds a placeholder (a call to the next instruction, rel32 = -4)
 * and a relocation says what goes there.  Decoded as is, `jmp
 * __x86_return_thunk` is a jump to the next instruction and every call to a
 * static function in .text.unlikely looks like a call to the next one, so
 * the CFGs are wrong.  libdwfl relocates only the DWARF sections; here we
 * apply the relocations of the executable sections ourselves, against the
 * section layout module.c reports (libdwfl's, shifted so that .text is at 0,
 * the address objdump and readelf show for .text symbols).
 *
 * Symbols the object does not define (printk, __x86_return_thunk, ...) get
 * addresses of their own past the end of the layout, one per name, so that
 * a call to one is a call outside the module with a name that the CFG
 * builder can recognize (thunks, functions that never return).
 */
#include "elf/module.h"
#include "elf/relocate.h"
#include "support/base.h"

#include <stdlib.h>
#include <string.h>

/* Where the undefined symbols go: past everything laid out, 16 bytes apart. */
#define EXT_GAP 0x10000
#define EXT_STEP 16

/* A section's address in the module's link-time space, or UINT64_MAX if it
 * is not laid out (not SHF_ALLOC). */
static uint64_t section_addr(const ls_module *m, size_t shndx)
{
	Elf_Scn *scn = elf_getscn(m->elf, shndx);
	GElf_Shdr sh;
	if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
		return UINT64_MAX;
	return sh.sh_addr - m->bias;
}

/* The symbol table: its data, its string table's index, its symbol count. */
struct symtab {
	Elf_Data *data;
	size_t strndx, n;
};

static bool find_symtab(const ls_module *m, struct symtab *st)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		st->data = elf_getdata(scn, NULL);
		st->strndx = sh.sh_link;
		st->n = st->data ? st->data->d_size / sh.sh_entsize : 0;
		return st->data != NULL;
	}
	return false;
}

/* Gives every undefined symbol an address; returns per symbol index its
 * address (UINT64_MAX: none), for the relocation pass. */
static uint64_t *assign_externals(ls_module *m, const struct symtab *st)
{
	uint64_t end = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		/* (sections laid out below .text, the notes, are below 0: skip them) */
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) && sh.sh_addr >= m->bias &&
		    sh.sh_addr - m->bias + sh.sh_size > end)
			end = sh.sh_addr - m->bias + sh.sh_size;
	}
	uint64_t next = ((end + EXT_GAP - 1) & ~(uint64_t)(EXT_GAP - 1)) + EXT_GAP;
	uint64_t *value = ls_xmalloc((st->n + 1) * sizeof *value);
	size_t cap = 0;
	for (size_t i = 0; i < st->n; i++) {
		GElf_Sym s;
		value[i] = UINT64_MAX;
		if (!gelf_getsym(st->data, (int)i, &s) || s.st_shndx != SHN_UNDEF || i == 0)
			continue;
		const char *name = elf_strptr(m->elf, st->strndx, s.st_name);
		if (!name || !*name)
			continue;
		value[i] = next;
		m->ext = ls_grow(m->ext, &cap, m->next + 1, sizeof *m->ext);
		m->ext[m->next++] = (struct ls_extern){ next, ls_intern(&m->strings, name) };
		next += EXT_STEP;
	}
	return value;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4); /* x86-64: little-endian like the host we build for */
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Applies the RELA section RSCN to the bytes of the executable section it
 * targets (a private copy, so that the mapping stays untouched). */
static void apply_rela(ls_module *m, Elf_Scn *rscn, const GElf_Shdr *rsh, const struct symtab *st,
                       const uint64_t *ext_value)
{
	Elf_Scn *tscn = elf_getscn(m->elf, rsh->sh_info);
	GElf_Shdr tsh;
	if (!tscn || !gelf_getshdr(tscn, &tsh) || !(tsh.sh_flags & SHF_EXECINSTR) || !(tsh.sh_flags & SHF_ALLOC))
		return;
	uint64_t base = tsh.sh_addr - m->bias;
	struct ls_text *t = NULL;
	for (size_t i = 0; i < m->ntext; i++)
		if (m->text[i].addr == base && m->text[i].size == tsh.sh_size)
			t = &m->text[i];
	Elf_Data *rd = elf_getdata(rscn, NULL);
	if (!t || !rd || !rsh->sh_entsize)
		return;
	uint8_t *buf = ls_xmalloc(t->size + 8);
	memcpy(buf, t->data, t->size);
	__typeof__(m->reloc_bufs) bufs = realloc(m->reloc_bufs, (m->nreloc_bufs + 1) * sizeof *m->reloc_bufs);
	if (!bufs) {
		free(buf);
		ls_oom_raise();
	}
	m->reloc_bufs = bufs;
	m->reloc_bufs[m->nreloc_bufs++] = buf;
	t->data = buf;

	size_t nrel = rd->d_size / rsh->sh_entsize;
	for (size_t i = 0; i < nrel; i++) {
		GElf_Rela r;
		GElf_Sym s;
		if (!gelf_getrela(rd, (int)i, &r))
			break;
		size_t si = GELF_R_SYM(r.r_info);
		if (si >= st->n || !gelf_getsym(st->data, (int)si, &s))
			continue;
		uint64_t S;
		if (s.st_shndx == SHN_UNDEF)
			S = ext_value[si];
		else if (s.st_shndx == SHN_ABS)
			S = s.st_value;
		else if (s.st_shndx < SHN_LORESERVE && (S = section_addr(m, s.st_shndx)) != UINT64_MAX)
			S += s.st_value;
		else
			continue;
		if (S == UINT64_MAX || r.r_offset >= t->size)
			continue;
		uint64_t P = base + r.r_offset, A = (uint64_t)r.r_addend;
		uint8_t *at = buf + r.r_offset;
		size_t room = t->size - r.r_offset;
		switch (GELF_R_TYPE(r.r_info)) {
		case R_X86_64_PC32:
		case R_X86_64_PLT32:
			if (room >= 4)
				put32(at, (uint32_t)(S + A - P));
			break;
		case R_X86_64_32:
		case R_X86_64_32S:
			if (room >= 4)
				put32(at, (uint32_t)(S + A));
			break;
		case R_X86_64_64:
			if (room >= 8)
				put64(at, S + A);
			break;
		case R_X86_64_PC64:
			if (room >= 8)
				put64(at, S + A - P);
			break;
		default:
			break; /* GOT and TLS forms: not in kernel modules */
		}
	}
}

void ls_relocate_text(ls_module *m)
{
	if (!m->relocatable || m->ehdr.e_machine != EM_X86_64)
		return;
	struct symtab st;
	if (!find_symtab(m, &st))
		return;
	uint64_t *ext_value = assign_externals(m, &st);
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA)
			apply_rela(m, scn, &sh, &st, ext_value);
	}
	free(ext_value);
}

const char *ls_extern_name(const ls_module *m, uint64_t addr)
{
	size_t lo = LS_FIRST_AT_LEAST(m->ext, m->next, addr, addr);
	return lo < m->next && m->ext[lo].addr == addr ? m->ext[lo].name : NULL;
}

void ls_relocate_free(ls_module *m)
{
	for (size_t i = 0; i < m->nreloc_bufs; i++)
		free(m->reloc_bufs[i]);
	free(m->reloc_bufs);
	free(m->ext);
	m->reloc_bufs = NULL;
	m->nreloc_bufs = 0;
	m->ext = NULL;
	m->next = 0;
}
