/* die_order.h - where a DIE's subtree ends without libdw's rescans
 * (die_order.c), for the inline tree's walk. */
#ifndef LOOPSCOPE_DIE_ORDER_H
#define LOOPSCOPE_DIE_ORDER_H

#include "support/base.h"

/* One unit's bounds and the sizes its forms depend on. */
struct ls_die_unit {
	struct Dwarf_CU *cu;
	const unsigned char *start;       /* the unit's header: where DW_FORM_ref* count from */
	const unsigned char *end;         /* just past the unit */
	uint16_t version;
	uint8_t addr_size, offset_size;
	struct ls_die_memo *memo;         /* the abbreviations' forms, or NULL: libdw's walk */
	uint64_t gen;                     /* this unit's mark in MEMO */
};

/* A memo of the abbreviations' attribute forms, for one walk (one
 * thread) over any number of units; ls_die_memo_free frees it. */
struct ls_die_memo *ls_die_memo_new(void);
void ls_die_memo_free(struct ls_die_memo *memo);

/* U for the unit of CUDIE, with MEMO (or NULL); false if its header
 * cannot be read (the caller then walks with libdw alone). */
bool ls_die_unit_init(struct ls_die_unit *u, Dwarf_Die *cudie, struct ls_die_memo *memo);
/* Just past DIE's own attributes: its first child, its sibling or the
 * terminator of its list.  NULL if unknown (a form not known here, or
 * corrupt data): ask dwarf_child/dwarf_siblingof. */
const unsigned char *ls_die_attrs_end(const struct ls_die_unit *u, Dwarf_Die *die);
/* DIE's attributes in the order of its abbreviation, as dwarf_getattrs
 * would give them, read in one pass: the count, or -1 if unknown here
 * (another unit, a form not known, corrupt data): ask libdw. */
#define LS_DIE_MAX_ATTRS 24
int ls_die_attrs(const struct ls_die_unit *u, Dwarf_Die *die, Dwarf_Attribute attrs[LS_DIE_MAX_ATTRS]);
/* dwarf_child(DIE, CHILD), from where DIE's attributes end when that is
 * known here (libdw scans them again). */
int ls_die_child(const struct ls_die_unit *u, Dwarf_Die *die, Dwarf_Die *child);
/* Just past DIE's whole subtree, scanned once; NULL if unknown. */
const unsigned char *ls_die_subtree_end(const struct ls_die_unit *u, Dwarf_Die *die);
/* What is at P, just past a DIE or a subtree: 1 a list's terminator, 0 a
 * DIE (in *NEXT), -1 nothing (outside the unit: corrupt). */
int ls_die_at(const struct ls_die_unit *u, const unsigned char *p, Dwarf_Die *next);
/* Whether the unit holds nothing but zeros from P on: what may follow the
 * terminator of the unit DIE's children (padding).  Anything else is DIEs
 * the tree does not reach: a run of zeros cut it short (corrupt). */
bool ls_die_unit_rest_is_padding(const struct ls_die_unit *u, const unsigned char *p);

#endif
