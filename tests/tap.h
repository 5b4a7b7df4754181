/* tap.h - the TAP output every C unit test prints (one header, included by
 * each test's single .c file): ok(), skip(), and done_testing() for main's
 * return. */
#ifndef LOOPSCOPE_TAP_H
#define LOOPSCOPE_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int test_no, failed;

static void ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));
static void ok(int cond, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%s %d - ", cond ? "ok" : "not ok", ++test_no);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	if (!cond)
		failed++;
	fflush(stdout); /* keep TAP lines in order with the diagnostics of children */
}

static void __attribute__((unused)) skip(const char *why)
{
	printf("ok %d # SKIP %s\n", ++test_no, why);
}

/* The plan line; main returns this. */
static int __attribute__((unused)) done_testing(void)
{
	printf("1..%d\n", test_no);
	return failed ? 1 : 0;
}

#endif
