/* Credit flow control state machines. */
#include <criterion/criterion.h>

#include "rpcrdma/credits.h"

Test(credits, client_starts_with_one_credit_and_asks_for_its_slots)
{
	struct rpcrdma_credits_client c;

	rpcrdma_credits_client_init(&c, 32);
	cr_assert_eq(rpcrdma_credits_client_request(&c), 32);
	cr_assert(rpcrdma_credits_client_acquire(&c, UINT32_MAX));
	cr_assert_not(rpcrdma_credits_client_acquire(&c, UINT32_MAX));
}

Test(credits, client_never_exceeds_grant)
{
	struct rpcrdma_credits_client c;
	uint32_t n = 0;

	rpcrdma_credits_client_init(&c, 32);
	rpcrdma_credits_client_grant(&c, 8);
	while (rpcrdma_credits_client_acquire(&c, UINT32_MAX))
		n++;
	cr_assert_eq(n, 8);
	cr_assert_eq(c.outstanding, 8);
	cr_assert_eq(rpcrdma_credits_client_release(&c), RPCRDMA_CREDIT_OK);
	cr_assert(rpcrdma_credits_client_acquire(&c, UINT32_MAX));
	cr_assert_not(rpcrdma_credits_client_acquire(&c, UINT32_MAX));
}

Test(credits, lowered_grant_blocks_until_below)
{
	struct rpcrdma_credits_client c;

	rpcrdma_credits_client_init(&c, 16);
	rpcrdma_credits_client_grant(&c, 4);
	for (int i = 0; i < 4; i++)
		cr_assert(rpcrdma_credits_client_acquire(&c, UINT32_MAX));
	rpcrdma_credits_client_grant(&c, 2);
	rpcrdma_credits_client_release(&c);
	cr_assert_not(rpcrdma_credits_client_acquire(&c, UINT32_MAX));
	rpcrdma_credits_client_release(&c);
	rpcrdma_credits_client_release(&c);
	cr_assert(rpcrdma_credits_client_acquire(&c, UINT32_MAX));
}

Test(credits, zero_grant_is_one_and_large_grant_is_slots)
{
	struct rpcrdma_credits_client c;

	rpcrdma_credits_client_init(&c, 4);
	rpcrdma_credits_client_grant(&c, 0);
	cr_assert_eq(c.granted, 1);
	cr_assert(rpcrdma_credits_client_acquire(&c, UINT32_MAX));
	rpcrdma_credits_client_grant(&c, UINT32_MAX);
	cr_assert_eq(c.granted, 4);
}

Test(credits, ccp_cap_holds_one_call)
{
	struct rpcrdma_credits_client c;

	rpcrdma_credits_client_init(&c, 8);
	rpcrdma_credits_client_grant(&c, 8);
	cr_assert(rpcrdma_credits_client_acquire(&c, 1));
	cr_assert_not(rpcrdma_credits_client_acquire(&c, 1));
	cr_assert(rpcrdma_credits_client_acquire(&c, 0 /* counts as 1 */) == false);
	cr_assert(rpcrdma_credits_client_acquire(&c, UINT32_MAX));
}

Test(credits, reconnect_resets_to_one)
{
	struct rpcrdma_credits_client c;

	rpcrdma_credits_client_init(&c, 8);
	rpcrdma_credits_client_grant(&c, 8);
	cr_assert(rpcrdma_credits_client_acquire(&c, UINT32_MAX));
	cr_assert(rpcrdma_credits_client_acquire(&c, UINT32_MAX));
	rpcrdma_credits_client_reset(&c);
	cr_assert_eq(c.granted, 1);
	cr_assert_eq(c.outstanding, 0);
	cr_assert_eq(rpcrdma_credits_client_release(&c), RPCRDMA_CREDIT_NONE_OUTSTANDING);
}

Test(credits, zero_slots_count_as_one)
{
	struct rpcrdma_credits_client c;

	rpcrdma_credits_client_init(&c, 0);
	cr_assert_eq(rpcrdma_credits_client_request(&c), 1);
}

Test(credits, server_grant_bounds)
{
	struct rpcrdma_credits_server s;
	uint32_t g = 77;

	rpcrdma_credits_server_init(&s, 16);
	cr_assert_eq(rpcrdma_credits_server_grant(&s, 8, &g), RPCRDMA_CREDIT_NO_RECEIVES);
	cr_assert_eq(g, 77);
	rpcrdma_credits_server_posted(&s, 16);
	cr_assert_eq(rpcrdma_credits_server_grant(&s, 0, &g), RPCRDMA_CREDIT_OK);
	cr_assert_eq(g, 1, "never grants 0");
	cr_assert_eq(rpcrdma_credits_server_grant(&s, 1000, &g), RPCRDMA_CREDIT_OK);
	cr_assert_eq(g, 16);
	rpcrdma_credits_server_consumed(&s);
	rpcrdma_credits_server_consumed(&s);
	cr_assert_eq(rpcrdma_credits_server_grant(&s, 1000, &g), RPCRDMA_CREDIT_OK);
	cr_assert_eq(g, 16, "calls being served still count: their receives come back first");
	cr_assert_eq(rpcrdma_credits_server_grant(&s, 9, &g), RPCRDMA_CREDIT_OK);
	cr_assert_eq(g, 9, "never more than asked");
	rpcrdma_credits_server_posted(&s, 100);
	cr_assert_eq(s.posted, 16);
}

Test(credits, pipelined_client_against_server_never_overruns)
{
	struct rpcrdma_credits_client c;
	struct rpcrdma_credits_server s;
	uint32_t inflight = 0, g, fewest = UINT32_MAX;

	rpcrdma_credits_client_init(&c, 32);
	rpcrdma_credits_server_init(&s, 12);
	rpcrdma_credits_server_posted(&s, 12);
	for (int round = 0; round < 1000; round++) {
		while (rpcrdma_credits_client_acquire(&c, UINT32_MAX)) {
			cr_assert_gt(s.posted, 0, "a call arrived with no receive posted");
			rpcrdma_credits_server_consumed(&s);
			inflight++;
		}
		if (round >= 10 && inflight < fewest)
			fewest = inflight;
		/* The server answers one call, reposting its receive first. */
		rpcrdma_credits_server_posted(&s, 1);
		cr_assert_eq(rpcrdma_credits_server_grant(&s, rpcrdma_credits_client_request(&c), &g),
			     RPCRDMA_CREDIT_OK);
		rpcrdma_credits_client_grant(&c, g);
		rpcrdma_credits_client_release(&c);
		inflight--;
	}
	cr_assert_leq(inflight, 12);
	cr_assert_eq(fewest, 12, "once warmed up the client keeps every receive buffer in use");
}
