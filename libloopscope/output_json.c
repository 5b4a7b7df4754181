/* output_json.c - the scope tree and lookup chains as JSON.
 *
 * Owns the JSON shapes of design.md: `loopscope struct --format=json` (the
 * whole tree, every scope with "children" and "ranges") and the one-line
 * lookup object of `loopscope lookup --json` (ls_write_chain_json).
 *
 * The chain writer is the lookup hot path (hundreds of thousands of
 * addresses per run), so everything is formatted by hand into a buffer and
 * written with one fwrite per object: no printf, no per-character stdio.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* A growable output buffer.  Small objects live in the inline storage; the
 * tree writer flushes it to the stream whenever it gets large. */
struct jbuf {
	char *p;
	size_t len, cap;
	char inline_store[4096];
};

static void jb_init(struct jbuf *b)
{
	b->p = b->inline_store;
	b->len = 0;
	b->cap = sizeof b->inline_store;
}

static __attribute__((noinline)) void jb_grow(struct jbuf *b, size_t more)
{
	size_t cap = b->cap * 2;
	while (cap < b->len + more)
		cap *= 2;
	if (b->p == b->inline_store) {
		char *p = ls_xmalloc(cap);
		memcpy(p, b->p, b->len);
		b->p = p;
	} else {
		char *p = realloc(b->p, cap);
		if (!p) {
			fprintf(stderr, "loopscope: out of memory\n");
			abort();
		}
		b->p = p;
	}
	b->cap = cap;
}

static inline void jb_reserve(struct jbuf *b, size_t more)
{
	if (__builtin_expect(b->len + more > b->cap, 0))
		jb_grow(b, more);
}

static void jb_flush(struct jbuf *b, FILE *out)
{
	if (b->len)
		fwrite(b->p, 1, b->len, out);
	b->len = 0;
}

static void jb_done(struct jbuf *b, FILE *out)
{
	jb_flush(b, out);
	if (b->p != b->inline_store)
		free(b->p);
	b->p = b->inline_store;
	b->cap = sizeof b->inline_store;
}

static inline void jb_putc(struct jbuf *b, char c)
{
	jb_reserve(b, 1);
	b->p[b->len++] = c;
}

static inline void jb_mem(struct jbuf *b, const char *s, size_t n)
{
	jb_reserve(b, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

#define JB_LIT(b, lit) jb_mem((b), (lit), sizeof(lit) - 1)

static void jb_uint(struct jbuf *b, uint64_t v)
{
	char tmp[24];
	int i = sizeof tmp;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	jb_mem(b, tmp + i, sizeof tmp - i);
}

/* "0x..." with quotes, lower case, no leading zeros (as objdump prints). */
static void jb_hex(struct jbuf *b, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[20];
	int i = sizeof tmp;
	tmp[--i] = '"';
	do {
		tmp[--i] = digits[v & 15];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	tmp[--i] = '"';
	jb_mem(b, tmp + i, sizeof tmp - i);
}

/* Length of the valid UTF-8 sequence at S (1..4), or 0 if it is invalid
 * (overlong forms, surrogates and code points past U+10FFFF included). */
static size_t utf8_valid_len(const unsigned char *s)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && s[1] < 0xa0)
			return 0; /* overlong */
		if (c == 0xed && s[1] >= 0xa0)
			return 0; /* surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && s[1] < 0x90)
			return 0;
		if (c == 0xf4 && s[1] >= 0x90)
			return 0;
		return 4;
	}
	return 0;
}

/* Bytes copied as they are: printable ASCII but the quote and backslash.
 * (NUL, control characters and non-ASCII are 0: they end a run.) */
static const bool plain_byte[256] = {
	[0x20 ... 0x21] = true, [0x23 ... 0x5b] = true, [0x5d ... 0x7f] = true,
};

/* A JSON string with its quotes; NULL is written as null.  Control
 * characters are escaped and bytes that are not UTF-8 become U+FFFD, so the
 * output is valid JSON whatever the DWARF strings hold. */
static void jb_string(struct jbuf *b, const char *str)
{
	static const char hexd[] = "0123456789abcdef";
	if (!str) {
		JB_LIT(b, "null");
		return;
	}
	const unsigned char *s = (const unsigned char *)str;
	jb_putc(b, '"');
	for (;;) {
		/* Copy the longest run that needs no escaping at once. */
		const unsigned char *run = s;
		while (plain_byte[*s])
			s++;
		if (s > run)
			jb_mem(b, (const char *)run, s - run);
		unsigned c = *s;
		if (c == 0)
			break;
		if (c >= 0x80) {
			size_t n = utf8_valid_len(s);
			if (n) {
				jb_mem(b, (const char *)s, n);
				s += n;
			} else {
				JB_LIT(b, "\\ufffd");
				s++;
			}
			continue;
		}
		s++;
		switch (c) {
		case '"': JB_LIT(b, "\\\""); break;
		case '\\': JB_LIT(b, "\\\\"); break;
		case '\n': JB_LIT(b, "\\n"); break;
		case '\t': JB_LIT(b, "\\t"); break;
		case '\r': JB_LIT(b, "\\r"); break;
		case '\b': JB_LIT(b, "\\b"); break;
		case '\f': JB_LIT(b, "\\f"); break;
		default: {
			char esc[6] = { '\\', 'u', '0', '0', hexd[c >> 4], hexd[c & 15] };
			jb_mem(b, esc, 6);
		}
		}
	}
	jb_putc(b, '"');
}

void ls_json_string(FILE *out, const char *s)
{
	struct jbuf b;
	jb_init(&b);
	jb_string(&b, s);
	jb_done(&b, out);
}

/* A line number; null for line 0, the compiler's "no line", which is
 * never shown as a line. */
static void jb_line(struct jbuf *b, unsigned line)
{
	if (line)
		jb_uint(b, line);
	else
		JB_LIT(b, "null");
}

/* The fields one scope shares between the lookup chain and the tree, without
 * the braces.  FULL adds what only the tree output carries (loop entries and
 * edges, linkage names). */
static void jb_scope_fields(struct jbuf *b, const struct ls_scope *s, bool full)
{
	JB_LIT(b, "\"kind\":\"");
	const char *kind = ls_scope_kind_name(s->kind);
	jb_mem(b, kind, strlen(kind));
	jb_putc(b, '"');

	switch (s->kind) {
	case LS_SCOPE_MODULE:
	case LS_SCOPE_FILE:
		JB_LIT(b, ",\"name\":");
		jb_string(b, s->name ? s->name : s->file);
		break;
	case LS_SCOPE_PROC:
		JB_LIT(b, ",\"name\":");
		jb_string(b, s->name);
		if (full && s->linkage_name) {
			JB_LIT(b, ",\"linkage_name\":");
			jb_string(b, s->linkage_name);
		}
		if (s->unresolved_jumps) { /* its loops may be incomplete */
			JB_LIT(b, ",\"unresolved_jumps\":");
			jb_uint(b, s->unresolved_jumps);
		}
		break;
	case LS_SCOPE_INLINE:
		JB_LIT(b, ",\"name\":");
		jb_string(b, s->name);
		JB_LIT(b, ",\"call_file\":");
		jb_string(b, s->call_file);
		JB_LIT(b, ",\"call_line\":");
		jb_line(b, s->call_line);
		if (full && s->call_column) {
			/* Tells apart two calls on one line (f(g(x))). */
			JB_LIT(b, ",\"call_column\":");
			jb_uint(b, s->call_column);
		}
		break;
	default:
		break;
	}
	if (s->kind != LS_SCOPE_MODULE && s->kind != LS_SCOPE_FILE) {
		JB_LIT(b, ",\"file\":");
		jb_string(b, s->file);
		JB_LIT(b, ",\"line\":");
		jb_line(b, s->line);
	}

	if (s->kind == LS_SCOPE_LOOP) {
		const struct ls_loop_info *l = s->loop;
		JB_LIT(b, ",\"header\":");
		jb_hex(b, l ? l->header : 0);
		JB_LIT(b, ",\"depth\":");
		jb_uint(b, l ? l->depth : 0);
		if (l && l->irreducible)
			JB_LIT(b, ",\"irreducible\":true");
		else
			JB_LIT(b, ",\"irreducible\":false");
		if (full && l) {
			JB_LIT(b, ",\"entries\":[");
			for (size_t i = 0; i < l->nentries; i++) {
				if (i)
					jb_putc(b, ',');
				jb_hex(b, l->entries[i]);
			}
			JB_LIT(b, "],\"backedges\":[");
			for (size_t i = 0; i < l->nbackedges; i++) {
				jb_mem(b, ",[" + !i, 1 + !!i);
				jb_hex(b, l->backedges[i].from);
				jb_putc(b, ',');
				jb_hex(b, l->backedges[i].to);
				jb_putc(b, ']');
			}
			JB_LIT(b, "],\"exits\":[");
			for (size_t i = 0; i < l->nexits; i++) {
				jb_mem(b, ",[" + !i, 1 + !!i);
				jb_hex(b, l->exits[i].from);
				jb_putc(b, ',');
				jb_hex(b, l->exits[i].to);
				jb_putc(b, ']');
			}
			jb_putc(b, ']');
		}
	}
}

void ls_write_chain_json(const ls_module *m, uint64_t addr, FILE *out)
{
	const ls_scope *chain[LS_MAX_CHAIN];
	size_t n = ls_lookup_chain(m, addr, chain, LS_MAX_CHAIN);
	struct jbuf b;
	jb_init(&b);
	JB_LIT(&b, "{\"addr\":");
	jb_hex(&b, addr);
	JB_LIT(&b, ",\"module\":");
	jb_string(&b, m->path);
	JB_LIT(&b, ",\"chain\":[");
	for (size_t i = 0; i < n; i++) {
		jb_mem(&b, ",{" + !i, 1 + !!i);
		jb_scope_fields(&b, chain[i], false);
		jb_putc(&b, '}');
	}
	jb_putc(&b, ']');
	size_t depth = n == LS_MAX_CHAIN ? ls_lookup_depth(m, addr) : n;
	if (depth > n) {
		/* the scopes left out between the last two of the chain */
		char cut[48];
		int len = snprintf(cut, sizeof cut, ",\"cut\":%zu", depth - n);
		jb_mem(&b, cut, (size_t)len);
	}
	if (n == 0) {
		JB_LIT(&b, ",\"error\":\"no procedure contains 0x");
		/* jb_hex adds quotes; write the bare digits here. */
		char tmp[17];
		int i = sizeof tmp;
		uint64_t v = addr;
		do {
			tmp[--i] = "0123456789abcdef"[v & 15];
			v >>= 4;
		} while (v);
		jb_mem(&b, tmp + i, sizeof tmp - i);
		jb_putc(&b, '"');
	}
	jb_putc(&b, '}');
	jb_done(&b, out);
}

/* ---- the whole tree ------------------------------------------------------ */

static void jb_ranges(struct jbuf *b, const struct ls_scope *s)
{
	JB_LIT(b, ",\"ranges\":[");
	for (size_t i = 0; i < s->nranges; i++) {
		jb_mem(b, ",[" + !i, 1 + !!i);
		jb_hex(b, s->ranges[i].lo);
		jb_putc(b, ',');
		jb_hex(b, s->ranges[i].hi);
		jb_putc(b, ']');
	}
	jb_putc(b, ']');
}

/* Iterative pre-order walk: inline chains of real programs can be deep and
 * the writer must not depend on the stack size. */
int ls_write_json(const ls_module *m, FILE *out, ls_error *err)
{
	const struct ls_scope *root = m->root;
	struct jbuf b;
	jb_init(&b);
	if (!root) {
		JB_LIT(&b, "{\"kind\":\"module\",\"name\":");
		jb_string(&b, m->path);
		JB_LIT(&b, ",\"build_id\":");
		jb_string(&b, m->build_id);
		JB_LIT(&b, ",\"ranges\":[],\"children\":[]}\n");
		jb_done(&b, out);
		goto check;
	}

	const struct ls_scope *s = root;
	for (;;) {
		jb_putc(&b, '{');
		if (s->kind == LS_SCOPE_MODULE) {
			JB_LIT(&b, "\"kind\":\"module\",\"name\":");
			jb_string(&b, s->name ? s->name : m->path);
			JB_LIT(&b, ",\"build_id\":");
			jb_string(&b, m->build_id);
		} else {
			jb_scope_fields(&b, s, true);
		}
		jb_ranges(&b, s);
		JB_LIT(&b, ",\"children\":[");
		if (s->first_child) {
			s = s->first_child;
			continue;
		}
		/* Close this scope and every ancestor whose children are done. */
		for (;;) {
			JB_LIT(&b, "]}");
			if (s == root)
				goto done;
			if (s->next_sibling) {
				jb_putc(&b, ',');
				s = s->next_sibling;
				break;
			}
			s = s->parent;
		}
		if (b.len > (1 << 16))
			jb_flush(&b, out);
	}
done:
	jb_putc(&b, '\n');
	jb_done(&b, out);
check:
	if (ferror(out)) {
		ls_set_error(err, LS_ERR_IO, "%s: cannot write the JSON output", m->path);
		return -1;
	}
	return 0;
}
