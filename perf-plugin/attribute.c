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
 * Caches: one ls_module per binary; and (parent node, map, address) -> node,
 * which makes the common case (the same frames again) one hash probe.
 */
#include "report.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* ---- the tree -------------------------------------------------------------- */

void pl_tree_init(pl_tree *t, size_t nev)
{
	memset(t, 0, sizeof *t);
	t->nev = nev ? nev : 1;
	t->cap = 1024;
	t->nodes = pl_xcalloc(t->cap, sizeof *t->nodes);
	t->nslots = 4096;
	t->slots = pl_xcalloc(t->nslots, sizeof *t->slots);
	t->cap_costs = 1024;
	t->costs = pl_xcalloc(t->cap_costs, sizeof *t->costs);
	t->ncosts = 1; /* entry 0: none */
	t->ncslots = 2048;
	t->cslots = pl_xcalloc(t->ncslots, sizeof *t->cslots);
	t->n = 1; /* node 0: the root */
	t->nodes[0].kind = PL_ROOT;
}

static void ev_index_free(struct pl_ev_index *x);

void pl_tree_free(pl_tree *t)
{
	ev_index_free(t->evx);
	free(t->nodes);
	free(t->costs);
	free(t->cslots);
	free(t->slots);
	memset(t, 0, sizeof *t);
}

static inline size_t cost_hash(uint32_t node, size_t ev)
{
	uint64_t h = ((uint64_t)node << 16 ^ (uint64_t)ev) * 0x9e3779b97f4a7c15ULL;
	return (size_t)(h ^ (h >> 31));
}

const uint64_t *pl_cost(const pl_tree *t, uint32_t node, size_t ev)
{
	static const uint64_t zero[PL_NCOST];
	if (!t->nodes[node].costs)
		return zero;
	for (size_t h = cost_hash(node, ev) & (t->ncslots - 1);; h = (h + 1) & (t->ncslots - 1)) {
		uint32_t c = t->cslots[h];
		if (!c)
			return zero;
		if (t->costs[c].node == node && t->costs[c].ev == ev)
			return t->costs[c].c;
	}
}

uint64_t *pl_cost_at(pl_tree *t, uint32_t node, size_t ev)
{
	size_t h = cost_hash(node, ev) & (t->ncslots - 1);
	for (;; h = (h + 1) & (t->ncslots - 1)) {
		uint32_t c = t->cslots[h];
		if (!c)
			break;
		if (t->costs[c].node == node && t->costs[c].ev == ev)
			return t->costs[c].c;
	}
	if (t->ncosts == t->cap_costs) {
		t->cap_costs *= 2;
		t->costs = pl_xrealloc(t->costs, t->cap_costs * sizeof *t->costs);
	}
	uint32_t c = (uint32_t)t->ncosts++;
	pl_cost_entry *e = &t->costs[c];
	memset(e, 0, sizeof *e);
	e->node = node;
	e->ev = (uint32_t)ev;
	e->next = t->nodes[node].costs;
	t->nodes[node].costs = c;
	t->cslots[h] = c;
	if (t->ncosts * 2 > t->ncslots) {
		size_t n = t->ncslots * 2;
		uint32_t *slots = pl_xcalloc(n, sizeof *slots);
		for (uint32_t k = 1; k < t->ncosts; k++) {
			size_t j = cost_hash(t->costs[k].node, t->costs[k].ev) & (n - 1);
			while (slots[j])
				j = (j + 1) & (n - 1);
			slots[j] = k;
		}
		free(t->cslots);
		t->cslots = slots;
		t->ncslots = n;
	}
	return t->costs[c].c;
}

static inline size_t child_hash(uint32_t parent, uintptr_t key, int kind)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ULL;
	h ^= ((uint64_t)parent << 3 | (uint64_t)kind) * 0xc2b2ae3d27d4eb4fULL;
	return (size_t)(h ^ (h >> 29));
}

static void tree_rehash(pl_tree *t)
{
	size_t n = t->nslots * 2;
	uint32_t *slots = pl_xcalloc(n, sizeof *slots);
	for (size_t i = 0; i < t->nslots; i++) {
		uint32_t c = t->slots[i];
		if (!c)
			continue;
		const pl_node *x = &t->nodes[c];
		size_t h = child_hash(x->parent, x->key, x->kind) & (n - 1);
		while (slots[h])
			h = (h + 1) & (n - 1);
		slots[h] = c;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
}

uint32_t pl_tree_child(pl_tree *t, uint32_t parent, uintptr_t key, int kind)
{
	size_t h = child_hash(parent, key, kind) & (t->nslots - 1);
	for (;;) {
		uint32_t c = t->slots[h];
		if (!c)
			break;
		const pl_node *x = &t->nodes[c];
		if (x->key == key && x->parent == parent && x->kind == kind)
			return c;
		h = (h + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		t->cap *= 2;
		t->nodes = pl_xrealloc(t->nodes, t->cap * sizeof *t->nodes);
	}
	uint32_t c = (uint32_t)t->n++;
	pl_node *x = &t->nodes[c];
	memset(x, 0, sizeof *x);
	x->parent = parent;
	x->key = key;
	x->kind = (uint8_t)kind;
	x->next_sibling = t->nodes[parent].first_child;
	t->nodes[parent].first_child = c;
	t->slots[h] = c;
	if (t->n * 2 > t->nslots)
		tree_rehash(t);
	return c;
}

/* ---- symbols: /proc/kallsyms (an ELF's own come from ls_file_symbol_at) ---------- */

struct sym {
	uint64_t addr, size;
	const char *name; /* interned, or in the kallsyms buffer */
};

struct symtab {
	struct sym *v;
	size_t n;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const struct sym *symtab_find(const struct symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	return &t->v[lo - 1];
}

/* ---- per binary ------------------------------------------------------------- */

struct dso_attr {
	int tried;
	char *path;          /* the file the structure comes from */
	ls_module *mod;
	ls_file *file;       /* the ELF of PATH: PT_LOAD, and symbols when there is no structure */
	int64_t kernel_delta; /* vmlinux: runtime - link address */
	int use_kallsyms;
	/* a module: its code sections where the kernel's module loader puts
	 * them (offsets from the map's start) and where they are in the .ko */
	struct kmod_sec {
		uint64_t off, size, link;
	} *ksecs;
	size_t nksecs;
};

struct pl_attrib {
	pl_report *rep;
	ls_options lsopt;
	struct dso_attr *dattr; /* by dso index */
	size_t ndattr;
	struct symtab kallsyms;
	char *kallsyms_buf;
	int kallsyms_tried;
	char home_debug[PATH_MAX];
	char osrelease[256];
	/* frame cache: (parent, map, address) -> node */
	struct fslot {
		const pl_map *map;
		uint64_t addr;
		uint32_t parent, node;
	} *fc;
	size_t nfc, fc_used;
	/* caller chains -> node: (process, its maps' generation, the callers'
	 * addresses); a sample then costs one probe here and one for its leaf */
	struct cslot {
		uint64_t hash;
		const pl_proc *proc;
		unsigned gen, kgen;
		uint32_t off, n, node, used;
	} *cc;
	size_t ncc, cc_used;
	uint64_t *pool;
	size_t npool, cap_pool;
	/* binaries named in the file's build-id table are opened on a second
	 * thread while the first pass reads the records (NULL: none, or the
	 * thread was abandoned) */
	struct prefetch *pf;
	uint64_t deep_chains;  /* samples whose call chain was cut at PL_MAX_FRAMES */
};

/* Frames of one sample that are resolved: perf's own default for
 * --max-stack is 127; deeper chains keep their innermost frames, and the
 * report says how many samples were cut (pl_attrib_warn_bounds). */
#define PL_MAX_FRAMES 512

struct warn_count {
	int verbose;
	unsigned n;
	char first[512]; /* the first warning: the reason, shown without -v */
};

/* libloopscope's warnings about parts of a binary it could not analyze
 * are counted; -v prints them all.  They come from the analysis threads,
 * several at once (loopscope.h): the count is atomic (the first one alone
 * keeps its text), and stdio locks the stream. */
static void ls_warn_sink(void *ctx, const char *message)
{
	struct warn_count *w = ctx;
	if (__atomic_fetch_add(&w->n, 1, __ATOMIC_RELAXED) == 0)
		snprintf(w->first, sizeof w->first, "%s", message);
	if (w->verbose)
		fprintf(stderr, "perf-loops: %s\n", message);
}

static ls_module *open_module(struct pl_attrib *a, const char *path);
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
 * The state is shared with the thread and owned by whoever is last: the
 * main thread waits for a binary at most PERF_LOOPS_PREFETCH_TIMEOUT
 * seconds (default 60); past that it abandons the thread (which frees the
 * state when it ends) and opens what it needs itself, so a binary whose
 * analysis hangs can never hang the report. */

struct prefetch_item {
	char *path;
	uint8_t id[20];
	uint8_t id_size;
	ls_module *mod;
};

struct prefetch {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	ls_options lsopt;
	int verbose, quiet;
	struct prefetch_item *items;
	size_t n, done;  /* items[0..done) are finished */
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
		pthread_mutex_lock(&pf->lock);
		int stop = pf->stop;
		pthread_mutex_unlock(&pf->lock);
		if (stop)
			break;
		struct prefetch_item *p = &pf->items[i];
		ls_module *m = NULL;
		if (file_has_build_id(p->path, p->id, p->id_size))
			m = open_module_with(&pf->lsopt, pf->verbose, pf->quiet, p->path);
		pthread_mutex_lock(&pf->lock);
		p->mod = m;
		pf->done = i + 1;
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

/* Wait until item I is done (all of them: I = N) or the thread is, at
 * most the timeout.  Returns 0 if it is; -1 (thread abandoned) if not. */
static int prefetch_wait(struct pl_attrib *a, size_t i)
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
	pthread_mutex_lock(&pf->lock);
	while (pf->done < i && !pf->finished && rc == 0)
		rc = pthread_cond_timedwait(&pf->cond, &pf->lock, &deadline);
	if (pf->done >= i || pf->finished) {
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
	pthread_mutex_unlock(&pf->lock);
	if (prefetch_wait(a, pf->n) < 0)
		return;
	pthread_join(pf->thread, NULL);
	prefetch_free(pf);
	a->pf = NULL;
}

/* The module the second thread opened for PATH, if any (taken once). */
static ls_module *prefetched(struct pl_attrib *a, const char *path)
{
	struct prefetch *pf = a->pf;
	if (!pf)
		return NULL;
	for (size_t i = 0; i < pf->n; i++) {
		if (strcmp(pf->items[i].path, path))
			continue;
		if (prefetch_wait(a, i + 1) < 0)
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

struct pl_attrib *pl_attrib_new(pl_report *rep)
{
	struct pl_attrib *a = pl_xcalloc(1, sizeof *a);
	a->rep = rep;
	ls_options_init(&a->lsopt);
	a->lsopt.warn = ls_warn_sink;
	a->lsopt.progress = 0;
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
	a->nfc = 1 << 16;
	a->fc = pl_xcalloc(a->nfc, sizeof *a->fc);
	a->ncc = 1 << 14;
	a->cc = pl_xcalloc(a->ncc, sizeof *a->cc);
	prefetch_start(a);
	return a;
}

void pl_attrib_free(struct pl_attrib *a)
{
	if (!a)
		return;
	prefetch_end(a);
	for (size_t i = 0; i < a->ndattr; i++) {
		struct dso_attr *d = &a->dattr[i];
		if (d->mod)
			ls_module_close(d->mod);
		free(d->path);
		ls_file_close(d->file);
		free(d->ksecs);
	}
	free(a->dattr);
	free(a->kallsyms.v);
	free(a->kallsyms_buf);
	free(a->fc);
	free(a->cc);
	free(a->pool);
	free(a);
}

static void hex_id(const pl_dso *d, char *buf)
{
	for (int i = 0; i < d->build_id_size; i++)
		sprintf(buf + 2 * i, "%02x", d->build_id[i]);
	buf[2 * d->build_id_size] = 0;
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

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* /proc/kallsyms: "ADDR TYPE NAME [MODULE]", about 150k lines.  Read in one
 * go and parsed by hand; the names stay in the buffer (sscanf and a copy
 * per name were most of the time of a small report). */
static void load_kallsyms(struct pl_attrib *a)
{
	if (a->kallsyms_tried)
		return;
	a->kallsyms_tried = 1;
	/* perf record keeps a copy of kallsyms in its build-id cache: it is
	 * the recorded kernel's, and a plain file reads many times faster than
	 * /proc/kallsyms (which the kernel formats line by line) */
	int fd = -1;
	const char *why;
	pd_reader *r = a->rep->r;
	for (size_t i = 0; i < pd_nbuild_ids(r) && fd < 0; i++) {
		const pd_build_id *b = pd_build_id_at(r, i);
		if (strcmp(b->filename, "[kernel.kallsyms]"))
			continue;
		char hex[41], p[PATH_MAX + 128];
		for (int k = 0; k < b->size; k++)
			sprintf(hex + 2 * k, "%02x", b->id[k]);
		hex[2 * b->size] = 0;
		snprintf(p, sizeof p, "%s/[kernel.kallsyms]/%s/kallsyms", a->home_debug, hex);
		fd = pd_open_regular(p, &why);
		if (fd < 0) {
			snprintf(p, sizeof p, "%s/.build-id/%.2s/%s/kallsyms", a->home_debug, hex, hex + 2);
			fd = pd_open_regular(p, &why);
		}
	}
	if (fd < 0) {
		struct utsname u;
		/* /proc/kallsyms describes the running kernel, which must be the recorded one */
		if (uname(&u) == 0 && a->osrelease[0] && strcmp(u.release, a->osrelease))
			return;
		fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return;
	size_t cap = 8 << 20, len = 0;
	char *buf = pl_xmalloc(cap);
	for (;;) {
		if (len + 65536 > cap) {
			cap *= 2;
			buf = pl_xrealloc(buf, cap);
		}
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = 0;
	a->kallsyms_buf = buf;
	size_t vcap = 0;
	int sorted = 1;
	for (char *p = buf, *end = buf + len; p < end;) {
		char *nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		*nl = 0;
		uint64_t addr = 0;
		int h;
		char *q = p;
		while ((h = hexval(*q)) >= 0)
			addr = addr << 4 | h, q++;
		if (*q == ' ' && q[1] && q[2] == ' ' && addr) {
			char type = q[1];
			char *name = q + 3, *sp = strchr(name, '\t');
			if (sp)
				*sp = 0; /* drop the [module] column */
			if (type == 't' || type == 'T' || type == 'w' || type == 'W') {
				if (a->kallsyms.n == vcap) {
					vcap = vcap ? vcap * 2 : 65536;
					a->kallsyms.v = pl_xrealloc(a->kallsyms.v, vcap * sizeof *a->kallsyms.v);
				}
				struct sym *s = &a->kallsyms.v[a->kallsyms.n++];
				s->addr = addr;
				s->size = 0;
				s->name = name;
				if (a->kallsyms.n > 1 && s[-1].addr > addr)
					sorted = 0;
			}
		}
		p = nl + 1;
	}
	if (!sorted)
		qsort(a->kallsyms.v, a->kallsyms.n, sizeof *a->kallsyms.v, sym_cmp);
}

/* One line per binary: the first warning (it names the binary and the
 * reason, e.g. no DWARF), and how many more -v would show. */
static void print_first_warning(const char *path, const struct warn_count *w)
{
	const char *msg = w->first;
	size_t l = strlen(path);
	if (!strncmp(msg, path, l) && !strncmp(msg + l, ": ", 2))
		msg += l + 2;
	if (w->n == 1)
		fprintf(stderr, "perf-loops: warning: %s: %s\n", path, msg);
	else
		fprintf(stderr, "perf-loops: warning: %s: %s (and %u more warnings: -v shows them)\n", path, msg,
			w->n - 1);
}

static ls_module *open_module_with(const ls_options *lsopt, int verbose, int quiet, const char *path)
{
	ls_error err;
	struct warn_count w = { verbose, 0, "" };
	ls_options opt = *lsopt;
	opt.warn_ctx = &w;
	ls_module *m = ls_module_open(path, &opt, &err);
	if (!m)
		fprintf(stderr, "perf-loops: %s\n", err.message);
	else if (w.n && !w.verbose && !quiet)
		print_first_warning(path, &w);
	return m;
}

/* The debug .ko of module DSO ([ext4] or /lib/modules/R/kernel/fs/ext4/ext4.ko.xz):
 * under --modules or /usr/lib/debug/lib/modules/RELEASE, by name, '-' and
 * '_' alike; NULL if none. */
static char *find_ko(const char *dir, const char *want, int depth)
{
	DIR *dp = depth < 8 ? opendir(dir) : NULL;
	if (!dp)
		return NULL;
	char *found = NULL;
	struct dirent *e;
	while (!found && (e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		char p[PATH_MAX];
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		size_t n = strlen(e->d_name);
		if (n > 3 && !strcmp(e->d_name + n - 3, ".ko")) {
			char base[256];
			snprintf(base, sizeof base, "%.*s", (int)(n - 3), e->d_name);
			for (char *c = base; *c; c++)
				if (*c == '-')
					*c = '_';
			if (!strcmp(base, want))
				found = pl_xstrdup(p);
		} else if (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN) {
			found = find_ko(p, want, depth + 1);
		}
	}
	closedir(dp);
	return found;
}

/* The module loader's layout of a .ko's code (kernel/module: the core's
 * SHF_EXECINSTR sections, .init ones aside, one after another in section
 * order, each at its alignment): perf records the module's base, and an
 * address in .text.unlikely is found from there. */
static void module_layout(struct dso_attr *d)
{
	uint64_t off = 0;
	for (size_t i = 0; d->file && i < ls_file_nsections(d->file); i++) {
		const ls_section *sec = ls_file_section(d->file, i);
		const unsigned code = LS_SECTION_ALLOC | LS_SECTION_EXEC;
		uint64_t link, size;
		if ((sec->flags & code) != code || !strncmp(sec->name, ".init", 5))
			continue;
		off = (off + sec->align - 1) & ~(sec->align - 1);
		if (ls_module_section(d->mod, sec->name, &link, &size) == 0) {
			d->ksecs = pl_xrealloc(d->ksecs, (d->nksecs + 1) * sizeof *d->ksecs);
			d->ksecs[d->nksecs++] = (struct kmod_sec){ off, sec->size, link };
		}
		off += sec->size;
	}
}

static void open_kmodule(struct pl_attrib *a, pl_dso *dso, struct dso_attr *d)
{
	char want[256], dir[PATH_MAX];
	snprintf(want, sizeof want, "%s", dso->short_name[0] == '[' ? dso->short_name + 1 : dso->short_name);
	want[strcspn(want, "]")] = 0;
	char *p = NULL;
	if (a->rep->opt->modules)
		p = find_ko(a->rep->opt->modules, want, 0);
	if (!p) {
		snprintf(dir, sizeof dir, "/usr/lib/debug/lib/modules/%s", a->osrelease);
		p = find_ko(dir, want, 0);
	}
	if (!p && dso->build_id_size) {
		char hex[41];
		hex_id(dso, hex);
		snprintf(dir, sizeof dir, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
		if (file_exists(dir))
			p = pl_xstrdup(dir);
	}
	if (!p)
		return;
	if (load_elf(a, dso, d, p, 1) == 1 && (d->mod = open_module(a, p))) {
		d->path = p;
		module_layout(d);
		return;
	}
	free(p);
}

static ls_module *open_module(struct pl_attrib *a, const char *path)
{
	return open_module_with(&a->lsopt, a->rep->opt->verbose, a->rep->opt->quiet, path);
}

/* Find the file behind DSO and open its structure, once. */
static struct dso_attr *dso_attr(struct pl_attrib *a, pl_dso *dso)
{
	if (dso->index >= a->ndattr) {
		size_t n = dso->index + 16;
		a->dattr = pl_xrealloc(a->dattr, n * sizeof *a->dattr);
		memset(a->dattr + a->ndattr, 0, (n - a->ndattr) * sizeof *a->dattr);
		a->ndattr = n;
	}
	struct dso_attr *d = &a->dattr[dso->index];
	if (d->tried)
		return d;
	d->tried = 1;
	char hex[41], p[PATH_MAX + 64];
	hex_id(dso, hex);
	if (dso->kind == PL_DSO_KERNEL || dso->kind == PL_DSO_KMODULE) {
		/* in pipe mode the release comes as a record, after we started */
		const char *rel = pd_osrelease(a->rep->r);
		if (rel && *rel)
			snprintf(a->osrelease, sizeof a->osrelease, "%s", rel);
		if (dso->kind == PL_DSO_KMODULE) {
			open_kmodule(a, dso, d);
			if (d->nksecs)
				return d;
		}
		if (dso->kind == PL_DSO_KERNEL && a->rep->opt->vmlinux) {
			/* -k: the user's choice, even when its build-id differs */
			const char *k = a->rep->opt->vmlinux;
			int r = file_exists(k) ? load_elf(a, dso, d, k, 1) : -1;
			if (r == 0 && load_elf(a, dso, d, k, 0) >= 0)
				if (!a->rep->opt->quiet)
					fprintf(stderr, "perf-loops: %s: build-id differs from the recorded kernel's; using it anyway\n", k);
			if (r >= 0 && (d->mod = open_module(a, k)))
				d->path = pl_xstrdup(k);
			else
				fprintf(stderr, "perf-loops: %s: cannot use it as the kernel image\n", k);
		}
		if (dso->kind == PL_DSO_KERNEL) {
			const char *cands[] = {
				"/usr/lib/debug/boot/vmlinux-%s",
				"/usr/lib/debug/lib/modules/%s/vmlinux",
				"/boot/vmlinux-%s",
				"/lib/modules/%s/build/vmlinux",
			};
			for (size_t i = 0; i < sizeof cands / sizeof cands[0] && !d->mod; i++) {
				snprintf(p, sizeof p, cands[i], a->osrelease);
				if (!file_exists(p) || load_elf(a, dso, d, p, 1) != 1)
					continue;
				d->mod = open_module(a, p);
				if (d->mod)
					d->path = pl_xstrdup(p);
			}
			if (!d->mod && dso->build_id_size) {
				snprintf(p, sizeof p, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
				if (file_exists(p) && load_elf(a, dso, d, p, 1) == 1 && (d->mod = open_module(a, p)))
					d->path = pl_xstrdup(p);
			}
			if (d->mod) {
				uint64_t text, size;
				if (ls_module_symbol(d->mod, "_text", &text, &size) < 0)
					text = 0;
				/* the link address of _text; the map holds its runtime one */
				d->kernel_delta = (int64_t)text;
				return d;
			}
		}
		load_kallsyms(a);
		d->use_kallsyms = a->kallsyms.n > 0;
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
	if (!found && dso->kind == PL_DSO_USER && file_exists(upath) && load_elf(a, dso, d, upath, 0) >= 0) {
		if (!a->rep->opt->quiet)
			fprintf(stderr, "perf-loops: %s: build-id differs from the recorded one; using it anyway\n", upath);
		found = upath;
	}
	if (!found) {
		if (dso->kind == PL_DSO_USER && !a->rep->opt->quiet)
			fprintf(stderr, "perf-loops: %s: binary not found (build-id %s); its frames are shown by address\n",
				dso->name, dso->build_id_size ? hex : "unknown");
		return d;
	}
	d->path = pl_xstrdup(found);
	d->mod = prefetched(a, found);
	if (!d->mod)
		d->mod = open_module(a, found);
	return d;
}

/* A runtime address in MAP -> the link-time address in its file. */
static int to_link(const struct dso_attr *d, const pl_map *m, uint64_t addr, uint64_t *out)
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
	struct dso_attr *d = dso_attr(a, dso);
	return d->file && !ls_file_is_relocatable(d->file) ? d->path : NULL;
}

int pl_attrib_link_addr(struct pl_attrib *a, const pl_map *m, uint64_t addr, uint64_t *link)
{
	struct dso_attr *d = dso_attr(a, m->dso);
	return to_link(d, m, addr, link);
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

/* Append the static chain of ADDR (already adjusted) in MAP under PARENT. */
static uint32_t expand_frame(struct pl_attrib *a, uint32_t parent, const pl_map *map, uint64_t addr, int kernel)
{
	pl_report *rep = a->rep;
	if (!map) {
		char name[64];
		if (kernel) {
			load_kallsyms(a);
			const struct sym *s = symtab_find(&a->kallsyms, addr);
			if (s)
				return named_node(a, parent, NULL, s->name);
			snprintf(name, sizeof name, "[kernel] %#llx", (unsigned long long)addr);
			return named_node(a, parent, NULL, name);
		}
		return named_node(a, parent, NULL, "[unknown]");
	}
	struct dso_attr *d = dso_attr(a, map->dso);
	uint64_t link = 0;
	int have_link = 0;
	if (map->dso->kind == PL_DSO_KERNEL && d->mod) {
		/* the kernel map's pgoff is _text's runtime address */
		link = addr - map->pgoff + (uint64_t)d->kernel_delta;
		have_link = 1;
	} else if (map->dso->kind == PL_DSO_KMODULE && d->nksecs) {
		uint64_t off = addr - map->start;
		for (size_t i = 0; i < d->nksecs && !have_link; i++)
			if (off >= d->ksecs[i].off && off - d->ksecs[i].off < d->ksecs[i].size) {
				link = d->ksecs[i].link + (off - d->ksecs[i].off);
				have_link = 1;
			}
	} else if (d->file) {
		have_link = to_link(d, map, addr, &link) == 0;
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
				node = pl_tree_child(&rep->tree, node, (uintptr_t)chain[i], kind);
				pl_node *x = &rep->tree.nodes[node];
				if (!x->scope) {
					x->scope = chain[i];
					if (kind == PL_PROC)
						x->dso = map->dso;
				}
			}
			return node;
		}
	}
	if (d->use_kallsyms) {
		const struct sym *s = symtab_find(&a->kallsyms, addr);
		if (s)
			return named_node(a, parent, map->dso, s->name);
	}
	ls_symbol sym;
	if (have_link && ls_file_symbol_at(d->file, link, &sym) == 0)
		return named_node(a, parent, map->dso, sym.name);
	if (map->dso->kind == PL_DSO_KERNEL) {
		char name[64];
		snprintf(name, sizeof name, "[kernel] %#llx", (unsigned long long)addr);
		return named_node(a, parent, map->dso, name);
	}
	return named_node(a, parent, map->dso, "[unknown]");
}

static uint32_t frame_node(struct pl_attrib *a, uint32_t parent, pl_thread *t, uint64_t addr, int kernel, int adjust)
{
	pl_map *map = pl_find_map(a->rep->s, t, addr, kernel);
	uint64_t key = addr - (adjust ? 1 : 0);
	/* an unmapped address has no map: tell kernel and user apart in the key */
	const pl_map *mkey = map ? map : (const pl_map *)(uintptr_t)(kernel ? 1 : 2);
	uint64_t h = (key * 0x9e3779b97f4a7c15ULL) ^ ((uintptr_t)mkey * 0xc2b2ae3d27d4eb4fULL) ^
		     ((uint64_t)parent * 0x165667b19e3779f9ULL);
	h ^= h >> 31;
	size_t i = h & (a->nfc - 1);
	while (a->fc[i].map) {
		if (a->fc[i].map == mkey && a->fc[i].addr == key && a->fc[i].parent == parent)
			return a->fc[i].node;
		i = (i + 1) & (a->nfc - 1);
	}
	uint32_t node = expand_frame(a, parent, map, key, kernel);
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

struct frame {
	uint64_t addr;
	uint8_t kernel, adjust;
};

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
		h = (h ^ (fr[i].addr - fr[i].adjust)) * 0xff51afd7ed558ccdULL;
	h ^= h >> 32;
	size_t i = h & (a->ncc - 1);
	uint32_t n = (uint32_t)(nf - 1);
	while (a->cc[i].used) {
		const struct cslot *c = &a->cc[i];
		if (c->hash == h && c->proc == t->proc && c->gen == t->proc->gen && c->kgen == kgen && c->n == n) {
			const uint64_t *p = a->pool + c->off;
			size_t k;
			for (k = 0; k < n && p[k] == fr[k + 1].addr - fr[k + 1].adjust; k++)
				;
			if (k == n)
				return c->node;
		}
		i = (i + 1) & (a->ncc - 1);
	}
	uint32_t node = 0;
	for (size_t k = nf; k-- > 1;)
		node = frame_node(a, node, t, fr[k].addr, fr[k].kernel, fr[k].adjust);
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
		a->pool[a->npool + k] = fr[k + 1].addr - fr[k + 1].adjust;
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
	if (opt->ncomms && !in_list(opt->comms, opt->ncomms, t->comm))
		return;
	if (opt->npids) {
		size_t i;
		for (i = 0; i < opt->npids; i++)
			if (opt->pids[i] == smp->pid)
				break;
		if (i == opt->npids)
			return;
	}
	if (opt->nevents && !in_list(opt->events, opt->nevents, smp->attr->name))
		return;
	if (opt->ntids && !in_ids(opt->tids, opt->ntids, smp->tid))
		return;
	if (opt->has_time && ev->has_time && (smp->time < opt->time_start || smp->time > opt->time_stop))
		return;
	int kernel_ip = smp->cpumode == PD_MISC_KERNEL || smp->cpumode == PD_MISC_HYPERVISOR;
	if (opt->ndsos) {
		/* perf's --dsos: the binary of the sampled address */
		pl_map *m = pl_find_map(s, t, smp->ip, kernel_ip);
		const char *nm = m ? m->dso->short_name : "[unknown]";
		if (!in_list(opt->dsos, opt->ndsos, nm) && !(m && in_list(opt->dsos, opt->ndsos, m->dso->name)))
			return;
	}
	struct frame fr[PL_MAX_FRAMES];
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
			nf++;
		}
	}
	if (dwarf && !kernel_ip_only(smp)) {
		uint64_t pcs[256];
		size_t n = pl_unwind_user(a, t, smp, pcs, 256);
		for (size_t i = 0; i < n && nf < PL_MAX_FRAMES; i++) {
			fr[nf].addr = pcs[i];
			fr[nf].kernel = 0;
			fr[nf].adjust = nf > 0;
			nf++;
		}
	}
	if (lbr && !kernel_ip_only(smp)) {
		if (!kernel_ip && nf < PL_MAX_FRAMES) {
			fr[nf].addr = smp->ip;
			fr[nf].kernel = 0;
			fr[nf].adjust = 0;
			nf++;
		}
		for (uint64_t i = 0; i < smp->nr_branches && nf < PL_MAX_FRAMES; i++) {
			if (!smp->branches[i].from)
				break;
			fr[nf].addr = smp->branches[i].from;
			fr[nf].kernel = 0;
			fr[nf].adjust = 0;
			nf++;
		}
	}
	if (!nf) {
		fr[0].addr = smp->ip;
		fr[0].kernel = (uint8_t)kernel_ip;
		fr[0].adjust = 0;
		nf = 1;
	}
	if (opt->max_stack && nf > (size_t)opt->max_stack)
		nf = (size_t)opt->max_stack; /* --max-stack: the innermost frames */
	uint32_t node = caller_node(a, t, fr, nf);
	node = frame_node(a, node, t, fr[0].addr, fr[0].kernel, fr[0].adjust);
	pl_tree *tr = &rep->tree;
	uint64_t period = smp->period;
	/* only the leaf is counted now; pl_tree_finish sums the totals */
	uint64_t *c = pl_cost_at(tr, node, e);
	c[PL_SELF]++;
	c[PL_SELF_PERIOD] += period;
	rep->ev_samples[e]++;
	rep->ev_period[e] += period;
}

void pl_attrib_warn_bounds(struct pl_attrib *a)
{
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

void pl_tree_finish(pl_tree *t)
{
	ev_index_free(t->evx);
	t->evx = NULL;
	/* Samples were counted at their leaf only.  Children have higher
	 * indices than their parents: one backward pass gives every node its
	 * total (its own samples and its children's totals), and turns self
	 * into the exclusive cost of the scope in its frame (a loop's self is
	 * what its statements cost, not its callees).  Only the (node, event)
	 * entries that exist are visited; pl_cost_at may move the entries, so
	 * they are named by index. */
	for (size_t n = t->n; n-- > 0;) {
		uint32_t parent = t->nodes[n].parent;
		for (uint32_t ci = t->nodes[n].costs; ci; ci = t->costs[ci].next) {
			t->costs[ci].c[PL_TOTAL] += t->costs[ci].c[PL_SELF];
			t->costs[ci].c[PL_TOTAL_PERIOD] += t->costs[ci].c[PL_SELF_PERIOD];
			if (!n)
				continue;
			uint64_t total = t->costs[ci].c[PL_TOTAL], total_period = t->costs[ci].c[PL_TOTAL_PERIOD];
			uint64_t *p = pl_cost_at(t, parent, t->costs[ci].ev);
			p[PL_TOTAL] += total;
			p[PL_TOTAL_PERIOD] += total_period;
		}
	}
	/* a second pass: the totals above needed each node's own samples */
	for (size_t n = t->n; n-- > 1;) {
		const pl_node *x = &t->nodes[n];
		if (x->kind == PL_PROC || !x->parent)
			continue;
		uint32_t parent = x->parent;
		for (uint32_t ci = t->nodes[n].costs; ci; ci = t->costs[ci].next) {
			uint64_t self = t->costs[ci].c[PL_SELF], self_period = t->costs[ci].c[PL_SELF_PERIOD];
			if (!self && !self_period)
				continue;
			uint64_t *p = pl_cost_at(t, parent, t->costs[ci].ev);
			p[PL_SELF] += self;
			p[PL_SELF_PERIOD] += self_period;
		}
	}
}

/* ---- names for the views ------------------------------------------------------------ */

const char *pl_node_name(const pl_report *rep, uint32_t n)
{
	const pl_node *x = &rep->tree.nodes[n];
	if (x->name)
		return x->name;
	if (x->scope) {
		/* --no-demangle: the symbol table's name where it differs */
		const char *linkage = rep->opt->no_demangle ? ls_scope_linkage_name(x->scope) : NULL;
		return linkage ? linkage : ls_scope_name(x->scope);
	}
	return NULL;
}

const char *pl_node_file(const pl_report *rep, uint32_t n)
{
	const pl_node *x = &rep->tree.nodes[n];
	return x->scope ? ls_scope_file(x->scope) : NULL;
}

unsigned pl_node_line(const pl_report *rep, uint32_t n)
{
	const pl_node *x = &rep->tree.nodes[n];
	return x->scope ? ls_scope_line(x->scope) : 0;
}

static const char *base_name(const char *p)
{
	if (!p)
		return "??";
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* "FILE:LINE" in BUF, or "[no line]": line 0 is never shown as a line. */
static const char *location(char *buf, size_t len, const char *file, unsigned line)
{
	if (line)
		snprintf(buf, len, "%s:%u", base_name(file), line);
	else
		snprintf(buf, len, "[no line]");
	return buf;
}

void pl_node_label(const pl_report *rep, uint32_t n, char *buf, size_t len)
{
	const pl_node *x = &rep->tree.nodes[n];
	const char *name = pl_node_name(rep, n);
	char loc[512];
	char shortened[1024];
	if (!rep->opt->full_names && !rep->opt->no_demangle)
		name = pl_short_name(name, shortened, sizeof shortened);
	switch (x->kind) {
	case PL_ROOT:
		snprintf(buf, len, "[all]");
		break;
	case PL_PROC:
		snprintf(buf, len, "%s", name ? name : "[unknown]");
		break;
	case PL_INLINE:
		snprintf(buf, len, "[I] %s (at %s)", name ? name : "??",
			 location(loc, sizeof loc, ls_scope_call_file(x->scope), ls_scope_call_line(x->scope)));
		break;
	case PL_ALIEN:
		snprintf(buf, len, "[A] %s",
			 location(loc, sizeof loc, ls_scope_file(x->scope), ls_scope_line(x->scope)));
		break;
	case PL_LOOP:
		snprintf(buf, len, "loop at %s",
			 location(loc, sizeof loc, ls_scope_file(x->scope), ls_scope_line(x->scope)));
		break;
	case PL_STMT:
		snprintf(buf, len, "%s", location(loc, sizeof loc, ls_scope_file(x->scope), ls_scope_line(x->scope)));
		break;
	}
}

struct sort_ctx {
	const pl_report *rep;
	const pl_tree *tree;
};

static int cmp_total(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *sc = arg;
	uint32_t x = *(const uint32_t *)pa, y = *(const uint32_t *)pb;
	uint64_t cx = pl_cost(sc->tree, x, sc->rep->primary)[PL_TOTAL_PERIOD];
	uint64_t cy = pl_cost(sc->tree, y, sc->rep->primary)[PL_TOTAL_PERIOD];
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return x < y ? -1 : x > y;
}

size_t pl_sorted_children(const pl_report *rep, const pl_tree *t, uint32_t n, uint32_t **out)
{
	size_t k = 0;
	for (uint32_t c = t->nodes[n].first_child; c; c = t->nodes[c].next_sibling)
		k++;
	uint32_t *v = pl_xmalloc((k ? k : 1) * sizeof *v);
	k = 0;
	for (uint32_t c = t->nodes[n].first_child; c; c = t->nodes[c].next_sibling)
		v[k++] = c;
	struct sort_ctx sc = { rep, t };
	qsort_r(v, k, sizeof *v, cmp_total, &sc);
	*out = v;
	return k;
}

/* ---- per-event children ------------------------------------------------------------ */

struct pl_ev_index {
	uint32_t *ev_start;  /* the cost entries grouped by event: CSR over nev */
	uint32_t *ev_nodes;  /* their nodes */
	size_t built_ev;     /* the event PAIRS is for; SIZE_MAX: none */
	uint64_t *pairs;     /* parent << 32 | node, of the event's nodes with a total, sorted */
	size_t npairs;
};

static void ev_index_free(struct pl_ev_index *x)
{
	if (!x)
		return;
	free(x->ev_start);
	free(x->ev_nodes);
	free(x->pairs);
	free(x);
}

static struct pl_ev_index *ev_index(const pl_tree *t)
{
	if (t->evx)
		return t->evx;
	struct pl_ev_index *x = pl_xcalloc(1, sizeof *x);
	x->ev_start = pl_xcalloc(t->nev + 2, sizeof *x->ev_start);
	x->ev_nodes = pl_xmalloc((t->ncosts + 1) * sizeof *x->ev_nodes);
	for (size_t c = 1; c < t->ncosts; c++)
		if (t->costs[c].ev < t->nev)
			x->ev_start[t->costs[c].ev + 1]++;
	for (size_t e = 0; e < t->nev; e++)
		x->ev_start[e + 1] += x->ev_start[e];
	uint32_t *fill = pl_xmalloc((t->nev + 1) * sizeof *fill);
	memcpy(fill, x->ev_start, (t->nev + 1) * sizeof *fill);
	for (size_t c = 1; c < t->ncosts; c++)
		if (t->costs[c].ev < t->nev)
			x->ev_nodes[fill[t->costs[c].ev]++] = t->costs[c].node;
	free(fill);
	x->built_ev = SIZE_MAX;
	((pl_tree *)t)->evx = x; /* a cache: the tree itself does not change */
	return x;
}

size_t pl_event_nodes(const pl_tree *t, size_t ev, const uint32_t **out)
{
	struct pl_ev_index *x = ev_index(t);
	if (ev >= t->nev) {
		*out = x->ev_nodes;
		return 0;
	}
	*out = x->ev_nodes + x->ev_start[ev];
	return x->ev_start[ev + 1] - x->ev_start[ev];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

size_t pl_event_children(const pl_report *rep, const pl_tree *t, uint32_t n, uint32_t **out)
{
	struct pl_ev_index *x = ev_index(t);
	if (x->built_ev != rep->primary) {
		const uint32_t *nodes;
		size_t m = pl_event_nodes(t, rep->primary, &nodes);
		x->pairs = pl_xrealloc(x->pairs, (m + 1) * sizeof *x->pairs);
		x->npairs = 0;
		for (size_t i = 0; i < m; i++)
			if (nodes[i] && pl_cost(t, nodes[i], rep->primary)[PL_TOTAL])
				x->pairs[x->npairs++] = (uint64_t)t->nodes[nodes[i]].parent << 32 | nodes[i];
		qsort(x->pairs, x->npairs, sizeof *x->pairs, cmp_u64);
		x->built_ev = rep->primary;
	}
	size_t lo = 0, hi = x->npairs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if ((x->pairs[mid] >> 32) < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t k = 0;
	while (lo + k < x->npairs && (x->pairs[lo + k] >> 32) == n)
		k++;
	uint32_t *v = pl_xmalloc((k ? k : 1) * sizeof *v);
	for (size_t i = 0; i < k; i++)
		v[i] = (uint32_t)x->pairs[lo + i];
	struct sort_ctx sc = { rep, t };
	qsort_r(v, k, sizeof *v, cmp_total, &sc);
	*out = v;
	return k;
}
