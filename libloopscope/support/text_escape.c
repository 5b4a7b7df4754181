/* text_escape.c - names and paths made safe to print, measured in
 * terminal columns (see text_escape.h for why and who uses it). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* newlocale, uselocale */
#endif
#include "support/text_escape.h"

#include <locale.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

/* The length of the well-formed UTF-8 character at P (1-4; no overlong
 * forms, surrogates or code points past U+10FFFF), with its code point in
 * *CP; 0 if P does not start one. */
static size_t utf8_char(const unsigned char *p, uint32_t *cp)
{
	unsigned c = p[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
	if (!n || (n == 3 && c >= 0xF0))
		return 0;
	uint32_t v = c & (0x7F >> n);
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80) /* also stops at the NUL */
			return 0;
		v = v << 6 | (p[i] & 0x3F);
	}
	if ((n == 3 && (v < 0x800 || (v >= 0xD800 && v <= 0xDFFF))) || (n == 4 && (v < 0x10000 || v > 0x10FFFF)))
		return 0;
	*cp = v;
	return n;
}

/* The escape of the character (or byte) at P, LEN bytes of it, into ESC;
 * its length, 0 when it is printed as it is. */
static size_t escape_of(const unsigned char *p, size_t len, uint32_t cp, unsigned flags, char esc[16])
{
	if (len == 1 && cp >= 0x20 && cp != 0x7F && cp < 0x80 && !(cp == ';' && (flags & LS_ESC_SEMICOLON)))
		return 0;
	if (len == 1 && cp == '\t' && (flags & LS_ESC_KEEP_TAB))
		return 0;
	if (len == 1 && cp == '\n')
		return (size_t)snprintf(esc, 16, "\\n");
	if (len == 1 && cp == '\t')
		return (size_t)snprintf(esc, 16, "\\t");
	if (len > 1 && !(cp >= 0x80 && cp < 0xA0)) /* printable UTF-8; C1 controls are escaped */
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < len; i++) /* a control character, or a byte that is not UTF-8 */
		n += (size_t)snprintf(esc + n, 16 - n, "\\%03o", p[i]);
	return n;
}

/* The next piece of the text at *P (one character, or its escape) in
 * *PIECE and *LEN; *P moves past it. */
static void next_piece(const unsigned char **p, unsigned flags, char esc[16], const char **piece, size_t *len)
{
	uint32_t cp = 0;
	size_t n = utf8_char(*p, &cp);
	if (!n)
		n = 1, cp = **p; /* not UTF-8: that byte alone */
	size_t e = escape_of(*p, n, cp, flags, esc);
	*piece = e ? esc : (const char *)*p;
	*len = e ? e : n;
	*p += n;
}

size_t ls_text_escape(const char *s, char *out, size_t size, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t total = 0, kept = 0;
	bool full = false;
	while (*p) {
		char esc[16];
		const char *piece;
		size_t len;
		next_piece(&p, flags, esc, &piece, &len);
		if (!full && total + len < size) {
			memcpy(out + total, piece, len);
			kept = total + len;
		} else {
			full = true; /* cut between whole pieces */
		}
		total += len;
	}
	if (size)
		out[kept] = 0;
	return total;
}

bool ls_text_is_clean(const char *s, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p) {
		if (*p >= 0x20 && *p < 0x7F && !(*p == ';' && (flags & LS_ESC_SEMICOLON))) {
			p++;
			continue;
		}
		uint32_t cp = 0;
		size_t len = utf8_char(p, &cp);
		char esc[16];
		if (!len || escape_of(p, len, cp, flags, esc))
			return false;
		p += len;
	}
	return true;
}

void ls_text_fputs(const char *s, FILE *out)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	if (ls_text_is_clean(s, 0)) {
		fputs((const char *)p, out);
		return;
	}
	while (*p) {
		char esc[16];
		const char *piece;
		size_t len;
		next_piece(&p, 0, esc, &piece, &len);
		fwrite(piece, 1, len, out);
	}
}

bool ls_text_escape_in_place(char *buf, size_t len, unsigned flags)
{
	if (!len || ls_text_is_clean(buf, flags))
		return true;
	char tmp[4096];
	char *copy = len <= sizeof tmp ? tmp : NULL;
	if (!copy)
		return false; /* the callers' labels are shorter */
	memcpy(copy, buf, strnlen(buf, len - 1) + 1);
	copy[len - 1] = 0;
	return ls_text_escape(copy, buf, len, flags) < len;
}

/* ---- columns ------------------------------------------------------------- */

static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void make_utf8_locale(void)
{
	utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/* wcwidth in a UTF-8 locale, whatever the program's own (perf-loops runs
 * in "C"); 1 where there is none. */
static int char_width(uint32_t cp)
{
	if (cp < 0x80)
		return 1;
	pthread_once(&utf8_once, make_utf8_locale);
	if (!utf8_locale)
		return 1;
	locale_t old = uselocale(utf8_locale);
	int w = wcwidth((wchar_t)cp);
	uselocale(old);
	return w < 0 ? 1 : w;
}

size_t ls_text_width(const char *s)
{
	size_t cols = 0;
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		uint32_t cp = *p;
		size_t len = utf8_char(p, &cp);
		cols += len ? (size_t)char_width(cp) : 1;
		p += len ? len : 1;
	}
	return cols;
}

size_t ls_text_prefix(const char *s, size_t cols)
{
	const unsigned char *p = (const unsigned char *)(s ? s : ""), *start = p;
	size_t used = 0;
	while (*p) {
		uint32_t cp = *p;
		size_t len = utf8_char(p, &cp);
		size_t w = len ? (size_t)char_width(cp) : 1;
		if (used + w > cols)
			break;
		used += w;
		p += len ? len : 1;
	}
	return (size_t)(p - start);
}
