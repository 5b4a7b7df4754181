/* json_writer.h - the one JSON writer of loopscope.
 *
 * Every JSON that loopscope prints goes through it: `loopscope struct
 * --format=json` and the lookup chains (output_json.c), the errors of
 * `loopscope lookup --json` (cli/cmd-lookup.c) and `perf loops report
 * --format=json` (perf-plugin/view-json.c).  It owns what they must all get
 * right the same way: string escaping (UTF-8 passes through, control
 * characters become \uXXXX or their short escapes, bytes that are not UTF-8
 * become U+FFFD, so the output is valid JSON whatever DWARF or perf.data
 * hold), the commas between members, and compact or pretty layout.
 *
 * The writer fills a fixed buffer and hands it to stdio when it is full or
 * at ls_jw_finish: no allocation, so it cannot fail for memory, and no
 * printf or per-character stdio on the lookup hot path.  It keeps no stack
 * of open containers: a member needs a comma unless it is the first of its
 * container, and that is one flag, so nesting is as deep as the caller likes.
 *
 * Internal: built into a convenience library (libloopscope-json.la) that
 * libloopscope, the loopscope command and perf-loops link; not exported by
 * libloopscope.so (ls_json_string is the public face of its escaping).
 */
#ifndef LOOPSCOPE_JSON_WRITER_H
#define LOOPSCOPE_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum ls_jw_layout {
	LS_JW_COMPACT,  /* no white space at all: one document a line */
	LS_JW_PRETTY,   /* a member a line, indented by two spaces a level */
};

typedef struct ls_jw {
	FILE *out;
	enum ls_jw_layout layout;
	unsigned depth;         /* open objects and arrays */
	bool first;             /* nothing written yet in the innermost container */
	bool after_key;         /* a key was written: the value needs no comma */
	size_t len;
	char buf[8192];
} ls_jw;

void ls_jw_init(ls_jw *w, FILE *out, enum ls_jw_layout layout);
/* Hands what is buffered to the stream; -1 if the stream has an error. */
int ls_jw_finish(ls_jw *w);

void ls_jw_object(ls_jw *w);
void ls_jw_object_end(ls_jw *w);
void ls_jw_array(ls_jw *w);
void ls_jw_array_end(ls_jw *w);
/* A member's name, in an object; escaped as strings are. */
void ls_jw_key(ls_jw *w, const char *key);

/* Values. */
void ls_jw_string(ls_jw *w, const char *s);         /* NULL: null */
void ls_jw_uint(ls_jw *w, uint64_t v);
void ls_jw_int(ls_jw *w, int64_t v);
void ls_jw_hex(ls_jw *w, uint64_t v);               /* the string "0x1f": lower case, no leading zeros */
void ls_jw_double(ls_jw *w, double v);             /* %.6g; NaN, infinity: null */
void ls_jw_bool(ls_jw *w, bool v);
void ls_jw_null(ls_jw *w);
/* A source line number; null for line 0, the compiler's "no line", which is
 * never shown as a line. */
void ls_jw_line(ls_jw *w, unsigned line);

/* A newline between top-level documents (one a line), or at the end. */
void ls_jw_newline(ls_jw *w);

#endif
