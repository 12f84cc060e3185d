/*
 * rdma_cm and verbs resources of one RPC-over-RDMA endpoint: the cm id
 * and an event channel of its own (so a disconnect is seen without the
 * listener), the PD, one CQ on a completion channel, the RC QP, and one
 * registered allocation of receive buffers posted before connect or
 * accept.  Connection setup carries our RFC 8797 private data and the
 * IRD/ORD of cm-private/mpa.c.  The active side waits for ESTABLISHED;
 * the passive side accepts and returns, and learns of ESTABLISHED (or
 * of the handshake's failure) from its channel later.  Send-queue work
 * requests get an internal wr_id (a slot after the receive indexes) so a
 * flushed completion, whose opcode is undefined, still reports its kind
 * and caller wr_id.  Posts may come from several threads while another
 * polls (the CLIENT posts without its lock): they serialize on the
 * endpoint's post_lock, and the poll retires send slots with atomics.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma/verbs.h"

/* rdma_conn_param carries IRD and ORD in 8 bits. */
#define RPCRDMA_CM_DEPTH_MAX 255u
#define RPCRDMA_WC_BATCH     16
/* rdma_rxe's IBTA vendor id (drivers/infiniband/sw/rxe/rxe_param.h). */
#define RPCRDMA_RXE_VENDOR_ID 0xffffffu
/* soft-iWARP's vendor id ('bmt', drivers/infiniband/sw/siw/siw.h). */
#define RPCRDMA_SIW_VENDOR_ID 0x626d74u
/* The siw guard CQ (siw_key_guard): 32768 CQEs of 32 bytes plus 8: 257 pages. */
#define RPCRDMA_SIW_GUARD_CQE 32768
#define RPCRDMA_SIW_GUARD_MAX 8 /* siw devices (verbs contexts) a process guards */
/*
 * The kernel's IB_WC_WITH_INVALIDATE (1 << 2); in a user CQE that bit
 * is IBV_WC_IP_CSUM_OK.
 */
#define RPCRDMA_KERNEL_WC_WITH_INV (1u << 2)

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
	bool stopped;            /* rpcrdma_ep_stop: QP gone, disconnected */
	bool device_removed;     /* RDMA_CM_EVENT_DEVICE_REMOVAL came: see ep_release_dead_devices */
	struct rpcrdma_ep_params params;
	struct rpcrdma_private_data local_pd;
	uint8_t pd_msg[RPCRDMA_PD_BYTES];
	struct rpcrdma_rd_depths rd_requested;
	struct rpcrdma_ep_info info;
};

struct rpcrdma_listener {
	struct rdma_event_channel *channel;
	struct rdma_cm_id *id;
	struct rpcrdma_ep_params params;
};

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

int64_t rpcrdma_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int remaining_ms(int64_t deadline)
{
	int64_t left = deadline - rpcrdma_now_ms();

	return left > 0 ? (int)left : 0;
}

/* For calls that return NULL or -1 and set errno, which some forget to. */
static int neg_errno(int fallback)
{
	return errno > 0 ? -errno : -fallback;
}

/*
 * Before a verbs or rdma_cm call that may fail without setting errno
 * (libsiw's create_cq and create_qp do): otherwise neg_errno() would
 * report whatever an earlier call left there, typically EAGAIN from a
 * non-blocking rdma_get_cm_event().
 */
static void errno_clear(void)
{
	errno = 0;
}

/* ibv_post_* and ibv_query_* return a positive errno; a few providers -1. */
static int verbs_rc(int rc)
{
	if (rc > 0)
		return -rc;
	return rc < 0 ? neg_errno(EIO) : 0;
}

static int fd_set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return neg_errno(EIO);
	return 0;
}

static bool ep_params_valid(const struct rpcrdma_ep_params *p)
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

/*
 * Wait until @deadline for the next event on @ch.  Returns 0 with *@ev
 * set (the caller acks it), -ETIMEDOUT, or -errno.
 */
static int cm_next_event(struct rdma_event_channel *ch, int64_t deadline,
			 struct rdma_cm_event **ev)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	int n;

	for (;;) {
		if (rdma_get_cm_event(ch, ev) == 0)
			return 0;
		if (errno != EAGAIN && errno != EINTR)
			return neg_errno(EIO);
		n = poll(&pfd, 1, remaining_ms(deadline));
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

/*
 * The one place an rdma_cm event is interpreted (@ep is NULL on the
 * listener's channel).  Returns 0 when the connection may proceed or
 * -errno when it cannot.
 */
static int cm_event_handle(struct rpcrdma_ep *ep, const struct rdma_cm_event *ev)
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
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return -ECONNRESET;
	default: /* CONNECT_RESPONSE is consumed by librdmacm; multicast, TIMEWAIT_EXIT */
		return 0;
	}
}

/* Handle and ack one event of @ep; errors mark the endpoint disconnected. */
static int ep_cm_event(struct rpcrdma_ep *ep, struct rdma_cm_event *ev)
{
	int rc = cm_event_handle(ep, ev);

	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		ep->device_removed = true;
	rdma_ack_cm_event(ev);
	if (rc < 0)
		__atomic_store_n(&ep->disconnected, true, __ATOMIC_RELAXED);
	return rc;
}

static int ep_cm_wait(struct rpcrdma_ep *ep, enum rdma_cm_event_type want, int64_t deadline)
{
	struct rdma_cm_event *ev;
	bool hit;
	int rc;

	do {
		rc = cm_next_event(ep->cm_channel, deadline, &ev);
		if (rc)
			return rc;
		hit = ev->event == want;
		rc = ep_cm_event(ep, ev);
	} while (!rc && !hit);
	return rc;
}

/* Handle whatever cm events are pending without blocking. */
static void ep_cm_drain(struct rpcrdma_ep *ep)
{
	struct rdma_cm_event *ev;

	while (cm_next_event(ep->cm_channel, 0, &ev) == 0)
		ep_cm_event(ep, ev);
}

/* ---- resources --------------------------------------------------------------------- */

static int ep_alloc(const struct rpcrdma_ep_params *params, struct rpcrdma_ep **out)
{
	struct rpcrdma_ep *ep;
	int rc = -ENOMEM;

	if (!ep_params_valid(params))
		return -EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	pthread_mutex_init(&ep->post_lock, NULL);
	ep->params = *params;
	ep->slots = calloc(params->send_depth, sizeof(*ep->slots));
	if (!ep->slots)
		goto out_destroy;
	/* Fails with ENODEV (no /dev/infiniband/rdma_cm) or EACCES: say so, not ENOMEM. */
	ep->cm_channel = rdma_create_event_channel();
	if (!ep->cm_channel) {
		rc = neg_errno(ENODEV);
		goto out_destroy;
	}
	rc = fd_set_nonblock(ep->cm_channel->fd);
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

/*
 * soft-iWARP's mmap key defect.  The siw kernel driver gives each user
 * CQ and QP queue a mmap offset from one page allocator per verbs
 * context (so per process: librdmacm shares one context per device),
 * lowest free range first; libsiw takes the offset 0x90000 (page 144,
 * SIW_INVAL_UOBJ_KEY in <rdma/siw-abi.h>) as the kernel's "no mapping"
 * answer and destroys the object, without setting errno.  So a queue
 * that starts exactly at page 144 cannot be created, and once pages 0
 * to 143 are taken no CQ or QP can: with our default sizes (12 pages a
 * connection) the 13th connection of a process, client or server,
 * failed.  The guard: before a process's first CQ on a siw context, one
 * CQ of 257 pages (1 MiB of the kernel's memory) kept for the life of
 * the process; it starts at the lowest free page, so it spans page 144
 * unless something else of the process already took pages up to 144.
 */
/* Read as well as written, so the guards stay reachable (LeakSanitizer). */
static pthread_mutex_t siw_guard_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_cq *siw_guards[RPCRDMA_SIW_GUARD_MAX];

static void siw_key_guard(struct ibv_context *verbs)
{
	int i;

	pthread_mutex_lock(&siw_guard_lock);
	for (i = 0; i < RPCRDMA_SIW_GUARD_MAX && siw_guards[i] && siw_guards[i]->context != verbs; i++)
		;
	if (i < RPCRDMA_SIW_GUARD_MAX && !siw_guards[i])
		siw_guards[i] = ibv_create_cq(verbs, RPCRDMA_SIW_GUARD_CQE, NULL, NULL, 0);
	pthread_mutex_unlock(&siw_guard_lock);
}

static int ep_query_device(struct rpcrdma_ep *ep)
{
	struct ibv_device_attr attr;
	int rc = verbs_rc(ibv_query_device(ep->id->verbs, &attr));

	if (rc)
		return rc;
	ep->info.dev.max_qp_rd_atom = (uint32_t)attr.max_qp_rd_atom;
	ep->info.dev.max_qp_init_rd_atom = (uint32_t)attr.max_qp_init_rd_atom;
	ep->info.device_has_mw = attr.device_cap_flags &
				 (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	ep->rxe_wc_flags = attr.vendor_id == RPCRDMA_RXE_VENDOR_ID;
	if (attr.vendor_id == RPCRDMA_SIW_VENDOR_ID)
		siw_key_guard(ep->id->verbs);
	ep->info.transport = ep->id->verbs->device->transport_type;
	ep->params.max_send_sge = min_u32(ep->params.max_send_sge, (uint32_t)attr.max_sge);
	ep->max_read_sge = min_u32(ep->params.max_send_sge, (uint32_t)attr.max_sge_rd);
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

static int ep_create_qp(struct rpcrdma_ep *ep)
{
	struct ibv_qp_init_attr init = {
		.send_cq = ep->cq,
		.recv_cq = ep->cq,
		.cap = {
			.max_send_wr = ep->params.send_depth,
			.max_recv_wr = ep->params.recv_count,
			.max_send_sge = ep->params.max_send_sge,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};

	errno_clear();
	if (rdma_create_qp(ep->id, ep->pd, &init))
		return neg_errno(ENOMEM);
	return 0;
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

/*
 * The kernel finishes removing a device (rdma link delete, a driver
 * unload) in two steps, each without a time limit on soft-RoCE and
 * soft-iWARP: rdma_cm waits until every cm id on the device is destroyed
 * (those of processes it destroys itself once it has queued
 * RDMA_CM_EVENT_DEVICE_REMOVAL; kernel users such as knfsd must destroy
 * theirs), then uverbs removes the device's node and waits until every
 * process has released its files of the device: fds, and mappings of
 * queues (rxe and siw cannot disassociate a context).  An endpoint told
 * RDMA_CM_EVENT_DEVICE_REMOVAL gives back its objects when destroyed, but
 * librdmacm keeps its own context of the device open until it re-reads
 * the device list and finds the device gone, which it is only once the
 * node has vanished, and rdma_cm's step can take seconds (knfsd closes a
 * connection from one of its threads).  So the first endpoint destroyed
 * after the event hands the node to a watcher thread, which waits for
 * the node to vanish (checking every EP_REMOVAL_POLL_MS, for up to
 * EP_REMOVAL_WATCH_MS) and then makes librdmacm re-read the list; it
 * closes a vanished device no cm id uses, and one still used when its
 * last cm id goes.  Nothing else of ours has to happen for that, so a
 * server that accepts no new connection, or a client that makes no new
 * call, lets go as well.  librdmacm (rdma-core 44) gives up re-reading
 * when no device is left at all: then its context stays open, and the
 * removal waits, until the process exits.
 */
#define EP_REMOVAL_POLL_MS  20
#define EP_REMOVAL_WATCH_MS (10 * 60 * 1000)
#define EP_REMOVAL_MAX      8 /* removed devices watched at once */

/* Nodes of removed devices not yet let go; a watcher thread runs while any is. */
static pthread_mutex_t removal_lock = PTHREAD_MUTEX_INITIALIZER;
static char removal_pending[EP_REMOVAL_MAX][sizeof(((struct ibv_device *)0)->dev_path)];
static bool removal_watching;

/*
 * The siw key guard of a removed device goes with it: libsiw maps a CQ's
 * queue from the device's uverbs file, and a mapping holds that file open
 * after librdmacm has closed its context, so the kernel's removal (which
 * waits for every uverbs file of the device to be released: siw and rxe
 * cannot disassociate a context) would wait for the process to exit.
 * Seen in the test bed: rdma link delete blocked in ib_uverbs_remove_one
 * while our server's only hold on siw0 was the guard's 257-page mapping
 * of the deleted uverbs node.  No queue is created on a removed device,
 * so the guard has nothing left to protect.
 */
static void siw_key_guard_drop(struct ibv_context *verbs)
{
	int i, last;

	pthread_mutex_lock(&siw_guard_lock);
	for (i = 0; i < RPCRDMA_SIW_GUARD_MAX && siw_guards[i]; i++) {
		if (siw_guards[i]->context != verbs)
			continue;
		ibv_destroy_cq(siw_guards[i]);
		for (last = i; last + 1 < RPCRDMA_SIW_GUARD_MAX && siw_guards[last + 1]; last++)
			;
		siw_guards[i] = siw_guards[last]; /* keep the array dense: the lookup stops at NULL */
		siw_guards[last] = NULL;
		break;
	}
	pthread_mutex_unlock(&siw_guard_lock);
}

static void ep_forget_removed_devices(void)
{
	struct ibv_context **list = rdma_get_devices(NULL);

	if (list)
		rdma_free_devices(list);
}

/*
 * Drop from the pending list every node that has vanished; true if any
 * had (the caller then has librdmacm re-read the list).  Called with
 * removal_lock held.  *@left: how many are still pending.
 */
static bool removal_reap(int *left)
{
	bool gone = false;

	*left = 0;
	for (int i = 0; i < EP_REMOVAL_MAX; i++) {
		if (!removal_pending[i][0])
			continue;
		if (access(removal_pending[i], F_OK) != 0) {
			removal_pending[i][0] = '\0';
			gone = true;
		} else {
			(*left)++;
		}
	}
	return gone;
}

static void *removal_watch(void *arg)
{
	int64_t deadline = rpcrdma_now_ms() + EP_REMOVAL_WATCH_MS;
	bool gone;
	int left;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&removal_lock);
		gone = removal_reap(&left);
		if (!left || rpcrdma_now_ms() >= deadline)
			removal_watching = false; /* what is left is retried at the next destroy */
		pthread_mutex_unlock(&removal_lock);
		if (gone)
			ep_forget_removed_devices();
		if (!left || rpcrdma_now_ms() >= deadline)
			return NULL;
		nanosleep(&(struct timespec){ 0, EP_REMOVAL_POLL_MS * 1000000L }, NULL);
	}
}

/* Start the watcher with every signal blocked, so the program's signals go to its own threads. */
static bool removal_watch_start(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (pthread_attr_init(&attr))
		return false;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, &attr, removal_watch, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return rc == 0;
}

/*
 * @uverbs_path: the node of a device just removed under an endpoint, or
 * "" when an endpoint without that event is destroyed.  Either way,
 * devices whose node has vanished are let go at once; a new node still
 * there is watched.  Should the watcher be missing (it could not start,
 * or gave up), every later destroy still retries.
 */
static void ep_release_removed_device(const char *uverbs_path)
{
	bool gone, watch = false;
	int i, left, free_slot = -1;

	pthread_mutex_lock(&removal_lock);
	if (uverbs_path[0]) {
		for (i = 0; i < EP_REMOVAL_MAX; i++) {
			if (!strcmp(removal_pending[i], uverbs_path))
				break;
			if (free_slot < 0 && !removal_pending[i][0])
				free_slot = i;
		}
		if (i == EP_REMOVAL_MAX && free_slot >= 0)
			snprintf(removal_pending[free_slot], sizeof(removal_pending[free_slot]), "%s",
				 uverbs_path);
	}
	gone = removal_reap(&left);
	if (left && !removal_watching)
		watch = removal_watching = true;
	pthread_mutex_unlock(&removal_lock);
	if (gone)
		ep_forget_removed_devices();
	if (watch && !removal_watch_start()) {
		pthread_mutex_lock(&removal_lock);
		removal_watching = false;
		pthread_mutex_unlock(&removal_lock);
	}
}

void rpcrdma_ep_destroy(struct rpcrdma_ep *ep)
{
	char uverbs_path[sizeof(((struct ibv_device *)0)->dev_path)] = "";

	if (!ep)
		return;
	if (ep->id && ep->cm_channel)
		ep_cm_drain(ep); /* a DEVICE_REMOVAL behind the failure that ends us */
	if (ep->device_removed && ep->id && ep->id->verbs) {
		snprintf(uverbs_path, sizeof(uverbs_path), "%s", ep->id->verbs->device->dev_path);
		siw_key_guard_drop(ep->id->verbs);
	}
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
	if (ep->id)
		rdma_destroy_id(ep->id);
	if (ep->cm_channel)
		rdma_destroy_event_channel(ep->cm_channel);
	free(ep->slots);
	pthread_mutex_destroy(&ep->post_lock);
	free(ep);
	ep_release_removed_device(uverbs_path);
}

void rpcrdma_ep_stop(struct rpcrdma_ep *ep)
{
	if (!ep || !ep->id || ep->stopped)
		return;
	if (ep->cm_channel)
		ep_cm_drain(ep);
	ep_disconnect(ep);
	if (ep->id->qp)
		rdma_destroy_qp(ep->id);
	ep->stopped = true;
	__atomic_store_n(&ep->disconnected, true, __ATOMIC_RELAXED);
}

/* ---- active side --------------------------------------------------------------------- */

static int ep_resolve(struct rpcrdma_ep *ep, const struct sockaddr *dst, int64_t deadline)
{
	int rc;

	if (rdma_create_id(ep->cm_channel, &ep->id, ep, RDMA_PS_TCP))
		return neg_errno(ENOMEM);
	rc = ep_cm_options_set(ep);
	if (rc)
		return rc;
	if (rdma_resolve_addr(ep->id, NULL, (struct sockaddr *)dst, remaining_ms(deadline) + 1))
		return neg_errno(EHOSTUNREACH);
	rc = ep_cm_wait(ep, RDMA_CM_EVENT_ADDR_RESOLVED, deadline);
	if (rc)
		return rc;
	if (rdma_resolve_route(ep->id, remaining_ms(deadline) + 1))
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
	if (rdma_connect(ep->id, &param))
		return neg_errno(ECONNREFUSED);
	return ep_cm_wait(ep, RDMA_CM_EVENT_ESTABLISHED, deadline);
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
	if (rc) {
		rpcrdma_ep_destroy(ep);
		return rc;
	}
	*out = ep;
	return 0;
}

/*
 * rdma_cm picks the local port at random from its own port space; on
 * iWARP it is also a TCP port, and siw's bind of it fails the connect with
 * EADDRINUSE when an ordinary TCP socket holds it (a listener, a
 * connection, one in TIME_WAIT).  A new cm id picks another port.
 */
#define EP_CONNECT_PORT_TRIES 4

int rpcrdma_ep_connect(const struct sockaddr *dst, const struct rpcrdma_ep_params *params,
		       struct rpcrdma_ep **out)
{
	int64_t deadline = rpcrdma_now_ms() + params->timeout_ms;
	int rc, tries = 0;

	do
		rc = ep_connect_once(dst, params, deadline, out);
	while (rc == -EADDRINUSE && ++tries < EP_CONNECT_PORT_TRIES && remaining_ms(deadline) > 0);
	return rc;
}

/* ---- passive side ---------------------------------------------------------------- */

static bool addr_port_is_any(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return ((const struct sockaddr_in *)addr)->sin_port == 0;
	return addr->sa_family == AF_INET6 && ((const struct sockaddr_in6 *)addr)->sin6_port == 0;
}

/* A new cm id bound to @addr and listening; on failure none is left. */
static int listener_listen(struct rpcrdma_listener *l, const struct sockaddr *addr, int backlog)
{
	int rc = 0;

	errno_clear();
	if (rdma_create_id(l->channel, &l->id, l, RDMA_PS_TCP))
		return neg_errno(ENOMEM);
	if (rdma_bind_addr(l->id, (struct sockaddr *)addr))
		rc = neg_errno(EADDRNOTAVAIL);
	if (!rc && rdma_listen(l->id, backlog))
		rc = neg_errno(EIO);
	if (rc) {
		rdma_destroy_id(l->id);
		l->id = NULL;
	}
	return rc;
}

int rpcrdma_listener_create(const struct sockaddr *addr, const struct rpcrdma_ep_params *params,
			    int backlog, struct rpcrdma_listener **out)
{
	struct rpcrdma_listener *l;
	int rc = -ENOMEM, tries = 0;

	if (!ep_params_valid(params))
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->params = *params;
	l->channel = rdma_create_event_channel();
	if (!l->channel) {
		rc = neg_errno(ENODEV);
		goto out_destroy;
	}
	rc = fd_set_nonblock(l->channel->fd);
	if (rc)
		goto out_destroy;
	/* a port rdma_cm picked may be held as a TCP port (see EP_CONNECT_PORT_TRIES) */
	do
		rc = listener_listen(l, addr, backlog);
	while (rc == -EADDRINUSE && addr_port_is_any(addr) && ++tries < EP_CONNECT_PORT_TRIES);
	if (rc)
		goto out_destroy;
	*out = l;
	return 0;
out_destroy:
	rpcrdma_listener_destroy(l);
	return rc;
}

int rpcrdma_listener_fd(const struct rpcrdma_listener *l)
{
	return l->channel->fd;
}

const struct sockaddr *rpcrdma_listener_addr(const struct rpcrdma_listener *l)
{
	return rdma_get_local_addr(l->id);
}

void rpcrdma_listener_destroy(struct rpcrdma_listener *l)
{
	if (!l)
		return;
	if (l->id)
		rdma_destroy_id(l->id);
	if (l->channel)
		rdma_destroy_event_channel(l->channel);
	free(l);
}

/*
 * Read a request while its event is unacked (the private data lives in
 * the event).  As with the accept, depths are from our side: the
 * initiator's ORD arrives as responder_resources, its IRD as
 * initiator_depth.
 */
static void ep_take_request(struct rpcrdma_ep *ep, const struct rdma_conn_param *conn)
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
	/* INSUFFICIENT_IRD still leaves a usable choice: the initiator lowers its ORD. */
	rpcrdma_rd_respond(&ep->info.dev, &ep->params.rd, &initiator, &choice);
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
	if (rc)
		return rc;
	ep_take_request(ep, request);
	param.responder_resources = (uint8_t)min_u32(ep->info.rd.ird, RPCRDMA_CM_DEPTH_MAX);
	param.initiator_depth = (uint8_t)min_u32(ep->info.rd.ord, RPCRDMA_CM_DEPTH_MAX);
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
static int ep_from_request(const struct rpcrdma_ep_params *params, struct rdma_cm_event *ev,
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

int rpcrdma_listener_accept(struct rpcrdma_listener *l, struct rpcrdma_ep **out)
{
	struct rdma_cm_event *ev;
	int rc;

	rc = cm_next_event(l->channel, 0, &ev);
	if (rc)
		return rc == -ETIMEDOUT ? -EAGAIN : rc;
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return ep_from_request(&l->params, ev, out);
	rc = cm_event_handle(NULL, ev);
	rdma_ack_cm_event(ev);
	return rc < 0 ? rc : -EAGAIN;
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

uint8_t *rpcrdma_ep_recv_buf(const struct rpcrdma_ep *ep, uint32_t index)
{
	if (index >= ep->params.recv_count)
		return NULL;
	return ep->recv_bufs + (size_t)index * ep->params.recv_size;
}

int rpcrdma_ep_repost_recv(struct rpcrdma_ep *ep, uint32_t index)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)rpcrdma_ep_recv_buf(ep, index),
		.length = ep->params.recv_size,
		.lkey = ep->recv_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = index, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (index >= ep->params.recv_count)
		return -EINVAL;
	return verbs_rc(ibv_post_recv(ep->id->qp, &wr, &bad));
}

/*
 * Every send-queue WR is signaled and takes a slot until its completion.
 * The @n WRs chained from @wr, all of @kind, are posted at once (one
 * doorbell); the slots are counted busy before the post, since the poll
 * may retire them as soon as it is done.  post_lock held.
 */
static int ep_post_chain(struct rpcrdma_ep *ep, struct ibv_send_wr *wr, uint32_t n,
			 enum rpcrdma_wc_kind kind, const uint64_t *wr_ids, uint32_t *done)
{
	uint32_t depth = ep->params.send_depth, posted = 0;
	struct ibv_send_wr *bad = NULL, *w = wr;
	int rc;

	*done = 0;
	if (__atomic_load_n(&ep->disconnected, __ATOMIC_RELAXED))
		return -ENOTCONN;
	if (n > depth - __atomic_load_n(&ep->slots_busy, __ATOMIC_ACQUIRE))
		return -ENOBUFS;
	for (uint32_t i = 0; i < n; i++, w = w->next) {
		struct rpcrdma_send_slot *sl = &ep->slots[(ep->slot_next + i) % depth];

		if (w->num_sge < 0 || (uint32_t)w->num_sge > ep->params.max_send_sge)
			return -EINVAL;
		__atomic_store_n(&sl->wr_id, wr_ids[i], __ATOMIC_RELAXED);
		__atomic_store_n(&sl->kind, kind, __ATOMIC_RELEASE);
		w->wr_id = (uint64_t)ep->params.recv_count + (ep->slot_next + i) % depth;
		w->send_flags |= IBV_SEND_SIGNALED;
	}
	__atomic_add_fetch(&ep->slots_busy, n, __ATOMIC_ACQ_REL);
	rc = verbs_rc(ibv_post_send(ep->id->qp, wr, &bad));
	for (w = wr; rc && bad && w && w != bad; w = w->next)
		posted++; /* a provider that names no bad WR posted none */
	if (!rc)
		posted = n;
	__atomic_sub_fetch(&ep->slots_busy, n - posted, __ATOMIC_ACQ_REL);
	ep->slot_next = (ep->slot_next + posted) % depth;
	*done = posted;
	return rc;
}

static int ep_post(struct rpcrdma_ep *ep, struct ibv_send_wr *wr, enum rpcrdma_wc_kind kind,
		   uint64_t wr_id)
{
	uint32_t posted;
	int rc;

	wr->next = NULL;
	pthread_mutex_lock(&ep->post_lock);
	rc = ep_post_chain(ep, wr, 1, kind, &wr_id, &posted);
	pthread_mutex_unlock(&ep->post_lock);
	return rc;
}

int rpcrdma_ep_post_sends(struct rpcrdma_ep *ep, struct rpcrdma_send *sends, uint32_t n,
			  uint32_t *posted)
{
	struct ibv_send_wr wr[RPCRDMA_POST_SENDS_MAX];
	uint64_t wr_ids[RPCRDMA_POST_SENDS_MAX];
	int rc = 0;

	*posted = 0;
	for (uint32_t at = 0; at < n && !rc; at += RPCRDMA_POST_SENDS_MAX) {
		uint32_t k = min_u32(n - at, RPCRDMA_POST_SENDS_MAX), done;

		for (uint32_t i = 0; i < k; i++) {
			struct rpcrdma_send *s = &sends[at + i];

			wr[i] = (struct ibv_send_wr){
				.next = i + 1 < k ? &wr[i + 1] : NULL,
				.sg_list = &s->sge,
				.num_sge = 1,
				.opcode = s->invalidate ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
			};
			if (s->invalidate)
				wr[i].invalidate_rkey = s->invalidate_rkey;
			wr_ids[i] = s->wr_id;
		}
		pthread_mutex_lock(&ep->post_lock);
		rc = ep_post_chain(ep, wr, k, RPCRDMA_WC_SEND, wr_ids, &done);
		pthread_mutex_unlock(&ep->post_lock);
		*posted += done;
	}
	return rc;
}

int rpcrdma_ep_post_read(struct rpcrdma_ep *ep, struct ibv_sge *sge, int nsge, uint64_t raddr,
			 uint32_t rkey, uint64_t wr_id)
{
	struct ibv_send_wr wr = {
		.sg_list = sge,
		.num_sge = nsge,
		.opcode = IBV_WR_RDMA_READ,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};

	/* siw serves one SGE per Read (max_sge_rd); fail here, not as a broken QP. */
	if (nsge > 0 && (uint32_t)nsge > ep->max_read_sge)
		return -EINVAL;
	return ep_post(ep, &wr, RPCRDMA_WC_READ, wr_id);
}

int rpcrdma_ep_post_write(struct rpcrdma_ep *ep, struct ibv_sge *sge, int nsge, uint64_t raddr,
			  uint32_t rkey, uint64_t wr_id)
{
	struct ibv_send_wr wr = {
		.sg_list = sge,
		.num_sge = nsge,
		.opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};

	return ep_post(ep, &wr, RPCRDMA_WC_WRITE, wr_id);
}

int rpcrdma_ep_mw_alloc(struct rpcrdma_ep *ep, struct ibv_mw **out)
{
	struct ibv_mw *mw;

	if (!ep->info.device_has_mw)
		return -EOPNOTSUPP;
	errno_clear();
	mw = ibv_alloc_mw(ep->pd, IBV_MW_TYPE_2);
	if (!mw)
		return neg_errno(ENOMEM);
	*out = mw;
	return 0;
}

void rpcrdma_ep_mw_free(struct ibv_mw *mw)
{
	if (mw)
		ibv_dealloc_mw(mw);
}

static bool mw_range_valid(const struct ibv_mr *mr, uint64_t addr, uint64_t len)
{
	uint64_t start = (uintptr_t)mr->addr;

	return len && addr >= start && len <= mr->length && addr - start <= mr->length - len;
}

int rpcrdma_ep_post_bind_mw(struct rpcrdma_ep *ep, struct ibv_mw *mw, struct ibv_mr *mr,
			    uint64_t addr, uint64_t len, unsigned int access, uint64_t wr_id,
			    uint32_t *rkey)
{
	const unsigned int remote = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW };
	int rc;

	if (!mw || !mr || !access || (access & ~remote) || !mw_range_valid(mr, addr, len))
		return -EINVAL;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = mr, .addr = addr, .length = len, .mw_access_flags = access,
	};
	rc = ep_post(ep, &wr, RPCRDMA_WC_BIND_MW, wr_id);
	if (rc)
		return rc;
	mw->rkey = wr.bind_mw.rkey;
	*rkey = mw->rkey;
	return 0;
}

int rpcrdma_ep_post_local_inv(struct rpcrdma_ep *ep, uint32_t rkey, uint64_t wr_id)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = rkey };

	return ep_post(ep, &wr, RPCRDMA_WC_LOCAL_INV, wr_id);
}

int rpcrdma_ep_fd(const struct rpcrdma_ep *ep)
{
	return ep->comp_channel->fd;
}

int rpcrdma_ep_cm_fd(const struct rpcrdma_ep *ep)
{
	return ep->cm_channel->fd;
}

/*
 * A receive was a Send With Invalidate when the provider says so with
 * IBV_WC_WITH_INV.  rxe does not: its kernel marks the CQE with
 * IB_WC_WITH_INVALIDATE, which user space reads as IBV_WC_IP_CSUM_OK,
 * and fills invalidated_rkey.  That bit is taken as the mark only on
 * rxe (its vendor id), which sets it for nothing else and zeroes each
 * CQE, and only without IBV_WC_WITH_IMM (the rkey shares a union with
 * the immediate data).  The rkey alone is never trusted: providers
 * leave it alone for plain Sends, and rpcrdma_ep_poll() zeroes the
 * array they fill so a stale value cannot remain there either.
 */
static void wc_recv_invalidate(const struct rpcrdma_ep *ep, const struct ibv_wc *in,
			       struct rpcrdma_wc *out)
{
	bool inv = in->wc_flags & IBV_WC_WITH_INV;

	if (!inv && ep->rxe_wc_flags && !(in->wc_flags & IBV_WC_WITH_IMM))
		inv = in->wc_flags & RPCRDMA_KERNEL_WC_WITH_INV;
	out->with_invalidate = inv;
	out->invalidated_rkey = inv ? in->invalidated_rkey : 0;
}

static void wc_from_ibv(struct rpcrdma_ep *ep, const struct ibv_wc *in, struct rpcrdma_wc *out)
{
	uint64_t slot = in->wr_id - ep->params.recv_count;

	*out = (struct rpcrdma_wc){ .status = in->status };
	if (in->wr_id < ep->params.recv_count) {
		out->kind = RPCRDMA_WC_RECV;
		out->wr_id = in->wr_id;
		if (in->status == IBV_WC_SUCCESS) {
			out->byte_len = in->byte_len;
			wc_recv_invalidate(ep, in, out);
		}
		return;
	}
	if (slot >= ep->params.send_depth)
		return;
	out->kind = __atomic_load_n(&ep->slots[slot].kind, __ATOMIC_ACQUIRE);
	out->wr_id = __atomic_load_n(&ep->slots[slot].wr_id, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&ep->slots_busy, 1, __ATOMIC_ACQ_REL);
}

int rpcrdma_wc_errno(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_SUCCESS:
		return 0;
	case IBV_WC_WR_FLUSH_ERR:
		return ECONNRESET;
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RESP_TIMEOUT_ERR:
		return ETIMEDOUT;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return ENOBUFS;
	case IBV_WC_REM_ACCESS_ERR:
		return EACCES;
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_REM_ABORT_ERR:
	case IBV_WC_REM_INV_RD_REQ_ERR:
		return EREMOTEIO;
	case IBV_WC_BAD_RESP_ERR:
		return EPROTO;
	case IBV_WC_LOC_LEN_ERR:
		return EMSGSIZE; /* a message larger than the posted receive, or a work request than the device allows */
	default:
		return EIO;
	}
}

const char *rpcrdma_wc_failure(enum ibv_wc_status status)
{
	if (status == IBV_WC_WR_FLUSH_ERR)
		return "the queue pair went down, its work requests flushed";
	return ibv_wc_status_str(status);
}

/*
 * Consume the channel's event and re-arm before polling, so none is lost.
 * An armed CQ raises one event and is then disarmed, so one read finds it,
 * and a CQ still armed needs no new request: each is a system call (rxe
 * requests notification through the kernel), paid on every poll otherwise.
 */
static int ep_cq_rearm(struct rpcrdma_ep *ep)
{
	struct ibv_cq *cq;
	void *ctx;
	int rc;

	if (ep->cq_armed && ibv_get_cq_event(ep->comp_channel, &cq, &ctx) == 0) {
		ep->cq_events++;
		ep->cq_armed = false;
	}
	if (ep->cq_armed)
		return 0;
	rc = verbs_rc(ibv_req_notify_cq(ep->cq, 0));
	ep->cq_armed = !rc;
	return rc;
}

int rpcrdma_ep_poll(struct rpcrdma_ep *ep, struct rpcrdma_wc *wc, int max)
{
	struct ibv_wc batch[RPCRDMA_WC_BATCH];
	int count = 0, n;
	int rc = ep_cq_rearm(ep);

	if (rc || max <= 0)
		return rc;
	do {
		memset(batch, 0, sizeof(batch));
		n = ibv_poll_cq(ep->cq, min_u32((uint32_t)(max - count), RPCRDMA_WC_BATCH), batch);
		for (int i = 0; i < n; i++)
			wc_from_ibv(ep, &batch[i], &wc[count++]);
	} while (n == RPCRDMA_WC_BATCH && count < max);
	if (ep->cq_events) {
		ibv_ack_cq_events(ep->cq, ep->cq_events);
		ep->cq_events = 0;
	}
	return n < 0 ? -EIO : count;
}

int rpcrdma_ep_wait(struct rpcrdma_ep *ep, int timeout_ms)
{
	/* A zero timeout reads no clock: in the test bed's guest that is a system call. */
	int64_t deadline = timeout_ms > 0 ? rpcrdma_now_ms() + timeout_ms : 0;
	struct pollfd pfd[2] = {
		{ .fd = ep->comp_channel->fd, .events = POLLIN },
		{ .fd = ep->cm_channel->fd, .events = POLLIN },
	};
	int n;

	do {
		if (ep->disconnected)
			return -ECONNRESET;
		n = poll(pfd, 2, timeout_ms <= 0 ? timeout_ms : remaining_ms(deadline));
		if (n < 0 && errno != EINTR)
			return neg_errno(EIO);
		if (n > 0 && pfd[1].revents)
			ep_cm_drain(ep);
		if (ep->disconnected)
			return -ECONNRESET;
		if (n > 0 && pfd[0].revents)
			return 1;
	} while (timeout_ms < 0 || (timeout_ms > 0 && remaining_ms(deadline) > 0));
	return 0;
}

const char *rpcrdma_ep_wait_failure(int rc)
{
	return rc == -ECONNRESET ? "the connection manager reported a disconnect"
				 : "waiting for connection manager events failed";
}

uint32_t rpcrdma_ep_send_depth(const struct rpcrdma_ep *ep)
{
	return ep->params.send_depth;
}

uint32_t rpcrdma_ep_send_free(const struct rpcrdma_ep *ep)
{
	return ep->params.send_depth - __atomic_load_n(&ep->slots_busy, __ATOMIC_ACQUIRE);
}

bool rpcrdma_ep_disconnected(const struct rpcrdma_ep *ep)
{
	return ep->disconnected;
}

bool rpcrdma_ep_established(const struct rpcrdma_ep *ep)
{
	return ep->connected;
}
