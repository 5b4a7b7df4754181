/* cmd-record.c - `perf loops record`: perf record with call chains that
 * are complete for the code the command runs.  Defaults: -e cpu-clock, and
 * call chains chosen from the binaries (record-mode.c): --call-graph=fp
 * where the code keeps frame pointers, else a DWARF-style stack copy sized
 * from the program's measured stack depth.  The choice and why go to
 * stderr.  The user's own -g/--call-graph, and any other perf record
 * option, pass through untouched. */
#include "record.h"
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* perf record's options that take a separate value (the command is the
 * first word that is neither an option nor such a value, when there is no
 * "--"). */
static int takes_value(const char *a)
{
	static const char *const opts[] = { "-e", "-o", "-F", "-c", "-p", "-t", "-C", "-m", "-G", "-u", "-r",
	                                    "--event", "--output", "--freq", "--count", "--pid", "--tid",
	                                    "--cpu", "--mmap-pages", "--cgroup", "--uid", "--realtime",
	                                    "--switch-output", "--user-regs", "--intr-regs", "--clockid", "-k" };
	for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
		if (!strcmp(a, opts[i]))
			return 1;
	return 0;
}

struct args {
	int has_event, has_cg, command_at, pipe_out;
	const char *output;
};

static void scan_args(int argc, char **argv, struct args *r)
{
	*r = (struct args){ .output = "perf.data", .command_at = -1 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			r->command_at = i + 1 < argc ? i + 1 : -1;
			break;
		}
		if (a[0] != '-') {
			r->command_at = i;
			break;
		}
		if (!strcmp(a, "-e") || !strncmp(a, "--event", 7) || (!strncmp(a, "-e", 2) && a[2]))
			r->has_event = 1;
		if (!strcmp(a, "-g") || !strncmp(a, "--call-graph", 12))
			r->has_cg = 1;
		if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc)
			r->output = argv[i + 1];
		else if (!strncmp(a, "--output=", 9))
			r->output = a + 9;
		else if (!strncmp(a, "-o", 2) && a[2])
			r->output = a + 2;
		if (takes_value(a))
			i++;
	}
	r->pipe_out = !strcmp(r->output, "-");
}

static int run_perf(char **args)
{
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "perf-loops: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		execvp("perf", args);
		fprintf(stderr, "perf-loops: cannot run perf: %s\n", strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "perf-loops: waitpid: %s\n", strerror(errno));
			return 1;
		}
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int cmd_record(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			puts("usage: perf loops record [perf record options] -- COMMAND [ARGS...]\n"
			     "  runs perf record -e cpu-clock with call chains chosen from COMMAND's binaries:\n"
			     "  --call-graph=fp where the code keeps frame pointers, else --call-graph=dwarf with a\n"
			     "  stack copy sized from the program's measured stack depth (-e, -g or --call-graph given:\n"
			     "  as given)\n"
			     "  then: perf loops report -i perf.data");
			return 0;
		}
	struct args r;
	scan_args(argc, argv, &r);
	pl_record_plan plan = { .callgraph = "--call-graph=fp" };
	int planned = 0;
	if (r.has_cg) {
		fprintf(stderr, "perf loops: call chains as given\n");
	} else if (r.command_at < 0) {
		fprintf(stderr, "perf-loops: no command given (perf loops record [options] -- COMMAND); passing the "
		        "options to perf record, --call-graph=fp\n");
	} else if (pl_record_choose(argv[r.command_at], &plan) == 0) {
		planned = 1;
		fprintf(stderr, "perf loops: %s\n", plan.why);
	}
	char **args = pl_xcalloc(argc + 8, sizeof *args);
	int n = 0;
	args[n++] = "perf";
	args[n++] = "record";
	if (!r.has_event) {
		args[n++] = "-e";
		args[n++] = "cpu-clock";
	}
	if (!r.has_cg)
		args[n++] = plan.callgraph;
	for (int k = 1; k < argc; k++)
		args[n++] = argv[k];
	args[n] = NULL;
	int rc = run_perf(args);
	free(args);
	if (rc == 0 && planned && plan.dwarf && !r.pipe_out)
		pl_record_measure(&plan, r.output);
	if (rc == 0 && !r.pipe_out)
		fprintf(stderr, "perf loops: to see it: perf loops report%s%s --stdio  (--format=tree|flat|loops|folded|json|pprof)\n",
			strcmp(r.output, "perf.data") ? " -i " : "", strcmp(r.output, "perf.data") ? r.output : "");
	return rc;
}
