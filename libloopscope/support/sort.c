/* sort.c - a stable sort for arrays that are already in a few sorted runs.
 *
 * The procedures stage sorts tables it builds by concatenating sorted parts
 * (symbols, PLT slots, .eh_frame FDEs in file order, call targets): glibc's
 * qsort, a merge sort with n log n comparisons through a function pointer
 * (and an indirect sort for elements over 32 bytes), was 7% of a cold report
 * of a system-wide recording.  Finding the runs costs n - 1 comparisons and
 * merging k of them log2 k passes.  Stable, so the order is the one a stable
 * sort gives, whatever CMP calls equal.
 *
 * Also a merge sort of 16-byte keys standing for bigger records (the
 * symbol tables': ls_sort_keys), its comparison inlined.
 */
#include "support/base.h"
#include "support/sort.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_RUNS = 64 }; /* more: the rest is sorted by qsort, as one run */

/* Merges the sorted [LO, MID) and [MID, HI) of SRC into DST, stably. */
static void merge(const char *src, char *dst, size_t lo, size_t mid, size_t hi, size_t size,
                  int (*cmp)(const void *, const void *))
{
	size_t i = lo, j = mid, k = lo;
	while (i < mid && j < hi) {
		if (cmp(src + j * size, src + i * size) < 0) {
			memcpy(dst + k++ * size, src + j++ * size, size);
		} else {
			memcpy(dst + k++ * size, src + i++ * size, size);
		}
	}
	memcpy(dst + k * size, src + i * size, (mid - i) * size);
	k += mid - i;
	memcpy(dst + k * size, src + j * size, (hi - j) * size);
}

void ls_sort_runs(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *b = base;
	size_t runs[MAX_RUNS + 2], nruns = 1;
	runs[0] = 0;
	for (size_t i = 1; i < n; i++) {
		if (cmp(b + (i - 1) * size, b + i * size) <= 0)
			continue;
		if (nruns == MAX_RUNS) {
			/* the rest as one run: qsort (stable) sorts it, the merge
			 * below joins it to the runs before (a linker's relocations:
			 * one long sorted run, then a few thousand in any order) */
			qsort(b + i * size, n - i, size, cmp);
			runs[nruns++] = i;
			break;
		}
		runs[nruns++] = i;
	}
	if (nruns == 1)
		return;
	runs[nruns] = n;
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
