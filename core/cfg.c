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
 * Jump tables: gcc's and clang's x86-64 patterns,
 *   non-PIC  jmp *T(,%rI,8)    or  mov T(,%rI,8),%rX; jmp *%rX     (8-byte absolute)
 *   PIC      lea T(%rip),%rA; movslq (%rA,%rI,4),%rX; add %rA,%rX; jmp *%rX (4-byte, T-relative)
 * bounded by the nearest `cmp $N,%r; ja/jae` before the table load.
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

/* A call-site record of a C++ exception table: calls in [lo, hi) land at
 * LP when something they call throws. */
struct eh_site {
	uint64_t lo, hi, lp;
};

struct ls_cfg_module {
	pthread_mutex_t lock;
	bool sections_ready;
	struct data_sec *secs;
	size_t nsecs;
	struct eh_site *sites; /* sorted by lo */
	size_t nsites;
	atomic_bool facts_ready;
	uint8_t *returns;      /* per proc: 1 may return, 0 never returns */
	/* Per proc: the instructions the summary pass decoded, kept so that the
	 * real CFG build does not decode them again (decoding is most of the
	 * cost).  Each slot is taken by the one thread that builds that proc's
	 * CFG.  Bounded by a memory budget: past it, procs decode twice. */
	struct decoded {
		struct ls_insn *insns;
		size_t n, cap;
		size_t bad;            /* undecodable bytes, warned about by the real build */
		uint64_t first_bad;
	} *decoded;
	atomic_size_t decoded_bytes;
};

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

/* Allocated sections with bytes, for reading jump tables and exception
 * tables.  Caller holds the lock.  Relocatable objects are skipped: their
 * tables are unrelocated. */
static void load_sections(const ls_module *m, struct ls_cfg_module *c)
{
	if (c->sections_ready)
		return;
	c->sections_ready = true;
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

/* ---- building --------------------------------------------------------------- */

struct builder {
	const ls_module *m;
	struct ls_decoder *dec;
	const struct ls_proc *proc;
	const struct ls_cfg_module *cache;
	bool all_calls_return;     /* summary mode: no noreturn facts yet */
	struct ls_cfg *cfg;
	size_t cap_insns;
	ls_range *ranges;          /* proc's ranges sorted by lo */
	size_t nranges;
	/* Jump-table targets: per indirect jump, a run of insn indices. */
	uint32_t *jt_start;        /* per insn: first index into jt, or UINT32_MAX */
	uint32_t *jt_count;
	uint32_t *jt;
	size_t njt, cap_jt;
	bool warned_jt;
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
	} else {
		for (size_t r = 0; r < b->nranges; r++) {
			uint64_t addr = b->ranges[r].lo, hi = b->ranges[r].hi;
			/* Ranges may overlap before procs.c clamps them: never decode twice. */
			if (cfg->ninsns) {
				const struct ls_insn *last = &cfg->insns[cfg->ninsns - 1];
				if (addr < last->addr + last->len)
					addr = last->addr + last->len;
			}
			while (addr < hi) {
				const struct ls_text *t = ls_text_find(b->m, addr);
				if (!t) {
					/* No bytes here (e.g. a range outside any code
					 * section): skip to the next section inside the range. */
					uint64_t next = hi;
					for (size_t i = 0; i < b->m->ntext; i++)
						if (b->m->text[i].addr > addr && b->m->text[i].addr < next)
							next = b->m->text[i].addr;
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
					addr++;
					continue;
				}
				cfg->ninsns++;
				addr += n;
			}
		}
	}
	if (b->bad && !b->quiet)
		ls_warn(&b->m->opt, "%s: %s: %zu bytes do not decode (first at 0x%llx)", b->m->path,
		        b->proc->name ? b->proc->name : "?", b->bad, (unsigned long long)b->first_bad);
}

/* ---- jump tables ---- */

/* The latest instruction before FROM (at most WINDOW back, or to the start
 * when WINDOW is 0) that writes register REG as its destination. */
static int64_t find_def(const struct ls_cfg *cfg, int64_t from, int reg, int64_t window)
{
	int64_t stop = window ? from - window : 0;
	if (stop < 0)
		stop = 0;
	for (int64_t i = from - 1; i >= stop; i--) {
		const struct ls_insn *in = &cfg->insns[i];
		if (in->opcode == LS_MN_CLTQ && reg == 0)
			return i;
		if (in->kind != LS_INSN_OTHER)
			continue;
		if (in->nops == 0)
			continue;
		const struct ls_operand *dst = &in->op[in->nops - 1];
		if (dst->kind == LS_OP_REG && dst->reg == reg && in->opcode != LS_MN_CMP)
			return i;
	}
	return -1;
}

/* The registers the table index came from: the load's index (and base,
 * for -O0's precomputed offsets), followed back through register copies
 * (mov, movzx, movslq, cltq, lea (,%r,s)).  At most 8. */
static int index_sources(const struct ls_cfg *cfg, int64_t load, int table_reg, int *regs, bool *byte_index)
{
	*byte_index = false;
	const struct ls_operand *mem = &cfg->insns[load].op[0];
	int n = 0;
	if (mem->kind == LS_OP_MEM) {
		if (mem->index >= 0 && mem->index != table_reg)
			regs[n++] = mem->index;
		if (mem->base >= 0 && mem->base != LS_REG_RIP && mem->base != table_reg)
			regs[n++] = mem->base;
	}
	for (int k = 0; k < n && n < 8; k++) {
		int64_t d = find_def(cfg, load, regs[k], 16);
		if (d < 0)
			continue;
		const struct ls_insn *in = &cfg->insns[d];
		int src = -1;
		if (in->opcode == LS_MN_MOVZX && in->op[0].size == 1)
			*byte_index = true;
		if (in->opcode == LS_MN_CLTQ)
			src = 0;
		else if ((in->opcode == LS_MN_MOV || in->opcode == LS_MN_MOVZX || in->opcode == LS_MN_MOVSXD) &&
		         in->nops == 2 && in->op[0].kind == LS_OP_REG)
			src = in->op[0].reg;
		else if (in->opcode == LS_MN_LEA && in->op[0].kind == LS_OP_MEM && in->op[0].base < 0)
			src = in->op[0].index;
		bool dup = src < 0;
		for (int q = 0; q < n && !dup; q++)
			dup = regs[q] == src;
		if (!dup)
			regs[n++] = src;
	}
	return n;
}

/* Entries in the table, from a `cmp $N,%r; ja` (or jae, jbe, jb; sub for
 * cmp at clang -O0) before the table load AT.  *RELATED: %r is one of the
 * index's source registers (a sure bound); otherwise the nearest such pair
 * is only a likely one.  0 when there is none. */
static uint64_t table_bound(const struct ls_cfg *cfg, int64_t at, const int *regs, int nregs, bool *related)
{
	uint64_t nearest = 0;
	*related = false;
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
		    c->op[0].kind != LS_OP_IMM || c->op[1].kind != LS_OP_REG)
			continue;
		int64_t n = c->op[0].imm;
		if (n < 0 || n > 1 << 16)
			continue;
		bool inclusive = j->opcode == LS_MN_JA || j->opcode == LS_MN_JBE;
		uint64_t count = (uint64_t)n + (inclusive ? 1 : 0);
		for (int k = 0; k < nregs; k++)
			if (regs[k] == c->op[1].reg) {
				*related = true;
				return count;
			}
		if (!nearest)
			nearest = count;
	}
	return nearest;
}

static void add_jt_target(struct builder *b, uint32_t idx)
{
	b->jt = ls_grow(b->jt, &b->cap_jt, b->njt + 1, sizeof *b->jt);
	b->jt[b->njt++] = idx;
}

/* Resolve the indirect jump at instruction J; its targets go to b->jt. */
static void resolve_jump_table(struct builder *b, int64_t j)
{
	const struct ls_cfg *cfg = b->cfg;
	const struct ls_insn *jmp = &cfg->insns[j];
	const struct ls_operand *op = &jmp->op[0];
	uint64_t table = 0;
	int entry_size = 0; /* 8: absolute, 4: relative to the table */
	int64_t load = j;   /* the table load, for the bound */
	int table_reg = -1; /* the register holding the table's address (PIC) */

	if (jmp->nops != 1)
		return;
	if (op->kind == LS_OP_MEM && op->base < 0 && op->index >= 0 && op->scale == 8) {
		table = (uint64_t)op->disp;
		entry_size = 8;
	} else if (op->kind == LS_OP_REG) {
		int64_t d = find_def(cfg, j, op->reg, 32);
		if (d < 0)
			return;
		const struct ls_insn *def = &cfg->insns[d];
		if (def->opcode == LS_MN_MOV && def->op[0].kind == LS_OP_MEM && def->op[0].base < 0 &&
		    def->op[0].index >= 0 && def->op[0].scale == 8) {
			table = (uint64_t)def->op[0].disp;
			entry_size = 8;
			load = d;
		} else if ((def->opcode == LS_MN_ADD && def->nops == 2 && def->op[0].kind == LS_OP_REG) ||
		           (def->opcode == LS_MN_LEA && def->op[0].kind == LS_OP_MEM && def->op[0].base >= 0 &&
		            def->op[0].base != LS_REG_RIP && def->op[0].index >= 0 && def->op[0].scale == 1 &&
		            def->op[0].disp == 0)) {
			/* add %rA,%rX: one of the two holds the table's address
			 * (lea T(%rip)), the other the entry loaded from it
			 * (movslq (%rA,%rI,4), or at -O0 mov (...),%eax; cltq).
			 * The lea may be hoisted out of a loop: look far back. */
			int regs[2] = { def->op[0].reg, def->op[1].reg };
			if (def->opcode == LS_MN_LEA) { /* lea (%rA,%rX,1),%rY (glibc's string functions) */
				regs[0] = def->op[0].base;
				regs[1] = def->op[0].index;
			}
			int64_t defs[2];
			int lea_k = -1;
			for (int k = 0; k < 2; k++) {
				defs[k] = find_def(cfg, d, regs[k], 64);
				if (defs[k] < 0)
					defs[k] = find_def(cfg, d, regs[k], 0);
				const struct ls_insn *l = defs[k] >= 0 ? &cfg->insns[defs[k]] : NULL;
				if (l && l->opcode == LS_MN_LEA && l->op[0].kind == LS_OP_MEM &&
				    l->op[0].base == LS_REG_RIP && l->op[0].index < 0)
					lea_k = k;
			}
			if (lea_k < 0 || defs[1 - lea_k] < 0)
				return;
			int64_t ld = defs[1 - lea_k];
			if (cfg->insns[ld].opcode == LS_MN_CLTQ)
				ld = find_def(cfg, ld, 0, 8);
			if (ld < 0)
				return;
			const struct ls_insn *e = &cfg->insns[ld];
			if ((e->opcode != LS_MN_MOVSXD && e->opcode != LS_MN_MOV) || e->op[0].kind != LS_OP_MEM)
				return;
			table = (uint64_t)cfg->insns[defs[lea_k]].op[0].disp;
			table_reg = regs[lea_k];
			entry_size = 4;
			load = ld;
		} else {
			return;
		}
	} else {
		return;
	}

	/* A "table" in code is a computed goto's label (glibc's vfprintf),
	 * not a jump table. */
	if (ls_text_find(b->m, table))
		return;
	int regs[8];
	bool byte_index;
	int nregs = index_sources(cfg, load, table_reg, regs, &byte_index);
	bool sure;
	uint64_t bound = table_bound(cfg, load, regs, nregs, &sure);
	/* A table indexed by a zero-extended byte with no compare (an
	 * interpreter's computed-goto dispatch) has 256 entries; some may
	 * point outside the procedure (to a .cold part without a symbol):
	 * skip those rather than stop. */
	bool skip_outside = false;
	if (!bound && byte_index) {
		bound = 256;
		skip_outside = true;
	}
	uint64_t limit = bound ? bound : 4096;
	for (uint64_t k = 0; k < limit; k++) {
		uint64_t target;
		if (entry_size == 8) {
			uint64_t v;
			if (!read_bytes(b->cache, table + 8 * k, &v, 8))
				break;
			target = v;
		} else {
			int32_t v;
			if (!read_bytes(b->cache, table + 4 * k, &v, 4))
				break;
			target = table + (int64_t)v;
		}
		int64_t idx = in_ranges(b, target) ? insn_index(cfg, target) : -1;
		if ((idx < 0 || cfg->insns[idx].addr != target) && skip_outside && ls_text_find(b->m, target))
			continue;
		if (idx < 0 || cfg->insns[idx].addr != target) {
			if (sure && !b->warned_jt) {
				const struct ls_proc *other = ls_procs_find(&b->m->procs, target);
				if (other && other != b->proc) {
					b->warned_jt = true;
					ls_warn(&b->m->opt,
					        "%s: %s: jump table at 0x%llx (jump at 0x%llx): entry %llu points into %s (0x%llx)",
					        b->m->path, b->proc->name ? b->proc->name : "?",
					        (unsigned long long)table, (unsigned long long)jmp->addr,
					        (unsigned long long)k, other->name ? other->name : "another procedure",
					        (unsigned long long)target);
				}
			}
			break;
		}
		add_jt_target(b, (uint32_t)idx);
	}
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

static int build(struct builder *b)
{
	struct ls_cfg *cfg = b->cfg;
	const struct ls_proc *proc = b->proc;
	memset(cfg, 0, sizeof *cfg);

	b->nranges = proc->nranges;
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

	/* Leaders. */
	uint8_t *leader = ls_xcalloc(n + 1, 1);
	b->jt_start = ls_xmalloc(n * sizeof *b->jt_start);
	b->jt_count = ls_xcalloc(n, sizeof *b->jt_count);
	leader[0] = 1;
	int64_t entry_idx = insn_index(cfg, proc->entry);
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
		case LS_INSN_IJUMP: {
			size_t before = b->njt;
			if (b->cache)
				resolve_jump_table(b, (int64_t)i);
			b->jt_start[i] = (uint32_t)before;
			b->jt_count[i] = (uint32_t)(b->njt - before);
			for (size_t k = before; k < b->njt; k++)
				leader[b->jt[k]] = 1;
			leader[i + 1] = 1;
			break;
		}
		case LS_INSN_CALL:
		case LS_INSN_ICALL: {
			uint64_t lp = b->cache && b->cache->nsites ? landing_pad(b->cache, in->addr) : 0;
			int64_t t = lp && in_ranges(b, lp) ? insn_index(cfg, lp) : -1;
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

	/* Edges, in address-order block numbers for now. */
	struct edge_list el = { 0 };
	for (size_t bi = 0; bi < nblocks; bi++) {
		const struct ls_block *blk = &blocks[bi];
		size_t last = blk->first_insn + blk->ninsns - 1;
		const struct ls_insn *in = &cfg->insns[last];
		bool next_contiguous = last + 1 < n && cfg->insns[last + 1].addr == in->addr + in->len;
		uint32_t next = next_contiguous ? block_of_insn[last + 1] : 0;
		switch (in->kind) {
		case LS_INSN_OTHER:
			if (next_contiguous)
				add_edge(&el, bi, next, LS_EDGE_FALLTHROUGH);
			break;
		case LS_INSN_CALL:
		case LS_INSN_ICALL: {
			if (next_contiguous && (in->kind == LS_INSN_ICALL || call_returns(b, in->target)))
				add_edge(&el, bi, next, LS_EDGE_CALL_RETURN);
			/* What the callee throws lands here (even when it never
			 * returns normally). */
			uint64_t lp = b->cache && b->cache->nsites ? landing_pad(b->cache, in->addr) : 0;
			int64_t t = lp && in_ranges(b, lp) ? insn_index(cfg, lp) : -1;
			if (t >= 0)
				add_edge(&el, bi, block_of_insn[t], LS_EDGE_EXCEPTION);
			break;
		}
		case LS_INSN_JUMP:
			if (!is_tail_target(b, in->target)) {
				int64_t t = insn_index(cfg, in->target);
				if (t >= 0)
					add_edge(&el, bi, block_of_insn[t], LS_EDGE_JUMP);
			}
			break;
		case LS_INSN_CJUMP:
			if (!is_tail_target(b, in->target)) {
				int64_t t = insn_index(cfg, in->target);
				if (t >= 0)
					add_edge(&el, bi, block_of_insn[t], LS_EDGE_TAKEN);
			}
			if (next_contiguous)
				add_edge(&el, bi, next, LS_EDGE_NOT_TAKEN);
			break;
		case LS_INSN_IJUMP:
			for (uint32_t k = 0; k < b->jt_count[last]; k++)
				add_edge(&el, bi, block_of_insn[b->jt[b->jt_start[last] + k]], LS_EDGE_SWITCH);
			break;
		default: /* ret, halt */
			break;
		}
	}

	/* Number the blocks with the entry's first: those at and after it in
	 * address order, then those before it (code below the entry, e.g. a
	 * .cold part placed lower). */
	size_t eb = entry_idx >= 0 ? block_of_insn[entry_idx] : 0;
	uint32_t *renum = ls_xmalloc(nblocks * sizeof *renum);
	cfg->blocks = ls_xmalloc(nblocks * sizeof *cfg->blocks);
	for (size_t i = 0; i < nblocks; i++) {
		size_t to = i >= eb ? i - eb : i + (nblocks - eb);
		renum[i] = (uint32_t)to;
		cfg->blocks[to] = blocks[i];
	}
	cfg->nblocks = nblocks;
	cfg->edges = el.e ? el.e : ls_xmalloc(sizeof *cfg->edges);
	cfg->nedges = el.n;
	for (size_t e = 0; e < el.n; e++) {
		cfg->edges[e].from = renum[cfg->edges[e].from];
		cfg->edges[e].to = renum[cfg->edges[e].to];
	}

	/* succ and pred: edge indices grouped by block (counting sort). */
	cfg->succ = ls_xmalloc((el.n + 1) * sizeof *cfg->succ);
	cfg->pred = ls_xmalloc((el.n + 1) * sizeof *cfg->pred);
	for (size_t e = 0; e < el.n; e++) {
		cfg->blocks[cfg->edges[e].from].nsucc++;
		cfg->blocks[cfg->edges[e].to].npred++;
	}
	uint32_t s = 0, p = 0;
	for (size_t i = 0; i < nblocks; i++) {
		cfg->blocks[i].first_succ = s;
		cfg->blocks[i].first_pred = p;
		s += cfg->blocks[i].nsucc;
		p += cfg->blocks[i].npred;
		cfg->blocks[i].nsucc = cfg->blocks[i].npred = 0;
	}
	for (size_t e = 0; e < el.n; e++) {
		struct ls_block *f = &cfg->blocks[cfg->edges[e].from], *t = &cfg->blocks[cfg->edges[e].to];
		cfg->succ[f->first_succ + f->nsucc++] = (uint32_t)e;
		cfg->pred[t->first_pred + t->npred++] = (uint32_t)e;
	}

	/* Reachable from the entry (block 0). */
	uint32_t *work = ls_xmalloc(nblocks * sizeof *work);
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

	free(renum);
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
				if (!t || t == proc)
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
			if (t && t->noreturn) {
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
				job->c->decoded[i] = (struct decoded){ cfg.insns, cfg.ninsns, b.cap_insns, b.bad,
				                                       b.first_bad };
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

static const struct ls_cfg_module *ready_cache(const ls_module *m, bool want_facts)
{
	struct ls_cfg_module *c = module_cache(m);
	if (want_facts && atomic_load_explicit(&c->facts_ready, memory_order_acquire))
		return c;
	pthread_mutex_lock(&c->lock);
	load_sections(m, c);
	if (want_facts && !atomic_load_explicit(&c->facts_ready, memory_order_relaxed)) {
		compute_facts(m, c);
		atomic_store_explicit(&c->facts_ready, true, memory_order_release);
	}
	pthread_mutex_unlock(&c->lock);
	return c;
}

bool ls_cfg_call_noreturn(const ls_module *m, uint64_t target)
{
	const struct ls_proc *p = ls_procs_at_entry(&m->procs, target);
	if (!p)
		return false;
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
