/*
 * Setting up and tearing down one RPC-over-RDMA endpoint with rdma_cm:
 * the cm id and an event channel of its own (so a disconnect is seen
 * without the listener), the PD, one CQ on a completion channel, the RC
 * QP, and one registered allocation of receive buffers posted before
 * connect or accept; and every rdma_cm event, handled in one switch.
 * Connection setup carries our RFC 8797 private data and the IRD/ORD of
 * cm-private/mpa.c.  The active side waits for
 * ESTABLISHED; the passive side accepts and returns, and learns of
 * ESTABLISHED (or of the handshake's failure) from its channel later.
 * What moves over a connected endpoint is in work_queues.c; the
 * listener in listener.c; what outlives endpoints (per device, per
 * process) in devices.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma/devices.h"
#include "rpcrdma/verbs_internal.h"

/* Send bytes asked to fit in a work request (IBV_SEND_INLINE), at most: small calls and replies. */
#define RPCRDMA_SEND_WR_INLINE_MAX 256u
/* rdma_conn_param carries IRD and ORD in 8 bits. */
#define RPCRDMA_CM_DEPTH_MAX 255u
/* rdma_rxe's IBTA vendor id (drivers/infiniband/sw/rxe/rxe_param.h). */
#define RPCRDMA_RXE_VENDOR_ID 0xffffffu
/* soft-iWARP's vendor id ('bmt', drivers/infiniband/sw/siw/siw.h). */
#define RPCRDMA_SIW_VENDOR_ID 0x626d74u
/*
 * A client's local ACK timeout on rxe when none is asked for: 4.096 us x
 * 2^21, about 8.6 s (rdma_cm's is 19, 2.1 s).  A retransmission makes rxe
 * (Linux 6.1 and later) execute again the window binds queued behind the
 * message it sends again; they fail and the connection is lost.  Under
 * CPU load rxe's ACKs can take over 2 s, and such spurious
 * retransmissions were what broke connections under load_rpc.
 */
#define RPCRDMA_RXE_ACK_TIMEOUT 21u
/* Timed-out connects destroyed in the background at once, at most (ep_destroy_unanswered). */
#define RPCRDMA_UNANSWERED_MAX 16u

int64_t rpcrdma_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t rpcrdma_coarse_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}


static int fd_set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return neg_errno(EIO);
	return 0;
}

int rpcrdma_cm_channel_create(struct rdma_event_channel **out)
{
	/* Fails with ENODEV (no /dev/infiniband/rdma_cm) or EACCES: say so, not ENOMEM. */
	errno_clear();
	*out = rdma_create_event_channel();
	if (!*out)
		return neg_errno(ENODEV);
	/* Every use of rdma_cm, so of a device, starts here: so does the removal watcher. */
	rpcrdma_device_watch_start();
	return fd_set_nonblock((*out)->fd);
}

bool rpcrdma_ep_params_valid(const struct rpcrdma_ep_params *p)
{
	return p->send_size && p->recv_size && p->recv_count && p->send_depth &&
	       p->max_send_sge && p->timeout_ms > 0 &&
	       (uint64_t)p->recv_count * p->recv_size <= SIZE_MAX / 2;
}

static int pd_msg_encode(const struct rpcrdma_ep_params *p, struct rpcrdma_private_data *pd,
			 uint8_t msg[RPCRDMA_PD_BYTES])
{
	pd->remote_invalidate = p->remote_invalidate;
	pd->send_size = p->send_size;
	pd->recv_size = p->recv_size;
	return rpcrdma_private_data_encode(pd, msg) == RPCRDMA_PD_OK ? 0 : -EINVAL;
}

/* ---- rdma_cm events ------------------------------------------------------------ */

int rpcrdma_cm_next_event(struct rdma_event_channel *ch, int64_t deadline,
			  struct rdma_cm_event **ev)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	int n;

	for (;;) {
		if (rdma_get_cm_event(ch, ev) == 0)
			return 0;
		if (errno != EAGAIN && errno != EINTR)
			return neg_errno(EIO);
		n = poll(&pfd, 1, rpcrdma_ms_left(deadline));
		if (n == 0)
			return -ETIMEDOUT;
		if (n < 0 && errno != EINTR)
			return neg_errno(EIO);
	}
}

/*
 * The responder's IRD and ORD as the accept presents them.  The IB CM
 * turns them to our side (initiator_depth is the peer's IRD, our ORD
 * limit); iWARP (siw, and cma's iw mapping) reports the MPA reply's
 * values the other way round.
 */
static struct rpcrdma_rd_depths accept_depths(const struct rpcrdma_ep *ep,
					      const struct rdma_conn_param *conn)
{
	struct rpcrdma_rd_depths d = {
		.ird = conn->initiator_depth,
		.ord = conn->responder_resources,
	};

	if (ep->info.transport == IBV_TRANSPORT_IWARP)
		d = (struct rpcrdma_rd_depths){ .ird = d.ord, .ord = d.ird };
	return d;
}

static int ep_cm_option(struct rpcrdma_ep *ep, int name, uint8_t value)
{
	errno_clear();
	if (rdma_set_option(ep->id, RDMA_OPTION_ID, name, &value, sizeof(value)))
		return neg_errno(EINVAL);
	return 0;
}

/*
 * rdma_cm options, set before the route is resolved (on RoCE the path's
 * traffic class and packet lifetime come from them) or the accept: the
 * local ACK timeout, and the active side's type of service.
 */
static int ep_cm_options_set(struct rpcrdma_ep *ep)
{
	int rc = 0;

	if (ep->params.ack_timeout)
		rc = ep_cm_option(ep, RDMA_OPTION_ID_ACK_TIMEOUT, ep->params.ack_timeout);
	if (!rc && !ep->passive && ep->params.tos >= 0)
		rc = ep_cm_option(ep, RDMA_OPTION_ID_TOS, (uint8_t)ep->params.tos);
	return rc;
}

/* What the queue pair ended up with (rdma_cm's choices unless we asked); nothing on iWARP. */
static void ep_qp_attrs_get(struct rpcrdma_ep *ep)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr = { 0 };

	if (ep->info.transport == IBV_TRANSPORT_IWARP || !ep->id->qp ||
	    ibv_query_qp(ep->id->qp, &attr, IBV_QP_TIMEOUT | IBV_QP_AV, &init))
		return;
	ep->info.ack_timeout = attr.timeout;
	if (attr.ah_attr.is_global)
		ep->info.traffic_class = attr.ah_attr.grh.traffic_class;
}

/* The active side learns the peer's private data and depths from the accept. */
static int ep_established(struct rpcrdma_ep *ep, const struct rdma_conn_param *conn)
{
	struct rpcrdma_rd_depths responder;
	struct rpcrdma_private_data peer;

	if (!ep)
		return 0;
	ep->connected = true;
	ep_qp_attrs_get(ep);
	if (ep->passive)
		return 0;
	ep->info.peer_pd = rpcrdma_private_data_decode(conn->private_data,
						       conn->private_data_len, &peer);
	ep->info.inline_params = rpcrdma_private_data_negotiate(&ep->local_pd, &peer);
	responder = accept_depths(ep, conn);
	if (rpcrdma_rd_finish(&ep->info.dev, &ep->rd_requested, &responder, &ep->info.rd))
		return -EPROTO;
	/* rdma_cm (IB CM and siw alike) sets our QP's IRD to the responder's ORD. */
	ep->info.rd.ird = responder.ord;
	return 0;
}

int rpcrdma_cm_event_handle(struct rpcrdma_ep *ep, const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		return ep_established(ep, &ev->param.conn);
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return ev->status < 0 ? ev->status : -EHOSTUNREACH;
	/*
	 * status is no reliable errno here: an IB CM reject reason, librdmacm's
	 * -1, or siw's -EINVAL for a bad MPA reply; and siw's 5 s MPA timeout
	 * (-ETIMEDOUT) must not end a call before its own deadline.
	 */
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return -ENODEV;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return -ECONNRESET;
	default: /* CONNECT_RESPONSE is consumed by librdmacm; multicast, TIMEWAIT_EXIT */
		return 0;
	}
}

/* Handle and ack one event of @ep; errors mark the endpoint disconnected. */
static int ep_cm_event(struct rpcrdma_ep *ep, struct rdma_cm_event *ev)
{
	int rc = rpcrdma_cm_event_handle(ep, ev);

	rdma_ack_cm_event(ev);
	if (rc < 0) {
		if (!ep->disconnect_err)
			ep->disconnect_err = rc;
		__atomic_store_n(&ep->disconnected, true, __ATOMIC_RELAXED);
	}
	return rc;
}

static int ep_cm_wait(struct rpcrdma_ep *ep, enum rdma_cm_event_type want, int64_t deadline)
{
	struct rdma_cm_event *ev;
	bool hit;
	int rc;

	do {
		rc = rpcrdma_cm_next_event(ep->cm_channel, deadline, &ev);
		if (rc)
			return rc;
		hit = ev->event == want;
		rc = ep_cm_event(ep, ev);
	} while (!rc && !hit);
	return rc;
}

void rpcrdma_ep_cm_drain(struct rpcrdma_ep *ep)
{
	struct rdma_cm_event *ev;

	while (rpcrdma_cm_next_event(ep->cm_channel, 0, &ev) == 0)
		ep_cm_event(ep, ev);
}

/* ---- resources --------------------------------------------------------------------- */

static int ep_alloc(const struct rpcrdma_ep_params *params, struct rpcrdma_ep **out)
{
	struct rpcrdma_ep *ep;
	int rc = -ENOMEM;

	if (!rpcrdma_ep_params_valid(params))
		return -EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	pthread_mutex_init(&ep->post_lock, NULL);
	ep->params = *params;
	ep->slots = calloc(params->send_depth, sizeof(*ep->slots));
	if (!ep->slots)
		goto out_destroy;
	rc = rpcrdma_cm_channel_create(&ep->cm_channel);
	if (!rc)
		rc = pd_msg_encode(params, &ep->local_pd, ep->pd_msg);
	if (rc)
		goto out_destroy;
	*out = ep;
	return 0;
out_destroy:
	rpcrdma_ep_destroy(ep);
	return rc;
}


static int ep_query_device(struct rpcrdma_ep *ep)
{
	struct ibv_device_attr attr;
	int rc = verbs_rc(ibv_query_device(ep->id->verbs, &attr));

	if (rc)
		return rc;
	/* rdma_cm sets no deeper IRD or ORD than its 8 bits carry */
	ep->info.dev.max_qp_rd_atom = min_u32((uint32_t)attr.max_qp_rd_atom, RPCRDMA_CM_DEPTH_MAX);
	ep->info.dev.max_qp_init_rd_atom = min_u32((uint32_t)attr.max_qp_init_rd_atom,
						   RPCRDMA_CM_DEPTH_MAX);
	ep->info.device_has_mw = attr.device_cap_flags &
				 (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	ep->device_has_swi = attr.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS;
	ep->rxe_wc_flags = attr.vendor_id == RPCRDMA_RXE_VENDOR_ID;
	if (attr.vendor_id == RPCRDMA_SIW_VENDOR_ID)
		ep->siw_guarded = rpcrdma_device_siw_guard_get(ep->id->verbs);
	ep->info.transport = ep->id->verbs->device->transport_type;
	ep->params.max_send_sge = min_u32(ep->params.max_send_sge, (uint32_t)attr.max_sge);
	ep->max_read_sge = min_u32(ep->params.max_send_sge, (uint32_t)attr.max_sge_rd);
	/*
	 * Clients bind windows; set before RTS, after the route: the path's
	 * lifetime stays.  A default, not the caller's: if rdma_cm refuses it
	 * the connection keeps rdma_cm's timeout (info.ack_timeout shows which).
	 */
	if (!ep->passive && !ep->params.ack_timeout && attr.vendor_id == RPCRDMA_RXE_VENDOR_ID)
		(void)ep_cm_option(ep, RDMA_OPTION_ID_ACK_TIMEOUT, RPCRDMA_RXE_ACK_TIMEOUT);
	return 0;
}

static int ep_create_cq(struct rpcrdma_ep *ep)
{
	struct ibv_context *verbs = ep->id->verbs;
	int depth = (int)(ep->params.send_depth + ep->params.recv_count);
	int rc;

	errno_clear();
	ep->pd = ibv_alloc_pd(verbs);
	if (!ep->pd)
		return neg_errno(ENOMEM);
	errno_clear();
	ep->comp_channel = ibv_create_comp_channel(verbs);
	if (!ep->comp_channel)
		return neg_errno(ENOMEM);
	rc = fd_set_nonblock(ep->comp_channel->fd);
	if (rc)
		return rc;
	errno_clear();
	ep->cq = ibv_create_cq(verbs, depth, ep, ep->comp_channel, 0);
	if (!ep->cq)
		return neg_errno(ENOMEM);
	rc = verbs_rc(ibv_req_notify_cq(ep->cq, 0));
	ep->cq_armed = !rc;
	return rc;
}

static int ep_try_qp(struct rpcrdma_ep *ep, uint32_t send_wr_inline)
{
	struct ibv_qp_init_attr init = {
		.send_cq = ep->cq,
		.recv_cq = ep->cq,
		.cap = {
			.max_send_wr = ep->params.send_depth,
			.max_recv_wr = ep->params.recv_count,
			.max_send_sge = ep->params.max_send_sge,
			.max_recv_sge = 1,
			.max_inline_data = send_wr_inline,
		},
		.qp_type = IBV_QPT_RC,
	};

	ep->info.send_wr_inline = 0;
	errno_clear();
	if (rdma_create_qp(ep->id, ep->pd, &init))
		return neg_errno(ENOMEM);
	ep->info.send_wr_inline = init.cap.max_inline_data; /* rxe gives more than asked */
	return 0;
}

/*
 * The QP, with room in its Send work requests for a small message
 * (IBV_SEND_INLINE: the provider copies the bytes at the post instead of
 * looking up their memory; siw refuses more than 80 bytes and reports
 * only what was asked, rxe reports at least 96).
 * No verb reports how much a provider takes, so, as libfabric's verbs
 * provider does, the largest multiple of 16 up to RPCRDMA_SEND_WR_INLINE_MAX
 * it accepts is searched for; refusals cost a failed create each.
 */
static int ep_create_qp(struct rpcrdma_ep *ep)
{
	uint32_t taken = 0, refused = RPCRDMA_SEND_WR_INLINE_MAX / 16 + 1, k = refused - 1;

	while (taken + 1 < refused) {
		if (ep_try_qp(ep, k * 16) != 0) {
			refused = k;
		} else if (k + 1 == refused) {
			return 0; /* nothing larger is taken: keep this QP */
		} else {
			rdma_destroy_qp(ep->id);
			taken = k;
		}
		k = (taken + refused) / 2;
	}
	return ep_try_qp(ep, taken * 16);
}

static int ep_create_recvs(struct rpcrdma_ep *ep)
{
	size_t len = (size_t)ep->params.recv_count * ep->params.recv_size;
	long page = sysconf(_SC_PAGESIZE);
	void *buf;
	int rc;

	rc = posix_memalign(&buf, page > 0 ? (size_t)page : 4096, len);
	if (rc)
		return -rc;
	ep->recv_bufs = buf;
	errno_clear();
	ep->recv_mr = ibv_reg_mr(ep->pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!ep->recv_mr)
		return neg_errno(ENOMEM);
	for (uint32_t i = 0; i < ep->params.recv_count && !rc; i++)
		rc = rpcrdma_ep_repost_recv(ep, i);
	return rc;
}

/* rping's order: device, PD, CQ and channel, QP, then receives. */
static int ep_create_resources(struct rpcrdma_ep *ep)
{
	int rc = ep_query_device(ep);

	if (!rc)
		rc = ep_create_cq(ep);
	if (!rc)
		rc = ep_create_qp(ep);
	if (!rc)
		rc = ep_create_recvs(ep);
	return rc;
}

static void ep_disconnect(struct rpcrdma_ep *ep)
{
	if (ep->connected || ep->accepted)
		rdma_disconnect(ep->id);
	else if (ep->passive)
		rdma_reject(ep->id, NULL, 0);
}


void rpcrdma_ep_destroy(struct rpcrdma_ep *ep)
{
	if (!ep)
		return;
	if (ep->id && ep->cm_channel)
		rpcrdma_ep_cm_drain(ep); /* what came before the end: an ESTABLISHED makes it a disconnect */
	if (ep->id && !ep->stopped)
		ep_disconnect(ep);
	if (ep->id && ep->id->qp)
		rdma_destroy_qp(ep->id);
	if (ep->recv_mr)
		ibv_dereg_mr(ep->recv_mr);
	free(ep->recv_bufs);
	if (ep->cq) {
		ibv_ack_cq_events(ep->cq, ep->cq_events);
		ibv_destroy_cq(ep->cq);
	}
	if (ep->comp_channel)
		ibv_destroy_comp_channel(ep->comp_channel);
	if (ep->pd)
		ibv_dealloc_pd(ep->pd);
	if (ep->siw_guarded)
		rpcrdma_device_siw_guard_put(ep->id->verbs); /* the id still pins the context */
	if (ep->id)
		rdma_destroy_id(ep->id);
	if (ep->cm_channel)
		rdma_destroy_event_channel(ep->cm_channel);
	free(ep->slots);
	pthread_mutex_destroy(&ep->post_lock);
	free(ep);
}

void rpcrdma_ep_stop(struct rpcrdma_ep *ep)
{
	if (!ep || !ep->id || ep->stopped)
		return;
	if (ep->cm_channel)
		rpcrdma_ep_cm_drain(ep);
	ep_disconnect(ep);
	/* under post_lock: a post that passed its disconnected check has returned */
	pthread_mutex_lock(&ep->post_lock);
	__atomic_store_n(&ep->disconnected, true, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ep->post_lock);
	if (ep->id->qp)
		rdma_destroy_qp(ep->id);
	ep->stopped = true;
}

/* ---- active side --------------------------------------------------------------------- */

static int ep_resolve(struct rpcrdma_ep *ep, const struct sockaddr *dst, int64_t deadline)
{
	int rc;

	errno_clear();
	if (rdma_create_id(ep->cm_channel, &ep->id, ep, RDMA_PS_TCP))
		return neg_errno(ENOMEM);
	rc = ep_cm_options_set(ep);
	if (rc)
		return rc;
	errno_clear();
	if (rdma_resolve_addr(ep->id, NULL, (struct sockaddr *)dst, resolve_timeout_ms(deadline)))
		return neg_errno(EHOSTUNREACH);
	rc = ep_cm_wait(ep, RDMA_CM_EVENT_ADDR_RESOLVED, deadline);
	if (rc)
		return rc;
	errno_clear();
	if (rdma_resolve_route(ep->id, resolve_timeout_ms(deadline)))
		return neg_errno(EHOSTUNREACH);
	return ep_cm_wait(ep, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline);
}

/*
 * The active side offers R only when it has memory windows: without
 * them a call's memory is a region other calls may share, which the
 * server must not invalidate (RFC 8797 section 4.1).
 */
static int ep_connect(struct rpcrdma_ep *ep, int64_t deadline)
{
	struct rdma_conn_param param = {
		.private_data = ep->pd_msg,
		.private_data_len = RPCRDMA_PD_BYTES,
		.retry_count = 6,
		.rnr_retry_count = 7, /* a peer briefly out of receives slows us, no more */
	};
	int rc;

	ep->params.remote_invalidate = ep->params.remote_invalidate && ep->info.device_has_mw;
	rc = pd_msg_encode(&ep->params, &ep->local_pd, ep->pd_msg);
	if (rc)
		return rc;
	ep->rd_requested = rpcrdma_rd_request(&ep->info.dev, &ep->params.rd);
	param.responder_resources = (uint8_t)min_u32(ep->rd_requested.ird, RPCRDMA_CM_DEPTH_MAX);
	param.initiator_depth = (uint8_t)min_u32(ep->rd_requested.ord, RPCRDMA_CM_DEPTH_MAX);
	errno_clear();
	if (rdma_connect(ep->id, &param))
		return neg_errno(ECONNREFUSED);
	ep->connect_unanswered = true;
	rc = ep_cm_wait(ep, RDMA_CM_EVENT_ESTABLISHED, deadline);
	ep->connect_unanswered = rc == -ETIMEDOUT;
	return rc;
}

/* Endpoints being destroyed off their caller's thread; at most RPCRDMA_UNANSWERED_MAX. */
static uint32_t ep_unanswered_destroys;

void rpcrdma_ep_forked(void)
{
	ep_unanswered_destroys = 0; /* those threads are the parent's */
}

static void *ep_destroy_thread(void *ep)
{
	rpcrdma_ep_destroy(ep);
	__atomic_sub_fetch(&ep_unanswered_destroys, 1, __ATOMIC_RELAXED);
	return NULL;
}

/*
 * On iWARP (Linux 6.1's iwcm and siw) destroying a cm id whose MPA
 * request is unanswered waits for the provider to give the handshake up
 * (siw: 10 s), whatever the connect timeout.  The caller's time is up:
 * the endpoint is destroyed on a thread of its own, unless so many are
 * (a caller retrying short connects) that each holding a thread, an fd
 * and a kernel connection for that long would cost the program more.
 */
static void ep_destroy_unanswered(struct rpcrdma_ep *ep)
{
	if (__atomic_add_fetch(&ep_unanswered_destroys, 1, __ATOMIC_RELAXED) <=
		    RPCRDMA_UNANSWERED_MAX &&
	    rpcrdma_thread_start_detached(ep_destroy_thread, ep, "rpcrdma-unconn"))
		return;
	__atomic_sub_fetch(&ep_unanswered_destroys, 1, __ATOMIC_RELAXED);
	rpcrdma_ep_destroy(ep);
}

static int ep_connect_once(const struct sockaddr *dst, const struct rpcrdma_ep_params *params,
			   int64_t deadline, struct rpcrdma_ep **out)
{
	struct rpcrdma_ep *ep;
	int rc = ep_alloc(params, &ep);

	if (rc)
		return rc;
	rc = ep_resolve(ep, dst, deadline);
	if (!rc)
		rc = ep_create_resources(ep);
	if (!rc)
		rc = ep_connect(ep, deadline);
	if (rc && ep->connect_unanswered)
		ep_destroy_unanswered(ep);
	else if (rc)
		rpcrdma_ep_destroy(ep);
	if (rc)
		return rc;
	*out = ep;
	return 0;
}

/* A port rdma_cm picked may be held as a TCP port: see RPCRDMA_PORT_TRIES. */
int rpcrdma_ep_connect(const struct sockaddr *dst, const struct rpcrdma_ep_params *params,
		       struct rpcrdma_ep **out)
{
	int64_t deadline = rpcrdma_now_ms() + params->timeout_ms;
	int rc, tries = 0;

	do
		rc = ep_connect_once(dst, params, deadline, out);
	while (rc == -EADDRINUSE && ++tries < RPCRDMA_PORT_TRIES && rpcrdma_ms_left(deadline) > 0);
	return rc;
}

/* ---- passive side: an endpoint from a connection request (the listener is listener.c) */

void rpcrdma_ep_take_request(struct rpcrdma_ep *ep, const struct rdma_conn_param *conn)
{
	struct rpcrdma_rd_depths initiator = {
		.ird = conn->initiator_depth,
		.ord = conn->responder_resources,
	};
	struct rpcrdma_private_data peer;
	struct rpcrdma_rd_choice choice;

	ep->info.peer_pd = rpcrdma_private_data_decode(conn->private_data,
						       conn->private_data_len, &peer);
	ep->info.inline_params = rpcrdma_private_data_negotiate(&ep->local_pd, &peer);
	/* INSUFFICIENT_IRD (iWARP) still leaves a usable choice: the initiator lowers its ORD. */
	if (ep->info.transport == IBV_TRANSPORT_IWARP)
		rpcrdma_rd_respond(&ep->info.dev, &ep->params.rd, &initiator, &choice);
	else
		rpcrdma_rd_respond_ib(&ep->info.dev, &ep->params.rd, &initiator, &choice);
	ep->info.rd = choice.local;
}

/*
 * Accept without waiting for ESTABLISHED: a peer that never completes
 * the handshake (on IB/RoCE, one whose librdmacm never sends the RTU)
 * would otherwise hold the caller for the whole connect timeout.  The
 * event comes later on the endpoint's own channel (ep_established()
 * marks it connected); a failure before it marks it disconnected.  On
 * IB/RoCE rdma_accept() has moved the QP to RTS, so a Send of the peer
 * may arrive first: the receives are posted already.
 */
static int ep_accept(struct rpcrdma_ep *ep, const struct rdma_conn_param *request)
{
	struct rdma_conn_param param = {
		.private_data = ep->pd_msg,
		.private_data_len = RPCRDMA_PD_BYTES,
		.retry_count = 6,
		.rnr_retry_count = 7,
	};
	int rc;

	rc = ep_cm_options_set(ep);
	if (!rc)
		rc = ep_create_resources(ep);
	if (!rc && ep->params.remote_invalidate && !ep->device_has_swi) {
		/* R offers Send With Invalidate, which this device cannot post (RFC 8797 3.2) */
		ep->params.remote_invalidate = false;
		rc = pd_msg_encode(&ep->params, &ep->local_pd, ep->pd_msg);
	}
	if (rc)
		return rc;
	rpcrdma_ep_take_request(ep, request);
	param.responder_resources = (uint8_t)min_u32(ep->info.rd.ird, RPCRDMA_CM_DEPTH_MAX);
	param.initiator_depth = (uint8_t)min_u32(ep->info.rd.ord, RPCRDMA_CM_DEPTH_MAX);
	errno_clear();
	if (rdma_accept(ep->id, &param))
		return neg_errno(ECONNREFUSED);
	ep->accepted = true;
	ep_qp_attrs_get(ep);
	return 0;
}

/*
 * Copy what the request event holds, ack it, then move the new id to
 * the endpoint's own channel (rdma_migrate_id waits for acks).
 */
int rpcrdma_ep_from_request(const struct rpcrdma_ep_params *params, struct rdma_cm_event *ev,
			    struct rpcrdma_ep **out)
{
	uint8_t pd[RPCRDMA_MPA_MAX_PD];
	struct rdma_conn_param request = ev->param.conn;
	struct rdma_cm_id *id = ev->id;
	struct rpcrdma_ep *ep;
	int rc;

	request.private_data_len = (uint8_t)min_u32(request.private_data_len, sizeof(pd));
	if (request.private_data_len)
		memcpy(pd, request.private_data, request.private_data_len);
	request.private_data = pd;
	rdma_ack_cm_event(ev);
	rc = ep_alloc(params, &ep);
	if (rc) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return rc;
	}
	ep->id = id;
	ep->passive = true;
	id->context = ep;
	errno_clear();
	if (rdma_migrate_id(id, ep->cm_channel))
		rc = neg_errno(EIO);
	if (!rc)
		rc = ep_accept(ep, &request);
	if (rc) {
		rpcrdma_ep_destroy(ep);
		return rc;
	}
	*out = ep;
	return 0;
}

/* ---- data movement ----------------------------------------------------------------- */

const struct rpcrdma_ep_info *rpcrdma_ep_info(const struct rpcrdma_ep *ep)
{
	return &ep->info;
}

struct ibv_pd *rpcrdma_ep_pd(const struct rpcrdma_ep *ep)
{
	return ep->pd;
}

const struct sockaddr *rpcrdma_ep_peer_addr(const struct rpcrdma_ep *ep)
{
	return rdma_get_peer_addr(ep->id);
}

const struct sockaddr *rpcrdma_ep_local_addr(const struct rpcrdma_ep *ep)
{
	return rdma_get_local_addr(ep->id);
}


int rpcrdma_ep_cm_fd(const struct rpcrdma_ep *ep)
{
	return ep->cm_channel->fd;
}


bool rpcrdma_ep_disconnected(const struct rpcrdma_ep *ep)
{
	return ep->disconnected;
}

bool rpcrdma_ep_device_gone(const struct rpcrdma_ep *ep)
{
	return ep->id && rpcrdma_device_removed(ep->id->verbs);
}

bool rpcrdma_ep_established(const struct rpcrdma_ep *ep)
{
	return ep->connected;
}
