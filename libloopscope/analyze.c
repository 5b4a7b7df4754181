/* analyze.c - the per-procedure analysis: each procedure once, on demand
 * or all at once, and the tree above the procedures.
 *
 * A procedure is analyzed when something asks for it: a lookup of an
 * address it owns (ls_analysis_get, on the caller's thread), a batch of
 * addresses (ls_analyze_addrs), or everything (ls_analyze_all, what
 * ls_module_open does without ls_options.on_demand).  Its scope comes from
 * the cache entry when the entry holds its record, else from the
 * per-procedure stages (pipeline.c's ls_pipeline_proc: CFG, loops,
 * structure), which need the DWARF and symbol stages first (run once, on
 * the first such procedure).  What a procedure's analysis gives depends
 * on nothing but the module's inputs -- never on which procedures were
 * analyzed before it: the noreturn facts it reads are the whole fixpoint's
 * either way (cfg/noreturn.c) -- so a lookup answers the same on demand,
 * from the cache or after the whole analysis.
 *
 * Publication: a procedure's result (struct ls_proc_done) is made under
 * the module's analysis lock, then published with a release store into
 * done[i]; a lookup reads done[i] with an acquire load and, when it is
 * there, takes no lock.  A result never changes after: its scopes are the
 * module's until it closes.  Its proc scope's parent is its file's scope
 * from the start, but the file scopes and the root are linked, and their
 * ranges made, only when every procedure is there (ls_analyze_all: the
 * whole tree, as the outputs and ls_module_root see it).
 *
 * The batches run the stages on N threads, each with its own decoder and
 * arena; the one-procedure analyses run on the caller's thread under the
 * lock.  DWARF, the line map and the procedure table are read-only while
 * procedures are analyzed.
 */
#include "analyze.h"
#include "cache/cache.h"
#include "cfg/cfg.h"
#include "loops/source.h"
#include "pipeline.h"
#include "structure/lookup.h"
#include "structure/structure.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void keep_error(struct ls_analysis *an, const ls_error *err);

/* ---- file scopes, by the file's name ----------------------------------------- */

struct ls_file_scopes {
	struct ls_scope **slots;
	size_t nslots, count;
	struct ls_scope *none; /* the procedures without a file */
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The file scope of FILE, made on first use (not yet linked under the
 * root: assemble does that).  Names are compared by content: a procedure
 * read from the cache has its own copy of the string. */
static struct ls_scope *file_scope(struct ls_analysis *an, const char *file)
{
	struct ls_file_scopes *fs = an->files;
	if (!file) {
		if (!fs->none) {
			fs->none = ls_scope_new(&an->arena, LS_SCOPE_FILE, NULL);
			fs->none->parent = an->root;
		}
		return fs->none;
	}
	if ((fs->count + 1) * 2 > fs->nslots) {
		size_t n = fs->nslots ? fs->nslots * 2 : 64;
		struct ls_scope **slots = ls_xcalloc(n, sizeof *slots);
		for (size_t i = 0; i < fs->nslots; i++) {
			if (!fs->slots[i])
				continue;
			size_t j = name_hash(fs->slots[i]->file) & (n - 1);
			while (slots[j])
				j = (j + 1) & (n - 1);
			slots[j] = fs->slots[i];
		}
		free(fs->slots);
		fs->slots = slots;
		fs->nslots = n;
	}
	size_t j = name_hash(file) & (fs->nslots - 1);
	for (; fs->slots[j]; j = (j + 1) & (fs->nslots - 1))
		if (strcmp(fs->slots[j]->file, file) == 0)
			return fs->slots[j];
	struct ls_scope *f = ls_scope_new(&an->arena, LS_SCOPE_FILE, NULL);
	f->file = file;
	f->parent = an->root;
	fs->slots[j] = f;
	fs->count++;
	return f;
}

/* ---- the directory ----------------------------------------------------------- */

bool ls_analysis_owner(const ls_module *m, uint64_t addr, size_t *proc)
{
	/* on demand without a cache entry: the first lookup makes the
	 * directory (callers under the lock made it before: analyze_locked) */
	if (!__atomic_load_n(&m->an->dir_ready, __ATOMIC_ACQUIRE))
		ls_analysis_want_indexes(m);
	const struct ls_directory *d = &m->an->dir;
	size_t i = LS_FIRST_ABOVE(d->index, d->nindex, hi, addr);
	if (i >= d->nindex || d->index[i].lo > addr)
		return false;
	*proc = d->index[i].proc;
	return true;
}

static void directory_from_procs(ls_module *m)
{
	struct ls_analysis *an = m->an;
	free(an->own_entries);
	an->own_entries = ls_xmalloc((m->procs.nprocs + 1) * sizeof *an->own_entries);
	for (size_t i = 0; i < m->procs.nprocs; i++)
		an->own_entries[i] = m->procs.procs[i].entry;
	an->dir = (struct ls_directory){ m->procs.nprocs, an->own_entries, m->procs.index, m->procs.nindex };
}

/* Whether the procedure table made now is the one the cache entry's
 * directory was made from (it must be: same binary, debug file and
 * build of the analysis). */
static bool directory_matches(const ls_module *m, const struct ls_directory *d)
{
	const struct ls_procs *P = &m->procs;
	if (d->nprocs != P->nprocs || d->nindex != P->nindex)
		return false;
	for (size_t i = 0; i < P->nprocs; i++)
		if (d->entries[i] != P->procs[i].entry)
			return false;
	for (size_t i = 0; i < P->nindex; i++)
		if (d->index[i].lo != P->index[i].lo || d->index[i].hi != P->index[i].hi ||
		    d->index[i].proc != P->index[i].proc)
			return false;
	return true;
}

/* Under the lock.  The DWARF and symbol stages, once; then the facts the
 * cache kept, for the noreturn analysis. */
int ls_analysis_indexes(ls_module *m, ls_error *err)
{
	struct ls_analysis *an = m->an;
	if (an->indexes)
		return 0;
	if (an->broken) {
		ls_set_error(err, LS_ERR_NOMEM, "%s: an earlier analysis failed", m->path);
		return -1;
	}
	an->broken = true; /* until they are all there */
	ls_error dwarf_err = { LS_OK, "" };
	if (ls_pipeline_indexes(m, err ? err : &dwarf_err) < 0)
		return -1;
	if (!an->dir.entries) {
		directory_from_procs(m);
		an->done = ls_xcalloc(an->dir.nprocs + 1, sizeof *an->done);
		__atomic_store_n(&an->dir_ready, true, __ATOMIC_RELEASE);
	} else if (!directory_matches(m, &an->dir)) {
		/* Only an entry forged with a right checksum gets here (the same
		 * binary, debug file and analysis make the same table). */
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: its cache entry %s names other procedures than it has", m->path,
		             ls_cache_path(m));
		ls_cache_close(m);
		return -1;
	}
	ls_cache_seed_facts(m);
	/* opt.read_sources 0: loop lines from DWARF alone (to measure the
	 * DWARF rules, or to ignore a source tree that does not match).
	 * opt.source_path: where to look for sources that are not at the
	 * paths DWARF names (a distribution's prefix-mapped build). */
	m->sources = m->opt.read_sources ? ls_source_cache_new(&m->opt, m->opt.source_path) : NULL;
	__atomic_store_n(&an->indexes, true, __ATOMIC_RELEASE); /* ls_module_has_dwarf reads it */
	an->broken = false;
	return 0;
}

void ls_analysis_want_indexes(const ls_module *cm)
{
	ls_module *m = (ls_module *)cm; /* the analysis is logically const */
	struct ls_analysis *an = m->an;
	if (!an || !m->opt.on_demand)
		return;
	pthread_mutex_lock(&an->lock);
	if (!an->indexes && !an->complete) {
		ls_error err = { LS_OK, "" };
		struct ls_oom_guard g;
		ls_oom_push(&g);
		if (setjmp(g.env)) {
			ls_guard_error(m, m->path, &err);
			keep_error(an, &err);
			pthread_mutex_unlock(&an->lock);
			return;
		}
		if (ls_analysis_indexes(m, &err) < 0)
			keep_error(an, &err);
		ls_oom_pop(&g);
	}
	pthread_mutex_unlock(&an->lock);
}

int ls_analysis_init(ls_module *m, ls_error *err)
{
	struct ls_analysis *an = ls_xcalloc(1, sizeof *an);
	pthread_mutex_init(&an->lock, NULL);
	m->an = an;
	an->files = ls_xcalloc(1, sizeof *an->files);
	an->root = ls_scope_new(&an->arena, LS_SCOPE_MODULE, NULL);
	an->root->name = m->path;
	const char *debug_lines = getenv("LOOPSCOPE_DEBUG_LOOP_LINES");
	m->debug_loop_lines = debug_lines != NULL;
	m->debug_loop_lines_level = debug_lines ? atoi(debug_lines) : 0;
	m->facts_on_demand = m->opt.on_demand;
	if (m->cache && ls_cache_directory(m, &an->dir, &an->own_entries, &an->own_index)) {
		an->done = ls_xcalloc(an->dir.nprocs + 1, sizeof *an->done);
		an->dir_ready = true;
		return 0;
	}
	ls_cache_close(m);
	/* on demand: the stages when the directory is first needed
	 * (ls_analysis_owner, analyze_locked, ls_module_procedures) */
	return m->opt.on_demand ? 0 : ls_analysis_indexes(m, err);
}

void ls_analysis_free(ls_module *m)
{
	struct ls_analysis *an = m->an;
	if (!an)
		return;
	if (ls_timing() && m->opt.on_demand)
		fprintf(stderr, "loopscope: timing: %-12s %8.3f s  %s (%zu of %zu procedures: %zu analyzed, %zu from the cache)\n",
		        "on demand", an->demand_seconds, m->path, an->nanalyzed + an->nloaded, an->dir.nprocs,
		        an->nanalyzed, an->nloaded);
	pthread_mutex_destroy(&an->lock);
	if (an->dec)
		ls_decoder_free(an->dec);
	for (size_t i = 0; i < an->nworker_arenas; i++)
		ls_arena_free(&an->worker_arenas[i]);
	free(an->worker_arenas);
	ls_arena_free(&an->arena);
	free(an->done);
	free(an->own_entries);
	free(an->own_index);
	if (an->files)
		free(an->files->slots);
	free(an->files);
	free(an->frags);
	ls_lookup_index_free(&an->whole);
	free(an);
	m->an = NULL;
}

/* ---- one procedure ------------------------------------------------------------ */

/* A procedure without a statement: analyzed, not in the tree. */
static struct ls_proc_done no_statement;

static void collect_segs(const struct ls_scope *s, struct ls_stmt_seg *out, size_t *n)
{
	for (const struct ls_scope *c = s; c;) {
		if (c->kind == LS_SCOPE_STMT)
			for (size_t i = 0; i < c->nranges; i++)
				out[(*n)++] = (struct ls_stmt_seg){ c->ranges[i].lo, c->ranges[i].hi, c };
		if (c->first_child) {
			c = c->first_child;
			continue;
		}
		while (c != s && !c->next_sibling)
			c = c->parent;
		c = c == s ? NULL : c->next_sibling;
	}
}

/* The result of SCOPE (a procedure's, in arena A): its statements' ranges
 * by address (lookup.c's order and clipping). */
static struct ls_proc_done *make_done(struct ls_arena *a, struct ls_scope *scope)
{
	if (!scope || !scope->first_child)
		return &no_statement;
	struct ls_proc_done *d = ls_arena_alloc(a, sizeof *d);
	d->scope = scope;
	size_t n = 0;
	for (const struct ls_scope *c = scope; c;) {
		if (c->kind == LS_SCOPE_STMT)
			n += c->nranges;
		if (c->first_child) {
			c = c->first_child;
			continue;
		}
		while (c != scope && !c->next_sibling)
			c = c->parent;
		c = c == scope ? NULL : c->next_sibling;
	}
	d->segs = ls_arena_alloc(a, (n + 1) * sizeof *d->segs);
	d->nsegs = 0;
	collect_segs(scope, d->segs, &d->nsegs);
	d->nsegs = ls_lookup_segs_sort(d->segs, d->nsegs);
	return d;
}

/* Under the lock: D is procedure I's, for everyone. */
static void publish(struct ls_analysis *an, size_t i, struct ls_proc_done *d)
{
	if (d->scope)
		d->scope->parent = file_scope(an, d->scope->file);
	__atomic_store_n(&an->done[i], d, __ATOMIC_RELEASE);
}

/* Under the lock: procedure I from the cache entry, if it holds it. */
static bool load_cached(ls_module *m, size_t i)
{
	struct ls_analysis *an = m->an;
	struct ls_proc_done loaded = { 0 };
	int r = m->cache ? ls_cache_load_proc(m, i, &an->arena, &loaded) : 0;
	if (r == 0)
		return false;
	struct ls_proc_done *d = &no_statement;
	an->nloaded++;
	if (r > 0 && loaded.scope) {
		d = ls_arena_alloc(&an->arena, sizeof *d);
		*d = loaded;
		d->from_cache = true;
	}
	publish(an, i, d);
	return true;
}

static struct ls_decoder *one_decoder(ls_module *m)
{
	struct ls_analysis *an = m->an;
	if (!an->dec_made) {
		an->dec = ls_decoder_new(m->ehdr.e_machine);
		an->dec_made = true;
	}
	return an->dec;
}

/* Under the lock and a guard: procedure I, from the cache or analyzed. */
static int ensure_locked(ls_module *m, size_t i, ls_error *err)
{
	struct ls_analysis *an = m->an;
	if (an->done[i] || load_cached(m, i))
		return 0;
	if (ls_analysis_indexes(m, err) < 0)
		return -1;
	ls_pipeline_want_lines(m, &(uint32_t){ (uint32_t)i }, 1);
	struct ls_scope *s = ls_pipeline_proc(m, &m->procs.procs[i], one_decoder(m), &an->arena);
	an->nanalyzed++;
	publish(an, i, make_done(&an->arena, s));
	return 0;
}

/* Keeps the first failure of an analysis on demand (ls_module_error). */
static void keep_error(struct ls_analysis *an, const ls_error *err)
{
	if (an->error.code == LS_OK)
		an->error = *err;
}

/* Under the lock: whether a lookup's analysis should report progress
 * now (about every 0.1 s, as the stages' meter does). */
static bool progress_due(struct ls_analysis *an)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	if (an->progress_last && t - an->progress_last < 0.1)
		return false;
	an->progress_last = t;
	return true;
}

const struct ls_proc_done *ls_analysis_get(const ls_module *cm, size_t i)
{
	ls_module *m = (ls_module *)cm; /* the analysis is logically const */
	struct ls_analysis *an = m->an;
	if (i >= an->dir.nprocs)
		return NULL;
	struct ls_proc_done *d = __atomic_load_n(&an->done[i], __ATOMIC_ACQUIRE);
	if (d)
		return d;
	pthread_mutex_lock(&an->lock);
	double t0 = ls_timing() ? ls_stage_clock() : 0;
	ls_error err = { LS_OK, "" };
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env)) {
		ls_guard_error(m, m->path, &err);
		keep_error(an, &err);
		pthread_mutex_unlock(&an->lock);
		return NULL;
	}
	if (ensure_locked(m, i, &err) < 0)
		keep_error(an, &err);
	ls_oom_pop(&g);
	if (t0)
		an->demand_seconds += ls_stage_clock() - t0;
	size_t ndone = an->nanalyzed + an->nloaded;
	bool report = m->opt.on_demand && m->opt.progress_fn && progress_due(an);
	pthread_mutex_unlock(&an->lock);
	/* a front end's meter (perf loops' first report): the procedures
	 * there so far, of all; a lookup cannot be stopped, so its answer
	 * is not asked for */
	if (report)
		(void)m->opt.progress_fn(m->opt.progress_ctx, ndone, an->dir.nprocs);
	return __atomic_load_n(&an->done[i], __ATOMIC_ACQUIRE);
}

/* ---- many procedures, on N threads -------------------------------------------- */

struct batch {
	ls_module *m;
	const uint32_t *procs;      /* to analyze */
	size_t nprocs;
	struct ls_scope **results;  /* per entry of procs */
	atomic_size_t next;
	struct ls_progress progress;
};

struct worker {
	struct batch *b;
	struct ls_arena *arena;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct batch *b = w->b;
	ls_module *m = b->m;
	struct ls_decoder *dec = ls_decoder_new(m->ehdr.e_machine);
	while (!ls_progress_stopped(&b->progress)) {
		size_t k = atomic_fetch_add(&b->next, 1);
		if (k >= b->nprocs)
			break;
		b->results[k] = ls_pipeline_proc(m, &m->procs.procs[b->procs[k]], dec, w->arena);
		ls_progress_add(&b->progress, 1);
	}
	if (dec)
		ls_decoder_free(dec);
	return NULL;
}

/* Under the lock and a guard: the N procedures PROCS (not yet analyzed,
 * not in the cache) through the stages on N threads, each published. */
static int run_batch(ls_module *m, const uint32_t *procs, size_t n, ls_error *err)
{
	struct ls_analysis *an = m->an;
	if (n == 0)
		return 0;
	if (ls_analysis_indexes(m, err) < 0)
		return -1;
	ls_pipeline_want_lines(m, procs, n); /* read-only once the workers run */
	ls_procs_resolve_names(m);            /* so are the names (they intern) */
	struct batch b = { .m = m, .procs = procs, .nprocs = n };
	b.results = ls_xcalloc(n + 1, sizeof *b.results);
	atomic_init(&b.next, 0);
	int nthreads = ls_worker_count(&m->opt, n, 0);
	ls_progress_start(&b.progress, m->opt.progress && !m->opt.progress_fn, "loopscope: analyzing procedures", n);
	b.progress.fn = m->opt.progress_fn;
	b.progress.ctx = m->opt.progress_ctx;
	/* the arenas live with the module: the scopes are in them */
	an->worker_arenas = ls_grow(an->worker_arenas, &an->cap_worker_arenas, an->nworker_arenas + nthreads,
	                            sizeof *an->worker_arenas);
	struct ls_arena *arenas = &an->worker_arenas[an->nworker_arenas];
	memset(arenas, 0, nthreads * sizeof *arenas);
	an->nworker_arenas += nthreads;
	struct worker *workers = ls_xcalloc(nthreads, sizeof *workers);
	for (int t = 0; t < nthreads; t++)
		workers[t] = (struct worker){ &b, &arenas[t] };
	ls_run_workers(nthreads, worker_main, workers, sizeof *workers);
	bool stopped = ls_progress_stopped(&b.progress);
	ls_progress_end(&b.progress);
	free(workers);
	/* what was done is kept, interrupted or not */
	for (size_t k = 0; k < n; k++) {
		if (stopped && !b.results[k])
			continue;
		an->nanalyzed++;
		publish(an, procs[k], make_done(&an->arena, b.results[k]));
	}
	free(b.results);
	if (stopped) {
		ls_set_error(err, LS_ERR_INTERRUPTED, "%s: analysis interrupted", m->path);
		return -1;
	}
	return 0;
}

/* Under the lock and a guard: the procedures of PROCS (N, may repeat)
 * that are not yet there, from the cache or the stages. */
static int ensure_many(ls_module *m, uint32_t *procs, size_t n, ls_error *err)
{
	struct ls_analysis *an = m->an;
	uint8_t *taken = ls_xcalloc(an->dir.nprocs / 8 + 1, 1); /* a repeat is analyzed once */
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t p = procs[i];
		if ((taken[p / 8] & (1u << (p % 8))) || an->done[p] || load_cached(m, p))
			continue;
		taken[p / 8] |= (uint8_t)(1u << (p % 8));
		procs[k++] = p;
	}
	free(taken);
	return run_batch(m, procs, k, err);
}

static int analyze_locked(ls_module *m, const uint64_t *addrs, size_t n, bool all, ls_error *err)
{
	struct ls_analysis *an = m->an;
	if (!an->dir_ready && ls_analysis_indexes(m, err) < 0)
		return -1; /* (ls_analysis_owner below must not lock) */
	size_t np = an->dir.nprocs;
	uint32_t *procs = ls_xmalloc(((all ? np : n) + 1) * sizeof *procs);
	size_t k = 0;
	if (all) {
		for (size_t i = 0; i < np; i++)
			procs[k++] = (uint32_t)i;
	} else {
		for (size_t i = 0; i < n; i++) {
			size_t p;
			if (ls_analysis_owner(m, addrs[i], &p) && !an->done[p])
				procs[k++] = (uint32_t)p;
			else if (!ls_analysis_owner(m, addrs[i], &p) && ls_analysis_fragment_section(m, addrs[i]))
				all = true;
		}
		if (all) { /* a fragment's statement may be any procedure's */
			free(procs);
			return analyze_locked(m, NULL, 0, true, err);
		}
	}
	int rc = ensure_many(m, procs, k, err);
	free(procs);
	return rc;
}

static void assemble(ls_module *m);
static void report_missing_sources(const ls_module *m);

/* Under a guard: ADDRS' procedures, or all and the tree (ALL). */
static int analyze_guarded(ls_module *m, const uint64_t *addrs, size_t n, bool all, ls_error *err)
{
	struct ls_analysis *an = m->an;
	pthread_mutex_lock(&an->lock);
	double t0 = ls_timing() ? ls_stage_clock() : 0;
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env)) {
		ls_guard_error(m, m->path, err);
		pthread_mutex_unlock(&an->lock);
		return -1;
	}
	int rc = 0;
	if (!an->complete) {
		rc = analyze_locked(m, addrs, n, all, err);
		if (rc == 0 && all) {
			assemble(m);
			report_missing_sources(m); /* analyzed here or read from the cache */
		}
	}
	ls_oom_pop(&g);
	if (t0)
		an->demand_seconds += ls_stage_clock() - t0;
	pthread_mutex_unlock(&an->lock);
	return rc;
}

int ls_analyze_addrs(ls_module *m, const uint64_t *addrs, size_t n, ls_error *err)
{
	return analyze_guarded(m, addrs, n, false, err);
}

int ls_analyze_all(ls_module *m, ls_error *err)
{
	return analyze_guarded(m, NULL, 0, true, err);
}

/* ---- the whole tree ------------------------------------------------------------ */

/* Procedures grouped under one file scope per source file, in file-name
 * order, procedures in address order within a file. */
struct proc_order {
	struct ls_scope *proc;
	size_t index;
};

static int cmp_proc_order(const void *a, const void *b)
{
	const struct proc_order *x = a, *y = b;
	const char *fx = x->proc->file, *fy = y->proc->file;
	if (fx != fy) {
		if (!fx)
			return 1;
		if (!fy)
			return -1;
		int c = strcmp(fx, fy);
		if (c)
			return c;
	}
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The statements outside every procedure's addresses: code that
 * procedures jumped into (each one that did has it), clipped as lookup.c
 * clips overlaps. */
static void index_fragments(ls_module *m)
{
	struct ls_analysis *an = m->an;
	size_t n = 0, cap = 0;
	struct ls_stmt_seg *v = NULL;
	for (size_t i = 0; i < an->dir.nprocs; i++) {
		const struct ls_proc_done *d = an->done[i];
		for (size_t k = 0; d && k < d->nsegs; k++) {
			size_t owner;
			if (ls_analysis_owner(m, d->segs[k].lo, &owner))
				continue;
			v = ls_grow(v, &cap, n + 1, sizeof *v);
			v[n++] = d->segs[k];
		}
	}
	an->frags = v;
	an->nfrags = ls_lookup_segs_sort(v, n);
}

/* Under the lock, every procedure there: the file scopes and the root. */
static void assemble(ls_module *m)
{
	struct ls_analysis *an = m->an;
	struct ls_scope *root = an->root;
	size_t np = an->dir.nprocs, n = 0;
	struct proc_order *procs = ls_xmalloc((np + 1) * sizeof *procs);
	for (size_t i = 0; i < np; i++)
		if (an->done[i] && an->done[i]->scope)
			procs[n] = (struct proc_order){ an->done[i]->scope, i }, n++;
	qsort(procs, n, sizeof *procs, cmp_proc_order);
	struct ls_scope *file = NULL;
	for (size_t i = 0; i < n; i++) {
		struct ls_scope *f = procs[i].proc->parent;
		if (f != file) {
			file = f;
			ls_scope_add_child(root, file);
		}
		ls_scope_add_child(file, procs[i].proc);
	}
	for (struct ls_scope *f = root->first_child; f; f = f->next_sibling) {
		for (struct ls_scope *p = f->first_child; p; p = p->next_sibling)
			for (size_t r = 0; r < p->nranges; r++)
				ls_scope_add_range(&an->arena, f, p->ranges[r].lo, p->ranges[r].hi);
		ls_scope_normalize_ranges(f);
		for (size_t r = 0; r < f->nranges; r++)
			ls_scope_add_range(&an->arena, root, f->ranges[r].lo, f->ranges[r].hi);
	}
	ls_scope_normalize_ranges(root);
	free(procs);
	index_fragments(m);
	if (!m->opt.on_demand) {
		ls_error err;
		ls_lookup_index_build(&an->whole, root, &err);
	}
	m->root = root;
	__atomic_store_n(&an->complete, true, __ATOMIC_RELEASE);
}

/* ---- fragments ----------------------------------------------------------------- */

bool ls_analysis_fragment_section(const ls_module *m, uint64_t addr)
{
	const struct ls_text *t = ls_text_find(m, addr);
	return t && ls_cfg_fragment_section(t->name);
}

const struct ls_stmt_seg *ls_analysis_fragments(const ls_module *cm, size_t *n)
{
	ls_module *m = (ls_module *)cm;
	struct ls_analysis *an = m->an;
	if (!__atomic_load_n(&an->complete, __ATOMIC_ACQUIRE)) {
		ls_error err = { LS_OK, "" };
		if (ls_analyze_all(m, &err) < 0) {
			pthread_mutex_lock(&an->lock);
			keep_error(an, &err);
			pthread_mutex_unlock(&an->lock);
		}
	}
	pthread_mutex_lock(&an->lock);
	const struct ls_stmt_seg *v = an->complete ? an->frags : NULL;
	*n = an->complete ? an->nfrags : 0;
	pthread_mutex_unlock(&an->lock);
	return v;
}

/* ---- what the analysis read --------------------------------------------------- */

static int cmp_probe(const void *a, const void *b)
{
	return strcmp(((const struct ls_source_probe *)a)->path, ((const struct ls_source_probe *)b)->path);
}

void ls_analysis_keep_probes(ls_module *m)
{
	size_t n;
	struct ls_source_probe *fresh = m->sources ? ls_source_cache_take_probes(m->sources, &n) : NULL;
	if (!fresh)
		return;
	size_t total = m->nsource_probes + n;
	struct ls_source_probe *p = ls_xmalloc((total + 1) * sizeof *p);
	if (m->nsource_probes)
		memcpy(p, m->source_probes, m->nsource_probes * sizeof *p);
	if (n)
		memcpy(p + m->nsource_probes, fresh, n * sizeof *p);
	free(m->source_probes);
	free(fresh);
	if (total > 1)
		qsort(p, total, sizeof *p, cmp_probe);
	/* each path once (several threads may have looked for one file under
	 * several names; a later take may see a file again) */
	size_t k = 0;
	for (size_t i = 0; i < total; i++) {
		if (k && !strcmp(p[k - 1].path, p[i].path)) {
			free(p[i].path);
			continue;
		}
		p[k++] = p[i];
	}
	m->source_probes = p;
	m->nsource_probes = k;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The source files the loop lines did not find, each once, sorted: those
 * of the procedures analyzed here and those the cache entry says the run
 * that stored it did not find (its records' lines came from DWARF alone
 * too).  The caller frees the array, not the names. */
static const char **missing_sources(const ls_module *m, size_t *n)
{
	size_t nfresh = ls_source_missing(m->sources, NULL, 0), nkept = ls_cache_missing_sources(m, NULL, 0);
	const char **names = ls_xmalloc((nfresh + nkept + 1) * sizeof *names);
	nfresh = ls_source_missing(m->sources, names, nfresh);
	nkept = ls_cache_missing_sources(m, names + nfresh, nkept);
	size_t total = nfresh + nkept, k = 0;
	if (total > 1)
		qsort(names, total, sizeof *names, cmp_name);
	for (size_t i = 0; i < total; i++)
		if (!k || strcmp(names[k - 1], names[i]) != 0)
			names[k++] = names[i];
	*n = k;
	return names;
}

/* The loop-line rules read the loops' source files; when some cannot be
 * found, the lines of those loops come from DWARF alone, about 1 in 12 of
 * them guessed or wrong (tests/corpus-lines.py): say so once, and with -v
 * which files, and how to point at them.  Said on a cache hit as on the
 * run that stored the entry (which keeps the names). */
static void report_missing_sources(const ls_module *m)
{
	enum { SHOWN = 3, LISTED = 50 };
	size_t n;
	const char **names = missing_sources(m, &n);
	if (!n) {
		free(names);
		return;
	}
	char some[600] = "";
	size_t len = 0;
	for (size_t i = 0; i < n && i < SHOWN && len < sizeof some; i++)
		len += (size_t)snprintf(some + len, sizeof some - len, "%s%s", i ? ", " : "", names[i]);
	ls_warn(&m->opt, "%s: %zu source file%s of its loops not found (%s%s): their loop lines come from DWARF "
	        "alone; LOOPSCOPE_SOURCE_PATH=DIR[:DIR...] names where they are", m->path, n, n == 1 ? "" : "s", some,
	        n > SHOWN ? ", ..." : "");
	for (size_t i = 0; i < n && i < LISTED; i++)
		ls_note(&m->opt, "%s: source not found: %s", m->path, names[i]);
	if (n > LISTED)
		ls_note(&m->opt, "%s: ... and %zu more", m->path, n - LISTED);
	free(names);
}

/* ---- a tree made by hand --------------------------------------------------------- */

/* The procedures of a tree made by hand, under the root or under its
 * file scopes: how many; into BY (if not NULL), their ranges counted into
 * *NRANGES. */
static size_t hand_procs(struct ls_scope *root, struct ls_scope **by, size_t *nranges)
{
	size_t n = 0;
	for (struct ls_scope *f = root ? root->first_child : NULL; f; f = f->next_sibling) {
		struct ls_scope *p = f->kind == LS_SCOPE_PROC ? f : f->first_child;
		for (; p; p = f->kind == LS_SCOPE_PROC ? NULL : p->next_sibling) {
			if (p->kind != LS_SCOPE_PROC)
				continue;
			if (by) {
				by[n] = p;
				*nranges += p->nranges;
			}
			n++;
		}
	}
	return n;
}

void ls_analysis_adopt_tree(ls_module *m)
{
	struct ls_analysis *an = ls_xcalloc(1, sizeof *an);
	pthread_mutex_init(&an->lock, NULL);
	m->an = an;
	an->files = ls_xcalloc(1, sizeof *an->files);
	an->root = m->root;
	size_t n = hand_procs(m->root, NULL, NULL);
	an->own_entries = ls_xmalloc((n + 1) * sizeof *an->own_entries);
	an->done = ls_xcalloc(n + 1, sizeof *an->done);
	struct ls_scope **by = ls_xmalloc((n + 1) * sizeof *by);
	size_t nranges = 0;
	hand_procs(m->root, by, &nranges);
	/* by entry (its lowest address); the index: every range of each */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && ls_scope_low(by[j]) < ls_scope_low(by[j - 1]); j--) {
			struct ls_scope *t = by[j];
			by[j] = by[j - 1];
			by[j - 1] = t;
		}
	an->own_index = ls_xmalloc((nranges + 1) * sizeof *an->own_index);
	size_t ni = 0;
	for (size_t i = 0; i < n; i++) {
		an->own_entries[i] = ls_scope_low(by[i]);
		for (size_t r = 0; r < by[i]->nranges; r++)
			an->own_index[ni++] = (struct ls_proc_range){ by[i]->ranges[r].lo, by[i]->ranges[r].hi, (uint32_t)i };
		an->done[i] = make_done(&an->arena, by[i]);
	}
	for (size_t i = 1; i < ni; i++)
		for (size_t j = i; j > 0 && an->own_index[j].lo < an->own_index[j - 1].lo; j--) {
			struct ls_proc_range t = an->own_index[j];
			an->own_index[j] = an->own_index[j - 1];
			an->own_index[j - 1] = t;
		}
	an->dir = (struct ls_directory){ n, an->own_entries, an->own_index, ni };
	an->dir_ready = true;
	free(by);
	if (m->root) {
		ls_error err;
		ls_lookup_index_build(&an->whole, m->root, &err);
	}
	an->nanalyzed = n; /* made here, not read from a cache: what a store writes */
	an->indexes = true;
	an->complete = true;
}
