/*
 * What the endpoint's files share and nothing else sees: the endpoint
 * itself, its send-queue slots, the errno conventions of the verbs and
 * rdma_cm calls, and the cm-event drain that a completion wait also
 * needs.  verbs.c sets an endpoint up and tears it down (rdma_cm);
 * listener.c makes passive endpoints from a listener's requests;
 * work_queues.c posts to its queues and polls its completions;
 * devices.c keeps the process-wide state of the devices underneath.
 */
#ifndef RPCRDMA_VERBS_INTERNAL_H
#define RPCRDMA_VERBS_INTERNAL_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>

#include "rpcrdma/verbs.h"
#include "xdr/minmax.h"

struct rpcrdma_send_slot {
	uint64_t wr_id;
	enum rpcrdma_wc_kind kind;
};

struct rpcrdma_ep {
	struct rdma_event_channel *cm_channel;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *comp_channel;
	struct ibv_cq *cq;
	struct ibv_mr *recv_mr;
	uint8_t *recv_bufs;
	/*
	 * Posting is serialized by post_lock; the poll that retires a slot
	 * takes no lock: slots_busy and the slots' entries are atomics.
	 */
	pthread_mutex_t post_lock;
	struct rpcrdma_send_slot *slots;
	uint32_t slot_next;
	uint32_t slots_busy;
	uint32_t max_read_sge;
	unsigned int cq_events;
	bool cq_armed;           /* notification requested and its event not yet read */
	bool rxe_wc_flags;       /* the device reports kernel wc_flags (see wc_recv_invalidate) */
	bool passive;
	bool accepted;
	bool connected;
	bool disconnected;       /* written atomically: a post reads it without its owner's lock */
	int disconnect_err;      /* -errno of the cm event that disconnected it (ep_cm_event) */
	bool stopped;            /* rpcrdma_ep_stop: QP gone, disconnected */
	bool siw_guarded;        /* holds the siw key guard of its context (devices.c) */
	bool connect_unanswered; /* rdma_connect went out, no answer yet */
	bool device_has_swi;     /* the device posts Send With Invalidate (memory management extensions) */
	struct rpcrdma_ep_params params;
	struct rpcrdma_private_data local_pd;
	uint8_t pd_msg[RPCRDMA_PD_BYTES];
	struct rpcrdma_rd_depths rd_requested;
	struct rpcrdma_ep_info info;
};

/*
 * The timeout for rdma_resolve_addr() and rdma_resolve_route(): what is
 * left, and 1 ms more, so a deadline reached in the last millisecond is
 * not a timeout of 0; no overflow with connect_timeout_ms INT_MAX.
 */
static inline int resolve_timeout_ms(int64_t deadline)
{
	int ms = rpcrdma_ms_left(deadline);

	return ms < INT_MAX ? ms + 1 : INT_MAX;
}

/* For calls that return NULL or -1 and set errno, which some forget to. */
static inline int neg_errno(int fallback)
{
	return errno > 0 ? -errno : -fallback;
}

/*
 * Before a verbs or rdma_cm call that may fail without setting errno
 * (libsiw's create_cq and create_qp do): otherwise neg_errno() would
 * report whatever an earlier call left there, typically EAGAIN from a
 * non-blocking rdma_get_cm_event().
 */
static inline void errno_clear(void)
{
	errno = 0;
}

/* ibv_post_* and ibv_query_* return a positive errno; a few providers -1. */
static inline int verbs_rc(int rc)
{
	if (rc > 0)
		return -rc;
	return rc < 0 ? neg_errno(EIO) : 0;
}

/* Handle whatever cm events are pending without blocking. */
void rpcrdma_ep_cm_drain(struct rpcrdma_ep *ep);

/*
 * rdma_cm picks a local port at random from its own port space; on
 * iWARP it is also a TCP port, and siw's bind of it fails with
 * EADDRINUSE when an ordinary TCP socket holds it (a listener, a
 * connection, one in TIME_WAIT).  A new cm id picks another port.
 */
#define RPCRDMA_PORT_TRIES 4

/*
 * rpcrdma_cm_channel_create - a non-blocking rdma_cm event channel in
 * *@out (left set on failure, for the caller's destroy).  Returns 0,
 * -ENODEV or -EACCES (no usable rdma_cm), or another -errno.
 */
int rpcrdma_cm_channel_create(struct rdma_event_channel **out);
bool rpcrdma_ep_params_valid(const struct rpcrdma_ep_params *p);

/*
 * rpcrdma_cm_next_event - wait until @deadline for the next event on
 * @ch.  Returns 0 with *@ev set (the caller acks it), -ETIMEDOUT, or
 * -errno.
 */
int rpcrdma_cm_next_event(struct rdma_event_channel *ch, int64_t deadline,
			  struct rdma_cm_event **ev);

/*
 * rpcrdma_cm_event_handle - the one place an rdma_cm event is
 * interpreted (@ep is NULL on the listener's channel).  Returns 0 when
 * the connection may proceed or -errno when it cannot.
 */
int rpcrdma_cm_event_handle(struct rpcrdma_ep *ep, const struct rdma_cm_event *ev);

/*
 * rpcrdma_ep_take_request - what a connection request @conn says, as the
 * passive side takes it before its accept: the peer's private data, the
 * inline sizes negotiated from it, and our IRD and ORD from the
 * initiator's (its ORD arrives as responder_resources, its IRD as
 * initiator_depth), by RFC 6581 on iWARP and the IB CM's rule otherwise.
 */
void rpcrdma_ep_take_request(struct rpcrdma_ep *ep, const struct rdma_conn_param *conn);

/*
 * rpcrdma_ep_from_request - the endpoint of connection request @ev
 * (acked here), accepted: see rpcrdma_listener_accept().  Returns 0
 * with *@out set, or -errno with the request rejected.
 */
int rpcrdma_ep_from_request(const struct rpcrdma_ep_params *params, struct rdma_cm_event *ev,
			    struct rpcrdma_ep **out);

#endif
