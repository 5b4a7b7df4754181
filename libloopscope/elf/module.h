/* module.h - struct ls_module, the handle every stage reads and
 * writes its part of (which part: the comments of its fields), and the
 * ELF file stage (module.c): opens the file with libdwfl, finds its
 * debug information, makes elf, dwfl, dwarf and text. */
#ifndef LOOPSCOPE_MODULE_H
#define LOOPSCOPE_MODULE_H

#include "dwarf/inline_tree.h"
#include "dwarf/linemap.h"
#include "dwarf/procs.h"
#include "elf/relocate.h"
#include "elf/symbols.h"
#include "structure/lookup.h"
#include "structure/scope.h"
#include "support/base.h"

#include <sys/stat.h>

/* ---- the ELF file (module.c) ---------------------------------------------- */

/* An executable section's bytes at its link-time address. */
struct ls_text {
	uint64_t addr;
	uint64_t size;
	const uint8_t *data; /* owned by libelf */
	const char *name;
};

/* ---- the module ------------------------------------------------------------ */

struct ls_module {
	ls_options opt;
	char *path;                /* absolute */
	char *debug_path;          /* debuginfo.c: the file DWARF is read from, or NULL */
	struct stat debug_stat;    /* debuginfo.c: that file when it was found (the cache's key) */
	char *build_id;            /* hex */
	int fd;
	Dwfl *dwfl;
	Dwfl_Module *dwmod;
	Elf *elf;                  /* the main file (code) */
	Dwarf *dwarf;              /* NULL without debug info, or until ls_elf_load_dwarf */
	bool dwarf_found;          /* module.c: debug info is there (in the file or a debug file);
	                            * false again if ls_elf_load_dwarf cannot read it */
	bool dwarf_tried;          /* ls_elf_load_dwarf ran */
	bool debuginfod_tried;     /* debuginfo.c asked debuginfod (debug_path: what it gave) */
	char *debuginfod_why;      /* debuginfo.c: why debuginfod gave nothing, or NULL */
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
	/* unwind/recipes.c: the unwind recipes computed so far, per
	 * procedure, on first use after the open; freed by ls_unwind_free. */
	struct ls_unwind_cache *unwind;
	/* data/accesses.c: the variables at static addresses, by address,
	 * on first use; freed by ls_data_free. */
	struct ls_data_globals *data_globals;
	/* source.c: source files read for the loop lines, during the
	 * analysis only (NULL otherwise). */
	struct ls_source_cache *sources;
	/* analyze.c: every source file the loop lines looked at (found or
	 * not), sorted by path, one each: stored with the tree (cache.c) */
	struct ls_source_probe *source_probes;
	size_t nsource_probes;
	bool debug_loop_lines;     /* $LOOPSCOPE_DEBUG_LOOP_LINES: each loop's line and rule on stderr */
	int debug_loop_lines_level; /* its value: 2 also dumps each loop's facts */

	struct ls_strtab strings;
	struct ls_symindex *symindex; /* symbols.c, built on first use */
	struct ls_procs procs;
	struct ls_linemap lines;
	struct ls_inline_index inl;

	/* The result: the procedures analyzed so far, their scopes and the
	 * lookups' index of each (analyze.c); the whole tree once every one is
	 * there (root: NULL until then). */
	struct ls_analysis *an;
	struct ls_arena arena;     /* what a tree made by hand is in (unit tests) */
	struct ls_scope *root;
	bool facts_on_demand;      /* cfg/noreturn.c: each fact when a call asks (opt.on_demand) */
	/* cache.c: the entry read for this module (its head, its records read
	 * on demand), or NULL. */
	struct ls_cache_entry *cache;
	/* cache_accesses.c: the accesses computed by this run, kept for the
	 * store, and counts; NULL without the cache. */
	struct ls_cache_acc *cache_acc;
};

/* module.c: open and index the ELF; fills path..text. */
int ls_elf_open(ls_module *m, const char *path, ls_error *err);
/* Read the DWARF that ls_elf_open found (m->dwarf_found): only an analysis
 * needs it, not a structure from the cache, and libdw inflates every
 * compressed debug section as it opens them (80 ms for libc's).  Sets
 * m->dwarf, or warns and goes on without it.  Idempotent. */
void ls_elf_load_dwarf(ls_module *m, ls_error *err);
void ls_elf_close(ls_module *m);
/* BITS as hex (malloc'd: ls_xmalloc). */
char *ls_hex_string(const unsigned char *bits, int len);
/* ELF has a section named WANT. */
bool ls_elf_has_section(Elf *elf, const char *want);
/* The section holding ADDR, or NULL. */
const struct ls_text *ls_text_find(const ls_module *m, uint64_t addr);
/* The section holding ADDR, else the first one after ADDR, or NULL: where
 * a sweep from ADDR goes on (what is not code skipped in one step). */
const struct ls_text *ls_text_from(const ls_module *m, uint64_t addr);
/* The path of the file (the binary, or its debug file) whose mapping holds
 * ADDR, or NULL: which file shrank under a read that raised SIGBUS. */
const char *ls_elf_mapped_file(const ls_module *m, const void *addr);

#endif
