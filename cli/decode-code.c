/* decode-code.c - `loopscope decode --decodecode`: the bytes of a `Code:`
 * line disassembled as the kernel's scripts/decodecode shows them (its
 * objdump -D -b binary layout, which kernel developers read), with the
 * text of libloopscope's disassembler (ls_disassemble: the libopcodes
 * objdump prints with), the faulting instruction and the instructions of
 * its innermost loop marked.
 */
#include "decode.h"

#include <inttypes.h>
#include <string.h>

/* The bytes of "Code: 48 89 e5 <0f> 0b ..." (the faulting one in <>, or
 * (..) for an instruction pointer the CPU had already moved past). */
static size_t code_bytes(const char *s, uint8_t *bytes, size_t cap, size_t *fault)
{
	size_t n = 0;
	*fault = SIZE_MAX;
	for (const char *p = s; *p && n < cap;) {
		while (*p == ' ' || *p == '\t')
			p++;
		bool mark = *p == '<' || *p == '(';
		if (mark)
			p++;
		uint64_t v;
		size_t k = strspn(p, "0123456789abcdefABCDEF");
		if (k != 2 || !decode_parse_hex(p, 2, &v))
			break;
		if (mark)
			*fault = n;
		bytes[n++] = (uint8_t)v;
		p += 2;
		if (*p == '>' || *p == ')')
			p++;
	}
	return n;
}

/* Each instruction on a line as `objdump -D -b binary` prints it:
 * ADDRESS:<tab>up to 7 bytes, padded<tab>TEXT, longer instructions going
 * on with their bytes on lines of their own, zeros skipped as objdump skips
 * them. */
struct listing {
	const struct decoder *d;
	const ls_module *m;
	FILE *out;
	const char *pfx;
	uint64_t rip;
	const ls_scope *rip_loop;
	int skip;              /* leading address digits objdump leaves out */
};

/* objdump's address column: 16 digits less SKIP, leading zeros as
 * spaces (a lone 0 kept, on the first line of an instruction). */
static void objdump_address(char *buf, size_t size, uint64_t a, int skip, bool first)
{
	char full[17];
	snprintf(full, sizeof full, "%016" PRIx64, a);
	char *s = full + skip, *p = s;
	while (*p == '0')
		*p++ = ' ';
	if (!*p && first)
		p[-1] = '0';
	snprintf(buf, size, "%s", s);
}

static void listing_line(struct listing *l, uint64_t a, const char *body)
{
	const ls_scope *loop = decode_loop_of(l->m, a);
	fprintf(l->out, "%s# %s%s%s", l->pfx, a == l->rip ? "*" : " ", body,
	        a == l->rip ? "\t\t<-- trapping instruction" : "");
	char e[PATH_MAX];
	if (l->rip_loop && loop == l->rip_loop)
		fprintf(l->out, "\t[loop at %s:%u]", ESC(e, decode_shown(l->d, ls_scope_file(loop))), ls_scope_line(loop));
	fputc('\n', l->out);
}

static int listing_insn(void *ctx, uint64_t addr, const uint8_t *bytes, size_t len, const char *text)
{
	struct listing *l = ctx;
	if (!text)
		return 0; /* objdump's "..." line: no address, not shown */
	char line[512], a[24];
	objdump_address(a, sizeof a, addr, l->skip, true);
	size_t n = (size_t)snprintf(line, sizeof line, "%s:\t", a);
	for (size_t i = 0; i < 7; i++)
		n += (size_t)snprintf(line + n, sizeof line - n, i < len ? "%02x " : "   ", i < len ? bytes[i] : 0);
	snprintf(line + n, sizeof line - n, "\t%s", text);
	listing_line(l, addr, line);
	for (size_t at = 7; at < len; at += 7) {
		objdump_address(a, sizeof a, addr + at, l->skip, false);
		n = (size_t)snprintf(line, sizeof line, "%s:\t", a);
		for (size_t i = at; i < len && i < at + 7; i++)
			n += (size_t)snprintf(line + n, sizeof line - n, "%02x ", bytes[i]);
		listing_line(l, addr + at, line);
	}
	return 0;
}

/* The bytes from byte FROM on, at link-time addresses from VMA. */
static void disassemble(struct listing *l, const uint8_t *bytes, size_t n, uint64_t vma, size_t from)
{
	/* objdump drops leading zeros of the section's end address, 4 digits
	 * at a time, keeping at least one */
	char end[17];
	snprintf(end, sizeof end, "%016" PRIx64, vma + n);
	int zeros = (int)strspn(end, "0");
	l->skip = zeros ? (zeros - 1) & -4 : 0;
	ls_error err;
	if (ls_disassemble(ls_module_machine(l->m), bytes + from, n - from, vma + from, LS_DISASM_SKIP_ZEROES,
	                   listing_insn, l, &err) < 0)
		fprintf(stderr, "loopscope decode: %s\n", err.message);
}

void decode_code_line(const struct decoder *d, FILE *out, const char *line, const ls_module *m, uint64_t rip)
{
	const char *code = strstr(line, "Code: ");
	if (!code || !m)
		return;
	uint8_t bytes[256];
	size_t fault;
	size_t n = code_bytes(code + 6, bytes, sizeof bytes, &fault);
	if (n == 0 || fault == SIZE_MAX)
		return;
	char pfx[64];
	size_t sl = decode_stamp_len(line);
	snprintf(pfx, sizeof pfx, "%.*s  ", (int)(sl < 40 ? sl : 40), line);
	uint64_t vma = rip - fault;
	const ls_scope *rip_loop = decode_loop_of(m, rip);
	struct listing l = { d, m, out, pfx, rip, rip_loop, 0 };
	fprintf(out, "%s# All code (at link-time addresses)\n", pfx);
	disassemble(&l, bytes, n, vma, 0);
	fprintf(out, "%s# Code starting with the faulting instruction\n", pfx);
	disassemble(&l, bytes, n, vma, fault);
	char e[PATH_MAX];
	if (rip_loop)
		fprintf(out, "%s# the faulting instruction is in the loop at %s:%u (header 0x%" PRIx64 ", depth %u)\n",
		        pfx, ESC(e, decode_shown(d, ls_scope_file(rip_loop))), ls_scope_line(rip_loop), ls_loop_header(rip_loop),
		        ls_loop_depth(rip_loop));
}
