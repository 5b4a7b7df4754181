/* attribute.c - from sampled addresses to the calling-context tree.
 *
 * Each frame address (the sample IP for the leaf; return address - 1 for
 * callers, so a call at the end of a loop stays in the loop) goes to its map,
 * to the binary behind the map (found by build-id or by path), to a link-time
 * address (file offset through the mmap's pgoff, then the ELF program
 * headers), and through libloopscope to its static scope chain.  The chain is
 * appended under the caller's node.  A frame whose binary is missing or has
 * no structure becomes one node named by its symbol (ELF symbol table or
 * /proc/kallsyms) or "[unknown]"; each such binary is reported once.
 *
 * Caches: one ls_module per binary (find-dso.c, which finds the binaries
 * and opens their structure); and (parent node, map, address) -> node, which
 * makes the common case (the same frames again) one hash probe.  The tree's
 * storage and its sums are cct.c's.
 */
#include "attribute.h"
#include "offcpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PL_MAX_FRAMES (attribute.h): frames of one sample that are resolved:
 * perf's own default for --max-stack is 127; deeper chains keep their
 * innermost frames, and the report says how many samples were cut
 * (pl_attrib_warn_bounds). */

struct pl_attrib *pl_attrib_new(pl_report *rep)
{
	struct pl_attrib *a = pl_xcalloc(1, sizeof *a);
	a->rep = rep;
	a->nfc = 1 << 16;
	a->fc = pl_xcalloc(a->nfc, sizeof *a->fc);
	a->ncc = 1 << 14;
	a->cc = pl_xcalloc(a->ncc, sizeof *a->cc);
	a->fp_check = getenv("PERF_LOOPS_FP_CHECK") != NULL;
	pl_dsos_begin(a);
	return a;
}

void pl_attrib_free(struct pl_attrib *a)
{
	if (!a)
		return;
	pl_unwind_end(a);
	pl_dsos_end(a);
	free(a->fp_frameless);
	free(a->fp_memo);
	free(a->fc);
	free(a->cc);
	free(a->pool);
	free(a);
}

/* ---- building the tree ---------------------------------------------------------- */

static uint32_t named_node(struct pl_attrib *a, uint32_t parent, pl_dso *dso, const char *name)
{
	pl_report *rep = a->rep;
	char key[512];
	snprintf(key, sizeof key, "%u\x01%s", dso ? dso->index : ~0u, name);
	const char *k = pl_intern(rep->s, key);
	uint32_t n = pl_tree_child(&rep->tree, parent, (uintptr_t)k, PL_PROC);
	pl_node *x = &rep->tree.nodes[n];
	if (!x->name) {
		x->name = pl_intern(rep->s, name);
		x->dso = dso;
	}
	return n;
}

/* The link-time address of runtime address ADDR in MAP, whose binary's
 * state is D: 0, or -1 (no file, or outside the module's code). */
static int link_address(struct pl_attrib *a, struct dso_attr *d, const pl_map *map, uint64_t addr, uint64_t *link)
{
	(void)a;
	if (map->dso->kind == PL_DSO_KERNEL && d->mod) {
		/* the kernel map's pgoff is _text's runtime address */
		*link = addr - map->pgoff + (uint64_t)d->kernel_delta;
		return 0;
	}
	if (map->dso->kind == PL_DSO_KMODULE && d->nksecs) {
		uint64_t off = addr - map->start;
		for (size_t i = 0; i < d->nksecs; i++)
			if (off >= d->ksecs[i].offset && off - d->ksecs[i].offset < d->ksecs[i].size) {
				*link = d->ksecs[i].addr + (off - d->ksecs[i].offset);
				return 0;
			}
		return -1;
	}
	return d->file ? pl_to_link(d, map, addr, link) : -1;
}

/* A procedure frame alone (an inferred frame: where in the procedure the
 * call was is not known), under PARENT. */
static uint32_t proc_node(struct pl_attrib *a, uint32_t parent, pl_dso *dso, const ls_scope *proc, uint8_t how)
{
	uint32_t node = pl_tree_child(&a->rep->tree, parent, (uintptr_t)proc | how, PL_PROC);
	pl_node *x = &a->rep->tree.nodes[node];
	if (!x->scope) {
		x->scope = proc;
		x->dso = dso;
		x->how = how;
	}
	return node;
}

/* Append the static chain of ADDR (already adjusted) in MAP under PARENT;
 * HOW marks its procedure (PL_HOW_*; PL_HOW_INFERRED: the procedure alone). */
static uint32_t expand_frame(struct pl_attrib *a, uint32_t parent, const pl_map *map, uint64_t addr, int kernel,
                             uint8_t how)
{
	pl_report *rep = a->rep;
	if (!map) {
		char name[64];
		if (kernel) {
			a->kernel_frames = 1;
			pl_load_kallsyms(a);
			const ls_ksym *s = ls_kmap_symbol_at(a->kmap, addr);
			if (s)
				return named_node(a, parent, NULL, s->name);
			snprintf(name, sizeof name, "[kernel] %#llx", (unsigned long long)addr);
			return named_node(a, parent, NULL, name);
		}
		return named_node(a, parent, NULL, "[unknown]");
	}
	struct dso_attr *d = pl_dso_attr(a, map->dso);
	uint64_t link = 0;
	int have_link = link_address(a, d, map, addr, &link) == 0;
	if (d->mod && have_link && how == PL_HOW_INFERRED) {
		const ls_scope *p = ls_lookup_proc(d->mod, link);
		if (p)
			return proc_node(a, parent, map->dso, p, how);
	}
	if (d->mod && have_link) {
		const ls_scope *chain[LS_MAX_CHAIN];
		size_t n = ls_lookup_chain(d->mod, link, chain, LS_MAX_CHAIN);
		if (n) {
			uint32_t node = parent;
			for (size_t i = 0; i < n; i++) {
				int kind;
				switch (ls_scope_kind_of(chain[i])) {
				case LS_SCOPE_PROC: kind = PL_PROC; break;
				case LS_SCOPE_INLINE: kind = PL_INLINE; break;
				case LS_SCOPE_ALIEN: kind = PL_ALIEN; break;
				case LS_SCOPE_LOOP: kind = PL_LOOP; break;
				case LS_SCOPE_STMT: kind = PL_STMT; break;
				default: continue;
				}
				node = pl_tree_child(&rep->tree, node, (uintptr_t)chain[i] | (kind == PL_PROC ? how : 0), kind);
				pl_node *x = &rep->tree.nodes[node];
				if (!x->scope) {
					x->scope = chain[i];
					if (kind == PL_PROC) {
						x->dso = map->dso;
						x->how = how;
					}
				}
			}
			return node;
		}
	}
	if (map->dso->kind == PL_DSO_KERNEL && !d->mod)
		a->kernel_frames = 1;
	if (d->use_kallsyms) {
		const ls_ksym *s = ls_kmap_symbol_at(a->kmap, addr);
		if (s)
			return named_node(a, parent, map->dso, s->name);
	}
	ls_symbol sym;
	if (have_link && !d->refused && ls_file_symbol_at(d->file, link, &sym) == 0)
		return named_node(a, parent, map->dso, sym.name);
	char name[64];
	if (map->dso->kind == PL_DSO_KERNEL) {
		snprintf(name, sizeof name, "[kernel] %#llx", (unsigned long long)addr);
		return named_node(a, parent, map->dso, name);
	}
	if (map->dso->kind == PL_DSO_USER && (d->refused || !d->file)) {
		/* no usable file: the address in the binary, as perf report
		 * shows a frame it has no symbol for */
		snprintf(name, sizeof name, "0x%016llx", (unsigned long long)(addr - map->start + map->pgoff));
		return named_node(a, parent, map->dso, name);
	}
	return named_node(a, parent, map->dso, "[unknown]");
}

static uint32_t frame_node(struct pl_attrib *a, uint32_t parent, pl_thread *t, uint64_t addr, int kernel, int adjust,
                           uint8_t how)
{
	pl_map *map = pl_find_map(a->rep->s, t, addr, kernel);
	uint64_t key = addr - (adjust ? 1 : 0);
	/* an unmapped address has no map: tell kernel and user apart in the key */
	const pl_map *mkey = map ? map : (const pl_map *)(uintptr_t)(kernel ? 1 : 2);
	uint64_t h = (key * 0x9e3779b97f4a7c15ULL) ^ ((uintptr_t)mkey * 0xc2b2ae3d27d4eb4fULL) ^
		     ((uint64_t)parent * 0x165667b19e3779f9ULL) ^ how;
	h ^= h >> 31;
	size_t i = h & (a->nfc - 1);
	while (a->fc[i].map) {
		if (a->fc[i].map == mkey && a->fc[i].addr == key && a->fc[i].parent == parent && a->fc[i].how == how)
			return a->fc[i].node;
		i = (i + 1) & (a->nfc - 1);
	}
	uint32_t node = expand_frame(a, parent, map, key, kernel, how);
	if ((a->fc_used + 1) * 2 > a->nfc) {
		/* full: start over (cheaper than rehashing a cache) */
		memset(a->fc, 0, a->nfc * sizeof *a->fc);
		a->fc_used = 0;
		if (a->nfc < (1u << 24)) {
			free(a->fc);
			a->nfc *= 2;
			a->fc = pl_xcalloc(a->nfc, sizeof *a->fc);
		}
		i = h & (a->nfc - 1);
	}
	a->fc[i].map = mkey;
	a->fc[i].addr = key;
	a->fc[i].parent = parent;
	a->fc[i].node = node;
	a->fc[i].how = how;
	a->fc_used++;
	return node;
}

static int in_list(char **list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return 1;
	return 0;
}

/* A frame's key in the caller-chain cache: its adjusted address and how it
 * was found. */
static inline uint64_t frame_key(const struct frame *f)
{
	return (f->addr - f->adjust) << 2 | f->how;
}

/* A sample of a kernel thread has no user part to unwind. */
static int kernel_ip_only(const pd_sample *smp)
{
	return smp->pid == 0 || smp->pid == (uint32_t)-1;
}

/* The node of the callers of a sample (frames 1..nf-1, outermost last).
 * The key is the callers' adjusted addresses: what frame_node resolves. */
static uint32_t caller_node(struct pl_attrib *a, pl_thread *t, const struct frame *fr, size_t nf)
{
	if (nf < 2)
		return 0;
	unsigned kgen = pl_session_kernel_gen(a->rep->s);
	uint64_t h = (uintptr_t)t->proc * 0x9e3779b97f4a7c15ULL ^ t->proc->gen ^ ((uint64_t)kgen << 32);
	for (size_t i = 1; i < nf; i++)
		h = (h ^ frame_key(&fr[i])) * 0xff51afd7ed558ccdULL;
	h ^= h >> 32;
	size_t i = h & (a->ncc - 1);
	uint32_t n = (uint32_t)(nf - 1);
	while (a->cc[i].used) {
		const struct cslot *c = &a->cc[i];
		if (c->hash == h && c->proc == t->proc && c->gen == t->proc->gen && c->kgen == kgen && c->n == n) {
			const uint64_t *p = a->pool + c->off;
			size_t k;
			for (k = 0; k < n && p[k] == frame_key(&fr[k + 1]); k++)
				;
			if (k == n)
				return c->node;
		}
		i = (i + 1) & (a->ncc - 1);
	}
	uint32_t node = 0;
	for (size_t k = nf; k-- > 1;)
		node = fr[k].how == PL_HOW_BROKEN ? named_node(a, node, NULL, "[broken call chain]")
		                                  : frame_node(a, node, t, fr[k].addr, fr[k].kernel, fr[k].adjust, fr[k].how);
	if ((a->cc_used + 1) * 2 > a->ncc || a->npool + n > (64u << 20)) {
		/* full: grow, or start over when the chains are too many */
		size_t ncc = a->npool + n > (64u << 20) || a->ncc >= (1u << 22) ? a->ncc : a->ncc * 2;
		free(a->cc);
		a->ncc = ncc;
		a->cc = pl_xcalloc(a->ncc, sizeof *a->cc);
		a->cc_used = 0;
		a->npool = 0;
		i = h & (a->ncc - 1);
	}
	if (a->npool + n > a->cap_pool) {
		a->cap_pool = (a->npool + n) * 2;
		a->pool = pl_xrealloc(a->pool, a->cap_pool * sizeof *a->pool);
	}
	for (size_t k = 0; k < n; k++)
		a->pool[a->npool + k] = frame_key(&fr[k + 1]);
	struct cslot *c = &a->cc[i];
	c->hash = h;
	c->proc = t->proc;
	c->gen = t->proc->gen;
	c->kgen = kgen;
	c->off = (uint32_t)a->npool;
	c->n = n;
	c->node = node;
	c->used = 1;
	a->npool += n;
	a->cc_used++;
	return node;
}

static int in_ids(const uint32_t *v, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == id)
			return 1;
	return 0;
}

/* Is the sample kept by the filters (--comms, --pid, --event, --tid,
 * --time, --dsos)? */
static int sample_selected(pl_report *rep, pl_session *s, const pd_event *ev, pl_thread *t, int kernel_ip)
{
	const pl_report_options *opt = rep->opt;
	const pd_sample *smp = &ev->sample;
	if (opt->ncomms && !in_list(opt->comms, opt->ncomms, t->comm))
		return 0;
	if (opt->npids) {
		size_t i;
		for (i = 0; i < opt->npids; i++)
			if (opt->pids[i] == smp->pid)
				break;
		if (i == opt->npids)
			return 0;
	}
	if (opt->nevents && !in_list(opt->events, opt->nevents, smp->attr->name))
		return 0;
	if (opt->ntids && !in_ids(opt->tids, opt->ntids, smp->tid))
		return 0;
	if (ev->has_time && !pl_time_selected(opt, smp->time))
		return 0;
	if (opt->ndsos) {
		/* perf's --dsos: the binary of the sampled address */
		pl_map *m = pl_find_map(s, t, smp->ip, kernel_ip);
		const char *nm = m ? m->dso->short_name : "[unknown]";
		if (!in_list(opt->dsos, opt->ndsos, nm) && !(m && in_list(opt->dsos, opt->ndsos, m->dso->name)))
			return 0;
	}
	return 1;
}

/* The frames of a sample, leaf first, into FR (PL_MAX_FRAMES): its call
 * chain, or the chain's kernel part and the user frames unwound (dwarf) or
 * taken from the LBR call stack; at least the sampled address. */
static size_t sample_frames(struct pl_attrib *a, pl_thread *t, const pd_sample *smp, int kernel_ip, struct frame *fr)
{
	size_t nf = 0;
	/* --call-graph dwarf: the kernel gives the kernel part of the chain,
	 * the user part is unwound from the saved registers and stack */
	int dwarf = smp->stack_size && smp->regs_abi;
	/* --call-graph lbr: the user part is the LBR call stack, whose "from"
	 * addresses are the call instructions themselves (no -1 needed) */
	int lbr = !dwarf && smp->nr_branches && (smp->attr->branch_sample_type & (1u << 11));
	if (smp->nr_callchain) {
		int kernel = kernel_ip;
		int skip_ctx = 0;
		for (uint64_t i = 0; i < smp->nr_callchain; i++) {
			uint64_t ip = smp->callchain[i];
			if (ip >= PD_CONTEXT_MAX) {
				skip_ctx = 0;
				if (ip == PD_CONTEXT_KERNEL || ip == PD_CONTEXT_HV)
					kernel = 1;
				else if (ip == PD_CONTEXT_USER)
					kernel = 0;
				else
					skip_ctx = 1; /* guest frames: not ours to resolve */
				continue;
			}
			if (skip_ctx || ((dwarf || lbr) && !kernel))
				continue;
			if (nf == PL_MAX_FRAMES) {
				a->deep_chains++;
				break;
			}
			fr[nf].addr = ip;
			fr[nf].kernel = (uint8_t)kernel;
			fr[nf].adjust = nf > 0;
			fr[nf].how = PL_HOW_CFI;
			nf++;
		}
	}
	if (dwarf && !kernel_ip_only(smp)) {
		uint64_t pcs[256];
		uint8_t how[256];
		size_t n = pl_unwind_user(a, t, smp, pcs, how, 256);
		for (size_t i = 0; i < n && nf < PL_MAX_FRAMES; i++) {
			fr[nf].addr = pcs[i];
			fr[nf].kernel = 0;
			fr[nf].adjust = nf > 0;
			fr[nf].how = how[i];
			nf++;
		}
	} else if (!lbr && smp->nr_callchain && nf) {
		nf = pl_fp_repair(a, t, fr, nf);
	}
	if (lbr && !kernel_ip_only(smp)) {
		if (!kernel_ip && nf < PL_MAX_FRAMES) {
			fr[nf].addr = smp->ip;
			fr[nf].kernel = 0;
			fr[nf].adjust = 0;
			fr[nf].how = PL_HOW_CFI;
			nf++;
		}
		for (uint64_t i = 0; i < smp->nr_branches && nf < PL_MAX_FRAMES; i++) {
			if (!smp->branches[i].from)
				break;
			fr[nf].addr = smp->branches[i].from;
			fr[nf].kernel = 0;
			fr[nf].adjust = 0;
			fr[nf].how = PL_HOW_CFI;
			nf++;
		}
	}
	if (!nf) {
		fr[0].addr = smp->ip;
		fr[0].kernel = (uint8_t)kernel_ip;
		fr[0].adjust = 0;
		fr[0].how = PL_HOW_CFI;
		nf = 1;
	}
	return nf;
}

/* The sample's place beside the tree (places.c): its leaf node, map and
 * address; its thread and CPU when -s asks for them. */
static void add_place(struct pl_attrib *a, pl_thread *t, const pd_sample *smp, size_t e, uint32_t node,
		      const struct frame *leaf)
{
	pl_report *rep = a->rep;
	pl_place k = { .node = node, .ev = (uint32_t)e, .addr = leaf->addr, .cpu = -1, .comm = t->comm };
	k.map = pl_find_map(rep->s, t, leaf->addr, leaf->kernel);
	if (rep->opt->sort_mask & PL_THREAD_KEYS) {
		k.pid = smp->pid;
		k.tid = smp->tid;
		if (smp->attr->sample_type & PD_SAMPLE_CPU)
			k.cpu = (int32_t)smp->cpu;
	}
	pl_places_add(&rep->places, &k, smp->period);
	pl_daddr_add(rep, t, smp, e, node); /* -d: the data address, when a data view asks */
}

/* The off-CPU time of leaf NODE by reason (offcpu.h). */
static void add_off_reason(pl_report *rep, uint32_t node, int why, uint64_t ns)
{
	if (node >= rep->noff_why) {
		size_t n = rep->noff_why ? rep->noff_why : 1024;
		while (n <= node)
			n *= 2;
		rep->off_why = pl_xrealloc(rep->off_why, n * sizeof *rep->off_why);
		memset(rep->off_why + rep->noff_why, 0, (n - rep->noff_why) * sizeof *rep->off_why);
		rep->noff_why = n;
	}
	rep->off_why[node][why] += ns;
}

void pl_attrib_sample(void *ctx, pl_session *s, const pd_event *ev, pl_thread *t)
{
	pl_report *rep = ctx;
	struct pl_attrib *a = rep->attrib;
	const pl_report_options *opt = rep->opt;
	const pd_sample *smp = &ev->sample;
	size_t e = (size_t)smp->attr_index;
	if (!rep->tree.nodes)
		pl_report_begin(rep);
	if (e >= rep->nev)
		return;
	rep->nsamples_all++;
	int kernel_ip = smp->cpumode == PD_MISC_KERNEL || smp->cpumode == PD_MISC_HYPERVISOR;
	a->kernel_samples += kernel_ip;
	if (!sample_selected(rep, s, ev, t, kernel_ip))
		return;
	uint64_t period = smp->period;
	int why = -1;
	/* a thread leaving the CPU: counted as the time until it came back */
	if (rep->offcpu && e == rep->off_ev && (why = pl_offcpu_sample(rep, t, smp, &period)) < 0)
		return;
	struct frame fr[PL_MAX_FRAMES];
	size_t nf = sample_frames(a, t, smp, kernel_ip, fr);
	if (a->fp_check && smp->stack_size && !kernel_ip)
		pl_fp_check(a, t, smp, fr, nf);
	if (opt->max_stack && nf > (size_t)opt->max_stack)
		nf = (size_t)opt->max_stack; /* --max-stack: the innermost frames */
	uint32_t node = caller_node(a, t, fr, nf);
	node = frame_node(a, node, t, fr[0].addr, fr[0].kernel, fr[0].adjust, PL_HOW_CFI);
	pl_tree *tr = &rep->tree;
	if (why >= 0)
		add_off_reason(rep, node, why, period);
	add_place(a, t, smp, e, node, &fr[0]);
	/* only the leaf is counted now; pl_tree_finish sums the totals */
	uint64_t *c = pl_cost_at(tr, node, e);
	c[PL_SELF]++;
	c[PL_SELF_PERIOD] += period;
	rep->ev_samples[e]++;
	rep->ev_period[e] += period;
}

int pl_attrib_link_addr(struct pl_attrib *a, const pl_map *m, uint64_t addr, uint64_t *link)
{
	return link_address(a, pl_dso_attr(a, m->dso), m, addr, link);
}

const char *pl_attrib_symbol(struct pl_attrib *a, const pl_map *m, uint64_t addr, uint64_t *off)
{
	if (!m || m->dso->kind == PL_DSO_KERNEL || m->dso->kind == PL_DSO_KMODULE) {
		/* kallsyms: what perf report names kernel addresses by (an
		 * address outside every map is a kernel one, or has no name) */
		pl_load_kallsyms(a);
		const ls_ksym *ks = ls_kmap_symbol_at(a->kmap, addr);
		if (ks) {
			*off = addr - ks->addr;
			return ks->name;
		}
	}
	if (!m)
		return NULL;
	struct dso_attr *d = pl_dso_attr(a, m->dso);
	uint64_t link;
	ls_symbol sym;
	if (d->refused || !d->file || pl_attrib_link_addr(a, m, addr, &link) || ls_file_symbol_at(d->file, link, &sym))
		return NULL;
	*off = link - sym.addr;
	return sym.name;
}

/* Is D the program COMM runs (perf's comm: the first 15 bytes of the
 * executable's name)? */
static int runs_as(const pl_dso *d, const char *comm)
{
	return comm && d->kind == PL_DSO_USER && !strncmp(d->short_name, comm, 15) &&
	       (strlen(d->short_name) >= 15 || !strcmp(d->short_name, comm));
}

struct comm_count {
	const char *comm;
	uint64_t samples;
};

static int cmp_comm(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct comm_count *)a)->comm, y = (uintptr_t)((const struct comm_count *)b)->comm;
	return x < y ? -1 : x > y;
}

/* The command most samples ran as (commands are interned: by pointer). */
static const char *main_comm(const pl_report *rep)
{
	size_t n = rep->places.n;
	struct comm_count *v = pl_xmalloc((n ? n : 1) * sizeof *v);
	for (size_t i = 0; i < n; i++)
		v[i] = (struct comm_count){ rep->places.v[i].comm, rep->places.v[i].samples };
	qsort(v, n, sizeof *v, cmp_comm);
	const char *best = NULL;
	uint64_t most = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		uint64_t sum = 0;
		for (; j < n && v[j].comm == v[i].comm; j++)
			sum += v[j].samples;
		if (sum > most) {
			most = sum;
			best = v[i].comm;
		}
		i = j;
	}
	free(v);
	return best;
}

pl_dso *pl_main_dso(const pl_report *rep)
{
	/* the executable of the command most samples ran as, sampled or not
	 * (its code may only call a library's) */
	const char *comm = main_comm(rep);
	size_t n = pl_session_ndsos(rep->s);
	for (size_t i = 0; i < n; i++)
		if (runs_as(pl_session_dso(rep->s, i), comm))
			return pl_session_dso(rep->s, i);
	/* else the user binary with most samples */
	uint64_t *any = pl_xcalloc(n ? n : 1, sizeof *any);
	for (size_t i = 0; i < rep->places.n; i++) {
		const pl_place *p = &rep->places.v[i];
		if (p->map && p->map->dso->index < n)
			any[p->map->dso->index] += p->samples;
	}
	pl_dso *d = NULL;
	for (size_t i = 0; i < n; i++)
		if (pl_session_dso(rep->s, i)->kind == PL_DSO_USER && any[i] && (!d || any[i] > any[d->index]))
			d = pl_session_dso(rep->s, i);
	free(any);
	return d;
}

void pl_attrib_warn_bounds(struct pl_attrib *a)
{
	pl_dsos_summary(a);
	pl_fp_warn(a);
	if (a->deep_chains)
		fprintf(stderr, "perf-loops: warning: %s: %llu samples have call chains deeper than %d frames "
			"(the bound): their outermost frames are not shown\n", pd_name(a->rep->r),
			(unsigned long long)a->deep_chains, PL_MAX_FRAMES);
}

void pl_report_begin(pl_report *rep)
{
	if (rep->tree.nodes)
		return;
	rep->nev = pd_nattrs(rep->r);
	size_t n = rep->nev ? rep->nev : 1;
	rep->ev_samples = pl_xcalloc(n, sizeof *rep->ev_samples);
	rep->ev_period = pl_xcalloc(n, sizeof *rep->ev_period);
	pl_tree_init(&rep->tree, n);
}
