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
#include <gelf.h>
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

/* The file offset of BIN's .debug_line, 0 if none (or compressed). */
static uint64_t debug_line_offset(const char *bin)
{
	int fd = open(bin, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t shstrndx;
	uint64_t off = 0;
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0)
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
			GElf_Shdr sh;
			const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
			if (name && strcmp(name, ".debug_line") == 0 && !(sh.sh_flags & SHF_COMPRESSED))
				off = sh.sh_offset;
		}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return off;
}

/* The first unit's line program cut short at every length inside its
 * header (unit_length rewritten): the header reader must give up each
 * time, as libdw does; past the header, agree with libdw. */
static void check_truncated(const char *bin, const char *copy, const char *what)
{
	uint64_t off = debug_line_offset(bin);
	FILE *f = fopen(bin, "rb");
	static unsigned char image[1 << 22];
	size_t n = f ? fread(image, 1, sizeof image, f) : 0;
	if (f)
		fclose(f);
	if (!off || n == 0 || n == sizeof image || off + 16 > n) {
		ok(0, "%s: a .debug_line to cut (%s)", what, bin);
		return;
	}
	unsigned char *u = image + off;
	uint32_t unit_length = u[0] | u[1] << 8 | u[2] << 16 | (uint32_t)u[3] << 24;
	unsigned version = u[4] | u[5] << 8;
	size_t hl_at = version >= 5 ? 8 : 6;
	uint32_t header_length = u[hl_at] | u[hl_at + 1] << 8 | u[hl_at + 2] << 16 | (uint32_t)u[hl_at + 3] << 24;
	uint32_t header_end = (uint32_t)(hl_at + 4 - 4) + header_length; /* past unit_length */
	size_t early = 0, disagree = 0;
	for (uint32_t k = 0; k <= unit_length && k <= header_end + 8; k++) {
		u[0] = k & 0xff, u[1] = k >> 8 & 0xff, u[2] = k >> 16 & 0xff, u[3] = k >> 24;
		FILE *o = fopen(copy, "wb");
		if (!o || fwrite(image, 1, n, o) != n) {
			if (o)
				fclose(o);
			ok(0, "%s: writes %s", what, copy);
			return;
		}
		fclose(o);
		struct counts c = { 0 };
		if (!compare_file(copy, &c))
			continue;
		if (k < header_end && c.read == c.units)
			early++;
		disagree += c.differ;
	}
	ok(early == 0 && disagree == 0,
	   "%s: cut inside its header at every length, the reader gives up (%zu did not); past it, agrees (%zu differ)",
	   what, early, disagree);
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
		char copy[512];
		snprintf(copy, sizeof copy, "%s/cut", tmpdir);
		check_truncated(out, copy, what);
	}
	char rm[512];
	snprintf(rm, sizeof rm, "rm -rf %s", tmpdir);
	if (system(rm) != 0)
		printf("# could not remove %s\n", tmpdir);
	return done_testing();
}
