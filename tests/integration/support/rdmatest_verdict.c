/* The integration tests' PASS and FAIL lines (rdmatest_verdict.h). */

#include "rdmatest_verdict.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void verdict_print(const char *prog, bool ok, const char *fmt, va_list ap)
{
	printf("%s: %s: ", prog, ok ? "PASS" : "FAIL");
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

bool rdmatest_check(const char *prog, bool ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verdict_print(prog, ok, fmt, ap);
	va_end(ap);
	return ok;
}

void rdmatest_fail(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verdict_print(prog, false, fmt, ap);
	va_end(ap);
	exit(1);
}
