/* cmd-cache.c - `loopscope cache --list | --prune | --clear`: what the
 * analysis cache holds, and removing what it need not. */
#include "cli.h"

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
	const char *name = strrchr(e->file, '/');
	name = name ? name + 1 : e->file;
	if (t->verb)
		printf("%s %s  %9s  %s", t->verb, name, size, e->problem ? e->problem : "");
	else
		printf("%9s  %s  %s%s  %s%s%s", size, when, e->binary ? e->binary : "?", e->loops ? "" : " (no loops)",
		       name, e->problem ? "  -- can only miss: " : "", e->problem ? e->problem : "");
	putchar('\n');
	t->n++;
	t->bytes += e->size;
}

int cmd_cache(int argc, char **argv)
{
	enum { NONE, LIST, PRUNE, CLEAR } what = NONE;
	const char *v;
	ls_options opt;
	ls_options_init(&opt);
	for (int i = 1; i < argc; i++) {
		int r;
		int w = !strcmp(argv[i], "--list") ? LIST : !strcmp(argv[i], "--prune") ? PRUNE
			: !strcmp(argv[i], "--clear") ? CLEAR : NONE;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs("usage: loopscope cache --list | --prune [--max-size=SIZE] | --clear\n"
			      "  --list      every entry, most recently used first, with its binary\n"
			      "  --prune     remove what can only miss, then the least recently used\n"
			      "              entries beyond the bound ($LOOPSCOPE_CACHE_SIZE, 1G)\n"
			      "  --clear     remove every entry\n", stdout);
			return EXIT_OK;
		}
		if (w != NONE) {
			if (what != NONE && what != w) {
				cli_usage_error("cache", "one of --list, --prune and --clear at a time");
				return EXIT_USAGE;
			}
			what = w;
		} else if ((r = cli_option_value(argc, argv, &i, "--max-size", NULL, &v)) != 0) {
			if (r < 0)
				return EXIT_USAGE;
			if (cli_parse_size(v, &opt.cache_max_bytes) < 0) {
				cli_usage_error("cache", "bad size '%s' (bytes, or with K, M or G)", v);
				return EXIT_USAGE;
			}
		} else {
			cli_usage_error("cache", "unknown argument '%s'", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (what == NONE) {
		cli_usage_error("cache", "say what to do: --list, --prune or --clear");
		return EXIT_USAGE;
	}
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
	case PRUNE:
		t.verb = "removed";
		rc = ls_cache_prune(&opt, show, &t, &err);
		human(t.bytes, total, sizeof total);
		if (rc == 0)
			printf("%zu file%s removed, %s freed in %s\n", t.n, t.n == 1 ? "" : "s", total, dir);
		break;
	default:
		t.verb = "removed";
		rc = ls_cache_clear(&opt, show, &t, &err);
		human(t.bytes, total, sizeof total);
		if (rc == 0)
			printf("%zu file%s removed, %s freed in %s\n", t.n, t.n == 1 ? "" : "s", total, dir);
		break;
	}
	if (rc < 0) {
		fprintf(stderr, "loopscope: %s\n", err.message);
		return EXIT_ANALYSIS;
	}
	return EXIT_OK;
}
