/* opcodes.h - libopcodes set up for a machine: what the CFG's decoder
 * (decode_x86.c) and the text disassembler (disasm.c) share. */
#ifndef LOOPSCOPE_OPCODES_H
#define LOOPSCOPE_OPCODES_H

#include <dis-asm.h>

/* Sets INFO up for E_MACHINE's code (an ELF e_machine) with libopcodes'
 * OPTIONS (objdump -M's, e.g. "intel"; NULL: none), printing through PRINTF
 * and STYLED into STREAM; the caller sets the buffer and may replace the
 * other callbacks.  Returns the print function, or NULL when libopcodes
 * has no disassembler for E_MACHINE.  Free with disassemble_free_target. */
disassembler_ftype ls_opcodes_init(disassemble_info *info, int e_machine, const char *options, void *stream,
                                   fprintf_ftype printf_fn, fprintf_styled_ftype styled_fn);

#endif
