/* decode.h - what the three files of `loopscope decode` share:
 *
 *   decode-log.c   reading a kernel log: which lines name frames
 *   decode-code.c  --decodecode: the bytes of a Code: line as objdump shows them
 *   cmd-decode.c   the command: debug files, annotations
 */
#ifndef LOOPSCOPE_CLI_DECODE_H
#define LOOPSCOPE_CLI_DECODE_H

#include "cli.h"

#include <stdint.h>
#include <stdio.h>

/* ---- decode-log.c ----------------------------------------------------------- */

/* A line that names a frame. */
struct frame {
	size_t col;            /* where the symbol or address starts */
	char name[256];        /* symbol, or "" for a raw address */
	uint64_t off, size, raw;
	bool has_size;
	char module[64];
	char build_id[96];
	bool rip;
};

/* The length of a leading timestamp or syslog prefix ("[  12.3] ", "<4>[..]"). */
size_t decode_stamp_len(const char *line);
/* Whether LINE names a frame, and which. */
bool decode_parse_frame(const char *line, struct frame *f);
bool decode_parse_hex(const char *s, size_t n, uint64_t *v);

/* ---- cmd-decode.c ---------------------------------------------------------------- */

struct decoder;
/* FILE without the build directory (--strip-prefix; by default the one
 * init/main.c is in). */
const char *decode_shown(const struct decoder *d, const char *file);
/* The innermost loop of ADDR in M, or NULL. */
const ls_scope *decode_loop_of(const ls_module *m, uint64_t addr);

/* ---- decode-code.c ------------------------------------------------------------------ */

/* The listing of LINE's "Code: 48 89 e5 <0f> 0b ..." bytes at the faulting
 * instruction RIP of M, as scripts/decodecode's objdump prints it, each line
 * `PFX# ...`, the trapping instruction and its loop marked. */
void decode_code_line(const struct decoder *d, FILE *out, const char *line, const ls_module *m, uint64_t rip);

#endif
