/* cfg.h - the control-flow graph of one procedure (built by cfg.c). */
#ifndef LOOPSCOPE_CFG_H
#define LOOPSCOPE_CFG_H

#include "cfg/decode.h"
#include "dwarf/procs.h"
#include "elf/module.h"

enum ls_edge_kind {
	LS_EDGE_FALLTHROUGH,   /* into the next block without a branch */
	LS_EDGE_TAKEN,         /* a conditional branch's target */
	LS_EDGE_NOT_TAKEN,     /* a conditional branch's fall-through */
	LS_EDGE_JUMP,          /* an unconditional direct jump */
	LS_EDGE_SWITCH,        /* a jump-table case */
	LS_EDGE_CALL_RETURN,   /* from a block ending in a (returning) call to the next */
	LS_EDGE_EXCEPTION,     /* from a block ending in a call to its landing pad (C++ catch/cleanup) */
};

struct ls_block {
	uint64_t start, end;   /* [start, end) */
	uint32_t first_insn;   /* index into cfg->insns */
	uint32_t ninsns;
	uint32_t first_succ;   /* index into cfg->succ */
	uint32_t nsucc;
	uint32_t first_pred;   /* index into cfg->pred */
	uint32_t npred;
	bool reachable;        /* from the entry (padding and dead code are not) */
};

struct ls_cfg_edge {
	uint32_t from, to;     /* block indices */
	uint8_t kind;          /* enum ls_edge_kind */
};

struct ls_cfg {
	struct ls_insn *insns;       /* every decoded instruction of the procedure, by address */
	size_t ninsns;
	struct ls_block *blocks;     /* sorted by start; blocks[0] is the entry */
	size_t nblocks;
	struct ls_cfg_edge *edges;
	size_t nedges;
	uint32_t *succ;              /* edge indices, grouped by from-block */
	uint32_t *pred;              /* edge indices, grouped by to-block */
	/* Indirect jumps that look like jump tables (an indexed load) but
	 * whose targets are unknown: the procedure's loops may be incomplete. */
	uint32_t unresolved_jumps;
	uint64_t first_unresolved;   /* the first one's address */
	/* Set by ls_cfg_build when env->hand_back asked and this CFG is the
	 * one ls_cfg_build_alone would make: ls_cfg_keep keeps it then. */
	struct ls_cfg_keep {
		bool pending, fragments;
		size_t bad;
		uint64_t first_bad;
	} keep;
};

/* What the CFG builder needs to know of the rest of the module. */
struct ls_cfg_env {
	const ls_module *m;          /* text bytes, procs (tail calls, noreturn), options (warnings) */
	struct ls_decoder *dec;      /* this thread's decoder */
	/* The caller gives the CFG to ls_cfg_keep, not ls_cfg_free, when it
	 * is done with it: kept then, not copied now (on demand). */
	bool hand_back;
};

/* Decode PROC's ranges and build its CFG.  Problems (undecodable bytes, a
 * jump table pointing into another function) are warnings through
 * env->m->opt, not failures; returns -1 only when nothing could be built. */
int ls_cfg_build(const struct ls_cfg_env *env, const struct ls_proc *proc, struct ls_cfg *cfg);
/* PROC's CFG from its own code, without the module's noreturn facts: every
 * call returns (the caller decides which do not).  For the stages that look
 * at one procedure at a time after the analysis, or without it (the unwind
 * recipes, unwind/recipes.c): PROC need not be one of m->procs, whose
 * table is empty when the structure came from the cache.  Quiet: the
 * analysis has warned about the same code. */
int ls_cfg_build_alone(const struct ls_cfg_env *env, const struct ls_proc *proc, struct ls_cfg *cfg);
/* The block containing ADDR, or -1. */
int32_t ls_cfg_block_of(const struct ls_cfg *cfg, uint64_t addr);
void ls_cfg_free(struct ls_cfg *cfg);
/* Done with CFG, built by ls_cfg_build with env->hand_back for PROC: kept
 * for a ls_cfg_build_alone of the same code that may follow, or freed. */
void ls_cfg_keep(const ls_module *m, const struct ls_proc *proc, struct ls_cfg *cfg);

/* Whether a call to TARGET never returns (known names, DW_AT_noreturn, or
 * proved by analysis: of every procedure at once, or with
 * m->facts_on_demand only of those TARGET's fact depends on). */
bool ls_cfg_call_noreturn(const ls_module *m, uint64_t target);

/* What the analysis proved of procedure PROC (an index of m->procs):
 * unknown yet, may return, never returns.  The cache keeps the facts
 * known (ls_cfg_fact) and gives them back to a later analysis on demand
 * (ls_cfg_set_fact, before any CFG is built). */
enum { LS_FACT_UNKNOWN, LS_FACT_RETURNS, LS_FACT_NEVER };
uint8_t ls_cfg_fact(const ls_module *m, size_t proc);
void ls_cfg_set_fact(const ls_module *m, size_t proc, uint8_t fact);

/* Whether code in section NAME that no procedure owns belongs to the
 * procedures that jump into it (decoded as part of each: a fragment). */
bool ls_cfg_fragment_section(const char *name);

/* Frees what cfg.c cached in M (m->cfg_module): call from ls_module_close. */
void ls_cfg_module_free(ls_module *m);

#endif
