/*
 * rpcbind for the RDMA netids.  libtirpc's rpcb_set() cannot convert an
 * RDMA address (its taddr2uaddr() knows only IP-over-socket netids), so
 * registration sends RPCBPROC_SET and RPCBPROC_UNSET itself, over the
 * local transport, with a universal address formatted in netconfig.c.
 * rpcbind answers RPCBPROC_GETADDR by the netid of the transport the
 * query arrived on, so lookups use RPCBPROC_DUMP and pick the entry by
 * program, version and netid.  A service listening on the wildcard
 * address is registered as such; a lookup puts the host's address in
 * its place, as rpcbind's GETADDR does for TCP and UDP.
 *
 * Every function returns 0 or a negative errno value; when rpcbind was
 * not reached, the call failed or found nothing, libtirpc's rpc_createerr
 * describes the RPC-level cause (an invalid argument and rpcbind's
 * refusal of a SET or UNSET leave it as it was).
 */
#ifndef RPCRDMA_RPCBIND_H
#define RPCRDMA_RPCBIND_H

#include <sys/socket.h>

#include <rpc/rpc.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * rpcrdma_rpcb_set - register (@prog, @vers, @netid) at @addr with the
 * local rpcbind.  Returns 0, -EINVAL (not an RDMA netid or address),
 * -ECONNREFUSED (no rpcbind), -EACCES (rpcbind refused), -EIO.
 */
int rpcrdma_rpcb_set(rpcprog_t prog, rpcvers_t vers, const char *netid,
		     const struct sockaddr *addr);

/* Remove (@prog, @vers, @netid).  Same return values as rpcrdma_rpcb_set(). */
int rpcrdma_rpcb_unset(rpcprog_t prog, rpcvers_t vers, const char *netid);

/* The time rpcrdma_rpcb_lookup() gives a lookup, connect and call together. */
#define RPCRDMA_RPCB_TIMEOUT_MS 10000

/*
 * rpcrdma_rpcb_lookup_timed - the address @host's rpcbind lists for
 * (@prog, @vers, @netid), asked over TCP on port 111 (the addresses of
 * the netid's family first) and answered within @timeout_ms (the
 * connect and the RPCBPROC_DUMP call together, its reply at most 1 MiB;
 * resolving @host is not bounded); a wildcard address becomes the address that rpcbind
 * answered on or, in the other family, @host's first address of the
 * netid's family.  Returns 0, -ENOENT (not registered), -EHOSTUNREACH
 * (rpcbind on @host not reached: rpc_createerr RPC_UNKNOWNHOST, or
 * RPC_SYSTEMERROR with the connect error, ETIMEDOUT at the deadline),
 * -EADDRNOTAVAIL (a wildcard registration and @host has no address of
 * the netid's family: RPC_UNKNOWNHOST), -EINVAL (not an RDMA netid,
 * @timeout_ms not positive, an unparsable registered address), -EIO
 * (the call failed: RPC_PMAPFAILURE, cf_error RPC_TIMEDOUT at the
 * deadline, RPC_CANTDECODERES for a reply too large or undecodable).
 */
int rpcrdma_rpcb_lookup_timed(const char *host, rpcprog_t prog, rpcvers_t vers,
			      const char *netid, int timeout_ms, struct sockaddr_storage *out);

/* rpcrdma_rpcb_lookup_timed() with RPCRDMA_RPCB_TIMEOUT_MS. */
int rpcrdma_rpcb_lookup(const char *host, rpcprog_t prog, rpcvers_t vers,
			const char *netid, struct sockaddr_storage *out);

/*
 * rpcrdma_rpcb_merge - when @addr is the wildcard address of its
 * family, replace its address (not its port) with @host's.  Returns 0
 * (merged, or @addr is no wildcard: unchanged), or -EAFNOSUPPORT when
 * @addr is a wildcard and @host is NULL or of another family (@addr
 * unchanged).
 */
int rpcrdma_rpcb_merge(struct sockaddr_storage *addr, const struct sockaddr *host);

#ifdef __cplusplus
}
#endif

#endif
