/* progress.c - a one-line progress meter on stderr for long analyses.
 * Silent unless stderr is a terminal, so logs and pipes stay clean.  An
 * embedder's callback (ls_options.progress_fn) replaces the meter, and may
 * ask the analysis to stop. */
#include "support/base.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void ls_progress_start(struct ls_progress *p, bool wanted, const char *what, size_t total)
{
	p->on = wanted && isatty(STDERR_FILENO);
	p->what = what;
	p->total = total;
	p->done = 0;
	p->last = now();
	p->fn = NULL;
	p->ctx = NULL;
	p->stop = 0;
	pthread_mutex_init(&p->lock, NULL);
}

bool ls_progress_stopped(struct ls_progress *p)
{
	return __atomic_load_n(&p->stop, __ATOMIC_RELAXED) != 0;
}

void ls_progress_add(struct ls_progress *p, size_t n)
{
	if (!p->on && !p->fn)
		return;
	pthread_mutex_lock(&p->lock);
	p->done += n;
	double t = now();
	if (t - p->last > 0.1 && p->fn) {
		p->last = t;
		if (p->fn(p->ctx, p->done, p->total))
			__atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
	} else if (t - p->last > 0.1) {
		p->last = t;
		fprintf(stderr, "\r%s: %zu/%zu (%d%%)", p->what, p->done, p->total,
		        p->total ? (int)(100.0 * p->done / p->total) : 100);
	}
	pthread_mutex_unlock(&p->lock);
}

void ls_progress_end(struct ls_progress *p)
{
	if (p->on)
		fprintf(stderr, "\r\033[K");
	pthread_mutex_destroy(&p->lock);
}
