/* cache.h - the analysis cache (cache.c, cache_dir.c): reads and
 * writes m->root, keyed by build-id, in a directory of bounded size. */
#ifndef LOOPSCOPE_CACHE_H
#define LOOPSCOPE_CACHE_H

#include "elf/module.h"

/* 5: issue 14's checked header (checksum, file identity, producer) with
 * issue 8a's scope record (unresolved_jumps), and issue 8b's loops placed
 * by voting instructions, new loop lines, line-0 code in [no line]
 * statements: a tree cached by an older loopscope must not be read back.
 * 6: the lookup index is stored too (its order of the statement ranges).
 * 7: every input is in the key (issue 21): the debug file found and its
 * identity, read_sources and source_path, the source files looked at.
 * 8: a statement's inlined calls cut (issue 28), a procedure's first
 * unresolved jump (its warning on a hit).
 * 9: issue 22's loop marks (compiler-made, line guessed, part N of M) in
 * the loop record; jump tables through stack slots and Havlak's
 * normalization change the loops themselves. */
#define LS_CACHE_FORMAT_VERSION 9

/* cache.c: one entry per module; every mismatch is a miss (a -v note). */
int ls_cache_load(ls_module *m);                  /* 1 loaded, 0 miss */
void ls_cache_store(ls_module *m);                /* warns on failure */
/* The fast 64-bit hash of cache keys and checksums (for tests too). */
uint64_t ls_hash64(const void *data, size_t len, uint64_t seed);
/* The checksum a cache file of SIZE bytes must carry (for tests). */
uint64_t ls_cache_checksum(const void *file, size_t size);
/* Tests and the fuzz target: FILE made to pass the honest writer's checks
 * for M (M's identity set to the file's), so its records get tested. */
int ls_cache_forge(void *file, size_t size, ls_module *m);
/* What a cache file says of itself (cache.c), for the listing. */
struct ls_cache_meta {
	char binary[4096];         /* the binary's path when stored ("" if unreadable) */
	char build_id[129];
	bool loops;
	const char *problem;       /* NULL if the file would load (as far as its own bytes go) */
	char why[4096 + 128];      /* where PROBLEM names a file */
};
void ls_cache_read_meta(const char *file, bool full_check, struct ls_cache_meta *meta);

/* cache_dir.c: the directory (0700), its temporaries and its size bound. */
bool ls_cache_dir_of(const ls_options *opt, char *buf, size_t size);
/* The bound (opt->cache_max_bytes, $LOOPSCOPE_CACHE_SIZE, 1 GiB); OPT as
 * ls_options_import made it, or NULL. */
uint64_t ls_cache_bound_of(const ls_options *opt);
int ls_cache_dir_make(const char *dir);            /* 0, or -1 with errno */
/* Why DIR must not be used as the cache (another user's, writable by
 * others, a symbolic link, in a directory another user controls), as a
 * phrase; NULL if it may (missing: ls_cache_dir_make will make it). */
const char *ls_cache_dir_distrust(const char *dir);
/* Removes temporaries left by killed stores (their process is gone, or
 * they are an hour old). */
void ls_cache_remove_stale(const char *dir);
/* Evicts the least recently used entries until DIR holds at most the
 * bound (opt->cache_max_bytes, $LOOPSCOPE_CACHE_SIZE, 1 GiB); KEEP is not
 * evicted. */
void ls_cache_enforce_bound(const ls_options *opt, const char *dir, const char *keep);

#endif
