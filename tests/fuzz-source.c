/* fuzz-source.c - libFuzzer target: the source files DWARF names, as the
 * loop-line rules read them (loops/source.c through the safe open of
 * support/file.c).  A binary's DWARF may name any path, and the file
 * there is anyone's.
 *
 * The first byte says what the path is: 0 a regular file holding the rest
 * (the tokenizer's input), 1 a symbolic link to it, 2 a FIFO (must not be
 * waited on), 3 a sparse file of 17 MiB and more (the rest's first 4 bytes; past
 * LS_MAX_SOURCE_SIZE: refused, not read).  Then every query is asked of
 * every line: statements sorted by line, each ending at or after its
 * first line, the one at a line beginning there. */
#include "loops/source.h"
#include "support/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static void make_path(const char *path, const char *file, uint8_t kind, const uint8_t *data, size_t size)
{
	unlink(path);
	unlink(file);
	FILE *f = fopen(file, "wb");
	if (!f)
		abort();
	if (size && kind != 3)
		fwrite(data, 1, size, f);
	fclose(f);
	if (kind == 3) {
		uint32_t mib = 0;
		memcpy(&mib, data, size < 4 ? size : 4);
		if (truncate(file, (off_t)(mib % 4080 + 17) << 20) < 0)
			abort();
	}
	if (kind == 1 && symlink(file, path) < 0)
		abort();
	if (kind == 2 && mkfifo(path, 0600) < 0)
		abort();
	if ((kind == 0 || kind == 3) && rename(file, path) < 0)
		abort();
}

static void check(const struct ls_source *src, size_t size)
{
	size_t n;
	const struct ls_src_stmt *st = ls_source_stmts(src, &n);
	for (size_t i = 0; i < n; i++) {
		if (st[i].end < st[i].line || (i && st[i - 1].line > st[i].line))
			abort();
		const struct ls_src_stmt *at = ls_source_stmt_at(src, st[i].line);
		if (!at || at->line != st[i].line)
			abort();
	}
	unsigned lines = 2;
	for (size_t i = 0; i < n; i++)
		if (st[i].end + 1 > lines)
			lines = st[i].end + 1;
	if (lines > size + 2)
		lines = (unsigned)size + 2;
	for (unsigned l = 0; l <= lines; l++) {
		unsigned d = ls_source_do_of_while(src, l);
		if (d > l)
			abort();
		(void)ls_source_has_code(src, l);
		(void)ls_source_calls(src, l, "f", 1);
		(void)ls_source_calls(src, l, "while", 5);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/fuzz-source.XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	if (size < 1)
		return 0;
	uint8_t kind = data[0] % 4;
	char path[96], file[96];
	snprintf(path, sizeof path, "%s/src.c", dir);
	snprintf(file, sizeof file, "%s/real.c", dir);
	make_path(path, file, kind, data + 1, size - 1);
	struct ls_strtab strings = { 0 };
	struct ls_source_cache *c = ls_source_cache_new(NULL, NULL);
	const struct ls_source *src = ls_source_get(c, ls_intern(&strings, path));
	if ((kind == 2 || kind == 3) && src) /* a FIFO, or more than the bound */
		abort();
	if (src)
		check(src, size);
	size_t np;
	struct ls_source_probe *p = ls_source_cache_take_probes(c, &np);
	ls_source_probes_free(p, np);
	ls_source_cache_free(c);
	ls_strtab_free(&strings);
	return 0;
}
