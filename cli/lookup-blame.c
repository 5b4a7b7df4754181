/* lookup-blame.c - `loopscope lookup --blame`: the variables the
 * instructions at the addresses given are blamed on (ls_blame_of), with
 * the kind (explicit, implicit) and the rule; text or one JSON object a
 * line (design.md, "Blame"). */
#include "cli.h"
#include "support/json_writer.h"
#include "support/text_escape.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* The blame of the procedure asked about last (addresses come in
 * procedure order in practice: a disassembly, a profile's hot spots). */
static ls_blame *cached;

void cli_blame_done(void)
{
	ls_blame_free(cached);
	cached = NULL;
}

static ls_blame *blame_for(const ls_module *m, uint64_t addr, ls_error *err)
{
	const ls_scope *proc = ls_lookup_proc(m, addr);
	if (cached && proc && ls_scope_low(proc) == ls_blame_proc(cached))
		return cached;
	ls_blame *b = ls_blame_of(m, addr, err);
	if (b) {
		ls_blame_free(cached);
		cached = b;
	}
	return b;
}

static const char *exit_name(int exit)
{
	return exit == LS_BLAME_EXIT_PARAM ? "parameter" : exit == LS_BLAME_EXIT_RETURN ? "return" : "local";
}

static void print_text(const ls_blame *b, uint64_t addr)
{
	const ls_blame_entry *e;
	size_t n = ls_blame_at(b, addr, &e);
	printf("0x%" PRIx64 ":", addr);
	if (n == 0)
		fputs(" no variable", stdout);
	for (size_t i = 0; i < n; i++) {
		int exit;
		const char *name = ls_blame_var_name(b, e[i].var, &exit, NULL);
		fputs(i ? ", " : " ", stdout);
		ls_text_fputs(name, stdout);
		printf(" %s [%s%s%s]", ls_blame_kind_name(e[i].kind), ls_blame_rule_name(e[i].rule),
		       e[i].also_implicit ? ", implicit too" : "", exit == LS_BLAME_EXIT_PARAM ? ", exit parameter" : "");
	}
	putchar('\n');
}

static void write_json(const ls_module *m, uint64_t addr, const ls_blame *b, const char *error)
{
	ls_jw w;
	ls_jw_init(&w, stdout, LS_JW_COMPACT);
	ls_jw_object(&w);
	ls_jw_key(&w, "addr");
	ls_jw_hex(&w, addr);
	ls_jw_key(&w, "module");
	ls_jw_string(&w, ls_module_path(m));
	ls_jw_key(&w, "blame");
	ls_jw_array(&w);
	const ls_blame_entry *e = NULL;
	size_t n = b ? ls_blame_at(b, addr, &e) : 0;
	for (size_t i = 0; i < n; i++) {
		int exit, param;
		const char *name = ls_blame_var_name(b, e[i].var, &exit, &param);
		ls_jw_object(&w);
		ls_jw_key(&w, "variable");
		ls_jw_string(&w, name);
		ls_jw_key(&w, "kind");
		ls_jw_string(&w, ls_blame_kind_name(e[i].kind));
		ls_jw_key(&w, "rule");
		ls_jw_string(&w, ls_blame_rule_name(e[i].rule));
		ls_jw_key(&w, "implicit_too");
		ls_jw_bool(&w, e[i].also_implicit);
		ls_jw_key(&w, "exit");
		ls_jw_string(&w, exit_name(exit));
		if (exit == LS_BLAME_EXIT_PARAM) {
			ls_jw_key(&w, "param");
			ls_jw_int(&w, param);
		}
		ls_jw_object_end(&w);
	}
	ls_jw_array_end(&w);
	if (error) {
		ls_jw_key(&w, "error");
		ls_jw_string(&w, error);
	}
	ls_jw_object_end(&w);
	ls_jw_newline(&w);
	ls_jw_finish(&w);
}

/* Returns false when the blame could not be computed (the message is
 * printed). */
bool cli_blame_lookup(const ls_module *m, uint64_t addr, bool json)
{
	ls_error err;
	const ls_blame *b = blame_for(m, addr, &err);
	if (json) {
		write_json(m, addr, b, b ? NULL : err.message);
		return b != NULL;
	}
	if (!b) {
		printf("0x%" PRIx64 ": ", addr);
		ls_text_fputs(err.message, stdout);
		putchar('\n');
		return false;
	}
	print_text(b, addr);
	return true;
}
