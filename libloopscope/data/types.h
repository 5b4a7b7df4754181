/* types.h - the type and field-path reader (types.c): a DWARF type's name
 * as the source spells it, and the path of the member an offset falls in
 * (structs and unions nested, arrays as "[]", typedefs and qualifiers
 * looked through, bit-fields, C++ base classes as "Base::"). */
#ifndef LOOPSCOPE_DATA_TYPES_H
#define LOOPSCOPE_DATA_TYPES_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { LS_TYPE_NAME_MAX = 160, LS_FIELD_PATH_MAX = 256 };

/* T's name ("struct cell", "cell_t", "const char *", "int[3][4]"); C_LANG:
 * the CU is C (struct/union/enum tags spelled with their keyword). */
void ls_type_name(Dwarf_Die *t, bool c_lang, char *buf, size_t len);
/* T without typedefs and cv-qualifiers, into OUT; false when a link is
 * broken or loops. */
bool ls_type_strip(Dwarf_Die *t, Dwarf_Die *out);
/* T's size in bytes, or -1. */
int64_t ls_type_size(Dwarf_Die *t);

struct ls_field {
	char path[LS_FIELD_PATH_MAX]; /* "cells[].p.y", "[]", "" (the whole object) */
	char member[LS_FIELD_PATH_MAX]; /* the path as C++ source writes a member access: no "Base::" */
	char leaf[LS_TYPE_NAME_MAX];  /* the type of what the path names */
	int64_t rest;                 /* the offset left inside the leaf (0: at its start) */
	bool bitfield;                /* the leaf is a bit-field (the access reads its storage) */
	Dwarf_Die leaf_die;           /* the type the path names (a pointer loaded from a field: its pointee) */
};
/* The field of T that bytes [OFF, OFF + WIDTH) fall in (WIDTH 0: unknown). */
void ls_type_field_path(Dwarf_Die *t, int64_t off, unsigned width, bool c_lang, struct ls_field *out);

/* T's layout, as perf annotate --data-type shows it: T itself (NAME "",
 * DEPTH 0), then each member in DWARF order, a nested struct's, union's or
 * class's members after it one level deeper; a base class is a member
 * named "" of its type; an array of structs has its element's members
 * (element 0's offsets) as children; static members are not in the object
 * and not listed. */
typedef void ls_member_fn(void *arg, const char *name, const char *type, int64_t off, int64_t size, int depth);
void ls_type_members(Dwarf_Die *t, bool c_lang, ls_member_fn *fn, void *arg);

#endif
