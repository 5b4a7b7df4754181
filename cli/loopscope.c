/* loopscope.c - the loopscope command: dispatches to one subcommand per file
 * (cmd-*.c) and holds the option parsing they share. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: loopscope struct [--format=text|json|xml] [-o FILE] [-j N] [--no-cache] BINARY\n"
	"       loopscope lookup [--json] BINARY [ADDR|SYMBOL+OFF[/SIZE] ...]  (no ADDR: read stdin)\n"
	"       loopscope decode [-r RELEASE | --vmlinux FILE] [--modules DIR] [--kaslr-offset OFF | --kallsyms FILE]\n"
	"                        [--proc-modules FILE] [--sys-module DIR] [--strip-prefix P] [--decodecode]\n"
	"                        (a kernel log on stdin, written back with each frame annotated)\n"
	"       loopscope cache --list | --prune [--max-size=SIZE] | --clear\n"
	"       loopscope --help | --version\n"
	"\n"
	"Recovers the structure of an optimized binary: procedures, inlined calls,\n"
	"loops and statements, from its machine code and DWARF.\n"
	"\n"
	"Common options:\n"
	"  -j, --jobs N       analyze on N threads (default: all cores)\n"
	"  --no-cache         neither read nor write the analysis cache\n"
	"                     ($XDG_CACHE_HOME/loopscope, keyed by build-id; at most\n"
	"                     $LOOPSCOPE_CACHE_SIZE, default 1G, least recently used go)\n"
	"  -v, --verbose      also say why the cache missed\n"
	"  --debug-dir DIR    look for separate debug info under DIR (default /usr/lib/debug)\n";

void cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "loopscope%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fputs(usage, stderr);
}

int cli_option_value(int argc, char **argv, int *i, const char *name, const char *short_name,
                     const char **value)
{
	const char *arg = argv[*i];
	size_t n = strlen(name);
	if (strncmp(arg, name, n) == 0 && arg[n] == '=') {
		*value = arg + n + 1;
		return 1;
	}
	if (short_name && strncmp(arg, short_name, 2) == 0 && arg[2]) {
		*value = arg + 2; /* -j4 */
		return 1;
	}
	if (strcmp(arg, name) != 0 && !(short_name && strcmp(arg, short_name) == 0))
		return 0;
	if (*i + 1 >= argc) {
		cli_usage_error(NULL, "option %s needs a value", arg);
		return -1;
	}
	*value = argv[++*i];
	return 1;
}

int cli_common_option(int argc, char **argv, int *i, struct cli_common *c)
{
	const char *v;
	int r;
	if (strcmp(argv[*i], "--no-cache") == 0) {
		c->no_cache = true;
		return 1;
	}
	if (strcmp(argv[*i], "-v") == 0 || strcmp(argv[*i], "--verbose") == 0) {
		c->verbose = true;
		return 1;
	}
	if ((r = cli_option_value(argc, argv, i, "--jobs", "-j", &v)) != 0) {
		if (r < 0)
			return -1;
		char *end;
		long n = strtol(v, &end, 10);
		if (*end || n < 0 || n > 1024) {
			cli_usage_error(NULL, "bad number of jobs: %s", v);
			return -1;
		}
		c->jobs = (int)n;
		return 1;
	}
	if ((r = cli_option_value(argc, argv, i, "--debug-dir", NULL, &v)) != 0) {
		if (r < 0)
			return -1;
		c->debug_dir = v;
		return 1;
	}
	return 0;
}

ls_module *cli_open(const char *binary, const struct cli_common *c)
{
	ls_options opt;
	ls_options_init(&opt);
	opt.jobs = c->jobs;
	opt.use_cache = !c->no_cache && !getenv("LOOPSCOPE_NO_CACHE");
	opt.debug_file_path = c->debug_dir ? c->debug_dir : getenv("LOOPSCOPE_DEBUG_DIR");
	opt.verbose = c->verbose;
	ls_error err;
	ls_module *m = ls_module_open(binary, &opt, &err);
	if (!m)
		fprintf(stderr, "loopscope: %s\n", err.message);
	return m;
}

int cli_parse_size(const char *s, uint64_t *bytes)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	int shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (end == s || errno || *s == '-' || (*end && strcmp(end, "iB") && strcmp(end, "B")) ||
	    v == 0 || v >= (1ull << (63 - shift)))
		return -1;
	*bytes = (uint64_t)v << shift;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		fputs(usage, stdout);
		return EXIT_OK;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("loopscope %s\n", LS_VERSION);
		return EXIT_OK;
	}
	if (strcmp(cmd, "struct") == 0)
		return cmd_struct(argc - 1, argv + 1);
	if (strcmp(cmd, "lookup") == 0)
		return cmd_lookup(argc - 1, argv + 1);
	if (strcmp(cmd, "decode") == 0)
		return cmd_decode(argc - 1, argv + 1);
	if (strcmp(cmd, "cache") == 0)
		return cmd_cache(argc - 1, argv + 1);
	cli_usage_error(NULL, "unknown command '%s'", cmd);
	return EXIT_USAGE;
}
