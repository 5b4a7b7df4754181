/* session.c - processes, threads and maps replayed in time order.
 *
 * perf writes each CPU's ring buffer in rounds, so records of one file are
 * only roughly in time order: an MMAP on one CPU may be written after a
 * sample of another CPU that needs it.  Like perf, we replay the records
 * that matter in time order, a round at a time (see "ordered events"
 * below); a file is read on a thread of its own while the caller's thread
 * replays (see "replaying as the records are read").  Maps are immutable
 * once made, so the attribution layer may cache results per map.
 */
#include "session.h"

#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *pl_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fprintf(stderr, "perf-loops: out of memory\n");
		abort();
	}
	return p;
}

void *pl_xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p) {
		fprintf(stderr, "perf-loops: out of memory\n");
		abort();
	}
	return p;
}

void *pl_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "perf-loops: out of memory\n");
		abort();
	}
	return p;
}

char *pl_xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d) {
		fprintf(stderr, "perf-loops: out of memory\n");
		abort();
	}
	return d;
}

/* ---- a u32 -> pointer table (threads by tid, processes by pid) ---- */

struct u32map {
	uint32_t *keys;
	void **vals;
	size_t cap, n;
};

/* Keys are pids and tids from the file: fold the product's high bits down,
 * so keys that differ only in their high bits do not share one chain. */
static inline size_t u32_hash(uint32_t k, size_t cap)
{
	uint64_t h = (uint64_t)k * 0x9e3779b97f4a7c15ULL;
	return (size_t)(h ^ (h >> 32)) & (cap - 1);
}

static void *u32map_get(const struct u32map *m, uint32_t k)
{
	if (!m->cap)
		return NULL;
	size_t h = u32_hash(k, m->cap);
	while (m->vals[h]) {
		if (m->keys[h] == k)
			return m->vals[h];
		h = (h + 1) & (m->cap - 1);
	}
	return NULL;
}

static void u32map_put(struct u32map *m, uint32_t k, void *v)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		uint32_t *nk = pl_xcalloc(ncap, sizeof *nk);
		void **nv = pl_xcalloc(ncap, sizeof *nv);
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->vals[i])
				continue;
			size_t h = u32_hash(m->keys[i], ncap);
			while (nv[h])
				h = (h + 1) & (ncap - 1);
			nk[h] = m->keys[i];
			nv[h] = m->vals[i];
		}
		free(m->keys);
		free(m->vals);
		m->keys = nk;
		m->vals = nv;
		m->cap = ncap;
	}
	size_t h = u32_hash(k, m->cap);
	while (m->vals[h]) {
		if (m->keys[h] == k) {
			m->vals[h] = v;
			return;
		}
		h = (h + 1) & (m->cap - 1);
	}
	m->keys[h] = k;
	m->vals[h] = v;
	m->n++;
}

/* ---- interned strings ---- */

struct strset {
	char **v;
	size_t cap, n;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static const char *strset_intern(struct strset *t, const char *s)
{
	if ((t->n + 1) * 2 > t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 256;
		char **nv = pl_xcalloc(ncap, sizeof *nv);
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->v[i])
				continue;
			size_t h = hash_str(t->v[i]) & (ncap - 1);
			while (nv[h])
				h = (h + 1) & (ncap - 1);
			nv[h] = t->v[i];
		}
		free(t->v);
		t->v = nv;
		t->cap = ncap;
	}
	size_t h = hash_str(s) & (t->cap - 1);
	while (t->v[h]) {
		if (!strcmp(t->v[h], s))
			return t->v[h];
		h = (h + 1) & (t->cap - 1);
	}
	t->v[h] = pl_xstrdup(s);
	t->n++;
	return t->v[h];
}

/* ---- the session ---- */

struct entry {
	uint64_t time;
	const uint8_t *raw;
};

struct pl_session {
	pd_reader *r;
	struct u32map threads, procs;
	pl_maps kernel_maps;
	pl_dso **dsos;
	size_t ndsos, cap_dsos;
	struct strset strings;
	/* all maps and threads ever made: freed at the end */
	pl_map **all_maps;
	size_t nall_maps, cap_all_maps;
	uint64_t lost_samples, lost_chunks, bad_records;
	unsigned kernel_gen;
	int data_addrs;   /* perf record -d (PERF_SAMPLE_ADDR and mmap_data): keep the data maps too */
};

pl_session *pl_session_new(pd_reader *r)
{
	pl_session *s = pl_xcalloc(1, sizeof *s);
	s->r = r;
	/* --call-graph dwarf sets PERF_SAMPLE_ADDR too (timer samples' are 0):
	 * only mmap_data (perf_event_attr bit 17) says data maps were recorded */
	for (size_t i = 0; i < pd_nattrs(r); i++)
		if ((pd_attr_at(r, i)->sample_type & PD_SAMPLE_ADDR) && (pd_attr_at(r, i)->flags & (1u << 17)))
			s->data_addrs = 1;
	return s;
}

/* ---- a process's maps: a treap keyed by start ----
 * Priorities come from a generator the input does not steer, so the
 * expected depth is O(log n) whatever order the mmaps come in (a sorted
 * array needed an O(n) memmove per mmap: 4 s for 200k). */

struct pl_map_node {
	pl_map *m;
	struct pl_map_node *l, *r;
	uint64_t prio;
};

static uint64_t treap_state = 0x9e3779b97f4a7c15ULL;

static uint64_t next_prio(void)
{
	/* xorshift64*: a fixed seed keeps runs reproducible */
	uint64_t x = __atomic_load_n(&treap_state, __ATOMIC_RELAXED);
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	__atomic_store_n(&treap_state, x, __ATOMIC_RELAXED);
	return x * 0x2545F4914F6CDD1DULL;
}

static struct pl_map_node *node_new(pl_map *m)
{
	struct pl_map_node *n = pl_xmalloc(sizeof *n);
	n->m = m;
	n->l = n->r = NULL;
	n->prio = next_prio();
	return n;
}

/* L gets the maps starting below KEY, R the others. */
static void treap_split(struct pl_map_node *t, uint64_t key, struct pl_map_node **l, struct pl_map_node **r)
{
	if (!t) {
		*l = *r = NULL;
	} else if (t->m->start < key) {
		treap_split(t->r, key, &t->r, r);
		*l = t;
	} else {
		treap_split(t->l, key, l, &t->l);
		*r = t;
	}
}

/* Every map of A starts below every map of B. */
static struct pl_map_node *treap_merge(struct pl_map_node *a, struct pl_map_node *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio > b->prio) {
		a->r = treap_merge(a->r, b);
		return a;
	}
	b->l = treap_merge(a, b->l);
	return b;
}

static size_t treap_free(struct pl_map_node *t)
{
	size_t n = 0;
	while (t) { /* right spine iteratively, left subtrees recursively */
		n += 1 + treap_free(t->l);
		struct pl_map_node *r = t->r;
		free(t);
		t = r;
	}
	return n;
}

static struct pl_map_node *treap_copy(const struct pl_map_node *t)
{
	if (!t)
		return NULL;
	struct pl_map_node *c = pl_xmalloc(sizeof *c);
	*c = *t;
	c->l = treap_copy(t->l);
	c->r = treap_copy(t->r);
	return c;
}

static void treap_list(const struct pl_map_node *t, pl_map **out, size_t *k)
{
	while (t) {
		treap_list(t->l, out, k);
		out[(*k)++] = t->m;
		t = t->r;
	}
}

pl_map **pl_maps_list(const pl_maps *mm, size_t *n)
{
	pl_map **v = pl_xmalloc((mm->n + 1) * sizeof *v);
	size_t k = 0;
	treap_list(mm->root, v, &k);
	*n = k;
	return v;
}

/* M's own treap, to change: a shared one is copied now (copy on write). */
static void unshare_maps(pl_maps *m)
{
	if (!m->refs)
		return;
	if (--*m->refs > 0)
		m->root = treap_copy(m->root);
	else
		free(m->refs);
	m->refs = NULL;
}

/* DST (empty) shares SRC's treap. */
static void share_maps(pl_maps *dst, pl_maps *src)
{
	if (!src->refs) {
		src->refs = pl_xmalloc(sizeof *src->refs);
		*src->refs = 1;
	}
	++*src->refs;
	*dst = *src;
}

static void free_maps(pl_maps *m)
{
	if (m->refs && *m->refs > 1)
		--*m->refs; /* the others keep the treap */
	else {
		free(m->refs);
		treap_free(m->root);
	}
	m->refs = NULL;
	m->root = NULL;
	m->n = 0;
}

void pl_session_free(pl_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->threads.cap; i++)
		free(s->threads.vals[i]);
	for (size_t i = 0; i < s->procs.cap; i++) {
		pl_proc *p = s->procs.vals[i];
		if (p) {
			free_maps(&p->maps);
			free_maps(&p->all_maps);
			free(p);
		}
	}
	free(s->threads.keys);
	free(s->threads.vals);
	free(s->procs.keys);
	free(s->procs.vals);
	free_maps(&s->kernel_maps);
	for (size_t i = 0; i < s->nall_maps; i++)
		free(s->all_maps[i]);
	free(s->all_maps);
	for (size_t i = 0; i < s->ndsos; i++) {
		free(s->dsos[i]->name);
		free(s->dsos[i]);
	}
	free(s->dsos);
	for (size_t i = 0; i < s->strings.cap; i++)
		free(s->strings.v[i]);
	free(s->strings.v);
	free(s);
}

void pl_session_each_proc(pl_session *s, void (*fn)(void *ctx, pl_proc *p), void *ctx)
{
	for (size_t i = 0; i < s->procs.cap; i++)
		if (s->procs.vals[i])
			fn(ctx, s->procs.vals[i]);
}

const char *pl_intern(pl_session *s, const char *str)
{
	return strset_intern(&s->strings, str);
}

size_t pl_session_ndsos(const pl_session *s) { return s->ndsos; }
pl_dso *pl_session_dso(const pl_session *s, size_t i) { return i < s->ndsos ? s->dsos[i] : NULL; }
pd_reader *pl_session_reader(const pl_session *s) { return s->r; }
unsigned pl_session_kernel_gen(const pl_session *s) { return s->kernel_gen; }
uint64_t pl_session_lost_samples(const pl_session *s) { return s->lost_samples; }
uint64_t pl_session_lost_chunks(const pl_session *s) { return s->lost_chunks; }
uint64_t pl_session_bad_records(const pl_session *s) { return s->bad_records; }

static pl_dso *dso_get(pl_session *s, const char *name, int kernel, const uint8_t *bid, uint8_t bid_size)
{
	/* few dsos per recording: a linear search by interned name is enough */
	const char *iname = pl_intern(s, name);
	for (size_t i = 0; i < s->ndsos; i++)
		if (s->dsos[i]->short_name && !strcmp(s->dsos[i]->name, iname) &&
		    (!bid_size || !s->dsos[i]->build_id_size ||
		     (s->dsos[i]->build_id_size == bid_size && !memcmp(s->dsos[i]->build_id, bid, bid_size))))
			return s->dsos[i];
	pl_dso *d = pl_xcalloc(1, sizeof *d);
	d->name = pl_xstrdup(name);
	if (!strncmp(name, "[kernel.kallsyms]", 17)) {
		d->kind = PL_DSO_KERNEL;
		d->short_name = "[kernel.kallsyms]";
	} else if (kernel) {
		/* perf names a module [ext4], whether the map says [ext4] or
		 * /lib/modules/.../ext4.ko(.xz) */
		d->kind = PL_DSO_KMODULE;
		const char *base = strrchr(name, '/');
		base = base ? base + 1 : name;
		size_t n = strcspn(base, ".");
		char buf[256];
		if (base[0] == '[')
			snprintf(buf, sizeof buf, "%s", base);
		else
			snprintf(buf, sizeof buf, "[%.*s]", (int)(n < 200 ? n : 200), base);
		for (char *c = buf; *c; c++)
			if (*c == '-')
				*c = '_';
		d->short_name = pl_intern(s, buf);
	} else if (!strcmp(name, "[vdso]")) {
		d->kind = PL_DSO_VDSO;
	} else if (name[0] != '/') {
		d->kind = PL_DSO_ANON;
	} else if (!strncmp(name, "/memfd:", 7) || strstr(name, "(deleted)")) {
		d->kind = PL_DSO_ANON;
	}
	if (!d->short_name) {
		const char *slash = strrchr(name, '/');
		d->short_name = pl_intern(s, slash && slash[1] ? slash + 1 : name);
	}
	if (bid_size) {
		memcpy(d->build_id, bid, bid_size);
		d->build_id_size = bid_size;
	} else {
		/* the build-id table perf writes at the end of the recording */
		pd_reader *r = s->r;
		const char *match = d->kind == PL_DSO_KERNEL ? "[kernel.kallsyms]" : name;
		for (size_t i = 0; i < pd_nbuild_ids(r); i++) {
			const pd_build_id *b = pd_build_id_at(r, i);
			if (!strcmp(b->filename, match)) {
				memcpy(d->build_id, b->id, b->size);
				d->build_id_size = b->size;
				break;
			}
		}
	}
	d->index = s->ndsos;
	if (s->ndsos == s->cap_dsos) {
		s->cap_dsos = s->cap_dsos ? s->cap_dsos * 2 : 16;
		s->dsos = pl_xrealloc(s->dsos, s->cap_dsos * sizeof *s->dsos);
	}
	s->dsos[s->ndsos++] = d;
	return d;
}

static pl_map *new_map(pl_session *s, uint64_t start, uint64_t end, uint64_t pgoff, pl_dso *dso)
{
	pl_map *m = pl_xmalloc(sizeof *m);
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->dso = dso;
	if (s->nall_maps == s->cap_all_maps) {
		s->cap_all_maps = s->cap_all_maps ? s->cap_all_maps * 2 : 256;
		s->all_maps = pl_xrealloc(s->all_maps, s->cap_all_maps * sizeof *s->all_maps);
	}
	s->all_maps[s->nall_maps++] = m;
	return m;
}

/* Insert M; the parts of older maps it covers are cut away (a new mmap over
 * an old range replaces it).  O(log n) expected. */
static void maps_insert(pl_session *s, pl_maps *mm, pl_map *m)
{
	unshare_maps(mm);
	struct pl_map_node *lo, *mid, *hi;
	treap_split(mm->root, m->start, &lo, &hi);
	pl_map *left = NULL, *right = NULL;
	/* the last map below may reach into M (and beyond it) */
	struct pl_map_node **pp = &lo;
	while (*pp && (*pp)->r)
		pp = &(*pp)->r;
	if (*pp && (*pp)->m->end > m->start) {
		pl_map *o = (*pp)->m;
		left = new_map(s, o->start, m->start, o->pgoff, o->dso);
		if (o->end > m->end)
			right = new_map(s, m->end, o->end, o->pgoff + (m->end - o->start), o->dso);
		struct pl_map_node *dead = *pp;
		*pp = dead->l;
		free(dead);
		mm->n--;
	}
	/* the maps starting inside M go; the last of them may reach beyond */
	treap_split(hi, m->end, &mid, &hi);
	const struct pl_map_node *last = mid;
	while (last && last->r)
		last = last->r;
	if (last && last->m->end > m->end) {
		const pl_map *o = last->m;
		right = new_map(s, m->end, o->end, o->pgoff + (m->end - o->start), o->dso);
	}
	mm->n -= treap_free(mid);
	if (left) {
		lo = treap_merge(lo, node_new(left));
		mm->n++;
	}
	lo = treap_merge(lo, node_new(m));
	mm->n++;
	if (right) {
		lo = treap_merge(lo, node_new(right));
		mm->n++;
	}
	mm->root = treap_merge(lo, hi);
}

static pl_map *maps_find(const pl_maps *mm, uint64_t addr)
{
	const struct pl_map_node *t = mm->root, *best = NULL;
	while (t) {
		if (t->m->start <= addr) {
			best = t;
			t = t->r;
		} else {
			t = t->l;
		}
	}
	return best && addr < best->m->end ? best->m : NULL;
}

static pl_proc *proc_get(pl_session *s, uint32_t pid)
{
	pl_proc *p = u32map_get(&s->procs, pid);
	if (!p) {
		p = pl_xcalloc(1, sizeof *p);
		p->pid = pid;
		u32map_put(&s->procs, pid, p);
	}
	return p;
}

static pl_thread *thread_get(pl_session *s, uint32_t pid, uint32_t tid)
{
	pl_thread *t = u32map_get(&s->threads, tid);
	if (!t) {
		t = pl_xcalloc(1, sizeof *t);
		t->tid = tid;
		t->proc = proc_get(s, pid);
		char name[32];
		snprintf(name, sizeof name, ":%u", tid); /* perf's name for a thread it never saw named */
		t->comm = pl_intern(s, name);
		u32map_put(&s->threads, tid, t);
	} else if (t->proc->pid != pid && pid != (uint32_t)-1) {
		t->proc = proc_get(s, pid); /* a reused tid */
	}
	return t;
}

pl_map *pl_find_map(pl_session *s, pl_thread *t, uint64_t addr, int kernel)
{
	if (kernel)
		return maps_find(&s->kernel_maps, addr);
	return t ? maps_find(&t->proc->maps, addr) : NULL;
}

pl_map *pl_find_data_map(pl_session *s, pl_thread *t, uint64_t addr)
{
	return s->data_addrs && t ? maps_find(&t->proc->all_maps, addr) : NULL;
}

/* A user map into its process's all_maps (code and data alike: a later
 * mmap over an old one cuts it, whatever either is). */
static void on_data_mmap(pl_session *s, const pd_event *ev)
{
	if (ev->len == 0 || ev->start + ev->len < ev->start)
		return;
	pl_dso *d = dso_get(s, ev->filename, 0, ev->build_id, ev->build_id_size);
	pl_proc *p = proc_get(s, ev->pid);
	maps_insert(s, &p->all_maps, new_map(s, ev->start, ev->start + ev->len, ev->pgoff, d));
}

static void on_mmap(pl_session *s, const pd_event *ev)
{
	int kernel = ev->pid == (uint32_t)-1 || ev->sample.cpumode == PD_MISC_KERNEL;
	if (ev->sample.cpumode == PD_MISC_GUEST_KERNEL || ev->sample.cpumode == PD_MISC_GUEST_USER)
		return;
	if (s->data_addrs && !kernel)
		on_data_mmap(s, ev);
	/* code only: data maps do not hold instruction addresses */
	if (ev->type == PD_RECORD_MMAP2 && !kernel && !(ev->prot & 4 /* PROT_EXEC */))
		return;
	if (ev->type == PD_RECORD_MMAP && !kernel && (ev->misc & (1u << 13) /* MMAP_DATA */))
		return;
	if (ev->len == 0 || ev->start + ev->len < ev->start)
		return;
	pl_dso *d = dso_get(s, ev->filename, kernel, ev->build_id, ev->build_id_size);
	pl_map *m = new_map(s, ev->start, ev->start + ev->len, ev->pgoff, d);
	if (kernel) {
		maps_insert(s, &s->kernel_maps, m);
		s->kernel_gen++;
	}
	else {
		pl_proc *p = proc_get(s, ev->pid);
		maps_insert(s, &p->maps, m);
		p->gen++;
	}
}

static void on_comm(pl_session *s, const pd_event *ev)
{
	pl_thread *t = thread_get(s, ev->pid, ev->tid);
	t->comm = pl_intern(s, ev->filename);
	if (ev->misc & PD_MISC_COMM_EXEC) {
		/* a new program: the old image is gone */
		free_maps(&t->proc->maps);
		free_maps(&t->proc->all_maps);
		t->proc->gen++;
	}
}

static void on_fork(pl_session *s, const pd_event *ev)
{
	pl_thread *parent = thread_get(s, ev->ppid, ev->ptid);
	pl_thread *child = u32map_get(&s->threads, ev->tid);
	if (!child) {
		child = pl_xcalloc(1, sizeof *child);
		child->tid = ev->tid;
		u32map_put(&s->threads, ev->tid, child);
	}
	child->comm = parent->comm;
	if (ev->pid == ev->ppid) {
		child->proc = parent->proc; /* a new thread of the same process */
		return;
	}
	pl_proc *p = u32map_get(&s->procs, ev->pid);
	if (!p) {
		p = pl_xcalloc(1, sizeof *p);
		p->pid = ev->pid;
		u32map_put(&s->procs, ev->pid, p);
	} else {
		free_maps(&p->maps);
		free_maps(&p->all_maps);
	}
	child->proc = p;
	p->gen++;
	/* a new process starts with its parent's maps: shared until either
	 * changes them */
	pl_maps *from = &parent->proc->maps;
	if (p != parent->proc && from->n)
		share_maps(&p->maps, from);
	if (p != parent->proc && parent->proc->all_maps.n)
		share_maps(&p->all_maps, &parent->proc->all_maps);
}

/* ---- replay in time order: perf's ordered events ----
 *
 * perf record writes a FINISHED_ROUND record after each pass over the
 * per-CPU ring buffers, and every record written after one is no older
 * than the newest record written before the previous one.  So at each
 * FINISHED_ROUND the window of pending records can be sorted and those up
 * to that time replayed (perf report does the same): the window holds
 * about two rounds, the sort runs in cache over a few already sorted runs
 * (one per CPU), and the records are parsed again while their pages are
 * still warm.  Data without rounds (perf record --threads directories,
 * whose files are each in order only by themselves, and old files) is
 * replayed once, all sorted, at the end. */

struct window {
	struct entry *v, *tmp;
	size_t n, cap;
	size_t *runs; /* starts of the ascending runs, for the merge */
	size_t cap_runs;
};

static void window_push(struct window *w, uint64_t time, const uint8_t *raw)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 4096;
		w->v = pl_xrealloc(w->v, w->cap * sizeof *w->v);
		free(w->tmp);
		w->tmp = NULL; /* regrown on the next sort */
	}
	w->v[w->n].time = time;
	w->v[w->n].raw = raw;
	w->n++;
}

/* Stable natural merge sort of the window by time: records without a time
 * keep file order.  The window is a few ascending runs, so this takes a
 * pass or two, not log n. */
static void window_sort(struct window *w)
{
	size_t n = w->n, nruns = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && w->v[i].time >= w->v[i - 1].time)
			continue;
		if (nruns + 2 > w->cap_runs) {
			w->cap_runs = w->cap_runs ? w->cap_runs * 2 : 64;
			w->runs = pl_xrealloc(w->runs, w->cap_runs * sizeof *w->runs);
		}
		w->runs[nruns++] = i;
	}
	if (nruns <= 1)
		return;
	if (!w->tmp)
		w->tmp = pl_xmalloc(w->cap * sizeof *w->tmp);
	w->runs[nruns] = n;
	struct entry *a = w->v, *b = w->tmp;
	while (nruns > 1) {
		size_t k = 0;
		for (size_t r = 0; r < nruns; r += 2) {
			size_t lo = w->runs[r], mid = w->runs[r + 1];
			size_t hi = r + 2 <= nruns ? w->runs[r + 2] : n;
			w->runs[k++] = lo;
			if (r + 1 >= nruns) { /* an odd run out: copied as it is */
				memcpy(b + lo, a + lo, (n - lo) * sizeof *a);
				break;
			}
			size_t x = lo, y = mid, o = lo;
			while (x < mid && y < hi)
				b[o++] = a[y].time < a[x].time ? a[y++] : a[x++];
			memcpy(b + o, a + x, (mid - x) * sizeof *a);
			o += mid - x;
			memcpy(b + o, a + y, (hi - y) * sizeof *a);
		}
		nruns = k;
		w->runs[nruns] = n;
		struct entry *t = a;
		a = b;
		b = t;
	}
	if (a != w->v) { /* the sorted copy becomes the window */
		w->tmp = w->v;
		w->v = a;
	}
}

static uint64_t replay(pl_session *s, const uint8_t *raw, pl_sample_fn on_sample, void *ctx)
{
	pd_event ev;
	if (pd_parse(s->r, raw, &ev) < 0) {
		s->bad_records++;
		return 0;
	}
	switch (ev.type) {
	case PD_RECORD_SAMPLE:
		on_sample(ctx, s, &ev, thread_get(s, ev.sample.pid, ev.sample.tid));
		return 1;
	case PD_RECORD_MMAP:
	case PD_RECORD_MMAP2:
		on_mmap(s, &ev);
		break;
	case PD_RECORD_COMM:
		on_comm(s, &ev);
		break;
	case PD_RECORD_FORK:
		on_fork(s, &ev);
		break;
	}
	return 0;
}

/* ---- reading: the records in replay order ------------------------------------
 *
 * read_records reads the whole file and hands every record that matters
 * to EMIT in time order (the window above); what it counts on the way
 * (lost samples, records that do not parse) it keeps in its own fields,
 * since it may run on a thread of its own (below). */
struct reading {
	pd_reader *r;
	void (*emit)(struct reading *rd, const uint8_t *raw);
	uint64_t lost_samples, lost_chunks, bad_records;
};

/* Sort the window and hand over its records up to time LIMIT (all of them
 * if ALL); the rest stay for the next flush. */
static void window_flush(struct reading *rd, struct window *w, uint64_t limit, int all)
{
	window_sort(w);
	size_t i = 0;
	for (; i < w->n && (all || w->v[i].time <= limit); i++)
		rd->emit(rd, w->v[i].raw);
	if (i) {
		memmove(w->v, w->v + i, (w->n - i) * sizeof *w->v);
		w->n -= i;
	}
}

/* LOOPSCOPE_TIMING=stop:records stops the process (SIGSTOP) once the
 * recording is open and before its records are read, as the core does
 * after its stages (libloopscope/pipeline.c): a test truncates the file
 * then, at a known point (tests/perf-truncate.sh). */
static void stop_point(const char *stage)
{
	const char *timing = getenv("LOOPSCOPE_TIMING");
	if (timing && strncmp(timing, "stop:", 5) == 0 && strcmp(timing + 5, stage) == 0)
		raise(SIGSTOP);
}

static void read_records(struct reading *rd)
{
	stop_point("records");
	struct window w = { 0 };
	pd_event ev;
	uint64_t last_time = 0;
	/* the newest time read so far, and as of the last FINISHED_ROUND */
	uint64_t newest = 0, flush_limit = 0;
	int rounds = !pd_is_multipart(rd->r);
	pd_set_lazy(rd->r, 1);
	while (pd_next(rd->r, &ev)) {
		switch (ev.type) {
		case PD_RECORD_SAMPLE:
		case PD_RECORD_MMAP:
		case PD_RECORD_MMAP2:
		case PD_RECORD_COMM:
		case PD_RECORD_FORK:
		case PD_RECORD_EXIT:
			break;
		case PD_RECORD_FINISHED_ROUND:
			if (rounds) {
				window_flush(rd, &w, flush_limit, 0);
				flush_limit = newest;
			}
			continue;
		case PD_RECORD_LOST:
			/* perf report: "lost N chunks" (the ring buffer was full) */
			rd->lost_chunks++;
			continue;
		case PD_RECORD_LOST_SAMPLES:
			/* perf report's "Total Lost Samples"; those a BPF filter
			 * dropped on purpose (misc bit 15, perf 6.4) are not lost */
			if (!(ev.misc & PD_MISC_LOST_SAMPLES_BPF))
				rd->lost_samples += ev.lost;
			continue;
		case (uint32_t)-1:
			rd->bad_records++;
			continue;
		default:
			continue;
		}
		/* synthesized records carry time 0 (or none): they describe the
		 * state before recording began, so they keep their place */
		uint64_t t = ev.has_time ? ev.sample.time : last_time;
		if (ev.has_time && t)
			last_time = t;
		if (t > newest)
			newest = t;
		window_push(&w, t, pd_keep(rd->r, ev.raw)); /* inflated records do not last */
	}
	pd_set_lazy(rd->r, 0);
	window_flush(rd, &w, 0, 1);
	free(w.v);
	free(w.tmp);
	free(w.runs);
}

/* ---- replaying as the records are read ---------------------------------------
 *
 * On a file of millions of samples, reading (pd_next's pass over the data,
 * the window and its sort) and replaying (parsing each record again, the
 * processes and maps, the attribution of each sample) cost about the same
 * order of time.  On two cores they overlap: a thread of its own reads and
 * hands the records over in blocks of pointers, and the caller's thread
 * replays them in the same order as a single thread would, so the report is
 * the same.  The reader is frozen meanwhile (pd_freeze): pd_next then
 * changes nothing that pd_parse reads.  Pipe input keeps one thread: its
 * events are described in the stream itself. */

enum { BLOCK_RECORDS = 8192, MAX_BLOCKS = 64 };

struct block {
	struct block *next;
	size_t n;
	const uint8_t *raw[BLOCK_RECORDS];
};

struct handover {
	struct reading rd;           /* first: the reader thread's emit finds us from it */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct block *head, *tail;   /* full blocks, oldest first */
	struct block *spare;         /* replayed blocks, for the reader to fill again */
	size_t nblocks;              /* full ones waiting */
	int done;                    /* the reader has handed over everything */
	struct block *filling;       /* the reader's */
};

static void hand_over(struct handover *h)
{
	struct block *b = h->filling;
	h->filling = NULL;
	pthread_mutex_lock(&h->lock);
	while (h->nblocks >= MAX_BLOCKS) /* the replay is behind: wait, bounding memory */
		pthread_cond_wait(&h->cond, &h->lock);
	b->next = NULL;
	if (h->tail)
		h->tail->next = b;
	else
		h->head = b;
	h->tail = b;
	h->nblocks++;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

static void emit_to_block(struct reading *rd, const uint8_t *raw)
{
	struct handover *h = (struct handover *)rd;
	if (!h->filling) {
		pthread_mutex_lock(&h->lock);
		struct block *b = h->spare;
		if (b)
			h->spare = b->next;
		pthread_mutex_unlock(&h->lock);
		h->filling = b ? b : pl_xmalloc(sizeof *b);
		h->filling->n = 0;
	}
	h->filling->raw[h->filling->n++] = raw;
	if (h->filling->n == BLOCK_RECORDS)
		hand_over(h);
}

static void *reader_main(void *arg)
{
	struct handover *h = arg;
	read_records(&h->rd);
	if (h->filling)
		hand_over(h);
	pthread_mutex_lock(&h->lock);
	h->done = 1;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static void free_blocks(struct block *b)
{
	while (b) {
		struct block *next = b->next;
		free(b);
		b = next;
	}
}

/* The records replayed as the reader thread hands them over; -1 if the
 * thread could not be started (nothing read then). */
static int64_t run_with_reader(pl_session *s, pl_sample_fn on_sample, void *ctx)
{
	struct handover h = { .rd = { .r = s->r, .emit = emit_to_block } };
	pthread_mutex_init(&h.lock, NULL);
	pthread_cond_init(&h.cond, NULL);
	pthread_t thread;
	pd_freeze(s->r, 1);
	if (pthread_create(&thread, NULL, reader_main, &h) != 0) {
		pd_freeze(s->r, 0);
		pthread_mutex_destroy(&h.lock);
		pthread_cond_destroy(&h.cond);
		return -1;
	}
	uint64_t samples = 0;
	for (;;) {
		pthread_mutex_lock(&h.lock);
		while (!h.head && !h.done)
			pthread_cond_wait(&h.cond, &h.lock);
		struct block *b = h.head;
		if (b) {
			h.head = b->next;
			if (!h.head)
				h.tail = NULL;
			h.nblocks--;
			pthread_cond_broadcast(&h.cond);
		}
		pthread_mutex_unlock(&h.lock);
		if (!b)
			break;
		for (size_t i = 0; i < b->n; i++)
			samples += replay(s, b->raw[i], on_sample, ctx);
		pthread_mutex_lock(&h.lock);
		b->next = h.spare;
		h.spare = b;
		pthread_mutex_unlock(&h.lock);
	}
	pthread_join(thread, NULL);
	pd_freeze(s->r, 0);
	free_blocks(h.spare);
	pthread_mutex_destroy(&h.lock);
	pthread_cond_destroy(&h.cond);
	s->lost_samples += h.rd.lost_samples;
	s->lost_chunks += h.rd.lost_chunks;
	s->bad_records += h.rd.bad_records;
	return (int64_t)samples;
}

/* The single-threaded replay: each record as it is handed over. */
struct replaying {
	struct reading rd;
	pl_session *s;
	pl_sample_fn on_sample;
	void *ctx;
	uint64_t samples;
};

static void emit_replay(struct reading *rd, const uint8_t *raw)
{
	struct replaying *p = (struct replaying *)rd;
	p->samples += replay(p->s, raw, p->on_sample, p->ctx);
}

/* PERF_LOOPS_READER_THREAD=0 replays on one thread (to compare, or where
 * threads are unwelcome). */
static int want_reader_thread(const pl_session *s)
{
	const char *e = getenv("PERF_LOOPS_READER_THREAD");
	return !pd_is_pipe(s->r) && !(e && !strcmp(e, "0"));
}

uint64_t pl_session_run(pl_session *s, pl_sample_fn on_sample, void *ctx)
{
	if (want_reader_thread(s)) {
		int64_t n = run_with_reader(s, on_sample, ctx);
		if (n >= 0)
			return (uint64_t)n;
	}
	struct replaying p = { .rd = { .r = s->r, .emit = emit_replay }, .s = s, .on_sample = on_sample, .ctx = ctx };
	read_records(&p.rd);
	s->lost_samples += p.rd.lost_samples;
	s->lost_chunks += p.rd.lost_chunks;
	s->bad_records += p.rd.bad_records;
	return p.samples;
}
