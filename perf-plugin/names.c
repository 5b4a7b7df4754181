/* names.c - C++ names shortened for the report (--full-names keeps them):
 * template arguments become <...>, parameter lists (...), and the return
 * type the demangler puts before a template function's name is dropped.
 *   double ns::f<double, std::map<int, int> >(std::vector<double> const&, int)
 *   -> ns::f<...>(...)
 * A name without < or ( (C, or an already short name) is returned as is.
 * A clone's suffix (" [clone .part.0]", " (.part.0)") stays. */
#include "report.h"

#include <string.h>

/* Is the space at P (top level) inside "operator new", "operator delete",
 * a conversion "operator int", or "(anonymous namespace)"? */
static int space_is_part_of_name(const char *start, const char *p)
{
	static const char op[] = "operator";
	size_t l = sizeof op - 1;
	return p - start >= (ptrdiff_t)l && !strncmp(p - l, op, l);
}

const char *pl_short_name(const char *name, char *buf, size_t len)
{
	if (!name || !len || (!strchr(name, '<') && !strchr(name, '(')))
		return name;
	size_t o = 0;
	int depth = 0; /* inside <...> or (...) being elided */
	const char *start = name;
	for (const char *p = name; *p && o + 6 < len; p++) {
		char c = *p;
		/* "operator<", "operator()" and the like are names, not brackets */
		if (!depth && p - name >= 8 && !strncmp(p - 8, "operator", 8) && strchr("<>()", c)) {
			buf[o++] = c;
			continue;
		}
		if (c == '<' || c == '(') {
			/* (anonymous namespace) is a name */
			if (c == '(' && !strncmp(p, "(anonymous namespace)", 21) && !depth) {
				memcpy(buf + o, p, 21 < len - o - 6 ? 21 : len - o - 6);
				o += 21 < len - o - 6 ? 21 : len - o - 6;
				p += 20;
				continue;
			}
			if (!depth++) {
				buf[o++] = c;
				buf[o++] = '.';
				buf[o++] = '.';
				buf[o++] = '.';
			}
			continue;
		}
		if (c == '>' || c == ')') {
			if (depth && !--depth)
				buf[o++] = c;
			continue;
		}
		if (depth)
			continue;
		if (c == ' ' && ((p[1] == '(' && p[2] == '.') || !strncmp(p + 1, "[clone ", 7))) {
			/* a clone's suffix after the name, " (.part.0)" or " [clone
			 * .part.0]": kept whole (no parameter list, and its space is
			 * not the one after a return type) */
			size_t l = strlen(p);
			if (l > len - o - 1)
				l = len - o - 1;
			memcpy(buf + o, p, l);
			o += l;
			break;
		}
		if (c == ' ' && !space_is_part_of_name(start, p) && p[1] && p[1] != '[' &&
		    strncmp(p + 1, "const", 5) && strncmp(p + 1, "&", 1)) {
			/* a return type before the name: start over after it */
			o = 0;
			start = p + 1;
			continue;
		}
		buf[o++] = c;
	}
	buf[o] = 0;
	/* trailing qualifiers of a member function: " const", " &", ... */
	while (o && (buf[o - 1] == ' ' || buf[o - 1] == '&'))
		buf[--o] = 0;
	if (o > 6 && !strcmp(buf + o - 6, " const"))
		buf[o - 6] = 0;
	return buf;
}
