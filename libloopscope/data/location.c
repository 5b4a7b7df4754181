/* location.c - the location-expression reader: DWARF location expressions
 * (single or from a location list) reduced to struct ls_loc (location.h).
 *
 * Only the shapes a memory operand can be matched against are recognized,
 * whole: an expression with anything after its one operation (a piece, an
 * arithmetic step) is LS_LOC_OTHER, so the accesses stage never names a
 * variable from a partial reading.  DW_OP_entry_value is LS_LOC_OTHER: its
 * register held the value at the call, not at this PC. */
#include "data/location.h"

#include <dwarf.h>
#include <string.h>

static bool is_reg_op(uint8_t atom) { return atom >= DW_OP_reg0 && atom <= DW_OP_reg31; }
static bool is_breg_op(uint8_t atom) { return atom >= DW_OP_breg0 && atom <= DW_OP_breg31; }

/* The first operation of a one- or two-operation expression. */
static void classify_first(const Dwarf_Op *op, struct ls_loc *out)
{
	uint8_t a = op->atom;
	if (a == DW_OP_addr || a == DW_OP_addrx || a == DW_OP_GNU_addr_index) {
		out->kind = LS_LOC_ADDR;
		out->off = (int64_t)op->number;
	} else if (a == DW_OP_fbreg) {
		out->kind = LS_LOC_FBREG;
		out->off = (int64_t)op->number;
	} else if (is_breg_op(a)) {
		out->kind = LS_LOC_BREG;
		out->reg = a - DW_OP_breg0;
		out->off = (int64_t)op->number;
	} else if (a == DW_OP_bregx) {
		out->kind = LS_LOC_BREG;
		out->reg = (int)op->number;
		out->off = (int64_t)op->number2;
	} else if (is_reg_op(a)) {
		out->kind = LS_LOC_REG;
		out->reg = a - DW_OP_reg0;
	} else if (a == DW_OP_regx) {
		out->kind = LS_LOC_REG;
		out->reg = (int)op->number;
	} else if (a == DW_OP_call_frame_cfa) {
		out->kind = LS_LOC_CFA;
	}
}

void ls_loc_classify(const Dwarf_Op *ops, size_t n, struct ls_loc *out)
{
	memset(out, 0, sizeof *out);
	out->kind = LS_LOC_OTHER;
	out->reg = -1;
	if (!ops || n == 0) {
		out->kind = LS_LOC_NONE;
		return;
	}
	if (n > 2)
		return;
	struct ls_loc first = { .kind = LS_LOC_OTHER, .reg = -1 };
	classify_first(&ops[0], &first);
	if (n == 1) {
		*out = first;
		return;
	}
	/* DW_OP_bregN off; DW_OP_stack_value: a pointer's value computed
	 * from a register (an inlined helper's parameter is often this). */
	if (first.kind == LS_LOC_BREG && ops[1].atom == DW_OP_stack_value) {
		*out = first;
		out->kind = LS_LOC_REG_VALUE;
	}
}

size_t ls_loc_pieces(const Dwarf_Op *ops, size_t n, struct ls_loc_piece *out, size_t cap)
{
	size_t count = 0, part = 0; /* part: where the current part's operations begin */
	uint64_t obj_off = 0;
	bool composite = false;
	for (size_t i = 0; ops && i < n; i++) {
		if (ops[i].atom != DW_OP_piece)
			continue;
		composite = true;
		if (count < cap) {
			ls_loc_classify(ops + part, i - part, &out[count].loc);
			out[count].obj_off = (int64_t)obj_off;
			out[count].size = ops[i].number;
		}
		count++;
		/* No object is 2^40 bytes: such pieces are corrupt, not read. */
		if (ops[i].number > LS_LOC_PIECE_MAX || obj_off > LS_LOC_PIECE_MAX)
			return 0;
		obj_off += ops[i].number;
		part = i + 1;
	}
	return composite ? count : 0;
}

bool ls_loc_at(Dwarf_Attribute *attr, uint64_t pc, struct ls_loc *out)
{
	Dwarf_Op *ops = NULL;
	size_t n = 0;
	/* One expression: dwarf_getlocation_addr returns it for any PC. */
	int k = dwarf_getlocation_addr(attr, pc, &ops, &n, 1);
	if (k <= 0 || n == 0) {
		ls_loc_classify(NULL, 0, out);
		return false;
	}
	ls_loc_classify(ops, n, out);
	out->ops = ops;
	out->nops = n;
	/* DW_OP_addrx (DWARF 5, clang): the operand indexes .debug_addr. */
	if (out->kind == LS_LOC_ADDR && ops[0].atom != DW_OP_addr) {
		Dwarf_Attribute addr_attr;
		Dwarf_Addr addr;
		if (dwarf_getlocation_attr(attr, &ops[0], &addr_attr) != 0 || dwarf_formaddr(&addr_attr, &addr) != 0) {
			out->kind = LS_LOC_OTHER;
			return true;
		}
		out->off = (int64_t)addr;
	}
	return true;
}
