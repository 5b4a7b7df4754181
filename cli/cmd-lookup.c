/* cmd-lookup.c - `loopscope lookup`: the scope chain (procedure, inlined
 * calls, loops, statement) of addresses given as arguments or on stdin.
 * An address is hex (0x401156 or 401156, as addr2line takes them) or
 * SYMBOL+0xOFF[/0xSIZE] as kernel oops lines print them. */
#include "cli.h"
#include "support/json_writer.h"
#include "support/text_escape.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_parse_address(const ls_module *m, const char *token, uint64_t *addrs, size_t cap,
                         char *why, size_t whylen)
{
	char *end;
	const char *plus = strrchr(token, '+');
	bool symbolic = plus || !isxdigit((unsigned char)token[0]) ||
	                (token[0] != '0' && strspn(token, "0123456789abcdefABCDEF") != strlen(token));
	if (!symbolic || (token[0] == '0' && (token[1] == 'x' || token[1] == 'X'))) {
		errno = 0;
		addrs[0] = strtoull(token, &end, 16);
		if (*end == 0 && end != token && errno == 0)
			return 1;
		if (!plus) {
			snprintf(why, whylen, "not a hexadecimal address");
			return -1;
		}
	}
	/* SYMBOL[+OFF[/SIZE]] */
	char name[1024];
	size_t n = plus ? (size_t)(plus - token) : strlen(token);
	if (n == 0 || n >= sizeof name) {
		snprintf(why, whylen, "bad symbol");
		return -1;
	}
	memcpy(name, token, n);
	name[n] = 0;
	uint64_t off = 0, size = 0;
	if (plus) {
		errno = 0;
		off = strtoull(plus + 1, &end, 0);
		if (end == plus + 1 || errno || (*end && *end != '/')) {
			snprintf(why, whylen, "bad offset after '+'");
			return -1;
		}
		if (*end == '/') {
			const char *sz = end + 1;
			size = strtoull(sz, &end, 0);
			if (end == sz || errno || *end || size == 0) {
				snprintf(why, whylen, "bad size after '/'");
				return -1;
			}
		}
	}
	/* A function symbol, as faddr2line reads it; else any symbol or a
	 * procedure's (demangled) name. */
	ls_error err;
	int k = ls_module_resolve(m, name, off, size, addrs, cap, &err);
	if (k > 0)
		return k;
	ls_symbol probe;
	if (ls_module_functions_named(m, name, &probe, 1) > 0) {
		/* the name is a function's: the error says what is wrong */
		const char *msg = strstr(err.message, ": ");
		snprintf(why, whylen, "%s", msg ? msg + 2 : err.message);
		return -1;
	}
	uint64_t base, ssize;
	if (ls_module_symbol(m, name, &base, &ssize) < 0) {
		snprintf(why, whylen, "unknown symbol");
		return -1;
	}
	addrs[0] = base + off;
	return 1;
}

/* FILE:LINE, or "[no line]": line 0 is never printed as a line.  Names
 * and paths are the binary's: escaped (support/text_escape.h). */
static void print_location(const char *file, unsigned line)
{
	if (line) {
		ls_text_fputs(file ? file : "??", stdout);
		printf(":%u", line);
	} else {
		fputs("[no line]", stdout);
	}
}

static void print_name(const char *what, const char *name)
{
	fputs(what, stdout);
	ls_text_fputs(name ? name : "??", stdout);
}

static void print_text(const ls_module *m, const char *token, uint64_t addr)
{
	const ls_scope *chain[LS_MAX_CHAIN];
	size_t n = ls_lookup_chain(m, addr, chain, LS_MAX_CHAIN);
	printf("0x%" PRIx64, addr);
	if (n == 0) {
		fputs(": not in any procedure of ", stdout);
		ls_text_fputs(ls_module_path(m), stdout);
		putchar('\n');
		return;
	}
	putchar('\n');
	size_t depth = ls_lookup_depth(m, addr); /* past n: cut */
	for (size_t i = 0; i < n; i++) {
		const ls_scope *s = chain[i];
		const char *file = ls_scope_file(s) ? ls_scope_file(s) : "??";
		if (i == n - 1 && depth > n)
			printf("%*s... %zu deeper scopes cut (the chain is %zu deep)\n", (int)(2 * i + 2), "",
			       depth - n, depth);
		printf("%*s", (int)(2 * i + 2), "");
		switch (ls_scope_kind_of(s)) {
		case LS_SCOPE_PROC:
			print_name("", ls_scope_name(s));
			fputs(" at ", stdout);
			print_location(file, ls_scope_line(s));
			break;
		case LS_SCOPE_INLINE:
			print_name("[I] ", ls_scope_name(s));
			fputs(" called at ", stdout);
			print_location(ls_scope_call_file(s), ls_scope_call_line(s));
			break;
		case LS_SCOPE_LOOP: {
			unsigned nparts, part = ls_loop_part(s, &nparts);
			fputs("loop at ", stdout);
			print_location(file, ls_scope_line(s));
			if (part)
				printf(" (part %u of %u)", part, nparts);
			printf(" (header 0x%" PRIx64 ", depth %u%s", ls_loop_header(s), ls_loop_depth(s),
			       ls_loop_irreducible(s) ? ", irreducible" : "");
			if (ls_loop_compiler_made(s))
				printf(", compiler-made: %s", ls_loop_compiler_made(s));
			if (ls_loop_line_guessed(s))
				printf(", line guessed: %s", ls_loop_line_guessed(s));
			putchar(')');
			break;
		}
		case LS_SCOPE_ALIEN:
			fputs("[alien] ", stdout);
			print_location(file, ls_scope_line(s));
			break;
		default:
			print_location(file, ls_scope_line(s));
			break;
		}
		putchar('\n');
	}
}

static void print_error_json(const ls_module *m, const char *token, const char *why)
{
	char msg[2400];
	snprintf(msg, sizeof msg, "%s: %s", token, why);
	ls_jw w;
	ls_jw_init(&w, stdout, LS_JW_COMPACT);
	ls_jw_object(&w);
	ls_jw_key(&w, "addr");
	ls_jw_string(&w, token);
	ls_jw_key(&w, "module");
	ls_jw_string(&w, ls_module_path(m));
	ls_jw_key(&w, "chain");
	ls_jw_array(&w);
	ls_jw_array_end(&w);
	ls_jw_key(&w, "error");
	ls_jw_string(&w, msg);
	ls_jw_object_end(&w);
	ls_jw_newline(&w);
	ls_jw_finish(&w);
}

/* Returns false when --data (DATA 1) or --blame (2) could not read an address's accesses. */
static bool lookup_one(const ls_module *m, const char *token, bool json, int data)
{
	uint64_t addrs[16];
	char why[1200];
	int n = cli_parse_address(m, token, addrs, 16, why, sizeof why);
	if (n < 0) {
		if (json)
			print_error_json(m, token, why);
		else {
			ls_text_fputs(token, stdout);
			fputs(": ", stdout);
			ls_text_fputs(why, stdout);
			putchar('\n');
		}
		return !data;
	}
	bool ok = true;
	for (int i = 0; i < n; i++) {
		if (data == 2) {
			ok &= cli_blame_lookup(m, addrs[i], json);
		} else if (data) {
			ok &= cli_data_lookup(m, addrs[i], json);
		} else if (json) {
			ls_write_chain_json(m, addrs[i], stdout);
			putchar('\n');
		} else {
			print_text(m, token, addrs[i]);
		}
	}
	return ok;
}

enum { OPT_DATA = 0x300, OPT_BLAME };

static const struct argp_option lookup_options[] = {
	{ "json", CLI_OPT_JSON, NULL, 0, "one JSON object a line per address, as design.md's lookup contract", 0 },
	{ "data", OPT_DATA, NULL, 0, "the memory accesses of the instruction at each address: variable, type, "
	  "field, offset, load/store and the rule that decided (design.md's accesses contract)", 0 },
	{ "blame", OPT_BLAME, NULL, 0, "the variables the instruction at each address is blamed on: explicit "
	  "(data flow) or implicit (control), with the rule (design.md's blame contract)", 0 },
	{ 0 }
};

struct lookup_args {
	struct cli_binary_args b; /* first: cli_parse_binary_args reads it */
	int data;                 /* 1: --data, 2: --blame */
};

static error_t parse_lookup_args(int key, char *arg, struct argp_state *state)
{
	struct lookup_args *a = state->input;
	if (key == OPT_DATA || key == OPT_BLAME) {
		if (a->data && a->data != (key == OPT_DATA ? 1 : 2))
			argp_error(state, "--data and --blame: one at a time");
		a->data = key == OPT_DATA ? 1 : 2;
		return 0;
	}
	return cli_parse_binary_args(key, arg, state);
}

static const struct argp lookup_argp = {
	lookup_options, parse_lookup_args, "BINARY [ADDR|SYMBOL+OFF[/SIZE] ...]",
	"The scope chain (procedure, inlined calls, loops, statement) of each address: hexadecimal "
	"(0x401156 or 401156, as addr2line takes them) or SYMBOL+0xOFF[/0xSIZE] as kernel oops "
	"lines print them.  With no address, they are read from stdin.",
	cli_binary_children, NULL, NULL
};

int cmd_lookup(int argc, char **argv)
{
	struct lookup_args la = { 0 };
	cli_parse(&lookup_argp, "lookup", argc, argv, ARGP_IN_ORDER, &la);
	struct cli_binary_args a = la.b;
	struct cli_common common = a.common;
	bool json = a.json, ok = true;
	int data = la.data;
	const char *binary = argv[a.binary_at];
	int first_addr = a.binary_at + 1;
	ls_module *m = cli_open(binary, &common);
	if (!m)
		return EXIT_ANALYSIS;
	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	if (first_addr < argc) {
		for (int i = first_addr; i < argc; i++)
			ok &= lookup_one(m, argv[i], json, data);
	} else {
		char line[4096];
		while (fgets(line, sizeof line, stdin)) {
			for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n"))
				ok &= lookup_one(m, tok, json, data);
		}
	}
	int rc = fflush(stdout) == 0 && ok ? EXIT_OK : EXIT_ANALYSIS;
	cli_data_done();
	cli_blame_done();
	ls_module_close(m);
	return rc;
}
