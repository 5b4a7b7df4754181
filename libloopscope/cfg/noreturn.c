/* noreturn.c - which procedures never return, for the CFG stage (cfg.c).
 *
 * "Never returns" is DW_AT_noreturn / a known name (procs.c), or proved
 * here: once per module, on the first CFG, every procedure gets a summary
 * CFG (all calls assumed to return) and a least fixpoint over the call
 * graph marks the procedures from whose entry a return is reachable
 * (through calls to returning procedures only).  The others never return.
 * The facts live in m->cfg_module, built under its lock; after that they
 * are read-only, so the result does not depend on thread timing.
 */
#include "cfg/cfg_private.h"

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
				const struct ls_proc *t = ls_procs_at_entry(&m->procs, in->target);
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
			const struct ls_proc *t = ls_procs_at_entry(&m->procs, in->target);
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

/* Whether a return is reachable from the entry of the summarized proc. */
static bool summary_returns(const struct summary *s, const uint8_t *returns, uint8_t *seen, uint32_t *stack)
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
		if ((f & SUM_DEP_GATE) && (dep < 0 || !returns[dep])) {
			kend = s->succ_start[b] + s->nexc[b]; /* only what it throws */
		} else {
			if (f & SUM_EXIT)
				ret = true;
			if ((f & SUM_DEP_EXIT) && dep >= 0 && returns[dep])
				ret = true;
		}
		for (uint32_t k = s->succ_start[b]; k < kend; k++)
			if (!seen[s->succ[k]]) {
				seen[s->succ[k]] = 1;
				stack[sp++] = s->succ[k];
			}
	}
	return ret;
}

/* The least fixpoint of "may return" over the call graph.  Caller holds
 * the lock. */
/* The summaries are built on as many threads as the analysis uses: each
 * with its own decoder, writing only its own procedures' slots. */
struct summary_job {
	const ls_module *m;
	struct ls_cfg_module *c;
	struct summary *sums;
	uint8_t *fixed;
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
			job->c->returns[i] = 1;
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
			job->c->returns[i] = 1;
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
	c->returns = ls_xcalloc(np + 1, 1);
	c->decoded = ls_xcalloc(np + 1, sizeof *c->decoded);
	atomic_init(&c->decoded_bytes, 0);
	struct summary *sums = ls_xcalloc(np + 1, sizeof *sums);
	uint8_t *fixed = ls_xcalloc(np + 1, 1);

	struct summary_job job = { .m = m, .c = c, .sums = sums, .fixed = fixed };
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
		if (c->returns[i] || !summary_returns(&sums[i], c->returns, seen, stack))
			continue;
		c->returns[i] = 1;
		for (uint32_t k = rstart[i]; k < rstart[i + 1]; k++) {
			uint32_t r = rdeps[k];
			if (!fixed[r] && !c->returns[r] && !queued[r]) {
				queued[r] = 1;
				work[nw++] = r;
			}
		}
	}

	for (size_t i = 0; i < np; i++) {
		free(sums[i].succ_start);
		free(sums[i].succ);
		free(sums[i].dep);
		free(sums[i].nexc);
		free(sums[i].flags);
	}
	free(sums);
	free(fixed);
	free(rcount);
	free(rstart);
	free(rdeps);
	free(seen);
	free(stack);
	free(work);
	free(queued);
}

/* Under C's lock.  Out of memory (or the file truncated under us): unlock,
 * and make the other threads fail too, for the same cause, rather than
 * build the facts again. */
static void fill_cache(const ls_module *m, struct ls_cfg_module *const c, bool want_facts)
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
	if (want_facts && !atomic_load_explicit(&c->facts_ready, memory_order_relaxed)) {
		compute_facts(m, c);
		atomic_store_explicit(&c->facts_ready, true, memory_order_release);
	}
	ls_oom_pop(&g);
}

const struct ls_cfg_module *ls_cfg_ready(const ls_module *m, bool want_facts)
{
	struct ls_cfg_module *c = ls_cfg_module_cache(m);
	if (want_facts && atomic_load_explicit(&c->facts_ready, memory_order_acquire))
		return c;
	pthread_mutex_lock(&c->lock);
	fill_cache(m, c, want_facts);
	pthread_mutex_unlock(&c->lock);
	return c;
}

bool ls_cfg_call_noreturn(const ls_module *m, uint64_t target)
{
	const struct ls_proc *p = ls_procs_at_entry(&m->procs, target);
	if (!p)
		return extern_noreturn(m, target);
	if (p->noreturn)
		return true;
	if (p->is_plt)
		return false;
	const struct ls_cfg_module *c = ls_cfg_ready(m, true);
	return !c->returns[p - m->procs.procs];
}
