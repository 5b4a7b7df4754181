/* fuzz-kmap.c - libFuzzer target: the files of a running kernel as
 * libloopscope reads them (ls_kmap: kallsyms, /proc/modules, /sys/module),
 * which may come from another machine's bug report.
 *
 * The first byte says what the rest is: 0 kallsyms, 1 /proc/modules, 2 a
 * /sys/module tree (module "m", one section file per line "NAME ADDRESS"),
 * 3 all three (the rest split in three at its first two NUL bytes).  The
 * reads must not crash or leak; then every symbol is in address order,
 * each lookup gives the last symbol at or below, and each place holds
 * its address. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loopscope.h"

static char dir[64];

static void write_file(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	if (size)
		fwrite(data, 1, size, f);
	fclose(f);
}

/* Lines "NAME ADDRESS" as DIR/sys/m/sections/NAME holding ADDRESS. */
static void write_sys(const uint8_t *data, size_t size)
{
	char p[256];
	snprintf(p, sizeof p, "rm -rf %s/sys && mkdir -p %s/sys/m/sections", dir, dir);
	if (system(p) != 0)
		abort();
	char *text = strndup((const char *)data, size);
	int n = 0;
	for (char *line = strtok(text, "\n"); line && n < 64; line = strtok(NULL, "\n"), n++) {
		char *sp = strchr(line, ' ');
		if (!sp || sp == line || memchr(line, '/', (size_t)(sp - line)) || (sp - line == 1 && line[0] == '.') ||
		    (sp - line == 2 && !strncmp(line, "..", 2)))
			continue;
		snprintf(p, sizeof p, "%s/sys/m/sections/%.*s", dir, (int)(sp - line > 100 ? 100 : sp - line), line);
		write_file(p, (const uint8_t *)sp + 1, strlen(sp + 1));
	}
	free(text);
}

static void check(const ls_kmap *km)
{
	size_t n = ls_kmap_nsymbols(km);
	for (size_t i = 0; i < n; i++) {
		const ls_ksym *s = ls_kmap_symbol(km, i);
		if (!s->name || (i && ls_kmap_symbol(km, i - 1)->addr > s->addr))
			abort();
		const ls_ksym *at = ls_kmap_symbol_at(km, s->addr);
		if (!at || at->addr != s->addr)
			abort();
		const ls_kplace *p = ls_kmap_place(km, s->addr);
		if (p && (p->start > s->addr || !p->module))
			abort();
	}
	uint64_t text;
	(void)ls_kmap_text(km, &text);
	(void)ls_kmap_place(km, 0);
	(void)ls_kmap_place(km, UINT64_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/fuzz-kmap.XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	if (size < 1)
		return 0;
	uint8_t kind = data[0] % 4;
	data++, size--;
	const uint8_t *part[3] = { data, data, data };
	size_t len[3] = { size, size, size };
	if (kind == 3) {
		const uint8_t *a = memchr(data, 0, size), *b = a ? memchr(a + 1, 0, size - (size_t)(a + 1 - data)) : NULL;
		len[0] = a ? (size_t)(a - data) : size;
		part[1] = a ? a + 1 : data + size;
		len[1] = b ? (size_t)(b - part[1]) : (size_t)(data + size - part[1]);
		part[2] = b ? b + 1 : data + size;
		len[2] = (size_t)(data + size - part[2]);
	}
	char ks[96], pm[96], sys[96];
	snprintf(ks, sizeof ks, "%s/kallsyms", dir);
	snprintf(pm, sizeof pm, "%s/modules", dir);
	snprintf(sys, sizeof sys, "%s/sys", dir);
	ls_kmap *km = ls_kmap_new();
	ls_error err;
	if (kind == 1 || kind == 3) {
		write_file(pm, part[1], len[1]);
		(void)ls_kmap_read_proc_modules(km, pm, &err);
	}
	if (kind == 2 || kind == 3) {
		write_sys(part[2], len[2]);
		(void)ls_kmap_read_sys_module(km, sys, &err);
	}
	if (kind == 0 || kind == 3) {
		write_file(ks, part[0], len[0]);
		(void)ls_kmap_read_kallsyms(km, ks, &err);
	}
	check(km);
	ls_kmap_free(km);
	return 0;
}
