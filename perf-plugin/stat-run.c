/* stat-run.c - `perf loops stat`'s run: the plan's uprobes defined in
 * tracefs (group loopscope_PID), counted (stat-burst.c's perf_event_open
 * of them, or with --trace perf record writing every hit), and removed on
 * every way out (cmd-stat.c's header comment says why this way).  Also
 * the measurement of what one probe hit costs, per class of instruction,
 * and the overhead stated from it. */
#include "report.h"
#include "stat.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The flags as one-bit fields, for the filters (stat_filter). */
#define FLAG_FIELDS " cf=%flags:b1@0/64 pf=%flags:b1@2/64 zf=%flags:b1@6/64 sf=%flags:b1@7/64 of=%flags:b1@11/64"

static char tracefs[64];
static char group[64];
static volatile sig_atomic_t caught_signal;

/* Where uprobe_events is; mounts tracefs (as perf does) when it is not. */
static int find_tracefs(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[128];
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < 2; i++) {
			snprintf(path, sizeof path, "%s/uprobe_events", dirs[i]);
			if (access(path, F_OK) == 0) {
				snprintf(tracefs, sizeof tracefs, "%s", dirs[i]);
				if (access(path, W_OK) != 0) {
					fprintf(stderr, "perf loops stat: %s: %s: placing uprobes needs root\n", path,
					        strerror(errno));
					return -1;
				}
				return 0;
			}
		}
		if (pass == 0 && mount("nodev", dirs[0], "tracefs", 0, NULL) != 0 && errno != EBUSY)
			break;
	}
	if (geteuid() != 0)
		fprintf(stderr, "perf loops stat: placing uprobes needs root (no /sys/kernel/tracing/uprobe_events "
		        "reachable as uid %d)\n", (int)geteuid());
	else
		fprintf(stderr, "perf loops stat: no uprobe_events in tracefs: this kernel has no uprobes "
		        "(CONFIG_UPROBE_EVENTS)\n");
	return -1;
}

/* Appends LINE to uprobe_events: 0, or -1 with errno. */
static int write_events(const char *line)
{
	char path[128];
	snprintf(path, sizeof path, "%s/uprobe_events", tracefs);
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, line, strlen(line));
	int e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(line) ? 0 : -1;
}

/* Removes the events of group G (every one whose line names "G/"). */
static int remove_group(const char *g)
{
	char path[128], line[4096], cmd[4200];
	snprintf(path, sizeof path, "%s/uprobe_events", tracefs);
	int failed = 0;
	for (int attempt = 0; attempt < 50; attempt++) {
		FILE *f = fopen(path, "re");
		if (!f)
			return -1;
		failed = 0;
		size_t gl = strlen(g);
		while (fgets(line, sizeof line, f)) {
			/* "p:GROUP/EVENT PATH:0xOFF ..." */
			if (strncmp(line + 2, g, gl) != 0 || line[2 + gl] != '/')
				continue;
			char *sp = strchr(line, ' ');
			if (sp)
				*sp = 0;
			snprintf(cmd, sizeof cmd, "-:%s", line + 2);
			if (write_events(cmd) < 0)
				failed++; /* EBUSY: a perf still holds it; try again */
		}
		fclose(f);
		if (!failed)
			return 0;
		usleep(100 * 1000);
	}
	return failed ? -1 : 0;
}

/* The groups of perf-loops runs that died without removing theirs. */
static void remove_stale_groups(void)
{
	char path[128], line[4096];
	snprintf(path, sizeof path, "%s/uprobe_events", tracefs);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	char stale[16][64];
	int n = 0;
	while (fgets(line, sizeof line, f) && n < 16) {
		int pid;
		if (sscanf(line, "p:loopscope_%d/", &pid) == 1 && kill(pid, 0) < 0 && errno == ESRCH)
			snprintf(stale[n++], sizeof stale[0], "loopscope_%d", pid);
	}
	fclose(f);
	for (int i = 0; i < n; i++)
		remove_group(stale[i]);
}

int stat_caught_signal(void)
{
	return caught_signal;
}

/* Only notes it: waitpid returns EINTR and run_child passes it on. */
static void on_signal(int sig)
{
	caught_signal = sig;
}

/* Passes signal SIG on: SIGINT to perf stat (which then reports the counts
 * so far) and to what it runs; any other (SIGTERM, SIGHUP: sent to us
 * alone) as SIGTERM to what perf stat runs, so that no program is left
 * running, and SIGINT to perf stat. */
static void pass_on(pid_t perf, int sig)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)perf, (int)perf);
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	char *end;
	for (char *s = buf; *s; s = end) {
		long pid = strtol(s, &end, 10);
		if (end == s)
			break;
		if (pid > 0)
			kill((pid_t)pid, sig == SIGINT ? SIGINT : SIGTERM);
	}
	kill(perf, SIGINT);
}

static void catch_signals(void (*fn)(int))
{
	struct sigaction sa = { .sa_handler = fn };
	sigemptyset(&sa.sa_mask);
	int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		sigaction(sigs[i], &sa, NULL);
}

/* Defines one uprobe per distinct address: "at_OFFSET" in the group. */
static int define_events(const struct stat_plan *p, const char *binary)
{
	char line[8192];
	if (strpbrk(binary, " \t\n")) {
		fprintf(stderr, "perf loops stat: %s: a path with white space cannot be put in uprobe_events\n", binary);
		return -1;
	}
	for (size_t i = 0; i < p->nctr; i++) {
		bool first = true, flags = false;
		for (size_t j = 0; j < p->nctr; j++) {
			if (p->ctr[j].offset != p->ctr[i].offset)
				continue;
			first = first && j >= i;
			flags = flags || p->ctr[j].cond >= 0;
		}
		if (!first)
			continue;
		snprintf(line, sizeof line, "p:%s/at_%" PRIx64 " %s:0x%" PRIx64 "%s\n", group, p->ctr[i].offset, binary,
		         p->ctr[i].offset, flags ? FLAG_FIELDS : "");
		if (write_events(line) < 0) {
			fprintf(stderr, "perf loops stat: %s/uprobe_events: %s: cannot place a uprobe at %s:%#" PRIx64 "\n",
			        tracefs, strerror(errno), binary, p->ctr[i].addr);
			return -1;
		}
	}
	return 0;
}

static const char *self_exe(void)
{
	static char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	self[n > 0 ? n : 0] = 0;
	return self;
}

/* Every word its own copy: the caller frees them all (free_argv). */
static void push(char **v, size_t *n, const char *word)
{
	v[(*n)++] = pl_xstrdup(word);
}

static void free_argv(char **v)
{
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

/* --trace's perf record arguments: every hit written (-c 1) with its time
 * and thread, into a ring buffer large enough that a burst of hits is not
 * lost, no build-ids collected. */
static char **perf_record_argv(const struct stat_plan *p, const struct stat_opts *o, const char *out,
                               const char *status_file)
{
	size_t n = 0, cap = 24 + 4 * p->nctr + (size_t)o->ncommand;
	char **v = pl_xcalloc(cap, sizeof *v);
	const char *head[] = { "perf", "record", "-q", "-c", "1", "-m", "4096", "--no-buildid",
		               "--no-buildid-cache", "-o", out };
	for (size_t i = 0; i < sizeof head / sizeof *head; i++)
		push(v, &n, head[i]);
	for (size_t i = 0; i < p->nctr; i++) {
		char ev[160];
		snprintf(ev, sizeof ev, "%s:at_%" PRIx64, group, p->ctr[i].offset);
		push(v, &n, "-e");
		push(v, &n, ev);
		if (p->ctr[i].cond >= 0) {
			push(v, &n, "--filter");
			push(v, &n, stat_filter(p->ctr[i].cond, p->ctr[i].taken));
		}
	}
	if (o->pid > 0) {
		char pid[32], secs[32];
		snprintf(pid, sizeof pid, "%d", o->pid);
		snprintf(secs, sizeof secs, "%g", o->duration);
		const char *tail[] = { "-p", pid, "--", "sleep", secs };
		for (size_t i = 0; i < sizeof tail / sizeof *tail; i++)
			push(v, &n, tail[i]);
	} else {
		const char *tail[] = { "--", self_exe(), "__run", status_file };
		for (size_t i = 0; i < sizeof tail / sizeof *tail; i++)
			push(v, &n, tail[i]);
		for (int i = 0; i < o->ncommand; i++)
			push(v, &n, o->command[i]);
	}
	v[n] = NULL;
	return v;
}

/* Runs ARGV, passing on the signals we catch; its status as a shell's $?. */
static int run_child(char **argv)
{
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "perf loops stat: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "perf loops stat: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int st, passed = 0;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			st = 0x7f00;
			break;
		}
		if (caught_signal && !passed) {
			pass_on(pid, caught_signal);
			passed = 1;
		}
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --trace: perf record writes every hit, stat-trace.c reads them. */
static int trace(struct stat_plan *p, const char *binary, const struct stat_opts *o, const char *out)
{
	if (define_events(p, binary) < 0)
		return -1;
	char status_file[4200];
	snprintf(status_file, sizeof status_file, "%s.status", out);
	char **argv = perf_record_argv(p, o, out, status_file);
	double t0 = now();
	p->status = run_child(argv);
	p->seconds = now() - t0;
	FILE *sf = o->pid > 0 ? NULL : fopen(status_file, "re");
	if (sf) {
		/* the program's status (perf stat's is 0 whatever it did) */
		if (fscanf(sf, "%d", &p->status) != 1)
			p->status = 1;
		fclose(sf);
	}
	unlink(status_file);
	free_argv(argv);
	if (p->status < 0)
		return -1;
	return stat_trace_read(p, out);
}

long stat_event_id(const char *g, const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "%s/events/%s/%s/id", tracefs, g, name);
	FILE *f = fopen(path, "re");
	long id = -1;
	if (f && fscanf(f, "%ld", &id) != 1)
		id = -1;
	if (f)
		fclose(f);
	return id;
}

/* The cost of a hit per class of instruction (stat-calibrate.c), into
 * P->class_cost_us: a probe on each calibration twin, counted through
 * perf_event_open exactly as a run's probes are (stat-burst.c), in a child
 * of ours that times N calls of each against N of an unprobed function.
 * Run after the run's own events are removed (a probe's name, at_OFFSET,
 * could be one of theirs).  Not under perf stat, as before: the overhead
 * stated must be the mechanism's that ran. */
#define CALIBRATION_CALLS 10000

static int calibrate(struct stat_plan *p, const char *out)
{
	char result[4200], line[4400];
	const char *self = self_exe();
	uint64_t off[STAT_NCLASSES];
	if (!*self || stat_calibrate_offsets(off) < 0)
		return -1;
	struct stat_counter c[STAT_NCLASSES];
	for (int k = 0; k < STAT_NCLASSES; k++) {
		snprintf(line, sizeof line, "p:%s/at_%" PRIx64 " %s:0x%" PRIx64 "\n", group, off[k], self, off[k]);
		if (write_events(line) < 0)
			return -1;
		c[k] = (struct stat_counter){ .offset = off[k], .cond = -1 };
	}
	snprintf(result, sizeof result, "%s.cal", out);
	char calls[32];
	snprintf(calls, sizeof calls, "%d", CALIBRATION_CALLS);
	char *argv[] = { (char *)self, "__calibrate", calls, result, NULL };
	struct stat_plan cp = { .ctr = c, .nctr = STAT_NCLASSES, .capctr = STAT_NCLASSES };
	struct stat_opts co = { .command = argv, .ncommand = 4 };
	int rc = stat_burst_run(&cp, self, &co, group) == 0 && cp.status == 0 ? 0 : -1;
	FILE *f = rc == 0 ? fopen(result, "re") : NULL;
	for (int k = 0; f && k < STAT_NCLASSES; k++)
		if (c[k].value != CALIBRATION_CALLS || fscanf(f, "%lf", &p->class_cost_us[k]) != 1)
			p->class_cost_us[k] = -1; /* a twin's hits not all counted: no cost from it */
	if (f)
		fclose(f);
	unlink(result);
	return rc;
}

/* Each counter's class of instruction, from BINARY's bytes. */
static void classify(struct stat_plan *p, const char *binary)
{
	int fd = open(binary, O_RDONLY | O_CLOEXEC);
	for (size_t i = 0; i < p->nctr; i++)
		p->ctr[i].insn_class = fd < 0 ? STAT_CLASS_STEP : stat_insn_class(fd, p->ctr[i].offset);
	if (fd >= 0)
		close(fd);
}

/* The overhead: each counter's hits at its class's cost. */
static void overhead(struct stat_plan *p)
{
	double s = 0;
	uint64_t hits = 0;
	for (size_t i = 0; i < p->nctr; i++) {
		double c = p->class_cost_us[p->ctr[i].insn_class];
		if (c < 0)
			return;
		s += (double)p->ctr[i].value * (c > 0 ? c : 0) / 1e6;
		hits += p->ctr[i].value;
	}
	p->overhead_s = s;
	p->cost_us = hits ? s * 1e6 / (double)hits : p->class_cost_us[STAT_CLASS_STEP];
}

/* `perf-loops __run STATUSFILE COMMAND...`, what perf stat runs: perf
 * stat's own exit status is 0 whatever the program did, so this runs the
 * program, writes its status as a shell's $? to STATUSFILE, and passes on
 * the signals it gets (SIGINT from a terminal reaches the program anyway;
 * SIGTERM from pass_on does not). */
static volatile sig_atomic_t program_pid;

static void pass_to_program(int sig)
{
	if (program_pid > 0)
		kill(program_pid, sig);
}

int stat_run_child(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	catch_signals(pass_to_program);
	pid_t pid = fork();
	if (pid < 0)
		return 127;
	if (pid == 0) {
		catch_signals(SIG_DFL);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "perf loops stat: cannot run %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	program_pid = pid;
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 127;
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	FILE *f = fopen(argv[1], "w");
	if (f) {
		fprintf(f, "%d\n", rc);
		fclose(f);
	}
	return rc;
}

int stat_run(struct stat_plan *p, const char *binary, const struct stat_opts *o)
{
	if (find_tracefs() < 0)
		return -1;
	remove_stale_groups();
	snprintf(group, sizeof group, "loopscope_%d", (int)getpid());
	char out[] = "/tmp/perf-loops-stat-XXXXXX";
	int fd = mkstemp(out);
	if (fd < 0) {
		fprintf(stderr, "perf loops stat: %s: %s\n", out, strerror(errno));
		return -1;
	}
	close(fd);
	catch_signals(on_signal);
	p->mode = o->trace ? "trace" : o->burst_period_ms > 0 ? "burst" : "count";
	classify(p, binary);
	int rc = o->trace ? trace(p, binary, o, out)
	                  : define_events(p, binary) < 0 ? -1 : stat_burst_run(p, binary, o, group);
	if (rc == 0 && !caught_signal && remove_group(group) == 0 && calibrate(p, out) == 0)
		overhead(p);
	if (remove_group(group) < 0) {
		fprintf(stderr, "perf loops stat: could not remove uprobe group %s (perf probe -d '%s:*')\n", group, group);
		rc = -1;
	}
	unlink(out);
	catch_signals(SIG_DFL);
	if (caught_signal && rc == 0)
		fprintf(stderr, "perf loops stat: stopped by signal %d: counts up to then\n", (int)caught_signal);
	return rc;
}
