/* output_text.c - the scope tree as an indented, human-readable tree.
 *
 * Owns `loopscope struct --format=text`.  The layout follows the views of
 * the slides (seeds/003): "loop at FILE:LINE", "[I] callee" for inlined
 * calls.  Tests grep this output, so keep each line's shape stable:
 *
 *   module /abs/bin [build-id 1234abcd...]
 *   file /abs/small.cpp
 *     proc main (/abs/small.cpp:12) [0x401130-0x4011d2)
 *       loop at small.cpp:19 [header 0x401150, depth 1]
 *         [I] do_work called at small.cpp:20 (small.cpp:6)
 *           loop at small.cpp:8 [header 0x401170, depth 2, irreducible: entries 0x401170, 0x401190]
 *
 * A loop's marks follow its header and depth: "irreducible: entries ...",
 * "compiler-made: memcpy" (no loop statement behind it), "line guessed:
 * before-body" (the rule that guessed its line), and "(part 2 of 2)" after
 * its line when one source loop became several machine loops.
 *             stmt small.cpp:9 [0x401180-0x401188)
 *         alien util.h:33
 *
 * Procedures show full paths; everything below them shows basenames (the
 * full paths are in the JSON output).  An unknown file is "??".  Line 0 is
 * never printed as a line: code the compiler gave no line is "[no line]"
 * (the statement of a scope's line-0 instructions: "stmt [no line]").
 * Children are indented two spaces below their parent; the module's own
 * children start at column 0.  Names and paths come from the binary: their
 * control characters are escaped (support/text_escape.h), so that one line
 * is one scope and nothing reaches the terminal raw.
 */
#include "elf/module.h"
#include "output/output.h"
#include "structure/scope.h"
#include "support/base.h"
#include "support/text_escape.h"

#include <inttypes.h>
#include <string.h>

static const char *base_name(const char *path)
{
	if (!path)
		return "??";
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* FILE:LINE, or "[no line]" when LINE is 0 (the file alone says nothing
 * of where). */
static void put_location(FILE *out, const char *file, unsigned line)
{
	if (line) {
		ls_text_fputs(file ? file : "??", out);
		fprintf(out, ":%u", line);
	} else {
		fputs("[no line]", out);
	}
}

/* WHAT, then NAME (escaped) */
static void put_named(FILE *out, const char *what, const char *name)
{
	fputs(what, out);
	ls_text_fputs(name ? name : "??", out);
}

static void put_ranges(FILE *out, const struct ls_scope *s)
{
	for (size_t i = 0; i < s->nranges; i++)
		fprintf(out, " [0x%" PRIx64 "-0x%" PRIx64 ")", s->ranges[i].lo, s->ranges[i].hi);
}

static void put_scope(FILE *out, const ls_module *m, const struct ls_scope *s, unsigned indent)
{
	for (unsigned i = 0; i < indent; i++)
		fputs("  ", out);
	switch (s->kind) {
	case LS_SCOPE_MODULE:
		put_named(out, "module ", s->name ? s->name : m->path);
		if (m->build_id)
			fprintf(out, " [build-id %s]", m->build_id);
		break;
	case LS_SCOPE_FILE:
		put_named(out, "file ", s->file ? s->file : s->name);
		break;
	case LS_SCOPE_PROC:
		put_named(out, "proc ", s->name);
		fputs(" (", out);
		put_location(out, s->file, s->line);
		fputc(')', out);
		put_ranges(out, s);
		if (s->unresolved_jumps)
			fprintf(out, " [%u indirect jump%s not resolved: loops may be incomplete]", s->unresolved_jumps,
			        s->unresolved_jumps == 1 ? "" : "s");
		break;
	case LS_SCOPE_INLINE:
		put_named(out, "[I] ", s->name);
		fputs(" called at ", out);
		put_location(out, base_name(s->call_file), s->call_line);
		fputs(" (", out);
		put_location(out, base_name(s->file), s->line);
		fputc(')', out);
		break;
	case LS_SCOPE_ALIEN:
		fputs("alien ", out);
		put_location(out, base_name(s->file), s->line);
		break;
	case LS_SCOPE_LOOP: {
		const struct ls_loop_info *l = s->loop;
		fputs("loop at ", out);
		put_location(out, base_name(s->file), s->line);
		if (!l)
			break;
		if (l->nparts)
			fprintf(out, " (part %u of %u)", l->part, l->nparts);
		fprintf(out, " [header 0x%" PRIx64 ", depth %u", l->header, l->depth);
		if (l->irreducible) {
			fputs(", irreducible: entries", out);
			for (size_t i = 0; i < l->nentries; i++)
				fprintf(out, "%s 0x%" PRIx64, i ? "," : "", l->entries[i]);
		}
		if (ls_loop_made_name(l->made))
			fprintf(out, ", compiler-made: %s", ls_loop_made_name(l->made));
		if (ls_loop_guess_name(l->guess))
			fprintf(out, ", line guessed: %s", ls_loop_guess_name(l->guess));
		fputc(']', out);
		break;
	}
	case LS_SCOPE_STMT:
		fputs("stmt ", out);
		put_location(out, base_name(s->file), s->line);
		put_ranges(out, s);
		if (s->cut)
			fprintf(out, " [%u deeper inlined call%s cut]", s->cut, s->cut == 1 ? "" : "s");
		break;
	default:
		fprintf(out, "? kind %d", (int)s->kind);
		break;
	}
	fputc('\n', out);
}

int ls_write_text(const ls_module *m, FILE *out, ls_error *err)
{
	const struct ls_scope *root = m->root;
	if (!root) {
		put_named(out, "module ", m->path);
		fputc('\n', out);
	} else {
		/* Iterative pre-order walk; DEPTH is the scope's depth below ROOT. */
		const struct ls_scope *s = root;
		unsigned depth = 0;
		for (;;) {
			put_scope(out, m, s, depth ? depth - 1 : 0);
			if (s->first_child) {
				s = s->first_child;
				depth++;
				continue;
			}
			while (s != root && !s->next_sibling) {
				s = s->parent;
				depth--;
			}
			if (s == root)
				break;
			s = s->next_sibling;
		}
	}
	if (ferror(out)) {
		ls_set_error(err, LS_ERR_IO, "%s: cannot write the text output", m->path);
		return -1;
	}
	return 0;
}
