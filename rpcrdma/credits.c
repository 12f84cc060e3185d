/*
 * Credit accounting for both peers; no locking here, callers hold the
 * lock of the connection the credits belong to, except that a client
 * call may give its credit back without it: `outstanding` is read and
 * written atomically, and only a release can lower it, so an acquire
 * that found room still has it when it takes the credit.
 */
#include "rpcrdma/credits.h"
#include "xdr/minmax.h"
#include "xdr/names.h"

static const char *const status_names[] = {
	[RPCRDMA_CREDIT_OK] = "ok",
	[RPCRDMA_CREDIT_NONE_OUTSTANDING] = "no call outstanding",
	[RPCRDMA_CREDIT_NO_RECEIVES] = "no receive posted",
};

const char *rpcrdma_credit_status_str(enum rpcrdma_credit_status status)
{
	return RPCRDMA_NAME(status_names, status, "unknown credit status");
}

static uint32_t at_least_one(uint32_t v)
{
	return v ? v : 1;
}

void rpcrdma_credits_client_init(struct rpcrdma_credits_client *c, uint32_t slots)
{
	c->slots = at_least_one(slots);
	rpcrdma_credits_client_reset(c);
}

uint32_t rpcrdma_credits_client_request(const struct rpcrdma_credits_client *c)
{
	return c->slots;
}

uint32_t rpcrdma_credits_client_outstanding(const struct rpcrdma_credits_client *c)
{
	return __atomic_load_n(&c->outstanding, __ATOMIC_SEQ_CST);
}

bool rpcrdma_credits_client_acquire(struct rpcrdma_credits_client *c, uint32_t cap)
{
	if (rpcrdma_credits_client_outstanding(c) >= min_u32(c->granted, at_least_one(cap)))
		return false;
	__atomic_add_fetch(&c->outstanding, 1, __ATOMIC_SEQ_CST);
	return true;
}

enum rpcrdma_credit_status rpcrdma_credits_client_release(struct rpcrdma_credits_client *c)
{
	uint32_t n = rpcrdma_credits_client_outstanding(c);

	do
		if (!n)
			return RPCRDMA_CREDIT_NONE_OUTSTANDING;
	while (!__atomic_compare_exchange_n(&c->outstanding, &n, n - 1, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST));
	return RPCRDMA_CREDIT_OK;
}

void rpcrdma_credits_client_grant(struct rpcrdma_credits_client *c, uint32_t credit)
{
	c->granted = min_u32(at_least_one(credit), c->slots);
}

void rpcrdma_credits_client_reset(struct rpcrdma_credits_client *c)
{
	c->granted = 1;
	__atomic_store_n(&c->outstanding, 0, __ATOMIC_SEQ_CST);
}

void rpcrdma_credits_server_init(struct rpcrdma_credits_server *s, uint32_t max_requests)
{
	s->max_requests = at_least_one(max_requests);
	s->posted = 0;
}

void rpcrdma_credits_server_posted(struct rpcrdma_credits_server *s, uint32_t n)
{
	uint32_t room = s->max_requests - min_u32(s->posted, s->max_requests);

	s->posted += min_u32(n, room);
}

void rpcrdma_credits_server_consumed(struct rpcrdma_credits_server *s)
{
	if (s->posted)
		s->posted--;
}

enum rpcrdma_credit_status rpcrdma_credits_server_grant(const struct rpcrdma_credits_server *s,
							uint32_t requested, uint32_t *grant)
{
	if (!s->posted)
		return RPCRDMA_CREDIT_NO_RECEIVES;
	*grant = min_u32(at_least_one(requested), s->max_requests);
	return RPCRDMA_CREDIT_OK;
}
