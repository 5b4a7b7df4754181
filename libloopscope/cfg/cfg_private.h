/* cfg_private.h - what the four files of the CFG stage share (cfg.c,
 * eh_frame.c, jump_tables.c, noreturn.c): the per-module cache, built once
 * under its lock and read-only after, and the builder of one procedure's
 * CFG.  Not for the other stages: they see cfg.h. */
#ifndef LOOPSCOPE_CFG_PRIVATE_H
#define LOOPSCOPE_CFG_PRIVATE_H

#include "cfg/cfg.h"

#include <stdatomic.h>

struct data_sec {
	uint64_t addr, size;
	const uint8_t *data;
};

/* A dynamic relocation of the module (.rela.dyn): what the loader writes
 * at OFFSET.  A PIE's jump table of absolute addresses has one
 * R_X86_64_RELATIVE per entry, whose addend is the entry (the file's bytes
 * may be zero). */
struct dyn_reloc {
	uint64_t offset, addend;
	uint32_t type;
};

/* A call-site record of a C++ exception table: calls in [lo, hi) land at
 * LP when something they call throws. */
struct eh_site {
	uint64_t lo, hi, lp;
};

/* A thunk symbol's address and what a branch to it means. */
enum { THUNK_INDIRECT = 1, THUNK_RETURN = 2 };
struct thunk {
	uint64_t addr;
	uint8_t kind;
};

/* A site of the kernel's tables (kernel_edges.c): a jump label's nop or
 * jmp and its target, or a WARN's ud2. */
enum { KSITE_JUMP_LABEL = 1, KSITE_WARN = 2 };
struct kernel_site {
	uint64_t addr, target;
	uint8_t kind;
};

/* The procedures of m->procs by entry address, open-addressed: what
 * ls_procs_at_entry answers (the first procedure with that entry) in one
 * or two probes instead of a binary search over 10^5 entries, for the
 * look-ups of every call the CFG stage makes.  4 bytes a slot, two slots
 * a procedure. */
struct entry_table {
	unsigned shift;            /* 64 - log2(number of slots) */
	uint32_t proc1[];          /* per slot: index + 1 (0: empty), keyed by the entry */
};

/* What ls_jt_resolve made of a procedure's indirect jumps: per jump
 * (instruction AT[i]) its run of targets, START[i] and COUNT[i] in JT;
 * and the unresolved ones.  Kept for a second build of the same
 * instructions (NINSNS of them) when no answer of its walks depended on a
 * noreturn fact. */
struct jt_result {
	uint32_t *at, *start, *count, *jt;
	size_t njumps, njt, ninsns;
	uint32_t unresolved;
	uint64_t first_unresolved;
};

/* How many procedures' jump tables a module keeps (see jt_kept below). */
#define LS_CFG_JT_KEPT 1024

/* How many procedures' instructions a module keeps for ls_cfg_build_alone,
 * and the biggest kept (instructions): 16 x 16,384 x 96 bytes, 24 MiB at
 * most, ~0.5 MiB for the usual procedures of a few hundred. */
#define LS_CFG_KEPT 16
#define LS_CFG_KEPT_MAX 16384

struct ls_cfg_module {
	pthread_mutex_t lock;
	atomic_bool thunks_ready;
	struct thunk *thunks;  /* sorted by addr */
	size_t nthunks;
	bool sections_ready;
	struct data_sec *secs;
	size_t nsecs;
	struct eh_site *sites; /* sorted by lo */
	size_t nsites;
	struct kernel_site *ksites; /* sorted by addr */
	size_t nksites;
	/* For reading and bounding jump tables: the dynamic relocations
	 * (sorted by offset), and where data objects start and end (symbols;
	 * sorted, unique). */
	struct dyn_reloc *relocs;
	size_t nrelocs;
	bool relative_relocs;  /* PIE or DSO: a code pointer in data carries a RELATIVE relocation */
	uint64_t *data_bounds;
	size_t ndata_bounds;
	atomic_bool sections_done; /* ls_cfg_ready has loaded what is above */
	struct entry_table *entries; /* made under the lock once m->procs is there, then read-only */
	atomic_bool facts_ready;   /* every fact is known (compute_facts) */
	bool failed;           /* ran out of memory building the facts (under lock) */
	struct ls_guard_cause failed_cause; /* why: out of memory, or a truncated file */
	uint8_t *fact;         /* per proc: LS_FACT_*, each written once (atomic) under the lock */
	/* demand_solve's: each proc's slot in the current solve, valid when
	 * its generation is the solve's, and the decoder of the summaries. */
	uint32_t *dgen, *dslot;
	uint32_t gen;
	struct ls_decoder *dec;
	bool dec_made;
	/* Per proc: the instructions the summary pass decoded, kept so that the
	 * real CFG build does not decode them again (decoding is most of the
	 * cost).  Each slot is taken by the one thread that builds that proc's
	 * CFG.  Bounded by a memory budget: past it, procs decode twice. */
	struct decoded {
		struct ls_insn *insns;
		size_t n, cap;
		bool fragments;        /* insns include fragments outside the proc's ranges */
		size_t bad;            /* undecodable bytes, warned about by the real build */
		uint64_t first_bad;
	} *decoded;
	atomic_size_t decoded_bytes;
	/* On demand: the instructions of the last procedures ls_cfg_build
	 * decoded, for a ls_cfg_build_alone of the same code that follows (the
	 * unwind recipes of a procedure a lookup has just analyzed): a copy
	 * costs far less than a second decode.  Under the lock. */
	struct kept {
		uint64_t entry;
		ls_range *ranges;      /* the procedure's, sorted */
		size_t nranges;
		struct decoded d;
		/* The whole CFG, when it is the one ls_cfg_build_alone makes:
		 * no call in it was cut by a noreturn fact (whole.insns NULL
		 * otherwise; d then has the instructions). */
		struct ls_cfg whole;
	} kept[LS_CFG_KEPT];
	size_t kept_next;          /* the slot the next one replaces */
	/* The jump tables of the last procedures with indirect jumps that
	 * ls_cfg_build made, when they hold for ls_cfg_build_alone: a few
	 * bytes each, so kept far longer than the instructions (a report
	 * analyzes a batch of procedures before it unwinds through them): a
	 * build whose instructions are gone decodes again, which is cheap,
	 * but need not walk for its tables again, which is not.  Under the
	 * lock. */
	struct jt_kept {
		uint64_t entry;
		ls_range *ranges;      /* the procedure's, sorted */
		size_t nranges;
		struct jt_result jt;
	} jt_kept[LS_CFG_JT_KEPT];
	size_t jt_kept_next;
};

/* ls_jt_resolve' backward walk (jump_tables.c), per procedure with an
 * indirect jump: who may run just before each instruction, and the stack
 * heights (stack_slots.c) for the values kept in stack slots. */
struct flow {
	uint32_t *in_start;        /* per insn + 1: where its sources start in in_src */
	uint32_t *in_src;          /* instructions that branch to it: direct branches,
	                            * jump-table edges found so far, calls to their landing pad */
	size_t cap_src;
	uint32_t *tab_start;       /* per insn: where its jump-table sources start in in_src */
	uint32_t *run_of;          /* per insn: the id of that run of sources, UINT32_MAX: none
	                            * (fewer than 2); the same runs have the same id */
	uint32_t *run_stamp;       /* per run id: gone through by the current walk */
	uint32_t *stamp;           /* per insn: visited by the current walk */
	uint32_t gen;
	int64_t *stack;
	int64_t entry;             /* the entry instruction, or -1 */
	bool hit_unknown;          /* a walk met code with no known predecessor */
	size_t budget;             /* instructions all walks of the procedure may still visit */
	size_t query_budget;       /* ... and those of the present jump's question */
	bool query_exhausted;      /* the present jump's walks ran out of budget */
	unsigned incomplete;       /* answers cut short (a cycle, the depth, the budget) so far */
	struct jt_memo *memo;      /* the values of definitions, per round (jump_tables.c) */
	uint32_t *cstamp;          /* per insn: followed by the current closure over copies */
	uint32_t cgen;
	struct copy_question *q;   /* that closure's questions, and the definitions it found */
	size_t nq, cap_q;
	int64_t *roots;            /* that make values (insn * 16 + register), a stack */
	size_t nroots, cap_roots;
	uint64_t *refs;            /* data addresses the procedure's instructions name, sorted */
	size_t nrefs;
	int64_t *defs;             /* the walks' answers, a stack (walks nest through values) */
	size_t ndefs, cap_defs;
	uint8_t *active;           /* per insn: its value is being found (a cycle of copies) */
	uint8_t *falls;            /* per insn: ls_jt_falls_into's answer + 1, 0: not asked yet */
	/* Per insn: the stack pointer's and the frame pointer's height before
	 * it, relative to the stack pointer at the procedure's entry (see
	 * stack_slots.c), for the present in_src; computed on first use. */
	int32_t *sp, *bp;
	bool heights_ready;
};

struct copy_question;

/* What a backward walk looks for: instruction P either defines the value
 * sought (WALK_DEF), or lets it through. */
enum { WALK_THROUGH, WALK_DEF };
struct builder;
typedef int (*walk_fn)(const struct builder *b, int64_t p, const void *ctx);

struct builder {
	const ls_module *m;
	struct ls_decoder *dec;
	const struct ls_proc *proc;
	const struct ls_cfg_module *cache;
	bool all_calls_return;     /* summary mode: no noreturn facts yet */
	struct ls_cfg *cfg;
	size_t cap_insns;
	ls_range *ranges;          /* proc's ranges sorted by lo, and the fragments it jumps into */
	size_t nranges, cap_ranges;
	bool fragments;            /* decode_ranges added fragments */
	/* Per insn, from mark_leaders: a direct jump's target inside the
	 * procedure, or a call's landing pad (the instruction holding it), or
	 * -1.  Found once, for the leaders, the jump tables' walks and the
	 * edges. */
	int32_t *edge_to;
	/* Jump-table targets: per indirect jump, a run of insn indices. */
	uint32_t *jt_start;        /* per insn: first index into jt, or UINT32_MAX */
	uint32_t *jt_count;
	uint32_t *jt;
	size_t njt, cap_jt;
	bool warned_jt;
	struct flow *flow;         /* ls_jt_resolve' backward walk */
	bool quiet;                /* the summary build: the real build warns */
	uint64_t *inner;           /* other procedures' entries inside ranges, sorted: what a jump
	                            * that stays in them may tail-call (ls_cfg_entries_within) */
	size_t ninner;
	struct decoded *reuse;     /* instructions already decoded for this proc, or NULL */
	size_t calls_cut;          /* calls ls_cfg_call_returns said never return */
	bool jt_cut;               /* ... some of them while ls_jt_resolve walked */
	const struct jt_result *given_jt; /* the jump tables of these instructions, or NULL: resolve them */
	size_t bad;                /* undecodable bytes seen */
	uint64_t first_bad;
};

static inline bool in_ranges(const struct builder *b, uint64_t addr)
{
	for (size_t i = 0; i < b->nranges; i++)
		if (addr >= b->ranges[i].lo && addr < b->ranges[i].hi)
			return true;
	return false;
}

/* The index of the instruction of INSNS (N, in address order) containing
 * ADDR, or -1. */
static inline int64_t insns_find(const struct ls_insn *insns, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ls_insn *in = &insns[mid];
		if (addr < in->addr)
			hi = mid;
		else if (addr - in->addr >= in->len)
			lo = mid + 1;
		else
			return (int64_t)mid;
	}
	return -1;
}

/* The index of CFG's instruction containing ADDR, or -1. */
static inline int64_t insn_index(const struct ls_cfg *cfg, uint64_t addr)
{
	return insns_find(cfg->insns, cfg->ninsns, addr);
}

/* ls_procs_at_entry(&m->procs, ADDR), by m's entry table when it is there. */
const struct ls_proc *ls_cfg_at_entry(const ls_module *m, uint64_t addr);

/* The entries of m->procs in RANGES (N, sorted by lo), sorted, each
 * once, into *OUT (freed by the caller); how many.  NEAR: the procedure
 * the ranges are of, where to start looking (need not be m's). */
size_t ls_cfg_entries_within(const ls_module *m, const ls_range *ranges, size_t n, const struct ls_proc *near,
                             uint64_t **out);

/* Whether ADDR is one of V (N, sorted). */
static inline bool sorted_has(const uint64_t *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == addr;
}

/* Whether a branch to TARGET leaves the procedure (a tail call): outside
 * its ranges, or at another procedure's entry inside them (b->inner: what
 * ls_procs_at_entry would find there, without a search of the whole
 * table per branch). */
static inline bool is_tail_target(const struct builder *b, uint64_t target)
{
	if (!in_ranges(b, target))
		return true;
	if (target == b->proc->entry)
		return false; /* a jump to its own entry: a loop */
	return sorted_has(b->inner, b->ninner, target);
}

/* cfg.c */
struct ls_cfg_module *ls_cfg_module_cache(const ls_module *cm);
/* Makes c->entries when m->procs is there.  Caller holds the lock. */
void ls_cfg_make_entries(const ls_module *m, struct ls_cfg_module *c);
/* Allocated sections, exception tables, jump-table limits.  Caller holds the lock. */
void ls_cfg_load_sections(const ls_module *m, struct ls_cfg_module *c);
/* The one linear sweep every decode of the stage makes (the CFG builder's,
 * the noreturn proofs'), so that they see the same instructions: [ADDR,
 * HI) onto D, at most up to LIMIT instructions in all; undecodable bytes
 * skipped one at a time (counted in D), gaps between code sections
 * skipped; C's thunks and kernel sites applied (C may be NULL), hlt in
 * the kernel going on.  HOW: SWEEP_FRAGMENT stops at a gap or at the first
 * instruction that does not fall through (included), SWEEP_AFTER_RET after
 * a ret.  SWEEP_FLOW decodes with ls_decode_flow (no operands: for what
 * reads only lengths, kinds and targets).  Returns where it stopped. */
enum { SWEEP_FRAGMENT = 1, SWEEP_AFTER_RET = 2, SWEEP_FLOW = 4 };
/* How many instructions to make room for before a sweep of BYTES of code
 * (at most LS_INSNS_ROOM_MAX): a few more than it usually holds (x86-64
 * code averages ~4 bytes an instruction), so that the array is seldom
 * grown -- growing it by doubling from 8 copied every instruction twice
 * on average, 2.5% of a cold system-wide report. */
#define LS_INSNS_ROOM_MAX 65536
uint64_t ls_cfg_insns_room(uint64_t bytes);
uint64_t ls_cfg_sweep(const ls_module *m, const struct ls_cfg_module *c, struct ls_decoder *dec, struct decoded *d,
                      uint64_t addr, uint64_t hi, size_t limit, unsigned how);
/* Decodes B's procedure and builds its CFG (into b->cfg); -1 if nothing could be built. */
int ls_cfg_run_builder(struct builder *b);
void ls_cfg_builder_done(struct builder *b);
/* Whether a call to TARGET returns (in the summary build: every call). */
bool ls_cfg_call_returns(const struct builder *b, uint64_t target);

/* eh_frame.c */
/* Reads .eh_frame (EH) and the LSDAs its FDEs point to into c->sites. */
void ls_eh_parse_frame(struct ls_cfg_module *c, const struct data_sec *eh);
/* The landing pad of a call at ADDR, or 0. */
uint64_t ls_eh_landing_pad(const struct ls_cfg_module *c, uint64_t addr);

/* jump_tables.c */
/* Whether instruction K runs straight into K + 1. */
bool ls_jt_falls_into(const struct builder *b, int64_t k);
/* The dynamic relocations and data symbols that bound jump tables.  Caller holds the lock. */
void ls_jt_load_limits(const ls_module *m, struct ls_cfg_module *c);
/* Finds the targets of B's indirect jumps (b->jt), marking them leaders. */
void ls_jt_resolve(struct builder *b, uint8_t *leader);

/* kernel_edges.c */
/* The jump labels and WARN sites of a kernel image or module.  Caller holds the lock. */
void ls_kernel_sites_load(const ls_module *m, struct ls_cfg_module *c);
/* A jump label's site becomes a branch to its target or the next
 * instruction, a WARN's ud2 falls through. */
void ls_kernel_site_apply(const struct ls_cfg_module *c, struct ls_insn *in);
/* Whether procedure NAME of M is the kernel's 32-bit code (not decoded). */
bool ls_kernel_code32(const ls_module *m, const char *name);

/* stack_slots.c: values the jump-table walk follows through the stack. */
#define LS_REG_SP 4
#define LS_REG_BP 5
#define LS_HEIGHT_UNSET INT32_MIN          /* not reached (yet) */
#define LS_HEIGHT_UNKNOWN (INT32_MIN + 1)  /* reached with different or untracked heights */
/* A stack slot: bytes [OFF, OFF + SIZE) below the stack pointer's value at
 * the procedure's entry (the return address is at 0). */
struct ls_slot {
	int32_t off;
	uint8_t size;
};
enum { LS_SLOT_OK, LS_SLOT_UNREACHED, LS_SLOT_ARGUMENT, LS_SLOT_UNKNOWN };
/* The slot that MEM (SP- or BP-relative, SIZE bytes) names at instruction
 * AT, and whether it can be followed (LS_SLOT_*). */
int ls_slot_of(struct builder *b, int64_t at, const struct ls_operand *mem, int size, struct ls_slot *slot);
/* A walk_fn (CTX a struct ls_slot): WALK_DEF when P writes the slot. */
int ls_slot_store(const struct builder *b, int64_t p, const void *ctx);
/* The general register whose whole value store P puts in the slot, or -1. */
int ls_slot_stored_reg(const struct builder *b, int64_t p, const struct ls_slot *slot);
/* The stack pointer's height before instruction AT (LS_HEIGHT_* if none). */
int32_t ls_sp_height(struct builder *b, int64_t at);

/* noreturn.c */
int32_t ls_cfg_proc_index(const ls_module *m, const struct ls_proc *p);
/* C with the sections loaded and, if WANT_FACTS, the noreturn facts. */
const struct ls_cfg_module *ls_cfg_ready(const ls_module *m, bool want_facts);

#endif
