/* arena.c - bump allocation for data that lives as long as its module,
 * the allocation helpers every stage uses, and what they do when memory
 * runs out: jump to the calling thread's guard (support/base.h), as a
 * read of a file mapping that shrank does (sigbus.c). */
#include "support/base.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ls_arena_chunk {
	struct ls_arena_chunk *next;
	char data[];
};

#define LS_ARENA_CHUNK (256 * 1024)

/* The innermost guard of this thread: where ls_oom_raise jumps, and why. */
static _Thread_local struct ls_oom_guard *oom_top;
static _Thread_local struct ls_guard_cause cause;

/* ls_oom_fail_at's countdown: 0 is off, else the allocation that fails. */
static atomic_ulong oom_countdown;

void ls_oom_push(struct ls_oom_guard *g)
{
	g->outer = oom_top;
	oom_top = g;
}

void ls_oom_pop(struct ls_oom_guard *g)
{
	oom_top = g->outer;
}

_Noreturn void ls_guard_rethrow(void)
{
	struct ls_oom_guard *g = oom_top;
	if (!g) {
		fprintf(stderr, "loopscope: %s\n", cause.kind == LS_GUARD_BUS ? "a file changed while being read"
		                                                              : "out of memory");
		abort();
	}
	oom_top = g->outer;
	longjmp(g->env, 1);
}

_Noreturn void ls_oom_raise(void)
{
	cause = (struct ls_guard_cause){ LS_GUARD_NOMEM, NULL };
	ls_guard_rethrow();
}

bool ls_guard_bus(const void *addr)
{
	if (!oom_top)
		return false;
	cause = (struct ls_guard_cause){ LS_GUARD_BUS, addr };
	ls_guard_rethrow();
}

struct ls_guard_cause ls_guard_cause(void)
{
	return cause;
}

void ls_guard_set_cause(struct ls_guard_cause c)
{
	cause = c;
}

unsigned long ls_oom_fail_at(unsigned long n)
{
	return atomic_exchange(&oom_countdown, n);
}

/* Whether this allocation is the one ls_oom_fail_at chose. */
static bool injected_failure(void)
{
	unsigned long n = atomic_load_explicit(&oom_countdown, memory_order_relaxed);
	while (n) {
		if (atomic_compare_exchange_weak(&oom_countdown, &n, n - 1))
			return n == 1;
	}
	return false;
}

void *ls_xmalloc(size_t n)
{
	void *p = injected_failure() ? NULL : malloc(n ? n : 1);
	if (!p)
		ls_oom_raise();
	return p;
}

void *ls_xcalloc(size_t n, size_t m)
{
	void *p = injected_failure() ? NULL : calloc(n ? n : 1, m ? m : 1);
	if (!p)
		ls_oom_raise();
	return p;
}

char *ls_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(ls_xmalloc(n), s, n);
}

void *ls_grow(void *ptr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap && ptr)
		return ptr;
	size_t n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	/* On failure PTR stays its owner's, who frees it. */
	void *p = injected_failure() ? NULL : realloc(ptr, n * elem);
	if (!p)
		ls_oom_raise();
	*cap = n;
	return p;
}

void *ls_arena_alloc(struct ls_arena *a, size_t size)
{
	size = (size + 7) & ~(size_t)7;
	/* A fresh arena has no chunk: even size 0 gets one (never NULL). */
	if (!a->cur || (size_t)(a->end - a->cur) < size) {
		size_t chunk = size > LS_ARENA_CHUNK / 4 ? size : LS_ARENA_CHUNK;
		struct ls_arena_chunk *c = ls_xmalloc(sizeof *c + chunk);
		c->next = a->chunks;
		a->chunks = c;
		a->cur = c->data;
		a->end = c->data + chunk;
	}
	void *p = a->cur;
	a->cur += size;
	memset(p, 0, size);
	return p;
}

char *ls_arena_strdup(struct ls_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(ls_arena_alloc(a, n), s, n);
}

void ls_arena_free(struct ls_arena *a)
{
	struct ls_arena_chunk *c = a->chunks;
	while (c) {
		struct ls_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->chunks = NULL;
	a->cur = a->end = NULL;
}
