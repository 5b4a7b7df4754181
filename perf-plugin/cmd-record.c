/* cmd-record.c - `perf loops record`: perf record with call chains that
 * are complete for the code the command runs.  Defaults: -e cpu-clock, and
 * call chains chosen from the binaries (record-mode.c): --call-graph=fp
 * where the code keeps frame pointers, else a DWARF-style stack copy sized
 * from the program's measured stack depth.  The choice and why go to
 * stderr.  The user's own -g/--call-graph, and any other perf record
 * option, pass through untouched.
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
#include "record.h"
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
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
/* --off-cpu needs the scheduler's tracepoint: tracefs, and the right to
 * trace it (root, or perf_event_paranoid -1).  0, or -1 said on stderr. */
static int off_cpu_possible(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing/events/sched/sched_switch",
	                                    "/sys/kernel/debug/tracing/events/sched/sched_switch" };
	int found = 0;
	for (size_t i = 0; i < 2 && !found; i++)
		found = access(dirs[i], F_OK) == 0;
	int paranoid = 2;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = 2;
		fclose(f);
	}
	if (geteuid() != 0 && paranoid > -1) {
		fprintf(stderr, "perf-loops: --off-cpu traces the scheduler (sched:sched_switch): run as root, or with "
			"kernel.perf_event_paranoid=-1 (it is %d)\n", paranoid);
		return -1;
	}
	if (!found) {
		fprintf(stderr, "perf-loops: --off-cpu needs the sched:sched_switch tracepoint, and tracefs is not "
			"mounted or readable (/sys/kernel/tracing: mount -t tracefs nodev /sys/kernel/tracing, as root)\n");
		return -1;
	}
	return 0;
}

/* Takes --off-cpu out of ARGV (before the command); was it there? */
static int take_off_cpu(int *argc, char **argv)
{
	for (int i = 1; i < *argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--off-cpu")) {
			memmove(argv + i, argv + i + 1, (size_t)(*argc - i) * sizeof *argv);
			(*argc)--;
			return 1;
		}
	return 0;
}

int pl_record_hints = 1;

int cmd_record(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			puts("usage: perf loops record [perf record options] -- COMMAND [ARGS...]\n"
			     "  runs perf record -e cpu-clock with call chains chosen from COMMAND's binaries:\n"
			     "  --call-graph=fp where the code keeps frame pointers, else --call-graph=dwarf with a\n"
			     "  stack copy sized from the program's measured stack depth (-e, -g or --call-graph given:\n"
			     "  as given)\n"
			     "  --off-cpu: also where and why threads wait: sched:sched_switch with call chains and\n"
			     "  context-switch records (--switch-events); perf loops report --wall shows on-CPU,\n"
			     "  off-CPU (sleep, io, futex, preempt) and wall time per calling context and loop (root)\n"
			     "  then: perf loops report -i perf.data");
			return 0;
		}
	int off_cpu = take_off_cpu(&argc, argv);
	if (off_cpu && off_cpu_possible() < 0)
		return 1;
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
	char **args = pl_xcalloc(argc + 12, sizeof *args);
	int n = 0;
	args[n++] = "perf";
	args[n++] = "record";
	if (!r.has_event) {
		args[n++] = "-e";
		args[n++] = "cpu-clock";
	}
	if (off_cpu) {
		/* every switch (a tracepoint's period is 1), and the returns */
		args[n++] = "-e";
		args[n++] = "sched:sched_switch";
		args[n++] = "--switch-events";
	}
	if (!r.has_cg)
		args[n++] = plan.callgraph;
	for (int k = 1; k < argc; k++)
		args[n++] = argv[k];
	args[n] = NULL;
	int rc = run_perf_record(args);
	free(args);
	if (rc < 0)
		return 1;
	if (rc == 0 && planned && plan.dwarf && !r.pipe_out)
		pl_record_measure(&plan, r.output);
	if (rc == 0 && !r.pipe_out && off_cpu && pl_record_hints)
		fprintf(stderr, "perf loops: on and off the CPU: perf loops report%s%s --wall\n",
			strcmp(r.output, "perf.data") ? " -i " : "", strcmp(r.output, "perf.data") ? r.output : "");
	if (rc == 0 && !r.pipe_out && pl_record_hints)
		fprintf(stderr, "perf loops: to see it: perf loops report%s%s --stdio  (--format=tree|flat|loops|folded|json|pprof)\n",
			strcmp(r.output, "perf.data") ? " -i " : "", strcmp(r.output, "perf.data") ? r.output : "");
	return rc;
}
