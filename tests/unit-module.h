/* unit-module.h - a module through the stages before the analysis (its
 * ELF file and the indexes: inline trees, procedures, line map), as
 * pipeline.c runs them, for the unit tests of those stages (unit-dwarf,
 * unit-procs).  Include after elf/module.h, pipeline.h and the dwarf/
 * headers. */
#ifndef LOOPSCOPE_TESTS_UNIT_MODULE_H
#define LOOPSCOPE_TESTS_UNIT_MODULE_H

/* Frees what unit_load made (any part of it). */
static void unit_unload(ls_module *m)
{
	if (!m)
		return;
	ls_inline_free(&m->inl);
	ls_procs_free(&m->procs);
	ls_linemap_free(&m->lines);
	ls_elf_close(m);
	ls_strtab_free(&m->strings);
	free(m);
}

/* PATH's module, its debug file looked up in DEBUG_DIR (NULL: the usual
 * places), warnings to WARN(WARN_CTX, ...); NULL with ERR set if it
 * cannot be loaded. */
static ls_module *unit_load(const char *path, const char *debug_dir, ls_warn_fn warn, void *warn_ctx, ls_error *err)
{
	ls_module *m = ls_xcalloc(1, sizeof *m);
	m->fd = -1;
	ls_options_init(&m->opt);
	m->opt.debug_file_path = debug_dir;
	m->opt.warn = warn;
	m->opt.warn_ctx = warn_ctx;
	if (ls_elf_open(m, path, err) < 0 || ls_pipeline_indexes(m, err) < 0) {
		unit_unload(m);
		return NULL;
	}
	return m;
}

#endif
