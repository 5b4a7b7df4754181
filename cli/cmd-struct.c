/* cmd-struct.c - `loopscope struct`: the whole scope tree of a binary as
 * text, JSON or HPCToolkit structure XML. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int cmd_struct(int argc, char **argv)
{
	struct cli_common common = { 0 };
	ls_format fmt = LS_FORMAT_TEXT;
	const char *outfile = NULL, *binary = NULL, *v;
	for (int i = 1; i < argc; i++) {
		int r;
		if ((r = cli_common_option(argc, argv, &i, &common)) != 0) {
			if (r < 0)
				return EXIT_USAGE;
		} else if ((r = cli_option_value(argc, argv, &i, "--format", NULL, &v)) != 0) {
			if (r < 0)
				return EXIT_USAGE;
			if (strcmp(v, "text") == 0)
				fmt = LS_FORMAT_TEXT;
			else if (strcmp(v, "json") == 0)
				fmt = LS_FORMAT_JSON;
			else if (strcmp(v, "xml") == 0)
				fmt = LS_FORMAT_XML;
			else {
				cli_usage_error("struct", "unknown format '%s' (text, json or xml)", v);
				return EXIT_USAGE;
			}
		} else if ((r = cli_option_value(argc, argv, &i, "--output", "-o", &v)) != 0) {
			if (r < 0)
				return EXIT_USAGE;
			outfile = v;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_usage_error("struct", "unknown option '%s'", argv[i]);
			return EXIT_USAGE;
		} else if (!binary) {
			binary = argv[i];
		} else {
			cli_usage_error("struct", "one binary at a time ('%s' is extra)", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (!binary) {
		cli_usage_error("struct", "no binary given");
		return EXIT_USAGE;
	}
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
		fprintf(stderr, "loopscope: %s\n", err.message);
	if (fflush(out) != 0 || (out != stdout && fclose(out) != 0)) {
		perror(outfile ? outfile : "stdout");
		rc = EXIT_ANALYSIS;
	}
	ls_module_close(m);
	return rc;
}
