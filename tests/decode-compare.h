/* decode-compare.h - one instruction decoded both ways: by the fast x86-64
 * decoder (libloopscope/cfg/decode_x86_fast.c) and by libopcodes, the
 * oracle (decode_x86.c).  Shared by the differential test
 * (tests/decode-diff.c) and the fuzz target (tests/fuzz-decode.c).
 */
#ifndef LOOPSCOPE_DECODE_COMPARE_H
#define LOOPSCOPE_DECODE_COMPARE_H

#include "cfg/decode_x86_fast.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct decode_pair {
	struct ls_insn ref, fast;
	char ref_mn[LS_X86_MNEMONIC_MAX], fast_mn[LS_X86_MNEMONIC_MAX];
	size_t ref_len, fast_len;
};

static int operand_equal(const struct ls_operand *a, const struct ls_operand *b)
{
	return a->kind == b->kind && a->reg == b->reg && a->base == b->base && a->index == b->index &&
	       a->scale == b->scale && a->size == b->size && a->seg == b->seg && a->disp == b->disp &&
	       a->imm == b->imm;
}

static int insn_equal(const struct ls_insn *a, const struct ls_insn *b)
{
	if (a->addr != b->addr || a->len != b->len || a->kind != b->kind || a->nops != b->nops ||
	    a->opcode != b->opcode || a->writes != b->writes || a->target != b->target)
		return 0;
	for (int i = 0; i < 3; i++)
		if (!operand_equal(&a->op[i], &b->op[i]))
			return 0;
	return 1;
}

/* Decodes BYTES both ways.  Returns 0 when the fast decoder does not
 * handle them, 1 when it does and agrees, -1 when it disagrees. */
static int decode_both(struct ls_decoder *ref, struct ls_decoder *fast, const uint8_t *bytes, size_t len,
                       uint64_t addr, struct decode_pair *p)
{
	p->ref_len = ls_decode_opcodes(ref, bytes, len, addr, &p->ref);
	snprintf(p->ref_mn, sizeof p->ref_mn, "%s", ls_decoder_mnemonic(ref));
	p->fast_len = ls_decode_fast_only(fast, bytes, len, addr, &p->fast);
	if (p->fast_len == 0)
		return 0;
	snprintf(p->fast_mn, sizeof p->fast_mn, "%s", ls_decoder_mnemonic(fast));
	if (p->fast_len != p->ref_len || !insn_equal(&p->ref, &p->fast) || strcmp(p->ref_mn, p->fast_mn) != 0)
		return -1;
	return 1;
}

/* ls_decode_flow against ls_decode on BYTES (decoders FLOW and FULL):
 * the length, address, kind, opcode and target must be the same.
 * Returns 1 when decode_x86_flow.c took the bytes and agrees, 0 when it
 * did not take them, -1 when it disagrees (both printed to OUT). */
static int decode_flow_check(struct ls_decoder *full, struct ls_decoder *flow, const uint8_t *bytes, size_t len,
                             uint64_t addr, FILE *out)
{
	struct ls_insn a, b;
	size_t na = ls_decode(full, bytes, len, addr, &a);
	size_t nb = ls_decode_flow(flow, bytes, len, addr, &b);
	if (na == nb && a.addr == b.addr && a.len == b.len && a.kind == b.kind && a.opcode == b.opcode &&
	    a.target == b.target)
		return ls_x86_flow_decode(bytes, len, addr, &b) != 0;
	if (!out)
		return -1;
	fprintf(out, "# flow mismatch at %#" PRIx64 ":", addr);
	for (size_t i = 0; i < len && i < 15; i++)
		fprintf(out, " %02x", bytes[i]);
	fprintf(out, "\n#   full len=%zu kind=%u opcode=%u target=%#" PRIx64 "\n#   flow len=%zu kind=%u opcode=%u "
	        "target=%#" PRIx64 "\n", na, a.kind, a.opcode, a.target, nb, b.kind, b.opcode, b.target);
	return -1;
}

static void print_insn_fields(FILE *out, const char *who, const char *mn, const struct ls_insn *in)
{
	fprintf(out, "#   %-4s %-10s len=%u kind=%u nops=%u opcode=%u writes=%#x target=%#" PRIx64 "\n", who, mn,
	        in->len, in->kind, in->nops, in->opcode, in->writes, in->target);
	for (int i = 0; i < 3; i++) {
		const struct ls_operand *o = &in->op[i];
		fprintf(out, "#        op%d kind=%u reg=%d base=%d index=%d scale=%u size=%u seg=%u disp=%#" PRIx64
		        " imm=%#" PRIx64 "\n", i, o->kind, o->reg, o->base, o->index, o->scale, o->size, o->seg,
		        (uint64_t)o->disp, (uint64_t)o->imm);
	}
}

static void print_mismatch(FILE *out, const uint8_t *bytes, size_t len, uint64_t addr, const struct decode_pair *p)
{
	fprintf(out, "# mismatch at %#" PRIx64 ":", addr);
	for (size_t i = 0; i < len && i < 15; i++)
		fprintf(out, " %02x", bytes[i]);
	fprintf(out, "\n");
	print_insn_fields(out, "ref", p->ref_mn, &p->ref);
	print_insn_fields(out, "fast", p->fast_mn, &p->fast);
}

#endif
