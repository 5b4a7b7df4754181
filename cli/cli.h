/* cli.h - what the loopscope subcommands share: one option parser (glibc's
 * argp, as the elfutils tools use it), module opening with the common
 * options, and exit codes. */
#ifndef LOOPSCOPE_CLI_H
#define LOOPSCOPE_CLI_H

#include "loopscope.h"

#include <argp.h>
#include <stdbool.h>

enum { EXIT_OK = 0, EXIT_ANALYSIS = 1, EXIT_USAGE = 2 };

/* Options common to every subcommand that opens a binary. */
struct cli_common {
	int jobs;
	bool no_cache;
	const char *debug_dir;
	bool verbose;          /* -v: say why the cache missed, and such */
	bool on_demand;        /* not an option: each procedure analyzed when a lookup asks
	                        * (ls_options.on_demand), for commands that look up a few */
};

/* The common options (-j, --no-cache, -v, --debug-dir) as an argp child: a
 * subcommand lists it in its children and passes its struct cli_common in
 * state->child_inputs[0] at ARGP_KEY_INIT. */
extern const struct argp cli_common_argp;
/* -h, hidden: --help, for the hands used to it.  Every subcommand's child. */
extern const struct argp cli_help_argp;

/* A subcommand of the form [OPTIONS] BINARY [ADDR ...] with --json
 * (lookup, unwind): its values, and cli_parse_binary_args, its argp parser
 * (options before the binary; every word after it is an address).  The
 * subcommand's --json option has the key CLI_OPT_JSON. */
enum { CLI_OPT_JSON = 0x200 };
struct cli_binary_args {
	struct cli_common common;
	bool json;
	int binary_at; /* in argv; the addresses follow it */
};
error_t cli_parse_binary_args(int key, char *arg, struct argp_state *state);
/* The children of a subcommand that opens a binary: the common options
 * (child_inputs[0]) and -h. */
extern const struct argp_child cli_binary_children[];

/* Parses ARGV (ARGV[0] is the subcommand's name) with ARGP as `loopscope
 * NAME`: --help, --usage and -V print and exit 0, usage errors print a line
 * naming the problem and exit EXIT_USAGE.  FLAGS are argp_parse's. */
void cli_parse(const struct argp *argp, const char *name, int argc, char **argv, unsigned flags,
               void *input);
/* "loopscope: MESSAGE" on stderr, its control characters escaped. */
void cli_print_error(const char *message);
/* Opens BINARY with the common options; prints the error and returns NULL on failure. */
ls_module *cli_open(const char *binary, const struct cli_common *c);

/* A usage error found after parsing: "loopscope CMD: message" and where help is. */
void cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int cmd_struct(int argc, char **argv);
int cmd_lookup(int argc, char **argv);
/* lookup-data.c: `lookup --data` of one address; false when the accesses
 * could not be read (the message is printed).  cli_data_done frees what it
 * keeps between addresses. */
bool cli_data_lookup(const ls_module *m, uint64_t addr, bool json);
void cli_data_done(void);
/* lookup-blame.c: `lookup --blame`, the same way (cli_blame_done frees). */
bool cli_blame_lookup(const ls_module *m, uint64_t addr, bool json);
void cli_blame_done(void);
int cmd_decode(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_unwind(int argc, char **argv);
/* cmd-lookup.c: TOKEN (hex, or SYMBOL+0xOFF[/0xSIZE]) into addresses (a
 * SYMBOL+OFF without /SIZE may name several copies of a static function, as
 * in faddr2line): how many, or -1 with a reason in WHY. */
int cli_parse_address(const ls_module *m, const char *token, uint64_t *addrs, size_t cap, char *why,
                      size_t whylen);
int cmd_probes(int argc, char **argv);
/* "512M", "2G", "1048576": bytes; 0, or -1 if it is not a size. */
int cli_parse_size(const char *s, uint64_t *bytes);

#endif
