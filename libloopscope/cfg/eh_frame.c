/* eh_frame.c - the exception tables of the CFG stage (cfg.c): which calls
 * land where when something they call throws.  The .eh_frame FDEs point
 * to LSDAs (.gcc_except_table), whose call-site records give, for a range
 * of calls, the landing pad (a C++ catch or cleanup): cfg.c adds an
 * exception edge from each such call's block to its pad. */
#include "cfg/cfg_private.h"

#include <stdlib.h>
#include <string.h>

/* ---- exception tables (.eh_frame FDEs -> LSDA call sites) ---- */

/* A bounds-checked reader over one section's bytes at their addresses. */
struct cursor {
	const uint8_t *p, *end;
	uint64_t addr;  /* address of *p */
	bool ok;
};

static const struct data_sec *find_sec(const struct ls_cfg_module *c, uint64_t addr)
{
	for (size_t i = 0; i < c->nsecs; i++)
		if (addr >= c->secs[i].addr && addr - c->secs[i].addr < c->secs[i].size)
			return &c->secs[i];
	return NULL;
}

static struct cursor cursor_at(const struct ls_cfg_module *c, uint64_t addr)
{
	const struct data_sec *s = find_sec(c, addr);
	if (!s)
		return (struct cursor){ .ok = false };
	return (struct cursor){ s->data + (addr - s->addr), s->data + s->size, addr, true };
}

static uint64_t get_n(struct cursor *k, size_t n)
{
	if (!k->ok || (size_t)(k->end - k->p) < n) {
		k->ok = false;
		return 0;
	}
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)k->p[i] << (8 * i);
	k->p += n;
	k->addr += n;
	return v;
}

/* A 4-byte field (an entry's length, an FDE's CIE pointer): read twice
 * per FDE, so assembled directly rather than by get_n's byte loop. */
static uint32_t get_u32(struct cursor *k)
{
	if (!k->ok || k->end - k->p < 4) {
		k->ok = false;
		return 0;
	}
	const uint8_t *p = k->p;
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	k->p += 4;
	k->addr += 4;
	return v;
}

static uint64_t get_uleb(struct cursor *k)
{
	uint64_t v = 0;
	for (unsigned shift = 0; k->ok; shift += 7) {
		uint8_t b = (uint8_t)get_n(k, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	return v;
}

/* Shifts are done on unsigned values: a 9- or 10-byte SLEB128 moves bits
 * into (and past) the sign bit, which is undefined for int64_t. */
static int64_t get_sleb(struct cursor *k)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0x80;
	while (k->ok && (b & 0x80)) {
		b = (uint8_t)get_n(k, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	}
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A DW_EH_PE_* encoded value (pcrel resolved; indirect and datarel not
 * supported: they make the reader fail). */
static uint64_t get_encoded(struct cursor *k, uint8_t enc)
{
	uint64_t field = k->addr, v;
	switch (enc & 0x0f) {
	case 0x00: v = get_n(k, 8); break;
	case 0x01: v = get_uleb(k); break;
	case 0x02: v = get_n(k, 2); break;
	case 0x03: v = get_n(k, 4); break;
	case 0x04: v = get_n(k, 8); break;
	case 0x09: v = (uint64_t)get_sleb(k); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)get_n(k, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)get_n(k, 4); break;
	case 0x0c: v = get_n(k, 8); break;
	default: k->ok = false; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += field; break;
	default: k->ok = false; return 0;
	}
	if (enc & 0x80)
		k->ok = false;
	return v;
}

static void add_site(struct ls_cfg_module *c, size_t *cap, uint64_t lo, uint64_t hi, uint64_t lp)
{
	c->sites = ls_grow(c->sites, cap, c->nsites + 1, sizeof *c->sites);
	c->sites[c->nsites++] = (struct eh_site){ lo, hi, lp };
}

/* The call-site table of the LSDA at ADDR for the code starting at START. */
static void parse_lsda(struct ls_cfg_module *c, size_t *cap, uint64_t addr, uint64_t start)
{
	struct cursor k = cursor_at(c, addr);
	uint8_t lpstart_enc = (uint8_t)get_n(&k, 1);
	uint64_t lpstart = start;
	if (lpstart_enc != 0xff)
		lpstart = get_encoded(&k, lpstart_enc);
	uint8_t ttype_enc = (uint8_t)get_n(&k, 1);
	if (ttype_enc != 0xff)
		get_uleb(&k);
	uint8_t cs_enc = (uint8_t)get_n(&k, 1);
	uint64_t len = get_uleb(&k);
	if (!k.ok || len > (uint64_t)(k.end - k.p))
		return;
	const uint8_t *end = k.p + len;
	while (k.ok && k.p < end) {
		uint64_t cs = get_encoded(&k, cs_enc & 0x0f);
		uint64_t cl = get_encoded(&k, cs_enc & 0x0f);
		uint64_t lp = get_encoded(&k, cs_enc & 0x0f);
		get_uleb(&k);
		if (k.ok && lp && cl)
			add_site(c, cap, start + cs, start + cs + cl, lpstart + lp);
	}
}

static int cmp_site(const void *a, const void *b)
{
	const struct eh_site *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* What an FDE needs from its CIE: the encodings of its address and of
 * its LSDA pointer (lsda_enc 0xff: no LSDA, or a CIE we cannot read). */
struct cie_info {
	uint64_t addr;
	uint8_t fde_enc, lsda_enc;
	bool used;
};

/* The CIE at ADDR (located through c->secs, as any address). */
static struct cie_info read_cie(const struct ls_cfg_module *c, uint64_t addr)
{
	struct cie_info r = { addr, 0, 0xff, true };
	struct cursor cie = cursor_at(c, addr);
	uint64_t cie_len = get_n(&cie, 4);
	if (!cie.ok || cie_len == 0 || cie_len == 0xffffffff || cie_len > (uint64_t)(cie.end - cie.p))
		return r;
	cie.end = cie.p + cie_len;
	if (get_n(&cie, 4) != 0)
		return r;
	uint8_t version = (uint8_t)get_n(&cie, 1);
	char aug[16];
	size_t na = 0;
	for (;;) {
		uint8_t ch = (uint8_t)get_n(&cie, 1);
		if (!cie.ok || ch == 0)
			break;
		if (na < sizeof aug - 1)
			aug[na++] = (char)ch;
	}
	aug[na] = 0;
	get_uleb(&cie);                  /* code alignment */
	get_sleb(&cie);                  /* data alignment */
	if (version == 1)
		get_n(&cie, 1);          /* return register */
	else
		get_uleb(&cie);
	if (aug[0] != 'z')
		return r;                /* no augmentation data: no LSDA */
	get_uleb(&cie);
	uint8_t fde_enc = 0, lsda_enc = 0xff;
	for (size_t i = 1; i < na && cie.ok; i++) {
		if (aug[i] == 'L')
			lsda_enc = (uint8_t)get_n(&cie, 1);
		else if (aug[i] == 'R')
			fde_enc = (uint8_t)get_n(&cie, 1);
		else if (aug[i] == 'P') {
			uint8_t penc = (uint8_t)get_n(&cie, 1);
			get_encoded(&cie, penc & 0x7f); /* the personality routine (maybe indirect) */
		} else if (aug[i] != 'S' && aug[i] != 'B')
			break;
	}
	if (cie.ok) {
		r.fde_enc = fde_enc;
		r.lsda_enc = lsda_enc;
	}
	return r;
}

/* A few recently read CIEs, by address: a linked .eh_frame has a handful
 * of distinct CIEs (ld merges identical ones) shared by hundreds of
 * thousands of FDEs, and re-reading the CIE for every FDE was most of the
 * cost of this parse on big C++ libraries.  Direct-mapped; a collision
 * only costs a re-read. */
#define CIE_MEMO 16

static const struct cie_info *cie_of(const struct ls_cfg_module *c, struct cie_info *memo, uint64_t addr)
{
	struct cie_info *slot = &memo[(addr ^ (addr >> 7)) % CIE_MEMO];
	if (!slot->used || slot->addr != addr)
		*slot = read_cie(c, addr);
	return slot;
}

/* Every FDE of .eh_frame with an LSDA: its call sites. */
void ls_eh_parse_frame(struct ls_cfg_module *c, const struct data_sec *eh)
{
	size_t cap = 0;
	struct cie_info memo[CIE_MEMO] = { 0 };
	struct cursor k = { eh->data, eh->data + eh->size, eh->addr, true };
	while (k.ok && k.p < k.end) {
		uint64_t length = get_u32(&k);
		if (length == 0)
			continue; /* terminator (or padding) */
		if (length == 0xffffffff)
			length = get_n(&k, 8);
		if (!k.ok || length > (uint64_t)(k.end - k.p))
			break;
		struct cursor body = { k.p, k.p + length, k.addr, true };
		k.p += length;
		k.addr += length;
		uint64_t id_addr = body.addr;
		uint32_t id = get_u32(&body);
		if (id == 0)
			continue; /* a CIE: read when an FDE needs it */
		const struct cie_info *cie = cie_of(c, memo, id_addr - id);
		if (cie->lsda_enc == 0xff)
			continue;
		uint64_t start = get_encoded(&body, cie->fde_enc);
		get_encoded(&body, cie->fde_enc & 0x0f); /* range */
		get_uleb(&body);                          /* augmentation length */
		uint64_t lsda = get_encoded(&body, cie->lsda_enc);
		if (body.ok && lsda)
			parse_lsda(c, &cap, lsda, start);
	}
	if (c->nsites)
		qsort(c->sites, c->nsites, sizeof *c->sites, cmp_site);
}

/* The landing pad for a call at ADDR, or 0. */
uint64_t ls_eh_landing_pad(const struct ls_cfg_module *c, uint64_t addr)
{
	size_t lo = LS_FIRST_ABOVE(c->sites, c->nsites, lo, addr);
	/* Sites of one function do not overlap; look at the last few
	 * starting at or before ADDR in case of duplicates. */
	for (size_t i = lo; i-- > 0 && lo - i <= 4;)
		if (addr >= c->sites[i].lo && addr < c->sites[i].hi)
			return c->sites[i].lp;
	return 0;
}
