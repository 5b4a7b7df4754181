/* sort.c - a stable sort for arrays that are already in a few sorted runs.
 *
 * The procedures stage sorts tables it builds by concatenating sorted parts
 * (symbols, PLT slots, .eh_frame FDEs in file order, call targets): glibc's
 * qsort, a merge sort with n log n comparisons through a function pointer
 * (and an indirect sort for elements over 32 bytes), was 7% of a cold report
 * of a system-wide recording.  Finding the runs costs n - 1 comparisons and
 * merging k of them log2 k passes, each element moved by a copy of its
 * fixed size.  Stable, so the order is the one a stable sort gives,
 * whatever CMP calls equal.
 *
 * Also a merge sort of 16-byte keys standing for bigger records (the
 * symbol tables': ls_sort_keys), its comparison inlined.
 */
#include "support/base.h"
#include "support/sort.h"

#include <stdlib.h>
#include <string.h>

/* Merges the sorted [LO, MID) and [MID, HI) of SRC into DST, stably,
 * elements of SIZE bytes.  Instantiated for the common sizes, so that an
 * element moves by a fixed-size copy the compiler inlines, not a memcpy
 * call per element. */
#define DEFINE_MERGE(NAME, SIZE_EXPR)                                                                        \
	static void NAME(const char *src, char *dst, size_t lo, size_t mid, size_t hi, size_t size,            \
	                 int (*cmp)(const void *, const void *))                                               \
	{                                                                                                      \
		(void)size;                                                                                    \
		size_t i = lo, j = mid, k = lo;                                                                \
		while (i < mid && j < hi) {                                                                    \
			if (cmp(src + j * (SIZE_EXPR), src + i * (SIZE_EXPR)) < 0)                             \
				memcpy(dst + k++ * (SIZE_EXPR), src + j++ * (SIZE_EXPR), (SIZE_EXPR));          \
			else                                                                                   \
				memcpy(dst + k++ * (SIZE_EXPR), src + i++ * (SIZE_EXPR), (SIZE_EXPR));          \
		}                                                                                              \
		memcpy(dst + k * (SIZE_EXPR), src + i * (SIZE_EXPR), (mid - i) * (SIZE_EXPR));                 \
		k += mid - i;                                                                                  \
		memcpy(dst + k * (SIZE_EXPR), src + j * (SIZE_EXPR), (hi - j) * (SIZE_EXPR));                  \
	}
DEFINE_MERGE(merge8, 8)
DEFINE_MERGE(merge16, 16)
DEFINE_MERGE(merge24, 24)
DEFINE_MERGE(merge32, 32)
DEFINE_MERGE(merge_any, size)

typedef void merge_fn(const char *, char *, size_t, size_t, size_t, size_t, int (*)(const void *, const void *));

/* A natural merge sort: the runs found, then merged pairwise, log2 of
 * their number passes.  As many runs as there are (a linker's
 * relocations: one long sorted run, then a few thousand in any order;
 * .eh_frame's FDEs: hundreds of runs) -- with N / 2 of them it is an
 * ordinary merge sort. */
void ls_sort_runs(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *b = base;
	size_t local[66], cap = sizeof local / sizeof *local, nruns = 1;
	size_t *runs = local;
	runs[0] = 0;
	for (size_t i = 1; i < n; i++) {
		if (cmp(b + (i - 1) * size, b + i * size) <= 0)
			continue;
		if (nruns + 2 > cap) {
			size_t ncap = cap * 4;
			size_t *more = ls_xmalloc(ncap * sizeof *more);
			memcpy(more, runs, nruns * sizeof *runs);
			if (runs != local)
				free(runs);
			runs = more;
			cap = ncap;
		}
		runs[nruns++] = i;
	}
	if (nruns == 1)
		return;
	runs[nruns] = n;
	merge_fn *merge = size == 8 ? merge8 : size == 16 ? merge16 : size == 24 ? merge24
	                : size == 32 ? merge32 : merge_any;
	char *tmp = ls_xmalloc(n * size), *src = b, *dst = tmp;
	while (nruns > 1) {
		size_t k = 0;
		for (size_t r = 0; r < nruns; r += 2) {
			if (r + 1 == nruns)
				memcpy(dst + runs[r] * size, src + runs[r] * size, (n - runs[r]) * size);
			else
				merge(src, dst, runs[r], runs[r + 1], runs[r + 2], size, cmp);
			runs[k++] = runs[r];
		}
		runs[k] = n;
		nruns = k;
		char *t = src;
		src = dst;
		dst = t;
	}
	if (src != b)
		memcpy(b, src, n * size);
	free(tmp);
	if (runs != local)
		free(runs);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

size_t ls_sort_unique_u64(uint64_t *v, size_t n)
{
	if (n < 2)
		return n;
	ls_sort_runs(v, n, sizeof *v, cmp_u64);
	size_t k = 1;
	for (size_t i = 1; i < n; i++)
		if (v[i] != v[k - 1])
			v[k++] = v[i];
	return k;
}

static inline bool key_less(const struct ls_sort_key *x, const struct ls_sort_key *y, bool mid_first,
                            int (*tie)(uint32_t, uint32_t, const void *), const void *ctx)
{
	if (mid_first && x->mid != y->mid)
		return x->mid < y->mid;
	if (x->addr != y->addr)
		return x->addr < y->addr;
	if (x->mid != y->mid)
		return x->mid < y->mid;
	int c = tie ? tie(x->pos, y->pos, ctx) : 0;
	if (c)
		return c < 0;
	return x->pos < y->pos;
}

void ls_sort_keys(struct ls_sort_key *v, size_t n, bool mid_first,
                  int (*tie)(uint32_t a, uint32_t b, const void *ctx), const void *ctx)
{
	enum { RUN = 16 }; /* insertion-sorted runs, then merged */
	for (size_t lo = 0; lo < n; lo += RUN) {
		size_t hi = lo + RUN < n ? lo + RUN : n;
		for (size_t i = lo + 1; i < hi; i++) {
			struct ls_sort_key t = v[i];
			size_t j = i;
			for (; j > lo && key_less(&t, &v[j - 1], mid_first, tie, ctx); j--)
				v[j] = v[j - 1];
			v[j] = t;
		}
	}
	struct ls_sort_key *tmp = ls_xmalloc((n + 1) * sizeof *tmp), *src = v, *dst = tmp;
	for (size_t w = RUN; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t a = lo, b = mid, o = lo;
			while (a < mid && b < hi)
				dst[o++] = key_less(&src[b], &src[a], mid_first, tie, ctx) ? src[b++] : src[a++];
			while (a < mid)
				dst[o++] = src[a++];
			while (b < hi)
				dst[o++] = src[b++];
		}
		struct ls_sort_key *t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof *v);
	free(tmp);
}
