/* inline_tree.h - the inline tree stage (inline_tree.c): reads .debug_info
 * once, makes m->inl (the inlined calls by address, and the subprograms
 * procs.c builds the procedures from). */
#ifndef LOOPSCOPE_INLINE_TREE_H
#define LOOPSCOPE_INLINE_TREE_H

#include "support/base.h"

/* ---- inline tree (inline_tree.c) ------------------------------------------- */

enum ls_inl_kind { LS_INL_SUBPROGRAM, LS_INL_INLINED, LS_INL_LEXICAL };

struct ls_inl_node {
	enum ls_inl_kind kind;
	const struct ls_inl_node *parent; /* NULL for a subprogram */
	unsigned depth;                   /* subprogram 0; counts inlined nodes only */
	const char *name;                 /* callee, demangled, interned */
	const char *linkage_name;         /* interned or NULL */
	const char *decl_file;            /* callee's DW_AT_decl_file, interned */
	unsigned decl_line;
	const char *call_file;            /* inlined: DW_AT_call_file, interned */
	unsigned call_line, call_column;
	Dwarf_Off die;                    /* offset of the DIE, for identity and debugging */
	union {                           /* by kind, so that a node is no bigger (millions in a kernel) */
		uint64_t lo;                      /* lexical: the lowest address of its code */
		const struct ls_inl_node *block;  /* inlined: the innermost lexical block around
		                                   * the call in the caller (its ->parent chain
		                                   * holds the others), NULL if none */
	};
};

struct ls_inl_seg {
	uint64_t lo, hi;                  /* half-open, sorted, non-overlapping */
	const struct ls_inl_node *node;   /* the deepest node covering [lo, hi) */
};

/* A subprogram with code as the inline-tree walk found it: procs.c builds
 * the procedures from these, so that .debug_info is walked only once. */
struct ls_inl_sub {
	const struct ls_inl_node *node;   /* its LS_INL_SUBPROGRAM node */
	ls_range *ranges;                 /* sorted by lo (DW_AT_ranges or low/high_pc) */
	size_t nranges;
	uint64_t entry;                   /* DW_AT_entry_pc, else DW_AT_low_pc, else lowest range */
	bool noreturn;                    /* DW_AT_noreturn */
};

/* Source lines that DWARF says hold a declaration with no code of its own,
 * for naming a loop whose statement has none either (loop_line.c): a local
 * variable's DW_AT_decl_line, or a label's (with its address). */
struct ls_decl_line {
	const char *file;                 /* interned */
	unsigned line;
	uint64_t addr;                    /* a label's DW_AT_low_pc; 0 for a variable */
	uint64_t scope_lo;                /* a variable's: its lexical block's lowest address, 0 if none */
};

struct ls_inline_index {
	struct ls_inl_seg *segs;
	size_t nsegs;
	struct ls_inl_node **nodes;       /* all nodes (owned), for freeing and walking */
	size_t nnodes;
	struct ls_inl_sub *subs;          /* every subprogram with code, in DIE order */
	size_t nsubs;
	struct ls_arena arena;            /* holds the nodes and the subs' ranges */
	struct ls_decl_line *vars;        /* local variables' lines, by file then line */
	size_t nvars;
	struct ls_decl_line *labels;      /* labels with an address, by address */
	size_t nlabels;
};

int ls_inline_build(ls_module *m, ls_error *err);
/* The deepest node covering ADDR (a subprogram node if none inlined), or NULL. */
const struct ls_inl_node *ls_inline_find(const struct ls_inline_index *ix, uint64_t addr);
void ls_inline_free(struct ls_inline_index *ix);
/* The local variables declared on line LINE of FILE (interned): *VARS
 * gets the first, the count is returned. */
size_t ls_inline_vars_at(const struct ls_inline_index *ix, const char *file, unsigned line,
                         const struct ls_decl_line **vars);
/* The labels at addresses [LO, HI): *LABELS gets the first, the count is
 * returned. */
size_t ls_inline_labels_in(const struct ls_inline_index *ix, uint64_t lo, uint64_t hi,
                           const struct ls_decl_line **labels);

#endif
