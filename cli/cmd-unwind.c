/* cmd-unwind.c - `loopscope unwind`: the unwind recipes of a binary (where
 * the caller's frame, the return address and the caller's BP are, from
 * every instruction, by binary analysis; loopscope.h's ls_unwind_*).  With
 * addresses, the recipe of each; without, every procedure's, in address
 * order, and a summary. */
#include "cli.h"
#include "support/json_writer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* JSON's names of the CFA's forms. */
static const char *const base_names[] = { "unknown", "rsp", "rbp", "reg", "[rsp]", "[rbp]" };

/* DWARF's x86-64 register numbers. */
static const char *dwarf_reg_name(int r)
{
	static const char *const names[] = { "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
	                                      "r9",  "r10", "r11", "r12", "r13", "r14", "r15" };
	return r >= 0 && r < 16 ? names[r] : "r?";
}

/* "rsp+16", "rbp+16", "r10+0", "[rbp-40]" (the CFA is stored there), "unknown" */
static void cfa_text(const ls_unwind_recipe *r, char *buf, size_t len)
{
	switch (r->cfa_base) {
	case LS_UNWIND_SP:
	case LS_UNWIND_BP:
		snprintf(buf, len, "%s%+" PRId64, r->cfa_base == LS_UNWIND_SP ? "rsp" : "rbp", r->cfa_offset);
		break;
	case LS_UNWIND_REG:
		snprintf(buf, len, "%s%+" PRId64, dwarf_reg_name(r->cfa_reg), r->cfa_offset);
		break;
	case LS_UNWIND_SP_DEREF:
	case LS_UNWIND_BP_DEREF:
		snprintf(buf, len, "[%s%+" PRId64 "]", r->cfa_base == LS_UNWIND_SP_DEREF ? "rsp" : "rbp", r->cfa_offset);
		break;
	default:
		snprintf(buf, len, "unknown");
	}
}

static void bp_text(const ls_unwind_recipe *r, char *buf, size_t len)
{
	if (r->bp == LS_UNWIND_BP_SAVED)
		snprintf(buf, len, "[CFA%+" PRId64 "]", r->bp_offset);
	else if (r->bp == LS_UNWIND_BP_SAVED_AT_BP)
		snprintf(buf, len, "[rbp%+" PRId64 "]", r->bp_offset);
	else
		snprintf(buf, len, "%s", r->bp == LS_UNWIND_BP_SAME ? "same" : "lost");
}

static void print_recipe_text(const ls_unwind_recipe *r, int indent)
{
	char cfa[48], bp[48], ra[32] = "unknown", why[64];
	cfa_text(r, cfa, sizeof cfa);
	bp_text(r, bp, sizeof bp);
	if (r->cfa_base != LS_UNWIND_UNKNOWN)
		snprintf(ra, sizeof ra, "[CFA%+" PRId64 "]", r->ra_offset);
	if (r->rule_addr)
		snprintf(why, sizeof why, "%s 0x%" PRIx64, ls_unwind_rule_name(r->rule), r->rule_addr);
	else
		snprintf(why, sizeof why, "%s", ls_unwind_rule_name(r->rule));
	printf("%*s0x%" PRIx64 "-0x%" PRIx64 "  CFA=%-10s ra=%-9s rbp=%-10s %s\n", indent, "", r->lo, r->hi, cfa, ra,
	       bp, why);
}

static void json_recipe(ls_jw *w, const ls_unwind_recipe *r)
{
	ls_jw_object(w);
	ls_jw_key(w, "lo");
	ls_jw_hex(w, r->lo);
	ls_jw_key(w, "hi");
	ls_jw_hex(w, r->hi);
	ls_jw_key(w, "cfa");
	ls_jw_string(w, (unsigned)r->cfa_base < 6 ? base_names[r->cfa_base] : "unknown");
	if (r->cfa_base == LS_UNWIND_REG) {
		ls_jw_key(w, "cfa_reg");
		ls_jw_string(w, dwarf_reg_name(r->cfa_reg));
	}
	ls_jw_key(w, "cfa_offset");
	ls_jw_int(w, r->cfa_offset);
	if (r->cfa_base != LS_UNWIND_UNKNOWN) {
		ls_jw_key(w, "ra_offset");
		ls_jw_int(w, r->ra_offset);
	}
	ls_jw_key(w, "rbp");
	ls_jw_string(w, r->bp == LS_UNWIND_BP_SAVED ? "saved" : r->bp == LS_UNWIND_BP_SAVED_AT_BP ? "saved-at-rbp"
	                : r->bp == LS_UNWIND_BP_SAME ? "same" : "lost");
	if (r->bp == LS_UNWIND_BP_SAVED || r->bp == LS_UNWIND_BP_SAVED_AT_BP) {
		ls_jw_key(w, "rbp_offset");
		ls_jw_int(w, r->bp_offset);
	}
	ls_jw_key(w, "fp_chain");
	ls_jw_bool(w, r->fp_chain);
	if (r->frame_pointer) {
		ls_jw_key(w, "fp_offset");
		ls_jw_int(w, r->fp_offset);
	}
	if (r->sp_known) {
		ls_jw_key(w, "sp_offset");
		ls_jw_int(w, r->sp_offset);
	}
	ls_jw_key(w, "rule");
	ls_jw_string(w, ls_unwind_rule_name(r->rule));
	if (r->rule_addr) {
		ls_jw_key(w, "rule_addr");
		ls_jw_hex(w, r->rule_addr);
	}
	ls_jw_object_end(w);
}

static const char *proc_name(const ls_module *m, uint64_t addr)
{
	const ls_scope *p = ls_lookup_proc(m, addr);
	return p && ls_scope_name(p) ? ls_scope_name(p) : "??";
}

static void unwind_one(const ls_module *m, const char *token, bool json)
{
	uint64_t addrs[16];
	char why[1200];
	int n = cli_parse_address(m, token, addrs, 16, why, sizeof why);
	for (int i = 0; i < (n < 0 ? 1 : n); i++) {
		ls_unwind_recipe r;
		ls_error err;
		int rc = n < 0 ? -1 : ls_unwind_recipe_at(m, addrs[i], &r, &err);
		const char *msg = n < 0 ? why : err.message;
		if (!json) {
			if (rc < 0) {
				printf("%s: %s\n", token, msg);
				continue;
			}
			printf("0x%" PRIx64 " %s%s0x%" PRIx64 ":", addrs[i], proc_name(m, addrs[i]), addrs[i] >= r.proc ? "+" : "-",
			       addrs[i] >= r.proc ? addrs[i] - r.proc : r.proc - addrs[i]);
			print_recipe_text(&r, 1);
			continue;
		}
		ls_jw w;
		ls_jw_init(&w, stdout, LS_JW_COMPACT);
		ls_jw_object(&w);
		ls_jw_key(&w, "addr");
		if (n < 0)
			ls_jw_string(&w, token);
		else
			ls_jw_hex(&w, addrs[i]);
		if (rc < 0) {
			ls_jw_key(&w, "error");
			ls_jw_string(&w, msg);
		} else {
			ls_jw_key(&w, "proc");
			ls_jw_string(&w, proc_name(m, addrs[i]));
			ls_jw_key(&w, "entry");
			ls_jw_hex(&w, r.proc);
			ls_jw_key(&w, "recipe");
			json_recipe(&w, &r);
		}
		ls_jw_object_end(&w);
		ls_jw_newline(&w);
		ls_jw_finish(&w);
	}
}

/* ---- every procedure ----------------------------------------------------- */

struct totals {
	size_t procs, recipes, fp, variable, leaves, unsure, unknown;
};

static int cmp_low(const void *a, const void *b)
{
	uint64_t x = ls_scope_low(*(const ls_scope *const *)a), y = ls_scope_low(*(const ls_scope *const *)b);
	return x < y ? -1 : x > y;
}

static const ls_scope **procs_by_address(const ls_module *m, size_t *n)
{
	size_t cap = 0;
	const ls_scope **v = NULL;
	*n = 0;
	const ls_scope *root = ls_module_root(m);
	for (const ls_scope *f = root ? ls_scope_first_child(root) : NULL; f; f = ls_scope_next_sibling(f))
		for (const ls_scope *p = ls_scope_first_child(f); p; p = ls_scope_next_sibling(p)) {
			if (ls_scope_kind_of(p) != LS_SCOPE_PROC || !ls_scope_nranges(p))
				continue;
			if (*n == cap) {
				cap = cap ? 2 * cap : 256;
				v = realloc(v, cap * sizeof *v);
				if (!v) {
					fprintf(stderr, "loopscope unwind: out of memory\n");
					exit(EXIT_ANALYSIS);
				}
			}
			v[(*n)++] = p;
		}
	if (v)
		qsort(v, *n, sizeof *v, cmp_low);
	return v;
}

static void unwind_proc(const ls_module *m, const ls_scope *p, bool json, struct totals *t)
{
	ls_unwind_proc_info info;
	ls_error err;
	if (ls_unwind_proc(m, ls_scope_low(p), &info, &err) < 0 || info.nrecipes == 0)
		return;
	ls_unwind_recipe *r = malloc(info.nrecipes * sizeof *r);
	if (!r)
		return;
	size_t n = ls_unwind_recipes(m, ls_scope_low(p), r, info.nrecipes);
	if (n > info.nrecipes)
		n = info.nrecipes;
	t->procs++;
	t->recipes += n;
	t->fp += info.keeps_frame_pointer != 0;
	t->variable += info.variable_frame != 0;
	t->leaves += info.ncalls == 0;
	t->unsure += info.unsure;
	for (size_t i = 0; i < n; i++)
		t->unknown += r[i].cfa_base == LS_UNWIND_UNKNOWN;
	if (!json) {
		printf("%s (entry 0x%" PRIx64 ", frame %" PRIu64 " bytes%s%s%s)\n", ls_scope_name(p) ? ls_scope_name(p) : "??",
		       info.entry, info.frame_size, info.keeps_frame_pointer ? ", keeps a frame pointer" : "",
		       info.variable_frame ? ", variable frame" : "", info.ncalls ? "" : ", leaf");
		for (size_t i = 0; i < n; i++)
			print_recipe_text(&r[i], 2);
	} else {
		ls_jw w;
		ls_jw_init(&w, stdout, LS_JW_COMPACT);
		ls_jw_object(&w);
		ls_jw_key(&w, "proc");
		ls_jw_string(&w, ls_scope_name(p));
		ls_jw_key(&w, "entry");
		ls_jw_hex(&w, info.entry);
		ls_jw_key(&w, "frame_size");
		ls_jw_uint(&w, info.frame_size);
		ls_jw_key(&w, "keeps_frame_pointer");
		ls_jw_bool(&w, info.keeps_frame_pointer);
		ls_jw_key(&w, "variable_frame");
		ls_jw_bool(&w, info.variable_frame);
		ls_jw_key(&w, "calls");
		ls_jw_uint(&w, info.ncalls);
		ls_jw_key(&w, "recipes");
		ls_jw_array(&w);
		for (size_t i = 0; i < n; i++)
			json_recipe(&w, &r[i]);
		ls_jw_array_end(&w);
		ls_jw_object_end(&w);
		ls_jw_newline(&w);
		ls_jw_finish(&w);
	}
	free(r);
}

static void unwind_all(const ls_module *m, bool json)
{
	size_t n;
	const ls_scope **procs = procs_by_address(m, &n);
	struct totals t = { 0 };
	for (size_t i = 0; i < n; i++)
		unwind_proc(m, procs[i], json, &t);
	free(procs);
	if (!json)
		printf("# %zu procedures, %zu recipes: %zu keep a frame pointer, %zu leaves, %zu with variable frames; "
		       "%zu recipes with an unknown CFA, %zu returns reached with an unexpected frame\n",
		       t.procs, t.recipes, t.fp, t.leaves, t.variable, t.unknown, t.unsure);
}

/* ---- the command ------------------------------------------------------------- */

static const struct argp_option unwind_options[] = {
	{ "json", CLI_OPT_JSON, NULL, 0, "one JSON object a line: per address, or per procedure", 0 },
	{ 0 }
};

static const struct argp unwind_argp = {
	unwind_options, cli_parse_binary_args, "BINARY [ADDR|SYMBOL+OFF[/SIZE] ...]",
	"The unwind recipes of a binary, by binary analysis (x86-64): from each instruction, where the "
	"canonical frame address is (CFA: the caller's SP after the return, as rsp+N or rbp+N), where the "
	"return address and the caller's rbp are, and the instruction (rule) that decided it.  With "
	"addresses, the recipe of each; without, every procedure's intervals in address order.",
	cli_binary_children, NULL, NULL
};

int cmd_unwind(int argc, char **argv)
{
	struct cli_binary_args a = { 0 };
	cli_parse(&unwind_argp, "unwind", argc, argv, ARGP_IN_ORDER, &a);
	ls_module *m = cli_open(argv[a.binary_at], &a.common);
	if (!m)
		return EXIT_ANALYSIS;
	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	if (a.binary_at + 1 < argc) {
		for (int i = a.binary_at + 1; i < argc; i++)
			unwind_one(m, argv[i], a.json);
	} else {
		unwind_all(m, a.json);
	}
	int rc = fflush(stdout) == 0 ? EXIT_OK : EXIT_ANALYSIS;
	ls_module_close(m);
	return rc;
}
