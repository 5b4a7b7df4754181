/* analyze.c - runs the per-procedure stages (decode, CFG, loop forest,
 * structure) on N threads and assembles the module's scope tree:
 * module > file > proc.
 *
 * DWARF, the line map and the procedure table are built beforehand on one
 * thread and are read-only here; each worker has its own decoder and arena,
 * so the workers share nothing mutable but the next-procedure counter. */
#include "loops/source.h"
#include "pipeline.h"
#include "structure/structure.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct analysis {
	ls_module *m;
	struct ls_scope **results;   /* per proc */
	atomic_size_t next;
	struct ls_progress progress;
};

struct worker {
	struct analysis *an;
	struct ls_arena *arena;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct analysis *an = w->an;
	ls_module *m = an->m;
	struct ls_decoder *dec = ls_decoder_new(m->ehdr.e_machine);
	while (!ls_progress_stopped(&an->progress)) {
		size_t i = atomic_fetch_add(&an->next, 1);
		if (i >= m->procs.nprocs)
			break;
		an->results[i] = ls_pipeline_proc(m, &m->procs.procs[i], dec, w->arena);
		ls_progress_add(&an->progress, 1);
	}
	if (dec)
		ls_decoder_free(dec);
	return NULL;
}

/* Procedures grouped under one file scope per source file, in file-name
 * order, procedures in address order within a file.  File names are
 * interned, so equal files are equal pointers; the index keeps the sort
 * stable (qsort is not). */
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

static void assemble(ls_module *m, struct ls_scope **results)
{
	struct ls_scope *root = ls_scope_new(&m->arena, LS_SCOPE_MODULE, NULL);
	root->name = m->path;
	size_t n = 0;
	struct proc_order *procs = ls_xmalloc((m->procs.nprocs + 1) * sizeof *procs);
	for (size_t i = 0; i < m->procs.nprocs; i++)
		if (results[i] && results[i]->first_child)
			procs[n] = (struct proc_order){ results[i], n }, n++;
	qsort(procs, n, sizeof *procs, cmp_proc_order);
	struct ls_scope *file = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!file || file->file != procs[i].proc->file) {
			file = ls_scope_new(&m->arena, LS_SCOPE_FILE, root);
			file->file = procs[i].proc->file;
		}
		ls_scope_add_child(file, procs[i].proc);
	}
	for (struct ls_scope *f = root->first_child; f; f = f->next_sibling) {
		for (struct ls_scope *p = f->first_child; p; p = p->next_sibling)
			for (size_t r = 0; r < p->nranges; r++)
				ls_scope_add_range(&m->arena, f, p->ranges[r].lo, p->ranges[r].hi);
		ls_scope_normalize_ranges(f);
		for (size_t r = 0; r < f->nranges; r++)
			ls_scope_add_range(&m->arena, root, f->ranges[r].lo, f->ranges[r].hi);
	}
	ls_scope_normalize_ranges(root);
	free(procs);
	m->root = root;
}

static int cmp_probe(const void *a, const void *b)
{
	return strcmp(((const struct ls_source_probe *)a)->path, ((const struct ls_source_probe *)b)->path);
}

/* The source files the loop lines looked at, by path, each once (several
 * threads may have looked for one file under several names). */
static void keep_probes(ls_module *m)
{
	size_t n;
	struct ls_source_probe *p = ls_source_cache_take_probes(m->sources, &n);
	if (n)
		qsort(p, n, sizeof *p, cmp_probe);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && !strcmp(p[k - 1].path, p[i].path)) {
			free(p[i].path);
			continue;
		}
		p[k++] = p[i];
	}
	m->source_probes = p;
	m->nsource_probes = k;
}

/* The loop-line rules read the loops' source files; when some cannot be
 * found, the lines of those loops come from DWARF alone, about 1 in 12 of
 * them guessed or wrong (tests/corpus-lines.py): say so once, and with -v
 * which files, and how to point at them. */
static void report_missing_sources(const ls_module *m)
{
	enum { SHOWN = 3, LISTED = 50 };
	const char *names[LISTED];
	size_t n = ls_source_missing(m->sources, names, LISTED);
	if (!n)
		return;
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
}

int ls_analyze(ls_module *m, ls_error *err)
{
	struct analysis an = { .m = m };
	an.results = ls_xcalloc(m->procs.nprocs + 1, sizeof *an.results);
	atomic_init(&an.next, 0);
	int nthreads = ls_worker_count(&m->opt, m->procs.nprocs, 0);
	ls_progress_start(&an.progress, m->opt.progress && !m->opt.progress_fn, "loopscope: analyzing procedures",
	                  m->procs.nprocs);
	an.progress.fn = m->opt.progress_fn;
	an.progress.ctx = m->opt.progress_ctx;

	m->thread_arenas = ls_xcalloc(nthreads, sizeof *m->thread_arenas);
	m->nthread_arenas = nthreads;
	struct worker *workers = ls_xcalloc(nthreads, sizeof *workers);
	for (int t = 0; t < nthreads; t++)
		workers[t] = (struct worker){ &an, &m->thread_arenas[t] };
	/* opt.read_sources 0: loop lines from DWARF alone (to measure the
	 * DWARF rules, or to ignore a source tree that does not match).
	 * opt.source_path: where to look for sources that are not at the
	 * paths DWARF names (a distribution's prefix-mapped build). */
	m->sources = m->opt.read_sources ? ls_source_cache_new(&m->opt, m->opt.source_path) : NULL;
	const char *debug_lines = getenv("LOOPSCOPE_DEBUG_LOOP_LINES");
	m->debug_loop_lines = debug_lines != NULL;
	m->debug_loop_lines_level = debug_lines ? atoi(debug_lines) : 0;
	ls_run_workers(nthreads, worker_main, workers, sizeof *workers);
	bool stopped = ls_progress_stopped(&an.progress);
	ls_progress_end(&an.progress);
	keep_probes(m);
	if (!stopped)
		report_missing_sources(m);
	ls_source_cache_free(m->sources);
	m->sources = NULL;
	if (stopped) { /* the procedures' scopes live in the arenas: freed with m */
		free(an.results);
		free(workers);
		ls_set_error(err, LS_ERR_INTERRUPTED, "%s: analysis interrupted", m->path);
		return -1;
	}

	assemble(m, an.results);
	free(an.results);
	free(workers);
	return 0;
}
