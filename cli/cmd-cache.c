/* cmd-cache.c - `loopscope cache --list | --prune | --clear`: what the
 * analysis cache holds, and removing what it need not. */
#include "cli.h"
#include "support/text_escape.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct tally {
	const char *verb;
	size_t n;
	uint64_t bytes;
};

static void human(uint64_t bytes, char *buf, size_t size)
{
	if (bytes >= (1u << 30))
		snprintf(buf, size, "%.1f GiB", bytes / 1073741824.0);
	else if (bytes >= (1u << 20))
		snprintf(buf, size, "%.1f MiB", bytes / 1048576.0);
	else if (bytes >= 1024)
		snprintf(buf, size, "%.1f KiB", bytes / 1024.0);
	else
		snprintf(buf, size, "%" PRIu64 " B", bytes);
}

static void show(void *ctx, const ls_cache_info *e)
{
	struct tally *t = ctx;
	char size[32], when[32];
	human(e->size, size, sizeof size);
	time_t used = (time_t)e->last_used;
	struct tm tm;
	if (!localtime_r(&used, &tm) || !strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm))
		snprintf(when, sizeof when, "?");
	const char *base = strrchr(e->file, '/');
	/* file names and the binary's path as an entry stores them: escaped */
	char name[1024], binary[PATH_MAX];
	ls_text_escape(base ? base + 1 : e->file, name, sizeof name, 0);
	ls_text_escape(e->binary ? e->binary : "?", binary, sizeof binary, 0);
	if (t->verb)
		printf("%s %s  %9s  %s", t->verb, name, size, e->problem ? e->problem : "");
	else
		printf("%9s  %s  %s%s  %s%s%s", size, when, binary, e->loops ? "" : " (no loops)",
		       name, e->problem ? "  -- can only miss: " : "", e->problem ? e->problem : "");
	putchar('\n');
	t->n++;
	t->bytes += e->size;
}

enum action { NONE, LIST, PRUNE, CLEAR };
enum { OPT_LIST = 0x200, OPT_PRUNE, OPT_CLEAR, OPT_MAX_SIZE };

static const struct argp_option cache_options[] = {
	{ "list", OPT_LIST, NULL, 0, "every entry, most recently used first, with its binary", 0 },
	{ "prune", OPT_PRUNE, NULL, 0,
	  "remove what can only miss, then the least recently used entries beyond the bound "
	  "($LOOPSCOPE_CACHE_SIZE, 1G)", 0 },
	{ "max-size", OPT_MAX_SIZE, "SIZE", 0, "the bound for --prune: bytes, or with K, M or G", 0 },
	{ "clear", OPT_CLEAR, NULL, 0, "remove every entry", 0 },
	{ 0 }
};

struct cache_args {
	enum action what;
	ls_options *opt;
};

static error_t parse_cache(int key, char *arg, struct argp_state *state)
{
	struct cache_args *a = state->input;
	enum action w = key == OPT_LIST ? LIST : key == OPT_PRUNE ? PRUNE : key == OPT_CLEAR ? CLEAR : NONE;
	if (w != NONE) {
		if (a->what != NONE && a->what != w)
			argp_error(state, "one of --list, --prune and --clear at a time");
		a->what = w;
		return 0;
	}
	switch (key) {
	case OPT_MAX_SIZE:
		if (cli_parse_size(arg, &a->opt->cache_max_bytes) < 0)
			argp_error(state, "bad size '%s' (bytes, or with K, M or G)", arg);
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unknown argument '%s'", arg);
		return 0;
	case ARGP_KEY_END:
		if (a->what == NONE)
			argp_error(state, "say what to do: --list, --prune or --clear");
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

static const struct argp_child cache_children[] = { { &cli_help_argp, 0, NULL, 0 }, { 0 } };
static const struct argp cache_argp = {
	cache_options, parse_cache, NULL,
	"What the analysis cache ($XDG_CACHE_HOME/loopscope) holds, and removing what it need not.",
	cache_children, NULL, NULL
};

int cmd_cache(int argc, char **argv)
{
	ls_options opt;
	ls_options_init(&opt);
	struct cache_args a = { NONE, &opt };
	cli_parse(&cache_argp, "cache", argc, argv, 0, &a);
	enum action what = a.what;
	char dir[4096];
	if (ls_cache_dir(&opt, dir, sizeof dir) < 0) {
		fprintf(stderr, "loopscope: no cache directory: set XDG_CACHE_HOME or HOME\n");
		return EXIT_ANALYSIS;
	}
	ls_error err;
	struct tally t = { NULL, 0, 0 };
	int rc;
	char total[32], bound[32];
	switch (what) {
	case LIST:
		rc = ls_cache_list(&opt, show, &t, &err);
		human(t.bytes, total, sizeof total);
		human(ls_cache_bound(&opt), bound, sizeof bound);
		if (rc == 0)
			printf("%zu entr%s, %s in %s (bound %s)\n", t.n, t.n == 1 ? "y" : "ies", total, dir, bound);
		break;
	default:
		t.verb = "removed";
		rc = (what == PRUNE ? ls_cache_prune : ls_cache_clear)(&opt, show, &t, &err);
		human(t.bytes, total, sizeof total);
		if (rc == 0)
			printf("%zu file%s removed, %s freed in %s\n", t.n, t.n == 1 ? "" : "s", total, dir);
		break;
	}
	if (rc < 0) {
		cli_print_error(err.message);
		return EXIT_ANALYSIS;
	}
	return EXIT_OK;
}
