/*
 * rpcbind for the RDMA netids.  libtirpc's rpcb_set() cannot convert an
 * RDMA address (its taddr2uaddr() knows only IP-over-socket netids), so
 * registration sends RPCBPROC_SET and RPCBPROC_UNSET itself, over the
 * local transport, with a universal address formatted in netconfig.c.
 * rpcbind answers RPCBPROC_GETADDR by the netid of the transport the
 * query arrived on, so lookups use RPCBPROC_DUMP and pick the entry by
 * program, version and netid.
 *
 * Every function returns 0 or a negative errno value and, on failure,
 * leaves libtirpc's rpc_createerr describing the RPC-level cause.
 */
#ifndef RPCRDMA_RPCBIND_H
#define RPCRDMA_RPCBIND_H

#include <sys/socket.h>

#include <rpc/rpc.h>

/*
 * rpcrdma_rpcb_set - register (@prog, @vers, @netid) at @addr with the
 * local rpcbind.  Returns 0, -EINVAL (not an RDMA netid or address),
 * -ECONNREFUSED (no rpcbind), -EACCES (rpcbind refused), -EIO.
 */
int rpcrdma_rpcb_set(rpcprog_t prog, rpcvers_t vers, const char *netid,
		     const struct sockaddr *addr);

/* Remove (@prog, @vers, @netid).  Same return values as rpcrdma_rpcb_set(). */
int rpcrdma_rpcb_unset(rpcprog_t prog, rpcvers_t vers, const char *netid);

/*
 * rpcrdma_rpcb_lookup - the address @host's rpcbind lists for
 * (@prog, @vers, @netid).  Returns 0, -ENOENT (not registered),
 * -EHOSTUNREACH (rpcbind on @host not reachable), -EINVAL, -EIO.
 */
int rpcrdma_rpcb_lookup(const char *host, rpcprog_t prog, rpcvers_t vers,
			const char *netid, struct sockaddr_storage *out);

#endif
