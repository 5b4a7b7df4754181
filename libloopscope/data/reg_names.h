/* reg_names.h - which variables' DWARF locations use which general
 * registers, per instruction of a procedure (reg_names.c): what
 * ls_reg_origin_named asks at every instruction it passes, so that the
 * accesses stage reads a location only where it may name the register. */
#ifndef LOOPSCOPE_DATA_REG_NAMES_H
#define LOOPSCOPE_DATA_REG_NAMES_H

#include "cfg/cfg.h"

#include <elfutils/libdw.h>

struct ls_reg_names;

/* One location (list) entry of a variable that uses registers. */
struct ls_reg_name {
	Dwarf_Off var;        /* the variable's (or parameter's) DIE */
	Dwarf_Off scope;      /* the DIE it is a child of: its scope */
	uint16_t regs;        /* bit N: decode.h's register N, whole, a piece, or a base (DW_OP_bregN) */
};

/* From every location (list) of the variables and parameters in SUB's
 * concrete tree (lexical blocks and inlined calls included), for each
 * instruction of CFG: the entries covering it that use a general
 * register.  An over-approximation: the caller reads the location. */
struct ls_reg_names *ls_reg_names_build(Dwarf_Die *sub, const struct ls_cfg *cfg);
/* Whether some location may use register REG (decode.h's number) at the
 * CFG's instruction INSN. */
bool ls_reg_names_may(const struct ls_reg_names *n, uint32_t insn, int reg);
/* The entries covering INSN (any register; in DIE order), *COUNT of them. */
const struct ls_reg_name *ls_reg_names_at(const struct ls_reg_names *n, uint32_t insn, size_t *count);
void ls_reg_names_free(struct ls_reg_names *n);

#endif
