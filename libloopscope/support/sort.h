/* sort.h - a stable sort for arrays already in a few sorted runs (sort.c). */
#ifndef LOOPSCOPE_SORT_H
#define LOOPSCOPE_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Sorts the N elements of SIZE bytes at BASE by CMP, stably: as glibc's
 * qsort (a stable merge sort at these sizes) leaves them, with N - 1
 * comparisons when they are sorted already and a merge of the runs when
 * there are a few (the procedures' tables are built from sorted parts:
 * symbols, PLT slots, FDEs, call targets), however many there are. */
void ls_sort_runs(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
/* Sorts the N addresses at V and drops repeats: how many are left. */
size_t ls_sort_unique_u64(uint64_t *v, size_t n);

#endif
