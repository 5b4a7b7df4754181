/* loop_find.c - ls_loops_find: the loops a front end's LOOP argument names
 * (a header address, FILE:LINE, FUNCTION or FUNCTION:N), found in the scope
 * tree, so that `loopscope probes` and `perf loops stat` read it alike. */
#include "elf/module.h"
#include "structure/scope.h"
#include "support/base.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct found {
	const ls_scope **out;
	size_t cap, n;
};

static void keep(struct found *f, const ls_scope *s)
{
	if (f->n < f->cap)
		f->out[f->n] = s;
	f->n++;
}

/* Whether PATH ends with FILE at a component boundary. */
static bool path_ends_with(const char *path, const char *file)
{
	size_t lp = strlen(path), lf = strlen(file);
	if (lf > lp || strcmp(path + lp - lf, file) != 0)
		return false;
	return lf == lp || path[lp - lf - 1] == '/';
}

/* Every loop under S in preorder; with FILE, those of FILE:LINE; with
 * HEADER, the one whose header it is. */
static void walk(const ls_scope *s, const char *file, unsigned line, uint64_t header, bool by_header,
                 struct found *f)
{
	for (const ls_scope *c = s->first_child; c; c = c->next_sibling) {
		if (c->kind == LS_SCOPE_LOOP && c->loop) {
			bool match = by_header ? c->loop->header == header
			           : file ? (c->line == line && c->file && path_ends_with(c->file, file))
			           : true;
			if (match)
				keep(f, c);
		}
		walk(c, file, line, header, by_header, f);
	}
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* FUNCTION or FUNCTION:N: the procedure's loops, or its Nth. */
static int by_function(const ls_module *m, const char *name, unsigned long nth, struct found *f)
{
	uint64_t addr, size;
	if (ls_module_symbol(m, name, &addr, &size) < 0)
		return -1;
	const ls_scope *proc = ls_lookup_proc(m, addr);
	if (!proc)
		return -1;
	if (!nth) {
		walk(proc, NULL, 0, 0, false, f);
		return 0;
	}
	const ls_scope *all[4096];
	struct found every = { all, sizeof all / sizeof *all, 0 };
	walk(proc, NULL, 0, 0, false, &every);
	if (nth <= every.n && nth <= every.cap)
		keep(f, all[nth - 1]);
	return 0;
}

int ls_loops_find(const ls_module *m, const char *spec, const ls_scope **out, size_t cap, ls_error *err)
{
	struct found f = { out, cap, 0 };
	if (!spec) { /* every loop: none is no error */
		walk(ls_module_root(m), NULL, 0, 0, false, &f);
		return f.n > (size_t)INT32_MAX ? INT32_MAX : (int)f.n;
	}
	const char *colon = strrchr(spec, ':');
	char *end;
	if (spec[0] == '0' && (spec[1] == 'x' || spec[1] == 'X')) {
		uint64_t a = strtoull(spec, &end, 16);
		if (*end == 0)
			walk(ls_module_root(m), NULL, 0, a, true, &f);
	} else if (colon && all_digits(colon + 1)) {
		char *name = strndup(spec, (size_t)(colon - spec));
		if (!name) {
			ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", m->path);
			return -1;
		}
		unsigned long n = strtoul(colon + 1, NULL, 10);
		/* a function's name first: FILE:LINE otherwise */
		if (by_function(m, name, n ? n : (unsigned long)-1, &f) < 0)
			walk(ls_module_root(m), name, (unsigned)n, 0, false, &f);
		free(name);
	} else
		by_function(m, spec, 0, &f);
	if (f.n == 0) {
		ls_set_error(err, LS_ERR_NOT_FOUND, "%s: no loop '%s' (0xHEADER, FILE:LINE, FUNCTION or FUNCTION:N)",
		             m->path, spec);
		return -1;
	}
	return f.n > (size_t)INT32_MAX ? INT32_MAX : (int)f.n;
}
