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
 * $DEBUGINFOD_URLS, into PATH: 0, or -1 when none is configured, the
 * client library is not installed, or no server has it.  libdebuginfod
 * (and its libcurl) is loaded only when a server is configured. */
int ls_debuginfod_find(const char *id, char *path, size_t size);
/* $DEBUGINFOD_URLS names a server. */
bool ls_debuginfod_configured(void);

#endif
