/* disasm.c - machine code as text, as objdump prints it (ls_disassemble of
 * loopscope.h), and the libopcodes set-up that the CFG's decoder shares.
 *
 * The front ends show instructions: `perf loops annotate --asm` under its
 * statements, `loopscope decode --decodecode` for an oops' Code: line.
 * Both get them here, from the libopcodes the analysis decodes with (so
 * the text is binutils' own: objdump's, perf annotate's), in AT&T or Intel
 * syntax.  Each call has its own disassemble_info: libopcodes' x86 printer
 * keeps its state on the stack (decode_x86.c), so calls on several threads
 * are safe.
 */
#include "cfg/opcodes.h"
#include "support/base.h"

#include <elf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

disassembler_ftype ls_opcodes_init(disassemble_info *info, int e_machine, const char *options, void *stream,
                                   fprintf_ftype printf_fn, fprintf_styled_ftype styled_fn)
{
	enum bfd_architecture arch;
	unsigned long mach;
	switch (e_machine) {
	case EM_X86_64:
		arch = bfd_arch_i386;
		mach = bfd_mach_x86_64;
		break;
	default:
		return NULL;
	}
	disassembler_ftype fn = disassembler(arch, false, mach, NULL);
	if (!fn)
		return NULL;
	init_disassemble_info(info, stream, printf_fn, styled_fn);
	info->arch = arch;
	info->mach = mach;
	info->endian = BFD_ENDIAN_LITTLE;
	info->read_memory_func = buffer_read_memory;
	info->disassembler_options = options;
	disassemble_init_for_target(info);
	return fn;
}

/* ---- text ------------------------------------------------------------------ */

/* One instruction's text, as libopcodes prints it piece by piece (cut at
 * 255 bytes, as perf annotate cut it). */
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

static int text_printf(void *stream, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	append(stream, fmt, ap);
	va_end(ap);
	return 0;
}

static int text_styled(void *stream, enum disassembler_style style, const char *fmt, ...)
{
	(void)style;
	va_list ap;
	va_start(ap, fmt);
	append(stream, fmt, ap);
	va_end(ap);
	return 0;
}

/* A branch target or a rip-relative address: objdump's form without
 * symbols. */
static void print_address(bfd_vma addr, struct disassemble_info *info)
{
	(info->fprintf_func)(info->stream, "0x%llx", (unsigned long long)addr);
}

/* objdump -d's zero skipping: a run of 8 or more zero bytes (cut to a
 * multiple of 4 unless it reaches the end, so as not to swallow the start
 * of an instruction that begins with zeros), or fewer than 3 at the very
 * end, is shown as "..." instead of as instructions.  The length of the
 * run at POS to skip, or 0. */
static size_t zeros_to_skip(const uint8_t *code, size_t size, size_t pos)
{
	size_t z = pos;
	while (z < size && code[z] == 0)
		z++;
	size_t run = z - pos;
	if (!run || !(run >= 8 || (z == size && run < 3)))
		return 0;
	return z == size ? run : run & ~(size_t)3;
}

int ls_disassemble(int e_machine, const uint8_t *code, size_t size, uint64_t addr, unsigned flags, ls_insn_fn fn,
                   void *ctx, ls_error *err)
{
	if (flags & ~(LS_DISASM_INTEL | LS_DISASM_SKIP_ZEROES)) {
		ls_set_error(err, LS_ERR_USAGE, "ls_disassemble: unknown flags %#x", flags);
		return -1;
	}
	struct text_buf tb;
	disassemble_info info;
	disassembler_ftype print_insn = ls_opcodes_init(&info, e_machine, flags & LS_DISASM_INTEL ? "intel" : NULL,
	                                                &tb, text_printf, text_styled);
	if (!print_insn) {
		ls_set_error(err, LS_ERR_UNSUPPORTED, "no disassembler for ELF machine %d", e_machine);
		return -1;
	}
	info.print_address_func = print_address;
	info.buffer = (bfd_byte *)code;
	info.buffer_vma = addr;
	info.buffer_length = size;
	int stop = 0;
	for (size_t pos = 0; pos < size && !stop;) {
		size_t skip = flags & LS_DISASM_SKIP_ZEROES ? zeros_to_skip(code, size, pos) : 0;
		if (skip) {
			stop = fn(ctx, addr + pos, code + pos, skip, NULL);
			pos += skip;
			continue;
		}
		tb.n = 0;
		tb.s[0] = 0;
		int len = print_insn(addr + pos, &info);
		if (len <= 0) {
			snprintf(tb.s, sizeof tb.s, "(bad)");
			len = 1;
		}
		if ((size_t)len > size - pos) /* bytes past the end, as objdump shows none */
			len = (int)(size - pos);
		stop = fn(ctx, addr + pos, code + pos, (size_t)len, tb.s);
		pos += (size_t)len;
	}
	disassemble_free_target(&info);
	return 0;
}
