/* source.h - source files read as C/C++ tokens, for the loop-line rules
 * (source.c). */
#ifndef LOOPSCOPE_SOURCE_H
#define LOOPSCOPE_SOURCE_H

#include "support/base.h"

/* A loop statement of a source file: the line it begins on and the line
 * its body ends on. */
enum { LS_SRC_FOR = 1, LS_SRC_WHILE, LS_SRC_DO, LS_SRC_LABEL /* a goto's target */ };
struct ls_src_stmt {
	uint32_t line, end;
	uint8_t kind;
};

struct ls_source;
struct ls_source_cache;

/* A file the reader looked at, and what it was: what the loop lines read
 * (or found missing), kept with the cached tree, which a change of any of
 * them makes stale. */
struct ls_source_probe {
	char *path;
	bool exists;
	uint32_t mode;             /* st_mode (a directory, a FIFO: not read) */
	uint64_t size, ino;
	int64_t mtime_sec, mtime_nsec;
};

/* SEARCH_PATH: directories (colon-separated, or NULL) where sources are
 * looked for when DWARF's path cannot be read.  OPT's sink gets the
 * warnings (a source too big, a FIFO or a /proc file where one should be). */
struct ls_source_cache *ls_source_cache_new(const ls_options *opt, const char *search_path);
void ls_source_cache_free(struct ls_source_cache *c);
/* The files looked at so far, in order (*N of them): the caller's, to free
 * with ls_source_probes_free. */
struct ls_source_probe *ls_source_cache_take_probes(struct ls_source_cache *c, size_t *n);
void ls_source_probes_free(struct ls_source_probe *p, size_t n);
/* The file at PATH (interned: the cache compares pointers), or found under
 * the search path, read once; NULL if it cannot be read.  Thread-safe. */
const struct ls_source *ls_source_get(struct ls_source_cache *c, const char *path);

/* How many of the files asked for could not be read (not there, not
 * under the search path); the first MAX of them, by name, into NAMES. */
size_t ls_source_missing(struct ls_source_cache *c, const char **names, size_t max);

/* Every loop statement, sorted by line (then end). */
const struct ls_src_stmt *ls_source_stmts(const struct ls_source *src, size_t *n);
/* The loop statement beginning on LINE (the shortest), or NULL. */
const struct ls_src_stmt *ls_source_stmt_at(const struct ls_source *src, unsigned line);
/* LINE is a do/while's closing `while`: the line of its `do`, else 0. */
unsigned ls_source_do_of_while(const struct ls_source *src, unsigned line);
/* Whether LINE holds any token (outside comments and directives). */
bool ls_source_has_code(const struct ls_source *src, unsigned line);
/* Whether LINE begins with if, else, switch, case or default (after a
 * closing brace): a statement of the body, no macro's loop. */
bool ls_source_begins_control(const struct ls_source *src, unsigned line);
/* Whether LINE calls NAME (NAME followed by '('; not obj.NAME(),
 * p->NAME() or X::NAME(), which call another function of that name). */
bool ls_source_calls(const struct ls_source *src, unsigned line, const char *name, size_t len);

#endif
