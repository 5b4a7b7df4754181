/* output_xml.c - the scope tree as an HPCToolkit structure file (DTD 4.9).
 *
 * Owns `loopscope struct --format=xml`: the format hpcstruct writes and
 * hpcprof/hpcviewer read, so a loopscope structure file can replace
 * hpcstruct's.  The shape follows what hpcstruct itself emits:
 *
 *   LM  load module: i, n (path), has-calls="0", v="{}"
 *   F   one per source file; procedures are grouped under their file
 *   P   procedure: i, n (pretty name), ln (linkage name), l (line),
 *       v (its entry as a one-byte range "{[0xentry-0xentry+1)}")
 *   A   alien.  An inlined call is written as two nested aliens: the outer
 *       one at the call site (f = call file, l = call line, n=""), the inner
 *       one the callee (f = its file, l = its line, n = its name).  Code from
 *       another file without an inline record is a "guard" alien,
 *       n="<inline>".
 *   L   loop: i, l, f, v (its header as a one-byte range)
 *   S   statement: i, l, v (all its address ranges); statements of one line
 *       in one scope are merged into one S, as hpcstruct does.
 *
 * S carries no file, so statements whose file differs from their scope's are
 * wrapped in a guard alien of their file (hpcprof would otherwise put them
 * in the enclosing scope's file); likewise loops.  Ids (i) are unique and
 * assigned in document order.
 */
#include "elf/module.h"
#include "output/output.h"
#include "structure/scope.h"
#include "support/base.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define GUARD_NAME "<inline>"

static const char structure_dtd[] =
	"<!-- ******************************************************************** -->\n"
	"<!-- HPCToolkit Structure DTD                                             -->\n"
	"<!-- Version 4.9                                                          -->\n"
	"<!-- ******************************************************************** -->\n"
	"<!ELEMENT HPCToolkitStructure (LM)*>\n"
	"<!ATTLIST HPCToolkitStructure\n"
	"\tversion CDATA #REQUIRED\n"
	"\ti       CDATA #REQUIRED\n"
	"\tn       CDATA #IMPLIED>\n"
	"  <!-- Load module: (i)d, (n)ame, (v)ma-range-set \"{[beg-end), ...}\" -->\n"
	"  <!ELEMENT LM (F|P)*>\n"
	"  <!ATTLIST LM\n"
	"\ti CDATA #REQUIRED\n"
	"\tn CDATA #REQUIRED\n"
	"\thas-calls CDATA #IMPLIED\n"
	"\tv CDATA #IMPLIED>\n"
	"  <!-- File: -->\n"
	"  <!ELEMENT F (P|L|S)*>\n"
	"  <!ATTLIST F\n"
	"\ti CDATA #REQUIRED\n"
	"\tn CDATA #REQUIRED>\n"
	"  <!-- Procedure: ln=link name (if different than name) -->\n"
	"  <!ELEMENT P (P|A|L|S|C)*>\n"
	"  <!ATTLIST P\n"
	"\ti  CDATA #REQUIRED\n"
	"\tn  CDATA #REQUIRED\n"
	"\tln CDATA #IMPLIED\n"
	"\tl  CDATA #IMPLIED\n"
	"\ts  CDATA #IMPLIED\n"
	"\tv  CDATA #IMPLIED>\n"
	"  <!-- Alien: (f)ilename -->\n"
	"  <!ELEMENT A (A|L|S|C)*>\n"
	"  <!ATTLIST A\n"
	"\ti CDATA #REQUIRED\n"
	"\tf CDATA #IMPLIED\n"
	"\tn CDATA #IMPLIED\n"
	"\tln CDATA #IMPLIED\n"
	"\tl CDATA #IMPLIED\n"
	"\tv CDATA #IMPLIED>\n"
	"  <!-- Loop -->\n"
	"  <!ELEMENT L (A|L|S|C)*>\n"
	"  <!ATTLIST L\n"
	"\ti CDATA #REQUIRED\n"
	"\tl CDATA #REQUIRED\n"
	"\tf CDATA #IMPLIED\n"
	"\tv CDATA #IMPLIED>\n"
	"  <!-- Statement -->\n"
	"  <!ELEMENT S EMPTY>\n"
	"  <!ATTLIST S\n"
	"\ti CDATA #REQUIRED\n"
	"\tl CDATA #REQUIRED\n"
	"\tv CDATA #IMPLIED>\n"
	"  <!-- Callsite (a special Statement) -->\n"
	"  <!ELEMENT C (C)*>\n"
	"  <!ATTLIST C\n"
	"\ti CDATA #REQUIRED\n"
	"\tl CDATA #REQUIRED\n"
	"\tv CDATA #IMPLIED\n"
	"\tt CDATA #IMPLIED\n"
	"\td CDATA #IMPLIED>\n";

struct xml_writer {
	FILE *out;
	unsigned long next_id;
};

/* An attribute value: XML-escaped; characters XML 1.0 cannot hold (control
 * characters, bytes that are not UTF-8) become '?'. */
static void put_escaped(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	while (*s) {
		unsigned c = *s;
		switch (c) {
		case '&': fputs("&amp;", out); s++; continue;
		case '<': fputs("&lt;", out); s++; continue;
		case '>': fputs("&gt;", out); s++; continue;
		case '"': fputs("&quot;", out); s++; continue;
		case '\'': fputs("&apos;", out); s++; continue;
		case '\t': fputs("&#9;", out); s++; continue;
		case '\n': fputs("&#10;", out); s++; continue;
		case '\r': fputs("&#13;", out); s++; continue;
		}
		if (c < 0x20 || c == 0x7f) {
			fputc('?', out);
			s++;
			continue;
		}
		if (c < 0x80) {
			fputc(c, out);
			s++;
			continue;
		}
		/* Copy a well-formed UTF-8 sequence, else one '?' per bad byte. */
		size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
			 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		size_t k = 1;
		while (n && k < n && (s[k] & 0xc0) == 0x80)
			k++;
		bool ok = n && k == n;
		if (ok && n == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0)))
			ok = false;
		if (ok && n == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90)))
			ok = false;
		if (ok) {
			fwrite(s, 1, n, out);
			s += n;
		} else {
			fputc('?', out);
			s++;
		}
	}
}

static void indent(FILE *out, unsigned depth)
{
	for (unsigned i = 0; i < depth; i++)
		fputs("  ", out);
}

static void put_id(struct xml_writer *w)
{
	fprintf(w->out, " i=\"%lu\"", w->next_id++);
}

static void put_attr(FILE *out, const char *name, const char *value)
{
	fprintf(out, " %s=\"", name);
	put_escaped(out, value);
	fputc('"', out);
}

static void put_entry_vma(FILE *out, uint64_t addr)
{
	fprintf(out, " v=\"{[0x%" PRIx64 "-0x%" PRIx64 ")}\"", addr, addr + 1);
}

static bool same_file(const char *a, const char *b)
{
	if (a == b)
		return true;
	if (!a || !b)
		return false;
	return strcmp(a, b) == 0;
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* The file a scope's statements are attributed to when no guard is
 * written, and the line below which hpcprof wants a guard (0: none). */
struct xml_ctx {
	const char *file;
	unsigned line;
};

/* Statement ordering for merging: guarded ones grouped by file, then line,
 * then address. */
struct stmt_ref {
	const struct ls_scope *s;
	bool guarded;
};

static int cmp_stmt_ref(const void *pa, const void *pb)
{
	const struct stmt_ref *a = pa, *b = pb;
	if (a->guarded != b->guarded)
		return a->guarded ? 1 : -1;
	if (a->guarded) {
		int c = cmp_str(a->s->file, b->s->file);
		if (c)
			return c;
	}
	if (a->s->line != b->s->line)
		return a->s->line < b->s->line ? -1 : 1;
	uint64_t la = a->s->nranges ? a->s->ranges[0].lo : 0;
	uint64_t lb = b->s->nranges ? b->s->ranges[0].lo : 0;
	return la < lb ? -1 : la > lb;
}

static int cmp_range(const void *pa, const void *pb)
{
	const ls_range *a = pa, *b = pb;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* One S for the statements REFS[0..n), which share a line: the union of
 * their ranges, sorted and merged. */
static void put_stmt_group(struct xml_writer *w, unsigned depth, const struct stmt_ref *refs, size_t n)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += refs[i].s->nranges;
	ls_range *r = ls_xmalloc((total ? total : 1) * sizeof *r);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < refs[i].s->nranges; j++)
			r[k++] = refs[i].s->ranges[j];
	qsort(r, k, sizeof *r, cmp_range);
	indent(w->out, depth);
	fputs("<S", w->out);
	put_id(w);
	fprintf(w->out, " l=\"%u\" v=\"{", refs[0].s->line);
	size_t out_n = 0;
	for (size_t i = 0; i < k;) {
		uint64_t lo = r[i].lo, hi = r[i].hi;
		for (i++; i < k && r[i].lo <= hi; i++)
			if (r[i].hi > hi)
				hi = r[i].hi;
		fprintf(w->out, "%s[0x%" PRIx64 "-0x%" PRIx64 ")", out_n++ ? " " : "", lo, hi);
	}
	fputs("}\"/>\n", w->out);
	free(r);
}

static void put_children(struct xml_writer *w, unsigned depth, const struct ls_scope *parent,
			 struct xml_ctx ctx);

static void put_guard_open(struct xml_writer *w, unsigned depth, const char *file, unsigned line)
{
	indent(w->out, depth);
	fputs("<A", w->out);
	put_id(w);
	fprintf(w->out, " l=\"%u\"", line);
	put_attr(w->out, "f", file);
	put_attr(w->out, "n", GUARD_NAME);
	fputs(" v=\"{}\">\n", w->out);
}

static void put_loop(struct xml_writer *w, unsigned depth, const struct ls_scope *s)
{
	indent(w->out, depth);
	fputs("<L", w->out);
	put_id(w);
	fprintf(w->out, " l=\"%u\"", s->line);
	put_attr(w->out, "f", s->file);
	uint64_t header = s->loop ? s->loop->header : (s->nranges ? s->ranges[0].lo : 0);
	put_entry_vma(w->out, header);
	fputs(">\n", w->out);
	put_children(w, depth + 1, s, (struct xml_ctx){ s->file, 0 });
	indent(w->out, depth);
	fputs("</L>\n", w->out);
}

static void put_scope(struct xml_writer *w, unsigned depth, const struct ls_scope *s, struct xml_ctx ctx)
{
	FILE *out = w->out;
	switch (s->kind) {
	case LS_SCOPE_LOOP:
		if (s->file && !same_file(s->file, ctx.file)) {
			put_guard_open(w, depth, s->file, s->line);
			put_loop(w, depth + 1, s);
			indent(out, depth);
			fputs("</A>\n", out);
		} else {
			put_loop(w, depth, s);
		}
		break;
	case LS_SCOPE_INLINE:
		/* The call site, in the caller... */
		indent(out, depth);
		fputs("<A", out);
		put_id(w);
		fprintf(out, " l=\"%u\"", s->call_line);
		put_attr(out, "f", s->call_file);
		fputs(" n=\"\" v=\"{}\">\n", out);
		/* ...and the callee's code. */
		indent(out, depth + 1);
		fputs("<A", out);
		put_id(w);
		fprintf(out, " l=\"%u\"", s->line);
		put_attr(out, "f", s->file);
		put_attr(out, "n", s->name);
		fputs(" v=\"{}\">\n", out);
		put_children(w, depth + 2, s, (struct xml_ctx){ s->file, s->line });
		indent(out, depth + 1);
		fputs("</A>\n", out);
		indent(out, depth);
		fputs("</A>\n", out);
		break;
	case LS_SCOPE_ALIEN:
		put_guard_open(w, depth, s->file, s->line);
		put_children(w, depth + 1, s, (struct xml_ctx){ s->file, 0 });
		indent(out, depth);
		fputs("</A>\n", out);
		break;
	case LS_SCOPE_PROC:
		/* A procedure nested in a scope (the DTD allows P in P): rare. */
	default:
		break;
	}
}

static void put_children(struct xml_writer *w, unsigned depth, const struct ls_scope *parent,
			 struct xml_ctx ctx)
{
	size_t nstmts = 0;
	for (const struct ls_scope *c = parent->first_child; c; c = c->next_sibling)
		nstmts += c->kind == LS_SCOPE_STMT;

	if (nstmts) {
		struct stmt_ref *refs = ls_xmalloc(nstmts * sizeof *refs);
		size_t n = 0;
		for (const struct ls_scope *c = parent->first_child; c; c = c->next_sibling) {
			if (c->kind != LS_SCOPE_STMT)
				continue;
			/* hpcstruct's rule: a known line from another file, or an
			 * earlier line than the scope's, needs a guard alien. */
			bool guarded = c->line > 0 && c->file &&
				(!same_file(c->file, ctx.file) || c->line < ctx.line);
			refs[n++] = (struct stmt_ref){ c, guarded };
		}
		qsort(refs, n, sizeof *refs, cmp_stmt_ref);
		size_t i = 0;
		/* Unguarded statements first, one S per line. */
		while (i < n && !refs[i].guarded) {
			size_t j = i + 1;
			while (j < n && !refs[j].guarded && refs[j].s->line == refs[i].s->line)
				j++;
			put_stmt_group(w, depth, refs + i, j - i);
			i = j;
		}
		/* Then one guard alien per other file. */
		while (i < n) {
			size_t end = i + 1;
			while (end < n && same_file(refs[end].s->file, refs[i].s->file))
				end++;
			put_guard_open(w, depth, refs[i].s->file, refs[i].s->line);
			while (i < end) {
				size_t j = i + 1;
				while (j < end && refs[j].s->line == refs[i].s->line)
					j++;
				put_stmt_group(w, depth + 1, refs + i, j - i);
				i = j;
			}
			indent(w->out, depth);
			fputs("</A>\n", w->out);
		}
		free(refs);
	}

	for (const struct ls_scope *c = parent->first_child; c; c = c->next_sibling)
		if (c->kind != LS_SCOPE_STMT)
			put_scope(w, depth, c, ctx);
}

static void put_proc(struct xml_writer *w, unsigned depth, const struct ls_scope *p)
{
	FILE *out = w->out;
	indent(out, depth);
	fputs("<P", out);
	put_id(w);
	put_attr(out, "n", p->name ? p->name : "");
	put_attr(out, "ln", p->linkage_name ? p->linkage_name : p->name ? p->name : "");
	fprintf(out, " l=\"%u\"", p->line);
	put_entry_vma(out, ls_scope_low(p));
	fputs(">\n", out);
	put_children(w, depth + 1, p, (struct xml_ctx){ p->file, p->line });
	indent(out, depth);
	fputs("</P>\n", out);
}

/* Procedures grouped by file: the F they go under. */
struct proc_ref {
	const struct ls_scope *p;
	const char *file;
	size_t order;
};

static int cmp_proc_ref(const void *pa, const void *pb)
{
	const struct proc_ref *a = pa, *b = pb;
	int c = cmp_str(a->file, b->file);
	if (c)
		return c;
	return a->order < b->order ? -1 : a->order > b->order;
}

int ls_write_xml(const ls_module *m, FILE *out, ls_error *err)
{
	struct xml_writer w = { out, 0 };
	fputs("<?xml version=\"1.0\"?>\n<!DOCTYPE HPCToolkitStructure [\n", out);
	fputs(structure_dtd, out);
	fputs("]>\n<HPCToolkitStructure i=\"0\" version=\"4.9\" n=\"\">\n", out);
	w.next_id = 2; /* as hpcstruct: the first LM is 2 */
	fputs("<LM", out);
	put_id(&w);
	put_attr(out, "n", m->path);
	fputs(" has-calls=\"0\" v=\"{}\">\n", out);

	/* Collect the procedures, below file scopes or directly below the
	 * module, and group them by file. */
	size_t nprocs = 0, cap = 0;
	struct proc_ref *procs = NULL;
	const struct ls_scope *root = m->root;
	for (const struct ls_scope *c = root ? root->first_child : NULL; c; c = c->next_sibling) {
		const struct ls_scope *first = c, *group = NULL;
		if (c->kind == LS_SCOPE_FILE) {
			group = c;
			first = c->first_child;
		}
		for (const struct ls_scope *p = first; p; p = group ? p->next_sibling : NULL) {
			if (p->kind != LS_SCOPE_PROC)
				continue;
			procs = ls_grow(procs, &cap, nprocs + 1, sizeof *procs);
			const char *file = group ? (group->file ? group->file : group->name) : p->file;
			procs[nprocs] = (struct proc_ref){ p, file, nprocs };
			nprocs++;
		}
	}
	/* No procedure at all (a file with no code): procs is NULL, and
	 * qsort(NULL, 0, ...) is undefined behaviour. */
	if (nprocs)
		qsort(procs, nprocs, sizeof *procs, cmp_proc_ref);
	for (size_t i = 0; i < nprocs;) {
		size_t end = i + 1;
		while (end < nprocs && cmp_str(procs[end].file, procs[i].file) == 0)
			end++;
		fputs("  <F", out);
		put_id(&w);
		put_attr(out, "n", procs[i].file ? procs[i].file : "");
		fputs(">\n", out);
		for (; i < end; i++)
			put_proc(&w, 2, procs[i].p);
		fputs("  </F>\n", out);
	}
	free(procs);

	fputs("</LM>\n</HPCToolkitStructure>\n", out);
	if (ferror(out)) {
		ls_set_error(err, LS_ERR_IO, "%s: cannot write the XML output", m->path);
		return -1;
	}
	return 0;
}
