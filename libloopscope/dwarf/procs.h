/* procs.h - the procedures stage (procs.c): reads the inline tree's
 * subprograms (inline_tree.h) and the symbol table, makes m->procs. */
#ifndef LOOPSCOPE_PROCS_H
#define LOOPSCOPE_PROCS_H

#include "support/base.h"

/* ---- procedures (procs.c) ------------------------------------------------ */

struct ls_proc {
	const char *name;          /* demangled, interned */
	const char *linkage_name;  /* mangled, interned; NULL if same as name */
	const char *file;          /* DW_AT_decl_file, interned; NULL without DWARF */
	unsigned line;             /* DW_AT_decl_line */
	ls_range *ranges;          /* sorted; [0] holds the entry; a .cold part is another range */
	size_t nranges;
	uint64_t entry;            /* DW_AT_low_pc / entry_pc or symbol value */
	bool from_dwarf;
	bool noreturn;             /* DW_AT_noreturn or a known non-returning name */
	bool is_plt;               /* name@plt */
	bool inferred;             /* no symbol names it: found from .eh_frame or calls (sub_ADDR) */
	/* On demand, a C++ symbol's name is demangled when first asked for
	 * (ls_proc_name): until then NAME and LINKAGE_NAME are both the
	 * mangled name.  A report prints a few hundred of the 10^5 names of
	 * libLLVM's table, and demangling them all was 6% of its first run. */
	bool name_pending;
	const struct ls_inl_node *die_node; /* its subprogram node in the inline tree, or NULL */
};

struct ls_procs {
	struct ls_proc *procs;     /* sorted by entry */
	size_t nprocs;
	bool names_resolved;       /* no name_pending left (ls_procs_resolve_names) */
	/* Address index: each range of each proc, sorted by lo, non-overlapping
	 * (overrunning DWARF ranges clamped at the next symbol, thesis 4.3). */
	struct ls_proc_range { uint64_t lo, hi; uint32_t proc; } *index;
	size_t nindex;
	/* procs[i].entry, in their own array, and a directory of it by blocks
	 * of 2^entry_shift bytes from entries[0] (entry_first[b]: the first
	 * entry in block b or after; nblocks + 1 of them): the CFG asks
	 * ls_procs_at_entry of every call target, and a binary search over
	 * the procedures touched a cache line a step (2.6% of a cold report
	 * of a system-wide recording). */
	uint64_t *entries;
	uint32_t *entry_first;     /* NULL: search all the entries */
	unsigned entry_shift;
	size_t entry_nblocks;
};

void ls_procs_build(ls_module *m); /* cannot fail: bad entries are skipped */

/* P's name, demangled now if it was not yet (P->name_pending): under the
 * analysis' lock or where no other thread analyzes M (it interns). */
const char *ls_proc_name(const ls_module *m, const struct ls_proc *p);
/* Every pending name of M's table demangled (ls_proc_name), for what
 * reads the names of all procedures.  Not under the analysis' lock, which
 * its callers may hold (a kernel's jump labels are found by name during
 * an analysis): by the thread that analyzes M, or where none does; once
 * done, it only reads (a threaded batch does it before its workers). */
void ls_procs_resolve_names(ls_module *m);

/* ---- procedures no symbol names (proc_bounds.c) ------------------------------ */

/* The code ranges of the .eh_frame FDEs (one per compiled function and per
 * .cold part; kept by strip), sorted by start: how many, in *OUT (free it). */
size_t ls_fde_ranges(const ls_module *m, ls_range **out);
/* Whether a call target matters to the caller of ls_call_targets. */
typedef bool (*ls_target_filter)(const void *ctx, uint64_t target);
/* What the filter says at once, tested before it is called: a target at
 * or above BASE whose block of 1 << SHIFT bytes has its bit clear in
 * BITS (NBLOCKS of them), or out of them, does not matter. */
struct ls_target_bits {
	const uint64_t *bits;
	uint64_t base;
	size_t nblocks;
	unsigned shift;
};
/* The targets in code of the direct calls and of the jumps out of their
 * range (tail calls) in the CODE ranges, sorted, unique: how many, in *OUT.
 * With WANTED, only the ranges that may hold a call or jump to a target
 * WANTED(CTX, target) says matters are decoded: the targets that matter
 * are the same, the others may be missing.  BITS (or NULL) rules most
 * candidates out without a call of WANTED: the scan meets an e8, e9 or eb
 * byte every 30 bytes of code. */
size_t ls_call_targets(const ls_module *m, const ls_range *code, size_t ncode, ls_target_filter wanted,
                       const void *ctx, const struct ls_target_bits *bits, uint64_t **out);
/* Whether a function named NAME never returns (known names; in kernel code,
 * objtool's list too). */
bool ls_noreturn_name(const ls_module *m, const char *name);
/* For each of the NADDR addresses, whether one of the N ranges (in any
 * order, overlapping or not) holds it: the question the call-target
 * filter asks, through the same sorted cover and block directory
 * (tests/unit-procs checks it against a plain scan). */
void ls_ranges_cover(const ls_range *r, size_t n, const uint64_t *addr, size_t naddr, bool *in);
/* For each ADDR, whether it is code of M (in M's code sections) that none
 * of the N ranges R holds: the call-target filter's question, through its
 * bits of the uncovered blocks (tests/unit-procs checks it against a
 * plain scan). */
void ls_code_uncovered(const ls_module *m, const ls_range *r, size_t n, const uint64_t *addr, size_t naddr,
                       bool *out);
const struct ls_proc *ls_procs_find(const struct ls_procs *p, uint64_t addr);
/* The procedure whose entry is exactly ADDR, or NULL (tail-call detection). */
const struct ls_proc *ls_procs_at_entry(const struct ls_procs *p, uint64_t addr);
void ls_procs_free(struct ls_procs *p);

#endif
