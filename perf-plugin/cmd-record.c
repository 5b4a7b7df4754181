/* cmd-record.c - `perf loops record`: perf record with call graphs on.
 * Defaults: -e cpu-clock --call-graph=fp (frame pointers: cheap, and what
 * the report reads best); --call-graph dwarf|lbr and any other perf record
 * option pass through.
 *
 * Signals: nothing may return before perf record has written the file
 * (the shell would give the prompt back, or a script read a half-written
 * file), and perf-loops must end as perf record does, by a normal exit, so
 * that the rest of a shell command line runs as it would after perf record.
 * perf runs perf-loops as a child and dies itself on Ctrl-C, so perf record
 * runs in a process group of its own that is the terminal's foreground
 * while it runs: Ctrl-C and Ctrl-\ reach perf record and the workload, not
 * perf and perf-loops.  Ctrl-Z stops that group; perf-loops then hands the
 * terminal back and stops its own (perf's), so that the shell sees the job
 * stop, and on fg resumes perf record.  SIGINT and SIGTERM sent to
 * perf-loops itself are passed on to perf record. */
#include "report.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static volatile sig_atomic_t child_pid;

/* SIGINT or SIGTERM sent to perf-loops: perf record's to act on. */
static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

static void catch_signals(struct sigaction *old_int, struct sigaction *old_term)
{
	struct sigaction sa = { .sa_handler = forward_signal, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, old_int);
	sigaction(SIGTERM, &sa, old_term);
}

/* The terminal, if perf-loops runs in its foreground (not under `&`, not
 * without a terminal): its descriptor, else -1. */
static int foreground_tty(void)
{
	return isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp() ? STDIN_FILENO : -1;
}

/* Make PGRP the terminal's foreground (from a background group too). */
static void give_terminal(int tty, pid_t pgrp)
{
	sigset_t ttou, old;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(tty, pgrp);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* perf record's group was stopped (Ctrl-Z): stop perf's and ours as the
 * shell expects, and once continued (fg, bg) continue perf record, in
 * the foreground again if we are. */
static void stop_with_child(int tty, pid_t pid)
{
	if (tty >= 0)
		give_terminal(tty, getpgrp());
	kill(0, SIGTSTP);
	if (tty >= 0 && tcgetpgrp(tty) == getpgrp())
		give_terminal(tty, pid);
	kill(-pid, SIGCONT);
}

/* Wait for PID, whatever signals come meanwhile: its exit status as a
 * shell reports it (128 + N for a death by signal N), or -1. */
static int wait_child(pid_t pid, int tty)
{
	int st;
	for (;;) {
		if (waitpid(pid, &st, tty >= 0 ? WUNTRACED : 0) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "perf-loops: waitpid: %s\n", strerror(errno));
			return -1;
		}
		if (!WIFSTOPPED(st))
			break;
		stop_with_child(tty, pid);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Run perf record (ARGS) to its end: its status as wait_child gives it. */
static int run_perf_record(char **args)
{
	struct sigaction old_int, old_term;
	catch_signals(&old_int, &old_term);
	int tty = foreground_tty();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "perf-loops: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* perf record gets the dispositions perf-loops was started with */
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		if (tty >= 0) {
			setpgid(0, 0); /* both sides: whichever runs first */
			give_terminal(tty, getpid());
		}
		execvp("perf", args);
		fprintf(stderr, "perf-loops: cannot run perf: %s\n", strerror(errno));
		_exit(127);
	}
	child_pid = pid;
	if (tty >= 0) {
		setpgid(pid, pid);
		give_terminal(tty, pid);
	}
	int rc = wait_child(pid, tty);
	child_pid = 0;
	if (tty >= 0)
		give_terminal(tty, getpgrp());
	return rc;
}

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
	int rc = run_perf_record(args);
	free(args);
	if (rc < 0)
		return 1;
	if (rc == 0 && strcmp(output, "-"))
		fprintf(stderr, "perf loops: to see it: perf loops report%s%s --stdio  (--format=tree|flat|loops|folded|json|pprof)\n",
			strcmp(output, "perf.data") ? " -i " : "", strcmp(output, "perf.data") ? output : "");
	return rc;
}
