/* workers.c - running one function on N threads, the calling thread being
 * worker 0: what the per-procedure stages (analyze.c, and cfg.c's noreturn
 * pass) share.  The workers divide the work among themselves (an atomic
 * next-item counter); a thread that cannot start just leaves its share to
 * the others. */
#include "internal.h"

#include <unistd.h>

int ls_worker_count(const ls_options *opt, size_t nitems, size_t min_items_per_worker)
{
	long n = opt->jobs > 0 ? opt->jobs : sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	if (n > LS_MAX_WORKERS)
		n = LS_MAX_WORKERS;
	size_t useful = min_items_per_worker ? nitems / min_items_per_worker + 1 : nitems;
	if (useful < 1)
		useful = 1;
	if ((size_t)n > useful)
		n = (long)useful;
	return (int)n;
}

void ls_run_workers(int nworkers, void *(*fn)(void *), void *args, size_t arg_size)
{
	pthread_t tids[LS_MAX_WORKERS];
	bool running[LS_MAX_WORKERS] = { false };
	if (nworkers > LS_MAX_WORKERS)
		nworkers = LS_MAX_WORKERS;
	for (int t = 1; t < nworkers; t++)
		running[t] = pthread_create(&tids[t], NULL, fn, (char *)args + t * arg_size) == 0;
	fn(args);
	for (int t = 1; t < nworkers; t++)
		if (running[t])
			pthread_join(tids[t], NULL);
}
