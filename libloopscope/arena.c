/* arena.c - bump allocation for data that lives as long as its module,
 * and the abort-on-OOM allocation helpers every stage uses. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ls_arena_chunk {
	struct ls_arena_chunk *next;
	char data[];
};

#define LS_ARENA_CHUNK (256 * 1024)

static void out_of_memory(size_t n)
{
	fprintf(stderr, "loopscope: out of memory (allocating %zu bytes)\n", n);
	abort();
}

void *ls_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		out_of_memory(n);
	return p;
}

void *ls_xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		out_of_memory(n * m);
	return p;
}

char *ls_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(ls_xmalloc(n), s, n);
}

void *ls_grow(void *ptr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return ptr;
	size_t n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	void *p = realloc(ptr, n * elem);
	if (!p)
		out_of_memory(n * elem);
	*cap = n;
	return p;
}

void *ls_arena_alloc(struct ls_arena *a, size_t size)
{
	size = (size + 7) & ~(size_t)7;
	if ((size_t)(a->end - a->cur) < size) {
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
