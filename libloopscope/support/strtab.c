/* strtab.c - interned strings: one copy of each file and procedure name per
 * module, so that scopes compare names by pointer. Open addressing. */
#include "support/base.h"

#include <stdlib.h>
#include <string.h>

/* A hash of S eight bytes at a time (the names are mostly C++ symbols of
 * 30-200 bytes: FNV-1a's byte loop was 4% of a cold report of a
 * system-wide recording), its length in *LEN.  The final mix spreads every
 * byte into the low bits that pick the slot. */
static uint64_t hash_string(const char *s, size_t *len)
{
	size_t n = strlen(s);
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	uint64_t w = 0;
	memcpy(&w, s + i, n - i);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	*len = n;
	return h;
}

/* Into a table of N slots (a power of two). */
static void rehash_to(struct ls_strtab *t, size_t n)
{
	const char **slots = ls_xcalloc(n, sizeof *slots);
	uint32_t *hashes = ls_xmalloc(n * sizeof *hashes);
	for (size_t i = 0; i < t->nslots; i++) {
		const char *s = t->slots[i];
		if (!s)
			continue;
		size_t j = t->hashes[i] & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = s;
		hashes[j] = t->hashes[i];
	}
	free(t->slots);
	free(t->hashes);
	t->slots = slots;
	t->hashes = hashes;
	t->nslots = n;
}

void ls_strtab_reserve(struct ls_strtab *t, size_t n)
{
	size_t want = t->nslots ? t->nslots : 1024;
	while ((t->count + n + 1) * 2 > want && want < ((size_t)1 << 32))
		want *= 2;
	if (want != t->nslots)
		rehash_to(t, want);
}

const char *ls_intern(struct ls_strtab *t, const char *s)
{
	if (!s)
		return NULL;
	if ((t->count + 1) * 2 > t->nslots)
		rehash_to(t, t->nslots ? t->nslots * 2 : 1024);
	size_t len;
	uint32_t h = (uint32_t)hash_string(s, &len); /* the slot's bits (tables up to 2^32 slots) */
	size_t j = h & (t->nslots - 1);
	while (t->slots[j]) {
		if (t->hashes[j] == h && strcmp(t->slots[j], s) == 0)
			return t->slots[j];
		j = (j + 1) & (t->nslots - 1);
	}
	char *copy = ls_arena_alloc(&t->arena, len + 1);
	memcpy(copy, s, len + 1);
	t->slots[j] = copy;
	t->hashes[j] = h;
	t->count++;
	return t->slots[j];
}

void ls_strtab_free(struct ls_strtab *t)
{
	free(t->slots);
	free(t->hashes);
	ls_arena_free(&t->arena);
	t->slots = NULL;
	t->hashes = NULL;
	t->nslots = t->count = 0;
}

/* The symbol name without its "@VERSION" / "@@VERSION" suffix, interned. */
const char *ls_intern_unversioned(struct ls_strtab *t, const char *name)
{
	size_t n = strcspn(name, "@");
	if (!name[n])
		return ls_intern(t, name);
	char buf[512];
	char *b = n < sizeof buf ? buf : ls_xmalloc(n + 1);
	memcpy(b, name, n);
	b[n] = 0;
	const char *r = ls_intern(t, b);
	if (b != buf)
		free(b);
	return r;
}
