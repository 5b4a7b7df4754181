/* die_order.c - where a DIE's subtree ends, in time linear in its size.
 *
 * libdw finds a DIE's next sibling by DW_AT_sibling when the producer wrote
 * one (gcc does for DIEs with children), else by scanning the whole subtree
 * (clang writes none).  A walker that asks for every DIE's sibling then
 * scans each subtree once per level above it: N nested inlined calls cost
 * N^2 (a hand-made 40,000-deep nest took 19 s, 100,000 two minutes).  The
 * walker asks here instead: the end of a DIE's own attributes (where its
 * first child or its sibling begins) is computed from their forms, and a
 * subtree the walker already walked ends one byte after its children's
 * terminator, which the walk found on its way.  libdw has no call that
 * returns either address, hence the form sizes below; a form not known
 * here makes the caller fall back to dwarf_siblingof (correct, only slow).
 */
#include "dwarf/die_order.h"

#include <dwarf.h>
#include <string.h>

bool ls_die_unit_init(struct ls_die_unit *u, Dwarf_Die *cudie)
{
	memset(u, 0, sizeof *u);
	Dwarf_Die *d = cudie;
	Dwarf *dbg = d->cu ? dwarf_cu_getdwarf(d->cu) : NULL;
	Dwarf_Off die_off = dwarf_dieoffset(d), in_cu = dwarf_cuoffset(d);
	if (!dbg || die_off == (Dwarf_Off)-1 || in_cu == (Dwarf_Off)-1 || in_cu > die_off)
		return false;
	Dwarf_Off next;
	Dwarf_Half version;
	uint8_t addr_size, offset_size;
	if (dwarf_next_unit(dbg, die_off - in_cu, &next, NULL, &version, NULL, &addr_size, &offset_size, NULL,
	                    NULL) != 0 || next <= die_off)
		return false;
	const unsigned char *base = (const unsigned char *)d->addr - die_off;
	u->cu = d->cu;
	u->end = base + next;
	u->version = version;
	u->addr_size = addr_size;
	u->offset_size = offset_size;
	return true;
}

/* The length of the LEB128 at P (before END), or 0 if it does not end. */
static size_t leb_len(const unsigned char *p, const unsigned char *end)
{
	for (size_t n = 0; p + n < end && n < 16; n++)
		if (!(p[n] & 0x80))
			return n + 1;
	return 0;
}

static uint64_t read_uleb(const unsigned char *p, size_t len)
{
	uint64_t v = 0;
	for (size_t i = 0; i < len && i < 10; i++)
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
	return v;
}

/* The bytes of a value of FORM at P; -1 if FORM is not known here or the
 * value runs past END. */
static long form_size(const struct ls_die_unit *u, unsigned form, const unsigned char *p, const unsigned char *end)
{
	size_t avail = (size_t)(end - p), n;
	long fixed = -1;
	switch (form) {
	case DW_FORM_flag_present: case DW_FORM_implicit_const:
		return 0;
	case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1: case DW_FORM_addrx1:
		fixed = 1; break;
	case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2:
		fixed = 2; break;
	case DW_FORM_strx3: case DW_FORM_addrx3:
		fixed = 3; break;
	case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_strx4: case DW_FORM_addrx4: case DW_FORM_ref_sup4:
		fixed = 4; break;
	case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
		fixed = 8; break;
	case DW_FORM_data16:
		fixed = 16; break;
	case DW_FORM_addr:
		fixed = u->addr_size; break;
	case DW_FORM_ref_addr:
		fixed = u->version == 2 ? u->addr_size : u->offset_size; break;
	case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_sec_offset: case DW_FORM_strp_sup:
	case DW_FORM_GNU_strp_alt: case DW_FORM_GNU_ref_alt:
		fixed = u->offset_size; break;
	case DW_FORM_udata: case DW_FORM_sdata: case DW_FORM_ref_udata: case DW_FORM_strx: case DW_FORM_addrx:
	case DW_FORM_loclistx: case DW_FORM_rnglistx: case DW_FORM_GNU_addr_index: case DW_FORM_GNU_str_index:
		n = leb_len(p, end);
		return n ? (long)n : -1;
	case DW_FORM_string: {
		const unsigned char *z = memchr(p, 0, avail);
		return z ? (long)(z - p) + 1 : -1;
	}
	case DW_FORM_block1:
		return avail >= 1 && (size_t)p[0] + 1 <= avail ? (long)p[0] + 1 : -1;
	case DW_FORM_block2: {
		if (avail < 2)
			return -1;
		size_t len = (size_t)p[0] | (size_t)p[1] << 8; /* DWARF in our byte order: x86-64 */
		return len + 2 <= avail ? (long)(len + 2) : -1;
	}
	case DW_FORM_block4: {
		if (avail < 4)
			return -1;
		uint32_t len;
		memcpy(&len, p, 4);
		return (uint64_t)len + 4 <= avail ? (long)len + 4 : -1;
	}
	case DW_FORM_block: case DW_FORM_exprloc: {
		n = leb_len(p, end);
		if (!n)
			return -1;
		uint64_t len = read_uleb(p, n);
		return len <= avail - n ? (long)(len + n) : -1;
	}
	default: /* DW_FORM_indirect, vendor forms: libdw knows */
		return -1;
	}
	return (size_t)fixed <= avail ? fixed : -1;
}

struct attrs_scan {
	const struct ls_die_unit *u;
	const unsigned char *end; /* past the last attribute seen; NULL: unknown */
};

static int attr_end(Dwarf_Attribute *a, void *arg)
{
	struct attrs_scan *s = arg;
	if (a->form == DW_FORM_implicit_const)
		return DWARF_CB_OK; /* its value is in the abbreviation, not the DIE */
	const unsigned char *p = a->valp;
	long size = p && p >= s->end && p <= s->u->end ? form_size(s->u, a->form, p, s->u->end) : -1;
	if (size < 0) {
		s->end = NULL;
		return DWARF_CB_ABORT;
	}
	s->end = p + size;
	return DWARF_CB_OK;
}

const unsigned char *ls_die_attrs_end(const struct ls_die_unit *u, Dwarf_Die *die)
{
	const unsigned char *p = die->addr;
	if (die->cu != u->cu || p >= u->end)
		return NULL;
	size_t code = leb_len(p, u->end);
	if (!code)
		return NULL;
	struct attrs_scan s = { u, p + code };
	if (dwarf_getattrs(die, attr_end, &s, 0) != 1)
		return NULL; /* an error, or a form not known here */
	return s.end;
}

int ls_die_at(const struct ls_die_unit *u, const unsigned char *p, Dwarf_Die *next)
{
	if (!p || p >= u->end)
		return -1; /* a list without its terminator */
	if (*p == 0)
		return 1;
	/* What dwarf_die_addr_die makes once it has found the unit, which is
	 * known here: the abbreviation is read on first use. */
	*next = (Dwarf_Die){ .addr = (void *)p, .cu = u->cu };
	return 0;
}

const unsigned char *ls_die_subtree_end(const struct ls_die_unit *u, Dwarf_Die *die)
{
	const unsigned char *p = ls_die_attrs_end(u, die);
	int kids = dwarf_haschildren(die);
	if (!p || kids < 0)
		return NULL;
	for (size_t open = kids; open > 0;) {
		Dwarf_Die d;
		int rc = ls_die_at(u, p, &d);
		if (rc < 0)
			return NULL;
		if (rc == 1) { /* a terminator closes one level */
			p++;
			open--;
			continue;
		}
		p = ls_die_attrs_end(u, &d);
		kids = dwarf_haschildren(&d);
		if (!p || kids < 0)
			return NULL;
		open += kids;
	}
	return p;
}

bool ls_die_unit_rest_is_padding(const struct ls_die_unit *u, const unsigned char *p)
{
	for (; p && p < u->end; p++)
		if (*p)
			return false;
	return true;
}
