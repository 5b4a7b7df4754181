/* decode.h - the architecture-neutral view of one machine instruction.
 *
 * Everything architecture-specific (x86-64 today, aarch64 next) stays behind
 * this interface; decode_x86_fast.c decodes the common x86-64 instructions
 * by hand and decode_x86.c the rest with libopcodes.  A decoder is
 * not shared between threads: make one per thread.
 */
#ifndef LOOPSCOPE_DECODE_H
#define LOOPSCOPE_DECODE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

enum ls_insn_kind {
	LS_INSN_OTHER,     /* falls through */
	LS_INSN_JUMP,      /* unconditional direct jump */
	LS_INSN_CJUMP,     /* conditional direct jump (also loop/jrcxz) */
	LS_INSN_IJUMP,     /* indirect jump (jump table, tail call through pointer) */
	LS_INSN_CALL,      /* direct call */
	LS_INSN_ICALL,     /* indirect call */
	LS_INSN_RET,
	LS_INSN_HALT,      /* ud2, hlt, int3: no fall-through */
	LS_INSN_INVALID,   /* bytes that do not decode */
};

/* A memory or register operand, enough to recognize jump-table patterns. */
struct ls_operand {
	uint8_t kind;        /* LS_OP_NONE, LS_OP_REG, LS_OP_IMM, LS_OP_MEM */
	int8_t reg;          /* LS_OP_REG: register number (arch-defined), -1 none */
	int8_t base, index;  /* LS_OP_MEM: registers or -1; base LS_REG_RIP for rip-relative */
	uint8_t scale;
	uint8_t size;        /* operand size in bytes where known, else 0 */
	uint8_t seg;         /* LS_OP_MEM: segment-relative (%fs:0x28): DISP is no address */
	int64_t disp;        /* LS_OP_MEM displacement (resolved to an absolute address if rip-relative) */
	int64_t imm;         /* LS_OP_IMM */
};
enum { LS_OP_NONE, LS_OP_REG, LS_OP_IMM, LS_OP_MEM };
#define LS_REG_RIP 100

struct ls_insn {
	uint64_t addr;
	uint8_t len;
	uint8_t kind;              /* enum ls_insn_kind */
	uint8_t nops;
	uint16_t opcode;           /* decoder-defined mnemonic id (LS_MN_*), for pattern matching */
	uint16_t writes;           /* general registers it may write (bit N: register N), implicit
	                            * ones included (a call clobbers the caller-saved ones) */
	uint64_t target;           /* direct branch/call target, or 0 */
	struct ls_operand op[3];   /* AT&T order as libopcodes prints: source(s) first, destination last */
};

/* Mnemonics the CFG's jump-table and noreturn analysis looks at. */
enum {
	LS_MN_OTHER = 0, LS_MN_MOV, LS_MN_MOVSXD, LS_MN_MOVZX, LS_MN_LEA, LS_MN_ADD, LS_MN_SUB,
	LS_MN_CMP, LS_MN_JMP, LS_MN_JA, LS_MN_JAE, LS_MN_JB, LS_MN_JBE, LS_MN_NOP, LS_MN_ENDBR,
	LS_MN_CLTQ,        /* cltq (cdqe): sign-extends %eax into %rax, no operands */
	LS_MN_HLT,         /* hlt: the kernel's idle loops go on after it (cfg.c) */
	LS_MN_AND,         /* and: a mask bounds a jump table's index */
	LS_MN_VMOV,        /* a vector/FP register move (movaps, movsd, vmovdqu, ...): spills and copies */
	/* What the unwind recipes track (unwind/recipes.c): */
	LS_MN_PUSH,        /* push, pushq, pushf: SP -= 8 (op[0].size 2 for pushw) */
	LS_MN_POP,         /* pop, popq, popf: SP += 8 */
	LS_MN_LEAVE,       /* leave: SP = BP, then pop BP */
	LS_MN_ENTER,       /* enter $N,$L: push BP, BP = SP, SP -= N */
};

struct ls_decoder;
/* ELF e_machine -> decoder; NULL if the architecture is not supported. */
struct ls_decoder *ls_decoder_new(int e_machine);
void ls_decoder_free(struct ls_decoder *d);
/* Decode one instruction of BYTES (LEN available) at ADDR.  Returns its
 * length, or 0 when the bytes do not decode (insn->kind = LS_INSN_INVALID). */
size_t ls_decode(struct ls_decoder *d, const uint8_t *bytes, size_t len, uint64_t addr,
                 struct ls_insn *insn);
/* ls_decode for what only follows control flow (the noreturn proofs):
 * insn->addr, len, kind, opcode and target are ls_decode's, but for the
 * common instructions decode_x86_flow.c knows, nops and writes are 0,
 * op[] is not written and the mnemonic is "" (no operand is built);
 * elsewhere it is ls_decode. */
size_t ls_decode_flow(struct ls_decoder *d, const uint8_t *bytes, size_t len, uint64_t addr,
                      struct ls_insn *insn);
/* The mnemonic of the instruction ls_decode decoded last (AT&T, prefixes
 * dropped: "movl", "vmovsd"), for what decode.h does not classify: the
 * accesses stage's load/store and width (data/accesses.c). */
const char *ls_decoder_mnemonic(const struct ls_decoder *d);

#endif
