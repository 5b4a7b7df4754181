/* unit-sort.c - the stable sort of arrays in sorted runs
 * (libloopscope/support/sort.c), on arrays made of 1 to 2500 sorted runs
 * (a natural merge sort: every run found, then merged), of 0 to 5000
 * elements with many equal keys, in elements of 16, 24 and 32 bytes (the
 * sizes with a merge of their own: ranges, intervals) and of 88 (the
 * procedures' prototypes, the generic merge).  The oracles: the order is non-decreasing,
 * equal keys keep their original order (stability, from a sequence number
 * each element carries), and the result is byte for byte the one of a
 * plain insertion sort (stable by construction) of the same input.
 * Also ls_sort_keys (the symbol tables' 16-byte keys), both orders, with
 * and without a tie-break on the positions, against the insertion sort
 * with the same comparison written out.  Prints TAP. */
#include "support/sort.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"

struct small { uint64_t key, seq; };
struct big { uint64_t key, seq; char pad[72]; };

static int cmp_small(const void *a, const void *b)
{
	const struct small *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int cmp_big(const void *a, const void *b)
{
	const struct big *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Insertion sort: stable, obviously right, the oracle. */
static void insertion_sort(char *b, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char tmp[128];
	for (size_t i = 1; i < n; i++) {
		memcpy(tmp, b + i * size, size);
		size_t j = i;
		while (j > 0 && cmp(b + (j - 1) * size, tmp) > 0) {
			memcpy(b + j * size, b + (j - 1) * size, size);
			j--;
		}
		memcpy(b + j * size, tmp, size);
	}
}

/* N elements in NRUNS sorted runs of keys below KEYS (small: many equal). */
static void fill(char *b, size_t n, size_t size, size_t nruns, uint64_t keys)
{
	size_t per = nruns ? (n + nruns - 1) / nruns : n;
	uint64_t key = 0;
	for (size_t i = 0; i < n; i++) {
		if (per && i % per == 0)
			key = rnd() % keys / 2; /* a new run starts lower, mostly */
		key += rnd() % 3;
		uint64_t seq = i;
		memset(b + i * size, 0x5a, size);
		memcpy(b + i * size, &key, 8);
		memcpy(b + i * size + 8, &seq, 8);
	}
}

static int check(size_t n, size_t nruns, size_t size, int (*cmp)(const void *, const void *))
{
	char *a = malloc(n * size + 1), *o = malloc(n * size + 1);
	fill(a, n, size, nruns, 1 + n / 4);
	memcpy(o, a, n * size);
	ls_sort_runs(a, n, size, cmp);
	insertion_sort(o, n, size, cmp);
	int good = memcmp(a, o, n * size) == 0;
	for (size_t i = 1; i < n && good; i++) {
		uint64_t k0, k1, s0, s1;
		memcpy(&k0, a + (i - 1) * size, 8);
		memcpy(&k1, a + i * size, 8);
		memcpy(&s0, a + (i - 1) * size + 8, 8);
		memcpy(&s1, a + i * size + 8, 8);
		good = k0 < k1 || (k0 == k1 && s0 < s1);
	}
	free(a);
	free(o);
	return good;
}

/* ls_sort_keys' order, written out: the oracle's comparison. */
static const uint32_t *tie_names; /* the tie-break's "names", by position */
static int tie_of(uint32_t a, uint32_t b, const void *ctx)
{
	const uint32_t *names = ctx;
	return names[a] < names[b] ? -1 : names[a] > names[b];
}

static int key_mid_first, key_tie;
static int cmp_key(const void *a, const void *b)
{
	const struct ls_sort_key *x = a, *y = b;
	if (key_mid_first && x->mid != y->mid)
		return x->mid < y->mid ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->mid != y->mid)
		return x->mid < y->mid ? -1 : 1;
	int c = key_tie ? tie_of(x->pos, y->pos, tie_names) : 0;
	if (c)
		return c;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* N keys, positions shuffled, few distinct addresses, mids and names: many
 * ties at every level. */
static int check_keys(size_t n, int mid_first, int tie)
{
	struct ls_sort_key *a = malloc((n + 1) * sizeof *a), *o = malloc((n + 1) * sizeof *o);
	uint32_t *names = malloc((n + 1) * sizeof *names);
	for (size_t i = 0; i < n; i++) {
		a[i] = (struct ls_sort_key){ rnd() % (1 + n / 8), (uint32_t)(rnd() % 4) | (uint32_t)(rnd() % 2) << 31,
		                             (uint32_t)i };
		names[i] = (uint32_t)(rnd() % 3);
	}
	for (size_t i = n; i > 1; i--) { /* positions in any order */
		size_t j = rnd() % i;
		uint32_t t = a[i - 1].pos;
		a[i - 1].pos = a[j].pos;
		a[j].pos = t;
	}
	memcpy(o, a, n * sizeof *a);
	tie_names = names;
	key_mid_first = mid_first;
	key_tie = tie;
	ls_sort_keys(a, n, mid_first, tie ? tie_of : NULL, names);
	insertion_sort((char *)o, n, sizeof *o, cmp_key);
	int good = memcmp(a, o, n * sizeof *a) == 0;
	free(a);
	free(o);
	free(names);
	return good;
}

int main(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 17, 1000, 5000 };
	static const size_t runs[] = { 1, 2, 3, 5, 8, 63, 64, 65, 100, 1000, 2500 };
	static const size_t esizes[] = { sizeof(struct small), 24, 32, sizeof(struct big) };
	for (size_t s = 0; s < sizeof esizes / sizeof *esizes; s++) {
		size_t size = esizes[s];
		/* (both read the key alone, at offset 0) */
		int (*cmp)(const void *, const void *) = size == sizeof(struct big) ? cmp_big : cmp_small;
		int bad = 0, cases = 0;
		for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
			for (size_t r = 0; r < sizeof runs / sizeof *runs; r++, cases++)
				if (!check(sizes[i], runs[r], size, cmp)) {
					bad++;
					printf("# %zu elements of %zu bytes in %zu runs: wrong order\n", sizes[i], size, runs[r]);
				}
		ok(bad == 0, "%zu-byte elements: %d arrays of 0-5000 elements in 1-2500 runs sorted as a stable insertion sort sorts them (%d wrong)",
		   size, cases, bad);
	}
	/* sort and dedup: each address once, in order, none lost */
	int good = 1;
	for (size_t n = 0; n < 3000 && good; n += 1 + n / 3) {
		uint64_t *v = malloc((n + 1) * sizeof *v), *w = malloc((n + 1) * sizeof *w);
		for (size_t i = 0; i < n; i++)
			v[i] = w[i] = rnd() % (1 + n / 2); /* about half repeated */
		size_t k = ls_sort_unique_u64(v, n);
		for (size_t i = 1; i < k; i++)
			good &= v[i - 1] < v[i];
		for (size_t i = 0; i < n; i++) { /* each input value is there */
			size_t j = 0;
			while (j < k && v[j] != w[i])
				j++;
			good &= j < k;
		}
		free(v);
		free(w);
	}
	ok(good, "ls_sort_unique_u64: strictly increasing, every value kept, for 0-3000 addresses");
	static const size_t nkeys[] = { 0, 1, 2, 15, 16, 17, 31, 33, 100, 1000, 4099 };
	for (int mode = 0; mode < 4; mode++) {
		int bad = 0;
		for (size_t i = 0; i < sizeof nkeys / sizeof *nkeys; i++)
			bad += !check_keys(nkeys[i], mode & 1, mode >> 1);
		ok(bad == 0, "ls_sort_keys by %s%s: 0-4099 keys as the insertion sort orders them (%d wrong)",
		   mode & 1 ? "(mid, addr, " : "(addr, mid, ", mode >> 1 ? "tie, pos)" : "pos)", bad);
	}
	/* all equal keys: the input order stays */
	ok(check(3000, 1, sizeof(struct small), cmp_small), "one run: left as it is");
	return done_testing();
}
