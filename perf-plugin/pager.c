/* pager.c - the report on a terminal goes through a pager, as perf and git
 * do it: $PERF_PAGER, else $PAGER, else less; LESS=FRSX unless set (quit
 * if one screen, keep colours, chop long lines, keep the screen); "cat" or
 * an empty value means none; --no-pager too.  Colour (--stdio-color=auto)
 * follows whether stdout was a terminal.  A reader that goes away ends the
 * program quietly (pl_quiet_sigpipe). */
#include "report.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t pager_pid;

static void wait_for_pager(void)
{
	fflush(stdout);
	fclose(stdout);
	if (pager_pid > 0)
		while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
			;
}

int pl_color_wanted(const pl_report_options *o, FILE *out)
{
	if (o->color >= 0)
		return o->color;
	const char *term = getenv("TERM");
	return isatty(fileno(out)) && !(term && !strcmp(term, "dumb"));
}

int pl_terminal_width(FILE *out)
{
	if (!isatty(fileno(out)))
		return 0;
	const char *cols = getenv("COLUMNS");
	if (cols && atoi(cols) > 0)
		return atoi(cols);
	struct winsize ws;
	if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

void pl_pager_start(const pl_report_options *o)
{
	if (o->no_pager || !isatty(1))
		return;
	const char *pager = getenv("PERF_PAGER");
	if (!pager)
		pager = getenv("PAGER");
	if (!pager)
		pager = "less";
	if (!*pager || !strcmp(pager, "cat"))
		return;
	int fd[2];
	if (pipe(fd) < 0)
		return;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return;
	}
	if (pid == 0) {
		dup2(fd[0], 0);
		close(fd[0]);
		close(fd[1]);
		setenv("LESS", "FRSX", 0);
		execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		_exit(127);
	}
	dup2(fd[1], 1);
	close(fd[0]);
	close(fd[1]);
	pager_pid = pid;
	atexit(wait_for_pager);
}

/* A reader that stops reading (`| head`, q in the pager) ends the report
 * quietly.  Not by the signal itself: perf runs perf-loops as a child and
 * takes a child killed by a signal for a failure to run it ("FATAL: unable
 * to run 'perf-loops'", exit 128).  So the handler exits as a shell reports
 * a SIGPIPE death (141), or 0 once the pager the user quit has ended. */
static void on_sigpipe(int sig)
{
	(void)sig;
	if (pager_pid > 0) {
		close(STDOUT_FILENO);
		while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	_exit(128 + SIGPIPE);
}

void pl_quiet_sigpipe(void)
{
	struct sigaction sa = { .sa_handler = on_sigpipe };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, NULL);
}
