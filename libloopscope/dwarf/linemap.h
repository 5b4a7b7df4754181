/* linemap.h - the line map stage (linemap.c): reads every CU's line table,
 * makes m->lines. */
#ifndef LOOPSCOPE_LINEMAP_H
#define LOOPSCOPE_LINEMAP_H

#include "support/base.h"

/* ---- line map (linemap.c) ------------------------------------------------ */

struct ls_line_row {
	uint64_t addr;       /* the row covers [addr, next row's addr) */
	const char *file;    /* absolute, interned; NULL marks the end of a sequence */
	uint32_t line;
	uint16_t column;
	uint16_t flags;      /* LS_LINE_* */
};
#define LS_LINE_IS_STMT 1

struct ls_linemap {
	struct ls_line_row *rows; /* sorted by addr; gaps marked by rows with file == NULL */
	size_t nrows;
	/* Statement rows (is_stmt, line > 0) that a later row at the same
	 * address hides, in the same file and above its line: statements that
	 * begin there with no code of their own.  gcc puts a `for (;;)`,
	 * `while (1)` or `do` line at its loop's header this way.  Sorted by
	 * addr; the loop-line rules read them. */
	struct ls_line_row *hidden;
	size_t nhidden;
	/* On demand (ls_linemap_open): the units whose line tables are not
	 * read yet, and the rows of those that are; NULL once built whole. */
	struct ls_line_units *lazy;
};

int ls_linemap_build(ls_module *m, ls_error *err);
/* The line map on demand: the units are listed with the addresses their
 * DIEs say they cover, and no line table is read until
 * ls_linemap_want asks for code that a unit covers. */
int ls_linemap_open(ls_module *m, ls_error *err);
/* Reads the line tables of the units covering the N ranges R (and
 * LS_LINE_PAD bytes either side) that are not read yet, and remakes
 * m->lines from every table read: at those addresses it is then what
 * ls_linemap_build makes.  Not while anyone reads m->lines.  Returns how
 * many units it read. */
size_t ls_linemap_want(ls_module *m, const ls_range *r, size_t n);
#define LS_LINE_PAD 64
/* The units listed and read so far (both 0 for a map built whole). */
void ls_linemap_units(const struct ls_linemap *lm, size_t *nunits, size_t *nread);
/* NAME made absolute against DIR (when relative) with ./ and ../ resolved,
 * interned in T: how line tables and DW_AT_call_file/decl_file are shown. */
const char *ls_source_path(struct ls_strtab *t, const char *dir, const char *name);
/* File IDX of a CU's file table FILES made absolute against COMP_DIR (the
 * CU's DW_AT_comp_dir), but for a file of directory entry 0, which already
 * is the compilation directory; NULL when FILES has no such file. */
const char *ls_cu_file_path(struct ls_strtab *t, Dwarf_Files *files, size_t idx, const char *comp_dir);
/* The row covering ADDR, or NULL if ADDR is in no sequence. O(log n). */
const struct ls_line_row *ls_linemap_find(const struct ls_linemap *lm, uint64_t addr);
/* The hidden statement rows at exactly ADDR: their count, *FIRST the first. */
size_t ls_linemap_hidden_at(const struct ls_linemap *lm, uint64_t addr, const struct ls_line_row **first);
/* The hidden statement rows in [LO, HI): their count, *FIRST the first. */
size_t ls_linemap_hidden_in(const struct ls_linemap *lm, uint64_t lo, uint64_t hi, const struct ls_line_row **first);
void ls_linemap_free(struct ls_linemap *lm);

#endif
