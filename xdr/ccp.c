/*
 * CONF_RDMA argument and result codecs, built on libtirpc's primitives.
 */
#include "xdr/ccp.h"

bool_t xdr_rpcrdma_config_req(XDR *xdrs, struct rpcrdma_config_req *req)
{
	return xdr_uint32_t(xdrs, &req->maxcall_sendsize) &&
	       xdr_uint32_t(xdrs, &req->maxreply_sendsize) &&
	       xdr_uint32_t(xdrs, &req->maxrdmaread);
}

bool_t xdr_rpcrdma_config_reply(XDR *xdrs, struct rpcrdma_config_reply *rep)
{
	return xdr_uint32_t(xdrs, &rep->maxcall_sendsize) &&
	       xdr_uint32_t(xdrs, &rep->align) &&
	       xdr_uint32_t(xdrs, &rep->maxrdmaread);
}

/* A read-only XDR memory stream over @buf (libtirpc takes a char *, and a u_int length). */
static void decode_stream(XDR *xdrs, const uint8_t *buf, size_t len)
{
	if (len > UINT32_MAX)
		len = UINT32_MAX;
	xdrmem_create(xdrs, (char *)(uintptr_t)buf, (u_int)len, XDR_DECODE);
}

/* The typed routines are called directly: a call through xdrproc_t's (XDR *, ...) would not match them. */
bool rpcrdma_config_req_decode(const uint8_t *buf, size_t len,
			       struct rpcrdma_config_req *req)
{
	XDR xdrs;
	bool ok;

	decode_stream(&xdrs, buf, len);
	ok = xdr_rpcrdma_config_req(&xdrs, req);
	xdr_destroy(&xdrs);
	return ok;
}

bool rpcrdma_config_reply_decode(const uint8_t *buf, size_t len,
				 struct rpcrdma_config_reply *rep)
{
	XDR xdrs;
	bool ok;

	decode_stream(&xdrs, buf, len);
	ok = xdr_rpcrdma_config_reply(&xdrs, rep);
	xdr_destroy(&xdrs);
	return ok;
}
