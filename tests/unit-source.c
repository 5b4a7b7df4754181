/* unit-source.c - the source reader of the loop-line rules (libloopscope/loops/source.c):
 * which lines begin a loop statement (for, while, do, a label a goto
 * names) and which line its body ends on, on a C/C++ snippet whose answer
 * is written beside each line (/ * S:kind:end * /); keywords inside
 * comments, strings, raw strings, character literals and macro
 * definitions are no statements; a do's closing while is not a loop of
 * its own; calls are found by name.  Prints TAP.
 *
 * `tests/unit-source FILE` prints FILE's loop statements instead (to see
 * what the rules see in a real source). */
#include "loops/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"

static const char snippet[] =
	"/* for (;;) in a comment, while (1) too */\n"                 /* 1 */
	"#define LOOP(n) for (int i = 0; i < (n); i++) \\\n"            /* 2 */
	"	do_it(i)\n"                                                /* 3 */
	"static const char *s = \"for (;;) while\";\n"                  /* 4 */
	"static const char c = '{';\n"                                 /* 5 */
	"int f(int n, int *p)\n"                                       /* 6 */
	"{\n"                                                          /* 7 */
	"	int s = 0;\n"                                              /* 8 */
	"	for (;;) {\n"                                              /* 9  S:for:14 */
	"		if (n-- < 0)\n"                                    /* 10 */
	"			break;\n"                                  /* 11 */
	"		s += p[n]; // while\n"                             /* 12 */
	"		LOOP(n);\n"                                        /* 13 */
	"	}\n"                                                       /* 14 */
	"	while (n < 10)\n"                                          /* 15 S:while:16 */
	"		n += f(n, p);\n"                                   /* 16 */
	"	do {\n"                                                    /* 17 S:do:19 */
	"		n--;\n"                                            /* 18 */
	"	} while (n > 0);\n"                                        /* 19 */
	"again:\n"                                                     /* 20 S:label:23 */
	"	s++;\n"                                                    /* 21 */
	"	if (s < 100)\n"                                            /* 22 */
	"		goto again;\n"                                     /* 23 */
	"	for (int i = 0; i < n; i++)\n"                             /* 24 S:for:27 */
	"		if (p[i])\n"                                       /* 25 */
	"			s++;\n"                                    /* 26 */
	"		else s--;\n"                                       /* 27 */
	"	unused: s = R\"x(for (;;) { )x\";\n"                       /* 28 */
	"	return s ? s : n;\n"                                       /* 29 */
	"}\n";                                                         /* 30 */

struct want {
	unsigned line, end;
	int kind;
};

static const struct want wants[] = {
	{ 9, 14, LS_SRC_FOR }, { 15, 16, LS_SRC_WHILE }, { 17, 19, LS_SRC_DO },
	{ 20, 23, LS_SRC_LABEL }, { 24, 27, LS_SRC_FOR },
};

static const char *kind_name(int k)
{
	return k == LS_SRC_FOR ? "for" : k == LS_SRC_WHILE ? "while" : k == LS_SRC_DO ? "do" :
	       k == LS_SRC_LABEL ? "label" : "?";
}

static int dump(const char *path)
{
	struct ls_strtab strings = { 0 };
	struct ls_source_cache *c = ls_source_cache_new(NULL, NULL);
	const struct ls_source *src = ls_source_get(c, ls_intern(&strings, path));
	if (!src) {
		fprintf(stderr, "%s: cannot be read as a source file\n", path);
		return 1;
	}
	size_t n;
	const struct ls_src_stmt *st = ls_source_stmts(src, &n);
	for (size_t i = 0; i < n; i++)
		printf("%u-%u %s\n", st[i].line, st[i].end, kind_name(st[i].kind));
	ls_source_cache_free(c);
	ls_strtab_free(&strings);
	return 0;
}

/* A file DWARF names by a path that does not exist here (a relative one,
 * or another machine's build directory) is found under a directory of the
 * search path, with the path's leading components dropped one by one. */
static void search_path(struct ls_strtab *strings, const char *real)
{
	const char *slash = strrchr(real, '/');
	char dir[64], rel[128], abs[128];
	snprintf(dir, sizeof dir, "%.*s", (int)(slash - real), real);
	snprintf(rel, sizeof rel, "build/src%s", slash);
	snprintf(abs, sizeof abs, "/nonexistent/build%s", slash);
	struct ls_source_cache *none = ls_source_cache_new(NULL, NULL);
	ok(ls_source_get(none, ls_intern(strings, rel)) == NULL, "no search path: a relative path is not read");
	ls_source_cache_free(none);
	struct ls_source_cache *c = ls_source_cache_new(NULL, "/nonexistent::");
	ok(ls_source_get(c, ls_intern(strings, rel)) == NULL, "a search path of missing directories finds nothing");
	ls_source_cache_free(c);
	char sp[160];
	snprintf(sp, sizeof sp, "/nonexistent:%s", dir);
	c = ls_source_cache_new(NULL, sp);
	const struct ls_source *a = ls_source_get(c, ls_intern(strings, rel));
	const struct ls_source *b = ls_source_get(c, ls_intern(strings, abs));
	size_t na = 0, nb = 0;
	if (a)
		ls_source_stmts(a, &na);
	if (b)
		ls_source_stmts(b, &nb);
	ok(a && na == sizeof wants / sizeof wants[0], "%s is found as %s/%s", rel, dir, slash + 1);
	ok(b && nb == na, "%s is found as %s/%s", abs, dir, slash + 1);
	ls_source_cache_free(c);
}

int main(int argc, char **argv)
{
	if (argc == 2)
		return dump(argv[1]);
	char path[] = "/tmp/unit-source.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, snippet, sizeof snippet - 1) != (ssize_t)(sizeof snippet - 1)) {
		perror(path);
		return 1;
	}
	close(fd);
	struct ls_strtab strings = { 0 };
	struct ls_source_cache *c = ls_source_cache_new(NULL, NULL);
	const char *p = ls_intern(&strings, path);
	const struct ls_source *src = ls_source_get(c, p);
	ok(src != NULL, "the snippet is read");
	if (!src) {
		unlink(path);
		return done_testing();
	}
	ok(ls_source_get(c, p) == src, "a file is read once");
	ok(ls_source_get(c, ls_intern(&strings, "/nonexistent/x.c")) == NULL, "a missing file gives NULL");
	size_t n;
	const struct ls_src_stmt *st = ls_source_stmts(src, &n);
	ok(n == sizeof wants / sizeof wants[0], "%zu loop statements found, want %zu (comments, strings, "
	   "raw strings, macro bodies and a do's closing while are none)", n, sizeof wants / sizeof wants[0]);
	for (size_t i = 0; i < sizeof wants / sizeof wants[0]; i++) {
		const struct ls_src_stmt *s = ls_source_stmt_at(src, wants[i].line);
		ok(s && s->end == wants[i].end && s->kind == wants[i].kind,
		   "line %u: a %s statement ending on line %u (got %s, %u)", wants[i].line,
		   kind_name(wants[i].kind), wants[i].end, s ? kind_name(s->kind) : "none", s ? s->end : 0);
	}
	ok(!ls_source_stmt_at(src, 28), "a label no goto names is no loop");
	ok(ls_source_do_of_while(src, 19) == 17, "the closing while of line 19 belongs to the do of line 17");
	ok(ls_source_do_of_while(src, 15) == 0, "a plain while is no closing while");
	ok(ls_source_calls(src, 16, "f", 1) && !ls_source_calls(src, 6, "n", 1) &&
	   !ls_source_calls(src, 12, "while", 5), "calls are found by name, and only calls");
	ok(ls_source_has_code(src, 8) && !ls_source_has_code(src, 1) && !ls_source_has_code(src, 2),
	   "comment and directive lines hold no code");
	for (size_t i = 0; i < n; i++)
		printf("# %u-%u %s\n", st[i].line, st[i].end, kind_name(st[i].kind));
	search_path(&strings, path);
	ls_source_cache_free(c);
	ls_strtab_free(&strings);
	unlink(path);
	return done_testing();
}
