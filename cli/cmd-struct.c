/* cmd-struct.c - `loopscope struct`: the whole scope tree of a binary as
 * text, JSON or HPCToolkit structure XML. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

enum { OPT_FORMAT = 0x200 };

static const struct argp_option struct_options[] = {
	{ "format", OPT_FORMAT, "text|json|xml", 0, "what to write (default text)", 0 },
	{ "output", 'o', "FILE", 0, "write to FILE instead of stdout", 0 },
	{ 0 }
};

struct struct_args {
	struct cli_common common;
	ls_format fmt;
	const char *outfile, *binary;
};

static error_t parse_struct(int key, char *arg, struct argp_state *state)
{
	struct struct_args *a = state->input;
	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &a->common;
		return 0;
	case OPT_FORMAT:
		if (strcmp(arg, "text") == 0)
			a->fmt = LS_FORMAT_TEXT;
		else if (strcmp(arg, "json") == 0)
			a->fmt = LS_FORMAT_JSON;
		else if (strcmp(arg, "xml") == 0)
			a->fmt = LS_FORMAT_XML;
		else
			argp_error(state, "unknown format '%s' (text, json or xml)", arg);
		return 0;
	case 'o':
		a->outfile = arg;
		return 0;
	case ARGP_KEY_ARG:
		if (a->binary)
			argp_error(state, "one binary at a time ('%s' is extra)", arg);
		a->binary = arg;
		return 0;
	case ARGP_KEY_NO_ARGS:
		argp_error(state, "no binary given");
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

static const struct argp struct_argp = {
	struct_options, parse_struct, "BINARY",
	"The whole scope tree of BINARY: procedures, inlined calls, loops and statements, "
	"as text, JSON or HPCToolkit structure XML.",
	cli_binary_children, NULL, NULL
};

int cmd_struct(int argc, char **argv)
{
	struct struct_args a = { .fmt = LS_FORMAT_TEXT };
	cli_parse(&struct_argp, "struct", argc, argv, 0, &a);
	struct cli_common common = a.common;
	ls_format fmt = a.fmt;
	const char *outfile = a.outfile, *binary = a.binary;
	ls_module *m = cli_open(binary, &common);
	if (!m)
		return EXIT_ANALYSIS;
	FILE *out = stdout;
	if (outfile && !(out = fopen(outfile, "w"))) {
		perror(outfile);
		ls_module_close(m);
		return EXIT_ANALYSIS;
	}
	ls_error err;
	int rc = ls_write_structure(m, fmt, out, &err) < 0 ? EXIT_ANALYSIS : EXIT_OK;
	if (rc != EXIT_OK)
		cli_print_error(err.message);
	if (fflush(out) != 0 || (out != stdout && fclose(out) != 0)) {
		perror(outfile ? outfile : "stdout");
		rc = EXIT_ANALYSIS;
	}
	ls_module_close(m);
	return rc;
}
