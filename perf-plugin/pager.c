/* pager.c - the report on a terminal goes through a pager, as perf and git
 * do it: $PERF_PAGER, else $PAGER, else less; LESS=FRSX unless set (quit
 * if one screen, keep colours, chop long lines, keep the screen); "cat" or
 * an empty value means none; --no-pager too.  Colour (--stdio-color=auto)
 * follows whether stdout was a terminal. */
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
	/* the report ends when the pager does: a write to a closed pager is
	 * not an error worth a message */
	signal(SIGPIPE, SIG_DFL);
	atexit(wait_for_pager);
}
