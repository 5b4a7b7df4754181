/* report.h - what `perf loops report` builds and its views print.
 *
 * The calling-context tree (CCT): every sample's call chain, outermost frame
 * first, where each frame is expanded into its static scope chain from
 * libloopscope (proc > inline/alien > loop > stmt; for a caller frame the
 * stmt is the call site's line).  cct.c holds it, attribute.c fills it
 * (find-dso.c finds the binaries behind the frames); view-*.c print it.
 */
#ifndef PL_REPORT_H
#define PL_REPORT_H

#include "session.h"
#include "loopscope.h"

#include <stdio.h>

enum pl_node_kind { PL_ROOT, PL_PROC, PL_INLINE, PL_ALIEN, PL_LOOP, PL_STMT };

/* How a frame was found (pl_node.how of a proc node, the frame's): from the
 * sample's chain or the CFI, unwound by the recipes where the CFI stopped,
 * or inferred where a frame-pointer chain skipped it. */
enum { PL_HOW_CFI = 0, PL_HOW_RECIPE = 1, PL_HOW_INFERRED = 2 };

typedef struct pl_node {
	uint32_t parent, first_child, next_sibling;
	uint32_t costs;        /* its first cost entry (pl_tree.costs), 0: none */
	uint8_t kind;
	uint8_t how;           /* proc nodes: PL_HOW_* */
	const ls_scope *scope; /* NULL for frames without structure (symbols, addresses) */
	const char *name;      /* those frames' name (interned) */
	pl_dso *dso;           /* proc nodes */
	uintptr_t key;
} pl_node;

/* Per node and event: samples and period, inclusive and exclusive. */
enum { PL_TOTAL, PL_SELF, PL_TOTAL_PERIOD, PL_SELF_PERIOD, PL_NCOST };

/* Costs are sparse in events: an entry per (node, event) that has any, so
 * a file of many events costs memory for the samples it has, not nodes x
 * events.  A node's entries are chained from pl_node.costs. */
typedef struct pl_cost_entry {
	uint32_t node, ev, next, unused;
	uint64_t c[PL_NCOST];
} pl_cost_entry;

typedef struct pl_tree {
	pl_node *nodes;
	size_t n, cap;
	size_t nev;
	pl_cost_entry *costs;  /* [0] unused */
	size_t ncosts, cap_costs;
	uint32_t *cslots;      /* (node, event) -> cost entry */
	size_t ncslots;
	/* (parent, key) -> child */
	uint32_t *slots;
	size_t nslots;
	struct pl_ev_index *evx; /* per-event children for the views, made on first use */
} pl_tree;

void pl_tree_init(pl_tree *t, size_t nev);
void pl_tree_free(pl_tree *t);
uint32_t pl_tree_child(pl_tree *t, uint32_t parent, uintptr_t key, int kind);
/* Turn the per-node sample counts into the exclusive cost of each scope in
 * its frame: a loop's self is what its statements cost, not its callees. */
void pl_tree_finish(pl_tree *t);
/* -g callee: T (per-leaf sample counts, before pl_tree_finish) becomes the
 * callee-ordered tree, finished: frames innermost first, each top-down. */
void pl_tree_invert(pl_tree *t);
/* Puts the nodes of T from its root down to N in *PATH (root side first,
 * the root itself left out), growing it (*CAP); returns how many. */
size_t pl_tree_path(const pl_tree *t, uint32_t n, uint32_t **path, size_t *cap);
/* The PL_NCOST costs of NODE for event EV: read-only (zeros if it has none);
 * pl_cost_at makes the entry, and its pointer lasts until the next call. */
const uint64_t *pl_cost(const pl_tree *t, uint32_t node, size_t ev);
uint64_t *pl_cost_at(pl_tree *t, uint32_t node, size_t ev);
/* The samples counted at node N itself (not at the scopes in it), COST k. */
uint64_t pl_node_own(const pl_tree *t, uint32_t n, size_t ev, int k);

typedef enum { PL_FMT_TREE, PL_FMT_FLAT, PL_FMT_LOOPS, PL_FMT_FOLDED, PL_FMT_JSON, PL_FMT_PPROF, PL_FMT_DATA } pl_format;

/* --sort keys and the columns of -F: the scopes of the sampled place, and
 * perf report's keys that are not scopes (places.c keeps what they need) */
enum {
	PL_KEY_DSO, PL_KEY_SYM, PL_KEY_SRCLINE, PL_KEY_LOOP,
	PL_KEY_COMM, PL_KEY_PID, PL_KEY_CPU, PL_KEY_SRCFILE, PL_KEY_SYMOFF, PL_KEY_DSO_SIZE,
	PL_KEY_TYPE, PL_KEY_TYPEOFF, /* data-keys.c: the data type (and offset, field) the sample reached */
	PL_KEY_VAR,                  /* data-keys.c: the variables the sample is blamed on (a view of its own) */
	PL_NKEYS
};
/* Do the keys need the sample's thread and CPU in places.c's histogram? */
#define PL_THREAD_KEYS ((1u << PL_KEY_COMM) | (1u << PL_KEY_PID) | (1u << PL_KEY_CPU))

/* places.c: the sampled places (leaf node, map, address; thread and CPU
 * when -s asks), one entry per distinct place and event. */
typedef struct pl_place {
	uint32_t node, ev;
	const struct pl_map *map; /* NULL: an address outside every map */
	uint64_t addr;            /* runtime */
	const char *comm;         /* interned: the thread's command then */
	uint32_t pid, tid;
	int32_t cpu;              /* -1: not recorded */
	uint64_t samples, period;
} pl_place;
typedef struct pl_places {
	pl_place *v;
	size_t n, cap;
	uint32_t *slots;          /* hash -> index + 1 */
	size_t nslots;
} pl_places;
void pl_places_add(pl_places *p, const pl_place *key, uint64_t period);
void pl_places_free(pl_places *p);
enum { PL_COL_CHILDREN = 1, PL_COL_SELF = 2, PL_COL_SAMPLES = 4, PL_COL_PERIOD = 8 };

typedef struct pl_report_options {
	const char *input;
	const char *output;   /* -o: instead of stdout */
	pl_format format;
	double percent_limit;
	int children;         /* show inclusive cost (default) */
	char **comms, **dsos, **events;
	size_t ncomms, ndsos, nevents;
	uint32_t *pids;
	size_t npids;
	int quiet;
	int verbose;
	int force;            /* -f: use binaries whose build-id is not the recorded one */
	const char *vmlinux;  /* -k: the kernel image with debug info */
	const char *modules;  /* --modules: where the modules' debug .ko files are */
	int sort[PL_NKEYS];   /* -s: the histogram's keys, in order */
	size_t nsort;
	unsigned sort_mask;   /* 1 << PL_KEY_* of those keys */
	int sort_own;         /* --sort=own: the loops view ranks by Own */
	unsigned fields;      /* PL_COL_*: the percentage and count columns */
	int show_samples, show_period;
	int fractal;          /* -g fractal: percentages of the parent */
	int callee;           /* -g callee: frames innermost first (pl_tree_invert) */
	int chains;           /* -g flat: each calling context as a list of frames */
	double cg_threshold;  /* -g graph,T: tree lines under T% hidden (default 0.5, perf's) */
	char **symbols;       /* -S */
	size_t nsymbols;
	const char *symbol_filter;
	uint32_t *tids;
	size_t ntids;
	int max_stack;        /* 0: the whole chain */
	int no_demangle;
	const char *symfs;
	/* --time: samples whose time (ns) is in one of these ranges; percent
	 * ranges (fractions of the recording) are made absolute by
	 * pl_report_open, from the file's first and last sample times */
	struct pl_time_range { uint64_t start, stop; double pstart, pstop; } *time_ranges;
	size_t ntime_ranges;
	int time_percent;
	int no_pager;
	int color;            /* --stdio-color: 1 always, 0 never, -1 on a terminal */
	int full_names;
	int ui;               /* PL_UI_*: --stdio, --tui, or the default (the browser on a terminal) */
	int annotate;         /* perf loops annotate: */
	int asm_view;         /* --asm */
	int intel_syntax;     /* -M intel: the disassembly in Intel syntax */
	const char *field_sep; /* -t: columns separated by it, unpadded */
	int stats;            /* --stats: the records' counts, as perf report --stats */
	int header;           /* --header: 1, the file's header before the report; --header-only: 2 */
	const char *annotate_symbol; /* SYMBOL, or NULL: the hottest */
	int data_type;        /* annotate --data-type[=TYPE]: the types' layouts with their fields' costs */
	const char *data_type_name; /* TYPE, or NULL: every type */
	int wall;             /* --wall: on-CPU, off-CPU and wall time per context and loop */
} pl_report_options;

enum { PL_UI_AUTO, PL_UI_STDIO, PL_UI_TUI };

/* options.c: -1 to go on, else the exit status (0 after -h). */
int pl_report_options_parse(int argc, char **argv, pl_report_options *o);
int pl_annotate_options_parse(int argc, char **argv, pl_report_options *o);
void pl_report_options_free(pl_report_options *o);
/* Is TIME (ns) in one of --time's ranges (or is there no --time)? */
static inline int pl_time_selected(const pl_report_options *o, uint64_t time)
{
	if (!o->ntime_ranges)
		return 1;
	for (size_t i = 0; i < o->ntime_ranges; i++)
		if (time >= o->time_ranges[i].start && time <= o->time_ranges[i].stop)
			return 1;
	return 0;
}

typedef struct pl_report {
	const pl_report_options *opt;
	pl_session *s;
	pd_reader *r;
	pl_tree tree;
	size_t nev;              /* all events of the file */
	uint64_t *ev_samples, *ev_period;
	size_t *shown;           /* events with samples, in file order */
	size_t nshown;
	size_t primary;          /* the event percentages and ordering use */
	uint64_t nsamples_all;   /* before filters */
	struct pl_attrib *attrib;
	FILE *out;
	pl_places places;        /* where each sample was taken (places.c) */
	pl_tree flat;            /* all contexts folded per procedure (pl_flat_tree) */
	int have_flat;
	int color;               /* --stdio-color: escape sequences on */
	int width;               /* the terminal's columns; 0: lines are not cut */
	/* off-CPU data (offcpu.c): the sched_switch samples' period is their
	 * off-CPU time (ns); per tree node, that time by reason (PL_OFF_*,
	 * at the leaf; view-wall.c sums them up the tree) */
	struct pl_offcpu *offcpu;
	size_t off_ev;
	long on_ev;              /* the clock event (on-CPU ns), or -1 */
	uint64_t (*off_why)[4];
	size_t noff_why;
} pl_report;

/* attribute.c (the DSO lookups behind these are find-dso.c's) */
/* Size the tree and the counts for the events of the file (once). */
void pl_report_begin(pl_report *rep);
struct pl_attrib *pl_attrib_new(pl_report *rep);
void pl_attrib_free(struct pl_attrib *a);
void pl_attrib_sample(void *ctx, pl_session *s, const pd_event *ev, pl_thread *t);
/* Warns about the bounds the samples hit (call chains cut), on stderr. */
void pl_attrib_warn_bounds(struct pl_attrib *a);
pl_session *pl_attrib_session(struct pl_attrib *a);
/* The file behind DSO (found by build-id or path), or NULL. */
const char *pl_attrib_file(struct pl_attrib *a, pl_dso *dso);
/* The link-time address of runtime address ADDR in map M: 0, or -1. */
int pl_attrib_link_addr(struct pl_attrib *a, const pl_map *m, uint64_t addr, uint64_t *link);
/* The symbol (ELF's, or kallsyms') holding runtime address ADDR of map M
 * (NULL: a kernel address outside the maps), and ADDR's offset in it. */
const char *pl_attrib_symbol(struct pl_attrib *a, const pl_map *m, uint64_t addr, uint64_t *off);

/* The recorded program's own binary: the one most samples ran as (their
 * thread's command is its name), else the user binary with most samples;
 * NULL if no sample is in one. */
pl_dso *pl_main_dso(const pl_report *rep);

/* unwind.c: the user frames of a --call-graph dwarf sample, leaf first,
 * each with how it was found (PL_HOW_CFI, or PL_HOW_RECIPE where the CFI
 * stopped and the unwind recipes went on). */
size_t pl_unwind_user(struct pl_attrib *a, pl_thread *t, const pd_sample *smp, uint64_t *pcs, uint8_t *how,
                      size_t cap);
void pl_unwind_end(struct pl_attrib *a);
/* From the CFI of DSO's binary: whether fp chains pass through the frame
 * at LINK (1 or 0), or -1 when the CFI does not say (ask the recipes). */
int pl_unwind_cfi_fp_chain(struct pl_attrib *a, pl_dso *dso, uint64_t link);
/* What the unwinding of the report's samples needed: how many samples
 * reached their last frame (the CFI or a recipe says there is none above),
 * how many ran off the end of the stack copy, and how deep into the copy
 * those that reached it read (bytes above SP). */
typedef struct pl_unwind_stats {
	uint64_t samples, complete, cut, recipe_samples;
	uint64_t copy_size, max_read, depth_p99, depth_max;
} pl_unwind_stats;
const pl_unwind_stats *pl_unwind_stats_of(struct pl_attrib *a); /* NULL: no dwarf samples */
/* A procedure node's mark in the views: " [inferred]", " [recipes]" or "". */
static inline const char *pl_how_mark(uint8_t how)
{
	return how == PL_HOW_INFERRED ? " [inferred]" : how == PL_HOW_RECIPE ? " [recipes]" : "";
}

/* Names and places of a node, for the views. */
const char *pl_node_name(const pl_report *rep, uint32_t n); /* proc/inline: name */
const char *pl_node_file(const pl_report *rep, uint32_t n);
unsigned pl_node_line(const pl_report *rep, uint32_t n);
/* A one-line label: "main", "[I] work (at a.c:12)", "loop at a.c:9", "a.c:10". */
void pl_node_label(const pl_report *rep, uint32_t n, char *buf, size_t len);
/* How perf report shows a DSO after a symbol: [libc.so.6], [kernel.kallsyms]
 * (a name perf already brackets is not bracketed twice). */
static inline const char *pl_dso_shown(const pl_dso *d, char *buf, size_t len)
{
	snprintf(buf, len, d->short_name[0] == '[' ? "%s" : "[%s]", d->short_name);
	return buf;
}
/* Children of N sorted by the primary event's inclusive period, largest first. */
size_t pl_sorted_children(const pl_report *rep, const pl_tree *t, uint32_t n, uint32_t **out);
/* The same, only those with samples of the primary event: what the views of
 * one event walk, at a cost proportional to that event's nodes (a file of
 * thousands of events must not cost events x nodes). */
size_t pl_event_children(const pl_report *rep, const pl_tree *t, uint32_t n, uint32_t **out);
/* The nodes with a cost for event EV, in no order. */
size_t pl_event_nodes(const pl_tree *t, size_t ev, const uint32_t **out);

/* The views. */
int pl_view_tree(pl_report *rep);
/* view-chains.c: -g flat, every calling context with samples of its own */
int pl_view_chains(pl_report *rep);
int pl_view_flat(pl_report *rep);
/* view-tree.c: rep->tree as an indented tree with perf's percentage columns,
 * under a header naming the view (WHAT) and its last column (COLUMN). */
void pl_print_indented_tree(pl_report *rep, const char *what, const char *column);
int pl_view_loops(pl_report *rep);
int pl_view_folded(pl_report *rep);
int pl_view_json(pl_report *rep);
/* flat and loops share the per-procedure folding of the CCT (view-flat.c),
 * made once for all events. */
const pl_tree *pl_flat_tree(pl_report *rep);
/* cmd-report.c: frees what a report holds, its reader aside */
void pl_report_free(pl_report *rep);
/* Nodes of rep->tree by inclusive period of the primary event, largest
 * first (qsort_r with REP as its argument). */
int pl_cmp_total(const void *pa, const void *pb, void *rep);
/* view-pprof.c: --format=pprof -o FILE, a gzipped profile.proto */
int pl_view_pprof(pl_report *rep);
void pl_print_header(pl_report *rep, const char *what);
/* data-keys.c: the type or typeoff key (PL_KEY_TYPE, PL_KEY_TYPEOFF) of
 * place PL into PART (COUNT: count the place for the note); the note on
 * how many samples skidded, when USED, and the accesses freed. */
void pl_data_key(pl_report *rep, const pl_place *pl, int key, int count, char *part, size_t len);
void pl_data_keys_end(pl_report *rep, int used);
/* data-keys.c: -s var, the variables the samples are blamed on (design.md,
 * "Blame"): a row per variable, a sample counted for each of its
 * instruction's, exit variables resolved along the sample's call chain. */
int pl_view_var(pl_report *rep);
/* The access sample place PL took the time at, as -s type takes it (the
 * one before the sampled instruction, *SKID, when it has none), its set
 * in *SET (kept until pl_data_keys_end); NULL when none. */
const ls_access *pl_data_access(pl_report *rep, const pl_place *pl, const ls_accesses **set, int *skid);
/* view-data.c: --format=data (and --format=loops -s type), per procedure
 * and loop, the samples by variable and by type and field; pl_data_json:
 * the same in --format=json's "data" (-s type or typeoff) */
int pl_view_data(pl_report *rep);
struct ls_jw;
void pl_data_json(struct ls_jw *w, pl_report *rep);
char *pl_data_text(pl_report *rep, const void *proc_key, const pl_dso *dso);
/* Do the -s keys ask for the data types (type, typeoff)? */
#define PL_DATA_KEYS ((1u << PL_KEY_TYPE) | (1u << PL_KEY_TYPEOFF))
/* data-addr.c: where samples' data addresses (PERF_SAMPLE_ADDR) are, per
 * tree node and event ("global g +8 (f)", "stack", "heap", ...), kept
 * when the data view or json's "data" asks */
struct pl_daddr {
	uint32_t node;
	size_t ev;
	const char *what;     /* interned */
	uint64_t samples, period;
};
void pl_daddr_add(pl_report *rep, pl_thread *t, const pd_sample *smp, size_t ev, uint32_t node);
size_t pl_daddr_entries(const struct pl_daddr **v);
void pl_daddr_free(void);
/* annotate-data.c: perf loops annotate --data-type[=TYPE] */
int pl_annotate_data_types(pl_report *rep);
/* view-tree.c: the -F columns of cost C, percentages of BASE; their header. */
void pl_print_columns(const pl_report *rep, const uint64_t *c, uint64_t base);
void pl_print_column_header(const pl_report *rep, const char *label);
/* Cut LABEL with "..." so that USED + its length fits rep->width. */
void pl_fit_width(const pl_report *rep, int used, char *label, size_t len);
/* Is procedure node N of rep->tree selected by -S/--symbol-filter (or no filter)? */
int pl_proc_selected(const pl_report *rep, uint32_t n);
/* view-sort.c: -s KEYS, the histogram of sampled places */
int pl_view_sort(pl_report *rep);
/* names.c: NAME with C++ template arguments and parameters elided, in BUF. */
const char *pl_short_name(const char *name, char *buf, size_t len);
/* NAME as perf report prints it: without parameters (nor return type),
 * template arguments whole: leveldb::Block::Iter::Seek, Acc::operator(). */
const char *pl_perf_name(const char *name, char *buf, size_t len);
/* pager.c: page stdout through $PERF_PAGER/$PAGER/less on a terminal; set rep colour. */
void pl_pager_start(const pl_report_options *o);
int pl_color_wanted(const pl_report_options *o, FILE *out);
/* SIGPIPE (a closed pipe or pager) exits 141, or 0 after the pager, quietly. */
void pl_quiet_sigpipe(void);
/* The columns of the terminal OUT is (COLUMNS, else the tty's), or 0. */
int pl_terminal_width(FILE *out);

/* progress.c: the meter of a long first report (a binary's analysis), on
 * stderr when it is a terminal, after a second; ended (its line cleared)
 * before the report says anything else. */
void pl_progress_begin(const pl_report_options *o);
int pl_progress_wanted(void);
int pl_progress_fn(void *ctx, size_t done, size_t total); /* ctx: the binary's name */
void pl_progress_end(void);
void pl_progress_clear(void); /* before another line on stderr */

/* cmd-report.c: open the input and build the tree (the events shown set);
 * 0, or an exit status with the message printed.  pl_report_close frees it. */
int pl_report_open(pl_report_options *o, pl_report *rep);
void pl_report_close(pl_report *rep);

/* annotate.c: a procedure's source (and its inlined code's) line by line,
 * with the costs of the report's statements and its loops as brackets;
 * annotate-asm.c adds the disassembly.  Rows for view-annotate.c (--stdio)
 * and browser.c. */
enum { PL_ANN_FILE, PL_ANN_SRC, PL_ANN_GAP, PL_ANN_LOOP, PL_ANN_ASM, PL_ANN_NOTE };
typedef struct pl_ann_row {
	uint8_t kind;          /* PL_ANN_* */
	uint8_t has_cost;      /* the cost columns are printed */
	unsigned line;         /* SRC: its number */
	uint64_t addr;         /* ASM */
	char *margin;          /* the loop brackets, as wide as pl_ann.margin_width */
	char *text;
	uint64_t *samples, *period; /* per shown event (pl_report.shown order) */
	char *calls;           /* SRC: the inlined calls made at the line, if any has samples */
	uint64_t *call_samples, *call_period; /* ... and their Total, per shown event */
} pl_ann_row;
typedef struct pl_ann {
	uint32_t proc;         /* its node in pl_flat_tree */
	const char *name;      /* the procedure's (demangled) name */
	char *binary;
	pl_ann_row *rows;
	size_t n, cap;
	int margin_width;
	int with_asm;          /* rows in address order, SRC rows name their file:line */
	int inlined;           /* a function only inlined: its instances together */
	uint64_t *samples, *period; /* the procedure's own cost, per shown event */
} pl_ann;
/* The flat-tree node of the procedure SYMBOL names (NULL: the one with the
 * most samples of its own, of the primary event), or 0 with ERR set. */
uint32_t pl_annotate_find(pl_report *rep, const char *symbol, char *err, size_t errlen);
/* Build the rows of procedure PROC (a pl_flat_tree node); WITH_ASM: the
 * instructions in address order under their lines.  0, or -1 with ERR. */
int pl_annotate_build(pl_report *rep, uint32_t proc, int with_asm, pl_ann *ann, char *err, size_t errlen);
void pl_ann_free(pl_ann *ann);
pl_ann_row *pl_ann_add(pl_ann *ann, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* annotate-asm.c: the instructions of [LO, HI) of the x86-64 binary FILE
 * (link-time addresses), as objdump prints them (INTEL: objdump -M
 * intel's syntax); how many, 0 with ERR. */
typedef struct pl_insn_text {
	uint64_t addr;
	unsigned len;
	char *text;
} pl_insn_text;
size_t pl_disassemble(const char *file, uint64_t lo, uint64_t hi, int intel, pl_insn_text **out, char *err,
		      size_t errlen);
/* view-annotate.c: the rows as text on rep->out (--stdio) */
void pl_print_annotation(pl_report *rep, const pl_ann *ann);
/* "    [I] work: Total 45.00% (123)": the inlined calls of an SRC row. */
void pl_ann_call_text(const pl_report *rep, const pl_ann_row *r, char *buf, size_t len);
/* One cost cell: "  12.34%    123" of samples S and period P of base B. */
void pl_ann_cell(char *buf, size_t len, uint64_t s, uint64_t p, uint64_t base);

/* view-header.c: --header(-only) and --stats, as perf report prints them */
#define PL_STATS_MAX_EVENTS 4096
/* (in pipe mode it reads the whole stream, whose records carry the header) */
void pl_print_file_header(pd_reader *r, FILE *f);
int pl_print_stats(pd_reader *r, FILE *f);

/* browser.c: the interactive browser (ncurses); -1 if there is none
 * (not built with ncurses, or no terminal): print --stdio instead. */
int pl_browser(pl_report *rep);
int pl_browser_annotate(pl_report *rep, uint32_t proc);

/* cmd-*.c */
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_annotate(int argc, char **argv);

#endif
