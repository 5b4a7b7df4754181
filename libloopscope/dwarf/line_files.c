/* line_files.c - a unit's file table from its line program header alone.
 *
 * Why this exists: naming a DW_AT_decl_file needs only the file table,
 * but libdw 0.188's dwarf_getsrcfiles gets it by decoding the unit's whole
 * line program (every row, a sort, mallocs).  On a system-wide report
 * that was half of the inline-tree stage (libc: 1,619 units).  This reads
 * the header (DWARF 2-5, 32- and 64-bit) and nothing after it.
 *
 * The names must be exactly libdw's: the composition below is that of
 * read_srclines in libdw 0.188 (dwarf_getsrclines.c), and the final path
 * that of ls_cu_file_path (linemap.c).  Every read is bounds-checked; on
 * anything malformed or not decoded here (split units, strx paths,
 * unusual forms, another byte order) ls_line_files_read says no and the
 * caller asks libdw, so bad input behaves as it did.  The one difference:
 * a unit whose header is sound but whose program after it is corrupt
 * (libdw then gives no table at all) gets its files named. */
#include "dwarf/line_files.h"
#include "dwarf/linemap.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

/* A bounds-checked cursor over [p, end). */
struct cursor {
	const unsigned char *p, *end;
	bool ok;
};

static uint64_t rd(struct cursor *c, size_t n)
{
	if (!c->ok || (size_t)(c->end - c->p) < n) {
		c->ok = false;
		return 0;
	}
	uint64_t v = 0;  /* of the first 8 bytes: DW_FORM_data16 is only skipped */
	for (size_t i = 0; i < n && i < 8; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static uint64_t rd_uleb(struct cursor *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0; c->ok; shift += 7) {
		if (c->p >= c->end || shift > 63) {
			c->ok = false;
			break;
		}
		unsigned char b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	return 0;
}

/* A NUL-terminated string at the cursor; NULL (and !ok) if unterminated. */
static const char *rd_cstr(struct cursor *c, size_t *len)
{
	if (!c->ok)
		return NULL;
	const unsigned char *nul = memchr(c->p, 0, (size_t)(c->end - c->p));
	if (!nul) {
		c->ok = false;
		return NULL;
	}
	const char *s = (const char *)c->p;
	*len = (size_t)(nul - c->p);
	c->p = nul + 1;
	return s;
}

/* The string at OFF of section D, NUL-terminated inside it; else NULL. */
static const char *section_str(Elf_Data *d, uint64_t off, size_t *len)
{
	if (!d || !d->d_buf || off >= d->d_size)
		return NULL;
	const char *s = (const char *)d->d_buf + off;
	const char *nul = memchr(s, 0, d->d_size - off);
	if (!nul)
		return NULL;
	*len = (size_t)(nul - s);
	return s;
}

/* Finds the sections of DBG as libdw did: the first of each name, with
 * its data already decompressed by libdw. */
static void find_sections(struct ls_line_files *lf, Dwarf *dbg)
{
	lf->dbg = dbg;
	lf->usable = false;
	lf->line = lf->str = lf->line_str = NULL;
	Elf *elf = dwarf_getelf(dbg);
	size_t shstrndx;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	const char *ident = elf_getident(elf, NULL);
	if (!ident || ident[EI_DATA] != ELFDATA2LSB)
		return;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (name[0] == '.' && name[1] == 'z')  /* .zdebug_*: GNU-compressed, libdw expanded it */
			name++;
		Elf_Data **slot = strcmp(name, ".debug_line") == 0 ? &lf->line
			: strcmp(name, ".debug_str") == 0 ? &lf->str
			: strcmp(name, ".debug_line_str") == 0 ? &lf->line_str : NULL;
		if (!slot || *slot)
			continue;
		if (sh.sh_flags & SHF_COMPRESSED)
			return;  /* not expanded: leave it all to libdw */
		*slot = elf_getdata(scn, NULL);
		if (!*slot || !(*slot)->d_buf)
			return;
	}
	lf->usable = lf->line != NULL;
}

/* How many bytes a value of FORM takes in a DWARF 5 entry; false for a
 * form this reader does not skip (the caller then gives up). */
static bool skip_form(struct cursor *c, unsigned form, unsigned offset_size)
{
	size_t len;
	switch (form) {
	case DW_FORM_string: rd_cstr(c, &len); break;
	case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_sec_offset:
		rd(c, offset_size); break;
	case DW_FORM_data1: case DW_FORM_flag: case DW_FORM_strx1: rd(c, 1); break;
	case DW_FORM_data2: case DW_FORM_strx2: rd(c, 2); break;
	case DW_FORM_strx3: rd(c, 3); break;
	case DW_FORM_data4: case DW_FORM_strx4: rd(c, 4); break;
	case DW_FORM_data8: rd(c, 8); break;
	case DW_FORM_data16: rd(c, 16); break;
	case DW_FORM_udata: case DW_FORM_sdata: case DW_FORM_strx: rd_uleb(c); break;
	case DW_FORM_block: case DW_FORM_block1: case DW_FORM_block2: case DW_FORM_block4: {
		uint64_t n = form == DW_FORM_block ? rd_uleb(c)
			: rd(c, form == DW_FORM_block1 ? 1 : form == DW_FORM_block2 ? 2 : 4);
		if (c->ok && n > (uint64_t)(c->end - c->p))
			c->ok = false;
		if (c->ok)
			c->p += n;
		break;
	}
	default: return false;
	}
	return c->ok;
}

/* A path value of FORM (string, strp, line_strp); NULL if not one. */
static const char *read_path(struct ls_line_files *lf, struct cursor *c, unsigned form,
                             unsigned offset_size, size_t *len)
{
	if (form == DW_FORM_string)
		return rd_cstr(c, len);
	if (form != DW_FORM_strp && form != DW_FORM_line_strp)
		return NULL;
	uint64_t off = rd(c, offset_size);
	if (!c->ok)
		return NULL;
	return section_str(form == DW_FORM_strp ? lf->str : lf->line_str, off, len);
}

/* A directory index value of FORM; false if not one read here. */
static bool read_index(struct cursor *c, unsigned form, uint64_t *v)
{
	switch (form) {
	case DW_FORM_data1: *v = rd(c, 1); break;
	case DW_FORM_data2: *v = rd(c, 2); break;
	case DW_FORM_data4: *v = rd(c, 4); break;
	case DW_FORM_data8: *v = rd(c, 8); break;
	case DW_FORM_udata: *v = rd_uleb(c); break;
	default: return false;
	}
	return c->ok;
}

static struct ls_line_file *new_file(struct ls_line_files *lf)
{
	lf->files = ls_grow(lf->files, &lf->cap_files, lf->nfiles + 1, sizeof *lf->files);
	return &lf->files[lf->nfiles++];
}

static const char **new_dir(struct ls_line_files *lf)
{
	lf->dirs = ls_grow(lf->dirs, &lf->cap_dirs, lf->ndirs + 1, sizeof *lf->dirs);
	return &lf->dirs[lf->ndirs++];
}

/* DWARF 2-4: include_directories then file_names, NUL-terminated lists. */
static bool read_v4_tables(struct ls_line_files *lf, struct cursor *c, const char *comp_dir)
{
	*new_dir(lf) = comp_dir;
	size_t len;
	while (c->ok && c->p < c->end && *c->p)
		*new_dir(lf) = rd_cstr(c, &len);
	if (rd(c, 1) != 0 || !c->ok)  /* the list's final NUL */
		return false;
	if (c->p >= c->end)
		return false;
	while (c->p < c->end && *c->p) {
		struct ls_line_file *f = new_file(lf);
		f->name = rd_cstr(c, &f->len);
		if (!c->ok || c->p >= c->end)
			return false;
		f->dir = rd_uleb(c);
		if (!c->ok || f->dir >= lf->ndirs || c->p >= c->end)
			return false;
		rd_uleb(c);  /* mtime */
		if (!c->ok || c->p >= c->end)
			return false;
		rd_uleb(c);  /* length */
		if (!c->ok)
			return false;
	}
	return rd(c, 1) == 0 && c->ok;
}

/* A DWARF 5 entry format: *NFORMS (desc, form) pairs into FORMS; the
 * positions of DW_LNCT_path and DW_LNCT_directory_index (-1: none). */
static bool read_format(struct cursor *c, uint16_t forms[256], unsigned *nforms, int *path, int *idx)
{
	*nforms = (unsigned)rd(c, 1);
	*path = *idx = -1;
	for (unsigned i = 0; i < *nforms && c->ok; i++) {
		uint16_t desc = (uint16_t)rd_uleb(c);
		forms[i] = (uint16_t)rd_uleb(c);
		if (desc == DW_LNCT_path)
			*path = (int)i;
		else if (desc == DW_LNCT_directory_index)
			*idx = (int)i;
	}
	return c->ok;
}

/* One DWARF 5 entry of NFORMS FORMS: its path and directory index. */
static bool read_v5_entry(struct ls_line_files *lf, struct cursor *c, const uint16_t *forms,
                          unsigned nforms, int path, int idx, unsigned offset_size,
                          struct ls_line_file *out)
{
	out->name = NULL;
	out->dir = UINT64_MAX;
	for (unsigned m = 0; m < nforms; m++) {
		if ((int)m == path)
			out->name = read_path(lf, c, forms[m], offset_size, &out->len);
		else if ((int)m == idx) {
			if (!read_index(c, forms[m], &out->dir))
				return false;
		} else if (!skip_form(c, forms[m], offset_size))
			return false;
		if (!c->ok)
			return false;
	}
	return out->name != NULL;
}

static bool read_v5_tables(struct ls_line_files *lf, struct cursor *c, unsigned offset_size)
{
	uint16_t forms[256];
	unsigned nforms;
	int path, idx;
	if (!read_format(c, forms, &nforms, &path, &idx) || (nforms > 0 && path < 0))
		return false;
	uint64_t n = rd_uleb(c);
	if (!c->ok || (nforms == 0 && n != 0) || (nforms && n > (uint64_t)(c->end - c->p) / nforms))
		return false;
	for (uint64_t k = 0; k < n; k++) {
		struct ls_line_file e;
		if (!read_v5_entry(lf, c, forms, nforms, path, -1, offset_size, &e))
			return false;
		*new_dir(lf) = e.name;
	}
	if (!read_format(c, forms, &nforms, &path, &idx) || (nforms > 0 && (path < 0 || idx < 0)))
		return false;
	n = rd_uleb(c);
	if (!c->ok || (nforms == 0 && n != 0) || (nforms && n > (uint64_t)(c->end - c->p) / nforms))
		return false;
	for (uint64_t k = 0; k < n; k++) {
		struct ls_line_file e;
		if (!read_v5_entry(lf, c, forms, nforms, path, idx, offset_size, &e) || e.dir >= lf->ndirs)
			return false;
		/* File 0 takes the place of libdw's "???" entry 0. */
		*(k == 0 ? &lf->files[0] : new_file(lf)) = e;
	}
	return true;
}

/* The header at OFF of .debug_line up to the file tables; then the
 * tables, and libdw's check that they end where header_length says. */
static bool read_header(struct ls_line_files *lf, uint64_t off, unsigned address_size, const char *comp_dir)
{
	if (off >= lf->line->d_size)
		return false;
	struct cursor c = { (const unsigned char *)lf->line->d_buf + off,
	                    (const unsigned char *)lf->line->d_buf + lf->line->d_size, true };
	uint64_t unit_length = rd(&c, 4);
	unsigned offset_size = 4;
	if (unit_length == 0xffffffff) {
		unit_length = rd(&c, 8);
		offset_size = 8;
	}
	if (!c.ok || unit_length > (uint64_t)(c.end - c.p))
		return false;
	c.end = c.p + unit_length;
	unsigned version = (unsigned)rd(&c, 2);
	if (!c.ok || version < 2 || version > 5)
		return false;
	if (version >= 5 && (rd(&c, 1) != address_size || rd(&c, 1) != 0))
		return false;
	uint64_t header_length = rd(&c, offset_size);
	const unsigned char *header_start = c.p;
	rd(&c, version >= 4 ? 2 : 1);  /* minimum_instruction_length, max ops */
	if (version >= 4 && c.ok && c.p[-1] == 0)
		return false;
	rd(&c, 3);  /* default_is_stmt, line_base, line_range */
	unsigned opcode_base = (unsigned)rd(&c, 1);
	if (!c.ok || opcode_base == 0 || (size_t)(c.end - c.p) < opcode_base - 1)
		return false;
	c.p += opcode_base - 1;
	/* Index 0 is libdw's "???" (the name of no file) until DWARF 5's
	 * file 0 replaces it. */
	lf->nfiles = lf->ndirs = 0;
	*new_file(lf) = (struct ls_line_file){ "???", 3, UINT64_MAX };
	if (!(version < 5 ? read_v4_tables(lf, &c, comp_dir) : read_v5_tables(lf, &c, offset_size)))
		return false;
	if (header_length > (uint64_t)(c.end - header_start))
		return false;
	const unsigned char *header_end = header_start + header_length;
	return c.p == header_end || (header_length >= 4 && c.p == header_end - 4);
}

bool ls_line_files_read(Dwarf_Die *cudie, struct ls_line_files *lf)
{
	Dwarf_Half version;
	uint8_t unit_type, address_size, offset_size;
	if (!cudie || !cudie->cu ||
	    dwarf_cu_info(cudie->cu, &version, &unit_type, NULL, NULL, NULL, &address_size, &offset_size) != 0 ||
	    (unit_type != DW_UT_compile && unit_type != DW_UT_partial))
		return false;
	Dwarf *dbg = dwarf_cu_getdwarf(cudie->cu);
	if (!dbg)
		return false;
	if (dbg != lf->dbg)
		find_sections(lf, dbg);
	if (!lf->usable)
		return false;
	Dwarf_Attribute a;
	Dwarf_Word off;
	if (!dwarf_attr(cudie, DW_AT_stmt_list, &a) || dwarf_formudata(&a, &off) != 0)
		return false;
	const char *comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
	return read_header(lf, off, address_size, comp_dir);
}

/* ls_cu_file_path's in_dir0 (linemap.c) over this table's directories. */
static bool in_dir0(const struct ls_line_files *lf, const char *name)
{
	if (lf->ndirs == 0 || !lf->dirs[0] || !lf->dirs[0][0])
		return false;
	size_t n0 = strlen(lf->dirs[0]);
	if (strncmp(name, lf->dirs[0], n0) != 0 || name[n0] != '/')
		return false;
	for (size_t k = 1; k < lf->ndirs; k++) {
		size_t nk = lf->dirs[k] ? strlen(lf->dirs[k]) : 0;
		if (nk > n0 && strncmp(name, lf->dirs[k], nk) == 0 && name[nk] == '/')
			return false;
	}
	return true;
}

const char *ls_line_file_path(struct ls_strtab *t, struct ls_line_files *lf, size_t idx, const char *comp_dir)
{
	if (idx >= lf->nfiles)
		return NULL;
	const struct ls_line_file *f = &lf->files[idx];
	/* read_srclines: an absolute name as it is, else joined to its
	 * directory entry when that is known. */
	const char *dir = f->name[0] != '/' && f->dir != UINT64_MAX ? lf->dirs[f->dir] : NULL;
	size_t dlen = dir ? strlen(dir) : 0;
	lf->buf = ls_grow(lf->buf, &lf->cap_buf, dlen + 1 + f->len + 1, 1);
	char *p = lf->buf;
	if (dir) {
		memcpy(p, dir, dlen);
		p += dlen;
		*p++ = '/';
	}
	memcpy(p, f->name, f->len);
	p[f->len] = 0;
	if (lf->buf[0] != '/' && in_dir0(lf, lf->buf))
		comp_dir = NULL;
	return ls_source_path(t, comp_dir, lf->buf);
}

void ls_line_files_free(struct ls_line_files *lf)
{
	free(lf->files);
	free(lf->dirs);
	free(lf->buf);
	*lf = (struct ls_line_files){ 0 };
}
