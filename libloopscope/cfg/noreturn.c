/* noreturn.c - which procedures never return, for the CFG stage (cfg.c).
 *
 * "Never returns" is DW_AT_noreturn / a known name (procs.c), or proved
 * here: a procedure gets a summary CFG (all calls assumed to return) and a
 * least fixpoint over the call graph marks the procedures from whose entry
 * a return is reachable (through calls to returning procedures only).  The
 * others never return.
 *
 * A whole analysis computes every procedure's fact at once, on the first
 * CFG (compute_facts, on N threads).  An analysis on demand
 * (m->facts_on_demand) asks for one callee's fact at a time and computes
 * only what that fact depends on (demand_solve): the least fixpoint over a
 * set of procedures that holds every callee reachable on the way to a
 * return is, on that set, the whole fixpoint's, so both give the same
 * facts.  Facts the cache kept are given back (ls_cfg_set_fact).  The
 * facts live in m->cfg_module, each written once under its lock, final
 * when written, so the result does not depend on thread timing.
 */
#include "cfg/cfg_private.h"
#include "cfg/decode_x86_fast.h"

#include <stdlib.h>
#include <string.h>

/* Summary of one procedure for the noreturn fixpoint. */
enum {
	SUM_EXIT = 1,      /* returns (ret, unresolved indirect jump, falls off its end) */
	SUM_DEP_EXIT = 2,  /* tail call: returns if dep returns */
	SUM_DEP_GATE = 4,  /* call: successors (and SUM_EXIT) only if dep returns */
};
struct summary {
	uint32_t nblocks;
	uint32_t *succ_start;  /* nblocks + 1 */
	uint32_t *succ;        /* per block: exception successors first */
	uint32_t *nexc;        /* per block: how many (never gated) */
	int32_t *dep;          /* proc index or -1 */
	uint8_t *flags;
};

/* What the kept instructions may cost at most (vmlinux: ~5M instructions). */
#define LS_DECODED_BUDGET ((size_t)256 << 20)

/* ---- noreturn facts ------------------------------------------------------------ */

int32_t ls_cfg_proc_index(const ls_module *m, const struct ls_proc *p)
{
	return p ? (int32_t)(p - m->procs.procs) : -1;
}

/* A call to an undefined symbol of a relocatable object (relocate.c) that
 * never returns, by its name. */
static bool extern_noreturn(const ls_module *m, uint64_t target)
{
	const char *name = m->next ? ls_extern_name(m, target) : NULL;
	return name && ls_noreturn_name(m, name);
}

/* Whether block BLK loads SP from memory or from a register other than
 * the frame pointer (mov X,%rsp): a switch to another stack, as longjmp
 * and context switches do - not an epilogue (mov %rbp,%rsp; leave). */
static bool loads_other_stack(const struct ls_cfg *cfg, const struct ls_block *blk)
{
	for (uint32_t k = 0; k < blk->ninsns; k++) {
		const struct ls_insn *in = &cfg->insns[blk->first_insn + k];
		if (in->opcode != LS_MN_MOV || in->nops != 2 || in->op[1].kind != LS_OP_REG || in->op[1].reg != 4 ||
		    in->op[1].size != 8)
			continue;
		if (in->op[0].kind == LS_OP_MEM || (in->op[0].kind == LS_OP_REG && in->op[0].reg != 5 && in->op[0].reg != 4))
			return true;
	}
	return false;
}

/* Summarize PROC's CFG (built with every call returning). */
static void summarize(const ls_module *m, const struct ls_proc *proc, const struct ls_cfg *cfg,
                      struct summary *s)
{
	s->nblocks = (uint32_t)cfg->nblocks;
	s->succ_start = ls_xmalloc((cfg->nblocks + 1) * sizeof *s->succ_start);
	s->succ = ls_xmalloc((cfg->nedges + 1) * sizeof *s->succ);
	s->dep = ls_xmalloc((cfg->nblocks + 1) * sizeof *s->dep);
	s->nexc = ls_xmalloc((cfg->nblocks + 1) * sizeof *s->nexc);
	s->flags = ls_xcalloc(cfg->nblocks + 1, 1);
	uint32_t k = 0;
	for (size_t bi = 0; bi < cfg->nblocks; bi++) {
		const struct ls_block *blk = &cfg->blocks[bi];
		s->succ_start[bi] = k;
		s->nexc[bi] = 0;
		for (int pass = 0; pass < 2; pass++)
			for (uint32_t e = 0; e < blk->nsucc; e++) {
				const struct ls_cfg_edge *ed = &cfg->edges[cfg->succ[blk->first_succ + e]];
				if ((ed->kind == LS_EDGE_EXCEPTION) != (pass == 0))
					continue;
				s->succ[k++] = ed->to;
				s->nexc[bi] += pass == 0;
			}
		s->dep[bi] = -1;
		size_t last = blk->first_insn + blk->ninsns - 1;
		const struct ls_insn *in = &cfg->insns[last];
		bool falls_off = last + 1 >= cfg->ninsns || cfg->insns[last + 1].addr != in->addr + in->len;
		switch (in->kind) {
		case LS_INSN_RET:
			s->flags[bi] |= SUM_EXIT;
			break;
		case LS_INSN_IJUMP:
			/* unknown: assume it may return - unless the block put a
			 * stack of its own in SP first (glibc's __longjmp: mov
			 * %r8,%rsp; jmp *%rdx), which no return does */
			if (blk->nsucc == 0 && !loads_other_stack(cfg, blk))
				s->flags[bi] |= SUM_EXIT;
			break;
		case LS_INSN_JUMP:
		case LS_INSN_CJUMP: {
			bool internal = false;
			for (uint32_t e = 0; e < blk->nsucc; e++) {
				const struct ls_cfg_edge *ed = &cfg->edges[cfg->succ[blk->first_succ + e]];
				if (ed->kind == LS_EDGE_JUMP || ed->kind == LS_EDGE_TAKEN)
					internal = true;
			}
			if (!internal) {
				/* A tail call: returns if its target does. */
				const struct ls_proc *t = ls_cfg_at_entry(m, in->target);
				if (!t)
					t = ls_procs_find(&m->procs, in->target);
				if (!t && extern_noreturn(m, in->target))
					;
				else if (!t || t == proc)
					s->flags[bi] |= SUM_EXIT; /* outside every procedure, or unknown: may return */
				else if (t->noreturn)
					;
				else if (t->is_plt)
					s->flags[bi] |= SUM_EXIT;
				else {
					s->flags[bi] |= SUM_DEP_EXIT;
					s->dep[bi] = ls_cfg_proc_index(m, t);
				}
			}
			if (in->kind == LS_INSN_CJUMP && falls_off)
				s->flags[bi] |= SUM_EXIT;
			break;
		}
		case LS_INSN_CALL: {
			const struct ls_proc *t = ls_cfg_at_entry(m, in->target);
			if ((t && t->noreturn) || (!t && extern_noreturn(m, in->target))) {
				s->flags[bi] |= SUM_DEP_GATE; /* never passes */
				s->dep[bi] = -2;
			} else if (t && !t->is_plt && t != proc) {
				s->flags[bi] |= SUM_DEP_GATE;
				s->dep[bi] = ls_cfg_proc_index(m, t);
			}
			if (falls_off)
				s->flags[bi] |= SUM_EXIT;
			break;
		}
		case LS_INSN_OTHER:
		case LS_INSN_ICALL:
			if (falls_off)
				s->flags[bi] |= SUM_EXIT;
			break;
		default:
			break;
		}
	}
	s->succ_start[cfg->nblocks] = k;
}

/* Whether dependency DEP returns, as a search sees it (a closed gate). */
typedef bool (*dep_returns_fn)(const void *ctx, int32_t dep);

static bool dep_in_array(const void *ctx, int32_t dep)
{
	return ((const uint8_t *)ctx)[dep] != 0;
}

/* Whether a return is reachable from the entry of the summarized proc,
 * through the calls whose procedure RETURNS says returns.  When none is,
 * BLOCKED (if not NULL) is called on every call on the way that is closed
 * for want of its procedure's fact (the demand solver's frontier). */
static bool summary_search(const struct summary *s, dep_returns_fn returns, const void *ctx, uint8_t *seen,
                           uint32_t *stack, void (*blocked)(void *bctx, int32_t dep), void *bctx)
{
	if (s->nblocks == 0)
		return true;
	memset(seen, 0, s->nblocks);
	size_t sp = 0;
	stack[sp++] = 0;
	seen[0] = 1;
	bool ret = false;
	while (sp && !ret) {
		uint32_t b = stack[--sp];
		uint8_t f = s->flags[b];
		int32_t dep = s->dep[b];
		uint32_t kend = s->succ_start[b + 1];
		if ((f & SUM_DEP_GATE) && (dep < 0 || !returns(ctx, dep))) {
			kend = s->succ_start[b] + s->nexc[b]; /* only what it throws */
			if (blocked && dep >= 0)
				blocked(bctx, dep);
		} else {
			if (f & SUM_EXIT)
				ret = true;
			if ((f & SUM_DEP_EXIT) && dep >= 0) {
				if (returns(ctx, dep))
					ret = true;
				else if (blocked)
					blocked(bctx, dep);
			}
		}
		for (uint32_t k = s->succ_start[b]; k < kend; k++)
			if (!seen[s->succ[k]]) {
				seen[s->succ[k]] = 1;
				stack[sp++] = s->succ[k];
			}
	}
	return ret;
}

static bool summary_returns(const struct summary *s, const uint8_t *returns, uint8_t *seen, uint32_t *stack)
{
	return summary_search(s, dep_in_array, returns, seen, stack, NULL, NULL);
}

/* The least fixpoint of "may return" over the call graph (compute_facts).
 * Caller holds the lock.  The summaries are built on as many threads as the analysis uses: each
 * with its own decoder, writing only its own procedures' slots. */
struct summary_job {
	const ls_module *m;
	struct ls_cfg_module *c;
	struct summary *sums;
	uint8_t *fixed;
	uint8_t *returns;      /* per proc: 1 may return */
	atomic_size_t next;
};

static void *summary_worker(void *arg)
{
	struct summary_job *job = arg;
	const ls_module *m = job->m;
	struct ls_decoder *dec = ls_decoder_new(m->ehdr.e_machine);
	for (;;) {
		size_t i = atomic_fetch_add(&job->next, 1);
		if (i >= m->procs.nprocs)
			break;
		const struct ls_proc *p = &m->procs.procs[i];
		if (p->noreturn) {
			job->fixed[i] = 1;
			continue;
		}
		if (p->is_plt || !dec) {
			job->returns[i] = 1;
			job->fixed[i] = 1;
			continue;
		}
		struct ls_cfg cfg = { 0 }; /* ls_cfg_run_builder fills it (cppcheck cannot see that) */
		struct builder b = { .m = m, .dec = dec, .proc = p, .cache = job->c, .all_calls_return = true,
		                     .cfg = &cfg, .quiet = true, .warned_jt = true };
		if (ls_cfg_run_builder(&b) == 0) {
			summarize(m, p, &cfg, &job->sums[i]);
			size_t bytes = cfg.ninsns * sizeof *cfg.insns;
			if (atomic_fetch_add(&job->c->decoded_bytes, bytes) + bytes <= LS_DECODED_BUDGET) {
				job->c->decoded[i] = (struct decoded){ cfg.insns, cfg.ninsns, b.cap_insns, b.fragments,
				                                       b.bad, b.first_bad };
				cfg.insns = NULL;
			}
		} else {
			job->returns[i] = 1;
			job->fixed[i] = 1;
		}
		ls_cfg_builder_done(&b);
		ls_cfg_free(&cfg);
	}
	if (dec)
		ls_decoder_free(dec);
	return NULL;
}

static void *summary_worker_shared(void *arg)
{
	return summary_worker(*(struct summary_job **)arg);
}

static void compute_facts(const ls_module *m, struct ls_cfg_module *c)
{
	size_t np = m->procs.nprocs;
	uint8_t *returns = ls_xcalloc(np + 1, 1);
	c->decoded = ls_xcalloc(np + 1, sizeof *c->decoded);
	atomic_init(&c->decoded_bytes, 0);
	struct summary *sums = ls_xcalloc(np + 1, sizeof *sums);
	uint8_t *fixed = ls_xcalloc(np + 1, 1);

	struct summary_job job = { .m = m, .c = c, .sums = sums, .fixed = fixed, .returns = returns };
	atomic_init(&job.next, 0);
	/* Small modules: not worth a thread (at least 64 procedures each). */
	int nthreads = ls_worker_count(&m->opt, np, 64);
	struct summary_job *jobs[LS_MAX_WORKERS];
	for (int t = 0; t < nthreads; t++)
		jobs[t] = &job; /* every worker shares the one job */
	ls_run_workers(nthreads, summary_worker_shared, jobs, sizeof *jobs);
	size_t maxblocks = 1;
	for (size_t i = 0; i < np; i++)
		if (sums[i].nblocks > maxblocks)
			maxblocks = sums[i].nblocks;

	/* Reverse dependencies, for the worklist. */
	uint32_t *rcount = ls_xcalloc(np + 1, sizeof *rcount);
	for (size_t i = 0; i < np; i++)
		for (uint32_t bl = 0; bl < sums[i].nblocks; bl++)
			if (sums[i].dep[bl] >= 0)
				rcount[sums[i].dep[bl]]++;
	uint32_t *rstart = ls_xmalloc((np + 1) * sizeof *rstart);
	uint32_t acc = 0;
	for (size_t i = 0; i < np; i++) {
		rstart[i] = acc;
		acc += rcount[i];
		rcount[i] = 0;
	}
	rstart[np] = acc;
	uint32_t *rdeps = ls_xmalloc((acc + 1) * sizeof *rdeps);
	for (size_t i = 0; i < np; i++)
		for (uint32_t bl = 0; bl < sums[i].nblocks; bl++) {
			int32_t d = sums[i].dep[bl];
			if (d >= 0)
				rdeps[rstart[d] + rcount[d]++] = (uint32_t)i;
		}

	uint8_t *seen = ls_xmalloc(maxblocks + 1);
	uint32_t *stack = ls_xmalloc((maxblocks + 1) * sizeof *stack);
	uint32_t *work = ls_xmalloc((np + 1) * sizeof *work);
	uint8_t *queued = ls_xcalloc(np + 1, 1);
	size_t nw = 0;
	for (size_t i = np; i-- > 0;)
		if (!fixed[i]) {
			work[nw++] = (uint32_t)i;
			queued[i] = 1;
		}
	while (nw) {
		uint32_t i = work[--nw];
		queued[i] = 0;
		if (returns[i] || !summary_returns(&sums[i], returns, seen, stack))
			continue;
		returns[i] = 1;
		for (uint32_t k = rstart[i]; k < rstart[i + 1]; k++) {
			uint32_t r = rdeps[k];
			if (!fixed[r] && !returns[r] && !queued[r]) {
				queued[r] = 1;
				work[nw++] = r;
			}
		}
	}

	for (size_t i = 0; i < np; i++)
		__atomic_store_n(&c->fact[i], returns[i] ? LS_FACT_RETURNS : LS_FACT_NEVER, __ATOMIC_RELEASE);
	for (size_t i = 0; i < np; i++) {
		free(sums[i].succ_start);
		free(sums[i].succ);
		free(sums[i].dep);
		free(sums[i].nexc);
		free(sums[i].flags);
	}
	free(sums);
	free(fixed);
	free(returns);
	free(rcount);
	free(rstart);
	free(rdeps);
	free(seen);
	free(stack);
	free(work);
	free(queued);
}

/* ---- facts on demand --------------------------------------------------------
 *
 * demand_solve(T): the procedures T's fact depends on are found as the
 * search goes.  Each procedure of the set S gets its summary and is
 * searched for a return, the calls to procedures known to return open
 * (facts already final, or members of S found to return so far), the
 * others closed; a search that finds no return adds the procedures of the
 * calls it found closed for want of a fact to S (its frontier), and a
 * member found to return reopens the members that call it (their reverse
 * dependencies).  When nothing is left to search, no member that does not
 * return reaches a call whose procedure is outside S and unknown: S holds
 * every fact its members depend on, and its least fixpoint is the whole
 * one's on S.  Every member's fact is then final. */

struct dslot {
	int32_t proc;
	bool member;           /* in S: summarized and searched */
	bool fixed;            /* its fact needs no search (noreturn, PLT, no CFG) */
	bool returns;
	bool queued;
	struct quick *quick;   /* a quick proof waiting for its callees' facts, or NULL */
	struct summary sum;
	uint32_t *rdeps;       /* slots of the members that call it */
	size_t nrdeps, cap_rdeps;
};

struct dsolve {
	const ls_module *m;
	struct ls_cfg_module *c;
	struct dslot *slots;
	size_t nslots, cap_slots;
	uint32_t *work;
	size_t nwork, cap_work;
	uint8_t *seen;
	uint32_t *stack;
	size_t cap_search;
	uint32_t *frontier;    /* the last search's closed calls */
	size_t nfrontier, cap_frontier;
	int32_t *adds;         /* procedures to add to S (dadd), the waiting proofs' callees */
	size_t nadds, cap_adds;
	uint32_t *waiting;     /* members whose quick proof waits (the last to wait on top) */
	size_t nwaiting, cap_waiting;
	bool quick_module;     /* quick proofs may apply (quick_applies_module, once a solve) */
};

/* The slot of procedure P in this solve, made on first use (c->dslot
 * holds it, valid when c->dgen[P] is this solve's generation). */
static uint32_t dslot_of(struct dsolve *d, int32_t p)
{
	struct ls_cfg_module *c = d->c;
	if (c->dgen[p] == c->gen)
		return c->dslot[p];
	d->slots = ls_grow(d->slots, &d->cap_slots, d->nslots + 1, sizeof *d->slots);
	memset(&d->slots[d->nslots], 0, sizeof *d->slots);
	d->slots[d->nslots].proc = p;
	c->dgen[p] = c->gen;
	c->dslot[p] = (uint32_t)d->nslots;
	return (uint32_t)d->nslots++;
}

/* The facts' array, sized by the procedure table: made (under C's lock)
 * only once the table is there -- a module whose procedures came from the
 * cache so far has none, and the unwind recipes load the sections before
 * (ls_cfg_build_alone) -- and published with a release store, as the facts
 * are read without the lock. */
static uint8_t *facts(const struct ls_cfg_module *c)
{
	return __atomic_load_n(&c->fact, __ATOMIC_ACQUIRE);
}

static void make_facts(const ls_module *m, struct ls_cfg_module *c)
{
	if (!c->fact && m->procs.nprocs)
		__atomic_store_n(&c->fact, ls_xcalloc(m->procs.nprocs + 1, 1), __ATOMIC_RELEASE);
}

static uint8_t fact_of(const struct ls_cfg_module *c, int32_t p)
{
	uint8_t *f = facts(c);
	return f ? __atomic_load_n(&f[p], __ATOMIC_ACQUIRE) : LS_FACT_UNKNOWN;
}

/* Whether P returns as far as this solve knows. */
static bool dreturns(const void *ctx, int32_t p)
{
	const struct dsolve *d = ctx;
	uint8_t f = fact_of(d->c, p);
	if (f)
		return f == LS_FACT_RETURNS;
	if (d->c->dgen[p] != d->c->gen)
		return false;
	const struct dslot *s = &d->slots[d->c->dslot[p]];
	return s->member && s->returns;
}

static void dfrontier(void *ctx, int32_t p)
{
	struct dsolve *d = ctx;
	if (fact_of(d->c, p))
		return;
	d->frontier = ls_grow(d->frontier, &d->cap_frontier, d->nfrontier + 1, sizeof *d->frontier);
	d->frontier[d->nfrontier++] = (uint32_t)p;
}

static void dpush(struct dsolve *d, uint32_t k)
{
	if (d->slots[k].queued)
		return;
	d->slots[k].queued = true;
	d->work = ls_grow(d->work, &d->cap_work, d->nwork + 1, sizeof *d->work);
	d->work[d->nwork++] = k;
}

/* ---- a quick proof that a procedure returns ---------------------------------
 *
 * Most callees return, and the summary of one costs a decode of all its
 * code.  quick_returns decodes the procedure with the CFG builder's
 * sweep (ls_cfg_sweep, so the same instructions, in order) but a prefix at
 * a time, and looks in what it has for a path from the entry to a return
 * along edges the summary CFG has too: fall-through, the direct jumps
 * inside the procedure, calls whose procedure is known to return (final
 * facts, or members of the solve proved to return), PLT calls and calls
 * the summary does not gate; an exit is a ret, or a tail call or fall-off
 * the summary counts as one.  Such a path proves the procedure returns in
 * the least fixpoint, so the fact is the same.  A proof that finds no path
 * but was stopped by calls to procedures with no fact yet waits for them
 * (dwait) and goes on where it stopped when one of them returns.  The
 * search reads only each instruction's address, length, kind and target,
 * so the sweep decodes flow only (SWEEP_FLOW: no operands, 40% of
 * ls_decode's work); without a path, the CFG builder decodes the procedure
 * again, operands and all (it reads them for jump tables).  Only where the
 * builder's decode is that plain sweep: one range starting at the entry,
 * no thunks, kernel sites or fragment sections. */

struct quick {
	const ls_module *m;
	const struct dsolve *ds;   /* the solve: which facts are known */
	const struct ls_proc *p;
	uint64_t lo, hi, done;     /* the range, and how far the sweep got */
	const struct ls_text *text; /* the section holding the whole range, or NULL */
	struct decoded d;          /* the instructions so far (flow only: never the builder's) */
	uint64_t *inner;           /* other procedures' entries in [lo, hi), sorted */
	size_t ninner;
	/* The search so far (quick_search goes on from it as the prefix
	 * grows): instructions reached, those still to visit, and those whose
	 * visit counted on code not decoded yet (the last one's fall-through,
	 * a jump beyond), to visit again. */
	uint8_t *seen;
	size_t nseen, cap_seen;
	uint32_t *stack, *pending;
	size_t sp, npending, cap_stack, cap_pending;
	bool started;
	size_t checkpoint;         /* the next search when the sweep gets this far */
	/* The visits that found a call (or tail call) to a procedure whose
	 * fact is not known yet, to make again once it is. */
	struct quick_blocked {
		uint32_t insn;
		int32_t proc;
	} *blocked;
	size_t nblocked, cap_blocked;
};

/* Whether the builder's decode is a plain sweep in module M (see above). */
static bool quick_applies_module(const ls_module *m, const struct ls_cfg_module *c)
{
	if (m->kernel || c->nthunks || c->nksites)
		return false;
	for (size_t i = 0; i < m->ntext; i++)
		if (ls_cfg_fragment_section(m->text[i].name))
			return false;
	return true;
}

/* ... and for P, in a module where it is (d->quick_module). */
static bool quick_applies(const struct ls_proc *p)
{
	return p->nranges == 1 && p->entry == p->ranges[0].lo && p->ranges[0].hi - p->ranges[0].lo <= ((uint64_t)64 << 20);
}

/* The index of the decoded instruction holding ADDR: -1 for none (a gap
 * the sweep skipped), -2 when the sweep has not got there yet. */
static int64_t quick_index(const struct quick *q, uint64_t addr)
{
	if (addr >= q->done)
		return -2;
	return insns_find(q->d.insns, q->d.n, addr);
}

/* Whether procedure T returns, as far as the solve knows now (final facts,
 * and the members of S found to return: proved too).  When that is not
 * known yet, the visit of instruction I that asks is noted, to make again. */
static bool quick_proc_returns(struct quick *q, const struct ls_proc *t, uint32_t i)
{
	int32_t ti = ls_cfg_proc_index(q->m, t);
	if (dreturns(q->ds, ti))
		return true;
	if (!fact_of(q->ds->c, ti)) {
		q->blocked = ls_grow(q->blocked, &q->cap_blocked, q->nblocked + 1, sizeof *q->blocked);
		q->blocked[q->nblocked++] = (struct quick_blocked){ i, ti };
	}
	return false;
}

/* Whether a tail call to TARGET (by instruction I) is an exit as
 * summarize() counts it, with the facts known now. */
static bool quick_tail_exits(struct quick *q, uint64_t target, uint32_t i)
{
	const struct ls_proc *t = ls_cfg_at_entry(q->m, target);
	if (!t)
		t = ls_procs_find(&q->m->procs, target);
	if (!t)
		return !extern_noreturn(q->m, target);
	if (t == q->p)
		return true;
	if (t->noreturn)
		return false;
	return t->is_plt || quick_proc_returns(q, t, i);
}

/* Whether the summary lets a call to TARGET (instruction I) through, with
 * the facts known now. */
static bool quick_call_passes(struct quick *q, uint64_t target, uint32_t i)
{
	const struct ls_proc *t = ls_cfg_at_entry(q->m, target);
	if (!t)
		return !extern_noreturn(q->m, target);
	if (t->noreturn)
		return false;
	return t->is_plt || t == q->p || quick_proc_returns(q, t, i);
}

/* A direct jump's edge (instruction I's): -1 none (a tail call, or
 * *LATER: its target is not decoded yet), else the instruction it goes
 * to; *EXIT when it is a tail call that counts as an exit. */
static int64_t quick_jump(struct quick *q, uint32_t i, uint64_t target, bool *exit, bool *later)
{
	bool tail = target < q->lo || target >= q->hi;
	if (!tail && target != q->p->entry)
		tail = sorted_has(q->inner, q->ninner, target); /* another procedure's entry */
	int64_t k = tail ? -1 : quick_index(q, target);
	if (k == -2) {
		*later = true; /* not decoded yet: maybe next time */
		return -1;
	}
	if (k == -1)
		*exit = quick_tail_exits(q, target, i);
	return k;
}

static inline void quick_push(struct quick *q, uint32_t i)
{
	if (q->sp + 1 > q->cap_stack || !q->stack) /* (ls_grow's own test, without a call per push) */
		q->stack = ls_grow(q->stack, &q->cap_stack, q->sp + 1, sizeof *q->stack);
	q->stack[q->sp++] = i;
}

/* Whether the decoded prefix shows a path from the entry to an exit.  The
 * search goes on from where the last one stopped: what more code gives
 * is more edges and exits, never fewer, so that what was reached stays
 * reached, and only the visits that counted on code not decoded yet are
 * made again. */
static bool quick_search(struct quick *q, bool finished)
{
	size_t n = q->d.n;
	if (n > q->nseen) {
		q->seen = ls_grow(q->seen, &q->cap_seen, n, 1);
		memset(q->seen + q->nseen, 0, n - q->nseen);
		q->nseen = n;
	}
	if (!q->started) {
		q->started = true;
		q->seen[0] = 1;
		quick_push(q, 0);
	}
	for (size_t k = 0; k < q->npending; k++)
		quick_push(q, q->pending[k]);
	q->npending = 0;
	while (q->sp) {
		uint32_t i = q->stack[--q->sp];
		const struct ls_insn *in = &q->d.insns[i];
		bool has_next = i + 1 < n, exit = false, later = !has_next && !finished;
		bool contiguous = has_next && q->d.insns[i + 1].addr == in->addr + in->len;
		bool falls_off = has_next ? !contiguous : finished;
		int64_t to = -1;
		bool through = false;
		switch (in->kind) {
		case LS_INSN_RET:
			return true;
		case LS_INSN_OTHER:
		case LS_INSN_ICALL:
			through = true;
			exit = falls_off;
			break;
		case LS_INSN_CALL:
			through = quick_call_passes(q, in->target, i);
			exit = through && falls_off;
			break;
		case LS_INSN_CJUMP:
			to = quick_jump(q, i, in->target, &exit, &later);
			through = true;
			exit = exit || falls_off;
			break;
		case LS_INSN_JUMP:
			to = quick_jump(q, i, in->target, &exit, &later);
			break;
		default:
			break; /* indirect jumps: their tables are not read here */
		}
		if (exit)
			return true;
		if (later) {
			q->pending = ls_grow(q->pending, &q->cap_pending, q->npending + 1, sizeof *q->pending);
			q->pending[q->npending++] = i;
		}
		if (through && contiguous && !q->seen[i + 1]) {
			q->seen[i + 1] = 1;
			quick_push(q, i + 1);
		}
		if (to >= 0 && !q->seen[to]) {
			q->seen[to] = 1;
			quick_push(q, (uint32_t)to);
		}
	}
	return false;
}

/* The builder's sweep, ls_cfg_sweep(..., SWEEP_AFTER_RET | SWEEP_FLOW),
 * of Q's range from where it stopped, up to LIMIT instructions.  Where
 * the range lies in one section this loop is that sweep, without its work
 * per instruction beyond the decode (the section look-up, thunks, kernel
 * sites, ls_decode_flow's call): none applies where quick_applies holds,
 * and that work was a third of the sweep's (issue 23). */
static void quick_sweep(struct quick *q, struct ls_decoder *dec, size_t limit)
{
	const struct ls_text *t = q->text;
	if (!t) {
		q->done = ls_cfg_sweep(q->m, q->ds->c, dec, &q->d, q->done, q->hi, limit, SWEEP_AFTER_RET | SWEEP_FLOW);
		return;
	}
	struct decoded *d = &q->d;
	uint64_t addr = q->done;
	while (addr < q->hi && d->n < limit) {
		if (d->n + 1 > d->cap || !d->insns)
			d->insns = ls_grow(d->insns, &d->cap, d->n + 1, sizeof *d->insns);
		struct ls_insn *in = &d->insns[d->n];
		const uint8_t *bytes = t->data + (addr - t->addr);
		/* ls_decode_flow's two steps */
		size_t n = ls_x86_flow_decode(bytes, q->hi - addr, addr, in);
		if (n == 0)
			n = ls_decode(dec, bytes, q->hi - addr, addr, in);
		if (n == 0) {
			addr++; /* (the proof needs no count of the bad bytes) */
			continue;
		}
		d->n++;
		addr += n;
		if (in->kind == LS_INSN_RET)
			break;
	}
	q->done = addr;
}

/* Whether P returns, by a path in a prefix of its code (decoded into
 * Q->d, flow only: see above), going on from where Q, P's proof (made by
 * quick_start), stopped; SEARCH_NOW: with a search first. */
static bool quick_returns(struct quick *q, struct ls_decoder *dec, bool search_now)
{
	/* searched at each ret (a path to it may be there already), and at
	 * 32, 64, 128... instructions (jumps forward needed their targets) */
	for (;;) {
		bool finished = q->done >= q->hi;
		size_t n = q->d.n;
		if (n && (search_now || finished || n >= q->checkpoint || q->d.insns[n - 1].kind == LS_INSN_RET)) {
			search_now = false;
			if (quick_search(q, finished))
				return true;
			if (n >= q->checkpoint)
				q->checkpoint *= 2;
			/* No visit waits for code not decoded yet: what is
			 * reached has all its edges, the rest of the code
			 * would give no path (issue 23: the failed proofs
			 * decoded to the end). */
			if (!q->npending)
				return false;
		} else if (finished) {
			return false;
		}
		quick_sweep(q, dec, q->checkpoint);
	}
}

static struct quick *quick_start(const struct dsolve *ds, const struct ls_proc *p)
{
	struct quick *q = ls_xcalloc(1, sizeof *q);
	*q = (struct quick){ .m = ds->m, .ds = ds, .p = p, .lo = p->ranges[0].lo, .hi = p->ranges[0].hi };
	q->done = q->lo;
	q->checkpoint = 32;
	const struct ls_text *t = ls_text_find(ds->m, q->lo);
	if (t && q->hi - t->addr <= t->size)
		q->text = t;
	/* (a proof decodes two thirds of its procedure on average) */
	q->d.insns = ls_grow(q->d.insns, &q->d.cap, ls_cfg_insns_room((q->hi - q->lo) * 2 / 3), sizeof *q->d.insns);
	q->seen = ls_grow(q->seen, &q->cap_seen, q->d.cap, 1); /* (rather than a realloc a search) */
	q->ninner = ls_cfg_entries_within(ds->m, p->ranges, 1, p, &q->inner);
	return q;
}

/* Whether the proof, waiting, goes through now: the visits that found a
 * call whose fact was not known are made again (and the sweep goes on if
 * they reach code not decoded yet). */
static bool quick_resume(struct quick *q, struct ls_decoder *dec)
{
	for (size_t k = 0; k < q->nblocked; k++) {
		q->pending = ls_grow(q->pending, &q->cap_pending, q->npending + 1, sizeof *q->pending);
		q->pending[q->npending++] = q->blocked[k].insn;
	}
	q->nblocked = 0;
	return quick_returns(q, dec, true);
}

static void quick_free(struct quick *q)
{
	if (!q)
		return;
	free(q->d.insns);
	free(q->seen);
	free(q->stack);
	free(q->pending);
	free(q->inner);
	free(q->blocked);
	free(q);
}

/* Member K returns: the members that call it are searched again. */
static void dreturned(struct dsolve *d, uint32_t k)
{
	struct dslot *s = &d->slots[k];
	s->returns = true;
	for (size_t i = 0; i < s->nrdeps; i++)
		if (d->slots[s->rdeps[i]].member && !d->slots[s->rdeps[i]].returns)
			dpush(d, s->rdeps[i]);
}

/* Member K's summary (a CFG with every call returning), the reverse
 * dependencies of its calls, and a search queued. */
static void dbuild(struct dsolve *d, struct ls_decoder *dec, uint32_t k)
{
	const ls_module *m = d->m;
	const struct ls_proc *proc = &m->procs.procs[d->slots[k].proc];
	struct ls_cfg cfg = { 0 }; /* ls_cfg_run_builder fills it */
	struct builder b = { .m = m, .dec = dec, .proc = proc, .cache = d->c, .all_calls_return = true,
	                     .cfg = &cfg, .quiet = true, .warned_jt = true };
	struct summary sum = { 0 };
	bool built = ls_cfg_run_builder(&b) == 0;
	if (built)
		summarize(m, proc, &cfg, &sum);
	ls_cfg_builder_done(&b);
	ls_cfg_free(&cfg);
	struct dslot *s = &d->slots[k];
	if (!built) {
		s->fixed = true;
		dreturned(d, k); /* the callers waiting for it go on */
		return;
	}
	s->sum = sum;
	if (sum.nblocks > d->cap_search) {
		d->cap_search = sum.nblocks;
		free(d->seen);
		free(d->stack);
		d->seen = ls_xmalloc(d->cap_search + 1);
		d->stack = ls_xmalloc((d->cap_search + 1) * sizeof *d->stack);
	}
	for (uint32_t bl = 0; bl < sum.nblocks; bl++) {
		int32_t dep = sum.dep[bl];
		if (dep < 0 || fact_of(d->c, dep))
			continue;
		uint32_t t = dslot_of(d, dep);
		struct dslot *ts = &d->slots[t];
		if (ts->nrdeps && ts->rdeps[ts->nrdeps - 1] == k)
			continue;
		ts->rdeps = ls_grow(ts->rdeps, &ts->cap_rdeps, ts->nrdeps + 1, sizeof *ts->rdeps);
		ts->rdeps[ts->nrdeps++] = k;
	}
	dpush(d, k);
}

/* Member K's quick proof waits for the facts of the procedures it found
 * called with none: they join S (their proofs are mostly quick too), and
 * the first of them found to return searches K again (dsearch).  Rather
 * than summarize K at once, which costs a whole decode and CFG: most
 * such procedures return after all (issue 23: 2443 of 2471). */
static void dwait(struct dsolve *d, uint32_t k)
{
	const struct quick *q = d->slots[k].quick;
	for (size_t i = 0; i < q->nblocked; i++) {
		int32_t p = q->blocked[i].proc;
		uint32_t t = dslot_of(d, p);
		struct dslot *ts = &d->slots[t];
		if (!ts->member) {
			d->adds = ls_grow(d->adds, &d->cap_adds, d->nadds + 1, sizeof *d->adds);
			d->adds[d->nadds++] = p;
		}
		if (ts->nrdeps && ts->rdeps[ts->nrdeps - 1] == k)
			continue;
		ts->rdeps = ls_grow(ts->rdeps, &ts->cap_rdeps, ts->nrdeps + 1, sizeof *ts->rdeps);
		ts->rdeps[ts->nrdeps++] = k;
	}
}

/* P into S: proved to return at once (quick_returns), or waiting for
 * its callees' facts (dwait), or summarized (dbuild). */
static void dadd(struct dsolve *d, struct ls_decoder *dec, int32_t p)
{
	uint32_t k = dslot_of(d, p);
	if (d->slots[k].member)
		return;
	d->slots[k].member = true;
	const ls_module *m = d->m;
	const struct ls_proc *proc = &m->procs.procs[p];
	struct dslot *s = &d->slots[k];
	if (proc->noreturn) {
		s->fixed = true;
		return;
	}
	if (proc->is_plt || !dec) {
		s->fixed = true;
		dreturned(d, k);
		return;
	}
	if (d->quick_module && quick_applies(proc)) {
		struct quick *q = quick_start(d, proc);
		if (quick_returns(q, dec, false)) {
			quick_free(q);
			d->slots[k].fixed = true;
			dreturned(d, k);
			return;
		}
		if (q->nblocked) {
			d->slots[k].quick = q;
			d->waiting = ls_grow(d->waiting, &d->cap_waiting, d->nwaiting + 1, sizeof *d->waiting);
			d->waiting[d->nwaiting++] = k;
			dwait(d, k);
			return;
		}
		quick_free(q);
	}
	dbuild(d, dec, k);
}

/* Nothing left to search: the last member still waiting for facts that
 * will not come by quick proofs is summarized.  False when none waits. */
static bool dbuild_waiting(struct dsolve *d, struct ls_decoder *dec)
{
	while (d->nwaiting) {
		uint32_t k = d->waiting[--d->nwaiting];
		struct dslot *s = &d->slots[k];
		if (!s->quick)
			continue; /* proved since */
		quick_free(s->quick);
		s->quick = NULL;
		dbuild(d, dec, k);
		return true;
	}
	return false;
}

/* Searches member K: found to return, it reopens its callers; else the
 * procedures it is waiting for join S. */
static void dsearch(struct dsolve *d, struct ls_decoder *dec, uint32_t k)
{
	struct dslot *s = &d->slots[k];
	if (s->fixed || s->returns)
		return;
	if (s->quick) {
		if (quick_resume(s->quick, dec)) {
			quick_free(s->quick);
			s->quick = NULL;
			s->fixed = true;
			dreturned(d, k);
		} else {
			dwait(d, k);
		}
		return;
	}
	d->nfrontier = 0;
	if (summary_search(&s->sum, dreturns, d, d->seen, d->stack, dfrontier, d)) {
		dreturned(d, k);
		return;
	}
	for (size_t i = 0; i < d->nfrontier; i++)
		dadd(d, dec, (int32_t)d->frontier[i]);
}

static void free_summary(struct summary *s)
{
	free(s->succ_start);
	free(s->succ);
	free(s->dep);
	free(s->nexc);
	free(s->flags);
}

/* The fact of procedure T and of all it depends on.  Caller holds C's lock. */
static void demand_solve(const ls_module *m, struct ls_cfg_module *c, int32_t t)
{
	size_t np = m->procs.nprocs;
	if (!c->dgen) {
		c->dgen = ls_xcalloc(np + 1, sizeof *c->dgen);
		c->dslot = ls_xcalloc(np + 1, sizeof *c->dslot);
	}
	if (!c->dec_made) {
		c->dec = ls_decoder_new(m->ehdr.e_machine);
		c->dec_made = true;
	}
	c->gen++;
	struct dsolve d = { .m = m, .c = c, .quick_module = quick_applies_module(m, c) };
	d.seen = ls_xmalloc(1);
	d.stack = ls_xmalloc(sizeof *d.stack);
	dadd(&d, c->dec, t);
	for (;;) {
		if (d.nadds) {
			dadd(&d, c->dec, d.adds[--d.nadds]);
		} else if (d.nwork) {
			uint32_t k = d.work[--d.nwork];
			d.slots[k].queued = false;
			dsearch(&d, c->dec, k);
		} else if (!dbuild_waiting(&d, c->dec)) {
			break;
		}
	}
	for (size_t k = 0; k < d.nslots; k++) {
		struct dslot *s = &d.slots[k];
		if (s->member)
			__atomic_store_n(&c->fact[s->proc], s->returns ? LS_FACT_RETURNS : LS_FACT_NEVER,
			                 __ATOMIC_RELEASE);
		free_summary(&s->sum);
		free(s->rdeps);
		quick_free(s->quick); /* (none left: a proof waits only while work is) */
	}
	free(d.slots);
	free(d.adds);
	free(d.waiting);
	free(d.work);
	free(d.seen);
	free(d.stack);
	free(d.frontier);
}

/* Under C's lock.  Out of memory (or the file truncated under us): unlock,
 * and make the other threads fail too, for the same cause, rather than
 * build the facts again.  WANT_FACTS: every fact
 * (compute_facts); FACT_OF >= 0: that procedure's (demand_solve). */
static void fill_cache(const ls_module *m, struct ls_cfg_module *const c, bool want_facts, int32_t fact_of_proc)
{
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env)) {
		c->failed = true;
		c->failed_cause = ls_guard_cause();
		pthread_mutex_unlock(&c->lock);
		ls_guard_rethrow();
	}
	if (c->failed) {
		ls_oom_pop(&g);
		pthread_mutex_unlock(&c->lock);
		ls_guard_set_cause(c->failed_cause);
		ls_guard_rethrow();
	}
	ls_cfg_load_sections(m, c);
	ls_cfg_make_entries(m, c);
	make_facts(m, c);
	if (want_facts && !atomic_load_explicit(&c->facts_ready, memory_order_relaxed)) {
		compute_facts(m, c);
		atomic_store_explicit(&c->facts_ready, true, memory_order_release);
	}
	if (fact_of_proc >= 0 && !fact_of(c, fact_of_proc))
		demand_solve(m, c, fact_of_proc);
	ls_oom_pop(&g);
}

const struct ls_cfg_module *ls_cfg_ready(const ls_module *m, bool want_facts)
{
	struct ls_cfg_module *c = ls_cfg_module_cache(m);
	want_facts = want_facts && !m->facts_on_demand;
	bool entries = !m->procs.nprocs || __atomic_load_n(&c->entries, __ATOMIC_ACQUIRE);
	if (entries && (atomic_load_explicit(&c->facts_ready, memory_order_acquire) ||
	                (!want_facts && atomic_load_explicit(&c->sections_done, memory_order_acquire))))
		return c;
	pthread_mutex_lock(&c->lock);
	fill_cache(m, c, want_facts, -1);
	atomic_store_explicit(&c->sections_done, true, memory_order_release);
	pthread_mutex_unlock(&c->lock);
	return c;
}

/* Procedure I's fact, computed now if need be (on demand, or all). */
static uint8_t proc_fact(const ls_module *m, size_t i)
{
	struct ls_cfg_module *c = (struct ls_cfg_module *)ls_cfg_ready(m, true);
	uint8_t f = fact_of(c, (int32_t)i);
	if (f)
		return f;
	pthread_mutex_lock(&c->lock);
	fill_cache(m, c, false, (int32_t)i);
	pthread_mutex_unlock(&c->lock);
	return fact_of(c, (int32_t)i);
}

bool ls_cfg_call_noreturn(const ls_module *m, uint64_t target)
{
	const struct ls_proc *p = ls_cfg_at_entry(m, target);
	if (!p)
		return extern_noreturn(m, target);
	if (p->noreturn)
		return true;
	if (p->is_plt)
		return false;
	return proc_fact(m, (size_t)(p - m->procs.procs)) == LS_FACT_NEVER;
}

uint8_t ls_cfg_fact(const ls_module *m, size_t proc)
{
	const struct ls_cfg_module *c = m->cfg_module;
	return c && proc < m->procs.nprocs ? fact_of(c, (int32_t)proc) : LS_FACT_UNKNOWN;
}

void ls_cfg_set_fact(const ls_module *m, size_t proc, uint8_t fact)
{
	struct ls_cfg_module *c = ls_cfg_module_cache(m);
	if (proc >= m->procs.nprocs || (fact != LS_FACT_RETURNS && fact != LS_FACT_NEVER))
		return;
	pthread_mutex_lock(&c->lock);
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env)) {
		pthread_mutex_unlock(&c->lock);
		ls_oom_raise();
	}
	make_facts(m, c);
	ls_oom_pop(&g);
	if (!fact_of(c, (int32_t)proc))
		__atomic_store_n(&c->fact[proc], fact, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&c->lock);
}
