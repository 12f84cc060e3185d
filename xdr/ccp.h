/*
 * XDR for the Connection Configuration Protocol (RFC 5666 section 6,
 * program 100417 version 1, procedure CONF_RDMA).  The routines are
 * ordinary xdrproc_t, so clnt_call() and svc_getargs() use them as they
 * would rpcgen output.
 */
#ifndef RPCRDMA_XDR_CCP_H
#define RPCRDMA_XDR_CCP_H

#include <rpc/rpc.h>

#include "xdr/wire.h"

#define RPCRDMA_CCP_REQ_BYTES   12u
#define RPCRDMA_CCP_REPLY_BYTES 12u

bool_t xdr_rpcrdma_config_req(XDR *xdrs, struct rpcrdma_config_req *req);
bool_t xdr_rpcrdma_config_reply(XDR *xdrs, struct rpcrdma_config_reply *rep);

/*
 * Decode one CONF_RDMA argument or result from a buffer with a memory
 * XDR stream.  Return true when @len held a whole item; trailing bytes
 * are left alone, as XDR streams do.
 */
bool rpcrdma_config_req_decode(const uint8_t *buf, size_t len,
			       struct rpcrdma_config_req *req);
bool rpcrdma_config_reply_decode(const uint8_t *buf, size_t len,
				 struct rpcrdma_config_reply *rep);

#endif
