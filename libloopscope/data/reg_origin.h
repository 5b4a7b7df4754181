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
	bool stepped;       /* a step (add/sub $k, lea k(%REG), sub %r): the offset is known only modulo it */
	bool reg_stepped;   /* one of them by a register (sub %r,%REG): by how much is not known */
	bool slot;          /* LOAD: from a RIP-relative slot (the GOT's, or a global pointer) */
};

/* Whether every definition of general register REG (decode.h's numbers)
 * that reaches instruction INSN of CFG gives it one origin: one static
 * address (`lea sym(%rip)`, `mov $sym`), one load (`mov k(%b,%i,s),%REG`:
 * up to LS_REG_ORIGIN_LOADS instructions, which the caller must show
 * read the same thing; or one RIP-relative slot however many loads read it),
 * or the entry value of one register (the paths reach the entry block's
 * top) - through copies (mov %r,%REG), address arithmetic (lea k(%r,%i,s),
 * which adds K) and steps (add/sub $k, lea k(%REG), sub %r,%REG with %r
 * another 64-bit register), which make it indexed.  False when the paths disagree, or any reaches a call or
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

/* ---- a value DWARF names at another PC (ls_reg_origin_named) ---- */

/* How the caller reads the DWARF for ls_reg_origin_named.  NAMED: whether
 * a variable's location (or one of its pieces) at the CFG's instruction
 * INSN, before it runs, is general register REG, one the caller's rules
 * resolve.  ALLOC_CALL: whether the call INSN is to an allocation function
 * (its result, a fresh block, in %rax). */
struct ls_name_env {
	bool (*named)(void *arg, uint32_t insn, int reg);
	bool (*alloc_call)(void *arg, uint32_t insn);
	/* Whether INSN sets its destination register to 0 (xor %r,%r): a null
	 * pointer, which no access of a defined execution goes through (the
	 * empty vector's path): such a path names nothing and contradicts
	 * nothing. */
	bool (*zeroes)(void *arg, uint32_t insn);
	void *arg;
};

enum ls_named_end_kind {
	LS_NAMED_AT,      /* DWARF names REG at INSN (before it runs), holding the value */
	LS_NAMED_LOAD,    /* INSN loads the value from memory: its operand 0 names it */
	LS_NAMED_STORE,   /* an allocation's result, stored by INSN into its operand 1 */
};

enum { LS_REG_NAMED_ENDS = 8 };

struct ls_reg_named {
	struct {
		enum ls_named_end_kind kind;
		uint32_t insn;
		int reg;
	} end[LS_REG_NAMED_ENDS];
	unsigned nends;
	bool alloc;         /* some path's value is an allocation's result, named where it is put */
	bool stepped;       /* some path steps it (as ls_reg_origin's steps) after it is named */
};

/* When ls_reg_origin_env finds no origin: whether on every path reaching
 * instruction INSN the value of REG is one DWARF names elsewhere, which
 * the caller must show is one variable's one field.  Backwards from INSN
 * (through register copies, and steps as ls_reg_origin's, which set
 * STEPPED: then the value is the named one's plus an unknown amount), a path ends at the first instruction
 * before which DWARF names the register holding it (LS_NAMED_AT: gcc ends
 * a location list where the value still lives on), or at a 64-bit load of
 * it (LS_NAMED_LOAD); or at a call of an allocation function that
 * returned it: then forwards from the call, over every path, to the first
 * place the block is put: a register DWARF names (LS_NAMED_AT) or a
 * store into memory that is not a spill slot (LS_NAMED_STORE) - the block
 * is named by the variable it is stored into, as the blame seed's
 * `@(s.i) = malloc(4)` is.  Forward paths that lose the value unnamed end
 * without a name, and so do backward paths that reach a zeroing of the
 * register (ZEROES); at least one path must name it.  Any other definition, the
 * procedure's entry, more than LS_REG_NAMED_ENDS ends: false. */
bool ls_reg_origin_named(const struct ls_cfg *cfg, uint32_t insn, int reg, const struct ls_slot_env *slots,
                         const struct ls_name_env *env, struct ls_reg_named *out);

#endif
