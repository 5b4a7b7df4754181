/* lookup-data.c - `loopscope lookup --data`: the memory accesses of the
 * instructions at the addresses given (ls_accesses_of), with the variable,
 * type, field path, offset, kind and the rule that decided; text or one
 * JSON object a line (design.md, "Accesses"). */
#include "cli.h"
#include "support/json_writer.h"
#include "support/text_escape.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* The accesses of the procedure asked about last: addresses come in
 * procedure order in practice (a disassembly, a profile's hot spots). */
static ls_accesses *cached;

void cli_data_done(void)
{
	ls_accesses_free(cached);
	cached = NULL;
}

static ls_accesses *accesses_for(const ls_module *m, uint64_t addr, ls_error *err)
{
	const ls_scope *proc = ls_lookup_proc(m, addr);
	if (cached && proc && ls_scope_low(proc) == ls_accesses_proc(cached))
		return cached;
	ls_accesses *a = ls_accesses_of(m, addr, err);
	if (a) {
		ls_accesses_free(cached);
		cached = a;
	}
	return a;
}

static void print_access_text(const ls_access *a)
{
	printf("0x%" PRIx64 ": %s", a->addr, ls_access_kind_name(a->kind));
	if (a->width)
		printf(" %u", a->width);
	printf(" %s: ", a->operand);
	if (a->rule == LS_RULE_NONE) {
		fputs("no variable [none]\n", stdout);
		return;
	}
	ls_text_fputs(a->expr, stdout);
	fputs(" (", stdout);
	ls_text_fputs(a->type, stdout);
	printf(" +%" PRId64, a->offset);
	if (a->field[0]) {
		fputs(", ", stdout);
		ls_text_fputs(a->field, stdout);
		fputs(": ", stdout);
		ls_text_fputs(a->field_type, stdout);
		if (a->bitfield)
			fputs(", bit-field", stdout);
	}
	printf(") [%s%s]\n", ls_access_rule_name(a->rule), a->indexed ? ", indexed" : "");
}

static void write_access_json(ls_jw *w, const ls_access *a)
{
	ls_jw_object(w);
	ls_jw_key(w, "operand");
	ls_jw_string(w, a->operand);
	ls_jw_key(w, "kind");
	ls_jw_string(w, ls_access_kind_name(a->kind));
	ls_jw_key(w, "width");
	ls_jw_uint(w, a->width);
	ls_jw_key(w, "indexed");
	ls_jw_bool(w, a->indexed);
	ls_jw_key(w, "rule");
	ls_jw_string(w, ls_access_rule_name(a->rule));
	ls_jw_key(w, "variable");
	ls_jw_string(w, a->variable);
	ls_jw_key(w, "type");
	ls_jw_string(w, a->type);
	ls_jw_key(w, "offset");
	if (a->rule)
		ls_jw_int(w, a->offset);
	else
		ls_jw_null(w);
	ls_jw_key(w, "field");
	ls_jw_string(w, a->field);
	ls_jw_key(w, "field_type");
	ls_jw_string(w, a->field_type);
	ls_jw_key(w, "bitfield");
	ls_jw_bool(w, a->bitfield);
	ls_jw_key(w, "expr");
	ls_jw_string(w, a->expr);
	ls_jw_object_end(w);
}

static void write_json(const ls_module *m, uint64_t addr, const ls_accesses *acc, const char *error)
{
	ls_jw w;
	ls_jw_init(&w, stdout, LS_JW_COMPACT);
	ls_jw_object(&w);
	ls_jw_key(&w, "addr");
	ls_jw_hex(&w, addr);
	ls_jw_key(&w, "module");
	ls_jw_string(&w, ls_module_path(m));
	ls_jw_key(&w, "accesses");
	ls_jw_array(&w);
	size_t first = 0, n = ls_accesses_at(acc, addr, &first);
	for (size_t i = 0; i < n; i++)
		write_access_json(&w, ls_accesses_get(acc, first + i));
	ls_jw_array_end(&w);
	if (error) {
		ls_jw_key(&w, "error");
		ls_jw_string(&w, error);
	}
	ls_jw_object_end(&w);
	ls_jw_newline(&w);
	ls_jw_finish(&w);
}

/* Returns false when the accesses could not be read (ERR says why). */
bool cli_data_lookup(const ls_module *m, uint64_t addr, bool json)
{
	ls_error err;
	const ls_accesses *acc = accesses_for(m, addr, &err);
	if (json) {
		write_json(m, addr, acc, acc ? NULL : err.message);
		return acc != NULL;
	}
	if (!acc) {
		printf("0x%" PRIx64 ": ", addr);
		ls_text_fputs(err.message, stdout);
		putchar('\n');
		return false;
	}
	size_t first = 0, n = ls_accesses_at(acc, addr, &first);
	if (n == 0)
		printf("0x%" PRIx64 ": no memory access\n", addr);
	for (size_t i = 0; i < n; i++)
		print_access_text(ls_accesses_get(acc, first + i));
	return true;
}
