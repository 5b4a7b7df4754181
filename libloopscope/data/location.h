/* location.h - the location-expression reader (location.c): what a DWARF
 * location expression says about where a variable is at one PC, reduced to
 * the few shapes the accesses stage (accesses.c) can match against a
 * memory operand.  Everything else is LS_LOC_OTHER: never guessed. */
#ifndef LOOPSCOPE_DATA_LOCATION_H
#define LOOPSCOPE_DATA_LOCATION_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ls_loc_kind {
	LS_LOC_NONE,     /* no location at this PC (optimized out there) */
	LS_LOC_ADDR,     /* in memory at a static address (DW_OP_addr[x]) */
	LS_LOC_FBREG,    /* in memory at frame base + off (DW_OP_fbreg) */
	LS_LOC_BREG,     /* in memory at register + off (DW_OP_bregN) */
	LS_LOC_REG,      /* its value is in a register (DW_OP_regN, DW_OP_regx) */
	LS_LOC_REG_VALUE,/* its value is register + off (DW_OP_bregN off; DW_OP_stack_value) */
	LS_LOC_CFA,      /* the frame base only: the CFA (DW_OP_call_frame_cfa) */
	LS_LOC_OTHER,    /* a piece, an entry value, arithmetic: not matched */
};

struct ls_loc {
	enum ls_loc_kind kind;
	int reg;         /* DWARF register number (x86-64: 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8..15) */
	int64_t off;     /* FBREG, BREG, REG_VALUE: the offset; ADDR: the address */
	const Dwarf_Op *ops; /* the whole expression (libdw's, as long as the Dwarf): */
	size_t nops;         /* ls_loc_pieces reads a composite's (LS_LOC_OTHER) */
};

enum { LS_LOC_PIECE_MAX_BITS = 40 };
#define LS_LOC_PIECE_MAX (1ull << LS_LOC_PIECE_MAX_BITS)

/* One piece of a composite location (DW_OP_piece): the object's bytes
 * [obj_off, obj_off + size) are where LOC says. */
struct ls_loc_piece {
	struct ls_loc loc;
	int64_t obj_off;
	uint64_t size;
};
/* The pieces of OPS[0..N) (a composite: DW_OP_piece after each part; an
 * empty part is optimized out), the first CAP in OUT; returns how many
 * there are, 0 when OPS is not a composite (or has a piece of
 * LS_LOC_PIECE_MAX bytes or more: corrupt). */
size_t ls_loc_pieces(const Dwarf_Op *ops, size_t n, struct ls_loc_piece *out, size_t cap);

/* Classifies the expression OPS[0..N): a pure function of its operations,
 * the fuzzed half of the reader (tests/fuzz-data.c). */
void ls_loc_classify(const Dwarf_Op *ops, size_t n, struct ls_loc *out);
/* The location of ATTR (DW_AT_location, DW_AT_frame_base) at PC: a single
 * expression or the location-list entry covering PC.  False when ATTR has
 * no location there (OUT->kind LS_LOC_NONE). */
bool ls_loc_at(Dwarf_Attribute *attr, uint64_t pc, struct ls_loc *out);

#endif
