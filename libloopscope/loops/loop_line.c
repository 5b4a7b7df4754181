/* loop_line.c - the source line of every loop: the line of the loop's own
 * for, while or do, of the label a goto loop jumps back to, or, for a loop
 * the compiler made from recursion, of the recursive call.
 *
 * The slides' priority scheme (back edge, backward branch, true branch,
 * fall-through, header) names the line of a branch, which is the loop's
 * line only when the loop's test sits on its back edge.  Real code has
 * three other shapes: a test at the top (a while, a for rotated or not: its
 * test is on the loop's first line), no test at all (`for (;;)`, `while
 * (1)`, a goto loop: the statement has no code, and the back edge carries
 * the body's last statement), and a test at the bottom (do/while).  So the
 * rules, in order, each named by its enum ls_line_rule:
 *
 *   DWARF (always; lines taken in the loop's inline context, in the file
 *   most of the loop's lines come from, from instructions that vote - no
 *   line 0, no spill, reload, register copy or padding; see ls_place):
 *     SCOPE_VARIABLE  the loop is all on one line of an inlined call whose
 *                     code is all on that line (a one-statement callee
 *                     the loop repeats: clang gives even the increment
 *                     and compare of `for (Index i = a; i < b; ++i)
 *                     kernel.assignCoeff(i);` the callee's line), and a
 *                     lexical block around the call declares a variable
 *                     on the call's line or up to two above, and holds no
 *                     code but of those lines: the for's scope and its
 *                     init variable, on the for's line (up through
 *                     one-line callees: Eigen's assign_op); not when a
 *                     loop around it has a back edge on those lines:
 *                     that loop is the for (gcc's inline memcpy in a
 *                     for is a loop of its own);
 *     HEADER_STMT     a statement row at the header with a line
 *                     above every line of the loop: gcc gives a `for (;;)`,
 *                     `while (1)` or `do` a zero-length is_stmt row there
 *                     (linemap.c keeps them aside); but a declaration
 *                     opening the body (`char buf[64];`) gets one too, so
 *                     the highest row that declares no variable of the
 *                     body (DW_TAG_variable in a lexical block beginning
 *                     inside the loop; a for-init variable's block begins
 *                     before it);
 *     STMT_IN_LOOP    such a hidden statement row elsewhere in the loop (the
 *                     top of a rotated loop's body), above every line of
 *                     it: gcc's row of a `while (a` whose code is all on
 *                     the `&& b)` line below, or of a `do {`;
 *     ABOVE_SWITCH    the loop's first line holds three or more of its
 *                     exit tests, two or more into the loop's own lines (a
 *                     switch whose cases were threaded out of the loop),
 *                     or, in a loop of three lines or fewer, back to its
 *                     first (gcc -O3 threads the cases out with the rest
 *                     of the body), and the line above has no code at
 *                     all: the code-less `for (;;)` around the switch - a
 *                     guess, marked as one;
 *     ENTRY_STMT      the loop is all on one line (clang gives a
 *                     vectorized or idiom loop, its increment and test
 *                     too, the body's line) and the conditional branch
 *                     that guards its entry (the test that skips a
 *                     rotated loop, its other way meeting the loop's way
 *                     out; with a line table that is not gcc's, any) is
 *                     on a line one or two above, left of every column of
 *                     the loop's code, with no code of the loop's line in
 *                     between: the loop statement, whose location clang
 *                     gives the guard; up through inlined calls whose code
 *                     is all on the call's line (zstd's `do { COPY8(op,
 *                     ip) } while`: the guard is the do).  Not with gcc's
 *                     hidden statement rows in the loop or the guard: gcc
 *                     keeps a loop's test on its statement's line, and its
 *                     guard above is an `if` around the loop;
 *     LABEL           a label (DW_TAG_label with an address) in the loop's
 *                     blocks (at the header, or at the top of a rotated
 *                     loop's body: Lua's `again:` in luaV_tointeger), on
 *                     the loop's first line or up to three above it, in a
 *                     loop closed by a direct jump: a goto loop, whose
 *                     first line may be an `if` that reads as a test at
 *                     the top;
 *     TEST_AT_TOP     the loop's own test (one that closes the loop, or
 *                     leaves it for a line outside the loop's lines: not a
 *                     test of the body that the compiler threaded out of
 *                     it, nor one whose way out dies, an assertion) on the
 *                     loop's first line (leaving out a line of one
 *                     instruction merged in from before the loop);
 *     TEST_AT_BOTTOM  the back-edge test, its compare or its branch on or
 *                     after the loop's last line (and not on its first:
 *                     that is TEST_AT_TOP's);
 *     BEFORE_BODY     no test of its own at either end (`for (;;)`,
 *                     `while (1)`: the statement has no code): the line
 *                     before the loop's first, where such a statement
 *                     stands, above the body's declarations (with a line
 *                     table not gcc's, any lexical block's: clang's block
 *                     of the body may begin before the header, with code
 *                     it hoisted) - a guess,
 *                     marked as one (not for a loop that is only its jump
 *                     back: an emptied body leaves the loop statement's
 *                     line on it);
 *     SLIDES          the slides' ranks (see edge_rank);
 *     HEADER          the header's first line;
 *     ENTRY           a loop with no line at all: the branch entering it.
 *   Then, over all the procedure's loops:
 *     SIBLING_TOP     a loop whose line came from STMT_IN_LOOP,
 *                     ABOVE_SWITCH, BEFORE_BODY or SLIDES, and whose copies
 *                     in the procedure (the same first and last line of
 *                     the same file: a loop versioned or split into nested
 *                     loops, a function inlined twice) name one line by
 *                     TEST_AT_TOP more often than any other: that line.
 *                     The compiler keeps the loop's test at the top of one
 *                     copy, and threads it into the body of another.
 *   This order is measured: on the real-code corpus (tests/corpus-lines.py,
 *   LOOPSCOPE_NO_SOURCE=1: Lua, zstd, Eigen, {fmt}, CPython) it names the
 *   loop's own line for 95.1% of clang's loops and 95.5% of gcc's (87.3%
 *   and 90.6% before issue 22; 91.0% and 92.0% before the body-variable,
 *   label and dying-test refinements; 91.3% and 92.4% before STMT_IN_LOOP
 *   and ABOVE_SWITCH, which {fmt}'s parse_align - a `for (;;)` around a
 *   switch, 366 loops per compiler, one per template instance - and
 *   zstd's multi-line conditions were missing; 93.0% and 94.1% before
 *   SIBLING_TOP; 93.1% and 94.4% before SCOPE_VARIABLE, Eigen's
 *   assignment loops, and ABOVE_SWITCH's three-line loops, parse_align
 *   at gcc -O3; 93.97% and 95.51% before ENTRY_STMT, 146 clang loops
 *   gained, one lost per compiler; 94.64% and 95.51% before LABEL looked
 *   past the header and ahead of TEST_AT_TOP, 37 clang loops and 4 gcc
 *   loops gained, none lost, and 19 clang loops more with three lines
 *   above instead of two; 94.82% and 95.53% before BEFORE_BODY went
 *   above any block's variables in clang's code, 44 clang loops gained,
 *   3 lost).  What is left is mostly
 *   beyond DWARF: the statement's line carries no code at all (`for (;;)`,
 *   `while (1)`, `do {`) and is not the line just before the body (a
 *   comment stands between), or a body's `if (...) break;` at either end
 *   of a `for (;;)` reads exactly as a while's or a do/while's test.
 *
 *   Source text, when the file is readable (source.c; checks and improves
 *   the DWARF line, never needed):
 *     SRC_CONFIRMED   the line begins a loop statement whose body holds all
 *                     of the loop's lines;
 *     SRC_DO          it is a do/while's closing while: its do;
 *     SRC_EXPANSION   the loop's code is all on one line that begins no
 *                     loop statement: a macro's loop, named where it is used;
 *     SRC_ENCLOSING   the innermost loop statement (or goto label) of the
 *                     function holding all of the loop's lines that no
 *                     nested loop has taken: `for (;;)`, `while (1)`, goto;
 *     SRC_RECURSION   no loop statement holds it, and a line of it (a back
 *                     edge's first) calls the function itself: tail
 *                     recursion the compiler made a loop;
 *     SRC_CALLER      all of it is in an inlined callee whose function has
 *                     no loop statement for it: the innermost loop
 *                     statement of a caller holding the call (the loop
 *                     repeats the call: `while (testnext(ls, ';')) {}`);
 *     SRC_SHARED      the statement of an enclosing loop: one source loop
 *                     the compiler split into nested loops (gcc, a
 *                     `for (;;)` around a switch).
 *
 * Loops are done children first: a statement a nested loop took is not its
 * parent's, and a statement whose own test confirms it for an outer loop
 * (SRC_CONFIRMED) is not taken by an inner one.
 */
#include "loops/source.h"
#include "structure/structure.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ls_line_rule_name(enum ls_line_rule r)
{
	static const char *const names[] = {
		"none", "test-at-top", "header-stmt", "test-at-bottom", "slides", "header",
		"src-confirmed", "src-do", "src-expansion", "src-enclosing", "src-recursion",
		"src-caller", "src-shared", "entry", "before-body", "src-after-entry", "label",
		"stmt-in-loop", "above-switch", "sibling-top", "scope-variable", "entry-stmt",
	};
	return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "?";
}

/* ---- inline contexts ---- */

static const struct ls_inl_node *ctx_parent(const struct ls_inl_node *n)
{
	for (n = n->parent; n && n->kind == LS_INL_LEXICAL; n = n->parent)
		;
	return n && n->kind == LS_INL_INLINED ? n : NULL;
}

/* The line of place P seen from context LCA: its own line if it is in
 * LCA, the call line of the inlined call below LCA that leads to it if it
 * is deeper; false if P is not inside LCA at all (a non-voting instruction
 * the placement put into the loop from elsewhere). */
static bool line_in_context(const struct ls_place *p, const struct ls_inl_node *lca, const char **file,
                            unsigned *line)
{
	const struct ls_inl_node *c = p->ctx, *below = NULL;
	for (; c && c != lca; c = ctx_parent(c))
		below = c;
	if (c != lca)
		return false;
	if (below) {
		*file = below->call_file;
		*line = below->call_line;
	} else {
		*file = p->file;
		*line = p->line;
	}
	return *line != 0;
}

/* ---- the facts of one loop ---- */

struct line_count {
	unsigned line;
	unsigned n;              /* voting instructions on it */
};

struct loop_facts {
	const char *file;        /* where the loop's lines are */
	unsigned lo, hi;         /* its first and last line there (voting instructions, nested loops too) */
	unsigned func_line;      /* the function's declaration line, when in FILE */
	struct line_count *lines; /* the lines, sorted, with their instruction counts */
	size_t nlines, total;
	size_t direct;           /* instructions right in the context, not in a call inlined there */
};

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

/* How many of the loop's voting instructions lie in lines [LO, HI]. */
static size_t held(const struct loop_facts *f, unsigned lo, unsigned hi)
{
	size_t n = 0;
	for (size_t i = 0; i < f->nlines; i++)
		if (f->lines[i].line >= lo && f->lines[i].line <= hi)
			n += f->lines[i].n;
	return n;
}

/* Lines above the function's declaration are not its own: code inlined
 * from elsewhere whose inline record the compiler dropped (gcc's bigint
 * helpers in fmt's format_dragon).  Leave them out, and bound the search
 * for the loop's statement by the declaration, when the loop has lines of
 * its own below it; otherwise the function's line says nothing. */
static void limit_to_function(struct loop_facts *f, unsigned decl_line)
{
	if (!decl_line || f->hi < decl_line)
		return;
	f->func_line = decl_line;
	size_t n = 0;
	f->total = 0;
	for (size_t i = 0; i < f->nlines; i++)
		if (f->lines[i].line >= decl_line) {
			f->lines[n++] = f->lines[i];
			f->total += f->lines[i].n;
		}
	f->nlines = n;
	f->lo = n ? f->lines[0].line : 0;
	f->hi = n ? f->lines[n - 1].line : 0;
}

/* The line of block B's last instruction (a branch) in context LCA, or of
 * the instruction before it when the branch has none. */
static unsigned branch_line(const struct ls_cfg *cfg, const struct ls_block *blk, const struct ls_places *ps, const struct ls_inl_node *lca, const char *file)
{
	for (uint32_t k = blk->ninsns; k-- > 0 && k + 2 >= blk->ninsns;) {
		int i = ls_block_place(ps, cfg, blk, k);
		const char *f;
		unsigned l;
		if (i >= 0 && line_in_context(&ps->pl[i], lca, &f, &l) && f == file)
			return l;
	}
	return 0;
}

/* Most of the loop's voting lines come from one file: the loop's.  Its
 * lines there, with counts, in F->lines. */
static void gather_facts(const struct ls_cfg *cfg, const struct ls_loop *L, const struct ls_places *ps, const struct ls_inl_node *lca, struct loop_facts *lf,
                         unsigned **scratch, size_t *cap)
{
	enum { NFILES = 4 };
	const char *files[NFILES] = { 0 };
	size_t counts[NFILES] = { 0 };
	memset(lf, 0, sizeof *lf);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t b = 0; b < L->nblocks; b++) {
			const struct ls_block *blk = &cfg->blocks[L->blocks[b]];
			for (uint32_t k = 0; k < blk->ninsns; k++) {
				int i = ls_block_place(ps, cfg, blk, k);
				const char *f;
				unsigned l;
				if (i < 0 || !ps->pl[i].votes || !line_in_context(&ps->pl[i], lca, &f, &l) || !f)
					continue;
				if (pass == 1) {
					if (f != lf->file)
						continue;
					if (!lf->lo || l < lf->lo)
						lf->lo = l;
					if (l > lf->hi)
						lf->hi = l;
					(*scratch)[lf->total++] = l;
					lf->direct += ps->pl[i].ctx == lca;
					continue;
				}
				size_t j = 0;
				while (j < NFILES && files[j] && files[j] != f)
					j++;
				if (j == NFILES)
					continue;
				files[j] = f;
				counts[j]++;
			}
		}
		if (pass == 0) {
			size_t best = 0;
			for (size_t j = 1; j < NFILES; j++)
				if (counts[j] > counts[best])
					best = j;
			lf->file = files[best];
			if (!lf->file)
				return;
			*scratch = ls_grow(*scratch, cap, counts[best], sizeof **scratch);
		}
	}
	if (!lf->total)
		return;
	qsort(*scratch, lf->total, sizeof **scratch, cmp_uint);
	lf->lines = ls_xmalloc(lf->total * sizeof *lf->lines);
	for (size_t i = 0; i < lf->total; i++) {
		if (lf->nlines && lf->lines[lf->nlines - 1].line == (*scratch)[i])
			lf->lines[lf->nlines - 1].n++;
		else
			lf->lines[lf->nlines++] = (struct line_count){ (*scratch)[i], 1 };
	}
}

/* Whether block TO is an entry (the header included) of loop L. */
static bool is_entry(const struct ls_loop *L, uint32_t to)
{
	for (size_t n = 0; n < L->nentries; n++)
		if (L->entries[n] == to)
			return true;
	return false;
}

/* Whether block B is inside loop K (in it or in a loop nested in it). */
static bool in_loop(const struct ls_loop_forest *lf, uint32_t b, int32_t k)
{
	int32_t l = lf->block_loop[b];
	while (l >= 0 && l != k)
		l = lf->loops[l].parent;
	return l == k;
}

/* The slides' ranks of block BLK's branch in loop K, lower is better; the
 * loop's own test (a conditional branch with one side in the loop, the
 * other leaving it, the in-loop side an entry (0) or backward (1)) first,
 * then a branch to an entry (2), a backward branch (3), a taken branch
 * (4), a fall-through (5). */
static int edge_rank(const struct ls_cfg *cfg, const struct ls_loop_forest *lf, int32_t k,
                     const struct ls_block *blk, const struct ls_insn *last)
{
	const struct ls_loop *L = &lf->loops[k];
	int rank = 99;
	bool exits = false, cond = last->kind == LS_INSN_CJUMP;
	int32_t inside = -1;
	for (uint32_t s = 0; s < blk->nsucc; s++) {
		const struct ls_cfg_edge *e = &cfg->edges[cfg->succ[blk->first_succ + s]];
		if (!in_loop(lf, e->to, k)) {
			exits = true;
			continue;
		}
		inside = (int32_t)e->to;
		if (lf->block_loop[e->to] != k)
			continue;
		bool branch = e->kind == LS_EDGE_TAKEN || e->kind == LS_EDGE_JUMP;
		int r;
		if (branch && is_entry(L, e->to))
			r = 2;
		else if (branch && cfg->blocks[e->to].start <= last->addr)
			r = 3;
		else if (e->kind == LS_EDGE_TAKEN)
			r = 4;
		else if (!branch && e->kind != LS_EDGE_SWITCH)
			r = 5;
		else
			continue;
		if (r < rank)
			rank = r;
	}
	if (cond && exits && inside >= 0) {
		if (is_entry(L, (uint32_t)inside))
			rank = 0;
		else if (cfg->blocks[inside].start <= last->addr && rank > 1)
			rank = 1;
	}
	return rank;
}

/* Whether block BLK of loop K ends in a test that leaves the loop. */
static bool is_exit_test(const struct ls_cfg *cfg, const struct ls_loop_forest *lf, int32_t k,
                         const struct ls_block *blk)
{
	if (!blk->ninsns || cfg->insns[blk->first_insn + blk->ninsns - 1].kind != LS_INSN_CJUMP)
		return false;
	bool in = false, out = false;
	for (uint32_t s = 0; s < blk->nsucc; s++) {
		const struct ls_cfg_edge *e = &cfg->edges[cfg->succ[blk->first_succ + s]];
		if (e->kind != LS_EDGE_TAKEN && e->kind != LS_EDGE_NOT_TAKEN)
			continue;
		if (in_loop(lf, e->to, k))
			in = true;
		else
			out = true;
	}
	return in && out;
}

/* Whether block address ADDR is in one of loop L's blocks. */
static bool addr_in_loop(const struct ls_cfg *cfg, const struct ls_loop *L, uint64_t addr)
{
	for (size_t b = 0; b < L->nblocks; b++) {
		const struct ls_block *blk = &cfg->blocks[L->blocks[b]];
		if (addr >= blk->start && addr < blk->end)
			return true;
	}
	return false;
}

/* Whether LINE of FILE declares a variable of the loop's body: one whose
 * lexical block begins inside the loop (`char buf[250];` opening a
 * `for (;;)`'s body has no code, and is not the loop's statement; a
 * for-init variable's block begins before the loop, with its init). */
static bool body_variable_line(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop *L,
                               const char *file, unsigned line)
{
	const struct ls_decl_line *v;
	size_t n = ls_inline_vars_at(&m->inl, file, line, &v);
	for (size_t i = 0; i < n; i++)
		if (v[i].scope_lo && addr_in_loop(cfg, L, v[i].scope_lo))
			return true;
	return false;
}

/* LINE, or the first line above it (not above the function's) that
 * declares no variable of the loop's body. */
static unsigned above_body_variables(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop *L,
                                     const struct loop_facts *f, unsigned line)
{
	while (line > 1 && line - 1 >= f->func_line && body_variable_line(m, cfg, L, f->file, line))
		line--;
	return line;
}

/* Whether LINE of FILE declares a variable of a lexical block (any: not
 * a function's own variable). */
static bool block_variable_line(const ls_module *m, const char *file, unsigned line)
{
	const struct ls_decl_line *v;
	size_t n = ls_inline_vars_at(&m->inl, file, line, &v);
	for (size_t i = 0; i < n; i++)
		if (v[i].scope_lo)
			return true;
	return false;
}

/* LINE, or the first line above it (not above the function's) that
 * declares no variable of a lexical block.  clang's block of a `while
 * (1) { Py_ssize_t result; ...` may begin before the loop's header (with
 * code it hoisted), so the body's declarations are any block's there. */
static unsigned above_block_variables(const ls_module *m, const struct loop_facts *f, unsigned line)
{
	while (line > 1 && line - 1 >= f->func_line && block_variable_line(m, f->file, line))
		line--;
	return line;
}

/* HEADER_STMT: gcc's zero-length statement rows at the header, a line
 * above every line of the loop (in its function): the loop's statement,
 * which has no code of its own.  0 if none. */
static unsigned header_statement(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop *L,
                                 const struct ls_places *ps, const struct ls_inl_node *lca,
                                 const struct loop_facts *f)
{
	const struct ls_block *hb = &cfg->blocks[L->header];
	const struct ls_line_row *rows;
	size_t n = ls_linemap_hidden_at(&m->lines, hb->start, &rows);
	int h = ls_block_place(ps, cfg, hb, 0);
	if (!f->lo || h < 0 || ps->pl[h].ctx != lca)
		return 0;
	unsigned best = 0, best_stmt = 0;
	for (size_t i = 0; i < n; i++)
		if (rows[i].file == f->file && rows[i].line < f->lo && rows[i].line > best &&
		    rows[i].line >= f->func_line)
			best = rows[i].line;
	/* The highest that declares no variable of the body (gcc gives a
	 * declaration its row too), else the line above them. */
	for (size_t i = 0; i < n; i++)
		if (rows[i].file == f->file && rows[i].line < f->lo && rows[i].line > best_stmt &&
		    rows[i].line >= f->func_line && !body_variable_line(m, cfg, L, f->file, rows[i].line))
			best_stmt = rows[i].line;
	return best_stmt ? best_stmt : best ? above_body_variables(m, cfg, L, f, best) : 0;
}

/* The first line of block B seen from LCA in FILE, 0 if none; a block
 * that is only a jump (clang -O0's `jmp` to the code after the loop,
 * labelled with the loop's test) stands for where it goes. */
static unsigned first_line_in(const struct ls_cfg *cfg, uint32_t b, const struct ls_places *ps,
                              const struct ls_inl_node *lca, const char *file)
{
	for (int hops = 0; hops < 4 && cfg->blocks[b].ninsns == 1 && cfg->blocks[b].nsucc == 1 &&
	                   cfg->insns[cfg->blocks[b].first_insn].kind == LS_INSN_JUMP;
	     hops++)
		b = cfg->edges[cfg->succ[cfg->blocks[b].first_succ]].to;
	const struct ls_block *blk = &cfg->blocks[b];
	for (uint32_t k = 0; k < blk->ninsns; k++) {
		int i = ls_block_place(ps, cfg, blk, k);
		const char *f;
		unsigned l;
		if (i >= 0 && line_in_context(&ps->pl[i], lca, &f, &l))
			return f == file ? l : 0;
	}
	return 0;
}

/* The last line (in FILE, seen from LCA) of block BLK's test: its branch
 * and the compare before it, up to 4 instructions (clang labels a
 * do/while's compare with the `while` and the branch with the body's last
 * statement, or the other way round). */
static unsigned test_last_line(const struct ls_cfg *cfg, const struct ls_block *blk, const struct ls_places *ps,
                               const struct ls_inl_node *lca, const char *file)
{
	unsigned best = 0;
	for (uint32_t k = blk->ninsns; k-- > 0 && k + 4 >= blk->ninsns;) {
		int i = ls_block_place(ps, cfg, blk, k);
		const char *f;
		unsigned l;
		if (i >= 0 && line_in_context(&ps->pl[i], lca, &f, &l) && f == file && l > best)
			best = l;
	}
	return best;
}

/* The loop's first line, leaving out lines with a single instruction or
 * under 1 in 20 of its instructions: clang merges a statement before the
 * loop (an induction variable's update) into it with that statement's
 * line. */
static unsigned robust_first_line(const struct loop_facts *f)
{
	for (size_t i = 0; i < f->nlines; i++)
		if (f->lines[i].n >= 2 && f->lines[i].n * 20 >= f->total)
			return f->lines[i].line;
	return f->lo;
}

/* How the path from block B ends, following single successors: 1 it
 * dies (a noreturn call, ud2), 2 it returns, 0 otherwise. */
static int exit_fate(const struct ls_cfg *cfg, uint32_t b)
{
	for (int steps = 0; steps < 16; steps++) {
		const struct ls_block *blk = &cfg->blocks[b];
		if (!blk->ninsns)
			return 0;
		const struct ls_insn *last = &cfg->insns[blk->first_insn + blk->ninsns - 1];
		if (blk->nsucc == 0)
			return last->kind == LS_INSN_RET ? 2 : last->kind == LS_INSN_IJUMP ? 0 : 1;
		if (blk->nsucc != 1)
			return 0;
		b = cfg->edges[cfg->succ[blk->first_succ]].to;
	}
	return 0;
}

/* The lines of the loop's own exit tests: the first (*TOP) and the last
 * back-edge one (*BOTTOM).  A test is the loop's own when it closes the
 * loop (its in-loop side is an entry or backward: ranks 0 and 1) or when
 * it leaves to code outside the loop's lines; one that leaves to a line
 * inside them is a test of a statement of the body whose branch the
 * compiler threaded out of the loop (a switch in a `for (;;)`), and one
 * whose way out dies (a noreturn call, ud2) is a check of the body, an
 * assertion, that leaves the loop only to abort. */
static void exit_tests(const struct ls_cfg *cfg, const struct ls_loop_forest *lf, int32_t k,
                       const struct ls_places *ps, const struct ls_inl_node *lca,
                       const struct loop_facts *f, unsigned *top, unsigned *bottom)
{
	const struct ls_loop *L = &lf->loops[k];
	*top = *bottom = 0;
	for (size_t b = 0; b < L->nblocks; b++) {
		uint32_t bi = L->blocks[b];
		const struct ls_block *blk = &cfg->blocks[bi];
		if (lf->block_loop[bi] != k || !is_exit_test(cfg, lf, k, blk))
			continue;
		unsigned l = branch_line(cfg, blk, ps, lca, f->file);
		if (!l)
			continue;
		const struct ls_insn *last = &cfg->insns[blk->first_insn + blk->ninsns - 1];
		int rank = edge_rank(cfg, lf, k, blk, last);
		bool own = rank <= 1, dies = false;
		for (uint32_t s = 0; s < blk->nsucc && !own; s++) {
			const struct ls_cfg_edge *e = &cfg->edges[cfg->succ[blk->first_succ + s]];
			if (in_loop(lf, e->to, k))
				continue;
			unsigned tl = first_line_in(cfg, e->to, ps, lca, f->file);
			own = !tl || tl < f->lo || tl > f->hi;
			dies = exit_fate(cfg, e->to) == 1;
		}
		own = own && !(rank > 1 && dies);
		if (own && (!*top || l < *top))
			*top = l;
		unsigned last_line = rank == 0 ? test_last_line(cfg, blk, ps, lca, f->file) : 0;
		if (last_line > *bottom)
			*bottom = last_line;
	}
}

/* LABEL: a label (DW_TAG_label) in the loop's blocks (at the header, or
 * at the top of the body of a loop the compiler rotated), on the loop's
 * first line or up to three above it (zstd's `_start:`, a blank line and
 * an assignment clang hoisted out): a goto loop (`retry:` before a switch),
 * whose test, if any, is a statement of the body.  Only so close, and only for a
 * loop closed by a direct jump (a goto): a computed goto's handlers are
 * labels too, and a handler that heads a loop of the dispatch is not that
 * loop's statement.  0 if none. */
static unsigned loop_label(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop *L,
                           const struct loop_facts *f)
{
	bool direct = false;
	for (size_t e = 0; e < L->nbackedges && !direct; e++) {
		const struct ls_block *from = &cfg->blocks[L->backedges[e].from];
		direct = L->backedges[e].to == L->header && from->ninsns &&
		         cfg->insns[from->first_insn + from->ninsns - 1].kind != LS_INSN_IJUMP;
	}
	if (!direct)
		return 0;
	/* The loop's first line, not counting the function's own first two
	 * (clang labels code it merged into the loop with the `{`). */
	unsigned first = f->lo;
	for (size_t i = 0; i < f->nlines && f->func_line && first <= f->func_line + 1; i++)
		first = f->lines[i].line;
	unsigned best = 0;
	for (size_t b = 0; b < L->nblocks; b++) {
		const struct ls_block *blk = &cfg->blocks[L->blocks[b]];
		const struct ls_decl_line *lab;
		size_t n = ls_inline_labels_in(&m->inl, blk->start, blk->end, &lab);
		for (size_t i = 0; i < n; i++)
			if (lab[i].file == f->file && lab[i].line <= first && lab[i].line + 3 >= first &&
			    lab[i].line >= f->func_line && lab[i].line > best)
				best = lab[i].line;
	}
	return best;
}

/* SLIDES: the best-ranked branch of the loop's own blocks; among equals
 * the lexically last, as it closes the loop.  0 if none has a line. */
static unsigned slides_line(const struct ls_cfg *cfg, const struct ls_loop_forest *lf, int32_t k,
                            const struct ls_places *ps, const struct ls_inl_node *lca,
                            const struct loop_facts *f)
{
	const struct ls_loop *L = &lf->loops[k];
	int best_rank = 99;
	uint64_t best_addr = 0;
	unsigned line = 0;
	for (size_t b = 0; b < L->nblocks; b++) {
		uint32_t bi = L->blocks[b];
		const struct ls_block *blk = &cfg->blocks[bi];
		if (!blk->ninsns || lf->block_loop[bi] != k)
			continue;
		const struct ls_insn *last = &cfg->insns[blk->first_insn + blk->ninsns - 1];
		int rank = edge_rank(cfg, lf, k, blk, last);
		if (rank > best_rank || (rank == best_rank && last->addr <= best_addr))
			continue;
		unsigned l = branch_line(cfg, blk, ps, lca, f->file);
		if (!l)
			continue;
		best_rank = rank;
		best_addr = last->addr;
		line = l;
	}
	return line;
}

/* STMT_IN_LOOP: a hidden statement row (see header_statement) in the
 * loop's blocks but not at its header, in its context and file, above
 * every line of the loop: gcc's row for the code-less line of a rotated
 * loop's statement (`while (a` over `&& b)`, whose code carries the
 * second line; `do {`), at the top of the body rather than at the header
 * (the test).  The highest.  0 if none. */
static unsigned statement_in_loop(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop *L,
                                  const struct ls_places *ps, const struct ls_inl_node *lca,
                                  const struct loop_facts *f)
{
	unsigned best = 0;
	for (size_t b = 0; b < L->nblocks && f->lo; b++) {
		const struct ls_block *blk = &cfg->blocks[L->blocks[b]];
		const struct ls_line_row *rows;
		size_t n = ls_linemap_hidden_in(&m->lines, blk->start, blk->end, &rows);
		for (size_t i = 0; i < n; i++) {
			if (rows[i].file != f->file || rows[i].line >= f->lo || rows[i].line <= best ||
			    rows[i].line < f->func_line)
				continue;
			int pi = ls_place_index(ps->pl, ps->n, rows[i].addr);
			if (pi >= 0 && ps->pl[pi].ctx == lca)
				best = rows[i].line;
		}
	}
	return best;
}

/* Whether LINE of FILE has a row (any) in the procedure's code: a line
 * with no code at all is a comment, a brace, a declaration, or a loop
 * statement with nothing to test (`for (;;)`). */
static bool line_has_code(const ls_module *m, const struct ls_cfg *cfg, const char *file, unsigned line)
{
	for (size_t b = 0; b < cfg->nblocks; b++) {
		const struct ls_block *blk = &cfg->blocks[b];
		const struct ls_line_row *r = ls_linemap_find(&m->lines, blk->start);
		const struct ls_line_row *end = m->lines.rows + m->lines.nrows;
		for (; r && r < end && r->file && r->addr < blk->end; r++)
			if (r->file == file && r->line == line)
				return true;
	}
	return false;
}

/* ABOVE_SWITCH: the loop's first line holds three or more of its exit
 * tests, two or more of them leaving to lines inside the loop's own: a
 * switch whose cases the compiler threaded out of the loop, not a loop
 * condition (`while (a && b)` leaves for the code after the loop).  With
 * no code on the line above, that line is the code-less loop statement
 * around the switch: `for (;;) { switch (*p) {` ({fmt}'s parse_align in
 * every template instance, Lua's lexer).  A guess; 0 if not so.  When
 * gcc threads the cases out with the rest of the body, the loop keeps
 * three lines or fewer and its tests come back to its first line: that
 * switch too ({fmt}'s parse_align inlined at gcc -O3, 183 loops). */
static unsigned above_switch(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop_forest *lf,
                             int32_t k, const struct ls_places *ps, const struct ls_inl_node *lca,
                             const struct loop_facts *f)
{
	const struct ls_loop *L = &lf->loops[k];
	if (f->lo < 2 || f->lo - 1 <= f->func_line)
		return 0;
	unsigned on_first = 0, inside = 0;
	for (size_t b = 0; b < L->nblocks; b++) {
		uint32_t bi = L->blocks[b];
		const struct ls_block *blk = &cfg->blocks[bi];
		if (lf->block_loop[bi] != k || !is_exit_test(cfg, lf, k, blk) ||
		    branch_line(cfg, blk, ps, lca, f->file) != f->lo)
			continue;
		for (uint32_t s = 0; s < blk->nsucc; s++) {
			const struct ls_cfg_edge *e = &cfg->edges[cfg->succ[blk->first_succ + s]];
			if (in_loop(lf, e->to, k))
				continue;
			unsigned tl = first_line_in(cfg, e->to, ps, lca, f->file);
			on_first += tl >= f->lo && tl <= f->hi;
			inside += tl > f->lo && tl <= f->hi;
		}
	}
	/* gcc threads the cases out with the rest of the body, down to the
	 * case that stays on the first line: a loop of three lines or fewer
	 * whose tests all come back to its first line is that switch too. */
	bool threaded = f->nlines <= 3;
	if (on_first < 3 || (inside < 2 && !threaded) || line_has_code(m, cfg, f->file, f->lo - 1))
		return 0;
	return f->lo - 1;
}

/* The first line (in context, any file) of block BLK's instructions, from
 * its start or, BACKWARD, from its end.  False if none has one. */
static bool block_line(const struct ls_cfg *cfg, const struct ls_block *blk, bool backward,
                       const struct ls_places *ps, const struct ls_inl_node *lca,
                       struct ls_loop_line *out)
{
	for (uint32_t n = 0; n < blk->ninsns; n++) {
		uint32_t k = backward ? blk->ninsns - 1 - n : n;
		int i = ls_block_place(ps, cfg, blk, k);
		if (i >= 0 && line_in_context(&ps->pl[i], lca, &out->file, &out->line))
			return true;
	}
	return false;
}

/* Whether all of inlined call CALL's code (its voting instructions,
 * anywhere in the procedure) is on its line LINE: a one-statement
 * callee, which holds no loop statement of its own around the code. */
static bool call_on_one_line(const struct ls_places *ps, const struct ls_inl_node *call, const char *file,
                             unsigned line)
{
	for (size_t i = 0; i < ps->n; i++) {
		const char *f;
		unsigned l;
		if (ps->pl[i].votes && line_in_context(&ps->pl[i], call, &f, &l) && (f != file || l != line))
			return false;
	}
	return true;
}

/* Whether context CTX (any kind) lies in lexical block BLK. */
static bool in_block(const struct ls_inl_node *ctx, const struct ls_inl_node *blk)
{
	for (const struct ls_inl_node *c = ctx; c; c = c->kind == LS_INL_INLINED && c->block ? c->block : c->parent)
		if (c == blk)
			return true;
	return false;
}

/* Whether block BLK holds nothing but a loop statement from line LO to
 * line HI of the caller, CALL's: every voting instruction in it is, seen
 * from the caller, on those lines.  A for's scope holds its init, its
 * test and its body; a block whose variable merely precedes the call
 * holds the statements after it too. */
static bool block_is_statement(const struct ls_places *ps, const struct ls_inl_node *call,
                               const struct ls_inl_node *blk, unsigned lo, unsigned hi)
{
	const struct ls_inl_node *caller = ctx_parent(call);
	for (size_t i = 0; i < ps->n; i++) {
		if (!ps->pl[i].votes || !in_block(ps->pl[i].ctx, blk))
			continue;
		const char *f;
		unsigned l;
		if (!line_in_context(&ps->pl[i], caller, &f, &l) || f != call->call_file || l < lo || l > hi)
			return false;
	}
	return true;
}

/* Whether a lexical block around inlined call CALL declares a variable
 * on the call's line or up to two above it (the cheap half of
 * scope_variable_at). */
static bool has_scope_variable(const ls_module *m, const struct ls_inl_node *call)
{
	const struct ls_inl_node *caller = ctx_parent(call);
	unsigned from = caller && caller->decl_file == call->call_file ? caller->decl_line : 0;
	for (const struct ls_inl_node *n = call->block; n && n->kind == LS_INL_LEXICAL; n = n->parent)
		for (unsigned l = call->call_line; l > 0 && l + 3 > call->call_line && l >= from; l--) {
			const struct ls_decl_line *v;
			size_t nv = ls_inline_vars_at(&m->inl, call->call_file, l, &v);
			for (size_t i = 0; i < nv; i++)
				if (v[i].scope_lo && v[i].scope_lo == n->lo)
					return true;
		}
	return false;
}

/* Whether a loop around loop K has a back edge from code on lines LO to HI
 * of CALL's caller.  Then the statement there is that loop, not K: the for
 * around an inlined memcpy whose expansion is loop K.  (By lines: a
 * place's context is its inlined call, not the lexical block it is in.) */
static bool outer_loop_on_lines(const struct ls_cfg *cfg, const struct ls_loop_forest *lf, int32_t k,
                                const struct ls_places *ps, const struct ls_inl_node *call, unsigned lo, unsigned hi)
{
	const struct ls_inl_node *caller = ctx_parent(call);
	for (int32_t a = lf->loops[k].parent; a >= 0; a = lf->loops[a].parent)
		for (size_t e = 0; e < lf->loops[a].nbackedges; e++) {
			const struct ls_block *b = &cfg->blocks[lf->loops[a].backedges[e].from];
			for (uint32_t j = 0; j < b->ninsns; j++) {
				int pi = ls_block_place(ps, cfg, b, j);
				const char *f;
				unsigned l;
				if (pi >= 0 && line_in_context(&ps->pl[pi], caller, &f, &l) && f == call->call_file &&
				    l >= lo && l <= hi)
					return true;
			}
		}
	return false;
}

/* The line of a variable declared in a lexical block between inlined
 * call CALL and its caller, on the call's line or up to two above it, in
 * the innermost such block that holds only the statement from there to
 * the call; 0 if none.  The declarations are looked up first: most calls
 * have none, and the block's code is a walk over the procedure. */
static unsigned scope_variable_at(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop_forest *lf,
                                  int32_t k, const struct ls_places *ps, const struct ls_inl_node *call)
{
	const struct ls_inl_node *caller = ctx_parent(call);
	unsigned from = caller && caller->decl_file == call->call_file ? caller->decl_line : 0;
	for (const struct ls_inl_node *n = call->block; n && n->kind == LS_INL_LEXICAL; n = n->parent) {
		for (unsigned l = call->call_line; l > 0 && l + 3 > call->call_line && l >= from; l--) {
			const struct ls_decl_line *v;
			size_t nv = ls_inline_vars_at(&m->inl, call->call_file, l, &v);
			for (size_t i = 0; i < nv; i++)
				if (v[i].scope_lo && v[i].scope_lo == n->lo &&
				    block_is_statement(ps, call, n, l, call->call_line))
					return outer_loop_on_lines(cfg, lf, k, ps, call, l, call->call_line) ? 0 : l;
		}
	}
	return 0;
}

/* SCOPE_VARIABLE: the loop is all on one line of an inlined call, and
 * all of that call's code is on that line: a one-statement callee the
 * loop repeats (Eigen's `for (Index i = start; i < end; ++i)
 * kernel.assignCoeff(i);`, where clang gives even the increment and the
 * compare the callee's line).  The loop statement is the caller's: a
 * variable declared on the call's line or just above, in a block around
 * the call that holds nothing but those lines, is a for's init variable,
 * on the for's line.  Up through callees of one line (a one-line
 * function's line is no loop's).  False if none.  The calls' lines are
 * checked (a walk over the procedure each) only for a call that has such
 * a variable. */
static bool scope_variable(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop_forest *lf, int32_t k,
                           const struct ls_places *ps, const struct ls_inl_node *lca, const struct loop_facts *f,
                           struct ls_loop_line *out)
{
	if (!f->lo || f->lo != f->hi)
		return false;
	enum { MAX_LEVELS = 8 };
	const struct ls_inl_node *calls[MAX_LEVELS];
	const char *files[MAX_LEVELS];
	unsigned lines[MAX_LEVELS];
	const char *file = f->file;
	unsigned line = f->lo;
	for (unsigned level = 0; lca && lca->kind == LS_INL_INLINED && level < MAX_LEVELS; level++) {
		calls[level] = lca;
		files[level] = file;
		lines[level] = line;
		if (has_scope_variable(m, lca)) {
			for (unsigned i = 0; i <= level; i++)
				if (!call_on_one_line(ps, calls[i], files[i], lines[i]))
					return false;
			unsigned l = scope_variable_at(m, cfg, lf, k, ps, lca);
			if (l) {
				out->file = lca->call_file;
				out->line = l;
				out->rule = LS_LINE_SCOPE_VARIABLE;
				return true;
			}
		}
		if (line != lca->decl_line)
			return false;
		file = lca->call_file;
		line = lca->call_line;
		lca = ctx_parent(lca);
	}
	return false;
}

/* The column of place P seen from context LCA: its row's column if it is
 * in LCA, the call column of the inlined call below LCA that leads to it
 * if it is deeper; 0 if none. */
static unsigned column_in_context(const ls_module *m, const struct ls_place *p, const struct ls_inl_node *lca)
{
	const struct ls_inl_node *c = p->ctx, *below = NULL;
	for (; c && c != lca; c = ctx_parent(c))
		below = c;
	if (c != lca)
		return 0;
	if (below)
		return below->call_column;
	const struct ls_line_row *r = ls_linemap_find(&m->lines, p->addr);
	return r && r->file ? r->column : 0;
}

/* The leftmost column (nonzero) of loop L's voting instructions on LINE of
 * FILE seen from CTX; 0 if none. */
static unsigned loop_min_column(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop *L,
                                const struct ls_places *ps, const struct ls_inl_node *ctx, const char *file,
                                unsigned line)
{
	unsigned best = 0;
	for (size_t b = 0; b < L->nblocks; b++) {
		const struct ls_block *blk = &cfg->blocks[L->blocks[b]];
		for (uint32_t k = 0; k < blk->ninsns; k++) {
			int i = ls_block_place(ps, cfg, blk, k);
			const char *f;
			unsigned l, col;
			if (i < 0 || !ps->pl[i].votes || !line_in_context(&ps->pl[i], ctx, &f, &l) || f != file ||
			    l != line || !(col = column_in_context(m, &ps->pl[i], ctx)))
				continue;
			if (!best || col < best)
				best = col;
		}
	}
	return best;
}

/* The block a chain of single successors of up to STEPS blocks leads to
 * from block B (B itself for 0). */
static uint32_t chain_end(const struct ls_cfg *cfg, uint32_t b, int steps)
{
	for (int i = 0; i < steps && cfg->blocks[b].nsucc == 1; i++)
		b = cfg->edges[cfg->succ[cfg->blocks[b].first_succ]].to;
	return b;
}

/* Whether the procedure's line table has hidden statement rows (see
 * header_statement) past its entry: gcc's, which marks statements without
 * code so. */
static bool proc_hidden_rows(const ls_module *m, const struct ls_cfg *cfg)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t b = 0; b < cfg->nblocks; b++) {
		if (cfg->blocks[b].start < lo)
			lo = cfg->blocks[b].start;
		if (cfg->blocks[b].end > hi)
			hi = cfg->blocks[b].end;
	}
	/* Not at its entry: clang gives an empty prologue the function's
	 * line there too. */
	const struct ls_line_row *rows;
	return lo < hi && ls_linemap_hidden_in(&m->lines, lo + 1, hi, &rows) > 0;
}

/* Whether the chains of single successors from block B and from a block
 * loop K exits to meet within a few blocks: the guard's way around the
 * loop joins the loop's way out. */
static bool meets_exit(const struct ls_cfg *cfg, const struct ls_loop_forest *lf, int32_t k, uint32_t b)
{
	enum { STEPS = 3 };
	const struct ls_loop *L = &lf->loops[k];
	for (size_t i = 0; i < L->nblocks; i++) {
		const struct ls_block *lb = &cfg->blocks[L->blocks[i]];
		for (uint32_t s = 0; s < lb->nsucc; s++) {
			uint32_t t = cfg->edges[cfg->succ[lb->first_succ + s]].to;
			if (in_loop(lf, t, k))
				continue;
			for (int x = 0; x <= STEPS; x++)
				for (int y = 0; y <= STEPS; y++)
					if (chain_end(cfg, b, x) == chain_end(cfg, t, y))
						return true;
		}
	}
	return false;
}

/* The guard of loop K's entry from block B: B or the block a chain of
 * single predecessors leads up to, ending in a conditional branch whose
 * other way goes where the loop exits to (the test that skips a rotated
 * loop); NULL if none.  clang's vectorized loops also skip to a remainder
 * loop or test of their own: with a line table that is not gcc's, any
 * conditional branch there is the guard. */
static const struct ls_block *entry_guard(const ls_module *m, const struct ls_cfg *cfg,
                                          const struct ls_loop_forest *lf, int32_t k, uint32_t b)
{
	uint32_t on_path = b;
	for (int steps = 0; steps < 4; steps++) {
		const struct ls_block *blk = &cfg->blocks[b];
		if (blk->ninsns && cfg->insns[blk->first_insn + blk->ninsns - 1].kind == LS_INSN_CJUMP) {
			for (uint32_t s = 0; s < blk->nsucc; s++) {
				uint32_t to = cfg->edges[cfg->succ[blk->first_succ + s]].to;
				if (to != on_path && !in_loop(lf, to, k) &&
				    (meets_exit(cfg, lf, k, to) || !proc_hidden_rows(m, cfg)))
					return blk;
			}
			return NULL;
		}
		if (blk->npred != 1)
			return NULL;
		on_path = b;
		b = cfg->edges[cfg->pred[blk->first_pred]].from;
	}
	return NULL;
}

/* Whether the blocks from block B up to GUARD (not included: the chain of
 * single predecessors entry_guard walked) have code on LINE of FILE seen
 * from CTX: the loop's own line before its loop, its init: the statement
 * is on LINE, and the guard is a test around it (`if (c)` over a loop on
 * one line). */
static bool preheader_on_line(const struct ls_cfg *cfg, const struct ls_places *ps, const struct ls_inl_node *ctx,
                              uint32_t b, const struct ls_block *guard, const char *file, unsigned line)
{
	for (int steps = 0; steps < 4 && &cfg->blocks[b] != guard; steps++) {
		const struct ls_block *blk = &cfg->blocks[b];
		for (uint32_t n = 0; n < blk->ninsns; n++) {
			int i = ls_block_place(ps, cfg, blk, n);
			const char *f;
			unsigned l;
			if (i >= 0 && ps->pl[i].votes && line_in_context(&ps->pl[i], ctx, &f, &l) && f == file && l == line)
				return true;
		}
		if (blk->npred != 1)
			break;
		b = cfg->edges[cfg->pred[blk->first_pred]].from;
	}
	return false;
}

/* Whether loop L's blocks or the guard at GUARD_START have hidden
 * statement rows (see header_statement): gcc marks the statements without
 * code so, and gives a loop's test and init the loop statement's line;
 * clang gives a loop all on one line (vectorized, an idiom) its body's
 * line, and the guard that skips it the statement's.  Only code without
 * them reads ENTRY_STMT's guard as the loop statement: with gcc it is a
 * test around the loop (`if (size <= 1000) BENCH(...)`). */
static bool has_hidden_rows(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop *L,
                            const struct ls_block *guard)
{
	const struct ls_line_row *rows;
	if (ls_linemap_hidden_in(&m->lines, guard->start, guard->end, &rows))
		return true;
	for (size_t b = 0; b < L->nblocks; b++)
		if (ls_linemap_hidden_in(&m->lines, cfg->blocks[L->blocks[b]].start, cfg->blocks[L->blocks[b]].end,
		                         &rows))
			return true;
	return false;
}

/* The line of the guards of loop L's entries (see entry_guard), seen
 * from CTX in FILE, when one or two lines above LINE (not above FROM) and
 * left of column COL: the loop statement, whose guard clang gives the
 * statement's own location (the `for`, `while` or `do` keyword) while the
 * loop's code all carries its body's line and columns.  0 if not so (no
 * guard: the loop is entered from the statement before it; a guard
 * elsewhere, or to the right: an `if`'s condition around the loop). */
static unsigned entering_statement(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop_forest *lf,
                                   int32_t k, const struct ls_places *ps, const struct ls_inl_node *ctx,
                                   const char *file, unsigned line, unsigned col, unsigned from)
{
	const struct ls_block *hb = &cfg->blocks[lf->loops[k].header];
	unsigned found = 0;
	for (uint32_t p = 0; p < hb->npred; p++) {
		const struct ls_cfg_edge *e = &cfg->edges[cfg->pred[hb->first_pred + p]];
		if (in_loop(lf, e->from, k))
			continue;
		const struct ls_block *blk = entry_guard(m, cfg, lf, k, e->from);
		if (blk && preheader_on_line(cfg, ps, ctx, e->from, blk, file, line))
			return 0;
		unsigned l = 0, c = 0;
		for (uint32_t n = blk ? blk->ninsns : 0; n-- > 0 && n + 2 >= blk->ninsns && !l;) {
			int i = ls_block_place(ps, cfg, blk, n);
			const char *f;
			if (i >= 0 && line_in_context(&ps->pl[i], ctx, &f, &l)) {
				if (f != file)
					return 0;
				c = column_in_context(m, &ps->pl[i], ctx);
			}
		}
		if (!l || l >= line || l + 2 < line || l < from || !c || c >= col || (found && found != l) ||
		    has_hidden_rows(m, cfg, &lf->loops[k], blk))
			return 0;
		found = l;
	}
	return found;
}

/* ENTRY_STMT: a loop all on one line (a vectorized or idiom loop to which
 * clang gives its body's line, the increment and the test too), entered
 * from a line or two above, left of it: the loop statement, on the line
 * of its guard.  Up through inlined calls whose code is all on their
 * call's line (zstd's `do { COPY8(op, ip) } while (op < oend);`: the
 * loop is ZSTD_copy8's one line, the guard the `do`). */
static bool entry_statement(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop_forest *lf, int32_t k,
                            const struct ls_places *ps, const struct ls_inl_node *lca, const struct loop_facts *f,
                            struct ls_loop_line *out)
{
	if (!f->lo || f->lo != f->hi)
		return false;
	const struct ls_loop *L = &lf->loops[k];
	const char *file = f->file;
	unsigned line = f->lo, from = f->func_line;
	const struct ls_inl_node *ctx = lca;
	for (unsigned level = 0; level < 4; level++) {
		unsigned col = loop_min_column(m, cfg, L, ps, ctx, file, line);
		unsigned l = col ? entering_statement(m, cfg, lf, k, ps, ctx, file, line, col, from) : 0;
		if (l) {
			out->file = file;
			out->line = l;
			out->rule = LS_LINE_ENTRY_STMT;
			return true;
		}
		if (!ctx || ctx->kind != LS_INL_INLINED || !call_on_one_line(ps, ctx, file, line))
			return false;
		file = ctx->call_file;
		line = ctx->call_line;
		ctx = ctx_parent(ctx);
		from = ctx && ctx->decl_file == file ? ctx->decl_line : 0;
	}
	return false;
}

/* The DWARF rules, in order (see the file's comment). */
static void dwarf_line(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop_forest *lf,
                       int32_t k, const struct ls_places *ps, const struct ls_inl_node *lca,
                       const struct loop_facts *f, struct ls_loop_line *out)
{
	const struct ls_loop *L = &lf->loops[k];
	const struct ls_block *hb = &cfg->blocks[L->header];
	unsigned top, bottom;
	if (scope_variable(m, cfg, lf, k, ps, lca, f, out))
		return;
	out->file = f->file;
	if ((out->line = header_statement(m, cfg, L, ps, lca, f))) {
		out->rule = LS_LINE_HEADER_STMT;
		return;
	}
	if ((out->line = statement_in_loop(m, cfg, L, ps, lca, f))) {
		out->rule = LS_LINE_STMT_IN_LOOP;
		return;
	}
	if ((out->line = above_switch(m, cfg, lf, k, ps, lca, f))) {
		out->rule = LS_LINE_ABOVE_SWITCH;
		return;
	}
	if (entry_statement(m, cfg, lf, k, ps, lca, f, out))
		return;
	if ((out->line = loop_label(m, cfg, L, f))) {
		out->rule = LS_LINE_LABEL;
		return;
	}
	exit_tests(cfg, lf, k, ps, lca, f, &top, &bottom);
	if (top && top <= robust_first_line(f)) {
		out->line = top;
		out->rule = LS_LINE_TEST_AT_TOP;
		return;
	}
	if (bottom && bottom >= f->hi && bottom > f->lo) {
		out->line = bottom;
		out->rule = LS_LINE_TEST_AT_BOTTOM;
		return;
	}
	/* No test of its own at either end: `for (;;)` or `while (1)`, whose
	 * statement has no code; it stands, by the way code is written, on
	 * the line before the loop's first, or above the declarations that
	 * open its body. */
	if (f->lo > 1 && f->lo - 1 >= f->func_line && f->total > 1) {
		out->line = above_body_variables(m, cfg, L, f, f->lo - 1);
		/* Not in gcc's code: its for-init variable's line (`for (Index
		 * k2 = ...;` over the test's line) stands there. */
		if (!proc_hidden_rows(m, cfg))
			out->line = above_block_variables(m, f, out->line);
		out->rule = LS_LINE_BEFORE_BODY;
		return;
	}
	if ((out->line = slides_line(cfg, lf, k, ps, lca, f))) {
		out->rule = LS_LINE_SLIDES;
		return;
	}
	if (block_line(cfg, hb, false, ps, lca, out)) {
		out->rule = LS_LINE_HEADER;
		return;
	}
	/* ENTRY: a loop with no line at all (clang's `jmp .` of a while whose
	 * body was optimized away is at line 0): the line of the branch that
	 * enters it, its test. */
	for (uint32_t p = 0; p < hb->npred; p++) {
		const struct ls_cfg_edge *e = &cfg->edges[cfg->pred[hb->first_pred + p]];
		if (!in_loop(lf, e->from, k) && block_line(cfg, &cfg->blocks[e->from], true, ps, lca, out)) {
			out->rule = LS_LINE_ENTRY;
			return;
		}
	}
	out->file = NULL;
	out->line = 0;
}


/* ---- research dump (LOOPSCOPE_DEBUG_LOOP_LINES=2) ---- */

/* The lines (in FILE, seen from LCA) of block BLK's last N instructions. */
static void dump_tail_lines(const struct ls_cfg *cfg, const struct ls_block *blk, const struct ls_places *ps,
                            const struct ls_inl_node *lca, const char *file, unsigned n)
{
	fprintf(stderr, "[");
	bool first = true;
	for (uint32_t k = blk->ninsns; k-- > 0 && k + n >= blk->ninsns;) {
		int i = ls_block_place(ps, cfg, blk, k);
		const char *f;
		unsigned l;
		if (i >= 0 && line_in_context(&ps->pl[i], lca, &f, &l) && f == file) {
			fprintf(stderr, "%s%u", first ? "" : ",", l);
			first = false;
		}
	}
	fprintf(stderr, "]");
}

/* The line rows of loop L (research dump): hidden statement rows in its
 * blocks, every row of its file there (line, column, is_stmt, in context,
 * at the header), those of the 24 bytes before its header, and whether
 * lines lo-1..lo-4 have code in the procedure. */
static void dump_rows(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop *L,
                      const struct ls_places *ps, const struct ls_inl_node *lca, const struct loop_facts *f)
{
	const struct ls_block *hb = &cfg->blocks[L->header];
	const struct ls_line_row *end = m->lines.rows + m->lines.nrows;
	bool first = true;
	fprintf(stderr, "],\"hid\":[");
	for (size_t b = 0; b < L->nblocks; b++) {
		const struct ls_block *blk = &cfg->blocks[L->blocks[b]];
		const struct ls_line_row *rows;
		size_t n = ls_linemap_hidden_in(&m->lines, blk->start, blk->end, &rows);
		for (size_t i = 0; i < n; i++) {
			int pi = ls_place_index(ps->pl, ps->n, rows[i].addr);
			fprintf(stderr, "%s[%u,%d,%d,%d]", first ? "" : ",", rows[i].line, rows[i].file == f->file,
			        L->blocks[b] == L->header, pi >= 0 && ps->pl[pi].ctx == lca);
			first = false;
		}
	}
	/* every row in the loop's blocks, in the file: [line, column, is_stmt, ctx ok, header block] */
	fprintf(stderr, "],\"rows\":[");
	first = true;
	for (size_t b = 0; b < L->nblocks; b++) {
		const struct ls_block *blk = &cfg->blocks[L->blocks[b]];
		const struct ls_line_row *r = ls_linemap_find(&m->lines, blk->start);
		for (; r && r < end && r->file && r->addr < blk->end; r++) {
			if (r->file != f->file)
				continue;
			uint64_t a = r->addr < blk->start ? blk->start : r->addr;
			int pi = ls_place_index(ps->pl, ps->n, a);
			fprintf(stderr, "%s[%u,%u,%d,%d,%d]", first ? "" : ",", r->line, r->column,
			        (r->flags & LS_LINE_IS_STMT) != 0, pi >= 0 && ps->pl[pi].ctx == lca, L->blocks[b] == L->header);
			first = false;
		}
	}
	/* the rows of the 24 bytes before the header */
	fprintf(stderr, "],\"pre\":[");
	first = true;
	const struct ls_line_row *r0 = ls_linemap_find(&m->lines, hb->start > 24 ? hb->start - 24 : 0);
	for (; r0 && r0 < end && r0->file && r0->addr < hb->start; r0++)
		if (r0->file == f->file) {
			fprintf(stderr, "%s[%u,%u,%d]", first ? "" : ",", r0->line, r0->column, (r0->flags & LS_LINE_IS_STMT) != 0);
			first = false;
		}
	/* whether lines lo-1..lo-4 have code in the procedure (line_has_code) */
	fprintf(stderr, "],\"has\":[");
	for (unsigned d = 1; d <= 4; d++)
		fprintf(stderr, "%s%d", d > 1 ? "," : "", f->lo > d && line_has_code(m, cfg, f->file, f->lo - d));
}

static void dump_facts(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop_forest *lf, int32_t k,
                       const struct ls_places *ps, const struct ls_inl_node *lca, const struct loop_facts *f,
                       unsigned hs, const struct ls_loop_line *out)
{
	const struct ls_loop *L = &lf->loops[k];
	flockfile(stderr);
	fprintf(stderr, "loopscope: facts2 {\"h\":\"0x%" PRIx64 "\",\"d\":%u,\"irr\":%d,\"file\":\"%s\",\"lo\":%u,\"hi\":%u,"
	        "\"fn\":%u,\"hs\":%u,\"line\":%u,\"rule\":\"%s\",\"tests\":[",
	        cfg->blocks[L->header].start, L->depth, L->irreducible, f->file ? f->file : "", f->lo, f->hi,
	        f->func_line, hs, out->line, ls_line_rule_name(out->rule));
	bool first = true;
	for (size_t b = 0; b < L->nblocks; b++) {
		uint32_t bi = L->blocks[b];
		const struct ls_block *blk = &cfg->blocks[bi];
		if (lf->block_loop[bi] != k || !is_exit_test(cfg, lf, k, blk))
			continue;
		const struct ls_insn *last = &cfg->insns[blk->first_insn + blk->ninsns - 1];
		int fate = 0;
		unsigned tl = 0;
		for (uint32_t s = 0; s < blk->nsucc; s++) {
			const struct ls_cfg_edge *e = &cfg->edges[cfg->succ[blk->first_succ + s]];
			if (!in_loop(lf, e->to, k)) {
				fate = exit_fate(cfg, e->to);
				struct ls_loop_line tmp;
				if (block_line(cfg, &cfg->blocks[e->to], false, ps, lca, &tmp) && tmp.file == f->file)
					tl = tmp.line;
			}
		}
		fprintf(stderr, "%s[%u,%d,%d,%u,\"0x%" PRIx64 "\",", first ? "" : ",", branch_line(cfg, blk, ps, lca, f->file),
		        edge_rank(cfg, lf, k, blk, last), fate, tl, last->addr);
		dump_tail_lines(cfg, blk, ps, lca, f->file, 4);
		fprintf(stderr, "]");
		first = false;
	}
	fprintf(stderr, "],\"backs\":[");
	for (size_t e = 0; e < L->nbackedges; e++) {
		const struct ls_block *blk = &cfg->blocks[L->backedges[e].from];
		const struct ls_insn *last = &cfg->insns[blk->first_insn + blk->ninsns - 1];
		fprintf(stderr, "%s[%u,%d,%d,%u,", e ? "," : "", branch_line(cfg, blk, ps, lca, f->file), last->kind,
		        is_exit_test(cfg, lf, k, blk), L->backedges[e].to == L->header);
		dump_tail_lines(cfg, blk, ps, lca, f->file, 4);
		fprintf(stderr, "]");
	}
	fprintf(stderr, "],\"ent\":[");
	const struct ls_block *hb = &cfg->blocks[L->header];
	first = true;
	for (uint32_t p = 0; p < hb->npred; p++) {
		const struct ls_cfg_edge *e = &cfg->edges[cfg->pred[hb->first_pred + p]];
		if (in_loop(lf, e->from, k))
			continue;
		fprintf(stderr, "%s%u", first ? "" : ",", branch_line(cfg, &cfg->blocks[e->from], ps, lca, f->file));
		first = false;
	}
	struct ls_loop_line hl = { 0 };
	block_line(cfg, hb, false, ps, lca, &hl);
	fprintf(stderr, "],\"sl\":%u,\"hd\":%u,\"lines\":[", slides_line(cfg, lf, k, ps, lca, f),
	        hl.file == f->file ? hl.line : 0);
	for (size_t i = 0; i < f->nlines; i++)
		fprintf(stderr, "%s[%u,%u]", i ? "," : "", f->lines[i].line, f->lines[i].n);
	fprintf(stderr, "],\"vars\":[");
	first = true;
	for (unsigned l = f->lo > 8 ? f->lo - 8 : 1; l <= f->hi; l++) {
		const struct ls_decl_line *v;
		size_t n = ls_inline_vars_at(&m->inl, f->file, l, &v);
		for (size_t i = 0; i < n; i++) {
			int where = 0;
			for (size_t b = 0; b < L->nblocks && v[i].scope_lo; b++) {
				const struct ls_block *blk = &cfg->blocks[L->blocks[b]];
				if (v[i].scope_lo >= blk->start && v[i].scope_lo < blk->end)
					where = L->blocks[b] == L->header ? 2 : 1;
			}
			fprintf(stderr, "%s[%u,%d,%d]", first ? "" : ",", l, where, v[i].scope_lo != 0);
			first = false;
		}
	}
	fprintf(stderr, "],\"labels\":[");
	first = true;
	for (size_t b = 0; b < L->nblocks; b++) {
		const struct ls_block *blk = &cfg->blocks[L->blocks[b]];
		const struct ls_decl_line *lab;
		size_t n = ls_inline_labels_in(&m->inl, blk->start, blk->end, &lab);
		for (size_t i = 0; i < n; i++) {
			fprintf(stderr, "%s[%u,%d,%d]", first ? "" : ",", lab[i].line, lab[i].file == f->file,
			        L->blocks[b] == L->header);
			first = false;
		}
	}
	dump_rows(m, cfg, L, ps, lca, f);
	fprintf(stderr, "]}\n");
	funlockfile(stderr);
}

/* ---- the source rules ---- */

/* A statement holds a loop when this share of the loop's voting
 * instructions lies in its extent: confirming a test's line (a loop's
 * first lines may carry the statement before it: clang labels the
 * induction update it merged into the loop with that statement's line),
 * and choosing an enclosing statement with no code of its own. */
#define CONFIRM_SHARE 75
#define ENCLOSE_SHARE 90

static bool holds(const struct ls_src_stmt *s, const struct loop_facts *f, unsigned share)
{
	return f->total && held(f, s->line, s->end) * 100 >= f->total * share;
}

struct claims {
	const struct ls_src_stmt **by_loop;  /* the statement each loop took, or NULL */
	bool *confirmed;                     /* taken by SRC_CONFIRMED/SRC_DO */
	size_t *last_desc;                   /* the last loop of each loop's subtree (preorder) */
};

/* Whether statement S is taken by a loop nested in K, or confirmed for a
 * loop around K. */
enum { SHARE_NONE, SHARE_ANCESTORS, SHARE_ALL };

static bool taken(const struct ls_loop_forest *lf, const struct claims *c, int32_t k, const struct ls_src_stmt *s,
                  int share)
{
	for (size_t j = (size_t)k + 1; j <= c->last_desc[k] && share != SHARE_ALL; j++)
		if (c->by_loop[j] == s)
			return true;
	for (int32_t a = lf->loops[k].parent; a >= 0 && share == SHARE_NONE; a = lf->loops[a].parent)
		if (c->by_loop[a] == s && c->confirmed[a])
			return true;
	return false;
}

/* SRC_CALLER: the loop's code is all in an inlined callee whose function
 * holds no loop statement for it (`while (testnext(ls, ';')) {}`, or
 * Eigen's assignCoeff repeated by its caller's for): the innermost loop
 * statement of a caller up the inline chain that holds the call, unless
 * an enclosing loop took it. */
static bool caller_statement(const ls_module *m, const struct ls_loop_forest *lf, const struct claims *c,
                             int32_t k, const struct ls_inl_node *ctx, struct ls_loop_line *out)
{
	for (unsigned level = 0; ctx && level < 8; level++, ctx = ctx_parent(ctx)) {
		const struct ls_source *src = ls_source_get(m->sources, ctx->call_file);
		if (!src || !ctx->call_line)
			continue;
		const struct ls_inl_node *caller = ctx_parent(ctx);
		unsigned from = caller && caller->decl_file == ctx->call_file ? caller->decl_line : 0;
		size_t n;
		const struct ls_src_stmt *st = ls_source_stmts(src, &n), *best = NULL;
		for (size_t i = 0; i < n && st[i].line <= ctx->call_line; i++)
			if (st[i].line >= from && st[i].end >= ctx->call_line && (!best || st[i].line > best->line))
				best = &st[i];
		if (!best)
			continue;
		if (taken(lf, c, k, best, SHARE_NONE))
			return false;
		out->file = ctx->call_file;
		out->line = best->line;
		out->rule = LS_LINE_SRC_CALLER;
		return true;
	}
	return false;
}

/* The loop statement LINE begins, or the do whose closing while is on
 * LINE (*IS_DO), holding the loop. */
static const struct ls_src_stmt *stmt_of_test(const struct ls_source *src, const struct loop_facts *f,
                                              unsigned line, bool *is_do)
{
	const struct ls_src_stmt *s = ls_source_stmt_at(src, line);
	*is_do = false;
	if (s && s->kind != LS_SRC_LABEL && holds(s, f, CONFIRM_SHARE))
		return s;
	unsigned d = ls_source_do_of_while(src, line);
	if (d && (s = ls_source_stmt_at(src, d)) && s->kind == LS_SRC_DO && holds(s, f, CONFIRM_SHARE)) {
		*is_do = true;
		return s;
	}
	return NULL;
}

/* SRC_CONFIRMED / SRC_DO: the DWARF line, else the line of another of the
 * loop's own tests (exit tests and back-edge branches; the innermost
 * statement wins), begins or closes a loop statement holding the loop. */
static const struct ls_src_stmt *confirm(const struct ls_cfg *cfg, const struct ls_loop_forest *lf, int32_t k,
                                         const struct ls_places *ps, const struct ls_inl_node *lca,
                                         const struct ls_source *src, const struct loop_facts *f,
                                         struct ls_loop_line *out)
{
	bool is_do;
	const struct ls_src_stmt *best = stmt_of_test(src, f, out->line, &is_do);
	bool best_do = is_do;
	const struct ls_loop *L = &lf->loops[k];
	for (size_t b = 0; b < L->nblocks && !best; b++) {
		uint32_t bi = L->blocks[b];
		const struct ls_block *blk = &cfg->blocks[bi];
		if (lf->block_loop[bi] != k || !blk->ninsns)
			continue;
		bool test = is_exit_test(cfg, lf, k, blk);
		for (uint32_t e = 0; e < blk->nsucc && !test; e++)
			test = cfg->edges[cfg->succ[blk->first_succ + e]].to == L->header;
		unsigned l = test ? branch_line(cfg, blk, ps, lca, f->file) : 0;
		const struct ls_src_stmt *s = l ? stmt_of_test(src, f, l, &is_do) : NULL;
		if (s && (!best || s->line > best->line)) {
			best = s;
			best_do = is_do;
		}
	}
	if (!best)
		return NULL;
	out->line = best->line;
	out->rule = best_do ? LS_LINE_SRC_DO : LS_LINE_SRC_CONFIRMED;
	return best;
}

/* The short name of a function ("ns::cls<T>::f(int) const" -> "f"). */
static const char *short_name(const char *name, size_t *len)
{
	if (!name)
		return NULL;
	size_t depth = 0;
	const char *start = name, *end = name + strlen(name);
	for (const char *p = name; *p; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth)
			depth--;
		else if (*p == '(' && depth == 0 && p > name && strncmp(p, "(anonymous", 10) != 0) {
			end = p;
			break;
		} else if (*p == ':' && p[1] == ':' && depth == 0) {
			start = p + 2;
		}
	}
	const char *lt = memchr(start, '<', (size_t)(end - start));
	if (lt && lt > start)
		end = lt;
	*len = (size_t)(end - start);
	return start;
}

/* Whether loop L still calls function NAME (LEN bytes, a short name): a
 * call instruction to a procedure of that name. */
static bool loop_calls(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop *L, const char *name,
                       size_t len)
{
	for (size_t b = 0; b < L->nblocks; b++) {
		const struct ls_block *blk = &cfg->blocks[L->blocks[b]];
		for (uint32_t i = 0; i < blk->ninsns; i++) {
			const struct ls_insn *in = &cfg->insns[blk->first_insn + i];
			if (in->kind != LS_INSN_CALL)
				continue;
			const struct ls_proc *p = ls_procs_at_entry(&m->procs, in->target);
			size_t n;
			const char *pn = p ? short_name(ls_proc_name(m, p), &n) : NULL;
			if (pn && n == len && memcmp(pn, name, len) == 0)
				return true;
		}
	}
	return false;
}

/* SRC_RECURSION: the loop is a recursion the compiler made into a jump:
 * no call to the function itself is left in the loop, and a line of it (a
 * back edge's first, else the last such line) calls the function.  A loop
 * whose body makes a recursive call (jq's jv_dump_term walking an array
 * with a foreach macro) is no such loop. */
static unsigned recursive_call(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop *L,
                               const struct ls_places *ps, const struct ls_inl_node *lca, const char *fname,
                               const struct ls_source *src, const struct loop_facts *f)
{
	size_t len;
	const char *name = short_name(fname, &len);
	if (!name || !len || loop_calls(m, cfg, L, name, len))
		return 0;
	for (size_t e = 0; e < L->nbackedges; e++) {
		const struct ls_block *blk = &cfg->blocks[L->backedges[e].from];
		unsigned l = branch_line(cfg, blk, ps, lca, f->file);
		if (l && l != f->func_line && ls_source_calls(src, l, name, len))
			return l;
	}
	for (size_t i = f->nlines; i-- > 0;)
		if (f->lines[i].line != f->func_line && ls_source_calls(src, f->lines[i].line, name, len))
			return f->lines[i].line;
	return 0;
}

/* SRC_ENCLOSING: the innermost loop statement after the function's start
 * that holds the loop and is not taken. */
static const struct ls_src_stmt *enclosing(const struct ls_source *src, const struct ls_loop_forest *lf,
                                           const struct claims *c, int32_t k, const struct loop_facts *f,
                                           int share)
{
	size_t n;
	const struct ls_src_stmt *st = ls_source_stmts(src, &n);
	const struct ls_src_stmt *best = NULL;
	for (size_t i = 0; i < n && st[i].line <= f->hi; i++) {
		if (st[i].line < f->func_line || st[i].end < f->lo || !holds(&st[i], f, ENCLOSE_SHARE) ||
		    taken(lf, c, k, &st[i], share))
			continue;
		if (!best || st[i].line > best->line || (st[i].line == best->line && st[i].end < best->end))
			best = &st[i];
	}
	return best;
}

/* Whether the procedure has code (a voting instruction, seen from context
 * LCA, in FILE) on a line strictly between LO and HI. */
static bool code_between(const struct ls_places *ps, const struct ls_inl_node *lca, const char *file,
                         unsigned lo, unsigned hi)
{
	for (size_t i = 0; i < ps->n; i++) {
		const char *f;
		unsigned l;
		if (ps->pl[i].votes && line_in_context(&ps->pl[i], lca, &f, &l) && f == file && l > lo && l < hi)
			return true;
	}
	return false;
}

/* Whether every voting instruction of inlined call CTX is in loop K: the
 * loop repeats the whole call, so its statement is the caller's. */
static bool repeats_whole_call(const struct ls_loop_forest *lf, int32_t k, const struct ls_places *ps,
                               const struct ls_inl_node *ctx)
{
	for (size_t i = 0; i < ps->n; i++) {
		if (!ps->pl[i].votes)
			continue;
		const struct ls_inl_node *c = ps->pl[i].ctx;
		while (c && c != ctx)
			c = ctx_parent(c);
		if (c != ctx)
			continue;
		int32_t l = ps->pl[i].loop;
		while (l >= 0 && l != k)
			l = lf->loops[l].parent;
		if (l != k)
			return false;
	}
	return true;
}

/* SRC_AFTER_ENTRY: a loop with no line of its own (clang's `jmp .` of a
 * `while (x);` whose body is gone is at line 0), named by ENTRY after the
 * branch that enters it: the first loop statement beginning on or after
 * that branch's line, in the source, is the loop's. */
static void after_entry(const ls_module *m, struct ls_loop_line *out)
{
	const struct ls_source *src = ls_source_get(m->sources, out->file);
	if (!src)
		return;
	size_t n;
	const struct ls_src_stmt *st = ls_source_stmts(src, &n);
	for (size_t i = 0; i < n; i++)
		if (st[i].line >= out->line && st[i].kind != LS_SRC_LABEL) {
			/* Only right after it: the branch is the statement around it. */
			if (st[i].line > out->line + 3)
				return;
			out->line = st[i].line;
			out->rule = LS_LINE_SRC_AFTER_ENTRY;
			return;
		}
}

/* The source rules for loop K, whose DWARF line names no statement.  Each
 * line they take is of the loop's own file, F's: the DWARF rule may have
 * named another (SCOPE_VARIABLE names the caller's). */
static void source_line(const ls_module *m, const struct ls_proc *proc, const struct ls_cfg *cfg, const struct ls_loop_forest *lf,
                        int32_t k, const struct ls_places *ps, const struct ls_inl_node *lca,
                        const struct ls_source *src, const struct loop_facts *f, struct claims *c,
                        struct ls_loop_line *out)
{
	if (lca && repeats_whole_call(lf, k, ps, lca) && caller_statement(m, lf, c, k, lca, out))
		return;
	const struct ls_src_stmt *s = enclosing(src, lf, c, k, f, SHARE_NONE);
	if (f->lo == f->hi && !ls_source_stmt_at(src, f->lo) && f->lo != f->func_line && f->direct &&
	    !ls_source_begins_control(src, f->lo) && (!s || code_between(ps, lca, f->file, s->line, f->lo))) {
		/* All on one line that begins no loop, some of it right there
		 * (not only in calls inlined from it), and no loop statement
		 * whose body starts there: an expansion on that line. */
		out->file = f->file;
		out->line = f->lo;
		out->rule = LS_LINE_SRC_EXPANSION;
		return;
	}
	if (s) {
		c->by_loop[k] = s;
		out->file = f->file;
		out->line = s->line;
		out->rule = LS_LINE_SRC_ENCLOSING;
		return;
	}
	unsigned l = recursive_call(m, cfg, &lf->loops[k], ps, lca, lca ? lca->name : proc->name, src, f);
	if (l) {
		out->file = f->file;
		out->line = l;
		out->rule = LS_LINE_SRC_RECURSION;
		return;
	}
	if (lca && caller_statement(m, lf, c, k, lca, out))
		return;
	if (f->lo == f->hi && f->lo == f->func_line) {
		/* A one-line function's loop no caller explains. */
		out->file = f->file;
		out->line = f->lo;
		out->rule = LS_LINE_SRC_EXPANSION;
		return;
	}
	/* One source loop the compiler made into nested loops (gcc splits a
	 * `for (;;)` around a switch by its back edges; jump threading makes
	 * a state machine's `while (1)` a loop per state): the statement its
	 * enclosing loop took, or one a loop nested in it took. */
	s = enclosing(src, lf, c, k, f, SHARE_ANCESTORS);
	if (!s)
		s = enclosing(src, lf, c, k, f, SHARE_ALL);
	if (s) {
		c->by_loop[k] = s;
		out->file = f->file;
		out->line = s->line;
		out->rule = LS_LINE_SRC_SHARED;
	}
}

/* Whether loops A and B are copies of one source loop: the same lines of
 * the same file (a loop versioned, peeled, or vectorized with a remainder
 * loop; one function inlined twice into the procedure). */
static bool same_source_loop(const struct loop_facts *a, const struct loop_facts *b)
{
	return a->file && b->file && a->lo && a->lo == b->lo && a->hi == b->hi &&
	       (a->file == b->file || !strcmp(a->file, b->file));
}

/* Whether loop J is a copy of loop K whose line is its own test at the top. */
static bool top_copy(const struct loop_facts *facts, const struct ls_loop_line *out, size_t k, size_t j)
{
	return j != k && out[j].rule == LS_LINE_TEST_AT_TOP && same_source_loop(&facts[k], &facts[j]);
}

/* The line that more of loop K's copies' tests at the top name than any
 * other, or 0. */
static unsigned copies_top_line(const struct loop_facts *facts, size_t nloops, const struct ls_loop_line *out, size_t k)
{
	unsigned best = 0, best_n = 0, second_n = 0;
	for (size_t j = 0; j < nloops; j++) {
		if (!top_copy(facts, out, k, j))
			continue;
		bool counted = false; /* at an earlier copy with that line */
		for (size_t i = 0; i < j && !counted; i++)
			counted = top_copy(facts, out, k, i) && out[i].line == out[j].line;
		if (counted)
			continue;
		unsigned n = 1;
		for (size_t i = j + 1; i < nloops; i++)
			n += top_copy(facts, out, k, i) && out[i].line == out[j].line;
		if (n > best_n)
			second_n = best_n, best_n = n, best = out[j].line;
		else if (n > second_n)
			second_n = n;
	}
	return best_n > second_n ? best : 0;
}

/* SIBLING_TOP: a loop whose line is a guess (or a hidden statement row)
 * takes the line of its copies' test at the top, when they agree.  The
 * compiler often keeps the loop's test in one copy (the vector loop, the
 * unpeeled one) and not in another (its remainder, unrolled or rotated
 * until the test sits in the body). */
static void sibling_tops(const struct loop_facts *facts, size_t nloops, struct ls_loop_line *out)
{
	for (size_t k = 0; k < nloops; k++) {
		enum ls_line_rule r = out[k].rule;
		if (r != LS_LINE_BEFORE_BODY && r != LS_LINE_SLIDES && r != LS_LINE_STMT_IN_LOOP &&
		    r != LS_LINE_ABOVE_SWITCH)
			continue;
		unsigned line = copies_top_line(facts, nloops, out, k);
		if (line && line != out[k].line && out[k].file == facts[k].file) {
			out[k].line = line;
			out[k].rule = LS_LINE_SIBLING_TOP;
		}
	}
}

/* Loop K's facts seen from context CTX, limited to its function. */
static void loop_facts_in(const struct ls_proc *proc, const struct ls_cfg *cfg, const struct ls_loop_forest *lf,
                          int32_t k, const struct ls_places *ps, const struct ls_inl_node *ctx,
                          const char *proc_file, struct loop_facts *f, unsigned **scratch, size_t *cap)
{
	gather_facts(cfg, &lf->loops[k], ps, ctx, f, scratch, cap);
	const char *decl_file = ctx ? ctx->decl_file : proc->file;
	unsigned decl_line = ctx ? ctx->decl_line : proc->line;
	if (f->file && (f->file == decl_file || (!ctx && f->file == proc_file)))
		limit_to_function(f, decl_line);
}

void ls_loop_lines(const ls_module *m, const struct ls_proc *proc, const struct ls_cfg *cfg,
                   const struct ls_loop_forest *lf, const struct ls_places *ps,
                   const struct ls_inl_node *const *lca, const char *proc_file, struct ls_loop_line *out)
{
	size_t nloops = lf->nloops;
	struct loop_facts *facts = ls_xcalloc(nloops + 1, sizeof *facts);
	const struct ls_source **srcs = ls_xcalloc(nloops + 1, sizeof *srcs);
	struct claims c = {
		ls_xcalloc(nloops + 1, sizeof *c.by_loop),
		ls_xcalloc(nloops + 1, sizeof *c.confirmed),
		ls_xcalloc(nloops + 1, sizeof *c.last_desc),
	};
	for (size_t k = nloops; k-- > 0;) {
		if (c.last_desc[k] < k)
			c.last_desc[k] = k;
		int32_t p = lf->loops[k].parent;
		if (p >= 0 && c.last_desc[p] < c.last_desc[k])
			c.last_desc[p] = c.last_desc[k];
	}
	unsigned *scratch = NULL;
	size_t cap = 0;

	/* The DWARF rules, and the source's confirmation of their line. */
	for (size_t k = 0; k < nloops; k++) {
		struct loop_facts *f = &facts[k];
		loop_facts_in(proc, cfg, lf, (int32_t)k, ps, lca[k], proc_file, f, &scratch, &cap);
		memset(&out[k], 0, sizeof out[k]);
		dwarf_line(m, cfg, lf, (int32_t)k, ps, lca[k], f, &out[k]);
		if (out[k].rule == LS_LINE_ENTRY)
			after_entry(m, &out[k]);
	}
	sibling_tops(facts, nloops, out);
	for (size_t k = 0; k < nloops; k++) {
		struct loop_facts *f = &facts[k];
		if (m->debug_loop_lines_level >= 2 && f->file)
			dump_facts(m, cfg, lf, (int32_t)k, ps, lca[k], f,
			           header_statement(m, cfg, &lf->loops[k], ps, lca[k], f), &out[k]);
		if (out[k].rule == LS_LINE_SCOPE_VARIABLE ||
		    (out[k].rule == LS_LINE_ENTRY_STMT && out[k].file != f->file)) {
			/* A caller's line: the sources' rules (SRC_CALLER)
			 * decide, as for a line of the callee that names no
			 * statement. */
			srcs[k] = ls_source_get(m->sources, f->file);
			continue;
		}
		if (!out[k].line || !f->lo || out[k].file != f->file)
			continue;
		srcs[k] = ls_source_get(m->sources, f->file);
		if (srcs[k] && (c.by_loop[k] = confirm(cfg, lf, (int32_t)k, ps, lca[k], srcs[k], f, &out[k])))
			c.confirmed[k] = true;
	}
	/* The loops the DWARF lines do not name: children first. */
	for (size_t k = nloops; k-- > 0;)
		if (srcs[k] && !c.by_loop[k])
			source_line(m, proc, cfg, lf, (int32_t)k, ps, lca[k], srcs[k], &facts[k], &c, &out[k]);
	for (size_t k = 0; k < nloops; k++) {
		if (m->debug_loop_lines)
			fprintf(stderr, "loopscope: loop facts: header 0x%" PRIx64 ": lines %u-%u (%zu insns) in %s, function at %u, source %s\n",
			        cfg->blocks[lf->loops[k].header].start, facts[k].lo, facts[k].hi, facts[k].total,
			        facts[k].file ? facts[k].file : "??", facts[k].func_line, srcs[k] ? "read" : "none");
		free(facts[k].lines);
	}
	free(scratch);
	free(facts);
	free(srcs);
	free(c.by_loop);
	free(c.confirmed);
	free(c.last_desc);
}
