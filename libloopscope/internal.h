/* internal.h - the data that flows between libloopscope's stages.
 *
 * One stage per file, one header per stage; each stage owns one part of
 * struct ls_module (module.h), and pipeline.c runs them in order, saying
 * what each reads and makes:
 *
 *   module.c       open the ELF with libdwfl, find debug info      -> elf, dwfl, text   module.h
 *   relocate.c     relocations of a .o/.ko applied to its code     -> text, ext         relocate.h
 *   elf_file.c     the public ls_file: build-id, PT_LOAD, sections, symbols (no analysis)
 *   inline_tree.c  DW_TAG_inlined_subroutine trees, address-indexed -> inl              inline_tree.h
 *   procs.c        procedures from DWARF subprograms and symbols   -> procs             procs.h
 *   linemap.c      the sanitized line table of every CU            -> lines             linemap.h
 *   symbols.c      the symbol table by name and address (on first use) -> symindex      symbols.h
 *   decode_x86.c   instruction decoding with libopcodes                                  decode.h
 *   cfg.c          one CFG per procedure (with eh_frame.c, jump_tables.c, noreturn.c;
 *                  per proc, transient)                                                  cfg.h
 *   loop_forest.c  Havlak loop nesting forest, irreducible loops    (per proc, transient) loop_forest.h
 *   structure.c    places every instruction: proc > inline/alien > loop > stmt          structure.h
 *   normalize.c    coalesces, merges and prunes the scope tree                           structure.h
 *   analyze.c      runs the per-procedure stages on N threads      -> root              analyze.h
 *   pipeline.c     the order of all the stages above                                     pipeline.h
 *   scope.c        the scope tree: nodes, ranges, accessors                              scope.h
 *   lookup.c       address -> statement index                      -> lookup            lookup.h
 *   check.c        the invariants of the indexes and the tree                            check.h
 *   cache.c        saves and loads the scope tree, keyed by build-id                     cache.h
 *   output_*.c     text, JSON and HPCToolkit XML writers                                 output.h
 *   base.h         what they all use: errors, memory, strings, files, threads, progress
 *
 * Nothing declared here is exported: the stages are compiled with
 * -fvisibility=hidden and libloopscope.so exports loopscope.h alone
 * (libloopscope/loopscope.map).  The unit tests link the stages directly, from the
 * convenience library libloopscope-internal.la.
 */
#ifndef LOOPSCOPE_INTERNAL_H
#define LOOPSCOPE_INTERNAL_H

/* One header per stage; this one includes them all, for the files that
 * read most of the module (and the unit tests). */
#include "base.h"
#include "scope.h"
#include "relocate.h"
#include "procs.h"
#include "symbols.h"
#include "linemap.h"
#include "inline_tree.h"
#include "lookup.h"
#include "module.h"
#include "check.h"
#include "analyze.h"
#include "cache.h"
#include "output.h"
#include "pipeline.h"

#endif
