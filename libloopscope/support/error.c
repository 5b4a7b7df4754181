/* error.c - errors returned as values, and warnings sent to the caller's
 * sink (stderr by default: escaped there, since warnings name files and
 * procedures from the binary, support/text_escape.h). */
#include "support/base.h"
#include "support/text_escape.h"

#include <stdio.h>
#include <string.h>

void ls_set_error(ls_error *err, ls_status code, const char *fmt, ...)
{
	if (!err)
		return;
	va_list ap;
	va_start(ap, fmt);
	err->code = code;
	vsnprintf(err->message, sizeof err->message, fmt, ap);
	va_end(ap);
}

void ls_warn(const ls_options *opt, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (opt && opt->warn) {
		opt->warn(opt->warn_ctx, msg);
	} else {
		flockfile(stderr);
		fputs("loopscope: warning: ", stderr);
		ls_text_fputs(msg, stderr);
		fputc('\n', stderr);
		funlockfile(stderr);
	}
}

void ls_warn_dwarf(const ls_options *opt, ls_error *err, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ls_warn(opt, "%s", msg);
	if (err && err->code == LS_OK)
		ls_set_error(err, LS_ERR_DWARF, "%s", msg);
}

void ls_note(const ls_options *opt, const char *fmt, ...)
{
	if (!opt || !opt->verbose)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (opt->warn) {
		opt->warn(opt->warn_ctx, msg);
	} else {
		flockfile(stderr);
		fputs("loopscope: ", stderr);
		ls_text_fputs(msg, stderr);
		fputc('\n', stderr);
		funlockfile(stderr);
	}
}
