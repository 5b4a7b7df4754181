/* sort.h - a stable sort for arrays already in a few sorted runs (sort.c). */
#ifndef LOOPSCOPE_SORT_H
#define LOOPSCOPE_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sorts the N elements of SIZE bytes at BASE by CMP, stably: as glibc's
 * qsort (a stable merge sort at these sizes) leaves them, with N - 1
 * comparisons when they are sorted already and a merge of the runs when
 * there are a few (the procedures' tables are built from sorted parts:
 * symbols, PLT slots, FDEs, call targets), however many there are. */
void ls_sort_runs(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
/* A 16-byte sort key standing for a bigger record: POS is the record's
 * place in its array, so that every key is unique and any correct sort
 * gives the one order (that of a stable sort when POS is the input order). */
struct ls_sort_key {
	uint64_t addr;
	uint32_t mid, pos;
};
/* Sorts the N keys at V by (MID if MID_FIRST), ADDR, MID, then TIE's
 * answer on the two POS (when TIE is not NULL; a strcmp-like result), then
 * POS: a merge sort with the comparison inlined, where glibc's qsort moves
 * 16-byte elements through memcpy and a function pointer. */
void ls_sort_keys(struct ls_sort_key *v, size_t n, bool mid_first,
                  int (*tie)(uint32_t a, uint32_t b, const void *ctx), const void *ctx);
/* Sorts the N addresses at V and drops repeats: how many are left. */
size_t ls_sort_unique_u64(uint64_t *v, size_t n);

#endif
