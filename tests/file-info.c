/* file-info - prints what libloopscope's ls_file_* calls read of an ELF
 * file, in forms tests/lib-file.sh compares with readelf and nm:
 *
 *   file-info FILE build-id          the build-id in hex (empty if none)
 *   file-info FILE sections          "NAME ADDR SIZE OFFSET ALIGN FLAGS" per section
 *   file-info FILE offset OFF...     the address each file offset loads at, or "-"
 *   file-info FILE symbol ADDR...    "NAME ADDR SIZE" of the function there, or "-"
 *   file-info FILE code LO HI [intel] [zeros]
 *                                    ls_disassemble of ls_file_read_code's [LO, HI):
 *                                    "ADDR<tab>TEXT" per instruction, "ADDR<tab>..." per
 *                                    run of zeros skipped (tests/lib-disasm.sh)
 *   file-info RAW raw VMA [intel] [zeros]   the same of a file of raw bytes at VMA
 *   file-info DEBUGPATH find-debug build-id|vmlinux|module ID|- RELEASE|- [MODULE [DIRS]]
 *                                    ls_find_debug_file with that query ("-": NULL):
 *                                    "PATH [differs] [debuginfod]" (tests/lib-debuginfo.sh)
 *
 * Exit status 1 (with ls_error's message) if FILE cannot be opened. */
#include "loopscope.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int print_insn(void *ctx, uint64_t addr, const uint8_t *bytes, size_t len, const char *text)
{
	(void)ctx, (void)bytes, (void)len;
	printf("%" PRIx64 "\t%s\n", addr, text ? text : "...");
	return 0;
}

/* ARGV from FIRST on: "intel" and "zeros". */
static unsigned disasm_flags(int argc, char **argv, int first)
{
	unsigned flags = 0;
	for (int i = first; i < argc; i++)
		flags |= !strcmp(argv[i], "intel") ? LS_DISASM_INTEL : !strcmp(argv[i], "zeros") ? LS_DISASM_SKIP_ZEROES : 0;
	return flags;
}

static int disassemble(int machine, const uint8_t *code, size_t n, uint64_t vma, unsigned flags)
{
	ls_error err;
	if (ls_disassemble(machine, code, n, vma, flags, print_insn, NULL, &err) < 0) {
		fprintf(stderr, "file-info: %s (code %d)\n", err.message, (int)err.code);
		return 1;
	}
	return 0;
}

static int raw(const char *path, uint64_t vma, unsigned flags)
{
	FILE *in = fopen(path, "rb");
	static uint8_t code[64 << 20];
	size_t n = in ? fread(code, 1, sizeof code, in) : 0;
	if (in)
		fclose(in);
	return disassemble(62 /* EM_X86_64 */, code, n, vma, flags);
}

static int code(ls_file *f, uint64_t lo, uint64_t hi, unsigned flags)
{
	ls_error err;
	uint8_t *buf = malloc(hi > lo ? hi - lo : 1);
	int rc = 1;
	if (ls_file_read_code(f, lo, hi, buf, &err) < 0)
		fprintf(stderr, "file-info: %s (code %d)\n", err.message, (int)err.code);
	else
		rc = disassemble(ls_file_machine(f), buf, hi - lo, lo, flags);
	free(buf);
	return rc;
}

static const char *arg_or_null(int argc, char **argv, int i)
{
	return i < argc && strcmp(argv[i], "-") ? argv[i] : NULL;
}

static int find_debug(int argc, char **argv)
{
	ls_debug_query q;
	ls_debug_query_init(&q);
	q.debug_file_path = arg_or_null(argc, argv, 1);
	q.target = !strcmp(argv[3], "vmlinux") ? LS_DEBUG_VMLINUX : !strcmp(argv[3], "module") ? LS_DEBUG_KMODULE
	                                                                                       : LS_DEBUG_BY_BUILD_ID;
	q.build_id = arg_or_null(argc, argv, 4);
	q.release = arg_or_null(argc, argv, 5);
	q.module = arg_or_null(argc, argv, 6);
	q.dirs = arg_or_null(argc, argv, 7);
	char path[4096];
	unsigned found;
	ls_error err;
	if (ls_find_debug_file(&q, path, sizeof path, &found, &err) < 0) {
		fprintf(stderr, "file-info: %s (code %d)\n", err.message, (int)err.code);
		return 1;
	}
	printf("%s%s%s\n", path, found & LS_FOUND_BUILD_ID_DIFFERS ? " differs" : "",
	       found & LS_FOUND_DEBUGINFOD ? " debuginfod" : "");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: file-info FILE build-id|sections|offset|symbol [ARG...]\n");
		return 2;
	}
	if (!strcmp(argv[2], "find-debug") && argc >= 6)
		return find_debug(argc, argv);
	if (!strcmp(argv[2], "raw") && argc >= 4)
		return raw(argv[1], strtoull(argv[3], NULL, 0), disasm_flags(argc, argv, 4));
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
	} else if (!strcmp(argv[2], "code") && argc >= 5) {
		int rc = code(f, strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0), disasm_flags(argc, argv, 5));
		ls_file_close(f);
		return rc;
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
