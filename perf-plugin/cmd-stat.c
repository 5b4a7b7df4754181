/* cmd-stat.c - `perf loops stat`: how often loops are entered, how many
 * iterations they make and by which edge they are left, counted exactly
 * with uprobes at their instrumentation points (ls_loop_points).
 *
 * Mechanism: uprobes defined through tracefs (uprobe_events) in a group of
 * this process's own, loopscope_PID, counted by our own perf_event_open
 * of each uprobe's tracepoint (stat-burst.c: PERF_TYPE_TRACEPOINT, the id
 * from tracefs events/GROUP/NAME/id, inherit, so that the program's
 * threads and children are counted; opened on the program before it
 * execs, or on every thread of -p's process and its descendants; read at
 * the end), then removed.  Why not `perf stat`, as before: the same
 * counting, but the run, the signals and the program's status are then
 * ours to hold, and the overhead's calibration counts its probes the same
 * way (--trace still runs perf record).  Why tracefs rather than `perf
 * probe -x`: perf probe places a probe by source line or symbol, not at
 * an arbitrary instruction with the flags fetched as bit fields, and names
 * its events itself; writing uprobe_events gives each probe a name we
 * choose (so that every probe of this run is in one group, removed as one)
 * and the flags as fields a filter (PERF_EVENT_IOC_SET_FILTER) tests in
 * the kernel, so that one probe on a conditional branch counts one
 * outcome.
 *
 * An edge out of a conditional branch is counted by a probe on its target
 * when the target is entered by that edge alone, else by a probe on the
 * branch filtered on the flags.  Entries are counted on the entry edges
 * (cold); iterations on the header (an irreducible loop: entries plus
 * back edges); one exit whose probe would be hot (a filtered probe on the
 * latch) is derived by flow conservation (exits = entries) instead, unless
 * --all-edges.
 *
 * The probes go on every way out: the program's end, its crash, a
 * failure to start it, SIGINT/SIGTERM/SIGHUP (caught here, passed on to
 * the program, then the probes removed); a group left by a perf-loops
 * killed with SIGKILL is removed by the next run (its PID is gone).
 *
 * Overhead: each probe hit traps into the kernel, and what a hit costs
 * depends on the instruction: the kernel emulates some (branches, and on
 * newer kernels NOPs and pushes) and single-steps the rest, ~10x dearer
 * here.  The cost of a hit of each class is measured at the end of each
 * run (calibration twins of this program, probed and counted as the run's
 * probes were, timed against an unprobed function: stat-calibrate.c), and
 * the overhead stated as the sum of each probe's hits x its class's cost;
 * the program's own CPU time is printed beside it. */
#include "record.h"
#include "report.h"
#include "stat.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char stat_usage[] =
	"usage: perf loops stat [--loop LOOP]... [--hot N [-i perf.data]] [-x BINARY] [--all-edges]\n"
	"                       [--trace | --burst[=ON/PERIOD]] [--json] [-o FILE]\n"
	"                       (-- COMMAND [ARGS...] | -p PID [--duration SECONDS])\n"
	"  LOOP: 0xHEADER, FILE:LINE, FUNCTION (its loops) or FUNCTION:N (loopscope probes numbers them);\n"
	"        none (and no --hot): every loop of BINARY\n"
	"  --hot N         also the N hottest loops of a recording (most samples of their own, as\n"
	"                  perf loops report --format=loops --sort=own ranks them)\n"
	"  -i FILE         --hot's recording (default perf.data)\n"
	"  --trace         record the probes (perf record) for each entry's trip count: min, max, histogram\n"
	"  --burst[=ON/PERIOD]  iteration probes on ON ms every PERIOD ms (default 5/100): iterations\n"
	"                  estimated with an error bar, entries and exits exact (for loops too hot to probe)\n"
	"  -x BINARY       the binary whose loops are counted (default: COMMAND's, or PID's executable)\n"
	"  --all-edges     count every edge, none derived by flow conservation (checks it)\n"
	"  --json          write JSON\n"
	"  -o FILE         write to FILE instead of stdout\n"
	"  -p PID          count a running process for --duration SECONDS (default 10), then detach\n"
	"Needs root (uprobes through /sys/kernel/tracing).\n";

/* --burst=ON/PERIOD, in milliseconds */
static int parse_burst(const char *arg, struct stat_opts *o)
{
	char *end;
	o->burst_on_ms = strtod(arg, &end);
	if (*end == '/')
		o->burst_period_ms = strtod(end + 1, &end);
	if (*end || !(o->burst_on_ms > 0) || !(o->burst_period_ms > o->burst_on_ms)) {
		fprintf(stderr, "perf loops stat: --burst=%s: not ON/PERIOD milliseconds with ON < PERIOD\n", arg);
		return -1;
	}
	return 0;
}

static int parse_stat_args(int argc, char **argv, struct stat_opts *o)
{
	int i;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!a)
			break;
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(stat_usage, stdout);
			exit(0);
		}
		if (!strcmp(a, "--list-opts")) { /* for the shell completion */
			puts("--loop --hot --all-edges --trace --burst --json --duration --help");
			exit(0);
		}
		if (!strcmp(a, "--all-edges"))
			o->all_edges = true;
		else if (!strcmp(a, "--trace"))
			o->trace = true;
		else if (!strcmp(a, "--burst") || !strncmp(a, "--burst=", 8)) {
			if (parse_burst(a[7] ? a + 8 : "5/100", o) < 0)
				return -1;
		} else if (next && !strcmp(a, "--hot")) {
			char *end;
			long n = strtol(next, &end, 10);
			if (*end || n <= 0 || n > STAT_MAX_SPECS) {
				fprintf(stderr, "perf loops stat: --hot %s: not a number of loops (1 to %d)\n", next,
				        STAT_MAX_SPECS);
				return -1;
			}
			o->hot = (int)n;
			i++;
		} else if (next && !strcmp(a, "-i")) {
			o->input = next;
			i++;
		}
		else if (!strcmp(a, "--json"))
			o->json = true;
		else if (next && (!strcmp(a, "--loop") || !strcmp(a, "-l"))) {
			o->loops[o->nloops++] = next;
			i++;
		} else if (!strncmp(a, "--loop=", 7))
			o->loops[o->nloops++] = a + 7;
		else if (next && !strcmp(a, "-x")) {
			o->binary = next;
			i++;
		} else if (next && !strcmp(a, "-o")) {
			o->output = next;
			i++;
		} else if (next && !strcmp(a, "-p")) {
			char *end;
			long pid = strtol(next, &end, 10);
			if (*end || pid <= 0) {
				fprintf(stderr, "perf loops stat: -p %s: not a process id\n", next);
				return -1;
			}
			o->pid = (int)pid;
			i++;
		} else if (next && !strcmp(a, "--duration")) {
			char *end;
			o->duration = strtod(next, &end);
			if (*end || !(o->duration > 0)) {
				fprintf(stderr, "perf loops stat: --duration %s: not a number of seconds\n", next);
				return -1;
			}
			i++;
		} else {
			fprintf(stderr, "perf loops stat: unknown option '%s'\n%s", a, stat_usage);
			return -1;
		}
		if (o->nloops >= STAT_MAX_SPECS) {
			fprintf(stderr, "perf loops stat: at most %d --loop\n", STAT_MAX_SPECS);
			return -1;
		}
	}
	if (i < argc)
		i++;
	o->command = argv + i;
	o->ncommand = argc - i;
	if (o->trace && o->burst_period_ms > 0) {
		fprintf(stderr, "perf loops stat: --trace and --burst: one of them\n");
		return -1;
	}
	if (o->all_edges && o->burst_period_ms > 0) {
		fprintf(stderr, "perf loops stat: --all-edges and --burst: the latch's exit probe would trap on every "
		        "iteration; one of them\n");
		return -1;
	}
	if (o->input && !o->hot) {
		fprintf(stderr, "perf loops stat: -i %s: a recording is read for --hot N only\n", o->input);
		return -1;
	}
	if ((o->ncommand > 0) == (o->pid > 0)) {
		fprintf(stderr, "perf loops stat: give a COMMAND after -- or -p PID (one of them)\n%s", stat_usage);
		return -1;
	}
	return 0;
}

/* The binary: -x, PID's executable, or COMMAND found as the shell would. */
static char *stat_binary(const struct stat_opts *o)
{
	if (o->binary)
		return realpath(o->binary, NULL);
	char path[4096];
	if (o->pid > 0) {
		char link[64];
		snprintf(link, sizeof link, "/proc/%d/exe", o->pid);
		ssize_t n = readlink(link, path, sizeof path - 1);
		if (n <= 0)
			return NULL;
		path[n] = 0;
		return strdup(path);
	}
	return pl_find_command(o->command[0], path, sizeof path) == 0 ? realpath(path, NULL) : NULL;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_opts o = { .duration = 10 };
	if (parse_stat_args(argc, argv, &o) < 0)
		return 2;
	char *binary = stat_binary(&o);
	if (!binary) {
		fprintf(stderr, "perf loops stat: %s: cannot find the binary (give -x BINARY)\n",
		        o.binary ? o.binary : o.pid ? "PID" : o.command[0]);
		return 1;
	}
	struct stat_plan plan = { 0 };
	int rc = o.hot ? stat_hot_loops(&o, binary) : 0;
	if (rc == 0)
		rc = stat_plan_build(&plan, binary, &o);
	if (rc == 0)
		rc = stat_run(&plan, binary, &o);
	if (rc == 0)
		rc = stat_print(&plan, binary, &o);
	stat_plan_free(&plan);
	for (int i = 0; i < o.nloops; i++)
		free(o.owned[i]);
	free(binary);
	return rc < 0 ? 1 : rc;
}
