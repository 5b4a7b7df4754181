/* attribute.h - what the three stages of `perf loops report`'s attribution
 * share, private to perf-plugin: find-dso.c (the file and structure behind
 * each binary of the recording), attribute.c (a sample's frames to nodes of
 * the calling-context tree) and the state they both keep per report.  The
 * tree itself (cct.c) and the views know only report.h.
 */
#ifndef PL_ATTRIBUTE_H
#define PL_ATTRIBUTE_H

#include "report.h"

#include <limits.h>
#include <pthread.h>

struct dso_attr {
	int tried;
	char *path;          /* the file the structure comes from */
	ls_module *mod;
	ls_file *file;       /* the ELF of PATH: PT_LOAD, and symbols when there is no structure */
	int64_t kernel_delta; /* vmlinux: runtime - link address */
	int use_kallsyms;
	int refused;         /* the file by its name has another build-id (not --force) */
	/* a module: its code sections where the kernel's module loader puts
	 * them (offsets from the map's start) and where they are in the .ko */
	ls_ksection *ksecs;
	size_t nksecs;
};

struct pl_attrib {
	pl_report *rep;
	ls_options lsopt;
	/* by dso index; each allocated once and never moved: callers keep a
	 * dso_attr pointer while opening other DSOs (fp-repair's PLT stubs) */
	struct dso_attr **dattr;
	size_t ndattr;
	ls_kmap *kmap;            /* the kernel's symbols (kallsyms) */
	int kallsyms_tried;
	/* kallsyms read into kmap on a thread of its own from the start
	 * (find-dso.c): the thread's until joined */
	pthread_t ks_thread;
	int ks_reading;           /* started, not joined */
	char home_debug[PATH_MAX];
	char osrelease[256];
	/* frame cache: (parent, map, address) -> node */
	struct fslot {
		const pl_map *map;
		uint64_t addr;
		uint32_t parent, node;
		uint8_t how;
	} *fc;
	size_t nfc, fc_used;
	/* caller chains -> node: (process, its maps' generation, the callers'
	 * addresses); a sample then costs one probe here and one for its leaf */
	struct cslot {
		uint64_t hash;
		const pl_proc *proc;
		unsigned gen, kgen;
		uint32_t off, n, node, used;
	} *cc;
	size_t ncc, cc_used;
	uint64_t *pool;
	size_t npool, cap_pool;
	/* binaries named in the file's build-id table are opened on a second
	 * thread while the first pass reads the records (NULL: none, or the
	 * thread was abandoned) */
	struct prefetch *pf;
	uint64_t deep_chains;  /* samples whose call chain was cut at PL_MAX_FRAMES */
	/* for the one-line summaries after the report is read (-v: each) */
	unsigned nmissing;       /* user binaries not found */
	char missing_names[1024]; /* the first three */
	unsigned nnodebug;       /* binaries without DWARF (the vdso aside) */
	int kernel_without_debug; /* kernel frames named from kallsyms, or by address */
	char kernel_debug_why[1280]; /* why the search found no vmlinux (ls_find_debug_file's message) */
	int kernel_debuginfod_down; /* ... because a debuginfod server could not be reached */
	int kernel_frames;       /* ... and there are some */
	uint64_t kernel_samples; /* samples taken in the kernel (before filters) */
	struct pl_unwinder *uw; /* unwind.c: rules by address, CFI of each binary, the stats */
	/* frame-pointer chains (attribute.c): samples whose chain skipped a
	 * frame, those repaired by inserting it, those that could not be */
	uint64_t fp_samples, fp_skipped, fp_repaired, fp_broken;
	uint32_t *fp_frameless;  /* per dso index: samples with a frameless frame there */
	int fp_check;            /* $PERF_LOOPS_FP_CHECK: pl_fp_check on every dwarf sample */
	/* fp-repair.c: whether a frame keeps the fp chain, by (map, address) */
	struct fp_slot {
		const pl_map *map;
		uint64_t addr;
		int8_t chain;
	} *fp_memo;
	size_t fp_memo_n, fp_memo_used;
	size_t nfp_frameless;
};

/* One frame of a sample: its address (a return address, for callers:
 * ADJUST says to look at the call, one byte before), kernel or user, and
 * how it was found (PL_HOW_*, or PL_HOW_BROKEN: where an unrepairable
 * frame-pointer chain was cut). */
enum { PL_HOW_BROKEN = 3 };
struct frame {
	uint64_t addr;
	uint8_t kernel, adjust, how;
};

/* fp-repair.c: a --call-graph=fp chain FR[0..NF) (capacity PL_MAX_FRAMES)
 * with the frames a frameless procedure skipped put back, marked inferred,
 * where the code says which they were; cut where it is garbage.  Returns
 * the new length; counts in a->fp_*. */
#define PL_MAX_FRAMES 512
size_t pl_fp_repair(struct pl_attrib *a, pl_thread *t, struct frame *fr, size_t nf);
/* The warning about chains that could not be repaired, once (stderr). */
void pl_fp_warn(struct pl_attrib *a);
/* $PERF_LOOPS_FP_CHECK=FILE (the tests): a --call-graph=dwarf sample's
 * frame-pointer chain, as the kernel would have walked it in the same
 * stack, repaired, written to FILE beside the chain its CFI gave (DW, NDW),
 * one line a sample: skipped|whole TAB refused|ok TAB cfi-chain TAB
 * repaired-chain, procedure names leaf first, inferred ones with '*'. */
void pl_fp_check(struct pl_attrib *a, pl_thread *t, const pd_sample *smp, const struct frame *dw, size_t ndw);

/* find-dso.c */
/* The DSO side of a new pl_attrib (libloopscope's options, perf's build-id
 * cache, the kernel's release, the second thread), and its end. */
void pl_dsos_begin(struct pl_attrib *a);
void pl_dsos_end(struct pl_attrib *a);
/* One line each for what could not be used (no DWARF, not found, kernel
 * without its debug image), after the samples are read; not under -q. */
void pl_dsos_summary(struct pl_attrib *a);
/* Find the file behind DSO and open its structure, once. */
struct dso_attr *pl_dso_attr(struct pl_attrib *a, pl_dso *dso);
/* A runtime address in MAP -> the link-time address in its file. */
int pl_to_link(const struct dso_attr *d, const pl_map *m, uint64_t addr, uint64_t *out);
/* kallsyms into a->kmap, once (then ls_kmap_symbol_at). */
void pl_load_kallsyms(struct pl_attrib *a);

#endif
