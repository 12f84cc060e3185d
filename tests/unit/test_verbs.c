/*
 * The verbs layer's pure parts: what a failed completion's status and an
 * rdma_cm event mean as an errno.
 */
#include <errno.h>

#include <criterion/criterion.h>

#include "rpcrdma/verbs_internal.h"

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
	cr_assert_eq(cm_event(RDMA_CM_EVENT_DEVICE_REMOVAL, 0), -ECONNRESET);
	cr_assert_eq(cm_event(RDMA_CM_EVENT_ADDR_CHANGE, 0), -ECONNRESET);
	cr_assert_eq(cm_event(RDMA_CM_EVENT_ADDR_RESOLVED, 0), 0);
	cr_assert_eq(cm_event(RDMA_CM_EVENT_ROUTE_RESOLVED, 0), 0);
	cr_assert_eq(cm_event(RDMA_CM_EVENT_CONNECT_REQUEST, 0), 0);
	cr_assert_eq(cm_event(RDMA_CM_EVENT_ESTABLISHED, 0), 0); /* the listener's (no endpoint) */
	cr_assert_eq(cm_event(RDMA_CM_EVENT_TIMEWAIT_EXIT, 0), 0);
}
