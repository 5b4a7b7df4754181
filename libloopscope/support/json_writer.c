/* json_writer.c - the one JSON writer (see json_writer.h for what it owns). */
#include "support/json_writer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void ls_jw_init(ls_jw *w, FILE *out, enum ls_jw_layout layout)
{
	w->out = out;
	w->layout = layout;
	w->depth = 0;
	w->first = true;
	w->after_key = false;
	w->len = 0;
}

static void flush(ls_jw *w)
{
	if (w->len)
		fwrite(w->buf, 1, w->len, w->out);
	w->len = 0;
}

int ls_jw_finish(ls_jw *w)
{
	flush(w);
	return ferror(w->out) ? -1 : 0;
}

/* N bytes at S, through the buffer (a run longer than it goes in pieces). */
static void put(ls_jw *w, const char *s, size_t n)
{
	while (n > sizeof w->buf - w->len) {
		size_t room = sizeof w->buf - w->len;
		memcpy(w->buf + w->len, s, room);
		w->len += room;
		s += room;
		n -= room;
		flush(w);
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

#define PUT_LIT(w, lit) put((w), (lit), sizeof(lit) - 1)

static void putc_(ls_jw *w, char c)
{
	if (w->len == sizeof w->buf)
		flush(w);
	w->buf[w->len++] = c;
}

static void newline_indent(ls_jw *w)
{
	putc_(w, '\n');
	for (unsigned i = 0; i < w->depth; i++)
		PUT_LIT(w, "  ");
}

/* What comes before any value or key: the comma that separates it from the
 * one before, or nothing after a key or first in a container. */
static void before_item(ls_jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth == 0)
		return;
	if (!w->first)
		putc_(w, ',');
	w->first = false;
	if (w->layout == LS_JW_PRETTY)
		newline_indent(w);
}

static void open_(ls_jw *w, char c)
{
	before_item(w);
	putc_(w, c);
	w->depth++;
	w->first = true;
}

/* After a container closes, its parent holds at least that one member. */
static void close_(ls_jw *w, char c)
{
	w->depth--;
	if (w->layout == LS_JW_PRETTY && !w->first)
		newline_indent(w);
	putc_(w, c);
	w->first = false;
}

void ls_jw_object(ls_jw *w) { open_(w, '{'); }
void ls_jw_object_end(ls_jw *w) { close_(w, '}'); }
void ls_jw_array(ls_jw *w) { open_(w, '['); }
void ls_jw_array_end(ls_jw *w) { close_(w, ']'); }

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

/* STR with its quotes, escaped. */
static void quoted(ls_jw *w, const char *str)
{
	static const char hexd[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	putc_(w, '"');
	for (;;) {
		/* Copy the longest run that needs no escaping at once. */
		const unsigned char *run = s;
		while (plain_byte[*s])
			s++;
		if (s > run)
			put(w, (const char *)run, (size_t)(s - run));
		unsigned c = *s;
		if (c == 0)
			break;
		if (c >= 0x80) {
			size_t n = utf8_valid_len(s);
			if (n) {
				put(w, (const char *)s, n);
				s += n;
			} else {
				PUT_LIT(w, "\\ufffd");
				s++;
			}
			continue;
		}
		s++;
		switch (c) {
		case '"': PUT_LIT(w, "\\\""); break;
		case '\\': PUT_LIT(w, "\\\\"); break;
		case '\n': PUT_LIT(w, "\\n"); break;
		case '\t': PUT_LIT(w, "\\t"); break;
		case '\r': PUT_LIT(w, "\\r"); break;
		case '\b': PUT_LIT(w, "\\b"); break;
		case '\f': PUT_LIT(w, "\\f"); break;
		default: {
			char esc[6] = { '\\', 'u', '0', '0', hexd[c >> 4], hexd[c & 15] };
			put(w, esc, 6);
		}
		}
	}
	putc_(w, '"');
}

void ls_jw_key(ls_jw *w, const char *key)
{
	before_item(w);
	quoted(w, key);
	if (w->layout == LS_JW_PRETTY)
		PUT_LIT(w, ": ");
	else
		putc_(w, ':');
	w->after_key = true;
}

void ls_jw_string(ls_jw *w, const char *s)
{
	if (!s) {
		ls_jw_null(w);
		return;
	}
	before_item(w);
	quoted(w, s);
}

void ls_jw_uint(ls_jw *w, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof tmp;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	before_item(w);
	put(w, tmp + i, sizeof tmp - i);
}

void ls_jw_int(ls_jw *w, int64_t v)
{
	char tmp[24];
	size_t i = sizeof tmp;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		tmp[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		tmp[--i] = '-';
	before_item(w);
	put(w, tmp + i, sizeof tmp - i);
}

void ls_jw_hex(ls_jw *w, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[20];
	size_t i = sizeof tmp;
	tmp[--i] = '"';
	do {
		tmp[--i] = digits[v & 15];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	tmp[--i] = '"';
	before_item(w);
	put(w, tmp + i, sizeof tmp - i);
}

void ls_jw_double(ls_jw *w, double v)
{
	if (!isfinite(v)) { /* JSON has no NaN nor infinity */
		ls_jw_null(w);
		return;
	}
	char tmp[40];
	int n = snprintf(tmp, sizeof tmp, "%.6g", v);
	for (int i = 0; i < n; i++)
		if (tmp[i] == ',') /* a locale's decimal comma */
			tmp[i] = '.';
	before_item(w);
	put(w, tmp, (size_t)n);
}

void ls_jw_bool(ls_jw *w, bool v)
{
	before_item(w);
	if (v)
		PUT_LIT(w, "true");
	else
		PUT_LIT(w, "false");
}

void ls_jw_null(ls_jw *w)
{
	before_item(w);
	PUT_LIT(w, "null");
}

void ls_jw_line(ls_jw *w, unsigned line)
{
	if (line)
		ls_jw_uint(w, line);
	else
		ls_jw_null(w);
}

void ls_jw_newline(ls_jw *w)
{
	putc_(w, '\n');
}
