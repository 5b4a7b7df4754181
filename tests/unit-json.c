/* unit-json.c - the JSON writer (libloopscope/support/json_writer.c) on its own:
 * escaping of quotes, backslashes, control characters and bytes that are not
 * UTF-8, commas and nesting, pretty layout, and a string longer than the
 * writer's buffer.  Each case compares the whole output with the exact text
 * it must be. */
#include "support/json_writer.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The output of one writer session: BODY writes into W. */
#define CAPTURE(layout, body)                                        \
	({                                                           \
		char *out_ = NULL;                                   \
		size_t len_ = 0;                                     \
		FILE *f_ = open_memstream(&out_, &len_);             \
		ls_jw w_, *w = &w_;                                  \
		ls_jw_init(w, f_, layout);                           \
		body;                                                \
		int rc_ = ls_jw_finish(w);                           \
		fclose(f_);                                          \
		if (rc_ < 0)                                         \
			out_[0] = 0;                                 \
		out_;                                                \
	})

static void expect(char *got, const char *want, const char *what)
{
	int same = strcmp(got, want) == 0;
	ok(same, "%s", what);
	if (!same)
		printf("# got:  %s\n# want: %s\n", got, want);
	free(got);
}

static void escaping(void)
{
	expect(CAPTURE(LS_JW_COMPACT, ls_jw_string(w, "say \"hi\"")), "\"say \\\"hi\\\"\"",
	       "quotes are escaped");
	expect(CAPTURE(LS_JW_COMPACT, ls_jw_string(w, "C:\\dir\\")), "\"C:\\\\dir\\\\\"",
	       "backslashes are escaped");
	expect(CAPTURE(LS_JW_COMPACT, ls_jw_string(w, "a\nb\tc\rd\be\ff")),
	       "\"a\\nb\\tc\\rd\\be\\ff\"", "newline, tab, CR, backspace, form feed: short escapes");
	expect(CAPTURE(LS_JW_COMPACT, ls_jw_string(w, "\x01\x1f\x1b[0m")), "\"\\u0001\\u001f\\u001b[0m\"",
	       "other control characters: \\u00XX, lower case");
	expect(CAPTURE(LS_JW_COMPACT, ls_jw_string(w, "\x7f/")), "\"\x7f/\"", "DEL and slash pass through");
	expect(CAPTURE(LS_JW_COMPACT, ls_jw_string(w, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80")),
	       "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", "valid UTF-8 (2, 3 and 4 bytes) passes through");
	expect(CAPTURE(LS_JW_COMPACT, ls_jw_string(w, "a\xff" "b\xc3")), "\"a\\ufffdb\\ufffd\"",
	       "a byte that starts no UTF-8 sequence, and a cut sequence, become U+FFFD");
	expect(CAPTURE(LS_JW_COMPACT, ls_jw_string(w, "\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80")),
	       "\"\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\\ufffd\"",
	       "overlong form, surrogate, past U+10FFFF: each byte becomes U+FFFD");
	expect(CAPTURE(LS_JW_COMPACT, ls_jw_string(w, NULL)), "null", "a NULL string is null");
	expect(CAPTURE(LS_JW_COMPACT, ls_jw_string(w, "")), "\"\"", "the empty string");
	expect(CAPTURE(LS_JW_COMPACT, (ls_jw_object(w), ls_jw_key(w, "a\"b"), ls_jw_uint(w, 1), ls_jw_object_end(w))),
	       "{\"a\\\"b\":1}", "keys are escaped too");
}

static void values_and_nesting(void)
{
	expect(CAPTURE(LS_JW_COMPACT, (ls_jw_uint(w, 0))), "0", "uint 0");
	expect(CAPTURE(LS_JW_COMPACT, (ls_jw_uint(w, UINT64_MAX))), "18446744073709551615", "uint max");
	expect(CAPTURE(LS_JW_COMPACT, (ls_jw_int(w, -40))), "-40", "int negative");
	expect(CAPTURE(LS_JW_COMPACT, (ls_jw_int(w, INT64_MIN))), "-9223372036854775808", "int min");
	expect(CAPTURE(LS_JW_COMPACT, (ls_jw_array(w), ls_jw_double(w, 99.07), ls_jw_double(w, 1e8),
	                               ls_jw_double(w, 0.0013), ls_jw_double(w, -2.5), ls_jw_array_end(w))),
	       "[99.07,1e+08,0.0013,-2.5]", "double (%.6g)");
	expect(CAPTURE(LS_JW_COMPACT, (ls_jw_array(w), ls_jw_double(w, NAN), ls_jw_double(w, INFINITY),
	                               ls_jw_array_end(w))),
	       "[null,null]", "double: NaN and infinity are null");
	expect(CAPTURE(LS_JW_COMPACT, (ls_jw_array(w), ls_jw_int(w, 16), ls_jw_int(w, 0), ls_jw_array_end(w))), "[16,0]",
	       "int in an array");
	expect(CAPTURE(LS_JW_COMPACT, (ls_jw_hex(w, 0))), "\"0x0\"", "hex 0");
	expect(CAPTURE(LS_JW_COMPACT, (ls_jw_hex(w, 0x401a2fULL))), "\"0x401a2f\"", "hex, lower case");
	expect(CAPTURE(LS_JW_COMPACT, (ls_jw_array(w), ls_jw_array_end(w))), "[]", "empty array");
	expect(CAPTURE(LS_JW_COMPACT, (ls_jw_object(w), ls_jw_object_end(w))), "{}", "empty object");
	expect(CAPTURE(LS_JW_COMPACT,
	               (ls_jw_object(w), ls_jw_key(w, "a"), ls_jw_array(w), ls_jw_uint(w, 1),
	                ls_jw_array(w), ls_jw_array_end(w), ls_jw_object(w), ls_jw_key(w, "b"), ls_jw_null(w),
	                ls_jw_object_end(w), ls_jw_bool(w, true), ls_jw_array_end(w), ls_jw_key(w, "c"),
	                ls_jw_bool(w, false), ls_jw_key(w, "d"), ls_jw_object(w), ls_jw_object_end(w),
	                ls_jw_object_end(w), ls_jw_newline(w))),
	       "{\"a\":[1,[],{\"b\":null},true],\"c\":false,\"d\":{}}\n",
	       "nesting: commas between members only, none after a key or a container's opening");
	expect(CAPTURE(LS_JW_COMPACT, (ls_jw_object(w), ls_jw_object_end(w), ls_jw_newline(w), ls_jw_array(w),
	                               ls_jw_uint(w, 2), ls_jw_array_end(w), ls_jw_newline(w))),
	       "{}\n[2]\n", "top-level documents, one a line: no comma between them");
	expect(CAPTURE(LS_JW_PRETTY,
	               (ls_jw_object(w), ls_jw_key(w, "a"), ls_jw_array(w), ls_jw_uint(w, 1), ls_jw_uint(w, 2),
	                ls_jw_array_end(w), ls_jw_key(w, "e"), ls_jw_array(w), ls_jw_array_end(w),
	                ls_jw_key(w, "o"), ls_jw_object(w), ls_jw_key(w, "s"), ls_jw_string(w, "x"),
	                ls_jw_object_end(w), ls_jw_object_end(w), ls_jw_newline(w))),
	       "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"e\": [],\n  \"o\": {\n    \"s\": \"x\"\n  }\n}\n",
	       "pretty: a member a line, two spaces a level, empty containers stay []");
}

/* Deeper than any fixed stack would allow, and a string longer than the
 * buffer: the output is still exact. */
static void large(void)
{
	enum { DEPTH = 100000 };
	char *got = CAPTURE(LS_JW_COMPACT, ({
		for (int i = 0; i < DEPTH; i++) {
			ls_jw_array(w);
			ls_jw_uint(w, 7);
		}
		for (int i = 0; i < DEPTH; i++)
			ls_jw_array_end(w);
	}));
	char *want = malloc(4 * (size_t)DEPTH + 1), *p = want;
	for (int i = 0; i < DEPTH; i++)
		p = stpcpy(p, i ? ",[7" : "[7");
	memset(p, ']', DEPTH);
	p[DEPTH] = 0;
	expect(got, want, "100000 nested arrays, each [7,...]");
	free(want);

	size_t n = 3 * sizeof(((ls_jw *)0)->buf) + 17;
	char *s = malloc(n + 1);
	for (size_t i = 0; i < n; i++)
		s[i] = i % 97 == 0 ? '"' : 'a' + i % 26;
	s[n] = 0;
	char *big = malloc(2 * n + 3), *q = big;
	*q++ = '"';
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			*q++ = '\\';
		*q++ = s[i];
	}
	*q++ = '"';
	*q = 0;
	expect(CAPTURE(LS_JW_COMPACT, ls_jw_string(w, s)), big,
	       "a string three times the buffer's size, with quotes in it");
	free(s);
	free(big);
}

int main(void)
{
	escaping();
	values_and_nesting();
	large();
	return done_testing();
}
