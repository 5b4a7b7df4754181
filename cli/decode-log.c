/* decode-log.c - reading a kernel log for `loopscope decode`: which lines
 * name a frame and which frame, the kernel release and the KASLR offset a
 * report names, and where one report ends and the next begins.
 *
 * Frames are read as scripts/decode_stacktrace.sh reads them: the last word
 * of the line (or the one before a `[mod]` or `[mod buildid]` tag) is the
 * symbol, FUNC+0xOFF/0xSIZE, or a raw runtime address.  What the kernel
 * prints there is a return address for every frame of a stack trace (%pB,
 * one byte past the call) and the address itself only for the interrupted
 * instruction (a `RIP:` line) and a WARN's site (the `WARNING: CPU: ...
 * at` line): struct frame's `exact` tells which, so that a return address
 * is looked up at its call.
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

/* [<ffffffff8113ca57>] (old kernels print one before each symbol). */
static bool bracketed_address(const char *w, size_t wn, uint64_t *v)
{
	return wn > 4 && w[0] == '[' && w[1] == '<' && w[wn - 1] == ']' && w[wn - 2] == '>' &&
	       decode_parse_hex(w + 2, wn - 4, v) && *v >> 63;
}

/* The [mod] or [mod buildid] tag at the end of the words (LAST moves before it). */
static void module_tag(const char *line, const size_t *st, const size_t *len, size_t first, size_t *last,
                       struct frame *f)
{
	size_t l = *last;
	if (l > first && line[st[l] + len[l] - 1] == ']' && line[st[l - 1]] == '[' &&
	    line[st[l - 1] + len[l - 1] - 1] != ']') {
		snprintf(f->module, sizeof f->module, "%.*s", (int)len[l - 1] - 1, line + st[l - 1] + 1);
		snprintf(f->build_id, sizeof f->build_id, "%.*s", (int)len[l] - 1, line + st[l]);
		*last = l - 2;
	} else if (l > first && line[st[l]] == '[' && line[st[l] + len[l] - 1] == ']' && line[st[l] + 1] != '<') {
		snprintf(f->module, sizeof f->module, "%.*s", (int)len[l] - 2, line + st[l] + 1);
		*last = l - 1;
	}
}

/* Whether the line shows where the CPU was rather than a return address:
 * "RIP: 0010:F+O/S", old kernels' "IP: [<...>] F", a WARN's "WARNING: CPU:
 * 2 PID: 9 at FILE:LINE F+O/S". */
static bool exact_address_line(const char *line, const size_t *st, const size_t *len, size_t first, size_t last)
{
	for (size_t i = first; i <= last; i++) {
		const char *w = line + st[i];
		if ((len[i] >= 4 && !strncmp(w, "RIP:", 4)) || (len[i] == 3 && !strncmp(w, "IP:", 3)))
			return true;
	}
	return last > first + 1 && len[first] == 8 && !strncmp(line + st[first], "WARNING:", 8) &&
	       !strncmp(line + st[first + 1], "CPU:", 4);
}

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
	module_tag(line, st, len, first, &last, f);
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
	f->exact = exact_address_line(line, st, len, first, last);
	if (parse_symbolic(w, wn, f)) {
		/* "[<ffffffffad480f88>] generic_perform_write+0xd8/0x240": the
		 * runtime address of the same frame */
		for (size_t i = first; i < last && !f->has_raw; i++)
			f->has_raw = bracketed_address(line + st[i], len[i], &f->raw);
		return true;
	}
	/* [<ffffffff8113ca57>] or a bare 0xffffffff... (raw runtime addresses) */
	if (bracketed_address(w, wn, &f->raw) ||
	    (wn > 2 && w[0] == '0' && w[1] == 'x' && decode_parse_hex(w, wn, &f->raw) && f->raw >> 63))
		return f->has_raw = true;
	return false;
}

/* A release as uname -r prints it: a digit first, then [0-9A-Za-z._+~-]. */
static bool release_word(const char *b, size_t n)
{
	if (n == 0 || n >= 128 || !isdigit((unsigned char)b[0]) || !memchr(b, '.', n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)b[i]) && !strchr("._+~-", b[i]))
			return false;
	return true;
}

bool decode_release_in(const char *line, char *buf, size_t size)
{
	const char *v = strstr(line, "Linux version ");
	if (v) {
		v += 14;
		size_t n = strcspn(v, " \t\r\n");
		if (release_word(v, n) && n < size) {
			snprintf(buf, size, "%.*s", (int)n, v);
			return true;
		}
	}
	/* "... Not tainted R #1 ...", "... Tainted: G W R #1", lockdep's
	 * "R #1 Not tainted": the word before " #N" on a line that says
	 * whether the kernel is tainted */
	if (!strstr(line, "ainted"))
		return false;
	for (const char *h = strstr(line, " #"); h; h = strstr(h + 1, " #")) {
		if (!isdigit((unsigned char)h[2]))
			continue;
		const char *b = h;
		while (b > line && b[-1] != ' ' && b[-1] != '\t')
			b--;
		size_t n = (size_t)(h - b);
		if (release_word(b, n) && n < size) {
			snprintf(buf, size, "%.*s", (int)n, b);
			return true;
		}
	}
	return false;
}

bool decode_kernel_offset_in(const char *line, int64_t *off)
{
	const char *k = strstr(line, "Kernel Offset: ");
	if (!k)
		return false;
	k += 15;
	if (!strncmp(k, "disabled", 8)) {
		*off = 0;
		return true;
	}
	size_t n = strspn(k, "0123456789abcdefxABCDEFX");
	uint64_t v;
	if (!decode_parse_hex(k, n, &v))
		return false;
	*off = (int64_t)v;
	return true;
}

int decode_boundary(const char *line)
{
	static const char *const opens[] = {
		"------------[ cut here ]", "WARNING:", "BUG:", "INFO:", "Oops:", "Kernel panic - not syncing",
		"kernel BUG at", "general protection fault", "watchdog: BUG:", "rcu: INFO:", "NMI backtrace for cpu",
		"UBSAN:", "unreferenced object", "Unable to handle kernel", "==================================",
	};
	const char *p = line + decode_stamp_len(line);
	/* a syslog line: "Nov 25 17:01:02 host kernel: TEXT" */
	const char *k = strstr(p, "kernel: ");
	if (k && k - p < 64)
		p = k + 8 + decode_stamp_len(k + 8);
	p += strspn(p, " \t");
	if (strstr(p, "---[ end "))
		return LINE_CLOSES;
	for (size_t i = 0; i < sizeof opens / sizeof *opens; i++)
		if (!strncmp(p, opens[i], strlen(opens[i])))
			return LINE_OPENS;
	return LINE_INSIDE;
}
