/* kernel_edges.c - the control flow the kernel's own tables add to its code.
 *
 *   - Jump labels (static keys: static_branch_likely/unlikely, asm goto):
 *     each site is a 2- or 5-byte jmp or nop that the kernel patches at run
 *     time into the other one.  Either way the code goes on at the next
 *     instruction or at the site's target, so a site is a conditional
 *     branch to its target.  `__jump_table` lists them: entries of { s32
 *     code, s32 target, long key }, each s32 relative to its own field.
 *     Followed as they are linked, the loops of native_queued_spin_lock_-
 *     slowpath, __schedule and some 50 other hot functions are not loops.
 *   - WARN sites: WARN_ON() is a ud2 that traps into the kernel's handler,
 *     which prints the report and resumes after it; BUG() is a ud2 that
 *     does not come back.  `__bug_table` tells them apart: entries of {
 *     s32 bug_addr, s32 file, u16 line, u16 flags } (CONFIG_DEBUG_BUGVERBOSE;
 *     { s32 bug_addr, u16 flags } without it), BUGFLAG_WARNING in flags.
 *     A WARN's ud2 falls through; a loop that warns in its body stays one.
 *   - 32-bit code: the PVH entry point (pvh_start_xen, `.code32` in
 *     arch/x86/platform/pvh/head.S) does not decode as x86-64 and is not
 *     analyzed (its statements still come from the line table).
 *
 * vmlinux keeps its tables as linked (__start___jump_table ..
 * __stop___jump_table, section __bug_table), as does a module linked by
 * ld (sections __jump_table and __bug_table); a .ko's tables hold
 * placeholders and the relocations in .rela__jump_table and
 * .rela__bug_table say what they point to, against the layout of
 * module.c (the field's address is S + A for an R_X86_64_PC32).
 */
#include "cfg/cfg_private.h"
#include "elf/module.h"

#include <stdlib.h>
#include <string.h>

#define BUGFLAG_WARNING 1u

/* ---- reading the tables --------------------------------------------------- */

/* The bytes of the allocated section holding [ADDR, ADDR+SIZE) of M, or NULL. */
static const uint8_t *bytes_at(const ls_module *m, uint64_t addr, uint64_t size)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS)
			continue;
		uint64_t lo = sh.sh_addr - m->bias;
		if (addr < lo || addr - lo > sh.sh_size || size > sh.sh_size - (addr - lo))
			continue;
		Elf_Data *d = elf_rawdata(scn, NULL);
		return d && d->d_buf && d->d_size >= sh.sh_size ? (const uint8_t *)d->d_buf + (addr - lo) : NULL;
	}
	return NULL;
}

static uint16_t u16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

static void add_site(struct ls_cfg_module *c, size_t *cap, uint64_t addr, uint64_t target, uint8_t kind)
{
	c->ksites = ls_grow(c->ksites, cap, c->nksites + 1, sizeof *c->ksites);
	c->ksites[c->nksites++] = (struct kernel_site){ addr, target, kind };
}

/* A linked table (vmlinux, a module linked by ld): field addresses are
 * relative to the field.  vmlinux's linker script names its bounds; a
 * module linked on its own has the section. */
static void linked_jump_table(const ls_module *m, struct ls_cfg_module *c, size_t *cap)
{
	uint64_t start, stop, size;
	if (ls_module_symbol(m, "__start___jump_table", &start, &size) < 0 ||
	    ls_module_symbol(m, "__stop___jump_table", &stop, &size) < 0) {
		if (ls_module_section(m, "__jump_table", &start, &size) < 0)
			return;
		stop = start + size;
	}
	if (stop <= start || (stop - start) % 16)
		return;
	const uint8_t *p = bytes_at(m, start, stop - start);
	for (uint64_t at = 0; p && at < stop - start; at += 16)
		add_site(c, cap, start + at + (uint64_t)(int64_t)ls_s32le(p + at),
		         start + at + 4 + (uint64_t)(int64_t)ls_s32le(p + at + 4), KSITE_JUMP_LABEL);
}

/* How many of the first entries of a bug table of entries of SIZE bytes
 * point at a ud2 (0f 0b): the table's layout is the one where all do. */
static size_t ud2_hits(const ls_module *m, const uint8_t *p, uint64_t start, uint64_t len, unsigned size)
{
	size_t hits = 0;
	for (uint64_t at = 0; at + size <= len && at < 64 * (uint64_t)size; at += size) {
		const uint8_t *b = bytes_at(m, start + at + (uint64_t)(int64_t)ls_s32le(p + at), 2);
		hits += b && b[0] == 0x0f && b[1] == 0x0b;
	}
	return hits;
}

static void linked_bug_table(const ls_module *m, struct ls_cfg_module *c, size_t *cap)
{
	uint64_t start, len;
	if (ls_module_section(m, "__bug_table", &start, &len) < 0 || !len)
		return;
	const uint8_t *p = bytes_at(m, start, len);
	if (!p)
		return;
	unsigned size = ud2_hits(m, p, start, len, 12) >= ud2_hits(m, p, start, len, 8) ? 12 : 8;
	unsigned flags = size == 12 ? 10 : 4;
	if (len % size)
		return;
	for (uint64_t at = 0; at < len; at += size)
		if (u16(p + at + flags) & BUGFLAG_WARNING)
			add_site(c, cap, start + at + (uint64_t)(int64_t)ls_s32le(p + at), 0, KSITE_WARN);
}

/* ---- a module's tables, through their relocations --------------------------- */

/* Per entry of a relocated table: the addresses its fields point to. */
struct rtable {
	uint64_t *field;   /* [entry * 2 + k]: field k (0 at offset 0, 1 at offset 4), 0 if none */
	size_t n;
	const uint8_t *raw;
	uint64_t len;
};

static Elf_Scn *section_named(const ls_module *m, const char *name, GElf_Shdr *sh, size_t *index)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(m->elf, &shstrndx) < 0)
		return NULL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		const char *sn;
		if (gelf_getshdr(scn, sh) && (sn = elf_strptr(m->elf, shstrndx, sh->sh_name)) && !strcmp(sn, name)) {
			*index = elf_ndxscn(scn);
			return scn;
		}
	}
	return NULL;
}

/* The symbol SI's address in M's layout (defined symbols only). */
static bool symbol_address(const ls_module *m, Elf_Data *symd, size_t si, uint64_t *addr)
{
	GElf_Sym s;
	GElf_Shdr sh;
	Elf_Scn *scn;
	if (!gelf_getsym(symd, (int)si, &s) || s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE ||
	    !(scn = elf_getscn(m->elf, s.st_shndx)) || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
		return false;
	*addr = sh.sh_addr - m->bias + s.st_value;
	return true;
}

/* Table NAME of entries of SIZE bytes, its PC32 fields at offsets 0 and 4
 * resolved through .relaNAME.  false if the module has none. */
static bool relocated_table(const ls_module *m, const char *name, unsigned size, struct rtable *t)
{
	GElf_Shdr sh, rsh;
	size_t idx;
	Elf_Scn *scn = section_named(m, name, &sh, &idx);
	Elf_Data *d = scn ? elf_rawdata(scn, NULL) : NULL;
	if (!d || !d->d_buf || !sh.sh_size || sh.sh_size % size || d->d_size < sh.sh_size)
		return false;
	t->n = sh.sh_size / size;
	t->raw = d->d_buf;
	t->len = sh.sh_size;
	t->field = ls_xcalloc(2 * t->n, sizeof *t->field);
	for (Elf_Scn *r = NULL; (r = elf_nextscn(m->elf, r));) {
		Elf_Data *rd, *symd;
		Elf_Scn *symscn;
		GElf_Shdr symsh;
		if (!gelf_getshdr(r, &rsh) || rsh.sh_type != SHT_RELA || rsh.sh_info != idx || !rsh.sh_entsize ||
		    !(rd = elf_getdata(r, NULL)) || !(symscn = elf_getscn(m->elf, rsh.sh_link)) ||
		    !gelf_getshdr(symscn, &symsh) || !(symd = elf_getdata(symscn, NULL)))
			continue;
		for (size_t i = 0; i < rd->d_size / rsh.sh_entsize; i++) {
			GElf_Rela rel;
			uint64_t s;
			if (!gelf_getrela(rd, (int)i, &rel) || GELF_R_TYPE(rel.r_info) != R_X86_64_PC32 ||
			    rel.r_offset >= sh.sh_size || (rel.r_offset % size != 0 && rel.r_offset % size != 4) ||
			    !symbol_address(m, symd, GELF_R_SYM(rel.r_info), &s))
				continue;
			t->field[rel.r_offset / size * 2 + (rel.r_offset % size == 4)] = s + (uint64_t)rel.r_addend;
		}
	}
	return true;
}

static void module_tables(const ls_module *m, struct ls_cfg_module *c, size_t *cap)
{
	struct rtable t = { 0 };
	if (relocated_table(m, "__jump_table", 16, &t))
		for (size_t i = 0; i < t.n; i++)
			if (t.field[2 * i] && t.field[2 * i + 1])
				add_site(c, cap, t.field[2 * i], t.field[2 * i + 1], KSITE_JUMP_LABEL);
	free(t.field);
	memset(&t, 0, sizeof t);
	if (relocated_table(m, "__bug_table", 12, &t))
		for (size_t i = 0; i < t.n; i++)
			if (t.field[2 * i] && (u16(t.raw + 12 * i + 10) & BUGFLAG_WARNING))
				add_site(c, cap, t.field[2 * i], 0, KSITE_WARN);
	free(t.field);
}

static int cmp_site(const void *a, const void *b)
{
	const struct kernel_site *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void ls_kernel_sites_load(const ls_module *m, struct ls_cfg_module *c)
{
	if (!m->kernel || !m->elf)
		return;
	size_t cap = 0;
	if (m->relocatable) {
		module_tables(m, c, &cap);
	} else {
		linked_jump_table(m, c, &cap);
		linked_bug_table(m, c, &cap);
	}
	if (c->nksites)
		qsort(c->ksites, c->nksites, sizeof *c->ksites, cmp_site);
}

/* ---- using them ----------------------------------------------------------------- */

void ls_kernel_site_apply(const struct ls_cfg_module *c, struct ls_insn *in)
{
	if (!c || !c->nksites)
		return;
	size_t lo = 0, hi = c->nksites;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->ksites[mid].addr < in->addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < c->nksites && c->ksites[lo].addr == in->addr; lo++) {
		const struct kernel_site *s = &c->ksites[lo];
		if (s->kind == KSITE_JUMP_LABEL && (in->kind == LS_INSN_OTHER || in->kind == LS_INSN_JUMP) &&
		    s->target) {
			/* the nop or jmp the kernel patches: either way */
			in->kind = LS_INSN_CJUMP;
			in->target = s->target;
			in->opcode = LS_MN_OTHER;
			in->nops = 0;
		} else if (s->kind == KSITE_WARN && in->kind == LS_INSN_HALT && in->len == 2) {
			in->kind = LS_INSN_OTHER; /* the WARN handler resumes after the ud2 */
		}
	}
}

bool ls_kernel_code32(const ls_module *m, const char *name)
{
	return m->kernel && !m->relocatable && name && !strcmp(name, "pvh_start_xen");
}
