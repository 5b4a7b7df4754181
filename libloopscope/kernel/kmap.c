/* kmap.c - where a running kernel's code is: its symbols (kallsyms) and
 * where its modules were loaded (/proc/modules, /sys/module), read from
 * the files the kernel prints or from copies of them (ls_kmap of
 * loopscope.h).
 *
 * `loopscope decode` maps raw runtime addresses of an oops with them, and
 * `perf loops report` names kernel frames through kallsyms when there is
 * no vmlinux; both read these files here, with one parser each.  The files
 * may come from another machine (a bug report), so they are untrusted:
 * opened as regular files only (a /proc file is one), any line that does
 * not parse is skipped, every name is cut to its field.
 *
 * kallsyms ("ADDR TYPE NAME[\t[MODULE]]", about 150k lines) is read in one
 * go and parsed by hand, the names staying in the buffer: sscanf and a
 * copy per name were most of perf loops' time on a small report.
 */
#include "support/base.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ls_kmap {
	char **bufs;           /* the files read: names point into them */
	size_t nbufs;
	ls_ksym *syms;         /* code symbols, by address */
	size_t nsyms, cap_syms;
	uint64_t text;         /* kallsyms' _text, or 0 */
	ls_kplace *places;     /* by start */
	size_t nplaces, cap_places;
};

ls_kmap *ls_kmap_new(void)
{
	return calloc(1, sizeof(ls_kmap));
}

void ls_kmap_free(ls_kmap *km)
{
	if (!km)
		return;
	for (size_t i = 0; i < km->nbufs; i++)
		free(km->bufs[i]);
	free(km->bufs);
	free(km->syms);
	free(km->places);
	free(km);
}

/* PATH's whole contents, kept by KM (NUL-terminated; *LEN without the NUL);
 * NULL with ERR.  A /proc file says size 0: read to the end. */
static char *slurp(ls_kmap *km, const char *path, size_t *len, ls_error *err)
{
	int fd = ls_open_regular(path, LS_OPEN_PSEUDO_FS, err); /* /proc/kallsyms, /proc/modules */
	if (fd < 0)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (ssize_t k = 1; buf && k > 0;) {
		if (n + 65536 > cap) {
			char *b = realloc(buf, cap * 2);
			if (!b) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = b;
			cap *= 2;
		}
		k = read(fd, buf + n, cap - n - 1);
		if (k < 0 && errno == EINTR)
			k = 1;
		else if (k < 0) {
			ls_set_error(err, LS_ERR_IO, "%s: %s", path, strerror(errno));
			free(buf);
			close(fd);
			return NULL;
		} else
			n += (size_t)k;
	}
	close(fd);
	char **bufs = buf ? realloc(km->bufs, (km->nbufs + 1) * sizeof *bufs) : NULL;
	if (!bufs) {
		free(buf);
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", path);
		return NULL;
	}
	km->bufs = bufs;
	km->bufs[km->nbufs++] = buf;
	buf[n] = 0;
	*len = n;
	return buf;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Module names: the kernel shows nf_conntrack, file names may say nf-conntrack. */
static void normalize(char *s)
{
	for (; *s; s++)
		if (*s == '-')
			*s = '_';
}

static int add_place(ls_kmap *km, const char *module, const char *section, const char *symbol, uint64_t start,
                     uint64_t size)
{
	if (km->nplaces == km->cap_places) {
		size_t cap = km->cap_places ? 2 * km->cap_places : 64;
		ls_kplace *p = realloc(km->places, cap * sizeof *p);
		if (!p)
			return -1;
		km->places = p;
		km->cap_places = cap;
	}
	km->places[km->nplaces++] = (ls_kplace){ module, section, symbol, start, size };
	return 0;
}

static int cmp_place(const void *a, const void *b)
{
	const ls_kplace *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* By start; glibc's qsort is a merge sort: places at one start keep the
 * order they were read in, and ls_kmap_place gives the last. */
static void sort_places(ls_kmap *km)
{
	if (km->nplaces > 1)
		qsort(km->places, km->nplaces, sizeof *km->places, cmp_place);
}

/* ---- kallsyms ------------------------------------------------------------------- */

static int cmp_sym(const void *a, const void *b)
{
	const ls_ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* One line "ADDR TYPE NAME[\t[MODULE]]" (cut in place): a code symbol
 * with an address into S; false for anything else. */
static bool parse_ksym(char *p, ls_ksym *s)
{
	uint64_t addr = 0;
	int h;
	char *q = p;
	while ((h = hexval(*q)) >= 0)
		addr = addr << 4 | (uint64_t)h, q++;
	if (q == p || q - p > 16 || *q != ' ' || !q[1] || q[2] != ' ' || !addr)
		return false;
	char type = q[1];
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return false;
	char *name = q + 3, *end = name + strcspn(name, "\t ");
	char *module = NULL;
	if (*end) {
		char *m = end + 1 + strspn(end + 1, "\t ");
		if (*m == '[' && strchr(m, ']')) {
			module = m + 1;
			*strchr(module, ']') = 0;
			normalize(module);
		}
		*end = 0;
	}
	if (!*name)
		return false;
	*s = (ls_ksym){ name, addr, module, type };
	return true;
}

/* The lowest code symbol (t or T) of each module among SYMS[FIRST..]: a
 * place of it (the module's text is there, at the symbol's address). */
static int add_anchors(ls_kmap *km, size_t first)
{
	size_t from = km->nplaces;
	for (size_t i = first; i < km->nsyms; i++) {
		const ls_ksym *s = &km->syms[i];
		if (!s->module || (s->type != 't' && s->type != 'T'))
			continue;
		ls_kplace *p = NULL;
		for (size_t k = from; k < km->nplaces && !p; k++)
			if (!strcmp(km->places[k].module, s->module))
				p = &km->places[k];
		if (!p && add_place(km, s->module, NULL, s->name, s->addr, 0) < 0)
			return -1;
		if (p && s->addr < p->start) {
			p->start = s->addr;
			p->symbol = s->name;
		}
	}
	return 0;
}

int ls_kmap_read_kallsyms(ls_kmap *km, const char *path, ls_error *err)
{
	size_t len;
	char *buf = slurp(km, path, &len, err);
	if (!buf)
		return -1;
	size_t first = km->nsyms;
	bool sorted = true;
	for (char *p = buf, *end = buf + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		*nl = 0;
		ls_ksym s;
		if (parse_ksym(p, &s)) {
			if (km->nsyms == km->cap_syms) {
				size_t cap = km->cap_syms ? 2 * km->cap_syms : 65536;
				ls_ksym *v = realloc(km->syms, cap * sizeof *v);
				if (!v) {
					ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", path);
					return -1;
				}
				km->syms = v;
				km->cap_syms = cap;
			}
			if (km->nsyms && km->syms[km->nsyms - 1].addr > s.addr)
				sorted = false;
			km->syms[km->nsyms++] = s;
			if (!s.module && !km->text && !strcmp(s.name, "_text"))
				km->text = s.addr;
		}
		p = nl + 1;
	}
	if (add_anchors(km, first) < 0) {
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", path);
		return -1;
	}
	/* /proc/kallsyms is almost sorted (the modules' symbols come last);
	 * glibc's qsort is a merge sort: symbols at one address keep their
	 * order, the last of them being the one ls_kmap_symbol_at gives */
	if (!sorted)
		qsort(km->syms, km->nsyms, sizeof *km->syms, cmp_sym);
	sort_places(km);
	return 0;
}

size_t ls_kmap_nsymbols(const ls_kmap *km)
{
	return km->nsyms;
}

const ls_ksym *ls_kmap_symbol(const ls_kmap *km, size_t i)
{
	return i < km->nsyms ? &km->syms[i] : NULL;
}

const ls_ksym *ls_kmap_symbol_at(const ls_kmap *km, uint64_t addr)
{
	size_t i = LS_FIRST_ABOVE(km->syms, km->nsyms, addr, addr);
	return i ? &km->syms[i - 1] : NULL;
}

int ls_kmap_text(const ls_kmap *km, uint64_t *addr)
{
	if (!km->text)
		return -1;
	*addr = km->text;
	return 0;
}

/* ---- /proc/modules, /sys/module ------------------------------------------------- */

int ls_kmap_read_proc_modules(ls_kmap *km, const char *path, ls_error *err)
{
	size_t len;
	char *buf = slurp(km, path, &len, err);
	if (!buf)
		return -1;
	/* "NAME SIZE REFS DEPS STATE BASE [TAINTS]": the base is the core's
	 * code (0 when addresses are hidden) */
	char *lines;
	for (char *line = strtok_r(buf, "\n", &lines); line; line = strtok_r(NULL, "\n", &lines)) {
		char *fields;
		char *name = strtok_r(line, " ", &fields), *size = strtok_r(NULL, " ", &fields);
		for (int k = 0; k < 3; k++)
			(void)strtok_r(NULL, " ", &fields);
		char *base = strtok_r(NULL, " ", &fields), *e1, *e2;
		if (!name || !size || !base)
			continue;
		errno = 0;
		uint64_t s = strtoull(size, &e1, 10), b = strtoull(base, &e2, 16);
		if (errno || *e1 || *e2 || !b)
			continue;
		normalize(name);
		if (add_place(km, name, ".text", NULL, b, s) < 0) {
			ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", path);
			return -1;
		}
	}
	sort_places(km);
	return 0;
}

/* The address in /sys/module/M/sections/S ("0xffffffffc0a00000\n"). */
static bool read_section_addr(const char *path, uint64_t *addr)
{
	int fd = ls_open_regular(path, LS_OPEN_PSEUDO_FS, NULL); /* /sys/module */
	char buf[64];
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	char *end;
	errno = 0;
	*addr = strtoull(buf, &end, 16);
	return !errno && end != buf && *addr;
}

/* DIR/M/sections/S of one module M: a place per section. */
static int read_module_sections(ls_kmap *km, const char *dir, const char *module)
{
	char sd[4096];
	snprintf(sd, sizeof sd, "%s/%s/sections", dir, module);
	DIR *dp = opendir(sd);
	if (!dp)
		return 0;
	char *names = NULL; /* the module's and its sections' names, kept by KM */
	size_t len = 0;
	FILE *f = open_memstream(&names, &len);
	if (!f) {
		closedir(dp);
		return -1;
	}
	struct dirent *e;
	struct { uint64_t addr; size_t off; } *v = NULL;
	size_t n = 0;
	int rc = 0;
	fprintf(f, "%s%c", module, 0);
	while (rc == 0 && (e = readdir(dp))) {
		char p[4096 + 256];
		uint64_t a;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    snprintf(p, sizeof p, "%s/%s", sd, e->d_name) >= (int)sizeof p || !read_section_addr(p, &a))
			continue;
		void *grown = realloc(v, (n + 1) * sizeof *v);
		if (!grown) {
			rc = -1;
			break;
		}
		v = grown;
		v[n].addr = a;
		v[n++].off = (size_t)ftell(f);
		fprintf(f, "%s%c", e->d_name, 0);
	}
	closedir(dp);
	if (fclose(f) != 0)
		rc = -1;
	char **bufs = rc == 0 ? realloc(km->bufs, (km->nbufs + 1) * sizeof *bufs) : NULL;
	if (bufs) {
		km->bufs = bufs;
		km->bufs[km->nbufs++] = names;
		normalize(names);
		for (size_t i = 0; i < n && rc == 0; i++)
			rc = add_place(km, names, names + v[i].off, NULL, v[i].addr, 0);
	} else {
		free(names);
		rc = -1;
	}
	free(v);
	return rc;
}

int ls_kmap_read_sys_module(ls_kmap *km, const char *dir, ls_error *err)
{
	DIR *dp = opendir(dir);
	if (!dp) {
		ls_set_error(err, errno == ENOENT ? LS_ERR_NOT_FOUND : LS_ERR_IO, "%s: %s", dir, strerror(errno));
		return -1;
	}
	struct dirent *e;
	int rc = 0;
	while (rc == 0 && (e = readdir(dp)))
		if (e->d_name[0] != '.')
			rc = read_module_sections(km, dir, e->d_name);
	closedir(dp);
	if (rc < 0) {
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", dir);
		return -1;
	}
	sort_places(km);
	return 0;
}

/* The place at or below ADDR; a module's when ADDR is within its size, or
 * (size unknown) within 64 MiB of it: modules are loaded above the
 * kernel's text, in an area of their own. */
const ls_kplace *ls_kmap_place(const ls_kmap *km, uint64_t addr)
{
	size_t i = LS_FIRST_ABOVE(km->places, km->nplaces, start, addr);
	if (!i)
		return NULL;
	const ls_kplace *p = &km->places[i - 1];
	return p->size ? (addr - p->start < p->size ? p : NULL) : (addr - p->start < (64u << 20) ? p : NULL);
}
