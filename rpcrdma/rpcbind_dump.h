/*
 * RPCBPROC_DUMP over a connected stream socket, bounded in time (one
 * deadline for writing the call and reading the reply) and in size.
 */
#ifndef RPCRDMA_RPCBIND_DUMP_H
#define RPCRDMA_RPCBIND_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include <rpc/rpc.h>
#include <rpc/rpcb_prot.h>

/* Wait for @events on @fd until @deadline (rpcrdma_now_ms): 0, -ETIMEDOUT, or -errno. */
int rpcrdma_fd_wait(int fd, short events, int64_t deadline);

/* The largest reply kept: rpcbind's whole list, some thousands of entries. */
#define RPCRDMA_RPCB_REPLY_MAX (1u << 20)

/*
 * rpcrdma_rpcb_dump - call RPCBPROC_DUMP (version 3, AUTH_NONE, @xid) on
 * @fd (a connected TCP socket, blocking or not) and decode the list.
 * Returns 0 with *@list (free it with xdr_free(xdr_rpcblist_ptr)) and
 * @err's re_status RPC_SUCCESS; on failure *@list is NULL and @err says
 * why: -ETIMEDOUT (@deadline, rpcrdma_now_ms, passed: RPC_TIMEDOUT),
 * -EMSGSIZE (a reply over RPCRDMA_RPCB_REPLY_MAX: RPC_CANTDECODERES),
 * -ECONNRESET (closed before the reply ended: RPC_CANTRECV), -EPROTO
 * (the reply does not decode, or is not a success: RPC_CANTDECODERES, or
 * what the reply said, as _seterr_reply), -ENOMEM, or the socket's error
 * (RPC_CANTSEND or RPC_CANTRECV).
 */
int rpcrdma_rpcb_dump(int fd, uint32_t xid, int64_t deadline, rpcblist_ptr *list,
		      struct rpc_err *err);

/*
 * rpcrdma_rpcb_dump_decode - the reply to a DUMP call of @xid, the @len
 * bytes of one whole record at @buf.  Returns 0 with *@list (as above),
 * or -EPROTO with *@list NULL and @err: RPC_CANTDECODERES (EPROTO) for
 * bytes that do not decode as such a reply, else what the reply said.
 */
int rpcrdma_rpcb_dump_decode(const char *buf, size_t len, uint32_t xid, rpcblist_ptr *list,
			     struct rpc_err *err);

#endif
