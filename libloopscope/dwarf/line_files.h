/* line_files.h - a unit's source file table read from its line program
 * HEADER alone (line_files.c), for naming DW_AT_decl_file and friends
 * without dwarf_getsrcfiles, which in libdw 0.188 decodes the whole line
 * program (rows, sort, mallocs) just to hand out the file table. */
#ifndef LOOPSCOPE_LINE_FILES_H
#define LOOPSCOPE_LINE_FILES_H

#include "support/base.h"

/* One unit's table.  Reusable from unit to unit: ls_line_files_read
 * overwrites it; zero-initialize before the first use. */
struct ls_line_files {
	struct ls_line_file {
		const char *name;    /* as in the header (not joined); in the section */
		size_t len;
		uint64_t dir;        /* directory entry */
	} *files;
	size_t nfiles, cap_files;
	const char **dirs;       /* dirs[0]: DW_AT_comp_dir in DWARF 2-4 (may be NULL) */
	size_t ndirs, cap_dirs;
	char *buf;               /* scratch for a composed name */
	size_t cap_buf;
	/* The sections, found once per Dwarf. */
	Dwarf *dbg;
	bool usable;             /* the sections of DBG are read here */
	Elf_Data *line, *str, *line_str;
};

/* Reads the file table of the unit of CUDIE (a DW_UT_compile or partial
 * unit) into LF.  Returns false when the header is malformed or uses what
 * this reader does not decode (then ask dwarf_getsrcfiles: its answer is
 * the one to give). */
bool ls_line_files_read(Dwarf_Die *cudie, struct ls_line_files *lf);
/* File IDX of LF named as ls_cu_file_path names it from the Dwarf_Files of
 * libdw 0.188 for the same unit, interned in T; NULL when LF has no file
 * IDX (a DW_LNE_define_file may have made it: ask libdw). */
const char *ls_line_file_path(struct ls_strtab *t, struct ls_line_files *lf, size_t idx, const char *comp_dir);
void ls_line_files_free(struct ls_line_files *lf);

#endif
