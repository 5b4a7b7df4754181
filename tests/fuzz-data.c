/* fuzz-data.c - libFuzzer target: the accesses stage's readers of untrusted
 * DWARF (libloopscope/data/): the location-expression reader (location.c),
 * the type and field-path reader (types.c), and the stage over them
 * (accesses.c, reg_origin.c).
 *
 * The first byte says what the rest is:
 *   0: location expressions, 17 bytes an operation (atom, number, number2):
 *      classified whole, and split into pieces; every piece's object
 *      offset must grow and the count must agree with the DW_OP_pieces
 *      (none when a piece is too large to be read);
 *   else: an ELF file, opened without the cache; for the first procedures,
 *      ls_accesses_of, and each access checked: in its procedure, a
 *      variable exactly when a rule matched, every string there and
 *      bounded (the readers' bounds on nested and self-referring types),
 *      and the layout of each named access's type (ls_accesses_layout);
 *      then ls_blame_of (blame.c, over the same DWARF and the CFG), each
 *      instruction's entries checked: a known variable with a name, a
 *      kind and rule that exist, a parameter position only for a pointer
 *      parameter; the call and argument queries answer within bounds.
 * Any crash, sanitizer report or leak is a bug: bad DWARF must come back as
 * "no variable" or an ls_error.
 *
 * Build (configure --enable-fuzz CC=clang):  make fuzz-data
 * Seeds: tests/fixtures/data_layout.c and .cpp built by scripts/fuzz-ci. */
#include "data/location.h"
#include "fuzz-input.h"
#include "loopscope.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void quiet(void *ctx, const char *message)
{
	(void)ctx;
	(void)message;
}

static void fuzz_expressions(const uint8_t *data, size_t size)
{
	enum { OP = 17, MAX = 256 };
	Dwarf_Op ops[MAX];
	size_t n = 0, npieces = 0;
	for (size_t i = 0; i + OP <= size && n < MAX; i += OP, n++) {
		memset(&ops[n], 0, sizeof ops[n]);
		ops[n].atom = data[i];
		memcpy(&ops[n].number, data + i + 1, 8);
		memcpy(&ops[n].number2, data + i + 9, 8);
		npieces += ops[n].atom == DW_OP_piece;
	}
	struct ls_loc loc;
	ls_loc_classify(ops, n, &loc);
	if (loc.kind > LS_LOC_OTHER)
		abort();
	struct ls_loc_piece pieces[8];
	size_t k = ls_loc_pieces(ops, n, pieces, 8);
	bool huge = false; /* pieces past LS_LOC_PIECE_MAX bytes: refused (0) */
	uint64_t sum = 0;
	for (size_t i = 0; i < n && !huge; i++)
		if (ops[i].atom == DW_OP_piece) {
			huge = ops[i].number > LS_LOC_PIECE_MAX || sum > LS_LOC_PIECE_MAX;
			sum += ops[i].number;
		}
	if (k != npieces && !(k == 0 && huge))
		abort();
	for (size_t i = 1; i < k && i < 8; i++)
		if ((uint64_t)(pieces[i].obj_off - pieces[i - 1].obj_off) != pieces[i - 1].size)
			abort();
}

/* The layout of A's type (annotate --data-type's): bounded strings, the
 * type first at depth 0, members below it; or an error saying why. */
static void check_layout(const ls_accesses *acc, const ls_access *a)
{
	ls_error err;
	ls_type_layout *l = ls_accesses_layout(acc, a, &err);
	if (!l) {
		if (!err.message[0])
			abort();
		return;
	}
	for (size_t i = 0; i < ls_type_layout_count(l); i++) {
		const ls_type_member *m = ls_type_layout_get(l, i);
		if (!m || !m->name || !m->type || strlen(m->type) > 4096 || (i == 0) != (m->depth == 0))
			abort();
	}
	ls_type_layout_free(l);
}

static void check_access(const ls_access *a)
{
	if (!a->operand || strlen(a->operand) >= 64)
		abort();
	if ((a->rule == LS_RULE_NONE) != (a->variable == NULL))
		abort();
	if (a->rule != LS_RULE_NONE && (!a->type || !a->field || !a->field_type || !a->expr ||
	                                strlen(a->field) > 512 || strlen(a->expr) > 1024))
		abort();
	if (a->kind < LS_ACCESS_LOAD || a->kind > LS_ACCESS_BOTH || !ls_access_rule_name(a->rule))
		abort();
}

static void check_blame(const ls_module *m, const ls_scope *p)
{
	ls_error err;
	ls_blame *b = ls_blame_of(m, ls_scope_low(p), &err);
	if (!b) {
		if (!err.message[0])
			abort(); /* a failure must say why */
		return;
	}
	size_t nvars = ls_blame_nvars(b);
	for (size_t r = 0; r < ls_scope_nranges(p); r++) {
		ls_range rg = ls_scope_range(p, r);
		for (uint64_t a = rg.lo; a < rg.hi && a - rg.lo < 4096; a++) {
			const ls_blame_entry *e;
			size_t n = ls_blame_at(b, a, &e);
			for (size_t i = 0; i < n; i++) {
				int exit, param;
				const char *name = ls_blame_var_name(b, e[i].var, &exit, &param);
				if (e[i].var >= nvars || !name || e[i].addr != a ||
				    (e[i].kind != LS_BLAME_EXPLICIT && e[i].kind != LS_BLAME_IMPLICIT) ||
				    !strcmp(ls_blame_rule_name(e[i].rule), "?") ||
				    (exit == LS_BLAME_EXIT_PARAM) != (param >= 0))
					abort();
			}
			size_t vars[4];
			if (n && ls_blame_arg_sources(b, a, (int)(a % 7), vars, 4) > 4)
				abort();
		}
		uint64_t call = ls_blame_call_in(b, rg.lo, rg.hi, 0);
		if (call && (call < rg.lo || call >= rg.hi))
			abort();
	}
	ls_blame_free(b);
}

static void fuzz_module(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/ls-fuzz-data.XXXXXX";
	if (fuzz_write_input(data, size, path) < 0)
		return;
	ls_options opt;
	ls_options_init(&opt);
	opt.use_cache = 0;
	opt.jobs = 1;
	opt.progress = 0;
	opt.warn = quiet;
	opt.debug_file_path = "/nonexistent";
	ls_error err;
	ls_module *m = ls_module_open(path, &opt, &err);
	const ls_scope *root = m ? ls_module_root(m) : NULL;
	int k = 0;
	for (const ls_scope *f = root ? ls_scope_first_child(root) : NULL; f && k < 12; f = ls_scope_next_sibling(f))
		for (const ls_scope *p = ls_scope_first_child(f); p && k < 12; p = ls_scope_next_sibling(p), k++) {
			if (ls_scope_kind_of(p) != LS_SCOPE_PROC)
				continue;
			ls_accesses *acc = ls_accesses_of(m, ls_scope_low(p), &err);
			if (!acc && !err.message[0])
				abort(); /* a failure must say why */
			for (size_t i = 0; i < ls_accesses_count(acc); i++) {
				const ls_access *a = ls_accesses_get(acc, i);
				check_access(a);
				if (a->variable)
					check_layout(acc, a);
			}
			ls_accesses_free(acc);
			check_blame(m, p);
		}
	if (m)
		ls_module_close(m);
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] == 0)
		fuzz_expressions(data + 1, size - 1);
	else
		fuzz_module(data + 1, size - 1);
	return 0;
}
