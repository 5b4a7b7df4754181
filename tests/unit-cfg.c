/* unit-cfg.c - CFGs (libloopscope/cfg/cfg.c, libloopscope/cfg/decode_x86.c) and loop forests of
 * real code: a fixture (below) compiled at test time with gcc and clang at
 * -O0/-O2 (PIE) and gcc -O2 -no-pie (absolute jump tables).  Checks: every
 * decodable byte of a procedure is in exactly one block, blocks[0] holds
 * the entry, jump tables give one switch edge per case, tail calls and
 * calls to functions that never return end their blocks without a
 * successor, a function that only calls exit() is proved not to return,
 * undecodable bytes and a jump table pointing into another function are
 * warnings, the loop forest of a 3-deep nest; C++ (g++, clang++): calls
 * have exception edges to their landing pads, a catch handler that goes
 * back to its loop is in it, a cleanup that resumes unwinding is not.
 * Jump-table shapes (tests/fixtures/jump_tables.s, built as a PIE with GNU
 * ld and with lld, and not PIE): the exact edges of each, none read past
 * a table's end, an unresolvable one counted and warned about.
 * Prints TAP. */
#include "cfg/cfg.h"
#include "loops/loop_forest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"

static const char fixture[] =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#ifdef __clang__\n"
	"#define NOINLINE __attribute__((noinline))\n"
	"#else\n"
	"#define NOINLINE __attribute__((noinline, noclone))\n"
	"#endif\n"
	"volatile int sink;\n"
	"/* Not declared noreturn: the analysis must prove it. */\n"
	"NOINLINE void die(int code) { fprintf(stderr, \"die %d\\n\", code); exit(code); }\n"
	"NOINLINE void die_twice(int code) { sink = code; die(code + 1); }\n"
	"NOINLINE int checked(int x) { if (x < 0) die_twice(x); return x * 2 + sink; }\n"
	"NOINLINE int helper(int x) { sink = x; return x + 7; }\n"
	"NOINLINE int tail(int x) { sink = 1; return helper(x + 1); }\n"
	"NOINLINE int dispatch(int op, int a)\n"
	"{\n"
	"	switch (op) {\n"
	"	case 0: return a + 11; case 1: return a * 3 - sink; case 2: return a ^ 0x55;\n"
	"	case 3: return sink + a * 7; case 4: return a >> 2; case 5: return -a + sink;\n"
	"	case 6: return a * a; case 7: return a - 1000; case 8: return sink * 9;\n"
	"	default: return 0;\n"
	"	}\n"
	"}\n"
	"NOINLINE int nest3(int n, int m, int k)\n"
	"{\n"
	"	int s = 0;\n"
	"	for (int i = 0; i < n; i++) {\n"
	"		for (int j = 0; j < m; j++) {\n"
	"			for (int l = 0; l < k; l++)\n"
	"				s += (i ^ j) * l + sink;\n"
	"			s ^= j;\n"
	"		}\n"
	"		s += i;\n"
	"	}\n"
	"	return s;\n"
	"}\n"
	"/* Bytes that do not decode after the ret; a bounded jump table whose\n"
	" * third entry points into another function. */\n"
	"__asm__(\".text\\n.globl bad_bytes\\n.type bad_bytes,@function\\nbad_bytes:\\n\"\n"
	"        \"\\tret\\n\\t.byte 0x06, 0x07, 0x0e\\n\\tret\\n.size bad_bytes, .-bad_bytes\\n\"\n"
	"        \".globl bad_table\\n.type bad_table,@function\\nbad_table:\\n\"\n"
	"        \"\\tcmp $2, %edi\\n\\tja 1f\\n\\tlea bad_table_data(%rip), %rax\\n\"\n"
	"        \"\\tmovslq (%rax,%rdi,4), %rdx\\n\\tadd %rax, %rdx\\n\\tjmp *%rdx\\n\"\n"
	"        \"1:\\tret\\n2:\\tmov $1, %eax\\n\\tret\\n.size bad_table, .-bad_table\\n\"\n"
	"        \".section .rodata\\n.align 4\\nbad_table_data:\\n\"\n"
	"        \"\\t.long 2b-bad_table_data, 2b-bad_table_data, helper-bad_table_data\\n.text\\n\");\n"
	"int bad_bytes(void);\n"
	"int bad_table(int);\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	int s = checked(argc) + tail(argc) + dispatch(argc, argc) + nest3(argc, argc, argc);\n"
	"	if (argc > 5) { bad_bytes(); s += bad_table(argc); }\n"
	"	return s & 1;\n"
	"}\n";

/* C++: exception edges from calls to their landing pads. */
static const char fixture_cxx[] =
	"#include <stdexcept>\n"
	"volatile int sink;\n"
	"__attribute__((noinline)) int risky(int i) { if (i % 7 == 3) throw std::runtime_error(\"x\"); return i * 2; }\n"
	"struct Guard { ~Guard() { sink++; } };\n"
	"__attribute__((noinline)) int loop_catch(int n)\n"
	"{\n"
	"	int s = 0, errors = 0;\n"
	"	for (int i = 0; i < n; i++) {\n"
	"		try { s += risky(i); } catch (const std::exception &e) { errors++; sink = errors; }\n"
	"	}\n"
	"	return s + errors;\n"
	"}\n"
	"__attribute__((noinline)) int loop_cleanup(int n)\n"
	"{\n"
	"	int s = 0;\n"
	"	for (int i = 0; i < n; i++) { Guard g; s += risky(i); }\n"
	"	return s;\n"
	"}\n"
	"int main(int argc, char **) { int r = loop_catch(argc * 20); try { r += loop_cleanup(argc); } catch (...) { r++; } return r & 1; }\n";



struct warnings {
	char text[8192];
	int n;
};

static void collect_warning(void *ctx, const char *msg)
{
	struct warnings *w = ctx;
	w->n++;
	size_t len = strlen(w->text);
	snprintf(w->text + len, sizeof w->text - len, "%s\n", msg);
}

static const struct ls_proc *find_proc(const ls_module *m, const char *name)
{
	for (size_t i = 0; i < m->procs.nprocs; i++)
		if (m->procs.procs[i].name && strcmp(m->procs.procs[i].name, name) == 0)
			return &m->procs.procs[i];
	return NULL;
}

static const struct ls_insn *last_insn(const struct ls_cfg *cfg, size_t b)
{
	return &cfg->insns[cfg->blocks[b].first_insn + cfg->blocks[b].ninsns - 1];
}

/* Structural invariants of any CFG. */
static bool cfg_sane(const struct ls_cfg *cfg, const struct ls_proc *p, char *why, size_t whylen)
{
	if (cfg->nblocks == 0 || cfg->blocks[0].start > p->entry || cfg->blocks[0].end <= p->entry) {
		snprintf(why, whylen, "blocks[0] does not hold the entry");
		return false;
	}
	size_t insns = 0;
	for (size_t b = 0; b < cfg->nblocks; b++) {
		const struct ls_block *blk = &cfg->blocks[b];
		insns += blk->ninsns;
		uint64_t a = blk->start;
		for (uint32_t k = 0; k < blk->ninsns; k++) {
			const struct ls_insn *in = &cfg->insns[blk->first_insn + k];
			if (in->addr != a || in->len == 0) {
				snprintf(why, whylen, "block %zu is not contiguous at 0x%llx", b, (unsigned long long)a);
				return false;
			}
			a += in->len;
			if (ls_cfg_block_of(cfg, in->addr) != (int32_t)b) {
				snprintf(why, whylen, "block_of(0x%llx) != %zu", (unsigned long long)in->addr, b);
				return false;
			}
		}
		if (a != blk->end) {
			snprintf(why, whylen, "block %zu ends at 0x%llx, not 0x%llx", b, (unsigned long long)blk->end,
			         (unsigned long long)a);
			return false;
		}
		for (uint32_t k = 0; k < blk->nsucc; k++)
			if (cfg->edges[cfg->succ[blk->first_succ + k]].from != b) {
				snprintf(why, whylen, "succ list of block %zu", b);
				return false;
			}
		for (uint32_t k = 0; k < blk->npred; k++)
			if (cfg->edges[cfg->pred[blk->first_pred + k]].to != b) {
				snprintf(why, whylen, "pred list of block %zu", b);
				return false;
			}
	}
	/* reachable: the entry, and every successor of a reachable block. */
	for (size_t b = 0; b < cfg->nblocks; b++) {
		const struct ls_block *blk = &cfg->blocks[b];
		for (uint32_t k = 0; k < blk->nsucc; k++)
			if (blk->reachable && !cfg->blocks[cfg->edges[cfg->succ[blk->first_succ + k]].to].reachable) {
				snprintf(why, whylen, "a successor of reachable block %zu is not reachable", b);
				return false;
			}
	}
	if (!cfg->blocks[0].reachable) {
		snprintf(why, whylen, "the entry block is not reachable");
		return false;
	}
	if (insns != cfg->ninsns) {
		snprintf(why, whylen, "%zu instructions in blocks, %zu decoded", insns, cfg->ninsns);
		return false;
	}
	for (size_t i = 1; i < cfg->ninsns; i++)
		if (cfg->insns[i].addr < cfg->insns[i - 1].addr + cfg->insns[i - 1].len) {
			snprintf(why, whylen, "instructions overlap or are out of order at 0x%llx",
			         (unsigned long long)cfg->insns[i].addr);
			return false;
		}
	/* Every decoded byte inside the proc's ranges. */
	for (size_t i = 0; i < cfg->ninsns; i++) {
		bool in = false;
		for (size_t r = 0; r < p->nranges; r++)
			in |= cfg->insns[i].addr >= p->ranges[r].lo &&
			      cfg->insns[i].addr + cfg->insns[i].len <= p->ranges[r].hi;
		if (!in) {
			snprintf(why, whylen, "instruction at 0x%llx outside the ranges", (unsigned long long)cfg->insns[i].addr);
			return false;
		}
	}
	return true;
}

/* objdump's instructions: address -> (direct branch/call target or 0),
 * sorted by address. */
struct od_insn {
	uint64_t addr, target;
	char kind; /* 'j' jmp, 'c' jcc, 'k' call, 'r' ret, 0 other */
};

static int cmp_od(const void *a, const void *b)
{
	const struct od_insn *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static struct od_insn *objdump_insns(const char *path, size_t *n)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "objdump -d --no-show-raw-insn -w '%s' 2>/dev/null", path);
	FILE *p = popen(cmd, "r");
	*n = 0;
	if (!p)
		return NULL;
	size_t cap = 1024;
	struct od_insn *v = malloc(cap * sizeof *v);
	char line[1024];
	while (fgets(line, sizeof line, p)) {
		char *tab = strchr(line, '\t'), *end;
		if (!tab || line[0] != ' ')
			continue;
		uint64_t addr = strtoull(line, &end, 16);
		if (end == line || *end != ':')
			continue;
		char *mn = tab + 1;
		/* Skip prefixes objdump prints as words. */
		static const char *const prefixes[] = { "notrack ", "bnd ", "cs ", "ds ", "data16 ", "rep ", "repz ", "lock " };
		for (bool again = true; again;) {
			again = false;
			for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
				if (strncmp(mn, prefixes[i], strlen(prefixes[i])) == 0) {
					mn += strlen(prefixes[i]);
					again = true;
				}
		}
		if (*n == cap)
			v = realloc(v, (cap *= 2) * sizeof *v);
		struct od_insn *o = &v[(*n)++];
		o->addr = addr;
		o->target = 0;
		o->kind = 0;
		char *ops = mn + strcspn(mn, " \t\n");
		ops += strspn(ops, " \t");
		bool direct = *ops && *ops != '*' && strtoull(ops, &end, 16) && (*end == ' ' || *end == '\n');
		if (strncmp(mn, "jmp", 3) == 0)
			o->kind = 'j';
		else if (mn[0] == 'j' || strncmp(mn, "loop", 4) == 0)
			o->kind = 'c';
		else if (strncmp(mn, "call", 4) == 0)
			o->kind = 'k';
		else if (strncmp(mn, "ret", 3) == 0)
			o->kind = 'r';
		if (o->kind && o->kind != 'r' && direct)
			o->target = strtoull(ops, NULL, 16);
	}
	pclose(p);
	qsort(v, *n, sizeof *v, cmp_od);
	return v;
}

/* Our decoding of every procedure against objdump's: the same instruction
 * boundaries, kinds and direct targets. */
static void check_against_objdump(const char *tag, const char *path, const ls_module *m, struct ls_decoder *dec)
{
	size_t nod;
	struct od_insn *od = objdump_insns(path, &nod);
	if (!od || nod == 0) {
		printf("ok %d # SKIP %s: no objdump output\n", ++test_no, tag);
		free(od);
		return;
	}
	struct ls_cfg_env env = { .m = m, .dec = dec };
	size_t total = 0, same = 0, branches = 0, same_targets = 0;
	char first[256] = "";
	for (size_t i = 0; i < m->procs.nprocs; i++) {
		struct ls_cfg cfg;
		if (m->procs.procs[i].is_plt || ls_cfg_build(&env, &m->procs.procs[i], &cfg) != 0)
			continue;
		for (size_t k = 0; k < cfg.ninsns; k++) {
			const struct ls_insn *in = &cfg.insns[k];
			struct od_insn key = { .addr = in->addr };
			const struct od_insn *o = bsearch(&key, od, nod, sizeof *od, cmp_od);
			total++;
			char want = 0;
			switch (in->kind) {
			case LS_INSN_JUMP: case LS_INSN_IJUMP: want = 'j'; break;
			case LS_INSN_CJUMP: want = 'c'; break;
			case LS_INSN_CALL: case LS_INSN_ICALL: want = 'k'; break;
			case LS_INSN_RET: want = 'r'; break;
			default: break;
			}
			bool good = o && o->kind == want && (o + 1 >= od + nod || o[1].addr == in->addr + in->len ||
			                                     k + 1 == cfg.ninsns || cfg.insns[k + 1].addr != in->addr + in->len);
			same += good;
			if (!good && !first[0])
				snprintf(first, sizeof first, "at 0x%llx: %s", (unsigned long long)in->addr,
				         o ? "a different kind or length" : "not an objdump instruction");
			if (in->kind == LS_INSN_JUMP || in->kind == LS_INSN_CJUMP || in->kind == LS_INSN_CALL) {
				branches++;
				same_targets += o && o->target == in->target;
			}
		}
		ls_cfg_free(&cfg);
	}
	ok(total > 100 && same == total, "%s: %zu/%zu instructions decoded as objdump does %s", tag, same, total, first);
	ok(branches > 10 && same_targets == branches, "%s: %zu/%zu direct branch and call targets as objdump's", tag,
	   same_targets, branches);
	free(od);
}

/* PATH opened without the cache and without the loop stage (the CFGs are
 * built here, one at a time), its warnings collected in W (may be NULL): a
 * TAP line says whether it opened. */
static ls_module *open_module(const char *tag, const char *path, struct warnings *w)
{
	ls_options opt;
	ls_options_init(&opt);
	opt.use_cache = 0;
	opt.want_loops = 0;
	if (w) {
		opt.warn = collect_warning;
		opt.warn_ctx = w;
	}
	ls_error err;
	ls_module *m = ls_module_open(path, &opt, &err);
	ok(m != NULL, "%s: module opens%s%s", tag, m ? "" : ": ", m ? "" : err.message);
	return m;
}

static void check_binary(const char *tag, const char *path, bool optimized)
{
	struct warnings w = { .text = "", .n = 0 };
	ls_module *m = open_module(tag, path, &w);
	if (!m)
		return;
	struct ls_decoder *dec = ls_decoder_new(m->ehdr.e_machine);
	struct ls_cfg_env env = { .m = m, .dec = dec };

	/* Every procedure: a sane CFG. */
	size_t built = 0, sane = 0;
	char why[600] = "";
	for (size_t i = 0; i < m->procs.nprocs; i++) {
		const struct ls_proc *p = &m->procs.procs[i];
		struct ls_cfg cfg;
		if (ls_cfg_build(&env, p, &cfg) != 0)
			continue;
		built++;
		char w1[256];
		if (cfg_sane(&cfg, p, w1, sizeof w1))
			sane++;
		else if (!why[0])
			snprintf(why, sizeof why, "%s: %s", p->name ? p->name : "?", w1);
		struct ls_loop_forest lf;
		ls_loop_forest_build(&cfg, &lf);
		ls_loop_forest_free(&lf);
		ls_cfg_free(&cfg);
	}
	ok(built > 10 && sane == built, "%s: %zu/%zu CFGs sane %s", tag, sane, built, why);
	check_against_objdump(tag, path, m, dec);

	const struct ls_proc *die = find_proc(m, "die"), *die_twice = find_proc(m, "die_twice");
	const struct ls_proc *checked = find_proc(m, "checked"), *tail = find_proc(m, "tail");
	const struct ls_proc *helper = find_proc(m, "helper"), *dispatch = find_proc(m, "dispatch");
	const struct ls_proc *nest3 = find_proc(m, "nest3"), *bad_bytes = find_proc(m, "bad_bytes");
	const struct ls_proc *bad_table = find_proc(m, "bad_table");
	ok(die && die_twice && checked && tail && helper && dispatch && nest3 && bad_bytes && bad_table,
	   "%s: the fixture's procedures are found", tag);
	if (!(die && die_twice && checked && tail && helper && dispatch && nest3 && bad_bytes && bad_table))
		goto out;

	/* noreturn */
	ok(!die->noreturn && ls_cfg_call_noreturn(m, die->entry), "%s: die() (only calls exit) is proved noreturn", tag);
	ok(ls_cfg_call_noreturn(m, die_twice->entry), "%s: die_twice() (only calls die) is proved noreturn", tag);
	ok(!ls_cfg_call_noreturn(m, helper->entry) && !ls_cfg_call_noreturn(m, checked->entry) &&
	   !ls_cfg_call_noreturn(m, tail->entry), "%s: helper, checked and tail return", tag);

	struct ls_cfg cfg;
	/* checked(): the block that calls die_twice has no successor. */
	if (ls_cfg_build(&env, checked, &cfg) == 0) {
		int calls = 0, dead = 0;
		for (size_t b = 0; b < cfg.nblocks; b++) {
			const struct ls_insn *in = last_insn(&cfg, b);
			if ((in->kind == LS_INSN_CALL || in->kind == LS_INSN_JUMP) && in->target == die_twice->entry) {
				calls++;
				dead += cfg.blocks[b].nsucc == 0;
			}
		}
		ok(calls >= 1 && dead == calls, "%s: checked(): the call to die_twice ends its block without a successor (%d/%d)",
		   tag, dead, calls);
		ls_cfg_free(&cfg);
	}

	/* tail(): at -O2 a jmp to helper, which is a call, not an edge. */
	if (optimized && ls_cfg_build(&env, tail, &cfg) == 0) {
		int jumps = 0, edges = 0;
		for (size_t b = 0; b < cfg.nblocks; b++) {
			const struct ls_insn *in = last_insn(&cfg, b);
			if (in->kind == LS_INSN_JUMP && in->target == helper->entry) {
				jumps++;
				edges += cfg.blocks[b].nsucc;
			}
		}
		ok(jumps == 1 && edges == 0, "%s: tail(): jmp helper is a tail call with no edge", tag);
		ls_cfg_free(&cfg);
	}

	/* dispatch(): one indirect jump with one switch edge per distinct case. */
	if (ls_cfg_build(&env, dispatch, &cfg) == 0) {
		int ijumps = 0;
		uint32_t cases = 0;
		bool all_switch = true;
		for (size_t b = 0; b < cfg.nblocks; b++) {
			if (last_insn(&cfg, b)->kind != LS_INSN_IJUMP)
				continue;
			ijumps++;
			cases = cfg.blocks[b].nsucc;
			for (uint32_t k = 0; k < cases; k++)
				all_switch &= cfg.edges[cfg.succ[cfg.blocks[b].first_succ + k]].kind == LS_EDGE_SWITCH;
		}
		/* 9 cases; the compiler may merge some (none here share code). */
		ok(ijumps == 1 && cases == 9 && all_switch, "%s: dispatch(): the jump table gives 9 switch edges (%d jumps, %u edges)",
		   tag, ijumps, cases);
		size_t unreachable = 0;
		struct ls_loop_forest lf;
		ls_loop_forest_build(&cfg, &lf);
		/* Every case block is reachable: no code of dispatch is left
		 * out of the graph but padding. */
		for (size_t b = 1; b < cfg.nblocks; b++)
			if (cfg.blocks[b].npred == 0) {
				bool padding = true;
				for (uint32_t k = 0; k < cfg.blocks[b].ninsns; k++)
					padding &= cfg.insns[cfg.blocks[b].first_insn + k].opcode == LS_MN_NOP;
				unreachable += !padding;
			}
		ok(unreachable == 0, "%s: dispatch(): every block but padding has a predecessor (%zu without)", tag, unreachable);
		ls_loop_forest_free(&lf);
		ls_cfg_free(&cfg);
	}

	/* nest3(): three nested loops, depths 1, 2, 3. */
	if (ls_cfg_build(&env, nest3, &cfg) == 0) {
		struct ls_loop_forest lf;
		ls_loop_forest_build(&cfg, &lf);
		unsigned maxdepth = 0;
		bool chain = true;
		for (size_t l = 0; l < lf.nloops; l++) {
			if (lf.loops[l].depth > maxdepth)
				maxdepth = lf.loops[l].depth;
			if (lf.loops[l].parent >= (int32_t)l)
				chain = false;
		}
		ok(maxdepth == 3 && chain && lf.nloops >= 3 && lf.nloops <= 6,
		   "%s: nest3(): loops nest 3 deep (%zu loops, max depth %u)", tag, lf.nloops, maxdepth);
		ls_loop_forest_free(&lf);
		ls_cfg_free(&cfg);
	}

	/* bad_bytes: warned once, both rets decoded, nothing loops forever. */
	w.n = 0;
	w.text[0] = 0;
	if (ls_cfg_build(&env, bad_bytes, &cfg) == 0) {
		int rets = 0;
		for (size_t i = 0; i < cfg.ninsns; i++)
			rets += cfg.insns[i].kind == LS_INSN_RET;
		ok(rets == 2 && w.n == 1 && strstr(w.text, "bad_bytes") && strstr(w.text, "do not decode"),
		   "%s: bad_bytes: undecodable bytes skipped with one warning (%d rets, %d warnings)", tag, rets, w.n);
		ls_cfg_free(&cfg);
	} else {
		ok(0, "%s: bad_bytes: a CFG is built", tag);
	}

	/* bad_table: entry 2 points into helper: a warning, two good entries. */
	w.n = 0;
	w.text[0] = 0;
	if (ls_cfg_build(&env, bad_table, &cfg) == 0) {
		uint32_t sw = 0;
		for (size_t e = 0; e < cfg.nedges; e++)
			sw += cfg.edges[e].kind == LS_EDGE_SWITCH;
		ok(sw == 1 && w.n == 1 && strstr(w.text, "jump table") && strstr(w.text, "helper"),
		   "%s: bad_table: the entry into helper() is a warning, the others an edge (%u switch edges, %d warnings)",
		   tag, sw, w.n);
		ls_cfg_free(&cfg);
	} else {
		ok(0, "%s: bad_table: a CFG is built", tag);
	}
out:
	ls_decoder_free(dec);
	ls_module_close(m);
}

static const struct ls_proc *find_proc_prefix(const ls_module *m, const char *prefix)
{
	for (size_t i = 0; i < m->procs.nprocs; i++)
		if (m->procs.procs[i].name && strncmp(m->procs.procs[i].name, prefix, strlen(prefix)) == 0)
			return &m->procs.procs[i];
	return NULL;
}

/* The exception edges of PROC: how many, how many land inside a loop. */
static void exception_edges(const ls_module *m, struct ls_decoder *dec, const struct ls_proc *p, int *n,
                            int *in_loop, int *reachable_pads)
{
	struct ls_cfg_env env = { .m = m, .dec = dec };
	struct ls_cfg cfg;
	*n = *in_loop = *reachable_pads = 0;
	if (!p || ls_cfg_build(&env, p, &cfg) != 0)
		return;
	struct ls_loop_forest lf;
	ls_loop_forest_build(&cfg, &lf);
	for (size_t e = 0; e < cfg.nedges; e++) {
		if (cfg.edges[e].kind != LS_EDGE_EXCEPTION)
			continue;
		(*n)++;
		*in_loop += lf.block_loop[cfg.edges[e].to] >= 0;
		*reachable_pads += cfg.blocks[cfg.edges[e].to].reachable;
	}
	ls_loop_forest_free(&lf);
	ls_cfg_free(&cfg);
}

static void check_cxx(const char *tag, const char *path)
{
	ls_module *m = open_module(tag, path, NULL);
	if (!m)
		return;
	struct ls_decoder *dec = ls_decoder_new(m->ehdr.e_machine);
	int n, in_loop, reach;
	exception_edges(m, dec, find_proc_prefix(m, "loop_catch"), &n, &in_loop, &reach);
	/* The catch handler goes back to the loop: it is part of it. */
	ok(n >= 1 && in_loop >= 1 && reach == n, "%s: loop_catch: the catch handler is reached by an exception edge and is in the loop (%d edges, %d in a loop)",
	   tag, n, in_loop);
	exception_edges(m, dec, find_proc_prefix(m, "loop_cleanup"), &n, &in_loop, &reach);
	/* The cleanup ends in _Unwind_Resume: reached, but it leaves the loop. */
	ok(n >= 1 && in_loop == 0 && reach == n, "%s: loop_cleanup: the cleanup pad is reached by an exception edge, outside the loop (%d edges, %d in a loop)",
	   tag, n, in_loop);
	ls_decoder_free(dec);
	ls_module_close(m);
}


/* ---- jump-table shapes (tests/fixtures/jump_tables.s) ---- */

/* Per indirect jump of PROC: its number of switch edges, in address order
 * (at most 8 jumps).  Returns how many jumps. */
static int switch_edges(const ls_module *m, struct ls_decoder *dec, const struct ls_proc *p, unsigned *edges,
                        struct ls_cfg *cfg_out)
{
	struct ls_cfg_env env = { .m = m, .dec = dec };
	struct ls_cfg cfg;
	if (!p || ls_cfg_build(&env, p, &cfg) != 0)
		return -1;
	int n = 0;
	for (size_t b = 0; b < cfg.nblocks; b++)
		if (last_insn(&cfg, b)->kind == LS_INSN_IJUMP && n < 8)
			edges[n++] = cfg.blocks[b].nsucc;
	/* blocks are numbered from the entry: sort the jumps by address */
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && edges[k - 1] > edges[k]; k--) {
			unsigned t = edges[k];
			edges[k] = edges[k - 1];
			edges[k - 1] = t;
		}
	if (cfg_out)
		*cfg_out = cfg;
	else
		ls_cfg_free(&cfg);
	return n;
}

static void check_shapes(const char *tag, const char *path, bool zero_entries)
{
	struct warnings w = { .text = "", .n = 0 };
	ls_module *m = open_module(tag, path, &w);
	if (!m)
		return;
	struct ls_decoder *dec = ls_decoder_new(m->ehdr.e_machine);
	if (zero_entries) {
		/* lld leaves a PIE's absolute entries to the loader: the file
		 * holds zeros, the RELATIVE relocations the addresses. */
		uint64_t addr = 0, size = 0, v = 1;
		bool found = ls_module_symbol(m, "tab_hoisted", &addr, &size) == 0;
		for (Elf_Scn *scn = NULL; found && (scn = elf_nextscn(m->elf, scn));) {
			GElf_Shdr sh;
			Elf_Data *d;
			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS && addr >= sh.sh_addr &&
			    addr + 8 <= sh.sh_addr + sh.sh_size && (d = elf_rawdata(scn, NULL)) && d->d_buf)
				memcpy(&v, (const char *)d->d_buf + (addr - sh.sh_addr), 8);
		}
		ok(found && v == 0, "%s: the file holds zeros for the absolute entries (tab_hoisted[0] = %#llx)", tag,
		   (unsigned long long)v);
	}
	/* name, jumps, switch edges of each (all alike), what it tests */
	static const struct { const char *name; int jumps; unsigned edges; const char *what; } want[] = {
		{ "jt_byte", 1, 4, "byte-indexed, no compare: ends at the next data symbol" },
		{ "jt_word", 1, 3, "word-indexed, no compare: ends at the next table the function names" },
		{ "jt_hoisted", 1, 5, "base register loaded after the loop, kept across a call (clang's hoisting)" },
		{ "jt_relative", 1, 5, "4-byte relative entries under a compare; the entry at the end is no edge" },
		{ "jt_goto", 4, 4, "computed goto, a copy of the dispatch in every handler, masked index" },
		{ "jt_goto_sym", 1, 3, "computed goto, byte index bounded by the table's symbol size" },
		{ "jt_unresolved", 1, 0, "table base from memory, the frame up: no edge" },
		{ "jt_tailcall", 1, 0, "table base from memory, the frame torn down: a tail call, no edge" },
		{ "jt_spill", 4, 4, "computed goto, the table's address reloaded from a stack slot (SP-relative)" },
		{ "jt_spill_bp", 3, 2, "computed goto, the slot stored SP-relative, reloaded BP-relative" },
		{ "jt_spill_clobbered", 1, 0, "the slot written over before the reload: no edge" },
		{ "jt_manydefs", 1, 12, "12 identical definitions of the base reach the jump" },
		{ "jt_copycycle", 1, 3, "the base lent to another register and restored: a cycle of copies" },
		{ "jt_memcmp", 1, 3, "bounded by a compare of the same word through another index; the default "
		  "in another function" },
		{ "jt_functions", 1, 0, "a table of functions: a tail call, no edge" },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		w.n = 0;
		w.text[0] = 0;
		const struct ls_proc *p = find_proc(m, want[i].name);
		unsigned edges[8] = { 0 };
		struct ls_cfg cfg;
		int n = switch_edges(m, dec, p, edges, &cfg);
		bool same = n == want[i].jumps;
		for (int k = 0; k < n && same; k++)
			same = edges[k] == want[i].edges;
		ok(same, "%s: %s: %s (%d jumps, %u switch edges each; want %d, %u)", tag, want[i].name, want[i].what, n,
		   n > 0 ? edges[0] : 0, want[i].jumps, want[i].edges);
		if (n < 0)
			continue;
		bool unresolved = strcmp(want[i].name, "jt_unresolved") == 0 ||
		                  strcmp(want[i].name, "jt_spill_clobbered") == 0;
		ok(cfg.unresolved_jumps == (unresolved ? 1u : 0u) &&
		   (unresolved ? w.n == 1 && strstr(w.text, want[i].name) && strstr(w.text, "not resolved") : w.n == 0),
		   "%s: %s: %s (%u unresolved, %d warnings%s%.120s)", tag, want[i].name,
		   unresolved ? "counted as unresolved, one warning naming it" : "nothing unresolved, no warning",
		   cfg.unresolved_jumps, w.n, w.n ? ": " : "", w.text);
		struct ls_loop_forest lf;
		ls_loop_forest_build(&cfg, &lf);
		if (strcmp(want[i].name, "jt_hoisted") == 0) {
			/* One loop: its header is the block the cases go back to. */
			ok(lf.nloops == 1 && cfg.blocks[lf.loops[0].header].nsucc == 2 && !lf.loops[0].irreducible,
			   "%s: jt_hoisted: the interpreter loop is one natural loop (%zu loops)", tag, lf.nloops);
		} else if (strcmp(want[i].name, "jt_goto") == 0) {
			/* The three handlers that dispatch again are all in one loop. */
			size_t handlers = 0, in_loop = 0;
			for (size_t b = 1; b < cfg.nblocks; b++)
				if (last_insn(&cfg, b)->kind == LS_INSN_IJUMP) {
					handlers++;
					in_loop += lf.block_loop[b] >= 0;
				}
			ok(handlers == 3 && in_loop == 3, "%s: jt_goto: the handlers are in the dispatch loop (%zu of %zu)", tag,
			   in_loop, handlers);
		}
		ls_loop_forest_free(&lf);
		ls_cfg_free(&cfg);
	}
	ls_decoder_free(dec);
	ls_module_close(m);
}

static bool have(const char *cc)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", cc);
	return system(cmd) == 0;
}

int main(void)
{
	char dir[] = "/tmp/ls-unit-cfg.XXXXXX";
	if (!mkdtemp(dir)) {
		printf("1..0 # SKIP cannot make a temporary directory\n");
		return 0;
	}
	char src[512];
	snprintf(src, sizeof src, "%s/fixture.c", dir);
	FILE *f = fopen(src, "w");
	if (!f) {
		printf("1..0 # SKIP cannot write the fixture\n");
		return 0;
	}
	fputs(fixture, f);
	fclose(f);

	static const struct { const char *cc, *flags; bool optimized; } builds[] = {
		{ "gcc", "-O2", true },
		{ "gcc", "-O0", false },
		{ "gcc", "-O2 -fno-pie -no-pie", true },
		{ "clang", "-O2", true },
		{ "clang", "-O0", false },
		{ "clang", "-O2 -fno-pie -no-pie", true },
	};
	for (size_t i = 0; i < sizeof builds / sizeof builds[0]; i++) {
		char tag[128], out[512], cmd[2048];
		snprintf(tag, sizeof tag, "%s %s", builds[i].cc, builds[i].flags);
		if (!have(builds[i].cc)) {
			printf("ok %d # SKIP %s: no compiler\n", ++test_no, tag);
			continue;
		}
		snprintf(out, sizeof out, "%s/fixture-%zu", dir, i);
		snprintf(cmd, sizeof cmd, "%s %s -g -o %s %s >%s/cc.log 2>&1", builds[i].cc, builds[i].flags, out, src, dir);
		int rc = system(cmd);
		ok(rc == 0, "%s: the fixture compiles", tag);
		if (rc != 0) {
			snprintf(cmd, sizeof cmd, "sed 's/^/# /' %s/cc.log", dir);
			if (system(cmd) != 0)
				printf("# (no compiler output)\n");
		}
		if (rc == 0)
			check_binary(tag, out, builds[i].optimized);
		unlink(out);
	}
	snprintf(src, sizeof src, "%s/fixture.cpp", dir);
	if ((f = fopen(src, "w"))) {
		fputs(fixture_cxx, f);
		fclose(f);
	}
	static const char *const cxx[] = { "g++", "clang++" };
	for (size_t i = 0; i < 2; i++) {
		char tag[64], out[512], cmd[2048];
		snprintf(tag, sizeof tag, "%s -O2", cxx[i]);
		if (!have(cxx[i])) {
			printf("ok %d # SKIP %s: no compiler\n", ++test_no, tag);
			continue;
		}
		snprintf(out, sizeof out, "%s/fixture-cxx-%zu", dir, i);
		snprintf(cmd, sizeof cmd, "%s -O2 -g -o %s %s >%s/cc.log 2>&1", cxx[i], out, src, dir);
		int rc = system(cmd);
		ok(rc == 0, "%s: the C++ fixture compiles", tag);
		if (rc == 0)
			check_cxx(tag, out);
		unlink(out);
	}
	unlink(src);

	/* The jump-table shapes: GNU ld (PIE: entries in the file), lld
	 * (PIE: zeros in the file, the RELATIVE addends), and non-PIE. */
	const char *top = getenv("top_srcdir");
	char shapes[1024];
	snprintf(shapes, sizeof shapes, "%s/tests/fixtures/jump_tables.s", top ? top : ".");
	static const struct { const char *cc, *flags; } sb[] = {
		{ "gcc", "-pie" }, { "clang", "-fuse-ld=lld -pie" }, { "gcc", "-no-pie" },
	};
	for (size_t i = 0; i < sizeof sb / sizeof sb[0]; i++) {
		char tag[128], out[512], cmd[2048];
		snprintf(tag, sizeof tag, "jump_tables.s %s %s", sb[i].cc, sb[i].flags);
		if (!have(sb[i].cc) || access(shapes, R_OK) != 0) {
			printf("ok %d # SKIP %s: no compiler or no %s\n", ++test_no, tag, shapes);
			continue;
		}
		snprintf(out, sizeof out, "%s/shapes-%zu", dir, i);
		snprintf(cmd, sizeof cmd, "%s %s -o %s %s >%s/cc.log 2>&1", sb[i].cc, sb[i].flags, out, shapes, dir);
		if (system(cmd) != 0) {
			printf("ok %d # SKIP %s: does not link here (lld?)\n", ++test_no, tag);
			continue;
		}
		check_shapes(tag, out, strstr(sb[i].flags, "lld") != NULL);
		unlink(out);
	}
	snprintf(src, sizeof src, "%s/fixture.c", dir);
	unlink(src);
	char log[600];
	snprintf(log, sizeof log, "%s/cc.log", dir);
	unlink(log);
	rmdir(dir);
	return done_testing();
}
