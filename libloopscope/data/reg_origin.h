/* reg_origin.h - where a base register's value comes from (reg_origin.c):
 * the accesses stage's rule for a register DWARF names no variable in. */
#ifndef LOOPSCOPE_DATA_REG_ORIGIN_H
#define LOOPSCOPE_DATA_REG_ORIGIN_H

#include "cfg/cfg.h"

struct ls_reg_origin {
	uint64_t addr;      /* the static address the register holds, less ADD */
	int64_t add;        /* what address arithmetic added to it */
	bool indexed;       /* plus an unknown multiple: an index or a pointer stepped in a loop */
	bool slot;          /* ADDR is a slot (the GOT's) holding the address: mov sym@GOTPCREL(%rip),%r */
};

/* Whether every definition of general register REG (decode.h's numbers)
 * that reaches instruction INSN of CFG gives it one static address: a
 * `lea sym(%rip)` or `mov $sym`, or a load from a RIP-relative slot (the
 * GOT's: OUT->slot, the caller reads what the slot holds), through copies (mov %r,%REG), address
 * arithmetic (lea k(%r,%i,s)) and steps (add/sub $k, lea k(%REG)), which
 * make it indexed.  False when any path reaches the entry, a call, a load
 * or anything else first. */
bool ls_reg_static_origin(const struct ls_cfg *cfg, uint32_t insn, int reg, struct ls_reg_origin *out);

#endif
