/* pipeline.c - the order of libloopscope's stages, in one place.
 *
 * ls_module_open (api.c) runs ls_pipeline_open on a fresh handle:
 *
 *   1. ELF file (elf/module.c, elf/relocate.c)
 *        reads  the file, its separate debug file (build-id, debuglink, debuginfod)
 *        makes  m->elf, dwfl, dwarf (NULL without), text (code bytes, relocated in a .o/.ko),
 *               path, debug_path, build_id, bias
 *   2. cache (cache/cache.c)
 *        reads  m's identity (build-id, file size and time, options, debug file, sources)
 *        makes  m->cache: the entry's head -- the procedures, who owns each address --
 *               when an entry holds for m; then 3-5 wait until a procedure is not in it
 *               (on demand without an entry: until a lookup needs the procedure table)
 *   3. inline tree (dwarf/inline_tree.c; file names: dwarf/line_files.c)
 *        reads  m->dwarf (.debug_info, once; .debug_line's unit headers)
 *        makes  m->inl: inlined calls by address; the subprograms with code
 *   4. procedures (dwarf/procs.c, dwarf/proc_bounds.c)
 *        reads  m->inl's subprograms, the symbol table, the PLT, .eh_frame's FDEs, direct calls
 *        makes  m->procs: procedures by address, ranges clamped
 *   5. line map (dwarf/linemap.c)
 *        reads  m->dwarf (.debug_line)
 *        makes  m->lines: sorted rows, the statements hidden under loop headers
 *               (opt.on_demand: only the units list; a unit's rows are read when
 *               a procedure it covers is analyzed, ls_pipeline_want_lines)
 *   6. analysis (analyze.c: each procedure once, from the cache or through
 *      ls_pipeline_proc below; all of them now on N threads, or with
 *      opt.on_demand those the lookups ask for, when they ask)
 *        reads  m->cache's records; m->procs, m->lines, m->inl, m->text; source files
 *        makes  each procedure's scope and the index of its statements by address;
 *               m->root (module > file > proc) once every procedure is there
 *   7. cache store (cache/cache_store.c): after 6 (on demand: when the module closes)
 *        reads  what 6 analyzed, m->cache's records, the source files looked at
 *        makes  the module's entry, grown
 *
 * and, with --enable-debug-checks, checks every invariant (structure/check.c).
 *
 * After the open, on demand (the first ls_unwind_* call about a procedure):
 *
 *   8. unwind recipes (unwind/recipes.c)
 *        reads  the scope tree's procedure, its CFG built alone (cfg.h), the kernel's jump labels
 *        makes  m->unwind: per procedure, where the caller's frame is from each instruction
 *
 * ls_pipeline_proc, on one procedure P:
 *
 *   a. CFG (cfg/cfg.c; cfg/eh_frame.c, cfg/jump_tables.c, cfg/noreturn.c)
 *        reads  P's ranges in m->text, m->procs (tail calls), the noreturn facts of its callees
 *        makes  the CFG: instructions, blocks, edges (freed after d)
 *   b. loop forest (loops/loop_forest.c)
 *        reads  the CFG
 *        makes  the loop nesting forest, irreducible loops too (freed after d)
 *   c. (no CFG: P's code as one run, no loops)
 *   d. structure (structure/structure.c, loops/loop_line.c, structure/normalize.c)
 *        reads  the CFG, the loops, m->lines, m->inl
 *        makes  P's scope, in this thread's arena
 */
#include "analyze.h"
#include "cache/cache.h"
#include "cfg/cfg.h"
#include "dwarf/inline_tree.h"
#include "dwarf/linemap.h"
#include "dwarf/procs.h"
#include "elf/module.h"
#include "loops/loop_forest.h"
#include "pipeline.h"
#include "structure/check.h"
#include "structure/lookup.h"
#include "structure/scope.h"
#include "structure/structure.h"
#include "support/base.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* LOOPSCOPE_TIMING=1 prints each stage's wall time on stderr, and the
 * module it was for: what the benchmarks in bench/ use to tell where the
 * time goes.  LOOPSCOPE_TIMING=stop:STAGE also stops the process (SIGSTOP)
 * once STAGE is done, so that a test can change the files under it at a
 * known point (tests/core-truncate.sh) instead of racing a poll of stderr. */
double ls_stage_clock(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

bool ls_timing(void)
{
	/* atomic: perf-loops opens modules on two threads at once */
	static _Atomic int enabled = -1;
	if (enabled < 0)
		enabled = getenv("LOOPSCOPE_TIMING") != NULL;
	return enabled;
}

void ls_stop_point(const char *point)
{
	const char *timing = ls_timing() ? getenv("LOOPSCOPE_TIMING") : NULL;
	if (timing && strncmp(timing, "stop:", 5) == 0 && strcmp(timing + 5, point) == 0)
		raise(SIGSTOP);
}

void ls_stage_done(const ls_module *m, const char *stage, double *t0)
{
	double t = ls_stage_clock();
	if (ls_timing()) {
		fprintf(stderr, "loopscope: timing: %-12s %8.3f s  %s\n", stage, t - *t0, m->path ? m->path : "");
		/* read afresh: a test may unset it once it has stopped us */
		const char *timing = getenv("LOOPSCOPE_TIMING");
		if (timing && strncmp(timing, "stop:", 5) == 0 && strcmp(timing + 5, stage) == 0)
			raise(SIGSTOP);
	}
	*t0 = t;
}

static bool lines_on_demand(const ls_module *m);

/* 3-5: the stages that read DWARF and symbols, for the analysis. */
static int build_indexes(ls_module *m, double *t0, ls_error *err)
{
	ls_elf_load_dwarf(m, err);
	ls_stage_done(m, "dwarf", t0);
	if (m->dwarf && ls_inline_build(m, err) < 0)
		return -1;
	ls_stage_done(m, "inline tree", t0);
	ls_procs_build(m);
	ls_stage_done(m, "procedures", t0);
	if (m->dwarf && (lines_on_demand(m) ? ls_linemap_open(m, err) : ls_linemap_build(m, err)) < 0)
		return -1;
	ls_stage_done(m, "line map", t0);
	return 0;
}

/* On demand the line map reads only the units of the code analyzed
 * (ls_pipeline_want_lines) -- unless some code belongs to whichever
 * procedure jumps into it (cfg.c's fragments): a CFG may then reach
 * code that no procedure's ranges say it has. */
static bool lines_on_demand(const ls_module *m)
{
	if (!m->opt.on_demand)
		return false;
	for (size_t i = 0; i < m->ntext; i++)
		if (ls_cfg_fragment_section(m->text[i].name))
			return false;
	return true;
}

void ls_pipeline_want_lines(ls_module *m, const uint32_t *procs, size_t n)
{
	if (!m->lines.lazy)
		return; /* built whole */
	size_t total = 0, k = 0;
	for (size_t i = 0; i < n; i++)
		total += m->procs.procs[procs[i]].nranges;
	ls_range *r = ls_xmalloc((total + 1) * sizeof *r);
	for (size_t i = 0; i < n; i++) {
		const struct ls_proc *p = &m->procs.procs[procs[i]];
		memcpy(r + k, p->ranges, p->nranges * sizeof *r);
		k += p->nranges;
	}
	double t0 = ls_stage_clock();
	size_t nread = ls_linemap_want(m, r, k);
	free(r);
	if (nread && ls_timing()) {
		size_t nunits, ndone;
		ls_linemap_units(&m->lines, &nunits, &ndone);
		fprintf(stderr, "loopscope: timing: %-12s %8.3f s  %s (%zu units read, %zu of %zu)\n", "lines",
		        ls_stage_clock() - t0, m->path ? m->path : "", nread, ndone, nunits);
	}
}

int ls_pipeline_indexes(ls_module *m, ls_error *err)
{
	double t0 = ls_stage_clock();
	return build_indexes(m, &t0, err);
}

/* The pipeline on an open handle: the ELF file, the cache entry's head,
 * then every procedure's analysis (from the cache or the stages) and the
 * store -- or, on demand, nothing more until the lookups ask. */
int ls_pipeline_open(ls_module *m, const char *path, ls_error *err)
{
	double t0 = ls_stage_clock();
	if (ls_elf_open(m, path, err) < 0)
		return -1;
	ls_stage_done(m, "elf", &t0);
	if (!m->dwarf_found)
		ls_warn(&m->opt, "%s: no DWARF debug information%s%s: no inline frames or lines", m->path,
		        m->debuginfod_why ? "; " : "", m->debuginfod_why ? m->debuginfod_why : "");
	/* An entry's procedures need none of the DWARF indexes (nor the DWARF
	 * itself, read only for a procedure not in it: build_indexes). */
	ls_cache_open(m);
	ls_stage_done(m, m->cache ? "cache load" : "cache miss", &t0);
	if (ls_analysis_init(m, err) < 0)
		return -1;
	if (m->opt.on_demand)
		return 0;
	if (ls_analyze_all(m, err) < 0)
		return -1;
	ls_stage_done(m, "analysis", &t0);
	if (ls_cache_store(m))
		ls_stage_done(m, "cache store", &t0);
	ls_debug_check_module(m);
	return 0;
}

struct ls_scope *ls_pipeline_proc(ls_module *m, const struct ls_proc *proc, struct ls_decoder *dec,
                                  struct ls_arena *arena)
{
	struct ls_cfg cfg = { 0 };
	struct ls_loop_forest lf = { 0 };
	bool built = false, have_cfg = false, have_loops = false;
	ls_proc_name(m, proc); /* the stages below read it */
	if (dec && m->opt.want_loops) {
		/* handed back when done: kept for the unwind recipes' own build
		 * of the same code that may follow, without a copy */
		struct ls_cfg_env env = { .m = m, .dec = dec, .hand_back = true };
		built = ls_cfg_build(&env, proc, &cfg) == 0;
		have_cfg = built && cfg.nblocks > 0;
		if (have_cfg)
			have_loops = ls_loop_forest_build(&cfg, &lf) == 0;
	}
	struct ls_scope *s = ls_structure_build_proc(m, proc, have_cfg ? &cfg : NULL,
	                                             have_loops ? &lf : NULL, arena);
	if (s && have_cfg) {
		s->unresolved_jumps = cfg.unresolved_jumps;
		s->first_unresolved = cfg.first_unresolved;
	}
	if (have_loops)
		ls_loop_forest_free(&lf);
	if (built)
		ls_cfg_keep(m, proc, &cfg);
	return s;
}
