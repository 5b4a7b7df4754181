/* find-dso.c - the file and the structure behind each binary of a recording.
 *
 * A binary (pl_dso) is found by build-id or by path: the path itself (under
 * --symfs) when its build-id matches, perf's build-id cache, the kernel's
 * debug image (vmlinux) or -k, a module's debug .ko at the module loader's
 * layout; else /proc/kallsyms or the ELF symbol table names its frames.
 * Each binary's ELF (ls_file: PT_LOAD, symbols) and structure (ls_module)
 * are opened once; the binaries the build-id table names are opened on a
 * second thread while the first pass reads the records.  A frame's address
 * goes to a link-time address here (pl_to_link); attribute.c does the rest.
 */
#include "attribute.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* ---- per binary ------------------------------------------------------------- */

struct warn_count {
	int verbose;
	unsigned n;
	char first[512]; /* the first warning: the reason, shown without -v */
	struct warn_count *next;
};

/* Each module's count lives as long as the module: opened on demand, it
 * warns during the lookups too (-v prints those; they are not summed up).
 * Freed by pl_dsos_end, after the modules are closed. */
static struct warn_count *warn_counts;
static pthread_mutex_t warn_counts_lock = PTHREAD_MUTEX_INITIALIZER;

static struct warn_count *warn_count_new(int verbose)
{
	struct warn_count *w = pl_xcalloc(1, sizeof *w);
	w->verbose = verbose;
	pthread_mutex_lock(&warn_counts_lock);
	w->next = warn_counts;
	warn_counts = w;
	pthread_mutex_unlock(&warn_counts_lock);
	return w;
}

static void warn_counts_free(void)
{
	pthread_mutex_lock(&warn_counts_lock);
	while (warn_counts) {
		struct warn_count *w = warn_counts;
		warn_counts = w->next;
		free(w);
	}
	pthread_mutex_unlock(&warn_counts_lock);
}

/* libloopscope's warnings about parts of a binary it could not analyze
 * are counted; -v prints them all.  They come from the analysis threads,
 * several at once (loopscope.h): the count is atomic (the first one alone
 * keeps its text), and stdio locks the stream. */
static void ls_warn_sink(void *ctx, const char *message)
{
	struct warn_count *w = ctx;
	/* The sources of a loop's lines not found (analyze.c) is the rule
	 * for the system's libraries, whose sources are not installed: their
	 * loops keep DWARF's lines, and the report has nothing wrong to say.
	 * -v says it. */
	int sources_note = strstr(message, " of its loops not found (") != NULL;
	if (!sources_note && __atomic_fetch_add(&w->n, 1, __ATOMIC_RELAXED) == 0)
		snprintf(w->first, sizeof w->first, "%s", message);
	if (w->verbose) {
		pl_progress_clear();
		fprintf(stderr, "perf-loops: %s\n", message);
	}
}

static ls_module *open_module(struct pl_attrib *a, const char *path);
static void kallsyms_start(struct pl_attrib *a);
static ls_module *open_module_with(const ls_options *lsopt, int verbose, int quiet, const char *path);

/* Does F carry build-id ID (or is ID unknown)? */
static int same_build_id(const ls_file *f, const uint8_t *id, size_t size)
{
	const uint8_t *bits;
	size_t n = ls_file_build_id(f, &bits);
	return !size || (n == size && !memcmp(bits, id, n));
}

/* Does PATH carry build-id ID (or is ID unknown)? */
static int file_has_build_id(const char *path, const uint8_t *id, size_t size)
{
	ls_file *f = ls_file_open(path, NULL);
	int ok = f && same_build_id(f, id, size);
	ls_file_close(f);
	return ok;
}

/* ---- opening binaries on a second thread ------------------------------------
 *
 * The helper thread opens the binaries of the build-id table one after
 * another while the main thread reads samples.  The main thread never idles
 * behind it: a binary it needs that the helper has not started yet it opens
 * itself (the helper skips it), and it waits only for the one the helper
 * is opening.  On two cores both then open binaries, in the order the
 * samples need them.
 *
 * The state is shared with the thread and owned by whoever is last: the
 * main thread waits for a binary at most PERF_LOOPS_PREFETCH_TIMEOUT
 * seconds (default 60); past that it abandons the thread (which frees the
 * state when it ends) and opens what it needs itself, so a binary whose
 * analysis hangs can never hang the report. */

enum prefetch_state { PF_PENDING, PF_OPENING, PF_DONE };

struct prefetch_item {
	char *path;
	uint8_t id[20];
	uint8_t id_size;
	enum prefetch_state state; /* under the lock */
	ls_module *mod;
};

struct prefetch {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	ls_options lsopt;
	int verbose, quiet;
	struct prefetch_item *items;
	size_t n;
	int finished;    /* the thread has nothing more to do */
	int stop;        /* the main thread wants no more items */
	int abandoned;   /* the main thread is gone: the thread frees all */
	double timeout;
};

static void prefetch_free(struct prefetch *pf)
{
	for (size_t i = 0; i < pf->n; i++) {
		if (pf->items[i].mod)
			ls_module_close(pf->items[i].mod);
		free(pf->items[i].path);
	}
	free(pf->items);
	pthread_mutex_destroy(&pf->lock);
	pthread_cond_destroy(&pf->cond);
	free(pf);
}

static void *prefetch_main(void *arg)
{
	struct prefetch *pf = arg;
	for (size_t i = 0; i < pf->n; i++) {
		struct prefetch_item *p = &pf->items[i];
		pthread_mutex_lock(&pf->lock);
		int stop = pf->stop, mine = p->state == PF_PENDING;
		if (mine)
			p->state = PF_OPENING;
		pthread_mutex_unlock(&pf->lock);
		if (stop)
			break;
		if (!mine)
			continue; /* the main thread took it */
		ls_module *m = NULL;
		if (file_has_build_id(p->path, p->id, p->id_size))
			m = open_module_with(&pf->lsopt, pf->verbose, pf->quiet, p->path);
		pthread_mutex_lock(&pf->lock);
		p->mod = m;
		p->state = PF_DONE;
		pthread_cond_broadcast(&pf->cond);
		pthread_mutex_unlock(&pf->lock);
	}
	pthread_mutex_lock(&pf->lock);
	pf->finished = 1;
	pthread_cond_broadcast(&pf->cond);
	int abandoned = pf->abandoned;
	pthread_mutex_unlock(&pf->lock);
	if (abandoned)
		prefetch_free(pf);
	return NULL;
}

static void prefetch_start(struct pl_attrib *a)
{
	pd_reader *r = a->rep->r;
	struct prefetch *pf = pl_xcalloc(1, sizeof *pf);
	for (size_t i = 0; i < pd_nbuild_ids(r); i++) {
		const pd_build_id *b = pd_build_id_at(r, i);
		if (b->cpumode != PD_MISC_USER || b->filename[0] != '/')
			continue;
		pf->items = pl_xrealloc(pf->items, (pf->n + 1) * sizeof *pf->items);
		struct prefetch_item *p = &pf->items[pf->n++];
		p->path = pl_xstrdup(b->filename);
		memcpy(p->id, b->id, sizeof p->id);
		p->id_size = b->size;
		p->state = PF_PENDING;
		p->mod = NULL;
	}
	pf->lsopt = a->lsopt;
	pf->verbose = a->rep->opt->verbose;
	pf->quiet = a->rep->opt->quiet;
	const char *t = getenv("PERF_LOOPS_PREFETCH_TIMEOUT");
	char *end;
	pf->timeout = t && *t ? strtod(t, &end) : 60;
	if (!(pf->timeout >= 0))
		pf->timeout = 60;
	pthread_mutex_init(&pf->lock, NULL);
	pthread_cond_init(&pf->cond, NULL);
	if (pf->n && pthread_create(&pf->thread, NULL, prefetch_main, pf) == 0) {
		a->pf = pf;
		return;
	}
	prefetch_free(pf);
}

/* Item I is done (I = N: all of them), or the thread has nothing more to
 * do.  Under the lock. */
static int waited_for(const struct prefetch *pf, size_t i)
{
	return pf->finished || (i < pf->n && pf->items[i].state == PF_DONE);
}

/* Wait, at most the timeout, until item I is done (all of them: I = N)
 * or the thread is; called with the lock held, and returns with it
 * released.  0 if it is; -1 (thread abandoned) if not. */
static int prefetch_wait_locked(struct pl_attrib *a, size_t i)
{
	struct prefetch *pf = a->pf;
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	double whole = (double)(time_t)pf->timeout;
	deadline.tv_sec += (time_t)whole;
	deadline.tv_nsec += (long)((pf->timeout - whole) * 1e9);
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	int rc = 0;
	while (!waited_for(pf, i) && rc == 0)
		rc = pthread_cond_timedwait(&pf->cond, &pf->lock, &deadline);
	if (waited_for(pf, i)) {
		pthread_mutex_unlock(&pf->lock);
		return 0;
	}
	pf->stop = pf->abandoned = 1;
	pthread_mutex_unlock(&pf->lock);
	pthread_detach(pf->thread);
	a->pf = NULL;
	fprintf(stderr, "perf-loops: the binaries of the build-id table take more than %g s to open on the "
		"helper thread; opening them as needed instead\n", pf->timeout);
	return -1;
}

static void prefetch_end(struct pl_attrib *a)
{
	struct prefetch *pf = a->pf;
	if (!pf)
		return;
	pthread_mutex_lock(&pf->lock);
	pf->stop = 1;
	if (prefetch_wait_locked(a, pf->n) < 0)
		return;
	pthread_join(pf->thread, NULL);
	prefetch_free(pf);
	a->pf = NULL;
}

/* The module the helper thread opened for PATH, if any (taken once).  NULL
 * as well when the helper has not started on it: it is then the caller's
 * to open, and the helper will skip it. */
static ls_module *prefetched(struct pl_attrib *a, const char *path)
{
	struct prefetch *pf = a->pf;
	if (!pf)
		return NULL;
	for (size_t i = 0; i < pf->n; i++) {
		if (strcmp(pf->items[i].path, path))
			continue;
		pthread_mutex_lock(&pf->lock);
		if (pf->items[i].state == PF_PENDING) {
			pf->items[i].state = PF_DONE; /* taken by the main thread */
			pthread_mutex_unlock(&pf->lock);
			return NULL;
		}
		if (prefetch_wait_locked(a, i) < 0)
			return NULL;
		pthread_mutex_lock(&pf->lock);
		ls_module *m = pf->items[i].mod;
		pf->items[i].mod = NULL;
		pthread_mutex_unlock(&pf->lock);
		if (m)
			return m;
	}
	return NULL;
}

/* The DSO side of pl_attrib_new. */
void pl_dsos_begin(struct pl_attrib *a)
{
	pl_report *rep = a->rep;
	ls_options_init(&a->lsopt);
	a->lsopt.warn = ls_warn_sink;
	/* the analysis meter is the report's (progress_fn); this one is a
	 * debuginfod download's, on a terminal only, as the report's is */
	a->lsopt.progress = pl_progress_wanted();
	/* a report looks up the procedures samples landed in, of binaries of
	 * up to hundreds of thousands: each analyzed when first asked for, and
	 * the cache entry grows with them (issue 23) */
	a->lsopt.on_demand = 1;
	a->lsopt.read_sources = getenv("LOOPSCOPE_NO_SOURCE") == NULL;
	a->lsopt.source_path = getenv("LOOPSCOPE_SOURCE_PATH");
	/* the debug directory, as loopscope's (NULL: /usr/lib/debug) */
	a->lsopt.debug_file_path = getenv("LOOPSCOPE_DEBUG_DIR");
	const char *bd = getenv("PERF_BUILDID_DIR");
	const char *home = getenv("HOME");
	if (!home) {
		struct passwd *pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : "/";
	}
	if (bd && *bd)
		snprintf(a->home_debug, sizeof a->home_debug, "%s", bd);
	else
		snprintf(a->home_debug, sizeof a->home_debug, "%s/.debug", home);
	const char *rel = pd_osrelease(rep->r);
	struct utsname u;
	if (rel)
		snprintf(a->osrelease, sizeof a->osrelease, "%s", rel);
	else if (uname(&u) == 0)
		snprintf(a->osrelease, sizeof a->osrelease, "%s", u.release);
	a->kmap = ls_kmap_new();
	if (!a->kmap) {
		fputs("perf-loops: out of memory\n", stderr);
		exit(1);
	}
	prefetch_start(a);
	kallsyms_start(a);
}

void pl_dsos_end(struct pl_attrib *a)
{
	prefetch_end(a);
	if (a->ks_reading) { /* read, never asked for: freed below */
		pthread_join(a->ks_thread, NULL);
		a->ks_reading = 0;
	}
	for (size_t i = 0; i < a->ndattr; i++) {
		struct dso_attr *d = a->dattr[i];
		if (!d)
			continue;
		if (d->mod)
			ls_module_close(d->mod);
		free(d->path);
		ls_file_close(d->file);
		free(d->ksecs);
		free(d);
	}
	free(a->dattr);
	ls_kmap_free(a->kmap);
	warn_counts_free();
}



static int file_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Open PATH's ELF (for the address conversion and for the fallback
 * names).  Returns 1 if PATH's build-id matches D's (or D has none), 0 if
 * not (then D keeps the file it had, when WANT_MATCH), -1 if it is not a
 * readable ELF. */
static int load_elf(struct pl_attrib *a, pl_dso *dso, struct dso_attr *d, const char *path, int want_match)
{
	ls_file *f = ls_file_open(path, NULL);
	if (!f)
		return -1;
	int match = same_build_id(f, dso->build_id, dso->build_id_size);
	if (want_match && !match) {
		ls_file_close(f);
		return 0;
	}
	ls_file_close(d->file);
	d->file = f;
	return match;
}

/* The kernel's symbols from kallsyms into a->kmap (libloopscope parses
 * it).  It reads only what pl_dsos_begin set (and the file's build-ids):
 * it runs on a thread of its own (kallsyms_main). */
static void read_kallsyms(const struct pl_attrib *a)
{
	/* perf record keeps a copy of kallsyms in its build-id cache: it is
	 * the recorded kernel's, and a plain file reads many times faster than
	 * /proc/kallsyms (which the kernel formats line by line) */
	pd_reader *r = a->rep->r;
	for (size_t i = 0; i < pd_nbuild_ids(r); i++) {
		const pd_build_id *b = pd_build_id_at(r, i);
		if (strcmp(b->filename, "[kernel.kallsyms]"))
			continue;
		char hex[41], p[PATH_MAX + 128];
		for (int k = 0; k < b->size; k++)
			sprintf(hex + 2 * k, "%02x", b->id[k]);
		hex[2 * b->size] = 0;
		snprintf(p, sizeof p, "%s/[kernel.kallsyms]/%s/kallsyms", a->home_debug, hex);
		if (ls_kmap_read_kallsyms(a->kmap, p, NULL) == 0)
			return;
		snprintf(p, sizeof p, "%s/.build-id/%.2s/%s/kallsyms", a->home_debug, hex, hex + 2);
		if (ls_kmap_read_kallsyms(a->kmap, p, NULL) == 0)
			return;
	}
	struct utsname u;
	/* /proc/kallsyms describes the running kernel, which must be the recorded one */
	if (uname(&u) == 0 && a->osrelease[0] && strcmp(u.release, a->osrelease))
		return;
	ls_kmap_read_kallsyms(a->kmap, "/proc/kallsyms", NULL);
}

static void *kallsyms_main(void *arg)
{
	read_kallsyms(arg);
	return NULL;
}

/* A recording with kernel samples may want kallsyms (for kernel frames
 * without a vmlinux, or outside its maps): it is read from the
 * start on a thread of its own (46 ms here for a 5.4 MB file, most of it
 * copying memory), beside the reading of the records and the binaries. */
static void kallsyms_start(struct pl_attrib *a)
{
	pd_reader *r = a->rep->r;
	for (size_t i = 0; i < pd_nbuild_ids(r); i++)
		if (!strcmp(pd_build_id_at(r, i)->filename, "[kernel.kallsyms]")) {
			a->ks_reading = pthread_create(&a->ks_thread, NULL, kallsyms_main, a) == 0;
			return;
		}
}

/* The table read by kallsyms_main, once it is done; or read now.  Nothing
 * reads a->kmap before this (ls_kmap_symbol_at comes after it). */
void pl_load_kallsyms(struct pl_attrib *a)
{
	if (a->kallsyms_tried)
		return;
	a->kallsyms_tried = 1;
	if (a->ks_reading) {
		pthread_join(a->ks_thread, NULL);
		a->ks_reading = 0;
		return;
	}
	read_kallsyms(a);
}

/* One line per binary: the first warning (it names the binary and the
 * reason, e.g. no DWARF), and how many more -v would show. */
static void print_first_warning(const char *path, const struct warn_count *w)
{
	const char *msg = w->first;
	size_t l = strlen(path);
	if (!strncmp(msg, path, l) && !strncmp(msg + l, ": ", 2))
		msg += l + 2;
	pl_progress_clear();
	if (w->n == 1)
		fprintf(stderr, "perf-loops: warning: %s: %s\n", path, msg);
	else
		fprintf(stderr, "perf-loops: warning: %s: %s (and %u more warnings: -v shows them)\n", path, msg,
			w->n - 1);
}

static ls_module *open_module_with(const ls_options *lsopt, int verbose, int quiet, const char *path)
{
	ls_error err;
	struct warn_count *w = warn_count_new(verbose);
	ls_options opt = *lsopt;
	opt.warn_ctx = w;
	if (pl_progress_wanted()) { /* the report's meter, naming the binary */
		const char *slash = strrchr(path, '/');
		opt.progress_fn = pl_progress_fn;
		opt.progress_ctx = (void *)(slash ? slash + 1 : path);
	}
	ls_module *m = ls_module_open(path, &opt, &err);
	unsigned n = __atomic_load_n(&w->n, __ATOMIC_ACQUIRE);
	if (!m) {
		pl_progress_clear();
		fprintf(stderr, "perf-loops: %s\n", err.message);
	}
	else if (n && !w->verbose && !quiet && (ls_module_has_dwarf(m) || strstr(w->first, "; debuginfod: ")))
		/* without DWARF: one summary for all (pl_dsos_summary), but
		 * what debuginfod said (no such build-id, server unreachable)
		 * is the user's to act on: said per binary */
		print_first_warning(path, w);
	return m;
}

/* The debug file of the kernel (MODULE NULL) or of a module, through
 * libloopscope's search (ls_find_debug_file: --modules, the debug
 * directory, the build-id, debuginfod), into P.  It must carry the
 * recorded build-id when there is one: 0, or -1. */
static int find_kernel_debug(struct pl_attrib *a, pl_dso *dso, const char *module, char *p, size_t size)
{
	char hex[41];
	pl_dso_build_id_hex(dso, hex);
	ls_debug_query q;
	ls_debug_query_init(&q);
	q.target = module ? LS_DEBUG_KMODULE : LS_DEBUG_VMLINUX;
	q.module = module;
	q.release = a->osrelease;
	q.build_id = dso->build_id_size ? hex : NULL;
	q.dirs = module ? a->rep->opt->modules : NULL;
	q.progress = a->lsopt.progress;
	q.debug_file_path = a->lsopt.debug_file_path;
	unsigned found;
	ls_error err;
	if (ls_find_debug_file(&q, p, size, &found, &err) == 0)
		return found & LS_FOUND_BUILD_ID_DIFFERS ? -1 : 0;
	if (!module) { /* said with the fallback to kallsyms (kernel_fallback_note) */
		snprintf(a->kernel_debug_why, sizeof a->kernel_debug_why, "%s", err.message);
		a->kernel_debuginfod_down = err.code == LS_ERR_IO;
	}
	return -1;
}

static void open_kmodule(struct pl_attrib *a, pl_dso *dso, struct dso_attr *d)
{
	char want[256], p[PATH_MAX];
	snprintf(want, sizeof want, "%s", dso->short_name[0] == '[' ? dso->short_name + 1 : dso->short_name);
	want[strcspn(want, "]")] = 0;
	if (find_kernel_debug(a, dso, want, p, sizeof p) < 0)
		return;
	if (load_elf(a, dso, d, p, 1) == 1 && (d->mod = open_module(a, p))) {
		d->path = pl_xstrdup(p);
		/* where the module loader put its code: perf records the
		 * module's base, and .text.unlikely is found from there */
		d->nksecs = ls_module_kernel_layout(d->mod, NULL, 0);
		d->ksecs = d->nksecs ? pl_xmalloc(d->nksecs * sizeof *d->ksecs) : NULL;
		ls_module_kernel_layout(d->mod, d->ksecs, d->nksecs);
	}
}

static ls_module *open_module(struct pl_attrib *a, const char *path)
{
	return open_module_with(&a->lsopt, a->rep->opt->verbose, a->rep->opt->quiet, path);
}

/* Kernel frames without a debug vmlinux: once, how they are named and how
 * to get the image (Debian's package, a build-id path, or -k). */
static void kernel_fallback_note(struct pl_attrib *a)
{
	pl_dso *k = NULL;
	pl_session *s = a->rep->s;
	for (size_t i = 0; i < pl_session_ndsos(s) && !k; i++)
		if (pl_session_dso(s, i)->kind == PL_DSO_KERNEL)
			k = pl_session_dso(s, i);
	char hex[41] = "";
	if (k)
		pl_dso_build_id_hex(k, hex);
	uint64_t all = a->rep->nsamples_all;
	/* the search's own words say what debuginfod answered: no such
	 * build-id, or no answer at all (server unreachable) */
	const char *why = a->kernel_debug_why;
	const char *tail = strstr(why, "no debug file found (");
	fprintf(stderr, "perf-loops: kernel frames (%.1f%% of the samples) are named %s, without inlined calls, loops "
		"or lines: no debug image of kernel %s%s%s was found (%s, /boot; %.*s); -k VMLINUX gives one "
		"(Debian: linux-image-%s-dbg)\n", all ? 100.0 * (double)a->kernel_samples / (double)all : 0.0,
		ls_kmap_nsymbols(a->kmap) ? "from kallsyms" : "by address (kallsyms is not readable)", a->osrelease,
		hex[0] ? " with build-id " : "", hex,
		a->lsopt.debug_file_path ? a->lsopt.debug_file_path : "/usr/lib/debug", tail ? (int)strlen(tail + 21) - 1 : 10,
		tail ? tail + 21 : "debuginfod", a->osrelease);
}

/* ---- binaries that do not match, or are not there ------------------------
 *
 * A file whose build-id is not the recorded one is another binary (rebuilt
 * in place, upgraded): its code at the recorded addresses is not the code
 * that ran, and a report from it would be confidently wrong.  It is not
 * used unless --force; its frames are then shown as perf report shows
 * them, by address.  Said always, -q or not: the report is not what the
 * user expects to see. */

/* The build-id of the ELF file PATH in hex into HEX (41 bytes): "" if it
 * has none or is not readable. */
static void file_build_id_hex(const char *path, char *hex)
{
	hex[0] = 0;
	ls_file *f = ls_file_open(path, NULL);
	if (!f)
		return;
	const uint8_t *bits;
	size_t n = ls_file_build_id(f, &bits);
	for (size_t i = 0; i < n && i < 20; i++)
		sprintf(hex + 2 * i, "%02x", bits[i]);
	ls_file_close(f);
}

/* PATH is DSO's file by name but not by build-id: use it (--force) or
 * refuse it (D->refused), saying which.  1 if it is to be used. */
static int use_mismatched(struct pl_attrib *a, pl_dso *dso, struct dso_attr *d, const char *path)
{
	char want[41], got[41];
	pl_dso_build_id_hex(dso, want);
	file_build_id_hex(path, got);
	pl_progress_clear();
	if (a->rep->opt->force && load_elf(a, dso, d, path, 0) >= 0) {
		fprintf(stderr, "perf-loops: %s: build-id %s is not the recorded %s; used anyway (--force): "
			"its figures are only right if the code did not change\n", path, got[0] ? got : "(none)", want);
		return 1;
	}
	d->refused = 1;
	fprintf(stderr, "perf-loops: %s: build-id %s is not the recorded %s (rebuilt or replaced since the "
		"recording): its samples are shown by address; --force uses it anyway\n", path,
		got[0] ? got : "(none)", want);
	return 0;
}

/* -k VMLINUX: the user's kernel image, if its build-id is the recorded
 * kernel's (or --force); else the usual search goes on. */
static void open_given_vmlinux(struct pl_attrib *a, pl_dso *dso, struct dso_attr *d)
{
	const char *k = a->rep->opt->vmlinux;
	int r = file_exists(k) ? load_elf(a, dso, d, k, 1) : -1;
	pl_progress_clear();
	if (r < 0) {
		fprintf(stderr, "perf-loops: %s: cannot use it as the kernel image (not a readable ELF file)\n", k);
		return;
	}
	if (r == 0) {
		char want[41], got[41];
		pl_dso_build_id_hex(dso, want);
		file_build_id_hex(k, got);
		if (!a->rep->opt->force) {
			fprintf(stderr, "perf-loops: %s: build-id %s is not the recorded kernel's %s: not used "
				"(--force uses it anyway)\n", k, got[0] ? got : "(none)", want);
			return;
		}
		fprintf(stderr, "perf-loops: %s: build-id %s is not the recorded kernel's %s; used anyway (--force)\n",
			k, got[0] ? got : "(none)", want);
		load_elf(a, dso, d, k, 0);
	}
	if ((d->mod = open_module(a, k)))
		d->path = pl_xstrdup(k);
	else
		fprintf(stderr, "perf-loops: %s: cannot use it as the kernel image\n", k);
}

/* A user binary that is nowhere: counted for the summary (-v: named). */
static void note_missing(struct pl_attrib *a, pl_dso *dso, const char *hex)
{
	if (a->nmissing < 3) {
		size_t used = strlen(a->missing_names);
		snprintf(a->missing_names + used, sizeof a->missing_names - used, "%s%s", used ? ", " : "", dso->name);
	}
	a->nmissing++;
	if (a->rep->opt->verbose)
		fprintf(stderr, "perf-loops: %s: binary not found (build-id %s); its frames are shown by address\n",
			dso->name, hex[0] ? hex : "unknown");
}

/* Find the file behind DSO and open its structure, once. */
struct dso_attr *pl_dso_attr(struct pl_attrib *a, pl_dso *dso)
{
	if (dso->index >= a->ndattr) {
		size_t n = dso->index + 16;
		a->dattr = pl_xrealloc(a->dattr, n * sizeof *a->dattr);
		memset(a->dattr + a->ndattr, 0, (n - a->ndattr) * sizeof *a->dattr);
		a->ndattr = n;
	}
	if (!a->dattr[dso->index])
		a->dattr[dso->index] = pl_xcalloc(1, sizeof **a->dattr);
	struct dso_attr *d = a->dattr[dso->index];
	if (d->tried)
		return d;
	d->tried = 1;
	char hex[41], p[PATH_MAX + 64];
	pl_dso_build_id_hex(dso, hex);
	if (dso->kind == PL_DSO_KERNEL || dso->kind == PL_DSO_KMODULE) {
		/* in pipe mode the release comes as a record, after we started
		 * reading kallsyms for the one assumed then (uname's): that
		 * thread reads a->osrelease, so it ends first, and what it read
		 * is dropped (nothing has used it yet: pl_load_kallsyms joins)
		 * to be read again for the recorded release */
		const char *rel = pd_osrelease(a->rep->r);
		if (rel && *rel && strcmp(a->osrelease, rel)) {
			if (a->ks_reading) {
				pthread_join(a->ks_thread, NULL);
				a->ks_reading = 0;
				ls_kmap *fresh = ls_kmap_new();
				if (fresh) {
					ls_kmap_free(a->kmap);
					a->kmap = fresh;
				}
			}
			snprintf(a->osrelease, sizeof a->osrelease, "%s", rel);
		}
		if (dso->kind == PL_DSO_KMODULE) {
			open_kmodule(a, dso, d);
			if (d->nksecs)
				return d;
		}
		if (dso->kind == PL_DSO_KERNEL && a->rep->opt->vmlinux)
			open_given_vmlinux(a, dso, d);
		if (dso->kind == PL_DSO_KERNEL) {
			if (!d->mod && find_kernel_debug(a, dso, NULL, p, sizeof p) == 0 &&
			    load_elf(a, dso, d, p, 1) == 1 && (d->mod = open_module(a, p)))
				d->path = pl_xstrdup(p);
			if (d->mod) {
				uint64_t text, size;
				if (ls_module_symbol(d->mod, "_text", &text, &size) < 0)
					text = 0;
				/* the link address of _text; the map holds its runtime one */
				d->kernel_delta = (int64_t)text;
				return d;
			}
		}
		pl_load_kallsyms(a);
		d->use_kallsyms = ls_kmap_nsymbols(a->kmap) > 0;
		if (dso->kind == PL_DSO_KERNEL)
			a->kernel_without_debug = 1;
		return d;
	}
	if (dso->kind == PL_DSO_ANON)
		return d;
	/* user space: the path (under --symfs) if its build-id matches, else
	 * perf's build-id cache */
	const char *found = NULL, *upath = dso->name;
	char symfs_path[PATH_MAX];
	if (a->rep->opt->symfs) {
		snprintf(symfs_path, sizeof symfs_path, "%s/%s", a->rep->opt->symfs, dso->name);
		upath = symfs_path;
	}
	if (dso->kind == PL_DSO_USER && file_exists(upath) && load_elf(a, dso, d, upath, 1) == 1)
		found = upath;
	if (!found && dso->build_id_size) {
		const char *leaf[] = { "elf", "vdso" };
		for (int i = 0; i < 2 && !found; i++) {
			snprintf(p, sizeof p, "%s/.build-id/%.2s/%s/%s", a->home_debug, hex, hex + 2, leaf[i]);
			if (file_exists(p) && load_elf(a, dso, d, p, 1) == 1)
				found = p;
		}
	}
	if (!found && dso->kind == PL_DSO_USER && file_exists(upath) && use_mismatched(a, dso, d, upath))
		found = upath;
	if (!found) {
		if (dso->kind == PL_DSO_USER && !d->refused)
			note_missing(a, dso, hex);
		return d;
	}
	d->path = pl_xstrdup(found);
	d->mod = prefetched(a, found);
	if (!d->mod)
		d->mod = open_module(a, found);
	/* the vdso never has DWARF: nothing to say */
	if (d->mod && !ls_module_has_dwarf(d->mod) && dso->kind != PL_DSO_VDSO)
		a->nnodebug++;
	return d;
}

/* What the report could not use, in one line each (-v named each as it
 * came): binaries without debug information, binaries not found, and the
 * kernel without its debug image. */
void pl_dsos_summary(struct pl_attrib *a)
{
	const pl_report_options *o = a->rep->opt;
	if (o->quiet)
		return;
	if (a->nnodebug && !o->verbose)
		fprintf(stderr, "perf-loops: %u binar%s without debug information: procedures from their symbols, "
			"loops without lines, no inlined calls (-v names them; their -dbgsym packages or debuginfod "
			"give them)\n", a->nnodebug, a->nnodebug == 1 ? "y" : "ies");
	if (a->nmissing && !o->verbose)
		fprintf(stderr, "perf-loops: %u binar%s of the recording not found (%s%s): %s frames are shown by "
			"address; -v names each with its build-id\n", a->nmissing, a->nmissing == 1 ? "y" : "ies",
			a->missing_names, a->nmissing > 3 ? ", ..." : "", a->nmissing == 1 ? "its" : "their");
	/* a profile of a program has a few kernel samples (page faults, its
	 * start: 1-4% here), whose names are not its user's question; a
	 * tenth of the samples (a system-wide or a kernel-heavy profile) is */
	uint64_t all = a->rep->nsamples_all;
	if (a->kernel_without_debug && a->kernel_frames &&
	    (o->verbose || a->kernel_debuginfod_down || (all && a->kernel_samples * 10 >= all)))
		kernel_fallback_note(a);
}

/* A runtime address in MAP -> the link-time address in its file. */
int pl_to_link(const struct dso_attr *d, const pl_map *m, uint64_t addr, uint64_t *out)
{
	return d->file ? ls_file_offset_to_addr(d->file, addr - m->start + m->pgoff, out) : -1;
}

pl_session *pl_attrib_session(struct pl_attrib *a)
{
	return a->rep->s;
}

const char *pl_attrib_file(struct pl_attrib *a, pl_dso *dso)
{
	if (dso->kind == PL_DSO_KERNEL || dso->kind == PL_DSO_KMODULE || dso->kind == PL_DSO_ANON)
		return NULL;
	struct dso_attr *d = pl_dso_attr(a, dso);
	return d->file && !ls_file_is_relocatable(d->file) ? d->path : NULL;
}


