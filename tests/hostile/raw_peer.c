/*
 * The hostile peer's core (raw_peer.h): connection setup in either role
 * with raw librdmacm/libibverbs, registered buffers, posting Sends,
 * receives, RDMA Reads and Writes, waiting for completions and rdma_cm
 * events with a timeout, and the big-endian writer/reader.  It never uses
 * the library under test, so whatever it builds reaches the victim as is.
 */
#include "raw_peer.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RAW_MAX_RDMA_WR 16u /* RDMA Read/Write work requests beyond the send slots */

static uint64_t wr_id_make(enum raw_wr_kind kind, uint64_t seq, uint32_t slot)
{
	return ((uint64_t)kind << 56) | ((seq & 0xffffffu) << 32) | slot;
}

long long raw_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void raw_sleep_ms(long long ms)
{
	if (ms > 0)
		nanosleep(&(struct timespec){ ms / 1000, (ms % 1000) * 1000000L }, NULL);
}

void raw_vfail(const char *prog, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: FAIL: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static int ms_left(long long deadline)
{
	long long left = deadline - raw_now_ms();

	return left < 0 ? 0 : (int)left;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

void raw_peer_config_default(struct raw_peer_config *cfg)
{
	*cfg = (struct raw_peer_config){
		.send_bytes = 8192,
		.send_count = 32,
		.recv_bytes = 8192,
		.recv_count = 32,
		.mem_bytes = 1u << 20,
		.initiator_depth = 4,
		.responder_resources = 4,
	};
}

static void config_fill(struct raw_peer_config *out, const struct raw_peer_config *in)
{
	struct raw_peer_config def;

	raw_peer_config_default(&def);
	*out = in ? *in : def;
	if (!out->send_bytes)
		out->send_bytes = def.send_bytes;
	if (!out->send_count)
		out->send_count = def.send_count;
	if (!out->recv_bytes)
		out->recv_bytes = def.recv_bytes;
	if (!out->recv_count)
		out->recv_count = def.recv_count;
	if (!out->mem_bytes)
		out->mem_bytes = def.mem_bytes;
}

/* What the last local failure of a connect in this thread was: step and errno. */
static __thread char local_why[160];
static __thread int local_errno;

static enum raw_connect_result local_fail(const char *step)
{
	int e = errno;

	local_errno = e;
	snprintf(local_why, sizeof(local_why), "local error: %s: %s (errno %d)", step,
		 e ? strerror(e) : "no errno set", e);
	return RAW_CONNECT_LOCAL_ERROR;
}

const char *raw_connect_result_str(enum raw_connect_result r)
{
	switch (r) {
	case RAW_CONNECT_OK: return "connected";
	case RAW_CONNECT_REJECTED: return "rejected";
	case RAW_CONNECT_UNREACHABLE: return "unreachable";
	case RAW_CONNECT_TIMEOUT: return "timeout";
	case RAW_CONNECT_LOCAL_ERROR: return local_why[0] ? local_why : "local error";
	}
	return "?";
}

const char *raw_wait_str(enum raw_wait w)
{
	switch (w) {
	case RAW_WAIT_COMPLETION: return "completion";
	case RAW_WAIT_TIMEOUT: return "timeout";
	case RAW_WAIT_DISCONNECTED: return "disconnected";
	case RAW_WAIT_ERROR: return "error";
	}
	return "?";
}

/* ---- rdma_cm events ----------------------------------------------------------- */

/*
 * Wait for the next event on @ec; returns a copy of its type, status and
 * private data in the out-parameters, and acks it.  0 ok, 1 timeout, -1 error.
 */
struct cm_ev {
	enum rdma_cm_event_type type;
	int status;
	struct rdma_cm_id *id;      /* the event's id (a new id for CONNECT_REQUEST) */
	uint8_t pd[RAW_PEER_MAX_PD];
	size_t pd_len;
	uint8_t initiator_depth, responder_resources;
};

static int cm_next(struct rdma_event_channel *ec, int timeout_ms, struct cm_ev *out)
{
	struct rdma_cm_event *ev;
	long long deadline = raw_now_ms() + timeout_ms;

	for (;;) {
		if (rdma_get_cm_event(ec, &ev) == 0)
			break;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		struct pollfd pfd = { .fd = ec->fd, .events = POLLIN };
		int left = ms_left(deadline);

		if (left == 0)
			return 1;
		if (poll(&pfd, 1, left) < 0 && errno != EINTR)
			return -1;
	}
	memset(out, 0, sizeof(*out));
	out->type = ev->event;
	out->status = ev->status;
	out->id = ev->id;
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST || ev->event == RDMA_CM_EVENT_ESTABLISHED ||
	    ev->event == RDMA_CM_EVENT_REJECTED || ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE) {
		const struct rdma_conn_param *c = &ev->param.conn;
		size_t n = c->private_data_len; /* uint8_t: always fits RAW_PEER_MAX_PD */

		if (c->private_data && n)
			memcpy(out->pd, c->private_data, n);
		out->pd_len = c->private_data ? n : 0;
		out->initiator_depth = c->initiator_depth;
		out->responder_resources = c->responder_resources;
	}
	rdma_ack_cm_event(ev);
	return 0;
}

static struct rdma_event_channel *event_channel_new(void)
{
	struct rdma_event_channel *ec = rdma_create_event_channel();

	if (ec && set_nonblock(ec->fd)) {
		rdma_destroy_event_channel(ec);
		return NULL;
	}
	return ec;
}

bool raw_peer_poll_cm(struct raw_peer *p)
{
	struct cm_ev ev;

	while (!p->disconnected && !p->cm_unread && cm_next(p->ec, 0, &ev) == 0) {
		if (ev.type == RDMA_CM_EVENT_DISCONNECTED || ev.type == RDMA_CM_EVENT_DEVICE_REMOVAL ||
		    ev.type == RDMA_CM_EVENT_TIMEWAIT_EXIT) {
			p->disconnected = true;
			p->connected = false;
		}
	}
	return p->disconnected;
}

bool raw_peer_wait_disconnect(struct raw_peer *p, int timeout_ms)
{
	long long deadline = raw_now_ms() + timeout_ms;

	while (!raw_peer_poll_cm(p)) {
		struct pollfd pfd = { .fd = p->ec->fd, .events = POLLIN };
		int left = ms_left(deadline);

		if (left == 0)
			return false;
		poll(&pfd, 1, left);
	}
	return true;
}

/* ---- resources ----------------------------------------------------------------- */

static struct ibv_mr *reg_area(struct ibv_pd *pd, uint8_t **buf, size_t bytes, int access)
{
	*buf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
	if (!*buf)
		return NULL;
	memset(*buf, 0, bytes);
	return ibv_reg_mr(pd, *buf, bytes, access);
}

/* PD, CQ, QP on p->id, the three areas, all receives posted. */
static int peer_build(struct raw_peer *p)
{
	struct raw_peer_config *c = &p->cfg;
	uint32_t cqe = c->send_count + c->recv_count + RAW_MAX_RDMA_WR + 16;
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = {
			.max_send_wr = c->send_count + RAW_MAX_RDMA_WR,
			.max_recv_wr = c->recv_count,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};

	p->pd = ibv_alloc_pd(p->id->verbs);
	p->cc = p->pd ? ibv_create_comp_channel(p->id->verbs) : NULL;
	if (!p->cc || set_nonblock(p->cc->fd))
		return -1;
	p->cq = ibv_create_cq(p->id->verbs, (int)cqe, NULL, p->cc, 0);
	if (!p->cq || ibv_req_notify_cq(p->cq, 0))
		return -1;
	qa.send_cq = p->cq;
	qa.recv_cq = p->cq;
	if (rdma_create_qp(p->id, p->pd, &qa))
		return -1;
	p->qp = p->id->qp;
	p->send_mr = reg_area(p->pd, &p->send_buf, (size_t)c->send_bytes * c->send_count, 0);
	p->recv_mr = reg_area(p->pd, &p->recv_buf, (size_t)c->recv_bytes * c->recv_count,
			      IBV_ACCESS_LOCAL_WRITE);
	p->mem_mr = reg_area(p->pd, &p->mem, c->mem_bytes,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!p->send_mr || !p->recv_mr || !p->mem_mr)
		return -1;
	for (uint32_t i = 0; i < c->recv_count && !c->hold_recvs; i++)
		if (raw_peer_post_recv(p, i))
			return -1;
	return 0;
}

static struct raw_peer *peer_new(const struct raw_peer_config *cfg)
{
	struct raw_peer *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	config_fill(&p->cfg, cfg);
	p->ec = event_channel_new();
	if (!p->ec) {
		free(p);
		return NULL;
	}
	return p;
}

static void free_area(struct ibv_mr *mr, uint8_t *buf)
{
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
}

void raw_peer_destroy(struct raw_peer *p)
{
	if (!p)
		return;
	if (p->id && p->connected)
		rdma_disconnect(p->id);
	if (p->qp)
		rdma_destroy_qp(p->id);
	free_area(p->send_mr, p->send_buf);
	free_area(p->recv_mr, p->recv_buf);
	free_area(p->mem_mr, p->mem);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->cc)
		ibv_destroy_comp_channel(p->cc);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->id)
		rdma_destroy_id(p->id);
	if (p->ec)
		rdma_destroy_event_channel(p->ec);
	free(p);
}

/* ---- client role ------------------------------------------------------------------- */

static int parse_addr(const char *addr, uint16_t port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST, .ai_family = AF_UNSPEC };
	struct addrinfo *ai;
	char service[8];

	snprintf(service, sizeof(service), "%u", port);
	if (getaddrinfo(addr, service, &hints, &ai))
		return -1;
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

/* Wait for @want on the peer's channel; anything else ends the wait. */
static enum raw_connect_result wait_cm(struct raw_peer *p, enum rdma_cm_event_type want,
				       long long deadline, struct cm_ev *ev)
{
	int rc = cm_next(p->ec, ms_left(deadline), ev);

	if (rc > 0)
		return RAW_CONNECT_TIMEOUT;
	if (rc < 0)
		return local_fail("waiting for an rdma_cm event");
	if (ev->type == want)
		return RAW_CONNECT_OK;
	return ev->type == RDMA_CM_EVENT_REJECTED ? RAW_CONNECT_REJECTED : RAW_CONNECT_UNREACHABLE;
}

/* Resolve, build the QP and buffers, rdma_connect(); no event read after that. */
static enum raw_connect_result connect_begin(struct raw_peer *p, const char *addr, uint16_t port,
					     const struct raw_connect_params *cp, long long deadline)
{
	struct sockaddr_storage ss;
	struct rdma_conn_param param = { 0 };
	enum raw_connect_result r;
	struct cm_ev ev;

	errno = 0; /* libsiw can fail without setting it */
	if (parse_addr(addr, port, &ss))
		return local_fail("parsing the address");
	if (rdma_create_id(p->ec, &p->id, p, RDMA_PS_TCP))
		return local_fail("rdma_create_id");
	if (rdma_resolve_addr(p->id, NULL, (struct sockaddr *)&ss, ms_left(deadline)))
		return local_fail("rdma_resolve_addr");
	if ((r = wait_cm(p, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, &ev)))
		return r;
	if (rdma_resolve_route(p->id, ms_left(deadline)))
		return local_fail("rdma_resolve_route");
	if ((r = wait_cm(p, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, &ev)))
		return r;
	errno = 0;
	if (peer_build(p))
		return local_fail("building the PD, CQ, QP and buffers");
	param.initiator_depth = p->cfg.initiator_depth;
	param.responder_resources = p->cfg.responder_resources;
	param.retry_count = 6;
	param.rnr_retry_count = 7;
	if (cp) {
		param.private_data = cp->private_data;
		param.private_data_len = cp->private_data_len;
		if (cp->retry_count || cp->rnr_retry_count) {
			param.retry_count = cp->retry_count;
			param.rnr_retry_count = cp->rnr_retry_count;
		}
	}
	if (rdma_connect(p->id, &param))
		return local_fail("rdma_connect");
	return RAW_CONNECT_OK;
}

/* After connect_begin(): wait for ESTABLISHED, keep what the server's accept or reject said. */
static enum raw_connect_result connect_finish(struct raw_peer *p, long long deadline)
{
	enum raw_connect_result r;
	struct cm_ev ev;

	r = wait_cm(p, RDMA_CM_EVENT_ESTABLISHED, deadline, &ev);
	if (r == RAW_CONNECT_OK || r == RAW_CONNECT_REJECTED) {
		memcpy(p->peer_pd, ev.pd, ev.pd_len);
		p->peer_pd_len = ev.pd_len;
		p->peer_initiator_depth = ev.initiator_depth;
		p->peer_responder_resources = ev.responder_resources;
	}
	return r;
}

/*
 * rdma_cm picks the local port at random; on iWARP it is a TCP port, and
 * siw's bind of it fails with EADDRINUSE when an ordinary TCP socket holds
 * it (one in TIME_WAIT will do).  A new cm id picks another port, as the
 * library's own connect does (rpcrdma/verbs.c).
 */
#define CONNECT_PORT_TRIES 4

static struct raw_peer *connect_any(const char *addr, uint16_t port,
				    const struct raw_peer_config *cfg,
				    const struct raw_connect_params *cp, int timeout_ms, bool finish,
				    enum raw_connect_result *result)
{
	long long deadline = raw_now_ms() + timeout_ms;
	enum raw_connect_result r;
	struct raw_peer *p;
	int tries = 0;

	do {
		local_why[0] = 0;
		local_errno = 0;
		p = peer_new(cfg);
		r = p ? connect_begin(p, addr, port, cp, deadline) : local_fail("allocating the peer");
		if (r == RAW_CONNECT_OK && finish)
			r = connect_finish(p, deadline);
		if (r == RAW_CONNECT_OK)
			break;
		raw_peer_destroy(p);
		p = NULL;
	} while (r == RAW_CONNECT_LOCAL_ERROR && local_errno == EADDRINUSE &&
		 ++tries < CONNECT_PORT_TRIES && ms_left(deadline) > 0);
	if (result)
		*result = r;
	return p;
}

struct raw_peer *raw_connect(const char *addr, uint16_t port, const struct raw_peer_config *cfg,
			     const struct raw_connect_params *cp, int timeout_ms,
			     enum raw_connect_result *result)
{
	struct raw_peer *p = connect_any(addr, port, cfg, cp, timeout_ms, true, result);

	if (p)
		p->connected = true;
	return p;
}

struct raw_peer *raw_connect_start(const char *addr, uint16_t port,
				   const struct raw_peer_config *cfg,
				   const struct raw_connect_params *cp, int timeout_ms,
				   enum raw_connect_result *result)
{
	struct raw_peer *p = connect_any(addr, port, cfg, cp, timeout_ms, false, result);

	if (p)
		p->cm_unread = true;
	return p;
}

uint16_t raw_peer_local_port(const struct raw_peer *p)
{
	return ntohs(rdma_get_src_port(p->id));
}

/* One step of librdmacm's own QP transitions: the attributes from the kernel's CM. */
static int qp_to_state(struct raw_peer *p, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };
	int mask;

	if (rdma_init_qp_attr(p->id, &attr, &mask))
		return -1;
	return ibv_modify_qp(p->qp, &attr, mask) ? -1 : 0;
}

int raw_peer_rts_without_rtu(struct raw_peer *p, int timeout_ms)
{
	struct pollfd pfd = { .fd = p->ec->fd, .events = POLLIN };

	if (p->id->verbs->device->transport_type != IBV_TRANSPORT_IB)
		return -1;
	/* The CONNECT_RESPONSE waiting there means the kernel CM holds the REP. */
	if (poll(&pfd, 1, timeout_ms) != 1)
		return -1;
	errno = 0;
	if (qp_to_state(p, IBV_QPS_INIT) || qp_to_state(p, IBV_QPS_RTR) ||
	    qp_to_state(p, IBV_QPS_RTS))
		return -1;
	return 0;
}

/* ---- server role ------------------------------------------------------------------- */

struct raw_listener *raw_listen(const char *addr, uint16_t port)
{
	struct raw_listener *l = calloc(1, sizeof(*l));
	struct sockaddr_storage ss;

	if (!l)
		return NULL;
	l->ec = event_channel_new();
	if (!l->ec || parse_addr(addr, port, &ss) || rdma_create_id(l->ec, &l->id, l, RDMA_PS_TCP) ||
	    rdma_bind_addr(l->id, (struct sockaddr *)&ss) || rdma_listen(l->id, 16)) {
		raw_listener_destroy(l);
		return NULL;
	}
	l->port = ntohs(rdma_get_src_port(l->id));
	return l;
}

void raw_listener_destroy(struct raw_listener *l)
{
	if (!l)
		return;
	if (l->id)
		rdma_destroy_id(l->id);
	if (l->ec)
		rdma_destroy_event_channel(l->ec);
	free(l);
}

int raw_listener_wait_request(struct raw_listener *l, int timeout_ms, struct raw_conn_request *req)
{
	long long deadline = raw_now_ms() + timeout_ms;
	struct cm_ev ev;

	for (;;) {
		int rc = cm_next(l->ec, ms_left(deadline), &ev);

		if (rc)
			return rc > 0 ? 0 : -1;
		if (ev.type == RDMA_CM_EVENT_CONNECT_REQUEST)
			break;
		/* Events of ids not yet migrated (e.g. a rejected request's): ignore. */
	}
	memset(req, 0, sizeof(*req));
	req->id = ev.id;
	memcpy(req->private_data, ev.pd, ev.pd_len);
	req->private_data_len = ev.pd_len;
	req->initiator_depth = ev.initiator_depth;
	req->responder_resources = ev.responder_resources;
	return 1;
}

int raw_reject(struct raw_conn_request *req, const void *private_data, uint8_t len)
{
	int rc = rdma_reject(req->id, private_data, len);

	rdma_destroy_id(req->id);
	req->id = NULL;
	return rc ? -1 : 0;
}

struct raw_peer *raw_accept(struct raw_conn_request *req, const struct raw_peer_config *cfg,
			    const void *private_data, uint8_t len, int timeout_ms)
{
	struct raw_peer *p = peer_new(cfg);
	struct rdma_conn_param param = { 0 };
	long long deadline = raw_now_ms() + timeout_ms;
	struct cm_ev ev;

	if (!p || rdma_migrate_id(req->id, p->ec)) {
		raw_reject(req, NULL, 0);
		raw_peer_destroy(p);
		return NULL;
	}
	p->id = req->id;
	req->id = NULL;
	memcpy(p->peer_pd, req->private_data, req->private_data_len);
	p->peer_pd_len = req->private_data_len;
	p->peer_initiator_depth = req->initiator_depth;
	p->peer_responder_resources = req->responder_resources;
	param.initiator_depth = p->cfg.initiator_depth;
	param.responder_resources = p->cfg.responder_resources;
	param.retry_count = 6;
	param.rnr_retry_count = 7;
	param.private_data = private_data;
	param.private_data_len = len;
	if (peer_build(p) || rdma_accept(p->id, &param) ||
	    wait_cm(p, RDMA_CM_EVENT_ESTABLISHED, deadline, &ev) != RAW_CONNECT_OK) {
		if (!p->qp)
			rdma_reject(p->id, NULL, 0);
		raw_peer_destroy(p);
		return NULL;
	}
	p->connected = true;
	return p;
}

/* ---- data path -------------------------------------------------------------------- */

uint8_t *raw_peer_mem(struct raw_peer *p)
{
	return p->mem;
}

uint32_t raw_peer_mem_rkey(const struct raw_peer *p)
{
	return p->mem_mr->rkey;
}

uint64_t raw_peer_mem_addr(const struct raw_peer *p, uint32_t offset)
{
	return (uint64_t)(uintptr_t)p->mem + offset;
}

uint8_t *raw_peer_recv_buf(struct raw_peer *p, uint32_t slot)
{
	return p->recv_buf + (size_t)slot * p->cfg.recv_bytes;
}

int raw_peer_post_recv(struct raw_peer *p, uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)raw_peer_recv_buf(p, slot),
		.length = p->cfg.recv_bytes,
		.lkey = p->recv_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id_make(RAW_WR_RECV, 0, slot), .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(p->qp, &wr, &bad) ? -1 : 0;
}

uint64_t raw_peer_send(struct raw_peer *p, const void *data, uint32_t len, bool invalidate,
		       uint32_t inv_rkey)
{
	uint32_t slot = p->next_send;
	uint8_t *buf = p->send_buf + (size_t)slot * p->cfg.send_bytes;
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = p->send_mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id_make(RAW_WR_SEND, ++p->next_wr_seq, slot),
		.sg_list = len ? &sge : NULL,
		.num_sge = len ? 1 : 0,
		.opcode = invalidate ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	if (len > p->cfg.send_bytes) {
		errno = EMSGSIZE;
		return 0;
	}
	if (invalidate)
		wr.invalidate_rkey = inv_rkey;
	if (len)
		memcpy(buf, data, len);
	p->next_send = (slot + 1) % p->cfg.send_count;
	if (ibv_post_send(p->qp, &wr, &bad))
		return 0;
	return wr.wr_id;
}

static bool stash_pop(struct raw_peer *p, struct ibv_wc *wc)
{
	if (!p->stash_count)
		return false;
	*wc = p->stash[p->stash_head];
	p->stash_head = (p->stash_head + 1) % RAW_PEER_STASH;
	p->stash_count--;
	return true;
}

static void stash_push(struct raw_peer *p, const struct ibv_wc *wc)
{
	if (p->stash_count == RAW_PEER_STASH) /* full: drop the oldest */
		stash_pop(p, &(struct ibv_wc){ 0 });
	p->stash[(p->stash_head + p->stash_count) % RAW_PEER_STASH] = *wc;
	p->stash_count++;
}

/* Poll the CQ once, re-arming it through the completion channel. */
static int cq_poll_one(struct raw_peer *p, struct ibv_wc *wc)
{
	struct ibv_cq *cq;
	void *ctx;
	int n;

	while (ibv_get_cq_event(p->cc, &cq, &ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		ibv_req_notify_cq(cq, 0);
	}
	n = ibv_poll_cq(p->cq, 1, wc);
	return n;
}

enum raw_wait raw_peer_wait(struct raw_peer *p, int timeout_ms, struct ibv_wc *wc)
{
	long long deadline = raw_now_ms() + timeout_ms;

	if (stash_pop(p, wc))
		return RAW_WAIT_COMPLETION;
	for (;;) {
		int n = cq_poll_one(p, wc);

		if (n < 0)
			return RAW_WAIT_ERROR;
		if (n > 0)
			return RAW_WAIT_COMPLETION;
		if (raw_peer_poll_cm(p)) {
			/* Completions (flushes) may still come: a short grace period. */
			struct pollfd pfd = { .fd = p->cc->fd, .events = POLLIN };

			if (poll(&pfd, 1, 50) > 0 && cq_poll_one(p, wc) > 0)
				return RAW_WAIT_COMPLETION;
			return RAW_WAIT_DISCONNECTED;
		}
		int left = ms_left(deadline);

		if (left == 0)
			return RAW_WAIT_TIMEOUT;
		struct pollfd pfd[2] = {
			{ .fd = p->cc->fd, .events = POLLIN },
			{ .fd = p->ec->fd, .events = POLLIN },
		};
		if (poll(pfd, p->cm_unread ? 1 : 2, left) < 0 && errno != EINTR)
			return RAW_WAIT_ERROR;
	}
}

enum raw_wait raw_peer_wait_wr(struct raw_peer *p, uint64_t wr_id, int timeout_ms, struct ibv_wc *wc)
{
	long long deadline = raw_now_ms() + timeout_ms;

	/* Look through the stash first, keeping the rest in order. */
	for (uint32_t i = 0, n = p->stash_count; i < n; i++) {
		struct ibv_wc w;

		stash_pop(p, &w);
		if (w.wr_id == wr_id) {
			*wc = w;
			for (uint32_t j = i + 1; j < n; j++) { /* rotate the others back */
				stash_pop(p, &w);
				stash_push(p, &w);
			}
			return RAW_WAIT_COMPLETION;
		}
		stash_push(p, &w);
	}
	for (;;) {
		uint32_t kept = p->stash_count;
		struct ibv_wc w;
		enum raw_wait r;

		/* raw_peer_wait would hand back stashed entries: hide them. */
		p->stash_count = 0;
		r = raw_peer_wait(p, ms_left(deadline), &w);
		p->stash_count = kept;
		if (r != RAW_WAIT_COMPLETION)
			return r;
		if (w.wr_id == wr_id) {
			*wc = w;
			return RAW_WAIT_COMPLETION;
		}
		stash_push(p, &w);
	}
}

enum raw_wait raw_peer_recv(struct raw_peer *p, int timeout_ms, void *out, uint32_t cap,
			    uint32_t *len, enum ibv_wc_status *status)
{
	long long deadline = raw_now_ms() + timeout_ms;
	struct ibv_wc wc;

	for (;;) {
		enum raw_wait r = raw_peer_wait(p, ms_left(deadline), &wc);

		if (r != RAW_WAIT_COMPLETION)
			return r;
		if (RAW_WR_KIND(wc.wr_id) == RAW_WR_RECV)
			break;
		/* Sends and RDMA ops completing meanwhile are consumed here. */
	}
	*status = wc.status;
	*len = 0;
	if (wc.status != IBV_WC_SUCCESS)
		return RAW_WAIT_COMPLETION;
	*len = wc.byte_len;
	memcpy(out, raw_peer_recv_buf(p, RAW_WR_SLOT(wc.wr_id)), wc.byte_len < cap ? wc.byte_len : cap);
	raw_peer_post_recv(p, RAW_WR_SLOT(wc.wr_id));
	return RAW_WAIT_COMPLETION;
}

static enum raw_wait rdma_op(struct raw_peer *p, enum ibv_wr_opcode op, enum raw_wr_kind kind,
			     uint32_t local_off, uint32_t len, uint32_t rkey, uint64_t raddr,
			     int timeout_ms, enum ibv_wc_status *status)
{
	struct ibv_sge sge = {
		.addr = raw_peer_mem_addr(p, local_off),
		.length = len,
		.lkey = p->mem_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id_make(kind, ++p->next_wr_seq, 0),
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	enum raw_wait r;

	if ((uint64_t)local_off + len > p->cfg.mem_bytes) {
		errno = EINVAL;
		return RAW_WAIT_ERROR;
	}
	if (ibv_post_send(p->qp, &wr, &bad))
		return RAW_WAIT_ERROR;
	r = raw_peer_wait_wr(p, wr.wr_id, timeout_ms, &wc);
	if (r == RAW_WAIT_COMPLETION)
		*status = wc.status;
	return r;
}

enum raw_wait raw_peer_rdma_write(struct raw_peer *p, uint32_t local_off, uint32_t len,
				  uint32_t rkey, uint64_t raddr, int timeout_ms,
				  enum ibv_wc_status *status)
{
	return rdma_op(p, IBV_WR_RDMA_WRITE, RAW_WR_WRITE, local_off, len, rkey, raddr, timeout_ms,
		       status);
}

enum raw_wait raw_peer_rdma_read(struct raw_peer *p, uint32_t local_off, uint32_t len,
				 uint32_t rkey, uint64_t raddr, int timeout_ms,
				 enum ibv_wc_status *status)
{
	return rdma_op(p, IBV_WR_RDMA_READ, RAW_WR_READ, local_off, len, rkey, raddr, timeout_ms,
		       status);
}

/* ---- big-endian writer and reader ----------------------------------------------------- */

void raw_xdr_init(struct raw_xdr *x, void *buf, size_t cap)
{
	*x = (struct raw_xdr){ .buf = buf, .cap = cap };
}

void raw_xdr_bytes(struct raw_xdr *x, const void *data, size_t len)
{
	size_t n = len;

	if (x->len + n > x->cap) {
		x->overflow = true;
		n = x->cap - x->len;
	}
	if (n)
		memcpy(x->buf + x->len, data, n);
	x->len += n;
}

void raw_xdr_u32(struct raw_xdr *x, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

	raw_xdr_bytes(x, b, sizeof(b));
}

void raw_xdr_u64(struct raw_xdr *x, uint64_t v)
{
	raw_xdr_u32(x, (uint32_t)(v >> 32));
	raw_xdr_u32(x, (uint32_t)v);
}

void raw_xdr_opaque(struct raw_xdr *x, const void *data, uint32_t len)
{
	static const uint8_t zero[4];

	raw_xdr_u32(x, len);
	raw_xdr_bytes(x, data, len);
	raw_xdr_bytes(x, zero, (4 - (len & 3)) & 3);
}

void raw_xdr_rdma_hdr(struct raw_xdr *x, uint32_t xid, uint32_t vers, uint32_t credits,
		      uint32_t type)
{
	raw_xdr_u32(x, xid);
	raw_xdr_u32(x, vers);
	raw_xdr_u32(x, credits);
	raw_xdr_u32(x, type);
}

void raw_xdr_segment(struct raw_xdr *x, uint32_t handle, uint32_t length, uint64_t offset)
{
	raw_xdr_u32(x, handle);
	raw_xdr_u32(x, length);
	raw_xdr_u64(x, offset);
}

void raw_xdr_read_entry(struct raw_xdr *x, uint32_t position, uint32_t handle, uint32_t length,
			uint64_t offset)
{
	raw_xdr_u32(x, 1);
	raw_xdr_u32(x, position);
	raw_xdr_segment(x, handle, length, offset);
}

void raw_xdr_chunk_open(struct raw_xdr *x, uint32_t nsegs)
{
	raw_xdr_u32(x, 1);
	raw_xdr_u32(x, nsegs);
}

void raw_xdr_list_end(struct raw_xdr *x)
{
	raw_xdr_u32(x, 0);
}

void raw_xdr_rdma_msg_plain(struct raw_xdr *x, uint32_t xid, uint32_t credits, uint32_t type)
{
	raw_xdr_rdma_hdr(x, xid, 1, credits, type);
	raw_xdr_list_end(x); /* read list */
	raw_xdr_list_end(x); /* write list */
	raw_xdr_list_end(x); /* reply chunk */
}

void raw_xdr_rpc_call(struct raw_xdr *x, uint32_t xid, uint32_t prog, uint32_t vers,
		      uint32_t proc)
{
	raw_xdr_u32(x, xid);
	raw_xdr_u32(x, 0); /* CALL */
	raw_xdr_u32(x, 2); /* RPC version */
	raw_xdr_u32(x, prog);
	raw_xdr_u32(x, vers);
	raw_xdr_u32(x, proc);
	raw_xdr_u32(x, 0); /* AUTH_NONE credential */
	raw_xdr_u32(x, 0);
	raw_xdr_u32(x, 0); /* AUTH_NONE verifier */
	raw_xdr_u32(x, 0);
}

bool raw_peer_send_void(struct raw_peer *p, uint32_t xid, uint32_t prog, uint32_t proc,
			uint32_t credits)
{
	uint8_t m[128];
	struct raw_xdr x;

	raw_xdr_init(&x, m, sizeof(m));
	raw_xdr_rdma_msg_plain(&x, xid, credits, 0 /* RDMA_MSG */);
	raw_xdr_rpc_call(&x, xid, prog, 1, proc);
	return raw_peer_send(p, m, (uint32_t)x.len, false, 0) != 0;
}

bool raw_peer_send_null(struct raw_peer *p, uint32_t xid, uint32_t prog, uint32_t credits)
{
	return raw_peer_send_void(p, xid, prog, 0, credits);
}

bool raw_null_reply_ok(const uint8_t *m, uint32_t len, uint32_t xid)
{
	struct raw_rd r;
	uint32_t w[13];

	raw_rd_init(&r, m, len);
	for (int i = 0; i < 13; i++)
		w[i] = raw_rd_u32(&r);
	/* xid vers credits RDMA_MSG, three empty lists, rpc xid, REPLY, ACCEPTED, AUTH_NONE 0, SUCCESS */
	return !r.short_read && w[0] == xid && w[1] == 1 && w[2] > 0 && w[3] == 0 && !w[4] &&
	       !w[5] && !w[6] && w[7] == xid && w[8] == 1 && w[9] == 0 && w[12] == 0;
}

void raw_xdr_rpc_reply_accepted(struct raw_xdr *x, uint32_t xid, uint32_t accept_stat)
{
	raw_xdr_u32(x, xid);
	raw_xdr_u32(x, 1); /* REPLY */
	raw_xdr_u32(x, 0); /* MSG_ACCEPTED */
	raw_xdr_u32(x, 0); /* AUTH_NONE verifier */
	raw_xdr_u32(x, 0);
	raw_xdr_u32(x, accept_stat);
}

void raw_pd_rfc8797(uint8_t out[8], uint8_t version, uint8_t flags, uint8_t send_code,
		    uint8_t recv_code)
{
	out[0] = (uint8_t)(RAW_PD_FORMAT_ID >> 24);
	out[1] = (uint8_t)(RAW_PD_FORMAT_ID >> 16);
	out[2] = (uint8_t)(RAW_PD_FORMAT_ID >> 8);
	out[3] = (uint8_t)RAW_PD_FORMAT_ID;
	out[4] = version;
	out[5] = flags;
	out[6] = send_code;
	out[7] = recv_code;
}

void raw_rd_init(struct raw_rd *r, const void *p, size_t len)
{
	*r = (struct raw_rd){ .p = p, .len = len };
}

uint32_t raw_rd_u32(struct raw_rd *r)
{
	const uint8_t *b;

	if (r->short_read || r->len - r->pos < 4) {
		r->short_read = true;
		return 0;
	}
	b = r->p + r->pos;
	r->pos += 4;
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

uint64_t raw_rd_u64(struct raw_rd *r)
{
	uint64_t hi = raw_rd_u32(r);

	return hi << 32 | raw_rd_u32(r);
}
