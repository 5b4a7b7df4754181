/* loopscope.h - the public API of libloopscope.
 *
 * libloopscope recovers the static structure of an optimized ELF binary:
 * procedures, inlined calls (with their call sites), loops (irreducible ones
 * too) and statements, and places every instruction in that scope tree.
 *
 * Usage:
 *
 *     ls_error err;
 *     ls_options opt;
 *     ls_options_init(&opt);
 *     ls_module *m = ls_module_open("/usr/bin/app", &opt, &err);
 *     if (!m) { fprintf(stderr, "%s\n", err.message); exit(1); }
 *     const ls_scope *chain[LS_MAX_CHAIN];
 *     size_t n = ls_lookup_chain(m, 0x401156, chain, LS_MAX_CHAIN);
 *     for (size_t i = 0; i < n; i++)            // outermost first
 *         printf("%s %s\n", ls_scope_kind_name(ls_scope_kind_of(chain[i])),
 *                ls_scope_name(chain[i]));
 *     ls_module_close(m);
 *
 * Conventions (as libdw's): opaque handles; functions that can fail take an
 * ls_error * and return NULL or a negative value, filling the message; no
 * global mutable state, so several modules may be analyzed at once on several
 * threads.  Lookups on one module from several threads at once are safe.
 *
 * Analysis on demand (ls_options.on_demand): ls_module_open then reads the
 * binary's headers and its cache entry's directory, and analyzes nothing;
 * each procedure is analyzed (or read from the cache) the first time a
 * lookup asks for an address it owns, under the module's own lock, and the
 * cache entry grows with it when the module closes.  Every answer is the
 * one the whole analysis gives, but where two procedures share code
 * (nested symbols, as vmlinux's secondary_startup_64 and
 * secondary_startup_64_no_verify): there a lookup answers with the
 * statement of the procedure that owns the address, the whole analysis
 * with the one that starts first.  What a lookup returns never changes after;
 * the tree above the procedures (a procedure's file scope, the root) is
 * whole only once every procedure is analyzed: ls_module_root,
 * ls_write_structure and ls_module_analyze(M, NULL, 0) do that first (walk
 * no file scope's children nor the root's before, and not while another
 * thread makes them).  A lookup whose analysis fails (out of memory) answers
 * "none" and keeps the error for ls_module_error.  Without on_demand the
 * whole module is analyzed when it opens, and it never changes after.
 *
 * Lifetimes: every pointer the library returns (scopes, names, file names,
 * paths, the build-id) points into the module (or ls_file) it came from and
 * stays valid, unchanged, until that handle is closed; none is to be freed
 * by the caller.  An ls_error is the caller's: the library only writes it.
 *
 * Errors: a function that fails returns NULL or -1 with ERR->code saying
 * why (LS_ERR_IO, LS_ERR_NOT_ELF, ...) and ERR->message naming the file.
 * Running out of memory is an error like the others (LS_ERR_NOMEM), never
 * an abort: the library may run inside a debugger's process.  A function
 * without an ls_error answers "none" then (NULL, 0 or -1).
 * ls_module_open that succeeds leaves ERR->code LS_OK, or LS_ERR_DWARF
 * when part of the debug information could not be read and the analysis
 * went on without it (ERR->message: the first such problem; every one also
 * went to the warning sink).  A structure read from the cache reads no
 * DWARF, and says LS_OK; so does a module opened on demand, whose DWARF is
 * read when a procedure first needs it (its problems go to the sink then).
 *
 * Warnings (a part that could not be analyzed) go to ls_options.warn.  The
 * analysis runs on several threads, and the sink is called from any of them,
 * possibly at the same time: a sink that keeps state must lock it.  It is
 * only called during ls_module_open, or, on demand, during the calls that
 * analyze: lookups, ls_module_analyze, ls_module_root, ls_write_structure.
 *
 * Addresses are link-time virtual addresses, as objdump and addr2line print
 * them.  For relocatable objects (.o, .ko) the sections are laid out one
 * after another with .text at 0, so that .text addresses are objdump's;
 * ls_module_section() tells where any other section is.
 *
 * ABI rules (what a program built against this header may rely on when the
 * library under it is newer; loopscope.map lists the symbols, node by node):
 *
 *   - Handles are opaque (ls_module, ls_scope, ls_file, ...): they grow
 *     freely.
 *   - A struct the caller allocates and passes in (ls_options) begins with
 *     its size, which its _init function sets to the sizeof the caller was
 *     compiled with.  The library reads only that many bytes and takes its
 *     defaults for fields added since; new fields go at the end, and their
 *     default keeps the old behaviour.  Call the _init function, never
 *     memset and fill by hand: a size of 0 is refused (LS_ERR_USAGE).
 *   - A struct the caller allocates and the library fills (ls_error,
 *     ls_symbol, ls_range, ls_edge) never changes: a new one comes with a
 *     new function.  One the library owns and hands out by const pointer
 *     (ls_section, ls_cache_info) only grows at its end.
 *   - Enums only gain values at their end: a caller's switch needs a
 *     default.
 *   - Every exported function is in a version node of loopscope.map: a new
 *     function goes into the node of the next release; a function whose
 *     arguments change meaning gets a new node and the old one stays, for
 *     the programs linked against it (the LOOPSCOPE_0.1 ls_options, without
 *     a size, is converted: libloopscope/compat.c).  A released node never
 *     changes; the soname (libloopscope.so.0) changes only if one is
 *     dropped.
 *   - LS_VERSION is the version of this header; ls_version() the library's
 *     at run time.  Both come from configure.ac's AC_INIT.
 */
#ifndef LOOPSCOPE_H
#define LOOPSCOPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with -fvisibility=hidden: what this header declares
 * is its whole exported interface (libloopscope/loopscope.map versions it). */
#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility push(default)
#endif

/* LS_VERSION: the version of this header, "MAJOR.MINOR.PATCH" (configure
 * writes it into loopscope-version.h from AC_INIT). */
#include "loopscope-version.h"

/* The version of the library running, as LS_VERSION was when it was built.
 * Since LOOPSCOPE_0.2. */
const char *ls_version(void);

/* Callers' room for a chain.  A deeper chain (a loop nest hundreds deep)
 * is cut in the middle: the procedure and the outermost scopes are kept,
 * then the statement; ls_lookup_depth() gives the uncut length.  Inlined
 * calls nested deeper than LS_MAX_CHAIN - 2 are cut in the structure itself
 * (the outermost kept): ls_lookup_depth() counts them too. */
#define LS_MAX_CHAIN 256

typedef enum ls_status {
	LS_OK = 0,
	LS_ERR_IO,          /* cannot open or read the file */
	LS_ERR_NOT_ELF,     /* not an ELF file, or a truncated/corrupt one */
	LS_ERR_UNSUPPORTED, /* an ELF we cannot analyze (machine, class) */
	LS_ERR_DWARF,       /* corrupt debug information (see "Errors" above) */
	LS_ERR_NOMEM,       /* out of memory */
	LS_ERR_NOT_FOUND,   /* no such file, symbol or address */
	LS_ERR_USAGE,       /* bad argument */
	LS_ERR_INTERRUPTED, /* options.progress_fn asked to stop */
} ls_status;

typedef struct ls_error {
	ls_status code;
	char message[1024]; /* "FILE: reason", ready to print */
} ls_error;

/* Warnings (a part that could not be analyzed) go to this sink, from any
 * analysis thread and possibly from several at once (see above). */
typedef void (*ls_warn_fn)(void *ctx, const char *message);

typedef struct ls_options {
	size_t size;         /* sizeof(ls_options) as the caller sees it: ls_options_init sets it */
	int jobs;            /* analysis threads; 0: as many as cores */
	int use_cache;       /* read and write $XDG_CACHE_HOME/loopscope */
	int progress;        /* show progress on stderr when it is a terminal */
	int want_loops;      /* build CFGs and loops (1), or only inline+lines (0) */
	const char *cache_dir; /* NULL: $XDG_CACHE_HOME/loopscope or ~/.cache/loopscope */
	const char *debug_file_path; /* NULL: libdwfl's default (/usr/lib/debug) */
	ls_warn_fn warn;     /* NULL: print "loopscope: MESSAGE" on stderr */
	void *warn_ctx;
	int verbose;         /* also say why the cache missed, and such, through warn */
	uint64_t cache_max_bytes; /* 0: $LOOPSCOPE_CACHE_SIZE (e.g. 512M, 2G), else 1 GiB */
	/* For embedders (the GDB extension): called about every 0.1 s, from an
	 * analysis thread, with the procedures analyzed so far; a nonzero
	 * return stops the analysis and ls_module_open fails with
	 * LS_ERR_INTERRUPTED.  When set, it replaces the stderr meter.  On
	 * demand, a lookup that analyzes a procedure calls it too (from the
	 * lookup's thread: the procedures there so far, of all), and cannot
	 * be stopped: its return is then ignored. */
	int (*progress_fn)(void *ctx, size_t done, size_t total);
	void *progress_ctx;
	/* Since LOOPSCOPE_0.2.  The source files DWARF names are read for the
	 * loops' lines (a `for (;;)` has no line-table row of its own); the
	 * cache records which were read (and which were looked for and not
	 * found), so that a source that appears or changes is a miss. */
	int read_sources;    /* 1: read them; 0: DWARF alone (the CLI: $LOOPSCOPE_NO_SOURCE) */
	const char *source_path; /* NULL, or directories (colon-separated) where sources are
	                          * looked for when DWARF's path cannot be read: DIR/PATH, then
	                          * PATH without its leading components (the CLI:
	                          * $LOOPSCOPE_SOURCE_PATH) */
	/* Since LOOPSCOPE_0.2.  1: analyze each procedure when a lookup first
	 * asks for it (see "Analysis on demand" above); 0: all of them when
	 * the module opens. */
	int on_demand;
} ls_options;

/* Sets OPT to the defaults and OPT->size to SIZE, which must be
 * sizeof(ls_options) as the caller was compiled: call ls_options_init. */
void ls_options_init_sized(ls_options *opt, size_t size);
static inline void ls_options_init(ls_options *opt)
{
	ls_options_init_sized(opt, sizeof *opt);
}

typedef struct ls_module ls_module;
typedef struct ls_scope ls_scope;

typedef struct ls_range {
	uint64_t lo, hi; /* half-open */
} ls_range;

typedef enum ls_scope_kind {
	LS_SCOPE_MODULE,
	LS_SCOPE_FILE,
	LS_SCOPE_PROC,
	LS_SCOPE_INLINE,
	LS_SCOPE_ALIEN,
	LS_SCOPE_LOOP,
	LS_SCOPE_STMT,
} ls_scope_kind;

/* ---- modules ---------------------------------------------------------- */

/* Load PATH (executable, PIE, shared library, .o or .ko), find its debug
 * information (build-id, .gnu_debuglink, debuginfod) and analyze it. */
ls_module *ls_module_open(const char *path, const ls_options *opt, ls_error *err);
void ls_module_close(ls_module *m);

const char *ls_module_path(const ls_module *m);       /* absolute */
const char *ls_module_debug_path(const ls_module *m); /* where DWARF came from, or NULL */
const char *ls_module_build_id(const ls_module *m);   /* hex, or NULL */
int ls_module_has_dwarf(const ls_module *m);
int ls_module_is_relocatable(const ls_module *m);     /* ET_REL: .o, .ko */
int ls_module_from_cache(const ls_module *m);         /* every procedure analyzed so far came from the cache */
int ls_module_machine(const ls_module *m);            /* ELF e_machine (ls_disassemble); since 0.2 */

/* The root of the scope tree (kind LS_SCOPE_MODULE).  On demand, every
 * procedure not yet analyzed is analyzed first; NULL if that fails
 * (ls_module_error says why). */
const ls_scope *ls_module_root(const ls_module *m);

/* The procedures that own ADDRS (N addresses) analyzed now, on
 * ls_options.jobs threads, so that their lookups answer at once: what a
 * front end that knows its addresses does on a module opened on demand
 * (errors come back here, not as lookups that answer "none").  ADDRS NULL
 * (N 0): every procedure, and the tree above them.  Progress as
 * ls_module_open's.  0, or -1 with ERR (LS_ERR_NOMEM,
 * LS_ERR_INTERRUPTED: what was analyzed before is kept).  Since
 * LOOPSCOPE_0.2. */
int ls_module_analyze(ls_module *m, const uint64_t *addrs, size_t n, ls_error *err);
/* The first failure of an analysis a lookup asked for (the lookup then
 * answered "none"): -1 with ERR, or 0 if there was none.  Since 0.2. */
int ls_module_error(const ls_module *m, ls_error *err);
/* How many procedures M has; *ANALYZED (may be NULL): how many are
 * analyzed so far, *FROM_CACHE of them read from the cache.  Since 0.2. */
size_t ls_module_procedures(const ls_module *m, size_t *analyzed, size_t *from_cache);

/* The address of symbol NAME (mangled or demangled, or NAME@plt); -1 if unknown. */
int ls_module_symbol(const ls_module *m, const char *name, uint64_t *addr, uint64_t *size);

/* Where section NAME (allocated) is in the module's addresses; -1 if none.
 * For .ko files: where a module loader's section base maps to (a runtime
 * address in .init.text is SECTION_ADDR + (RUNTIME - RUNTIME_BASE)). */
int ls_module_section(const ls_module *m, const char *name, uint64_t *addr, uint64_t *size);

/* ---- symbols (as the kernel's kallsyms and scripts/faddr2line see them) -- */

typedef struct ls_symbol {
	const char *name;
	uint64_t addr;  /* link-time */
	uint64_t size;  /* kallsyms' size: up to the next symbol, padding included */
} ls_symbol;

/* The function symbols called NAME (a static name may have several), in
 * address order, with their kallsyms sizes (without any: the untyped labels
 * in code called NAME, assembly entry points).  Returns how many there are;
 * the first CAP are written to OUT.  Constant time in the table's size. */
size_t ls_module_functions_named(const ls_module *m, const char *name, ls_symbol *out, size_t cap);

/* NAME+OFF/SIZE (an oops line's FUNC+0xOFF/0xSIZE) to addresses, as
 * scripts/faddr2line resolves it: each copy of NAME whose size is SIZE (any
 * size when SIZE is 0) and OFF <= its size.  Returns how many addresses were
 * written to ADDRS (at most CAP), or -1 with ERR saying why: no such
 * function, no copy of that size (the sizes there are), or an offset past
 * the end. */
int ls_module_resolve(const ls_module *m, const char *name, uint64_t off, uint64_t size,
                      uint64_t *addrs, size_t cap, ls_error *err);

/* The symbol kallsyms would print for ADDR (FUNC+OFF/SIZE); -1 if none. */
int ls_module_symbolize(const ls_module *m, uint64_t addr, ls_symbol *out);

/* ---- kernels: where a running kernel's code is -------------------------- */

/* The kernel's module loader lays a .ko's core code sections out from the
 * module's base (what /proc/modules prints, and perf's map of the module
 * starts at): section-header order, each at its alignment, .init ones
 * apart.  Where each is, as an offset from the base, and where it is in M
 * (a .ko's link-time addresses, .text at 0). */
typedef struct ls_ksection {
	const char *name;
	uint64_t offset;  /* from the module's base */
	uint64_t size;
	uint64_t addr;    /* in M */
} ls_ksection;
/* M's layout (M a .ko; none for other files): returns how many sections
 * there are, the first CAP written to OUT.  Since LOOPSCOPE_0.2. */
size_t ls_module_kernel_layout(const ls_module *m, ls_ksection *out, size_t cap);
/* OFF (a runtime address minus the module's base) to its address in M
 * through that layout: 0, or -1 if no code section holds it.  0.2. */
int ls_module_kernel_addr(const ls_module *m, uint64_t off, uint64_t *addr);

/* What a running kernel says of itself, from its files or copies of them
 * (a bug report's): its code symbols (/proc/kallsyms) and where its
 * modules were loaded (/proc/modules, /sys/module/M/sections).  Read with
 * the ls_kmap_read_* calls, then asked from any number of threads (not
 * while being read).  Since LOOPSCOPE_0.2. */
typedef struct ls_kmap ls_kmap;

typedef struct ls_ksym {
	const char *name;
	uint64_t addr;       /* runtime */
	const char *module;  /* NULL: the kernel's own; else the module's name, '-' written '_' */
	char type;           /* kallsyms' type letter: 't', 'T', 'w' or 'W' (code) */
} ls_ksym;

/* Where part of a module is at run time: SECTION starts at START
 * (/proc/modules: ".text" at the base; /sys/module: each section), or
 * SYMBOL of the module is at START (kallsyms: its lowest code symbol). */
typedef struct ls_kplace {
	const char *module;  /* '-' written '_' */
	const char *section; /* or NULL */
	const char *symbol;  /* or NULL */
	uint64_t start;      /* runtime */
	uint64_t size;       /* the module's (/proc/modules), or 0: unknown */
} ls_kplace;

ls_kmap *ls_kmap_new(void);   /* NULL if out of memory */
void ls_kmap_free(ls_kmap *km);
/* A kallsyms file: its code symbols with an address (hidden addresses,
 * all 0, give none) and each module's lowest as a place.  0, or -1 with
 * ERR naming the file (a line that does not parse is skipped). */
int ls_kmap_read_kallsyms(ls_kmap *km, const char *path, ls_error *err);
/* A /proc/modules file: each loaded module's base and size. */
int ls_kmap_read_proc_modules(ls_kmap *km, const char *path, ls_error *err);
/* A /sys/module tree: DIR/M/sections/S for every module M and section S. */
int ls_kmap_read_sys_module(ls_kmap *km, const char *dir, ls_error *err);
/* The code symbols by address (symbols at one address in the file's order). */
size_t ls_kmap_nsymbols(const ls_kmap *km);
const ls_ksym *ls_kmap_symbol(const ls_kmap *km, size_t i);
/* The last symbol at or below ADDR, or NULL. */
const ls_ksym *ls_kmap_symbol_at(const ls_kmap *km, uint64_t addr);
/* kallsyms' _text (where the kernel's text was put: minus vmlinux's _text,
 * the KASLR offset): 0, or -1 if no kallsyms read had it. */
int ls_kmap_text(const ls_kmap *km, uint64_t *addr);
/* The module place holding runtime address ADDR: the last place at or
 * below it, if ADDR is within its size (unknown: within 64 MiB); NULL
 * when ADDR is no module's (the kernel's own, then). */
const ls_kplace *ls_kmap_place(const ls_kmap *km, uint64_t addr);

/* ---- ELF files, read without analysis --------------------------------- */

/* What a front end needs of a binary before, or instead of, analyzing it:
 * its build-id, where its file offsets load, its sections and its function
 * symbols.  Read with libelf alone (no DWARF, no analysis): opening one costs
 * about as much as reading its headers; the symbol table is read on the
 * first ls_file_symbol_at.  Like a module, a handle may be used from several
 * threads at once.  Every pointer it returns (names, the build-id, sections)
 * lives until ls_file_close. */
typedef struct ls_file ls_file;

#define LS_SECTION_ALLOC 1u  /* SHF_ALLOC: occupies memory at run time */
#define LS_SECTION_EXEC  2u  /* SHF_EXECINSTR */
#define LS_SECTION_WRITE 4u  /* SHF_WRITE */

typedef struct ls_section {
	const char *name;
	uint64_t addr;    /* sh_addr as in the file (0 in a .o or .ko) */
	uint64_t offset;  /* in the file */
	uint64_t size;
	uint64_t align;   /* at least 1 */
	unsigned flags;   /* LS_SECTION_* */
} ls_section;

ls_file *ls_file_open(const char *path, ls_error *err);
void ls_file_close(ls_file *f);
/* The GNU build-id's bytes: sets *BITS (when BITS is not NULL) and returns
 * their number; 0 if the file has none. */
size_t ls_file_build_id(const ls_file *f, const uint8_t **bits);
int ls_file_is_relocatable(const ls_file *f);  /* ET_REL: .o, .ko */
/* The link-time address that file offset OFF loads at, through the PT_LOAD
 * program headers (what a perf mmap's pgoff gives); -1 if none loads it. */
int ls_file_offset_to_addr(const ls_file *f, uint64_t off, uint64_t *addr);
/* The section headers, in the file's order from ELF index 1 (the null
 * header 0 is left out: ls_file_section(f, i) is ELF section i + 1). */
size_t ls_file_nsections(const ls_file *f);
const ls_section *ls_file_section(const ls_file *f, size_t i); /* NULL past the end */
const ls_section *ls_file_section_named(const ls_file *f, const char *name); /* the first; NULL if none */
/* The function symbol (STT_FUNC of .symtab, else of .dynsym) at or below
 * ADDR, if ADDR is inside it (a symbol of size 0 holds every address up to
 * the next one); among several at one address, the last in the table.
 * OUT->size is st_size.  -1 if none. */
int ls_file_symbol_at(const ls_file *f, uint64_t addr, ls_symbol *out);

/* F's ELF machine (e_machine: 62 for x86-64), for ls_disassemble.  Since
 * LOOPSCOPE_0.2. */
int ls_file_machine(const ls_file *f);
/* The bytes at link-time addresses [LO, HI) into BUF (HI - LO bytes), from
 * the executable section of F that holds them all: 0, or -1 with ERR (no
 * code section holds them, the file is cut short).  Since LOOPSCOPE_0.2. */
int ls_file_read_code(const ls_file *f, uint64_t lo, uint64_t hi, uint8_t *buf, ls_error *err);

/* ---- disassembly -------------------------------------------------------- */

/* Machine code as text, as objdump prints it, from the libopcodes the
 * analysis decodes with: AT&T syntax ("mov    %rsp,%rbp") unless
 * LS_DISASM_INTEL (objdump -M intel); branch targets as "0x401156". */
#define LS_DISASM_INTEL       1u /* Intel syntax */
#define LS_DISASM_SKIP_ZEROES 2u /* runs of zero bytes skipped as objdump -d skips them ("...") */

/* Called on each instruction in address order with its address, bytes and
 * text ("(bad)", LEN 1, for bytes that do not decode), or with TEXT NULL
 * for a run of zeros LS_DISASM_SKIP_ZEROES skips.  A nonzero return stops. */
typedef int (*ls_insn_fn)(void *ctx, uint64_t addr, const uint8_t *bytes, size_t len, const char *text);

/* Disassembles the SIZE bytes of CODE, the first at address ADDR, as
 * machine E_MACHINE's (an ELF e_machine: ls_file_machine; 62, x86-64, is the
 * one supported), calling FN on each instruction.  0, or -1 with ERR
 * (LS_ERR_UNSUPPORTED: no disassembler for E_MACHINE; LS_ERR_USAGE: unknown
 * FLAGS).  Safe on several threads at once.  Since LOOPSCOPE_0.2. */
int ls_disassemble(int e_machine, const uint8_t *code, size_t size, uint64_t addr, unsigned flags, ls_insn_fn fn,
                   void *ctx, ls_error *err);

/* ---- lookup ----------------------------------------------------------- */

/* The innermost scope (a statement) containing ADDR, or NULL. */
const ls_scope *ls_lookup(const ls_module *m, uint64_t addr);

/* The chain from the procedure (first) down to the statement (last); the
 * module and file scopes are not included.  Returns its length; 0 if ADDR
 * is outside any procedure.  An address just past a procedure's end (the
 * return address of a call that never returns, the call being the last
 * instruction) gets that call's procedure and statement, as addr2line gives
 * it the call's function and line: [proc, stmt].  A chain longer than CAP
 * keeps the procedure and the outermost CAP - 1 scopes, then the statement.
 * The scopes cut, ls_lookup_depth() less the length returned (nonzero also
 * for a shorter chain whose inlined calls nest past LS_MAX_CHAIN - 2), lie
 * between the last two. */
size_t ls_lookup_chain(const ls_module *m, uint64_t addr, const ls_scope **chain, size_t cap);
/* The full length of ADDR's chain, however deep; 0 outside procedures. */
size_t ls_lookup_depth(const ls_module *m, uint64_t addr);

/* The procedure containing ADDR, or NULL. */
const ls_scope *ls_lookup_proc(const ls_module *m, uint64_t addr);

/* ---- scopes ----------------------------------------------------------- */

ls_scope_kind ls_scope_kind_of(const ls_scope *s);
const char *ls_scope_kind_name(ls_scope_kind k); /* "proc", "loop", ... */

/* The accessors below (not ls_scope_kind_of) take NULL, ls_lookup's
 * answer for an address outside any procedure, and give NULL or 0. */
const ls_scope *ls_scope_parent(const ls_scope *s);
const ls_scope *ls_scope_first_child(const ls_scope *s);
const ls_scope *ls_scope_next_sibling(const ls_scope *s);

/* proc: the demangled name; inline: the callee's demangled name; else NULL. */
const char *ls_scope_name(const ls_scope *s);
/* proc: the linkage (mangled) name, where it differs; else NULL. */
const char *ls_scope_linkage_name(const ls_scope *s);
/* proc and inline: the callee's declaration file/line; loop: its source line;
 * stmt: its line; alien: the file the code comes from.  NULL/0 if unknown. */
const char *ls_scope_file(const ls_scope *s);
unsigned ls_scope_line(const ls_scope *s);
/* inline: where the call was made (in the caller's file). */
const char *ls_scope_call_file(const ls_scope *s);
unsigned ls_scope_call_line(const ls_scope *s);
unsigned ls_scope_call_column(const ls_scope *s);
/* proc: how many of its indirect jumps look like jump tables but could not
 * be resolved (0 normally); when not 0, its loops may be incomplete. */
unsigned ls_proc_unresolved_jumps(const ls_scope *s);

/* Address ranges, sorted and merged, half-open. */
size_t ls_scope_nranges(const ls_scope *s);
ls_range ls_scope_range(const ls_scope *s, size_t i);
/* The lowest address of the scope (its entry for a proc). */
uint64_t ls_scope_low(const ls_scope *s);

/* ---- loops (kind LS_SCOPE_LOOP) --------------------------------------- */

typedef struct ls_edge {
	uint64_t from; /* address of the branching instruction */
	uint64_t to;   /* target address */
} ls_edge;

uint64_t ls_loop_header(const ls_scope *loop);
unsigned ls_loop_depth(const ls_scope *loop);      /* 1: outermost in its proc */
int ls_loop_irreducible(const ls_scope *loop);
size_t ls_loop_nentries(const ls_scope *loop);      /* > 1: irreducible */
uint64_t ls_loop_entry(const ls_scope *loop, size_t i);
size_t ls_loop_nbackedges(const ls_scope *loop);
ls_edge ls_loop_backedge(const ls_scope *loop, size_t i);
size_t ls_loop_nexits(const ls_scope *loop);
ls_edge ls_loop_exit(const ls_scope *loop, size_t i);
/* NULL for a loop of the source; else what the compiler made the loop for,
 * with no loop statement of its own: "memcpy", "memmove", "memset" (an
 * inlined call expanded into a loop), "stack probe"
 * (-fstack-clash-protection), "array constructor" (new T[n]), "array
 * destructor" (delete[]).  Since LOOPSCOPE_0.2. */
const char *ls_loop_compiler_made(const ls_scope *loop);
/* NULL when the loop's line is its own statement's (its test, or found in
 * the source); else the fallback rule that guessed it: "before-body" (no
 * test of its own: the line before its first), "slides" (the slides'
 * ranking of its branches), "header" (its header's line), "entry" (the
 * branch entering it).  Since LOOPSCOPE_0.2. */
const char *ls_loop_line_guessed(const ls_scope *loop);
/* 0 when the loop is the only machine loop of its source loop; else its
 * number among them (1: the outermost, then in order) and, in *NPARTS (if
 * not NULL), how many there are: one source loop the compiler made into
 * nested or consecutive loops, all with the source loop's line.  Since
 * LOOPSCOPE_0.2. */
unsigned ls_loop_part(const ls_scope *loop, unsigned *nparts);

/* ---- unwind recipes ---------------------------------------------------- */

/* How to find the caller's frame from any instruction of a procedure,
 * computed from the code itself (the PLDI 2009 recipes: pushes, pops,
 * adjustments of SP, frame set-up and tear-down, alignment, variable frames,
 * tail calls, multiple epilogues, .cold parts, PLT stubs), for code whose
 * CFI is missing, incomplete or wrong, and to tell which code keeps a frame
 * pointer.  x86-64 only.  A procedure's recipes are computed the first time
 * one of its addresses is asked about, and kept with the module: the same
 * with and without the cache.  Safe from several threads at once.
 * Since LOOPSCOPE_0.2. */

typedef enum ls_unwind_base {
	LS_UNWIND_UNKNOWN = 0, /* the analysis cannot tell where the frame is */
	LS_UNWIND_SP,          /* CFA = SP + offset */
	LS_UNWIND_BP,          /* CFA = BP + offset (a frame pointer) */
	LS_UNWIND_REG,         /* CFA = register cfa_reg (DWARF number) + offset */
	LS_UNWIND_SP_DEREF,    /* CFA = *(SP + offset): a realigned frame keeps it there */
	LS_UNWIND_BP_DEREF,    /* CFA = *(BP + offset) (gcc's DRAP frames) */
} ls_unwind_base;

/* Where the caller's BP is. */
typedef enum ls_unwind_bp {
	LS_UNWIND_BP_SAME = 0, /* still in BP */
	LS_UNWIND_BP_SAVED,    /* saved at CFA + bp_offset */
	LS_UNWIND_BP_LOST,     /* overwritten without being saved (unknown) */
	LS_UNWIND_BP_SAVED_AT_BP, /* saved at BP + bp_offset (a realigned frame) */
} ls_unwind_bp;

/* What made an interval's recipe: the instruction before it, or how the
 * state reached its first instruction. */
typedef enum ls_unwind_rule {
	LS_UNWIND_RULE_ENTRY = 0,     /* the procedure's entry: CFA = SP+8, return address at SP */
	LS_UNWIND_RULE_PUSH,          /* a push */
	LS_UNWIND_RULE_POP,           /* a pop */
	LS_UNWIND_RULE_SP_ADJUST,     /* sub/add/lea of SP by a constant */
	LS_UNWIND_RULE_FRAME_SETUP,   /* BP set up as the frame pointer (mov %rsp,%rbp, enter) */
	LS_UNWIND_RULE_FRAME_TEARDOWN,/* SP from BP (leave, mov %rbp,%rsp, lea N(%rbp),%rsp) */
	LS_UNWIND_RULE_BP_SAVE,       /* the caller's BP stored in the frame (push %rbp, mov %rbp,N(%rsp)) */
	LS_UNWIND_RULE_BP_RESTORE,    /* the caller's BP back in BP (pop %rbp, leave, a load) */
	LS_UNWIND_RULE_ALIGN,         /* and $-N,%rsp: SP no longer known, the frame pointer is */
	LS_UNWIND_RULE_VARIABLE,      /* SP moved by an amount only known at run time (alloca) */
	LS_UNWIND_RULE_SP_COPY,       /* SP restored from a register that held a copy of it */
	LS_UNWIND_RULE_BRANCH,        /* the state a branch carries here (after a return or a tail call) */
	LS_UNWIND_RULE_COLD,          /* a .cold part: the state of the jump into it from its hot part */
	LS_UNWIND_RULE_PLT,           /* a PLT stub (counted straight through its pushes) */
	LS_UNWIND_RULE_RET_REPAIR,    /* worked back from the return that ends the block (paper: return repair) */
	LS_UNWIND_RULE_UNREACHED,     /* no path from the entry: carried on from the instruction before */
	LS_UNWIND_RULE_UNKNOWN,       /* SP or BP written in a way not tracked */
} ls_unwind_rule;
/* "entry", "push", ... */
const char *ls_unwind_rule_name(ls_unwind_rule r);

typedef struct ls_unwind_recipe {
	uint64_t lo, hi;            /* the interval [lo, hi) this recipe holds for */
	uint64_t proc;              /* the procedure's entry */
	ls_unwind_base cfa_base;    /* the canonical frame address: the caller's SP after the return */
	int64_t cfa_offset;
	int cfa_reg;                /* LS_UNWIND_REG: which register (DWARF's numbers: 10 is r10) */
	int64_t ra_offset;          /* the return address is at CFA + ra_offset (-8) */
	ls_unwind_bp bp;
	int64_t bp_offset;          /* LS_UNWIND_BP_SAVED: the caller's BP at CFA + bp_offset */
	int frame_pointer;          /* BP points into this frame: BP = CFA + fp_offset */
	int64_t fp_offset;
	int sp_known;               /* SP = CFA + sp_offset (when SP moved by a known amount) */
	int64_t sp_offset;
	int fp_chain;               /* BP points at the caller's saved BP with the return address
	                             * above it: frame-pointer chains pass through this frame */
	ls_unwind_rule rule;        /* what decided it */
	uint64_t rule_addr;         /* the instruction that did (0 for the entry) */
} ls_unwind_recipe;

/* The recipe of the instruction at ADDR (link-time): 0, or -1 with ERR
 * (LS_ERR_NOT_FOUND: no procedure holds ADDR; LS_ERR_UNSUPPORTED: not
 * x86-64; LS_ERR_NOMEM).  For a caller's frame, ask about the return
 * address - 1 (the call). */
int ls_unwind_recipe_at(const ls_module *m, uint64_t addr, ls_unwind_recipe *out, ls_error *err);
/* Every recipe of the procedure holding ADDR, in address order: returns how
 * many there are (0: none, or no procedure there), the first CAP in OUT. */
size_t ls_unwind_recipes(const ls_module *m, uint64_t addr, ls_unwind_recipe *out, size_t cap);

/* What the recipes know about a whole procedure. */
typedef struct ls_unwind_proc_info {
	uint64_t entry;
	uint64_t frame_size;        /* the largest CFA - SP in it (bytes; alloca not counted) */
	int keeps_frame_pointer;    /* it sets BP up as its frame pointer (push %rbp; mov %rsp,%rbp) */
	int variable_frame;         /* alloca or realignment: its frame size is not a constant */
	size_t ncalls;              /* call instructions (direct and indirect) */
	size_t nindirect_calls;
	size_t ntail_calls;         /* jumps to other procedures */
	size_t nrecipes;
	size_t unsure;              /* returns the analysis reached with an unexpected frame */
} ls_unwind_proc_info;
int ls_unwind_proc(const ls_module *m, uint64_t addr, ls_unwind_proc_info *out, ls_error *err);
/* The targets of the procedure's direct calls (KIND 0) or tail calls
 * (KIND 1), sorted and without duplicates: how many, the first CAP in OUT. */
size_t ls_unwind_proc_targets(const ls_module *m, uint64_t addr, int kind, uint64_t *out, size_t cap);

typedef enum ls_call_kind {
	LS_CALL_NONE = 0,  /* the instruction before is no call: RA is no return address */
	LS_CALL_DIRECT,    /* a call to *TARGET */
	LS_CALL_INDIRECT,  /* a call through a register or memory */
} ls_call_kind;
/* What the instruction that ends just before RA is (RA: a return address). */
ls_call_kind ls_unwind_call_before(const ls_module *m, uint64_t ra, uint64_t *target);

/* ---- data accesses (since LOOPSCOPE_0.2) -------------------------------- */

/* What each memory operand of a procedure reaches: a variable (static, in
 * the frame, or through a pointer DWARF places in a register), its type,
 * and the field inside it (design.md, "Accesses").  Computed on demand,
 * per procedure, from the DWARF (read then if the structure came from the
 * cache), and cached: a procedure's accesses read from the cache need no
 * DWARF. */
typedef enum ls_access_kind {
	LS_ACCESS_LOAD = 1,
	LS_ACCESS_STORE = 2,
	LS_ACCESS_BOTH = 3,   /* read-modify-write (add to memory, xchg) */
} ls_access_kind;

/* The rule that named the variable. */
typedef enum ls_access_rule {
	LS_RULE_NONE = 0,          /* no rule matched: no variable */
	LS_RULE_STATIC,            /* a static address (RIP-relative, absolute) inside a DW_OP_addr variable */
	LS_RULE_FRAME,             /* SP/BP-relative: a frame slot (DW_OP_fbreg, breg7/6), the CFA from the unwind recipes */
	LS_RULE_REGISTER,          /* through a pointer variable DWARF places in the base register (DW_OP_regN) */
	LS_RULE_REGISTER_VALUE,    /* through a pointer = base register + offset (DW_OP_bregN off; DW_OP_stack_value) */
	LS_RULE_REGISTER_MEMORY,   /* an object in memory at the base register + offset (DW_OP_bregN off) */
	LS_RULE_REGISTER_STATIC,   /* no variable in the base register, but every definition of it reaching
	                            * here (over the CFG) is one static address: lea sym(%rip), stepped or indexed */
	LS_RULE_REGISTER_FIELD_LOAD,  /* no variable in the base register, but every definition of it reaching
	                            * here is one load of a pointer from a named variable's field (s->next):
	                            * the object is that member's pointee, VARIABLE the loading expression */
	LS_RULE_REGISTER_ENTRY_VALUE, /* no variable in the base register, but it holds its value at the
	                            * procedure's entry on every path: the parameter DWARF puts there at entry */
	LS_RULE_REGISTER_NAMED_VALUE, /* no variable in the base register and no origin above, but on every path
	                            * its value is one DWARF names elsewhere: in a register at an earlier PC
	                            * (a location list ended while the value lived on), loaded from a field, or
	                            * an allocation's result named where it is put (a register DWARF names, a
	                            * store into a variable's field): all one variable's one field */
	LS_RULE_REGISTER_STEPPED,  /* no variable in the base register, but every definition of it reaching here
	                            * is a parameter's entry value or a load of a pointer from a named variable's
	                            * field, stepped (add/sub $k, lea k(%r), sub %r) on the way, to a base type
	                            * or an array of them: an element of the array it points into ("p[]") */
} ls_access_rule;

typedef struct ls_access {
	uint64_t addr;            /* the instruction */
	unsigned len;
	int operand_index;        /* which operand (AT&T order) */
	const char *operand;      /* as written: "0x10(%rdi,%rax,8)", "0x4010(%rip)" (resolved) */
	ls_access_kind kind;
	unsigned width;           /* bytes, 0 when not known */
	int indexed;              /* the operand has an index register */
	ls_access_rule rule;
	/* The rest is NULL/0 for LS_RULE_NONE. */
	const char *variable;     /* its name (an inlined scope's too) */
	const char *type;         /* the object at offset 0: the variable's type, or the pointee's */
	int64_t offset;           /* the operand's offset inside it (element 0's when indexed) */
	const char *field;        /* the path inside: "cells[].p.y", "[]", "Base::id", "" (the whole) */
	const char *field_type;   /* the type the path ends at */
	int bitfield;             /* the field is a bit-field (the access reads its storage unit) */
	const char *expr;         /* as C would write it: "g_grid.cells[].q", "c->p.x", "buf[]" */
} ls_access;

typedef struct ls_accesses ls_accesses;
/* The accesses of the procedure holding ADDR, in address order: NULL with
 * ERR (LS_ERR_NOT_FOUND: no procedure there; LS_ERR_DWARF: no debug
 * information; LS_ERR_UNSUPPORTED: not x86-64; LS_ERR_NOMEM).  Free with
 * ls_accesses_free; the strings live as long as the set. */
ls_accesses *ls_accesses_of(const ls_module *m, uint64_t addr, ls_error *err);
size_t ls_accesses_count(const ls_accesses *a);
const ls_access *ls_accesses_get(const ls_accesses *a, size_t i);
/* How many accesses the instruction at ADDR has (0, 1, or 2 for movs), the
 * first's index in *FIRST. */
size_t ls_accesses_at(const ls_accesses *a, uint64_t addr, size_t *first);
uint64_t ls_accesses_proc(const ls_accesses *a); /* the procedure's entry */
/* The start of the basic block holding ADDR (0: not known). */
uint64_t ls_accesses_block_of(const ls_accesses *a, uint64_t addr);
/* The last access before ADDR in ADDR's basic block, or NULL: where a
 * timer sample's IP, which skids past the instruction that took the time,
 * points back to (perf loops report -s type). */
const ls_access *ls_accesses_before(const ls_accesses *a, uint64_t addr);
void ls_accesses_free(ls_accesses *a);
const char *ls_access_kind_name(ls_access_kind k);  /* "load", "store", "load+store" */
const char *ls_access_rule_name(ls_access_rule r);  /* "static", "frame", "register", ... */

/* The static variable (global, or a function's static) holding link-time
 * data address ADDR of M, as a set of one access (rule LS_RULE_STATIC:
 * variable, type, offset, field, expr; addr is ADDR, operand ""): where
 * a sample's data address (PERF_SAMPLE_ADDR) falls.  NULL with ERR
 * (LS_ERR_NOT_FOUND: no variable there; LS_ERR_DWARF). */
ls_accesses *ls_data_static_at(const ls_module *m, uint64_t addr, ls_error *err);

/* The layout of an access's type (ls_access.type), as perf annotate
 * --data-type prints one: the type itself first (name "", depth 0), then
 * its members in DWARF order, a nested struct's, union's or class's
 * members after it one level deeper (a base class: a member named "");
 * an array of structs, its element's members, at element 0's offsets.
 * Offsets are from the type's start. */
typedef struct ls_type_member {
	const char *name;
	const char *type;
	int64_t offset, size;     /* bytes; size -1 when not known */
	unsigned depth;
} ls_type_member;
typedef struct ls_type_layout ls_type_layout;
/* A, one of SET's accesses with a type: NULL with ERR otherwise. */
ls_type_layout *ls_accesses_layout(const ls_accesses *set, const ls_access *a, ls_error *err);
size_t ls_type_layout_count(const ls_type_layout *l);
const ls_type_member *ls_type_layout_get(const ls_type_layout *l, size_t i);
void ls_type_layout_free(ls_type_layout *l);

/* ---- blame (since LOOPSCOPE_0.2) ---------------------------------------- */

/* Which program variables each instruction of a procedure is blamed on,
 * after Rutar's variable blame (design.md, "Blame"): explicitly when a
 * value it computes flows into a write of the variable (a store to it, a
 * register DWARF names it in, the return value), implicitly when it
 * computes the condition of a branch controlling blocks that write it
 * (loop exits included).  One instruction may be blamed on several
 * variables: a sample counts for each, and the shares add up to more than
 * 100%.  Computed on demand, per procedure, never cached; needs DWARF. */
typedef enum ls_blame_kind {
	LS_BLAME_EXPLICIT = 1,   /* data flow */
	LS_BLAME_IMPLICIT = 2,   /* control dependence only */
} ls_blame_kind;

typedef enum ls_blame_rule {
	LS_BLAME_STORE = 1,      /* it stores to the variable (or through the pointer variable) */
	LS_BLAME_REGISTER,       /* it writes the register DWARF names the variable in next */
	LS_BLAME_RETURN,         /* a ret: the value in %rax/%xmm0 is the exit variable <return> */
	LS_BLAME_FLOW,           /* a value it writes flows into an instruction blamed on it */
	LS_BLAME_CONTROL,        /* implicit: it feeds a branch controlling a write of it */
} ls_blame_rule;

/* The kinds of variable: exit variables leave the procedure and are
 * resolved in the caller along a sample's call chain. */
enum { LS_BLAME_LOCAL = 0, LS_BLAME_EXIT_PARAM = 1, LS_BLAME_EXIT_RETURN = 2 };

typedef struct ls_blame_entry {
	uint64_t addr;           /* the instruction */
	size_t var;              /* index for ls_blame_var_name */
	ls_blame_kind kind;      /* EXPLICIT also when implicit too (then ALSO_IMPLICIT) */
	ls_blame_rule rule;
	int also_implicit;
} ls_blame_entry;

typedef struct ls_blame ls_blame;
/* The blame of the procedure holding ADDR: NULL with ERR as
 * ls_accesses_of.  Free with ls_blame_free. */
ls_blame *ls_blame_of(const ls_module *m, uint64_t addr, ls_error *err);
uint64_t ls_blame_proc(const ls_blame *b);
size_t ls_blame_nvars(const ls_blame *b);
/* Variable V's name ("<return>" for the return value); *EXIT one of
 * LS_BLAME_LOCAL, _EXIT_PARAM (a pointer parameter, *PARAM its position
 * among the parameters), _EXIT_RETURN. */
const char *ls_blame_var_name(const ls_blame *b, size_t v, int *exit, int *param);
/* The entries of the instruction at ADDR (*OUT, one per variable). */
size_t ls_blame_at(const ls_blame *b, uint64_t addr, const ls_blame_entry **out);
/* The call in [LO, HI) to TARGET (else an indirect call, else any): where
 * a caller's frame called the procedure a sample is in; 0: none. */
uint64_t ls_blame_call_in(const ls_blame *b, uint64_t lo, uint64_t hi, uint64_t target);
/* The caller's variables argument PARAM (0: %rdi, ... 5: %r9) of the call
 * at CALL comes from (the variable DWARF names in the register, or the one
 * it was loaded from, through copies): the first CAP in VARS. */
size_t ls_blame_arg_sources(const ls_blame *b, uint64_t call, int param, size_t *vars, size_t cap);
void ls_blame_free(ls_blame *b);
const char *ls_blame_rule_name(ls_blame_rule r);  /* "store", "register", "return", "flow", "control" */
const char *ls_blame_kind_name(ls_blame_kind k);  /* "explicit", "implicit" */

/* ---- loop instrumentation points (since LOOPSCOPE_0.2) ----------------- */

/* Where a loop's events happen, as Paradyn defines them (seed 002): it is
 * entered (an edge into it from outside), an iteration begins (its
 * header), an iteration ends (a back edge), it is left (an edge out of it,
 * or a return or tail call inside it).  What a counter (perf loops stat)
 * or a tracer probes. */
typedef enum ls_point_kind {
	LS_POINT_ENTRY,    /* an edge into an entry block from outside the loop */
	LS_POINT_HEADER,   /* the header: an iteration begins */
	LS_POINT_BACKEDGE, /* an edge to an entry block from inside: an iteration ends */
	LS_POINT_EXIT,     /* an edge from inside to outside */
	LS_POINT_LEAVE,    /* a return or tail call inside: the loop is left with its procedure */
} ls_point_kind;

typedef enum ls_point_how {
	LS_HOW_BLOCK,       /* HEADER: every execution of PROBE */
	LS_HOW_FALLTHROUGH, /* FROM is no branch: it goes on into TO (every execution of FROM) */
	LS_HOW_JUMP,        /* FROM jumps to TO whatever happens (every execution of FROM) */
	LS_HOW_COND,        /* FROM is a conditional branch, the edge one of its two outcomes */
	LS_HOW_INDIRECT,    /* FROM is an indirect jump (a jump table's case) */
	LS_HOW_RETURN,      /* LEAVE: FROM is a return, or a tail call to TO */
} ls_point_how;

typedef struct ls_loop_point {
	ls_point_kind kind;
	ls_point_how how;
	uint64_t from, to;     /* the edge: FROM the last instruction of its block, TO a block's
	                        * first (HEADER: both the header; LEAVE by return: TO 0) */
	uint64_t probe;        /* the instruction whose executions count it: FROM (COND: those
	                        * with the outcome TAKEN), HEADER: the header; or one executed
	                        * as often in the same block (FALLTHROUGH: before FROM; HEADER:
	                        * after the header) when that one cannot carry a uprobe (x86:
	                        * a CS/DS/ES/SS or LOCK prefix, as padding has); 0: none can */
	uint64_t probe_offset; /* PROBE's offset in the file, what a uprobe takes; 0 if no
	                        * segment loads it (a .o, a .ko) or PROBE is 0 */
	int cond;              /* COND: the x86 condition code (0 o, 1 no, 2 b, 3 ae, 4 e, 5 ne,
	                        * 6 be, 7 a, 8 s, 9 ns, 10 p, 11 np, 12 l, 13 ge, 14 le, 15 g);
	                        * -1 for a branch on a register (jrcxz, loop) and other hows */
	const char *cond_name; /* COND: "ne", ... ("rcx" for -1); else NULL */
	int taken;             /* COND: 1 the edge is the branch taken, 0 its fall-through */
	int to_single_pred;    /* TO is entered by this edge alone: a probe on TO counts it */
	uint64_t to_probe;     /* TO_SINGLE_PRED: the instruction of TO's block to probe for
	                        * that (TO, or after it as for PROBE); else 0 */
	uint64_t to_probe_offset; /* its file offset, or 0 */
} ls_loop_point;

/* LOOP's points (LOOP a scope of kind LS_SCOPE_LOOP of M): the entry edges,
 * the header, the back edges, the exits, then the returns and tail calls,
 * each group in address order.  Writes the first CAP to OUT and returns
 * how many there are, or -1 with ERR.  Decodes LOOP's procedure: call it
 * for the loops wanted, not every loop of a large binary in a hot path.
 * Since LOOPSCOPE_0.2. */
int ls_loop_points(const ls_module *m, const ls_scope *loop, ls_loop_point *out, size_t cap, ls_error *err);
const char *ls_point_kind_name(ls_point_kind k); /* "entry", "header", ... */
const char *ls_point_how_name(ls_point_how h);   /* "block", "fallthrough", ... */

/* The loops SPEC names in M, the way the front ends take a LOOP argument:
 *   0xADDR        the loop whose header is ADDR
 *   FILE:LINE     the loops of that line (FILE: the path's last components,
 *                 "a.c" or "src/a.c")
 *   FUNCTION      every loop of the procedure (a symbol's name)
 *   FUNCTION:N    its Nth loop (1: the first in the scope tree's preorder,
 *                 what `loopscope probes BINARY FUNCTION` numbers)
 *   NULL          every loop of M, in the scope tree's preorder (0 if none)
 * Writes the first CAP to OUT (outer loops before inner, by address) and
 * returns how many there are; -1 with ERR (LS_ERR_NOT_FOUND: none, naming
 * SPEC).  Since LOOPSCOPE_0.2. */
int ls_loops_find(const ls_module *m, const char *spec, const ls_scope **out, size_t cap, ls_error *err);

/* ---- output ------------------------------------------------------------ */

typedef enum ls_format {
	LS_FORMAT_TEXT,
	LS_FORMAT_JSON,
	LS_FORMAT_XML, /* HPCToolkit structure file, DTD 4.9 */
} ls_format;

#include <stdio.h>
int ls_write_structure(const ls_module *m, ls_format fmt, FILE *out, ls_error *err);
/* One JSON object (the lookup contract of design.md), without a newline:
 * {"addr":"0x..","module":PATH,"chain":[SCOPE,...]} with, when they apply,
 * "cut":N (the scopes left out between the last two of a chain deeper than
 * LS_MAX_CHAIN) and "error" (no procedure holds ADDR).  A proc scope says
 * "unresolved_jumps":N when its loops may be incomplete (see
 * ls_proc_unresolved_jumps).  Every front end prints chains with it. */
void ls_write_chain_json(const ls_module *m, uint64_t addr, FILE *out);
/* The same object into BUF (SIZE bytes, NUL-terminated, cut to fit) for
 * callers without a stream (the GDB module parses it): returns its whole
 * length, as snprintf does; 0 if out of memory.  Since LOOPSCOPE_0.2. */
size_t ls_chain_json(const ls_module *m, uint64_t addr, char *buf, size_t size);
/* Writes S as a JSON string literal (quoted, escaped) to OUT; NULL as null. */
void ls_json_string(FILE *out, const char *s);

/* ---- finding debug files ------------------------------------------------ */

/* What a front end looks for before it can open a module: a binary's
 * separate debug file by build-id, or a kernel's (vmlinux) or kernel
 * module's (.ko) file with debug information.  ls_module_open finds a
 * module's own separate debug file by itself. */
typedef enum ls_debug_target {
	LS_DEBUG_BY_BUILD_ID, /* DEBUGDIR/.build-id/xx/yyyy.debug, then debuginfod */
	LS_DEBUG_VMLINUX,     /* the kernel image of a release */
	LS_DEBUG_KMODULE,     /* a kernel module of a release */
} ls_debug_target;

typedef struct ls_debug_query {
	size_t size;           /* sizeof(ls_debug_query) as the caller sees it: set by ls_debug_query_init */
	ls_debug_target target;
	const char *build_id;  /* hex; NULL if unknown (then no check and no debuginfod) */
	const char *release;   /* kernel release, as uname -r prints it; NULL: the running kernel's */
	const char *module;    /* LS_DEBUG_KMODULE: its name ("nf_conntrack"; '-' and '_' alike) */
	const char *dirs;      /* LS_DEBUG_KMODULE: directories searched first, whole trees, for NAME.ko
	                        * (colon-separated; decode's and perf loops' --modules) */
	const char *debug_file_path; /* as ls_options.debug_file_path (NULL: /usr/lib/debug) */
	int debuginfod;        /* ask the servers of $DEBUGINFOD_URLS when nothing here matches (1) */
	int progress;          /* a debuginfod download shows its progress on stderr when it is a
	                        * terminal (0) */
} ls_debug_query;

/* Sets Q to the defaults (target LS_DEBUG_BY_BUILD_ID, debuginfod 1) and
 * Q->size to SIZE: call ls_debug_query_init.  Since LOOPSCOPE_0.2. */
void ls_debug_query_init_sized(ls_debug_query *q, size_t size);
static inline void ls_debug_query_init(ls_debug_query *q)
{
	ls_debug_query_init_sized(q, sizeof *q);
}

#define LS_FOUND_BUILD_ID_DIFFERS 1u /* found by name only: its build-id is not Q's (none matched) */
#define LS_FOUND_DEBUGINFOD       2u /* fetched by debuginfod (a file in its cache) */

/* Looks for Q's file, in this order (DEBUGDIR: each directory of
 * debug_file_path; R: the release; N: the module):
 *
 *   vmlinux  DEBUGDIR/.build-id/xx/yyyy.debug, DEBUGDIR/boot/vmlinux-R[.debug],
 *            DEBUGDIR/lib/modules/R/vmlinux, /boot/vmlinux-R,
 *            /lib/modules/R/build/vmlinux, /lib/modules/R/vmlinux
 *   module   N.ko under Q->dirs, DEBUGDIR/.build-id/xx/yyyy.debug,
 *            N.ko under DEBUGDIR/lib/modules/R
 *
 * then debuginfod.  With a build-id, a file whose build-id differs is
 * passed over, and given (LS_FOUND_BUILD_ID_DIFFERS in *FOUND) only if
 * nothing matches.  Writes the path into PATH (SIZE bytes) and sets *FOUND
 * (may be NULL): 0, or -1 with ERR: LS_ERR_NOT_FOUND, or LS_ERR_IO when a
 * debuginfod server could not be reached; the message says which ("no
 * server has build-id ...", "server unreachable (URL: Connection
 * refused)").  debuginfod's client library (and libcurl) is loaded only
 * when $DEBUGINFOD_URLS names a server.
 * Since LOOPSCOPE_0.2. */
int ls_find_debug_file(const ls_debug_query *q, char *path, size_t size, unsigned *found, ls_error *err);

/* ---- opening input files ------------------------------------------------ */

/* Opens PATH read-only, close-on-exec, if it is a regular file: a FIFO, a
 * device or a socket is refused without being opened (a plain open() of a
 * FIFO waits for a writer for ever, a device's may act), and so is a file
 * of /proc, /sys and the like unless FLAGS has LS_OPEN_PSEUDO_FS (their
 * sizes say nothing of what a read returns; reading /proc/kmsg consumes
 * the kernel's log).  Every file libloopscope reads is opened so; front
 * ends open theirs with it too.  Returns the descriptor, or -1 with ERR:
 * "PATH: is a directory", "PATH: not a regular file (a FIFO)", "PATH: not
 * read: a file of /proc, ...", "PATH: No such file or directory"
 * (LS_ERR_NOT_FOUND), ...  FLAGS (since LOOPSCOPE_0.2 with issue 28's):
 *   LS_OPEN_SOURCE     a source file, read whole: refused past
 *                      LS_MAX_SOURCE_SIZE ("PATH: not read: 4096 MiB, more
 *                      than the 16 MiB a source file may have")
 *   LS_OPEN_PSEUDO_FS  a file of /proc or /sys is wanted (kallsyms)
 * Since LOOPSCOPE_0.2. */
#define LS_OPEN_SOURCE 1u
#define LS_OPEN_PSEUDO_FS 2u
/* The largest source file read (for loop lines, and by annotate): larger
 * than any real one (sqlite3.c, the amalgamation, is 9 MB). */
#define LS_MAX_SOURCE_SIZE ((uint64_t)16 << 20)
int ls_open_regular(const char *path, unsigned flags, ls_error *err);

/* ---- the analysis cache ------------------------------------------------ */

/* One cache file, as ls_cache_list() and friends see it. */
typedef struct ls_cache_info {
	const char *file;        /* the cache file */
	uint64_t size;           /* its bytes */
	int64_t last_used;       /* seconds since the epoch (its last hit or store) */
	const char *binary;      /* the binary it was made from, NULL if unreadable */
	const char *build_id;    /* hex, or NULL */
	int loops;               /* made with loops */
	const char *problem;     /* NULL: usable; else why it can only miss, or why it went */
} ls_cache_info;
typedef void (*ls_cache_fn)(void *ctx, const ls_cache_info *entry);

/* The cache directory OPT uses (opt->cache_dir, $XDG_CACHE_HOME/loopscope,
 * ~/.cache/loopscope): 0, or -1 if there is none. */
int ls_cache_dir(const ls_options *opt, char *buf, size_t size);
/* The size bound of the cache (opt->cache_max_bytes, $LOOPSCOPE_CACHE_SIZE, 1 GiB). */
uint64_t ls_cache_bound(const ls_options *opt);
/* FN on every entry, most recently used first. */
int ls_cache_list(const ls_options *opt, ls_cache_fn fn, void *ctx, ls_error *err);
/* Removes what can only miss (stale temporaries, corrupt entries, entries
 * of another format or build, entries whose binary is gone or changed),
 * then the least recently used entries beyond the bound; FN on each. */
int ls_cache_prune(const ls_options *opt, ls_cache_fn fn, void *ctx, ls_error *err);
/* Removes every entry and temporary; FN on each. */
int ls_cache_clear(const ls_options *opt, ls_cache_fn fn, void *ctx, ls_error *err);

/* ---- for programs that use libdwfl beside libloopscope ------------------ */

#ifdef _LIBDWFL_H
/* A Dwfl_Callbacks.find_debuginfo that searches as
 * dwfl_standard_find_debuginfo does, but first makes sure that none of the
 * names it may open is a FIFO, device or socket (an open() of a FIFO blocks
 * for ever); if one is, it warns on stderr and finds nothing. */
int ls_dwfl_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
			   const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			   char **debuginfo_file_name);
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
