/* CCP argument and result decoding, and what each peer does with them. */
#include <stdlib.h>
#include <string.h>

#include "cm-private/ccp_negotiation.h"
#include "xdr/ccp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void reencode(xdrproc_t proc, void *item, const uint8_t *data)
{
	uint8_t out[12];
	XDR x;

	xdrmem_create(&x, (char *)out, sizeof(out), XDR_ENCODE);
	if (!proc(&x, item) || memcmp(out, data, sizeof(out)))
		abort();
	xdr_destroy(&x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct rpcrdma_ccp_local local = { 8192, 8192, 64 };
	static const struct rpcrdma_rd_depths rd = { 4, 4 };
	static const struct rpcrdma_inline_params pd = { .send = 4096, .recv = 4096 };
	struct rpcrdma_config_req req;
	struct rpcrdma_config_reply rep;
	struct rpcrdma_ccp_client c;
	uint32_t send = 1024;

	if (rpcrdma_config_req_decode(data, size, &req)) {
		reencode((xdrproc_t)xdr_rpcrdma_config_req, &req, data);
		if (rpcrdma_ccp_server_apply(&local, &req, NULL, &send) == RPCRDMA_CCP_OK &&
		    (send < 1024 || send > local.send_size))
			abort();
		if (rpcrdma_ccp_server_apply(&local, &req, &pd, &send) == RPCRDMA_CCP_OK &&
		    (send < 1024 || send > pd.send))
			abort();
	}
	if (rpcrdma_config_reply_decode(data, size, &rep)) {
		reencode((xdrproc_t)xdr_rpcrdma_config_reply, &rep, data);
		rpcrdma_ccp_client_init(&c);
		if (rpcrdma_ccp_client_apply(&c, &local, &rep, &rd, NULL) == RPCRDMA_CCP_OK &&
		    (c.inline_send < 1024 || c.inline_send > local.send_size ||
		     c.max_rdma_reads > rd.ord))
			abort();
		if (rpcrdma_ccp_client_apply(&c, &local, &rep, &rd, NULL) != RPCRDMA_CCP_OK && c.configured)
			abort();
	}
	return 0;
}
