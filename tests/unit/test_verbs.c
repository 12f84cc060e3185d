/* The verbs layer's pure parts: what a failed completion's status means as an errno. */
#include <errno.h>

#include <criterion/criterion.h>

#include "rpcrdma/verbs.h"

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
