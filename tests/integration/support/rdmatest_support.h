/*
 * Shared pieces of the integration tests that use the rdmatest program
 * (tests/prog/rdmatest.x): its upper-layer binding, a server dispatch
 * that answers every procedure, the test data generators, listener
 * setup and small helpers.  Only rpcrdma/rpcrdma.h and libtirpc are used.
 */
#ifndef RDMATEST_SUPPORT_H
#define RDMATEST_SUPPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

#include "rdmatest.h"
#include "rdmatest_addr.h"
#include "rdmatest_verdict.h"
#include "rpcrdma/rpcrdma.h"

/*
 * The rdmatest upper-layer binding: WRITE's data is a read chunk, READ's a
 * write chunk; every procedure declares its largest reply (NULL's is empty).
 */
extern const struct rpcrdma_ulb rdmatest_ulb;

/* FNV-1a of @len bytes (WRITE's checksum). */
uint32_t rdmatest_fnv1a(const uint8_t *p, uint32_t len);

/* Byte @i of the data stream generated from @seed (READ, and the tests' payloads). */
uint8_t rdmatest_gen_byte(uint32_t seed, uint32_t i);

/* Word @i of the word stream generated from @seed (LONG_RES). */
uint32_t rdmatest_gen_word(uint32_t seed, uint32_t i);

/* A 32-bit integer hash (the tests' call mixes and payload sizes from a call's index). */
uint32_t rdmatest_mix(uint32_t x);

/* Fill @buf with @len bytes of the stream of @seed. */
void rdmatest_fill(uint8_t *buf, uint32_t len, uint32_t seed);

/* The argument and result XDR routines of @proc; false for NULL and unknown procedures. */
bool rdmatest_xdr_of(rpcproc_t proc, xdrproc_t *xa, xdrproc_t *xr);

/* Serves every rdmatest procedure as documented in rdmatest.x. */
void rdmatest_dispatch(struct svc_req *rq, SVCXPRT *xprt);

/*
 * rdmatest_dispatch_echo - rdmatest_dispatch, except that an ECHO's
 * decoded argument goes to @echo, which answers it (svc_sendreply) or
 * leaves it unanswered; the argument is freed after.
 */
void rdmatest_dispatch_echo(struct svc_req *rq, SVCXPRT *xprt,
			    void (*echo)(SVCXPRT *xprt, rdmatest_data *arg));

/*
 * rdmatest_listen - svc_rdma_create on @addr (port 0) with @o (may be
 * NULL) and svc_rdma_reg of the rdmatest program with @dispatch (NULL:
 * rdmatest_dispatch) and rdmatest_ulb.  Prints why on failure, prefixed
 * with @prog, and returns NULL.
 */
SVCXPRT *rdmatest_listen(const char *prog, const char *addr, const struct rpcrdma_options *o,
			 void (*dispatch)(struct svc_req *, SVCXPRT *));

/* Run svc_run() in a new detached thread; false (and a message) if it cannot start. */
bool rdmatest_start_server(const char *prog);

#define RDMATEST_MAX_ADDRS 4

/*
 * rdmatest_serve_addrs - for a test program run as PROG ADDR... (1 to
 * RDMATEST_MAX_ADDRS): line-buffered stdout, RLIMIT_MEMLOCK lifted, a
 * listener on each ADDR with @dispatch (rdmatest_listen), and then
 * svc_run() in its thread; each listener's port in @ports.  Returns the
 * number of addresses, -2 after printing the usage, or -1 after saying
 * what failed: main returns the negated value.
 */
int rdmatest_serve_addrs(const char *prog, int argc, char **argv,
			 void (*dispatch)(struct svc_req *, SVCXPRT *), unsigned int *ports);

/* Lift RLIMIT_MEMLOCK: siw charges memory registrations to it. */
void rdmatest_raise_memlock(void);

/* Monotonic time in seconds. */
double rdmatest_now(void);

/* clnt_call of NULL. */
enum clnt_stat rdmatest_call_null(CLIENT *cl, struct timeval tv);

/*
 * clnt_call of ECHO with the bytes of @text; on success *@same tells
 * whether the reply carried exactly those bytes (else it is false).
 */
enum clnt_stat rdmatest_call_echo_text(CLIENT *cl, const char *text, struct timeval tv, bool *same);

/*
 * clnt_call of READ for @count bytes of the stream of @seed; on success
 * *@same tells whether the reply carried exactly those bytes.
 */
enum clnt_stat rdmatest_call_read(CLIENT *cl, uint32_t count, uint32_t seed, struct timeval tv,
				  bool *same);

#endif
