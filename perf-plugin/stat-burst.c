/* stat-burst.c - the counting of `perf loops stat`: every probe on for the
 * whole run (exact counts), or with --burst=ON/PERIOD, for loops too hot
 * to probe every iteration, the entry and exit probes (cold) on the whole
 * run, exactly, and the iteration probes (on the header and the back
 * edges, the hot ones) placed for ON ms every PERIOD ms only: bursty
 * tracing, with the overhead bounded by the duty cycle ON/PERIOD.
 *
 * The program and its children: the events inherit (threads and
 * processes made after an event is opened count into it, and read(2)
 * sums them, live ones included); those made before are opened on one by
 * one (the windows' events on every thread of the program and of its
 * descendants then alive).
 *
 * Mechanism: perf_event_open of the tracefs uprobe events (stat-run.c
 * defines them) as counting events on the program's threads, read(2) for
 * the counts.  Why open and close the hot events per burst rather than
 * ioctl(PERF_EVENT_IOC_DISABLE) them: a disabled uprobe event keeps its
 * breakpoint in the process (the uprobe's filter asks whether an event is
 * open on the mm, not whether it is enabled), so each iteration still
 * traps: measured here, `perf stat -D -1` (every event disabled) over 10^5
 * probed iterations took 4.9 s against 4.8 s enabled and 0.004 s plain.
 * Closing the event removes the breakpoint; opening it puts it back.
 *
 * The estimate: a ratio estimator over the windows.  In window i the hot
 * counters saw x_i iterations while the (always-on) entry counters went up
 * by y_i; iterations per entry R = sum x / sum y, and the loop's iterations
 * R x (its exact entries).  A window cuts the trip it opens in (iterations
 * without their entry) and the one it closes in (an entry without all its
 * iterations); for trips of one length the two cuts cancel in expectation.
 * Wall time cannot scale the counts: while the probes are on, the program
 * runs at the probes' speed (a trap per iteration), not its own.  The
 * error bar is the ratio estimator's standard error over the windows,
 * sqrt(sum (x_i - R y_i)^2 / (k (k - 1))) / mean(y), times the entries:
 * the between-window variance, which holds only if the windows' errors
 * are alike.  They were not: a window cut at an entry the poller saw
 * milliseconds late (descheduled on a loaded machine) was off by most of
 * a trip, a heavy tail that 20 windows rarely sample, so the stated
 * error was too narrow (errors of 2.2 and 1.5 standard errors; 20 runs:
 * up to 12%).  Entries seen after a late poll are passed over
 * (MAX_POLL_GAP, measured from the poll before to the reading of the
 * iterations); with that, 20 runs of 10^8 iterations at load 7-8 were off
 * by 0.68% at most, within one standard error in 12 and within two in 19
 * (bench/loop-stat.sh gives the coverage). */
#include "report.h"
#include "stat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TASKS 256

/* One counter's events: one per thread that was there when it was opened
 * (inherit covers the threads made later). */
struct ctr_fds {
	int fd[MAX_TASKS];
	int n;
	uint64_t closed; /* the counts of the fds closed (windows) */
};

struct burst {
	struct stat_plan *p;
	const char *group;
	pid_t pid;
	bool *hot;           /* per counter: windowed */
	struct ctr_fds *fds; /* per counter */
	uint64_t *at_open;   /* entries' counters at the window's opening */
	/* per window, per loop: x (hot hits of its iterations), y (its entries) */
	double *x, *y;
	unsigned nwin, capwin;
	double on_s, t0;
	bool reaped;         /* the program's status is in p->status */
	bool whole_run;      /* opening the whole run's counters: disabled until all are open */
};

/* ioctl REQ (PERF_EVENT_IOC_ENABLE or _DISABLE) on every open event, one
 * after the other in microseconds: counters opened one by one (each
 * uprobe's registration takes milliseconds) on a running process (-p)
 * would otherwise start and stop counting at different moments, and the
 * entries and iterations of one window would not agree. */
static void set_all(struct burst *b, unsigned long req)
{
	for (size_t c = 0; c < b->p->nctr; c++)
		for (int t = 0; t < b->fds[c].n; t++)
			ioctl(b->fds[c].fd[t], req, 0);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !stat_caught_signal())
		;
}

/* Appends the threads of process PID to TIDS (N so far, at most MAX_TASKS). */
static int threads_of(pid_t pid, pid_t *tids, int n)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	for (struct dirent *e; d && (e = readdir(d)) && n < MAX_TASKS;)
		if (e->d_name[0] != '.')
			tids[n++] = (pid_t)atoi(e->d_name);
	if (d)
		closedir(d);
	return n;
}

/* Appends to PIDS (N so far) the children of every thread of PID. */
static int children_of(pid_t pid, pid_t *pids, int n)
{
	pid_t tids[MAX_TASKS];
	int nt = threads_of(pid, tids, 0);
	for (int t = 0; t < nt; t++) {
		char path[96];
		snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)tids[t]);
		FILE *f = fopen(path, "re");
		for (int c; f && n < MAX_TASKS && fscanf(f, "%d", &c) == 1;)
			pids[n++] = (pid_t)c;
		if (f)
			fclose(f);
	}
	return n;
}

/* The threads of PID and of all its descendants then alive (MAX_TASKS at
 * most), or PID alone.  The windows' events go on each: an event inherits
 * to the threads and processes made after it is opened, not to those
 * already there (--burst on a program that forked its workers). */
static int tasks_of(pid_t pid, pid_t *tids)
{
	pid_t procs[MAX_TASKS];
	int np = 1, n = 0;
	procs[0] = pid;
	for (int i = 0; i < np; i++) /* breadth first: the list grows as it is walked */
		np = children_of(procs[i], procs, np);
	for (int i = 0; i < np; i++)
		n = threads_of(procs[i], tids, n);
	if (n == 0)
		tids[n++] = pid;
	return n;
}

static int open_counter(struct burst *b, size_t c)
{
	const struct stat_counter *k = &b->p->ctr[c];
	char name[64];
	snprintf(name, sizeof name, "at_%" PRIx64, k->offset);
	long id = stat_event_id(b->group, name);
	if (id < 0) {
		fprintf(stderr, "perf loops stat: no tracefs event %s:%s\n", b->group, name);
		return -1;
	}
	struct perf_event_attr a = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof a, .config = (uint64_t)id,
		                     .inherit = 1, .exclude_kernel = 0, .disabled = b->whole_run };
	pid_t tids[MAX_TASKS];
	int nt = tasks_of(b->pid, tids);
	struct ctr_fds *f = &b->fds[c];
	f->n = 0;
	for (int t = 0; t < nt; t++) {
		int fd = (int)syscall(SYS_perf_event_open, &a, tids[t], -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == ESRCH)
			continue; /* the thread ended meanwhile */
		if (fd < 0 || (k->cond >= 0 && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, stat_filter(k->cond, k->taken)) < 0)) {
			fprintf(stderr, "perf loops stat: perf_event_open of %s:%s on %d: %s\n", b->group, name,
			        (int)tids[t], strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		f->fd[f->n++] = fd;
	}
	return 0;
}

static uint64_t read_counter(const struct burst *b, size_t c)
{
	uint64_t sum = b->fds[c].closed;
	for (int t = 0; t < b->fds[c].n; t++) {
		uint64_t v;
		if (read(b->fds[c].fd[t], &v, sizeof v) == (ssize_t)sizeof v)
			sum += v;
	}
	return sum;
}

static void close_counter(struct burst *b, size_t c)
{
	b->fds[c].closed = read_counter(b, c);
	for (int t = 0; t < b->fds[c].n; t++)
		close(b->fds[c].fd[t]);
	b->fds[c].n = 0;
}

/* The hot counters: those of a loop's iterations (header, back edges) and
 * any other at one of their addresses (it traps as often). */
static void find_hot(struct burst *b)
{
	struct stat_plan *p = b->p;
	for (size_t i = 0; i < p->nloops; i++) {
		const struct stat_qty *q = &p->loops[i].iterations;
		for (int t = 0; t < q->nterms; t++)
			b->hot[q->terms[t].counter] = true;
		q = &p->loops[i].entries;
		for (int t = 0; t < q->nterms; t++)
			b->hot[q->terms[t].counter] = false; /* an irreducible loop's entry edges: cold */
	}
	for (size_t c = 0; c < p->nctr; c++)
		for (size_t d = 0; d < p->nctr; d++)
			if (b->hot[d] && p->ctr[d].offset == p->ctr[c].offset)
				b->hot[c] = true;
}

static uint64_t qty_now(const struct burst *b, const struct stat_qty *q, bool hot)
{
	uint64_t v = 0;
	for (int t = 0; t < q->nterms; t++)
		if (b->hot[q->terms[t].counter] == hot)
			v += (uint64_t)q->terms[t].sign * read_counter(b, (size_t)q->terms[t].counter);
	return v;
}

/* One window: the hot probes placed, then for each loop the iterations
 * counted from one entry to another: from the first entry seen after the
 * probes are in to the first one seen after ON seconds (ten times ON at
 * most).  Whole trips, so that no cut trip biases the ratio: a window that
 * began at a random moment would begin, more often than not, inside the
 * entry probe's trap (the unprobed program spends its time there when the
 * loop is hot), and count a whole trip's iterations without its entry.
 * The entries are polled every 20 us; the iterations a poll's lateness
 * adds or misses are alike at both ends.  Hits while the breakpoints go in
 * (the opening) and out (the closing, which waits for RCU: ~70 ms here)
 * are in the overhead, not in the estimate. */
enum { WAIT_FIRST, COUNTING, WAIT_LAST, DONE };

/* A poll later than this after the one before (the poller descheduled on
 * a loaded machine) sees an entry too late to cut the window at it: the
 * iterations counted since the entry, a whole poll's worth, would bias
 * that window by up to a trip.  Such entries are passed over (the window
 * begins or ends at the next one), a choice made on timing alone,
 * independent of the counts: measured here, windows ended after gaps of
 * 1-10 ms gave errors of 10-20% where the rest gave ~1%. */
#define MAX_POLL_GAP 150e-6

static void poll_loops(struct burst *b, size_t n, double on, int *st, uint64_t *last, uint64_t *x0, double *x,
                       double *y)
{
	struct stat_plan *p = b->p;
	double t0 = now(), before = t0;
	for (size_t i = 0; i < n; i++)
		last[i] = qty_now(b, &p->loops[i].entries, false);
	for (size_t left = n; left > 0 && now() < t0 + 10 * on && !stat_caught_signal();) {
		sleep_s(20e-6);
		double t = now();
		for (size_t i = 0; i < n; i++) {
			if (st[i] == DONE)
				continue;
			uint64_t e = qty_now(b, &p->loops[i].entries, false);
			bool cut = e != last[i] && (st[i] == WAIT_FIRST || st[i] == WAIT_LAST);
			uint64_t it = cut ? qty_now(b, &p->loops[i].iterations, true) : 0;
			/* late: from the poll before to the reading of the iterations
			 * (the reads too can be descheduled) */
			if (cut && now() - before > MAX_POLL_GAP)
				cut = false;
			if (cut && st[i] == WAIT_FIRST) {
				x0[i] = it;
				b->at_open[i] = e;
				st[i] = COUNTING;
			} else if (cut) {
				x[i] = (double)(it - x0[i]);
				y[i] = (double)(e - b->at_open[i]);
				st[i] = DONE;
				left--;
			}
			last[i] = e;
			if (t >= t0 + on && st[i] != DONE) {
				left -= st[i] == WAIT_FIRST;
				st[i] = st[i] == WAIT_FIRST ? DONE : WAIT_LAST;
			}
		}
		before = now();
	}
	b->on_s += now() - t0;
}

static int window(struct burst *b, double on)
{
	struct stat_plan *p = b->p;
	if (b->nwin == b->capwin) {
		b->capwin = b->capwin ? 2 * b->capwin : 256;
		b->x = realloc(b->x, b->capwin * p->nloops * sizeof *b->x);
		b->y = realloc(b->y, b->capwin * p->nloops * sizeof *b->y);
		if (!b->x || !b->y)
			return -1;
	}
	for (size_t c = 0; c < p->nctr; c++)
		if (b->hot[c] && open_counter(b, c) < 0) {
			for (size_t d = 0; d <= c; d++) /* (the failed one's threads opened so far too) */
				if (b->hot[d])
					close_counter(b, d);
			return -1;
		}
	size_t n = p->nloops; /* one count for the arrays and the polling (scan-build) */
	int st[n + 1];
	uint64_t last[n + 1], x0[n + 1];
	double *x = &b->x[b->nwin * n], *y = &b->y[b->nwin * n];
	for (size_t i = 0; i < n; i++) {
		st[i] = WAIT_FIRST;
		x[i] = y[i] = 0; /* a loop with no whole trip in the window adds nothing */
	}
	poll_loops(b, n, on, st, last, x0, x, y);
	for (size_t c = 0; c < p->nctr; c++)
		if (b->hot[c])
			close_counter(b, c);
	b->nwin++;
	return 0;
}

/* The program's end: its status as a shell's $?, and the CPU time it and
 * its reaped children took (the probes' traps are charged to it). */
static void reaped(struct burst *b, int st, const struct rusage *ru)
{
	b->p->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	b->p->cpu_seconds = ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 + ru->ru_stime.tv_sec +
	                    ru->ru_stime.tv_usec / 1e6;
	b->reaped = true;
}

/* Whether the program is still there (reaping it: its status to P). */
static bool running(struct burst *b, bool ours)
{
	if (!ours)
		return kill(b->pid, 0) == 0;
	int st;
	struct rusage ru;
	pid_t r = wait4(b->pid, &st, WNOHANG, &ru);
	if (r == 0)
		return true;
	if (r == b->pid)
		reaped(b, st, &ru);
	return false;
}

/* The ratio estimate of loop I's iterations, with its standard error. */
static void estimate(struct burst *b, size_t i)
{
	struct stat_plan *p = b->p;
	struct stat_loop *L = &p->loops[i];
	if (!L->entries.known || L->entries.derived || !L->iterations.known)
		return;
	for (int t = 0; t < L->entries.nterms; t++)
		if (b->hot[L->entries.terms[t].counter])
			return; /* an entry probe where an iteration's is: entries not exact either */
	double sx = 0, sy = 0;
	for (unsigned w = 0; w < b->nwin; w++) {
		sx += b->x[w * p->nloops + i];
		sy += b->y[w * p->nloops + i];
	}
	struct stat_burst_est *e = pl_xcalloc(1, sizeof *e);
	L->est = e;
	e->windows = b->nwin;
	e->on_fraction = b->on_s / (now() - b->t0);
	e->win_iter = (uint64_t)sx;
	e->win_entries = (uint64_t)sy;
	double entries = (double)stat_value(p, &L->entries);
	double cold = (double)qty_now(b, &L->iterations, false);
	if (sy <= 0) {
		e->iterations = -1; /* no entry seen in a window: no ratio */
		return;
	}
	double r = sx / sy, ss = 0;
	for (unsigned w = 0; w < b->nwin; w++) {
		double d = b->x[w * p->nloops + i] - r * b->y[w * p->nloops + i];
		ss += d * d;
	}
	double ybar = sy / b->nwin;
	double se_r = b->nwin > 1 ? sqrt(ss / ((double)b->nwin * (b->nwin - 1))) / ybar : r;
	e->iterations = cold + r * entries;
	e->stderr_ = se_r * entries;
}

/* Starts COMMAND stopped on a pipe, so that the cold events are on it
 * before it runs a single instruction of its own; its pid, or -1. */
static pid_t start_program(char **argv, int *release)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "perf loops stat: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	*release = fds[1];
	return pid;
}

static int run_windows(struct burst *b, const struct stat_opts *o, bool ours, double t_start)
{
	double on = o->burst_on_ms / 1e3, period = o->burst_period_ms / 1e3;
	/* exact counting (no --burst): every event on from the start; the wait
	 * in steps of 10 ms for the program's end, the signal or -p's duration */
	while (period <= 0 && running(b, ours) && !stat_caught_signal() && (ours || now() - t_start < o->duration))
		sleep_s(ours || t_start + o->duration - now() > 0.01 ? 0.01 : t_start + o->duration - now());
	/* windows every PERIOD from the start (at once after one that overran) */
	for (unsigned k = 1; period > 0 && running(b, ours) && !stat_caught_signal(); k++) {
		if (!ours && now() - t_start >= o->duration)
			break;
		/* the wait in steps of 10 ms at most: the program may end in it */
		double next = t_start + k * period - on;
		if (!ours && next > t_start + o->duration)
			next = t_start + o->duration;
		for (double t = now(); t < next && running(b, ours) && !stat_caught_signal(); t = now())
			sleep_s(next - t < 0.01 ? next - t : 0.01);
		if (!ours && now() - t_start >= o->duration)
			break;
		if (!running(b, ours) || stat_caught_signal())
			break;
		if (window(b, on) < 0 && running(b, ours))
			return -1; /* (the program ending as a burst began is no error) */
	}
	if (ours && !b->reaped) { /* a signal: passed on, as perf stat's run passes it */
		kill(b->pid, stat_caught_signal() == SIGINT ? SIGINT : SIGTERM);
		int st;
		struct rusage ru;
		pid_t r;
		while ((r = wait4(b->pid, &st, 0, &ru)) < 0 && errno == EINTR)
			;
		if (r == b->pid)
			reaped(b, st, &ru);
		else
			b->p->status = 1;
		b->reaped = true;
	}
	return 0;
}

int stat_burst_run(struct stat_plan *p, const char *binary, const struct stat_opts *o, const char *group)
{
	(void)binary;
	struct burst b = { .p = p, .group = group };
	p->cpu_seconds = -1;
	b.hot = pl_xcalloc(p->nctr + 1, sizeof *b.hot);
	b.fds = pl_xcalloc(p->nctr + 1, sizeof *b.fds);
	b.at_open = pl_xcalloc(p->nloops + 1, sizeof *b.at_open);
	if (o->burst_period_ms > 0)
		find_hot(&b); /* else every counter is on the whole run: exact counting */
	int release = -1, rc = 0;
	bool ours = o->pid <= 0;
	b.pid = ours ? start_program(o->command, &release) : o->pid;
	if (b.pid < 0) {
		fprintf(stderr, "perf loops stat: fork: %s\n", strerror(errno));
		rc = -1;
	}
	b.whole_run = true;
	for (size_t c = 0; c < p->nctr && rc == 0; c++)
		if (!b.hot[c])
			rc = open_counter(&b, c);
	b.whole_run = false;
	set_all(&b, PERF_EVENT_IOC_ENABLE);
	double t0 = now();
	b.t0 = t0;
	if (release >= 0) {
		if (rc == 0 && write(release, "g", 1) != 1)
			rc = -1;
		close(release); /* on failure: the child's read fails, it exits */
	}
	if (rc == 0)
		rc = run_windows(&b, o, ours, t0);
	else if (ours && b.pid > 0)
		waitpid(b.pid, NULL, 0);
	p->seconds = now() - t0;
	set_all(&b, PERF_EVENT_IOC_DISABLE);
	for (size_t c = 0; c < p->nctr; c++) {
		p->ctr[c].value = read_counter(&b, c);
		p->ctr[c].counted = true;
		p->ctr[c].windowed = b.hot[c];
		close_counter(&b, c);
	}
	for (size_t i = 0; rc == 0 && o->burst_period_ms > 0 && i < p->nloops; i++)
		estimate(&b, i);
	free(b.hot);
	free(b.fds);
	free(b.at_open);
	free(b.x);
	free(b.y);
	return rc;
}
