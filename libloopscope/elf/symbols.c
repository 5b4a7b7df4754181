/* symbols.c - the symbol table, indexed by name and by address, with the
 * kernel's notion of a symbol's size.
 *
 * Owns m->symindex, built on the first symbolic lookup from the ELF symbol
 * table (never from the analysis), so that answers are the same whether the
 * structure was analyzed or read from the cache.
 *
 * Kernel oops lines name code as FUNC+0xOFF/0xSIZE, where SIZE is what
 * kallsyms counts: the distance to the next symbol, padding included, not
 * the ELF st_size.  scripts/faddr2line resolves such a name by: every FUNC
 * symbol called FUNC (static functions may have several); its size, the
 * distance to the first symbol of its section after it that lies at least
 * st_size further (the section's end if none); only the copies whose size is
 * SIZE when one is given; only if OFF <= size.  We do the same, with a hash
 * of the names and a binary search for the sizes: constant time per name
 * instead of faddr2line's passes over readelf's output.
 *
 * Naming an address the way kallsyms does (ls_module_symbolize) uses the
 * text symbols (FUNC and untyped labels in code) and, among several at one
 * address, scripts/kallsyms' order: strong before weak, fewer leading
 * underscores, then symbol-table order.
 *
 * Also what names are at an address (ls_module_names_at) and which symbol
 * a PLT slot jumps to (ls_plt_slot_name: the GOT slot's dynamic relocation,
 * a table built on its first use beside the index), so that the unwind
 * recipes can tell a callee that has no noreturn name without analyzing it.
 */
#include "cache/cache.h"
#include "elf/module.h"
#include "elf/symbols.h"
#include "support/base.h"
#include "support/sort.h"

#include <stdlib.h>
#include <string.h>

struct ls_sym {
	uint64_t addr;      /* link-time */
	uint64_t elf_size;  /* st_size */
	uint64_t sec_end;   /* end of its section (link-time) */
	const char *name;   /* copied out of the ELF string table without its @VERSION */
	uint32_t shndx;
	uint32_t order;     /* position in the symbol table */
	uint8_t type, bind;
	bool text;          /* kallsyms would list it: code, FUNC or untyped */
};

struct ls_symindex {
	struct ls_sym *syms;   /* sorted by (shndx, addr, order) */
	size_t n;
	uint32_t *slots;       /* name hash: indices + 1 of named symbols, 0 empty */
	size_t nslots;
	uint32_t *text;        /* indices of text symbols, sorted by (addr, kallsyms order) */
	size_t ntext;
	struct ls_arena names; /* the names, copied (not the module's table: not ours to grow) */
	struct got_names *got; /* built by the first ls_plt_slot_name */
};

/* GOT slot -> the name of the symbol its dynamic relocation fills it with,
 * sorted by slot; what a PLT stub jumps through. */
struct got_name {
	uint64_t got;
	const char *name; /* NULL: an IRELATIVE slot (a resolver's, unnamed here) */
};

struct got_names {
	struct got_name *v;
	size_t n;
	struct ls_strtab strings;
};

static uint64_t name_hash(const char *s)
{
	return ls_hash64(s, strlen(s), 0x5bd1e995);
}

static uint32_t leading_underscores(const char *s)
{
	uint32_t n = 0; /* a name of 2^31 underscores is past any real file */
	while (s[n] == '_')
		n++;
	return n;
}

/* The symbols in (shndx, addr, order) order, sorted as 16-byte keys rather
 * than 56-byte records. */
static void sort_syms(struct ls_symindex *ix)
{
	struct ls_sort_key *k = ls_xmalloc((ix->n + 1) * sizeof *k);
	for (size_t i = 0; i < ix->n; i++)
		k[i] = (struct ls_sort_key){ ix->syms[i].addr, ix->syms[i].shndx, (uint32_t)i };
	ls_sort_keys(k, ix->n, true, NULL, NULL);
	struct ls_sym *sorted = ls_xmalloc((ix->n + 1) * sizeof *sorted);
	for (size_t i = 0; i < ix->n; i++)
		sorted[i] = ix->syms[k[i].pos];
	free(k);
	free(ix->syms);
	ix->syms = sorted;
}

/* scripts/kallsyms' compare_symbols() order: address, strong before weak,
 * fewer leading underscores, table order. */
static uint32_t kallsyms_key(const struct ls_sym *y)
{
	return (uint32_t)(y->bind == STB_WEAK) << 31 | leading_underscores(y->name);
}

static bool kallsyms_before(const struct ls_sym *a, const struct ls_sym *b)
{
	if (a->addr != b->addr)
		return a->addr < b->addr;
	uint32_t ka = kallsyms_key(a), kb = kallsyms_key(b);
	if (ka != kb)
		return ka < kb;
	return a->order < b->order;
}

static int cmp_table_order(uint32_t a, uint32_t b, const void *syms)
{
	const struct ls_sym *y = syms;
	return y[a].order < y[b].order ? -1 : y[a].order > y[b].order;
}

/* The text index, in kallsyms_before order, from the symbols sorted by
 * (section, address, table order): the text symbols are in that order
 * already but among those at one address, as long as the sections lie in
 * address order (a linked file's do), and a pass of insertions orders
 * each address' few; else sorted as 16-byte keys.  Sorting them all again
 * was a fifth of the index's build for libLLVM. */
static void index_text(struct ls_symindex *ix)
{
	ix->text = ls_xmalloc((ix->ntext + 1) * sizeof *ix->text);
	size_t nt = 0;
	bool by_addr = true;
	for (size_t i = 0; i < ix->n; i++) {
		if (!ix->syms[i].text)
			continue;
		if (nt && ix->syms[ix->text[nt - 1]].addr > ix->syms[i].addr)
			by_addr = false;
		ix->text[nt++] = (uint32_t)i;
	}
	if (by_addr) {
		for (size_t i = 1; i < nt; i++)
			for (size_t j = i; j > 0 && kallsyms_before(&ix->syms[ix->text[j]], &ix->syms[ix->text[j - 1]]); j--) {
				uint32_t t = ix->text[j];
				ix->text[j] = ix->text[j - 1];
				ix->text[j - 1] = t;
			}
		return;
	}
	struct ls_sort_key *k = ls_xmalloc((nt + 1) * sizeof *k);
	for (size_t i = 0; i < nt; i++)
		k[i] = (struct ls_sort_key){ ix->syms[ix->text[i]].addr, kallsyms_key(&ix->syms[ix->text[i]]), ix->text[i] };
	ls_sort_keys(k, nt, false, cmp_table_order, ix->syms);
	for (size_t i = 0; i < nt; i++)
		ix->text[i] = k[i].pos;
	free(k);
}

/* NAME without its "@VERSION" or "@@VERSION", copied out of the ELF string
 * table: its mapping raises SIGBUS once the file is truncated, and the index
 * outlives this guarded build (sigbus.c).  Copied, not interned: the index
 * compares names with strcmp, never by pointer, and a copy costs less than
 * hashing each name into a table no one else asks. */
static const char *copy_unversioned(struct ls_arena *a, const char *name)
{
	size_t n = strcspn(name, "@");
	char *c = ls_arena_alloc(a, n + 1); /* zeroed: terminated */
	memcpy(c, name, n);
	return c;
}

/* Section index -> [addr, end) in link-time addresses, for every section. */
static void section_span(const ls_module *m, size_t shndx, uint64_t *lo, uint64_t *hi)
{
	Elf_Scn *scn = elf_getscn(m->elf, shndx);
	GElf_Shdr sh;
	*lo = *hi = 0;
	if (!scn || !gelf_getshdr(scn, &sh))
		return;
	*lo = sh.sh_addr - (m->relocatable ? m->bias : 0);
	*hi = *lo + sh.sh_size;
}

static struct ls_symindex *build_index(ls_module *m)
{
	struct ls_symindex *ix = ls_xcalloc(1, sizeof *ix);
	int total = m->dwmod ? dwfl_module_getsymtab(m->dwmod) : 0;
	size_t cap = 0;
	/* section ends, once per section rather than once per symbol */
	size_t nsec = 0;
	elf_getshdrnum(m->elf, &nsec);
	uint64_t *sec_end = ls_xcalloc(nsec + 1, sizeof *sec_end);
	for (size_t i = 0; i < nsec; i++) {
		uint64_t lo;
		section_span(m, i, &lo, &sec_end[i]);
	}
	/* room for them all at once: growing the array a symbol at a time
	 * (130,000 in libLLVM) was 4% of the build */
	ix->syms = ls_grow(NULL, &cap, total > 0 ? (size_t)total : 1, sizeof *ix->syms);
	for (int i = 1; i < total; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(m->dwmod, i, &s, &addr, &shndx, &elf, &bias);
		int type = GELF_ST_TYPE(s.st_info);
		/* A linked binary's symbols may come from its separate debug
		 * file (a distribution's stripped library keeps only .dynsym;
		 * libdwfl then reads the debug file's .symtab): the same
		 * addresses and section indexes as the main file.  A .o or
		 * .ko's come from the main file only: their sections are
		 * placed by our relocation, by section of the main file. */
		if (!name || s.st_shndx == SHN_UNDEF || s.st_shndx == SHN_ABS || type == STT_FILE ||
		    shndx == SHN_UNDEF || shndx >= SHN_LORESERVE || (elf != m->elf && m->relocatable))
			continue;
		struct ls_sym *y = &ix->syms[ix->n++];
		const struct ls_text *t = ls_text_find(m, addr - m->bias);
		*y = (struct ls_sym){
			.addr = addr - m->bias, .elf_size = s.st_size, .sec_end = shndx < nsec ? sec_end[shndx] : 0,
			.name = !*name ? "" : copy_unversioned(&ix->names, name),
			.shndx = shndx, .order = (uint32_t)i, .type = (uint8_t)type,
			.bind = (uint8_t)GELF_ST_BIND(s.st_info),
			.text = t && *name && name[0] != '$' && strncmp(name, ".L", 2) != 0 &&
			        (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE),
		};
	}
	free(sec_end);
	size_t nnamed = 0;
	for (size_t i = 0; i < ix->n; i++) {
		nnamed += ix->syms[i].name[0] != 0;
		ix->ntext += ix->syms[i].text;
	}
	if (ix->n)
		sort_syms(ix);
	index_text(ix);
	ix->nslots = 16;
	while (ix->nslots < 2 * nnamed + 16)
		ix->nslots *= 2;
	ix->slots = ls_xcalloc(ix->nslots, sizeof *ix->slots);
	for (size_t i = 0; i < ix->n; i++) {
		const struct ls_sym *y = &ix->syms[i];
		if (!y->name[0])
			continue;
		size_t h = name_hash(y->name) & (ix->nslots - 1);
		while (ix->slots[h])
			h = (h + 1) & (ix->nslots - 1);
		ix->slots[h] = (uint32_t)i + 1;
	}
	return ix;
}

static void free_got_names(struct got_names *g)
{
	if (!g)
		return;
	free(g->v);
	ls_strtab_free(&g->strings);
	free(g);
}

static void free_index(struct ls_symindex *ix)
{
	free_got_names(ix->got);
	free(ix->syms);
	free(ix->slots);
	free(ix->text);
	ls_arena_free(&ix->names);
	free(ix);
}

static const struct ls_symindex no_index;

/* Built by the first lookup; two threads racing both build it and the
 * loser frees its copy (the symbol table is read-only, both are equal). */
static const struct ls_symindex *symindex(const ls_module *cm)
{
	ls_module *m = (ls_module *)cm; /* the index is logically const */
	struct ls_symindex *ix = __atomic_load_n(&m->symindex, __ATOMIC_ACQUIRE);
	if (ix)
		return ix;
	/* Out of memory (or the file truncated meanwhile): an empty index this
	 * time (the lookups answer "none", ls_module_resolve says why; the
	 * half-built index leaks), and a later lookup tries again. */
	ls_sigbus_catch();
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env)) {
		if (ls_guard_cause().kind == LS_GUARD_BUS) /* read from the mapping of a truncated file */
			ls_warn(&m->opt, "%s: truncated since it was opened: its symbols cannot be read", m->path);
		return &no_index;
	}
	struct ls_symindex *fresh = build_index(m), *expected = NULL;
	ls_oom_pop(&g);
	if (__atomic_compare_exchange_n(&m->symindex, &expected, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return fresh;
	free_index(fresh);
	return expected;
}

void ls_symindex_free(ls_module *m)
{
	if (m->symindex)
		free_index(m->symindex);
	m->symindex = NULL;
}

/* faddr2line's size of symbol I: see the header comment. */
static uint64_t kallsyms_size(const struct ls_symindex *ix, size_t i)
{
	const struct ls_sym *y = &ix->syms[i];
	uint64_t want = y->addr + (y->elf_size ? y->elf_size : 1);
	/* The first symbol of the section at or past WANT: binary search in
	 * the section's run (the array is sorted by section, then address). */
	size_t lo = i + 1, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ls_sym *z = &ix->syms[mid];
		if (z->shndx != y->shndx || z->addr >= want)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo < ix->n && ix->syms[lo].shndx == y->shndx)
		return ix->syms[lo].addr - y->addr;
	return y->sec_end > y->addr ? y->sec_end - y->addr : 0;
}

/* Every symbol named NAME, by index: up to CAP of them, in address order. */
static size_t named(const struct ls_symindex *ix, const char *name, bool funcs_only, uint32_t *out, size_t cap)
{
	size_t n = 0;
	if (!ix->n)
		return 0;
	for (size_t h = name_hash(name) & (ix->nslots - 1); ix->slots[h]; h = (h + 1) & (ix->nslots - 1)) {
		uint32_t i = ix->slots[h] - 1;
		const struct ls_sym *y = &ix->syms[i];
		if (strcmp(y->name, name) != 0 ||
		    (funcs_only && y->type != STT_FUNC && y->type != STT_GNU_IFUNC))
			continue;
		if (n < cap)
			out[n++] = i;
	}
	/* insertion sort by address: a name has a handful of copies at most */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && ix->syms[out[j]].addr < ix->syms[out[j - 1]].addr; j--) {
			uint32_t t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

size_t ls_module_functions_named(const ls_module *m, const char *name, ls_symbol *out, size_t cap)
{
	if (!m || !name)
		return 0;
	const struct ls_symindex *ix = symindex(m);
	uint32_t idx[64];
	size_t n = named(ix, name, true, idx, 64);
	if (n == 0) {
		/* An assembly entry point (entry_SYSCALL_64_after_hwframe) is an
		 * untyped label in code: faddr2line finds none, the stack trace
		 * names it all the same.  Take the text labels then. */
		uint32_t all[64];
		size_t na = named(ix, name, false, all, 64);
		for (size_t i = 0; i < na; i++)
			if (ix->syms[all[i]].text)
				idx[n++] = all[i];
	}
	for (size_t i = 0; i < n && i < cap; i++)
		out[i] = (ls_symbol){ ix->syms[idx[i]].name, ix->syms[idx[i]].addr, kallsyms_size(ix, idx[i]) };
	return n;
}

int ls_module_resolve(const ls_module *m, const char *name, uint64_t off, uint64_t size,
                      uint64_t *addrs, size_t cap, ls_error *err)
{
	ls_symbol cand[64];
	size_t n = ls_module_functions_named(m, name, cand, sizeof cand / sizeof *cand);
	if (n > sizeof cand / sizeof *cand)
		n = sizeof cand / sizeof *cand;
	if (n == 0 && m && symindex(m) == &no_index) {
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", m->path);
		return -1;
	}
	if (n == 0) {
		ls_set_error(err, LS_ERR_NOT_FOUND, "%s: no function %s", m ? m->path : "?", name ? name : "");
		return -1;
	}
	size_t k = 0, sized = 0;
	uint64_t first_size = 0;
	for (size_t i = 0; i < n; i++) {
		if (size && cand[i].size != size)
			continue;
		if (!sized++)
			first_size = cand[i].size;
		if (off > cand[i].size)
			continue;
		if (k < cap)
			addrs[k] = cand[i].addr + off;
		k++;
	}
	if (k)
		return (int)(k < cap ? k : cap);
	if (!sized) {
		char sizes[256];
		size_t at = 0;
		sizes[0] = 0;
		for (size_t i = 0; i < n && at + 24 < sizeof sizes; i++)
			at += (size_t)snprintf(sizes + at, sizeof sizes - at, "%s0x%llx", i ? ", " : "",
			                       (unsigned long long)cand[i].size);
		ls_set_error(err, LS_ERR_NOT_FOUND, "%s: no %s of size 0x%llx (%s: %s)", m->path, name,
		             (unsigned long long)size, n > 1 ? "sizes" : "size", sizes);
	} else {
		ls_set_error(err, LS_ERR_NOT_FOUND, "%s: offset 0x%llx is past the end of %s (size 0x%llx)", m->path,
		             (unsigned long long)off, name, (unsigned long long)first_size);
	}
	return -1;
}

int ls_module_symbolize(const ls_module *m, uint64_t addr, ls_symbol *out)
{
	if (!m)
		return -1;
	const struct ls_symindex *ix = symindex(m);
	/* The last text symbol at or below ADDR; among several at one address
	 * the first in kallsyms' order. */
	size_t lo = 0, hi = ix->ntext;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->syms[ix->text[mid]].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	uint64_t at = ix->syms[ix->text[lo - 1]].addr;
	size_t first = lo - 1;
	while (first > 0 && ix->syms[ix->text[first - 1]].addr == at)
		first--;
	const struct ls_sym *y = &ix->syms[ix->text[first]];
	uint64_t end = lo < ix->ntext ? ix->syms[ix->text[lo]].addr : y->sec_end;
	if (!ls_text_find(m, addr) || (lo == ix->ntext && addr >= y->sec_end))
		return -1;
	*out = (ls_symbol){ y->name, y->addr, end > y->addr ? end - y->addr : 0 };
	return 0;
}

int ls_symindex_find(const ls_module *m, const char *name, uint64_t *addr, uint64_t *size)
{
	const struct ls_symindex *ix = symindex(m);
	uint32_t idx[64];
	size_t n = named(ix, name, false, idx, 64);
	if (!n)
		return -1;
	/* A function before anything else, a global one before a local one;
	 * else the first in address order. */
	size_t best = 0;
	int best_rank = -1;
	for (size_t i = 0; i < n; i++) {
		const struct ls_sym *y = &ix->syms[idx[i]];
		int rank = (y->type == STT_FUNC || y->type == STT_GNU_IFUNC) * 2 + (y->bind == STB_GLOBAL);
		if (rank > best_rank) {
			best_rank = rank;
			best = i;
		}
	}
	*addr = ix->syms[idx[best]].addr;
	*size = ix->syms[idx[best]].elf_size;
	return 0;
}

size_t ls_module_names_at(const ls_module *m, uint64_t addr, const char **out, size_t cap)
{
	if (!m)
		return 0;
	const struct ls_symindex *ix = symindex(m);
	size_t n = 0, a = 0, b = ix->ntext;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (ix->syms[ix->text[mid]].addr < addr)
			a = mid + 1;
		else
			b = mid;
	}
	for (size_t i = a; i < ix->ntext && ix->syms[ix->text[i]].addr == addr; i++, n++)
		if (n < cap)
			out[n] = ix->syms[ix->text[i]].name;
	return n;
}

static int cmp_got(const void *a, const void *b)
{
	const struct got_name *x = a, *y = b;
	return x->got < y->got ? -1 : x->got > y->got;
}

bool ls_rel_at(Elf_Data *rd, uint32_t type, bool is64, size_t i, GElf_Rela *out)
{
	if (is64) {
		size_t size = type == SHT_RELA ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
		if (!rd->d_buf || (i + 1) * size > rd->d_size)
			return false;
		Elf64_Rela r = { 0 };
		memcpy(&r, (const char *)rd->d_buf + i * size, size);
		*out = (GElf_Rela){ r.r_offset, r.r_info, type == SHT_RELA ? r.r_addend : 0 };
		return true;
	}
	if (type == SHT_RELA)
		return gelf_getrela(rd, (int)i, out) != NULL;
	GElf_Rel rel;
	if (!gelf_getrel(rd, (int)i, &rel))
		return false;
	*out = (GElf_Rela){ rel.r_offset, rel.r_info, 0 };
	return true;
}

/* One dynamic relocation section's GOT slots, as procs.c names PLT slots
 * (JUMP_SLOT and GLOB_DAT by their .dynsym symbol, IRELATIVE unnamed). */
static void got_names_of(const ls_module *m, Elf_Scn *scn, const GElf_Shdr *sh, struct got_names *g, size_t *cap)
{
	Elf_Scn *symscn = elf_getscn(m->elf, sh->sh_link);
	GElf_Shdr symsh;
	Elf_Data *sd = NULL;
	if (symscn && gelf_getshdr(symscn, &symsh) && symsh.sh_type == SHT_DYNSYM)
		sd = elf_getdata(symscn, NULL);
	Elf_Data *rd = elf_getdata(scn, NULL);
	if (!rd || !sh->sh_entsize)
		return;
	size_t nrel = sh->sh_size / sh->sh_entsize;
	bool is64 = gelf_getclass(m->elf) == ELFCLASS64;
	for (size_t i = 0; i < nrel; i++) {
		/* the type first: most are RELATIVE ones, none of which fills
		 * a GOT slot a PLT stub jumps through */
		unsigned t = ls_rel_type_at(rd, sh->sh_type, is64, i);
		if (t == R_X86_64_RELATIVE || t == R_X86_64_64)
			continue;
		GElf_Rela r;
		if (!ls_rel_at(rd, sh->sh_type, is64, i, &r))
			break;
		unsigned type = GELF_R_TYPE(r.r_info);
		const char *name = NULL;
		if (type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT) {
			GElf_Sym s;
			if (!sd || !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &s) ||
			    !(name = elf_strptr(m->elf, symsh.sh_link, s.st_name)) || !*name)
				continue;
			name = ls_intern_unversioned(&g->strings, name);
		} else if (type != R_X86_64_IRELATIVE) {
			continue;
		}
		g->v = ls_grow(g->v, cap, g->n + 1, sizeof *g->v);
		g->v[g->n++] = (struct got_name){ r.r_offset, name };
	}
}

static struct got_names *build_got_names(const ls_module *m)
{
	struct got_names *g = ls_xcalloc(1, sizeof *g);
	size_t cap = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL) &&
		    (sh.sh_flags & SHF_ALLOC))
			got_names_of(m, scn, &sh, g, &cap);
	}
	if (g->n)
		qsort(g->v, g->n, sizeof *g->v, cmp_got);
	return g;
}

/* Built by the first ask, as the index is (a racing loser frees its copy);
 * NULL when it cannot be read. */
static const struct got_names *got_names(const ls_module *m, struct ls_symindex *ix)
{
	struct got_names *g = __atomic_load_n(&ix->got, __ATOMIC_ACQUIRE);
	if (g)
		return g;
	ls_sigbus_catch();
	struct ls_oom_guard guard;
	ls_oom_push(&guard);
	if (setjmp(guard.env))
		return NULL;
	struct got_names *fresh = build_got_names(m), *expected = NULL;
	ls_oom_pop(&guard);
	if (__atomic_compare_exchange_n(&ix->got, &expected, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return fresh;
	free_got_names(fresh);
	return expected;
}

int ls_plt_slot_name(const ls_module *m, uint64_t addr, const char **name)
{
	*name = NULL;
	const struct ls_text *t = m && !m->relocatable ? ls_text_find(m, addr) : NULL;
	if (!t || (strncmp(t->name, ".plt", 4) != 0 && strcmp(t->name, ".iplt") != 0))
		return 0;
	/* procs.c's slot starts: [endbr64] [bnd] jmp *disp(%rip) */
	const uint8_t *d = t->data;
	uint64_t p = addr - t->addr;
	if (p + 4 <= t->size && d[p] == 0xf3 && d[p + 1] == 0x0f && d[p + 2] == 0x1e && d[p + 3] == 0xfa)
		p += 4;
	if (p < t->size && d[p] == 0xf2)
		p++;
	if (p + 6 > t->size || d[p] != 0xff || d[p + 1] != 0x25)
		return 0;
	int32_t disp = (int32_t)((uint32_t)d[p + 2] | (uint32_t)d[p + 3] << 8 | (uint32_t)d[p + 4] << 16 |
	                         (uint32_t)d[p + 5] << 24);
	struct got_name key = { t->addr + p + 6 + (int64_t)disp, NULL };
	struct ls_symindex *ix = (struct ls_symindex *)symindex(m);
	const struct got_names *g = ix == &no_index ? NULL : got_names(m, ix);
	if (!g)
		return -1;
	size_t i = LS_FIRST_AT_LEAST(g->v, g->n, got, key.got);
	if (i >= g->n || g->v[i].got != key.got)
		return 0;
	*name = g->v[i].name;
	/* two relocations of one slot: procs.c takes either */
	for (size_t k = i + 1; k < g->n && g->v[k].got == key.got; k++)
		if (g->v[k].name != *name)
			return -1;
	return *name ? 1 : -1;
}
