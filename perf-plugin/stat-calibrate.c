/* stat-calibrate.c - what one uprobe hit costs, measured on this machine:
 * `perf-loops __calibrate N FILE` (run under perf stat with a probe on
 * stat_calibrate_probe) times N calls of the probed function and N of its
 * twin without a probe and writes the difference per call, in
 * microseconds, to FILE.  perf loops stat states its overhead with it. */
#include "stat.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Twins: the same code, one probed.  noinline and an empty asm so that
 * each call is a real call the compiler cannot fold. */
__attribute__((noinline)) void stat_calibrate_probe(void);
__attribute__((noinline)) void stat_calibrate_plain(void);
__attribute__((noinline)) void stat_calibrate_probe(void) { __asm__ volatile(""); }
__attribute__((noinline)) void stat_calibrate_plain(void) { __asm__ volatile("" ::: "memory"); }

/* The file offset of stat_calibrate_probe, from the mapping that holds it. */
int stat_calibrate_offset(uint64_t *off)
{
	uint64_t addr = (uint64_t)(uintptr_t)&stat_calibrate_probe;
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return -1;
	char line[4096];
	int rc = -1;
	while (rc < 0 && fgets(line, sizeof line, f)) {
		uint64_t lo, hi, pgoff;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64, &lo, &hi, &pgoff) == 3 && addr >= lo && addr < hi) {
			*off = addr - lo + pgoff;
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

/* CPU time of this thread: a uprobe's trap and handler run in the thread's
 * context and are charged to it, and other processes on a loaded machine
 * are not. */
static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int stat_calibrate_child(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long n = strtol(argv[1], NULL, 10);
	if (n <= 0)
		return 2;
	double t0 = seconds();
	for (long i = 0; i < n; i++)
		stat_calibrate_plain();
	double t1 = seconds();
	for (long i = 0; i < n; i++)
		stat_calibrate_probe();
	double t2 = seconds();
	FILE *f = fopen(argv[2], "w");
	if (!f)
		return 1;
	fprintf(f, "%.3f\n", ((t2 - t1) - (t1 - t0)) / n * 1e6);
	return fclose(f) == 0 ? 0 : 1;
}
