/* base.h - what every stage of libloopscope uses: errors and
 * warnings (error.c), memory and running out of it (arena.c), interned
 * strings (strtab.c), demangling (demangle.c), opening input files
 * (file.c), worker threads (workers.c) and the progress meter
 * (progress.c); and how invariants are written (below). */
#ifndef LOOPSCOPE_BASE_H
#define LOOPSCOPE_BASE_H

/* libdwfl first: loopscope.h declares (and so exports) the libdwfl
 * helpers only when it has seen libdwfl.h. */
#include <elfutils/libdwfl.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include "loopscope.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>

/* ---- invariants ---------------------------------------------------------
 *
 * What the code relies on and its types cannot say is an assert() where it
 * is relied on, not only prose: a broken invariant stops at once instead of
 * writing a wrong structure, and the static analyzers see it (their false
 * positives rest on such facts: scripts/check-analyzers).  They stay in
 * release builds (configure never defines NDEBUG): each is a compare or two.
 * Only invariants of the code, never properties of the input: bad input is
 * an error or a warning (loopscope.h, "Errors").  Checks that cost a walk
 * belong in structure/check.c, run with --enable-debug-checks. */
#include <assert.h>

/* ---- the public interface's versions (loopscope.map) -------------------- */

/* A public function whose arguments changed meaning exists once per version
 * node (loopscope.h, "ABI rules"): the current one is defined as NAME_IMPL
 * and exported as NAME@@NODE, the default that programs link against now;
 * compat.c defines the older ones, exported as NAME@OLDNODE for the
 * programs linked before.  The library's own code calls NAME_IMPL or an
 * internal function, never NAME.  The versions exist when the library is
 * built (libloopscope/local.mk defines LS_SYMVER); a stage compiled on its
 * own, into a shared object without loopscope.map (tests/core-loops.py
 * uses loopscope's own code as loops to find), has none. */
#ifdef LS_SYMVER
#define LS_DEFAULT_SYMBOL(name, impl, node)                                                         \
	__typeof__(name) impl __attribute__((visibility("default")));                              \
	__asm__(".symver " #impl ", " #name "@@" #node)
#define LS_COMPAT_SYMBOL(name, impl, node) __asm__(".symver " #impl ", " #name "@" #node)
#else
#define LS_DEFAULT_SYMBOL(name, impl, node) __typeof__(name) impl __attribute__((visibility("default")))
#define LS_COMPAT_SYMBOL(name, impl, node) extern int ls_no_symbol_versions_
#endif

/* The callers' ls_options (of the size they were built with) as this
 * library's: defaults for what they do not have; -1 (LS_ERR_USAGE) if it was
 * not set by ls_options_init.  SRC NULL: the defaults. */
int ls_options_import(ls_options *dst, const ls_options *src, ls_error *err);
/* The smallest ls_options a caller may pass: LOOPSCOPE_0.2's. */
#define LS_OPTIONS_MIN_SIZE (offsetof(ls_options, source_path) + sizeof(const char *))

/* ---- errors and warnings (error.c) ------------------------------------- */

void ls_set_error(ls_error *err, ls_status code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ls_warn(const ls_options *opt, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A part of the debug information that cannot be read and is skipped: a
 * warning, and the first one is also ERR's LS_ERR_DWARF (the open still
 * succeeds: loopscope.h, "Errors"). */
void ls_warn_dwarf(const ls_options *opt, ls_error *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A message for -v only (opt->verbose): why the cache missed, and such. */
void ls_note(const ls_options *opt, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- memory (arena.c) ---------------------------------------------------- */

/* A bump allocator: the scope tree and the strings it points to live as long
 * as the module, and are freed at once.  Not thread-safe: one per thread. */
struct ls_arena {
	struct ls_arena_chunk *chunks;
	char *cur, *end;
};
/* The allocators below never return NULL (they call ls_oom_raise instead):
 * returns_nonnull says so to the compiler and to the analyzers. */
#define LS_NONNULL_RESULT __attribute__((returns_nonnull))
void *ls_arena_alloc(struct ls_arena *a, size_t size) LS_NONNULL_RESULT; /* zeroed, 8-aligned */
char *ls_arena_strdup(struct ls_arena *a, const char *s) LS_NONNULL_RESULT;
void ls_arena_free(struct ls_arena *a);

/* Growable array helper: PTR with room for NEED elements of ELEM bytes
 * (*CAP of them), grown by doubling; never NULL, even for NEED 0. */
void *ls_grow(void *ptr, size_t *cap, size_t need, size_t elem) LS_NONNULL_RESULT;
void *ls_xmalloc(size_t n) LS_NONNULL_RESULT;
void *ls_xcalloc(size_t n, size_t m) LS_NONNULL_RESULT;
char *ls_xstrdup(const char *s) LS_NONNULL_RESULT;

/* Out of memory is an error, not an abort: the library runs inside GDB's
 * process.  The stages allocate with the helpers above, which never return
 * NULL; on failure they call ls_oom_raise(), which longjmps to the calling
 * thread's innermost guard.  Every public entry point that allocates runs
 * its work under a guard and turns the jump into LS_ERR_NOMEM:
 *
 *     struct ls_oom_guard g;
 *     ls_oom_push(&g);
 *     if (setjmp(g.env)) {          // the guard is already popped here
 *             ...free what the handle holds, set LS_ERR_NOMEM...
 *     }
 *     ...work...
 *     ls_oom_pop(&g);
 *
 * Threads: ls_run_workers guards each worker and raises again on the
 * calling thread once all have joined; code that holds a lock while it
 * allocates guards the region to unlock before raising again.  What the
 * interrupted stage had in local variables leaks (the handle's own data is
 * freed): out of memory is rare, and a leak is better than an abort.
 * Without a guard (the unit tests calling a stage directly) it prints a
 * message and aborts, as before. */
#include <setjmp.h>
struct ls_oom_guard {
	jmp_buf env;
	struct ls_oom_guard *outer;
};
void ls_oom_push(struct ls_oom_guard *g);
void ls_oom_pop(struct ls_oom_guard *g);
_Noreturn void ls_oom_raise(void);
/* The same guards catch a read of a file mapping that shrank under us (a
 * binary or debug file truncated during the analysis: SIGBUS, sigbus.c).
 * A guard that lands asks why: out of memory, or SIGBUS at ADDR (whose
 * file the landing site tells: ls_elf_mapped_file).  A guard that only
 * cleans up jumps on with ls_guard_rethrow, which keeps the cause. */
enum ls_guard_kind { LS_GUARD_NOMEM, LS_GUARD_BUS };
struct ls_guard_cause {
	enum ls_guard_kind kind;
	const void *addr;            /* LS_GUARD_BUS: the address read */
};
struct ls_guard_cause ls_guard_cause(void);
void ls_guard_set_cause(struct ls_guard_cause c); /* before a rethrow on another thread */
_Noreturn void ls_guard_rethrow(void);
/* From the SIGBUS handler: jumps to this thread's guard; false if it has none. */
bool ls_guard_bus(const void *addr);
/* Installs the SIGBUS handler once per process (sigbus.c): what reads a
 * mapping under a guard calls it first.  A SIGBUS outside every guard goes
 * to the handler that was there before, or kills as it would have. */
void ls_sigbus_catch(void);
/* For the tests: the Nth allocation through the helpers above from now
 * (1 = the next one) fails as if malloc had; 0 turns it off.  Returns how
 * many were left of the previous countdown (nonzero: it never fired). */
unsigned long ls_oom_fail_at(unsigned long n);

/* ---- binary search ------------------------------------------------------- */

/* The little-endian signed 32-bit value at P (x86-64's rel32 and disp32,
 * the kernel's relative tables' entries). */
static inline int32_t ls_s32le(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* The index of the first of the N elements at BASE (STRIDE bytes apart,
 * sorted by the uint64_t at OFFSET in each) whose key is at least KEY, or
 * with ABOVE above KEY; N if none.  What the stages' lookups share: "the
 * entry at ADDR" (LS_FIRST_AT_LEAST on the entries), "the range holding
 * ADDR" (LS_FIRST_ABOVE on the ranges' ends, then its start <= ADDR), "the
 * last row at or below ADDR" (LS_FIRST_ABOVE, minus one).  Inline, so that
 * each caller's search is as fast as its own loop was. */
static inline size_t ls_bsearch_u64(const void *base, size_t n, size_t stride, size_t offset, uint64_t key,
                                    bool above)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;
		memcpy(&k, (const char *)base + mid * stride + offset, sizeof k);
		if (above ? k <= key : k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
#define LS_FIRST_AT_LEAST(array, n, field, key) LS_BSEARCH_(array, n, field, key, false)
#define LS_FIRST_ABOVE(array, n, field, key) LS_BSEARCH_(array, n, field, key, true)
/* (the key must be a 64-bit field: a compile error otherwise) */
#define LS_BSEARCH_(array, n, field, key, above)                                                   \
	((void)sizeof(char[sizeof((array)->field) == sizeof(uint64_t) ? 1 : -1]),                  \
	 ls_bsearch_u64((array), (n), sizeof *(array), offsetof(__typeof__(*(array)), field), (key), (above)))

/* ---- strings (strtab.c) -------------------------------------------------- */

/* Interned strings: one copy of every file name and procedure name, so that
 * scopes can compare names by pointer. */
struct ls_strtab {
	struct ls_arena arena;
	const char **slots;
	uint32_t *hashes; /* each slot's string's hash (low half): no hashing again to grow, few strcmp */
	size_t nslots, count;
};
const char *ls_intern(struct ls_strtab *t, const char *s);
/* Makes room for N more strings at once: a caller about to intern many
 * (a symbol table's names) saves the table's rehashes on the way. */
void ls_strtab_reserve(struct ls_strtab *t, size_t n);
/* NAME without its "@VERSION" or "@@VERSION" suffix, interned. */
const char *ls_intern_unversioned(struct ls_strtab *t, const char *name);
void ls_strtab_free(struct ls_strtab *t);

/* The demangled form of a linkage name, or NULL if NAME is not mangled.
 * Free with free(). */
char *ls_demangle(const char *name);

/* ---- opening input files (file.c) ----------------------------------------- */

#include <sys/stat.h>
/* Opens PATH read-only if it is a regular file, never blocking on a FIFO
 * or touching a device, nor reading /proc or /sys (file.c): -1 with *WHY
 * ("a FIFO", strerror) and errno (EISDIR, EINVAL: not regular; EOPNOTSUPP:
 * /proc or the like; else open's) otherwise.  ST (may be NULL)
 * gets the file's fstat.  The front ends' face: ls_open_regular. */
int ls_open_input(const char *path, struct stat *st, const char **why);
/* The same with ls_open_regular's FLAGS (LS_OPEN_SOURCE, LS_OPEN_PSEUDO_FS);
 * errno EOPNOTSUPP for a file of /proc or /sys, EFBIG for a source too big
 * (*WHY says its size). */
int ls_open_input_flags(const char *path, unsigned flags, struct stat *st, const char **why);
/* NAME in the directory DIRFD (a cache entry in the checked cache
 * directory), a link at NAME refused ("a symbolic link"), as ls_open_input. */
int ls_open_input_at(int dirfd, const char *name, struct stat *st, const char **why);
/* Whether PATH exists and is a FIFO, device or socket (*WHAT says which). */
bool ls_path_is_special(const char *path, const char **what);
const char *ls_file_type_name(mode_t mode);

/* workers.c: FN on NWORKERS threads (the caller is worker 0), worker T
 * getting ARGS + T * ARG_SIZE; returns when all are done. */
#define LS_MAX_WORKERS 64
/* How many workers: opt->jobs or the cores, at most one per
 * MIN_ITEMS_PER_WORKER items (0: one per item), at least one. */
int ls_worker_count(const ls_options *opt, size_t nitems, size_t min_items_per_worker);
void ls_run_workers(int nworkers, void *(*fn)(void *), void *args, size_t arg_size);

/* progress.c: a one-line progress meter on stderr, only when it is a tty. */
struct ls_progress {
	bool on;
	const char *what;
	size_t total, done;
	double last;
	pthread_mutex_t lock;
	int (*fn)(void *ctx, size_t done, size_t total); /* ls_options.progress_fn */
	void *ctx;
	int stop; /* fn asked to stop; read with ls_progress_stopped */
};
void ls_progress_start(struct ls_progress *p, bool wanted, const char *what, size_t total);
void ls_progress_add(struct ls_progress *p, size_t n);
void ls_progress_end(struct ls_progress *p);
bool ls_progress_stopped(struct ls_progress *p);

#endif
