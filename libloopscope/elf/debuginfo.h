/* debuginfo.h - where debug information is (debuginfo.c): the separate
 * debug file of a module being opened, and the public search for a
 * build-id's, a kernel's or a kernel module's debug file. */
#ifndef LOOPSCOPE_DEBUGINFO_H
#define LOOPSCOPE_DEBUGINFO_H

#include "elf/module.h"

/* Whether the module has DWARF to read and where (m->dwarf_found,
 * m->debug_path), without reading it: called by ls_elf_open once m->elf,
 * m->dwmod and m->build_id are there. */
void ls_debuginfo_find(ls_module *m);

/* The debug file of build-id ID (hex) from the debuginfod servers of
 * $DEBUGINFOD_URLS, into PATH: 0, or one of these with the reason in WHY
 * ("debuginfod: no server has build-id ...", "debuginfod: server
 * unreachable (URL: Connection refused)").  With PROGRESS, a download
 * shows its progress on stderr when it is a terminal.  libdebuginfod (and
 * its libcurl) is loaded only when a server is configured. */
enum {
	LS_DEBUGINFOD_OFF = -1,     /* no server configured, or no client library */
	LS_DEBUGINFOD_MISSING = -2, /* the servers answered: none has it */
	LS_DEBUGINFOD_FAILED = -3,  /* no answer: unreachable, timed out, refused */
};
int ls_debuginfod_find(const char *id, char *path, size_t size, bool progress, char *why, size_t wsize);
/* $DEBUGINFOD_URLS names a server. */
bool ls_debuginfod_configured(void);

#endif
