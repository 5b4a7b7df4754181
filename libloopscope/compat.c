/* compat.c - the LOOPSCOPE_0.1 interface, for the programs linked against
 * it (loopscope.h, "ABI rules").
 *
 * 0.1's ls_options had no size field, so a library could never add a field
 * to it: 0.2 put the size first, and each function that takes an
 * ls_options exists twice.  A program linked against 0.1 calls the
 * functions here (loopscope.map binds them to the old node): its struct is
 * read in the 0.1 layout, converted, and handed to the 0.2 function.  The
 * options 0.2 added are set as 0.1 set them itself: from the environment
 * ($LOOPSCOPE_NO_SOURCE, $LOOPSCOPE_SOURCE_PATH), so such a program sees no
 * change.
 *
 * Nothing else in the library uses this file; a later change of ls_options
 * only appends fields, and needs no new entry here.
 */
#include "support/base.h"

#include <stdlib.h>

/* ls_options as LOOPSCOPE_0.1 laid it out: frozen. */
struct ls_options_v01 {
	int jobs;
	int use_cache;
	int progress;
	int want_loops;
	const char *cache_dir;
	const char *debug_file_path;
	ls_warn_fn warn;
	void *warn_ctx;
	int verbose;
	uint64_t cache_max_bytes;
	int (*progress_fn)(void *ctx, size_t done, size_t total);
	void *progress_ctx;
};

/* The 0.1 options as the current ones; NULL stays NULL (the defaults). */
static const ls_options *from_v01(const struct ls_options_v01 *old, ls_options *opt)
{
	if (!old)
		return NULL;
	ls_options_init(opt);
	opt->jobs = old->jobs;
	opt->use_cache = old->use_cache;
	opt->progress = old->progress;
	opt->want_loops = old->want_loops;
	opt->cache_dir = old->cache_dir;
	opt->debug_file_path = old->debug_file_path;
	opt->warn = old->warn;
	opt->warn_ctx = old->warn_ctx;
	opt->verbose = old->verbose;
	opt->cache_max_bytes = old->cache_max_bytes;
	opt->progress_fn = old->progress_fn;
	opt->progress_ctx = old->progress_ctx;
	opt->read_sources = getenv("LOOPSCOPE_NO_SOURCE") == NULL;
	opt->source_path = getenv("LOOPSCOPE_SOURCE_PATH");
	return opt;
}

#define LS_EXPORT __attribute__((visibility("default")))

/* The current versions (api.c, cache/cache_dir.c). */
__typeof__(ls_module_open) ls_module_open_v02;
__typeof__(ls_cache_dir) ls_cache_dir_v02;
__typeof__(ls_cache_bound) ls_cache_bound_v02;
__typeof__(ls_cache_list) ls_cache_list_v02;
__typeof__(ls_cache_prune) ls_cache_prune_v02;
__typeof__(ls_cache_clear) ls_cache_clear_v02;

LS_EXPORT void ls_options_init_v01(struct ls_options_v01 *old);
LS_COMPAT_SYMBOL(ls_options_init, ls_options_init_v01, LOOPSCOPE_0.1);
void ls_options_init_v01(struct ls_options_v01 *old)
{
	*old = (struct ls_options_v01){ .use_cache = 1, .progress = 1, .want_loops = 1 };
}

LS_EXPORT ls_module *ls_module_open_v01(const char *path, const struct ls_options_v01 *old, ls_error *err);
LS_COMPAT_SYMBOL(ls_module_open, ls_module_open_v01, LOOPSCOPE_0.1);
ls_module *ls_module_open_v01(const char *path, const struct ls_options_v01 *old, ls_error *err)
{
	ls_options opt;
	return ls_module_open_v02(path, from_v01(old, &opt), err);
}

LS_EXPORT int ls_cache_dir_v01(const struct ls_options_v01 *old, char *buf, size_t size);
LS_COMPAT_SYMBOL(ls_cache_dir, ls_cache_dir_v01, LOOPSCOPE_0.1);
int ls_cache_dir_v01(const struct ls_options_v01 *old, char *buf, size_t size)
{
	ls_options opt;
	return ls_cache_dir_v02(from_v01(old, &opt), buf, size);
}

LS_EXPORT uint64_t ls_cache_bound_v01(const struct ls_options_v01 *old);
LS_COMPAT_SYMBOL(ls_cache_bound, ls_cache_bound_v01, LOOPSCOPE_0.1);
uint64_t ls_cache_bound_v01(const struct ls_options_v01 *old)
{
	ls_options opt;
	return ls_cache_bound_v02(from_v01(old, &opt));
}

/* ls_cache_list, ls_cache_prune and ls_cache_clear take the same arguments. */
#define CACHE_WALK_V01(name)                                                                         \
	LS_EXPORT int name##_v01(const struct ls_options_v01 *old, ls_cache_fn fn, void *ctx, ls_error *err); \
	LS_COMPAT_SYMBOL(name, name##_v01, LOOPSCOPE_0.1);                                           \
	int name##_v01(const struct ls_options_v01 *old, ls_cache_fn fn, void *ctx, ls_error *err)   \
	{                                                                                            \
		ls_options opt;                                                                      \
		return name##_v02(from_v01(old, &opt), fn, ctx, err);                                      \
	}
CACHE_WALK_V01(ls_cache_list)
CACHE_WALK_V01(ls_cache_prune)
CACHE_WALK_V01(ls_cache_clear)
