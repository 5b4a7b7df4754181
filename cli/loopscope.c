/* loopscope.c - the loopscope command: dispatches to one subcommand per file
 * (cmd-*.c) and holds the option parsing they share: glibc's argp, so that
 * --help, --usage and -V work for `loopscope` and each subcommand alike. */
#include "cli.h"
#include "support/text_escape.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -V and --version in every subcommand, as argp adds them. */
const char *argp_program_version = "loopscope " LS_VERSION;

/* ---- the common options -------------------------------------------------- */

enum { OPT_NO_CACHE = 0x100, OPT_DEBUG_DIR };

static const struct argp_option common_options[] = {
	{ NULL, 0, NULL, 0, "Common options:", 10 },
	{ "jobs", 'j', "N", 0, "analyze on N threads (default: all cores)", 0 },
	{ "no-cache", OPT_NO_CACHE, NULL, 0,
	  "neither read nor write the analysis cache ($XDG_CACHE_HOME/loopscope, keyed by build-id; "
	  "at most $LOOPSCOPE_CACHE_SIZE, default 1G, least recently used go)", 0 },
	{ "verbose", 'v', NULL, 0, "also say why the cache missed", 0 },
	{ "debug-dir", OPT_DEBUG_DIR, "DIR", 0,
	  "look for separate debug info under DIR (default /usr/lib/debug)", 0 },
	{ 0 }
};

static error_t parse_common(int key, char *arg, struct argp_state *state)
{
	struct cli_common *c = state->input;
	switch (key) {
	case 'j': {
		char *end;
		long n = strtol(arg, &end, 10);
		if (*arg == 0 || *end || n < 0 || n > 1024)
			argp_error(state, "bad number of jobs: %s", arg);
		c->jobs = (int)n;
		return 0;
	}
	case OPT_NO_CACHE:
		c->no_cache = true;
		return 0;
	case 'v':
		c->verbose = true;
		return 0;
	case OPT_DEBUG_DIR:
		c->debug_dir = arg;
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

const struct argp cli_common_argp = { common_options, parse_common, NULL, NULL, NULL, NULL, NULL };

error_t cli_parse_binary_args(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	struct cli_binary_args *a = state->input;
	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &a->common;
		return 0;
	case CLI_OPT_JSON:
		a->json = true;
		return 0;
	case ARGP_KEY_ARGS:
		a->binary_at = state->next;
		return 0;
	case ARGP_KEY_NO_ARGS:
		argp_error(state, "no binary given");
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

/* ---- -h, the short help ---------------------------------------------------- */

static const struct argp_option help_options[] = {
	{ NULL, 'h', NULL, OPTION_HIDDEN, "give this help list", -1 },
	{ 0 }
};

static error_t parse_help(int key, char *arg, struct argp_state *state)
{
	if (key != 'h')
		return ARGP_ERR_UNKNOWN;
	argp_state_help(state, state->out_stream, ARGP_HELP_STD_HELP);
	return 0;
}

const struct argp cli_help_argp = { help_options, parse_help, NULL, NULL, NULL, NULL, NULL };

const struct argp_child cli_binary_children[] = {
	{ &cli_common_argp, 0, NULL, 0 }, { &cli_help_argp, 0, NULL, 0 }, { 0 }
};

void cli_parse(const struct argp *argp, const char *name, int argc, char **argv, unsigned flags,
               void *input)
{
	/* argp names the program by argv[0] in its messages and help. */
	static char prog[64];
	snprintf(prog, sizeof prog, "loopscope%s%s", name ? " " : "", name ? name : "");
	argv[0] = prog;
	if (argp_parse(argp, argc, argv, flags, NULL, input) != 0)
		exit(EXIT_USAGE);
}

void cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "loopscope%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fprintf(stderr, "Try `loopscope%s%s --help' or `loopscope%s%s --usage' for more information.\n",
	        cmd ? " " : "", cmd ? cmd : "", cmd ? " " : "", cmd ? cmd : "");
}

void cli_print_error(const char *message)
{
	fputs("loopscope: ", stderr);
	ls_text_fputs(message, stderr); /* it names files: their bytes escaped */
	fputc('\n', stderr);
}

ls_module *cli_open(const char *binary, const struct cli_common *c)
{
	ls_options opt;
	ls_options_init(&opt);
	opt.jobs = c->jobs;
	opt.use_cache = !c->no_cache && !getenv("LOOPSCOPE_NO_CACHE");
	opt.debug_file_path = c->debug_dir ? c->debug_dir : getenv("LOOPSCOPE_DEBUG_DIR");
	opt.verbose = c->verbose;
	opt.on_demand = c->on_demand;
	/* loop lines from DWARF alone; where else sources are (loopscope(1)) */
	opt.read_sources = getenv("LOOPSCOPE_NO_SOURCE") == NULL;
	opt.source_path = getenv("LOOPSCOPE_SOURCE_PATH");
	ls_error err;
	ls_module *m = ls_module_open(binary, &opt, &err);
	if (!m)
		cli_print_error(err.message);
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

/* ---- the command itself ------------------------------------------------------ */

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "struct", cmd_struct },
	{ "lookup", cmd_lookup },
	{ "decode", cmd_decode },
	{ "cache", cmd_cache },
	{ "unwind", cmd_unwind },
	{ "probes", cmd_probes },
};

static const char top_doc[] =
	"Recovers the structure of an optimized binary: procedures, inlined calls, "
	"loops and statements, from its machine code and DWARF."
	"\v"
	"Commands (`loopscope COMMAND --help' lists each one's options):\n"
	"  struct BINARY   the whole scope tree, as text, JSON or structure XML\n"
	"  lookup BINARY [ADDR|SYMBOL+OFF[/SIZE] ...]\n"
	"                  the scope chain of addresses (no ADDR: read stdin)\n"
	"  decode < LOG    a kernel log, written back with each frame annotated\n"
	"  cache           list, prune or clear the analysis cache\n"
	"  unwind BINARY [ADDR ...]\n"
	"                  unwind recipes: where the caller's frame is, by binary analysis\n"
	"  probes BINARY [LOOP|FUNCTION]\n"
	"                  loops' instrumentation points (entries, header, back\n"
	"                  edges, exits), what perf loops stat probes\n"
	"\n"
	"Common options of struct, lookup, decode, unwind and probes:\n"
	"  -j, --jobs=N        analyze on N threads (default: all cores)\n"
	"      --no-cache      neither read nor write the analysis cache\n"
	"                      ($XDG_CACHE_HOME/loopscope, keyed by build-id)\n"
	"  -v, --verbose       also say why the cache missed\n"
	"      --debug-dir=DIR look for separate debug info under DIR\n"
	"                      (default /usr/lib/debug)\n"
	"\n"
	"Exit status: 0 done, 1 the analysis failed, 2 usage error.";

/* The top level takes only --help, --usage and -V; the first argument is the
 * command, and what follows it is the command's to parse. */
static error_t parse_top(int key, char *arg, struct argp_state *state)
{
	int *command_at = state->input;
	switch (key) {
	case ARGP_KEY_ARGS:
		*command_at = state->next;
		return 0;
	case ARGP_KEY_NO_ARGS:
		argp_usage(state);
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

static const struct argp_child top_children[] = { { &cli_help_argp, 0, NULL, 0 }, { 0 } };
static const struct argp top_argp = { NULL, parse_top, "COMMAND [ARG...]", top_doc, top_children, NULL, NULL };

int main(int argc, char **argv)
{
	argp_err_exit_status = EXIT_USAGE;
	int command_at = 0;
	cli_parse(&top_argp, NULL, argc, argv, ARGP_IN_ORDER, &command_at);
	const char *cmd = argv[command_at];
	if (strcmp(cmd, "help") == 0) {
		argp_help(&top_argp, stdout, ARGP_HELP_STD_HELP, "loopscope");
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (strcmp(cmd, commands[i].name) == 0)
			return commands[i].run(argc - command_at, argv + command_at);
	cli_usage_error(NULL, "unknown command '%s'", cmd);
	return EXIT_USAGE;
}
