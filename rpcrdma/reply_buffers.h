/*
 * The server's registered buffers: for replies in flight and, on
 * IB/RoCE, for the calls' Read sinks (a second pool).  A reply is
 * copied into one buffer (transport header and inline body, then the
 * bytes its RDMA Writes carry) so the caller's results can be freed as
 * soon as the reply is posted: nothing waits for the peer.  Posted
 * buffers wait in a FIFO until their Send completes (completions of one
 * send queue come in posting order), then go idle.  Idle buffers are
 * kept, smallest first, up to a byte budget and always at least one no
 * larger than a size limit (so a stream of large replies registers
 * nothing); over the budget the larger idle buffers go first, so one
 * large reply does not make the small ones after it register anew; a
 * request takes the smallest that fits.  Memory thus stays flat under steady load: the
 * budget bounds what is kept, the in-flight limit the caller enforces
 * bounds the rest.  Buffers are registered for local access only: the
 * reply pool for reading (Send and RDMA Write sources), the sink pool
 * for writing too (RDMA Read targets).  One connection's, used by one
 * thread at a time.
 */
#ifndef RPCRDMA_REPLY_BUFFERS_H
#define RPCRDMA_REPLY_BUFFERS_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

struct rpcrdma_replybuf {
	uint8_t *addr;
	uint32_t cap;
	struct ibv_mr *mr;
	struct rpcrdma_replybuf *next;
};

/* How buffers are registered: rpcrdma_mr_reg/rpcrdma_mr_dereg (unit tests count calls). */
struct rpcrdma_replybuf_reg {
	struct ibv_mr *(*reg)(struct ibv_pd *pd, const void *addr, size_t len, int access);
	bool (*dereg)(struct ibv_mr *mr);
};

struct rpcrdma_replybufs {
	struct ibv_pd *pd;
	struct rpcrdma_replybuf_reg ops;
	int access;                               /* 0 or IBV_ACCESS_LOCAL_WRITE */
	uint64_t keep_bytes, idle_bytes;
	uint64_t keep_one_max;                    /* the largest buffer kept over the budget */
	struct rpcrdma_replybuf *idle;            /* sorted by cap */
	struct rpcrdma_replybuf *head, *tail;     /* posted, oldest first */
	uint32_t in_flight;
};

/*
 * Registers with rpcrdma_mr_reg on @pd with @access (0, or
 * IBV_ACCESS_LOCAL_WRITE: never a remote access); keeps up to
 * @keep_bytes idle, and one buffer of up to @keep_one_max even over
 * that budget.
 */
void rpcrdma_replybufs_init(struct rpcrdma_replybufs *rb, struct ibv_pd *pd, int access,
			    uint64_t keep_bytes, uint64_t keep_one_max);

/*
 * rpcrdma_replybufs_get - an idle buffer of at least @len bytes, or a
 * new one.  Returns 0, -ENOMEM or the -errno of a failed registration.
 */
int rpcrdma_replybufs_get(struct rpcrdma_replybufs *rb, uint32_t len,
			  struct rpcrdma_replybuf **out);

/* Give back a buffer that was not posted. */
void rpcrdma_replybufs_put(struct rpcrdma_replybufs *rb, struct rpcrdma_replybuf *b);

/* @b's Send is posted: it waits for its completion (wr_id (uintptr_t)@b). */
void rpcrdma_replybufs_posted(struct rpcrdma_replybufs *rb, struct rpcrdma_replybuf *b);

/*
 * rpcrdma_replybufs_complete - the Send with @wr_id completed (or was
 * flushed): its buffer goes idle.  Returns 0, or -EPROTO when @wr_id is
 * not the oldest posted buffer (completions out of order).
 */
int rpcrdma_replybufs_complete(struct rpcrdma_replybufs *rb, uint64_t wr_id);

/* Free every buffer, posted ones too: the QP must be gone (rpcrdma_ep_stop). */
void rpcrdma_replybufs_destroy(struct rpcrdma_replybufs *rb);

#endif
