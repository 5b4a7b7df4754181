/* annotate-asm.c - the instructions of an address range of a binary, as
 * text, for `perf loops annotate --asm`.
 *
 * libloopscope decodes instructions with libopcodes for its CFGs, but its
 * public interface has no disassembly (only scopes, loops and their edges),
 * so the text is made here the way objdump makes it: the bytes are read from
 * the file's executable section and libopcodes prints each instruction
 * (AT&T syntax, as perf annotate and objdump show it by default).  Nothing
 * here attributes cost: annotate.c places these instructions under the
 * report's statements and marks the loops' edges on them.
 */
#include "report.h"

#include <dis-asm.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct text_buf {
	char s[256];
	size_t n;
};

static void append(struct text_buf *b, const char *fmt, va_list ap)
{
	if (b->n >= sizeof b->s - 1)
		return;
	int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
	if (k > 0)
		b->n = b->n + (size_t)k < sizeof b->s ? b->n + (size_t)k : sizeof b->s - 1;
}

static int plain_printf(void *stream, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	append(stream, fmt, ap);
	va_end(ap);
	return 0;
}

static int styled_printf(void *stream, enum disassembler_style style, const char *fmt, ...)
{
	(void)style;
	va_list ap;
	va_start(ap, fmt);
	append(stream, fmt, ap);
	va_end(ap);
	return 0;
}

static void print_address(bfd_vma addr, struct disassemble_info *info)
{
	(info->fprintf_func)(info->stream, "0x%llx", (unsigned long long)addr);
}

/* The bytes of [LO, HI) from the executable section of FILE that holds
 * them, or NULL with ERR. */
static uint8_t *read_code(const char *file, uint64_t lo, uint64_t hi, char *err, size_t errlen)
{
	ls_error le;
	ls_file *f = ls_file_open(file, &le);
	if (!f) {
		snprintf(err, errlen, "%s", le.message);
		return NULL;
	}
	const ls_section *sec = NULL;
	for (size_t i = 0; i < ls_file_nsections(f); i++) {
		const ls_section *s = ls_file_section(f, i);
		if ((s->flags & LS_SECTION_EXEC) && lo >= s->addr && hi <= s->addr + s->size)
			sec = s;
	}
	uint8_t *bytes = NULL;
	FILE *in = NULL;
	if (!sec) {
		snprintf(err, errlen, "%s: no code section holds %#llx-%#llx", file, (unsigned long long)lo,
			 (unsigned long long)hi);
	} else if (!(in = fopen(file, "rb")) || fseeko(in, (off_t)(sec->offset + (lo - sec->addr)), SEEK_SET)) {
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
	} else {
		bytes = pl_xmalloc(hi - lo ? hi - lo : 1);
		if (fread(bytes, 1, hi - lo, in) != hi - lo) {
			snprintf(err, errlen, "%s: the code at %#llx is cut short", file, (unsigned long long)lo);
			free(bytes);
			bytes = NULL;
		}
	}
	if (in)
		fclose(in);
	ls_file_close(f);
	return bytes;
}

size_t pl_disassemble(const char *file, uint64_t lo, uint64_t hi, pl_insn_text **out, char *err, size_t errlen)
{
	*out = NULL;
	if (hi <= lo || hi - lo > (64u << 20)) {
		snprintf(err, errlen, "%s: bad code range %#llx-%#llx", file, (unsigned long long)lo, (unsigned long long)hi);
		return 0;
	}
	uint8_t *bytes = read_code(file, lo, hi, err, errlen);
	if (!bytes)
		return 0;
	disassembler_ftype print_insn = disassembler(bfd_arch_i386, false, bfd_mach_x86_64, NULL);
	if (!print_insn) {
		snprintf(err, errlen, "%s: libopcodes has no x86-64 disassembler", file);
		free(bytes);
		return 0;
	}
	struct text_buf tb;
	disassemble_info info;
	init_disassemble_info(&info, &tb, plain_printf, styled_printf);
	info.arch = bfd_arch_i386;
	info.mach = bfd_mach_x86_64;
	info.endian = BFD_ENDIAN_LITTLE;
	info.read_memory_func = buffer_read_memory;
	info.print_address_func = print_address;
	info.buffer = bytes;
	info.buffer_vma = lo;
	info.buffer_length = hi - lo;
	disassemble_init_for_target(&info);
	size_t n = 0, cap = 0;
	pl_insn_text *v = NULL;
	for (uint64_t pc = lo; pc < hi;) {
		tb.n = 0;
		tb.s[0] = 0;
		int len = print_insn(pc, &info);
		if (len <= 0) {
			snprintf(tb.s, sizeof tb.s, "(bad)");
			len = 1;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			v = pl_xrealloc(v, cap * sizeof *v);
		}
		v[n].addr = pc;
		v[n].len = (unsigned)len;
		v[n].text = pl_xstrdup(tb.s);
		n++;
		pc += (uint64_t)len;
	}
	disassemble_free_target(&info);
	free(bytes);
	*out = v;
	return n;
}
