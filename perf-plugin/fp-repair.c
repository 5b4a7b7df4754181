/* fp-repair.c - frame-pointer call chains repaired, or refused.
 *
 * A --call-graph=fp chain is read by the kernel through saved BPs: leaf IP,
 * [BP+8], [[BP]+8], ...  A procedure that keeps no frame pointer where the
 * chain passes - a frameless leaf, a prologue or epilogue, a library built
 * without frame pointers - leaves BP holding its caller's frame, so the
 * chain skips that caller: the next return address is the caller's own.
 * The binary's CFI says, for each frame's address, whether BP is that
 * frame's frame pointer there (CFA = BP + 16, the caller's BP below the
 * return address); where the CFI does not say, the unwind recipes do
 * (loopscope.h, fp_chain: an analysis of the whole procedure, which is
 * what made the first and every later report of a system-wide recording
 * slow when every procedure was asked).  Where it is not, the
 * missing frame is the procedure the next return address's call site
 * calls, T: we insert T, marked inferred (PL_HOW_INFERRED, in every view),
 * only when the code proves it - a direct call to T, T keeps a frame
 * pointer (so BP was T's frame: the return address came from it), T is not
 * the frame's own procedure, and T calls that procedure directly (or
 * through its PLT stub).  An indirect call site, a T that never calls the
 * frame's procedure (a tail call went through it, or an indirect call did),
 * two candidate callers: nothing is inserted, and the sample counts as
 * unrepaired.  A "return address" that follows no call is garbage from a
 * BP used as a general register: the chain is cut there under a
 * "[broken call chain]" node.  The share of samples left unrepaired is said
 * once, at the end, with the command that records complete chains
 * (pl_fp_warn).
 */
#include "attribute.h"

#include <stdlib.h>
#include <string.h>

/* Where an address is: its map, binary and link-time address. */
struct where {
	pl_map *map;
	struct dso_attr *d;
	uint64_t link;
};

static int locate(struct pl_attrib *a, pl_thread *t, uint64_t addr, struct where *w)
{
	w->map = pl_find_map(a->rep->s, t, addr, 0);
	if (!w->map)
		return -1;
	w->d = pl_dso_attr(a, w->map->dso);
	if (!w->d->mod || pl_to_link(w->d, w->map, addr, &w->link) < 0)
		return -1;
	return 0;
}

/* The runtime address of LINK in the binary of map M (the text map). */
static uint64_t runtime_of(const struct where *w, uint64_t link)
{
	uint64_t l0;
	if (pl_to_link(w->d, w->map, w->map->start, &l0) < 0)
		return 0;
	return link + (w->map->start - l0);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The function the PLT stub STUB stands for, in the binaries the process
 * has mapped: *W and *ENTRY.  The stub is bound by its symbol's ELF name
 * (the linkage name; a C name is its own), so the symbol tables alone are
 * searched: a match by a demangled or DWARF name would build the
 * procedure table of every binary mapped until one matched (for a library
 * without a symbol table, a decode of all its code). */
static int resolve_plt(struct pl_attrib *a, pl_thread *t, const ls_scope *stub, struct where *w, uint64_t *entry)
{
	const char *ln = ls_scope_linkage_name(stub), *stub_name = ln ? ln : ls_scope_name(stub);
	char name[512];
	size_t n = strlen(stub_name) - 4;
	if (n >= sizeof name)
		return -1;
	memcpy(name, stub_name, n);
	name[n] = 0;
	size_t nmaps;
	pl_map **maps = pl_maps_list(&t->proc->maps, &nmaps);
	int found = -1;
	for (size_t i = 0; i < nmaps && found < 0; i++) {
		struct dso_attr *d = pl_dso_attr(a, maps[i]->dso);
		ls_symbol syms[8];
		size_t nsyms = d->mod ? ls_module_functions_named(d->mod, name, syms, 8) : 0;
		const ls_scope *p;
		if (!nsyms || !(p = ls_lookup_proc(d->mod, syms[0].addr)) || ends_with(ls_scope_name(p), "@plt"))
			continue;
		*w = (struct where){ maps[i], d, syms[0].addr };
		if (runtime_of(w, syms[0].addr)) {
			*entry = syms[0].addr;
			found = 0;
		}
	}
	free(maps);
	return found;
}

/* Whether procedure T (ENTRY in W's binary) calls the procedure P (PENTRY,
 * named PNAME, in binary PD) directly, or through its PLT stub. */
static int calls(const struct where *w, uint64_t entry, const struct dso_attr *pd, uint64_t pentry, const char *pname)
{
	uint64_t targets[256];
	size_t n = ls_unwind_proc_targets(w->d->mod, entry, 0, targets, 256);
	char stub[600];
	snprintf(stub, sizeof stub, "%s@plt", pname ? pname : "");
	for (size_t i = 0; i < n && i < 256; i++) {
		if (pd == w->d && targets[i] == pentry)
			return 1;
		const ls_scope *s = pd != w->d ? ls_lookup_proc(w->d->mod, targets[i]) : NULL;
		if (s && ls_scope_name(s) && strcmp(ls_scope_name(s), stub) == 0)
			return 1;
	}
	return 0;
}

enum { KEEP, INSERT, INSERT_TWO, REFUSE, CUT };

/* The one procedure X that T (ENTRY in W) calls - directly or through a
 * PLT stub - that keeps no frame pointer and calls P directly and never
 * tail-calls it: 0 with *WX, *XENTRY; -1 if none, or more than one. */
static int one_way_through(struct pl_attrib *a, pl_thread *t, const struct where *w, uint64_t entry,
                           const struct dso_attr *pd, uint64_t pentry, const char *pname, struct where *wx,
                           uint64_t *xentry)
{
	uint64_t targets[256], tails[64];
	size_t n = ls_unwind_proc_targets(w->d->mod, entry, 0, targets, 256);
	int found = 0;
	for (size_t i = 0; i < n && i < 256 && found < 2; i++) {
		struct where c = *w;
		uint64_t centry = targets[i];
		const ls_scope *s = ls_lookup_proc(w->d->mod, targets[i]);
		if (!s || (ends_with(ls_scope_name(s), "@plt") && resolve_plt(a, t, s, &c, &centry) < 0))
			continue;
		ls_unwind_proc_info ci;
		ls_error err;
		if ((c.d == w->d && centry == entry) || ls_unwind_proc(c.d->mod, centry, &ci, &err) < 0 ||
		    ci.keeps_frame_pointer || !calls(&c, ci.entry, pd, pentry, pname))
			continue;
		size_t nt = ls_unwind_proc_targets(c.d->mod, ci.entry, 1, tails, 64);
		int tail = 0;
		for (size_t k = 0; k < nt && k < 64; k++)
			tail |= c.d == pd && tails[k] == pentry;
		if (tail)
			return -1; /* X may have tail-called P: its frame may be gone */
		if (found++ == 0) {
			*wx = c;
			*xentry = ci.entry;
		}
	}
	return found == 1 ? 0 : -1;
}

/* What to do between frame FR[I] (frameless at its address, in procedure
 * P at WI) and the next, FR[I + 1]; OUT[0] (and OUT[1]): the frames to
 * insert, innermost first. */
static int missing_frame(struct pl_attrib *a, pl_thread *t, const struct frame *fr, size_t i, const struct where *wi,
                         struct frame *out)
{
	struct where wj;
	uint64_t target;
	if (locate(a, t, fr[i + 1].addr, &wj) < 0)
		return REFUSE;
	ls_call_kind k = ls_unwind_call_before(wj.d->mod, wj.link, &target);
	if (k == LS_CALL_NONE)
		return CUT;
	if (k == LS_CALL_INDIRECT)
		return REFUSE; /* which procedure it called is not known */
	ls_unwind_proc_info pi, ti;
	ls_error err;
	const ls_scope *tp = ls_lookup_proc(wj.d->mod, target), *pp = ls_lookup_proc(wi->d->mod, wi->link);
	if (!tp || !pp || ls_unwind_proc(wi->d->mod, wi->link, &pi, &err) < 0)
		return REFUSE;
	struct where wt = wj;
	uint64_t tentry = target;
	if (ends_with(ls_scope_name(tp), "@plt") && resolve_plt(a, t, tp, &wt, &tentry) < 0)
		return REFUSE;
	if (ls_unwind_proc(wt.d->mod, tentry, &ti, &err) < 0)
		return REFUSE;
	if (wt.d == wi->d && ti.entry == pi.entry)
		return KEEP; /* the call site calls this very procedure: nothing is missing */
	if (!ti.keeps_frame_pointer)
		return REFUSE; /* BP was not T's frame: the chain is not what it seems */
	uint64_t rt = runtime_of(&wt, ti.entry);
	if (!rt)
		return REFUSE;
	out[0] = (struct frame){ rt, 0, 0, PL_HOW_INFERRED };
	if (calls(&wt, ti.entry, wi->d, pi.entry, ls_scope_name(pp)))
		return INSERT;
	/* T -> X -> P with X frameless too: only when X is the one callee of
	 * T that calls P (two candidates: nothing is inserted) */
	struct where wx;
	uint64_t xentry;
	if (one_way_through(a, t, &wt, ti.entry, wi->d, pi.entry, ls_scope_name(pp), &wx, &xentry) < 0)
		return REFUSE;
	uint64_t rx = runtime_of(&wx, xentry);
	if (!rx)
		return REFUSE;
	out[1] = out[0];
	out[0] = (struct frame){ rx, 0, 0, PL_HOW_INFERRED };
	return INSERT_TWO;
}

/* The procedures where a thread's stack begins: a chain may end there. */
static int outermost(const ls_module *m, uint64_t link)
{
	static const char *const names[] = { "_start", "__libc_start_main", "__libc_start_call_main", "start_thread",
	                                     "clone", "clone3", "__clone", "__clone3", "thread_start" };
	const ls_scope *p = ls_lookup_proc(m, link);
	const char *n = p ? ls_scope_name(p) : NULL;
	for (size_t i = 0; n && i < sizeof names / sizeof *names; i++)
		if (!strcmp(n, names[i]))
			return 1;
	return 0;
}

static void count_frameless(struct pl_attrib *a, const pl_dso *dso)
{
	if (dso->index >= a->nfp_frameless) {
		size_t n = dso->index + 16;
		a->fp_frameless = pl_xrealloc(a->fp_frameless, n * sizeof *a->fp_frameless);
		memset(a->fp_frameless + a->nfp_frameless, 0, (n - a->nfp_frameless) * sizeof *a->fp_frameless);
		a->nfp_frameless = n;
	}
	a->fp_frameless[dso->index]++;
}

/* Whether fp chains pass through the frame at W: from the CFI where it
 * says (a table lookup), else from the unwind recipes (an analysis of the
 * procedure); -1 if neither knows. */
static int chain_at(struct pl_attrib *a, const struct where *w)
{
	if (!w->map || !w->d)
		return -1;
	int chain = pl_unwind_cfi_fp_chain(a, w->map->dso, w->link);
	if (chain >= 0)
		return chain;
	ls_unwind_recipe r;
	ls_error err;
	return ls_unwind_recipe_at(w->d->mod, w->link, &r, &err) < 0 ? -1 : r.fp_chain != 0;
}

/* Whether the frame at runtime ADDR in map M keeps the fp chain there
 * (1), does not (0), or cannot be told (-1): memoized per (map, address),
 * since a recording visits the same few thousand addresses millions of
 * times. */
static int keeps_chain(struct pl_attrib *a, pl_thread *t, uint64_t addr, struct where *w)
{
	int located = locate(a, t, addr, w) == 0;
	const pl_map *m = located ? w->map : NULL;
	if (!a->fp_memo) {
		a->fp_memo_n = 1 << 16;
		a->fp_memo = pl_xcalloc(a->fp_memo_n, sizeof *a->fp_memo);
	}
	struct fp_slot *fp_memo = a->fp_memo;
	size_t fp_memo_n = a->fp_memo_n;
	uint64_t h = (addr * 0x9e3779b97f4a7c15ULL) ^ ((uintptr_t)m * 0xc2b2ae3d27d4eb4fULL);
	size_t i = (size_t)(h >> 20) & (fp_memo_n - 1);
	for (; fp_memo[i].map || fp_memo[i].addr; i = (i + 1) & (fp_memo_n - 1))
		if (fp_memo[i].map == m && fp_memo[i].addr == addr)
			return located ? fp_memo[i].chain : -1; /* 0 or 1 only with *W filled */
	int chain = located ? chain_at(a, w) : -1;
	if ((a->fp_memo_used + 1) * 2 > fp_memo_n) { /* full: start over */
		memset(fp_memo, 0, fp_memo_n * sizeof *fp_memo);
		a->fp_memo_used = 0;
		i = (size_t)(h >> 20) & (fp_memo_n - 1);
	}
	fp_memo[i] = (struct fp_slot){ m, addr ? addr : 1, (int8_t)chain };
	a->fp_memo_used++;
	return chain;
}

/* Where the user part of an fp chain turns to garbage: the first return
 * address that is in no map, or that follows no call (BP was a general
 * register somewhere below); NF if none. */
static size_t first_garbage(struct pl_attrib *a, pl_thread *t, const struct frame *fr, size_t nf)
{
	for (size_t i = 1; i < nf; i++) {
		/* (the first user frame after kernel ones is the user IP at the
		 * syscall or interrupt, not a return address) */
		if (fr[i].kernel || fr[i - 1].kernel || fr[i].how != PL_HOW_CFI || !fr[i].adjust)
			continue;
		if (!pl_find_map(a->rep->s, t, fr[i].addr, 0))
			return i;
		struct where w;
		if (locate(a, t, fr[i].addr, &w) == 0 && ls_unwind_call_before(w.d->mod, w.link, NULL) == LS_CALL_NONE)
			return i;
	}
	return nf;
}

size_t pl_fp_repair(struct pl_attrib *a, pl_thread *t, struct frame *fr, size_t nf)
{
	int skipped = 0, repaired = 0, refused = 0;
	size_t bad = first_garbage(a, t, fr, nf);
	if (bad < nf) {
		fr[bad].how = PL_HOW_BROKEN;
		nf = bad + 1;
		refused = 1;
	}
	for (size_t i = 0; i + 1 < nf; i++) {
		if (fr[i].kernel || fr[i + 1].kernel || fr[i].how != PL_HOW_CFI || fr[i + 1].how == PL_HOW_BROKEN)
			continue;
		struct where wi;
		if (keeps_chain(a, t, fr[i].addr - fr[i].adjust, &wi) != 0)
			continue;
		if (!skipped)
			count_frameless(a, wi.map->dso);
		skipped = 1;
		struct frame ins[2];
		int what = missing_frame(a, t, fr, i, &wi, ins);
		switch (what) {
		case INSERT:
		case INSERT_TWO: {
			size_t k = what == INSERT ? 1 : 2;
			if (nf + k > PL_MAX_FRAMES)
				break;
			memmove(fr + i + 1 + k, fr + i + 1, (nf - i - 1) * sizeof *fr);
			memcpy(fr + i + 1, ins, k * sizeof *fr);
			nf += k;
			i += k; /* the inserted frames' caller is the next one */
			repaired = 1;
			break;
		}
		case REFUSE:
			refused = 1;
			break;
		case CUT:
			fr[i + 1].how = PL_HOW_BROKEN;
			nf = i + 2;
			refused = 1;
			break;
		default:
			break;
		}
	}
	/* a chain of the leaf alone whose leaf keeps no frame pointer: BP was
	 * not a frame (a library used it as a register) and the kernel gave
	 * up - the callers are unknown */
	size_t user = 0, last = 0;
	for (size_t i = 0; i < nf; i++)
		if (!fr[i].kernel)
			user++, last = i;
	if (user == 1) {
		struct where w;
		if (keeps_chain(a, t, fr[last].addr - fr[last].adjust, &w) == 0 && !outermost(w.d->mod, w.link)) {
			if (!skipped)
				count_frameless(a, w.map->dso);
			skipped = refused = 1;
		}
	}
	a->fp_samples++;
	a->fp_skipped += skipped;
	a->fp_repaired += skipped && repaired && !refused;
	a->fp_broken += refused;
	return nf;
}

void pl_fp_warn(struct pl_attrib *a)
{
	if (!a->fp_broken || !a->fp_samples)
		return;
	/* under 1%: the dynamic loader's first instructions, a frameless
	 * instant here and there - the tree is right; -v says it anyway */
	if (!a->rep->opt->verbose && a->fp_broken * 100 < a->fp_samples)
		return;
	char names[256] = "";
	size_t len = 0;
	pl_session *s = a->rep->s;
	for (int k = 0; k < 3; k++) { /* the three binaries most often frameless */
		size_t best = SIZE_MAX;
		for (size_t i = 0; i < a->nfp_frameless; i++)
			if (a->fp_frameless[i] && (best == SIZE_MAX || a->fp_frameless[i] > a->fp_frameless[best]))
				best = i;
		if (best == SIZE_MAX || best >= pl_session_ndsos(s))
			break;
		len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", k ? ", " : "",
		                        pl_session_dso(s, best)->short_name);
		a->fp_frameless[best] = 0;
		if (len >= sizeof names)
			break;
	}
	fprintf(stderr,
	        "perf-loops: warning: %s: %.1f%% of the samples (%llu of %llu) have frame-pointer call chains that skip "
	        "frames of code without frame pointers (%s) and could not be repaired; %llu others were (their inserted "
	        "frames are marked [inferred]).  The callers in the tree are incomplete for them; Self, lines and Own are "
	        "not.  To record complete chains: perf loops record -- COMMAND (it chooses --call-graph=dwarf for such "
	        "code), or perf record --call-graph=dwarf\n",
	        pd_name(a->rep->r), 100.0 * a->fp_broken / a->fp_samples, (unsigned long long)a->fp_broken,
	        (unsigned long long)a->fp_samples, names[0] ? names : "?", (unsigned long long)a->fp_repaired);
}

/* ---- the check against the CFI (tests) -------------------------------------- */

static const char *frame_name(struct pl_attrib *a, pl_thread *t, const struct frame *f)
{
	struct where w;
	const ls_scope *p;
	if (f->how == PL_HOW_BROKEN)
		return "[broken]";
	if (locate(a, t, f->addr - f->adjust, &w) < 0 || !(p = ls_lookup_proc(w.d->mod, w.link)) || !ls_scope_name(p))
		return "?";
	return ls_scope_name(p);
}

static void print_chain(FILE *out, struct pl_attrib *a, pl_thread *t, const struct frame *fr, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!fr[i].kernel)
			fprintf(out, "%s%s%s", i ? ";" : "", frame_name(a, t, &fr[i]), fr[i].how == PL_HOW_INFERRED ? "*" : "");
}

/* The frame-pointer chain the kernel would have recorded for SMP: IP, then
 * the return addresses of the BP chain, read from the stack copy. */
static size_t walk_bp(const pd_sample *smp, uint64_t ip, uint64_t sp, uint64_t bp, struct frame *fr, size_t cap)
{
	uint64_t size = smp->stack_dyn_size ? smp->stack_dyn_size : smp->stack_size;
	size_t n = 0;
	fr[n++] = (struct frame){ ip, 0, 0, PL_HOW_CFI };
	while (n < cap && bp >= sp && bp - sp + 16 <= size) {
		uint64_t next, ra;
		memcpy(&next, smp->stack_user + (bp - sp), 8);
		memcpy(&ra, smp->stack_user + (bp - sp) + 8, 8);
		if (!ra)
			break;
		fr[n++] = (struct frame){ ra, 0, 1, PL_HOW_CFI };
		bp = next;
	}
	return n;
}

void pl_fp_check(struct pl_attrib *a, pl_thread *t, const pd_sample *smp, const struct frame *dw, size_t ndw)
{
	static FILE *out;
	if (!out) {
		const char *path = getenv("PERF_LOOPS_FP_CHECK");
		if (!path || !(out = fopen(path, "w")))
			return;
	}
	uint64_t v[3];
	const int regs[3] = { 8, 7, 6 }; /* perf's IP, SP, BP */
	for (int k = 0; k < 3; k++) {
		if (!(smp->regs_mask & (1ULL << regs[k])))
			return;
		v[k] = smp->regs_user[__builtin_popcountll(smp->regs_mask & ((1ULL << regs[k]) - 1))];
	}
	struct frame fr[PL_MAX_FRAMES];
	size_t n = walk_bp(smp, v[0], v[1], v[2], fr, 256);
	uint64_t skipped = a->fp_skipped, broken = a->fp_broken;
	n = pl_fp_repair(a, t, fr, n);
	fprintf(out, "%s\t%s\t", a->fp_skipped > skipped ? "skipped" : "whole", a->fp_broken > broken ? "refused" : "ok");
	print_chain(out, a, t, dw, ndw);
	fputc('\t', out);
	print_chain(out, a, t, fr, n);
	fputc('\n', out);
	fflush(out);
}
