/* decode-log.c - reading a kernel log for `loopscope decode`: which lines
 * name a frame and which frame.
 *
 * Frames are read as scripts/decode_stacktrace.sh reads them: the last word
 * of the line (or the one before a `[mod]` or `[mod buildid]` tag) is the
 * symbol, FUNC+0xOFF/0xSIZE, or a raw runtime address.
 */
#include "decode.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

size_t decode_stamp_len(const char *line)
{
	const char *p = line;
	if (p[0] == '<' && isdigit((unsigned char)p[1])) {
		const char *q = strchr(p, '>');
		if (q && q - p < 5)
			p = q + 1;
	}
	if (p[0] == '[') {
		const char *q = strchr(p, ']');
		if (q && q - p < 40)
			p = q + 1;
	}
	return (size_t)(p - line);
}

bool decode_parse_hex(const char *s, size_t n, uint64_t *v)
{
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2, n -= 2;
	if (n == 0 || n > 16)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		int c = tolower((unsigned char)s[i]), h = isdigit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (h < 0)
			return false;
		x = x << 4 | (uint64_t)h;
	}
	*v = x;
	return true;
}

/* NAME+0xOFF[/0xSIZE] in [S, S+N): a symbolic frame. */
static bool parse_symbolic(const char *s, size_t n, struct frame *f)
{
	const char *plus = memchr(s, '+', n);
	if (!plus || plus == s || (size_t)(plus - s) >= sizeof f->name)
		return false;
	for (const char *p = s; p < plus; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.' && *p != '$')
			return false;
	const char *slash = memchr(plus, '/', (size_t)(s + n - plus));
	const char *oend = slash ? slash : s + n;
	if (!decode_parse_hex(plus + 1, (size_t)(oend - plus - 1), &f->off))
		return false;
	f->has_size = slash != NULL;
	if (slash && !decode_parse_hex(slash + 1, (size_t)(s + n - slash - 1), &f->size))
		return false;
	memcpy(f->name, s, (size_t)(plus - s));
	f->name[plus - s] = 0;
	return true;
}

/* The words of LINE (start, length), at most CAP. */
static size_t split_words(const char *line, size_t *st, size_t *len, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; line[i] && n < cap;) {
		while (line[i] == ' ' || line[i] == '\t' || line[i] == '\n' || line[i] == '\r')
			i++;
		if (!line[i])
			break;
		st[n] = i;
		while (line[i] && line[i] != ' ' && line[i] != '\t' && line[i] != '\n' && line[i] != '\r')
			i++;
		len[n] = i - st[n];
		n++;
	}
	return n;
}

/* Whether LINE names a frame, as decode_stacktrace.sh reads one: the last
 * word (or the one before a [mod] / [mod buildid] tag) is the symbol. */
bool decode_parse_frame(const char *line, struct frame *f)
{
	memset(f, 0, sizeof *f);
	size_t st[64], len[64];
	size_t nw = split_words(line, st, len, 64);
	if (nw == 0 || strncmp(line + st[0], "Code:", 5) == 0)
		return false;
	/* skip the timestamp's words ("[", "12.345]") */
	size_t first = 0, sl = decode_stamp_len(line);
	while (first < nw && st[first] < sl)
		first++;
	if (first >= nw)
		return false;
	size_t last = nw - 1;
	/* [mod buildid]: two words; [mod]: one */
	if (last > first && line[st[last] + len[last] - 1] == ']' && line[st[last - 1]] == '[' &&
	    line[st[last - 1] + len[last - 1] - 1] != ']') {
		snprintf(f->module, sizeof f->module, "%.*s", (int)len[last - 1] - 1, line + st[last - 1] + 1);
		snprintf(f->build_id, sizeof f->build_id, "%.*s", (int)len[last] - 1, line + st[last]);
		last -= 2;
	} else if (last > first && line[st[last]] == '[' && line[st[last] + len[last] - 1] == ']' &&
	           line[st[last] + 1] != '<') {
		snprintf(f->module, sizeof f->module, "%.*s", (int)len[last] - 2, line + st[last] + 1);
		last -= 1;
	}
	if (last < first || last >= nw)
		return false;
	const char *w = line + st[last];
	size_t wn = len[last];
	/* (sym), SEG:sym as RIP lines print it */
	if (wn && w[0] == '(')
		w++, wn--;
	if (wn && w[wn - 1] == ')')
		wn--;
	const char *colon = memchr(w, ':', wn);
	if (colon) {
		wn -= (size_t)(colon + 1 - w);
		w = colon + 1;
	}
	f->col = (size_t)(w - line);
	for (size_t i = first; i <= last; i++)
		if (len[i] >= 4 && strncmp(line + st[i], "RIP:", 4) == 0)
			f->rip = true;
	if (parse_symbolic(w, wn, f))
		return true;
	/* [<ffffffff8113ca57>] or a bare 0xffffffff... (raw runtime addresses) */
	if (wn > 4 && w[0] == '[' && w[1] == '<' && w[wn - 1] == ']' && w[wn - 2] == '>')
		return decode_parse_hex(w + 2, wn - 4, &f->raw) && f->raw >> 63;
	if (wn > 2 && w[0] == '0' && w[1] == 'x')
		return decode_parse_hex(w, wn, &f->raw) && f->raw >> 63;
	return false;
}

