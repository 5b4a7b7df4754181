/* record.h - `perf loops record`'s choice of call chains (record-mode.c),
 * used by cmd-record.c. */
#ifndef PL_RECORD_H
#define PL_RECORD_H

#include <stddef.h>
#include <stdint.h>

typedef struct pl_record_plan {
	char callgraph[64];     /* "--call-graph=fp" or "--call-graph=dwarf,N" */
	char why[1024];         /* the choice, and why, for stderr */
	int dwarf;              /* a stack copy is recorded: measure it after */
	uint64_t stack_size;
	char build_id[64];      /* the executable's, hex: the measured depth's key */
} pl_record_plan;

/* The call chains for running COMMAND, decided from its binaries: 0, or -1
 * when the command is not found (perf then says so). */
int pl_record_choose(const char *command, pl_record_plan *plan);
/* After a recording made as PLAN says, into DATA: the depth its samples
 * needed, said on stderr and kept for the next recording. */
void pl_record_measure(const pl_record_plan *plan, const char *data);

/* CMD as execvp finds it (a path with a '/' as it is, else the first
 * executable regular file of that name on $PATH), into BUF: 0, or -1 when
 * there is none.  Shared by record, stat and search. */
int pl_find_command(const char *cmd, char *buf, size_t len);

/* cmd-record.c: say how to see the recording after it (perf loops search,
 * which reads it itself, sets it to 0) */
extern int pl_record_hints;

#endif
