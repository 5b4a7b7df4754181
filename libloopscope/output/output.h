/* output.h - the writers (output_text.c, output_json.c,
 * output_xml.c): read m->root. */
#ifndef LOOPSCOPE_OUTPUT_H
#define LOOPSCOPE_OUTPUT_H

#include "elf/module.h"

/* output_*.c */
int ls_write_text(const ls_module *m, FILE *out, ls_error *err);
int ls_write_json(const ls_module *m, FILE *out, ls_error *err);
int ls_write_xml(const ls_module *m, FILE *out, ls_error *err);
/* Writes S as a JSON string (with quotes) to OUT. */
void ls_json_string(FILE *out, const char *s);

#endif
