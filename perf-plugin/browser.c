/* browser.c - placeholder */
#include "report.h"
int pl_browser(pl_report *rep) { (void)rep; return -1; }
int pl_browser_annotate(pl_report *rep, uint32_t proc) { (void)rep; (void)proc; return -1; }
