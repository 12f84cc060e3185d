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

static bool decode_with(xdrproc_t proc, const uint8_t *buf, size_t len, void *out)
{
	XDR xdrs;
	bool ok;

	if (len > UINT32_MAX)
		len = UINT32_MAX;
	xdrmem_create(&xdrs, (char *)(uintptr_t)buf, (u_int)len, XDR_DECODE);
	ok = proc(&xdrs, out);
	xdr_destroy(&xdrs);
	return ok;
}

bool rpcrdma_config_req_decode(const uint8_t *buf, size_t len,
			       struct rpcrdma_config_req *req)
{
	return decode_with((xdrproc_t)xdr_rpcrdma_config_req, buf, len, req);
}

bool rpcrdma_config_reply_decode(const uint8_t *buf, size_t len,
				 struct rpcrdma_config_reply *rep)
{
	return decode_with((xdrproc_t)xdr_rpcrdma_config_reply, buf, len, rep);
}
