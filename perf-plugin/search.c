/* search.c - `perf loops search`: Paradyn's Performance Consultant on
 * today's mechanisms.  Three stages, each another file's:
 *
 *   1. record: the program run (or attached to for --duration) under
 *      `perf loops record --off-cpu` (cmd-record.c: cpu-clock samples and
 *      sched:sched_switch with call chains), into a temporary file;
 *   2. search (search-tree.c): the hypotheses (CPU-bound, blocked on I/O,
 *      waiting on synchronization, preempted, sleeping) tested on the
 *      whole program against their thresholds, each true one refined down
 *      `perf loops report`'s calling-context tree to procedures, loops and
 *      call sites, false ones pruned;
 *   3. count (search-count.c): the bottleneck loops' entries, iterations
 *      and exits through uprobes, `perf loops stat`'s machinery, in a
 *      second run (or attach) of the program.
 *
 * Sampling first, instrumentation second: the recording says where to
 * put the probes, as Paradyn's search decides where to instrument from
 * what its cheaper experiments found.  Root is needed (uprobes, the
 * scheduler's tracepoint); without it the command says so and exits 1. */
#include "search.h"
#include "record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char search_usage[] =
	"usage: perf loops search [--threshold HYP=PCT]... [--count N] [--hot-ms MS] [--burst ON/PERIOD]\n"
	"                         [--data FILE] [--json] [-o FILE] (-- COMMAND [ARGS...] | -p PID [--duration S])\n"
	"  runs COMMAND (or attaches to PID for S seconds, default 10) under perf loops record --off-cpu, tests\n"
	"  the hypotheses cpu, io, sync (futex), preempt and sleep on the whole program, refines each true one\n"
	"  to procedures, loops and call sites, then counts the bottleneck loops with uprobes in a second run\n"
	"  --threshold HYP=PCT  a hypothesis holds at a focus with PCT% of the run's elapsed time (default 10)\n"
	"  --count N       bottleneck loops to count (default 4; 0: no counting run)\n"
	"  --hot-ms MS     loops with no call, or MS ms of their own on the CPU, get their iteration probes\n"
	"                  in bursts (default 50)\n"
	"  --burst ON/PERIOD  those bursts: ON ms every PERIOD ms (default 10/100)\n"
	"  --data FILE     keep the recording in FILE (perf loops report -i FILE --wall reads it)\n"
	"  --json          write JSON\n"
	"  -o FILE         write to FILE instead of stdout\n"
	"Needs root (uprobes and sched:sched_switch through tracefs).\n";

static int parse_threshold(const char *arg, struct search_opts *o)
{
	const char *eq = strchr(arg, '=');
	char *end;
	double v = eq ? strtod(eq + 1, &end) : -1;
	for (int h = 0; eq && h < SH_N; h++)
		if (strlen(search_hyp_names[h]) == (size_t)(eq - arg) && !strncmp(arg, search_hyp_names[h], eq - arg) &&
		    !*end && v > 0 && v <= 100) {
			o->threshold[h] = v;
			return 0;
		}
	fprintf(stderr, "perf loops search: --threshold %s: not HYP=PCT with HYP cpu, io, sync, preempt or sleep "
	        "and 0 < PCT <= 100\n", arg);
	return -1;
}

static int parse_number(const char *opt, const char *arg, double lo, double hi, double *v)
{
	char *end;
	*v = strtod(arg, &end);
	if (*end || end == arg || !(*v >= lo && *v <= hi)) {
		fprintf(stderr, "perf loops search: %s %s: not a number from %g to %g\n", opt, arg, lo, hi);
		return -1;
	}
	return 0;
}

static int parse_option(const char *a, const char *next, struct search_opts *o)
{
	double v;
	if (!strcmp(a, "--json")) {
		o->json = true;
		return 0;
	}
	if (!next)
		goto unknown;
	if (!strcmp(a, "--threshold")) {
		if (parse_threshold(next, o) < 0)
			return -1;
	} else if (!strcmp(a, "--count")) {
		if (parse_number(a, next, 0, SEARCH_MAX_COUNT, &v) < 0)
			return -1;
		o->count = (int)v;
	} else if (!strcmp(a, "--hot-ms")) {
		if (parse_number(a, next, 0, 1e9, &o->hot_ms) < 0)
			return -1;
	} else if (!strcmp(a, "--burst")) {
		double on, period;
		if (sscanf(next, "%lf/%lf", &on, &period) != 2 || !(on > 0) || !(period > on)) {
			fprintf(stderr, "perf loops search: --burst %s: not ON/PERIOD milliseconds with ON < PERIOD\n", next);
			return -1;
		}
		o->burst = next;
	} else if (!strcmp(a, "--data"))
		o->data = next;
	else if (!strcmp(a, "-o"))
		o->output = next;
	else if (!strcmp(a, "-p")) {
		if (parse_number(a, next, 1, 1 << 30, &v) < 0)
			return -1;
		o->pid = (int)v;
	} else if (!strcmp(a, "--duration")) {
		if (parse_number(a, next, 0.001, 1e6, &o->duration) < 0)
			return -1;
	} else
		goto unknown;
	return 1; /* NEXT taken */
unknown:
	fprintf(stderr, "perf loops search: unknown option '%s'\n%s", a, search_usage);
	return -1;
}

static int parse_search_args(int argc, char **argv, struct search_opts *o)
{
	int i;
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(search_usage, stdout);
			exit(0);
		}
		if (!strcmp(argv[i], "--list-opts")) { /* for the shell completion */
			puts("--threshold --count --hot-ms --burst --data --json --duration --help");
			exit(0);
		}
		int r = parse_option(argv[i], i + 1 < argc ? argv[i + 1] : NULL, o);
		if (r < 0)
			return -1;
		i += r;
	}
	if (i < argc)
		i++;
	o->command = argv + i;
	o->ncommand = argc - i;
	if ((o->ncommand > 0) == (o->pid > 0)) {
		fprintf(stderr, "perf loops search: give a COMMAND after -- or -p PID (one of them)\n%s", search_usage);
		return -1;
	}
	return 0;
}

/* The executable: PID's, or COMMAND found as the shell would. */
static char *search_binary(const struct search_opts *o)
{
	char path[4096];
	if (o->pid > 0) {
		snprintf(path, sizeof path, "/proc/%d/exe", o->pid);
		return realpath(path, NULL);
	}
	return pl_find_command(o->command[0], path, sizeof path) == 0 ? realpath(path, NULL) : NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Stage 1: perf loops record --off-cpu into DATA. */
static int search_record(const struct search_opts *o, const char *binary, const char *data)
{
	char **argv = pl_xcalloc((size_t)o->ncommand + 16, sizeof *argv);
	int n = 0;
	argv[n++] = "record";
	argv[n++] = "--off-cpu";
	argv[n++] = "-q";
	argv[n++] = "-o";
	argv[n++] = (char *)data;
	pl_record_plan plan = { .callgraph = "--call-graph=fp" };
	char pid[32], duration[64];
	if (o->pid > 0) {
		/* the chains for the attached program's binary, not sleep's */
		pl_record_choose(binary, &plan);
		snprintf(pid, sizeof pid, "%d", o->pid);
		snprintf(duration, sizeof duration, "%g", o->duration);
		argv[n++] = plan.callgraph;
		argv[n++] = "-p";
		argv[n++] = pid;
		argv[n++] = "--";
		argv[n++] = "sleep";
		argv[n++] = duration;
	} else {
		argv[n++] = "--";
		for (int i = 0; i < o->ncommand; i++)
			argv[n++] = o->command[i];
	}
	pl_record_hints = 0; /* the recording is read here, not by the user */
	int rc = cmd_record(n, argv);
	free(argv);
	if (access(data, R_OK) != 0) {
		fprintf(stderr, "perf loops search: the recording failed (perf record exit %d): no %s\n", rc, data);
		return -1;
	}
	return rc >= 128 ? rc : 0; /* interrupted (Ctrl-C, SIGTERM): the file is whole, the search ends with it */
}

static void remove_data(const char *data, const char *dir)
{
	if (!dir)
		return;
	unlink(data);
	char old[4300];
	snprintf(old, sizeof old, "%s.old", data);
	unlink(old);
	rmdir(dir);
}

static int run_search(struct search_opts *o, struct search_tree *st, const char *data)
{
	double t0 = now_s();
	if (isatty(2))
		fprintf(stderr, "perf loops search: 1/3 recording on and off the CPU...\n");
	int stopped = search_record(o, st->binary, data);
	if (stopped < 0)
		return 1;
	st->record_s = now_s() - t0;
	if (isatty(2))
		fprintf(stderr, "perf loops search: 2/3 testing the hypotheses...\n");
	if (search_tree_build(st, data, o) < 0)
		return 1;
	if (stopped) { /* the user stopped the recording: the tree so far, no counting run */
		fprintf(stderr, "perf loops search: the recording was interrupted: the hypotheses on what it holds, "
		        "no loop counted\n");
		for (int i = 0; i < st->nloops; i++)
			if (!st->loops[i].why_not)
				st->loops[i].why_not = pl_xstrdup("the recording was interrupted");
		search_print(st, o);
		return stopped;
	}
	if (st->nloops && isatty(2))
		fprintf(stderr, "perf loops search: 3/3 counting the bottleneck loops...\n");
	if (st->nloops && search_count(st, o) < 0)
		return 1;
	return search_print(st, o);
}

int cmd_search(int argc, char **argv)
{
	struct search_opts o = { .count = 4, .hot_ms = 50, .burst = "10/100", .duration = 10 };
	for (int h = 0; h < SH_N; h++)
		o.threshold[h] = 10;
	if (parse_search_args(argc, argv, &o) < 0)
		return 2;
	if (geteuid() != 0) {
		fprintf(stderr, "perf loops search: needs root: it places uprobes and traces sched:sched_switch "
		        "through tracefs (run it as root)\n");
		return 1;
	}
	struct search_tree st = { 0 };
	st.binary = search_binary(&o);
	if (!st.binary) {
		fprintf(stderr, "perf loops search: %s: cannot find the program's binary\n",
		        o.pid ? "PID" : o.command[0]);
		return 1;
	}
	char dir[] = "/tmp/perf-loops-search-XXXXXX", data[4200];
	const char *tmp = NULL;
	if (o.data)
		snprintf(data, sizeof data, "%s", o.data);
	else if ((tmp = mkdtemp(dir)))
		snprintf(data, sizeof data, "%s/perf.data", dir);
	else {
		fprintf(stderr, "perf loops search: %s: %s\n", dir, strerror(errno));
		free(st.binary);
		return 1;
	}
	int rc = run_search(&o, &st, data);
	search_tree_free(&st);
	remove_data(data, tmp);
	return rc;
}
