/*
 * rdma_cm and verbs resources of one RPC-over-RDMA connection endpoint:
 * the cm id and its event channel, protection domain, one completion
 * queue with its completion channel, the RC queue pair, and a pool of
 * registered receive buffers that stay posted.  Connection setup carries
 * our RFC 8797 private data and the IRD/ORD chosen by cm-private/mpa.c,
 * and parses the peer's.  Everything else (headers, chunks, credits) is
 * the caller's: this file only moves bytes.
 *
 * An endpoint is used by one thread at a time (callers lock), except
 * that posts may come from other threads while one polls: posts are
 * serialized inside (rpcrdma_ep_post_sends is made for that).
 * All functions returning int return 0 or a negative errno value.
 */
#ifndef RPCRDMA_VERBS_H
#define RPCRDMA_VERBS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "cm-private/mpa.h"
#include "cm-private/private_data.h"

struct rpcrdma_ep_params {
	uint32_t send_size;          /* largest Send we post (advertised Send Size) */
	uint32_t recv_size;          /* each receive buffer (advertised Receive Size) */
	uint32_t recv_count;         /* receive buffers kept posted (= credits we can grant) */
	uint32_t send_depth;         /* send-queue work requests outstanding at once */
	uint32_t max_send_sge;       /* SGEs per Send, RDMA Read or RDMA Write */
	struct rpcrdma_rd_depths rd; /* IRD/ORD we want; capped by the device */
	/*
	 * Advertise R in the private data: the passive side whenever set
	 * (it can post Send With Invalidate); the active side only on a
	 * device with type-2 memory windows (what it would expose).
	 */
	bool remote_invalidate;
	int timeout_ms;              /* address/route resolution and connect */
	uint8_t ack_timeout;         /* IB/RoCE ACK timeout exponent; 0: rdma_cm's (21: rxe client) */
	int16_t tos;                 /* active side: type of service; -1: rdma_cm's */
};

/* What connection setup produced. */
struct rpcrdma_ep_info {
	struct rpcrdma_inline_params inline_params; /* from both private data messages */
	enum rpcrdma_pd_status peer_pd;             /* how the peer's private data decoded */
	struct rpcrdma_rd_depths rd;                /* IRD/ORD in force on the QP */
	struct rpcrdma_rd_limits dev;               /* the device's limits */
	bool device_has_mw;                         /* type-2 (2A or 2B) memory windows */
	enum ibv_transport_type transport;          /* IB (rxe) or iWARP (siw) */
	uint8_t ack_timeout;                        /* the QP's local ACK timeout; 0 on iWARP */
	uint8_t traffic_class;                      /* the QP's GRH traffic class; 0 on iWARP */
	uint32_t send_wr_inline;                    /* Send bytes the QP copies at the post */
};

enum rpcrdma_wc_kind {
	RPCRDMA_WC_RECV,
	RPCRDMA_WC_SEND,
	RPCRDMA_WC_READ,
	RPCRDMA_WC_WRITE,
	RPCRDMA_WC_LOCAL_INV,
	RPCRDMA_WC_BIND_MW,
};

struct rpcrdma_wc {
	enum rpcrdma_wc_kind kind;
	enum ibv_wc_status status;   /* IBV_WC_WR_FLUSH_ERR means teardown */
	uint64_t wr_id;              /* RECV: the buffer index */
	uint32_t byte_len;           /* RECV: bytes received */
	/*
	 * RECV: the peer's Send With Invalidate invalidated this rkey on
	 * our side.  Callers still compare it with the rkeys they exposed
	 * for the message's XID before counting a window as invalidated.
	 */
	uint32_t invalidated_rkey;
	bool with_invalidate;        /* RECV: invalidated_rkey is valid */
};

struct rpcrdma_ep;
struct rpcrdma_listener;

/* The length of @sa, an AF_INET or AF_INET6 socket address (rdma_cm takes no other). */
static inline socklen_t rpcrdma_sockaddr_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

/*
 * rpcrdma_ep_connect - active side: resolve, create resources, post all
 * receives, connect with our private data, wait for ESTABLISHED.
 * Returns 0, -ETIMEDOUT, -ECONNREFUSED (rejected, unreachable or the
 * handshake failed), -EHOSTUNREACH, -ENODEV (no RDMA device for the
 * address), -EADDRINUSE (no free local port after a few tries),
 * -ENOMEM, or another -errno.
 */
int rpcrdma_ep_connect(const struct sockaddr *dst, const struct rpcrdma_ep_params *params,
		       struct rpcrdma_ep **out);

/*
 * rpcrdma_listener_create - passive side: bind and listen on @addr
 * (port 0 picks one, another when iWARP finds it held as a TCP port;
 * rpcrdma_listener_addr() tells which).  Returns 0, -EINVAL (bad
 * params), -EADDRNOTAVAIL or -EADDRINUSE (cannot bind @addr), -ENODEV,
 * -ENOMEM, or another -errno.
 */
int rpcrdma_listener_create(const struct sockaddr *addr, const struct rpcrdma_ep_params *params,
			    int backlog, struct rpcrdma_listener **out);
/*
 * The fd to poll: readable when a connection request is pending, or
 * when a listener whose device was removed is due to bind again.
 */
int rpcrdma_listener_fd(const struct rpcrdma_listener *l);
/* The address bound at creation, which the listener keeps. */
const struct sockaddr *rpcrdma_listener_addr(const struct rpcrdma_listener *l);
/*
 * rpcrdma_listener_accept - take one pending connection request, create
 * its resources, post receives, accept with our private data and the
 * IRD/ORD policy's choice, and return without waiting for the peer:
 * the endpoint's own rdma_cm channel delivers ESTABLISHED later
 * (rpcrdma_ep_established()), or an error or disconnect that marks it
 * disconnected.  Until then the peer may already send (IB/RoCE: its
 * QP is ready once it has our REP), so receives are posted before the
 * accept; a caller that sends first waits for ESTABLISHED
 * (rpcrdma_ep_wait()), since before it the peer's QP may not take a
 * message yet and the Send would wait for the transport's retries.
 * Returns -EAGAIN when nothing is pending, 0 with *@out set, -ENODEV
 * when the device under a bound listener's address was removed (it
 * binds the same address and port again once a second, while the caller
 * polls rpcrdma_listener_fd() and calls this, until a device serves the
 * address), or another -errno (that request is
 * rejected and the listener keeps serving).
 */
int rpcrdma_listener_accept(struct rpcrdma_listener *l, struct rpcrdma_ep **out);
void rpcrdma_listener_destroy(struct rpcrdma_listener *l);

const struct rpcrdma_ep_info *rpcrdma_ep_info(const struct rpcrdma_ep *ep);
struct ibv_pd *rpcrdma_ep_pd(const struct rpcrdma_ep *ep);
const struct sockaddr *rpcrdma_ep_peer_addr(const struct rpcrdma_ep *ep);
/* The connection's own address: on a wildcard listener's connection, the address it came to. */
const struct sockaddr *rpcrdma_ep_local_addr(const struct rpcrdma_ep *ep);

/* CLOCK_MONOTONIC in milliseconds: the clock of every deadline here. */
int64_t rpcrdma_now_ms(void);
/* CLOCK_MONOTONIC_COARSE in milliseconds, in steps of the kernel's tick: read without a system call. */
int64_t rpcrdma_coarse_ms(void);

/* The ms left until @deadline (rpcrdma_now_ms), 0 once passed, at most INT_MAX: a poll() timeout. */
static inline int rpcrdma_ms_left(int64_t deadline)
{
	int64_t left = deadline - rpcrdma_now_ms();

	return left <= 0 ? 0 : left < INT_MAX ? (int)left : INT_MAX;
}

/* Receive buffer @index: its memory (valid until reposted) and size. */
uint8_t *rpcrdma_ep_recv_buf(const struct rpcrdma_ep *ep, uint32_t index);
/*
 * Give receive buffer @index back to the queue pair.  Returns 0, -EINVAL
 * (no such buffer), -ENOTCONN (the queue pair is gone: rpcrdma_ep_stop)
 * or -errno of the post.
 */
int rpcrdma_ep_repost_recv(struct rpcrdma_ep *ep, uint32_t index);

/* One Send of rpcrdma_ep_post_sends: one SGE, With Invalidate of @invalidate_rkey if @invalidate. */
struct rpcrdma_send {
	struct ibv_sge sge;
	uint64_t wr_id;
	uint32_t invalidate_rkey;
	bool invalidate;
};
/*
 * rpcrdma_ep_post_sends - post the @n signaled Sends of @sends, chained
 * up to RPCRDMA_POST_SENDS_MAX at a time (one doorbell each).  Safe
 * against a concurrent rpcrdma_ep_poll and other posts.  Sets *@posted
 * to how many were posted (the first ones).  Returns 0, -ENOTCONN
 * (disconnected), -ENOBUFS (no room in the send queue), -EINVAL (more
 * SGEs than the queue pair takes) or -errno of ibv_post_send.
 */
#define RPCRDMA_POST_SENDS_MAX 16u
int rpcrdma_ep_post_sends(struct rpcrdma_ep *ep, struct rpcrdma_send *sends, uint32_t n,
			  uint32_t *posted);
/* Post a signaled RDMA Read from (@raddr, @rkey) into @sge. */
int rpcrdma_ep_post_read(struct rpcrdma_ep *ep, struct ibv_sge *sge, int nsge, uint64_t raddr,
			 uint32_t rkey, uint64_t wr_id);
/* Post a signaled RDMA Write of @sge to (@raddr, @rkey). */
int rpcrdma_ep_post_write(struct rpcrdma_ep *ep, struct ibv_sge *sge, int nsge, uint64_t raddr,
			  uint32_t rkey, uint64_t wr_id);

/*
 * rpcrdma_ep_mw_alloc - allocate a type-2 memory window on the
 * endpoint's PD.  Returns 0 with *@out set, -EOPNOTSUPP when the device
 * has no type-2 windows (info.device_has_mw), or -ENOMEM / -errno.
 */
int rpcrdma_ep_mw_alloc(struct rpcrdma_ep *ep, struct ibv_mw **out);
/* Free a memory window; accepts NULL. */
void rpcrdma_ep_mw_free(struct ibv_mw *mw);
/*
 * rpcrdma_ep_post_bind_mw - post a signaled IBV_WR_BIND_MW binding @mw
 * to [@addr, @addr + @len) of @mr (registered with IBV_ACCESS_MW_BIND
 * and, for remote write, IBV_ACCESS_LOCAL_WRITE) with @access
 * (IBV_ACCESS_REMOTE_READ and/or IBV_ACCESS_REMOTE_WRITE).  The rkey is
 * @mw->rkey bumped with ibv_inc_rkey(); it is stored back in @mw->rkey
 * (the device checks the next bind against it) and returned in *@rkey.
 * The window must be unbound (new, or invalidated).  Returns 0,
 * -EINVAL (bad range or access), -ENOBUFS (send queue full),
 * -ENOTCONN, or -errno from ibv_post_send.
 */
int rpcrdma_ep_post_bind_mw(struct rpcrdma_ep *ep, struct ibv_mw *mw, struct ibv_mr *mr,
			    uint64_t addr, uint64_t len, unsigned int access, uint64_t wr_id,
			    uint32_t *rkey);
/*
 * rpcrdma_ep_post_local_inv - post a signaled IBV_WR_LOCAL_INV of
 * @rkey.  Returns 0, -ENOBUFS, -ENOTCONN or -errno.
 */
int rpcrdma_ep_post_local_inv(struct rpcrdma_ep *ep, uint32_t rkey, uint64_t wr_id);

/* The completion channel fd: readable when completions may be ready. */
int rpcrdma_ep_fd(const struct rpcrdma_ep *ep);
/*
 * The endpoint's rdma_cm channel fd: readable when a cm event (such as
 * the peer's disconnect) is pending; rpcrdma_ep_wait() handles them.
 */
int rpcrdma_ep_cm_fd(const struct rpcrdma_ep *ep);
/*
 * rpcrdma_wc_errno - the errno a failed completion stands for, so a
 * lost connection says why: 0 for IBV_WC_SUCCESS, ECONNRESET for a
 * flush (the queue pair was already in error or torn down), ETIMEDOUT
 * when the peer stopped acknowledging, ENOBUFS when it kept no receive
 * posted, EACCES when it refused access to its memory, EREMOTEIO when
 * it failed the operation, EPROTO for a response that made no sense,
 * EMSGSIZE for a message larger than the buffer that was to take it,
 * EIO for the other local errors.
 */
int rpcrdma_wc_errno(enum ibv_wc_status status);
/* What a failed completion says, in words (for RPCRDMA_DEBUG). */
const char *rpcrdma_wc_failure(enum ibv_wc_status status);

/*
 * rpcrdma_ep_poll - collect up to @max completions without blocking
 * (consume the channel event, re-arm once it was consumed, poll, ack).
 * Returns the count.
 */
int rpcrdma_ep_poll(struct rpcrdma_ep *ep, struct rpcrdma_wc *wc, int max);
/*
 * rpcrdma_ep_wait - block up to @timeout_ms (-1: forever) for the
 * completion channel or a cm event.  Returns 1 when completions may be
 * ready, 0 on timeout, -ENODEV once the device's removal was reported,
 * -ECONNRESET once the peer disconnected (or another cm event ended the
 * connection), -EIO when poll() failed.
 */
int rpcrdma_ep_wait(struct rpcrdma_ep *ep, int timeout_ms);
/* What a negative rpcrdma_ep_wait() result means, in words (for RPCRDMA_DEBUG). */
const char *rpcrdma_ep_wait_failure(int rc);
/* In a forked child (devices.c's fork handler): no background destroy of the parent's is ours. */
void rpcrdma_ep_forked(void);
/* True once a DISCONNECTED, DEVICE_REMOVAL or error cm event was seen. */
bool rpcrdma_ep_disconnected(const struct rpcrdma_ep *ep);
/*
 * True if the kernel is removing @ep's device (its node is unlinked),
 * whether or not the DEVICE_REMOVAL event was read yet.
 */
bool rpcrdma_ep_device_gone(const struct rpcrdma_ep *ep);
/*
 * True once the ESTABLISHED cm event was seen: always for an endpoint
 * rpcrdma_ep_connect() returned; for an accepted one after its events
 * were handled (rpcrdma_ep_wait()).
 */
bool rpcrdma_ep_established(const struct rpcrdma_ep *ep);

/* Send-queue work requests outstanding at once (params.send_depth). */
uint32_t rpcrdma_ep_send_depth(const struct rpcrdma_ep *ep);
/* Send-queue work requests that can be posted now (send_depth minus those not completed). */
uint32_t rpcrdma_ep_send_free(const struct rpcrdma_ep *ep);

/*
 * rpcrdma_ep_stop - disconnect and destroy the QP, so no work request
 * reads or writes the caller's registered memory any more; the caller
 * may then deregister and free it before rpcrdma_ep_destroy().
 * Accepts NULL and a half-built endpoint.
 */
void rpcrdma_ep_stop(struct rpcrdma_ep *ep);

/* Disconnect, flush, free; accepts a half-built endpoint and NULL. */
void rpcrdma_ep_destroy(struct rpcrdma_ep *ep);

#endif
