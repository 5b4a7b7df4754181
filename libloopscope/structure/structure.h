/* structure.h - the structure builder and the normalization passes. */
#ifndef LOOPSCOPE_STRUCTURE_H
#define LOOPSCOPE_STRUCTURE_H

#include "cfg/cfg.h"
#include "loops/loop_forest.h"
#include "structure/scope.h"

/* How many inlined calls deep the tree goes: a chain of the procedure,
 * these and the statement fits in LS_MAX_CHAIN.  Deeper inlining (only
 * generated or hostile DWARF nests so deep) keeps the outermost calls; the
 * statement says how many were left out below them (ls_scope.cut), and the
 * lookup chain counts them as cut.  It also bounds every walk of a chain
 * here, so the analysis stays linear in the nesting depth. */
#define LS_MAX_INLINE_SCOPES (LS_MAX_CHAIN - 2)

/* What the structure builder knows of one instruction (or, without a CFG,
 * of one piece of the procedure between line-table and inline boundaries). */
struct ls_place {
	uint64_t addr, end;
	const struct ls_inl_node *ctx;  /* inline context, NULL: the procedure body; at most
	                                 * LS_MAX_INLINE_SCOPES deep (its outermost part) */
	uint32_t cut;                   /* inlined calls of the context below CTX, left out */
	const char *file;               /* line map */
	unsigned line;                  /* 0: the compiler made it for no statement */
	int32_t loop;                   /* innermost loop, -1 none */
	/* Whether it counts where its loop goes and which line the loop
	 * gets: it has a line and does more than move data (not a spill,
	 * reload, register copy or padding nop, which the compiler may label
	 * with any statement whose value it carries). */
	bool votes;
};

/* The index of the place holding ADDR in PL (sorted by addr), or -1. */
int ls_place_index(const struct ls_place *pl, size_t n, uint64_t addr);

/* A procedure's places (sorted by address), with the index of each CFG
 * block's first instruction among them: a block's instructions are
 * consecutive places, so the place of its K-th is found without a search. */
struct ls_places {
	const struct ls_place *pl;
	size_t n;
	const uint32_t *block_first;    /* per block; UINT32_MAX if not found */
};

/* The index of the place of instruction K of block BLK, or -1. */
static inline int ls_block_place(const struct ls_places *ps, const struct ls_cfg *cfg, const struct ls_block *blk,
                                 uint32_t k)
{
	uint32_t first = ps->block_first[blk - cfg->blocks];
	uint64_t addr = cfg->insns[blk->first_insn + k].addr;
	if (first != UINT32_MAX && first + k < ps->n && ps->pl[first + k].addr == addr)
		return (int)(first + k);
	return ls_place_index(ps->pl, ps->n, addr); /* not consecutive after all */
}

/* The line of each loop and the rule that chose it (loop_line.c). */
enum ls_line_rule {
	LS_LINE_NONE,           /* no line found */
	LS_LINE_TEST_AT_TOP,    /* the loop's own test, before its body: for/while */
	LS_LINE_HEADER_STMT,    /* a statement row at the header above the body: gcc's for(;;)/do */
	LS_LINE_TEST_AT_BOTTOM, /* the back-edge test after the body: do/while */
	LS_LINE_SLIDES,         /* the slides' priority scheme over the loop's branches */
	LS_LINE_HEADER,         /* the header's first line */
	LS_LINE_SRC_CONFIRMED,  /* source: the line above begins a loop statement holding the loop */
	LS_LINE_SRC_DO,         /* source: a do/while's closing while, moved to its do */
	LS_LINE_SRC_EXPANSION,  /* source: the whole loop is on one line with no loop statement (a macro) */
	LS_LINE_SRC_ENCLOSING,  /* source: the innermost loop statement holding the loop's lines */
	LS_LINE_SRC_RECURSION,  /* source: no loop statement; a line of it is the recursive call */
	LS_LINE_SRC_CALLER,     /* source: all in an inlined callee with no loop statement: the caller's */
	LS_LINE_SRC_SHARED,     /* source: one source loop made nested loops: the enclosing loop's statement */
	LS_LINE_ENTRY,          /* no line of its own: the branch that enters it */
	LS_LINE_BEFORE_BODY,    /* no test of its own at either end (for (;;), while (1)): the line
	                         * before its first, where such a statement stands (a guess) */
	LS_LINE_SRC_AFTER_ENTRY, /* source: no line of its own: the loop statement right after the
	                          * branch that enters it */
	LS_LINE_LABEL,          /* a label (DW_TAG_label) in the loop, on or just above its first
	                         * line, the loop closed by a direct jump: a goto loop */
	LS_LINE_STMT_IN_LOOP,   /* a statement row hidden inside the loop (not at its header) above its
	                         * lines: gcc's row of a rotated loop's code-less statement line */
	LS_LINE_ABOVE_SWITCH,   /* the loop's first line dispatches like a switch, into the loop's own
	                         * lines, and the line above has no code: `for (;;) { switch` (a guess) */
	LS_LINE_SIBLING_TOP,    /* a guess overruled by the test at the top of the loop's copies in
	                         * the procedure (same file and lines: versioned, peeled, inlined) */
	LS_LINE_SCOPE_VARIABLE, /* all in an inlined call the loop repeats: the line of a variable
	                         * of the block around the call (`for (int i = 0; ...) f(i);`) */
	LS_LINE_ENTRY_STMT,     /* all on one line: the branch entering it, a line or two above and
	                         * left of the loop's code (clang's guard of a vectorized loop) */
};
const char *ls_line_rule_name(enum ls_line_rule r);

struct ls_loop_line {
	const char *file;
	unsigned line;
	enum ls_line_rule rule;
};

/* The lines of all the loops of LF.  LCA[k] is loop k's inline context
 * (NULL: the procedure's body), PROC_FILE the file of the procedure's own
 * lines.  Fills OUT[k] for every loop. */
void ls_loop_lines(const ls_module *m, const struct ls_proc *proc, const struct ls_cfg *cfg,
                   const struct ls_loop_forest *lf, const struct ls_places *ps,
                   const struct ls_inl_node *const *lca, const char *proc_file, struct ls_loop_line *out);

/* What the compiler made each loop of LF for, when no loop statement is
 * behind it (enum ls_loop_made, into MADE[k]; loop_kind.c). */
void ls_loop_kinds(const ls_module *m, const struct ls_cfg *cfg, const struct ls_loop_forest *lf,
                   const struct ls_places *ps, const struct ls_inl_node *const *lca,
                   const struct ls_loop_line *lines, uint8_t *made);

/* Build PROC's scope subtree (a LS_SCOPE_PROC node, not yet linked into the
 * module) from its CFG and loop forest.  CFG may be NULL (no decoder for the
 * architecture, or the CFG could not be built): then statements come from
 * the line map alone and there are no loops.  Allocates from ARENA only, so
 * that procedures can be built on several threads. */
struct ls_scope *ls_structure_build_proc(const ls_module *m, const struct ls_proc *proc,
                                         const struct ls_cfg *cfg, const struct ls_loop_forest *lf,
                                         struct ls_arena *arena);

/* normalize.c: merge perfectly nested loops with identical ranges, remove
 * empty scopes, and give every scope the sorted union of its children's
 * ranges. */
void ls_normalize_proc(struct ls_scope *proc, struct ls_arena *arena);

#endif
