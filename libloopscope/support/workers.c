/* workers.c - running one function on N threads, the calling thread being
 * worker 0: what the per-procedure stages (analyze.c, and cfg.c's noreturn
 * pass) share.  The workers divide the work among themselves (an atomic
 * next-item counter); a thread that cannot start just leaves its share to
 * the others. */
#include "support/base.h"

#include <stdatomic.h>
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

/* One worker under its own guard: a worker that runs out of memory (or
 * reads a mapping that shrank) stops, and tells ls_run_workers, which
 * raises the same on the calling thread once every worker has joined (no
 * thread is left running on freed data). */
struct guarded {
	void *(*fn)(void *);
	void *arg;
	atomic_bool *oom;
	struct ls_guard_cause *cause;   /* the first worker's to stop, under the flag */
};

static void *run_guarded(void *arg)
{
	struct guarded *w = arg;
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env)) {
		bool was = false;
		if (atomic_compare_exchange_strong(w->oom, &was, true))
			*w->cause = ls_guard_cause();
		return NULL;
	}
	w->fn(w->arg);
	ls_oom_pop(&g);
	return NULL;
}

void ls_run_workers(int nworkers, void *(*fn)(void *), void *args, size_t arg_size)
{
	pthread_t tids[LS_MAX_WORKERS];
	bool running[LS_MAX_WORKERS] = { false };
	struct guarded w[LS_MAX_WORKERS];
	atomic_bool oom;
	atomic_init(&oom, false);
	struct ls_guard_cause cause = { LS_GUARD_NOMEM, NULL };
	assert(nworkers >= 1); /* ls_worker_count's answer: the caller is worker 0 */
	if (nworkers > LS_MAX_WORKERS)
		nworkers = LS_MAX_WORKERS;
	for (int t = 0; t < nworkers; t++)
		w[t] = (struct guarded){ fn, (char *)args + t * arg_size, &oom, &cause };
	for (int t = 1; t < nworkers; t++)
		running[t] = pthread_create(&tids[t], NULL, run_guarded, &w[t]) == 0;
	run_guarded(&w[0]);
	for (int t = 1; t < nworkers; t++)
		if (running[t])
			pthread_join(tids[t], NULL);
	if (atomic_load(&oom)) {
		ls_guard_set_cause(cause);
		ls_guard_rethrow();
	}
}
