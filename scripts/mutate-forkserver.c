/* mutate-forkserver.c - a fork server for scripts/mutate-campaign: loaded
 * with LD_PRELOAD into the sanitizer build's `loopscope` or `perf-loops`, it
 * lets the program start once (dynamic linking, ASan's and libdw's set-up)
 * and then forks one child per input, each child calling the program's own
 * main() with that input's arguments.  What each child runs is exactly the
 * command-line program: same binary, same main, same options; only the
 * process start is shared.
 *
 * Not part of the build or of CI; mutate-campaign compiles it with
 *   cc -O2 -shared -fPIC -o mutate-forkserver.so mutate-forkserver.c -ldl
 *
 * Without LS_FORKSERVER in the environment the program runs as usual.  With
 * LS_FORKSERVER=IN,OUT (two inherited file descriptors), main() is replaced
 * by a loop over requests read from IN, each answered on OUT:
 *
 *   request: u32 length, then NUL-terminated strings: the file that gets the
 *            child's stderr, "leak" or "noleak", the timeout in milliseconds,
 *            then the arguments after argv[0]
 *   answer:  i32 how (0 exited, 1 killed by a signal, 2 timed out and
 *            killed), i32 exit status or signal, f64 seconds (wall clock),
 *            f64 seconds of CPU (user and system, all threads)
 *
 * The child's stdout and stdin are /dev/null.  LeakSanitizer checks at exit
 * (the program runs with detect_leaks=1); a "noleak" child ends with
 * _exit() after flushing stdio, so the costly leak scan is skipped for it.
 * The server is single-threaded when it forks; a child past its timeout is
 * killed with SIGKILL (its process group: the server makes each child a
 * group leader).  The timeout is CPU time (RLIMIT_CPU, which ends the child
 * with SIGXCPU): the campaign runs at nice 19 on a shared machine, where a
 * run can wait for a core longer than it runs.  A run that blocks uses no
 * CPU: for it, the wall-clock limit is six times the timeout.
 *
 * LS_FORKSERVER_KALLSYMS=FILE (perf-loops): before serving, the server
 * enters a private mount namespace and binds FILE over /proc/kallsyms.  A
 * mutated sample often lands in the kernel, and each such report would read
 * and parse all of /proc/kallsyms (120k lines, a third of perf-loops' time in
 * the campaign) though that file is not the input under test; FILE, an
 * excerpt of it, takes the same parser.  Needs root; without it the real
 * file is read.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_REQUEST (1 << 16)
#define MAX_ARGS 64

typedef int (*main_fn)(int, char **, char **);
static main_fn real_main;
static int fs_in = -1, fs_out = -1;

static int read_all(int fd, void *buf, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t n)
{
	for (size_t put = 0; put < n;) {
		ssize_t r = write(fd, (const char *)buf + put, n - put);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		put += (size_t)r;
	}
	return 0;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* In the child: the program's main with ARGV, its stderr to ERRFILE. */
static void run_child(char *argv0, char *errfile, int leak, int timeout_ms, int nargs, char **args,
		      char **envp)
{
	int null = open("/dev/null", O_RDWR);
	int err = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (null < 0 || err < 0)
		_exit(125);
	/* A last argument "<FILE" is the run's stdin (loopscope decode's log). */
	int in = null;
	if (nargs > 0 && args[nargs - 1][0] == '<') {
		in = open(args[nargs - 1] + 1, O_RDONLY);
		if (in < 0)
			_exit(125);
		nargs--;
	}
	dup2(in, 0);
	if (in != null)
		close(in);
	dup2(null, 1);
	dup2(err, 2);
	close(null);
	close(err);
	close(fs_in);
	close(fs_out);
	signal(SIGPIPE, SIG_DFL);
	struct rlimit cpu = { .rlim_cur = (rlim_t)(timeout_ms + 999) / 1000, .rlim_max = RLIM_INFINITY };
	setrlimit(RLIMIT_CPU, &cpu);
	char *argv[MAX_ARGS + 2];
	argv[0] = argv0;
	for (int i = 0; i < nargs; i++)
		argv[i + 1] = args[i];
	argv[nargs + 1] = NULL;
	int rc = real_main(nargs + 1, argv, envp);
	if (leak)
		exit(rc);
	fflush(NULL);
	_exit(rc);
}

/* Waits for PID at most TIMEOUT_MS of wall-clock time; returns the answer's
 * how and code, and the CPU seconds the child used. */
static void wait_child(pid_t pid, int timeout_ms, int32_t *how, int32_t *code, double *cpu)
{
	int status = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd >= 0) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		int r;
		do
			r = poll(&p, 1, timeout_ms);
		while (r < 0 && errno == EINTR);
		close(pfd);
		if (r == 0) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			wait4(pid, &status, 0, &ru);
			*how = 2;
			*code = 0;
			goto cpu;
		}
	} else {
		/* no pidfd: poll waitpid every millisecond */
		double end = now() + timeout_ms / 1000.0;
		while (wait4(pid, &status, WNOHANG, &ru) == 0) {
			if (now() > end) {
				kill(-pid, SIGKILL);
				kill(pid, SIGKILL);
				wait4(pid, &status, 0, &ru);
				*how = 2;
				*code = 0;
				goto cpu;
			}
			usleep(1000);
		}
		goto done;
	}
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
done:
	if (WIFSIGNALED(status)) {
		*how = 1;
		*code = WTERMSIG(status);
	} else {
		*how = 0;
		*code = WEXITSTATUS(status);
	}
cpu:
	*cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int serve(char *argv0, char **envp)
{
	static char req[MAX_REQUEST + 1];
	for (;;) {
		uint32_t len;
		if (read_all(fs_in, &len, sizeof len) < 0)
			return 0; /* the driver closed the pipe: done */
		if (len == 0 || len > MAX_REQUEST || read_all(fs_in, req, len) < 0)
			return 3;
		req[len] = 0;
		char *fields[MAX_ARGS + 3];
		int n = 0;
		for (char *p = req; p < req + len && n < MAX_ARGS + 3; p += strlen(p) + 1)
			fields[n++] = p;
		if (n < 3)
			return 3;
		int leak = strcmp(fields[1], "leak") == 0;
		int timeout_ms = atoi(fields[2]);
		double start = now();
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0)
			return 4;
		if (pid == 0) {
			setpgid(0, 0);
			run_child(argv0, fields[0], leak, timeout_ms, n - 3, fields + 3, envp);
		}
		setpgid(pid, pid);
		struct { int32_t how, code; double secs, cpu; } ans;
		wait_child(pid, 6 * timeout_ms, &ans.how, &ans.code, &ans.cpu);
		ans.secs = now() - start;
		if (write_all(fs_out, &ans, sizeof ans) < 0)
			return 0;
	}
}

static int fs_main(int argc, char **argv, char **envp)
{
	const char *fds = getenv("LS_FORKSERVER");
	if (!fds || sscanf(fds, "%d,%d", &fs_in, &fs_out) != 2)
		return real_main(argc, argv, envp);
	unsetenv("LS_FORKSERVER");
	const char *kallsyms = getenv("LS_FORKSERVER_KALLSYMS");
	if (kallsyms && (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	                 mount(kallsyms, "/proc/kallsyms", NULL, MS_BIND, NULL) < 0))
		fprintf(stderr, "mutate-forkserver: cannot bind %s over /proc/kallsyms (%s): the whole file is read\n",
			kallsyms, strerror(errno));
	unsetenv("LS_FORKSERVER_KALLSYMS");
	/* One leak check here, where nothing has leaked yet, maps the pages
	 * LeakSanitizer reads: the checks in the children then fault far fewer
	 * of them in (a check costs about half as much). */
	int (*leak_check)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "__lsan_do_recoverable_leak_check");
	if (leak_check)
		leak_check();
	return serve(argv[0], envp);
}

/* The program's entry: glibc's __libc_start_main gets fs_main in place of
 * main, so constructors and the sanitizers' set-up have run when it serves. */
int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end)
{
	typeof(&__libc_start_main) next = (typeof(&__libc_start_main))dlsym(RTLD_NEXT, "__libc_start_main");
	real_main = main;
	return next(fs_main, argc, argv, init, fini, rtld_fini, stack_end);
}
