/* text_escape.h - names and paths made safe to print on a terminal, and
 * measured in columns (text_escape.c).
 *
 * DWARF names, file names and perf.data strings are anyone's bytes: an
 * escape sequence in a file name retitles the terminal or clears it, a
 * newline in a function name splits an output line in two (and a line of
 * FlameGraph input).  Every text output (loopscope struct, lookup, decode,
 * perf loops report --stdio, --format=folded, annotate) prints them through
 * ls_text_escape: control characters and bytes that are not UTF-8 become
 * backslash escapes, as GDB prints such strings and `ls -b` such names
 * (\n, \t, \ooo), and printable text, UTF-8 included, stays as it is (a
 * C++ name keeps its spaces).  The GDB extension does the same in Python
 * (loopscope_args.escape).  JSON, XML and MI have their own escaping.
 *
 * Internal: in the convenience library libloopscope-json.la with the JSON
 * writer, which libloopscope, the loopscope command and perf-loops link.
 */
#ifndef LOOPSCOPE_TEXT_ESCAPE_H
#define LOOPSCOPE_TEXT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum {
	LS_ESC_KEEP_TAB = 1,   /* a tab stays a tab (source text) */
	LS_ESC_SEMICOLON = 2,  /* ';' too, as \073: FlameGraph's frame separator */
};

/* S (NULL: "") escaped into OUT (SIZE bytes, NUL-terminated, cut only
 * between whole characters or escapes).  Returns the length of the whole
 * escaped text, as snprintf does. */
size_t ls_text_escape(const char *s, char *out, size_t size, unsigned flags);
/* Whether S (NULL: yes) needs no escape: the common case, one pass. */
bool ls_text_is_clean(const char *s, unsigned flags);
/* S escaped, to OUT. */
void ls_text_fputs(const char *s, FILE *out);
/* Escapes BUF (LEN bytes of room) in place; false if it did not fit (the
 * text is then cut, as ls_text_escape cuts). */
bool ls_text_escape_in_place(char *buf, size_t len, unsigned flags);

/* The terminal columns of S (printable UTF-8, as escaped text is): a wide
 * (East Asian) character takes two, a combining mark none. */
size_t ls_text_width(const char *s);
/* The bytes of the longest prefix of S that fits in COLS columns, whole
 * characters only. */
size_t ls_text_prefix(const char *s, size_t cols);

#endif
