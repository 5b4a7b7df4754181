/* decode.h - what the three files of `loopscope decode` share:
 *
 *   decode-log.c   reading a kernel log: which lines name frames, the
 *                  release, the KASLR offset, where one report ends
 *   decode-code.c  --decodecode: the bytes of a Code: line as objdump shows them
 *   cmd-decode.c   the command: debug files, reports, annotations
 */
#ifndef LOOPSCOPE_CLI_DECODE_H
#define LOOPSCOPE_CLI_DECODE_H

#include "cli.h"
#include "support/text_escape.h"

#include <stdint.h>
#include <stdio.h>

/* S with its control characters escaped, in BUF: names and paths come from
 * the debug files (support/text_escape.h). */
#define ESC(buf, s) decode_escaped((buf), sizeof(buf), (s))
static inline const char *decode_escaped(char *buf, size_t size, const char *s)
{
	ls_text_escape(s, buf, size, 0);
	return buf;
}

/* ---- decode-log.c ----------------------------------------------------------- */

/* A line that names a frame. */
struct frame {
	size_t col;            /* where the symbol or address starts */
	char name[256];        /* symbol, or "" for a raw address */
	uint64_t off, size;    /* NAME+OFF/SIZE */
	bool has_size;
	uint64_t raw;          /* a runtime address: the frame itself, or the [<ADDR>] before NAME */
	bool has_raw;
	char module[64];
	char build_id[96];
	/* The address itself is where the CPU was (a RIP: line, the WARNING
	 * line's site): not a return address, whose call is one byte before. */
	bool exact;
};

/* The length of a leading timestamp or syslog prefix ("[  12.3] ", "<4>[..]"). */
size_t decode_stamp_len(const char *line);
/* Whether LINE names a frame, and which. */
bool decode_parse_frame(const char *line, struct frame *f);
/* The kernel release a line names: "CPU: 1 PID: 9 Comm: x Not tainted R #1",
 * a hung task's "Not tainted R #1", lockdep's "R #1 Not tainted", "Linux
 * version R (...)".  Writes it into BUF and returns true. */
bool decode_release_in(const char *line, char *buf, size_t size);
/* "Kernel Offset: 0x2c200000 from 0xffffffff81000000 ...", "Kernel Offset: disabled". */
bool decode_kernel_offset_in(const char *line, int64_t *off);
/* Where reports begin and end: a line that opens a report ("WARNING:",
 * "BUG:", "INFO: task", "Oops:", a cut-here line, ...) and one that closes
 * it ("---[ end trace ...]---"). */
enum { LINE_INSIDE, LINE_OPENS, LINE_CLOSES };
int decode_boundary(const char *line);
bool decode_parse_hex(const char *s, size_t n, uint64_t *v);

/* ---- cmd-decode.c ---------------------------------------------------------------- */

/* One kernel object: vmlinux (name "") or a module. */
struct kobj {
	char *name;                /* module name with '-' as '_', "" for vmlinux */
	char *path;                /* where its debug info is, once found */
	ls_module *mod;
	bool tried;
};

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
