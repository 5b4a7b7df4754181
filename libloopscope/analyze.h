/* analyze.h - the per-procedure analysis (analyze.c): each procedure once,
 * from the cache or through the per-procedure stages, on demand (a lookup
 * asks for the procedure holding its address) or all at once (on N
 * threads); and the tree above the procedures, once all are there. */
#ifndef LOOPSCOPE_ANALYZE_H
#define LOOPSCOPE_ANALYZE_H

#include "elf/module.h"
#include "structure/lookup.h"

/* One analyzed procedure, published once and never changed after. */
struct ls_proc_done {
	struct ls_scope *scope;      /* its proc scope; NULL: no statement (not in the tree) */
	struct ls_stmt_seg *segs;    /* its statements' ranges by address, overlaps clipped */
	size_t nsegs;
	bool from_cache;             /* read from the cache entry m->cache */
};

/* The procedures of the module: from m->procs (dwarf/procs.c), or from
 * the cache entry, which stores them so that a lookup needs neither the
 * DWARF nor the symbols to know which procedure holds an address. */
struct ls_directory {
	size_t nprocs;
	const uint64_t *entries;               /* each procedure's entry, ascending */
	const struct ls_proc_range *index;     /* who owns each address (procs.h) */
	size_t nindex;
};

struct ls_file_scopes; /* analyze.c: file name -> its file scope */

struct ls_analysis {
	pthread_mutex_t lock;            /* everything below but done[]'s reads */
	struct ls_directory dir;
	uint64_t *own_entries;           /* the directory's arrays when the cache gave them */
	struct ls_proc_range *own_index;
	struct ls_proc_done **done;      /* per procedure: NULL until analyzed (atomic) */
	struct ls_arena arena;           /* what is made under the lock */
	struct ls_arena *worker_arenas;  /* the workers' of every batch, freed with the module */
	size_t nworker_arenas, cap_worker_arenas;
	struct ls_decoder *dec;          /* the one-procedure analyses' */
	bool dec_made;
	bool dir_ready;                  /* dir is there (atomic: lookups read it without the lock) */
	bool indexes;                    /* the DWARF and symbol stages ran: m->procs is there */
	bool broken;                     /* they failed, or memory ran out in the middle */
	ls_error error;                  /* the first failure of an analysis on demand */
	size_t nanalyzed;                /* procedures analyzed here (not read from the cache) */
	size_t nloaded;                  /* procedures read from the cache */
	double demand_seconds;           /* spent in analyses on demand (LOOPSCOPE_TIMING) */
	double progress_last;            /* when a lookup last called opt.progress_fn */
	bool complete;                   /* every procedure is here, m->root is the whole tree */
	struct ls_scope *root;
	struct ls_file_scopes *files;
	/* Statements outside every procedure's addresses: the fragments of
	 * code that procedures jump into (cfg.c), by address; made with the
	 * whole tree. */
	struct ls_stmt_seg *frags;
	size_t nfrags;
	/* A module opened whole: every statement of the tree in one index,
	 * overlaps clipped across procedures, made with the tree.  Where two
	 * procedures' statements overlap (nested symbols sharing code, as
	 * vmlinux's secondary_startup_64 and secondary_startup_64_no_verify),
	 * it answers as the whole analysis always has: the statement that
	 * starts first.  On demand a lookup has only its owner's statements,
	 * and answers with the owner's there. */
	struct ls_lookup_index whole;
};

/* Sets up M's analysis: the directory from the cache entry (m->cache) or,
 * without one, from the DWARF and symbol stages: run now, or on demand
 * when something first needs the directory (a module opened only for its
 * symbols, as fp-repair's PLT resolution opens every library a process
 * maps, costs its ELF file alone).  -1 with ERR. */
int ls_analysis_init(ls_module *m, ls_error *err);
void ls_analysis_free(ls_module *m);
/* The procedure owning ADDR (an index of the directory); false if none. */
bool ls_analysis_owner(const ls_module *m, uint64_t addr, size_t *proc);
/* Procedure I, analyzed now if it was not: NULL if that failed (the
 * module keeps the first failure: ls_module_error). */
const struct ls_proc_done *ls_analysis_get(const ls_module *m, size_t proc);
/* The procedures owning ADDRS (N of them) analyzed, on N threads. */
int ls_analyze_addrs(ls_module *m, const uint64_t *addrs, size_t n, ls_error *err);
/* Every procedure analyzed, and the tree above them made (m->root). */
int ls_analyze_all(ls_module *m, ls_error *err);
/* Whether ADDR, owned by no procedure, may be in a fragment of code a
 * procedure jumped into (its section is one of those, cfg.c). */
bool ls_analysis_fragment_section(const ls_module *m, uint64_t addr);
/* The index of the fragments' statements, the whole tree made first. */
const struct ls_stmt_seg *ls_analysis_fragments(const ls_module *m, size_t *n);
/* The DWARF and symbol stages, once (under the analysis lock). */
int ls_analysis_indexes(ls_module *m, ls_error *err);
/* On demand, before the procedure table is read without the lock (a
 * symbol lookup by name that the symbol table could not answer): the
 * DWARF and symbol stages run if they have not, so that the name is
 * looked for where the whole analysis looks.  A failure is kept for
 * ls_module_error. */
void ls_analysis_want_indexes(const ls_module *m);
/* The source files the analysis looked at so far into m->source_probes
 * (sorted by path, each once), for the cache store. */
void ls_analysis_keep_probes(ls_module *m);
/* api.c: ERR for a guard that landed: out of memory, or (SIGBUS) the
 * binary or its debug file truncated while being read. */
void ls_guard_error(const ls_module *m, const char *path, ls_error *err);
/* A tree made by hand (unit tests): taken as the whole analysis, the
 * directory made from its procedures. */
void ls_analysis_adopt_tree(ls_module *m);

#endif
