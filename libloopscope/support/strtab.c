/* strtab.c - interned strings: one copy of each file and procedure name per
 * module, so that scopes compare names by pointer. Open addressing. */
#include "support/base.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_string(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void rehash(struct ls_strtab *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 1024;
	const char **slots = ls_xcalloc(n, sizeof *slots);
	for (size_t i = 0; i < t->nslots; i++) {
		const char *s = t->slots[i];
		if (!s)
			continue;
		size_t j = hash_string(s) & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = s;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
}

const char *ls_intern(struct ls_strtab *t, const char *s)
{
	if (!s)
		return NULL;
	if ((t->count + 1) * 2 > t->nslots)
		rehash(t);
	size_t j = hash_string(s) & (t->nslots - 1);
	while (t->slots[j]) {
		if (strcmp(t->slots[j], s) == 0)
			return t->slots[j];
		j = (j + 1) & (t->nslots - 1);
	}
	t->slots[j] = ls_arena_strdup(&t->arena, s);
	t->count++;
	return t->slots[j];
}

void ls_strtab_free(struct ls_strtab *t)
{
	free(t->slots);
	ls_arena_free(&t->arena);
	t->slots = NULL;
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
