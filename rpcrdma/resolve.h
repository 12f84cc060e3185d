/*
 * Host name resolution bounded by a deadline.  getaddrinfo() has no
 * timeout of its own (a DNS server that does not answer costs the
 * resolver's timeout times its attempts, 10 s by default, per lookup);
 * a name that is not a numeric address is resolved on a thread of its
 * own, waited for until the deadline and then left to finish and free
 * itself.  Not glibc's getaddrinfo_a: its worker pool does not survive
 * fork (a child's request can wait forever on a worker that exists only
 * in the parent).  Lookups left running so are capped: a program that
 * keeps looking up names no DNS server answers for holds about
 * RPCRDMA_RESOLVE_LEFT_MAX such threads (the count is checked before a
 * lookup starts and raised when its caller gives up, so concurrent
 * callers may pass it by their number), each until its resolver gives up,
 * besides the threads of lookups still waited for.
 */
#ifndef RPCRDMA_RESOLVE_H
#define RPCRDMA_RESOLVE_H

#include <netdb.h>
#include <stdint.h>

#define RPCRDMA_RESOLVE_LEFT_MAX 16u

/* getaddrinfo(3) or a stand-in with its contract (unit tests); freeaddrinfo frees its lists. */
typedef int rpcrdma_getaddrinfo_fn(const char *host, const char *service,
				   const struct addrinfo *hints, struct addrinfo **res);

/*
 * rpcrdma_resolve_by - @resolver(@host, @service, @hints) until @deadline
 * (rpcrdma_now_ms).  A numeric @host is resolved at once, in the caller.
 * Returns 0 with the list in *@out (free it with freeaddrinfo), or:
 *   -EADDRNOTAVAIL  @host or @service does not resolve (EAI_NONAME,
 *                   EAI_NODATA, EAI_FAIL, ...)
 *   -ETIMEDOUT      no answer by @deadline (the lookup finishes on its own)
 *   -EAGAIN         a temporary failure (EAI_AGAIN), or no thread to be had:
 *                   none could be created, or RPCRDMA_RESOLVE_LEFT_MAX
 *                   lookups whose callers gave up are still running
 *   -ENOMEM, or the resolver's errno for EAI_SYSTEM
 */
int rpcrdma_resolve_by(rpcrdma_getaddrinfo_fn *resolver, const char *host, const char *service,
		       const struct addrinfo *hints, int64_t deadline, struct addrinfo **out);

/* rpcrdma_resolve_by with getaddrinfo(3). */
int rpcrdma_resolve(const char *host, const char *service, const struct addrinfo *hints,
		    int64_t deadline, struct addrinfo **out);

/* In a fork child: the lookups left running are the parent's. */
void rpcrdma_resolve_forked(void);

#endif
