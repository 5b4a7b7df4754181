/* unit-line-files.c - the line program header's file table (line_files.c)
 * against libdw's own (dwarf_getsrcfiles + ls_cu_file_path, what the
 * inline tree named files with before): for every unit of real binaries
 * -- libloopscope.so itself, libc's debug file, gcc and clang fixtures of
 * DWARF 4 and 5 compiled now -- every file index must be named the same.
 * With arguments, compares those files instead (a driver for the corpus).
 * Prints TAP. */
#include "dwarf/line_files.h"
#include "dwarf/linemap.h"
#include "support/base.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"

#define LIBC_DEBUG "/usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug"

struct counts {
	size_t units, read, fallback, files, differ, libdw_failed;
};

/* One unit: every index of the header's table named both ways. */
static void compare_unit(Dwarf_Die *cudie, struct ls_line_files *lf, struct ls_strtab *t,
                         const char *path, struct counts *c)
{
	c->units++;
	if (!ls_line_files_read(cudie, lf)) {
		c->fallback++;
		return;
	}
	c->read++;
	Dwarf_Files *files;
	size_t nfiles;
	if (dwarf_getsrcfiles(cudie, &files, &nfiles) != 0) {
		/* The header read but libdw rejected the program after it. */
		c->libdw_failed++;
		return;
	}
	Dwarf_Attribute a;
	const char *comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
	if (lf->nfiles > nfiles) {
		c->differ++;
		printf("# %s: unit 0x%llx: %zu files in the header, libdw %zu\n", path,
		       (unsigned long long)dwarf_dieoffset(cudie), lf->nfiles, nfiles);
		return;
	}
	for (size_t i = 0; i < lf->nfiles; i++) {
		c->files++;
		const char *mine = ls_line_file_path(t, lf, i, comp_dir);
		const char *libdw = ls_cu_file_path(t, files, i, comp_dir);
		if (mine != libdw && (!mine || !libdw || strcmp(mine, libdw) != 0)) {
			if (c->differ++ < 10)
				printf("# %s: unit 0x%llx file %zu: %s, libdw %s\n", path,
				       (unsigned long long)dwarf_dieoffset(cudie), i,
				       mine ? mine : "(null)", libdw ? libdw : "(null)");
		}
	}
}

/* Every unit of PATH; false if it has no DWARF. */
static bool compare_file(const char *path, struct counts *c)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	Dwarf *dbg = dwarf_begin(fd, DWARF_C_READ);
	if (!dbg) {
		close(fd);
		return false;
	}
	struct ls_line_files lf = { 0 };
	struct ls_strtab t = { 0 };
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	while (dwarf_get_units(dbg, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0)
		compare_unit(&cudie, &lf, &t, path, c);
	ls_line_files_free(&lf);
	ls_strtab_free(&t);
	dwarf_end(dbg);
	close(fd);
	return true;
}

/* PATH's units must all be named the same, and (REQUIRE_ALL) all be read
 * from the header, not left to libdw. */
static void check_file(const char *path, const char *what, bool require_all)
{
	struct counts c = { 0 };
	if (!compare_file(path, &c)) {
		ok(0, "%s: opens with DWARF (%s)", what, path);
		return;
	}
	printf("# %s: %zu units, %zu read from the header (%zu files), %zu left to libdw, %zu libdw rejected\n",
	       what, c.units, c.read, c.files, c.fallback, c.libdw_failed);
	ok(c.read > 0 && c.differ == 0 && c.libdw_failed == 0 && (!require_all || c.fallback == 0),
	   "%s: every file of %zu units named as libdw names it (%zu differ)", what, c.read, c.differ);
}

static int compare_args(int argc, char **argv)
{
	struct counts all = { 0 };
	size_t nfiles = 0;
	for (int i = 1; i < argc; i++)
		if (compare_file(argv[i], &all))
			nfiles++;
	printf("# %zu files with DWARF: %zu units, %zu read from the header (%zu file names), "
	       "%zu left to libdw, %zu libdw rejected, %zu differ\n",
	       nfiles, all.units, all.read, all.files, all.fallback, all.libdw_failed, all.differ);
	ok(all.differ == 0 && all.libdw_failed == 0, "every file named as libdw names it");
	return done_testing();
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return compare_args(argc, argv);
	const char *srcdir = getenv("top_srcdir");
	if (!srcdir)
		srcdir = ".";
	check_file(".libs/libloopscope.so.0.1.0", "libloopscope.so", true);
	if (access(LIBC_DEBUG, R_OK) == 0)
		check_file(LIBC_DEBUG, "libc's debug file", false);
	else
		skip("libc's debug file " LIBC_DEBUG " (libc6-dbg) is absent");

	char tmpdir[256];
	snprintf(tmpdir, sizeof tmpdir, "%s/ls-unit-line-files.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("# cannot make a temporary directory: %s\n", strerror(errno));
		ok(0, "temporary directory");
		return done_testing();
	}
	/* Both compilers, both versions; a header that names a file by
	 * ../ and an include directory of its own. */
	const char *builds[][2] = {
		{ "gcc", "-gdwarf-4" }, { "gcc", "-gdwarf-5" },
		{ "clang", "-gdwarf-4" }, { "clang", "-gdwarf-5" },
	};
	for (size_t i = 0; i < sizeof builds / sizeof *builds; i++) {
		char cmd[2048], out[512], what[128];
		snprintf(out, sizeof out, "%s/fx-%zu", tmpdir, i);
		snprintf(what, sizeof what, "%s -O2 %s inline_deep.c", builds[i][0], builds[i][1]);
		snprintf(cmd, sizeof cmd, "command -v %s >/dev/null && cd %s/tests && %s -O2 %s -I../libloopscope "
		         "-o %s ../tests/fixtures/inline_deep.c 2>&1",
		         builds[i][0], srcdir, builds[i][0], builds[i][1], out);
		if (system(cmd) != 0) {
			ok(0, "%s: compiles", what);
			continue;
		}
		check_file(out, what, true);
	}
	char rm[512];
	snprintf(rm, sizeof rm, "rm -rf %s", tmpdir);
	if (system(rm) != 0)
		printf("# could not remove %s\n", tmpdir);
	return done_testing();
}
