/* decode_x86_fast.h - the x86-64 decoders behind ls_decode and
 * ls_decode_flow (decode.h).
 *
 * decode_x86_fast.c decodes the common instructions by hand; everything
 * else goes to libopcodes (decode_x86.c).  Both fill the whole struct
 * ls_insn (the fast one classifies as decode_x86.c's classify() and
 * gpr_writes() do) and struct ls_x86_parsed (the mnemonic as libopcodes
 * prints it, '*', a direct target).  The entry points below run one path
 * alone: the
 * differential test and fuzz target (tests/decode-diff.c,
 * tests/fuzz-decode.c) hold the fast one to libopcodes' answer.
 * decode_x86_flow.c gives only the length, kind, opcode and direct target
 * of the commonest of them (ls_decode_flow); the same tests hold it to
 * ls_decode's.
 */
#ifndef LOOPSCOPE_DECODE_X86_FAST_H
#define LOOPSCOPE_DECODE_X86_FAST_H

#include "cfg/decode.h"

enum { LS_X86_MNEMONIC_MAX = 32 };

struct ls_x86_parsed {
	char mnemonic[LS_X86_MNEMONIC_MAX]; /* last non-prefix word, as libopcodes prints it */
	bool indirect;                      /* a '*' operand: call/jmp through a register or memory */
	bool have_target;                   /* a direct branch target was decoded (insn->target) */
};

/* Decode BYTES at ADDR into INSN (cleared as ls_decode clears it) and P
 * when the instruction is one the fast decoder knows exactly; returns its
 * length, or 0 for "not handled" (INSN and P then hold garbage). */
size_t ls_x86_fast_decode(const uint8_t *bytes, size_t len, uint64_t addr, struct ls_insn *insn,
                          struct ls_x86_parsed *p);

/* The length, kind, direct target and opcode of BYTES at ADDR into INSN
 * (addr, len, kind, opcode, target; nops and writes 0) when it is one of
 * the common instructions decode_x86_flow.c knows; 0 otherwise. */
size_t ls_x86_flow_decode(const uint8_t *bytes, size_t len, uint64_t addr, struct ls_insn *insn);

/* ls_decode with one path only: libopcodes, or the fast decoder (0 when
 * it does not handle the bytes).  For the tests; the mnemonic is then
 * ls_decoder_mnemonic's. */
size_t ls_decode_opcodes(struct ls_decoder *d, const uint8_t *bytes, size_t len, uint64_t addr,
                         struct ls_insn *insn);
size_t ls_decode_fast_only(struct ls_decoder *d, const uint8_t *bytes, size_t len, uint64_t addr,
                           struct ls_insn *insn);

#endif
