/*
 * The rdmatest program over libtirpc's own TCP transport, for tests that
 * expect the same of rpcrdma and of it: a TCP listener served by the
 * same svc_run() as the RDMA listener, a TCP CLIENT, and one round of
 * the procedures with their results checked, for either transport.
 */
#ifndef SIDE_BY_SIDE_H
#define SIDE_BY_SIDE_H

#include <stdbool.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

/*
 * rdmatest_tcp_listen - svc_vc_create on @addr (port 0) and svc_reg of
 * the rdmatest program with @dispatch (NULL: rdmatest_dispatch), without
 * rpcbind.  *@bound gets the address.  Returns false on any failure.
 */
bool rdmatest_tcp_listen(const char *addr, void (*dispatch)(struct svc_req *, SVCXPRT *),
			 struct sockaddr_storage *bound);

/* A libtirpc TCP CLIENT (clnt_vc_create) of the rdmatest program at @addr, or NULL. */
CLIENT *rdmatest_tcp_client(const struct sockaddr_storage *addr);

/*
 * rdmatest_check_procedures - through @cl: ECHO of 100 bytes and of
 * 64 KiB, WRITE and READ of RDMATEST_ROUND_BIG bytes, LONG_RES of 1000
 * words, each result checked and reported with rdmatest_check(@prog)
 * as "@label: ...".  Returns the number of failed checks; *@calls gets
 * the calls made.
 */
#define RDMATEST_ROUND_BIG 204800u
unsigned int rdmatest_check_procedures(const char *prog, CLIENT *cl, const char *label,
				       struct timeval tv, unsigned int *calls);

/*
 * rdmatest_check_threads - @threads threads share @cl (and its AUTH),
 * each making @calls ECHO calls of a text of its own; one check "@label:
 * ..." with rdmatest_check(@prog).  Returns 1 if any call failed or
 * returned other bytes, or a thread could not start; else 0.
 */
#define RDMATEST_THREADS_MAX 32
unsigned int rdmatest_check_threads(const char *prog, CLIENT *cl, const char *label, int threads,
				    int calls, struct timeval tv);

#endif
