/* cache_store.c - writes a module's cache entry (the format:
 * cache_format.h): the head, and a record for every procedure analyzed.
 *
 * An entry grows: a store writes every procedure this module analyzed,
 * the records of the entry it read (copied as they are), and those of the
 * entry on disk now when another run stored one meanwhile (concurrent
 * runs on one binary each add what they analyzed).  A record copied from
 * an entry is checked against its checksum first, so a corrupt one is
 * dropped, not spread.  The new file is a temporary of this process's own
 * (mkstemp: unique, 0600), renamed into place when complete: a reader sees
 * the old entry or the new one, never a part.  Two stores that race can
 * both have read the entry before the other's rename: then the first
 * one's additions are lost, and analyzed again later -- a miss, never a
 * wrong answer.
 *
 * The accesses of the procedures asked about (data/accesses.c) are
 * records of their own beside the procedures', computed here
 * (cache_accesses.c keeps them) or copied from the entries likewise.
 *
 * What the module's analysis has read is kept with it: the source files
 * the loop lines looked at (any change to one is a miss for the whole
 * entry), and the noreturn facts proved so far (cfg/noreturn.c), which a
 * later analysis on demand starts from.
 */
#include "analyze.h"
#include "cache/cache_format.h"
#include "cfg/cfg.h"
#include "loops/source.h"
#include "structure/lookup.h"
#include "structure/scope.h"
#include "support/base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- strings ------------------------------------------------------------------ */

static void strt_grow(struct cache_strtab *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 64;
	__typeof__(t->slots) slots = ls_xcalloc(n, sizeof *slots);
	for (size_t i = 0; i < t->nslots; i++) {
		if (!t->slots[i].s)
			continue;
		size_t j = ls_hash64(t->slots[i].s, strlen(t->slots[i].s), 0) & (n - 1);
		while (slots[j].s)
			j = (j + 1) & (n - 1);
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
}

uint32_t ls_cache_strs_add(struct cache_strtab *t, const char *s)
{
	if (!s)
		return CACHE_NONE;
	if ((t->count + 1) * 2 > t->nslots)
		strt_grow(t);
	size_t len = strlen(s);
	size_t j = ls_hash64(s, len, 0) & (t->nslots - 1);
	while (t->slots[j].s) {
		if (strcmp(t->slots[j].s, s) == 0)
			return t->slots[j].off;
		j = (j + 1) & (t->nslots - 1);
	}
	if (t->len + len + 1 >= CACHE_NONE) {
		t->overflow = true;
		return CACHE_NONE;
	}
	if (t->len + len + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 1024;
		while (cap < t->len + len + 1)
			cap *= 2;
		t->data = ls_grow(t->data, &t->cap, cap, 1);
	}
	uint32_t off = (uint32_t)t->len;
	memcpy(t->data + t->len, s, len + 1);
	t->len += len + 1;
	t->slots[j].s = s;
	t->slots[j].off = off;
	t->count++;
	return off;
}

void ls_cache_strs_clear(struct cache_strtab *t)
{
	if (t->slots)
		memset(t->slots, 0, t->nslots * sizeof *t->slots);
	t->count = t->len = 0;
	t->overflow = false;
}

void ls_cache_strs_free(struct cache_strtab *t)
{
	free(t->slots);
	free(t->data);
	memset(t, 0, sizeof *t);
}

/* ---- a procedure's record ---------------------------------------------------------- */

/* Each statement's first range index in the record, by its address in
 * memory: what the stored lookup index is written in (open addressing). */
struct stmt_ranges {
	struct { const struct ls_scope *s; uint64_t first; } *slots;
	size_t nslots;
};

static size_t stmt_slot(const struct stmt_ranges *t, const struct ls_scope *s)
{
	uint64_t h = (uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 32) & (t->nslots - 1);
	while (t->slots[i].s && t->slots[i].s != s)
		i = (i + 1) & (t->nslots - 1);
	return i;
}

/* What writes a record: its buffer, strings and statements. */
struct record_writer {
	char *buf;
	size_t cap;
	struct cache_strtab strs;
	struct stmt_ranges stmts;
};

/* The counts of the tree below PROC. */
static struct cache_record count_record(const struct ls_scope *proc, size_t nsegs)
{
	struct cache_record r = { 0 };
	uint64_t n[5] = { 0 };
	for (const struct ls_scope *s = proc; s;) {
		n[0]++;
		n[1] += s->nranges;
		if (s->kind == LS_SCOPE_LOOP && s->loop) {
			n[2]++;
			n[3] += s->loop->nentries;
			n[4] += s->loop->nbackedges + s->loop->nexits;
		}
		if (s->first_child) {
			s = s->first_child;
			continue;
		}
		while (s != proc && !s->next_sibling)
			s = s->parent;
		s = s == proc ? NULL : s->next_sibling;
	}
	for (int i = 0; i < 5; i++)
		if (n[i] >= CACHE_NONE)
			n[0] = CACHE_NONE; /* too large: refused by the caller */
	r.nscopes = n[0] >= CACHE_NONE ? CACHE_NONE : (uint32_t)n[0];
	r.nranges = (uint32_t)n[1];
	r.nloops = (uint32_t)n[2];
	r.naddrs = (uint32_t)n[3];
	r.nedges = (uint32_t)n[4];
	r.nsegs = nsegs >= CACHE_NONE ? 0 : (uint32_t)nsegs;
	return r;
}

/* Where fill_scope writes next. */
struct record_cursor {
	struct cache_scope *cs;
	ls_range *ranges;
	struct cache_loop *cl;
	uint64_t *addrs;
	ls_edge *edges;
	uint64_t si, ri, li, ai, ei;
	struct record_writer *w;
};

/* Loop L's record and its entries, back edges and exits; returns its index. */
static uint32_t fill_loop(struct record_cursor *c, const struct ls_loop_info *l)
{
	struct cache_loop *r = &c->cl[c->li];
	r->header = l->header;
	r->depth = l->depth;
	r->irreducible = l->irreducible ? 1 : 0;
	r->made = l->made;
	r->guess = l->guess;
	r->part = l->part;
	r->nparts = l->nparts;
	r->pad = 0;
	r->first_entry = c->ai;
	r->nentries = l->nentries;
	if (l->nentries)
		memcpy(&c->addrs[c->ai], l->entries, l->nentries * sizeof *c->addrs);
	c->ai += l->nentries;
	r->first_backedge = c->ei;
	r->nbackedges = l->nbackedges;
	if (l->nbackedges)
		memcpy(&c->edges[c->ei], l->backedges, l->nbackedges * sizeof *c->edges);
	c->ei += l->nbackedges;
	r->first_exit = c->ei;
	r->nexits = l->nexits;
	if (l->nexits)
		memcpy(&c->edges[c->ei], l->exits, l->nexits * sizeof *c->edges);
	c->ei += l->nexits;
	return (uint32_t)c->li++;
}

/* Scope S's record, with PARENT's index. */
static void fill_scope(struct record_cursor *c, const struct ls_scope *s, uint32_t parent)
{
	struct cache_scope *r = &c->cs[c->si];
	struct cache_strtab *strs = &c->w->strs;
	r->kind = s->kind;
	r->parent = parent;
	r->name = ls_cache_strs_add(strs, s->name);
	r->linkage_name = ls_cache_strs_add(strs, s->linkage_name);
	r->file = ls_cache_strs_add(strs, s->file);
	r->call_file = ls_cache_strs_add(strs, s->call_file);
	r->line = s->line;
	r->call_line = s->call_line;
	r->call_column = s->call_column;
	r->unresolved_jumps = s->unresolved_jumps;
	if (s->kind == LS_SCOPE_STMT)
		r->aux = s->cut;
	else if (s->kind == LS_SCOPE_PROC && s->unresolved_jumps && s->nranges &&
	         s->first_unresolved - s->ranges[0].lo <= UINT32_MAX)
		r->aux = (uint32_t)(s->first_unresolved - s->ranges[0].lo);
	r->first_range = c->ri;
	r->nranges = s->nranges;
	if (s->kind == LS_SCOPE_STMT && s->nranges) {
		size_t i = stmt_slot(&c->w->stmts, s);
		c->w->stmts.slots[i].s = s;
		c->w->stmts.slots[i].first = c->ri;
	}
	if (s->nranges)
		memcpy(&c->ranges[c->ri], s->ranges, s->nranges * sizeof *c->ranges);
	c->ri += s->nranges;
	r->loop = s->kind == LS_SCOPE_LOOP && s->loop ? fill_loop(c, s->loop) : CACHE_NONE;
}

/* The records of the tree below PROC, pre-order; a scope's parent index is
 * found by keeping the index of every ancestor on a stack while walking. */
static void fill_scopes(struct record_cursor *c, const struct ls_scope *proc)
{
	uint32_t *stack = NULL;
	size_t stack_cap = 0, depth = 0;
	for (const struct ls_scope *s = proc; s;) {
		fill_scope(c, s, depth ? stack[depth - 1] : CACHE_NONE);
		if (s->first_child) {
			stack = ls_grow(stack, &stack_cap, depth + 1, sizeof *stack);
			stack[depth++] = (uint32_t)c->si;
			c->si++;
			s = s->first_child;
			continue;
		}
		c->si++;
		while (s != proc && !s->next_sibling) {
			s = s->parent;
			depth--;
		}
		s = s == proc ? NULL : s->next_sibling;
	}
	free(stack);
}

/* The procedure's lookup index as the record's range indices, in its
 * order: each segment is a range of its statement (the one it ends with:
 * the index only ever moves a start, to clip an overlap). */
static bool fill_segs(uint32_t *order, const struct ls_proc_done *d, const struct stmt_ranges *stmts)
{
	for (size_t i = 0; i < d->nsegs; i++) {
		const struct ls_scope *s = d->segs[i].stmt;
		assert(s); /* every segment is a statement's (analyze.c) */
		size_t slot = stmt_slot(stmts, s);
		if (stmts->slots[slot].s != s)
			return false;
		size_t k = LS_FIRST_AT_LEAST(s->ranges, s->nranges, hi, d->segs[i].hi);
		if (k >= s->nranges || s->ranges[k].hi != d->segs[i].hi)
			return false;
		order[i] = (uint32_t)(stmts->slots[slot].first + k);
	}
	return true;
}

/* Procedure ENTRY's record (result D) into W->buf: its size, or 0 if it
 * cannot be stored (too big, or an index that does not match its tree). */
static size_t make_record(struct record_writer *w, uint64_t entry, const struct ls_proc_done *d)
{
	struct cache_record r = count_record(d->scope, d->nsegs);
	if (r.nscopes == CACHE_NONE || r.nsegs != d->nsegs)
		return 0;
	r.entry = entry;
	ls_cache_strs_clear(&w->strs);
	size_t nslots = 16;
	while (nslots < 2 * (size_t)r.nscopes)
		nslots *= 2;
	if (nslots > w->stmts.nslots) {
		free(w->stmts.slots);
		w->stmts.slots = ls_xmalloc(nslots * sizeof *w->stmts.slots);
	}
	w->stmts.nslots = nslots;
	memset(w->stmts.slots, 0, nslots * sizeof *w->stmts.slots);
	/* the strings come last: lay out the rest, fill it, then add them */
	struct record_layout l = cache_record_layout(&r);
	w->buf = ls_grow(w->buf, &w->cap, l.size, 1);
	memset(w->buf, 0, l.size);
	struct record_cursor c = {
		.cs = (struct cache_scope *)(w->buf + l.scopes), .ranges = (ls_range *)(w->buf + l.ranges),
		.cl = (struct cache_loop *)(w->buf + l.loops), .addrs = (uint64_t *)(w->buf + l.addrs),
		.edges = (ls_edge *)(w->buf + l.edges), .w = w,
	};
	fill_scopes(&c, d->scope);
	if (!fill_segs((uint32_t *)(w->buf + l.segs), d, &w->stmts) || w->strs.overflow)
		return 0;
	r.strtab_size = (uint32_t)w->strs.len;
	l = cache_record_layout(&r);
	if (l.size > UINT32_MAX)
		return 0;
	w->buf = ls_grow(w->buf, &w->cap, l.size, 1);
	memset(w->buf + l.strtab, 0, l.size - l.strtab);
	if (w->strs.len)
		memcpy(w->buf + l.strtab, w->strs.data, w->strs.len);
	memcpy(w->buf, &r, sizeof r);
	return l.size;
}

/* ---- the entry ------------------------------------------------------------------ */

static bool write_all(int fd, const void *buf, size_t size, off_t off)
{
	const char *p = buf;
	while (size) {
		ssize_t n = pwrite(fd, p, size, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		off += n;
		size -= n;
	}
	return true;
}

/* A source file looked at, from the module's analysis or an entry's. */
struct probe {
	const char *path;
	struct cache_probe p;      /* its path field unused */
};

static int cmp_probe(const void *a, const void *b)
{
	return strcmp(((const struct probe *)a)->path, ((const struct probe *)b)->path);
}

/* What the new entry is made of. */
struct store {
	ls_module *m;
	struct cache_key *k;
	const struct ls_cache_entry *other; /* the entry on disk now, when another run stored it */
	struct cache_proc *procs;
	struct cache_proc_recs *recs; /* offsets from the body's start, until the head is laid out */
	size_t nrecs, cap_recs;
	struct probe *probes;
	size_t nprobes, cap_probes;
	const char **missing;       /* source files not found, DWARF's names */
	size_t nmissing, cap_missing;
	uint32_t *missing_strs;     /* their string offsets in the head */
	struct cache_strtab head_strs;
	int fd;
	/* The records, in memory until the head's size is known (the head
	 * goes first, and its recs table is as long as the records are
	 * many); then written in one call, not one each. */
	char *body;
	uint64_t off;               /* the body's size: where the next record goes */
	size_t cap_body;
	struct record_writer w;
};

static void add_probe(struct store *st, const char *path, const struct cache_probe *p)
{
	st->probes = ls_grow(st->probes, &st->cap_probes, st->nprobes + 1, sizeof *st->probes);
	st->probes[st->nprobes++] = (struct probe){ path, *p };
}

static void add_entry_probes(struct store *st, const struct ls_cache_entry *e)
{
	for (uint64_t i = 0; e && i < e->h.nprobes; i++)
		add_probe(st, e->strtab + e->probes[i].path, &e->probes[i]);
}

static void add_missing(struct store *st, const char *name)
{
	st->missing = ls_grow(st->missing, &st->cap_missing, st->nmissing + 1, sizeof *st->missing);
	st->missing[st->nmissing++] = name;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The source files the loop lines did not find, each once: this run's and
 * those of the entries whose records are copied (their records' lines
 * came from DWARF alone too). */
static void gather_missing(struct store *st)
{
	const ls_module *m = st->m;
	size_t n = ls_source_missing(m->sources, NULL, 0);
	if (n) {
		const char **names = ls_xmalloc(n * sizeof *names);
		n = ls_source_missing(m->sources, names, n);
		for (size_t i = 0; i < n; i++)
			add_missing(st, names[i]);
		free(names);
	}
	const struct ls_cache_entry *es[2] = { m->cache, st->other };
	for (size_t k = 0; k < 2; k++)
		for (uint64_t i = 0; es[k] && i < es[k]->h.nmissing; i++)
			add_missing(st, es[k]->strtab + es[k]->missing[i]);
	if (st->nmissing > 1)
		qsort(st->missing, st->nmissing, sizeof *st->missing, cmp_name);
	size_t k = 0;
	for (size_t i = 0; i < st->nmissing; i++)
		if (!k || strcmp(st->missing[k - 1], st->missing[i]) != 0)
			st->missing[k++] = st->missing[i];
	st->nmissing = k;
}

/* Every source file looked at, each once: the module's own and those of
 * the entries whose records are copied.  False if one was seen as two
 * different files (it changed while this module ran): the records made
 * before would not be those the file now gives. */
static bool gather_probes(struct store *st)
{
	const ls_module *m = st->m;
	for (size_t i = 0; i < m->nsource_probes; i++) {
		const struct ls_source_probe *p = &m->source_probes[i];
		add_probe(st, p->path, &(struct cache_probe){ .exists = p->exists, .mode = p->mode, .size = p->size,
		                                              .ino = p->ino, .mtime_sec = p->mtime_sec,
		                                              .mtime_nsec = p->mtime_nsec });
	}
	add_entry_probes(st, m->cache);
	add_entry_probes(st, st->other);
	if (st->nprobes > 1)
		qsort(st->probes, st->nprobes, sizeof *st->probes, cmp_probe);
	size_t n = 0;
	for (size_t i = 0; i < st->nprobes; i++) {
		if (n && strcmp(st->probes[n - 1].path, st->probes[i].path) == 0) {
			const struct cache_probe *a = &st->probes[n - 1].p, *b = &st->probes[i].p;
			if (a->exists != b->exists || a->mode != b->mode || a->size != b->size || a->ino != b->ino ||
			    a->mtime_sec != b->mtime_sec || a->mtime_nsec != b->mtime_nsec)
				return false;
			continue;
		}
		st->probes[n++] = st->probes[i];
	}
	st->nprobes = n;
	return true;
}

/* The entry on disk now, if another run stored it since this module read
 * its own, and it is for the same procedures. */
static struct ls_cache_entry *other_entry(const ls_module *m, struct cache_key *k)
{
	const char *why;
	int fd = k->dirfd < 0 ? -1 : ls_open_input_at(k->dirfd, k->name, NULL, &why);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) < 0 || (m->cache && st.st_ino == m->cache->st.st_ino && st.st_dev == m->cache->st.st_dev)) {
		close(fd);
		return NULL;
	}
	struct ls_cache_entry *e = ls_cache_entry_read(m, fd, k->path, k, &why);
	const struct ls_directory *d = &m->an->dir;
	bool same = e && e->h.nprocs == d->nprocs && e->h.nindex == d->nindex;
	for (uint64_t i = 0; same && i < e->h.nprocs; i++)
		same = e->procs[i].entry == d->entries[i];
	for (uint64_t i = 0; same && i < e->h.nindex; i++)
		same = e->index[i].lo == d->index[i].lo && e->index[i].hi == d->index[i].hi &&
		       e->index[i].proc == d->index[i].proc;
	if (!same) {
		ls_cache_entry_free(e);
		return NULL;
	}
	return e;
}

/* Procedure I's records' place in the new entry, made when it has none. */
static struct cache_proc_recs *recs_of(struct store *st, size_t i)
{
	if (st->procs[i].recs == CACHE_NONE) {
		st->recs = ls_grow(st->recs, &st->cap_recs, st->nrecs + 1, sizeof *st->recs);
		st->recs[st->nrecs] = (struct cache_proc_recs){ 0 };
		st->procs[i].recs = (uint32_t)st->nrecs++;
	}
	return &st->recs[st->procs[i].recs];
}

/* Room for a record of SIZE bytes at the body's end (zero-padded to 8). */
static char *body_room(struct store *st, uint32_t size)
{
	uint64_t end = st->off + cache_align8(size);
	st->body = ls_grow(st->body, &st->cap_body, end, 1);
	memset(st->body + st->off + size, 0, end - st->off - size);
	return st->body + st->off;
}

/* Record I of entry E, copied into the new entry (if it checks). */
static bool copy_record(struct store *st, const struct ls_cache_entry *e, size_t i)
{
	const struct cache_proc_recs *p = ls_cache_recs_of(e, i);
	if (!ls_cache_record_read(e, i, body_room(st, p->rec_size)))
		return false;
	struct cache_proc_recs *r = recs_of(st, i);
	r->rec_off = st->off;
	r->rec_size = p->rec_size;
	r->rec_checksum = p->rec_checksum;
	st->off += cache_align8(p->rec_size);
	return true;
}

/* Whether entry E has procedure I's analysis; copies it (or marks it
 * empty). */
static int from_entry(struct store *st, const struct ls_cache_entry *e, size_t i)
{
	if (!e || !(e->procs[i].flags & CACHE_PROC_ANALYZED))
		return 0;
	if (e->procs[i].flags & CACHE_PROC_EMPTY) {
		st->procs[i].flags |= CACHE_PROC_ANALYZED | CACHE_PROC_EMPTY;
		return 1;
	}
	if (copy_record(st, e, i)) {
		st->procs[i].flags |= CACHE_PROC_ANALYZED;
		return 1;
	}
	return 0;
}

/* Procedure I's accesses record of entry E, copied into the new entry
 * (if it checks). */
static bool copy_acc_record(struct store *st, const struct ls_cache_entry *e, size_t i)
{
	if (!(e->procs[i].flags & CACHE_PROC_ACCESSES))
		return false;
	const struct cache_proc_recs *p = ls_cache_recs_of(e, i);
	if (!ls_cache_acc_record_read(e, i, body_room(st, p->acc_size)))
		return false;
	struct cache_proc_recs *r = recs_of(st, i);
	r->acc_off = st->off;
	r->acc_size = p->acc_size;
	r->acc_checksum = p->acc_checksum;
	st->procs[i].flags |= CACHE_PROC_ACCESSES;
	st->off += cache_align8(p->acc_size);
	return true;
}

/* Procedure I's accesses into the new entry: computed here, or from the
 * entries (data/accesses.c, cache_accesses.c). */
static void store_accesses(struct store *st, size_t i)
{
	uint32_t size;
	uint64_t sum;
	const void *made = ls_cache_accesses_made(st->m, i, &size, &sum);
	if (made) {
		memcpy(body_room(st, size), made, size);
		struct cache_proc_recs *r = recs_of(st, i);
		r->acc_off = st->off;
		r->acc_size = size;
		r->acc_checksum = sum;
		st->procs[i].flags |= CACHE_PROC_ACCESSES;
		st->off += cache_align8(size);
		return;
	}
	if (!(st->m->cache && copy_acc_record(st, st->m->cache, i)) && st->other)
		copy_acc_record(st, st->other, i);
}

/* Procedure I into the new entry: analyzed here, or from the entries. */
static void store_proc(struct store *st, size_t i)
{
	ls_module *m = st->m;
	const struct ls_proc_done *d = __atomic_load_n(&m->an->done[i], __ATOMIC_ACQUIRE);
	st->procs[i].entry = m->an->dir.entries[i];
	st->procs[i].recs = CACHE_NONE;
	if (d && !d->from_cache) {
		if (!d->scope) {
			st->procs[i].flags |= CACHE_PROC_ANALYZED | CACHE_PROC_EMPTY;
		} else {
			size_t size = make_record(&st->w, st->procs[i].entry, d);
			if (size) {
				memcpy(body_room(st, (uint32_t)size), st->w.buf, size);
				st->procs[i].flags |= CACHE_PROC_ANALYZED;
				struct cache_proc_recs *r = recs_of(st, i);
				r->rec_off = st->off;
				r->rec_size = (uint32_t)size;
				r->rec_checksum = ls_hash64(st->w.buf, size, 0);
				st->off += cache_align8(size);
			}
		}
	} else if (from_entry(st, m->cache, i) == 0) {
		from_entry(st, st->other, i);
	}
	uint8_t fact = m->an->indexes ? ls_cfg_fact(m, i) : LS_FACT_UNKNOWN;
	const struct ls_cache_entry *es[] = { m->cache, st->other };
	for (int k = 0; k < 2 && fact == LS_FACT_UNKNOWN; k++)
		if (es[k] && (es[k]->procs[i].flags & (CACHE_PROC_RETURNS | CACHE_PROC_NEVER)))
			fact = (es[k]->procs[i].flags & CACHE_PROC_RETURNS) ? LS_FACT_RETURNS : LS_FACT_NEVER;
	if (fact != LS_FACT_UNKNOWN)
		st->procs[i].flags |= fact == LS_FACT_RETURNS ? CACHE_PROC_RETURNS : CACHE_PROC_NEVER;
	store_accesses(st, i);
}

/* The head: header, directory, index, probes, strings. */
static void make_header(struct store *st, struct cache_header *h)
{
	ls_module *m = st->m;
	const struct ls_directory *d = &m->an->dir;
	memset(h, 0, sizeof *h);
	memcpy(h->magic, CACHE_MAGIC, 8);
	h->version = LS_CACHE_FORMAT_VERSION;
	h->byte_order = CACHE_BYTE_ORDER;
	h->flags = st->k->flags;
	h->header_size = sizeof *h;
	h->src_size = m->file_stat.st_size;
	h->src_mtime_sec = m->file_stat.st_mtim.tv_sec;
	h->src_mtime_nsec = m->file_stat.st_mtim.tv_nsec;
	h->src_ino = m->file_stat.st_ino;
	h->src_hash = st->k->src_hash;
	ls_cache_producer(h->producer);
	h->path_str = ls_cache_strs_add(&st->head_strs, m->path);
	h->build_id_str = ls_cache_strs_add(&st->head_strs, m->build_id);
	h->debug_path_str = ls_cache_strs_add(&st->head_strs, m->debug_path);
	if (m->debug_path) {
		h->debug_size = (uint64_t)m->debug_stat.st_size;
		h->debug_ino = (uint64_t)m->debug_stat.st_ino;
		h->debug_mtime_sec = (int64_t)m->debug_stat.st_mtim.tv_sec;
		h->debug_mtime_nsec = (int64_t)m->debug_stat.st_mtim.tv_nsec;
	}
	h->source_path_str = ls_cache_strs_add(&st->head_strs, ls_cache_source_path(m));
	for (size_t i = 0; i < st->nprobes; i++)
		st->probes[i].p.path = ls_cache_strs_add(&st->head_strs, st->probes[i].path);
	uint32_t *missing = ls_xmalloc((st->nmissing + 1) * sizeof *missing);
	for (size_t i = 0; i < st->nmissing; i++)
		missing[i] = ls_cache_strs_add(&st->head_strs, st->missing[i]);
	st->missing_strs = missing;
	if (st->head_strs.len == 0)
		ls_cache_strs_add(&st->head_strs, ""); /* the table is never empty */
	uint64_t off = sizeof *h;
	h->nprocs = d->nprocs;
	h->procs_off = off;
	off += d->nprocs * sizeof(struct cache_proc);
	h->nrecs = st->nrecs;
	h->recs_off = off;
	off += st->nrecs * sizeof(struct cache_proc_recs);
	h->nindex = d->nindex;
	h->index_off = off;
	off += d->nindex * sizeof(struct cache_range);
	h->nprobes = st->nprobes;
	h->probes_off = off;
	off += st->nprobes * sizeof(struct cache_probe);
	h->nmissing = st->nmissing;
	h->missing_off = off;
	off += cache_align8(st->nmissing * sizeof(uint32_t));
	h->strtab_off = off;
	h->strtab_size = st->head_strs.len;
	h->head_size = cache_align8(off + st->head_strs.len);
}

/* The head into BUF (H->head_size bytes), its checksum filled in. */
static void fill_head(struct store *st, struct cache_header *h, char *buf)
{
	const struct ls_directory *d = &st->m->an->dir;
	memset(buf, 0, h->head_size);
	memcpy(buf + h->procs_off, st->procs, d->nprocs * sizeof *st->procs);
	if (st->nrecs)
		memcpy(buf + h->recs_off, st->recs, st->nrecs * sizeof *st->recs);
	struct cache_range *ix = (struct cache_range *)(buf + h->index_off);
	for (size_t i = 0; i < d->nindex; i++)
		ix[i] = (struct cache_range){ d->index[i].lo, d->index[i].hi, d->index[i].proc, 0 };
	struct cache_probe *pr = (struct cache_probe *)(buf + h->probes_off);
	for (size_t i = 0; i < st->nprobes; i++)
		pr[i] = st->probes[i].p;
	if (st->nmissing)
		memcpy(buf + h->missing_off, st->missing_strs, st->nmissing * sizeof *st->missing_strs);
	memcpy(buf + h->strtab_off, st->head_strs.data, st->head_strs.len);
	h->checksum = 0;
	memcpy(buf, h, sizeof *h);
	h->checksum = ls_cache_checksum(buf, h->head_size);
	memcpy(buf, h, sizeof *h);
}

/* The records, then the head before them, into ST->fd: false on a write
 * error (errno) or a string table too large. */
static bool write_file(struct store *st)
{
	const struct ls_directory *d = &st->m->an->dir;
	st->procs = ls_xcalloc(d->nprocs + 1, sizeof *st->procs);
	for (size_t i = 0; i < d->nprocs; i++)
		store_proc(st, i);
	struct cache_header h;
	make_header(st, &h);
	if (st->head_strs.overflow) {
		errno = EFBIG;
		return false;
	}
	for (size_t r = 0; r < st->nrecs; r++) { /* from the body's start to the file's */
		if (st->recs[r].rec_size)
			st->recs[r].rec_off += h.head_size;
		if (st->recs[r].acc_size)
			st->recs[r].acc_off += h.head_size;
	}
	h.file_size = h.head_size + st->off;
	st->off = h.file_size; /* (what write_entry weighs) */
	char *buf = ls_xmalloc(h.head_size);
	fill_head(st, &h, buf);
	bool ok = write_all(st->fd, buf, h.head_size, 0) &&
	          write_all(st->fd, st->body, h.file_size - h.head_size, (off_t)h.head_size);
	free(buf);
	return ok;
}

static void store_free(struct store *st)
{
	ls_cache_entry_free((struct ls_cache_entry *)st->other);
	free(st->procs);
	free(st->probes);
	free(st->missing);
	free(st->missing_strs);
	ls_cache_strs_free(&st->head_strs);
	ls_cache_strs_free(&st->w.strs);
	free(st->w.stmts.slots);
	free(st->w.buf);
	free(st->recs);
	free(st->body);
	ls_cache_key_release(st->k);
	free(st->k);
	free(st);
}

/* The key's directory, made if it is not there yet and then opened and
 * checked as ls_cache_key does; false (said) if it cannot be. */
static bool store_dir(ls_module *m, struct cache_key *k)
{
	if (k->dirfd >= 0)
		return true; /* the directory checked when the key was made */
	if (ls_cache_dir_make(k->dir) < 0) {
		ls_warn(&m->opt, "%s: cannot create the cache directory: %s", k->dir, strerror(errno));
		return false;
	}
	bool distrusted; /* made by another user since ls_cache_key looked: said */
	k->dirfd = ls_cache_dir_trusted(m, k->dir, &distrusted);
	if (k->dirfd < 0 && !distrusted)
		ls_warn(&m->opt, "%s: cannot open the cache directory: %s", k->dir, strerror(errno));
	return k->dirfd >= 0;
}

/* A temporary of this process's own in the directory DIRFD (O_EXCL,
 * 0600; mkstemp has no *at form): its descriptor, its name in TMP. */
static int make_temp(int dirfd, const char *name, char *tmp, size_t size)
{
	static _Atomic unsigned counter;
	for (int attempt = 0; attempt < 100; attempt++) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		unsigned r = (unsigned)ts.tv_nsec ^ (++counter * 2654435761u);
		snprintf(tmp, size, "%s.tmp-%ld-%06x", name, (long)getpid(), r & 0xffffff);
		int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/* Writes the entry: a temporary of this process's own (unique, 0600)
 * renamed into place when complete; then the directory's size bound.  All
 * relative to the directory's descriptor, checked before. */
static void write_entry(struct store *st)
{
	ls_module *m = st->m;
	struct cache_key *k = st->k;
	if (!store_dir(m, k))
		return;
	ls_cache_remove_stale(k->dirfd, k->dir);
	char tmp[PATH_MAX + 64], tmp_path[2 * PATH_MAX + 64];
	st->fd = make_temp(k->dirfd, k->name, tmp, sizeof tmp);
	if (st->fd < 0) {
		ls_warn(&m->opt, "%s: cannot write the cache: %s", k->dir, strerror(errno));
		return;
	}
	snprintf(tmp_path, sizeof tmp_path, "%s/%s", k->dir, tmp);
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env)) { /* the module's guard reports it */
		close(st->fd);
		unlinkat(k->dirfd, tmp, 0);
		ls_guard_rethrow();
	}
	bool written = write_file(st);
	ls_oom_pop(&g);
	int saved = errno;
	uint64_t size = st->off;
	if (close(st->fd) < 0 && written) {
		written = false;
		saved = errno;
	}
	if (!written) {
		ls_warn(&m->opt, "%s: cannot write the cache: %s", tmp_path, strerror(saved));
		unlinkat(k->dirfd, tmp, 0);
		return;
	}
	if (size > ls_cache_bound_of(&m->opt)) {
		ls_note(&m->opt, "%s: not cached: its %llu-byte entry is more than the cache may hold", m->path,
		        (unsigned long long)size);
		unlinkat(k->dirfd, tmp, 0);
		return;
	}
	if (renameat(k->dirfd, tmp, k->dirfd, k->name) < 0) {
		ls_warn(&m->opt, "%s: cannot write the cache: %s", k->path, strerror(errno));
		unlinkat(k->dirfd, tmp, 0);
		return;
	}
	ls_cache_enforce_bound(&m->opt, k->dirfd, k->dir, k->path);
}

bool ls_cache_store(ls_module *m)
{
	if (!m->opt.use_cache || !m->an || (!m->an->nanalyzed && !ls_cache_accesses_new(m)) || m->an->broken)
		return false;
	/* on the heap: what a longjmp finds must not be a changed local */
	struct store *st = ls_xcalloc(1, sizeof *st);
	st->m = m;
	st->fd = -1;
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env)) {
		store_free(st);
		ls_guard_rethrow();
	}
	st->k = ls_xmalloc(sizeof *st->k);
	if (ls_cache_key(m, st->k)) {
		ls_analysis_keep_probes(m);
		st->other = other_entry(m, st->k);
		bool ok = gather_probes(st);
		if (!ok && st->other) {
			/* the other run saw a source file otherwise: keep to our own */
			ls_cache_entry_free((struct ls_cache_entry *)st->other);
			st->other = NULL;
			st->nprobes = 0;
			ok = gather_probes(st);
		}
		if (ok) {
			gather_missing(st);
			write_entry(st);
		}
		else
			ls_note(&m->opt, "%s: not cached: a source file changed while it was analyzed", m->path);
	}
	ls_oom_pop(&g);
	store_free(st);
	return true;
}
