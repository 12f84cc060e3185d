/*
 * CCP state for both peers.  Values from the peer are checked here and
 * nowhere else; a rejected reply or argument changes nothing.
 */
#include "cm-private/ccp_negotiation.h"
#include "xdr/minmax.h"
#include "xdr/names.h"

static const char *const status_names[] = {
	[RPCRDMA_CCP_OK] = "ok",
	[RPCRDMA_CCP_BAD_SENDSIZE] = "CCP inline size below 1024",
	[RPCRDMA_CCP_BAD_ALIGN] = "CCP alignment not a power of two up to 65536",
};

const char *rpcrdma_ccp_status_str(enum rpcrdma_ccp_status status)
{
	return RPCRDMA_NAME(status_names, status, "unknown CCP status");
}

void rpcrdma_ccp_client_init(struct rpcrdma_ccp_client *c)
{
	c->configured = false;
	c->inline_send = RPCRDMA_DEFAULT_INLINE;
	c->inline_recv = RPCRDMA_DEFAULT_INLINE;
	c->align = 0;
	c->max_rdma_reads = 0;
}

uint32_t rpcrdma_ccp_client_credit_cap(const struct rpcrdma_ccp_client *c)
{
	return c->configured ? UINT32_MAX : 1;
}

struct rpcrdma_config_req rpcrdma_ccp_client_request(const struct rpcrdma_ccp_local *local,
						      const struct rpcrdma_rd_depths *negotiated)
{
	struct rpcrdma_config_req req = {
		.maxcall_sendsize = local->send_size,
		.maxreply_sendsize = local->recv_size,
		.maxrdmaread = negotiated->ird,
	};
	return req;
}

static bool align_valid(uint32_t align)
{
	return align <= RPCRDMA_CCP_MAX_ALIGN && !(align & (align - 1));
}

enum rpcrdma_ccp_status rpcrdma_ccp_client_apply(struct rpcrdma_ccp_client *c,
						 const struct rpcrdma_ccp_local *local,
						 const struct rpcrdma_config_reply *rep,
						 const struct rpcrdma_rd_depths *negotiated,
						 const struct rpcrdma_inline_params *pd)
{
	if (rep->maxcall_sendsize < RPCRDMA_DEFAULT_INLINE)
		return RPCRDMA_CCP_BAD_SENDSIZE;
	if (!align_valid(rep->align))
		return RPCRDMA_CCP_BAD_ALIGN;
	c->inline_send = min_u32(local->send_size, rep->maxcall_sendsize);
	if (pd) /* the private data's sizes are guarantees, CCP's are not (RFC 8797 4.2) */
		c->inline_send = min_u32(c->inline_send, pd->send);
	c->inline_recv = pd ? min_u32(local->recv_size, pd->recv) : local->recv_size;
	c->align = rep->align;
	c->max_rdma_reads = min_u32(negotiated->ord, rep->maxrdmaread);
	c->configured = true;
	return RPCRDMA_CCP_OK;
}

void rpcrdma_ccp_client_fallback(struct rpcrdma_ccp_client *c,
				 const struct rpcrdma_inline_params *pd,
				 const struct rpcrdma_rd_depths *negotiated)
{
	c->inline_send = pd->send;
	c->inline_recv = pd->recv;
	c->align = 0;
	c->max_rdma_reads = negotiated->ord;
	c->configured = true;
}

struct rpcrdma_config_reply rpcrdma_ccp_server_reply(const struct rpcrdma_ccp_local *local,
						      const struct rpcrdma_rd_depths *negotiated)
{
	struct rpcrdma_config_reply rep = {
		.maxcall_sendsize = local->recv_size,
		.align = local->align,
		.maxrdmaread = negotiated->ird,
	};
	return rep;
}

enum rpcrdma_ccp_status rpcrdma_ccp_server_apply(const struct rpcrdma_ccp_local *local,
						 const struct rpcrdma_config_req *req,
						 const struct rpcrdma_inline_params *pd,
						 uint32_t *inline_send)
{
	uint32_t send;

	/* maxcall_sendsize limits only what the client sends: any value will do */
	if (req->maxreply_sendsize < RPCRDMA_DEFAULT_INLINE)
		return RPCRDMA_CCP_BAD_SENDSIZE;
	send = min_u32(local->send_size, req->maxreply_sendsize);
	*inline_send = pd ? min_u32(send, pd->send) : send;
	return RPCRDMA_CCP_OK;
}
