/* session.h - the machine a perf.data file recorded: processes, threads,
 * their memory maps over time, and the binaries (dsos) those maps name.
 *
 * session.c replays the side-band records (MMAP, MMAP2, COMM, FORK, EXIT)
 * and the samples in time order, so that every sample sees the maps and the
 * command name its thread had when it was taken.  It knows nothing about
 * symbols or scopes (attribute.c does).
 */
#ifndef PL_SESSION_H
#define PL_SESSION_H

#include "perf_data.h"

#include <stdint.h>
#include <stddef.h>

enum pl_dso_kind {
	PL_DSO_USER,    /* a file-backed user-space mapping */
	PL_DSO_KERNEL,  /* [kernel.kallsyms] */
	PL_DSO_KMODULE, /* a kernel module (.ko) */
	PL_DSO_VDSO,    /* [vdso] */
	PL_DSO_ANON,    /* //anon, [heap], JIT code, ... */
};

typedef struct pl_dso {
	char *name;             /* as recorded */
	const char *short_name; /* basename, or the [bracketed] name */
	enum pl_dso_kind kind;
	uint8_t build_id[20];
	uint8_t build_id_size;
	unsigned index;
	void *attr;             /* attribute.c's state for this binary */
} pl_dso;

/* D's build-id in hex into BUF (41 bytes; "" when it has none). */
static inline void pl_dso_build_id_hex(const pl_dso *d, char *buf)
{
	static const char digits[] = "0123456789abcdef";
	size_t n = d->build_id_size <= 20 ? d->build_id_size : 20;
	for (size_t i = 0; i < n; i++) {
		buf[2 * i] = digits[d->build_id[i] >> 4];
		buf[2 * i + 1] = digits[d->build_id[i] & 15];
	}
	buf[2 * n] = 0;
}

/* The name a binary goes by in files other tools read (json, pprof): its
 * path, and perf report's [kernel.kallsyms] for the kernel (whose map perf
 * records as [kernel.kallsyms]_text). */
static inline const char *pl_dso_path(const pl_dso *d)
{
	return d->kind == PL_DSO_KERNEL ? d->short_name : d->name;
}

typedef struct pl_map {
	uint64_t start, end, pgoff;
	pl_dso *dso;
} pl_map;

/* A process's executable maps, not overlapping: a treap keyed by start,
 * so that an mmap over n maps costs O(log n) (session.c).  A forked
 * process shares its parent's treap until either changes it (REFS: how
 * many pl_maps hold ROOT; NULL when only this one does): a chain of forks
 * of a process with many maps must not cost forks x maps. */
typedef struct pl_maps {
	struct pl_map_node *root;
	size_t n;
	size_t *refs;
} pl_maps;
/* The maps in address order, in a malloc'd array of *N (free it). */
pl_map **pl_maps_list(const pl_maps *mm, size_t *n);

typedef struct pl_proc {
	uint32_t pid;
	pl_maps maps;
	pl_maps all_maps; /* code and data maps: only when samples carry a data address (PERF_SAMPLE_ADDR) */
	unsigned gen;   /* changes whenever maps do (the unwinder rebuilds then) */
	void *unwind;   /* unwind.c's state for this process */
} pl_proc;

typedef struct pl_thread {
	uint32_t tid;
	pl_proc *proc;
	const char *comm; /* interned: compare by pointer */
} pl_thread;

typedef struct pl_session pl_session;

typedef void (*pl_sample_fn)(void *ctx, pl_session *s, const pd_event *ev, pl_thread *t);

pl_session *pl_session_new(pd_reader *r);
/* The map (code or data: [stack], [heap], //anon, a file's) holding data
 * address ADDR of thread T's process, or NULL; kept only when an event's
 * samples carry a data address (perf record -d). */
pl_map *pl_find_data_map(pl_session *s, pl_thread *t, uint64_t addr);
void pl_session_free(pl_session *s);
/* Call FN on every process (to free per-process state hung on it). */
void pl_session_each_proc(pl_session *s, void (*fn)(void *ctx, pl_proc *p), void *ctx);

/* Read the whole file, then replay it in time order, calling ON_SAMPLE for
 * every sample.  Returns the number of samples. */
uint64_t pl_session_run(pl_session *s, pl_sample_fn on_sample, void *ctx);

/* The map holding ADDR in thread T's process (user addresses) or in the
 * kernel (KERNEL != 0).  NULL if none. */
pl_map *pl_find_map(pl_session *s, pl_thread *t, uint64_t addr, int kernel);

size_t pl_session_ndsos(const pl_session *s);
pl_dso *pl_session_dso(const pl_session *s, size_t i);
pd_reader *pl_session_reader(const pl_session *s);
const char *pl_intern(pl_session *s, const char *str);

/* Changes whenever the kernel's maps do. */
unsigned pl_session_kernel_gen(const pl_session *s);
/* Counts for the header of the report. */
/* LOST_SAMPLES records' counts (perf report's "Total Lost Samples"), and
 * the number of LOST records (perf's "lost N chunks"): not added together. */
uint64_t pl_session_lost_samples(const pl_session *s);
uint64_t pl_session_lost_chunks(const pl_session *s);
uint64_t pl_session_bad_records(const pl_session *s);

/* ---- small shared helpers (session.c) ---- */
void *pl_xmalloc(size_t n);
void *pl_xcalloc(size_t n, size_t m);
void *pl_xrealloc(void *p, size_t n);
char *pl_xstrdup(const char *s);

#endif
