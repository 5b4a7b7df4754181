/* cfg.c - the control-flow graph of one procedure.
 *
 * Every range of the procedure (a .cold part is another range) is decoded
 * linearly, so that every instruction is placed, padding and unreachable
 * code included; blocks split at branch targets and after branches and
 * calls.  Edges: fall-through, taken, not-taken, jump, jump-table cases,
 * call-return, exception (to a landing pad, eh_frame.c).  A jump out of
 * the procedure (or to another procedure's entry) is a tail call: no edge.
 * A call to a procedure that never returns ends its block without a
 * successor.
 *
 * The stage is four files around one per-module cache (cfg_private.h):
 *   cfg.c          decoding, blocks and edges, the per-module cache
 *   eh_frame.c     exception tables: .eh_frame FDEs -> LSDA call sites
 *   jump_tables.c  an indirect jump's targets, from its jump table
 *   noreturn.c     which procedures never return (a fixpoint over summaries)
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
 *   - hlt goes on to the next instruction (after the interrupt it waits for);
 *   - jump labels branch both ways and a WARN's ud2 goes on (kernel_edges.c).
 */
#include "cfg/cfg_private.h"
#include "support/sort.h"

#include <stdlib.h>
#include <string.h>

/* ---- the per-module cache --------------------------------------------------- */

static void load_thunks(const ls_module *m, struct ls_cfg_module *c);
static void kept_free(struct kept *k);
static void jt_result_free(struct jt_result *r);

struct ls_cfg_module *ls_cfg_module_cache(const ls_module *cm)
{
	ls_module *m = (ls_module *)cm; /* the cache is logically const */
	struct ls_cfg_module *c = __atomic_load_n(&m->cfg_module, __ATOMIC_ACQUIRE);
	if (c)
		return c;
	struct ls_cfg_module *fresh = ls_xcalloc(1, sizeof *fresh);
	pthread_mutex_init(&fresh->lock, NULL);
	atomic_init(&fresh->facts_ready, false);
	atomic_init(&fresh->sections_done, false);
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
	free(c->ksites);
	free(c->thunks);
	free(c->relocs);
	free(c->data_bounds);
	free(c->entries);
	free(c->fact);
	free(c->dgen);
	free(c->dslot);
	if (c->dec)
		ls_decoder_free(c->dec);
	if (c->decoded)
		for (size_t i = 0; i < m->procs.nprocs; i++)
			free(c->decoded[i].insns);
	for (size_t i = 0; i < LS_CFG_KEPT; i++)
		kept_free(&c->kept[i]);
	for (size_t i = 0; i < LS_CFG_JT_KEPT; i++) {
		free(c->jt_kept[i].ranges);
		jt_result_free(&c->jt_kept[i].jt);
	}
	free(c->decoded);
	free(c);
	m->cfg_module = NULL;
}

void ls_cfg_make_entries(const ls_module *m, struct ls_cfg_module *c)
{
	size_t np = m->procs.nprocs;
	if (c->entries || !np)
		return;
	unsigned bits = 4;
	while (((size_t)1 << bits) < 2 * np)
		bits++;
	size_t nslots = (size_t)1 << bits;
	struct entry_table *t = ls_xcalloc(1, sizeof *t + nslots * sizeof *t->proc1);
	t->shift = 64 - bits;
	const struct ls_proc *P = m->procs.procs;
	for (size_t i = 0; i < np; i++) {
		uint64_t e = P[i].entry;
		size_t k = (size_t)((e * 0x9e3779b97f4a7c15ull) >> t->shift);
		while (t->proc1[k] && P[t->proc1[k] - 1].entry != e)
			k = (k + 1) & (nslots - 1);
		if (!t->proc1[k]) /* the first of several with one entry, as the search gives */
			t->proc1[k] = (uint32_t)(i + 1);
	}
	__atomic_store_n(&c->entries, t, __ATOMIC_RELEASE);
}

const struct ls_proc *ls_cfg_at_entry(const ls_module *m, uint64_t addr)
{
	const struct ls_cfg_module *c = __atomic_load_n(&m->cfg_module, __ATOMIC_ACQUIRE);
	const struct entry_table *t = c ? __atomic_load_n(&c->entries, __ATOMIC_ACQUIRE) : NULL;
	if (!t)
		return ls_procs_at_entry(&m->procs, addr);
	size_t mask = ((size_t)1 << (64 - t->shift)) - 1;
	for (size_t k = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> t->shift);; k = (k + 1) & mask) {
		if (!t->proc1[k])
			return NULL;
		const struct ls_proc *p = &m->procs.procs[t->proc1[k] - 1];
		if (p->entry == addr)
			return p;
	}
}

/* The first procedure of P with an entry at or above ADDR, from NEAR (one
 * of P's procedures, or NULL) when that is a few steps away: the same
 * index as the binary search over the whole table gives, which costs a
 * cache miss a step. */
static size_t first_entry_at_least(const struct ls_procs *P, uint64_t addr, const struct ls_proc *near)
{
	uintptr_t at = (uintptr_t)near, base = (uintptr_t)P->procs; /* NEAR may be no element of P */
	if (near && P->nprocs && at >= base && at < base + P->nprocs * sizeof *P->procs) {
		size_t i = (at - base) / sizeof *P->procs;
		for (int steps = 0; steps < 8; steps++) {
			if (i < P->nprocs && P->procs[i].entry < addr)
				i++;
			else if (i > 0 && P->procs[i - 1].entry >= addr)
				i--;
			else
				return i;
		}
	}
	return LS_FIRST_AT_LEAST(P->procs, P->nprocs, entry, addr);
}

size_t ls_cfg_entries_within(const ls_module *m, const ls_range *ranges, size_t n, const struct ls_proc *near,
                             uint64_t **out)
{
	const struct ls_procs *P = &m->procs;
	size_t k = 0, cap = 0;
	*out = NULL;
	for (size_t r = 0; r < n; r++)
		for (size_t i = first_entry_at_least(P, ranges[r].lo, near);
		     i < P->nprocs && P->procs[i].entry < ranges[r].hi; i++) {
			*out = ls_grow(*out, &cap, k + 1, sizeof **out);
			(*out)[k++] = P->procs[i].entry;
		}
	return ls_sort_unique_u64(*out, k); /* ranges may overlap (before procs.c clamps them) */
}

/* Allocated sections with bytes, for reading jump tables and exception
 * tables.  Caller holds the lock.  Relocatable objects are skipped: their
 * tables are unrelocated. */
void ls_cfg_load_sections(const ls_module *m, struct ls_cfg_module *c)
{
	if (c->sections_ready)
		return;
	c->sections_ready = true;
	load_thunks(m, c);
	ls_kernel_sites_load(m, c);
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
		ls_eh_parse_frame(c, &c->secs[eh]);
	ls_jt_load_limits(m, c);
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
	/* what every name above starts with: "__x", "__l", 's', 'r', 'z' (a
	 * C++ library has 10^5 symbols, nearly all "_Z...") */
	if (name[0] == '_' ? name[1] != '_' || (name[2] != 'x' && name[2] != 'l')
	                   : name[0] != 's' && name[0] != 'r' && name[0] != 'z')
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

static int cmp_range(const void *a, const void *b)
{
	const ls_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

uint64_t ls_cfg_sweep(const ls_module *m, const struct ls_cfg_module *c, struct ls_decoder *dec, struct decoded *d,
                      uint64_t addr, uint64_t hi, size_t limit, unsigned how)
{
	const struct ls_text *t = NULL; /* the section of the last instruction: ADDR only grows */
	while (addr < hi && d->n < limit) {
		if (!t || addr - t->addr >= t->size)
			t = ls_text_find(m, addr);
		if (!t) {
			/* No bytes here (e.g. a range outside any code
			 * section): skip to the next section inside the range. */
			if (how & SWEEP_FRAGMENT)
				break;
			const struct ls_text *next = ls_text_from(m, addr);
			addr = next && next->addr < hi ? next->addr : hi;
			continue;
		}
		uint64_t end = t->addr + t->size < hi ? t->addr + t->size : hi;
		if (d->n + 1 > d->cap || !d->insns) /* (ls_grow's own test, without a call per instruction) */
			d->insns = ls_grow(d->insns, &d->cap, d->n + 1, sizeof *d->insns);
		struct ls_insn *in = &d->insns[d->n];
		const uint8_t *bytes = t->data + (addr - t->addr);
		size_t n = how & SWEEP_FLOW ? ls_decode_flow(dec, bytes, end - addr, addr, in)
		                            : ls_decode(dec, bytes, end - addr, addr, in);
		if (n == 0) {
			if (!d->bad++)
				d->first_bad = addr;
			if (how & SWEEP_FRAGMENT)
				break;
			addr++;
			continue;
		}
		apply_thunk(c, in);
		ls_kernel_site_apply(c, in);
		/* In the kernel, hlt waits for an interrupt and goes on (idle
		 * loops); in user space it faults. */
		if (in->opcode == LS_MN_HLT && m->kernel)
			in->kind = LS_INSN_OTHER;
		d->n++;
		addr += n;
		if ((how & SWEEP_FRAGMENT) && in->kind != LS_INSN_OTHER && in->kind != LS_INSN_CJUMP &&
		    in->kind != LS_INSN_CALL && in->kind != LS_INSN_ICALL)
			break;
		if ((how & SWEEP_AFTER_RET) && in->kind == LS_INSN_RET)
			break;
	}
	return addr;
}

/* Decodes [ADDR, HI) onto the end of cfg->insns (ls_cfg_sweep); with
 * FRAGMENT, only up to the first instruction that does not fall through.
 * Returns where it stopped. */
static uint64_t decode_span(struct builder *b, uint64_t addr, uint64_t hi, bool fragment)
{
	struct ls_cfg *cfg = b->cfg;
	struct decoded d = { cfg->insns, cfg->ninsns, b->cap_insns, false, b->bad, b->first_bad };
	addr = ls_cfg_sweep(b->m, b->cache, b->dec, &d, addr, hi, SIZE_MAX, fragment ? SWEEP_FRAGMENT : 0);
	cfg->insns = d.insns;
	cfg->ninsns = d.n;
	b->cap_insns = d.cap;
	b->bad = d.bad;
	b->first_bad = d.first_bad;
	return addr;
}

bool ls_cfg_fragment_section(const char *name)
{
	return strcmp(name, ".altinstr_aux") == 0 || strcmp(name, ".altinstr_replacement") == 0 ||
	       strncmp(name, ".text.unlikely", 14) == 0;
}

/* Code that belongs to whichever procedure jumps into it: the alternatives'
 * out-of-line parts, and .text.unlikely code with no symbol of its own. */
static bool fragment_target(const struct builder *b, uint64_t target)
{
	const struct ls_text *t = ls_text_find(b->m, target);
	if (!t || ls_procs_find(&b->m->procs, target))
		return false;
	return ls_cfg_fragment_section(t->name);
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

uint64_t ls_cfg_insns_room(uint64_t bytes)
{
	uint64_t n = bytes / 3 + 16;
	return n < LS_INSNS_ROOM_MAX ? n : LS_INSNS_ROOM_MAX;
}

/* Decodes B's ranges (BYTES of code) into b->cfg, or takes the
 * instructions decoded before. */
static void decode_ranges(struct builder *b, uint64_t bytes)
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
		cfg->insns = ls_grow(cfg->insns, &b->cap_insns, ls_cfg_insns_room(bytes), sizeof *cfg->insns);
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
		        ls_proc_name(b->m, b->proc) ? b->proc->name : "?", b->bad, (unsigned long long)b->first_bad);
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

bool ls_cfg_call_returns(const struct builder *b, uint64_t target)
{
	if (b->all_calls_return)
		return true;
	if (!ls_cfg_call_noreturn(b->m, target))
		return true;
	/* counted: a CFG without a cut call is the one ls_cfg_build_alone makes */
	((struct builder *)b)->calls_cut++;
	return false;
}

/* The landing pad (instruction index) a call at ADDR unwinds to within this
 * procedure, or -1. */
static int64_t landing_pad_insn(const struct builder *b, uint64_t addr)
{
	uint64_t lp = b->cache && b->cache->nsites ? ls_eh_landing_pad(b->cache, addr) : 0;
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
		b->edge_to[i] = -1;
		if (i + 1 < n && cfg->insns[i + 1].addr != in->addr + in->len)
			leader[i + 1] = 1; /* a gap: range boundary or undecodable bytes */
		switch (in->kind) {
		case LS_INSN_JUMP:
		case LS_INSN_CJUMP:
			if (!is_tail_target(b, in->target)) {
				int64_t t = insn_index(cfg, in->target);
				b->edge_to[i] = (int32_t)t;
				if (t >= 0)
					leader[t] = 1;
			}
			leader[i + 1] = 1;
			break;
		case LS_INSN_IJUMP:
			leader[i + 1] = 1; /* its targets: ls_jt_resolve, below */
			break;
		case LS_INSN_CALL:
		case LS_INSN_ICALL: {
			int64_t t = landing_pad_insn(b, in->addr);
			b->edge_to[i] = (int32_t)t;
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
		if (next_contiguous && (in->kind == LS_INSN_ICALL || ls_cfg_call_returns(b, in->target)))
			add_edge(el, bi, next, LS_EDGE_CALL_RETURN);
		/* What the callee throws lands here (even when it never
		 * returns normally). */
		int32_t t = b->edge_to[last];
		if (t >= 0)
			add_edge(el, bi, block_of_insn[t], LS_EDGE_EXCEPTION);
		break;
	}
	case LS_INSN_JUMP:
		if (b->edge_to[last] >= 0)
			add_edge(el, bi, block_of_insn[b->edge_to[last]], LS_EDGE_JUMP);
		break;
	case LS_INSN_CJUMP:
		if (b->edge_to[last] >= 0)
			add_edge(el, bi, block_of_insn[b->edge_to[last]], LS_EDGE_TAKEN);
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

/* What ls_jt_resolve would do, from b->given_jt (a build of the same
 * instructions whose walks met no noreturn fact). */
static void give_jt(struct builder *b, uint8_t *leader)
{
	const struct jt_result *g = b->given_jt;
	for (size_t i = 0; i < g->njumps; i++) {
		b->jt_start[g->at[i]] = g->start[i];
		b->jt_count[g->at[i]] = g->count[i];
	}
	b->jt = ls_xmalloc((g->njt + 1) * sizeof *b->jt);
	if (g->njt)
		memcpy(b->jt, g->jt, g->njt * sizeof *b->jt);
	b->njt = b->cap_jt = g->njt;
	for (size_t k = 0; k < g->njt; k++)
		leader[g->jt[k]] = 1;
	b->cfg->unresolved_jumps = g->unresolved;
	b->cfg->first_unresolved = g->first_unresolved;
}

/* Decode, leaders, jump tables, blocks, edges, numbering, reachability. */
int ls_cfg_run_builder(struct builder *b)
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
	if (b->m->kernel && ls_kernel_code32(b->m, ls_proc_name(b->m, proc)))
		return -1;
	if (bytes > LS_MAX_PROC_CODE) {
		if (!b->quiet)
			ls_warn(&b->m->opt, "%s: %s: %llu MiB of code, more than the %llu MiB a procedure may have: "
			        "not decoded (no loops for it)", b->m->path, proc->name ? proc->name : "?",
			        (unsigned long long)(bytes >> 20), (unsigned long long)(LS_MAX_PROC_CODE >> 20));
		return -1;
	}
	decode_ranges(b, bytes);
	size_t n = cfg->ninsns;
	if (n == 0)
		return -1;
	b->ninner = ls_cfg_entries_within(b->m, b->ranges, b->nranges, proc, &b->inner);

	uint8_t *leader = ls_xcalloc(n + 1, 1);
	b->jt_start = ls_xmalloc(n * sizeof *b->jt_start);
	b->jt_count = ls_xcalloc(n, sizeof *b->jt_count);
	b->edge_to = ls_xmalloc(n * sizeof *b->edge_to);
	int64_t entry_idx = insn_index(cfg, proc->entry);
	mark_leaders(b, leader, entry_idx);
	if (b->given_jt && b->given_jt->ninsns == n) {
		give_jt(b, leader);
	} else if (b->cache) {
		size_t cut = b->calls_cut;
		ls_jt_resolve(b, leader);
		b->jt_cut = b->calls_cut != cut;
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

void ls_cfg_builder_done(struct builder *b)
{
	free(b->ranges);
	free(b->inner);
	free(b->edge_to);
	free(b->jt_start);
	free(b->jt_count);
	free(b->jt);
}

/* ---- instructions kept for a second build of the same code ----------------- */

/* PROC's ranges, sorted: how a kept procedure is known again (a scope's
 * ranges may come in another order than the table's). */
static ls_range *sorted_ranges(const struct ls_proc *proc)
{
	ls_range *r = ls_xmalloc((proc->nranges + 1) * sizeof *r);
	if (proc->nranges)
		memcpy(r, proc->ranges, proc->nranges * sizeof *r);
	qsort(r, proc->nranges, sizeof *r, cmp_range);
	return r;
}

/* A copy of N elements of SIZE bytes at P. */
static void *dup_array(const void *p, size_t n, size_t size)
{
	void *q = ls_xmalloc(n * size + 1);
	if (n)
		memcpy(q, p, n * size);
	return q;
}

/* A copy of B's CFG, when it is the one ls_cfg_build_alone would make of
 * the same code: no call cut by a noreturn fact (the only input the two
 * builds do not share), and instructions decoded alike -- else a zeroed
 * CFG. */
static struct ls_cfg whole_copy(const struct builder *b)
{
	const struct ls_cfg *cfg = b->cfg;
	if (b->calls_cut)
		return (struct ls_cfg){ 0 };
	struct ls_cfg w = *cfg;
	w.insns = dup_array(cfg->insns, cfg->ninsns, sizeof *cfg->insns);
	w.blocks = dup_array(cfg->blocks, cfg->nblocks, sizeof *cfg->blocks);
	w.edges = dup_array(cfg->edges, cfg->nedges, sizeof *cfg->edges);
	w.succ = dup_array(cfg->succ, cfg->nedges, sizeof *cfg->succ);
	w.pred = dup_array(cfg->pred, cfg->nedges, sizeof *cfg->pred);
	return w;
}

static void jt_result_free(struct jt_result *r)
{
	free(r->at);
	free(r->start);
	free(r->count);
	free(r->jt);
	memset(r, 0, sizeof *r);
}

static void kept_free(struct kept *k)
{
	free(k->ranges);
	free(k->d.insns);
	ls_cfg_free(&k->whole);
}

/* B's jump tables, when it has some and ls_cfg_build_alone's walks would
 * find the same (none of B's met a noreturn fact); else none. */
static struct jt_result jt_copy(const struct builder *b)
{
	size_t n = b->cfg->ninsns, njumps = 0;
	if (b->jt_cut || !b->cache)
		return (struct jt_result){ 0 };
	for (size_t i = 0; i < n; i++)
		njumps += b->jt_start[i] != UINT32_MAX;
	if (!njumps)
		return (struct jt_result){ 0 };
	struct jt_result r = { ls_xmalloc(njumps * sizeof *r.at), ls_xmalloc(njumps * sizeof *r.start),
		               ls_xmalloc(njumps * sizeof *r.count), dup_array(b->jt, b->njt, sizeof *b->jt),
		               0, b->njt, n, b->cfg->unresolved_jumps, b->cfg->first_unresolved };
	for (size_t i = 0; i < n; i++)
		if (b->jt_start[i] != UINT32_MAX) {
			r.at[r.njumps] = (uint32_t)i;
			r.start[r.njumps] = b->jt_start[i];
			r.count[r.njumps++] = b->jt_count[i];
		}
	return r;
}

/* Into the oldest slot of the kept: PROC's instructions D, or its WHOLE
 * CFG, and its jump tables JT (with their own copy JT_RANGES of PROC's
 * sorted ranges). */
static void keep_slot(struct ls_cfg_module *c, const struct ls_proc *proc, struct decoded d, struct ls_cfg whole,
                      struct jt_result jt, ls_range *jt_ranges)
{
	ls_range *ranges = sorted_ranges(proc);
	pthread_mutex_lock(&c->lock);
	struct kept *k = &c->kept[c->kept_next];
	c->kept_next = (c->kept_next + 1) % LS_CFG_KEPT;
	kept_free(k);
	*k = (struct kept){ proc->entry, ranges, proc->nranges, d, whole };
	if (jt.at) {
		struct jt_kept *j = &c->jt_kept[c->jt_kept_next];
		c->jt_kept_next = (c->jt_kept_next + 1) % LS_CFG_JT_KEPT;
		free(j->ranges);
		jt_result_free(&j->jt);
		*j = (struct jt_kept){ proc->entry, jt_ranges, proc->nranges, jt };
	}
	pthread_mutex_unlock(&c->lock);
}

void ls_cfg_keep(const ls_module *m, const struct ls_proc *proc, struct ls_cfg *cfg)
{
	if (!cfg->keep.pending) {
		ls_cfg_free(cfg);
		return;
	}
	/* the module's CFG state exists: ls_cfg_build made it */
	struct ls_cfg_module *c = (struct ls_cfg_module *)ls_cfg_ready(m, true);
	struct ls_cfg whole = *cfg;
	whole.keep = (struct ls_cfg_keep){ 0 };
	struct decoded d = { NULL, cfg->ninsns, cfg->ninsns, cfg->keep.fragments, cfg->keep.bad, cfg->keep.first_bad };
	keep_slot(c, proc, d, whole, (struct jt_result){ 0 }, NULL);
	memset(cfg, 0, sizeof *cfg);
}

/* A copy of what B built for its procedure (the whole CFG when
 * ls_cfg_build_alone would build the same, else its instructions and
 * maybe its jump tables), replacing the oldest kept.  The whole CFG of a
 * caller that hands it back is kept then, without a copy. */
static void keep_insns(struct ls_cfg_module *c, const struct builder *b, bool hand_back)
{
	const struct ls_cfg *cfg = b->cfg;
	if (!cfg->ninsns || cfg->ninsns > LS_CFG_KEPT_MAX)
		return;
	if (hand_back && !b->calls_cut) {
		b->cfg->keep = (struct ls_cfg_keep){ true, b->fragments, b->bad, b->first_bad };
		return;
	}
	struct ls_cfg whole = whole_copy(b);
	struct ls_insn *insns = whole.insns ? NULL : dup_array(cfg->insns, cfg->ninsns, sizeof *insns);
	struct jt_result jt = { 0 };
	if (!whole.insns)
		jt = jt_copy(b);
	ls_range *jt_ranges = jt.at ? sorted_ranges(b->proc) : NULL;
	keep_slot(c, b->proc, (struct decoded){ insns, cfg->ninsns, cfg->ninsns, b->fragments, b->bad, b->first_bad },
	          whole, jt, jt_ranges);
}

/* Whether code kept for ENTRY and RANGES (N, sorted) is PROC's; *SORTED:
 * PROC's ranges sorted, made on first use. */
static bool same_code(uint64_t entry, const ls_range *ranges, size_t n, const struct ls_proc *proc,
                      ls_range **sorted)
{
	if (entry != proc->entry || n != proc->nranges)
		return false;
	if (!*sorted)
		*sorted = sorted_ranges(proc);
	return memcmp(*sorted, ranges, n * sizeof *ranges) == 0;
}

/* What is kept of PROC's code, taken: its whole CFG (*WHOLE) or its
 * instructions (*OUT), and its jump tables (*JT); false if no
 * instructions are kept. */
static bool take_kept(struct ls_cfg_module *c, const struct ls_proc *proc, struct decoded *out,
                      struct ls_cfg *whole, struct jt_result *jt)
{
	ls_range *sorted = NULL;
	bool found = false;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < LS_CFG_KEPT && !found; i++) {
		struct kept *k = &c->kept[i];
		if ((!k->d.insns && !k->whole.insns) || !same_code(k->entry, k->ranges, k->nranges, proc, &sorted))
			continue;
		*out = k->d;
		*whole = k->whole;
		k->d.insns = NULL;
		memset(&k->whole, 0, sizeof k->whole);
		found = true;
	}
	for (size_t i = 0; i < LS_CFG_JT_KEPT && !whole->insns; i++) {
		struct jt_kept *j = &c->jt_kept[i];
		if (!j->jt.at || !same_code(j->entry, j->ranges, j->nranges, proc, &sorted))
			continue;
		*jt = j->jt;
		memset(&j->jt, 0, sizeof j->jt);
		break;
	}
	pthread_mutex_unlock(&c->lock);
	free(sorted);
	return found;
}

/* ---- interface ------------------------------------------------------------------ */

int ls_cfg_build(const struct ls_cfg_env *env, const struct ls_proc *proc, struct ls_cfg *cfg)
{
	const ls_module *m = env->m;
	memset(cfg, 0, sizeof *cfg);
	if (!env->dec || !proc)
		return -1;
	const struct ls_cfg_module *c = ls_cfg_ready(m, true);
	/* The slot is this proc's alone: only this thread builds its CFG. */
	int32_t pi = ls_cfg_proc_index(m, proc);
	struct decoded *reuse = c->decoded && pi >= 0 && (size_t)pi < m->procs.nprocs
	                        ? &((struct ls_cfg_module *)c)->decoded[pi] : NULL;
	struct builder b = { .m = m, .dec = env->dec, .proc = proc, .cache = c, .cfg = cfg, .reuse = reuse };
	int rc = ls_cfg_run_builder(&b);
	if (rc == 0 && m->opt.on_demand)
		keep_insns((struct ls_cfg_module *)c, &b, env->hand_back);
	ls_cfg_builder_done(&b);
	if (rc < 0) {
		ls_cfg_free(cfg);
		return -1;
	}
	return 0;
}

int ls_cfg_build_alone(const struct ls_cfg_env *env, const struct ls_proc *proc, struct ls_cfg *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	if (!env->dec || !proc)
		return -1;
	/* The sections (jump tables, landing pads, thunks), not the facts:
	 * those cost a summary of every procedure of the module. */
	const struct ls_cfg_module *c = ls_cfg_ready(env->m, false);
	struct decoded kept = { 0 };
	struct ls_cfg whole = { 0 };
	struct jt_result jt = { 0 };
	bool have = take_kept((struct ls_cfg_module *)c, proc, &kept, &whole, &jt);
	if (whole.insns) {
		/* (the one test of the builder's that reads PROC's name, not its code) */
		if (env->m->kernel && ls_kernel_code32(env->m, ls_proc_name(env->m, proc))) {
			ls_cfg_free(&whole);
			return -1;
		}
		*cfg = whole;
		return 0;
	}
	struct builder b = { .m = env->m, .dec = env->dec, .proc = proc, .cache = c, .cfg = cfg,
	                     .all_calls_return = true, .quiet = true, .warned_jt = true, .reuse = have ? &kept : NULL,
	                     .given_jt = jt.at ? &jt : NULL };
	int rc = ls_cfg_run_builder(&b);
	free(kept.insns); /* NULL once the builder took it */
	jt_result_free(&jt);
	ls_cfg_builder_done(&b);
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
