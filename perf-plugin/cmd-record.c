/* cmd-record.c - `perf loops record`: perf record with call graphs on.
 * Defaults: -e cpu-clock --call-graph=fp (frame pointers: cheap, and what
 * the report reads best); --call-graph dwarf|lbr and any other perf record
 * option pass through. */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int cmd_record(int argc, char **argv)
{
	int has_event = 0, has_cg = 0;
	const char *output = "perf.data";
	int i;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			puts("usage: perf loops record [perf record options] -- COMMAND [ARGS...]\n"
			     "  runs perf record -e cpu-clock --call-graph=fp (unless -e/--call-graph/-g are given)\n"
			     "  then: perf loops report -i perf.data");
			return 0;
		}
		if (!strcmp(a, "-e") || !strncmp(a, "--event", 7) || (!strncmp(a, "-e", 2) && a[2]))
			has_event = 1;
		if (!strcmp(a, "-g") || !strncmp(a, "--call-graph", 12))
			has_cg = 1;
		if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc)
			output = argv[i + 1];
		else if (!strncmp(a, "--output=", 9))
			output = a + 9;
		else if (!strncmp(a, "-o", 2) && a[2])
			output = a + 2;
	}
	char **args = pl_xcalloc(argc + 8, sizeof *args);
	int n = 0;
	args[n++] = "perf";
	args[n++] = "record";
	if (!has_event) {
		args[n++] = "-e";
		args[n++] = "cpu-clock";
	}
	if (!has_cg)
		args[n++] = "--call-graph=fp";
	for (int k = 1; k < argc; k++)
		args[n++] = argv[k];
	args[n] = NULL;
	if (i >= argc)
		fprintf(stderr, "perf-loops: no command given (perf loops record [options] -- COMMAND); passing the options to perf record\n");
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "perf-loops: fork: %s\n", strerror(errno));
		free(args);
		return 1;
	}
	if (pid == 0) {
		execvp("perf", args);
		fprintf(stderr, "perf-loops: cannot run perf: %s\n", strerror(errno));
		_exit(127);
	}
	free(args);
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "perf-loops: waitpid: %s\n", strerror(errno));
			return 1;
		}
	}
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (rc == 0 && strcmp(output, "-"))
		fprintf(stderr, "perf loops: to see it: perf loops report%s%s --stdio  (--format=tree|flat|loops|folded|json|pprof)\n",
			strcmp(output, "perf.data") ? " -i " : "", strcmp(output, "perf.data") ? output : "");
	return rc;
}
