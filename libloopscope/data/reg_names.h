/* reg_names.h - which general registers DWARF names a variable (or a piece
 * of one) in, per instruction of a procedure (reg_names.c): the cheap test
 * ls_reg_origin_named asks at every instruction it passes, before the
 * accesses stage resolves the location at that PC for real. */
#ifndef LOOPSCOPE_DATA_REG_NAMES_H
#define LOOPSCOPE_DATA_REG_NAMES_H

#include "cfg/cfg.h"

#include <elfutils/libdw.h>

struct ls_reg_names;

/* From every location (list) of the variables and parameters in SUB's
 * concrete tree (lexical blocks and inlined calls included): for each
 * instruction of CFG, the registers some location entry covering it uses
 * as a whole location or a piece (DW_OP_regN, DW_OP_regx, DW_OP_bregN).
 * An over-approximation: the caller resolves the location itself. */
struct ls_reg_names *ls_reg_names_build(Dwarf_Die *sub, const struct ls_cfg *cfg);
/* Whether some location may name register REG (decode.h's number) at the
 * CFG's instruction INSN. */
bool ls_reg_names_may(const struct ls_reg_names *n, uint32_t insn, int reg);
void ls_reg_names_free(struct ls_reg_names *n);

#endif
