/* demangle.c - C++ (Itanium), Rust and D linkage names made readable.
 *
 * libiberty's demangler does the work.  Its output is then rewritten in the
 * few places where it differs from LLVM's demangler, because the oracle the
 * tests compare against (llvm-symbolizer) and what perf users see elsewhere
 * use LLVM's spelling:
 *
 *   foo(int) [clone .constprop.0] [clone .isra.0]  ->  foo(int) (.constprop.0.isra.0)
 *   main::{lambda(int)#1}::operator()              ->  main::'lambda'(int)::operator()
 *   {lambda()#2}                                   ->  'lambda0'()
 *   {unnamed type#1}                               ->  'unnamed'
 *   operator<< <char>                              ->  operator<<<char>
 *   decltype(nullptr)                              ->  std::nullptr_t
 */
#include "support/base.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

/* A growing output string. */
struct buf {
	char *s;
	size_t len, cap;
};

static void put(struct buf *b, const char *s, size_t n)
{
	b->s = ls_grow(b->s, &b->cap, b->len + n + 1, 1);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

/* Parses "#N}" at P (N a decimal >= 1); returns N and sets *end past '}'. */
static long parse_ordinal(const char *p, const char **end)
{
	if (*p != '#')
		return -1;
	char *e;
	long n = strtol(p + 1, &e, 10);
	if (e == p + 1 || *e != '}' || n < 1)
		return -1;
	*end = e + 1;
	return n;
}

/* LLVM names the Nth lambda 'lambda' (N = 1) or 'lambdaK' (K = N - 2). */
static void put_ordinal_name(struct buf *b, const char *what, long n)
{
	char tmp[48];
	if (n == 1)
		snprintf(tmp, sizeof tmp, "'%s'", what);
	else
		snprintf(tmp, sizeof tmp, "'%s%ld'", what, n - 2);
	put(b, tmp, strlen(tmp));
}

/* Rewrites libiberty's spelling into LLVM's (see the header comment). */
static char *llvm_spelling(const char *in)
{
	struct buf b = {0};
	const char *p = in;
	/* Clone suffixes are only ever trailing: find where they start. */
	const char *clones = NULL;
	for (const char *q = in; (q = strstr(q, " [clone ")); q++) {
		const char *r = q;
		while (strncmp(r, " [clone ", 8) == 0) {
			const char *close = strchr(r + 8, ']');
			if (!close)
				break;
			r = close + 1;
		}
		if (*r == 0) {
			clones = q;
			break;
		}
	}
	const char *stop = clones ? clones : in + strlen(in);
	while (p < stop) {
		if (*p == 'd' && strncmp(p, "decltype(nullptr)", 17) == 0) {
			put(&b, "std::nullptr_t", 14);
			p += 17;
			continue;
		}
		/* "operator<< <T>": LLVM writes no space before the template. */
		if (*p == 'o' && strncmp(p, "operator<", 9) == 0) {
			size_t n = strncmp(p, "operator<< <", 12) == 0 ? 10 :
				   strncmp(p, "operator< <", 11) == 0 ? 9 : 0;
			if (n) {
				put(&b, p, n);
				p += n + 1;
				continue;
			}
		}
		if (*p == '{') {
			const char *end;
			if (strncmp(p, "{lambda(", 8) == 0) {
				/* {lambda(ARGS)#N}: ARGS may nest parentheses. */
				int depth = 0;
				const char *q = p + 7;
				for (; q < stop; q++) {
					if (*q == '(')
						depth++;
					else if (*q == ')' && --depth == 0)
						break;
				}
				long n = q < stop ? parse_ordinal(q + 1, &end) : -1;
				if (n > 0 && end <= stop) {
					put_ordinal_name(&b, "lambda", n);
					put(&b, p + 7, (size_t)(q + 1 - (p + 7)));
					p = end;
					continue;
				}
			} else if (strncmp(p, "{unnamed type", 13) == 0) {
				long n = parse_ordinal(p + 13, &end);
				if (n > 0 && end <= stop) {
					put_ordinal_name(&b, "unnamed", n);
					p = end;
					continue;
				}
			}
		}
		put(&b, p, 1);
		p++;
	}
	if (clones) {
		put(&b, " (", 2);
		for (const char *r = clones; strncmp(r, " [clone ", 8) == 0;) {
			const char *close = strchr(r + 8, ']');
			put(&b, r + 8, (size_t)(close - (r + 8)));
			r = close + 1;
		}
		put(&b, ")", 1);
	}
	if (!b.s)
		return ls_xstrdup("");
	return b.s;
}

char *ls_demangle(const char *name)
{
	/* Only Itanium (_Z, and __Z on some platforms), Rust v0 (_R) and D (_D)
	 * names are mangled; skipping the rest cheaply matters for libraries
	 * with tens of thousands of C symbols. */
	if (!name || name[0] != '_')
		return NULL;
	const char *p = name + 1;
	if (*p == '_' && p[1] == 'Z')
		p++;
	if (*p != 'Z' && *p != 'R' && *p != 'D')
		return NULL;
	/* DMGL_AUTO tries Rust first, and the Rust demangler reads the whole
	 * name before it gives up on a C++ one (2% of a binary's procedures
	 * stage): an Itanium name goes straight to the C++ demangler unless
	 * it may be a legacy Rust name (_ZN..., with its 17h<hash> segment),
	 * so the answer is DMGL_AUTO's. */
	int style = *p == 'Z' && !(name[1] == 'Z' && name[2] == 'N' && strstr(name, "17h")) ? DMGL_GNU_V3 : DMGL_AUTO;
	char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | style);
	if (!d)
		return NULL;
	if (!strchr(d, '{') && !strstr(d, " [clone ") && !strstr(d, "decltype(nullptr)") && !strstr(d, "operator<"))
		return d;
	char *r = llvm_spelling(d);
	free(d);
	return r;
}
