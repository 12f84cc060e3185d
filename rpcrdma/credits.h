/*
 * RPC-over-RDMA credit flow control (RFC 8166 section 3.3.1) as two
 * small state machines.  The client never has more calls outstanding
 * than the server granted, asks for its own slot count, treats a grant
 * of 0 as 1 so it cannot deadlock, and starts again at 1 after a
 * reconnect.  The server never grants 0 and never more than its receive
 * buffers (see rpcrdma_credits_server_grant).
 */
#ifndef RPCRDMA_CREDITS_H
#define RPCRDMA_CREDITS_H

#include <stdbool.h>
#include <stdint.h>

enum rpcrdma_credit_status {
	RPCRDMA_CREDIT_OK = 0,
	RPCRDMA_CREDIT_NONE_OUTSTANDING, /* release without a matching acquire */
	RPCRDMA_CREDIT_NO_RECEIVES,      /* server: post a receive before granting */
};

struct rpcrdma_credits_client {
	uint32_t slots;       /* calls we can track at once: what we ask for */
	uint32_t granted;     /* the server's latest grant, 1..slots */
	uint32_t outstanding; /* calls sent and not yet completed; atomic (see release) */
};

struct rpcrdma_credits_server {
	uint32_t max_requests; /* receives we keep posted per connection */
	uint32_t posted;       /* receives posted and not yet consumed */
};

const char *rpcrdma_credit_status_str(enum rpcrdma_credit_status status);

/* @slots of 0 counts as 1. */
void rpcrdma_credits_client_init(struct rpcrdma_credits_client *c, uint32_t slots);
/* The rdma_credit value of each call: our slot count. */
uint32_t rpcrdma_credits_client_request(const struct rpcrdma_credits_client *c);
/*
 * rpcrdma_credits_client_acquire - take a credit for a new call
 * @cap: a further cap (1 while the CCP reply is pending, else UINT32_MAX)
 * Returns true when the call may be sent now.
 */
bool rpcrdma_credits_client_acquire(struct rpcrdma_credits_client *c, uint32_t cap);
/*
 * A call completed, failed or timed out.  The one operation that may run
 * without the lock the others hold.  Returns RPCRDMA_CREDIT_OK, or
 * RPCRDMA_CREDIT_NONE_OUTSTANDING when nothing was outstanding.
 */
enum rpcrdma_credit_status rpcrdma_credits_client_release(struct rpcrdma_credits_client *c);
/* Calls holding a credit now. */
uint32_t rpcrdma_credits_client_outstanding(const struct rpcrdma_credits_client *c);
/* The rdma_credit value of a received reply. */
void rpcrdma_credits_client_grant(struct rpcrdma_credits_client *c, uint32_t credit);
/* New connection: one credit, nothing outstanding. */
void rpcrdma_credits_client_reset(struct rpcrdma_credits_client *c);

/* @max_requests of 0 counts as 1. */
void rpcrdma_credits_server_init(struct rpcrdma_credits_server *s, uint32_t max_requests);
void rpcrdma_credits_server_posted(struct rpcrdma_credits_server *s, uint32_t n);
/* A receive completed: it no longer counts until reposted. */
void rpcrdma_credits_server_consumed(struct rpcrdma_credits_server *s);
/*
 * rpcrdma_credits_server_grant - the rdma_credit value for a reply
 * @requested: the rdma_credit value of the call
 *
 * A grant bounds the calls the client has outstanding (sent, reply not
 * yet received: "unacknowledged requests", RFC 5666 section 3.3).  Each
 * receive buffer is either posted or holds a call that is still
 * outstanding (it is posted again before that call's reply is sent), so
 * every buffer counts, not only the ones posted now: counting those
 * alone would shrink the grant whenever calls wait to be served, the
 * moment the client is busiest.
 * Returns RPCRDMA_CREDIT_OK with *@grant in 1..max_requests, or
 * RPCRDMA_CREDIT_NO_RECEIVES when nothing is posted (the caller replies
 * before giving a receive back).
 */
enum rpcrdma_credit_status rpcrdma_credits_server_grant(const struct rpcrdma_credits_server *s,
							uint32_t requested, uint32_t *grant);

#endif
