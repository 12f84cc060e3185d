/* CCP negotiation: the state before and after CONF_RDMA on both peers. */
#include <criterion/criterion.h>

#include "cm-private/ccp_negotiation.h"

static const struct rpcrdma_ccp_local client_local = { .send_size = 8192, .recv_size = 16384 };
static const struct rpcrdma_ccp_local server_local = { .send_size = 32768, .recv_size = 4096,
						       .align = 4096 };
static const struct rpcrdma_rd_depths client_rd = { .ird = 16, .ord = 4 };
static const struct rpcrdma_rd_depths server_rd = { .ird = 4, .ord = 16 };

Test(ccp_negotiation, before_the_reply_one_credit_and_1k)
{
	struct rpcrdma_ccp_client c;

	rpcrdma_ccp_client_init(&c);
	cr_assert_not(c.configured);
	cr_assert_eq(rpcrdma_ccp_client_credit_cap(&c), 1);
	cr_assert_eq(c.inline_send, 1024);
	cr_assert_eq(c.inline_recv, 1024);
	cr_assert_eq(c.max_rdma_reads, 0);
}

Test(ccp_negotiation, full_exchange)
{
	struct rpcrdma_ccp_client c;
	struct rpcrdma_config_req req = rpcrdma_ccp_client_request(&client_local, &client_rd);
	struct rpcrdma_config_reply rep;
	uint32_t server_send = 1024;

	cr_assert_eq(req.maxcall_sendsize, 8192);
	cr_assert_eq(req.maxreply_sendsize, 16384);
	cr_assert_eq(req.maxrdmaread, 16);
	cr_assert_eq(rpcrdma_ccp_server_apply(&server_local, &req, NULL, &server_send), RPCRDMA_CCP_OK);
	cr_assert_eq(server_send, 16384);
	rep = rpcrdma_ccp_server_reply(&server_local, &server_rd);
	cr_assert_eq(rep.maxcall_sendsize, 4096);
	cr_assert_eq(rep.align, 4096);
	cr_assert_eq(rep.maxrdmaread, 4);
	rpcrdma_ccp_client_init(&c);
	cr_assert_eq(rpcrdma_ccp_client_apply(&c, &client_local, &rep, &client_rd, NULL), RPCRDMA_CCP_OK);
	cr_assert(c.configured);
	cr_assert_eq(rpcrdma_ccp_client_credit_cap(&c), UINT32_MAX);
	cr_assert_eq(c.inline_send, 4096);
	cr_assert_eq(c.inline_recv, 16384);
	cr_assert_eq(c.align, 4096);
	cr_assert_eq(c.max_rdma_reads, 4);
}

Test(ccp_negotiation, private_data_still_caps_inline_replies)
{
	/* The server's private data said Send Size 2048: it sends no longer reply inline. */
	static const struct rpcrdma_inline_params pd = { .send = 4096, .recv = 2048 };
	struct rpcrdma_config_reply rep = { 65536, 0, 4 };
	struct rpcrdma_ccp_client c;

	rpcrdma_ccp_client_init(&c);
	cr_assert_eq(rpcrdma_ccp_client_apply(&c, &client_local, &rep, &client_rd, &pd),
		     RPCRDMA_CCP_OK);
	cr_assert_eq(c.inline_recv, 2048);
	cr_assert_eq(c.inline_send, 4096, "the private data's call size, below CCP's (RFC 8797 4.2)");
	rpcrdma_ccp_client_init(&c);
	cr_assert_eq(rpcrdma_ccp_client_apply(&c, &client_local, &rep, &client_rd, NULL),
		     RPCRDMA_CCP_OK);
	cr_assert_eq(c.inline_recv, 16384, "without private data our own buffers");
}

Test(ccp_negotiation, private_data_still_caps_the_servers_inline_replies)
{
	/* The client's private data said Receive Size 8192: CCP's 16384 does not raise it. */
	static const struct rpcrdma_inline_params pd = { .send = 8192, .recv = 4096 };
	struct rpcrdma_config_req req = rpcrdma_ccp_client_request(&client_local, &client_rd);
	struct rpcrdma_config_req small = { 8192, 2048, 4 };
	uint32_t send = 1024;

	cr_assert_eq(rpcrdma_ccp_server_apply(&server_local, &req, &pd, &send), RPCRDMA_CCP_OK);
	cr_assert_eq(send, 8192);
	cr_assert_eq(rpcrdma_ccp_server_apply(&server_local, &small, &pd, &send), RPCRDMA_CCP_OK);
	cr_assert_eq(send, 2048, "a smaller maxreply_sendsize lowers it below the private data's");
	cr_assert_eq(rpcrdma_ccp_server_apply(&server_local, &req, NULL, &send), RPCRDMA_CCP_OK);
	cr_assert_eq(send, 16384, "without private data CCP alone");
}

Test(ccp_negotiation, rdma_reads_never_exceed_negotiated_ord)
{
	struct rpcrdma_ccp_client c;
	struct rpcrdma_config_reply rep = { 65536, 0, 1000 };

	rpcrdma_ccp_client_init(&c);
	cr_assert_eq(rpcrdma_ccp_client_apply(&c, &client_local, &rep, &client_rd, NULL), RPCRDMA_CCP_OK);
	cr_assert_eq(c.max_rdma_reads, 4);
	cr_assert_eq(c.inline_send, 8192, "never more than our own send buffer");
	rep.maxrdmaread = 0;
	cr_assert_eq(rpcrdma_ccp_client_apply(&c, &client_local, &rep, &client_rd, NULL), RPCRDMA_CCP_OK);
	cr_assert_eq(c.max_rdma_reads, 0);
}

Test(ccp_negotiation, absurd_replies_change_nothing)
{
	static const struct rpcrdma_config_reply bad[] = {
		{ 0, 0, 1 }, { 1023, 0, 1 }, { 4096, 3, 1 }, { 4096, 131072, 1 }, { 4096, 0xffffffff, 1 },
	};
	static const enum rpcrdma_ccp_status why[] = {
		RPCRDMA_CCP_BAD_SENDSIZE, RPCRDMA_CCP_BAD_SENDSIZE, RPCRDMA_CCP_BAD_ALIGN,
		RPCRDMA_CCP_BAD_ALIGN, RPCRDMA_CCP_BAD_ALIGN,
	};

	for (size_t i = 0; i < 5; i++) {
		struct rpcrdma_ccp_client c;

		rpcrdma_ccp_client_init(&c);
		cr_assert_eq(rpcrdma_ccp_client_apply(&c, &client_local, &bad[i], &client_rd, NULL), why[i]);
		cr_assert_not(c.configured);
		cr_assert_eq(c.inline_send, 1024);
	}
}

Test(ccp_negotiation, server_rejects_absurd_requests)
{
	static const struct rpcrdma_config_req bad[] = { { 0, 0, 0 }, { 4096, 1023, 5 } };
	/* a maxcall_sendsize below 1024 limits only the client's own calls */
	static const struct rpcrdma_config_req small_calls = { 1023, 4096, 5 };
	uint32_t reply_send = 1024;

	cr_assert_eq(rpcrdma_ccp_server_apply(&server_local, &small_calls, NULL, &reply_send),
		     RPCRDMA_CCP_OK);
	cr_assert_eq(reply_send, 4096);
	for (size_t i = 0; i < 2; i++) {
		uint32_t send = 2048;

		cr_assert_eq(rpcrdma_ccp_server_apply(&server_local, &bad[i], NULL, &send),
			     RPCRDMA_CCP_BAD_SENDSIZE);
		cr_assert_eq(send, 2048);
	}
	struct rpcrdma_config_req huge = { UINT32_MAX, UINT32_MAX, UINT32_MAX };
	uint32_t send = 2048;

	cr_assert_eq(rpcrdma_ccp_server_apply(&server_local, &huge, NULL, &send), RPCRDMA_CCP_OK);
	cr_assert_eq(send, 32768);
}

Test(ccp_negotiation, fallback_uses_private_data)
{
	struct rpcrdma_ccp_client c;
	struct rpcrdma_inline_params pd = { 4096, 8192, true };

	rpcrdma_ccp_client_init(&c);
	rpcrdma_ccp_client_fallback(&c, &pd, &client_rd);
	cr_assert(c.configured);
	cr_assert_eq(c.inline_send, 4096);
	cr_assert_eq(c.inline_recv, 8192);
	cr_assert_eq(c.max_rdma_reads, 4);
	cr_assert_str_eq(rpcrdma_ccp_status_str(RPCRDMA_CCP_BAD_ALIGN),
			 "CCP alignment not a power of two up to 65536");
}
