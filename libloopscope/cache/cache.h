/* cache.h - the analysis cache (cache.c reads, cache_store.c writes,
 * cache_dir.c keeps the directory): each procedure's analysis, keyed by
 * every input of the analysis, in a directory of bounded size. */
#ifndef LOOPSCOPE_CACHE_H
#define LOOPSCOPE_CACHE_H

#include "elf/module.h"

struct ls_directory;
struct ls_proc_done;

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
 * the loop record; jump tables through stack slots and the normalization before
 * Havlak's search change the loops themselves.
 * 10: analysis on demand (issues 23, 24): a directory of every procedure
 * and one record per procedure analyzed, each with its own checksum, so
 * that an entry is read procedure by procedure and grows.
 * 11: a file of DWARF directory entry 0 is no longer joined with a relative
 * DW_AT_comp_dir once more (nptl/lowlevellock.c, was nptl/nptl/...).
 * 12: the source files the loop lines did not find, by DWARF's names, in
 * the head, so that a hit says they are missing as the first run did.
 * 13: the accesses of the procedures asked about (issue 25), one record
 * each beside the procedure's, so that a data view of a cached recording
 * reads no DWARF.
 * 14: the records' offsets, sizes and checksums apart from the directory,
 * for the procedures that have records only (a large library's entry, of
 * which few procedures were analyzed, was mostly an empty directory). */
#define LS_CACHE_FORMAT_VERSION 14

/* cache.c: M's entry, if there is one that holds for M: m->cache (its
 * head checked, its records read later), else NULL and a -v note saying
 * why it missed. */
void ls_cache_open(ls_module *m);
void ls_cache_close(ls_module *m);
/* The path of M's entry (for messages), or "". */
const char *ls_cache_path(const ls_module *m);
/* The entry's directory, its arrays copied into *ENTRIES and *INDEX (the
 * caller's, to free()); false if there is no entry. */
bool ls_cache_directory(const ls_module *m, struct ls_directory *dir, uint64_t **entries,
                        struct ls_proc_range **index);
/* The source files M's entry says the loop lines did not find (sorted,
 * DWARF's names, valid while the entry is open): how many, the first MAX
 * into NAMES. */
size_t ls_cache_missing_sources(const ls_module *m, const char **names, size_t max);
/* The noreturn facts the entry keeps, given to the analysis (cfg.h). */
void ls_cache_seed_facts(const ls_module *m);
/* Procedure I's analysis from the entry: 1 with OUT set (its scope in
 * arena A, NULL if it has no statement), 0 if the entry has none (or a
 * record that does not check: a -v note). */
int ls_cache_load_proc(ls_module *m, size_t i, struct ls_arena *a, struct ls_proc_done *out);

/* cache_accesses.c: the accesses of procedure I (data/accesses.c), read
 * from this run's own or from the entry, for the procedure whose lowest
 * address is PROC (PROC NULL: any, for the fuzz target): NULL if neither
 * has them, or the entry's record does not check (a -v note). */
ls_accesses *ls_cache_load_accesses(const ls_module *m, size_t i, const uint64_t *proc);
/* SET, procedure I's accesses just computed (in SECONDS), kept for the
 * next store (ls_cache_store).  Nothing without the cache. */
void ls_cache_keep_accesses(const ls_module *m, size_t i, const ls_accesses *set, double seconds);
/* The module's keeping of accesses (with the cache: ls_cache_open). */
void ls_cache_accesses_init(ls_module *m);
/* Whether this run computed accesses the entry does not have. */
bool ls_cache_accesses_new(const ls_module *m);
/* With the module (LOOPSCOPE_TIMING: how many were computed, how many read). */
void ls_cache_accesses_free(ls_module *m);

/* cache_store.c: a new entry for M with every procedure analyzed so far,
 * and what its entry and the one now on disk held (warns on failure).
 * Whether there was anything to store (for LOOPSCOPE_TIMING's line). */
bool ls_cache_store(ls_module *m);

/* The fast 64-bit hash of cache keys and checksums (for tests too). */
uint64_t ls_hash64(const void *data, size_t len, uint64_t seed);
/* The checksum a cache file's head must carry: over its head, the
 * checksum field as 0 (for tests). */
uint64_t ls_cache_checksum(const void *file, size_t size);
/* Tests and the fuzz target: FILE (SIZE bytes) made to pass the honest
 * writer's checks for M (M's identity set to the file's: the header's
 * fields, the head's checksum, each record's checksum in the directory),
 * so that its directory and records get tested. */
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
/* DIR opened for the cache, the checks of ls_cache_dir_distrust made on
 * the descriptors themselves (the parent's, then the directory's, opened
 * from it without following a link): its descriptor, or -1 with errno and
 * *WHY (NULL if it only does not exist yet). */
int ls_cache_dir_open(const char *dir, const char **why);
/* Removes temporaries left by killed stores (their process is gone, or
 * they are an hour old). */
void ls_cache_remove_stale(int dirfd, const char *dir);
/* Evicts the least recently used entries until DIR holds at most the
 * bound (opt->cache_max_bytes, $LOOPSCOPE_CACHE_SIZE, 1 GiB); KEEP is not
 * evicted. */
void ls_cache_enforce_bound(const ls_options *opt, int dirfd, const char *dir, const char *keep);

#endif
