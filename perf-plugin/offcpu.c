/* offcpu.c - where threads waited: the off-CPU intervals of a recording
 * made with sched:sched_switch samples (with call chains) and context
 * switch records (perf record --switch-events), as `perf loops record
 * --off-cpu` makes it.
 *
 * A task's sched_switch sample is taken as it leaves the CPU: its call
 * chain says where (the user frames give the loop), its prev_state why.
 * Its return is not a sched_switch sample of its own (that tracepoint
 * fires in the context of the task that gives the CPU up, which a
 * per-process recording does not follow), but the kernel writes a SWITCH
 * record into the returning task's buffer: the interval is from the
 * sample to the thread's next switch-in.  These are paired in a pass of
 * their own over the file before the report's replay, which then gives
 * each sched_switch sample its interval as its period, so the calling
 * context tree sums off-CPU nanoseconds as it sums cpu-clock's.
 *
 * The reason: R (preempted: the task could have run on) from the state;
 * a wait whose kernel chain passes through futex code is a futex wait
 * (pthread mutexes, condition variables, joins); D (uninterruptible) and
 * sleeps inside a read, write, poll or socket wait are I/O; other sleeps
 * (nanosleep, pause, wait4) are sleeping.  The tracepoint's field layout
 * is the kernel's since 4.x (prev_pid at 24, prev_state at 32).
 *
 * The time between a sleeper's wakeup and its return to the CPU (waiting
 * for one) stays in its wait's reason: splitting it off needs the wakeup's
 * time, and sched:sched_wakeup is not delivered to a per-process recording
 * (tried on 6.18: a timer's wakeups of the recorded thread give no sample;
 * they fire in another task's context). */
#include "offcpu.h"

#include <stdlib.h>
#include <string.h>

const char *const pl_off_reason_names[PL_OFF_NREASONS] = { "sleep", "io", "futex", "preempt" };

enum { PREV_PID_AT = 24, PREV_STATE_AT = 32, RAW_MIN = 40 };
#define TASK_STATE_MASK 0xffL /* S, D, ...; above: R+'s preempted bit */

struct mark {
	uint32_t tid;
	uint8_t out;           /* a sched_switch sample; else a switch-in */
	uint64_t time, ns;     /* ns: the interval, filled for outs */
};

struct pl_offcpu {
	struct mark *v;
	size_t n, cap;
	uint64_t unmatched;
};

static void add_mark(pl_offcpu *o, uint32_t tid, int out, uint64_t time)
{
	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 4096;
		o->v = pl_xrealloc(o->v, o->cap * sizeof *o->v);
	}
	o->v[o->n++] = (struct mark){ .tid = tid, .out = (uint8_t)out, .time = time };
}

static int cmp_mark(const void *pa, const void *pb)
{
	const struct mark *a = pa, *b = pb;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return (int)b->out - (int)a->out; /* out before in at the same time */
}

static long event_index(pd_reader *r, const char *name)
{
	for (size_t i = 0; i < pd_nattrs(r); i++) {
		const pd_attr *a = pd_attr_at(r, i);
		if (a->name && !strcmp(a->name, name))
			return (long)i;
	}
	return -1;
}

/* Each out is paired with the thread's next mark when that is an in. */
static void pair_marks(pl_offcpu *o)
{
	qsort(o->v, o->n, sizeof *o->v, cmp_mark);
	for (size_t i = 0; i < o->n; i++) {
		struct mark *m = &o->v[i];
		if (!m->out)
			continue;
		if (i + 1 < o->n && o->v[i + 1].tid == m->tid && !o->v[i + 1].out)
			m->ns = o->v[i + 1].time - m->time;
		else
			o->unmatched++;
	}
}

pl_offcpu *pl_offcpu_scan(const char *path, size_t *ev)
{
	char err[512];
	if (!path || !strcmp(path, "-"))
		return NULL;
	pd_reader *r = pd_open(path, err, sizeof err);
	if (!r)
		return NULL;
	pl_offcpu *o = pl_offcpu_read(r, ev);
	pd_close(r);
	return o;
}

pl_offcpu *pl_offcpu_read(pd_reader *r, size_t *ev)
{
	long sw = event_index(r, "sched:sched_switch");
	pl_offcpu *o = NULL;
	if (sw >= 0 && !pd_is_pipe(r)) {
		o = pl_xcalloc(1, sizeof *o);
		size_t ins = 0;
		pd_event e;
		while (pd_next(r, &e)) {
			const pd_sample *s = &e.sample;
			if (e.type == PD_RECORD_SAMPLE && s->attr_index == sw && s->raw_size >= RAW_MIN && e.has_time)
				add_mark(o, s->tid, 1, s->time);
			else if ((e.type == PD_RECORD_SWITCH || e.type == PD_RECORD_SWITCH_CPU_WIDE) &&
				 !(e.misc & PD_MISC_SWITCH_OUT) && e.has_time) {
				add_mark(o, s->tid, 0, s->time);
				ins++;
			}
		}
		if (!ins) {
			free(o->v);
			free(o);
			o = NULL;
		} else {
			pair_marks(o);
			*ev = (size_t)sw;
		}
	}
	return o;
}

void pl_offcpu_free(pl_offcpu *o)
{
	if (o) {
		free(o->v);
		free(o);
	}
}

uint64_t pl_offcpu_unmatched(const pl_offcpu *o)
{
	return o ? o->unmatched : 0;
}

static const struct mark *find_out(const pl_offcpu *o, uint32_t tid, uint64_t time)
{
	size_t lo = 0, hi = o->n;
	struct mark key = { .tid = tid, .out = 1, .time = time };
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_mark(&o->v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < o->n && o->v[lo].tid == tid && o->v[lo].time == time && o->v[lo].out ? &o->v[lo] : NULL;
}

/* Does a kernel function NAME say what the thread waited for? */
static int futex_code(const char *name)
{
	return strstr(name, "futex") != NULL;
}

static int io_code(const char *name)
{
	static const char *const io[] = { "pipe_read", "pipe_write", "vfs_read", "vfs_write", "do_sys_poll",
	                                  "do_select", "core_sys_select", "ep_poll", "sock_", "tcp_recvmsg",
	                                  "unix_stream_read", "io_schedule", "folio_wait", "wait_on_page",
	                                  "blk_", "n_tty_read", "wait_for_completion_io" };
	for (size_t i = 0; i < sizeof io / sizeof *io; i++)
		if (!strncmp(name, io[i], strlen(io[i])))
			return 1;
	return 0;
}

/* The reason from the state and the kernel part of the chain. */
static int reason_of(pl_report *rep, pl_thread *t, const pd_sample *smp, long state)
{
	if (!(state & TASK_STATE_MASK))
		return PL_OFF_PREEMPT;
	int io = (state & TASK_STATE_MASK) == 2; /* D */
	int kernel = 0;
	for (uint64_t i = 0; i < smp->nr_callchain; i++) {
		uint64_t ip = smp->callchain[i];
		if (ip >= PD_CONTEXT_MAX) {
			kernel = ip == PD_CONTEXT_KERNEL;
			continue;
		}
		if (!kernel)
			continue;
		uint64_t off;
		const char *name = pl_attrib_symbol(rep->attrib, pl_find_map(rep->s, t, ip, 1), ip, &off);
		if (name && futex_code(name))
			return PL_OFF_FUTEX;
		if (name && io_code(name))
			io = 1;
	}
	return io ? PL_OFF_IO : PL_OFF_SLEEP;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

int pl_offcpu_sample(pl_report *rep, pl_thread *t, const pd_sample *smp, uint64_t *period)
{
	const struct mark *m = smp->raw_size >= RAW_MIN ? find_out(rep->offcpu, smp->tid, smp->time) : NULL;
	if (!m || !m->ns || rd32(smp->raw + PREV_PID_AT) != smp->tid)
		return -1;
	int64_t state;
	memcpy(&state, smp->raw + PREV_STATE_AT, 8);
	*period = m->ns;
	return reason_of(rep, t, smp, (long)state);
}
