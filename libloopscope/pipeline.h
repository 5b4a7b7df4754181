/* pipeline.h - the order of libloopscope's stages (pipeline.c). */
#ifndef LOOPSCOPE_PIPELINE_H
#define LOOPSCOPE_PIPELINE_H

#include "elf/module.h"

struct ls_decoder;

/* Every stage of ls_module_open on M (fresh, options set) for PATH: the
 * ELF file, the structure from the cache or from the analysis, the lookup
 * index.  -1 with ERR set (or not: api.c says "cannot be analyzed"). */
int ls_pipeline_open(ls_module *m, const char *path, ls_error *err);
/* The DWARF and symbol stages the analysis reads: inline tree, procedures,
 * line map (the unit tests run them alone). */
int ls_pipeline_indexes(ls_module *m, ls_error *err);
/* On demand: the line map's rows for the N procedures PROCS (indexes in
 * m->procs), read now; under the analysis lock, before they are analyzed. */
void ls_pipeline_want_lines(ls_module *m, const uint32_t *procs, size_t n);
/* The per-procedure stages on PROC, with this thread's decoder DEC (NULL:
 * no CFG, no loops) and arena: its proc scope, or NULL. */
struct ls_scope *ls_pipeline_proc(ls_module *m, const struct ls_proc *proc, struct ls_decoder *dec,
                                  struct ls_arena *arena);
/* LOOPSCOPE_TIMING: whether it is set; the time now; a stage of M done
 * (its time since *T0 printed when timing, *T0 moved on). */
bool ls_timing(void);
double ls_stage_clock(void);
void ls_stage_done(const ls_module *m, const char *stage, double *t0);
/* LOOPSCOPE_TIMING=stop:POINT: stops the process (SIGSTOP) at POINT, a
 * place that is no stage ("cache dir": the cache directory checked and
 * open, before an entry is read or written in it; tests/core-cache-swap.sh). */
void ls_stop_point(const char *point);

#endif
