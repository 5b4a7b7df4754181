/* cli.h - what the loopscope subcommands share: one option parser, module
 * opening with the common options, and exit codes. */
#ifndef LOOPSCOPE_CLI_H
#define LOOPSCOPE_CLI_H

#include "loopscope.h"

#include <stdbool.h>

enum { EXIT_OK = 0, EXIT_ANALYSIS = 1, EXIT_USAGE = 2 };

/* Options common to every subcommand that opens a binary. */
struct cli_common {
	int jobs;
	bool no_cache;
	const char *debug_dir;
	bool verbose;          /* -v: say why the cache missed, and such */
};

/* Parses "--name=value", "--name value" and "-n value" forms.  Returns 1 and
 * sets *VALUE if ARGV[*I] is option NAME (long) or SHORT_NAME (short, may be
 * NULL), advancing *I past a separate value; 0 if it is another option; -1
 * (after printing a message) if the value is missing. */
int cli_option_value(int argc, char **argv, int *i, const char *name, const char *short_name,
                     const char **value);
/* Parses the common options; returns 1 if ARGV[*I] was one, 0 if not, -1 on error. */
int cli_common_option(int argc, char **argv, int *i, struct cli_common *c);
/* Opens BINARY with the common options; prints the error and returns NULL on failure. */
ls_module *cli_open(const char *binary, const struct cli_common *c);

void cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int cmd_struct(int argc, char **argv);
int cmd_lookup(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_cache(int argc, char **argv);
/* "512M", "2G", "1048576": bytes; 0, or -1 if it is not a size. */
int cli_parse_size(const char *s, uint64_t *bytes);

#endif
