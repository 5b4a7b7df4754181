/* output_json.c - the scope tree and lookup chains as JSON.
 *
 * Owns the JSON shapes of design.md: `loopscope struct --format=json` (the
 * whole tree, every scope with "children" and "ranges") and the one-line
 * lookup object of `loopscope lookup --json` (ls_write_chain_json, and
 * ls_chain_json for callers without a stream: the GDB module).  Every
 * front end that prints a chain as JSON prints this one.
 *
 * The chain writer is the lookup hot path (hundreds of thousands of
 * addresses per run); json_writer.c formats by hand into a buffer that goes
 * to stdio in one fwrite per object (no printf, no per-character stdio).
 */
#include "elf/module.h"
#include "output/output.h"
#include "structure/scope.h"
#include "support/base.h"
#include "support/json_writer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ls_json_string(FILE *out, const char *s)
{
	ls_jw w;
	ls_jw_init(&w, out, LS_JW_COMPACT);
	ls_jw_string(&w, s);
	ls_jw_finish(&w);
}

/* [from,to] pairs: a loop's back edges or exits. */
static void jw_edges(ls_jw *w, const char *key, const ls_edge *e, size_t n)
{
	ls_jw_key(w, key);
	ls_jw_array(w);
	for (size_t i = 0; i < n; i++) {
		ls_jw_array(w);
		ls_jw_hex(w, e[i].from);
		ls_jw_hex(w, e[i].to);
		ls_jw_array_end(w);
	}
	ls_jw_array_end(w);
}

/* The fields one scope shares between the lookup chain and the tree, inside
 * its object.  FULL adds what only the tree output carries (loop entries and
 * edges, linkage names). */
static void jw_scope_fields(ls_jw *w, const struct ls_scope *s, bool full)
{
	ls_jw_key(w, "kind");
	ls_jw_string(w, ls_scope_kind_name(s->kind));

	switch (s->kind) {
	case LS_SCOPE_MODULE:
	case LS_SCOPE_FILE:
		ls_jw_key(w, "name");
		ls_jw_string(w, s->name ? s->name : s->file);
		break;
	case LS_SCOPE_PROC:
		ls_jw_key(w, "name");
		ls_jw_string(w, s->name);
		if (full && s->linkage_name) {
			ls_jw_key(w, "linkage_name");
			ls_jw_string(w, s->linkage_name);
		}
		if (s->unresolved_jumps) { /* its loops may be incomplete */
			ls_jw_key(w, "unresolved_jumps");
			ls_jw_uint(w, s->unresolved_jumps);
		}
		break;
	case LS_SCOPE_INLINE:
		ls_jw_key(w, "name");
		ls_jw_string(w, s->name);
		ls_jw_key(w, "call_file");
		ls_jw_string(w, s->call_file);
		ls_jw_key(w, "call_line");
		ls_jw_line(w, s->call_line);
		if (full && s->call_column) {
			/* Tells apart two calls on one line (f(g(x))). */
			ls_jw_key(w, "call_column");
			ls_jw_uint(w, s->call_column);
		}
		break;
	case LS_SCOPE_STMT:
		if (full && s->cut) { /* inlined calls nested too deep, left out above it */
			ls_jw_key(w, "cut");
			ls_jw_uint(w, s->cut);
		}
		break;
	default:
		break;
	}
	if (s->kind != LS_SCOPE_MODULE && s->kind != LS_SCOPE_FILE) {
		ls_jw_key(w, "file");
		ls_jw_string(w, s->file);
		ls_jw_key(w, "line");
		ls_jw_line(w, s->line);
	}

	if (s->kind == LS_SCOPE_LOOP) {
		const struct ls_loop_info *l = s->loop;
		ls_jw_key(w, "header");
		ls_jw_hex(w, l ? l->header : 0);
		ls_jw_key(w, "depth");
		ls_jw_uint(w, l ? l->depth : 0);
		ls_jw_key(w, "irreducible");
		ls_jw_bool(w, l && l->irreducible);
		/* Marks, absent when they do not apply. */
		if (l && ls_loop_made_name(l->made)) {
			ls_jw_key(w, "compiler_made");
			ls_jw_string(w, ls_loop_made_name(l->made));
		}
		if (l && ls_loop_guess_name(l->guess)) {
			ls_jw_key(w, "line_guessed");
			ls_jw_string(w, ls_loop_guess_name(l->guess));
		}
		if (l && l->nparts) {
			ls_jw_key(w, "part");
			ls_jw_uint(w, l->part);
			ls_jw_key(w, "parts");
			ls_jw_uint(w, l->nparts);
		}
		if (full && l) {
			ls_jw_key(w, "entries");
			ls_jw_array(w);
			for (size_t i = 0; i < l->nentries; i++)
				ls_jw_hex(w, l->entries[i]);
			ls_jw_array_end(w);
			jw_edges(w, "backedges", l->backedges, l->nbackedges);
			jw_edges(w, "exits", l->exits, l->nexits);
		}
	}
}

void ls_write_chain_json(const ls_module *m, uint64_t addr, FILE *out)
{
	const ls_scope *chain[LS_MAX_CHAIN];
	size_t n = ls_lookup_chain(m, addr, chain, LS_MAX_CHAIN);
	ls_jw w;
	ls_jw_init(&w, out, LS_JW_COMPACT);
	ls_jw_object(&w);
	ls_jw_key(&w, "addr");
	ls_jw_hex(&w, addr);
	ls_jw_key(&w, "module");
	ls_jw_string(&w, m->path);
	ls_jw_key(&w, "chain");
	ls_jw_array(&w);
	for (size_t i = 0; i < n; i++) {
		ls_jw_object(&w);
		jw_scope_fields(&w, chain[i], false);
		ls_jw_object_end(&w);
	}
	ls_jw_array_end(&w);
	size_t depth = ls_lookup_depth(m, addr); /* past n: cut */
	if (depth > n) {
		/* the scopes left out between the last two of the chain */
		ls_jw_key(&w, "cut");
		ls_jw_uint(&w, depth - n);
	}
	if (n == 0) {
		char msg[64];
		snprintf(msg, sizeof msg, "no procedure contains 0x%" PRIx64, addr);
		ls_jw_key(&w, "error");
		ls_jw_string(&w, msg);
	}
	ls_jw_object_end(&w);
	ls_jw_finish(&w);
}

size_t ls_chain_json(const ls_module *m, uint64_t addr, char *buf, size_t size)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return 0;
	ls_write_chain_json(m, addr, f);
	bool ok = fclose(f) == 0;
	if (ok && size) {
		size_t n = len < size - 1 ? len : size - 1;
		memcpy(buf, text, n);
		buf[n] = 0;
	}
	free(text);
	return ok ? len : 0;
}

/* ---- the whole tree ------------------------------------------------------ */

static void jw_ranges(ls_jw *w, const struct ls_scope *s)
{
	ls_jw_key(w, "ranges");
	ls_jw_array(w);
	for (size_t i = 0; i < s->nranges; i++) {
		ls_jw_array(w);
		ls_jw_hex(w, s->ranges[i].lo);
		ls_jw_hex(w, s->ranges[i].hi);
		ls_jw_array_end(w);
	}
	ls_jw_array_end(w);
}

/* The module's own fields: its name and build-id. */
static void jw_module_fields(ls_jw *w, const char *name, const ls_module *m)
{
	ls_jw_key(w, "kind");
	ls_jw_string(w, "module");
	ls_jw_key(w, "name");
	ls_jw_string(w, name);
	ls_jw_key(w, "build_id");
	ls_jw_string(w, m->build_id);
}

/* Iterative pre-order walk: inline chains of real programs can be deep and
 * the writer must not depend on the stack size. */
int ls_write_json(const ls_module *m, FILE *out, ls_error *err)
{
	const struct ls_scope *root = m->root;
	ls_jw w;
	ls_jw_init(&w, out, LS_JW_COMPACT);
	if (!root) {
		ls_jw_object(&w);
		jw_module_fields(&w, m->path, m);
		ls_jw_key(&w, "ranges");
		ls_jw_array(&w);
		ls_jw_array_end(&w);
		ls_jw_key(&w, "children");
		ls_jw_array(&w);
		ls_jw_array_end(&w);
		ls_jw_object_end(&w);
		goto done;
	}

	const struct ls_scope *s = root;
	for (;;) {
		ls_jw_object(&w);
		if (s->kind == LS_SCOPE_MODULE)
			jw_module_fields(&w, s->name ? s->name : m->path, m);
		else
			jw_scope_fields(&w, s, true);
		jw_ranges(&w, s);
		ls_jw_key(&w, "children");
		ls_jw_array(&w);
		if (s->first_child) {
			s = s->first_child;
			continue;
		}
		/* Close this scope and every ancestor whose children are done. */
		for (;;) {
			ls_jw_array_end(&w);
			ls_jw_object_end(&w);
			if (s == root)
				goto done;
			if (s->next_sibling) {
				s = s->next_sibling;
				break;
			}
			s = s->parent;
		}
	}
done:
	ls_jw_newline(&w);
	if (ls_jw_finish(&w) < 0) {
		ls_set_error(err, LS_ERR_IO, "%s: cannot write the JSON output", m->path);
		return -1;
	}
	return 0;
}
