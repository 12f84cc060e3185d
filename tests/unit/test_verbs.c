/*
 * The verbs layer's pure parts: what a failed completion's status and an
 * rdma_cm event mean as an errno, and what ESTABLISHED takes from the accept.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <criterion/criterion.h>

#include "rpcrdma/verbs_internal.h"

Test(verbs, timeouts_left_are_clamped_not_overflowed)
{
	int64_t now = rpcrdma_now_ms();

	cr_assert_eq(rpcrdma_ms_left(now - 5), 0);
	cr_assert_eq(rpcrdma_ms_left(INT64_MAX), INT_MAX);
	cr_assert_eq(rpcrdma_ms_left(now + (int64_t)INT_MAX + 1000), INT_MAX);
	cr_assert_eq(resolve_timeout_ms(now - 5), 1, "never 0: rdma_cm would time out at once");
	cr_assert_eq(resolve_timeout_ms(now + INT_MAX), INT_MAX, "connect_timeout_ms INT_MAX");
	cr_assert_eq(resolve_timeout_ms(INT64_MAX), INT_MAX);
}

Test(verbs, wc_errno_names_the_cause)
{
	cr_assert_eq(rpcrdma_wc_errno(IBV_WC_SUCCESS), 0);
	cr_assert_eq(rpcrdma_wc_errno(IBV_WC_WR_FLUSH_ERR), ECONNRESET);
	cr_assert_eq(rpcrdma_wc_errno(IBV_WC_RETRY_EXC_ERR), ETIMEDOUT);
	cr_assert_eq(rpcrdma_wc_errno(IBV_WC_RESP_TIMEOUT_ERR), ETIMEDOUT);
	cr_assert_eq(rpcrdma_wc_errno(IBV_WC_RNR_RETRY_EXC_ERR), ENOBUFS);
	cr_assert_eq(rpcrdma_wc_errno(IBV_WC_REM_ACCESS_ERR), EACCES);
	cr_assert_eq(rpcrdma_wc_errno(IBV_WC_REM_OP_ERR), EREMOTEIO);
	cr_assert_eq(rpcrdma_wc_errno(IBV_WC_REM_INV_REQ_ERR), EREMOTEIO);
	cr_assert_eq(rpcrdma_wc_errno(IBV_WC_BAD_RESP_ERR), EPROTO);
	cr_assert_eq(rpcrdma_wc_errno(IBV_WC_LOC_LEN_ERR), EMSGSIZE);
	cr_assert_eq(rpcrdma_wc_errno(IBV_WC_LOC_PROT_ERR), EIO);
	cr_assert_eq(rpcrdma_wc_errno(IBV_WC_MW_BIND_ERR), EIO);
}

Test(verbs, wc_errno_of_every_failure_is_nonzero)
{
	for (int s = IBV_WC_LOC_LEN_ERR; s <= IBV_WC_TM_RNDV_INCOMPLETE; s++)
		cr_assert_neq(rpcrdma_wc_errno((enum ibv_wc_status)s), 0, "status %d", s);
	cr_assert_eq(rpcrdma_wc_errno((enum ibv_wc_status)1000), EIO);
}

Test(verbs, wc_failure_says_flush_means_the_queue_pair_went_down)
{
	cr_assert_str_eq(rpcrdma_wc_failure(IBV_WC_WR_FLUSH_ERR),
			 "the queue pair went down, its work requests flushed");
	cr_assert_str_eq(rpcrdma_wc_failure(IBV_WC_REM_ACCESS_ERR),
			 ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
}

static int cm_event(enum rdma_cm_event_type type, int status)
{
	struct rdma_cm_event ev = { .event = type, .status = status };

	return rpcrdma_cm_event_handle(NULL, &ev);
}

Test(verbs, cm_event_address_and_route_errors_keep_the_status)
{
	cr_assert_eq(cm_event(RDMA_CM_EVENT_ADDR_ERROR, -ENETUNREACH), -ENETUNREACH);
	cr_assert_eq(cm_event(RDMA_CM_EVENT_ROUTE_ERROR, -ETIMEDOUT), -ETIMEDOUT);
	cr_assert_eq(cm_event(RDMA_CM_EVENT_ADDR_ERROR, 0), -EHOSTUNREACH);
	cr_assert_eq(cm_event(RDMA_CM_EVENT_ROUTE_ERROR, 0), -EHOSTUNREACH);
}

/* Whatever the status: a reject reason, librdmacm's -1, siw's -EINVAL or its MPA timeout. */
Test(verbs, cm_event_failed_connect_is_refused_whatever_the_status)
{
	static const enum rdma_cm_event_type types[] = {
		RDMA_CM_EVENT_REJECTED, RDMA_CM_EVENT_UNREACHABLE, RDMA_CM_EVENT_CONNECT_ERROR,
	};
	static const int statuses[] = { 0, 28, -1, -EINVAL, -ETIMEDOUT, -ECONNRESET };

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
			cr_assert_eq(cm_event(types[t], statuses[i]), -ECONNREFUSED, "event %d status %d",
				     types[t], statuses[i]);
}

Test(verbs, cm_event_ends_or_lets_the_connection_proceed)
{
	cr_assert_eq(cm_event(RDMA_CM_EVENT_DISCONNECTED, 0), -ECONNRESET);
	cr_assert_eq(cm_event(RDMA_CM_EVENT_DEVICE_REMOVAL, 0), -ENODEV);
	cr_assert_eq(cm_event(RDMA_CM_EVENT_ADDR_CHANGE, 0), -ECONNRESET);
	cr_assert_eq(cm_event(RDMA_CM_EVENT_ADDR_RESOLVED, 0), 0);
	cr_assert_eq(cm_event(RDMA_CM_EVENT_ROUTE_RESOLVED, 0), 0);
	cr_assert_eq(cm_event(RDMA_CM_EVENT_CONNECT_REQUEST, 0), 0);
	cr_assert_eq(cm_event(RDMA_CM_EVENT_ESTABLISHED, 0), 0); /* the listener's (no endpoint) */
	cr_assert_eq(cm_event(RDMA_CM_EVENT_TIMEWAIT_EXIT, 0), 0);
}

/*
 * ESTABLISHED on an endpoint: no queue pair (so no verbs call), the
 * accept's private data and depths as rdma_cm presents them.
 */
struct established_case {
	struct rdma_cm_id id;
	struct rpcrdma_ep ep;
	uint8_t peer_pd[RPCRDMA_PD_BYTES];
	struct rdma_cm_event ev;
};

static void established_setup(struct established_case *c, enum ibv_transport_type transport,
			      uint8_t initiator_depth, uint8_t responder_resources)
{
	const struct rpcrdma_private_data peer = { .remote_invalidate = true, .send_size = 8192,
						   .recv_size = 2048 };

	memset(c, 0, sizeof(*c));
	c->ep.id = &c->id;
	c->ep.info.transport = transport;
	c->ep.info.dev = (struct rpcrdma_rd_limits){ .max_qp_rd_atom = 16, .max_qp_init_rd_atom = 16 };
	c->ep.rd_requested = (struct rpcrdma_rd_depths){ .ird = 8, .ord = 8 };
	c->ep.local_pd = (struct rpcrdma_private_data){ .remote_invalidate = true, .send_size = 4096,
							.recv_size = 4096 };
	cr_assert_eq(rpcrdma_private_data_encode(&peer, c->peer_pd), RPCRDMA_PD_OK);
	c->ev.event = RDMA_CM_EVENT_ESTABLISHED;
	c->ev.param.conn = (struct rdma_conn_param){
		.private_data = c->peer_pd,
		.private_data_len = sizeof(c->peer_pd),
		.initiator_depth = initiator_depth,
		.responder_resources = responder_resources,
	};
}

static void assert_established_as_peer_said(const struct established_case *c)
{
	cr_assert(c->ep.connected);
	cr_assert_eq(c->ep.info.peer_pd, RPCRDMA_PD_OK);
	cr_assert_eq(c->ep.info.inline_params.send, 2048); /* the peer receives 2048 */
	cr_assert_eq(c->ep.info.inline_params.recv, 4096); /* we receive 4096 */
	cr_assert(c->ep.info.inline_params.remote_invalidate);
	cr_assert_eq(c->ep.info.rd.ord, 4, "ORD %u: capped by the responder's IRD", c->ep.info.rd.ord);
	cr_assert_eq(c->ep.info.rd.ird, 2, "IRD %u: the responder's ORD", c->ep.info.rd.ird);
}

/* The responder (IRD 4, ORD 2): the IB CM turns the depths to our side. */
Test(verbs, established_takes_the_peers_private_data_and_depths_on_ib)
{
	struct established_case c;

	established_setup(&c, IBV_TRANSPORT_IB, 4, 2);
	cr_assert_eq(rpcrdma_cm_event_handle(&c.ep, &c.ev), 0);
	assert_established_as_peer_said(&c);
}

/* The same responder over iWARP: the MPA reply's depths, not turned. */
Test(verbs, established_takes_the_peers_private_data_and_depths_on_iwarp)
{
	struct established_case c;

	established_setup(&c, IBV_TRANSPORT_IWARP, 2, 4);
	cr_assert_eq(rpcrdma_cm_event_handle(&c.ep, &c.ev), 0);
	assert_established_as_peer_said(&c);
}

/* RFC 6581: a responder ORD beyond the Reads our device serves ends the connection. */
Test(verbs, established_with_a_responder_ord_beyond_the_device_is_a_protocol_error)
{
	struct established_case c;

	established_setup(&c, IBV_TRANSPORT_IB, 4, 17);
	cr_assert_eq(rpcrdma_cm_event_handle(&c.ep, &c.ev), -EPROTO);
	established_setup(&c, IBV_TRANSPORT_IWARP, 17, 4);
	cr_assert_eq(rpcrdma_cm_event_handle(&c.ep, &c.ev), -EPROTO);
	established_setup(&c, IBV_TRANSPORT_IB, 4, 16);
	cr_assert_eq(rpcrdma_cm_event_handle(&c.ep, &c.ev), 0);
	cr_assert_eq(c.ep.info.rd.ird, 16);
}

/* RFC 8797 section 5.1: a peer without private data gets the defaults. */
Test(verbs, established_without_private_data_uses_the_defaults)
{
	struct established_case c;

	established_setup(&c, IBV_TRANSPORT_IB, 4, 2);
	c.ev.param.conn.private_data = NULL;
	c.ev.param.conn.private_data_len = 0;
	cr_assert_eq(rpcrdma_cm_event_handle(&c.ep, &c.ev), 0);
	cr_assert_eq(c.ep.info.peer_pd, RPCRDMA_PD_ABSENT);
	cr_assert_eq(c.ep.info.inline_params.send, 1024);
	cr_assert_eq(c.ep.info.inline_params.recv, 1024);
	cr_assert_not(c.ep.info.inline_params.remote_invalidate);
}

/* The passive side learned the peer's data from the request: ESTABLISHED only marks it. */
Test(verbs, established_on_the_passive_side_changes_only_the_state)
{
	struct established_case c;

	established_setup(&c, IBV_TRANSPORT_IB, 4, 2);
	c.ep.passive = true;
	c.ep.info.rd = (struct rpcrdma_rd_depths){ .ird = 7, .ord = 7 };
	cr_assert_eq(rpcrdma_cm_event_handle(&c.ep, &c.ev), 0);
	cr_assert(c.ep.connected);
	cr_assert_eq(c.ep.info.rd.ird, 7);
	cr_assert_eq(c.ep.info.rd.ord, 7);
	cr_assert_eq(c.ep.info.inline_params.send, 0);
}

/*
 * A connection request on the passive side: an initiator with IRD 2 and
 * ORD 4 (rdma_cm presents its ORD as responder_resources), a server that
 * wants 8 and 8.
 */
static void request_take(enum ibv_transport_type transport, struct rpcrdma_ep *ep)
{
	const struct rpcrdma_private_data peer = { .remote_invalidate = true, .send_size = 8192,
						   .recv_size = 2048 };
	uint8_t pd[RPCRDMA_PD_BYTES];
	struct rdma_conn_param conn = {
		.private_data = pd,
		.private_data_len = sizeof(pd),
		.initiator_depth = 2,
		.responder_resources = 4,
	};

	cr_assert_eq(rpcrdma_private_data_encode(&peer, pd), RPCRDMA_PD_OK);
	memset(ep, 0, sizeof(*ep));
	ep->passive = true;
	ep->info.transport = transport;
	ep->info.dev = (struct rpcrdma_rd_limits){ .max_qp_rd_atom = 16, .max_qp_init_rd_atom = 16 };
	ep->params.rd = (struct rpcrdma_rd_depths){ .ird = 8, .ord = 8 };
	ep->local_pd = (struct rpcrdma_private_data){ .remote_invalidate = true, .send_size = 4096,
						      .recv_size = 4096 };
	rpcrdma_ep_take_request(ep, &conn);
	cr_assert_eq(ep->info.peer_pd, RPCRDMA_PD_OK);
	cr_assert_eq(ep->info.inline_params.send, 2048, "the initiator receives 2048");
	cr_assert_eq(ep->info.inline_params.recv, 4096, "we receive 4096");
	cr_assert(ep->info.inline_params.remote_invalidate);
	cr_assert_eq(ep->info.rd.ord, 2, "ORD %u: never above the initiator's IRD", ep->info.rd.ord);
}

Test(verbs, request_depths_on_ib_keep_our_ird_within_the_initiators_ord)
{
	struct rpcrdma_ep ep;

	request_take(IBV_TRANSPORT_IB, &ep);
	cr_assert_eq(ep.info.rd.ird, 4, "IRD %u: the IB CM makes it the initiator's ORD", ep.info.rd.ird);
}

Test(verbs, request_depths_on_iwarp_cover_the_initiators_ord)
{
	struct rpcrdma_ep ep;

	request_take(IBV_TRANSPORT_IWARP, &ep);
	cr_assert_eq(ep.info.rd.ird, 8, "IRD %u: ours, which covers the initiator's ORD 4",
		     ep.info.rd.ird);
}
