/* offcpu.h - off-CPU intervals of a recording made with `perf loops record
 * --off-cpu` (offcpu.c), for the report (attribute.c) and its --wall view
 * (view-wall.c). */
#ifndef PL_OFFCPU_H
#define PL_OFFCPU_H

#include "report.h"

/* Why a thread left the CPU: the state it left in (sched_switch's
 * prev_state), refined by where in the kernel it waited. */
enum { PL_OFF_SLEEP, PL_OFF_IO, PL_OFF_FUTEX, PL_OFF_PREEMPT, PL_OFF_NREASONS };
extern const char *const pl_off_reason_names[PL_OFF_NREASONS];

typedef struct pl_offcpu pl_offcpu;

/* The file PATH's off-CPU intervals: each sched:sched_switch sample (the
 * thread leaving the CPU) to the thread's next PERF_RECORD_SWITCH in (its
 * return), read in a pass of their own.  NULL when the file has no
 * sched:sched_switch samples or no switch records, or is a pipe; *EV: the
 * sched_switch event's index. */
pl_offcpu *pl_offcpu_scan(const char *path, size_t *ev);
/* The same from reader R, read to its end (the fuzz target's way in). */
pl_offcpu *pl_offcpu_read(pd_reader *r, size_t *ev);
void pl_offcpu_free(pl_offcpu *o);
/* Switch-out samples that had no switch-in after them (the recording ended
 * first, or records were lost). */
uint64_t pl_offcpu_unmatched(const pl_offcpu *o);

/* A sched_switch sample SMP of thread T: its off-CPU time (ns) into
 * *PERIOD and its reason (PL_OFF_*), or -1 when it has no interval. */
int pl_offcpu_sample(pl_report *rep, pl_thread *t, const pd_sample *smp, uint64_t *period);

/* Each node's off-CPU time by reason, inclusive (malloc'd, one row per
 * node of rep->tree), or NULL: no off-CPU data, or the tree was turned
 * over (-g callee). */
typedef uint64_t pl_off_reasons[PL_OFF_NREASONS];
pl_off_reasons *pl_off_reasons_inclusive(const pl_report *rep);

/* view-wall.c: --wall */
int pl_view_wall(pl_report *rep);
/* The event whose period is on-CPU nanoseconds (cpu-clock, task-clock), or -1. */
long pl_offcpu_clock_event(const pl_report *rep);
/* The tree and loops views of a recording with off-CPU data get three
 * more columns: on-CPU, off-CPU and wall ms of the node (inclusive).
 * Their width (0: none, the recording has no off-CPU data, or -t), their
 * header, and the cells of node N of tree T. */
int pl_wall_width(const pl_report *rep);
const char *pl_wall_header(const pl_report *rep);
void pl_print_wall_cells(const pl_report *rep, const pl_tree *t, uint32_t n);

#endif
