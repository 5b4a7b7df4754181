/* progress.c - the first report of a recording can take long (every
 * binary with samples is analyzed, and the cache is cold): a one-line
 * meter on stderr says which binary is being analyzed and how far, once
 * the report has taken a second, when stderr is a terminal (stdout may be
 * a file or a pipe) and not under -q.  It replaces the library's own meter
 * (ls_options.progress_fn), which knows neither the second nor the binary.
 * The analyses run on several threads (the helper thread of find-dso.c,
 * and the library's workers): the meter's line is written under a lock.
 * The line is cleared before anything else is printed.
 * PERF_LOOPS_PROGRESS_DELAY=SECONDS changes the second (tests use 0). */
#include "report.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static struct {
	pthread_mutex_t lock;
	int on;        /* a meter may be shown */
	int shown;     /* a line is on the screen */
	double start;  /* when the report began */
	double last;   /* when the line was last written */
	double delay;  /* how long a report runs before the meter shows */
} meter = { .lock = PTHREAD_MUTEX_INITIALIZER };

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void pl_progress_begin(const pl_report_options *o)
{
	pthread_mutex_lock(&meter.lock);
	meter.on = !o->quiet && isatty(STDERR_FILENO);
	meter.start = now();
	meter.last = 0;
	const char *d = getenv("PERF_LOOPS_PROGRESS_DELAY");
	char *end;
	meter.delay = d && *d ? strtod(d, &end) : 1.0;
	if (!(meter.delay >= 0))
		meter.delay = 1.0;
	pthread_mutex_unlock(&meter.lock);
}

int pl_progress_fn(void *ctx, size_t done, size_t total)
{
	const char *name = ctx;
	pthread_mutex_lock(&meter.lock);
	double t = now();
	if (meter.on && t - meter.start >= meter.delay && t - meter.last >= 0.1) {
		meter.last = t;
		meter.shown = 1;
		fprintf(stderr, "\r\033[Kperf-loops: analyzing %s: %zu of %zu procedures", name ? name : "?", done, total);
	}
	pthread_mutex_unlock(&meter.lock);
	return 0;
}

int pl_progress_wanted(void)
{
	pthread_mutex_lock(&meter.lock);
	int on = meter.on;
	pthread_mutex_unlock(&meter.lock);
	return on;
}

void pl_progress_clear(void)
{
	pthread_mutex_lock(&meter.lock);
	if (meter.shown)
		fprintf(stderr, "\r\033[K");
	meter.shown = 0;
	pthread_mutex_unlock(&meter.lock);
}

void pl_progress_end(void)
{
	pthread_mutex_lock(&meter.lock);
	if (meter.shown)
		fprintf(stderr, "\r\033[K");
	meter.on = meter.shown = 0;
	pthread_mutex_unlock(&meter.lock);
}
