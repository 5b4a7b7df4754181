/* fuzz-module.c - libFuzzer target over the whole core: module loading
 * (ELF, DWARF, line tables, inline trees), decoding, CFGs, loops, the
 * structure builder, lookup and the writers.
 *
 * Each input is written to a temporary file (the core reads files, through
 * libdwfl) and opened without the cache (fuzz-cache covers the cache
 * reader), on one or two analysis threads (the input's size decides); a
 * few addresses derived from the input and from the procedures found are
 * looked up, symbols named by the input and by the procedures are looked
 * up, the unwind recipes of some procedures and addresses computed (their
 * intervals checked: in order, not overlapping), and the structure is
 * written in all three formats to /dev/null.  Any
 * crash, sanitizer report or leak is a bug in the core: bad input must come
 * back as an ls_error or a warning.  Seeds with C++ exceptions (.eh_frame
 * LSDAs) reach the landing-pad parser.
 *
 * Build (configure --enable-fuzz CC=clang):  make fuzz-module
 * Run:  ./fuzz-module -max_total_time=300 CORPUS_DIR SEED_DIR
 * Seeds: small fixture binaries; make fuzz-module-run builds them and runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-input.h"
#include "loopscope.h"

/* Warnings are expected on fuzzed input; keep the output quiet. */
static void quiet(void *ctx, const char *message)
{
	(void)ctx;
	(void)message;
}

/* Symbol lookups: names from the input's last bytes, and the procedures'. */
static void look_up_symbols(const ls_module *m, const uint8_t *data, size_t size)
{
	char name[64];
	size_t n = size < sizeof name - 1 ? size : sizeof name - 1;
	memcpy(name, data + size - n, n);
	name[n] = 0;
	uint64_t addr, sz;
	ls_module_symbol(m, name, &addr, &sz);
	ls_module_symbol(m, "main", &addr, &sz);
	ls_module_symbol(m, "main(int, char**)", &addr, &sz);
	const ls_scope *root = ls_module_root(m);
	int k = 0;
	for (const ls_scope *f = root ? ls_scope_first_child(root) : NULL; f && k < 8; f = ls_scope_next_sibling(f))
		for (const ls_scope *p = ls_scope_first_child(f); p && k < 8; p = ls_scope_next_sibling(p), k++) {
			const char *pn = ls_scope_name(p);
			if (pn && ls_module_symbol(m, pn, &addr, &sz) == 0)
				ls_lookup_depth(m, addr);
			if (ls_scope_linkage_name(p))
				ls_module_symbol(m, ls_scope_linkage_name(p), &addr, &sz);
		}
}

static void look_up_some(const ls_module *m, const uint8_t *data, size_t size, FILE *devnull)
{
	const ls_scope *chain[LS_MAX_CHAIN];
	/* Addresses taken from the input, so the fuzzer can steer them. */
	for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
		uint64_t a;
		memcpy(&a, data + i, sizeof a);
		ls_lookup_chain(m, a, chain, LS_MAX_CHAIN);
		ls_lookup_chain(m, a, chain, 3); /* a chain cut in the middle */
		ls_write_chain_json(m, a, devnull);
	}
	if (size)
		look_up_symbols(m, data, size);
	/* And every address near the start of the first procedures found. */
	const ls_scope *root = ls_module_root(m);
	int nprocs = 0;
	for (const ls_scope *f = root ? ls_scope_first_child(root) : NULL; f && nprocs < 16; f = ls_scope_next_sibling(f)) {
		for (const ls_scope *p = ls_scope_first_child(f); p && nprocs < 16; p = ls_scope_next_sibling(p)) {
			if (ls_scope_kind_of(p) != LS_SCOPE_PROC)
				continue;
			nprocs++;
			uint64_t lo = ls_scope_low(p);
			for (uint64_t a = lo; a < lo + 64; a += 3) {
				size_t n = ls_lookup_chain(m, a, chain, LS_MAX_CHAIN);
				for (size_t k = 0; k < n; k++) {
					/* Touch every accessor the front ends use. */
					(void)ls_scope_name(chain[k]);
					(void)ls_scope_file(chain[k]);
					(void)ls_scope_line(chain[k]);
					(void)ls_scope_call_file(chain[k]);
					if (ls_scope_kind_of(chain[k]) == LS_SCOPE_LOOP) {
						(void)ls_loop_header(chain[k]);
						for (size_t e = 0; e < ls_loop_nentries(chain[k]); e++)
							(void)ls_loop_entry(chain[k], e);
					}
				}
			}
		}
	}
}

/* The unwind recipes (unwind/recipes.c): every recipe of the first
 * procedures, their summaries and call targets, and recipes and call
 * sites at addresses taken from the input.  Each recipe must lie in its
 * procedure, in address order, without overlap. */
static void unwind_some(const ls_module *m, const uint8_t *data, size_t size)
{
	ls_error err;
	ls_unwind_recipe r[64], one;
	uint64_t targets[16];
	for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
		uint64_t a;
		memcpy(&a, data + i, sizeof a);
		ls_unwind_recipe_at(m, a, &one, &err);
		ls_unwind_call_before(m, a, &targets[0]);
	}
	const ls_scope *root = ls_module_root(m);
	int k = 0;
	for (const ls_scope *f = root ? ls_scope_first_child(root) : NULL; f && k < 16; f = ls_scope_next_sibling(f))
		for (const ls_scope *p = ls_scope_first_child(f); p && k < 16; p = ls_scope_next_sibling(p), k++) {
			uint64_t lo = ls_scope_low(p);
			size_t n = ls_unwind_recipes(m, lo, r, 64);
			for (size_t j = 1; j < n && j < 64; j++)
				if (r[j].lo < r[j - 1].hi || r[j].lo >= r[j].hi) {
					fprintf(stderr, "recipes out of order at 0x%llx\n", (unsigned long long)r[j].lo);
					abort();
				}
			ls_unwind_proc_info info;
			if (ls_unwind_proc(m, lo, &info, &err) == 0 && info.nrecipes != n) {
				fprintf(stderr, "ls_unwind_proc: %zu recipes, ls_unwind_recipes: %zu\n", info.nrecipes, n);
				abort();
			}
			ls_unwind_proc_targets(m, lo, 0, targets, 16);
			ls_unwind_proc_targets(m, lo, 1, targets, 16);
			for (size_t j = 0; j < n && j < 64; j++)
				(void)ls_unwind_rule_name(r[j].rule);
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/ls-fuzz.XXXXXX";
	if (fuzz_write_input(data, size, path) < 0)
		return 0;

	ls_options opt;
	ls_options_init(&opt);
	opt.use_cache = 0;
	opt.jobs = 1 + (size & 1); /* one or two threads: the result must not depend on it */
	opt.progress = 0;
	opt.warn = quiet;
	opt.debug_file_path = "/nonexistent"; /* never pick up a real file's debug info */
	ls_error err;
	ls_module *m = ls_module_open(path, &opt, &err);
	if (m) {
		FILE *devnull = fopen("/dev/null", "w");
		if (devnull) {
			look_up_some(m, data, size, devnull);
			unwind_some(m, data, size);
			ls_write_structure(m, LS_FORMAT_TEXT, devnull, &err);
			ls_write_structure(m, LS_FORMAT_JSON, devnull, &err);
			ls_write_structure(m, LS_FORMAT_XML, devnull, &err);
			fclose(devnull);
		}
		ls_module_close(m);
	} else if (err.message[0] == '\0') {
		/* A failure must say why. */
		fprintf(stderr, "ls_module_open failed without a message\n");
		abort();
	}
	unlink(path);
	return 0;
}
