/* internal.h - the data that flows between libloopscope's stages.
 *
 * One stage per file; each owns one part of struct ls_module:
 *
 *   module.c       open the ELF with libdwfl, find debug info      -> elf, dwfl, text
 *   elf_file.c     the public ls_file: build-id, PT_LOAD, sections, symbols (no analysis)
 *   procs.c        procedures from DWARF subprograms and symbols   -> procs
 *   linemap.c      the sanitized line table of every CU            -> lines
 *   inline_tree.c  DW_TAG_inlined_subroutine trees, address-indexed -> inl
 *   decode_x86.c   instruction decoding with libopcodes (decode.h)
 *   cfg.c          one CFG per procedure                           (per proc, transient)
 *   loop_forest.c  Havlak loop nesting forest, irreducible loops    (per proc, transient)
 *   structure.c    places every instruction: proc > inline/alien > loop > stmt
 *   normalize.c    coalesces, merges and prunes the scope tree
 *   analyze.c      runs the per-procedure stages on N threads, with progress
 *   scope.c        the scope tree: nodes, ranges, accessors
 *   lookup.c       address -> statement index
 *   cache.c        saves and loads the scope tree, keyed by build-id
 *   output_*.c     text, JSON and HPCToolkit XML writers
 *
 * Nothing declared here is exported: the stages are compiled with
 * -fvisibility=hidden and libloopscope.so exports loopscope.h alone
 * (libloopscope/loopscope.map).  The unit tests link the stages directly, from the
 * convenience library libloopscope-internal.la.
 */
#ifndef LOOPSCOPE_INTERNAL_H
#define LOOPSCOPE_INTERNAL_H

/* libdwfl first: loopscope.h declares (and so exports) the libdwfl
 * helpers only when it has seen libdwfl.h. */
#include <elfutils/libdwfl.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include "loopscope.h"

#include <stdarg.h>
#include <stdbool.h>
#include <pthread.h>

/* 5: issue 14's checked header (checksum, file identity, producer) with
 * issue 8a's scope record (unresolved_jumps), and issue 8b's loops placed
 * by voting instructions, new loop lines, line-0 code in [no line]
 * statements: a tree cached by an older loopscope must not be read back. */
#define LS_CACHE_FORMAT_VERSION 5

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
void *ls_arena_alloc(struct ls_arena *a, size_t size); /* zeroed, 8-aligned; ls_oom_raise on OOM */
char *ls_arena_strdup(struct ls_arena *a, const char *s);
void ls_arena_free(struct ls_arena *a);

/* Growable array helper: ensures room for one more element. */
void *ls_grow(void *ptr, size_t *cap, size_t need, size_t elem);
void *ls_xmalloc(size_t n);  /* never NULL: ls_oom_raise on OOM */
void *ls_xcalloc(size_t n, size_t m);
char *ls_xstrdup(const char *s);

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
/* For the tests: the Nth allocation through the helpers above from now
 * (1 = the next one) fails as if malloc had; 0 turns it off.  Returns how
 * many were left of the previous countdown (nonzero: it never fired). */
unsigned long ls_oom_fail_at(unsigned long n);

/* ---- strings (strtab.c) -------------------------------------------------- */

/* Interned strings: one copy of every file name and procedure name, so that
 * scopes can compare names by pointer. */
struct ls_strtab {
	struct ls_arena arena;
	const char **slots;
	size_t nslots, count;
};
const char *ls_intern(struct ls_strtab *t, const char *s);
/* NAME without its "@VERSION" or "@@VERSION" suffix, interned. */
const char *ls_intern_unversioned(struct ls_strtab *t, const char *name);
void ls_strtab_free(struct ls_strtab *t);

/* The demangled form of a linkage name, or NULL if NAME is not mangled.
 * Free with free(). */
char *ls_demangle(const char *name);

/* ---- opening input files (file.c) ----------------------------------------- */

#include <sys/stat.h>
/* Opens PATH read-only if it is a regular file, never blocking on a FIFO
 * or touching a device: -1 with *WHY ("a FIFO", strerror) otherwise.
 * ST (may be NULL) gets the file's fstat. */
int ls_open_regular(const char *path, struct stat *st, const char **why);
/* Whether PATH exists and is a FIFO, device or socket (*WHAT says which). */
bool ls_path_is_special(const char *path, const char **what);
const char *ls_file_type_name(mode_t mode);

/* ---- the ELF file (module.c) ---------------------------------------------- */

/* An executable section's bytes at its link-time address. */
struct ls_text {
	uint64_t addr;
	uint64_t size;
	const uint8_t *data; /* owned by libelf */
	const char *name;
};

/* ---- relocatable objects (relocate.c) --------------------------------------- */

/* An undefined symbol of an ET_REL file at the address relocate.c gave it. */
struct ls_extern {
	uint64_t addr;
	const char *name;          /* interned */
};

/* Applies the relocations of an ET_REL file's executable sections to private
 * copies of their bytes (m->text[].data), giving undefined symbols addresses
 * of their own (m->ext).  Nothing to do for other files. */
void ls_relocate_text(ls_module *m); /* cannot fail: bad relocations are skipped */
/* The undefined symbol relocate.c placed at ADDR, or NULL. */
const char *ls_extern_name(const ls_module *m, uint64_t addr);
void ls_relocate_free(ls_module *m);

/* ---- procedures (procs.c) ------------------------------------------------ */

struct ls_proc {
	const char *name;          /* demangled, interned */
	const char *linkage_name;  /* mangled, interned; NULL if same as name */
	const char *file;          /* DW_AT_decl_file, interned; NULL without DWARF */
	unsigned line;             /* DW_AT_decl_line */
	ls_range *ranges;          /* sorted; [0] holds the entry; a .cold part is another range */
	size_t nranges;
	uint64_t entry;            /* DW_AT_low_pc / entry_pc or symbol value */
	bool from_dwarf;
	bool noreturn;             /* DW_AT_noreturn or a known non-returning name */
	bool is_plt;               /* name@plt */
	const struct ls_inl_node *die_node; /* its subprogram node in the inline tree, or NULL */
};

struct ls_procs {
	struct ls_proc *procs;     /* sorted by entry */
	size_t nprocs;
	/* Address index: each range of each proc, sorted by lo, non-overlapping
	 * (overrunning DWARF ranges clamped at the next symbol, thesis 4.3). */
	struct ls_proc_range { uint64_t lo, hi; uint32_t proc; } *index;
	size_t nindex;
};

void ls_procs_build(ls_module *m); /* cannot fail: bad entries are skipped */
/* Whether a function named NAME never returns (known names; in kernel code,
 * objtool's list too). */
bool ls_noreturn_name(const ls_module *m, const char *name);
const struct ls_proc *ls_procs_find(const struct ls_procs *p, uint64_t addr);
/* The procedure whose entry is exactly ADDR, or NULL (tail-call detection). */
const struct ls_proc *ls_procs_at_entry(const struct ls_procs *p, uint64_t addr);
void ls_procs_free(struct ls_procs *p);

/* ---- the symbol table by name and address (symbols.c) ---------------------- */

/* Built on first use, from the ELF symbol table (the same with and without
 * the cache); freed by ls_symindex_free. */
struct ls_symindex;
/* The symbol NAME (a function first, a global one first): its address and
 * st_size; -1 if there is none. */
int ls_symindex_find(const ls_module *m, const char *name, uint64_t *addr, uint64_t *size);
void ls_symindex_free(ls_module *m);

/* ---- line map (linemap.c) ------------------------------------------------ */

struct ls_line_row {
	uint64_t addr;       /* the row covers [addr, next row's addr) */
	const char *file;    /* absolute, interned; NULL marks the end of a sequence */
	uint32_t line;
	uint16_t column;
	uint16_t flags;      /* LS_LINE_* */
};
#define LS_LINE_IS_STMT 1

struct ls_linemap {
	struct ls_line_row *rows; /* sorted by addr; gaps marked by rows with file == NULL */
	size_t nrows;
	/* Statement rows (is_stmt, line > 0) that a later row at the same
	 * address hides, in the same file and above its line: statements that
	 * begin there with no code of their own.  gcc puts a `for (;;)`,
	 * `while (1)` or `do` line at its loop's header this way.  Sorted by
	 * addr; the loop-line rules read them. */
	struct ls_line_row *hidden;
	size_t nhidden;
};

int ls_linemap_build(ls_module *m, ls_error *err);
/* NAME made absolute against DIR (when relative) with ./ and ../ resolved,
 * interned in T: how line tables and DW_AT_call_file/decl_file are shown. */
const char *ls_source_path(struct ls_strtab *t, const char *dir, const char *name);
/* The row covering ADDR, or NULL if ADDR is in no sequence. O(log n). */
const struct ls_line_row *ls_linemap_find(const struct ls_linemap *lm, uint64_t addr);
/* The hidden statement rows at exactly ADDR: their count, *FIRST the first. */
size_t ls_linemap_hidden_at(const struct ls_linemap *lm, uint64_t addr, const struct ls_line_row **first);
void ls_linemap_free(struct ls_linemap *lm);

/* ---- inline tree (inline_tree.c) ------------------------------------------- */

enum ls_inl_kind { LS_INL_SUBPROGRAM, LS_INL_INLINED, LS_INL_LEXICAL };

struct ls_inl_node {
	enum ls_inl_kind kind;
	const struct ls_inl_node *parent; /* NULL for a subprogram */
	unsigned depth;                   /* subprogram 0; counts inlined nodes only */
	const char *name;                 /* callee, demangled, interned */
	const char *linkage_name;         /* interned or NULL */
	const char *decl_file;            /* callee's DW_AT_decl_file, interned */
	unsigned decl_line;
	const char *call_file;            /* inlined: DW_AT_call_file, interned */
	unsigned call_line, call_column;
	Dwarf_Off die;                    /* offset of the DIE, for identity and debugging */
};

struct ls_inl_seg {
	uint64_t lo, hi;                  /* half-open, sorted, non-overlapping */
	const struct ls_inl_node *node;   /* the deepest node covering [lo, hi) */
};

/* A subprogram with code as the inline-tree walk found it: procs.c builds
 * the procedures from these, so that .debug_info is walked only once. */
struct ls_inl_sub {
	const struct ls_inl_node *node;   /* its LS_INL_SUBPROGRAM node */
	ls_range *ranges;                 /* sorted by lo (DW_AT_ranges or low/high_pc) */
	size_t nranges;
	uint64_t entry;                   /* DW_AT_entry_pc, else DW_AT_low_pc, else lowest range */
	bool noreturn;                    /* DW_AT_noreturn */
};

struct ls_inline_index {
	struct ls_inl_seg *segs;
	size_t nsegs;
	struct ls_inl_node **nodes;       /* all nodes (owned), for freeing and walking */
	size_t nnodes;
	struct ls_inl_sub *subs;          /* every subprogram with code, in DIE order */
	size_t nsubs;
	struct ls_arena arena;            /* holds the nodes and the subs' ranges */
};

int ls_inline_build(ls_module *m, ls_error *err);
/* The deepest node covering ADDR (a subprogram node if none inlined), or NULL. */
const struct ls_inl_node *ls_inline_find(const struct ls_inline_index *ix, uint64_t addr);
void ls_inline_free(struct ls_inline_index *ix);

/* ---- the scope tree (scope.c) ------------------------------------------- */

struct ls_loop_info {
	uint64_t header;
	uint64_t *entries;   size_t nentries;
	ls_edge *backedges;  size_t nbackedges;
	ls_edge *exits;      size_t nexits;
	unsigned depth;
	bool irreducible;
};

struct ls_scope {
	ls_scope_kind kind;
	struct ls_scope *parent, *first_child, *last_child, *next_sibling;
	const char *name;          /* proc, inline */
	const char *linkage_name;  /* proc */
	const char *file;
	unsigned line;
	const char *call_file;     /* inline */
	unsigned call_line, call_column;
	ls_range *ranges;          /* sorted, merged */
	size_t nranges, cap_ranges;
	struct ls_loop_info *loop; /* loop */
	unsigned unresolved_jumps; /* proc: indirect jumps that look like jump tables but have no
	                            * known targets (cfg.c): its loops may be incomplete */
	const void *key;           /* builder's identity of the node (inl node, loop); not saved */
};

struct ls_scope *ls_scope_new(struct ls_arena *a, ls_scope_kind kind, struct ls_scope *parent);
void ls_scope_add_child(struct ls_scope *parent, struct ls_scope *child);
void ls_scope_unlink(struct ls_scope *child);
/* Append [lo,hi) to S's ranges, merging with the last one when adjacent. */
void ls_scope_add_range(struct ls_arena *a, struct ls_scope *s, uint64_t lo, uint64_t hi);
/* Sort and merge S's ranges. */
void ls_scope_normalize_ranges(struct ls_scope *s);

/* ---- the lookup index (lookup.c) ------------------------------------------ */

struct ls_stmt_seg {
	uint64_t lo, hi;
	const struct ls_scope *stmt;
};
struct ls_lookup_index {
	struct ls_stmt_seg *segs;
	size_t nsegs;
};
/* Index every statement range of the tree below ROOT. */
int ls_lookup_index_build(struct ls_lookup_index *ix, const struct ls_scope *root, ls_error *err);
void ls_lookup_index_free(struct ls_lookup_index *ix);

/* ---- invariants (check.c) --------------------------------------------------- */

/* What ls_check_module checks: the indexes the analysis reads, and the
 * scope tree it makes. */
enum ls_check {
	LS_CHECK_INLINE_SEGMENTS, /* sorted, non-overlapping, none lexical */
	LS_CHECK_INLINE_NODES,    /* subprograms are roots, inlined depth = parent + 1 */
	LS_CHECK_PROCS,           /* address index and entries sorted, unique */
	LS_CHECK_LINES,           /* rows sorted, in text, gaps single, table closed */
	LS_CHECK_TREE,            /* module > file > proc > ...; links, ranges, loops */
	LS_NCHECKS
};
/* NULL if invariant WHICH holds in M, else where it breaks (a thread's
 * static buffer).  ABSOLUTE_FILES: line rows must name absolute files. */
const char *ls_check_module(const ls_module *m, enum ls_check which, bool absolute_files);
/* configure --enable-debug-checks: every check, at the end of each
 * ls_module_open, aborting with the broken one; otherwise nothing. */
void ls_debug_check_module(const ls_module *m);

/* ---- the module ------------------------------------------------------------ */

struct ls_module {
	ls_options opt;
	char *path;                /* absolute */
	char *debug_path;
	char *build_id;            /* hex */
	int fd;
	Dwfl *dwfl;
	Dwfl_Module *dwmod;
	Elf *elf;                  /* the main file (code) */
	Dwarf *dwarf;              /* NULL without debug info */
	Dwarf_Addr bias;           /* dwfl address = link-time address + bias */
	struct stat file_stat;     /* module.c: fstat of the file analyzed, when opened */
	Dwfl_Callbacks dwfl_callbacks; /* module.c: libdwfl keeps a pointer to it */
	char *debuginfo_path;      /* module.c: opt.debug_file_path's copy, for dwfl_callbacks */
	GElf_Ehdr ehdr;
	bool relocatable;
	bool kernel;               /* vmlinux or a kernel module (module.c) */

	struct ls_text *text;      /* executable sections, sorted by addr */
	size_t ntext;
	/* relocate.c (ET_REL only): undefined symbols by address, and the
	 * relocated copies of the executable sections that text[].data points to. */
	struct ls_extern *ext;
	size_t next;
	uint8_t **reloc_bufs;
	size_t nreloc_bufs;
	/* cfg.c: data sections for jump tables and the proved-noreturn facts,
	 * built lazily by the first CFG; freed by ls_cfg_module_free. */
	struct ls_cfg_module *cfg_module;
	/* source.c: source files read for the loop lines, during the
	 * analysis only (NULL otherwise). */
	struct ls_source_cache *sources;
	bool debug_loop_lines;     /* $LOOPSCOPE_DEBUG_LOOP_LINES: each loop's line and rule on stderr */

	struct ls_strtab strings;
	struct ls_symindex *symindex; /* symbols.c, built on first use */
	struct ls_procs procs;
	struct ls_linemap lines;
	struct ls_inline_index inl;

	/* The result. */
	struct ls_arena arena;     /* scopes and their ranges */
	struct ls_arena *thread_arenas; /* one per analysis thread, freed with the module */
	size_t nthread_arenas;
	struct ls_scope *root;
	struct ls_lookup_index lookup;
	bool from_cache;
	void *cache_blob;          /* loaded cache file (strings point into it) */
	size_t cache_blob_size;
};

/* module.c: open and index the ELF; fills path..text. */
int ls_elf_open(ls_module *m, const char *path, ls_error *err);
void ls_elf_close(ls_module *m);
/* The section holding ADDR, or NULL. */
const struct ls_text *ls_text_find(const ls_module *m, uint64_t addr);

/* analyze.c: build m->root from procs, lines, inline tree, CFGs and loops. */
int ls_analyze(ls_module *m, ls_error *err);

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
};
void ls_cache_read_meta(const char *file, bool full_check, struct ls_cache_meta *meta);

/* cache_dir.c: the directory (0700), its temporaries and its size bound. */
bool ls_cache_dir_of(const ls_options *opt, char *buf, size_t size);
int ls_cache_dir_make(const char *dir);            /* 0, or -1 with errno */
/* Removes temporaries left by killed stores (their process is gone, or
 * they are an hour old). */
void ls_cache_remove_stale(const char *dir);
/* Evicts the least recently used entries until DIR holds at most the
 * bound (opt->cache_max_bytes, $LOOPSCOPE_CACHE_SIZE, 1 GiB); KEEP is not
 * evicted. */
void ls_cache_enforce_bound(const ls_options *opt, const char *dir, const char *keep);

/* output_*.c */
int ls_write_text(const ls_module *m, FILE *out, ls_error *err);
int ls_write_json(const ls_module *m, FILE *out, ls_error *err);
int ls_write_xml(const ls_module *m, FILE *out, ls_error *err);
/* Writes S as a JSON string (with quotes) to OUT. */
void ls_json_string(FILE *out, const char *s);

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
