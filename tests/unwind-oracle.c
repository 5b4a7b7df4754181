/* unwind-oracle.c - the unwind recipes (libloopscope/unwind/recipes.c)
 * against oracles nobody here wrote, instruction by instruction:
 *
 *   - the compiler's CFI, read by libdw (dwarf_cfi_addrframe): .eh_frame
 *     of the binary, else .debug_frame (vmlinux has only that);
 *   - the kernel's ORC tables (.orc_unwind_ip, .orc_unwind: made by
 *     objtool from the code), with --orc.
 *
 * For every instruction of every procedure with a recipe (decoded here
 * with the core's decoder), the oracle's CFA rule is compared with the
 * recipe's: equal when both name the same register and offset, or when
 * the recipe knows that register's value (SP or BP as an offset from the
 * CFA) and it gives the same CFA.  The return address (CFA-8) and the
 * caller's BP (same, or saved at the same offset) are compared too, where
 * the oracle says.  Instructions the oracle does not cover are counted
 * apart.  Disagreements are counted by class - the oracle's form and the
 * recipe's rule - and the first few of each class printed, for the
 * reasons to be found and written down (tests/unwind-cfi.py).
 *
 * Output: the table, then one line "RESULT {json}" with the counts.
 * usage: unwind-oracle [--orc] [--list] [--bp] [--examples N] [--only-proc NAME] BINARY
 */
#include "cfg/decode.h"
#include "elf/module.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- an oracle's rule at one instruction ---------------------------------- */

enum { O_NONE, O_REG, O_EXPR, O_UNDEF, O_DEREF };  /* CFA forms: O_DEREF is *(reg + off) */
enum { B_UNSPEC, B_SAME, B_SAVED, B_OTHER, B_AT_BP }; /* BP forms */

struct orule {
	int cfa;          /* O_* */
	int reg;          /* DWARF register: 7 rsp, 6 rbp, ... */
	int64_t off;
	int ra_ok;        /* -1 unknown, 1 at CFA-8, 0 elsewhere */
	int bp;           /* B_* */
	int64_t bp_off;
	const char *note; /* ORC: the entry's type */
};

/* CFA + N from a location expression of a register rule, if that is its form. */
static int cfa_offset_of(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (n < 1 || ops[0].atom != DW_OP_call_frame_cfa)
		return 0;
	if (n == 1) {
		*off = 0;
		return 1;
	}
	if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return 1;
	}
	if (n == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus) {
		*off = (int64_t)ops[1].number;
		return 1;
	}
	return 0;
}

/* A CFA expression evaluated at ADDR with SP unknown: values are
 * COEF * rsp + K; true when it comes to rsp + *OFF.  Enough for the PLT's
 * rsp + 8 + ((rip & 15) >= 11) * 8. */
static int eval_cfa_expr(const Dwarf_Op *ops, size_t n, uint64_t addr, int64_t *off)
{
	int64_t coef[16], k[16];
	size_t sp = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t a = ops[i].atom;
		if (sp >= 16)
			return 0;
		if (a == DW_OP_breg7 || a == DW_OP_breg16) {
			coef[sp] = a == DW_OP_breg7;
			k[sp++] = (int64_t)ops[i].number + (a == DW_OP_breg16 ? (int64_t)addr : 0);
		} else if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
			coef[sp] = 0;
			k[sp++] = a - DW_OP_lit0;
		} else if (a == DW_OP_const1u || a == DW_OP_const2u || a == DW_OP_const4u || a == DW_OP_constu ||
		           a == DW_OP_const1s || a == DW_OP_const2s || a == DW_OP_const4s || a == DW_OP_consts) {
			coef[sp] = 0;
			k[sp++] = (int64_t)ops[i].number;
		} else if (sp >= 2 && (a == DW_OP_plus || a == DW_OP_minus)) {
			int s = a == DW_OP_plus ? 1 : -1;
			coef[sp - 2] += s * coef[sp - 1];
			k[sp - 2] += s * k[sp - 1];
			sp--;
		} else if (sp >= 2 && coef[sp - 1] == 0 && coef[sp - 2] == 0 &&
		           (a == DW_OP_and || a == DW_OP_ge || a == DW_OP_shl || a == DW_OP_gt || a == DW_OP_lt)) {
			int64_t x = k[sp - 2], y = k[sp - 1];
			k[sp - 2] = a == DW_OP_and ? (x & y) : a == DW_OP_ge ? x >= y : a == DW_OP_gt ? x > y
			          : a == DW_OP_lt ? x < y : (int64_t)((uint64_t)x << y);
			sp--;
		} else if (a == DW_OP_plus_uconst && sp >= 1) {
			k[sp - 1] += (int64_t)ops[i].number;
		} else {
			return 0;
		}
	}
	if (sp != 1 || coef[0] != 1)
		return 0;
	*off = k[0];
	return 1;
}

/* The CFI rule at ADDR; its rows [*LO, *HI). */
static int cfi_rule(Dwarf_CFI *cfi, uint64_t addr, struct orule *r, uint64_t *lo, uint64_t *hi)
{
	Dwarf_Frame *fr;
	memset(r, 0, sizeof *r);
	if (!cfi || dwarf_cfi_addrframe(cfi, addr, &fr) != 0)
		return -1;
	Dwarf_Addr s, e;
	dwarf_frame_info(fr, &s, &e, NULL);
	*lo = s;
	*hi = e;
	Dwarf_Op *ops;
	size_t n;
	if (dwarf_frame_cfa(fr, &ops, &n) != 0 || n == 0) {
		r->cfa = O_UNDEF;
	} else if (n == 1 && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		r->cfa = O_REG;
		r->reg = ops[0].atom - DW_OP_breg0;
		r->off = (int64_t)ops[0].number;
	} else if (n == 1 && ops[0].atom == DW_OP_bregx) { /* what libdw makes of def_cfa */
		r->cfa = O_REG;
		r->reg = (int)ops[0].number;
		r->off = (int64_t)ops[0].number2;
	} else if (n == 2 && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31 && ops[1].atom == DW_OP_deref) {
		r->cfa = O_DEREF; /* a DRAP frame: CFA = *(rbp - N) */
		r->reg = ops[0].atom - DW_OP_breg0;
		r->off = (int64_t)ops[0].number;
	} else if (eval_cfa_expr(ops, n, addr, &r->off)) {
		/* the PLT's expression depends on the address: one row each */
		r->cfa = O_REG;
		r->reg = 7;
		*lo = addr;
		*hi = addr + 1;
	} else {
		r->cfa = O_EXPR;
	}
	Dwarf_Op mem[3];
	int64_t off;
	r->ra_ok = -1;
	if (dwarf_frame_register(fr, 16, mem, &ops, &n) == 0 && n > 0)
		r->ra_ok = cfa_offset_of(ops, n, &off) && off == -8;
	r->bp = B_UNSPEC;
	if (dwarf_frame_register(fr, 6, mem, &ops, &n) == 0) {
		if (n == 0)
			r->bp = ops ? B_UNSPEC : B_SAME;
		else if (cfa_offset_of(ops, n, &off)) {
			r->bp = B_SAVED;
			r->bp_off = off;
		} else if (n == 1 && ops[0].atom == DW_OP_breg6) {
			r->bp = B_AT_BP; /* a DRAP frame: at rbp + N */
			r->bp_off = (int64_t)ops[0].number;
		} else
			r->bp = B_OTHER;
	}
	free(fr);
	return 0;
}

/* ---- ORC (arch/x86/include/asm/orc_types.h, 6.1) --------------------------- */

enum { ORC_REG_UNDEFINED, ORC_REG_PREV_SP, ORC_REG_DX, ORC_REG_DI, ORC_REG_BP, ORC_REG_SP };

struct orc {
	uint64_t *ip;
	uint8_t (*e)[6];
	size_t n;
	size_t *order;
};

static struct orc orc_tables;

static int cmp_orc(const void *a, const void *b)
{
	uint64_t x = orc_tables.ip[*(const size_t *)a], y = orc_tables.ip[*(const size_t *)b];
	return x < y ? -1 : x > y;
}

static int load_orc(Elf *elf)
{
	size_t shstrndx;
	Elf_Data *ipd = NULL, *ed = NULL;
	uint64_t ipaddr = 0;
	elf_getshdrstrndx(elf, &shstrndx);
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && strcmp(name, ".orc_unwind_ip") == 0) {
			ipd = elf_rawdata(scn, NULL);
			ipaddr = sh.sh_addr;
		} else if (name && strcmp(name, ".orc_unwind") == 0) {
			ed = elf_rawdata(scn, NULL);
		}
	}
	if (!ipd || !ed || ipd->d_size / 4 != ed->d_size / 6)
		return -1;
	size_t n = ipd->d_size / 4;
	orc_tables.n = n;
	orc_tables.ip = malloc(n * sizeof *orc_tables.ip);
	orc_tables.e = (uint8_t(*)[6])ed->d_buf;
	orc_tables.order = malloc(n * sizeof *orc_tables.order);
	for (size_t i = 0; i < n; i++) {
		int32_t rel;
		memcpy(&rel, (const char *)ipd->d_buf + 4 * i, 4);
		orc_tables.ip[i] = ipaddr + 4 * i + (int64_t)rel;
		orc_tables.order[i] = i;
	}
	qsort(orc_tables.order, n, sizeof *orc_tables.order, cmp_orc);
	return 0;
}

static int orc_rule(uint64_t addr, struct orule *r, uint64_t *lo, uint64_t *hi)
{
	static const char *const types[] = { "call", "regs", "regs-partial", "?" };
	size_t a = 0, b = orc_tables.n;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (orc_tables.ip[orc_tables.order[mid]] <= addr)
			a = mid + 1;
		else
			b = mid;
	}
	memset(r, 0, sizeof *r);
	if (a == 0)
		return -1;
	size_t i = orc_tables.order[a - 1];
	*lo = orc_tables.ip[i];
	*hi = a < orc_tables.n ? orc_tables.ip[orc_tables.order[a]] : UINT64_MAX;
	const uint8_t *e = orc_tables.e[i];
	int16_t sp_off = (int16_t)(e[0] | e[1] << 8), bp_off = (int16_t)(e[2] | e[3] << 8);
	unsigned sp_reg = e[4] & 15, bp_reg = e[4] >> 4, type = e[5] & 3, end = (e[5] >> 2) & 1;
	r->note = types[type];
	r->ra_ok = -1;
	/* ORC's registers as DWARF numbers (-1: an indirect one) */
	static const int dwarf_of[16] = { -1, -1, 1, 5, 6, 7, 10, 13, 6, 7, -1, -1, -1, -1, -1, -1 };
	if (sp_reg == ORC_REG_UNDEFINED && !end)
		return -1; /* objtool says nothing here: padding, dead code */
	if (end || sp_reg == ORC_REG_UNDEFINED)
		r->cfa = O_UNDEF; /* the end of the stack: entry code's last frame */
	else if (type != 0)
		r->cfa = O_EXPR; /* pt_regs on the stack: entry code */
	else if (sp_reg == 8 || sp_reg == 9) { /* BP_INDIRECT, SP_INDIRECT */
		r->cfa = O_DEREF;
		r->reg = dwarf_of[sp_reg];
		r->off = sp_off;
		r->ra_ok = 1;
	} else if (dwarf_of[sp_reg] >= 0) {
		r->cfa = O_REG;
		r->reg = dwarf_of[sp_reg];
		r->off = sp_off;
		r->ra_ok = 1;
	} else {
		r->cfa = O_EXPR;
	}
	r->bp = bp_reg == ORC_REG_UNDEFINED ? B_SAME : bp_reg == ORC_REG_PREV_SP ? B_SAVED
	        : bp_reg == ORC_REG_BP ? B_AT_BP : B_OTHER;
	r->bp_off = bp_off;
	return 0;
}

/* ---- comparing ------------------------------------------------------------- */

struct cls {
	char name[96];
	uint64_t n;
	int shown;
};

struct tally {
	uint64_t insns, covered, agree, ra_compared, ra_agree, bp_compared, bp_agree;
	struct cls cls[256];
	size_t ncls;
	int examples;
	int bp_examples;     /* --bp: count the caller's rbp disagreements by class too */
	int list;            /* --list: every CFA disagreement as "D<tab>addr<tab>proc<tab>class" */
};

static struct cls *class_of(struct tally *t, const char *name)
{
	for (size_t i = 0; i < t->ncls; i++)
		if (strcmp(t->cls[i].name, name) == 0)
			return &t->cls[i];
	if (t->ncls == 256)
		return &t->cls[255];
	struct cls *c = &t->cls[t->ncls++];
	snprintf(c->name, sizeof c->name, "%s", name);
	return c;
}

/* The oracle's CFA equals the recipe's. */
static int cfa_agrees(const struct orule *o, const ls_unwind_recipe *r)
{
	if (o->cfa == O_DEREF)
		return (r->cfa_base == LS_UNWIND_SP_DEREF || r->cfa_base == LS_UNWIND_BP_DEREF) &&
		       o->reg == (r->cfa_base == LS_UNWIND_SP_DEREF ? 7 : 6) && o->off == r->cfa_offset;
	if (o->cfa != O_REG || r->cfa_base == LS_UNWIND_UNKNOWN)
		return 0;
	if (r->cfa_base == LS_UNWIND_REG && o->reg == r->cfa_reg && o->off == r->cfa_offset)
		return 1;
	int rreg = r->cfa_base == LS_UNWIND_SP ? 7 : r->cfa_base == LS_UNWIND_BP ? 6 : -1;
	if (o->reg == rreg && o->off == r->cfa_offset)
		return 1;
	if (o->reg == 7 && r->sp_known && -r->sp_offset == o->off)
		return 1;
	return o->reg == 6 && r->frame_pointer && -r->fp_offset == o->off;
}

static const char *oracle_form(const struct orule *o, char *buf, size_t len)
{
	if (o->cfa == O_UNDEF)
		snprintf(buf, len, "oracle CFA undefined");
	else if (o->cfa == O_DEREF)
		snprintf(buf, len, "oracle [reg+N]");
	else if (o->cfa == O_EXPR)
		snprintf(buf, len, "oracle CFA expression%s%s", o->note ? " " : "", o->note ? o->note : "");
	else
		snprintf(buf, len, "oracle %s+N", o->reg == 7 ? "rsp" : o->reg == 6 ? "rbp" : "reg");
	return buf;
}

static void disagree(struct tally *t, const char *proc, uint64_t addr, const struct orule *o, const ls_unwind_recipe *r)
{
	char form[64], name[96];
	static const char *const forms[] = { "unknown", "rsp+N", "rbp+N", "reg+N", "[rsp+N]", "[rbp+N]" };
	snprintf(name, sizeof name, "%s / recipe %s (%s)", oracle_form(o, form, sizeof form),
	         (unsigned)r->cfa_base < 6 ? forms[r->cfa_base] : "?", ls_unwind_rule_name(r->rule));
	struct cls *c = class_of(t, name);
	c->n++;
	if (t->list)
		printf("D\t0x%" PRIx64 "\t%s\t%s\n", addr, proc, name);
	if (c->shown++ < t->examples)
		printf("  0x%" PRIx64 " %s: oracle %s%+" PRId64 " recipe %s%+" PRId64 " (%s 0x%" PRIx64 ")  [%s]\n", addr, proc,
		       o->cfa == O_REG ? (o->reg == 7 ? "rsp" : o->reg == 6 ? "rbp" : "r?") : "-", o->off,
		       r->cfa_base == LS_UNWIND_SP ? "rsp" : r->cfa_base == LS_UNWIND_BP ? "rbp" : "?", r->cfa_offset,
		       ls_unwind_rule_name(r->rule), r->rule_addr, name);
}

static void compare_insn(struct tally *t, const char *proc, uint64_t addr, const struct orule *o,
                         const ls_unwind_recipe *r)
{
	t->covered++;
	if (cfa_agrees(o, r))
		t->agree++;
	else
		disagree(t, proc, addr, o, r);
	if (o->ra_ok >= 0 && r->cfa_base != LS_UNWIND_UNKNOWN) {
		t->ra_compared++;
		t->ra_agree += o->ra_ok == 1 && r->ra_offset == -8;
	}
	if (o->bp == B_SAME || o->bp == B_SAVED || o->bp == B_AT_BP) {
		t->bp_compared++;
		int ok = (o->bp == B_SAME && r->bp == LS_UNWIND_BP_SAME) ||
		         (o->bp == B_SAVED && r->bp == LS_UNWIND_BP_SAVED && r->bp_offset == o->bp_off) ||
		         (o->bp == B_AT_BP && r->bp == LS_UNWIND_BP_SAVED_AT_BP && r->bp_offset == o->bp_off);
		t->bp_agree += ok;
		if (!ok && t->bp_examples) {
			static const char *const bn[] = { "same", "saved", "lost", "saved-at-rbp" };
			char name[96];
			snprintf(name, sizeof name, "rbp: oracle %s / recipe %s (%s)",
			         o->bp == B_SAME ? "same" : o->bp == B_SAVED ? "saved" : "saved-at-rbp",
			         bn[r->bp], ls_unwind_rule_name(r->rule));
			struct cls *c = class_of(t, name);
			c->n++;
			if (c->shown++ < t->examples)
				printf("  0x%" PRIx64 " %s: [%s] oracle off %" PRId64 " recipe off %" PRId64 "\n", addr, proc, name,
				       o->bp_off, r->bp_offset);
		}
	}
}

struct oracle {
	Dwarf_CFI *eh, *df;
	int orc;
	uint64_t lo, hi;      /* the rows last read: [lo, hi) */
	struct orule rule;
	int have;
};

static int oracle_at(struct oracle *o, uint64_t addr)
{
	if (o->have && addr >= o->lo && addr < o->hi)
		return 0;
	o->have = 0;
	if (o->orc ? orc_rule(addr, &o->rule, &o->lo, &o->hi) == 0
	           : (cfi_rule(o->eh, addr, &o->rule, &o->lo, &o->hi) == 0 ||
	              cfi_rule(o->df, addr, &o->rule, &o->lo, &o->hi) == 0))
		o->have = 1;
	return o->have ? 0 : -1;
}

/* Every instruction of the procedure P. */
static void compare_proc(const ls_module *m, struct ls_decoder *dec, const ls_scope *p, struct oracle *o,
                         struct tally *t)
{
	ls_unwind_proc_info info;
	ls_error err;
	if (ls_unwind_proc(m, ls_scope_low(p), &info, &err) < 0 || !info.nrecipes)
		return;
	ls_unwind_recipe *r = malloc(info.nrecipes * sizeof *r);
	size_t n = ls_unwind_recipes(m, ls_scope_low(p), r, info.nrecipes);
	const char *name = ls_scope_name(p) ? ls_scope_name(p) : "??";
	for (size_t i = 0; i < n && i < info.nrecipes; i++) {
		for (uint64_t a = r[i].lo; a < r[i].hi;) {
			const struct ls_text *tx = ls_text_find(m, a);
			struct ls_insn in;
			size_t len = tx ? ls_decode(dec, tx->data + (a - tx->addr), tx->addr + tx->size - a, a, &in) : 0;
			if (!len)
				break;
			t->insns++;
			if (oracle_at(o, a) == 0 && o->rule.cfa != O_NONE)
				compare_insn(t, name, a, &o->rule, &r[i]);
			else if (getenv("UNWIND_ORACLE_UNCOVERED") && t->insns - t->covered < 20)
				printf("  uncovered 0x%" PRIx64 " %s\n", a, name);
			a += len;
		}
	}
	free(r);
}

static int cmp_count(const void *a, const void *b)
{
	const struct cls *x = a, *y = b;
	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct tally t = { .examples = 3 };
	struct oracle o = { 0 };
	const char *only = NULL;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--orc"))
			o.orc = 1;
		else if (!strcmp(argv[i], "--list"))
			t.list = 1;
		else if (!strcmp(argv[i], "--bp"))
			t.bp_examples = 1;
		else if (!strcmp(argv[i], "--examples") && i + 1 < argc)
			t.examples = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only-proc") && i + 1 < argc)
			only = argv[++i];
	}
	if (i >= argc) {
		fprintf(stderr, "usage: unwind-oracle [--orc] [--examples N] [--only-proc NAME] BINARY\n");
		return 2;
	}
	ls_options opt;
	ls_options_init(&opt);
	opt.use_cache = getenv("LOOPSCOPE_NO_CACHE") == NULL;
	opt.progress = 0;
	ls_error err;
	ls_module *m = ls_module_open(argv[i], &opt, &err);
	if (!m) {
		fprintf(stderr, "unwind-oracle: %s\n", err.message);
		return 1;
	}
	elf_version(EV_CURRENT);
	int fd = open(argv[i], O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Dwarf *dw = NULL;
	if (o.orc) {
		if (load_orc(elf) < 0) {
			fprintf(stderr, "unwind-oracle: %s: no ORC tables\n", argv[i]);
			return 1;
		}
	} else {
		o.eh = dwarf_getcfi_elf(elf);
		dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		o.df = dw ? dwarf_getcfi(dw) : NULL;
	}
	struct ls_decoder *dec = ls_decoder_new(EM_X86_64);
	const ls_scope *root = ls_module_root(m);
	for (const ls_scope *f = ls_scope_first_child(root); f; f = ls_scope_next_sibling(f))
		for (const ls_scope *p = ls_scope_first_child(f); p; p = ls_scope_next_sibling(p))
			if (ls_scope_kind_of(p) == LS_SCOPE_PROC && (!only || (ls_scope_name(p) && !strcmp(ls_scope_name(p), only))))
				compare_proc(m, dec, p, &o, &t);
	qsort(t.cls, t.ncls, sizeof *t.cls, cmp_count);
	printf("%s: %" PRIu64 " instructions, %" PRIu64 " covered by the %s, CFA agrees on %" PRIu64 " (%.3f%%)\n",
	       argv[i], t.insns, t.covered, o.orc ? "ORC tables" : "CFI", t.agree,
	       t.covered ? 100.0 * t.agree / t.covered : 0.0);
	printf("  return address: %" PRIu64 "/%" PRIu64 "; caller's rbp: %" PRIu64 "/%" PRIu64 "\n", t.ra_agree, t.ra_compared,
	       t.bp_agree, t.bp_compared);
	for (size_t k = 0; k < t.ncls; k++)
		printf("  %8" PRIu64 "  %s\n", t.cls[k].n, t.cls[k].name);
	printf("RESULT {\"insns\": %" PRIu64 ", \"covered\": %" PRIu64 ", \"agree\": %" PRIu64 ", \"ra_compared\": %" PRIu64
	       ", \"ra_agree\": %" PRIu64 ", \"bp_compared\": %" PRIu64 ", \"bp_agree\": %" PRIu64 ", \"classes\": {",
	       t.insns, t.covered, t.agree, t.ra_compared, t.ra_agree, t.bp_compared, t.bp_agree);
	for (size_t k = 0; k < t.ncls; k++)
		printf("%s\"%s\": %" PRIu64, k ? ", " : "", t.cls[k].name, t.cls[k].n);
	printf("}}\n");
	ls_decoder_free(dec);
	if (dw)
		dwarf_end(dw);
	if (o.eh)
		dwarf_cfi_end(o.eh);
	elf_end(elf);
	close(fd);
	ls_module_close(m);
	return 0;
}
