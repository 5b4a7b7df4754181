/* jump_tables.c - the targets of an indirect jump, from its jump table
 * (for the CFG stage, cfg.c).
 *
 * Jump tables (gcc's and clang's x86-64 shapes, PIE or not: absolute
 * 8-byte entries, 4-byte entries relative to the table or to a label,
 * computed-goto tables) are found by following the jump's register back to
 * its definitions along the flow, and bounded by their guarding compare or
 * by the data around them: see below.
 */
#include "cfg/cfg_private.h"
#include "elf/symbols.h"
#include "support/sort.h"

#include <stdlib.h>
#include <string.h>

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

/* Sorts the N relocations R by offset, stably (as ls_sort_runs would).  A
 * linker writes the RELATIVE ones first, sorted, then the others (a C++
 * library: 3x10^5 and 2x10^4) in an order of their own: ls_sort_runs'
 * merge passes over the whole array, through a comparison function, were
 * 1.6% of the first report of a system-wide recording.  Here the sorted
 * prefix stays in place, the rest is sorted apart and merged in once, from
 * the back (an element of the rest after an equal one of the prefix). */
static void sort_relocs(struct dyn_reloc *r, size_t n)
{
	size_t p = 1;
	while (p < n && r[p - 1].offset <= r[p].offset)
		p++;
	if (p >= n)
		return;
	size_t nt = n - p;
	struct dyn_reloc *t = ls_xmalloc(nt * sizeof *t);
	memcpy(t, r + p, nt * sizeof *t);
	ls_sort_runs(t, nt, sizeof *t, cmp_reloc);
	size_t i = p, j = nt, k = n;
	while (j > 0) {
		if (i > 0 && r[i - 1].offset > t[j - 1].offset)
			r[--k] = r[--i];
		else
			r[--k] = t[--j];
	}
	free(t);
}

static void add_reloc(struct ls_cfg_module *c, uint64_t offset, uint64_t addend, uint32_t type)
{
	c->relocs[c->nrelocs++] = (struct dyn_reloc){ offset, addend, type };
	if (type == R_X86_64_RELATIVE)
		c->relative_relocs = true;
}

/* The first N relocations of the ELFCLASS64 SHT_RELA data D (those there
 * are: a section's size may lie), read in place: ls_rel_at's copy and a
 * growth check per relocation were a third of this stage (6.5x10^5
 * relocations in the first report of a system-wide recording). */
static void add_relocs64(struct ls_cfg_module *c, Elf_Data *d, size_t n, size_t *cap)
{
	size_t there = d && d->d_buf ? d->d_size / sizeof(Elf64_Rela) : 0;
	n = n < there ? n : there;
	if (!n)
		return;
	c->relocs = ls_grow(c->relocs, cap, c->nrelocs + n, sizeof *c->relocs);
	const char *p = d->d_buf;
	for (size_t i = 0; i < n; i++) {
		Elf64_Rela r;
		memcpy(&r, p + i * sizeof r, sizeof r);
		add_reloc(c, r.r_offset, (uint64_t)r.r_addend, (uint32_t)ELF64_R_TYPE(r.r_info));
	}
}

static void add_relocs32(struct ls_cfg_module *c, Elf_Data *d, size_t n, size_t *cap)
{
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;
		if (!ls_rel_at(d, SHT_RELA, false, i, &r))
			break;
		c->relocs = ls_grow(c->relocs, cap, c->nrelocs + 1, sizeof *c->relocs);
		add_reloc(c, r.r_offset, (uint64_t)r.r_addend, (uint32_t)GELF_R_TYPE(r.r_info));
	}
}

/* What bounds a jump table that has no compare before it: the dynamic
 * relocations (entries of a PIE's absolute table each carry one; a
 * relative table's entries carry none), and the data symbols around it
 * (the next object starts where the table ends).  Caller holds the lock. */
void ls_jt_load_limits(const ls_module *m, struct ls_cfg_module *c)
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
		if (gelf_getclass(m->elf) == ELFCLASS64)
			add_relocs64(c, d, n, &cap);
		else
			add_relocs32(c, d, n, &cap);
	}
	if (relr)
		c->relative_relocs = false; /* entries may be RELR-relocated: no boundary there */
	if (c->nrelocs)
		sort_relocs(c->relocs, c->nrelocs);

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
	c->ndata_bounds = ls_sort_unique_u64(c->data_bounds, c->ndata_bounds);
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

/* The section read_bytes reads every address inside it from: the first
 * holding ADDR, when no section before it overlaps it; else NULL.  A
 * table's entries are read through it, not through a scan of the
 * sections per entry (a quarter of a million entries read in the first
 * report of a system-wide recording, every round of ls_jt_resolve). */
static const struct data_sec *sole_sec(const struct ls_cfg_module *c, uint64_t addr)
{
	for (size_t i = 0; i < c->nsecs; i++) {
		const struct data_sec *s = &c->secs[i];
		if (addr < s->addr || addr - s->addr >= s->size)
			continue;
		for (size_t j = 0; j < i; j++) {
			const struct data_sec *t = &c->secs[j];
			if (t->addr >= s->addr ? t->addr - s->addr < s->size : s->addr - t->addr < t->size)
				return NULL;
		}
		return s;
	}
	return NULL;
}

/* read_bytes, through S (from sole_sec) when it holds the bytes. */
static bool read_bytes_in(const struct ls_cfg_module *c, const struct data_sec *s, uint64_t addr, void *out,
                          size_t n)
{
	if (s && addr >= s->addr && addr - s->addr < s->size && s->size - (addr - s->addr) >= n) {
		memcpy(out, s->data + (addr - s->addr), n);
		return true;
	}
	return read_bytes(c, addr, out, n);
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
 *   a copy          mov %rA,%rB; a spill and its reload through an SP- or
 *                   BP-relative stack slot (stack_slots.c): the value of what
 *                   it copies, followed once per definition, cycles included
 *   a pointer       a load without an index, a call's result, an argument:
 *                   not a table (a tail call through a pointer, longjmp)
 * Any number of definitions may reach a jump (gcc duplicates a computed
 * goto's jump into its predecessors, reloads a table's base after every
 * call): its targets are the union of their tables, a set of candidate
 * values.  An indexed jump with no table found, made with the frame torn
 * down (SP back at its entry height), is a tail call through a pointer.
 *
 * A table is read up to the guarding compare (`cmp $N,%rI; ja`, on the
 * index's value, or on the memory the index is loaded from) when there is
 * one (an entry that is the compare's default, in another procedure's cold
 * code, is skipped); otherwise up to what its index can
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

/* The backward walk's graph, per procedure with an indirect jump: who may
 * run just before each instruction (struct flow, cfg_private.h, shared
 * with stack_slots.c). */

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
/* A set of candidate values, not a count of definitions: any number of
 * definitions may reach a jump (SQLite's printf core loads its table's
 * address again after each of 27 calls), and they give few distinct
 * values.  Past JT_MAX_VALS distinct ones, the set is "unknown". */
#define JT_MAX_VALS 16
struct jt_vals {
	struct jt_val v[JT_MAX_VALS];
	int n;
};
#define JT_DEPTH 10                /* definitions followed through copies, sums and spills */
/* Instructions the walks of one procedure may visit in all, in every
 * round: linear in its size, so that a procedure with thousands of
 * indirect jumps costs no more than some passes over it (past that, its
 * jumps are left unresolved, and said so).  Lua 5.4's luaV_execute at
 * clang -O3 (7k instructions, 79 copies of the dispatch) takes 1.8M; no
 * procedure of libc takes 1M. */
#define JT_WALK_BUDGET(ninsns) (512 * (size_t)(ninsns) + 16000000)
/* ... and the walks of one jump's question, in one round. */
#define JT_QUERY_BUDGET(ninsns) (64 * (size_t)(ninsns) + 1000000)

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

/* The value a definition leaves in a register, once found whole, for the
 * rest of the round: a definition is reached from many jumps and through
 * many copies (sre's matcher: tens of copies of its dispatch whose bases
 * are copies of copies), and each way would walk the procedure again. */
struct jt_memo {
	size_t cap, n;             /* slots (a power of two), used */
	uint64_t *keys;            /* insn * 16 + reg + 1; 0: empty */
	struct jt_vals *vals;
};

static const struct jt_vals *memo_get(const struct jt_memo *m, int64_t d, int reg)
{
	if (!m || !m->n)
		return NULL;
	uint64_t key = (uint64_t)d * 16 + (uint64_t)reg + 1;
	for (size_t i = (size_t)(key * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return &m->vals[i];
		if (!m->keys[i])
			return NULL;
	}
}

static struct jt_memo *memo_put(struct jt_memo *m, int64_t d, int reg, const struct jt_vals *v)
{
	if (!m)
		m = ls_xcalloc(1, sizeof *m);
	if ((m->n + 1) * 2 > m->cap) {
		struct jt_memo old = *m;
		m->cap = old.cap ? old.cap * 2 : 256;
		m->n = 0;
		m->keys = ls_xcalloc(m->cap, sizeof *m->keys);
		m->vals = ls_xmalloc(m->cap * sizeof *m->vals);
		for (size_t i = 0; i < old.cap; i++)
			if (old.keys[i])
				memo_put(m, (int64_t)((old.keys[i] - 1) / 16), (int)((old.keys[i] - 1) % 16), &old.vals[i]);
		free(old.keys);
		free(old.vals);
	}
	uint64_t key = (uint64_t)d * 16 + (uint64_t)reg + 1;
	size_t i = (size_t)(key * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (!m->keys[i])
		m->n++;
	m->keys[i] = key;
	m->vals[i] = *v;
	return m;
}

static void memo_free(struct jt_memo *m)
{
	if (m) {
		free(m->keys);
		free(m->vals);
		free(m);
	}
}

bool ls_cfg_call_returns(const struct builder *b, uint64_t target);

/* Whether instruction K runs straight into K + 1 (a call: unless it never
 * returns; in the summary build, before that is proved, unless it is
 * known never to return). */
static bool falls_into_now(const struct builder *b, int64_t k)
{
	const struct ls_cfg *cfg = b->cfg;
	const struct ls_insn *in = &cfg->insns[k];
	if ((size_t)k + 1 >= cfg->ninsns || in->addr + in->len != cfg->insns[k + 1].addr)
		return false;
	if (in->kind == LS_INSN_CALL) {
		const struct ls_proc *p = ls_cfg_at_entry(b->m, in->target);
		return !(p && p->noreturn) && ls_cfg_call_returns(b, in->target);
	}
	return in->kind == LS_INSN_OTHER || in->kind == LS_INSN_CJUMP || in->kind == LS_INSN_ICALL;
}

/* ... asked once per instruction while the walks run (they and the
 * heights ask again for every visit, in every round): the answer depends
 * only on the instruction and on facts that, once known, stay.  A cut
 * call still counts in b->calls_cut, once rather than per visit (only
 * whether the count moved is read). */
bool ls_jt_falls_into(const struct builder *b, int64_t k)
{
	uint8_t *known = b->flow ? &b->flow->falls[k] : NULL;
	if (known && *known)
		return *known == 2;
	bool r = falls_into_now(b, k);
	if (known)
		*known = r ? 2 : 1;
	return r;
}

static int writes_reg(const struct builder *b, int64_t p, const void *ctx)
{
	uint16_t bit = *(const uint16_t *)ctx;
	return b->cfg->insns[p].writes & bit ? WALK_DEF : WALK_THROUGH;
}

/* The instructions that WHAT says define the value sought and whose
 * definition may reach instruction AT (before it runs), pushed on
 * f->defs from *N0 on; how many.  *AT_ENTRY: a path from the procedure's
 * entry defines nothing (an argument); *LIMIT: the walks' budget ran out.
 * A flow-sensitive walk over predecessors, not addresses: a table's base
 * may be loaded in the preheader, far from the jump. */
static size_t walk_back(struct builder *b, int64_t at, walk_fn what, const void *ctx, size_t *n0, bool *at_entry,
                        bool *limit)
{
	struct flow *f = b->flow;
	const struct ls_cfg *cfg = b->cfg;
	*at_entry = *limit = false;
	*n0 = f->ndefs;
	if (++f->gen == 0) {
		memset(f->stamp, 0, cfg->ninsns * sizeof *f->stamp);
		memset(f->run_stamp, 0, cfg->ninsns * sizeof *f->run_stamp);
		f->gen = 1;
	}
	size_t sp = 0;
	f->stack[sp++] = at;
	while (sp) {
		int64_t x = f->stack[--sp];
		if (x == f->entry)
			*at_entry = true;
		uint32_t lo = f->in_start[x], hi = f->in_start[x + 1];
		uint8_t known = x > 0 ? f->falls[x - 1] : 0; /* (ls_jt_falls_into's memo, read here) */
		bool through = x > 0 && (known ? known == 2 : ls_jt_falls_into(b, x - 1));
		if (!through && lo == hi && x != f->entry)
			f->hit_unknown = true;
		uint32_t ts = f->tab_start[x], run = f->run_of[x];
		for (uint32_t k = lo; k < hi + through; k++) {
			if (k == ts && run != UINT32_MAX) {
				if (f->run_stamp[run] == f->gen) { /* all visited: on to X - 1 */
					k = hi - 1;
					continue;
				}
				f->run_stamp[run] = f->gen; /* (visited whole before another X is) */
			}
			int64_t p = k < hi ? (int64_t)f->in_src[k] : x - 1;
			if (f->stamp[p] == f->gen)
				continue;
			f->stamp[p] = f->gen;
			if (f->budget == 0 || f->query_budget == 0) {
				*limit = true;
				f->query_exhausted = true;
				f->incomplete++;
				return f->ndefs - *n0;
			}
			f->budget--;
			f->query_budget--;
			if (what(b, p, ctx) == WALK_DEF) {
				f->defs = ls_grow(f->defs, &f->cap_defs, f->ndefs + 1, sizeof *f->defs);
				f->defs[f->ndefs++] = p;
			} else {
				f->stack[sp++] = p; /* each instruction is pushed once: n slots suffice */
			}
		}
	}
	return f->ndefs - *n0;
}

static void value_of_reg(struct builder *b, int64_t at, int reg, int depth, struct jt_vals *out);
static void value_of_slot(struct builder *b, int64_t at, const struct ls_operand *mem, int depth,
                          struct jt_vals *out);

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
	if (mem->index < 0 && (mem->base == LS_REG_SP || mem->base == LS_REG_BP) && size == 8) {
		value_of_slot(b, at, mem, depth, out);
		return;
	}
	if (mem->index < 0) {
		add_kind(out, VAL_POINTER, false); /* a pointer in a struct, a global */
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

static void value_of_def_once(struct builder *b, int64_t d, int reg, int depth, struct jt_vals *out);

/* What instruction D leaves in REG (D writes it).  A definition met again
 * while its own value is being found adds nothing: a cycle of copies
 * around a loop (clang parks a table's register in another one and
 * restores it: `mov %rbp,%r14 ... mov %r14,%rbp`) holds only what enters
 * the cycle from outside. */
static void value_of_def(struct builder *b, int64_t d, int reg, int depth, struct jt_vals *out)
{
	struct flow *f = b->flow;
	uint8_t *active = &f->active[d];
	if (*active) {
		f->incomplete++;
		return;
	}
	const struct jt_vals *known = memo_get(f->memo, d, reg);
	struct jt_vals v = { .n = 0 };
	if (known) {
		v = *known;
	} else {
		unsigned before = f->incomplete;
		*active = 1;
		value_of_def_once(b, d, reg, depth, &v);
		*active = 0;
		/* Whole answers only: one cut short by a cycle or a limit
		 * depends on where the question came from. */
		if (f->incomplete == before)
			f->memo = memo_put(f->memo, d, reg, &v);
	}
	for (int i = 0; i < v.n; i++)
		add_val(out, v.v[i]);
}

static void value_of_def_once(struct builder *b, int64_t d, int reg, int depth, struct jt_vals *out)
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

/* What REG may hold when instruction AT runs: the union of what its
 * reaching definitions leave in it. */
/* One question of a closure over copies: what REG holds at AT, or what
 * the stack slot OFF holds at AT. */
struct copy_question {
	int64_t at;
	int32_t off;
	int8_t reg;                /* -1: the slot */
};

/* Whether definition D of REG only copies a value: a register move (or a
 * sign extension of a 4-byte entry, movslq %eax,%rax), *SRC its source;
 * or a reload from a stack slot, *SLOT_AT its operand. */
enum { DEF_VALUE, DEF_COPY, DEF_RELOAD };
static int def_kind(const struct builder *b, int64_t d, int reg, int *src, const struct ls_operand **mem)
{
	const struct ls_insn *in = &b->cfg->insns[d];
	const struct ls_operand *s = &in->op[0], *dst = &in->op[1];
	if (in->nops != 2 || dst->kind != LS_OP_REG || dst->reg != reg ||
	    (in->opcode != LS_MN_MOV && in->opcode != LS_MN_MOVSXD))
		return DEF_VALUE;
	if (s->kind == LS_OP_REG && s->reg >= 0 && s->reg < 16) {
		*src = s->reg;
		return DEF_COPY;
	}
	if (in->opcode == LS_MN_MOV && s->kind == LS_OP_MEM && s->index < 0 && dst->size == 8 &&
	    (s->base == LS_REG_SP || s->base == LS_REG_BP)) {
		*mem = s;
		return DEF_RELOAD;
	}
	return DEF_VALUE;
}

/* What Q asks, answered through copies: the definitions that reach it
 * are followed back through register moves, spills and reloads (each
 * once: the copies may go round in cycles, gcc spilling sre's label table
 * around every call and reloading it before every dispatch), and the
 * value is the union of what the other definitions - the ones that make
 * a value - leave.  Linear in the copies, whatever their cycles. */
static void value_through_copies(struct builder *b, struct copy_question q0, int depth, struct jt_vals *out)
{
	struct flow *f = b->flow;
	if (++f->cgen == 0) {
		memset(f->cstamp, 0, b->cfg->ninsns * sizeof *f->cstamp);
		f->cgen = 1;
	}
	size_t q_base = f->nq, r_base = f->nroots;
	f->q = ls_grow(f->q, &f->cap_q, f->nq + 1, sizeof *f->q);
	f->q[f->nq++] = q0;
	while (f->nq > q_base) {
		struct copy_question q = f->q[--f->nq];
		struct ls_slot slot = { q.off, 8 };
		uint16_t bit = q.reg >= 0 ? (uint16_t)(1u << q.reg) : 0;
		bool at_entry, limit;
		size_t n0, n = q.reg >= 0 ? walk_back(b, q.at, writes_reg, &bit, &n0, &at_entry, &limit)
		                          : walk_back(b, q.at, ls_slot_store, &slot, &n0, &at_entry, &limit);
		if (limit)
			add_kind(out, VAL_UNKNOWN, false);
		if (at_entry && q.reg >= 0)
			add_kind(out, VAL_POINTER, false); /* an argument (a slot: not yet written) */
		for (size_t i = 0; i < n; i++) {
			int64_t d = f->defs[n0 + i];
			if (f->cstamp[d] == f->cgen)
				continue;
			f->cstamp[d] = f->cgen;
			struct copy_question next = { d, 0, -1 };
			int src = -1;
			const struct ls_operand *mem = NULL;
			int kind = q.reg >= 0 ? def_kind(b, d, q.reg, &src, &mem) : DEF_COPY;
			if (q.reg < 0 && (src = ls_slot_stored_reg(b, d, &slot)) < 0) {
				add_kind(out, VAL_UNKNOWN, false); /* written over */
				continue;
			}
			if (kind == DEF_RELOAD) {
				int r = ls_slot_of(b, d, mem, 8, &slot);
				if (r != LS_SLOT_OK) {
					/* Not reached yet (no height: the next round), an
					 * argument on the stack, or a frame not followed. */
					if (r == LS_SLOT_UNREACHED)
						f->hit_unknown = true;
					else
						add_kind(out, r == LS_SLOT_ARGUMENT ? VAL_POINTER : VAL_UNKNOWN, false);
					continue;
				}
				next.off = slot.off;
			} else if (kind == DEF_COPY) {
				next.reg = (int8_t)src;
			} else {
				f->roots = ls_grow(f->roots, &f->cap_roots, f->nroots + 1, sizeof *f->roots);
				f->roots[f->nroots++] = d * 16 + q.reg;
				continue;
			}
			f->q = ls_grow(f->q, &f->cap_q, f->nq + 1, sizeof *f->q);
			f->q[f->nq++] = next;
		}
		f->ndefs = n0;
	}
	/* The definitions that make values, each asked once. */
	for (size_t i = r_base; i < f->nroots; i++)
		value_of_def(b, f->roots[i] / 16, (int)(f->roots[i] % 16), depth - 1, out);
	f->nroots = r_base;
}

/* What REG may hold when instruction AT runs: the union of what its
 * reaching definitions leave in it. */
static void value_of_reg(struct builder *b, int64_t at, int reg, int depth, struct jt_vals *out)
{
	if (depth <= 0 || reg < 0 || reg >= 16) {
		b->flow->incomplete += depth <= 0;
		add_kind(out, VAL_UNKNOWN, false);
		return;
	}
	value_through_copies(b, (struct copy_question){ at, 0, (int8_t)reg }, depth, out);
}

/* What the stack slot MEM (SP- or BP-relative) holds when instruction AT
 * loads it: what the stores reaching AT put there.  gcc keeps CPython's
 * label table in a slot and reloads it before each computed goto. */
static void value_of_slot(struct builder *b, int64_t at, const struct ls_operand *mem, int depth,
                          struct jt_vals *out)
{
	struct ls_slot slot = { 0, 8 };
	int r = ls_slot_of(b, at, mem, 8, &slot);
	if (r != LS_SLOT_OK) {
		if (r == LS_SLOT_UNREACHED)
			b->flow->hit_unknown = true;
		else
			add_kind(out, r == LS_SLOT_ARGUMENT ? VAL_POINTER : VAL_UNKNOWN, false);
		return;
	}
	if (depth <= 0) {
		b->flow->incomplete++;
		add_kind(out, VAL_UNKNOWN, false);
		return;
	}
	value_through_copies(b, (struct copy_question){ at, slot.off, -1 }, depth, out);
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
	if (reg < 0 || reg >= 16)
		return -1;
	uint16_t bit = (uint16_t)(1u << reg);
	bool at_entry, limit;
	size_t n0, n = walk_back(b, at, writes_reg, &bit, &n0, &at_entry, &limit);
	int64_t d = n ? b->flow->defs[n0] : -1;
	b->flow->ndefs = n0;
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

/* A register's value at an instruction as ROOT + K: ROOT the definition
 * left once copies and constant additions (mov %a,%b; lea K(%a),%b; add
 * $K,%b) are taken off, or, where several definitions reach, the value
 * REG holds at AT. */
struct affine {
	int64_t def;               /* -1: several (then REG at AT), -2: the entry */
	int reg;
	int64_t at;
	int64_t k;
};

static struct affine affine_root(struct builder *b, int64_t at, int reg)
{
	struct affine a = { -1, reg, at, 0 };
	for (int steps = 0; steps < 8; steps++) {
		int64_t d = unique_def(b, at, reg);
		a.reg = reg;
		a.at = at;
		a.def = d;
		if (d < 0)
			return a;
		const struct ls_insn *in = &b->cfg->insns[d];
		const struct ls_operand *src = &in->op[0];
		if (in->nops != 2)
			return a;
		if (in->opcode == LS_MN_MOV && src->kind == LS_OP_REG && src->reg >= 0 && src->reg < 16) {
			reg = src->reg;
		} else if (in->opcode == LS_MN_LEA && src->kind == LS_OP_MEM && src->index < 0 && src->base >= 0 &&
		           src->base < 16) {
			a.k += src->disp;
			reg = src->base;
		} else if (in->opcode == LS_MN_ADD && src->kind == LS_OP_IMM) {
			a.k += src->imm;
		} else {
			return a;
		}
		at = d;
	}
	a.def = -3;
	return a;
}

/* Whether REG holds the same value at instructions X and Y: one runs
 * straight into the other (nothing branches in between) and nothing
 * between them writes REG. */
static bool same_value(const struct builder *b, int64_t x, int64_t y, int reg)
{
	if (x > y) {
		int64_t t = x;
		x = y;
		y = t;
	}
	for (int64_t i = x; i < y; i++)
		if (y - x > 64 || !ls_jt_falls_into(b, i) || (b->cfg->insns[i].writes & (1u << reg)) ||
		    b->flow->in_start[i + 1] != b->flow->in_start[i + 2])
			return false;
	return true;
}

/* Whether memory operand X at instruction XA and Y at YA name the same
 * address: the same base and index values (up to constants added) and
 * displacements that make up the difference.  gcc bounds a switch on a
 * field read through an index (`cmpl $10,0x10(%rdx,%rax,4); ja`) and
 * loads it again through another index, %rax + 4. */
static bool same_address(struct builder *b, int64_t xa, const struct ls_operand *x, int64_t ya,
                         const struct ls_operand *y)
{
	if (x->base == LS_REG_RIP || y->base == LS_REG_RIP || (x->index < 0) != (y->index < 0) ||
	    (x->base < 0) != (y->base < 0) || (x->index >= 0 && x->scale != y->scale))
		return false;
	int64_t dx = x->disp, dy = y->disp;
	for (int part = 0; part < 2; part++) {
		int rx = part ? x->index : x->base, ry = part ? y->index : y->base;
		if (rx < 0)
			continue;
		struct affine p = affine_root(b, xa, rx), q = affine_root(b, ya, ry);
		bool same = p.reg == q.reg && (p.def >= 0 || p.def == -2 ? p.def == q.def
		                                                           : p.def == -1 && q.def == -1 &&
		                                                                 same_value(b, p.at, q.at, p.reg));
		if (!same)
			return false;
		int64_t scale = part ? x->scale : 1;
		dx += p.k * scale;
		dy += q.k * scale;
	}
	return dx == dy;
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
		    m->kind == LS_OP_MEM && same_address(b, c, o, chain[k].def, m))
			return true;
	}
	return false;
}

/* Entries in the table loaded at AT, from a `cmp $N,%r; ja` (or jae,
 * jbe, jb; sub for cmp at clang -O0) on the index's value before it: 0
 * when there is none (address order, at most 48 instructions back). */
static uint64_t table_bound(struct builder *b, int64_t at, const struct index_step *chain, int n, uint64_t *dflt)
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
		/* ja/jae leave for the default; jbe/jb go to the table. */
		*dflt = j->opcode == LS_MN_JA || j->opcode == LS_MN_JAE ? j->target : 0;
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

/* Where a table's entries are among the relocations, entry after entry:
 * the first relocation at or above the entry (one there is the entry's),
 * and the first reaching past its start (one there below its end touches
 * it).  A binary search among a C++ library's 6.5x10^5 relocations for
 * each entry read (2.4x10^5 of them, every round of ls_jt_resolve, in the
 * first report of a system-wide recording) was a tenth of jump_targets;
 * the entries go up, and so do these. */
struct reloc_cursor {
	uint64_t at;
	size_t at_least, reaching;
	bool set;
};

static void reloc_seek(const struct ls_cfg_module *c, struct reloc_cursor *rc, uint64_t at)
{
	const struct dyn_reloc *r = c->relocs;
	if (!rc->set || at < rc->at) { /* the first entry (or addresses that wrapped) */
		rc->at_least = LS_FIRST_AT_LEAST(r, c->nrelocs, offset, at);
		size_t lo = 0, hi = c->nrelocs;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (r[mid].offset + 8 <= at)
				lo = mid + 1;
			else
				hi = mid;
		}
		rc->reaching = lo;
		rc->set = true;
	}
	while (rc->at_least < c->nrelocs && r[rc->at_least].offset < at)
		rc->at_least++;
	while (rc->reaching < c->nrelocs && r[rc->reaching].offset + 8 <= at)
		rc->reaching++;
	rc->at = at;
}

/* The dynamic relocation at the entry at RC, or NULL. */
static const struct dyn_reloc *reloc_at(const struct ls_cfg_module *c, const struct reloc_cursor *rc)
{
	size_t lo = rc->at_least;
	return lo < c->nrelocs && c->relocs[lo].offset == rc->at ? &c->relocs[lo] : NULL;
}

/* Whether a dynamic relocation touches [RC's entry, + N). */
static bool reloc_within(const struct ls_cfg_module *c, const struct reloc_cursor *rc, uint64_t n)
{
	size_t lo = rc->reaching;
	return lo < c->nrelocs && c->relocs[lo].offset < rc->at + n;
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
static bool read_entry(const struct builder *b, const struct jt_val *e, const struct data_sec *sec, uint64_t k,
                       struct reloc_cursor *rc, uint64_t *target)
{
	const struct ls_cfg_module *c = b->cache;
	uint64_t at = e->c + k * e->size;
	if (e->size == 8) {
		uint64_t v;
		if (!read_bytes_in(c, sec, at, &v, 8))
			return false;
		const struct dyn_reloc *r = NULL;
		if (c->nrelocs) {
			reloc_seek(c, rc, at);
			r = reloc_at(c, rc);
		}
		if (r && r->type == R_X86_64_RELATIVE)
			v = r->addend;
		else if (r || (c->relative_relocs && b->m->ehdr.e_type == ET_DYN))
			return false; /* a symbol's address, or not a pointer at all */
		*target = v;
		return true;
	}
	int32_t v;
	if (!read_bytes_in(c, sec, at, &v, 4))
		return false;
	if (c->nrelocs) {
		reloc_seek(c, rc, at);
		if (reloc_within(c, rc, 4))
			return false;
	}
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
	uint64_t dflt = 0;
	uint64_t count = e->index >= 0 ? table_bound(b, e->load, chain, nchain, &dflt) : 1;
	bool sure = count > 0;
	if (!sure) {
		uint64_t lim = index_limit(b, chain, nchain);
		uint64_t end = data_limit(b, e->c);
		count = lim ? lim : 4096;
		if (end != UINT64_MAX && (end - e->c) / e->size < count)
			count = (end - e->c) / e->size;
	}
	size_t before = *nout;
	bool first = true;
	const struct data_sec *sec = sole_sec(b->cache, e->c);
	struct reloc_cursor rc = { 0 };
	for (uint64_t k = 0; k < count; k++) {
		uint64_t target;
		if (!read_entry(b, e, sec, k, &rc, &target))
			break;
		if (dflt && target == dflt && !in_ranges(b, target))
			continue; /* the compare's default, in another procedure's cold code (gcc shares
			           * one __builtin_unreachable among functions) */
		if (first && is_tail_target(b, target) && ls_cfg_at_entry(b->m, target))
			return -1;
		first = false;
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
			        b->m->path, ls_proc_name(b->m, b->proc) ? b->proc->name : "?", (unsigned long long)e->c,
			        (unsigned long long)cfg->insns[e->load].addr, (unsigned long long)k,
			        ls_proc_name(b->m, other) ? other->name : "another procedure", (unsigned long long)target);
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
	/* One jump's question may not starve the others' (they share the
	 * procedure's budget). */
	b->flow->query_budget = JT_QUERY_BUDGET(b->cfg->ninsns);
	b->flow->query_exhausted = false;
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
	if (b->flow->budget == 0 || b->flow->query_exhausted)
		unresolved = true;
	/* No table, and the frame torn down (SP back where it was at the
	 * entry, the return address on top): a tail call through a pointer
	 * that an indexed load fetched - a table of functions in writable
	 * data, a C++ virtual member-function pointer - not a table of ours. */
	if (unresolved && !resolved && ls_sp_height(b, j) == 0)
		unresolved = false;
	return unresolved ? JUMP_UNRESOLVED : resolved ? JUMP_RESOLVED : JUMP_NOT_TABLE;
}

/* Sorts the N instruction indices V and drops repeats: how many are
 * left.  A jump's targets are a table's entries, thousands of them in an
 * interpreter's loop, sorted again every round of ls_jt_resolve: sorted
 * by their bytes (a pass for each byte in which they differ), not by
 * ls_sort_runs' comparisons through a function pointer (13% of the
 * stage in the first report of a system-wide recording). */
static size_t sort_unique_targets(uint32_t *v, size_t n)
{
	if (n < 2)
		return n;
	uint32_t differ = 0;
	for (size_t i = 1; i < n; i++)
		differ |= v[i] ^ v[0];
	uint32_t *t = ls_xmalloc(n * sizeof *t), *from = v, *to = t;
	for (int shift = 0; shift < 32; shift += 8) {
		if (!((differ >> shift) & 0xff))
			continue;
		size_t count[257] = { 0 };
		for (size_t i = 0; i < n; i++)
			count[((from[i] >> shift) & 0xff) + 1]++;
		for (int b = 0; b < 256; b++)
			count[b + 1] += count[b];
		for (size_t i = 0; i < n; i++)
			to[count[(from[i] >> shift) & 0xff]++] = from[i];
		uint32_t *x = from;
		from = to;
		to = x;
	}
	size_t u = 1;
	v[0] = from[0];
	for (size_t i = 1; i < n; i++)
		if (from[i] != v[u - 1])
			v[u++] = from[i];
	free(t);
	return u;
}

/* Per indirect jump: its targets so far (sorted, unique) and what it is. */
struct jump_result {
	int64_t insn;
	uint32_t *targets;
	size_t n, cap;
	int status;
};

/* Whether the jump-table sources of X and Y are the same run. */
static bool same_run(const struct flow *f, size_t x, size_t y)
{
	uint32_t nx = f->in_start[x + 1] - f->tab_start[x], ny = f->in_start[y + 1] - f->tab_start[y];
	return nx == ny &&
	       memcmp(f->in_src + f->tab_start[x], f->in_src + f->tab_start[y], nx * sizeof *f->in_src) == 0;
}

/* f->run_of: per instruction with two or more jump-table sources, an id of
 * their run (in_src from tab_start to the end of its sources), the same
 * for the same runs.  gcc copies a computed goto's jump into its
 * predecessors, each with the whole table: every label of CPython's
 * interpreter has the same run of a hundred jumps, and a walk that went
 * through one of them has visited them all: walk_back skips the others
 * (it scanned every table edge of the procedure, per walk). */
static void flow_runs(struct flow *f, size_t n)
{
	size_t nruns = 0;
	for (size_t x = 0; x < n; x++) {
		f->run_of[x] = UINT32_MAX;
		nruns += f->in_start[x + 1] - f->tab_start[x] >= 2;
	}
	if (!nruns)
		return;
	size_t cap = 16;
	while (cap < 2 * nruns)
		cap *= 2;
	uint32_t *slot = ls_xmalloc(cap * sizeof *slot); /* a representative instruction, or UINT32_MAX */
	memset(slot, 0xff, cap * sizeof *slot);
	uint32_t next_id = 0;
	for (size_t x = 0; x < n; x++) {
		uint32_t ts = f->tab_start[x], end = f->in_start[x + 1];
		if (end - ts < 2)
			continue;
		uint64_t h = end - ts;
		for (uint32_t k = ts; k < end; k++)
			h = (h ^ f->in_src[k]) * 0x100000001b3ull;
		size_t i = (size_t)(h ^ h >> 29) & (cap - 1);
		while (slot[i] != UINT32_MAX && !same_run(f, slot[i], x))
			i = (i + 1) & (cap - 1);
		if (slot[i] == UINT32_MAX) {
			slot[i] = (uint32_t)x;
			f->run_of[x] = next_id++;
		} else {
			f->run_of[x] = f->run_of[slot[i]];
		}
	}
	free(slot);
}

/* The flow's sources: direct branches, landing pads, and the jump tables
 * resolved so far (JR). */
static void flow_sources(struct builder *b, const struct jump_result *jr, size_t njr)
{
	const struct ls_cfg *cfg = b->cfg;
	struct flow *f = b->flow;
	size_t n = cfg->ninsns;
	uint32_t *count = f->in_start; /* counts in [1..n], then prefix sums */
	f->heights_ready = false; /* new edges, new heights, new values */
	memo_free(f->memo);
	f->memo = NULL;
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
			/* a direct jump's target or a call's landing pad, when an
			 * instruction starts there (mark_leaders found it) */
			const struct ls_insn *in = &cfg->insns[i];
			int32_t t = b->edge_to[i];
			uint64_t to = in->kind == LS_INSN_JUMP || in->kind == LS_INSN_CJUMP ? in->target
			              : t >= 0 ? ls_eh_landing_pad(b->cache, in->addr) : 0;
			if (t >= 0 && cfg->insns[t].addr == to)
				SOURCE(t, i);
		}
		if (pass == 1) /* the jump tables' sources of each come next */
			memcpy(f->tab_start, count, n * sizeof *count);
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
	flow_runs(f, n);
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
	f->active = ls_xcalloc(n + 1, 1);
	f->cstamp = ls_xcalloc(n + 1, sizeof *f->cstamp);
	f->falls = ls_xcalloc(n + 1, 1);
	f->tab_start = ls_xcalloc(n + 1, sizeof *f->tab_start);
	f->run_of = ls_xmalloc((n + 1) * sizeof *f->run_of);
	f->run_stamp = ls_xcalloc(n + 1, sizeof *f->run_stamp);
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
		ls_sort_runs(f->refs, f->nrefs, sizeof *f->refs, cmp_u64);
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
	free(f->defs);
	free(f->active);
	free(f->cstamp);
	free(f->falls);
	free(f->tab_start);
	free(f->run_of);
	free(f->run_stamp);
	free(f->q);
	free(f->roots);
	free(f->sp);
	free(f->bp);
	memo_free(f->memo);
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
void ls_jt_resolve(struct builder *b, uint8_t *leader)
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
			x->n = sort_unique_targets(x->targets, x->n); /* a table repeats its cases */
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
		        b->m->path, ls_proc_name(b->m, b->proc) ? b->proc->name : "?", cfg->unresolved_jumps,
		        cfg->unresolved_jumps == 1 ? "" : "s", (unsigned long long)cfg->first_unresolved);
}
