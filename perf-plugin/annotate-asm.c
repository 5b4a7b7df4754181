/* annotate-asm.c - the instructions of an address range of a binary, as
 * text, for `perf loops annotate --asm`.
 *
 * The text is libloopscope's (ls_disassemble: libopcodes, objdump's and
 * perf annotate's AT&T syntax, or Intel's for -M intel); this file only
 * reads the range's bytes
 * from the binary and keeps each instruction.  Nothing here attributes
 * cost: annotate.c places these instructions under the report's statements
 * and marks the loops' edges on them.
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

struct insns {
	pl_insn_text *v;
	size_t n, cap;
};

static int keep_insn(void *ctx, uint64_t addr, const uint8_t *bytes, size_t len, const char *text)
{
	(void)bytes;
	struct insns *in = ctx;
	if (in->n == in->cap) {
		in->cap = in->cap ? in->cap * 2 : 256;
		in->v = pl_xrealloc(in->v, in->cap * sizeof *in->v);
	}
	in->v[in->n++] = (pl_insn_text){ .addr = addr, .len = (unsigned)len, .text = pl_xstrdup(text) };
	return 0;
}

size_t pl_disassemble(const char *file, uint64_t lo, uint64_t hi, int intel, pl_insn_text **out, char *err,
		      size_t errlen)
{
	*out = NULL;
	if (hi <= lo || hi - lo > (64u << 20)) {
		snprintf(err, errlen, "%s: bad code range %#llx-%#llx", file, (unsigned long long)lo, (unsigned long long)hi);
		return 0;
	}
	ls_error le;
	ls_file *f = ls_file_open(file, &le);
	uint8_t *bytes = f ? pl_xmalloc(hi - lo) : NULL;
	struct insns in = { 0 };
	if (!f || ls_file_read_code(f, lo, hi, bytes, &le) < 0 ||
	    ls_disassemble(ls_file_machine(f), bytes, hi - lo, lo, intel ? LS_DISASM_INTEL : 0, keep_insn, &in, &le) < 0) {
		snprintf(err, errlen, "%s", le.message);
		for (size_t i = 0; i < in.n; i++)
			free(in.v[i].text);
		free(in.v);
		in.v = NULL;
		in.n = 0;
	}
	free(bytes);
	ls_file_close(f);
	*out = in.v;
	return in.n;
}
