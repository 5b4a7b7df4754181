/* procs.c - the procedures of a module and an address index over them.
 *
 * Owns m->procs.  Procedures come, in order of trust, from:
 *
 *   1. DWARF subprograms with code (m->inl.subs, found by inline_tree.c):
 *      all their ranges, so gcc's foo.cold part is a second range of foo;
 *   2. STT_FUNC / STT_GNU_IFUNC symbols (.symtab, else .dynsym) whose start
 *      no DWARF procedure covers: assembly, stripped code, runtime objects;
 *   3. PLT slots, named NAME@plt from the relocation that fills the GOT
 *      slot each one jumps through (.plt, .plt.sec, .plt.got).
 *
 * DWARF ranges that run over the next symbol are clamped there (thesis
 * section 4.3: compilers have overestimated procedure ends), and the inline
 * index (m->inl.segs) is cut to match, so chains and procedures agree.
 *
 * A DWARF procedure's name is the best symbol at its entry (so a clone
 * reads "foo(int) (.constprop.0)" or "foo.part.0", as in perf and as
 * llvm-symbolizer names the outermost frame), else the DWARF name; all
 * demangled, in LLVM's spelling.
 */
#include "analyze.h"
#include "dwarf/inline_tree.h"
#include "dwarf/procs.h"
#include "elf/module.h"
#include "elf/symbols.h"
#include "structure/scope.h"
#include "support/base.h"
#include "support/sort.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

/* Functions that never return, by name; C++ "std::__throw_*" too.  In
 * arrays of NORETURN_NAME_MAX bytes (a longer name is a compiler warning). */
enum { NORETURN_NAME_MAX = 40 };
static const char noreturn_names[][NORETURN_NAME_MAX] = {
	"exit", "_exit", "_Exit", "abort", "__assert_fail", "__assert_perror_fail",
	"__stack_chk_fail", "__cxa_throw", "__cxa_rethrow", "_Unwind_Resume",
	"longjmp", "siglongjmp", "_longjmp", "__longjmp_chk", "pthread_exit",
	"__fortify_fail", "__chk_fail", "err", "errx", "verr", "verrx",
	"quick_exit", "__cxa_bad_cast", "__cxa_bad_typeid", "__cxa_call_unexpected",
	"__cxa_pure_virtual", "__cxa_deleted_virtual", "__libc_fatal",
	"__libc_longjmp", "__libc_siglongjmp", "std::terminate()",
};

/* And in the kernel (objtool's list of global noreturn functions): where
 * the DWARF is not there to say so (calls out of a module, symbol-only
 * code).  Only for kernel code: a user program's panic() may return. */
static const char *const kernel_noreturn_names[] = {
	"__stack_chk_fail", "panic", "do_exit", "do_task_dead", "kthread_exit", "make_task_dead",
	"__module_put_and_kthread_exit", "kthread_complete_and_exit", "rewind_stack_and_make_dead",
	"rewind_stack_do_exit", "kunit_try_catch_throw", "xen_start_kernel", "cpu_bringup_and_idle",
	"do_group_exit", "stop_this_cpu", "__invalid_creds", "cpu_startup_entry",
	"__ubsan_handle_builtin_unreachable", "ex_handler_msr_mce", "machine_real_restart",
	"__reiserfs_panic", "snp_abort", "sev_es_terminate", "usercopy_abort", "fortify_panic",
	"__fortify_panic", "hlt_play_dead", "panic_smp_self_stop", "nmi_panic_self_stop",
	"arch_cpu_idle_dead", "play_dead", "x86_64_start_kernel", "x86_64_start_reservations",
	"start_kernel", "arch_call_rest_init", "__tdx_hypercall_failed", "mpt_halt_firmware",
	"btrfs_assertfail", "__btrfs_panic",
};

static bool name_is_noreturn(const char *name)
{
	if (!name)
		return false;
	if (strncmp(name, "std::__throw_", 13) == 0)
		return true;
	/* asked of every procedure's names (200,000 times in a system-wide
	 * report): a mangled C++ name is none of the list (its demangled
	 * form is asked of separately), a long name neither, without a
	 * strlen over it; and a name of the list has N bytes when its NUL is
	 * at N (N < NORETURN_NAME_MAX: inside the array), not a strlen of
	 * each */
	if (name[0] == '_' && name[1] == 'Z')
		return false;
	size_t n = strnlen(name, NORETURN_NAME_MAX + 4);
	if (n > 4 && strcmp(name + n - 4, "@plt") == 0)
		n -= 4;
	if (n >= NORETURN_NAME_MAX)
		return false;
	for (size_t i = 0; i < sizeof noreturn_names / sizeof *noreturn_names; i++)
		if (noreturn_names[i][0] == name[0] && noreturn_names[i][n] == 0 && memcmp(noreturn_names[i], name, n) == 0)
			return true;
	return false;
}

bool ls_noreturn_name(const ls_module *m, const char *name)
{
	if (name_is_noreturn(name))
		return true;
	if (!m->kernel)
		return false;
	for (size_t i = 0; i < sizeof kernel_noreturn_names / sizeof *kernel_noreturn_names; i++)
		if (strcmp(kernel_noreturn_names[i], name) == 0)
			return true;
	return false;
}

/* A function symbol. */
struct sym {
	uint64_t addr, size;
	const char *name;   /* interned, version suffix removed */
	int rank;           /* which of several names at one address to show */
	bool func;          /* STT_FUNC/STT_GNU_IFUNC, not an STT_NOTYPE label */
};

static int cmp_sym_names(uint32_t a, uint32_t b, const void *syms)
{
	const struct sym *s = syms;
	return strcmp(s[a].name, s[b].name);
}

/* The N symbols by address, best rank first, then name, then table order
 * (the stable sort's): sorted as 16-byte keys, the rank negated into MID,
 * rather than as 32-byte records that glibc's qsort moves with memcpy. */
static struct sym *sort_symbols(struct sym *syms, size_t n)
{
	struct ls_sort_key *k = ls_xmalloc((n + 1) * sizeof *k);
	for (size_t i = 0; i < n; i++)
		k[i] = (struct ls_sort_key){ syms[i].addr, ~((uint32_t)syms[i].rank ^ 0x80000000u), (uint32_t)i };
	ls_sort_keys(k, n, false, cmp_sym_names, syms);
	struct sym *sorted = ls_xmalloc((n + 1) * sizeof *sorted);
	for (size_t i = 0; i < n; i++)
		sorted[i] = syms[k[i].pos];
	free(k);
	free(syms);
	return sorted;
}

/* Global beats weak beats local; then fewer leading underscores (memcpy
 * over __memcpy), then shorter (foo over foo_alias_long). */
static int sym_rank(const GElf_Sym *s, const char *name)
{
	int bind = GELF_ST_BIND(s->st_info);
	int r = bind == STB_GLOBAL ? 3000 : bind == STB_WEAK ? 2000 : bind == STB_GNU_UNIQUE ? 2000 : 1000;
	int us = 0;
	while (name[us] == '_')
		us++;
	r -= us * 100;
	size_t n = strlen(name);
	r -= n > 99 ? 99 : (int)n;
	if (GELF_ST_VISIBILITY(s->st_other) == STV_HIDDEN)
		r -= 1; /* __GI_ aliases and friends */
	/* module_init()/module_exit() aliases of a kernel module's real
	 * init and exit functions. */
	if (strcmp(name, "init_module") == 0 || strcmp(name, "cleanup_module") == 0)
		r = 0;
	return r;
}

static struct sym *collect_symbols(ls_module *m, size_t *nsyms)
{
	size_t n = 0, cap = 0;
	int total = dwfl_module_getsymtab(m->dwmod);
	/* room for them all at once, not a growth check a symbol (a
	 * transient array: sort_symbols copies out the ones kept) */
	struct sym *syms = ls_grow(NULL, &cap, total > 0 ? (size_t)total : 1, sizeof *syms);
	for (int i = 1; i < total; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(m->dwmod, i, &s, &addr, &shndx, &elf, &bias);
		if (!name || !*name)
			continue;
		int type = GELF_ST_TYPE(s.st_info);
		/* Assembly entry points are often untyped (the kernel's
		 * SYM_CODE_START): keep STT_NOTYPE labels in code too, but
		 * not the assembler's local and mapping symbols. */
		bool func = type == STT_FUNC || type == STT_GNU_IFUNC;
		if (!func && (type != STT_NOTYPE || name[0] == '.' || name[0] == '$'))
			continue;
		if (s.st_shndx == SHN_UNDEF || s.st_shndx == SHN_ABS)
			continue;
		uint64_t a = addr - m->bias;
		const struct ls_text *t = ls_text_find(m, a);
		if (!t)
			continue;
		/* The kernel's alternatives hold no functions: a symbol there
		 * is a linker script's marker (_einittext), and the code belongs
		 * to the procedures that jump into it (cfg.c). */
		if (strncmp(t->name, ".altinstr_", 10) == 0)
			continue;
		syms[n++] = (struct sym){
			.addr = a, .size = s.st_size,
			.name = ls_intern_unversioned(&m->strings, name),
			.rank = sym_rank(&s, name) - (func ? 0 : 5000),
			.func = func,
		};
	}
	if (n)
		syms = sort_symbols(syms, n);
	*nsyms = n;
	return syms;
}

/* The first symbol with address >= ADDR. */
static size_t sym_lower_bound(const struct sym *syms, size_t n, uint64_t addr)
{
	return LS_FIRST_AT_LEAST(syms, n, addr, addr);
}

/* A procedure being built; its ranges live in a shared array until the
 * procedures are sorted. */
struct proto {
	struct ls_proc p;
	size_t first_range;
};

struct builder {
	ls_module *m;
	struct proto *protos;
	size_t nprotos, cap_protos;
	ls_range *ranges;
	size_t nranges, cap_ranges;
};

/* (ls_grow called only when full, in add_range too: once a procedure,
 * 250,000 in a system-wide report's libraries) */
static struct proto *add_proto(struct builder *b)
{
	if (b->nprotos == b->cap_protos)
		b->protos = ls_grow(b->protos, &b->cap_protos, b->nprotos + 1, sizeof *b->protos);
	struct proto *pr = &b->protos[b->nprotos++];
	memset(pr, 0, sizeof *pr);
	pr->first_range = b->nranges;
	return pr;
}

/* Room for N more procedures of a range each: one allocation rather than
 * a realloc, and a copy, each time the arrays double. */
static void reserve_protos(struct builder *b, size_t n)
{
	b->protos = ls_grow(b->protos, &b->cap_protos, b->nprotos + n, sizeof *b->protos);
	b->ranges = ls_grow(b->ranges, &b->cap_ranges, b->nranges + n, sizeof *b->ranges);
}

static void add_range(struct builder *b, struct proto *pr, uint64_t lo, uint64_t hi)
{
	if (b->nranges == b->cap_ranges)
		b->ranges = ls_grow(b->ranges, &b->cap_ranges, b->nranges + 1, sizeof *b->ranges);
	b->ranges[b->nranges++] = (ls_range){ lo, hi };
	pr->p.nranges++;
}

/* Whether an Itanium name RAW may demangle to one ls_noreturn_name
 * knows -- std::__throw_*, std::terminate() -- so that its procedure's
 * noreturn mark needs it demangled now: a name whose first component in
 * namespace std (_ZSt, or nested: _ZN, cv-ref qualifiers, St) is
 * __throw_... or terminate.  Any other C++ name demangles to none of the
 * list (a template function's, with its return type first, neither). */
static bool may_name_noreturn(const char *raw)
{
	const char *q;
	if (strncmp(raw, "_ZSt", 4) == 0) {
		q = raw + 4;
	} else if (strncmp(raw, "_ZN", 3) == 0) {
		q = raw + 3;
		while (*q == 'r' || *q == 'V' || *q == 'K' || *q == 'R' || *q == 'O')
			q++;
		if (q[0] != 'S' || q[1] != 't')
			return false;
		q += 2;
	} else {
		return false;
	}
	if (*q == 'L') /* internal linkage */
		q++;
	if (*q < '0' || *q > '9')
		return true; /* an operator, a substitution: demangled to know */
	char *id;
	unsigned long len = strtoul(q, &id, 10);
	return (len >= 8 && strncmp(id, "__throw_", 8) == 0) || (len == 9 && strncmp(id, "terminate", 9) == 0);
}

/* P's names from its symbol name RAW (interned): the demangled one, RAW
 * the linkage name; RAW alone when it does not demangle. */
static void demangle_into(ls_module *m, struct ls_proc *p, const char *raw)
{
	char *d = ls_demangle(raw);
	if (d) {
		p->name = ls_intern(&m->strings, d);
		p->linkage_name = raw;
		free(d);
	} else {
		p->name = raw;
		p->linkage_name = NULL;
	}
}

/* The same for a procedure that is a symbol alone; on demand, a C++ name
 * is demangled when first asked for (ls_proc_name). */
static void name_from_symbol_later(ls_module *m, struct ls_proc *p, const char *raw)
{
	if (m->opt.on_demand && raw[0] == '_' && raw[1] == 'Z' && !may_name_noreturn(raw)) {
		p->name = p->linkage_name = raw;
		p->name_pending = true;
		return;
	}
	demangle_into(m, p, raw);
}

const char *ls_proc_name(const ls_module *cm, const struct ls_proc *cp)
{
	if (cp->name_pending) {
		/* logically const: the name is the one the table would have had */
		struct ls_proc *p = (struct ls_proc *)cp;
		demangle_into((ls_module *)cm, p, p->linkage_name);
		p->name_pending = false;
	}
	return cp->name;
}

void ls_procs_resolve_names(ls_module *m)
{
	if (m->procs.names_resolved)
		return;
	for (size_t i = 0; i < m->procs.nprocs; i++)
		ls_proc_name(m, &m->procs.procs[i]);
	m->procs.names_resolved = true;
}

static void add_dwarf_procs(struct builder *b, const struct sym *syms, size_t nsyms)
{
	ls_module *m = b->m;
	for (size_t i = 0; i < m->inl.nsubs; i++) {
		const struct ls_inl_sub *sub = &m->inl.subs[i];
		struct proto *pr = add_proto(b);
		struct ls_proc *p = &pr->p;
		p->entry = sub->entry;
		p->from_dwarf = true;
		p->die_node = sub->node;
		p->file = sub->node->decl_file;
		p->line = sub->node->decl_line;
		/* The entry range first (header: "[0] holds the entry"). */
		size_t e = 0;
		for (size_t k = 0; k < sub->nranges; k++)
			if (sub->entry >= sub->ranges[k].lo && sub->entry < sub->ranges[k].hi)
				e = k;
		for (size_t kk = 0; kk < sub->nranges; kk++) {
			size_t k = kk == 0 ? e : kk <= e ? kk - 1 : kk;
			uint64_t lo = sub->ranges[k].lo, hi = sub->ranges[k].hi;
			/* Clamp at the next function symbol that is not one of
			 * this procedure's own parts. */
			for (size_t j = sym_lower_bound(syms, nsyms, lo + 1); j < nsyms && syms[j].addr < hi; j++) {
				if (!syms[j].func)
					continue; /* labels inside functions are common */
				bool own = false;
				for (size_t q = 0; q < sub->nranges; q++)
					if (sub->ranges[q].lo == syms[j].addr)
						own = true;
				if (!own) {
					hi = syms[j].addr;
					break;
				}
			}
			add_range(b, pr, lo, hi);
		}
		/* Name: the best symbol at the entry (it tells clones apart:
		 * foo.part.0), as perf and llvm-symbolizer name it; without
		 * one, the DWARF name. */
		size_t j = sym_lower_bound(syms, nsyms, p->entry);
		if (j < nsyms && syms[j].addr == p->entry) {
			demangle_into(m, p, syms[j].name);
			if (!p->linkage_name && sub->node->linkage_name)
				p->linkage_name = sub->node->linkage_name;
		} else {
			p->name = sub->node->name;
			p->linkage_name = sub->node->linkage_name;
		}
		if (p->linkage_name == p->name)
			p->linkage_name = NULL;
		p->noreturn = sub->noreturn || ls_noreturn_name(m, p->name) ||
			      (p->linkage_name && ls_noreturn_name(m, p->linkage_name));
	}
}

/* A sorted view of the ranges built so far, to ask "is ADDR covered?". */
struct cover {
	ls_range *r;
	size_t n;
};

static int cmp_range(const void *a, const void *b)
{
	const ls_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The first range with hi > ADDR. */
static size_t cover_find(const struct cover *c, uint64_t addr)
{
	return LS_FIRST_ABOVE(c->r, c->n, hi, addr);
}

/* The ranges built so far, sorted, hi made a running maximum (cover_find). */
static struct cover cover_of_ranges(const ls_range *r, size_t n)
{
	struct cover c = { ls_xmalloc((n + 1) * sizeof *c.r), n };
	if (c.n) {
		memcpy(c.r, r, c.n * sizeof *c.r);
		ls_sort_runs(c.r, c.n, sizeof *c.r, cmp_range);
	}
	for (size_t i = 1; i < c.n; i++)
		if (c.r[i].hi < c.r[i - 1].hi)
			c.r[i].hi = c.r[i - 1].hi;
	return c;
}

static struct cover cover_of(const struct builder *b)
{
	return cover_of_ranges(b->ranges, b->nranges);
}

static void add_symbol_procs(struct builder *b, const struct sym *syms, size_t nsyms)
{
	ls_module *m = b->m;
	struct cover c = cover_of(b);

	uint64_t func_end = 0; /* end of the last sized function symbol */
	for (size_t i = 0; i < nsyms;) {
		size_t j = i;
		uint64_t size = 0;
		while (j < nsyms && syms[j].addr == syms[i].addr) {
			if (syms[j].size > size)
				size = syms[j].size;
			j++;
		}
		uint64_t lo = syms[i].addr;
		size_t k = cover_find(&c, lo);
		bool covered = k < c.n && c.r[k].lo <= lo;
		/* An untyped label inside a sized function is a label. */
		if (!syms[i].func && lo < func_end)
			covered = true;
		if (syms[i].func && size && lo + size > func_end)
			func_end = lo + size;
		if (!covered) {
			const struct ls_text *t = ls_text_find(m, lo);
			uint64_t end = t->addr + t->size;
			uint64_t hi = size ? lo + size : end;
			if (hi > end || hi < lo)
				hi = end;
			if (!size && j < nsyms && syms[j].addr < hi)
				hi = syms[j].addr; /* unsized: up to the next symbol */
			if (k < c.n && c.r[k].lo < hi)
				hi = c.r[k].lo;   /* never into a DWARF procedure */
			struct proto *pr = add_proto(b);
			struct ls_proc *p = &pr->p;
			p->entry = lo;
			name_from_symbol_later(m, p, syms[i].name);
			/* (a pending name is the symbol's: may_name_noreturn says why
			 * its demangled form cannot be one of the list) */
			p->noreturn = ls_noreturn_name(m, p->name) ||
			              (syms[i].name != p->name && ls_noreturn_name(m, syms[i].name));
			add_range(b, pr, lo, hi);
		}
		i = j;
	}
	free(c.r);
}

/* GOT slot -> symbol name, from the dynamic relocations.  NAME is the
 * ELF string table's (version and all) for JUMP_SLOT and GLOB_DAT, read
 * only while the procedures are built and interned for the slots a PLT
 * stub jumps through: libLLVM has 3,300 GLOB_DAT relocations and 480 PLT
 * slots.  An IRELATIVE slot's name is interned already. */
struct got_name {
	uint64_t got;
	const char *name;
};

static int cmp_got(const void *a, const void *b)
{
	const struct got_name *x = a, *y = b;
	return x->got < y->got ? -1 : x->got > y->got;
}

static void collect_got_names(ls_module *m, const struct sym *syms, size_t nsyms,
			      struct got_name **out, size_t *nout)
{
	struct got_name *g = NULL;
	size_t n = 0, cap = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL))
			continue;
		if (!(sh.sh_flags & SHF_ALLOC))
			continue; /* only the dynamic relocations */
		/* The symbols: .dynsym, or none (a static binary's IRELATIVE
		 * relocations point to .symtab but use no symbol). */
		Elf_Scn *symscn = elf_getscn(m->elf, sh.sh_link);
		GElf_Shdr symsh;
		Elf_Data *sd = NULL;
		if (symscn && gelf_getshdr(symscn, &symsh) && symsh.sh_type == SHT_DYNSYM)
			sd = elf_getdata(symscn, NULL);
		Elf_Data *rd = elf_getdata(scn, NULL);
		if (!rd || !sh.sh_entsize)
			continue;
		size_t nrel = sh.sh_size / sh.sh_entsize;
		bool is64 = gelf_getclass(m->elf) == ELFCLASS64;
		for (size_t i = 0; i < nrel; i++) {
			unsigned t = ls_rel_type_at(rd, sh.sh_type, is64, i);
			if (t == R_X86_64_RELATIVE || t == R_X86_64_64)
				continue;
			GElf_Rela r;
			if (!ls_rel_at(rd, sh.sh_type, is64, i, &r))
				break;
			uint64_t off = r.r_offset, info = r.r_info;
			unsigned type = GELF_R_TYPE(info);
			if (type == R_X86_64_IRELATIVE && sh.sh_type == SHT_RELA) {
				/* Static binaries call IFUNCs through PLT slots
				 * too: name them after the resolver's symbol, as
				 * objdump does with "*ABS*+0xADDR@plt". */
				uint64_t res = (uint64_t)r.r_addend;
				size_t k = sym_lower_bound(syms, nsyms, res);
				char buf[64];
				const char *name;
				if (k < nsyms && syms[k].addr == res) {
					name = syms[k].name;
				} else {
					snprintf(buf, sizeof buf, "*ABS*+0x%llx", (unsigned long long)res);
					name = ls_intern(&m->strings, buf);
				}
				g = ls_grow(g, &cap, n + 1, sizeof *g);
				g[n++] = (struct got_name){ off, name };
				continue;
			}
			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || !sd)
				continue;
			GElf_Sym s;
			if (!gelf_getsym(sd, (int)GELF_R_SYM(info), &s))
				continue;
			const char *name = elf_strptr(m->elf, symsh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			g = ls_grow(g, &cap, n + 1, sizeof *g);
			g[n++] = (struct got_name){ off, name };
		}
	}
	if (n)
		ls_sort_runs(g, n, sizeof *g, cmp_got);
	*out = g;
	*nout = n;
}

/* Each PLT slot jumps through its GOT slot ("jmp *disp(%rip)", ff 25,
 * possibly after endbr64 or a bnd prefix): name the slot after the
 * relocation of that GOT slot.  Scanning for the jumps, rather than
 * assuming a layout, covers lazy .plt (16-byte slots after a header), IBT's
 * .plt.sec, .plt.got and static binaries' 8-byte IRELATIVE slots alike;
 * the lookup in the relocations filters out byte patterns that merely look
 * like such a jump. */
static void add_plt_procs(struct builder *b, const struct sym *syms, size_t nsyms)
{
	ls_module *m = b->m;
	if (m->relocatable)
		return;
	struct got_name *g;
	size_t ng;
	collect_got_names(m, syms, nsyms, &g, &ng);
	if (!ng) {
		free(g);
		return;
	}
	for (size_t ti = 0; ti < m->ntext; ti++) {
		const struct ls_text *t = &m->text[ti];
		if (strncmp(t->name, ".plt", 4) != 0 && strcmp(t->name, ".iplt") != 0)
			continue;
		uint64_t entsize = 16;
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
			GElf_Shdr sh;
			if (gelf_getshdr(scn, &sh) && sh.sh_addr == t->addr &&
			    (sh.sh_flags & SHF_EXECINSTR)) {
				if (sh.sh_entsize >= 8 && sh.sh_entsize <= 32)
					entsize = sh.sh_entsize;
				break;
			}
		}
		/* Slot starts and names, in address order. */
		struct slot { uint64_t start; const char *name; } *slots = NULL;
		size_t nslots = 0, cap = 0;
		const uint8_t *d = t->data;
		for (uint64_t p = 0; p + 6 <= t->size; p++) {
			if (d[p] != 0xff || d[p + 1] != 0x25)
				continue;
			int32_t disp = (int32_t)((uint32_t)d[p + 2] | (uint32_t)d[p + 3] << 8 |
						 (uint32_t)d[p + 4] << 16 | (uint32_t)d[p + 5] << 24);
			uint64_t got = t->addr + p + 6 + (int64_t)disp;
			struct got_name key = { got, NULL };
			struct got_name *hit = bsearch(&key, g, ng, sizeof *g, cmp_got);
			if (!hit)
				continue;
			uint64_t start = p;
			if (p >= 4 && d[p - 4] == 0xf3 && d[p - 3] == 0x0f && d[p - 2] == 0x1e && d[p - 1] == 0xfa)
				start = p - 4; /* endbr64 */
			else if (p >= 1 && d[p - 1] == 0xf2)
				start = p - 1; /* bnd */
			slots = ls_grow(slots, &cap, nslots + 1, sizeof *slots);
			slots[nslots++] = (struct slot){ start, ls_intern_unversioned(&m->strings, hit->name) };
			p += 5;
		}
		for (size_t i = 0; i < nslots; i++) {
			uint64_t lo = slots[i].start;
			uint64_t hi = i + 1 < nslots ? slots[i + 1].start : t->size;
			if (hi - lo > entsize)
				hi = lo + entsize;
			char buf[600];
			struct proto *pr = add_proto(b);
			struct ls_proc *pp = &pr->p;
			char *dm = ls_demangle(slots[i].name);
			if (dm) {
				snprintf(buf, sizeof buf, "%s@plt", slots[i].name);
				pp->linkage_name = ls_intern(&m->strings, buf);
				snprintf(buf, sizeof buf, "%s@plt", dm);
				free(dm);
			} else {
				snprintf(buf, sizeof buf, "%s@plt", slots[i].name);
			}
			pp->name = ls_intern(&m->strings, buf);
			pp->entry = t->addr + lo;
			pp->is_plt = true;
			pp->noreturn = name_is_noreturn(slots[i].name) || name_is_noreturn(pp->name);
			add_range(b, pr, t->addr + lo, t->addr + hi);
		}
		free(slots);
	}
	free(g);
}

/* A procedure no symbol names, at [LO, HI): sub_LO. */
static void add_inferred(struct builder *b, uint64_t lo, uint64_t hi)
{
	/* "sub_%llx", without snprintf: once per FDE no symbol covers
	 * (61,000 in libLLVM) */
	char name[32] = "sub_", hex[16];
	size_t n = 0;
	for (uint64_t v = lo; n == 0 || v; v >>= 4)
		hex[n++] = "0123456789abcdef"[v & 15];
	for (size_t i = 0; i < n; i++)
		name[4 + i] = hex[n - 1 - i];
	name[4 + n] = 0;
	struct proto *pr = add_proto(b);
	pr->p.name = ls_intern(&b->m->strings, name);
	pr->p.entry = lo;
	pr->p.inferred = true;
	add_range(b, pr, lo, hi);
}

/* Where the next known procedure after ADDR starts (in its section), given
 * K, the first range of C that starts after ADDR. */
static uint64_t next_start_at(const ls_module *m, const struct cover *c, size_t k, uint64_t addr)
{
	const struct ls_text *t = ls_text_find(m, addr);
	uint64_t end = t ? t->addr + t->size : addr + 1;
	return k < c->n && c->r[k].lo < end ? c->r[k].lo : end;
}

/* Where the next known procedure after ADDR starts (in its section). */
static uint64_t next_start(const ls_module *m, const struct cover *c, uint64_t addr)
{
	return next_start_at(m, c, LS_FIRST_ABOVE(c->r, c->n, lo, addr), addr);
}

static bool covered(const struct cover *c, uint64_t addr)
{
	size_t k = cover_find(c, addr);
	return k < c->n && c->r[k].lo <= addr;
}

/* A directory of a cover by blocks of 2^shift bytes from its first lo:
 * first[p] is cover_find of block p's first address, so that the search
 * for an address in block p looks only from first[p] to first[p + 1]
 * (hi is a running maximum).  The call-target sweep asks for every e8,
 * e9 and eb byte of a binary without .symtab: the full binary search
 * over ~100,000 ranges (libLLVM) was 4.6% of a cold report of a
 * system-wide recording.  At most 2n + 2 entries.
 *
 * Before that search, a bit per 16 bytes from the same base: set when the
 * 16 bytes lie in one range of the cover.  Most of the targets asked
 * about are real calls, to a function's entry, 16-byte aligned: one bit
 * says covered (390 KB for libLLVM's 50 MB of code, where the directory's
 * search touched two or three cache lines of 2.3 MB). */
struct cover_dir {
	uint32_t *first; /* NULL: search the whole cover */
	uint64_t base;
	unsigned shift;
	size_t nblocks;
	uint64_t *whole; /* NULL: no bits (a cover over more than WHOLE_SPAN_MAX) */
	size_t nwhole;   /* 16-byte blocks in the bits */
};

enum { WHOLE_SHIFT = 4 };
#define WHOLE_SPAN_MAX ((uint64_t)1 << 30)

/* Sets bits [FROM, TO) of BITS, a word at a time: called for every range
 * of a cover (100,000 in libLLVM), where a bit at a time up to the next
 * word was 0.5% of a cold report of a system-wide recording. */
static void set_bits(uint64_t *bits, size_t from, size_t to)
{
	if (from >= to)
		return;
	size_t w = from >> 6, last = (to - 1) >> 6;
	uint64_t head = ~(uint64_t)0 << (from & 63), tail = ~(uint64_t)0 >> (63 - ((to - 1) & 63));
	if (w == last) {
		bits[w] |= head & tail;
		return;
	}
	bits[w++] |= head;
	for (; w < last; w++)
		bits[w] = ~(uint64_t)0;
	bits[last] |= tail;
}

/* The bits of the 16-byte blocks each inside one range of C (D's base). */
static void cover_dir_whole(const struct cover *c, struct cover_dir *d)
{
	uint64_t span = c->r[c->n - 1].hi - d->base;
	if (span > WHOLE_SPAN_MAX)
		return;
	d->nwhole = (size_t)(span >> WHOLE_SHIFT);
	d->whole = ls_xmalloc(((d->nwhole >> 6) + 1) * sizeof *d->whole);
	memset(d->whole, 0, ((d->nwhole >> 6) + 1) * sizeof *d->whole);
	size_t done = 0; /* ranges overlap: each bit once */
	for (size_t k = 0; k < c->n; k++) {
		size_t from = (size_t)((c->r[k].lo - d->base + (1u << WHOLE_SHIFT) - 1) >> WHOLE_SHIFT);
		size_t to = (size_t)((c->r[k].hi - d->base) >> WHOLE_SHIFT);
		if (from < done)
			from = done;
		if (from < to) {
			set_bits(d->whole, from, to);
			done = to;
		}
	}
}

static struct cover_dir cover_dir_of(const struct cover *c)
{
	struct cover_dir d = { NULL, 0, 4, 0, NULL, 0 };
	if (!c->n || c->n >= UINT32_MAX || c->r[c->n - 1].hi < c->r[0].lo)
		return d;
	d.base = c->r[0].lo;
	uint64_t span = c->r[c->n - 1].hi - d.base;
	while (d.shift < 63 && (span >> d.shift) > 2 * c->n)
		d.shift++;
	d.nblocks = (span >> d.shift) + 1;
	d.first = ls_xmalloc((d.nblocks + 1) * sizeof *d.first);
	size_t k = 0;
	for (size_t p = 0; p < d.nblocks; p++) { /* base + (p << shift) <= the last hi: no overflow */
		uint64_t a = d.base + ((uint64_t)p << d.shift);
		while (k < c->n && c->r[k].hi <= a)
			k++;
		d.first[p] = k;
	}
	d.first[d.nblocks] = c->n;
	cover_dir_whole(c, &d);
	return d;
}

static void cover_dir_free(struct cover_dir *d)
{
	free(d->first);
	free(d->whole);
}

/* cover_find, through the directory. */
static size_t cover_dir_find(const struct cover *c, const struct cover_dir *d, uint64_t addr)
{
	if (!d->first || addr < d->base || (addr - d->base) >> d->shift >= d->nblocks)
		return cover_find(c, addr);
	size_t p = (addr - d->base) >> d->shift, from = d->first[p], to = d->first[p + 1];
	return from + LS_FIRST_ABOVE(c->r + from, to - from, hi, addr);
}

/* Whether a range of C holds ADDR, through the directory. */
static bool cover_dir_holds(const struct cover *c, const struct cover_dir *d, uint64_t addr)
{
	uint64_t b = (addr - d->base) >> WHOLE_SHIFT;
	if (d->whole && addr >= d->base && b < d->nwhole && (d->whole[b >> 6] >> (b & 63) & 1))
		return true;
	size_t k = cover_dir_find(c, d, addr);
	return k < c->n && c->r[k].lo <= addr;
}

void ls_ranges_cover(const ls_range *r, size_t n, const uint64_t *addr, size_t naddr, bool *in)
{
	struct cover c = cover_of_ranges(r, n);
	struct cover_dir d = cover_dir_of(&c);
	for (size_t i = 0; i < naddr; i++)
		in[i] = cover_dir_holds(&c, &d, addr[i]);
	cover_dir_free(&d);
	free(c.r);
}

/* The 16-byte blocks of the code sections that hold a byte no range of a
 * cover holds: the only places a target that matters can be.  Most of
 * the e8, e9 and eb bytes reach_end asks about lie inside other
 * instructions, and their "targets" land anywhere, mostly outside the
 * code, where the cover's search was a binary search over all of it
 * (~100,000 ranges in libLLVM); the code the tables leave uncovered is
 * small (1.5% of libLLVM's), so one bit answers nearly every question. */
struct gap_bits {
	uint64_t *bits; /* NULL: no bits (code spans more than WHOLE_SPAN_MAX) */
	uint64_t base;  /* the first code section's address */
	size_t nblocks;
	bool any;       /* some byte of code is uncovered */
};

/* Sets the bits of the blocks of [LO, HI), inside G's span. */
static void gap_mark(struct gap_bits *g, uint64_t lo, uint64_t hi)
{
	g->any = true;
	if (g->bits)
		set_bits(g->bits, (size_t)((lo - g->base) >> WHOLE_SHIFT), (size_t)(((hi - 1 - g->base) >> WHOLE_SHIFT) + 1));
}

/* The gaps of C in the code sections of M, by the rule covered() applies
 * (hi is a running maximum: the first range above an address holds it or
 * nothing does). */
static struct gap_bits gap_bits_of(const ls_module *m, const struct cover *c)
{
	struct gap_bits g = { NULL, 0, 0, false };
	if (!m->ntext)
		return g;
	uint64_t end = m->text[m->ntext - 1].addr + m->text[m->ntext - 1].size;
	g.base = m->text[0].addr;
	if (end > g.base && end - g.base <= WHOLE_SPAN_MAX) {
		g.nblocks = (size_t)((end - g.base + (1u << WHOLE_SHIFT) - 1) >> WHOLE_SHIFT);
		g.bits = ls_xcalloc((g.nblocks >> 6) + 1, sizeof *g.bits);
	}
	size_t k = 0;
	for (size_t i = 0; i < m->ntext; i++) {
		const struct ls_text *t = &m->text[i];
		uint64_t a = t->addr, tend = t->addr + t->size;
		while (a < tend) {
			while (k < c->n && c->r[k].hi <= a)
				k++;
			if (k < c->n && c->r[k].lo <= a) {
				a = c->r[k].hi; /* covered up to there */
				continue;
			}
			uint64_t gap_end = k < c->n && c->r[k].lo < tend ? c->r[k].lo : tend;
			gap_mark(&g, a, gap_end);
			a = gap_end;
		}
	}
	return g;
}

/* False when no byte of code that G's cover leaves uncovered is at ADDR. */
static bool gap_bits_may_hold(const struct gap_bits *g, uint64_t addr)
{
	if (!g->any)
		return false;
	if (!g->bits)
		return true;
	uint64_t b = (addr - g->base) >> WHOLE_SHIFT;
	return addr >= g->base && b < g->nblocks && (g->bits[b >> 6] >> (b & 63) & 1);
}

/* A call target that matters to the procedures: in code, where none is. */
struct target_filter {
	const ls_module *m;
	const struct cover *c;
	struct cover_dir dir;
	struct gap_bits gaps;
};

static bool uncovered_code(const void *ctx, uint64_t target)
{
	const struct target_filter *f = ctx;
	return target && gap_bits_may_hold(&f->gaps, target) && !cover_dir_holds(f->c, &f->dir, target) &&
	       ls_text_find(f->m, target);
}

void ls_code_uncovered(const ls_module *m, const ls_range *r, size_t n, const uint64_t *addr, size_t naddr,
                       bool *out)
{
	struct cover c = cover_of_ranges(r, n);
	struct target_filter f = { m, &c, cover_dir_of(&c), gap_bits_of(m, &c) };
	for (size_t i = 0; i < naddr; i++)
		out[i] = uncovered_code(&f, addr[i]);
	cover_dir_free(&f.dir);
	free(f.gaps.bits);
	free(c.r);
}

/* Whether the module has a symbol table beyond its dynamic one (in the
 * file or in its debug file). */
static bool has_symtab(const ls_module *m)
{
	for (Elf_Scn *scn = NULL; m->elf && (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return true;
	}
	return m->dwarf_found;
}

/* Procedures no symbol names (proc_bounds.c): the .eh_frame FDEs whose
 * start no procedure covers; then, in a binary without a symbol table, the
 * targets of the direct calls and tail calls of all the code so found.
 * Each is clamped at the next procedure.  Returns how many. */
static size_t add_inferred_procs(struct builder *b)
{
	ls_module *m = b->m;
	size_t before = b->nprotos;
	ls_range *fde;
	size_t nfde = ls_fde_ranges(m, &fde);
	struct cover c = cover_of(b);
	/* an FDE some procedure starts inside describes that procedure
	 * (glibc's signal trampoline: its FDE starts one nop early, so that
	 * an unwinder looking up the return address - 1 finds it) */
	size_t in = 0, after = 0; /* covered and next_start, by cursors: both sorted by start */
	size_t nadd = 0; /* the FDEs to add, moved to the front of FDE */
	for (size_t i = 0; i < nfde; i++) {
		uint64_t lo = fde[i].lo;
		while (in < c.n && c.r[in].hi <= lo)
			in++;
		if (in < c.n && c.r[in].lo <= lo)
			continue;
		while (after < c.n && c.r[after].lo <= lo)
			after++;
		if (next_start_at(m, &c, after, lo) >= fde[i].hi)
			fde[nadd++] = fde[i];
	}
	/* their names at once (61,000 in libLLVM): no growing on the way */
	ls_strtab_reserve(&m->strings, nadd);
	reserve_protos(b, nadd);
	for (size_t i = 0; i < nadd; i++)
		add_inferred(b, fde[i].lo, fde[i].hi);
	free(fde);
	free(c.r);
	if (!has_symtab(m) && !m->relocatable) {
		/* only the targets no procedure covers matter: only the code
		 * that may call or jump to one is decoded (proc_bounds.c) */
		c = cover_of(b);
		uint64_t *t = NULL;
		struct target_filter tf = { m, &c, cover_dir_of(&c), gap_bits_of(m, &c) };
		/* no uncovered code: no target can matter, nothing to decode */
		struct ls_target_bits tb = { tf.gaps.bits, tf.gaps.base, tf.gaps.nblocks, WHOLE_SHIFT };
		size_t nt = tf.gaps.any ? ls_call_targets(m, c.r, c.n, uncovered_code, &tf, tf.gaps.bits ? &tb : NULL, &t)
		                        : 0;
		cover_dir_free(&tf.dir);
		free(tf.gaps.bits);
		for (size_t i = 0; i < nt; i++)
			if (!covered(&c, t[i]))
				add_inferred(b, t[i], next_start(m, &c, t[i]));
		free(t);
		free(c.r);
	}
	return b->nprotos - before;
}

/* The share of the code the procedures cover, for the note on stripped
 * binaries. */
static void note_inferred(ls_module *m, size_t ninferred)
{
	uint64_t code = 0, in = 0;
	for (size_t i = 0; i < m->ntext; i++)
		if (strncmp(m->text[i].name, ".plt", 4) != 0)
			code += m->text[i].size;
	for (size_t i = 0; i < m->procs.nindex; i++) {
		const struct ls_text *t = ls_text_find(m, m->procs.index[i].lo);
		if (t && strncmp(t->name, ".plt", 4) != 0)
			in += m->procs.index[i].hi - m->procs.index[i].lo;
	}
	ls_warn(&m->opt, "%s: no symbol table: %zu procedures, %zu of them found from .eh_frame and direct calls "
	        "(named sub_ADDR); they cover %.1f%% of its code", m->path, m->procs.nprocs, ninferred,
	        code ? 100.0 * (double)in / (double)code : 0.0);
}

/* A procedure being built, as the sort of them sees it: sorting these
 * rather than the 88-byte protos themselves (100,000 in libLLVM, merged
 * in a few passes) saves copying them to and fro. */
struct proto_key {
	uint64_t entry;
	uint32_t not_dwarf;
	uint32_t proto; /* index in the builder's protos: creation order */
};

static int cmp_proto_key(const void *a, const void *b)
{
	const struct proto_key *x = a, *y = b;
	if (x->entry != y->entry)
		return x->entry < y->entry ? -1 : 1;
	/* DWARF first, then in creation order. */
	if (x->not_dwarf != y->not_dwarf)
		return x->not_dwarf < y->not_dwarf ? -1 : 1;
	return x->proto < y->proto ? -1 : x->proto > y->proto;
}

/* The protos by entry, one per entry (duplicate CUs, aliases: the first
 * in that order); how many, in *N. */
static struct proto_key *sorted_protos(const struct builder *b, size_t *n)
{
	struct proto_key *k = ls_xmalloc((b->nprotos + 1) * sizeof *k);
	for (size_t i = 0; i < b->nprotos; i++)
		k[i] = (struct proto_key){ b->protos[i].p.entry, !b->protos[i].p.from_dwarf, (uint32_t)i };
	if (b->nprotos)
		ls_sort_runs(k, b->nprotos, sizeof *k, cmp_proto_key);
	size_t out = 0;
	for (size_t i = 0; i < b->nprotos; i++) {
		if (out && k[out - 1].entry == k[i].entry)
			continue;
		k[out++] = k[i];
	}
	*n = out;
	return k;
}

static int cmp_index(const void *a, const void *b)
{
	const struct ls_proc_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->proc < y->proc ? -1 : x->proc > y->proc;
}

/* DWARF ranges clamped here (or overlapping code the symbols give to
 * another, non-DWARF procedure) are still in the inline index: cut the
 * index to where the procedure at each address is a DWARF one, so that an
 * address's inline chain and its procedure never disagree. */
static void trim_inline_segments(ls_module *m)
{
	struct ls_inline_index *ix = &m->inl;
	const struct ls_procs *P = &m->procs;
	size_t out = 0, cap = ix->nsegs;
	struct ls_inl_seg *segs = ls_xmalloc((cap + 1) * sizeof *segs);
	size_t j = 0;
	for (size_t i = 0; i < ix->nsegs; i++) {
		struct ls_inl_seg s = ix->segs[i];
		while (j < P->nindex && P->index[j].hi <= s.lo)
			j++;
		/* The parts of S inside DWARF procedures' index entries. */
		for (size_t k = j; k < P->nindex && P->index[k].lo < s.hi; k++) {
			const struct ls_proc_range *r = &P->index[k];
			if (!P->procs[r->proc].from_dwarf)
				continue;
			uint64_t lo = r->lo > s.lo ? r->lo : s.lo, hi = r->hi < s.hi ? r->hi : s.hi;
			if (lo >= hi)
				continue;
			if (out && segs[out - 1].node == s.node && segs[out - 1].hi == lo) {
				segs[out - 1].hi = hi;
				continue;
			}
			segs = ls_grow(segs, &cap, out + 1, sizeof *segs);
			segs[out++] = (struct ls_inl_seg){ lo, hi, s.node };
		}
	}
	free(ix->segs);
	ix->segs = segs;
	ix->nsegs = out;
}

/* Makes the ni sorted index entries non-overlapping: at every address the
 * range that started last wins (a procedure's entry must find that
 * procedure; a symbol nested in a bigger one, like the kernel's thunks in
 * their array, owns its own bytes), by a sweep with a heap of the ranges
 * open at each point.  Returns the new count. */
static bool range_above(const struct ls_proc_range *a, const struct ls_proc_range *b)
{
	if (a->lo != b->lo)
		return a->lo > b->lo;
	return a->proc < b->proc; /* same start: the first procedure */
}

static size_t paint_index(struct ls_procs *P, size_t ni)
{
	struct ls_proc_range *in = P->index;
	struct ls_proc_range *out = ls_xmalloc((2 * ni + 1) * sizeof *out);
	const struct ls_proc_range **heap = ls_xmalloc((ni + 1) * sizeof *heap);
	size_t nheap = 0, n = 0, i = 0;
	uint64_t cur = 0;
	while (i < ni || nheap) {
		if (nheap == 0)
			cur = in[i].lo;
		while (i < ni && in[i].lo <= cur) {
			/* push */
			size_t h = nheap++;
			while (h > 0 && range_above(&in[i], heap[(h - 1) / 2])) {
				heap[h] = heap[(h - 1) / 2];
				h = (h - 1) / 2;
			}
			heap[h] = &in[i++];
		}
		while (nheap && heap[0]->hi <= cur) {
			/* pop */
			const struct ls_proc_range *v = heap[--nheap];
			size_t h = 0;
			for (;;) {
				size_t c = 2 * h + 1;
				if (c >= nheap)
					break;
				if (c + 1 < nheap && range_above(heap[c + 1], heap[c]))
					c++;
				if (!range_above(heap[c], v))
					break;
				heap[h] = heap[c];
				h = c;
			}
			if (nheap)
				heap[h] = v;
		}
		if (nheap == 0)
			continue;
		uint64_t next = heap[0]->hi;
		if (i < ni && in[i].lo < next)
			next = in[i].lo;
		if (n && out[n - 1].proc == heap[0]->proc && out[n - 1].hi == cur)
			out[n - 1].hi = next;
		else
			out[n++] = (struct ls_proc_range){ cur, next, heap[0]->proc };
		cur = next;
	}
	free(heap);
	free(P->index);
	P->index = out;
	return n;
}

/* Kernel code: bytes that no procedure covers (padding, and the bodies of
 * weak functions that another definition overrode, which lost their symbol
 * and their DWARF) belong to the procedure before them, as kallsyms counts
 * them (lockdep_assert_cpus_held+0x10/0x20 in a stack trace): extend the
 * last range before each gap up to the next procedure or the section end. */
static void fill_gaps_as_kallsyms(ls_module *m, struct ls_procs *P)
{
	for (size_t i = 0; i < P->nindex; i++) {
		struct ls_proc_range *r = &P->index[i];
		const struct ls_text *t = ls_text_find(m, r->hi - 1);
		if (!t)
			continue;
		uint64_t end = t->addr + t->size;
		if (i + 1 < P->nindex && P->index[i + 1].lo < end)
			end = P->index[i + 1].lo;
		if (end <= r->hi)
			continue;
		struct ls_proc *p = &P->procs[r->proc];
		for (size_t k = 0; k < p->nranges; k++)
			if (p->ranges[k].hi == r->hi) {
				p->ranges[k].hi = end;
				break;
			}
		r->hi = end;
	}
}

/* P->entries and their directory (procs.h), about one entry a block. */
static void entry_index(struct ls_procs *P)
{
	size_t n = P->nprocs;
	P->entries = ls_xmalloc((n + 1) * sizeof *P->entries);
	for (size_t i = 0; i < n; i++)
		P->entries[i] = P->procs[i].entry;
	if (n == 0 || n >= UINT32_MAX)
		return;
	uint64_t span = P->entries[n - 1] - P->entries[0];
	unsigned shift = 4;
	while (shift < 63 && (span >> shift) > n)
		shift++;
	size_t nblocks = (size_t)(span >> shift) + 1;
	uint32_t *first = ls_xmalloc((nblocks + 1) * sizeof *first);
	size_t k = 0;
	for (size_t b = 0; b < nblocks; b++) { /* entries[0] + (b << shift) <= the last entry: no overflow */
		uint64_t a = P->entries[0] + ((uint64_t)b << shift);
		while (k < n && P->entries[k] < a)
			k++;
		first[b] = (uint32_t)k;
	}
	first[nblocks] = (uint32_t)n;
	P->entry_first = first;
	P->entry_shift = shift;
	P->entry_nblocks = nblocks;
}

void ls_procs_build(ls_module *m)
{
	struct ls_procs *P = &m->procs;
	memset(P, 0, sizeof *P);
	struct builder b = { .m = m };
	size_t nsyms = 0;
	struct sym *syms = collect_symbols(m, &nsyms);

	add_dwarf_procs(&b, syms, nsyms);
	reserve_protos(&b, nsyms); /* at most one a symbol */
	add_symbol_procs(&b, syms, nsyms);
	add_plt_procs(&b, syms, nsyms);
	size_t ninferred = add_inferred_procs(&b);
	free(syms);

	size_t n;
	struct proto_key *order = sorted_protos(&b, &n);
	/* Lay the ranges out in procedure order in one array, owned through
	 * procs[0].ranges (see ls_procs_free). */
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += b.protos[order[i].proto].p.nranges;
	ls_range *all = ls_xmalloc((total + 1) * sizeof *all);
	P->procs = ls_xmalloc((n + 1) * sizeof *P->procs);
	P->nprocs = n;
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		const struct proto *pr = &b.protos[order[i].proto];
		struct ls_proc *p = &P->procs[i];
		*p = pr->p;
		memcpy(all + at, b.ranges + pr->first_range, p->nranges * sizeof *all);
		p->ranges = all + at;
		at += p->nranges;
	}
	if (n == 0)
		free(all);
	free(order);
	free(b.protos);
	free(b.ranges);
	entry_index(P);

	/* The address index: every range, sorted, overlaps cut off. */
	P->index = ls_xmalloc((total + 1) * sizeof *P->index);
	size_t ni = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < P->procs[i].nranges; k++)
			if (P->procs[i].ranges[k].hi > P->procs[i].ranges[k].lo)
				P->index[ni++] = (struct ls_proc_range){
					P->procs[i].ranges[k].lo, P->procs[i].ranges[k].hi, (uint32_t)i };
	if (ni)
		ls_sort_runs(P->index, ni, sizeof *P->index, cmp_index);
	size_t out = paint_index(P, ni);
	P->nindex = out;
	if (m->kernel)
		fill_gaps_as_kallsyms(m, P);
	if (m->inl.nsegs)
		trim_inline_segments(m);
	if (ninferred && !has_symtab(m))
		note_inferred(m, ninferred);
}

const struct ls_proc *ls_procs_find(const struct ls_procs *p, uint64_t addr)
{
	size_t i = LS_FIRST_ABOVE(p->index, p->nindex, hi, addr);
	return i < p->nindex && p->index[i].lo <= addr ? &p->procs[p->index[i].proc] : NULL;
}

const struct ls_proc *ls_procs_at_entry(const struct ls_procs *p, uint64_t addr)
{
	if (!p->entries)
		return NULL;
	size_t lo = 0, hi = p->nprocs;
	if (p->entry_first) {
		if (addr < p->entries[0] || (addr - p->entries[0]) >> p->entry_shift >= p->entry_nblocks)
			return NULL; /* before the first entry, or past the last */
		size_t b = (addr - p->entries[0]) >> p->entry_shift;
		lo = p->entry_first[b];
		hi = p->entry_first[b + 1];
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->entries[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nprocs && p->entries && p->entries[lo] == addr ? &p->procs[lo] : NULL;
}

void ls_procs_free(struct ls_procs *p)
{
	if (p->nprocs)
		free(p->procs[0].ranges);
	free(p->procs);
	free(p->index);
	free(p->entries);
	free(p->entry_first);
	memset(p, 0, sizeof *p);
}

/* "foo(int)" matches NAME "foo": users type the name without parameters. */
static bool name_matches(const char *full, const char *want, size_t wlen)
{
	if (!full)
		return false;
	if (strcmp(full, want) == 0)
		return true;
	return strncmp(full, want, wlen) == 0 && full[wlen] == '(';
}

/* A procedure as symbol lookups see it: from the procedure table, or, when
 * the structure came from the cache and the table was never built, from
 * the scope tree's proc scopes. */
struct proc_view {
	const char *name, *linkage_name;
	uint64_t entry, size;
};

static size_t proc_views(const ls_module *m, struct proc_view **out)
{
	size_t n = 0, cap = 0;
	struct proc_view *v = NULL;
	/* on demand, before the whole tree: the table, as the whole analysis has it */
	ls_analysis_want_indexes(m);
	ls_procs_resolve_names((ls_module *)m); /* (logically const: the names it would have had) */
	if (m->procs.nprocs) {
		v = ls_xmalloc(m->procs.nprocs * sizeof *v);
		for (size_t i = 0; i < m->procs.nprocs; i++) {
			const struct ls_proc *p = &m->procs.procs[i];
			v[n++] = (struct proc_view){ p->name, p->linkage_name, p->entry,
			                             p->ranges[0].hi - p->ranges[0].lo };
		}
	} else if (m->root) {
		for (const struct ls_scope *f = m->root->first_child; f; f = f->next_sibling)
			for (const struct ls_scope *p = f->first_child; p; p = p->next_sibling) {
				if (p->kind != LS_SCOPE_PROC || !p->nranges)
					continue;
				v = ls_grow(v, &cap, n + 1, sizeof *v);
				v[n++] = (struct proc_view){ p->name, p->linkage_name, p->ranges[0].lo,
				                             p->ranges[0].hi - p->ranges[0].lo };
			}
	}
	*out = v;
	return n;
}

int ls_module_symbol(const ls_module *m, const char *name, uint64_t *addr, uint64_t *size)
{
	if (!m || !name || !*name)
		return -1;
	/* The symbol table first, through its index: constant time, and the
	 * same answer with and without the cache. */
	uint64_t a0, s0;
	if (ls_symindex_find(m, name, &a0, &s0) == 0) {
		if (addr)
			*addr = a0;
		if (size)
			*size = s0;
		return 0;
	}
	size_t wlen = strlen(name);
	struct proc_view *views, found = { 0 };
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env))
		return -1; /* out of memory: none found */
	size_t nviews = proc_views(m, &views);
	ls_oom_pop(&g);
	const struct proc_view *best = NULL;
	/* Exact names first, then "without parameters". */
	for (int pass = 0; pass < 2 && !best; pass++)
		for (size_t i = 0; i < nviews && !best; i++) {
			const struct proc_view *p = &views[i];
			if (!p->name)
				continue; /* a nameless scope (a cache entry's) */
			if (pass == 0 ? (strcmp(p->name, name) == 0 ||
					 (p->linkage_name && strcmp(p->linkage_name, name) == 0))
				      : name_matches(p->name, name, wlen))
				best = p;
		}
	if (best) {
		found = *best;
		best = &found;
	}
	free(views);
	/* The symbol table knows aliases and data the procedures do not, and
	 * the exact entry of a procedure seen only through the scope tree. */
	const char *symname = name;
	if (best && !m->procs.nprocs) {
		symname = best->linkage_name ? best->linkage_name : best->name;
		wlen = strlen(symname);
	}
	if (m->dwmod) {
		int total = dwfl_module_getsymtab(m->dwmod);
		for (int i = 1; i < total; i++) {
			GElf_Sym s;
			GElf_Addr a;
			GElf_Word shndx;
			Elf *elf;
			Dwarf_Addr bias;
			const char *sn = dwfl_module_getsym_info(m->dwmod, i, &s, &a, &shndx, &elf, &bias);
			if (!sn || s.st_shndx == SHN_UNDEF)
				continue;
			size_t n = strcspn(sn, "@");
			if (n != wlen || memcmp(sn, symname, n) != 0)
				continue;
			if (best && m->procs.nprocs && best->entry != a - m->bias)
				continue;
			if (addr)
				*addr = a - m->bias;
			if (size)
				*size = s.st_size;
			return 0;
		}
	}
	if (!best)
		return -1;
	if (addr)
		*addr = best->entry;
	if (size)
		*size = best->size;
	return 0;
}
