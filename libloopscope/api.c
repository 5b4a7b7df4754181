/* api.c - the module's life cycle: open (the stages in pipeline.c, under
 * an out-of-memory guard), the module getters, and close; the options as
 * the caller gives them (of its own size: loopscope.h, "ABI rules"); the
 * version. */
#include "analyze.h"
#include "cache/cache.h"
#include "cfg/cfg.h"
#include "data/accesses.h"
#include "dwarf/inline_tree.h"
#include "dwarf/linemap.h"
#include "dwarf/procs.h"
#include "elf/module.h"
#include "elf/symbols.h"
#include "loops/source.h"
#include "output/output.h"
#include "pipeline.h"
#include "structure/lookup.h"
#include "structure/scope.h"
#include "support/base.h"
#include "unwind/recipes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *ls_version(void)
{
	return LS_VERSION;
}

/* The defaults of every field, the ones added since the caller was built
 * included. */
static void options_defaults(ls_options *opt)
{
	memset(opt, 0, sizeof *opt);
	opt->size = sizeof *opt;
	opt->use_cache = 1;
	opt->progress = 1;
	opt->want_loops = 1;
	opt->read_sources = 1;
}

void ls_options_init_sized(ls_options *opt, size_t size)
{
	if (!opt || size < sizeof opt->size)
		return;
	ls_options full;
	options_defaults(&full);
	full.size = size;
	memcpy(opt, &full, size < sizeof full ? size : sizeof full);
	if (size > sizeof full) /* a newer caller: its fields are unknown here */
		memset((char *)opt + sizeof full, 0, size - sizeof full);
}

int ls_options_import(ls_options *dst, const ls_options *src, ls_error *err)
{
	options_defaults(dst);
	if (!src)
		return 0;
	if (src->size < LS_OPTIONS_MIN_SIZE) {
		ls_set_error(err, LS_ERR_USAGE, "ls_options of %zu bytes: not set by ls_options_init", src->size);
		return -1;
	}
	memcpy(dst, src, src->size < sizeof *dst ? src->size : sizeof *dst);
	dst->size = sizeof *dst;
	return 0;
}

/* A read of the mapping of the binary or its debug file at ADDR raised
 * SIGBUS: the file shrank since it was opened (`cp` over it). */
static void set_changed_error(const ls_module *m, const char *path, const void *addr, ls_error *err)
{
	const char *file = ls_elf_mapped_file(m, addr);
	struct stat st;
	if (file && stat(file, &st) == 0)
		ls_set_error(err, LS_ERR_IO, "%s: truncated while being read (now %lld bytes): not analyzed", file,
		             (long long)st.st_size);
	else
		ls_set_error(err, LS_ERR_IO, "%s%s: changed while being read (a read past its end): not analyzed",
		             file ? file : m->path ? m->path : path, file ? "" : " or its debug file");
}

void ls_guard_error(const ls_module *m, const char *path, ls_error *err)
{
	struct ls_guard_cause c = ls_guard_cause();
	if (c.kind == LS_GUARD_BUS)
		set_changed_error(m, path, c.addr, err);
	else
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", path);
}

LS_DEFAULT_SYMBOL(ls_module_open, ls_module_open_v02, LOOPSCOPE_0.2);
ls_module *ls_module_open_v02(const char *path, const ls_options *opt, ls_error *err)
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
	if (ls_options_import(&m->opt, opt, err) < 0) {
		free(m);
		return NULL;
	}
	/* The stages read the binary and its debug file through mappings:
	 * one truncated meanwhile (SIGBUS) lands here too. */
	ls_sigbus_catch();
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env)) {
		ls_guard_error(m, path, err);
		ls_module_close(m);
		return NULL;
	}
	int rc = ls_pipeline_open(m, path, err);
	ls_oom_pop(&g);
	if (rc < 0) {
		if (err && err->code == LS_OK)
			ls_set_error(err, LS_ERR_NOT_ELF, "%s: cannot be analyzed", path);
		ls_module_close(m);
		return NULL;
	}
	return m;
}

/* An analysis on demand grows the module's cache entry when the module
 * closes, with what it analyzed and the accesses computed (a store that
 * fails only warns). */
static void store_on_close(ls_module *m)
{
	/* opened whole, the tree was stored at the open: again only for the
	 * accesses asked for since (cache_accesses.c) */
	if (!m->an || (!m->opt.on_demand && !ls_cache_accesses_new(m)))
		return;
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env))
		return; /* out of memory: not stored */
	double t0 = ls_stage_clock();
	if (ls_cache_store(m))
		ls_stage_done(m, "cache store", &t0);
	ls_oom_pop(&g);
}

void ls_module_close(ls_module *m)
{
	if (!m)
		return;
	store_on_close(m);
	ls_cache_accesses_free(m);
	ls_source_cache_free(m->sources); /* set while procedures may be analyzed */
	ls_source_probes_free(m->source_probes, m->nsource_probes);
	ls_symindex_free(m);
	ls_unwind_free(m);
	ls_data_free(m);
	ls_cfg_module_free(m);
	ls_inline_free(&m->inl);
	ls_linemap_free(&m->lines);
	ls_procs_free(&m->procs);
	ls_analysis_free(m);
	ls_cache_close(m);
	ls_arena_free(&m->arena);
	ls_elf_close(m);
	ls_strtab_free(&m->strings);
	free(m->path);
	free(m->debug_path);
	free(m->build_id);
	free(m);
}

const char *ls_module_path(const ls_module *m) { return m->path; }
const char *ls_module_debug_path(const ls_module *m) { return m->debug_path; }
const char *ls_module_build_id(const ls_module *m) { return m->build_id; }
/* Once the DWARF stages ran, whether they kept the DWARF (a corrupt
 * .debug_info is dropped); before (every procedure so far from the cache),
 * whether it was found: the entry was made with it. */
int ls_module_has_dwarf(const ls_module *m)
{
	bool read = !m->an || __atomic_load_n(&m->an->indexes, __ATOMIC_ACQUIRE);
	return read ? m->dwarf != NULL : m->dwarf_found;
}
int ls_module_is_relocatable(const ls_module *m) { return m->relocatable; }
int ls_module_machine(const ls_module *m) { return m->ehdr.e_machine; }

/* Every procedure analyzed so far came from the cache (and one did). */
int ls_module_from_cache(const ls_module *m)
{
	const struct ls_analysis *an = m->an;
	if (!an)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&an->lock);
	int r = an->nloaded > 0 && an->nanalyzed == 0;
	pthread_mutex_unlock((pthread_mutex_t *)&an->lock);
	return r;
}

/* The whole tree: on demand, every procedure is analyzed first (a
 * failure is ls_module_error's, and the root NULL). */
const ls_scope *ls_module_root(const ls_module *cm)
{
	ls_module *m = (ls_module *)cm;
	if (!m->an)
		return m->root;
	if (!__atomic_load_n(&m->an->complete, __ATOMIC_ACQUIRE)) {
		ls_error err = { LS_OK, "" };
		if (ls_analyze_all(m, &err) < 0) {
			pthread_mutex_lock(&m->an->lock);
			if (m->an->error.code == LS_OK)
				m->an->error = err;
			pthread_mutex_unlock(&m->an->lock);
			return NULL;
		}
	}
	return m->root;
}

int ls_module_analyze(ls_module *m, const uint64_t *addrs, size_t n, ls_error *err)
{
	if (err) {
		err->code = LS_OK;
		err->message[0] = 0;
	}
	if (!m || (!addrs && n)) {
		ls_set_error(err, LS_ERR_USAGE, "ls_module_analyze: no module, or N addresses at NULL");
		return -1;
	}
	if (!m->an)
		return 0; /* a tree made by hand */
	return addrs ? ls_analyze_addrs(m, addrs, n, err) : ls_analyze_all(m, err);
}

int ls_module_error(const ls_module *m, ls_error *err)
{
	if (!m || !m->an)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&m->an->lock);
	ls_error e = m->an->error;
	pthread_mutex_unlock((pthread_mutex_t *)&m->an->lock);
	if (e.code == LS_OK)
		return 0;
	if (err)
		*err = e;
	return -1;
}

size_t ls_module_procedures(const ls_module *m, size_t *analyzed, size_t *from_cache)
{
	const struct ls_analysis *an = m ? m->an : NULL;
	size_t total = 0, done = 0, cached = 0;
	if (an && !__atomic_load_n(&an->dir_ready, __ATOMIC_ACQUIRE))
		ls_analysis_want_indexes(m); /* a directory made on demand */
	if (an) {
		pthread_mutex_lock((pthread_mutex_t *)&an->lock);
		total = an->dir.nprocs;
		done = an->nanalyzed + an->nloaded;
		cached = an->nloaded;
		pthread_mutex_unlock((pthread_mutex_t *)&an->lock);
	}
	if (analyzed)
		*analyzed = done;
	if (from_cache)
		*from_cache = cached;
	return total;
}

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
	if (m->an && !__atomic_load_n(&m->an->complete, __ATOMIC_ACQUIRE) &&
	    ls_analyze_all((ls_module *)m, err) < 0)
		return -1;
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env)) { /* what was written stays written */
		ls_guard_error(m, m->path, err);
		return -1;
	}
	int rc = write_structure(m, fmt, out, err);
	ls_oom_pop(&g);
	return rc;
}
