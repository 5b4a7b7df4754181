/* record-mode.c - how `perf loops record` records call chains, decided
 * from the binaries the command will run.
 *
 * The executable (found as execvp finds it; a #! script: its interpreter)
 * and the libraries the dynamic loader would map for it (`LOADER --list`,
 * which maps them without running the program) are opened with
 * libloopscope, and their unwind recipes tell, procedure by procedure,
 * whether the code keeps a frame pointer where it calls others.  Where
 * every binary does (>= 90% of the sampled procedures that make calls),
 * frame-pointer chains are complete and cheap: --call-graph=fp.  Otherwise
 * (Debian's libc alone keeps none) fp chains would skip or invent callers,
 * and a DWARF-style copy of the user stack is recorded instead, as small
 * as the program needs: the depth measured by the last recording of the
 * same executable (by build-id, in the loopscope cache directory), else an
 * estimate from the recipes (the deepest chain of frames through direct
 * calls from main), with room to spare.  After the recording, the samples
 * are unwound once to measure what this run needed; that is kept for the
 * next recording and said on stderr.
 *
 * Recording fp chains with a small stack copy on the side, to unwind only
 * the first frames of a library without frame pointers and stitch them to
 * the fp chain, is not possible with perf 6.1: its --call-graph=dwarf sets
 * exclude_callchain_user (no user fp chain then), and the stack-size term
 * of an event is ignored outside dwarf mode (tried: -e
 * 'cpu-clock/call-graph=fp,stack-size=4096/' records no STACK_USER).  fp
 * chains with the user registers (--user-regs) are, but the registers
 * alone do not give the skipped frame's return address.
 */
#include "record.h"

#include "loopscope.h"
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { MAX_BINARIES = 64, PROCS_SAMPLED = 300, MIN_STACK = 2048, MAX_STACK = 65528 };

/* ---- the binaries -------------------------------------------------------- */

static int executable(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

int pl_find_command(const char *cmd, char *buf, size_t len)
{
	if (strchr(cmd, '/')) {
		snprintf(buf, len, "%s", cmd);
		return executable(buf) ? 0 : -1;
	}
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		snprintf(buf, len, "%.*s/%s", (int)n, n ? p : ".", cmd);
		if (executable(buf))
			return 0;
		p += n + (colon ? 1 : 0);
	}
	return -1;
}

/* A #! script's interpreter, into BUF (the script itself otherwise). */
static void script_interpreter(char *buf, size_t len)
{
	FILE *f = fopen(buf, "r");
	char line[PATH_MAX];
	if (!f)
		return;
	if (fgets(line, sizeof line, f) && line[0] == '#' && line[1] == '!') {
		char *p = line + 2;
		p += strspn(p, " \t");
		size_t n = strcspn(p, " \t\n");
		p[n] = 0;
		char *arg = p + n + 1;
		/* #!/usr/bin/env python3: the command env runs */
		if (!strcmp(p, "/usr/bin/env") || !strcmp(p, "/bin/env")) {
			arg += strspn(arg, " \t");
			arg[strcspn(arg, " \t\n")] = 0;
			char found[PATH_MAX];
			if (*arg && pl_find_command(arg, found, sizeof found) == 0)
				snprintf(buf, len, "%s", found);
		} else if (executable(p)) {
			snprintf(buf, len, "%s", p);
		}
	}
	fclose(f);
}

/* The program interpreter (PT_INTERP) of ELF file PATH, into BUF; -1 if
 * none (static, not ELF). */
static int interpreter_of(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t n;
	if (e && elf_getphdrnum(e, &n) == 0) {
		for (size_t i = 0; i < n && rc < 0; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_INTERP || ph.p_filesz >= len || ph.p_filesz < 2)
				continue;
			if (pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz) {
				buf[ph.p_filesz - 1] = 0;
				rc = 0;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

/* The libraries the loader maps for EXE: `LOADER --list EXE` ("libc.so.6
 * => /lib/x86_64-linux-gnu/libc.so.6 (0x...)"), the loader itself left
 * out.  How many were added to PATHS. */
static size_t libraries(const char *exe, char paths[][PATH_MAX], size_t cap)
{
	char loader[PATH_MAX];
	if (interpreter_of(exe, loader, sizeof loader) < 0 || !executable(loader))
		return 0;
	int fds[2];
	if (pipe(fds) < 0)
		return 0;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 2);
		close(fds[0]);
		execl(loader, loader, "--list", exe, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	size_t n = 0;
	FILE *f = pid > 0 ? fdopen(fds[0], "r") : NULL;
	char line[PATH_MAX + 128];
	while (f && fgets(line, sizeof line, f)) {
		char *arrow = strstr(line, "=> "), *end;
		if (!arrow || arrow[3] != '/' || !(end = strstr(arrow + 3, " (")) || n == cap)
			continue;
		*end = 0;
		if (strcmp(arrow + 3, loader) != 0)
			snprintf(paths[n++], PATH_MAX, "%s", arrow + 3);
	}
	if (f)
		fclose(f);
	else
		close(fds[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return n;
}

/* ---- what the recipes say of a binary ---------------------------------------- */

struct survey {
	size_t procs, callers, callers_fp;
	uint64_t estimate;     /* the executable: deepest frame chain from main, bytes */
};

/* The C runtime's start-up code the linker adds to every program (crt1,
 * crti, crtbegin): how the program itself was compiled is the question. */
static int toolchain_proc(const char *name)
{
	static const char *const names[] = { "_start", "_init", "_fini", "deregister_tm_clones",
	                                     "register_tm_clones", "__do_global_dtors_aux", "frame_dummy",
	                                     "__libc_csu_init", "__libc_csu_fini", "_dl_relocate_static_pie" };
	for (size_t i = 0; name && i < sizeof names / sizeof *names; i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}

static size_t proc_scopes(const ls_module *m, const ls_scope ***out)
{
	size_t n = 0, cap = 0;
	const ls_scope **v = NULL;
	const ls_scope *root = ls_module_root(m);
	for (const ls_scope *f = root ? ls_scope_first_child(root) : NULL; f; f = ls_scope_next_sibling(f))
		for (const ls_scope *p = ls_scope_first_child(f); p; p = ls_scope_next_sibling(p)) {
			const char *name = ls_scope_name(p);
			size_t l = name ? strlen(name) : 0;
			if (ls_scope_kind_of(p) != LS_SCOPE_PROC || (l > 4 && !strcmp(name + l - 4, "@plt")) ||
			    toolchain_proc(name))
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 256;
				v = pl_xrealloc(v, cap * sizeof *v);
			}
			v[n++] = p;
		}
	*out = v;
	return n;
}

/* The deepest chain of frames from ENTRY through direct calls (bytes): a
 * depth-first search, each procedure once (recursion counts once). */
struct depth_ctx {
	const ls_module *m;
	uint64_t *seen;        /* entries visited: a small open hash */
	size_t nseen;
	int calls;
};

static int visit(struct depth_ctx *c, uint64_t entry)
{
	size_t i = (size_t)(entry * 0x9e3779b97f4a7c15ULL >> 40) & (c->nseen - 1);
	for (size_t k = 0; k < c->nseen; k++, i = (i + 1) & (c->nseen - 1)) {
		if (c->seen[i] == entry)
			return 0;
		if (!c->seen[i]) {
			c->seen[i] = entry;
			return 1;
		}
	}
	return 0;
}

static uint64_t deepest(struct depth_ctx *c, uint64_t entry, int level)
{
	ls_unwind_proc_info info;
	ls_error err;
	if (level > 64 || c->calls++ > 20000 || !visit(c, entry) || ls_unwind_proc(c->m, entry, &info, &err) < 0)
		return 0;
	uint64_t targets[512], below = 0;
	size_t n = ls_unwind_proc_targets(c->m, entry, 0, targets, 512);
	for (size_t i = 0; i < n && i < 512; i++) {
		uint64_t d = deepest(c, targets[i], level + 1);
		if (d > below)
			below = d;
	}
	return info.frame_size + below;
}

static void survey_binary(const ls_module *m, int is_exe, struct survey *s)
{
	const ls_scope **procs;
	size_t n = proc_scopes(m, &procs);
	size_t step = n > PROCS_SAMPLED ? n / PROCS_SAMPLED : 1;
	for (size_t i = 0; i < n; i += step) {
		ls_unwind_proc_info info;
		ls_error err;
		if (ls_unwind_proc(m, ls_scope_low(procs[i]), &info, &err) < 0)
			continue;
		s->procs++;
		if (info.ncalls) {
			s->callers++;
			s->callers_fp += info.keeps_frame_pointer != 0;
		}
	}
	free(procs);
	uint64_t main_addr, size;
	if (is_exe && ls_module_symbol(m, "main", &main_addr, &size) == 0) {
		struct depth_ctx c = { m, pl_xcalloc(1 << 14, sizeof(uint64_t)), 1 << 14, 0 };
		s->estimate = deepest(&c, main_addr, 0);
		free(c.seen);
	}
}

/* ---- the stack depth measured by earlier recordings ---------------------------- */

static int history_path(const char *build_id, char *buf, size_t len)
{
	ls_options opt;
	ls_options_init(&opt);
	char dir[PATH_MAX];
	if (!build_id || !*build_id || ls_cache_dir(&opt, dir, sizeof dir) < 0)
		return -1;
	snprintf(buf, len, "%s/stack-depth-%s", dir, build_id);
	return 0;
}

static uint64_t history_depth(const char *build_id)
{
	char path[PATH_MAX + 128];
	unsigned long long depth = 0;
	FILE *f = history_path(build_id, path, sizeof path) == 0 ? fopen(path, "r") : NULL;
	if (f) {
		if (fscanf(f, "%llu", &depth) != 1)
			depth = 0;
		fclose(f);
	}
	return depth;
}

static void keep_history(const char *build_id, uint64_t depth)
{
	char path[PATH_MAX + 128], tmp[PATH_MAX + 160];
	if (history_path(build_id, path, sizeof path) < 0)
		return;
	snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%llu\n", (unsigned long long)depth);
	if (fclose(f) == 0)
		rename(tmp, path);
	else
		unlink(tmp);
}

static uint64_t round_stack(uint64_t bytes)
{
	bytes = (bytes + 511) & ~(uint64_t)511;
	return bytes < MIN_STACK ? MIN_STACK : bytes > MAX_STACK ? MAX_STACK : bytes;
}

/* ---- the plan -------------------------------------------------------------------- */

static void quiet_warning(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

static ls_module *open_quietly(const char *path)
{
	ls_options opt;
	ls_options_init(&opt);
	opt.warn = quiet_warning;
	ls_error err;
	return ls_module_open(path, &opt, &err);
}

/* Appends ", NAME" to BUF. */
static void add_name(char *buf, size_t len, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t used = strlen(buf);
	if (used < len)
		snprintf(buf + used, len - used, "%s%s", used ? ", " : "", base ? base + 1 : path);
}

int pl_record_choose(const char *command, pl_record_plan *plan)
{
	memset(plan, 0, sizeof *plan);
	static char paths[MAX_BINARIES][PATH_MAX];
	if (pl_find_command(command, paths[0], sizeof paths[0]) < 0)
		return -1;
	script_interpreter(paths[0], sizeof paths[0]);
	size_t n = 1 + libraries(paths[0], paths + 1, MAX_BINARIES - 1);
	char without[512] = "", with[512] = "";
	int nwithout = 0;
	struct survey exe = { 0 };
	for (size_t i = 0; i < n; i++) {
		ls_module *m = open_quietly(paths[i]);
		if (!m)
			continue;
		struct survey s = { 0 };
		survey_binary(m, i == 0, &s);
		if (i == 0) {
			exe = s;
			snprintf(plan->build_id, sizeof plan->build_id, "%s", ls_module_build_id(m) ? ls_module_build_id(m) : "");
		}
		if (s.callers && s.callers_fp * 10 < s.callers * 9) {
			add_name(without, sizeof without, paths[i]);
			nwithout++;
		}
		else if (s.callers)
			add_name(with, sizeof with, paths[i]);
		ls_module_close(m);
	}
	if (!without[0]) {
		snprintf(plan->callgraph, sizeof plan->callgraph, "--call-graph=fp");
		snprintf(plan->why, sizeof plan->why, "--call-graph=fp: the code keeps frame pointers (%s)", with);
		return 0;
	}
	uint64_t measured = history_depth(plan->build_id);
	plan->dwarf = 1;
	plan->stack_size = round_stack(measured ? measured * 5 / 4 + 512 : 2 * exe.estimate + 4096);
	snprintf(plan->callgraph, sizeof plan->callgraph, "--call-graph=dwarf,%llu", (unsigned long long)plan->stack_size);
	snprintf(plan->why, sizeof plan->why,
	         "%s: %s %s no frame pointers, so fp chains would skip callers; %llu bytes of stack a sample, %s",
	         plan->callgraph, without, nwithout > 1 ? "keep" : "keeps", (unsigned long long)plan->stack_size,
	         measured ? "from the depth the last recording of this program measured" :
	                    "estimated from the program's frames (the recording measures the real depth)");
	return 0;
}

/* After the recording: unwind its samples once, say what they needed,
 * keep the depth for the next recording of the program. */
void pl_record_measure(const pl_record_plan *plan, const char *data)
{
	pl_report_options o;
	char *argv[] = { "report", "-q", "--stdio", "-i", (char *)data, NULL };
	if (pl_report_options_parse(5, argv, &o) >= 0)
		return;
	pl_report rep;
	if (pl_report_open(&o, &rep) != 0) {
		pl_report_options_free(&o);
		return;
	}
	const pl_unwind_stats *st = pl_unwind_stats_of(rep.attrib);
	if (st && st->samples) {
		uint64_t depth = st->depth_max;
		double cut = 100.0 * st->cut / st->samples;
		/* stacks that ran off the copy were deeper than it: grow it */
		if (cut >= 1.0 && depth < 2 * plan->stack_size)
			depth = 2 * plan->stack_size;
		fprintf(stderr, "perf loops: %.1f%% of %llu samples unwound to their first frame, reading up to %llu bytes of "
		        "the %llu-byte stack copy (99%% within %llu); %.1f%% ran off its end%s\n",
		        100.0 * st->complete / st->samples, (unsigned long long)st->samples,
		        (unsigned long long)st->depth_max, (unsigned long long)plan->stack_size,
		        (unsigned long long)st->depth_p99, cut,
		        plan->build_id[0] ? "; the next recording of this program sizes its copy from this" : "");
		/* the deepest run seen lately: a sample at start-up can go
		 * deeper than the whole steady state */
		uint64_t before = history_depth(plan->build_id);
		if (before * 3 / 4 > depth)
			depth = before * 3 / 4;
		if (plan->build_id[0] && depth)
			keep_history(plan->build_id, depth);
	}
	pl_report_close(&rep);
	pl_report_options_free(&o);
}
