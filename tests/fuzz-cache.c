/* fuzz-cache.c - libFuzzer target: the cache reader on untrusted files.
 *
 * The input is a cache file.  Most mutations would only break its
 * checksum, so the harness first makes it pass what only an honest writer
 * gets right (ls_cache_forge: magic, version, producer, size, checksum, and
 * the identity of the module it loads for); then the record checks are all
 * that stands between the bytes and the scope tree.  A file that loads is
 * indexed, looked up and written in every format: a tree that passed the
 * checks must be safe to walk.  Each procedure's record is checked on
 * its own (format 10), so the harness reads them all, and each procedure's
 * accesses record (format 13), whose set is then walked as the data views
 * walk it.  Seeds: cache files of the fixtures (scripts/fuzz-ci makes them
 * with loopscope, the accesses with lookup --data). */
#include "analyze.h"
#include "cache/cache.h"
#include "data/accesses.h"
#include "elf/module.h"
#include "elf/symbols.h"
#include "structure/lookup.h"
#include "structure/scope.h"
#include "support/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* M's entry read whole: every procedure's record must check (there is no
 * binary to analyze what it lacks), then the tree above them made. */
static bool load_whole(ls_module *m)
{
	ls_error err;
	ls_cache_open(m);
	if (!m->cache || ls_analysis_init(m, &err) < 0)
		return false;
	struct ls_arena scratch = { 0 };
	bool whole = true;
	for (size_t i = 0; whole && i < m->an->dir.nprocs; i++) {
		struct ls_proc_done d;
		whole = ls_cache_load_proc(m, i, &scratch, &d) > 0;
	}
	ls_arena_free(&scratch);
	return whole && ls_analyze_all(m, &err) == 0;
}

/* Every procedure's accesses the entry has, read and walked as the data
 * views walk them (a set that passed the checks must be safe to use). */
static void walk_accesses(ls_module *m)
{
	size_t sink = 0;
	for (size_t p = 0; m->an && p < m->an->dir.nprocs; p++) {
		ls_accesses *set = ls_cache_load_accesses(m, p, NULL);
		for (size_t i = 0; i < ls_accesses_count(set); i++) {
			const ls_access *a = ls_accesses_get(set, i);
			size_t first;
			sink += strlen(a->operand) + strlen(ls_access_kind_name(a->kind)) +
			        strlen(ls_access_rule_name(a->rule)) + ls_accesses_at(set, a->addr, &first);
			if (a->variable)
				sink += strlen(a->variable) + strlen(a->type) + strlen(a->field) + strlen(a->field_type) +
				        strlen(a->expr);
			sink += ls_accesses_block_of(set, a->addr + 1) != 0;
			sink += ls_accesses_before(set, a->addr + 1) != NULL;
			ls_error err;
			ls_type_layout_free(ls_accesses_layout(set, a, &err)); /* no DWARF: an error */
		}
		ls_accesses_free(set);
	}
	if (sink == 1)
		fputc(0, stderr); /* keeps the walk */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[64];
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/ls-fuzz-cache.%d", (int)getpid());
		mkdir(dir, 0700);
	}
	uint8_t *file = malloc(size ? size : 1);
	if (!file)
		return 0;
	memcpy(file, data, size);
	ls_module *m = ls_xcalloc(1, sizeof *m);
	ls_options_init(&m->opt);
	m->opt.cache_dir = dir;
	m->opt.want_loops = size & 1;
	m->fd = -1;
	m->path = ls_xstrdup("/fuzz/bin");
	if (ls_cache_forge(file, size, m) == 0) {
		char path[256];
		snprintf(path, sizeof path, "%s/%s%s.lsc", dir, m->build_id, m->opt.want_loops ? "" : "-noloops");
		FILE *f = fopen(path, "wb");
		if (f) {
			fwrite(file, 1, size, f);
			fclose(f);
			ls_error err;
			if (load_whole(m)) {
				FILE *devnull = fopen("/dev/null", "w");
				const ls_scope *chain[LS_MAX_CHAIN];
				/* through each procedure's stored index */
				for (size_t p = 0; p < m->an->dir.nprocs; p++) {
					const struct ls_proc_done *d = m->an->done[p];
					for (size_t i = 0; d && i < d->nsegs && i < 256; i++) {
						ls_lookup_chain(m, d->segs[i].lo, chain, LS_MAX_CHAIN);
						ls_lookup_chain(m, d->segs[i].lo, chain, 4);
						ls_lookup_chain(m, d->segs[i].hi, chain, LS_MAX_CHAIN);
					}
				}
				if (devnull) {
					ls_write_structure(m, LS_FORMAT_TEXT, devnull, &err);
					ls_write_structure(m, LS_FORMAT_JSON, devnull, &err);
					ls_write_structure(m, LS_FORMAT_XML, devnull, &err);
					fclose(devnull);
				}
				uint64_t a, s;
				ls_module_symbol(m, "main", &a, &s);
			}
			if (m->cache)
				walk_accesses(m); /* their records checked on their own */
			unlink(path);
		}
	}
	ls_symindex_free(m); /* built by ls_module_symbol since the kernel work */
	ls_analysis_free(m);
	ls_cache_close(m);
	ls_cache_accesses_free(m);
	free(m->path);
	free(m->build_id);
	free(m);
	free(file);
	return 0;
}
