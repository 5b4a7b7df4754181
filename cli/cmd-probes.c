/* cmd-probes.c - `loopscope probes`: the instrumentation points of loops
 * (entry edges, header, back edges, exits, returns inside), as text or
 * JSON: what `perf loops stat` places its uprobes on (ls_loop_points). */
#include "cli.h"
#include "support/json_writer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_JSON = 0x300 };

static const struct argp_option probes_options[] = {
	{ "json", OPT_JSON, NULL, 0, "write JSON (one document) instead of text", 0 },
	{ 0 }
};

struct probes_args {
	struct cli_common common;
	bool json;
	const char *binary, *spec;
};

static error_t parse_probes(int key, char *arg, struct argp_state *state)
{
	struct probes_args *a = state->input;
	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &a->common;
		return 0;
	case OPT_JSON:
		a->json = true;
		return 0;
	case ARGP_KEY_ARG:
		if (!a->binary)
			a->binary = arg;
		else if (!a->spec)
			a->spec = arg;
		else
			argp_error(state, "one binary and one LOOP at a time ('%s' is extra)", arg);
		return 0;
	case ARGP_KEY_NO_ARGS:
		argp_error(state, "no binary given");
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

static const struct argp probes_argp = {
	probes_options, parse_probes, "BINARY [LOOP|FUNCTION]",
	"The instrumentation points of BINARY's loops (all of them, a function's, or one): the edges "
	"that enter each loop, its header (an iteration begins), its back edges (one ends), the edges "
	"that leave it and the returns inside it; each with the instruction to probe and, for an edge "
	"out of a conditional branch, the condition code and the outcome."
	"\vLOOP: 0xHEADER (a header address), FILE:LINE, or FUNCTION:N (its Nth loop, as this command "
	"numbers them).",
	cli_binary_children, NULL, NULL
};

/* A loop's procedure and its number in it (1-based preorder). */
static const ls_scope *loop_proc(const ls_scope *loop)
{
	const ls_scope *p = loop;
	while (p && ls_scope_kind_of(p) != LS_SCOPE_PROC)
		p = ls_scope_parent(p);
	return p;
}

static unsigned loop_index(const ls_module *m, const ls_scope *loop)
{
	const ls_scope *proc = loop_proc(loop);
	const char *name = proc ? (ls_scope_linkage_name(proc) ? ls_scope_linkage_name(proc) : ls_scope_name(proc)) : NULL;
	const ls_scope *all[4096];
	ls_error err;
	int n = name ? ls_loops_find(m, name, all, 4096, &err) : -1;
	for (int i = 0; i < n && i < 4096; i++)
		if (all[i] == loop)
			return (unsigned)i + 1;
	return 0;
}

static void text_point(const ls_loop_point *p)
{
	printf("  %-8s", ls_point_kind_name(p->kind));
	if (p->kind == LS_POINT_HEADER)
		printf(" %#" PRIx64, p->probe);
	else if (p->kind == LS_POINT_LEAVE && !p->to)
		printf(" %#" PRIx64 " return", p->from);
	else
		printf(" %#" PRIx64 " -> %#" PRIx64 "  %s", p->from, p->to, ls_point_how_name(p->how));
	if (p->how == LS_HOW_COND)
		printf(" j%s %s", p->cond_name, p->taken ? "taken" : "not taken");
	if (p->kind != LS_POINT_HEADER && p->kind != LS_POINT_LEAVE && p->to_single_pred)
		printf(", sole way into %#" PRIx64 " (probe %#" PRIx64 ")", p->to, p->to_probe);
	printf("  (probe %#" PRIx64 ", file offset %#" PRIx64 ")\n", p->probe, p->probe_offset);
}

static void json_point(ls_jw *w, const ls_loop_point *p)
{
	ls_jw_object(w);
	ls_jw_key(w, "kind"); ls_jw_string(w, ls_point_kind_name(p->kind));
	ls_jw_key(w, "how"); ls_jw_string(w, ls_point_how_name(p->how));
	ls_jw_key(w, "from"); ls_jw_hex(w, p->from);
	ls_jw_key(w, "to"); ls_jw_hex(w, p->to);
	ls_jw_key(w, "probe"); ls_jw_hex(w, p->probe);
	ls_jw_key(w, "probe_offset"); ls_jw_hex(w, p->probe_offset);
	if (p->how == LS_HOW_COND) {
		ls_jw_key(w, "cond"); ls_jw_string(w, p->cond_name);
		ls_jw_key(w, "taken"); ls_jw_bool(w, p->taken);
	}
	ls_jw_key(w, "to_single_pred"); ls_jw_bool(w, p->to_single_pred);
	if (p->to_single_pred) {
		ls_jw_key(w, "to_probe"); ls_jw_hex(w, p->to_probe);
		ls_jw_key(w, "to_probe_offset"); ls_jw_hex(w, p->to_probe_offset);
	}
	ls_jw_object_end(w);
}

static int one_loop(const ls_module *m, const ls_scope *loop, ls_jw *w)
{
	ls_error err;
	int n = ls_loop_points(m, loop, NULL, 0, &err);
	ls_loop_point *pts = n > 0 ? calloc((size_t)n, sizeof *pts) : NULL;
	if (n < 0 || (n > 0 && !pts) || (n > 0 && ls_loop_points(m, loop, pts, (size_t)n, &err) < 0)) {
		fprintf(stderr, "loopscope: %s\n", n < 0 ? err.message : "out of memory");
		free(pts);
		return -1;
	}
	const ls_scope *proc = loop_proc(loop);
	const char *fn = proc ? ls_scope_name(proc) : NULL, *file = ls_scope_file(loop);
	unsigned idx = loop_index(m, loop);
	if (w) {
		ls_jw_object(w);
		ls_jw_key(w, "function"); ls_jw_string(w, fn);
		ls_jw_key(w, "index"); ls_jw_uint(w, idx);
		ls_jw_key(w, "file"); ls_jw_string(w, file);
		ls_jw_key(w, "line"); ls_jw_line(w, ls_scope_line(loop));
		ls_jw_key(w, "header"); ls_jw_hex(w, ls_loop_header(loop));
		ls_jw_key(w, "depth"); ls_jw_uint(w, ls_loop_depth(loop));
		ls_jw_key(w, "irreducible"); ls_jw_bool(w, ls_loop_irreducible(loop));
		ls_jw_key(w, "points");
		ls_jw_array(w);
		for (int i = 0; i < n; i++)
			json_point(w, &pts[i]);
		ls_jw_array_end(w);
		ls_jw_object_end(w);
	} else {
		printf("loop %s:%u  %s:%u  header %#" PRIx64 "  depth %u%s\n", fn ? fn : "?", idx,
		       file ? file : "??", ls_scope_line(loop), ls_loop_header(loop), ls_loop_depth(loop),
		       ls_loop_irreducible(loop) ? "  irreducible" : "");
		for (int i = 0; i < n; i++)
			text_point(&pts[i]);
	}
	free(pts);
	return 0;
}

int cmd_probes(int argc, char **argv)
{
	struct probes_args a = { 0 };
	cli_parse(&probes_argp, "probes", argc, argv, 0, &a);
	ls_module *m = cli_open(a.binary, &a.common);
	if (!m)
		return EXIT_ANALYSIS;
	ls_error err;
	int n = ls_loops_find(m, a.spec, NULL, 0, &err);
	const ls_scope **loops = n > 0 ? calloc((size_t)n, sizeof *loops) : NULL;
	if (n < 0 || (n > 0 && !loops)) {
		fprintf(stderr, "loopscope: %s\n", n < 0 ? err.message : "out of memory");
		ls_module_close(m);
		return EXIT_ANALYSIS;
	}
	ls_loops_find(m, a.spec, loops, (size_t)n, &err);
	ls_jw w;
	if (a.json) {
		ls_jw_init(&w, stdout, LS_JW_PRETTY);
		ls_jw_object(&w);
		ls_jw_key(&w, "binary"); ls_jw_string(&w, ls_module_path(m));
		ls_jw_key(&w, "loops");
		ls_jw_array(&w);
	}
	int rc = EXIT_OK;
	for (int i = 0; i < n && rc == EXIT_OK; i++)
		if (one_loop(m, loops[i], a.json ? &w : NULL) < 0)
			rc = EXIT_ANALYSIS;
	if (a.json) {
		ls_jw_array_end(&w);
		ls_jw_object_end(&w);
		ls_jw_newline(&w);
		if (ls_jw_finish(&w) < 0)
			rc = EXIT_ANALYSIS;
	}
	if (fflush(stdout) != 0) {
		perror("stdout");
		rc = EXIT_ANALYSIS;
	}
	free(loops);
	ls_module_close(m);
	return rc;
}
