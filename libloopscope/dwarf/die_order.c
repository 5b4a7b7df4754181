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
#include <stdlib.h>
#include <string.h>

/* The forms of an abbreviation's attributes, read once per unit: the
 * walk skips millions of DIEs (types, declarations) of a few hundred
 * abbreviations, and dwarf_getattrs' callback per attribute was half of
 * the inline tree's time.  The walker owns the memo (one walk, one
 * thread); an entry holds for the unit whose GEN it has.  It also keeps
 * the abbreviation libdw found for the code, which ls_die_at gives the
 * DIEs it makes: libdw's own lookup (a concurrent hash table) cost more
 * per DIE than the rest of the skipping. */
#define MEMO_SLOTS 256
#define MEMO_FORMS LS_DIE_MAX_ATTRS
struct abbrev_memo {
	Dwarf_Abbrev *abbrev;
	uint64_t gen;
	uint64_t code;
	uint8_t nforms;               /* MEMO_NONE: ask libdw */
	uint8_t sibling;              /* the index of DW_AT_sibling, or MEMO_NONE */
	int8_t size[MEMO_FORMS];      /* of each value in the DIE; VARIABLE_SIZE: form_size says */
	uint16_t forms[MEMO_FORMS];
	uint16_t names[MEMO_FORMS];
	bool implicit_read;           /* IMPLICIT holds the DW_FORM_implicit_const values */
	const unsigned char *implicit[MEMO_FORMS]; /* in the abbreviation, as libdw points to them */
};
#define MEMO_NONE 0xff
#define VARIABLE_SIZE (-1)
struct ls_die_memo {
	uint64_t gen;                 /* of the last unit */
	struct abbrev_memo slot[MEMO_SLOTS];
};

struct ls_die_memo *ls_die_memo_new(void)
{
	return ls_xcalloc(1, sizeof(struct ls_die_memo));
}

void ls_die_memo_free(struct ls_die_memo *memo)
{
	free(memo);
}

bool ls_die_unit_init(struct ls_die_unit *u, Dwarf_Die *cudie, struct ls_die_memo *memo)
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
	u->start = base + (die_off - in_cu);
	u->memo = memo;
	u->gen = memo ? ++memo->gen : 0;
	u->end = base + next;
	u->version = version;
	u->addr_size = addr_size == 4 || addr_size == 8 ? addr_size : 8; /* as libdw reads a corrupt one */
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
	Dwarf_Attribute sibling;  /* DW_AT_sibling, when seen (.valp not NULL) */
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
	if (a->code == DW_AT_sibling)
		s->sibling = *a;
	return DWARF_CB_OK;
}

/* libdw's walk over a DIE's attributes (the slow way: a callback per
 * attribute), into S; S->end is just past them. */
static const unsigned char *scan_attrs(const struct ls_die_unit *u, Dwarf_Die *die, struct attrs_scan *s)
{
	const unsigned char *p = die->addr;
	if (die->cu != u->cu || p >= u->end)
		return NULL;
	size_t code = leb_len(p, u->end);
	if (!code)
		return NULL;
	*s = (struct attrs_scan){ .u = u, .end = p + code };
	if (dwarf_getattrs(die, attr_end, s, 0) != 1)
		return NULL; /* an error, or a form not known here */
	return s->end;
}

/* The size of every value of FORM in this unit, or VARIABLE_SIZE. */
static int fixed_size(const struct ls_die_unit *u, unsigned form)
{
	static const unsigned char none[16];
	switch (form) {
	case DW_FORM_implicit_const: /* its value is in the abbreviation, not the DIE */
		return 0;
	case DW_FORM_udata: case DW_FORM_sdata: case DW_FORM_ref_udata: case DW_FORM_strx: case DW_FORM_addrx:
	case DW_FORM_loclistx: case DW_FORM_rnglistx: case DW_FORM_GNU_addr_index: case DW_FORM_GNU_str_index:
	case DW_FORM_string: case DW_FORM_block1: case DW_FORM_block2: case DW_FORM_block4:
	case DW_FORM_block: case DW_FORM_exprloc:
		return VARIABLE_SIZE;
	default: { /* the fixed sizes, and -1 for the forms not known here */
		long n = form_size(u, form, none, none + 16);
		return n >= 0 && n <= 16 ? (int)n : VARIABLE_SIZE;
	}
	}
}

static struct abbrev_memo *memo_slot(const struct ls_die_unit *u, uint64_t code)
{
	return &u->memo->slot[code % MEMO_SLOTS];
}

static const struct abbrev_memo *abbrev_forms(const struct ls_die_unit *u, Dwarf_Abbrev *ab, uint64_t code)
{
	struct abbrev_memo *e = memo_slot(u, code);
	if (e->gen == u->gen && e->code == code && e->abbrev == ab)
		return e;
	*e = (struct abbrev_memo){ .abbrev = ab, .gen = u->gen, .code = code, .nforms = MEMO_NONE,
	                           .sibling = MEMO_NONE };
	/* to the terminator: not dwarf_getattrcnt, whose count libdw 0.188
	 * gets short for some of gcc 12's DWARF 5 C++ abbreviations (with
	 * DW_FORM_implicit_const; {fmt}'s units came out corrupt) */
	size_t n = 0;
	unsigned name, form;
	for (; dwarf_getabbrevattr_data(ab, n, &name, &form, NULL, NULL) == 0; n++) {
		if (n == MEMO_FORMS || form == DW_FORM_indirect || name > UINT16_MAX) {
			e->sibling = MEMO_NONE;
			return e;
		}
		e->forms[n] = (uint16_t)form;
		e->names[n] = (uint16_t)name;
		e->size[n] = (int8_t)fixed_size(u, form);
		if (name == DW_AT_sibling)
			e->sibling = (uint8_t)n;
	}
	e->nforms = (uint8_t)n;
	return e;
}

struct implicit_scan {
	struct abbrev_memo *e;
	unsigned i;
};

static int implicit_value(Dwarf_Attribute *a, void *arg)
{
	struct implicit_scan *s = arg;
	if (s->i >= s->e->nforms || a->code != s->e->names[s->i] || a->form != s->e->forms[s->i])
		return DWARF_CB_ABORT;
	s->e->implicit[s->i++] = a->valp;
	return DWARF_CB_OK;
}

/* Where libdw points the DW_FORM_implicit_const values of E's
 * abbreviation (into .debug_abbrev), read once from DIE, one of its DIEs. */
static bool read_implicit(struct abbrev_memo *e, Dwarf_Die *die)
{
	if (!e->implicit_read) {
		struct implicit_scan s = { e, 0 };
		e->implicit_read = dwarf_getattrs(die, implicit_value, &s, 0) == 1 && s.i == e->nforms;
	}
	return e->implicit_read;
}

/* Just past DIE's attributes, as scan_attrs finds it, with
 * S->sibling; the abbreviation's forms from the memo when it can. */
static const unsigned char *attrs_end(const struct ls_die_unit *u, Dwarf_Die *die, struct attrs_scan *s)
{
	const unsigned char *p = die->addr;
	if (!u->gen || die->cu != u->cu || p >= u->end || dwarf_haschildren(die) < 0 || !die->abbrev ||
	    die->abbrev == DWARF_END_ABBREV)
		return scan_attrs(u, die, s);
	size_t code = leb_len(p, u->end);
	if (!code)
		return NULL;
	const struct abbrev_memo *e = abbrev_forms(u, die->abbrev, read_uleb(p, code));
	if (e->nforms == MEMO_NONE)
		return scan_attrs(u, die, s);
	*s = (struct attrs_scan){ .u = u };
	p += code;
	for (unsigned i = 0; i < e->nforms; i++) {
		long size = e->size[i];
		if (size == VARIABLE_SIZE && (p > u->end || (size = form_size(u, e->forms[i], p, u->end)) < 0))
			return NULL; /* runs past the unit, or a form not known here */
		if (i == e->sibling)
			s->sibling = (Dwarf_Attribute){ .code = DW_AT_sibling, .form = e->forms[i],
			                                .valp = (unsigned char *)p, .cu = u->cu };
		p += size;
	}
	if (p > u->end)
		return NULL; /* runs past the unit */
	s->end = p;
	return p;
}

const unsigned char *ls_die_attrs_end(const struct ls_die_unit *u, Dwarf_Die *die)
{
	struct attrs_scan s;
	return attrs_end(u, die, &s);
}

int ls_die_attrs(const struct ls_die_unit *u, Dwarf_Die *die, Dwarf_Attribute attrs[LS_DIE_MAX_ATTRS])
{
	const unsigned char *p = die->addr;
	if (!u->memo || die->cu != u->cu || p < u->start || p >= u->end)
		return -1;
	size_t len = leb_len(p, u->end);
	if (!len || len > 9)
		return -1; /* libdw reads 10 bytes at most: it might find another code */
	uint64_t code = read_uleb(p, len);
	struct abbrev_memo *e = memo_slot(u, code);
	if (!die->abbrev && e->gen == u->gen && e->code == code)
		die->abbrev = e->abbrev;
	if (dwarf_haschildren(die) < 0 || !die->abbrev || die->abbrev == DWARF_END_ABBREV)
		return -1;
	if (abbrev_forms(u, die->abbrev, code)->nforms == MEMO_NONE)
		return -1;
	p += len;
	for (unsigned i = 0; i < e->nforms; i++) {
		long size = e->size[i];
		if (size == VARIABLE_SIZE && (p > u->end || (size = form_size(u, e->forms[i], p, u->end)) < 0))
			return -1;
		const unsigned char *valp = p;
		if (e->forms[i] == DW_FORM_implicit_const && !(valp = read_implicit(e, die) ? e->implicit[i] : NULL))
			return -1;
		attrs[i] = (Dwarf_Attribute){ .code = e->names[i], .form = e->forms[i],
		                              .valp = (unsigned char *)valp, .cu = u->cu };
		p += size;
	}
	return p <= u->end ? e->nforms : -1;
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
	if (u->memo) {
		size_t len = leb_len(p, u->end);
		uint64_t code = read_uleb(p, len);
		const struct abbrev_memo *e = memo_slot(u, code);
		if (len && len <= 9 && e->gen == u->gen && e->code == code) /* libdw reads 10 bytes at most */
			next->abbrev = e->abbrev; /* what libdw would look up for CODE */
	}
	return 0;
}

int ls_die_child(const struct ls_die_unit *u, Dwarf_Die *die, Dwarf_Die *child)
{
	int kids = dwarf_haschildren(die);
	/* libdw reads an abbreviation code of 10 bytes at most: a longer
	 * one (corrupt) puts its attributes elsewhere */
	const unsigned char *a = die->addr;
	size_t len = die->cu == u->cu && a >= u->start && a < u->end ? leb_len(a, u->end) : 0;
	const unsigned char *p = kids > 0 && len && len <= 9 ? ls_die_attrs_end(u, die) : NULL;
	if (!p)
		return kids == 0 ? 1 : dwarf_child(die, child); /* libdw's answer, and its error */
	/* as dwarf_child reads it: a first entry of 0, even as 0x80...0x00,
	 * is no child; the child starts where the attributes end */
	const unsigned char *code = p;
	while (code < u->end && *code == 0x80)
		code++;
	if (code >= u->end || *code == 0)
		return 1;
	return ls_die_at(u, p, child);
}

/* Where a DIE's DW_AT_sibling A says its subtree ends (gcc writes one for
 * every DIE with children but the last of its list), or NULL: none, or
 * not believable.  It must lie past the DIE's attributes ATTRS_END, in the
 * unit, just after a terminator (the one of DIE's children): so a scan
 * that takes it always moves on, and on valid DWARF ends where the scan
 * of the whole subtree would.  Most of what the inline tree skips is
 * types and declarations, whose subtrees this jumps over at once. */
static const unsigned char *sibling_at(const struct ls_die_unit *u, Dwarf_Attribute *a, const unsigned char *attrs_end)
{
	const unsigned char *v = a->valp;
	uint64_t off = 0;
	if (!u->start || !v)
		return NULL;
	/* a unit-relative reference, its size checked by attr_end already
	 * (little-endian: x86-64, as form_size reads block lengths) */
	switch (a->form) {
	case DW_FORM_ref1: off = v[0]; break;
	case DW_FORM_ref2: { uint16_t x; memcpy(&x, v, 2); off = x; break; }
	case DW_FORM_ref4: { uint32_t x; memcpy(&x, v, 4); off = x; break; }
	case DW_FORM_ref8: memcpy(&off, v, 8); break;
	case DW_FORM_ref_udata: off = read_uleb(v, leb_len(v, u->end)); break;
	default: return NULL; /* DW_FORM_ref_addr and the like: another unit */
	}
	if (off > (uint64_t)(u->end - u->start))
		return NULL;
	const unsigned char *p = u->start + off;
	return p > attrs_end && p[-1] == 0 ? p : NULL;
}

/* Just past the attributes of DIE, or past its whole subtree when its
 * DW_AT_sibling says where that ends (*KIDS is then 0); NULL if unknown. */
static const unsigned char *skip_die(const struct ls_die_unit *u, Dwarf_Die *die, int *kids)
{
	struct attrs_scan s;
	const unsigned char *p = attrs_end(u, die, &s);
	*kids = dwarf_haschildren(die);
	if (!p || *kids < 0)
		return NULL;
	const unsigned char *sib = *kids ? sibling_at(u, &s.sibling, p) : NULL;
	if (sib) {
		*kids = 0;
		return sib;
	}
	return p;
}

const unsigned char *ls_die_subtree_end(const struct ls_die_unit *u, Dwarf_Die *die)
{
	int kids;
	const unsigned char *p = skip_die(u, die, &kids);
	if (!p)
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
		p = skip_die(u, &d, &kids);
		if (!p)
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
