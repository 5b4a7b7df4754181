/* types.c - the type and field-path reader (types.h).
 *
 * Types come from untrusted DWARF: every walk is bounded (a type that
 * refers to itself through typedefs or arrays ends as "?"), and a member
 * without a readable offset is skipped rather than guessed at.  Field
 * paths follow the convention design.md's accesses contract states:
 * members joined by '.', an array element as "[]", a C++ base class as
 * "Base::" before the member found inside it. */
#include "data/types.h"

#include <dwarf.h>
#include <stdio.h>
#include <string.h>

enum { DEPTH_MAX = 24 };

static bool type_of(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, out);
}

bool ls_type_strip(Dwarf_Die *t, Dwarf_Die *out)
{
	Dwarf_Die cur = *t;
	for (int i = 0; i < DEPTH_MAX; i++) {
		int tag = dwarf_tag(&cur);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
		    tag != DW_TAG_restrict_type && tag != DW_TAG_atomic_type) {
			*out = cur;
			return true;
		}
		Dwarf_Die next;
		if (!type_of(&cur, &next))
			return false; /* const void */
		cur = next;
	}
	return false;
}

int64_t ls_type_size(Dwarf_Die *t)
{
	Dwarf_Word size;
	if (dwarf_aggregate_size(t, &size) == 0 && size < (1ull << 40))
		return (int64_t)size;
	Dwarf_Die s;
	if (ls_type_strip(t, &s) && (dwarf_tag(&s) == DW_TAG_pointer_type || dwarf_tag(&s) == DW_TAG_reference_type))
		return 8;
	return -1;
}

/* ---- names ------------------------------------------------------------------ */

static void append(char *buf, size_t len, const char *s)
{
	size_t n = strlen(buf);
	if (n < len)
		snprintf(buf + n, len - n, "%s", s);
}

static void name_rec(Dwarf_Die *t, bool c_lang, char *buf, size_t len, int depth);

static void name_of_target(Dwarf_Die *t, bool c_lang, char *buf, size_t len, int depth)
{
	Dwarf_Die next;
	if (type_of(t, &next))
		name_rec(&next, c_lang, buf, len, depth + 1);
	else
		append(buf, len, "void");
}

static void name_array(Dwarf_Die *t, bool c_lang, char *buf, size_t len, int depth)
{
	name_of_target(t, c_lang, buf, len, depth);
	Dwarf_Die sub;
	if (dwarf_child(t, &sub) != 0)
		return;
	do {
		if (dwarf_tag(&sub) != DW_TAG_subrange_type)
			continue;
		Dwarf_Attribute a;
		Dwarf_Word v;
		char dim[32] = "[]";
		if (dwarf_attr(&sub, DW_AT_count, &a) && dwarf_formudata(&a, &v) == 0)
			snprintf(dim, sizeof dim, "[%llu]", (unsigned long long)v);
		else if (dwarf_attr(&sub, DW_AT_upper_bound, &a) && dwarf_formudata(&a, &v) == 0)
			snprintf(dim, sizeof dim, "[%llu]", (unsigned long long)v + 1);
		append(buf, len, dim);
	} while (dwarf_siblingof(&sub, &sub) == 0);
}

static void name_tagged(Dwarf_Die *t, const char *keyword, bool c_lang, char *buf, size_t len)
{
	const char *name = dwarf_diename(t);
	if (c_lang || !name) {
		append(buf, len, keyword);
		append(buf, len, " ");
	}
	append(buf, len, name ? name : "<anon>");
}

static void name_rec(Dwarf_Die *t, bool c_lang, char *buf, size_t len, int depth)
{
	if (depth > DEPTH_MAX) {
		append(buf, len, "?");
		return;
	}
	switch (dwarf_tag(t)) {
	case DW_TAG_base_type:
	case DW_TAG_typedef:
	case DW_TAG_class_type:
	case DW_TAG_unspecified_type:
		append(buf, len, dwarf_diename(t) ? dwarf_diename(t) : "<anon>");
		return;
	case DW_TAG_structure_type: name_tagged(t, "struct", c_lang, buf, len); return;
	case DW_TAG_union_type: name_tagged(t, "union", c_lang, buf, len); return;
	case DW_TAG_enumeration_type: name_tagged(t, "enum", c_lang, buf, len); return;
	case DW_TAG_const_type: append(buf, len, "const "); break;
	case DW_TAG_volatile_type: append(buf, len, "volatile "); break;
	case DW_TAG_pointer_type:
		name_of_target(t, c_lang, buf, len, depth);
		append(buf, len, " *");
		return;
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		name_of_target(t, c_lang, buf, len, depth);
		append(buf, len, dwarf_tag(t) == DW_TAG_reference_type ? " &" : " &&");
		return;
	case DW_TAG_array_type: name_array(t, c_lang, buf, len, depth); return;
	case DW_TAG_subroutine_type: append(buf, len, "<function>"); return;
	default: break; /* restrict, atomic: spelled as their target */
	}
	name_of_target(t, c_lang, buf, len, depth);
}

void ls_type_name(Dwarf_Die *t, bool c_lang, char *buf, size_t len)
{
	if (len == 0)
		return;
	buf[0] = 0;
	name_rec(t, c_lang, buf, len, 0);
}

/* ---- field paths -------------------------------------------------------------- */

/* A member's byte range: [*lo, *lo + *size).  False when unreadable. */
static bool member_range(Dwarf_Die *mem, int64_t *lo, int64_t *size, bool *bitfield)
{
	Dwarf_Attribute a;
	Dwarf_Word v = 0, bits = 0;
	Dwarf_Die t;
	*bitfield = dwarf_attr(mem, DW_AT_bit_size, &a) && dwarf_formudata(&a, &bits) == 0 && bits;
	if (*bitfield && dwarf_attr(mem, DW_AT_data_bit_offset, &a) && dwarf_formudata(&a, &v) == 0) {
		if (v >= (1ull << 43) || bits >= (1ull << 43))
			return false;
		*lo = (int64_t)(v / 8);
		*size = (int64_t)((v + bits + 7) / 8 - v / 8);
		return true;
	}
	if (dwarf_attr(mem, DW_AT_data_member_location, &a)) {
		if (dwarf_formudata(&a, &v) != 0) {
			Dwarf_Op *ops;
			size_t n;
			if (dwarf_getlocation(&a, &ops, &n) != 0 || n != 1 || ops[0].atom != DW_OP_plus_uconst)
				return false;
			v = ops[0].number;
		}
	} else if (dwarf_tag(mem) != DW_TAG_member && dwarf_tag(mem) != DW_TAG_inheritance) {
		return false;
	} /* else a union's member: at 0 */
	if (v >= (1ull << 40))
		return false; /* no object is that large: corrupt */
	*lo = (int64_t)v;
	return type_of(mem, &t) && (*size = ls_type_size(&t)) >= 0;
}

/* The member of aggregate S holding [OFF, OFF + WIDTH): the first that holds
 * all of it, else the first that holds OFF (a union's members overlap; a
 * wide load may span a bit-field's neighbours). */
static bool find_member(Dwarf_Die *s, int64_t off, unsigned width, Dwarf_Die *out, int64_t *out_lo, bool *bitfield)
{
	Dwarf_Die mem;
	bool found = false;
	if (dwarf_child(s, &mem) != 0)
		return false;
	do {
		int tag = dwarf_tag(&mem);
		if (tag != DW_TAG_member && tag != DW_TAG_inheritance)
			continue;
		if (dwarf_hasattr(&mem, DW_AT_external) || dwarf_hasattr(&mem, DW_AT_declaration))
			continue; /* a static member: not in the object */
		int64_t lo, size;
		bool bf;
		if (!member_range(&mem, &lo, &size, &bf) || off < lo || off >= lo + size)
			continue;
		if (!found || (width && off + (int64_t)width <= lo + size && !bf)) {
			*out = mem;
			*out_lo = lo;
			*bitfield = bf;
			if (width == 0 || off + (int64_t)width <= lo + size)
				return true;
			found = true;
		}
	} while (dwarf_siblingof(&mem, &mem) == 0);
	return found;
}

static void path_add(struct ls_field *f, const char *sep, const char *name)
{
	if (f->path[0] && sep)
		append(f->path, sizeof f->path, sep);
	append(f->path, sizeof f->path, name);
}

/* The member path: what source writes, a base class's members unqualified. */
static void member_add(struct ls_field *f, const char *name)
{
	if (f->member[0])
		append(f->member, sizeof f->member, ".");
	append(f->member, sizeof f->member, name);
}

void ls_type_field_path(Dwarf_Die *t, int64_t off, unsigned width, bool c_lang, struct ls_field *out)
{
	memset(out, 0, sizeof *out);
	Dwarf_Die cur = *t;
	bool after_base = false; /* the path ends in "Base::": no '.' next */
	for (int depth = 0; depth < DEPTH_MAX; depth++) {
		Dwarf_Die s;
		if (!ls_type_strip(&cur, &s))
			break;
		int tag = dwarf_tag(&s);
		if (tag == DW_TAG_array_type) {
			Dwarf_Die elem;
			int64_t esize;
			if (!type_of(&s, &elem) || (esize = ls_type_size(&elem)) <= 0)
				break;
			/* a multi-dimensional array: one "[]" per subrange */
			int64_t whole = ls_type_size(&s);
			int dims = 0;
			Dwarf_Die sub;
			if (dwarf_child(&s, &sub) == 0)
				do
					dims += dwarf_tag(&sub) == DW_TAG_subrange_type;
				while (dwarf_siblingof(&sub, &sub) == 0 && dims < 8);
			for (int i = 0; i < (dims ? dims : 1); i++) {
				append(out->path, sizeof out->path, "[]");
				append(out->member, sizeof out->member, "[]");
			}
			(void)whole;
			off = off >= 0 ? off % esize : off;
			after_base = false;
			cur = elem;
			continue;
		}
		if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type && tag != DW_TAG_class_type)
			break;
		Dwarf_Die mem;
		int64_t lo;
		bool bf;
		if (!find_member(&s, off, width, &mem, &lo, &bf))
			break;
		Dwarf_Die mtype;
		if (!type_of(&mem, &mtype))
			break;
		if (dwarf_tag(&mem) == DW_TAG_inheritance) {
			char base[LS_TYPE_NAME_MAX] = "";
			ls_type_name(&mtype, false, base, sizeof base);
			path_add(out, after_base ? NULL : ".", base);
			append(out->path, sizeof out->path, "::");
			after_base = true;
		} else {
			const char *name = dwarf_diename(&mem);
			path_add(out, after_base ? NULL : ".", name ? name : "<anon>");
			member_add(out, name ? name : "<anon>");
			after_base = false;
		}
		off -= lo;
		cur = mtype;
		if (bf) {
			out->bitfield = true;
			off = 0;
			break;
		}
	}
	ls_type_name(&cur, c_lang, out->leaf, sizeof out->leaf);
	out->leaf_die = cur;
	out->rest = off;
}

/* ---- layouts ------------------------------------------------------------------ */

/* T, or the element of array T (arrays of arrays too), when that is a
 * struct, union or class: into *OUT.  An array of structs shows its
 * element's members at element 0's offsets (where an access's offset is),
 * which perf does not. */
static bool aggregate_or_elements(Dwarf_Die *t, Dwarf_Die *out)
{
	for (int i = 0; i < 8 && ls_type_strip(t, out); i++) {
		int tag = dwarf_tag(out);
		if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type)
			return true;
		if (tag != DW_TAG_array_type || !type_of(out, t))
			return false;
	}
	return false;
}

/* The members of aggregate S at BASE (their offsets are BASE + theirs),
 * nested aggregates expanded, DEPTH levels down: what perf annotate
 * --data-type prints; an array of structs, its element's members at
 * element 0's offsets (an access's offset is element 0's). */
static void members_rec(Dwarf_Die *s, int64_t base, int depth, bool c_lang, ls_member_fn *fn, void *arg)
{
	Dwarf_Die mem;
	if (depth > DEPTH_MAX || dwarf_child(s, &mem) != 0)
		return;
	do {
		int tag = dwarf_tag(&mem);
		if ((tag != DW_TAG_member && tag != DW_TAG_inheritance) || dwarf_hasattr(&mem, DW_AT_external) ||
		    dwarf_hasattr(&mem, DW_AT_declaration))
			continue; /* not a member, or a static one: not in the object */
		int64_t lo, size;
		bool bf;
		Dwarf_Die mt, ms;
		if (!member_range(&mem, &lo, &size, &bf) || !type_of(&mem, &mt))
			continue;
		char tname[LS_TYPE_NAME_MAX] = "";
		ls_type_name(&mt, c_lang, tname, sizeof tname);
		const char *name = tag == DW_TAG_inheritance ? "" : dwarf_diename(&mem);
		fn(arg, name ? name : "<anon>", tname, base + lo, size, depth);
		if (!bf && aggregate_or_elements(&mt, &ms))
			members_rec(&ms, base + lo, depth + 1, c_lang, fn, arg);
	} while (dwarf_siblingof(&mem, &mem) == 0);
}

void ls_type_members(Dwarf_Die *t, bool c_lang, ls_member_fn *fn, void *arg)
{
	char tname[LS_TYPE_NAME_MAX] = "";
	Dwarf_Die s;
	ls_type_name(t, c_lang, tname, sizeof tname);
	fn(arg, "", tname, 0, ls_type_size(t), 0);
	Dwarf_Die cur = *t;
	if (aggregate_or_elements(&cur, &s))
		members_rec(&s, 0, 1, c_lang, fn, arg);
}
