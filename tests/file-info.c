/* file-info - prints what libloopscope's ls_file_* calls read of an ELF
 * file, in forms tests/lib-file.sh compares with readelf and nm:
 *
 *   file-info FILE build-id          the build-id in hex (empty if none)
 *   file-info FILE sections          "NAME ADDR SIZE OFFSET ALIGN FLAGS" per section
 *   file-info FILE offset OFF...     the address each file offset loads at, or "-"
 *   file-info FILE symbol ADDR...    "NAME ADDR SIZE" of the function there, or "-"
 *
 * Exit status 1 (with ls_error's message) if FILE cannot be opened. */
#include "loopscope.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: file-info FILE build-id|sections|offset|symbol [ARG...]\n");
		return 2;
	}
	ls_error err;
	ls_file *f = ls_file_open(argv[1], &err);
	if (!f) {
		fprintf(stderr, "file-info: %s (code %d)\n", err.message, (int)err.code);
		return 1;
	}
	if (!strcmp(argv[2], "build-id")) {
		const uint8_t *bits;
		size_t n = ls_file_build_id(f, &bits);
		for (size_t i = 0; i < n; i++)
			printf("%02x", bits[i]);
		putchar('\n');
	} else if (!strcmp(argv[2], "sections")) {
		for (size_t i = 0; i < ls_file_nsections(f); i++) {
			const ls_section *s = ls_file_section(f, i);
			printf("%s %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIu64 " %s%s%s\n", s->name[0] ? s->name : "-",
			       s->addr, s->size, s->offset, s->align, s->flags & LS_SECTION_WRITE ? "W" : "",
			       s->flags & LS_SECTION_ALLOC ? "A" : "", s->flags & LS_SECTION_EXEC ? "X" : "");
		}
	} else {
		int sym = !strcmp(argv[2], "symbol");
		for (int i = 3; i < argc; i++) {
			uint64_t v = strtoull(argv[i], NULL, 0), addr;
			ls_symbol s;
			if (sym && ls_file_symbol_at(f, v, &s) == 0)
				printf("%s %" PRIx64 " %" PRIu64 "\n", s.name, s.addr, s.size);
			else if (!sym && ls_file_offset_to_addr(f, v, &addr) == 0)
				printf("%" PRIx64 "\n", addr);
			else
				printf("-\n");
		}
	}
	ls_file_close(f);
	return 0;
}
