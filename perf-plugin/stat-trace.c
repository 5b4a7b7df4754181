/* stat-trace.c - `perf loops stat --trace`: the trip count of every entry.
 * stat-run.c has perf record write each probe hit (time, thread) to a
 * perf.data file instead of perf stat counting them; this reads it with
 * perf loops' own reader (perf_data.c, no perf script text), sorts the
 * hits per thread by time, and walks each thread's sequence: a hit of a
 * loop's entry counters begins a trip, a hit of its iteration counters
 * adds one to it.  The trips give the minimum, maximum and histogram; the
 * hits per counter give the same exact counts perf stat would.
 *
 * Recursion: a loop re-entered (its function called from its own body)
 * before it is left has two trips open at once.  --trace probes every
 * exit edge (and every return inside the loop), none derived, so each
 * thread keeps a stack of open trips: an entry pushes one, an iteration
 * counts in the innermost, an exit pops it.  Hits of one trap (counters
 * at one address: a header that is also an exit branch) are taken entry
 * first, then iteration, then exit.  Without every exit probed (an exit
 * by an indirect jump), an entry closes the trip before it, as if there
 * were no recursion.
 *
 * Limits, said where they apply: a loop whose entries are derived (header
 * hits less back edges) has no entry event to start a trip at; a loop
 * left by longjmp or an exception is not seen leaving; a trace that lost
 * events (the ring buffer full) is incomplete and says so. */
#include "perf_data.h"
#include "report.h"
#include "stat.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hit {
	uint32_t tid;
	uint32_t ctr;
	uint64_t time, seq;
};

static int by_thread_time(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Which counter each of the file's events is: the events of perf record's
 * -e list, in order, named GROUP:at_OFFSET (perf may add others). */
static int *attr_counters(const struct stat_plan *p, pd_reader *r)
{
	size_t na = pd_nattrs(r), k = 0;
	int *map = pl_xcalloc(na ? na : 1, sizeof *map);
	for (size_t i = 0; i < na; i++) {
		const char *name = pd_attr_at(r, i)->name;
		const char *colon = name ? strstr(name, ":at_") : NULL;
		map[i] = -1;
		if (colon && k < p->nctr && strtoull(colon + 4, NULL, 16) == p->ctr[k].offset)
			map[i] = (int)k++;
	}
	return map;
}

static bool has_counter(const struct stat_qty *q, uint32_t c)
{
	for (int i = 0; i < q->nterms; i++)
		if ((uint32_t)q->terms[i].counter == c)
			return true;
	return false;
}

static bool all_positive(const struct stat_qty *q)
{
	for (int i = 0; i < q->nterms; i++)
		if (q->terms[i].sign < 0)
			return false;
	return q->known && q->nterms > 0;
}

static void push_trip(struct stat_trips *t, uint64_t n, size_t *cap)
{
	if (t->ntrips == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		t->trip = realloc(t->trip, *cap * sizeof *t->trip);
		if (!t->trip) {
			fprintf(stderr, "perf loops stat: out of memory\n");
			exit(1);
		}
	}
	t->trip[t->ntrips++] = n;
}

/* Whether every exit of L is counted by probes of its own (none derived):
 * then exits close trips, and recursion's trips are told apart. */
static bool exits_probed(const struct stat_loop *L)
{
	if (!L->exits_complete || L->nexits == 0)
		return false;
	for (size_t k = 0; k < L->nexits; k++)
		if (L->exits[k].q.derived || !all_positive(&L->exits[k].q))
			return false;
	return true;
}

static bool is_exit(const struct stat_loop *L, uint32_t c)
{
	for (size_t k = 0; k < L->nexits; k++)
		if (has_counter(&L->exits[k].q, c))
			return true;
	return false;
}

/* A thread's open trips, innermost last. */
struct trip_stack {
	uint64_t *v;
	size_t n, cap;
};

static void open_trip(struct trip_stack *s, struct stat_trips *t, size_t *cap, bool stacked)
{
	if (!stacked && s->n) /* no exits to close it: the next entry does */
		push_trip(t, s->v[--s->n], cap);
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->v = realloc(s->v, s->cap * sizeof *s->v);
		if (!s->v) {
			fprintf(stderr, "perf loops stat: out of memory\n");
			exit(1);
		}
	}
	s->v[s->n++] = 0;
}

/* The hits H[I..J) of one trap (one thread, one address, in a row), for
 * L: entries, then iterations, then exits. */
static void one_trap(const struct stat_loop *L, const struct hit *h, size_t i, size_t j, struct trip_stack *s,
                     struct stat_trips *t, size_t *cap, bool stacked)
{
	for (size_t k = i; k < j; k++)
		if (has_counter(&L->entries, h[k].ctr))
			open_trip(s, t, cap, stacked);
	for (size_t k = i; k < j; k++)
		/* iterations before the first entry: a process attached in the middle */
		if (s->n && has_counter(&L->iterations, h[k].ctr))
			s->v[s->n - 1]++;
	for (size_t k = i; stacked && k < j; k++)
		if (s->n && is_exit(L, h[k].ctr))
			push_trip(t, s->v[--s->n], cap);
}

/* The trips of L over the hits H (sorted by thread, then time). */
static void loop_trips(const struct stat_plan *p, struct stat_loop *L, const struct hit *h, size_t n)
{
	struct stat_trips *t = pl_xcalloc(1, sizeof *t);
	L->trips = t;
	t->usable = all_positive(&L->entries) && all_positive(&L->iterations);
	if (!t->usable)
		return;
	bool stacked = exits_probed(L);
	size_t cap = 0;
	struct trip_stack s = { 0 };
	for (size_t i = 0; i < n;) {
		uint32_t tid = h[i].tid;
		s.n = 0;
		while (i < n && h[i].tid == tid) {
			size_t j = i + 1;
			while (j < n && h[j].tid == tid && p->ctr[h[j].ctr].offset == p->ctr[h[i].ctr].offset)
				j++;
			one_trap(L, h, i, j, &s, t, &cap, stacked);
			i = j;
		}
		while (s.n) /* the thread's trips still open (cut by the end of -p's window) */
			push_trip(t, s.v[--s.n], &cap);
	}
	free(s.v);
	qsort(t->trip, t->ntrips, sizeof *t->trip, by_value);
	for (uint64_t k = 0; k < t->ntrips; k++)
		t->sum += t->trip[k];
	t->min = t->ntrips ? t->trip[0] : 0;
	t->max = t->ntrips ? t->trip[t->ntrips - 1] : 0;
}

/* The hits of the file, and each counter's count; the number, or -1. */
static long read_hits(struct stat_plan *p, const char *data, struct hit **out, uint64_t *lost)
{
	char err[1024];
	pd_reader *r = pd_open(data, err, sizeof err);
	if (!r) {
		fprintf(stderr, "perf loops stat: %s\n", err);
		return -1;
	}
	int *map = attr_counters(p, r);
	size_t n = 0, cap = 1024;
	struct hit *h = pl_xcalloc(cap, sizeof *h);
	pd_event ev;
	while (pd_next(r, &ev)) {
		if (ev.type == PD_RECORD_LOST || ev.type == PD_RECORD_LOST_SAMPLES)
			*lost += ev.lost;
		if (ev.type != PD_RECORD_SAMPLE || ev.sample.attr_index < 0 ||
		    (size_t)ev.sample.attr_index >= pd_nattrs(r) || map[ev.sample.attr_index] < 0)
			continue;
		if (n == cap) {
			cap *= 2;
			h = realloc(h, cap * sizeof *h);
			if (!h) {
				fprintf(stderr, "perf loops stat: out of memory\n");
				exit(1);
			}
		}
		int c = map[ev.sample.attr_index];
		h[n] = (struct hit){ .tid = ev.sample.tid, .ctr = (uint32_t)c, .time = ev.sample.time, .seq = n };
		n++;
		p->ctr[c].value++;
	}
	if (pd_bytes_lost(r))
		fprintf(stderr, "perf loops stat: warning: %s: %" PRIu64 " bytes of the trace could not be read\n", data,
		        pd_bytes_lost(r));
	free(map);
	pd_close(r);
	*out = h;
	return (long)n;
}

int stat_trace_read(struct stat_plan *p, const char *data)
{
	for (size_t i = 0; i < p->nctr; i++)
		p->ctr[i] = (struct stat_counter){ .addr = p->ctr[i].addr, .offset = p->ctr[i].offset,
			                           .cond = p->ctr[i].cond, .taken = p->ctr[i].taken, .counted = true };
	struct hit *h;
	uint64_t lost = 0;
	long n = read_hits(p, data, &h, &lost);
	if (n < 0)
		return -1;
	qsort(h, (size_t)n, sizeof *h, by_thread_time);
	for (size_t i = 0; i < p->nloops; i++)
		loop_trips(p, &p->loops[i], h, (size_t)n);
	free(h);
	p->lost = lost;
	if (lost)
		fprintf(stderr, "perf loops stat: warning: %" PRIu64 " probe hits were lost while tracing (perf record's "
		        "ring buffer was full): the counts and trip counts are short of them\n", lost);
	return 0;
}
