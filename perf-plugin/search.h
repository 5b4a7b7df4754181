/* search.h - what `perf loops search`'s stages share: the options
 * (search.c), the hypothesis tree tested on a recording (search-tree.c),
 * the counting of its bottleneck loops (search-count.c) and its printing
 * (search-print.c). */
#ifndef PERF_LOOPS_SEARCH_H
#define PERF_LOOPS_SEARCH_H

#include "report.h"
#include "stat.h"
#include "offcpu.h"

#include <stdbool.h>
#include <stdint.h>

/* The hypotheses: why the program takes its time. */
enum { SH_CPU, SH_IO, SH_SYNC, SH_PREEMPT, SH_SLEEP, SH_N };
extern const char *const search_hyp_names[SH_N];

#define SEARCH_MAX_COUNT 16

struct search_opts {
	double threshold[SH_N];   /* % of the threads' time at which a hypothesis holds */
	int count;                /* bottleneck loops to count (0: none) */
	double hot_ms;            /* a loop with no call in it and this much on-CPU time: bursts */
	const char *burst;        /* --burst's ON/PERIOD for those */
	const char *data;         /* keep the recording here (default: a temporary file) */
	const char *output;
	bool json;
	int pid;
	double duration;
	char **command;
	int ncommand;
};

/* An experiment: a hypothesis tested at a focus (a node of the report's
 * calling-context tree; 0 the whole program). */
struct search_exp {
	int hyp;
	uint32_t focus;
	uint64_t ns;              /* the time measured at the focus for the hypothesis */
	double share;             /* of the run's elapsed time, % */
	bool holds;
	int parent, first, next;  /* the refinement tree (indices, -1 none) */
	unsigned more_pruned;     /* false children not listed (below the first few) */
	int counted;              /* its loop's index in search_tree.loops, or -1 */
};

/* A bottleneck loop counted with stat's probes. */
struct search_loop {
	uint32_t focus;           /* its first true experiment's focus */
	int exp;                  /* that experiment */
	uint64_t header;
	char *binary;             /* the file whose loop it is */
	bool burst;               /* iterations in bursts (too hot to probe each) */
	bool done;                /* counted: the values below are set */
	char *why_not;            /* not counted: why */
	int64_t entries, iterations, exits;
	bool entries_known, iterations_known, exits_known;
	double est, est_err;      /* burst: the iterations estimated, its standard error */
	double cost_us;           /* a probe hit's measured cost */
	double overhead_s;        /* its counting run's probes: hits x cost (< 0 unknown) */
	uint64_t hits;
};

struct search_tree {
	pl_report rep;
	pl_report_options ro;
	bool opened;              /* rep is open (pl_report_close frees it) */
	char *binary;             /* the program's executable */
	uint64_t total_ns, on_ns, off_ns[PL_OFF_NREASONS];
	uint64_t base_ns;         /* the shares' base: the run's elapsed time */
	bool base_elapsed;        /* else the threads' time (no sample times) */
	uint64_t on_samples, off_samples;
	pl_off_reasons *why;      /* per node of rep.tree, inclusive */
	struct search_exp *v;
	size_t n, cap;
	struct search_loop loops[SEARCH_MAX_COUNT];
	int nloops;
	double record_s, count_s; /* the phases' wall times */
	int status;               /* the program's exit status in the recording */
};

/* search-tree.c */
int search_tree_build(struct search_tree *st, const char *data, const struct search_opts *o);
void search_tree_free(struct search_tree *st);
/* The time of node N for hypothesis H (ns, inclusive). */
uint64_t search_node_ns(const struct search_tree *st, uint32_t n, int h);
/* search-count.c: counts the bottleneck loops; 0 or -1 said. */
int search_count(struct search_tree *st, const struct search_opts *o);
/* search-print.c */
int search_print(struct search_tree *st, const struct search_opts *o);

int cmd_search(int argc, char **argv);

#endif
