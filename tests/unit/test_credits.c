/* Credit flow control state machines. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <semaphore.h>

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
	cr_assert_eq(rpcrdma_credits_client_outstanding(&c), 8);
	cr_assert_eq(rpcrdma_credits_client_release(&c), RPCRDMA_CREDIT_OK);
	cr_assert(rpcrdma_credits_client_acquire(&c, UINT32_MAX));
	cr_assert_not(rpcrdma_credits_client_acquire(&c, UINT32_MAX));
}

/*
 * The client's calls give credits back without the lock that acquires
 * hold: a release racing an acquire must neither lose a credit nor let
 * the outstanding count pass the grant.
 */
#define RACE_RELEASERS 4
#define RACE_ROUNDS    20000

struct credit_race {
	struct rpcrdma_credits_client c;
	pthread_mutex_t lock;
	sem_t taken;
	int release_failures;
};

static void *race_release(void *arg)
{
	struct credit_race *r = arg;

	for (int i = 0; i < RACE_ROUNDS; i++) {
		sem_wait(&r->taken);
		if (rpcrdma_credits_client_release(&r->c) != RPCRDMA_CREDIT_OK)
			__atomic_add_fetch(&r->release_failures, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

Test(credits, release_without_the_lock_races_acquire_safely)
{
	static struct credit_race r;
	pthread_t t[RACE_RELEASERS];
	uint32_t most = 0;

	rpcrdma_credits_client_init(&r.c, 8);
	rpcrdma_credits_client_grant(&r.c, 8);
	pthread_mutex_init(&r.lock, NULL);
	sem_init(&r.taken, 0, 0);
	for (int i = 0; i < RACE_RELEASERS; i++)
		pthread_create(&t[i], NULL, race_release, &r);
	for (int n = 0; n < RACE_RELEASERS * RACE_ROUNDS;) {
		pthread_mutex_lock(&r.lock);
		if (rpcrdma_credits_client_acquire(&r.c, UINT32_MAX)) {
			uint32_t now = rpcrdma_credits_client_outstanding(&r.c);

			most = now > most ? now : most;
			n++;
			sem_post(&r.taken);
		}
		pthread_mutex_unlock(&r.lock);
	}
	for (int i = 0; i < RACE_RELEASERS; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(r.release_failures, 0);
	cr_assert_eq(rpcrdma_credits_client_outstanding(&r.c), 0);
	cr_assert_leq(most, 8);
	cr_assert_eq(most, 8, "the releasers never fell behind: the race was not exercised");
	sem_destroy(&r.taken);
	pthread_mutex_destroy(&r.lock);
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
	cr_assert_eq(rpcrdma_credits_client_outstanding(&c), 0);
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
