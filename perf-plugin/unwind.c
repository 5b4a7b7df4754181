/* unwind.c - user call chains of `--call-graph dwarf` samples, unwound over
 * the registers and the stack copy perf saved with each sample.
 *
 * Each frame's rule comes from the binary's CFI (.eh_frame, else
 * .debug_frame, read with libdw's dwarf_cfi_addrframe); where there is
 * none, or it is a form this unwinder does not evaluate, from
 * libloopscope's unwind recipes (binary analysis: loopscope.h,
 * ls_unwind_recipe_at) - hand-written assembly, stripped or wrong
 * .eh_frame.  The frames a recipe found are marked (PL_HOW_RECIPE) and
 * the views say so.  Rules are kept per (binary, address): a recording
 * visits the same few thousand addresses again and again, so unwinding a
 * sample costs a hash probe and two reads of the stack copy per frame.
 *
 * It also measures what the recording needed (pl_unwind_stats): how deep
 * into the stack copy the samples that reached their outermost frame read,
 * and how many ran off its end - `perf loops record` sizes the next
 * recording's copy from that.  x86-64 only (perf's register layout).
 */
#include "attribute.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* perf's x86-64 register numbers (arch/x86/include/uapi/asm/perf_regs.h) */
enum { PR_AX, PR_BX, PR_CX, PR_DX, PR_SI, PR_DI, PR_BP, PR_SP, PR_IP, PR_FLAGS,
       PR_CS, PR_SS, PR_DS, PR_ES, PR_FS, PR_GS, PR_R8, PR_R9, PR_R10, PR_R11,
       PR_R12, PR_R13, PR_R14, PR_R15 };

/* DWARF register n (0..16) of x86-64 is perf register dwarf_to_perf[n]. */
static const int dwarf_to_perf[17] = {
	PR_AX, PR_DX, PR_CX, PR_BX, PR_SI, PR_DI, PR_BP, PR_SP,
	PR_R8, PR_R9, PR_R10, PR_R11, PR_R12, PR_R13, PR_R14, PR_R15, PR_IP,
};

enum { DW_SP = 7, DW_BP = 6 };

/* One frame's rule: how to get the caller's SP (the CFA), return address
 * and BP from this frame's registers. */
enum { RULE_NONE, RULE_CFI, RULE_RECIPE };
enum { BP_SAME, BP_AT_CFA, BP_AT_BP, BP_UNDEFINED };
struct rule {
	uint8_t src;       /* RULE_* */
	uint8_t cfa_reg;   /* DWARF register */
	uint8_t deref;     /* CFA = *(reg + off) */
	uint8_t outermost; /* the return address is undefined: the last frame */
	uint8_t bp;        /* BP_* */
	int32_t cfa_off, ra_off, bp_off;
};

struct slot {
	uint64_t key;      /* (dso index + 1) << 48 ^ link address; 0: empty */
	struct rule r;
};

/* A binary's CFI, opened on its first frame. */
struct cfi {
	int tried, fd;
	Elf *elf;
	Dwarf *dw;
	Dwarf_CFI *eh, *df;
	Elf *by_segment;     /* the .eh_frame read through PT_GNU_EH_FRAME (eh_cfi) */
	void *image;         /* its private mapping of the file */
	size_t image_size;
};

struct pl_unwinder {
	struct slot *slots;
	size_t nslots, used;
	struct cfi *cfi;   /* by dso index */
	size_t ncfi;
	pl_unwind_stats st;
	uint64_t stack_limit; /* $PERF_LOOPS_STACK_LIMIT, or 0 */
	uint64_t *depths;  /* per sample that reached its last frame: bytes of the copy it needed */
	size_t ndepths, cap_depths;
};

static struct pl_unwinder *unwinder(struct pl_attrib *a)
{
	if (!a->uw) {
		a->uw = pl_xcalloc(1, sizeof *a->uw);
		a->uw->nslots = 1 << 14;
		/* $PERF_LOOPS_STACK_LIMIT=N: unwind as if perf had copied only N
		 * bytes of each stack (to compare stack sizes on one recording) */
		const char *lim = getenv("PERF_LOOPS_STACK_LIMIT");
		a->uw->stack_limit = lim ? strtoull(lim, NULL, 0) : 0;
		a->uw->slots = pl_xcalloc(a->uw->nslots, sizeof *a->uw->slots);
	}
	return a->uw;
}

void pl_unwind_end(struct pl_attrib *a)
{
	struct pl_unwinder *uw = a->uw;
	if (!uw)
		return;
	for (size_t i = 0; i < uw->ncfi; i++) {
		struct cfi *c = &uw->cfi[i];
		if (c->eh)
			dwarf_cfi_end(c->eh);
		if (c->dw)
			dwarf_end(c->dw);
		if (c->by_segment)
			elf_end(c->by_segment);
		if (c->image)
			munmap(c->image, c->image_size);
		if (c->elf)
			elf_end(c->elf);
		if (c->fd >= 0 && c->tried)
			close(c->fd);
	}
	free(uw->cfi);
	free(uw->slots);
	free(uw->depths);
	free(uw);
	a->uw = NULL;
}

/* ---- rules ----------------------------------------------------------------- */

/* Whether ELF's .eh_frame_hdr comes after its .eh_frame in the section
 * table (lld's order: libLLVM, libclang-cpp). */
static int hdr_after_eh_frame(Elf *elf)
{
	size_t shstrndx, eh = 0, hdr = 0;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) && !(eh && hdr)) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (name && !eh && !strcmp(name, ".eh_frame"))
			eh = elf_ndxscn(scn);
		else if (name && !hdr && !strcmp(name, ".eh_frame_hdr"))
			hdr = elf_ndxscn(scn);
	}
	return eh && hdr && hdr > eh;
}

/* The binary's .eh_frame CFI.  libdw 0.188 finds .eh_frame_hdr's
 * binary-search table by section name only if that section comes first;
 * in lld's order it parses the FDEs one by one up to the address, each
 * put in a tree: 25 us a lookup on libLLVM rather than 2, a tenth of a
 * first system-wide report.  Without section names libdw takes the
 * PT_GNU_EH_FRAME segment, table included: for such a binary the CFI is
 * read from a private mapping of it whose e_shstrndx is 0 (one page
 * copied). */
static Dwarf_CFI *eh_cfi(struct cfi *c)
{
	GElf_Ehdr eh;
	struct stat st;
	if (getenv("PERF_LOOPS_CFI_BY_NAME") || /* (the tests compare both) */
	    !hdr_after_eh_frame(c->elf) || !gelf_getehdr(c->elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    fstat(c->fd, &st) < 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr))
		return dwarf_getcfi_elf(c->elf);
	void *image = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, c->fd, 0);
	if (image == MAP_FAILED)
		return dwarf_getcfi_elf(c->elf);
	((Elf64_Ehdr *)image)->e_shstrndx = SHN_UNDEF;
	c->image = image;
	c->image_size = (size_t)st.st_size;
	c->by_segment = elf_memory(image, c->image_size);
	Dwarf_CFI *cfi = c->by_segment ? dwarf_getcfi_elf(c->by_segment) : NULL;
	if (cfi)
		return cfi;
	if (c->by_segment)
		elf_end(c->by_segment);
	munmap(image, c->image_size);
	c->by_segment = c->image = NULL;
	return dwarf_getcfi_elf(c->elf);
}

static struct cfi *cfi_of(struct pl_attrib *a, struct pl_unwinder *uw, pl_dso *dso)
{
	if (dso->index >= uw->ncfi) {
		size_t n = dso->index + 16;
		uw->cfi = pl_xrealloc(uw->cfi, n * sizeof *uw->cfi);
		memset(uw->cfi + uw->ncfi, 0, (n - uw->ncfi) * sizeof *uw->cfi);
		uw->ncfi = n;
	}
	struct cfi *c = &uw->cfi[dso->index];
	if (c->tried)
		return c;
	c->tried = 1;
	c->fd = -1;
	const char *path = pl_attrib_file(a, dso);
	if (!path || (c->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return c;
	elf_version(EV_CURRENT);
	c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
	if (!c->elf)
		return c;
	c->eh = eh_cfi(c);
	if (c->eh && c->by_segment && a->rep->opt->verbose)
		fprintf(stderr, "perf-loops: %s: .eh_frame_hdr after .eh_frame: its CFI read through PT_GNU_EH_FRAME, "
		        "for the search table\n", path);
	c->dw = dwarf_begin_elf(c->elf, DWARF_C_READ, NULL);
	c->df = c->dw ? dwarf_getcfi(c->dw) : NULL;
	return c;
}

/* CFA + N from a register rule's location expression. */
static int cfa_offset_of(const Dwarf_Op *ops, size_t n, int32_t *off)
{
	if (n < 1 || ops[0].atom != DW_OP_call_frame_cfa)
		return 0;
	if (n == 1)
		*off = 0;
	else if (n == 2 && ops[1].atom == DW_OP_plus_uconst)
		*off = (int32_t)ops[1].number;
	else if (n == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus)
		*off = (int32_t)(int64_t)ops[1].number;
	else
		return 0;
	return 1;
}

/* A CFA expression in terms of SP at PC: the PLT's
 * rsp + 8 + ((rip & 15) >= 11) * 8.  Values are COEF * rsp + K; true when
 * it comes to rsp + *OFF. */
static int sp_expression(const Dwarf_Op *ops, size_t n, uint64_t pc, int32_t *off)
{
	int64_t coef[8], k[8];
	size_t sp = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t a = ops[i].atom;
		if (sp >= 8)
			return 0;
		if (a == DW_OP_breg7 || a == DW_OP_breg16) {
			coef[sp] = a == DW_OP_breg7;
			k[sp++] = (int64_t)ops[i].number + (a == DW_OP_breg16 ? (int64_t)pc : 0);
		} else if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
			coef[sp] = 0;
			k[sp++] = a - DW_OP_lit0;
		} else if (sp >= 2 && (a == DW_OP_plus || a == DW_OP_minus)) {
			int m = a == DW_OP_plus ? 1 : -1;
			coef[sp - 2] += m * coef[sp - 1];
			k[sp - 2] += m * k[sp - 1];
			sp--;
		} else if (sp >= 2 && !coef[sp - 1] && !coef[sp - 2] && (a == DW_OP_and || a == DW_OP_ge || a == DW_OP_shl)) {
			int64_t x = k[sp - 2], y = k[sp - 1];
			k[sp - 2] = a == DW_OP_and ? (x & y) : a == DW_OP_ge ? x >= y : (int64_t)((uint64_t)x << (y & 63));
			sp--;
		} else {
			return 0;
		}
	}
	if (sp != 1 || coef[0] != 1 || k[0] < INT32_MIN || k[0] > INT32_MAX)
		return 0;
	*off = (int32_t)k[0];
	return 1;
}

/* The CFI's rule at PC, in the forms evaluated here: CFA = reg + N, the
 * return address at CFA + N or undefined, BP the same, at CFA + N or
 * undefined.  0, or -1 (no FDE, or another form). */
static int cfi_rule(Dwarf_CFI *cfi, uint64_t pc, struct rule *r)
{
	Dwarf_Frame *fr;
	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &fr) != 0)
		return -1;
	Dwarf_Op *ops, mem[3];
	size_t n;
	int rc = -1;
	memset(r, 0, sizeof *r);
	r->src = RULE_CFI;
	if (dwarf_frame_cfa(fr, &ops, &n) != 0 || n < 1)
		goto out;
	if (n > 1) {
		if (!sp_expression(ops, n, pc, &r->cfa_off))
			goto out; /* a signal frame, DRAP: the recipes' */
		r->cfa_reg = DW_SP;
	} else if (ops[0].atom == DW_OP_bregx) {
		r->cfa_reg = (uint8_t)ops[0].number;
		r->cfa_off = (int32_t)(int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg16) {
		r->cfa_reg = (uint8_t)(ops[0].atom - DW_OP_breg0);
		r->cfa_off = (int32_t)(int64_t)ops[0].number;
	} else {
		goto out;
	}
	if (dwarf_frame_register(fr, 16, mem, &ops, &n) != 0)
		goto out;
	if (n == 0 && ops)
		r->outermost = 1; /* undefined: _start, a thread's first frame */
	else if (!cfa_offset_of(ops, n, &r->ra_off))
		goto out;
	r->bp = BP_UNDEFINED;
	if (dwarf_frame_register(fr, DW_BP, mem, &ops, &n) == 0) {
		if (n == 0 && !ops)
			r->bp = BP_SAME;
		else if (n > 0 && cfa_offset_of(ops, n, &r->bp_off))
			r->bp = BP_AT_CFA;
	}
	rc = r->cfa_reg <= 16 ? 0 : -1;
out:
	free(fr);
	return rc;
}

/* Whether frame-pointer chains pass through the frame at LINK in DSO's
 * binary, from its CFI: BP points at the caller's saved BP with the
 * return address above it (CFA = BP + 16, the caller's BP at CFA - 16),
 * what the recipes call fp_chain.  1 or 0; -1 where the CFI has no rule
 * in the forms read here (DRAP frames, no FDE): the recipes answer then.
 * The CFI costs a lookup in .eh_frame's table; the recipes an analysis of
 * the whole procedure, for every procedure an fp chain is repaired in. */
int pl_unwind_cfi_fp_chain(struct pl_attrib *a, pl_dso *dso, uint64_t link)
{
	struct cfi *c = cfi_of(a, unwinder(a), dso);
	struct rule r;
	if (cfi_rule(c->eh, link, &r) < 0 && cfi_rule(c->df, link, &r) < 0)
		return -1;
	return r.cfa_reg == DW_BP && r.cfa_off == 16 && r.bp == BP_AT_CFA && r.bp_off == -16 && !r.outermost &&
	       r.ra_off == -8;
}

/* The recipe at PC as a rule (binary analysis, loopscope.h). */
static int recipe_rule(ls_module *mod, uint64_t pc, struct rule *r)
{
	ls_unwind_recipe u;
	ls_error err;
	memset(r, 0, sizeof *r);
	r->src = RULE_RECIPE;
	if (!mod || ls_unwind_recipe_at(mod, pc, &u, &err) < 0)
		return -1;
	switch (u.cfa_base) {
	case LS_UNWIND_SP: r->cfa_reg = DW_SP; break;
	case LS_UNWIND_BP: r->cfa_reg = DW_BP; break;
	case LS_UNWIND_REG: r->cfa_reg = (uint8_t)u.cfa_reg; break;
	case LS_UNWIND_SP_DEREF: r->cfa_reg = DW_SP; r->deref = 1; break;
	case LS_UNWIND_BP_DEREF: r->cfa_reg = DW_BP; r->deref = 1; break;
	default: return -1;
	}
	r->cfa_off = (int32_t)u.cfa_offset;
	r->ra_off = (int32_t)u.ra_offset;
	r->bp = u.bp == LS_UNWIND_BP_SAME ? BP_SAME : u.bp == LS_UNWIND_BP_SAVED ? BP_AT_CFA
	        : u.bp == LS_UNWIND_BP_SAVED_AT_BP ? BP_AT_BP : BP_UNDEFINED;
	r->bp_off = (int32_t)u.bp_offset;
	return 0;
}

/* The rule for the frame at runtime address PC (LINK in its binary):
 * memoized per (binary, address). */
static const struct rule *rule_at(struct pl_attrib *a, pl_map *map, uint64_t link)
{
	struct pl_unwinder *uw = a->uw;
	uint64_t key = ((uint64_t)map->dso->index + 1) << 48 ^ link;
	uint64_t h = key * 0x9e3779b97f4a7c15ULL;
	size_t i = (size_t)(h >> 32) & (uw->nslots - 1);
	while (uw->slots[i].key) {
		if (uw->slots[i].key == key)
			return &uw->slots[i].r;
		i = (i + 1) & (uw->nslots - 1);
	}
	struct rule r;
	struct cfi *c = cfi_of(a, uw, map->dso);
	if (cfi_rule(c->eh, link, &r) < 0 && cfi_rule(c->df, link, &r) < 0 &&
	    recipe_rule(pl_dso_attr(a, map->dso)->mod, link, &r) < 0)
		r.src = RULE_NONE;
	if ((uw->used + 1) * 2 > uw->nslots) { /* full: start over */
		memset(uw->slots, 0, uw->nslots * sizeof *uw->slots);
		uw->used = 0;
		i = (size_t)(h >> 32) & (uw->nslots - 1);
	}
	uw->slots[i].key = key;
	uw->slots[i].r = r;
	uw->used++;
	return &uw->slots[i].r;
}

/* ---- the walk ---------------------------------------------------------------- */

struct regs {
	uint64_t v[17];
	uint32_t known; /* bit n: DWARF register n */
};

static int reg_of(const pd_sample *s, int perf_reg, uint64_t *out)
{
	if (!s->regs_abi || !s->regs_user || !(s->regs_mask & (1ULL << perf_reg)))
		return -1;
	int idx = __builtin_popcountll(s->regs_mask & ((1ULL << perf_reg) - 1));
	*out = s->regs_user[idx];
	return 0;
}

struct stack {
	uint64_t sp0, size;
	const uint8_t *bytes;
	uint64_t high;     /* the highest byte read, as an offset from sp0 */
	int ran_off;       /* a read went past the copy */
};

static int read_stack(struct stack *k, uint64_t addr, uint64_t *out)
{
	if (addr < k->sp0 || addr - k->sp0 > k->size || k->size - (addr - k->sp0) < 8) {
		k->ran_off = 1;
		return -1;
	}
	memcpy(out, k->bytes + (addr - k->sp0), 8);
	if (addr - k->sp0 + 8 > k->high)
		k->high = addr - k->sp0 + 8;
	return 0;
}

/* From frame R's registers to its caller's, by RULE: 0, 1 at the last
 * frame, -1 when it cannot go on. */
static int step(const struct rule *rule, struct regs *r, struct stack *k)
{
	if (!(r->known & (1u << rule->cfa_reg)))
		return -1;
	uint64_t cfa = r->v[rule->cfa_reg] + (int64_t)rule->cfa_off, ra, bp = 0;
	if (rule->deref && read_stack(k, cfa, &cfa) < 0)
		return -1;
	if (rule->outermost)
		return 1;
	if (cfa <= r->v[DW_SP] || read_stack(k, cfa + (int64_t)rule->ra_off, &ra) < 0 || !ra)
		return -1;
	int bp_known = 0;
	if (rule->bp == BP_SAME)
		bp_known = (r->known >> DW_BP) & 1, bp = r->v[DW_BP];
	else if (rule->bp == BP_AT_CFA)
		bp_known = read_stack(k, cfa + (int64_t)rule->bp_off, &bp) == 0;
	else if (rule->bp == BP_AT_BP && (r->known & (1u << DW_BP)))
		bp_known = read_stack(k, r->v[DW_BP] + (int64_t)rule->bp_off, &bp) == 0;
	/* the callee-saved registers other than BP are not followed: a
	 * caller's CFA from them is not evaluated */
	r->known = (1u << DW_SP) | (1u << 16) | (bp_known ? 1u << DW_BP : 0);
	r->v[DW_SP] = cfa;
	r->v[DW_BP] = bp;
	r->v[16] = ra;
	return 0;
}

/* Whether the instruction before PC (in MAP) is a call. */
static int after_call(struct pl_attrib *a, pl_map *map, uint64_t pc)
{
	struct dso_attr *d = pl_dso_attr(a, map->dso);
	uint64_t link;
	return d->mod && pl_attrib_link_addr(a, map, pc, &link) == 0 &&
	       ls_unwind_call_before(d->mod, link, NULL) != LS_CALL_NONE;
}

static void keep_depth(struct pl_unwinder *uw, uint64_t depth)
{
	if (uw->ndepths == uw->cap_depths) {
		uw->cap_depths = uw->cap_depths ? 2 * uw->cap_depths : 4096;
		uw->depths = pl_xrealloc(uw->depths, uw->cap_depths * sizeof *uw->depths);
	}
	uw->depths[uw->ndepths++] = depth;
}

size_t pl_unwind_user(struct pl_attrib *a, pl_thread *t, const pd_sample *smp, uint64_t *pcs, uint8_t *how, size_t cap)
{
	if (!smp->regs_abi || !smp->regs_user || !smp->stack_size || !cap)
		return 0;
	struct pl_unwinder *uw = unwinder(a);
	struct regs r = { .known = 0 };
	for (int i = 0; i < 17; i++)
		if (reg_of(smp, dwarf_to_perf[i], &r.v[i]) == 0)
			r.known |= 1u << i;
	if (!(r.known & (1u << 16)) || !(r.known & (1u << DW_SP)))
		return 0;
	struct stack k = { r.v[DW_SP], smp->stack_dyn_size ? smp->stack_dyn_size : smp->stack_size, smp->stack_user, 0, 0 };
	if (uw->stack_limit && k.size > uw->stack_limit)
		k.size = uw->stack_limit; /* what a smaller copy would have had (the tests, the benchmarks) */
	uw->st.samples++;
	size_t n = 0;
	uint8_t next_how = PL_HOW_CFI;
	int end = -1, used_recipe = 0;
	while (n < cap) {
		uint64_t pc = r.v[16];
		pl_map *map = pl_find_map(a->rep->s, t, pc, 0);
		uint64_t link;
		/* a caller must be code, and after a recipe's step a return
		 * address (following a call): else the walk went past the
		 * first frame of the thread (ld.so's _start has no CFI) */
		if (n > 0 && (!map || (next_how == PL_HOW_RECIPE && !after_call(a, map, pc))))
			break;
		pcs[n] = pc;
		how[n] = next_how;
		n++;
		if (!map || pl_attrib_link_addr(a, map, n == 1 ? pc : pc - 1, &link) < 0)
			break;
		const struct rule *rule = rule_at(a, map, link);
		if (rule->src == RULE_NONE || (end = step(rule, &r, &k)) != 0)
			break;
		next_how = rule->src == RULE_RECIPE ? PL_HOW_RECIPE : PL_HOW_CFI;
		used_recipe |= rule->src == RULE_RECIPE;
	}
	uw->st.recipe_samples += used_recipe;
	if (end == 1) {
		uw->st.complete++;
		keep_depth(uw, k.high);
	} else if (k.ran_off) {
		uw->st.cut++;
	}
	if (k.high > uw->st.max_read)
		uw->st.max_read = k.high;
	uw->st.copy_size = smp->stack_size;
	return n;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

const pl_unwind_stats *pl_unwind_stats_of(struct pl_attrib *a)
{
	struct pl_unwinder *uw = a->uw;
	if (!uw)
		return NULL;
	if (uw->ndepths) {
		qsort(uw->depths, uw->ndepths, sizeof *uw->depths, cmp_u64);
		uw->st.depth_p99 = uw->depths[(uw->ndepths - 1) * 99 / 100];
		uw->st.depth_max = uw->depths[uw->ndepths - 1];
	}
	return &uw->st;
}
