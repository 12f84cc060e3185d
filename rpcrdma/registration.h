/*
 * How a client call's memory becomes remotely accessible, and stops
 * being so.  Each call that needs chunks gets one buffer ("regbuf")
 * holding copies of its read-chunk sources and room for its write and
 * reply chunks, exposed under one key for exactly as long as the call
 * is in flight:
 *
 * - memory windows (devices with type-2 windows, e.g. rxe): buffers are
 *   registered once with IBV_ACCESS_MW_BIND and no remote access; a
 *   call binds a window over its buffer before its Send and the window
 *   is invalidated by the server's Send With Invalidate or by a local
 *   invalidation.  One key per call makes remote invalidation safe.
 * - per-call memory regions (no windows, e.g. siw): the buffer is
 *   registered with remote access when the call starts and
 *   deregistered when it ends.
 *
 * Buffers are cached per connection so steady traffic allocates and
 * registers nothing.  A cache is used under its own lock; the post
 * functions are called under the connection's lock (the caller's), and
 * the endpoint orders them with the Sends posted without it.
 * Functions returning int return 0 or a negative errno value.
 */
#ifndef RPCRDMA_REGISTRATION_H
#define RPCRDMA_REGISTRATION_H

#include <stdbool.h>
#include <stdint.h>

#include "rpcrdma/rpcrdma.h"
#include "rpcrdma/verbs.h"

struct rpcrdma_regbuf {
	uint8_t *addr;
	uint32_t cap;
	uint32_t len;            /* bytes exposed by the current call */
	uint32_t rkey;           /* the key the current call advertises */
	bool exposed;
	struct ibv_mr *base_mr;  /* windows: the buffer's MW_BIND registration */
	struct ibv_mw *mw;       /* windows: the buffer's window */
	struct ibv_mr *call_mr;  /* per-call regions: this call's registration */
	struct rpcrdma_regbuf *next;
};

struct rpcrdma_reg;

/*
 * rpcrdma_reg_create - a cache for @ep's protection domain using
 * @strategy, keeping up to @keep_bytes of idle buffers.
 * Returns 0 or -ENOMEM.
 */
int rpcrdma_reg_create(struct rpcrdma_ep *ep, enum rpcrdma_registration strategy,
		       uint64_t keep_bytes, struct rpcrdma_reg **out);

/* Free the cache and its idle buffers; buffers still out must be put first. */
void rpcrdma_reg_destroy(struct rpcrdma_reg *reg);

enum rpcrdma_registration rpcrdma_reg_strategy(const struct rpcrdma_reg *reg);

/*
 * rpcrdma_reg_get - a buffer of at least @len bytes, not exposed.
 * Returns 0, -ENOMEM, or the -errno of a failed registration.
 */
int rpcrdma_reg_get(struct rpcrdma_reg *reg, uint32_t len, struct rpcrdma_regbuf **out);

/*
 * Return @buf to the cache; accepts NULL.  A buffer still exposed (its
 * revocation failed or never ran) is destroyed instead, which ends its
 * remote access.
 */
void rpcrdma_reg_put(struct rpcrdma_reg *reg, struct rpcrdma_regbuf *buf);

/*
 * rpcrdma_reg_expose - make the first @len bytes of @buf remotely
 * readable and writable under buf->rkey: register them, or post the
 * window bind with @wr_id (the Send posted after it is ordered behind
 * it).  Needs the endpoint's lock.  Returns 0, -E2BIG (@len > cap),
 * or -errno from registration or posting.
 */
int rpcrdma_reg_expose(struct rpcrdma_reg *reg, struct rpcrdma_regbuf *buf, uint32_t len,
		       uint64_t wr_id);

/*
 * rpcrdma_reg_revoke - end @buf's remote access.  @invalidated_rkey is
 * what the reply's receive completion reported (0 for none).  Returns
 * 0 when access has ended, 1 when a local invalidation was posted with
 * @wr_id (access ends with its completion), or -errno when posting
 * failed (the connection is broken: access ends when it is destroyed)
 * or, -EIO, a per-call region could not be deregistered (@buf stays
 * exposed; put destroys it, and leaves its memory allocated for good
 * if deregistering fails again).
 * Needs the endpoint's lock, except where rpcrdma_reg_revoke_is_synchronous
 * said true: then it posts nothing (the counts are atomics).
 */
int rpcrdma_reg_revoke(struct rpcrdma_reg *reg, struct rpcrdma_regbuf *buf,
		       uint32_t invalidated_rkey, uint64_t wr_id);

/*
 * Whether @buf is exposed and rpcrdma_reg_revoke, given
 * @invalidated_rkey, would end that at once (a per-call registration
 * dropped, or the key the server invalidated) instead of posting a
 * local invalidation to wait for.
 */
bool rpcrdma_reg_revoke_is_synchronous(const struct rpcrdma_reg *reg,
				       const struct rpcrdma_regbuf *buf, uint32_t invalidated_rkey);

/* How many revocations found the key invalidated by the server, and how many posted a local invalidation. */
void rpcrdma_reg_counts(const struct rpcrdma_reg *reg, uint64_t *remote, uint64_t *local);

/* The local invalidation rpcrdma_reg_revoke() posted completed successfully. */
void rpcrdma_reg_revoked(struct rpcrdma_regbuf *buf);

#endif
