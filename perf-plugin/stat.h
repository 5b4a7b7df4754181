/* stat.h - what `perf loops stat`'s stages share: the options, the plan
 * (which uprobes count what: stat-plan.c), running them under perf stat
 * (stat-run.c) and the report (stat-print.c). */
#ifndef PERF_LOOPS_STAT_H
#define PERF_LOOPS_STAT_H

#include "loopscope.h"

#include <stdbool.h>
#include <stdint.h>

#define STAT_MAX_SPECS 64
#define STAT_MAX_TERMS 64

struct stat_opts {
	const char *loops[STAT_MAX_SPECS];
	char *owned[STAT_MAX_SPECS];      /* the specs --hot made (freed) */
	double hot_share[STAT_MAX_SPECS]; /* --hot: the spec's loop's Own share, %; else 0 */
	int nloops;
	const char *binary, *output;
	const char *input;                /* --hot's recording (-i), default perf.data */
	int hot;                          /* --hot N: the N hottest loops of the recording */
	bool all_edges, json;
	bool trace;                       /* --trace: trip counts per entry from a perf record */
	double burst_on_ms, burst_period_ms; /* --burst: iteration probes on ON ms every PERIOD ms */
	int pid;
	double duration;
	char **command;
	int ncommand;
};

/* The kinds of probed instruction whose hits cost differently: the kernel
 * emulates some in the trap and single-steps the rest (stat-calibrate.c). */
enum stat_insn_class {
	STAT_CLASS_STEP,   /* single-stepped out of line: two traps */
	STAT_CLASS_NOP,
	STAT_CLASS_BRANCH, /* jmp, jcc, call */
	STAT_CLASS_PUSH,
	STAT_CLASS_ENDBR,
	STAT_NCLASSES
};
extern const char *const stat_class_names[STAT_NCLASSES];

/* One uprobe counter: executions of the instruction at ADDR (file offset
 * OFFSET), all of them (COND -1) or those where conditional branch
 * condition COND's outcome is TAKEN. */
struct stat_counter {
	uint64_t addr, offset;
	int cond, taken;
	uint64_t value;
	bool counted;
	bool windowed;   /* --burst: counted in the windows only (value: their hits) */
	int insn_class;  /* enum stat_insn_class of the probed instruction */
};

/* A count: the sum of SIGN x counter over its terms. */
struct stat_qty {
	struct { int counter, sign; } terms[STAT_MAX_TERMS];
	int nterms;
	bool known;      /* false: not countable (an indirect jump, a branch on a register) */
	bool derived;    /* by flow conservation, not by a probe of its own */
};

struct stat_edge {
	ls_loop_point pt;
	struct stat_qty q;
};

struct stat_loop {
	const char *function, *file;
	unsigned index, line, depth;
	uint64_t header;
	bool irreducible;
	double hot_share;            /* --hot: its Own share of the recording's samples, %; < 0 not --hot */
	struct stat_trips *trips;    /* --trace: trip counts per entry; NULL without */
	struct stat_burst_est *est;  /* --burst: the iterations estimated; NULL without */
	struct stat_qty entries, iterations, header_hits;
	struct stat_edge *exits;     /* exit edges, then returns inside */
	size_t nexits;
	bool exits_complete;         /* every exit counted: their sum should be the entries */
};

struct stat_plan {
	ls_module *m;
	struct stat_loop *loops;
	size_t nloops;
	struct stat_counter *ctr;
	size_t nctr, capctr;
	int status;                  /* perf stat's exit status (the program's) */
	double seconds;              /* the run's wall time */
	double cpu_seconds;          /* the program's CPU time (user + system), its children's
	                                reaped included; < 0 unknown (-p, --trace) */
	double cost_us;              /* one probe hit, measured, mean over the hits; < 0 unknown */
	double class_cost_us[STAT_NCLASSES]; /* one hit per class of instruction, measured; < 0 unknown */
	double overhead_s;           /* sum of hits x their class's cost; < 0 unknown */
	uint64_t lost;               /* --trace: hits perf record lost */
	const char *mode;            /* "count", "trace", "burst" */
};

/* --trace: the trip count of each entry, from the traced sequence of
 * entries and iterations per thread (stat-trace.c). */
struct stat_trips {
	uint64_t ntrips, min, max, sum;
	uint64_t *trip;              /* each entry's iterations, sorted (the histogram run-length) */
	bool usable;                 /* entries and iterations are sums of probes (none derived) */
};

/* --burst: iterations estimated from windows with the iteration probes on
 * (stat-burst.c), exact entries beside. */
struct stat_burst_est {
	double iterations, stderr_;  /* the estimate and its standard error */
	uint64_t win_iter, win_entries; /* what the windows saw */
	unsigned windows;
	double on_fraction;          /* of the run's wall time */
};

int stat_plan_build(struct stat_plan *p, const char *binary, const struct stat_opts *o);
void stat_plan_free(struct stat_plan *p);
int64_t stat_value(const struct stat_plan *p, const struct stat_qty *q);
/* The uprobe filter (tracefs syntax, over fields cf pf zf sf of) that holds
 * when condition code COND's outcome is TAKEN. */
const char *stat_filter(int cond, int taken);
int stat_run(struct stat_plan *p, const char *binary, const struct stat_opts *o);
/* stat-hot.c: --hot N's loops, added to O->loops from the recording O->input. */
int stat_hot_loops(struct stat_opts *o, const char *binary);
/* stat-trace.c: the perf record arguments' events, and the trip counts from its file. */
int stat_trace_read(struct stat_plan *p, const char *data);
/* stat-burst.c: counts with the iteration probes in bursts (own perf_event_open). */
int stat_burst_run(struct stat_plan *p, const char *binary, const struct stat_opts *o, const char *group);
/* stat-run.c: the tracefs event id of GROUP:NAME, or -1. */
long stat_event_id(const char *group, const char *name);
/* stat-run.c: the signal caught (SIGINT, SIGTERM...) during the run, or 0. */
int stat_caught_signal(void);
int stat_print(const struct stat_plan *p, const char *binary, const struct stat_opts *o);
/* stat-calibrate.c: the file offsets of the probed calibration twins in
 * this program, one per class, the child that times them (`perf-loops
 * __calibrate N FILE`), and the class of the instruction at OFFSET of FD. */
int stat_calibrate_offsets(uint64_t off[STAT_NCLASSES]);
int stat_insn_class(int fd, uint64_t offset);
int stat_calibrate_child(int argc, char **argv);
int stat_run_child(int argc, char **argv);
int cmd_stat(int argc, char **argv);

#endif
