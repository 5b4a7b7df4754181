/* names.c - C++ names shortened for the report (--full-names keeps them):
 * template arguments become <...>, parameter lists (...), and the return
 * type the demangler puts before a template function's name is dropped.
 *   double ns::f<double, std::map<int, int> >(std::vector<double> const&, int)
 *   -> ns::f<...>(...)
 * A name without < or ( (C, or an already short name) is returned as is.
 * A clone's suffix (" [clone .part.0]", " (.part.0)") stays.
 *
 * Operator names are names, not brackets: operator(), operator[],
 * operator<, operator>>=, operator<=>, operator->*, operator new[] and the
 * rest are copied whole (a table of every C++ operator), and a conversion
 * operator's type is part of its name, spaces and all (operator unsigned
 * long, operator std::vector<...>); a template operator keeps its own
 * template arguments apart: operator<< <...>(...). */
#include "report.h"

#include <ctype.h>
#include <string.h>

/* C++'s operator tokens after the keyword, longest first where one is a
 * prefix of another (so that operator<<= is not read as operator<<). */
static const char *const operator_tokens[] = {
	"new[]", "delete[]", "new", "delete", "co_await", "\"\"",
	"()", "[]", "->*", "->", "<=>", "<<=", ">>=", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
	"+", "-", "*", "/", "%", "^", "&", "|", "~", "!", "=", "<", ">", ",",
	NULL,
};

static int ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/* Is P (in NAME) the keyword "operator", not part of a longer identifier? */
static int at_operator(const char *name, const char *p)
{
	return !strncmp(p, "operator", 8) && (p == name || !ident_char(p[-1])) && !ident_char(p[8]);
}

/* Does a template argument list close in S before it opens (GCC's DWARF
 * writes operator< <int> as "operator<<int>": the second '<' opens the
 * arguments)?  Up to the parameter list. */
static int unbalanced_close(const char *s)
{
	int depth = 0;
	for (; *s && *s != '('; s++) {
		if (*s == '<')
			depth++;
		else if (*s == '>' && --depth < 0)
			return 1;
	}
	return 0;
}

/* The length of the operator token at P (after "operator" and any space),
 * 0 for a conversion operator (a type follows). */
static size_t operator_token(const char *p)
{
	for (size_t i = 0; operator_tokens[i]; i++) {
		size_t l = strlen(operator_tokens[i]);
		if (strncmp(p, operator_tokens[i], l))
			continue;
		if (p[0] == '<' && l > 1 && p[l - 1] == '<' && unbalanced_close(p + l))
			continue; /* "<<int>": operator< and its arguments */
		/* "new"/"delete" are words: not the start of "newline_t" */
		if (ident_char(p[0]) && ident_char(p[l]))
			continue;
		if (!strcmp(operator_tokens[i], "\"\"")) /* a literal operator: operator"" _suffix */
			while (p[l] == ' ' || ident_char(p[l]))
				l++;
		return l;
	}
	return 0;
}

struct shortener {
	char *buf;
	size_t len, o;
	int conversion; /* inside a conversion operator's type: spaces are its own */
};

static void put(struct shortener *s, const char *p, size_t n)
{
	if (n > s->len - 1 - s->o)
		n = s->len - 1 - s->o;
	memcpy(s->buf + s->o, p, n);
	s->o += n;
}

/* At P, the keyword "operator": copy it and its token; returns how much
 * of NAME it took. */
static size_t copy_operator(struct shortener *s, const char *p)
{
	size_t n = 8;
	while (p[n] == ' ')
		n++;
	size_t tok = operator_token(p + n);
	if (!tok) { /* conversion: "operator " and the type, shortened on */
		s->conversion = 1;
		put(s, p, 9 < n ? 9 : n);
		return n;
	}
	put(s, "operator", 8);
	if (ident_char(p[n])) /* operator new, operator delete[], operator"" _x */
		put(s, " ", 1);
	put(s, p + n, tok);
	if (p[n + tok] == '<' && strchr("<>", p[n + tok - 1]))
		put(s, " ", 1); /* operator< <int>, as the demangler spaces it */
	return n + tok;
}

/* Is the top-level space at P the end of a return type (the name starts
 * after it)?  Not before a parameter list, template arguments, a
 * qualifier or a clone's suffix, nor inside a conversion operator. */
static int ends_return_type(const struct shortener *s, const char *p)
{
	char n = p[1];
	if (s->conversion || !n || n == '(' || n == '<' || n == '[' || n == '&' || n == '*')
		return 0;
	return strncmp(p + 1, "const", 5) && strncmp(p + 1, "volatile", 8);
}

/* A member function's trailing qualifiers after its parameters, " const",
 * " volatile", " &", " &&": not part of the short name. */
static void strip_qualifiers(char *buf, size_t o)
{
	static const char *const quals[] = { " const", " volatile", " &&", " &", NULL };
	size_t end = o;
	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; quals[i] && !again; i++) {
			size_t l = strlen(quals[i]);
			if (end > l && !strncmp(buf + end - l, quals[i], l)) {
				end -= l;
				again = 1;
			}
		}
	}
	if (end < o && buf[end - 1] == ')')
		buf[end] = 0;
}

const char *pl_short_name(const char *name, char *buf, size_t len)
{
	if (!name || len < 8 || (!strchr(name, '<') && !strchr(name, '(')))
		return name;
	struct shortener s = { buf, len, 0, 0 };
	int depth = 0; /* inside <...> or (...) being elided */
	for (const char *p = name; *p && s.o + 6 < len; p++) {
		char c = *p;
		if (!depth && at_operator(name, p)) {
			p += copy_operator(&s, p) - 1;
			continue;
		}
		if (c == '(' && !depth && !strncmp(p, "(anonymous namespace)", 21)) {
			put(&s, p, 21); /* a name, not a parameter list */
			p += 20;
			continue;
		}
		if (c == ' ' && !depth && ((p[1] == '(' && p[2] == '.') || !strncmp(p + 1, "[clone ", 7))) {
			/* a clone's suffix after the name, " (.part.0)" or " [clone
			 * .part.0]": kept whole */
			put(&s, p, strlen(p));
			break;
		}
		if (c == '<' || c == '(') {
			if (c == '(')
				s.conversion = 0; /* the conversion's type ends at its parameters */
			if (!depth++)
				put(&s, c == '<' ? "<..." : "(...", 4);
			continue;
		}
		if (c == '>' || c == ')') {
			if (depth && !--depth)
				put(&s, &c, 1);
			continue;
		}
		if (depth)
			continue;
		if (c == ' ' && ends_return_type(&s, p)) {
			s.o = 0; /* a return type before the name: start over after it */
			continue;
		}
		put(&s, &c, 1);
	}
	buf[s.o] = 0;
	strip_qualifiers(buf, s.o);
	return buf;
}

/* The length of the balanced group at P (P[0] is OPEN), to its CLOSE. */
static size_t group_length(const char *p, char open, char close)
{
	int depth = 0;
	size_t i = 0;
	for (; p[i]; i++) {
		if (p[i] == open)
			depth++;
		else if (p[i] == close && !--depth)
			return i + 1;
	}
	return i;
}

/* NAME as perf report prints a C++ name: demangled without parameters,
 * hence without the return type either, template arguments whole, and
 * without a clone's suffix (perf names foo.isra.0 foo).
 *   double ns::f<double, std::less<int> >(std::vector<double> const&, int)
 *   -> ns::f<double, std::less<int> >
 * An operator stays whole. */
const char *pl_perf_name(const char *name, char *buf, size_t len)
{
	if (!name || len < 8 || !strchr(name, '('))
		return name;
	struct shortener s = { buf, len, 0, 0 };
	for (const char *p = name; *p && s.o + 1 < len; p++) {
		size_t n;
		if (at_operator(name, p)) {
			p += copy_operator(&s, p) - 1;
		} else if (*p == '<' || *p == '{') { /* template arguments, {lambda(int)#1}: whole */
			n = group_length(p, *p, *p == '<' ? '>' : '}');
			put(&s, p, n);
			p += n - 1;
		} else if (*p == '(' && !strncmp(p, "(anonymous namespace)", 21)) {
			put(&s, p, 21);
			p += 20;
		} else if (*p == '(' || (*p == ' ' && (p[1] == '[' || (p[1] == '(' && p[2] == '.')))) {
			break; /* the parameters, and what follows them; a clone's suffix */
		} else if (*p == ' ' && ends_return_type(&s, p)) {
			s.o = 0;
		} else {
			put(&s, p, 1);
		}
	}
	buf[s.o] = 0;
	return buf;
}
