/* reg_origin.h - where a base register's value comes from (reg_origin.c):
 * the accesses stage's rule for a register DWARF names no variable in. */
#ifndef LOOPSCOPE_DATA_REG_ORIGIN_H
#define LOOPSCOPE_DATA_REG_ORIGIN_H

#include "cfg/cfg.h"

enum ls_reg_origin_kind {
	LS_ORIGIN_STATIC,   /* a static address: lea sym(%rip), mov $sym */
	LS_ORIGIN_LOAD,     /* a 64-bit load from memory: the pointer in a variable's field (or in the GOT) */
	LS_ORIGIN_ENTRY,    /* the register's value at the procedure's entry: a parameter's */
};

enum { LS_REG_ORIGIN_LOADS = 8 };

struct ls_reg_origin {
	enum ls_reg_origin_kind kind;
	uint64_t addr;      /* STATIC: the address the register holds, less ADD; LOAD with SLOT: the slot */
	uint32_t load[LS_REG_ORIGIN_LOADS]; /* LOAD: the loading instructions' indices in the CFG (with SLOT: the first path's) */
	unsigned nloads;    /* LOAD: how many: paths through copies of one load (tail duplication), which the
	                     * caller must find to read one variable's one field */
	int entry_reg;      /* ENTRY: the register (decode.h's number) whose entry value it is */
	int64_t add;        /* what address arithmetic added to it */
	bool indexed;       /* plus an unknown multiple: an index or a pointer stepped in a loop */
	bool stepped;       /* a step (add/sub $k, lea k(%REG)): the offset is known only modulo it */
	bool slot;          /* LOAD: from a RIP-relative slot (the GOT's, or a global pointer) */
};

/* Whether every definition of general register REG (decode.h's numbers)
 * that reaches instruction INSN of CFG gives it one origin: one static
 * address (`lea sym(%rip)`, `mov $sym`), one load (`mov k(%b,%i,s),%REG`:
 * up to LS_REG_ORIGIN_LOADS instructions, which the caller must show
 * read the same thing; or one RIP-relative slot however many loads read it),
 * or the entry value of one register (the paths reach the entry block's
 * top) - through copies (mov %r,%REG), address arithmetic (lea k(%r,%i,s),
 * which adds K) and steps (add/sub $k, lea k(%REG)), which make it
 * indexed.  False when the paths disagree, or any reaches a call or
 * anything else first. */
bool ls_reg_origin(const struct ls_cfg *cfg, uint32_t insn, int reg, struct ls_reg_origin *out);

/* How the caller names frame slots (it has the unwind recipes and the
 * DWARF): SLOT_OF gives memory operand MEM of instruction IN as an offset
 * from the CFA, or false when it is no frame slot (not SP- or BP-relative,
 * the recipe unknown).  With RELOAD, IN loads a register from it, and it
 * must also be a spill slot: no variable's location covers it at IN, and
 * the procedure never takes its address (lea). */
struct ls_slot_env {
	bool (*slot_of)(void *arg, const struct ls_insn *in, const struct ls_operand *mem, bool reload, int64_t *cfa_rel);
	void *arg;
};

/* ls_reg_origin, also through spill slots (ENV NULL: not): a reload `mov
 * slot,%REG` from a spill slot is a copy of the slot, whose definitions
 * reaching the reload must each be a spill `mov %r,slot` (8 bytes) of a
 * register, followed on as a copy of that register; any other write that
 * may overlap the slot (by SLOT_OF's naming: a narrower or arithmetic
 * store, a lea of it) and the answer is "unknown".  Writes through other
 * registers, and calls, are taken not to reach a spill slot: its address
 * never escapes. */
bool ls_reg_origin_env(const struct ls_cfg *cfg, uint32_t insn, int reg, const struct ls_slot_env *env,
                       struct ls_reg_origin *out);

#endif
