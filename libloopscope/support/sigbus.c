/* sigbus.c - a file mapping that shrinks under the analysis is an error for
 * that file, not the end of the process.
 *
 * libdwfl maps the binary and its debug file (libelf's ELF_C_READ_MMAP),
 * and the stages read code, DWARF and symbols straight from the mapping: a
 * file truncated meanwhile (`cp` over it, a rebuild writing in place) makes
 * the next read past its new end raise SIGBUS, which killed `loopscope
 * struct` (exit 135) and GDB with the extension.  Reading the files
 * instead of mapping them would double the memory of a vmlinux's 700 MB of
 * DWARF, so the fault is caught: the handler jumps to the faulting thread's
 * guard (the same guards that turn out-of-memory into an error, base.h),
 * and the landing site names the file.  Only kernel-made faults on a
 * thread inside a guard are ours; any other SIGBUS goes to the handler
 * installed before ours (GDB's, ASan's), or to the default action.
 *
 * SA_NODEFER: the signal stays unblocked in the handler, so the jump out of
 * it leaves the thread's signal mask as it was (setjmp does not save it).
 */
#include "support/base.h"

#include <signal.h>
#include <string.h>

static struct sigaction previous;
static pthread_once_t installed = PTHREAD_ONCE_INIT;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	if (si && si->si_code > 0 && ls_guard_bus(si->si_addr))
		return; /* not reached: ls_guard_bus jumped */
	if (previous.sa_flags & SA_SIGINFO) {
		if (previous.sa_sigaction) {
			previous.sa_sigaction(sig, si, uc);
			return;
		}
	} else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
		previous.sa_handler(sig);
		return;
	}
	/* The default action: returning re-runs the faulting read, which
	 * now kills the process as if no handler had been there. */
	signal(SIGBUS, SIG_DFL);
}

static void install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &previous) < 0)
		memset(&previous, 0, sizeof previous);
}

void ls_sigbus_catch(void)
{
	pthread_once(&installed, install);
}
