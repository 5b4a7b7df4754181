/* api.c - the module's life cycle: open (load, index, analyze or load from
 * the cache, index for lookups), the module getters, and close. */
#include "internal.h"
#include "cfg.h"
#include "source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* LOOPSCOPE_TIMING=1 prints each stage's wall time on stderr: what the
 * benchmarks in bench/ use to tell where the time goes. */
static double stage_clock(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void stage_done(const char *stage, double *t0)
{
	static int enabled = -1; /* read-only after the first call's race, which is benign */
	if (enabled < 0)
		enabled = getenv("LOOPSCOPE_TIMING") != NULL;
	double t = stage_clock();
	if (enabled)
		fprintf(stderr, "loopscope: timing: %-12s %8.3f s\n", stage, t - *t0);
	*t0 = t;
}

void ls_options_init(ls_options *opt)
{
	memset(opt, 0, sizeof *opt);
	opt->use_cache = 1;
	opt->progress = 1;
	opt->want_loops = 1;
}

/* The stages that read DWARF and symbols, for the analysis. */
static int build_indexes(ls_module *m, double *t0, ls_error *err)
{
	if (m->dwarf && ls_inline_build(m, err) < 0)
		return -1;
	stage_done("inline tree", t0);
	ls_procs_build(m);
	stage_done("procedures", t0);
	if (m->dwarf && ls_linemap_build(m, err) < 0)
		return -1;
	stage_done("line map", t0);
	return 0;
}

/* The pipeline on an open handle: the ELF file, then the structure from
 * the cache or from the analysis, then the lookup index. */
static int open_module(ls_module *m, const char *path, ls_error *err)
{
	double t0 = stage_clock();
	if (ls_elf_open(m, path, err) < 0)
		return -1;
	stage_done("elf", &t0);
	if (!m->dwarf)
		ls_warn(&m->opt, "%s: no DWARF debug information: procedures from symbols only, no inline "
		        "frames or lines", m->path);
	/* A cached structure needs none of the DWARF indexes: lookups use the
	 * tree, symbol lookups fall back to it (procs.c). */
	if (m->opt.use_cache && ls_cache_load(m)) {
		stage_done("cache load", &t0);
	} else {
		stage_done("cache miss", &t0);
		if (build_indexes(m, &t0, err) < 0)
			return -1;
		if (ls_analyze(m, err) < 0)
			return -1;
		stage_done("analysis", &t0);
		if (m->opt.use_cache)
			ls_cache_store(m);
		stage_done("cache store", &t0);
	}
	if (ls_lookup_index_build(&m->lookup, m->root, err) < 0)
		return -1;
	stage_done("lookup index", &t0);
	ls_debug_check_module(m);
	return 0;
}

ls_module *ls_module_open(const char *path, const ls_options *opt, ls_error *err)
{
	if (!path || !*path) {
		ls_set_error(err, LS_ERR_USAGE, "no file name given");
		return NULL;
	}
	if (err) {
		err->code = LS_OK;
		err->message[0] = 0;
	}
	ls_module *m = calloc(1, sizeof *m);
	if (!m) {
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", path);
		return NULL;
	}
	m->fd = -1;
	if (opt)
		m->opt = *opt;
	else
		ls_options_init(&m->opt);
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env)) {
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", path);
		ls_module_close(m);
		return NULL;
	}
	int rc = open_module(m, path, err);
	ls_oom_pop(&g);
	if (rc < 0) {
		if (err && err->code == LS_OK)
			ls_set_error(err, LS_ERR_NOT_ELF, "%s: cannot be analyzed", path);
		ls_module_close(m);
		return NULL;
	}
	return m;
}

void ls_module_close(ls_module *m)
{
	if (!m)
		return;
	ls_lookup_index_free(&m->lookup);
	ls_source_cache_free(m->sources); /* set only during the analysis */
	ls_symindex_free(m);
	ls_cfg_module_free(m);
	ls_inline_free(&m->inl);
	ls_linemap_free(&m->lines);
	ls_procs_free(&m->procs);
	for (size_t i = 0; i < m->nthread_arenas; i++)
		ls_arena_free(&m->thread_arenas[i]);
	free(m->thread_arenas);
	ls_arena_free(&m->arena);
	ls_elf_close(m);
	ls_strtab_free(&m->strings);
	free(m->cache_blob);
	free(m->path);
	free(m->debug_path);
	free(m->build_id);
	free(m);
}

const char *ls_module_path(const ls_module *m) { return m->path; }
const char *ls_module_debug_path(const ls_module *m) { return m->debug_path; }
const char *ls_module_build_id(const ls_module *m) { return m->build_id; }
int ls_module_has_dwarf(const ls_module *m) { return m->dwarf != NULL; }
int ls_module_is_relocatable(const ls_module *m) { return m->relocatable; }
int ls_module_from_cache(const ls_module *m) { return m->from_cache; }
const ls_scope *ls_module_root(const ls_module *m) { return m->root; }

static int write_structure(const ls_module *m, ls_format fmt, FILE *out, ls_error *err)
{
	switch (fmt) {
	case LS_FORMAT_TEXT: return ls_write_text(m, out, err);
	case LS_FORMAT_JSON: return ls_write_json(m, out, err);
	case LS_FORMAT_XML: return ls_write_xml(m, out, err);
	}
	ls_set_error(err, LS_ERR_USAGE, "unknown output format");
	return -1;
}

int ls_write_structure(const ls_module *m, ls_format fmt, FILE *out, ls_error *err)
{
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env)) { /* what was written stays written */
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", m->path);
		return -1;
	}
	int rc = write_structure(m, fmt, out, err);
	ls_oom_pop(&g);
	return rc;
}
