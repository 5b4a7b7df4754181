/* stat-calibrate.c - what one uprobe hit costs, measured on this machine,
 * per kind of probed instruction, and which kind each probed instruction
 * is.  `perf-loops __calibrate N FILE` (run by stat-run.c with a probe on
 * each of the probed twins below, counted as a run's probes are) times N
 * calls of each against N of an unprobed function and writes the
 * differences per call, in microseconds, one line per class, to FILE.
 *
 * Why classes: a uprobe's cost is not one number.  The kernel emulates
 * some instructions in the trap (jumps, calls, conditional branches, and
 * on newer kernels NOPs and pushes) and single-steps every other one out
 * of line, a second trap.  Measured here (6.18, a VM): ~1 us a hit on an
 * emulated NOP, ~10 us on a single-stepped instruction.  A loop's entry
 * edge often lands on a padding NOP and its header on arithmetic, so one
 * cost for all (the old calibration's, a `ret`) overstated a --burst run's
 * overhead (mostly entry hits) tenfold.  The classes are measured, not
 * assumed: on a kernel that single-steps NOPs, their cost says so. */
#include "stat.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The probed twins, one per class, each beginning with an instruction of
 * its class (the probe's place), and the unprobed baseline.  In assembly
 * so that the compiler chooses no other first instruction. */
__asm__(".text\n"
        ".p2align 4\n.globl stat_cal_plain\n.type stat_cal_plain,@function\n"
        "stat_cal_plain:\n\tmov %rdi,%rax\n\tret\n.size stat_cal_plain,.-stat_cal_plain\n"
        ".p2align 4\n.globl stat_cal_step\n.type stat_cal_step,@function\n"
        "stat_cal_step:\n\tmov %rdi,%rax\n\tret\n.size stat_cal_step,.-stat_cal_step\n"
        ".p2align 4\n.globl stat_cal_nop\n.type stat_cal_nop,@function\n"
        "stat_cal_nop:\n\tnopl 0x0(%rax)\n\tret\n.size stat_cal_nop,.-stat_cal_nop\n"
        ".p2align 4\n.globl stat_cal_branch\n.type stat_cal_branch,@function\n"
        "stat_cal_branch:\n\ttest %rdi,%rdi\n\tjmp 1f\n1:\tret\n.size stat_cal_branch,.-stat_cal_branch\n"
        ".p2align 4\n.globl stat_cal_push\n.type stat_cal_push,@function\n"
        "stat_cal_push:\n\tpush %rbp\n\tpop %rbp\n\tret\n.size stat_cal_push,.-stat_cal_push\n"
        ".p2align 4\n.globl stat_cal_endbr\n.type stat_cal_endbr,@function\n"
        "stat_cal_endbr:\n\t.byte 0xf3,0x0f,0x1e,0xfa\n\tret\n.size stat_cal_endbr,.-stat_cal_endbr\n");
void stat_cal_plain(long), stat_cal_step(long), stat_cal_nop(long), stat_cal_branch(long), stat_cal_push(long),
	stat_cal_endbr(long);

/* Per class: the twin, and how far into it the probe goes (the branch
 * twin's jmp follows a test). */
static const struct {
	void (*fn)(long);
	unsigned skip;
} twins[STAT_NCLASSES] = {
	[STAT_CLASS_STEP] = { stat_cal_step, 0 },     [STAT_CLASS_NOP] = { stat_cal_nop, 0 },
	[STAT_CLASS_BRANCH] = { stat_cal_branch, 3 }, [STAT_CLASS_PUSH] = { stat_cal_push, 0 },
	[STAT_CLASS_ENDBR] = { stat_cal_endbr, 0 },
};

const char *const stat_class_names[STAT_NCLASSES] = { "single-stepped", "nop", "branch", "push", "endbr64" };

/* The file offset of ADDR in this program, from the mapping that holds it. */
static int offset_of(uint64_t addr, uint64_t *off)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return -1;
	char line[4096];
	int rc = -1;
	while (rc < 0 && fgets(line, sizeof line, f)) {
		uint64_t lo, hi, pgoff;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64, &lo, &hi, &pgoff) == 3 && addr >= lo && addr < hi) {
			*off = addr - lo + pgoff;
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

int stat_calibrate_offsets(uint64_t off[STAT_NCLASSES])
{
	for (int c = 0; c < STAT_NCLASSES; c++)
		if (offset_of((uint64_t)(uintptr_t)twins[c].fn + twins[c].skip, &off[c]) < 0)
			return -1;
	return 0;
}

/* The class of the instruction at file offset OFFSET of the open file FD
 * (x86-64): what the kernel may emulate by its opcode, else single-stepped. */
int stat_insn_class(int fd, uint64_t offset)
{
	unsigned char b[8] = { 0 };
	if (pread(fd, b, sizeof b, (off_t)offset) < 4)
		return STAT_CLASS_STEP;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		return STAT_CLASS_ENDBR;
	size_t i = 0;
	while (i < 6 && (b[i] == 0x66 || b[i] == 0x2e)) /* the prefixes of the long NOPs gcc pads with */
		i++;
	if (b[i] == 0x90 || (b[i] == 0x0f && b[i + 1] == 0x1f))
		return STAT_CLASS_NOP;
	if (i > 0)
		return STAT_CLASS_STEP;
	if ((b[0] >= 0x70 && b[0] <= 0x7f) || b[0] == 0xeb || b[0] == 0xe9 || b[0] == 0xe8 ||
	    (b[0] == 0x0f && b[1] >= 0x80 && b[1] <= 0x8f))
		return STAT_CLASS_BRANCH;
	if ((b[0] >= 0x50 && b[0] <= 0x57) || (b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57))
		return STAT_CLASS_PUSH;
	return STAT_CLASS_STEP;
}

/* CPU time of this thread: a uprobe's trap and handler run in the thread's
 * context and are charged to it, and other processes on a loaded machine
 * are not. */
static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double time_calls(void (*fn)(long), long n)
{
	double t0 = seconds();
	for (long i = 0; i < n; i++)
		fn(i);
	return seconds() - t0;
}

int stat_calibrate_child(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long n = strtol(argv[1], NULL, 10);
	if (n <= 0)
		return 2;
	FILE *f = fopen(argv[2], "w");
	if (!f)
		return 1;
	for (int c = 0; c < STAT_NCLASSES; c++) {
		double plain = time_calls(stat_cal_plain, n);
		double probed = time_calls(twins[c].fn, n);
		fprintf(f, "%.3f\n", (probed - plain) / n * 1e6);
	}
	return fclose(f) == 0 ? 0 : 1;
}
