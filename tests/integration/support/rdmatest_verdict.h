/*
 * The PASS and FAIL lines of the integration tests' programs, which the
 * .test scripts grep for.  Needs only libc, so the programs that link
 * nothing but the library use it too.
 */
#ifndef RDMATEST_VERDICT_H
#define RDMATEST_VERDICT_H

#include <stdbool.h>

/*
 * rdmatest_check - print "@prog: PASS: message" or "@prog: FAIL: message"
 * (flushed, so a crash later loses nothing) and return @ok.  Tests count
 * with it: #define check(ok, ...) (failures += !rdmatest_check(PROG, (ok), __VA_ARGS__))
 */
bool __attribute__((format(printf, 3, 4))) rdmatest_check(const char *prog, bool ok,
							   const char *fmt, ...);

/* rdmatest_fail - print "@prog: FAIL: message" and exit with status 1. */
void __attribute__((format(printf, 2, 3), noreturn)) rdmatest_fail(const char *prog,
								    const char *fmt, ...);

#endif
