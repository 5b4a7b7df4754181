/* unit-procs.c - procedures of code without a symbol table
 * (libloopscope/dwarf/proc_bounds.c, procs.c), on a fixture compiled now
 * with gcc (GNU ld) and clang (lld), stripped, and on the big stripped
 * binaries of the system (cc1plus, libLLVM, libc without its debug file);
 * and with clang and gold, which types .eh_frame SHT_X86_64_UNWIND as
 * clang's objects do (Debian's libLLVM and libclang-cpp are linked so).
 *
 *   - Every function of the fixture, as the unstripped binary's .symtab
 *     gives it (read here with libelf), is a procedure of the stripped one,
 *     entry and whole body: the .eh_frame FDEs give them, also when the
 *     section is SHT_X86_64_UNWIND (a function only called through a
 *     pointer has no other trace); a hand-written function without CFI is
 *     found from its direct call.
 *   - The call-target pass decodes only the code that may call or jump to a
 *     target that matters (ls_call_targets with a filter): its answer on
 *     those targets equals the full linear sweep's, for the filter the
 *     procedures use (code no FDE covers) and for a pseudo-random sample of
 *     all the targets (1 in 64, or 1 in 1024 on the biggest: every kind of
 *     call and jmp, behind prefixes too, checked against the decoder).
 *   - The procedure at an entry (ls_procs_at_entry, through its directory)
 *     is a plain scan's, at every entry and the bytes around it, on the
 *     fixtures, libc, cc1plus and libLLVM.
 *   - Noreturn facts on demand (cfg/noreturn.c: quick proofs on a prefix
 *     of the code, summaries, the least fixpoint over what they depend on)
 *     equal the whole analysis' fixpoint for every procedure, asked in
 *     address order and in reverse: the fixture (die() calls exit, die2()
 *     calls die(): neither returns, whatever the order), libc, bash.
 *   - On demand, the unwind recipes of a procedure a lookup has just
 *     analyzed come from the instructions its CFG build kept
 *     (cfg.c: keep_insns): every recipe of every procedure equals the one a
 *     module opened whole computes from a decode of its own (fixture, libc,
 *     bash).
 * Prints TAP. */
#include "cfg/cfg.h"
#include "dwarf/inline_tree.h"
#include "dwarf/linemap.h"
#include "dwarf/procs.h"
#include "elf/module.h"
#include "pipeline.h"
#include "support/base.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"
#include "unit-module.h"

static const char fixture[] =
	"volatile int sink;\n"
	"#define NI __attribute__((noinline))\n"
	"NI int leaf(int x) { sink = x; return x * 3; }\n"
	"/* only called through a pointer: no call names it */\n"
	"NI int by_pointer(int x) { sink = x + 1; return x ^ 5; }\n"
	"NI int caller(int x) { return leaf(x) + leaf(x + 1) * sink; }\n"
	"void exit(int);\n"
	"NI void die(int c) { sink = c; exit(c); }\n"
	"NI void die2(int c) { sink = c + 1; die(c + 2); sink = 0; }\n"
	"NI int checked(int x) { if (x < 0) die2(x); return leaf(x) + 1; }\n"
	"int (*volatile fp)(int) = by_pointer;\n"
	"/* no CFI, so no FDE: found from its call; then bytes that look like a\n"
	" * call and jumps behind prefixes (data16 call, rex jmp, bnd jmp) */\n"
	"__asm__(\".text\\n.globl nocfi\\n.type nocfi,@function\\nnocfi:\\n\\tlea 1(%rdi),%eax\\n\\tret\\n\"\n"
	"        \".size nocfi,.-nocfi\\n.globl odd_prefixes\\n.type odd_prefixes,@function\\nodd_prefixes:\\n\"\n"
	"        \"\\t.byte 0x66,0xe8,0x10,0x00\\n\\t.byte 0x48,0xe9,0,0,0,0\\n\\t.byte 0xf2,0xeb,0x00\\n\\tret\\n\"\n"
	"        \".size odd_prefixes,.-odd_prefixes\\n\");\n"
	"int nocfi(int);\n"
	"int main(int argc, char **argv) { return caller(argc) + fp(argc) + nocfi(argc) + checked(argc - 9) + (argv[0][0] == 0); }\n";

static const char *const fixture_funcs[] = { "leaf", "by_pointer", "caller", "nocfi", "die", "die2", "checked", "main" };

static void quiet_warn(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

/* The stages before the analysis, as the pipeline runs them, without any
 * debug file. */
static ls_module *load(const char *path)
{
	ls_error err;
	return unit_load(path, "/nonexistent", quiet_warn, NULL, &err);
}

/* NAME's value and size in PATH's .symtab (libelf, not loopscope). */
static bool symtab_func(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	bool found = false;
	for (Elf_Scn *scn = NULL; e && !found && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;
			if (gelf_getsym(d, (int)i, &s) && GELF_ST_TYPE(s.st_info) == STT_FUNC &&
			    (n = elf_strptr(e, sh.sh_link, s.st_name)) && strcmp(n, name) == 0) {
				*addr = s.st_value;
				*size = s.st_size;
				found = true;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return found;
}

/* The type of PATH's .eh_frame section (SHT_PROGBITS from GNU ld,
 * SHT_X86_64_UNWIND from lld), or 0. */
static unsigned eh_frame_type(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t shstrndx;
	unsigned type = 0;
	if (e && elf_getshdrstrndx(e, &shstrndx) == 0)
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
			GElf_Shdr sh;
			const char *n;
			if (gelf_getshdr(scn, &sh) && (n = elf_strptr(e, shstrndx, sh.sh_name)) && strcmp(n, ".eh_frame") == 0)
				type = sh.sh_type;
		}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return type;
}

/* Each function of the fixture (the unstripped binary's .symtab) is a
 * procedure of the stripped binary: entry, and its whole body. */
static void check_fixture_procs(const char *tag, const char *full, const char *stripped)
{
	unsigned type = eh_frame_type(stripped);
	ls_module *m = load(stripped);
	ok(m != NULL, "%s: the stripped binary loads (.eh_frame is %s)", tag,
	   type == SHT_X86_64_UNWIND ? "SHT_X86_64_UNWIND" : type == SHT_PROGBITS ? "SHT_PROGBITS" : "missing");
	if (!m)
		return;
	for (size_t i = 0; i < sizeof fixture_funcs / sizeof *fixture_funcs; i++) {
		uint64_t a = 0, s = 0;
		if (!symtab_func(full, fixture_funcs[i], &a, &s)) {
			ok(0, "%s: %s in the unstripped binary's .symtab", tag, fixture_funcs[i]);
			continue;
		}
		const struct ls_proc *p = ls_procs_at_entry(&m->procs, a);
		const struct ls_proc *q = s ? ls_procs_find(&m->procs, a + s - 1) : p;
		ok(p && p == q && p->inferred, "%s: %s [0x%llx, 0x%llx) is one procedure of the stripped binary (%s)", tag,
		   fixture_funcs[i], (unsigned long long)a, (unsigned long long)(a + s), p ? p->name : "none");
	}
	unit_unload(m);
}

/* Which call targets matter, for the comparison: code no FDE covers (what
 * the procedures ask), or a pseudo-random 1 in KEEP of all code. */
struct filter {
	const ls_module *m;
	const ls_range *fde;
	size_t nfde;
	uint64_t keep;
};

static struct ls_target_bits fde_gap_bits(const ls_module *m, const struct filter *f);

static bool not_in_fde(const void *ctx, uint64_t t)
{
	const struct filter *f = ctx;
	if (!ls_text_find(f->m, t))
		return false;
	size_t lo = 0, hi = f->nfde;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->fde[mid].lo <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* FDEs do not overlap in compiled code: the last one starting at or
	 * before T is the only one that may hold it */
	return !(lo && t < f->fde[lo - 1].hi);
}

static bool sampled(const void *ctx, uint64_t t)
{
	const struct filter *f = ctx;
	return ls_text_find(f->m, t) && ((t * 0x9e3779b97f4a7c15ull) >> 40) % f->keep == 0;
}

/* The targets of ALL that WANTED keeps equal those of SOME (both sorted). */
static bool same_wanted(const uint64_t *all, size_t nall, const uint64_t *some, size_t nsome, ls_target_filter wanted,
                        const struct filter *f, size_t *count, uint64_t *first_diff)
{
	size_t i = 0, j = 0;
	*count = 0;
	for (;;) {
		while (i < nall && !wanted(f, all[i]))
			i++;
		while (j < nsome && !wanted(f, some[j]))
			j++;
		if (i == nall || j == nsome)
			break;
		if (all[i] != some[j]) {
			*first_diff = all[i] < some[j] ? all[i] : some[j];
			return false;
		}
		(*count)++;
		i++;
		j++;
	}
	*first_diff = i < nall ? all[i] : j < nsome ? some[j] : 0;
	return i == nall && j == nsome;
}

/* The filtered pass against the full sweep over every procedure's code. */
/* The procedure whose entry is A, by a plain scan from *J (moved there). */
static const struct ls_proc *scan_entry(const struct ls_procs *P, size_t *j, uint64_t a)
{
	while (*j > 0 && P->procs[*j - 1].entry >= a)
		--*j;
	while (*j < P->nprocs && P->procs[*j].entry < a)
		++*j;
	return *j < P->nprocs && P->procs[*j].entry == a ? &P->procs[*j] : NULL;
}

/* ls_procs_at_entry through its directory against a plain scan of the
 * procedures: at every entry, the bytes after and before it, below the
 * first and past the last. */
static void check_at_entry(const char *tag, const ls_module *m)
{
	const struct ls_procs *P = &m->procs;
	size_t asked = 0, wrong = 0, j = 0;
	for (size_t i = 0; i < P->nprocs; i++) {
		uint64_t e = P->procs[i].entry, probes[] = { e - 1, e, e + 1 };
		for (size_t k = 0; k < 3; k++, asked++)
			wrong += ls_procs_at_entry(P, probes[k]) != scan_entry(P, &j, probes[k]);
	}
	uint64_t ends[] = { 0, ~(uint64_t)0 };
	for (size_t k = 0; k < 2; k++, asked++)
		wrong += ls_procs_at_entry(P, ends[k]) != scan_entry(P, &j, ends[k]);
	ok(P->nprocs && wrong == 0, "%s: the procedure at an entry, through the directory, is a plain scan's "
	   "(%zu addresses, %zu procedures, %zu wrong)", tag, asked, P->nprocs, wrong);
}

static void check_filtered_sweep(const char *tag, const char *path, uint64_t keep)
{
	ls_module *m = load(path);
	if (!m) {
		ok(0, "%s: %s loads", tag, path);
		return;
	}
	check_at_entry(tag, m);
	ls_range *code = ls_xmalloc((m->procs.nindex + 1) * sizeof *code);
	for (size_t i = 0; i < m->procs.nindex; i++)
		code[i] = (ls_range){ m->procs.index[i].lo, m->procs.index[i].hi };
	struct filter f = { .m = m, .keep = keep };
	f.nfde = ls_fde_ranges(m, (ls_range **)&f.fde);
	uint64_t *all, *some;
	size_t nall = ls_call_targets(m, code, m->procs.nindex, NULL, NULL, NULL, &all);
	static const struct { const char *what; ls_target_filter fn; } filters[] = {
		{ "targets no FDE covers", not_in_fde },
		{ "a sample of all targets", sampled },
	};
	struct ls_target_bits tb = fde_gap_bits(m, &f);
	for (size_t k = 0; k < 3; k++) {
		/* the third: the first filter told most answers by the bits */
		size_t nsome = ls_call_targets(m, code, m->procs.nindex, filters[k % 2].fn, &f, k == 2 ? &tb : NULL, &some);
		size_t count;
		uint64_t diff;
		bool same = same_wanted(all, nall, some, nsome, filters[k % 2].fn, &f, &count, &diff);
		char why[64] = "";
		if (!same)
			snprintf(why, sizeof why, ": first difference at 0x%llx", (unsigned long long)diff);
		ok(same && (k != 1 || count > 0),
		   "%s: decoding only what may reach them gives the full sweep's %s%s (%zu of %zu; %zu FDEs)%s", tag,
		   filters[k % 2].what, k == 2 ? ", the filter's bits asked first" : "", count, nall, f.nfde, why);
		free(some);
	}
	free(all);
	free((uint64_t *)tb.bits);
	free((void *)f.fde);
	free(code);
	unit_unload(m);
}

/* The bits of not_in_fde for ls_call_targets: a 16-byte block of the code
 * wholly inside one FDE has its bit clear (no target in it is wanted),
 * every other block its bit set. */
static struct ls_target_bits fde_gap_bits(const ls_module *m, const struct filter *f)
{
	uint64_t base = m->text[0].addr, end = m->text[m->ntext - 1].addr + m->text[m->ntext - 1].size;
	size_t nblocks = (size_t)((end - base + 15) >> 4);
	uint64_t *bits = malloc(((nblocks >> 6) + 1) * sizeof *bits);
	memset(bits, 0xff, ((nblocks >> 6) + 1) * sizeof *bits);
	for (size_t i = 0; i < f->nfde; i++) {
		if (f->fde[i].lo < base || f->fde[i].hi > end)
			continue;
		for (uint64_t b = (f->fde[i].lo - base + 15) >> 4; b < (f->fde[i].hi - base) >> 4; b++)
			bits[b >> 6] &= ~(1ull << (b & 63));
	}
	return (struct ls_target_bits){ bits, base, nblocks, 4 };
}

/* The noreturn facts of every procedure: the whole fixpoint's (all at
 * once), then on demand, one procedure at a time in address order or in
 * reverse.  FACTS: 1 never returns, 0 returns. */
static void facts_of(ls_module *m, bool on_demand, bool reverse, uint8_t *facts)
{
	ls_cfg_module_free(m);
	m->facts_on_demand = on_demand;
	size_t n = m->procs.nprocs;
	for (size_t k = 0; k < n; k++) {
		size_t i = reverse ? n - 1 - k : k;
		facts[i] = ls_cfg_call_noreturn(m, m->procs.procs[i].entry);
	}
}

/* On demand, in either order, the facts are the whole fixpoint's; with
 * FULL (the unstripped binary), die and die2 never return, checked does. */
static void check_facts(const char *tag, const char *path, const char *full)
{
	ls_module *m = load(path);
	if (!m) {
		ok(0, "%s: %s loads", tag, path);
		return;
	}
	size_t n = m->procs.nprocs, never = 0, same[2] = { 0, 0 };
	uint8_t *whole = ls_xcalloc(n + 1, 1), *dem = ls_xcalloc(n + 1, 1);
	facts_of(m, false, false, whole);
	for (size_t i = 0; i < n; i++)
		never += whole[i];
	for (int reverse = 0; reverse < 2; reverse++) {
		facts_of(m, true, reverse, dem);
		for (size_t i = 0, shown = 0; i < n; i++) {
			same[reverse] += dem[i] == whole[i];
			if (dem[i] != whole[i] && shown++ < 3)
				printf("# %s: %s at 0x%llx: %s on demand (%s), %s in the whole fixpoint\n", tag,
				       m->procs.procs[i].name, (unsigned long long)m->procs.procs[i].entry,
				       dem[i] ? "never returns" : "returns", reverse ? "reverse order" : "in order",
				       whole[i] ? "never returns" : "returns");
		}
	}
	ok(same[0] == n && same[1] == n,
	   "%s: noreturn facts on demand equal the whole fixpoint's (%zu and %zu of %zu procedures; %zu never return)",
	   tag, same[0], same[1], n, never);
	static const struct { const char *name; uint8_t never; } known[] = {
		{ "die", 1 }, { "die2", 1 }, { "checked", 0 }, { "leaf", 0 },
	};
	for (size_t k = 0; full && k < sizeof known / sizeof *known; k++) {
		uint64_t a = 0, s = 0;
		const struct ls_proc *p = symtab_func(full, known[k].name, &a, &s) ? ls_procs_at_entry(&m->procs, a) : NULL;
		size_t i = p ? (size_t)(p - m->procs.procs) : 0;
		ok(p && whole[i] == known[k].never && dem[i] == known[k].never, "%s: %s %s", tag, known[k].name,
		   known[k].never ? "never returns" : "returns");
	}
	free(whole);
	free(dem);
	unit_unload(m);
}

static bool same_recipe(const ls_unwind_recipe *a, const ls_unwind_recipe *b)
{
	return a->lo == b->lo && a->hi == b->hi && a->proc == b->proc && a->cfa_base == b->cfa_base &&
	       a->cfa_offset == b->cfa_offset && a->cfa_reg == b->cfa_reg && a->ra_offset == b->ra_offset &&
	       a->bp == b->bp && a->bp_offset == b->bp_offset && a->frame_pointer == b->frame_pointer &&
	       a->fp_offset == b->fp_offset && a->sp_known == b->sp_known && a->sp_offset == b->sp_offset &&
	       a->fp_chain == b->fp_chain && a->rule == b->rule && a->rule_addr == b->rule_addr;
}

static ls_module *open_module(const char *path, bool on_demand)
{
	ls_options opt;
	ls_options_init(&opt);
	opt.use_cache = 0;
	opt.on_demand = on_demand;
	opt.jobs = 1;
	opt.debug_file_path = "/nonexistent";
	opt.warn = quiet_warn;
	ls_error err;
	return ls_module_open(path, &opt, &err);
}

/* Each procedure looked up on demand, then its recipes, against the whole
 * analysis' recipes of the same procedure. */
static void check_kept_recipes(const char *tag, const char *path)
{
	ls_module *whole = open_module(path, false), *dem = open_module(path, true);
	if (!whole || !dem) {
		ok(0, "%s: %s opens whole and on demand", tag, path);
		if (whole)
			ls_module_close(whole);
		if (dem)
			ls_module_close(dem);
		return;
	}
	enum { CAP = 1 << 16 };
	ls_unwind_recipe *a = ls_xmalloc(CAP * sizeof *a), *b = ls_xmalloc(CAP * sizeof *b);
	size_t procs = 0, same = 0, recipes = 0;
	for (size_t i = 0; i < whole->procs.nprocs; i++) {
		uint64_t entry = whole->procs.procs[i].entry;
		if (!ls_lookup_proc(dem, entry))
			continue;
		size_t na = ls_unwind_recipes(dem, entry, a, CAP), nb = ls_unwind_recipes(whole, entry, b, CAP);
		bool eq = na == nb && na <= CAP;
		for (size_t k = 0; eq && k < na; k++)
			eq = same_recipe(&a[k], &b[k]);
		if (!eq && procs - same < 3)
			printf("# %s: %s at 0x%llx: %zu recipes on demand, %zu whole, not the same\n", tag,
			       whole->procs.procs[i].name, (unsigned long long)entry, na, nb);
		procs++;
		same += eq;
		recipes += na;
	}
	ok(procs > 0 && same == procs, "%s: recipes on demand (from the kept instructions) equal the whole analysis' "
	   "(%zu of %zu procedures, %zu recipes)", tag, same, procs, recipes);
	free(a);
	free(b);
	ls_module_close(whole);
	ls_module_close(dem);
}

/* The first line COMMAND prints, or "". */
static void first_line(const char *command, char *out, size_t size)
{
	out[0] = 0;
	FILE *p = popen(command, "r");
	if (!p)
		return;
	if (fgets(out, (int)size, p))
		out[strcspn(out, "\n")] = 0;
	pclose(p);
}

static void build_fixtures(const char *dir)
{
	char src[512];
	snprintf(src, sizeof src, "%s/procs.c", dir);
	FILE *f = fopen(src, "w");
	if (!f) {
		ok(0, "the fixture is written in %s", dir);
		return;
	}
	fputs(fixture, f);
	fclose(f);
	static const struct { const char *cc, *flags; } builds[] = {
		{ "gcc", "-O2" },
		{ "clang", "-O2 -fuse-ld=lld" },
		{ "clang", "-O2 -fuse-ld=gold" },
	};
	for (size_t i = 0; i < sizeof builds / sizeof *builds; i++) {
		char tag[128], full[600], stripped[600], cmd[2400];
		snprintf(tag, sizeof tag, "%s %s, stripped", builds[i].cc, builds[i].flags);
		snprintf(full, sizeof full, "%s/procs-%zu", dir, i);
		snprintf(stripped, sizeof stripped, "%s/procs-%zu-stripped", dir, i);
		snprintf(cmd, sizeof cmd, "%s %s -o %s %s >/dev/null 2>&1 && strip --strip-all -o %s %s", builds[i].cc,
		         builds[i].flags, full, src, stripped, full);
		if (system(cmd) != 0) {
			printf("ok %d # SKIP %s: does not build here (no %s, lld or gold?)\n", ++test_no, tag, builds[i].cc);
			continue;
		}
		check_fixture_procs(tag, full, stripped);
		check_filtered_sweep(tag, stripped, 1);
		check_facts(tag, stripped, full);
		check_kept_recipes(tag, stripped);
		unlink(full);
		unlink(stripped);
	}
	unlink(src);
}

/* Each of the N ranges R's ends and the addresses one below them into
 * ADDR: how many (4 N). */
static size_t range_ends(const ls_range *r, size_t n, uint64_t *addr)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		addr[k++] = r[i].lo;
		addr[k++] = r[i].lo - 1;
		addr[k++] = r[i].hi;
		addr[k++] = r[i].hi - 1;
	}
	return k;
}

/* The call-target filter's cover (ls_ranges_cover: sorted ranges, a
 * running maximum of their ends, a directory of blocks) against a plain
 * scan of the ranges, on ranges that overlap, nest, are empty, lie
 * far apart (a kernel-like high address beside a low one) or are few, at
 * every range's ends and one byte around them and at random addresses. */
static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 11;
}

static void check_cover_directory(void)
{
	static const struct { const char *what; size_t n; uint64_t base, span, len; } sets[] = {
		{ "no ranges", 0, 0x1000, 0x1000, 16 },
		{ "one range", 1, 0x1000, 0x100, 64 },
		{ "dense procedures with padding", 5000, 0x400000, 0x200000, 300 },
		{ "overlapping and nested", 3000, 0x10000, 0x40000, 4000 },
		{ "sparse in a wide span", 200, 0x1000, 1ull << 40, 1 << 16 },
		{ "by the top of the address space", 500, 0xffffffff81000000ull, 0x1000000, 200 },
	};
	uint64_t x = 23;
	for (size_t s = 0; s < sizeof sets / sizeof *sets; s++) {
		size_t n = sets[s].n, naddr = 4 * n + 2000;
		ls_range *r = calloc(n + 1, sizeof *r);
		uint64_t *addr = calloc(naddr, sizeof *addr);
		bool *in = calloc(naddr, sizeof *in);
		for (size_t i = 0; i < n; i++) {
			r[i].lo = sets[s].base + lcg(&x) % sets[s].span;
			r[i].hi = r[i].lo + (i % 17 == 16 ? 0 : 1 + lcg(&x) % sets[s].len); /* some empty */
		}
		size_t k = range_ends(r, n, addr);
		while (k < naddr)
			addr[k++] = sets[s].base - 64 + lcg(&x) % (sets[s].span + sets[s].len + 128);
		ls_ranges_cover(r, n, addr, naddr, in);
		size_t wrong = 0, held = 0;
		for (size_t i = 0; i < naddr; i++) {
			bool want = false;
			for (size_t j = 0; j < n && !want; j++)
				want = r[j].lo <= addr[i] && addr[i] < r[j].hi;
			wrong += in[i] != want;
			held += want;
		}
		ok(wrong == 0, "the call-target filter's cover, %s: %zu of %zu addresses held, %zu answers differ from a plain scan",
		   sets[s].what, held, naddr, wrong);
		free(r);
		free(addr);
		free(in);
	}
}

/* The call-target filter's bits of the uncovered code (ls_code_uncovered:
 * whether an address is in a code section and outside every range)
 * against a plain scan, with code sections apart and side by side, ranges
 * that overlap, nest, run past a section or cover it all, at every range's
 * and section's ends, one byte around them and at random addresses. */
static void check_uncovered_code(void)
{
	static const struct { const char *what; size_t n; uint64_t span, len; } sets[] = {
		{ "no ranges", 0, 0x3000, 16 },
		{ "dense procedures with padding", 4000, 0x300000, 300 },
		{ "overlapping and nested", 2000, 0x300000, 4000 },
		{ "all covered", 1, 0, 0 },
	};
	struct ls_text text[] = {
		{ 0x401000, 0x1000, NULL, ".plt" }, { 0x402000, 0x1ff003, NULL, ".text" }, { 0x700010, 0x5, NULL, ".fini" },
	};
	ls_module *m = calloc(1, sizeof *m);
	m->text = text;
	m->ntext = sizeof text / sizeof *text;
	uint64_t x = 34, lo = text[0].addr, hi = text[2].addr + text[2].size;
	for (size_t s = 0; s < sizeof sets / sizeof *sets; s++) {
		size_t n = sets[s].n, naddr = 4 * n + 8 * m->ntext + 20000;
		ls_range *r = calloc(n + 1, sizeof *r);
		uint64_t *addr = calloc(naddr, sizeof *addr);
		bool *out = calloc(naddr, sizeof *out);
		for (size_t i = 0; i < n; i++) {
			r[i].lo = sets[s].span ? lo - 64 + lcg(&x) % sets[s].span : lo;
			r[i].hi = sets[s].span ? r[i].lo + (i % 17 == 16 ? 0 : 1 + lcg(&x) % sets[s].len) : hi;
		}
		size_t k = range_ends(r, n, addr);
		for (size_t i = 0; i < m->ntext; i++)
			for (int d = -2; d < 2; d++) {
				addr[k++] = text[i].addr + (uint64_t)d;
				addr[k++] = text[i].addr + text[i].size + (uint64_t)d;
			}
		for (; k < naddr; k++) /* (an eighth far away, the rest around the code) */
			addr[k] = k % 8 == 0 ? lcg(&x) << 11 : lo - 64 + lcg(&x) % (hi - lo + 128);
		ls_code_uncovered(m, r, n, addr, naddr, out);
		size_t wrong = 0, held = 0;
		for (size_t i = 0; i < naddr; i++) {
			bool want = false;
			for (size_t t = 0; t < m->ntext && !want; t++)
				want = addr[i] && text[t].addr <= addr[i] && addr[i] - text[t].addr < text[t].size;
			for (size_t j = 0; j < n && want; j++)
				want = !(r[j].lo <= addr[i] && addr[i] < r[j].hi);
			wrong += out[i] != want;
			held += want;
		}
		ok(wrong == 0, "the call-target filter's uncovered code, %s: %zu of %zu addresses uncovered, %zu answers "
		   "differ from a plain scan", sets[s].what, held, naddr, wrong);
		free(r);
		free(addr);
		free(out);
	}
	free(m);
}

/* On demand, a symbol-only procedure's C++ name is demangled when first
 * asked for: before, none is; after, every name, linkage name and
 * noreturn mark equals the eager table's (the whole analysis'). */
static void check_lazy_names(const char *tag, const char *path)
{
	ls_error err;
	ls_module *eager = load(path), *lazy = ls_xcalloc(1, sizeof *lazy);
	lazy->fd = -1;
	ls_options_init(&lazy->opt);
	lazy->opt.debug_file_path = "/nonexistent";
	lazy->opt.warn = quiet_warn;
	lazy->opt.on_demand = true;
	if (!eager || ls_elf_open(lazy, path, &err) < 0 || ls_pipeline_indexes(lazy, &err) < 0) {
		ok(0, "%s: %s loads, eager and on demand", tag, path);
		unit_unload(lazy);
		if (eager)
			unit_unload(eager);
		return;
	}
	size_t n = eager->procs.nprocs, pending = 0, differ = 0;
	for (size_t i = 0; i < lazy->procs.nprocs; i++)
		pending += lazy->procs.procs[i].name_pending;
	for (size_t i = 0; i < n && lazy->procs.nprocs == n; i++) {
		const struct ls_proc *a = &eager->procs.procs[i], *b = &lazy->procs.procs[i];
		const char *name = ls_proc_name(lazy, b);
		bool same = a->entry == b->entry && !strcmp(a->name, name) && a->noreturn == b->noreturn &&
		            !a->linkage_name == !b->linkage_name &&
		            (!a->linkage_name || !strcmp(a->linkage_name, b->linkage_name));
		if (!same && differ++ < 3)
			printf("# %s: %s / %s\n", tag, a->name, name);
	}
	ok(lazy->procs.nprocs == n && pending > n / 10 && differ == 0,
	   "%s: %zu of %zu names left to demangle on demand; asked for, all equal the eager table's (%zu differ)",
	   tag, pending, n, differ);
	unit_unload(lazy);
	unit_unload(eager);
}

int main(void)
{
	elf_version(EV_CURRENT);
	setenv("DEBUGINFOD_URLS", "", 1);
	char dir[] = "/tmp/ls-unit-procs.XXXXXX";
	if (!mkdtemp(dir)) {
		printf("1..0 # SKIP cannot make a temporary directory\n");
		return 0;
	}
	build_fixtures(dir);
	rmdir(dir);
	check_cover_directory();
	check_uncovered_code();

	/* Big stripped binaries: GNU ld's cc1plus, lld's libLLVM, and libc
	 * (asm without CFI) without its debug file. */
	char cc1plus[512], llvm[512];
	first_line("gcc -print-prog-name=cc1plus 2>/dev/null", cc1plus, sizeof cc1plus);
	first_line("ls /usr/lib/x86_64-linux-gnu/libLLVM-*.so.1 2>/dev/null", llvm, sizeof llvm);
	const struct { const char *tag, *path; uint64_t keep; } big[] = {
		{ "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", 64 },
		{ "cc1plus", cc1plus, 1024 },
		{ "libLLVM", llvm, 1024 },
	};
	static const char *const facts_on[] = { "/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/bash" };
	for (size_t i = 0; i < sizeof facts_on / sizeof *facts_on; i++) {
		if (access(facts_on[i], R_OK) != 0)
			printf("ok %d # SKIP no %s here\n", ++test_no, facts_on[i]);
		else {
			check_facts(facts_on[i], facts_on[i], NULL);
			check_kept_recipes(facts_on[i], facts_on[i]);
		}
	}
	for (size_t i = 0; i < sizeof big / sizeof *big; i++) {
		if (!big[i].path[0] || access(big[i].path, R_OK) != 0) {
			printf("ok %d # SKIP no %s here\n", ++test_no, big[i].tag);
			continue;
		}
		check_filtered_sweep(big[i].tag, big[i].path, big[i].keep);
		if (i > 0) /* the C++ ones */
			check_lazy_names(big[i].tag, big[i].path);
	}
	return done_testing();
}
