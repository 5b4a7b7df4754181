/* cfg.c - the control-flow graph of one procedure.
 *
 * Every range of the procedure (a .cold part is another range) is decoded
 * linearly, so that every instruction is placed, padding and unreachable
 * code included; blocks split at branch targets and after branches and
 * calls.  Edges: fall-through, taken, not-taken, jump, jump-table cases,
 * call-return.  A jump out of the procedure (or to another procedure's
 * entry) is a tail call: no edge.  A call to a procedure that never returns
 * ends its block without a successor.
 *
 * "Never returns" is DW_AT_noreturn / a known name (procs.c), or proved
 * here: once per module, on the first CFG, every procedure gets a summary
 * CFG (all calls assumed to return) and a least fixpoint over the call
 * graph marks the procedures from whose entry a return is reachable
 * (through calls to returning procedures only).  The others never return.
 * The facts live in m->cfg_module, built under its lock; after that they
 * are read-only, so the result does not depend on thread timing.
 *
 * Kernel code (call/return handling):
 *   - a call or jump to a retpoline thunk (__x86_indirect_thunk_REG, ...)
 *     is an indirect call or jump, and a jump to a return thunk
 *     (__x86_return_thunk, ...) is a return: what the thunks stand for, not
 *     what their bodies look like (a call that never comes back);
 *   - a jump into .altinstr_aux, .altinstr_replacement or .text.unlikely
 *     code that no procedure owns (static_cpu_has()'s test and jumps back)
 *     is followed: that fragment is decoded as part of the procedure;
 *   - in a relocatable object, calls to undefined symbols (relocate.c) are
 *     calls out of the module, which never return when the name says so;
 *   - hlt goes on to the next instruction (after the interrupt it waits for).
 *
 * Jump tables (gcc's and clang's x86-64 shapes, PIE or not: absolute
 * 8-byte entries, 4-byte entries relative to the table or to a label,
 * computed-goto tables) are found by following the jump's register back to
 * its definitions along the flow, and bounded by their guarding compare or
 * by the data around them: see "jump tables" below.
 */
#include "cfg.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- the per-module cache --------------------------------------------------- */

struct data_sec {
	uint64_t addr, size;
	const uint8_t *data;
};

/* Summary of one procedure for the noreturn fixpoint. */
enum {
	SUM_EXIT = 1,      /* returns (ret, unresolved indirect jump, falls off its end) */
	SUM_DEP_EXIT = 2,  /* tail call: returns if dep returns */
	SUM_DEP_GATE = 4,  /* call: successors (and SUM_EXIT) only if dep returns */
};
struct summary {
	uint32_t nblocks;
	uint32_t *succ_start;  /* nblocks + 1 */
	uint32_t *succ;        /* per block: exception successors first */
	uint32_t *nexc;        /* per block: how many (never gated) */
	int32_t *dep;          /* proc index or -1 */
	uint8_t *flags;
};

/* A dynamic relocation of the module (.rela.dyn): what the loader writes
 * at OFFSET.  A PIE's jump table of absolute addresses has one
 * R_X86_64_RELATIVE per entry, whose addend is the entry (the file's bytes
 * may be zero). */
struct dyn_reloc {
	uint64_t offset, addend;
	uint32_t type;
};

/* A call-site record of a C++ exception table: calls in [lo, hi) land at
 * LP when something they call throws. */
struct eh_site {
	uint64_t lo, hi, lp;
};

/* A thunk symbol's address and what a branch to it means. */
enum { THUNK_INDIRECT = 1, THUNK_RETURN = 2 };
struct thunk {
	uint64_t addr;
	uint8_t kind;
};

struct ls_cfg_module {
	pthread_mutex_t lock;
	atomic_bool thunks_ready;
	struct thunk *thunks;  /* sorted by addr */
	size_t nthunks;
	bool sections_ready;
	struct data_sec *secs;
	size_t nsecs;
	struct eh_site *sites; /* sorted by lo */
	size_t nsites;
	/* For reading and bounding jump tables: the dynamic relocations
	 * (sorted by offset), and where data objects start and end (symbols;
	 * sorted, unique). */
	struct dyn_reloc *relocs;
	size_t nrelocs;
	bool relative_relocs;  /* PIE or DSO: a code pointer in data carries a RELATIVE relocation */
	uint64_t *data_bounds;
	size_t ndata_bounds;
	atomic_bool facts_ready;
	bool failed;           /* ran out of memory building the facts (under lock) */
	uint8_t *returns;      /* per proc: 1 may return, 0 never returns */
	/* Per proc: the instructions the summary pass decoded, kept so that the
	 * real CFG build does not decode them again (decoding is most of the
	 * cost).  Each slot is taken by the one thread that builds that proc's
	 * CFG.  Bounded by a memory budget: past it, procs decode twice. */
	struct decoded {
		struct ls_insn *insns;
		size_t n, cap;
		bool fragments;        /* insns include fragments outside the proc's ranges */
		size_t bad;            /* undecodable bytes, warned about by the real build */
		uint64_t first_bad;
	} *decoded;
	atomic_size_t decoded_bytes;
};

static void load_thunks(const ls_module *m, struct ls_cfg_module *c);

/* What the kept instructions may cost at most (vmlinux: ~5M instructions). */
#define LS_DECODED_BUDGET ((size_t)256 << 20)

static struct ls_cfg_module *module_cache(const ls_module *cm)
{
	ls_module *m = (ls_module *)cm; /* the cache is logically const */
	struct ls_cfg_module *c = __atomic_load_n(&m->cfg_module, __ATOMIC_ACQUIRE);
	if (c)
		return c;
	struct ls_cfg_module *fresh = ls_xcalloc(1, sizeof *fresh);
	pthread_mutex_init(&fresh->lock, NULL);
	atomic_init(&fresh->facts_ready, false);
	atomic_init(&fresh->thunks_ready, false);
	struct ls_cfg_module *expected = NULL;
	if (__atomic_compare_exchange_n(&m->cfg_module, &expected, fresh, false, __ATOMIC_ACQ_REL,
	                                __ATOMIC_ACQUIRE))
		return fresh;
	pthread_mutex_destroy(&fresh->lock);
	free(fresh);
	return expected;
}

void ls_cfg_module_free(ls_module *m)
{
	struct ls_cfg_module *c = m->cfg_module;
	if (!c)
		return;
	pthread_mutex_destroy(&c->lock);
	free(c->secs);
	free(c->sites);
	free(c->thunks);
	free(c->relocs);
	free(c->data_bounds);
	free(c->returns);
	if (c->decoded)
		for (size_t i = 0; i < m->procs.nprocs; i++)
			free(c->decoded[i].insns);
	free(c->decoded);
	free(c);
	m->cfg_module = NULL;
}

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

/* Every FDE of .eh_frame with an LSDA: its call sites. */
static void parse_eh_frame(struct ls_cfg_module *c, const struct data_sec *eh)
{
	size_t cap = 0;
	struct cursor k = { eh->data, eh->data + eh->size, eh->addr, true };
	/* The last CIE's encodings (FDEs nearly always follow their CIE;
	 * others are looked up by offset). */
	while (k.ok && k.p < k.end) {
		uint64_t entry = k.addr;
		uint64_t length = get_n(&k, 4);
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
		uint32_t id = (uint32_t)get_n(&body, 4);
		if (id == 0)
			continue; /* a CIE: read when an FDE needs it */
		/* The FDE's CIE. */
		struct cursor cie = cursor_at(c, id_addr - id);
		uint64_t cie_len = get_n(&cie, 4);
		if (!cie.ok || cie_len == 0 || cie_len == 0xffffffff || cie_len > (uint64_t)(cie.end - cie.p))
			continue;
		cie.end = cie.p + cie_len;
		if (get_n(&cie, 4) != 0)
			continue;
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
		uint8_t fde_enc = 0, lsda_enc = 0xff;
		if (aug[0] != 'z')
			continue;                /* no augmentation data: no LSDA */
		get_uleb(&cie);
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
		if (!cie.ok || lsda_enc == 0xff)
			continue;
		uint64_t start = get_encoded(&body, fde_enc);
		get_encoded(&body, fde_enc & 0x0f); /* range */
		get_uleb(&body);                     /* augmentation length */
		uint64_t lsda = get_encoded(&body, lsda_enc);
		if (body.ok && lsda)
			parse_lsda(c, &cap, lsda, start);
		(void)entry;
	}
	if (c->nsites)
		qsort(c->sites, c->nsites, sizeof *c->sites, cmp_site);
}

/* The landing pad for a call at ADDR, or 0. */
static uint64_t landing_pad(const struct ls_cfg_module *c, uint64_t addr)
{
	size_t lo = 0, hi = c->nsites;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->sites[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Sites of one function do not overlap; look at the last few
	 * starting at or before ADDR in case of duplicates. */
	for (size_t i = lo; i-- > 0 && lo - i <= 4;)
		if (addr >= c->sites[i].lo && addr < c->sites[i].hi)
			return c->sites[i].lp;
	return 0;
}

static int cmp_reloc(const void *a, const void *b)
{
	const struct dyn_reloc *x = a, *y = b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* What bounds a jump table that has no compare before it: the dynamic
 * relocations (entries of a PIE's absolute table each carry one; a
 * relative table's entries carry none), and the data symbols around it
 * (the next object starts where the table ends).  Caller holds the lock. */
static void load_table_limits(const ls_module *m, struct ls_cfg_module *c)
{
	size_t cap = 0;
	bool relr = false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == 19 /* SHT_RELR: addends in the file's bytes */)
			relr = true;
		if (sh.sh_type != SHT_RELA || !(sh.sh_flags & SHF_ALLOC) || sh.sh_entsize == 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = d ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			if (!gelf_getrela(d, (int)i, &r))
				break;
			c->relocs = ls_grow(c->relocs, &cap, c->nrelocs + 1, sizeof *c->relocs);
			c->relocs[c->nrelocs++] = (struct dyn_reloc){ r.r_offset, (uint64_t)r.r_addend,
			                                              (uint32_t)GELF_R_TYPE(r.r_info) };
			if (GELF_R_TYPE(r.r_info) == R_X86_64_RELATIVE)
				c->relative_relocs = true;
		}
	}
	if (relr)
		c->relative_relocs = false; /* entries may be RELR-relocated: no boundary there */
	if (c->nrelocs)
		qsort(c->relocs, c->nrelocs, sizeof *c->relocs, cmp_reloc);

	cap = 0;
	int total = m->dwmod ? dwfl_module_getsymtab(m->dwmod) : 0;
	for (int i = 1; i < total; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		if (!dwfl_module_getsym_info(m->dwmod, i, &sym, &addr, &shndx, &elf, &bias))
			continue;
		int type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_OBJECT && type != STT_NOTYPE) || sym.st_shndx == SHN_UNDEF ||
		    sym.st_shndx == SHN_ABS)
			continue;
		uint64_t a = addr - m->bias;
		if (ls_text_find(m, a))
			continue;
		c->data_bounds = ls_grow(c->data_bounds, &cap, c->ndata_bounds + 2, sizeof *c->data_bounds);
		c->data_bounds[c->ndata_bounds++] = a;
		if (sym.st_size)
			c->data_bounds[c->ndata_bounds++] = a + sym.st_size;
	}
	if (c->ndata_bounds) {
		qsort(c->data_bounds, c->ndata_bounds, sizeof *c->data_bounds, cmp_u64);
		size_t u = 1;
		for (size_t i = 1; i < c->ndata_bounds; i++)
			if (c->data_bounds[i] != c->data_bounds[u - 1])
				c->data_bounds[u++] = c->data_bounds[i];
		c->ndata_bounds = u;
	}
}

/* Allocated sections with bytes, for reading jump tables and exception
 * tables.  Caller holds the lock.  Relocatable objects are skipped: their
 * tables are unrelocated. */
static void load_sections(const ls_module *m, struct ls_cfg_module *c)
{
	if (c->sections_ready)
		return;
	c->sections_ready = true;
	load_thunks(m, c);
	if (!m->elf || m->relocatable)
		return;
	size_t shstrndx = 0;
	if (elf_getshdrstrndx(m->elf, &shstrndx) < 0)
		shstrndx = 0;
	size_t cap = 0;
	int64_t eh = -1;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
			continue;
		Elf_Data *d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			continue;
		const char *name = shstrndx ? elf_strptr(m->elf, shstrndx, sh.sh_name) : NULL;
		if (name && strcmp(name, ".eh_frame") == 0)
			eh = (int64_t)c->nsecs;
		c->secs = ls_grow(c->secs, &cap, c->nsecs + 1, sizeof *c->secs);
		c->secs[c->nsecs++] = (struct data_sec){ sh.sh_addr, sh.sh_size, d->d_buf };
	}
	if (eh >= 0)
		parse_eh_frame(c, &c->secs[eh]);
	load_table_limits(m, c);
}

static bool read_bytes(const struct ls_cfg_module *c, uint64_t addr, void *out, size_t n)
{
	for (size_t i = 0; i < c->nsecs; i++) {
		const struct data_sec *s = &c->secs[i];
		if (addr >= s->addr && addr - s->addr < s->size && s->size - (addr - s->addr) >= n) {
			memcpy(out, s->data + (addr - s->addr), n);
			return true;
		}
	}
	return false;
}

/* ---- thunks ---------------------------------------------------------------- */

/* What a branch to a symbol named NAME means: the kernel's (and clang's)
 * retpoline thunks stand for an indirect branch through a register, its
 * return thunks for `ret`. */
static uint8_t thunk_kind(const char *name)
{
	static const char *const indirect[] = {
		"__x86_indirect_thunk_", "__x86_indirect_call_thunk_", "__x86_indirect_jump_thunk_",
		"__x86_indirect_alt_call_", "__x86_indirect_alt_jmp_", "__llvm_retpoline_", "__llvm_lvi_thunk_",
	};
	static const char *const ret[] = {
		"__x86_return_thunk", "__x86_return_skl", "srso_return_thunk", "srso_alias_return_thunk",
		"retbleed_return_thunk", "zen_return_thunk",
	};
	if (name[0] != '_' && name[0] != 's' && name[0] != 'r' && name[0] != 'z')
		return 0;
	for (size_t i = 0; i < sizeof indirect / sizeof *indirect; i++)
		if (strncmp(name, indirect[i], strlen(indirect[i])) == 0)
			return THUNK_INDIRECT;
	for (size_t i = 0; i < sizeof ret / sizeof *ret; i++)
		if (strcmp(name, ret[i]) == 0)
			return THUNK_RETURN;
	return 0;
}

static int cmp_thunk(const void *a, const void *b)
{
	const struct thunk *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The thunks of M: symbols with those names, and undefined symbols of a
 * relocatable object.  Caller holds the lock. */
static void load_thunks(const ls_module *m, struct ls_cfg_module *c)
{
	size_t cap = 0;
	int total = m->dwmod ? dwfl_module_getsymtab(m->dwmod) : 0;
	for (int i = 1; i < total; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(m->dwmod, i, &s, &addr, &shndx, &elf, &bias);
		uint8_t kind;
		if (!name || s.st_shndx == SHN_UNDEF || !(kind = thunk_kind(name)))
			continue;
		c->thunks = ls_grow(c->thunks, &cap, c->nthunks + 1, sizeof *c->thunks);
		c->thunks[c->nthunks++] = (struct thunk){ addr - m->bias, kind };
	}
	for (size_t i = 0; i < m->next; i++) {
		uint8_t kind = thunk_kind(m->ext[i].name);
		if (!kind)
			continue;
		c->thunks = ls_grow(c->thunks, &cap, c->nthunks + 1, sizeof *c->thunks);
		c->thunks[c->nthunks++] = (struct thunk){ m->ext[i].addr, kind };
	}
	if (c->nthunks)
		qsort(c->thunks, c->nthunks, sizeof *c->thunks, cmp_thunk);
}

static uint8_t thunk_at(const struct ls_cfg_module *c, uint64_t addr)
{
	size_t lo = 0, hi = c->nthunks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->thunks[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nthunks && c->thunks[lo].addr == addr ? c->thunks[lo].kind : 0;
}

/* A branch to a thunk becomes what the thunk stands for.  The operands are
 * dropped: an indirect jump through a thunk is no jump table. */
static void apply_thunk(const struct ls_cfg_module *c, struct ls_insn *in)
{
	if (!c || !c->nthunks || !in->target ||
	    (in->kind != LS_INSN_CALL && in->kind != LS_INSN_JUMP))
		return;
	uint8_t kind = thunk_at(c, in->target);
	if (!kind)
		return;
	if (in->kind == LS_INSN_CALL && kind == THUNK_INDIRECT)
		in->kind = LS_INSN_ICALL;
	else if (in->kind == LS_INSN_JUMP)
		in->kind = kind == THUNK_INDIRECT ? LS_INSN_IJUMP : LS_INSN_RET;
	else
		return;
	in->target = 0;
	in->nops = 0;
}

/* ---- building --------------------------------------------------------------- */

struct builder {
	const ls_module *m;
	struct ls_decoder *dec;
	const struct ls_proc *proc;
	const struct ls_cfg_module *cache;
	bool all_calls_return;     /* summary mode: no noreturn facts yet */
	struct ls_cfg *cfg;
	size_t cap_insns;
	ls_range *ranges;          /* proc's ranges sorted by lo, and the fragments it jumps into */
	size_t nranges, cap_ranges;
	bool fragments;            /* decode_ranges added fragments */
	/* Jump-table targets: per indirect jump, a run of insn indices. */
	uint32_t *jt_start;        /* per insn: first index into jt, or UINT32_MAX */
	uint32_t *jt_count;
	uint32_t *jt;
	size_t njt, cap_jt;
	bool warned_jt;
	struct flow *flow;         /* resolve_jumps' backward walk */
	bool quiet;                /* the summary build: the real build warns */
	struct decoded *reuse;     /* instructions already decoded for this proc, or NULL */
	size_t bad;                /* undecodable bytes seen */
	uint64_t first_bad;
};

static bool in_ranges(const struct builder *b, uint64_t addr)
{
	for (size_t i = 0; i < b->nranges; i++)
		if (addr >= b->ranges[i].lo && addr < b->ranges[i].hi)
			return true;
	return false;
}

/* The index of the instruction containing ADDR, or -1. */
static int64_t insn_index(const struct ls_cfg *cfg, uint64_t addr)
{
	size_t lo = 0, hi = cfg->ninsns;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ls_insn *in = &cfg->insns[mid];
		if (addr < in->addr)
			hi = mid;
		else if (addr - in->addr >= in->len)
			lo = mid + 1;
		else
			return (int64_t)mid;
	}
	return -1;
}

/* Whether a branch to TARGET leaves the procedure (a tail call). */
static bool is_tail_target(const struct builder *b, uint64_t target)
{
	if (!in_ranges(b, target))
		return true;
	if (target == b->proc->entry)
		return false; /* a jump to its own entry: a loop */
	const struct ls_proc *p = ls_procs_at_entry(&b->m->procs, target);
	return p && p != b->proc;
}

static int cmp_range(const void *a, const void *b)
{
	const ls_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Decodes [ADDR, HI) onto the end of cfg->insns, thunks applied; with
 * FRAGMENT, only up to the first instruction that does not fall through.
 * Returns where it stopped. */
static uint64_t decode_span(struct builder *b, uint64_t addr, uint64_t hi, bool fragment)
{
	struct ls_cfg *cfg = b->cfg;
	while (addr < hi) {
		const struct ls_text *t = ls_text_find(b->m, addr);
		if (!t) {
			/* No bytes here (e.g. a range outside any code
			 * section): skip to the next section inside the range. */
			uint64_t next = hi;
			for (size_t i = 0; i < b->m->ntext; i++)
				if (b->m->text[i].addr > addr && b->m->text[i].addr < next)
					next = b->m->text[i].addr;
			if (fragment)
				break;
			addr = next;
			continue;
		}
		uint64_t end = t->addr + t->size < hi ? t->addr + t->size : hi;
		cfg->insns = ls_grow(cfg->insns, &b->cap_insns, cfg->ninsns + 1, sizeof *cfg->insns);
		struct ls_insn *in = &cfg->insns[cfg->ninsns];
		size_t n = ls_decode(b->dec, t->data + (addr - t->addr), end - addr, addr, in);
		if (n == 0) {
			if (!b->bad++)
				b->first_bad = addr;
			if (fragment)
				break;
			addr++;
			continue;
		}
		apply_thunk(b->cache, in);
		/* In the kernel, hlt waits for an interrupt and goes on (idle
		 * loops); in user space it faults. */
		if (in->opcode == LS_MN_HLT && b->m->kernel)
			in->kind = LS_INSN_OTHER;
		cfg->ninsns++;
		addr += n;
		if (fragment && in->kind != LS_INSN_OTHER && in->kind != LS_INSN_CJUMP &&
		    in->kind != LS_INSN_CALL && in->kind != LS_INSN_ICALL)
			break;
	}
	return addr;
}

/* Code that belongs to whichever procedure jumps into it: the alternatives'
 * out-of-line parts, and .text.unlikely code with no symbol of its own. */
static bool fragment_target(const struct builder *b, uint64_t target)
{
	const struct ls_text *t = ls_text_find(b->m, target);
	if (!t || ls_procs_find(&b->m->procs, target))
		return false;
	return strcmp(t->name, ".altinstr_aux") == 0 || strcmp(t->name, ".altinstr_replacement") == 0 ||
	       strncmp(t->name, ".text.unlikely", 14) == 0;
}

static int cmp_insn(const void *a, const void *b)
{
	const struct ls_insn *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void add_range(struct builder *b, uint64_t lo, uint64_t hi)
{
	b->ranges = ls_grow(b->ranges, &b->cap_ranges, b->nranges + 1, sizeof *b->ranges);
	b->ranges[b->nranges++] = (ls_range){ lo, hi };
}

/* Decodes the fragments the procedure's jumps lead into (and those their
 * jumps lead into), appending them to its ranges. */
static void follow_fragments(struct builder *b)
{
	struct ls_cfg *cfg = b->cfg;
	size_t first_new = cfg->ninsns;
	for (size_t i = 0; i < cfg->ninsns; i++) {
		const struct ls_insn *in = &cfg->insns[i];
		if ((in->kind != LS_INSN_JUMP && in->kind != LS_INSN_CJUMP) || in_ranges(b, in->target) ||
		    !fragment_target(b, in->target))
			continue;
		uint64_t lo = in->target;
		uint64_t hi = decode_span(b, lo, UINT64_MAX, true);
		if (hi > lo)
			add_range(b, lo, hi);
	}
	if (cfg->ninsns > first_new) {
		qsort(cfg->insns, cfg->ninsns, sizeof *cfg->insns, cmp_insn);
		qsort(b->ranges, b->nranges, sizeof *b->ranges, cmp_range);
	}
}

/* Instructions kept from the summary pass include the fragments: give their
 * addresses back to the procedure's ranges. */
static void fragment_ranges_of(struct builder *b)
{
	const struct ls_cfg *cfg = b->cfg;
	size_t n0 = b->nranges;
	for (size_t i = 0; i < cfg->ninsns; i++) {
		const struct ls_insn *in = &cfg->insns[i];
		bool inside = false;
		for (size_t r = 0; r < n0 && !inside; r++)
			inside = in->addr >= b->ranges[r].lo && in->addr < b->ranges[r].hi;
		if (inside)
			continue;
		if (b->nranges > n0 && b->ranges[b->nranges - 1].hi == in->addr)
			b->ranges[b->nranges - 1].hi = in->addr + in->len;
		else
			add_range(b, in->addr, in->addr + in->len);
	}
	if (b->nranges > n0)
		qsort(b->ranges, b->nranges, sizeof *b->ranges, cmp_range);
}

/* Bytes of code in the procedure's ranges (parts outside every executable
 * section are never decoded, so they do not count). */
#define LS_MAX_PROC_CODE ((uint64_t)64 << 20)
static uint64_t code_bytes(const struct builder *b)
{
	const ls_module *m = b->m;
	uint64_t total = 0;
	for (size_t r = 0; r < b->nranges && total <= LS_MAX_PROC_CODE; r++) {
		size_t lo = 0, hi = m->ntext; /* sections are sorted by address */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (m->text[mid].addr <= b->ranges[r].lo)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t i = lo ? lo - 1 : 0; i < m->ntext && m->text[i].addr < b->ranges[r].hi; i++) {
			const struct ls_text *t = &m->text[i];
			uint64_t a = b->ranges[r].lo > t->addr ? b->ranges[r].lo : t->addr;
			uint64_t z = b->ranges[r].hi - t->addr < t->size ? b->ranges[r].hi : t->addr + t->size;
			if (a < z)
				total += z - a;
			if (total > LS_MAX_PROC_CODE)
				break;
		}
	}
	return total;
}

static void decode_ranges(struct builder *b)
{
	struct ls_cfg *cfg = b->cfg;
	if (b->reuse && b->reuse->insns) {
		cfg->insns = b->reuse->insns;
		cfg->ninsns = b->reuse->n;
		b->cap_insns = b->reuse->cap;
		b->bad = b->reuse->bad;
		b->first_bad = b->reuse->first_bad;
		b->reuse->insns = NULL;
		if (b->reuse->fragments)
			fragment_ranges_of(b);
	} else {
		size_t nproc_ranges = b->nranges;
		for (size_t r = 0; r < nproc_ranges; r++) {
			uint64_t addr = b->ranges[r].lo, hi = b->ranges[r].hi;
			/* Ranges may overlap before procs.c clamps them: never decode twice. */
			if (cfg->ninsns) {
				const struct ls_insn *last = &cfg->insns[cfg->ninsns - 1];
				if (addr < last->addr + last->len)
					addr = last->addr + last->len;
			}
			decode_span(b, addr, hi, false);
		}
		follow_fragments(b);
		b->fragments = b->nranges > nproc_ranges;
	}
	if (b->bad && !b->quiet)
		ls_warn(&b->m->opt, "%s: %s: %zu bytes do not decode (first at 0x%llx)", b->m->path,
		        b->proc->name ? b->proc->name : "?", b->bad, (unsigned long long)b->first_bad);
}

/* ---- jump tables ---- */

/* An indirect jump's targets are what its operand may hold.  We find the
 * instructions that last wrote the register before the jump by walking
 * back along the procedure's flow (a backward walk over predecessors, not
 * over addresses: a table's base may be loaded in the preheader, far from
 * the jump, with other code between), and read them as values:
 *   a constant      lea T(%rip),%r; mov $T,%r          (a table's or a label's address)
 *   a table entry   mov T(,%rI,8),%r; mov (%rB,%rI,8),%r; jmp *(%rB,%rI,8)
 *                   (8 bytes, absolute; %rB a constant)
 *                   movslq (%rB,%rI,4),%r; mov (%rB,%rI,4),%e + cltq   (4 bytes, signed)
 *   a sum           add %rA,%rX; lea (%rA,%rX),%rY     (a constant plus a 4-byte entry:
 *                                                       a table relative to itself or to a label)
 *   a pointer       a load without an index, a call's result, an argument:
 *                   not a table (a tail call through a pointer, longjmp)
 * Several definitions may reach a jump (gcc duplicates a computed goto's
 * jump into its predecessors): its targets are the union of their tables.
 *
 * A table is read up to the guarding compare (`cmp $N,%rI; ja`, on the
 * index's value) when there is one; otherwise up to what its index can
 * hold (`and $M`, a zero-extended byte or word), and never past the next
 * data object: a data symbol's start or end, another address the
 * procedure refers to, the section's end, or (in a PIE or a DSO) an 8-byte
 * entry without its RELATIVE relocation.  The relocation's addend is the
 * entry (the file's bytes may be zero).  An entry that is not an
 * instruction start of the procedure ends the table; under a compare it
 * is skipped instead, with a warning when it points into another
 * procedure.  An entry at the procedure's end is clang's unreachable
 * default: skipped.  A table whose first entry is another procedure's
 * entry holds functions (a tail call through it): not a jump table.
 *
 * The code a table leads to has no known predecessor until the table is
 * resolved, so the walk treats code without a predecessor as unreachable
 * (optimistic), and every jump is resolved again with the new edges until
 * the answers no longer change.  A jump that still looks like a table
 * (an indexed load) but has no targets is counted in cfg->unresolved_jumps
 * and warned about once per procedure. */

/* Who may run just before each instruction, for the backward walk.  Built
 * for procedures with an indirect jump only. */
struct flow {
	uint32_t *in_start;        /* per insn + 1: where its sources start in in_src */
	uint32_t *in_src;          /* instructions that branch to it: direct branches,
	                            * jump-table edges found so far, calls to their landing pad */
	size_t cap_src;
	uint32_t *stamp;           /* per insn: visited by the current walk */
	uint32_t gen;
	int64_t *stack;
	int64_t entry;             /* the entry instruction, or -1 */
	bool hit_unknown;          /* a walk met code with no known predecessor */
	size_t budget;             /* instructions all walks of the procedure may still visit */
	uint64_t *refs;            /* data addresses the procedure's instructions name, sorted */
	size_t nrefs;
};

/* What a register may hold. */
enum { VAL_UNKNOWN, VAL_POINTER, VAL_CONST, VAL_ENTRY };
struct jt_val {
	uint8_t kind;
	uint8_t size;              /* VAL_ENTRY: 4 or 8 bytes */
	bool table_like;           /* VAL_UNKNOWN: an indexed load or sum from a table not known */
	bool has_base;             /* VAL_ENTRY: plus BASE (a relative table) */
	int8_t index;              /* VAL_ENTRY: the index register at the load */
	uint64_t c;                /* VAL_CONST: the value; VAL_ENTRY: the table's address */
	uint64_t base;
	int64_t load;              /* VAL_ENTRY: the instruction that loads the entry */
};
#define JT_MAX_VALS 8
struct jt_vals {
	struct jt_val v[JT_MAX_VALS];
	int n;
};
#define JT_DEPTH 6                 /* definitions followed through copies and sums */
/* Instructions the walks of one procedure may visit in all, in every
 * round: linear in its size, so that a procedure with thousands of
 * indirect jumps costs no more than some passes over it (past that, its
 * jumps are left unresolved, and said so).  Lua 5.4's luaV_execute at
 * clang -O3 (7k instructions, 79 copies of the dispatch) takes 1.8M; no
 * procedure of libc takes 1M. */
#define JT_WALK_BUDGET(ninsns) (512 * (size_t)(ninsns) + 16000000)

static bool same_val(const struct jt_val *x, const struct jt_val *y)
{
	return x->kind == y->kind && x->size == y->size && x->table_like == y->table_like &&
	       x->has_base == y->has_base && x->index == y->index && x->c == y->c && x->base == y->base &&
	       x->load == y->load;
}

static void add_val(struct jt_vals *out, struct jt_val v)
{
	for (int i = 0; i < out->n; i++)
		if (same_val(&out->v[i], &v))
			return;
	if (out->n < JT_MAX_VALS)
		out->v[out->n++] = v;
	else /* too many to follow: unknown */
		out->v[JT_MAX_VALS - 1] = (struct jt_val){ .kind = VAL_UNKNOWN, .table_like = true };
}

static void add_kind(struct jt_vals *out, int kind, bool table_like)
{
	add_val(out, (struct jt_val){ .kind = (uint8_t)kind, .table_like = table_like });
}

static bool call_returns(const struct builder *b, uint64_t target);

/* Whether instruction K runs straight into K + 1 (a call: unless it never
 * returns; in the summary build, before that is proved, unless it is
 * known never to return). */
static bool falls_into(const struct builder *b, int64_t k)
{
	const struct ls_cfg *cfg = b->cfg;
	const struct ls_insn *in = &cfg->insns[k];
	if ((size_t)k + 1 >= cfg->ninsns || in->addr + in->len != cfg->insns[k + 1].addr)
		return false;
	if (in->kind == LS_INSN_CALL) {
		const struct ls_proc *p = ls_procs_at_entry(&b->m->procs, in->target);
		return !(p && p->noreturn) && call_returns(b, in->target);
	}
	return in->kind == LS_INSN_OTHER || in->kind == LS_INSN_CJUMP || in->kind == LS_INSN_ICALL;
}

/* The instructions whose last write of REG may reach instruction AT
 * (before it runs), at most MAX of them.  *AT_ENTRY: a path from the
 * procedure's entry writes nothing (REG holds an argument); *LIMIT: too
 * many definitions or too long a walk. */
static int reaching_defs(struct builder *b, int64_t at, int reg, int64_t *defs, int max, bool *at_entry,
                         bool *limit)
{
	struct flow *f = b->flow;
	const struct ls_cfg *cfg = b->cfg;
	*at_entry = *limit = false;
	if (reg < 0 || reg >= 16) {
		*limit = true;
		return 0;
	}
	uint16_t bit = (uint16_t)(1u << reg);
	if (++f->gen == 0) {
		memset(f->stamp, 0, cfg->ninsns * sizeof *f->stamp);
		f->gen = 1;
	}
	int n = 0;
	size_t sp = 0;
	f->stack[sp++] = at;
	while (sp) {
		int64_t x = f->stack[--sp];
		if (x == f->entry)
			*at_entry = true;
		uint32_t lo = f->in_start[x], hi = f->in_start[x + 1];
		bool through = x > 0 && falls_into(b, x - 1);
		if (!through && lo == hi && x != f->entry)
			f->hit_unknown = true;
		for (uint32_t k = lo; k < hi + through; k++) {
			int64_t p = k < hi ? (int64_t)f->in_src[k] : x - 1;
			if (f->stamp[p] == f->gen)
				continue;
			f->stamp[p] = f->gen;
			if (f->budget == 0) {
				*limit = true;
				return n;
			}
			f->budget--;
			if (cfg->insns[p].writes & bit) {
				if (n < max)
					defs[n++] = p;
				else
					*limit = true;
			} else {
				f->stack[sp++] = p; /* each instruction is pushed once: n slots suffice */
			}
		}
	}
	return n;
}

static void value_of_reg(struct builder *b, int64_t at, int reg, int depth, struct jt_vals *out);

/* What a load from MEM at instruction AT gives: a table entry when MEM is
 * indexed and its table's address is known. */
static void value_of_load(struct builder *b, int64_t at, const struct ls_operand *mem, int size, int depth,
                          struct jt_vals *out)
{
	if (mem->index < 0 && size == 4 && (mem->base < 0 || mem->base == LS_REG_RIP)) {
		/* A relative table's one entry (gcc, a switch on a constant). */
		add_val(out, (struct jt_val){ .kind = VAL_ENTRY, .size = 4, .index = -1,
		                              .c = (uint64_t)mem->disp, .load = at });
		return;
	}
	if (mem->index < 0) {
		add_kind(out, VAL_POINTER, false); /* a pointer in a struct, a global, a stack slot */
		return;
	}
	if ((size != 4 && size != 8) || (mem->scale != size && mem->scale != 1)) {
		add_kind(out, VAL_UNKNOWN, true);
		return;
	}
	struct jt_val e = { .kind = VAL_ENTRY, .size = (uint8_t)size, .index = mem->index,
	                    .load = at };
	if (mem->base < 0 || mem->base == LS_REG_RIP) {
		e.c = (uint64_t)mem->disp;
		add_val(out, e);
		return;
	}
	/* The table's address in the base register (or, at -O0 with the
	 * index already scaled, in the index register). */
	for (int pass = 0; pass < 2; pass++) {
		int treg = pass == 0 ? mem->base : mem->index;
		if (pass == 1 && mem->scale != 1)
			break;
		struct jt_vals t = { .n = 0 };
		value_of_reg(b, at, treg, depth, &t);
		bool found = false;
		for (int i = 0; i < t.n; i++)
			if (t.v[i].kind == VAL_CONST) {
				e.c = t.v[i].c + (uint64_t)mem->disp;
				e.index = pass == 0 ? mem->index : mem->base;
				add_val(out, e);
				found = true;
			}
		if (found)
			return;
	}
	add_kind(out, VAL_UNKNOWN, true);
}

/* A + B: a constant plus a 4-byte entry is an entry of a relative table. */
static void value_of_sum(const struct jt_vals *a, const struct jt_vals *bv, int64_t disp, struct jt_vals *out)
{
	for (int i = 0; i < a->n; i++)
		for (int k = 0; k < bv->n; k++) {
			const struct jt_val *x = &a->v[i], *y = &bv->v[k];
			if (x->kind == VAL_ENTRY && y->kind == VAL_CONST) {
				const struct jt_val *t = x;
				x = y;
				y = t;
			}
			if (x->kind == VAL_CONST && y->kind == VAL_ENTRY && y->size == 4 && !y->has_base) {
				struct jt_val e = *y;
				e.has_base = true;
				e.base = x->c + (uint64_t)disp;
				add_val(out, e);
			} else if (x->kind == VAL_CONST && y->kind == VAL_CONST) {
				add_val(out, (struct jt_val){ .kind = VAL_CONST, .c = x->c + y->c + (uint64_t)disp });
			} else {
				add_kind(out, VAL_UNKNOWN, x->kind == VAL_ENTRY || y->kind == VAL_ENTRY || x->table_like ||
				                           y->table_like);
			}
		}
}

/* What instruction D leaves in REG (D writes it). */
static void value_of_def(struct builder *b, int64_t d, int reg, int depth, struct jt_vals *out)
{
	const struct ls_insn *in = &b->cfg->insns[d];
	if (in->kind == LS_INSN_CALL || in->kind == LS_INSN_ICALL) {
		add_kind(out, VAL_POINTER, false); /* a call's result */
		return;
	}
	if (in->opcode == LS_MN_CLTQ && reg == 0) { /* sign-extends a 4-byte entry in %eax */
		value_of_reg(b, d, 0, depth, out);
		return;
	}
	const struct ls_operand *src = &in->op[0], *dst = in->nops ? &in->op[in->nops - 1] : NULL;
	if (!dst || dst->kind != LS_OP_REG || dst->reg != reg || in->nops != 2) {
		add_kind(out, VAL_UNKNOWN, false);
		return;
	}
	switch (in->opcode) {
	case LS_MN_LEA:
		if (src->kind != LS_OP_MEM)
			break;
		if ((src->base < 0 || src->base == LS_REG_RIP) && src->index < 0) {
			add_val(out, (struct jt_val){ .kind = VAL_CONST, .c = (uint64_t)src->disp });
			return;
		}
		if (src->base >= 0 && src->base != LS_REG_RIP && src->index >= 0 && src->scale == 1) {
			struct jt_vals x = { .n = 0 }, y = { .n = 0 };
			value_of_reg(b, d, src->base, depth, &x);
			value_of_reg(b, d, src->index, depth, &y);
			value_of_sum(&x, &y, src->disp, out);
			return;
		}
		break;
	case LS_MN_MOV:
	case LS_MN_MOVSXD:
		if (src->kind == LS_OP_IMM && in->opcode == LS_MN_MOV) {
			add_val(out, (struct jt_val){ .kind = VAL_CONST, .c = (uint64_t)src->imm });
			return;
		}
		if (src->kind == LS_OP_REG) { /* a copy, or a sign extension of a 4-byte entry */
			value_of_reg(b, d, src->reg, depth, out);
			return;
		}
		if (src->kind == LS_OP_MEM) {
			value_of_load(b, d, src, in->opcode == LS_MN_MOVSXD ? 4 : dst->size, depth, out);
			return;
		}
		break;
	case LS_MN_ADD:
		if (src->kind == LS_OP_REG) {
			struct jt_vals x = { .n = 0 }, y = { .n = 0 };
			value_of_reg(b, d, src->reg, depth, &x);
			value_of_reg(b, d, reg, depth, &y);
			value_of_sum(&x, &y, 0, out);
			return;
		}
		break;
	default:
		break;
	}
	add_kind(out, VAL_UNKNOWN, false);
}

/* What REG may hold when instruction AT runs. */
static void value_of_reg(struct builder *b, int64_t at, int reg, int depth, struct jt_vals *out)
{
	if (depth <= 0 || reg < 0 || reg >= 16) {
		add_kind(out, VAL_UNKNOWN, false);
		return;
	}
	int64_t defs[JT_MAX_VALS];
	bool at_entry, limit;
	int n = reaching_defs(b, at, reg, defs, JT_MAX_VALS, &at_entry, &limit);
	if (limit)
		add_kind(out, VAL_UNKNOWN, false);
	if (at_entry)
		add_kind(out, VAL_POINTER, false); /* an argument */
	for (int i = 0; i < n; i++)
		value_of_def(b, defs[i], reg, depth - 1, out);
}

/* The index's history, from the table load back through copies and
 * extensions (mov, movzx, movslq, cltq, lea (,%r,s)): at each step, the
 * register and the one instruction that defined its value there (-2: the
 * procedure's entry, an argument; -1: several, or not known). */
struct index_step {
	int reg;
	int64_t def;
};
#define JT_CHAIN 8

/* The one definition of REG reaching AT (see struct index_step). */
static int64_t unique_def(struct builder *b, int64_t at, int reg)
{
	int64_t d;
	bool at_entry, limit;
	int n = reaching_defs(b, at, reg, &d, 1, &at_entry, &limit);
	if (limit)
		return -1;
	return n == 1 && !at_entry ? d : n == 0 && at_entry ? -2 : -1;
}

static int index_chain(struct builder *b, int64_t load, int reg, struct index_step *chain)
{
	int n = 0;
	int64_t at = load;
	while (n < JT_CHAIN && reg >= 0 && reg < 16) {
		int64_t d = unique_def(b, at, reg);
		chain[n++] = (struct index_step){ reg, d };
		if (d < 0)
			break;
		const struct ls_insn *in = &b->cfg->insns[d];
		int src = -1;
		if (in->opcode == LS_MN_CLTQ)
			src = 0;
		else if ((in->opcode == LS_MN_MOV || in->opcode == LS_MN_MOVZX || in->opcode == LS_MN_MOVSXD) &&
		         in->nops == 2 && in->op[0].kind == LS_OP_REG)
			src = in->op[0].reg;
		else if (in->opcode == LS_MN_LEA && in->nops == 2 && in->op[0].kind == LS_OP_MEM && in->op[0].base < 0 &&
		         in->op[0].disp == 0)
			src = in->op[0].index;
		if (src < 0)
			break;
		reg = src;
		at = d;
	}
	return n;
}

/* Whether compare C (`cmp $N,%r` or, at -O0, `cmpl $N,slot`) tests the
 * index's value: %r there was defined by a step of CHAIN, or the slot is
 * where a step loaded it from. */
static bool compares_index(struct builder *b, int64_t c, const struct index_step *chain, int n)
{
	const struct ls_operand *o = &b->cfg->insns[c].op[1];
	if (o->kind == LS_OP_REG) {
		int64_t d = -1;
		for (int k = 0; k < n; k++)
			if (chain[k].reg == o->reg && chain[k].def != -1) {
				if (d == -1)
					d = unique_def(b, c, o->reg);
				if (d == chain[k].def)
					return true;
			}
		return false;
	}
	for (int k = 0; o->kind == LS_OP_MEM && k < n; k++) {
		if (chain[k].def < 0)
			continue;
		const struct ls_insn *ld = &b->cfg->insns[chain[k].def];
		const struct ls_operand *m = &ld->op[0];
		if ((ld->opcode == LS_MN_MOV || ld->opcode == LS_MN_MOVSXD || ld->opcode == LS_MN_MOVZX) &&
		    m->kind == LS_OP_MEM && m->index < 0 && o->index < 0 && m->base == o->base && m->disp == o->disp)
			return true;
	}
	return false;
}

/* Entries in the table loaded at AT, from a `cmp $N,%r; ja` (or jae,
 * jbe, jb; sub for cmp at clang -O0) on the index's value before it: 0
 * when there is none (address order, at most 48 instructions back). */
static uint64_t table_bound(struct builder *b, int64_t at, const struct index_step *chain, int n)
{
	const struct ls_cfg *cfg = b->cfg;
	for (int64_t i = at - 1; i > 0 && i >= at - 48; i--) {
		const struct ls_insn *j = &cfg->insns[i];
		if (j->kind == LS_INSN_RET || j->kind == LS_INSN_IJUMP || j->kind == LS_INSN_JUMP)
			break;
		if (j->kind != LS_INSN_CJUMP)
			continue;
		if (j->opcode != LS_MN_JA && j->opcode != LS_MN_JAE && j->opcode != LS_MN_JBE &&
		    j->opcode != LS_MN_JB)
			continue;
		const struct ls_insn *c = &cfg->insns[i - 1];
		if ((c->opcode != LS_MN_CMP && c->opcode != LS_MN_SUB) || c->nops != 2 ||
		    c->op[0].kind != LS_OP_IMM || (c->op[1].kind != LS_OP_REG && c->op[1].kind != LS_OP_MEM))
			continue;
		int64_t v = c->op[0].imm;
		if (v < 0 || v > 1 << 16 || !compares_index(b, i - 1, chain, n))
			continue;
		return (uint64_t)v + (j->opcode == LS_MN_JA || j->opcode == LS_MN_JBE ? 1 : 0);
	}
	return 0;
}

/* How many values the index can hold, from its history: `and $M` gives
 * M + 1, a zero-extended byte 256, a word 65536.  0 when unknown. */
static uint64_t index_limit(const struct builder *b, const struct index_step *chain, int n)
{
	for (int k = 0; k < n; k++) {
		if (chain[k].def < 0)
			break;
		const struct ls_insn *in = &b->cfg->insns[chain[k].def];
		if (in->opcode == LS_MN_AND && in->nops == 2 && in->op[0].kind == LS_OP_IMM && in->op[0].imm >= 0)
			return (uint64_t)in->op[0].imm + 1;
		if (in->opcode == LS_MN_MOVZX && in->nops == 2)
			return in->op[0].size == 1 ? 256 : in->op[0].size == 2 ? 65536 : 0;
	}
	return 0;
}

/* The dynamic relocation at ADDR, or NULL. */
static const struct dyn_reloc *reloc_at(const struct ls_cfg_module *c, uint64_t addr)
{
	size_t lo = 0, hi = c->nrelocs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->relocs[mid].offset < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nrelocs && c->relocs[lo].offset == addr ? &c->relocs[lo] : NULL;
}

/* Whether a dynamic relocation touches [ADDR, ADDR + N). */
static bool reloc_within(const struct ls_cfg_module *c, uint64_t addr, uint64_t n)
{
	size_t lo = 0, hi = c->nrelocs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->relocs[mid].offset + 8 <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nrelocs && c->relocs[lo].offset < addr + n;
}

/* The first address above TABLE where another data object starts (or the
 * one holding TABLE ends): a symbol, or an address the procedure refers to. */
static uint64_t data_limit(const struct builder *b, uint64_t table)
{
	uint64_t lim = UINT64_MAX;
	const uint64_t *v[2] = { b->cache->data_bounds, b->flow->refs };
	size_t n[2] = { b->cache->ndata_bounds, b->flow->nrefs };
	for (int k = 0; k < 2; k++) {
		size_t lo = 0, hi = n[k];
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (v[k][mid] <= table)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n[k] && v[k][lo] < lim)
			lim = v[k][lo];
	}
	return lim;
}

/* Entry K of table E, as a code address; false when there is none. */
static bool read_entry(const struct builder *b, const struct jt_val *e, uint64_t k, uint64_t *target)
{
	const struct ls_cfg_module *c = b->cache;
	uint64_t at = e->c + k * e->size;
	if (e->size == 8) {
		uint64_t v;
		if (!read_bytes(c, at, &v, 8))
			return false;
		const struct dyn_reloc *r = c->nrelocs ? reloc_at(c, at) : NULL;
		if (r && r->type == R_X86_64_RELATIVE)
			v = r->addend;
		else if (r || (c->relative_relocs && b->m->ehdr.e_type == ET_DYN))
			return false; /* a symbol's address, or not a pointer at all */
		*target = v;
		return true;
	}
	int32_t v;
	if (!read_bytes(c, at, &v, 4) || (c->nrelocs && reloc_within(c, at, 4)))
		return false;
	*target = e->base + (uint64_t)(int64_t)v;
	return true;
}

/* Whether ADDR is where one of the procedure's ranges ends. */
static bool range_end(const struct builder *b, uint64_t addr)
{
	for (size_t i = 0; i < b->nranges; i++)
		if (b->ranges[i].hi == addr)
			return true;
	return false;
}

/* Targets of the table E (instruction indices) appended to *OUT; how many,
 * or -1 when it is a table of functions (a tail call through it). */
static long read_table(struct builder *b, const struct jt_val *e, uint32_t **out, size_t *nout, size_t *cap)
{
	const struct ls_cfg *cfg = b->cfg;
	struct index_step chain[JT_CHAIN];
	int nchain = e->index >= 0 ? index_chain(b, e->load, e->index, chain) : 0;
	uint64_t count = e->index >= 0 ? table_bound(b, e->load, chain, nchain) : 1;
	bool sure = count > 0;
	if (!sure) {
		uint64_t lim = index_limit(b, chain, nchain);
		uint64_t end = data_limit(b, e->c);
		count = lim ? lim : 4096;
		if (end != UINT64_MAX && (end - e->c) / e->size < count)
			count = (end - e->c) / e->size;
	}
	size_t before = *nout;
	for (uint64_t k = 0; k < count; k++) {
		uint64_t target;
		if (!read_entry(b, e, k, &target))
			break;
		if (k == 0 && is_tail_target(b, target) && ls_procs_at_entry(&b->m->procs, target))
			return -1;
		int64_t idx = in_ranges(b, target) ? insn_index(cfg, target) : -1;
		if (idx >= 0 && cfg->insns[idx].addr == target) {
			*out = ls_grow(*out, cap, *nout + 1, sizeof **out);
			(*out)[(*nout)++] = (uint32_t)idx;
			continue;
		}
		if (range_end(b, target))
			continue; /* an unreachable default: clang puts its label at the procedure's end */
		if (!sure)
			break;
		const struct ls_proc *other = ls_procs_find(&b->m->procs, target);
		if (other && other != b->proc && !b->warned_jt && !b->quiet) {
			b->warned_jt = true;
			ls_warn(&b->m->opt, "%s: %s: jump table at 0x%llx (jump at 0x%llx): entry %llu points into %s (0x%llx)",
			        b->m->path, b->proc->name ? b->proc->name : "?", (unsigned long long)e->c,
			        (unsigned long long)cfg->insns[e->load].addr, (unsigned long long)k,
			        other->name ? other->name : "another procedure", (unsigned long long)target);
		}
	}
	return (long)(*nout - before);
}

enum { JUMP_NOT_TABLE, JUMP_RESOLVED, JUMP_UNRESOLVED };

/* The targets of the indirect jump J (instruction indices, appended to
 * *OUT) and what it is. */
static int jump_targets(struct builder *b, int64_t j, uint32_t **out, size_t *nout, size_t *cap)
{
	const struct ls_insn *jmp = &b->cfg->insns[j];
	const struct ls_operand *op = &jmp->op[0];
	struct jt_vals v = { .n = 0 };
	if (jmp->nops != 1)
		return JUMP_NOT_TABLE;
	if (op->kind == LS_OP_MEM)
		value_of_load(b, j, op, 8, JT_DEPTH, &v);
	else if (op->kind == LS_OP_REG)
		value_of_reg(b, j, op->reg, JT_DEPTH, &v);
	bool unresolved = false, resolved = false;
	for (int i = 0; i < v.n; i++) {
		const struct jt_val *e = &v.v[i];
		if (e->kind == VAL_CONST) {
			/* A label's address (or a function's: a tail call). */
			int64_t idx = in_ranges(b, e->c) ? insn_index(b->cfg, e->c) : -1;
			if (idx >= 0 && b->cfg->insns[idx].addr == e->c && !is_tail_target(b, e->c)) {
				*out = ls_grow(*out, cap, *nout + 1, sizeof **out);
				(*out)[(*nout)++] = (uint32_t)idx;
				resolved = true;
			}
		} else if (e->kind == VAL_ENTRY) {
			if ((e->size == 8 && !e->has_base) || (e->size == 4 && e->has_base)) {
				long n = read_table(b, e, out, nout, cap);
				resolved |= n > 0;
				unresolved |= n == 0;
			} else {
				unresolved |= e->index >= 0;
			}
		} else if (e->kind == VAL_UNKNOWN && e->table_like) {
			unresolved = true;
		}
	}
	/* Out of walking budget: whatever was found may be partial. */
	if (b->flow->budget == 0)
		unresolved = true;
	return unresolved ? JUMP_UNRESOLVED : resolved ? JUMP_RESOLVED : JUMP_NOT_TABLE;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Per indirect jump: its targets so far (sorted, unique) and what it is. */
struct jump_result {
	int64_t insn;
	uint32_t *targets;
	size_t n, cap;
	int status;
};

/* The flow's sources: direct branches, landing pads, and the jump tables
 * resolved so far (JR). */
static void flow_sources(struct builder *b, const struct jump_result *jr, size_t njr)
{
	const struct ls_cfg *cfg = b->cfg;
	struct flow *f = b->flow;
	size_t n = cfg->ninsns;
	uint32_t *count = f->in_start; /* counts in [1..n], then prefix sums */
	memset(count, 0, (n + 1) * sizeof *count);
	for (int pass = 0; pass < 2; pass++) {
		size_t total = 0;
		if (pass == 1) {
			for (size_t i = 0; i < n; i++)
				count[i + 1] += count[i];
			total = count[n];
			f->in_src = ls_grow(f->in_src, &f->cap_src, total + 1, sizeof *f->in_src);
		}
#define SOURCE(to, from)                                         \
	do {                                                     \
		if (pass == 0)                                   \
			count[(to) + 1]++;                       \
		else                                             \
			f->in_src[count[(to)]++] = (uint32_t)(from); \
	} while (0)
		for (size_t i = 0; i < n; i++) {
			const struct ls_insn *in = &cfg->insns[i];
			uint64_t to = 0;
			if ((in->kind == LS_INSN_JUMP || in->kind == LS_INSN_CJUMP) && !is_tail_target(b, in->target))
				to = in->target;
			else if ((in->kind == LS_INSN_CALL || in->kind == LS_INSN_ICALL) && b->cache->nsites)
				to = landing_pad(b->cache, in->addr);
			int64_t t = to && in_ranges(b, to) ? insn_index(cfg, to) : -1;
			if (t >= 0 && cfg->insns[t].addr == to)
				SOURCE(t, i);
		}
		for (size_t r = 0; r < njr; r++)
			for (size_t k = 0; k < jr[r].n; k++)
				SOURCE(jr[r].targets[k], jr[r].insn);
#undef SOURCE
		if (pass == 1) { /* count[i] now holds the end of i's run: shift back */
			memmove(count + 1, count, n * sizeof *count);
			count[0] = 0;
			(void)total;
		}
	}
}

static void flow_init(struct builder *b)
{
	const struct ls_cfg *cfg = b->cfg;
	size_t n = cfg->ninsns;
	struct flow *f = ls_xcalloc(1, sizeof *f);
	b->flow = f;
	f->in_start = ls_xmalloc((n + 2) * sizeof *f->in_start);
	f->stamp = ls_xcalloc(n + 1, sizeof *f->stamp);
	f->stack = ls_xmalloc((n + 1) * sizeof *f->stack);
	f->entry = insn_index(cfg, b->proc->entry);
	f->budget = JT_WALK_BUDGET(n);
	size_t cap = 0;
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < cfg->insns[i].nops && k < 3; k++) {
			const struct ls_operand *o = &cfg->insns[i].op[k];
			if (o->kind == LS_OP_MEM && o->base == LS_REG_RIP && !ls_text_find(b->m, (uint64_t)o->disp)) {
				f->refs = ls_grow(f->refs, &cap, f->nrefs + 1, sizeof *f->refs);
				f->refs[f->nrefs++] = (uint64_t)o->disp;
			}
		}
	if (f->nrefs)
		qsort(f->refs, f->nrefs, sizeof *f->refs, cmp_u64);
}

static void flow_free(struct flow *f)
{
	if (!f)
		return;
	free(f->in_start);
	free(f->in_src);
	free(f->stamp);
	free(f->stack);
	free(f->refs);
	free(f);
}

static void add_jt_target(struct builder *b, uint32_t idx)
{
	b->jt = ls_grow(b->jt, &b->cap_jt, b->njt + 1, sizeof *b->jt);
	b->jt[b->njt++] = idx;
}

#define JT_MAX_ROUNDS 8

/* Resolve every indirect jump of the procedure: b->jt, jt_start, jt_count,
 * their targets made leaders, and cfg->unresolved_jumps. */
static void resolve_jumps(struct builder *b, uint8_t *leader)
{
	struct ls_cfg *cfg = b->cfg;
	size_t njr = 0;
	for (size_t i = 0; i < cfg->ninsns; i++)
		njr += cfg->insns[i].kind == LS_INSN_IJUMP;
	if (!njr)
		return;
	struct jump_result *jr = ls_xcalloc(njr, sizeof *jr), *next = ls_xcalloc(njr, sizeof *next);
	for (size_t i = 0, r = 0; i < cfg->ninsns; i++)
		if (cfg->insns[i].kind == LS_INSN_IJUMP)
			jr[r].insn = next[r].insn = (int64_t)i, r++;
	flow_init(b);
	for (int round = 0; round < JT_MAX_ROUNDS; round++) {
		flow_sources(b, jr, round ? njr : 0);
		b->flow->hit_unknown = false;
		bool changed = false;
		for (size_t r = 0; r < njr; r++) {
			struct jump_result *x = &next[r];
			x->n = 0;
			x->status = jump_targets(b, x->insn, &x->targets, &x->n, &x->cap);
			if (x->n > 1) { /* sorted and unique: a table repeats its cases */
				qsort(x->targets, x->n, sizeof *x->targets, cmp_u32);
				size_t u = 1;
				for (size_t k = 1; k < x->n; k++)
					if (x->targets[k] != x->targets[u - 1])
						x->targets[u++] = x->targets[k];
				x->n = u;
			}
			changed |= x->status != jr[r].status || x->n != jr[r].n ||
			           (x->n && memcmp(x->targets, jr[r].targets, x->n * sizeof *x->targets) != 0);
		}
		struct jump_result *t = jr;
		jr = next;
		next = t;
		/* Done when no walk counted on code it could not reach yet, or
		 * when the new edges changed nothing. */
		if (!b->flow->hit_unknown || (round > 0 && !changed))
			break;
	}
	for (size_t r = 0; r < njr; r++) {
		int64_t i = jr[r].insn;
		b->jt_start[i] = (uint32_t)b->njt;
		b->jt_count[i] = (uint32_t)jr[r].n;
		for (size_t k = 0; k < jr[r].n; k++) {
			add_jt_target(b, jr[r].targets[k]);
			leader[jr[r].targets[k]] = 1;
		}
		if (jr[r].status == JUMP_UNRESOLVED) {
			if (!cfg->unresolved_jumps++)
				cfg->first_unresolved = cfg->insns[i].addr;
		}
		free(jr[r].targets);
		free(next[r].targets);
	}
	free(jr);
	free(next);
	flow_free(b->flow);
	b->flow = NULL;
	if (cfg->unresolved_jumps && !b->quiet)
		ls_warn(&b->m->opt, "%s: %s: %u indirect jump%s not resolved (first at 0x%llx): its loops may be incomplete",
		        b->m->path, b->proc->name ? b->proc->name : "?", cfg->unresolved_jumps,
		        cfg->unresolved_jumps == 1 ? "" : "s", (unsigned long long)cfg->first_unresolved);
}

/* ---- blocks and edges ---- */

struct edge_list {
	struct ls_cfg_edge *e;
	size_t n, cap;
};

static void add_edge(struct edge_list *l, uint32_t from, uint32_t to, uint8_t kind)
{
	/* Successors of one block are added together: drop duplicates. */
	for (size_t i = l->n; i > 0 && l->e[i - 1].from == from; i--)
		if (l->e[i - 1].to == to)
			return;
	l->e = ls_grow(l->e, &l->cap, l->n + 1, sizeof *l->e);
	l->e[l->n++] = (struct ls_cfg_edge){ from, to, kind };
}

static bool call_returns(const struct builder *b, uint64_t target)
{
	if (b->all_calls_return)
		return true;
	return !ls_cfg_call_noreturn(b->m, target);
}

/* The landing pad (instruction index) a call at ADDR unwinds to within this
 * procedure, or -1. */
static int64_t landing_pad_insn(const struct builder *b, uint64_t addr)
{
	uint64_t lp = b->cache && b->cache->nsites ? landing_pad(b->cache, addr) : 0;
	return lp && in_ranges(b, lp) ? insn_index(b->cfg, lp) : -1;
}

/* Leaders: LEADER[i] is set when instruction I starts a block (the first,
 * the entry, branch targets, after every branch, call and gap). */
static void mark_leaders(struct builder *b, uint8_t *leader, int64_t entry_idx)
{
	const struct ls_cfg *cfg = b->cfg;
	size_t n = cfg->ninsns;
	leader[0] = 1;
	if (entry_idx >= 0)
		leader[entry_idx] = 1;
	for (size_t i = 0; i < n; i++) {
		const struct ls_insn *in = &cfg->insns[i];
		b->jt_start[i] = UINT32_MAX;
		if (i + 1 < n && cfg->insns[i + 1].addr != in->addr + in->len)
			leader[i + 1] = 1; /* a gap: range boundary or undecodable bytes */
		switch (in->kind) {
		case LS_INSN_JUMP:
		case LS_INSN_CJUMP:
			if (!is_tail_target(b, in->target)) {
				int64_t t = insn_index(cfg, in->target);
				if (t >= 0)
					leader[t] = 1;
			}
			leader[i + 1] = 1;
			break;
		case LS_INSN_IJUMP:
			leader[i + 1] = 1; /* its targets: resolve_jumps, below */
			break;
		case LS_INSN_CALL:
		case LS_INSN_ICALL: {
			int64_t t = landing_pad_insn(b, in->addr);
			if (t >= 0)
				leader[t] = 1;
			leader[i + 1] = 1;
			break;
		}
		case LS_INSN_RET:
		case LS_INSN_HALT:
			leader[i + 1] = 1;
			break;
		default:
			break;
		}
	}
}

/* The edges out of block BI (ending in instruction LAST), in address-order
 * block numbers. */
static void block_edges(struct builder *b, const uint32_t *block_of_insn, size_t bi, size_t last,
                        struct edge_list *el)
{
	const struct ls_cfg *cfg = b->cfg;
	const struct ls_insn *in = &cfg->insns[last];
	bool next_contiguous = last + 1 < cfg->ninsns && cfg->insns[last + 1].addr == in->addr + in->len;
	uint32_t next = next_contiguous ? block_of_insn[last + 1] : 0;
	switch (in->kind) {
	case LS_INSN_OTHER:
		if (next_contiguous)
			add_edge(el, bi, next, LS_EDGE_FALLTHROUGH);
		break;
	case LS_INSN_CALL:
	case LS_INSN_ICALL: {
		if (next_contiguous && (in->kind == LS_INSN_ICALL || call_returns(b, in->target)))
			add_edge(el, bi, next, LS_EDGE_CALL_RETURN);
		/* What the callee throws lands here (even when it never
		 * returns normally). */
		int64_t t = landing_pad_insn(b, in->addr);
		if (t >= 0)
			add_edge(el, bi, block_of_insn[t], LS_EDGE_EXCEPTION);
		break;
	}
	case LS_INSN_JUMP:
		if (!is_tail_target(b, in->target)) {
			int64_t t = insn_index(cfg, in->target);
			if (t >= 0)
				add_edge(el, bi, block_of_insn[t], LS_EDGE_JUMP);
		}
		break;
	case LS_INSN_CJUMP:
		if (!is_tail_target(b, in->target)) {
			int64_t t = insn_index(cfg, in->target);
			if (t >= 0)
				add_edge(el, bi, block_of_insn[t], LS_EDGE_TAKEN);
		}
		if (next_contiguous)
			add_edge(el, bi, next, LS_EDGE_NOT_TAKEN);
		break;
	case LS_INSN_IJUMP:
		for (uint32_t k = 0; k < b->jt_count[last]; k++)
			add_edge(el, bi, block_of_insn[b->jt[b->jt_start[last] + k]], LS_EDGE_SWITCH);
		break;
	default: /* ret, halt */
		break;
	}
}

/* Moves BLOCKS (address order) and EL into CFG with the entry's block EB
 * first: those at and after it in address order, then those before it (code
 * below the entry, e.g. a .cold part placed lower). */
static void number_blocks(struct ls_cfg *cfg, const struct ls_block *blocks, size_t nblocks, size_t eb,
                          struct edge_list *el)
{
	uint32_t *renum = ls_xmalloc(nblocks * sizeof *renum);
	cfg->blocks = ls_xmalloc(nblocks * sizeof *cfg->blocks);
	for (size_t i = 0; i < nblocks; i++) {
		size_t to = i >= eb ? i - eb : i + (nblocks - eb);
		renum[i] = (uint32_t)to;
		cfg->blocks[to] = blocks[i];
	}
	cfg->nblocks = nblocks;
	cfg->edges = el->e ? el->e : ls_xmalloc(sizeof *cfg->edges);
	cfg->nedges = el->n;
	for (size_t e = 0; e < el->n; e++) {
		cfg->edges[e].from = renum[cfg->edges[e].from];
		cfg->edges[e].to = renum[cfg->edges[e].to];
	}
	free(renum);
}

/* succ and pred: edge indices grouped by block (counting sort). */
static void group_edges(struct ls_cfg *cfg)
{
	size_t ne = cfg->nedges;
	cfg->succ = ls_xmalloc((ne + 1) * sizeof *cfg->succ);
	cfg->pred = ls_xmalloc((ne + 1) * sizeof *cfg->pred);
	for (size_t e = 0; e < ne; e++) {
		cfg->blocks[cfg->edges[e].from].nsucc++;
		cfg->blocks[cfg->edges[e].to].npred++;
	}
	uint32_t s = 0, p = 0;
	for (size_t i = 0; i < cfg->nblocks; i++) {
		cfg->blocks[i].first_succ = s;
		cfg->blocks[i].first_pred = p;
		s += cfg->blocks[i].nsucc;
		p += cfg->blocks[i].npred;
		cfg->blocks[i].nsucc = cfg->blocks[i].npred = 0;
	}
	for (size_t e = 0; e < ne; e++) {
		struct ls_block *f = &cfg->blocks[cfg->edges[e].from], *t = &cfg->blocks[cfg->edges[e].to];
		cfg->succ[f->first_succ + f->nsucc++] = (uint32_t)e;
		cfg->pred[t->first_pred + t->npred++] = (uint32_t)e;
	}
}

/* Marks the blocks reachable from the entry (block 0). */
static void mark_reachable(struct ls_cfg *cfg)
{
	uint32_t *work = ls_xmalloc(cfg->nblocks * sizeof *work);
	size_t nw = 0;
	cfg->blocks[0].reachable = true;
	work[nw++] = 0;
	while (nw) {
		const struct ls_block *blk = &cfg->blocks[work[--nw]];
		for (uint32_t k = 0; k < blk->nsucc; k++) {
			uint32_t t = cfg->edges[cfg->succ[blk->first_succ + k]].to;
			if (!cfg->blocks[t].reachable) {
				cfg->blocks[t].reachable = true;
				work[nw++] = t;
			}
		}
	}
	free(work);
}

/* Decode, leaders, jump tables, blocks, edges, numbering, reachability. */
static int build(struct builder *b)
{
	struct ls_cfg *cfg = b->cfg;
	const struct ls_proc *proc = b->proc;
	memset(cfg, 0, sizeof *cfg);

	b->nranges = proc->nranges;
	b->cap_ranges = proc->nranges + 1;
	b->ranges = ls_xmalloc((proc->nranges + 1) * sizeof *b->ranges);
	if (proc->nranges)
		memcpy(b->ranges, proc->ranges, proc->nranges * sizeof *b->ranges);
	qsort(b->ranges, b->nranges, sizeof *b->ranges, cmp_range);

	/* More code than any compiler puts in one function (a sparse or forged
	 * file declaring a gigabyte one) is not decoded: its instructions would
	 * take gigabytes.  Its statements still come from the line table. */
	uint64_t bytes = code_bytes(b);
	if (bytes > LS_MAX_PROC_CODE) {
		if (!b->quiet)
			ls_warn(&b->m->opt, "%s: %s: %llu MiB of code, more than the %llu MiB a procedure may have: "
			        "not decoded (no loops for it)", b->m->path, proc->name ? proc->name : "?",
			        (unsigned long long)(bytes >> 20), (unsigned long long)(LS_MAX_PROC_CODE >> 20));
		return -1;
	}
	decode_ranges(b);
	size_t n = cfg->ninsns;
	if (n == 0)
		return -1;

	uint8_t *leader = ls_xcalloc(n + 1, 1);
	b->jt_start = ls_xmalloc(n * sizeof *b->jt_start);
	b->jt_count = ls_xcalloc(n, sizeof *b->jt_count);
	int64_t entry_idx = insn_index(cfg, proc->entry);
	mark_leaders(b, leader, entry_idx);
	if (b->cache)
		resolve_jumps(b, leader);

	/* Blocks in address order. */
	size_t nblocks = 0;
	for (size_t i = 0; i < n; i++)
		nblocks += leader[i];
	struct ls_block *blocks = ls_xcalloc(nblocks, sizeof *blocks);
	uint32_t *block_of_insn = ls_xmalloc(n * sizeof *block_of_insn);
	size_t nb = 0;
	for (size_t i = 0; i < n; i++) {
		if (leader[i]) {
			blocks[nb].start = cfg->insns[i].addr;
			blocks[nb].first_insn = (uint32_t)i;
			nb++;
		}
		struct ls_block *blk = &blocks[nb - 1];
		blk->ninsns++;
		blk->end = cfg->insns[i].addr + cfg->insns[i].len;
		block_of_insn[i] = (uint32_t)(nb - 1);
	}

	struct edge_list el = { 0 };
	for (size_t bi = 0; bi < nblocks; bi++)
		block_edges(b, block_of_insn, bi, blocks[bi].first_insn + blocks[bi].ninsns - 1, &el);
	number_blocks(cfg, blocks, nblocks, entry_idx >= 0 ? block_of_insn[entry_idx] : 0, &el);
	group_edges(cfg);
	mark_reachable(cfg);

	free(blocks);
	free(block_of_insn);
	free(leader);
	return 0;
}

static void builder_done(struct builder *b)
{
	free(b->ranges);
	free(b->jt_start);
	free(b->jt_count);
	free(b->jt);
}

/* ---- noreturn facts ------------------------------------------------------------ */

static int32_t proc_index(const ls_module *m, const struct ls_proc *p)
{
	return p ? (int32_t)(p - m->procs.procs) : -1;
}

/* A call to an undefined symbol of a relocatable object (relocate.c) that
 * never returns, by its name. */
static bool extern_noreturn(const ls_module *m, uint64_t target)
{
	const char *name = m->next ? ls_extern_name(m, target) : NULL;
	return name && ls_noreturn_name(m, name);
}

/* Summarize PROC's CFG (built with every call returning). */
static void summarize(const ls_module *m, const struct ls_proc *proc, const struct ls_cfg *cfg,
                      struct summary *s)
{
	s->nblocks = (uint32_t)cfg->nblocks;
	s->succ_start = ls_xmalloc((cfg->nblocks + 1) * sizeof *s->succ_start);
	s->succ = ls_xmalloc((cfg->nedges + 1) * sizeof *s->succ);
	s->dep = ls_xmalloc((cfg->nblocks + 1) * sizeof *s->dep);
	s->nexc = ls_xmalloc((cfg->nblocks + 1) * sizeof *s->nexc);
	s->flags = ls_xcalloc(cfg->nblocks + 1, 1);
	uint32_t k = 0;
	for (size_t bi = 0; bi < cfg->nblocks; bi++) {
		const struct ls_block *blk = &cfg->blocks[bi];
		s->succ_start[bi] = k;
		s->nexc[bi] = 0;
		for (int pass = 0; pass < 2; pass++)
			for (uint32_t e = 0; e < blk->nsucc; e++) {
				const struct ls_cfg_edge *ed = &cfg->edges[cfg->succ[blk->first_succ + e]];
				if ((ed->kind == LS_EDGE_EXCEPTION) != (pass == 0))
					continue;
				s->succ[k++] = ed->to;
				s->nexc[bi] += pass == 0;
			}
		s->dep[bi] = -1;
		size_t last = blk->first_insn + blk->ninsns - 1;
		const struct ls_insn *in = &cfg->insns[last];
		bool falls_off = last + 1 >= cfg->ninsns || cfg->insns[last + 1].addr != in->addr + in->len;
		switch (in->kind) {
		case LS_INSN_RET:
			s->flags[bi] |= SUM_EXIT;
			break;
		case LS_INSN_IJUMP:
			if (blk->nsucc == 0)
				s->flags[bi] |= SUM_EXIT; /* unknown: assume it may return */
			break;
		case LS_INSN_JUMP:
		case LS_INSN_CJUMP: {
			bool internal = false;
			for (uint32_t e = 0; e < blk->nsucc; e++) {
				const struct ls_cfg_edge *ed = &cfg->edges[cfg->succ[blk->first_succ + e]];
				if (ed->kind == LS_EDGE_JUMP || ed->kind == LS_EDGE_TAKEN)
					internal = true;
			}
			if (!internal) {
				/* A tail call: returns if its target does. */
				const struct ls_proc *t = ls_procs_at_entry(&m->procs, in->target);
				if (!t)
					t = ls_procs_find(&m->procs, in->target);
				if (!t && extern_noreturn(m, in->target))
					;
				else if (!t || t == proc)
					s->flags[bi] |= SUM_EXIT; /* outside every procedure, or unknown: may return */
				else if (t->noreturn)
					;
				else if (t->is_plt)
					s->flags[bi] |= SUM_EXIT;
				else {
					s->flags[bi] |= SUM_DEP_EXIT;
					s->dep[bi] = proc_index(m, t);
				}
			}
			if (in->kind == LS_INSN_CJUMP && falls_off)
				s->flags[bi] |= SUM_EXIT;
			break;
		}
		case LS_INSN_CALL: {
			const struct ls_proc *t = ls_procs_at_entry(&m->procs, in->target);
			if ((t && t->noreturn) || (!t && extern_noreturn(m, in->target))) {
				s->flags[bi] |= SUM_DEP_GATE; /* never passes */
				s->dep[bi] = -2;
			} else if (t && !t->is_plt && t != proc) {
				s->flags[bi] |= SUM_DEP_GATE;
				s->dep[bi] = proc_index(m, t);
			}
			if (falls_off)
				s->flags[bi] |= SUM_EXIT;
			break;
		}
		case LS_INSN_OTHER:
		case LS_INSN_ICALL:
			if (falls_off)
				s->flags[bi] |= SUM_EXIT;
			break;
		default:
			break;
		}
	}
	s->succ_start[cfg->nblocks] = k;
}

/* Whether a return is reachable from the entry of the summarized proc. */
static bool summary_returns(const struct summary *s, const uint8_t *returns, uint8_t *seen, uint32_t *stack)
{
	if (s->nblocks == 0)
		return true;
	memset(seen, 0, s->nblocks);
	size_t sp = 0;
	stack[sp++] = 0;
	seen[0] = 1;
	bool ret = false;
	while (sp && !ret) {
		uint32_t b = stack[--sp];
		uint8_t f = s->flags[b];
		int32_t dep = s->dep[b];
		uint32_t kend = s->succ_start[b + 1];
		if ((f & SUM_DEP_GATE) && (dep < 0 || !returns[dep])) {
			kend = s->succ_start[b] + s->nexc[b]; /* only what it throws */
		} else {
			if (f & SUM_EXIT)
				ret = true;
			if ((f & SUM_DEP_EXIT) && dep >= 0 && returns[dep])
				ret = true;
		}
		for (uint32_t k = s->succ_start[b]; k < kend; k++)
			if (!seen[s->succ[k]]) {
				seen[s->succ[k]] = 1;
				stack[sp++] = s->succ[k];
			}
	}
	return ret;
}

/* The least fixpoint of "may return" over the call graph.  Caller holds
 * the lock. */
/* The summaries are built on as many threads as the analysis uses: each
 * with its own decoder, writing only its own procedures' slots. */
struct summary_job {
	const ls_module *m;
	struct ls_cfg_module *c;
	struct summary *sums;
	uint8_t *fixed;
	atomic_size_t next;
};

static void *summary_worker(void *arg)
{
	struct summary_job *job = arg;
	const ls_module *m = job->m;
	struct ls_decoder *dec = ls_decoder_new(m->ehdr.e_machine);
	for (;;) {
		size_t i = atomic_fetch_add(&job->next, 1);
		if (i >= m->procs.nprocs)
			break;
		const struct ls_proc *p = &m->procs.procs[i];
		if (p->noreturn) {
			job->fixed[i] = 1;
			continue;
		}
		if (p->is_plt || !dec) {
			job->c->returns[i] = 1;
			job->fixed[i] = 1;
			continue;
		}
		struct ls_cfg cfg;
		struct builder b = { .m = m, .dec = dec, .proc = p, .cache = job->c, .all_calls_return = true,
		                     .cfg = &cfg, .quiet = true, .warned_jt = true };
		if (build(&b) == 0) {
			summarize(m, p, &cfg, &job->sums[i]);
			size_t bytes = cfg.ninsns * sizeof *cfg.insns;
			if (atomic_fetch_add(&job->c->decoded_bytes, bytes) + bytes <= LS_DECODED_BUDGET) {
				job->c->decoded[i] = (struct decoded){ cfg.insns, cfg.ninsns, b.cap_insns, b.fragments,
				                                       b.bad, b.first_bad };
				cfg.insns = NULL;
			}
		} else {
			job->c->returns[i] = 1;
			job->fixed[i] = 1;
		}
		builder_done(&b);
		ls_cfg_free(&cfg);
	}
	if (dec)
		ls_decoder_free(dec);
	return NULL;
}

static void *summary_worker_shared(void *arg)
{
	return summary_worker(*(struct summary_job **)arg);
}

static void compute_facts(const ls_module *m, struct ls_cfg_module *c)
{
	size_t np = m->procs.nprocs;
	c->returns = ls_xcalloc(np + 1, 1);
	c->decoded = ls_xcalloc(np + 1, sizeof *c->decoded);
	atomic_init(&c->decoded_bytes, 0);
	struct summary *sums = ls_xcalloc(np + 1, sizeof *sums);
	uint8_t *fixed = ls_xcalloc(np + 1, 1);

	struct summary_job job = { .m = m, .c = c, .sums = sums, .fixed = fixed };
	atomic_init(&job.next, 0);
	/* Small modules: not worth a thread (at least 64 procedures each). */
	int nthreads = ls_worker_count(&m->opt, np, 64);
	struct summary_job *jobs[LS_MAX_WORKERS];
	for (int t = 0; t < nthreads; t++)
		jobs[t] = &job; /* every worker shares the one job */
	ls_run_workers(nthreads, summary_worker_shared, jobs, sizeof *jobs);
	size_t maxblocks = 1;
	for (size_t i = 0; i < np; i++)
		if (sums[i].nblocks > maxblocks)
			maxblocks = sums[i].nblocks;

	/* Reverse dependencies, for the worklist. */
	uint32_t *rcount = ls_xcalloc(np + 1, sizeof *rcount);
	for (size_t i = 0; i < np; i++)
		for (uint32_t bl = 0; bl < sums[i].nblocks; bl++)
			if (sums[i].dep[bl] >= 0)
				rcount[sums[i].dep[bl]]++;
	uint32_t *rstart = ls_xmalloc((np + 1) * sizeof *rstart);
	uint32_t acc = 0;
	for (size_t i = 0; i < np; i++) {
		rstart[i] = acc;
		acc += rcount[i];
		rcount[i] = 0;
	}
	rstart[np] = acc;
	uint32_t *rdeps = ls_xmalloc((acc + 1) * sizeof *rdeps);
	for (size_t i = 0; i < np; i++)
		for (uint32_t bl = 0; bl < sums[i].nblocks; bl++) {
			int32_t d = sums[i].dep[bl];
			if (d >= 0)
				rdeps[rstart[d] + rcount[d]++] = (uint32_t)i;
		}

	uint8_t *seen = ls_xmalloc(maxblocks + 1);
	uint32_t *stack = ls_xmalloc((maxblocks + 1) * sizeof *stack);
	uint32_t *work = ls_xmalloc((np + 1) * sizeof *work);
	uint8_t *queued = ls_xcalloc(np + 1, 1);
	size_t nw = 0;
	for (size_t i = np; i-- > 0;)
		if (!fixed[i]) {
			work[nw++] = (uint32_t)i;
			queued[i] = 1;
		}
	while (nw) {
		uint32_t i = work[--nw];
		queued[i] = 0;
		if (c->returns[i] || !summary_returns(&sums[i], c->returns, seen, stack))
			continue;
		c->returns[i] = 1;
		for (uint32_t k = rstart[i]; k < rstart[i + 1]; k++) {
			uint32_t r = rdeps[k];
			if (!fixed[r] && !c->returns[r] && !queued[r]) {
				queued[r] = 1;
				work[nw++] = r;
			}
		}
	}

	for (size_t i = 0; i < np; i++) {
		free(sums[i].succ_start);
		free(sums[i].succ);
		free(sums[i].dep);
		free(sums[i].nexc);
		free(sums[i].flags);
	}
	free(sums);
	free(fixed);
	free(rcount);
	free(rstart);
	free(rdeps);
	free(seen);
	free(stack);
	free(work);
	free(queued);
}

/* Under C's lock.  Out of memory: unlock, and make the other threads
 * fail too rather than build the facts again. */
static void fill_cache(const ls_module *m, struct ls_cfg_module *const c, bool want_facts)
{
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env)) {
		c->failed = true;
		pthread_mutex_unlock(&c->lock);
		ls_oom_raise();
	}
	if (c->failed) {
		ls_oom_pop(&g);
		pthread_mutex_unlock(&c->lock);
		ls_oom_raise();
	}
	load_sections(m, c);
	if (want_facts && !atomic_load_explicit(&c->facts_ready, memory_order_relaxed)) {
		compute_facts(m, c);
		atomic_store_explicit(&c->facts_ready, true, memory_order_release);
	}
	ls_oom_pop(&g);
}

static const struct ls_cfg_module *ready_cache(const ls_module *m, bool want_facts)
{
	struct ls_cfg_module *c = module_cache(m);
	if (want_facts && atomic_load_explicit(&c->facts_ready, memory_order_acquire))
		return c;
	pthread_mutex_lock(&c->lock);
	fill_cache(m, c, want_facts);
	pthread_mutex_unlock(&c->lock);
	return c;
}

bool ls_cfg_call_noreturn(const ls_module *m, uint64_t target)
{
	const struct ls_proc *p = ls_procs_at_entry(&m->procs, target);
	if (!p)
		return extern_noreturn(m, target);
	if (p->noreturn)
		return true;
	if (p->is_plt)
		return false;
	const struct ls_cfg_module *c = ready_cache(m, true);
	return !c->returns[p - m->procs.procs];
}

/* ---- interface ------------------------------------------------------------------ */

int ls_cfg_build(const struct ls_cfg_env *env, const struct ls_proc *proc, struct ls_cfg *cfg)
{
	const ls_module *m = env->m;
	memset(cfg, 0, sizeof *cfg);
	if (!env->dec || !proc)
		return -1;
	const struct ls_cfg_module *c = ready_cache(m, true);
	/* The slot is this proc's alone: only this thread builds its CFG. */
	int32_t pi = proc_index(m, proc);
	struct decoded *reuse = c->decoded && pi >= 0 && (size_t)pi < m->procs.nprocs
	                        ? &((struct ls_cfg_module *)c)->decoded[pi] : NULL;
	struct builder b = { .m = m, .dec = env->dec, .proc = proc, .cache = c, .cfg = cfg, .reuse = reuse };
	int rc = build(&b);
	builder_done(&b);
	if (rc < 0) {
		ls_cfg_free(cfg);
		return -1;
	}
	return 0;
}

int32_t ls_cfg_block_of(const struct ls_cfg *cfg, uint64_t addr)
{
	size_t n = cfg->nblocks;
	if (n == 0)
		return -1;
	/* Two ascending runs: [0, k) from the entry up, [k, n) below it. */
	uint64_t first = cfg->blocks[0].start;
	size_t lo = 1, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cfg->blocks[mid].start >= first)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t k = lo;
	size_t a = addr >= first ? 0 : k, z = addr >= first ? k : n;
	while (a < z) {
		size_t mid = a + (z - a) / 2;
		const struct ls_block *blk = &cfg->blocks[mid];
		if (addr < blk->start)
			z = mid;
		else if (addr >= blk->end)
			a = mid + 1;
		else
			return (int32_t)mid;
	}
	return -1;
}

void ls_cfg_free(struct ls_cfg *cfg)
{
	free(cfg->insns);
	free(cfg->blocks);
	free(cfg->edges);
	free(cfg->succ);
	free(cfg->pred);
	memset(cfg, 0, sizeof *cfg);
}
