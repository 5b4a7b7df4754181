/* unit-errors.c - the status codes of the public API, each from the input
 * that must produce it, on a fixture compiled now with gcc (loops.c -O2),
 * and the scope tree's invariant checker (check.c) on its real tree.
 *
 *   LS_ERR_NOT_FOUND  a file that does not exist (ls_module_open and
 *                     ls_file_open), a function the module does not have;
 *   LS_ERR_DWARF      .debug_info overwritten with 0xff: the open succeeds
 *                     without DWARF, and ERR says why (a good file: LS_OK);
 *   LS_ERR_NOMEM      every allocation of ls_module_open, ls_write_structure
 *                     and ls_cache_list made to fail in turn (ls_oom_fail_at):
 *                     each fails with LS_ERR_NOMEM, none aborts, and the
 *                     first allocation past the last one succeeds.
 *
 * Prints TAP. */
#include "elf/module.h"
#include "structure/check.h"
#include "structure/scope.h"
#include "support/base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"

static char tmpdir[256];

static char *tmp(const char *name)
{
	static char bufs[4][512];
	static int i;
	char *b = bufs[i++ % 4];
	snprintf(b, sizeof bufs[0], "%s/%s", tmpdir, name);
	return b;
}

static void count_warning(void *ctx, const char *msg)
{
	(void)msg;
	(*(int *)ctx)++;
}

static ls_options options(int jobs, int *warnings)
{
	ls_options opt;
	ls_options_init(&opt);
	opt.use_cache = 0;
	opt.progress = 0;
	opt.jobs = jobs;
	opt.warn = count_warning;
	opt.warn_ctx = warnings;
	return opt;
}

/* Overwrites section NAME of PATH with 0xff bytes; 0 on success. */
static int smash_section(const char *path, const char *name)
{
	int fd = open(path, O_RDWR);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx;
	uint64_t off = 0, size = 0;
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0)
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
			GElf_Shdr sh;
			const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
			if (n && !strcmp(n, name)) {
				off = sh.sh_offset;
				size = sh.sh_size;
			}
		}
	if (elf)
		elf_end(elf);
	int rc = -1;
	if (size) {
		char *ff = malloc(size);
		memset(ff, 0xff, size);
		rc = pwrite(fd, ff, size, (off_t)off) == (ssize_t)size ? 0 : -1;
		free(ff);
	}
	close(fd);
	return rc;
}

static void check_not_found(const char *bin)
{
	ls_error err;
	ls_module *m = ls_module_open(tmp("no-such-file"), NULL, &err);
	ok(!m && err.code == LS_ERR_NOT_FOUND && strstr(err.message, "no-such-file"),
	   "ls_module_open of a missing file: LS_ERR_NOT_FOUND naming it (%d: %s)", err.code, err.message);
	ls_file *f = ls_file_open(tmp("no-such-file"), &err);
	ok(!f && err.code == LS_ERR_NOT_FOUND && strstr(err.message, "no-such-file"),
	   "ls_file_open of a missing file: LS_ERR_NOT_FOUND naming it (%d: %s)", err.code, err.message);

	int warnings = 0;
	ls_options opt = options(1, &warnings);
	m = ls_module_open(bin, &opt, &err);
	ok(m && err.code == LS_OK, "loops -O2: opens with LS_OK (%d: %s)", err.code, err.message);
	if (!m)
		return;
	uint64_t addr;
	int n = ls_module_resolve(m, "no_such_function", 0, 0, &addr, 1, &err);
	ok(n < 0 && err.code == LS_ERR_NOT_FOUND && strstr(err.message, "no_such_function"),
	   "ls_module_resolve of a function it lacks: LS_ERR_NOT_FOUND (%d: %s)", err.code, err.message);
	n = ls_module_resolve(m, "nest3", 0, 0, &addr, 1, &err);
	ok(n == 1, "ls_module_resolve nest3: found (%d)", n);
	/* An address of nothing: ls_lookup gives NULL, which every accessor
	 * takes (issue 28's lib-api.sh: ls_scope_name crashed the caller). */
	const ls_scope *none = ls_lookup(m, 0);
	ok(!none && !ls_scope_name(none) && !ls_scope_file(none) && !ls_scope_line(none) &&
	   !ls_scope_parent(none) && !ls_scope_nranges(none) && !ls_scope_low(none) && !ls_loop_header(none) &&
	   !ls_scope_call_file(none) && !ls_proc_unresolved_jumps(none),
	   "ls_lookup of address 0: NULL, and the accessors take it (NULL, 0)");

	/* The scope tree's invariants (what --enable-debug-checks runs after
	 * every open) hold, and the checker sees a broken tree. */
	const char *why = ls_check_module(m, LS_CHECK_TREE, false);
	ok(!why, "loops -O2: the scope tree's invariants hold%s%s", why ? ": " : "", why ? why : "");
	struct ls_scope *proc = m->root->first_child->first_child;
	ls_scope_kind kind = proc->kind;
	proc->kind = LS_SCOPE_STMT;
	why = ls_check_module(m, LS_CHECK_TREE, false);
	ok(why && strstr(why, "stmt under file"), "a statement directly under a file: caught (%s)", why ? why : "not");
	proc->kind = kind;
	ls_range r0 = proc->ranges[0];
	proc->ranges[0].hi = proc->ranges[0].lo;
	why = ls_check_module(m, LS_CHECK_TREE, false);
	ok(why && strstr(why, "range 0"), "an empty range: caught (%s)", why ? why : "not");
	proc->ranges[0] = r0;
	ls_module_close(m);
}

static void check_dwarf(const char *bin)
{
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "cp %s %s", bin, tmp("smashed"));
	if (system(cmd) != 0 || smash_section(tmp("smashed"), ".debug_info") < 0) {
		ok(0, "a copy of loops with .debug_info overwritten with 0xff");
		return;
	}
	int warnings = 0;
	ls_options opt = options(1, &warnings);
	ls_error err;
	ls_module *m = ls_module_open(tmp("smashed"), &opt, &err);
	ok(m != NULL, "corrupt .debug_info: the open still succeeds (%s)", m ? "" : err.message);
	ok(err.code == LS_ERR_DWARF && strstr(err.message, "smashed") && warnings > 0,
	   "corrupt .debug_info: LS_ERR_DWARF naming the file, and a warning (%d, %d warnings: %s)", err.code,
	   warnings, err.message);
	if (m) {
		ok(!ls_module_has_dwarf(m), "corrupt .debug_info: the module goes on without DWARF");
		ls_module_close(m);
	}
}

/* Makes allocation 1, 2, ... of OPEN fail in turn until one run reaches its
 * end without meeting the failure; every failing run must say LS_ERR_NOMEM. */
static void check_nomem_open(const char *bin, int jobs)
{
	unsigned long k, nomem = 0, other = 0;
	ls_error err;
	for (k = 1;; k++) {
		int warnings = 0;
		ls_options opt = options(jobs, &warnings);
		ls_oom_fail_at(k);
		ls_module *m = ls_module_open(bin, &opt, &err);
		bool reached = ls_oom_fail_at(0) == 0;
		if (m) {
			ls_module_close(m);
			if (!reached)
				break; /* K is past the last allocation */
			other++;   /* the failure was met, and not reported */
			printf("# -j%d: allocation %lu failed and the open succeeded\n", jobs, k);
		} else if (err.code == LS_ERR_NOMEM && strstr(err.message, "out of memory")) {
			nomem++;
		} else {
			other++;
			printf("# -j%d: allocation %lu: %d: %s\n", jobs, k, err.code, err.message);
		}
	}
	ok(nomem == k - 1 && other == 0 && nomem > 100,
	   "ls_module_open -j%d: each of its %lu allocations failing gives LS_ERR_NOMEM (%lu did, %lu did not)",
	   jobs, k - 1, nomem, other);
}

static void write_to_null(void *ctx, const ls_cache_info *info)
{
	(void)ctx, (void)info;
}

static void check_nomem_write_and_cache(const char *bin)
{
	int warnings = 0;
	ls_options opt = options(1, &warnings);
	ls_error err;
	ls_module *m = ls_module_open(bin, &opt, &err);
	if (!m) {
		ok(0, "loops -O2 opens (%s)", err.message);
		return;
	}
	FILE *null = fopen("/dev/null", "w");
	unsigned long k, nomem = 0;
	for (k = 1;; k++) {
		ls_oom_fail_at(k);
		int rc = ls_write_structure(m, LS_FORMAT_XML, null, &err);
		if (ls_oom_fail_at(0) != 0)
			break;
		nomem += rc < 0 && err.code == LS_ERR_NOMEM;
	}
	ok(k > 1 && nomem == k - 1, "ls_write_structure (XML): each of its %lu allocations failing gives LS_ERR_NOMEM (%lu)",
	   k - 1, nomem);
	fclose(null);
	ls_module_close(m);

	/* A cache with one entry, listed with its one allocation failing. */
	opt.use_cache = 1;
	opt.cache_dir = tmp("cache");
	m = ls_module_open(bin, &opt, &err);
	ls_module_close(m);
	ls_oom_fail_at(1);
	int rc = ls_cache_list(&opt, write_to_null, NULL, &err);
	bool reached = ls_oom_fail_at(0) == 0;
	ok(reached && rc < 0 && err.code == LS_ERR_NOMEM, "ls_cache_list out of memory: LS_ERR_NOMEM (%d: %s)",
	   err.code, err.message);
}

int main(void)
{
	const char *srcdir = getenv("top_srcdir");
	if (!srcdir)
		srcdir = "..";
	snprintf(tmpdir, sizeof tmpdir, "%s/ls-unit-errors.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("1..0 # SKIP cannot make a temporary directory: %s\n", strerror(errno));
		return 0;
	}
	char cmd[2048], bin[512];
	snprintf(bin, sizeof bin, "%s", tmp("loops"));
	snprintf(cmd, sizeof cmd, "gcc -O2 -g -o %s %s/tests/fixtures/loops.c", bin, srcdir);
	if (system("command -v gcc >/dev/null 2>&1") != 0 || system(cmd) != 0) {
		printf("1..0 # SKIP cannot compile tests/fixtures/loops.c with gcc\n");
		return 0;
	}
	check_not_found(bin);
	check_dwarf(bin);
	check_nomem_open(bin, 1);
	check_nomem_open(bin, 2);
	check_nomem_write_and_cache(bin);
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	return done_testing();
}
