/*
 * verbs_pingpong: rpcrdma/verbs.c and work_queues.c end to end on one
 * soft-RDMA device.
 * A server thread accepts, the main thread connects; they exchange Sends
 * of varied sizes both ways, the client RDMA Writes into and Reads from a
 * buffer the server registered, and both check what connection setup
 * negotiated.  The server must see the client's disconnect within a
 * second, and connects to a port nobody listens on and to an address
 * nobody has (in the test subnet) must fail in time.
 *
 *   verbs_pingpong PROVIDER ADDR...     (run by verbs_pingpong.test)
 *
 * Prints "verbs_pingpong: PROVIDER IPv4 ok" (or IPv6) per address and
 * exits 0; any failure prints what went wrong and exits 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdmatest_addr.h"
#include "rpcrdma/verbs.h"

#define NMSG          16
#define OP_TIMEOUT_MS 15000
#define REMOTE_LEN    65536u
#define WRITE_OFF     100u
#define WRITE_LEN1    1000u
#define WRITE_LEN2    2000u
#define HDR_LEN       5u
#define NO_LISTENER_TIMEOUT_MS 3000

enum { WR_SEND = 1, WR_WRITE, WR_READ };

struct side {
	const char *who;         /* "client" or "server" */
	const char *label;       /* "rxe IPv4" */
	struct rpcrdma_ep_params params;
	struct rpcrdma_ep *ep;
	struct rpcrdma_ep_info info;
	uint8_t *buf;            /* send slots, then (client) write source and read sink */
	struct ibv_mr *mr;
	size_t slot_size;
	uint32_t next_slot;
	uint8_t dir;             /* pattern seed of what this side sends */
	unsigned int sends_done, writes_done, reads_done;
	uint32_t data_seen;
	bool got_mr, got_fin;
	uint8_t fin_status;
	uint64_t raddr;
	uint32_t rkey, rlen;
	/* server only */
	struct rpcrdma_listener *listener;
	uint8_t *remote;
	struct ibv_mr *remote_mr;
	int64_t disconnect_seen_ms;
};

/* The exit status of a refused connect: a known siw defect, retried (the rest is 1). */
#define EXIT_REFUSED 3

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void __attribute__((format(printf, 2, 3), noreturn)) die(const struct side *s,
								  const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "verbs_pingpong: %s: %s: FAIL: ", s->label, s->who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint8_t pattern(uint8_t dir, uint32_t seq, uint32_t i)
{
	return (uint8_t)(dir * 101u + seq * 31u + i * 7u + (i >> 8));
}

/* Message @seq of NMSG: sizes spread over 1 header..@limit, the last exactly @limit. */
static uint32_t data_len(uint32_t seq, uint32_t limit)
{
	if (seq == NMSG - 1)
		return limit;
	return HDR_LEN + (seq * 977u + 13u) % (limit - HDR_LEN);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void handle_wc(struct side *s, const struct rpcrdma_wc *wc);

/* Wait up to 200 ms for completions and handle them. */
static void pump_step(struct side *s, const char *what)
{
	struct rpcrdma_wc wc[16];
	int n, rc;

	/*
	 * Poll even after a disconnect: the peer may tear down as soon as it
	 * has our last Send, before we reaped that Send's completion.
	 */
	rc = rpcrdma_ep_wait(s->ep, 200);
	n = rpcrdma_ep_poll(s->ep, wc, 16);
	if (n < 0)
		die(s, "rpcrdma_ep_poll: %s", strerror(-n));
	for (int i = 0; i < n; i++)
		handle_wc(s, &wc[i]);
	if (rc < 0 && n == 0)
		die(s, "rpcrdma_ep_wait while waiting for %s: %s", what, strerror(-rc));
}

/* Collect completions until @done or the deadline. */
static void pump(struct side *s, bool (*done)(const struct side *), const char *what)
{
	int64_t deadline = now_ms() + OP_TIMEOUT_MS;

	while (!done(s)) {
		if (now_ms() > deadline)
			die(s, "timed out after %d ms waiting for %s", OP_TIMEOUT_MS, what);
		pump_step(s, what);
	}
}

/* Post a Send of @len bytes from the next slot, waiting for a free work request. */
static void send_msg(struct side *s, const uint8_t *msg, uint32_t len)
{
	uint8_t *slot = s->buf + (size_t)(s->next_slot++ % (NMSG + 2)) * s->slot_size;
	struct rpcrdma_send send = {
		.sge = { .addr = (uintptr_t)slot, .length = len, .lkey = s->mr->lkey },
		.wr_id = WR_SEND,
	};
	int64_t deadline = now_ms() + OP_TIMEOUT_MS;
	uint32_t posted;
	int rc;

	memcpy(slot, msg, len);
	while ((rc = rpcrdma_ep_post_sends(s->ep, &send, 1, &posted)) == -ENOBUFS) {
		if (now_ms() > deadline)
			die(s, "send queue still full after %d ms", OP_TIMEOUT_MS);
		pump_step(s, "a free send work request");
	}
	if (rc)
		die(s, "rpcrdma_ep_post_sends(%u bytes): %s", len, strerror(-rc));
}

static void send_data(struct side *s, uint32_t seq)
{
	uint32_t len = data_len(seq, s->info.inline_params.send);
	uint8_t *msg = malloc(len);

	if (!msg)
		die(s, "out of memory");
	msg[0] = 'D';
	put_u32(msg + 1, seq);
	for (uint32_t i = HDR_LEN; i < len; i++)
		msg[i] = pattern(s->dir, seq, i);
	send_msg(s, msg, len);
	free(msg);
}

static void check_data(struct side *s, const uint8_t *msg, uint32_t len)
{
	uint32_t seq = get_u32(msg + 1);
	uint32_t want = data_len(s->data_seen, s->info.inline_params.recv);

	if (seq != s->data_seen)
		die(s, "data message %u arrived, expected %u", seq, s->data_seen);
	if (len != want)
		die(s, "data message %u: %u bytes received, sent %u", seq, len, want);
	for (uint32_t i = HDR_LEN; i < len; i++)
		if (msg[i] != pattern(s->dir ^ 1, seq, i))
			die(s, "data message %u: byte %u is 0x%02x, sent 0x%02x", seq, i, msg[i],
			    pattern(s->dir ^ 1, seq, i));
	s->data_seen++;
}

static void check_recv(struct side *s, const struct rpcrdma_wc *wc)
{
	const uint8_t *msg = rpcrdma_ep_recv_buf(s->ep, (uint32_t)wc->wr_id);

	if (!msg || wc->byte_len < HDR_LEN)
		die(s, "receive %llu: %u bytes", (unsigned long long)wc->wr_id, wc->byte_len);
	if (wc->with_invalidate)
		die(s, "plain Send reported as With Invalidate (rkey 0x%x)", wc->invalidated_rkey);
	switch (msg[0]) {
	case 'D':
		check_data(s, msg, wc->byte_len);
		break;
	case 'M':
		memcpy(&s->raddr, msg + HDR_LEN, 8);
		s->rkey = get_u32(msg + HDR_LEN + 8);
		s->rlen = get_u32(msg + HDR_LEN + 12);
		s->got_mr = true;
		break;
	case 'F':
		s->fin_status = msg[HDR_LEN];
		s->got_fin = true;
		break;
	default:
		die(s, "receive of unknown type 0x%02x", msg[0]);
	}
}

static void handle_wc(struct side *s, const struct rpcrdma_wc *wc)
{
	int rc;

	if (wc->status != IBV_WC_SUCCESS)
		die(s, "completion kind %d wr_id %llu: %s", wc->kind,
		    (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status));
	switch (wc->kind) {
	case RPCRDMA_WC_RECV:
		check_recv(s, wc);
		rc = rpcrdma_ep_repost_recv(s->ep, (uint32_t)wc->wr_id);
		if (rc)
			die(s, "rpcrdma_ep_repost_recv: %s", strerror(-rc));
		break;
	case RPCRDMA_WC_SEND:
		s->sends_done++;
		break;
	case RPCRDMA_WC_WRITE:
		s->writes_done++;
		break;
	case RPCRDMA_WC_READ:
		s->reads_done++;
		break;
	default:
		die(s, "unexpected completion kind %d", wc->kind);
	}
}

static void side_register(struct side *s, size_t extra)
{
	size_t len = (size_t)(NMSG + 2) * s->slot_size + extra;

	s->buf = calloc(1, len);
	if (!s->buf)
		die(s, "out of memory");
	s->mr = ibv_reg_mr(rpcrdma_ep_pd(s->ep), s->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr)
		die(s, "ibv_reg_mr(%zu bytes): %s", len, strerror(errno));
}

static void side_destroy(struct side *s)
{
	if (s->mr && ibv_dereg_mr(s->mr))
		die(s, "ibv_dereg_mr failed");
	if (s->remote_mr && ibv_dereg_mr(s->remote_mr))
		die(s, "ibv_dereg_mr (remote buffer) failed");
	rpcrdma_ep_destroy(s->ep);
	free(s->buf);
	free(s->remote);
	s->ep = NULL;
	s->mr = s->remote_mr = NULL;
	s->buf = s->remote = NULL;
}

static void print_info(const struct side *s)
{
	const struct rpcrdma_ep_info *i = &s->info;

	printf("  %s: inline send %u recv %u, R %d, peer pd %s, IRD %u ORD %u, "
	       "device max_qp_rd_atom %u max_qp_init_rd_atom %u, MW %d, transport %s\n",
	       s->who, i->inline_params.send, i->inline_params.recv,
	       i->inline_params.remote_invalidate, rpcrdma_pd_status_str(i->peer_pd), i->rd.ird,
	       i->rd.ord, i->dev.max_qp_rd_atom, i->dev.max_qp_init_rd_atom, i->device_has_mw,
	       i->transport == IBV_TRANSPORT_IWARP ? "iWARP" : i->transport == IBV_TRANSPORT_IB ? "IB" : "other");
}

/* ---- server ------------------------------------------------------------------------ */

static bool server_got_all(const struct side *s)
{
	return s->sends_done == NMSG + 1 && s->data_seen == NMSG && s->got_fin;
}

static bool server_fin_sent(const struct side *s)
{
	return s->sends_done == NMSG + 2;
}

static void server_accept(struct side *s)
{
	struct pollfd pfd = { .fd = rpcrdma_listener_fd(s->listener), .events = POLLIN };
	int64_t deadline = now_ms() + OP_TIMEOUT_MS;
	int rc = -EAGAIN;

	while (rc == -EAGAIN) {
		if (now_ms() > deadline)
			die(s, "no connection request within %d ms", OP_TIMEOUT_MS);
		if (poll(&pfd, 1, 200) < 0 && errno != EINTR)
			die(s, "poll(listener): %s", strerror(errno));
		rc = rpcrdma_listener_accept(s->listener, &s->ep);
	}
	if (rc)
		die(s, "rpcrdma_listener_accept: %s", strerror(-rc));
	/* This server sends first: on IB/RoCE the client's QP takes our Send only once it has our REP. */
	while (!rpcrdma_ep_established(s->ep)) {
		if (now_ms() > deadline)
			die(s, "not established within %d ms", OP_TIMEOUT_MS);
		rc = rpcrdma_ep_wait(s->ep, 200);
		if (rc < 0)
			die(s, "waiting for ESTABLISHED: %s", rpcrdma_ep_wait_failure(rc));
	}
	s->info = *rpcrdma_ep_info(s->ep);
}

static void server_offer_buffer(struct side *s)
{
	uint8_t msg[HDR_LEN + 16] = { 'M' };
	uint64_t addr;

	s->remote = malloc(REMOTE_LEN);
	if (!s->remote)
		die(s, "out of memory");
	for (uint32_t i = 0; i < REMOTE_LEN; i++)
		s->remote[i] = pattern(7, 0, i);
	s->remote_mr = ibv_reg_mr(rpcrdma_ep_pd(s->ep), s->remote, REMOTE_LEN,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ);
	if (!s->remote_mr)
		die(s, "ibv_reg_mr(remote buffer): %s", strerror(errno));
	addr = (uintptr_t)s->remote;
	memcpy(msg + HDR_LEN, &addr, 8);
	put_u32(msg + HDR_LEN + 8, s->remote_mr->rkey);
	put_u32(msg + HDR_LEN + 12, REMOTE_LEN);
	send_msg(s, msg, sizeof(msg));
}

/* The bytes the client's RDMA Write leaves in the server's buffer. */
static uint8_t remote_expected(uint32_t i)
{
	if (i >= WRITE_OFF && i < WRITE_OFF + WRITE_LEN1 + WRITE_LEN2)
		return pattern(9, 1, i - WRITE_OFF);
	return pattern(7, 0, i);
}

static uint8_t server_check_remote(const struct side *s)
{
	for (uint32_t i = 0; i < REMOTE_LEN; i++)
		if (s->remote[i] != remote_expected(i)) {
			fprintf(stderr, "verbs_pingpong: %s: server: byte %u of the written buffer "
				"is 0x%02x, expected 0x%02x\n", s->label, i, s->remote[i],
				remote_expected(i));
			return 1;
		}
	return 0;
}

/* After the client destroys its endpoint: flushes are expected, then ECONNRESET. */
static void server_wait_disconnect(struct side *s)
{
	int64_t deadline = now_ms() + 5000;
	struct rpcrdma_wc wc[16];
	int rc;

	for (;;) {
		if (now_ms() > deadline)
			die(s, "no disconnect seen within 5 s of the client finishing");
		rc = rpcrdma_ep_wait(s->ep, 50);
		if (rc == -ECONNRESET)
			break;
		if (rc < 0)
			die(s, "rpcrdma_ep_wait: %s", strerror(-rc));
		rpcrdma_ep_poll(s->ep, wc, 16);
	}
	s->disconnect_seen_ms = now_ms();
	if (!rpcrdma_ep_disconnected(s->ep))
		die(s, "rpcrdma_ep_wait said ECONNRESET, rpcrdma_ep_disconnected() says no");
}

static void *server_main(void *arg)
{
	struct side *s = arg;
	uint8_t fin[HDR_LEN + 1] = { 'F' };

	server_accept(s);
	s->slot_size = s->info.inline_params.send;
	side_register(s, 0);
	server_offer_buffer(s);
	for (uint32_t seq = 0; seq < NMSG; seq++)
		send_data(s, seq);
	pump(s, server_got_all, "the client's data, the Sends' completions and its finish");
	fin[HDR_LEN] = server_check_remote(s);
	send_msg(s, fin, sizeof(fin));
	pump(s, server_fin_sent, "the finish Send's completion");
	server_wait_disconnect(s);
	side_destroy(s);
	return NULL;
}

/* ---- client -------------------------------------------------------------------------- */

static bool client_got_all(const struct side *s)
{
	return s->sends_done == NMSG && s->data_seen == NMSG && s->got_mr;
}

static bool client_wrote(const struct side *s)
{
	return s->writes_done == 1;
}

static bool client_read(const struct side *s)
{
	return s->reads_done == 1;
}

static bool client_finished(const struct side *s)
{
	return s->sends_done == NMSG + 1 && s->got_fin;
}

/* Two SGEs into the server's buffer, then one RDMA Read of all of it. */
static void client_rdma(struct side *s)
{
	uint8_t *src = s->buf + (size_t)(NMSG + 2) * s->slot_size;
	uint8_t *sink = src + WRITE_LEN1 + WRITE_LEN2;
	struct ibv_sge w[2] = {
		{ .addr = (uintptr_t)src, .length = WRITE_LEN1, .lkey = s->mr->lkey },
		{ .addr = (uintptr_t)src + WRITE_LEN1, .length = WRITE_LEN2, .lkey = s->mr->lkey },
	};
	struct ibv_sge r = { .addr = (uintptr_t)sink, .length = s->rlen, .lkey = s->mr->lkey };
	int rc;

	if (s->rlen != REMOTE_LEN)
		die(s, "server offered %u bytes, expected %u", s->rlen, REMOTE_LEN);
	for (uint32_t i = 0; i < WRITE_LEN1 + WRITE_LEN2; i++)
		src[i] = pattern(9, 1, i);
	rc = rpcrdma_ep_post_write(s->ep, w, 2, s->raddr + WRITE_OFF, s->rkey, WR_WRITE);
	if (rc)
		die(s, "rpcrdma_ep_post_write: %s", strerror(-rc));
	pump(s, client_wrote, "the RDMA Write completion");
	rc = rpcrdma_ep_post_read(s->ep, &r, 1, s->raddr, s->rkey, WR_READ);
	if (rc)
		die(s, "rpcrdma_ep_post_read: %s", strerror(-rc));
	pump(s, client_read, "the RDMA Read completion");
	for (uint32_t i = 0; i < REMOTE_LEN; i++)
		if (sink[i] != remote_expected(i))
			die(s, "RDMA Read byte %u is 0x%02x, expected 0x%02x", i, sink[i],
			    remote_expected(i));
}

static void client_run(struct side *s, const struct sockaddr *dst)
{
	uint8_t fin[HDR_LEN + 1] = { 'F' };
	int rc;

	rc = rpcrdma_ep_connect(dst, &s->params, &s->ep);
	if (rc == -ECONNREFUSED) { /* the test retries this one failure once (verbs_pingpong.test) */
		fprintf(stderr, "verbs_pingpong: %s: %s: FAIL: rpcrdma_ep_connect: %s\n", s->label,
			s->who, strerror(-rc));
		exit(EXIT_REFUSED);
	}
	if (rc)
		die(s, "rpcrdma_ep_connect: %s", strerror(-rc));
	s->info = *rpcrdma_ep_info(s->ep);
	s->slot_size = s->info.inline_params.send;
	side_register(s, WRITE_LEN1 + WRITE_LEN2 + REMOTE_LEN);
	for (uint32_t seq = 0; seq < NMSG; seq++)
		send_data(s, seq);
	pump(s, client_got_all, "the server's data and buffer and the Sends' completions");
	client_rdma(s);
	send_msg(s, fin, sizeof(fin));
	pump(s, client_finished, "the server's finish");
	if (s->fin_status)
		die(s, "the server found its buffer wrong after the RDMA Write");
}

/* ---- checks ---------------------------------------------------------------------------- */

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* What a side advertises: the client sets R only with memory windows. */
static bool sent_r(const struct side *s)
{
	return s->params.remote_invalidate && (!strcmp(s->who, "server") || s->info.device_has_mw);
}

static void check_inline(const struct side *a, const struct side *b)
{
	const struct rpcrdma_inline_params *p = &a->info.inline_params;
	bool r = sent_r(a) && sent_r(b);

	if (a->info.peer_pd != RPCRDMA_PD_OK)
		die(a, "peer private data: %s", rpcrdma_pd_status_str(a->info.peer_pd));
	if (p->send != min_u32(a->params.send_size, b->params.recv_size))
		die(a, "inline send %u, expected min(%u, %u)", p->send, a->params.send_size,
		    b->params.recv_size);
	if (p->recv != min_u32(a->params.recv_size, b->params.send_size))
		die(a, "inline recv %u, expected min(%u, %u)", p->recv, a->params.recv_size,
		    b->params.send_size);
	if (p->remote_invalidate != r)
		die(a, "remote invalidate %d, expected %d", p->remote_invalidate, r);
}

static void check_depths(const struct side *c, const struct side *s)
{
	if (!c->info.rd.ord || !s->info.rd.ird)
		die(c, "zero depth: client ORD %u, server IRD %u", c->info.rd.ord, s->info.rd.ird);
	if (c->info.rd.ord > s->info.rd.ird)
		die(c, "client ORD %u exceeds server IRD %u", c->info.rd.ord, s->info.rd.ird);
	if (s->info.rd.ord > c->info.rd.ird)
		die(s, "server ORD %u exceeds client IRD %u", s->info.rd.ord, c->info.rd.ird);
	if (c->info.transport != s->info.transport)
		die(c, "transports differ: %d and %d", c->info.transport, s->info.transport);
}

static void check_expected_transport(const struct side *c, const char *provider)
{
	enum ibv_transport_type want = strcmp(provider, "siw") == 0 ? IBV_TRANSPORT_IWARP :
				       IBV_TRANSPORT_IB;

	if (c->info.transport != want)
		die(c, "transport %d on %s", c->info.transport, provider);
}

/* ---- one address -------------------------------------------------------------------- */

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = port;
	else
		((struct sockaddr_in6 *)ss)->sin6_port = port;
}

static uint16_t get_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_port;
	return ((const struct sockaddr_in6 *)sa)->sin6_port;
}

static void sides_init(struct side *c, struct side *s, const char *label, bool server_r)
{
	*c = (struct side){
		.who = "client", .label = label, .dir = 0,
		.params = { .send_size = 8192, .recv_size = 4096, .recv_count = 32,
			    .send_depth = 8, .max_send_sge = 4, .rd = { .ird = 8, .ord = 16 },
			    .remote_invalidate = true, .timeout_ms = OP_TIMEOUT_MS },
	};
	*s = (struct side){
		.who = "server", .label = label, .dir = 1,
		.params = { .send_size = 4096, .recv_size = 16384, .recv_count = 32,
			    .send_depth = 8, .max_send_sge = 4, .rd = { .ird = 4, .ord = 2 },
			    .remote_invalidate = server_r, .timeout_ms = OP_TIMEOUT_MS },
	};
}

/* A connect that cannot succeed must fail with -errno, and in time. */
static void check_connect_fails(const struct side *c, const struct sockaddr *dst,
				const char *what)
{
	struct rpcrdma_ep_params p = c->params;
	struct rpcrdma_ep *ep = NULL;
	int64_t t0 = now_ms(), dt;
	int rc;

	p.timeout_ms = NO_LISTENER_TIMEOUT_MS;
	rc = rpcrdma_ep_connect(dst, &p, &ep);
	dt = now_ms() - t0;
	if (rc == 0) {
		rpcrdma_ep_destroy(ep);
		die(c, "connect to %s succeeded", what);
	}
	if (rc > 0 || dt > NO_LISTENER_TIMEOUT_MS + 1000)
		die(c, "connect to %s: rc %d after %lld ms (timeout %d ms)", what, rc,
		    (long long)dt, NO_LISTENER_TIMEOUT_MS);
	printf("  %s: %s after %lld ms\n", what, strerror(-rc), (long long)dt);
}

/* The same port on an unused address of the test subnet (.99 or ::99). */
static void check_no_host(const struct side *c, const struct sockaddr_storage *addr)
{
	struct sockaddr_storage dst = *addr;

	if (dst.ss_family == AF_INET)
		((uint8_t *)&((struct sockaddr_in *)&dst)->sin_addr)[3] = 99;
	else
		((struct sockaddr_in6 *)&dst)->sin6_addr.s6_addr[15] = 0x99;
	check_connect_fails(c, (struct sockaddr *)&dst, "an address nobody has");
}

static void run_address(const char *provider, const char *text)
{
	struct sockaddr_storage addr;
	struct side c, s;
	char label[64];
	pthread_t thread;
	int64_t destroy_ms, dt;
	int rc;

	if (!rdmatest_parse_addr(text, 0, &addr))
		die(&(struct side){ .who = "main", .label = text }, "not an address: %s", text);
	snprintf(label, sizeof(label), "%s %s", provider, addr.ss_family == AF_INET ? "IPv4" : "IPv6");
	sides_init(&c, &s, label, addr.ss_family == AF_INET);
	rc = rpcrdma_listener_create((struct sockaddr *)&addr, &s.params, 4, &s.listener);
	if (rc)
		die(&s, "rpcrdma_listener_create(%s): %s", text, strerror(-rc));
	set_port(&addr, get_port(rpcrdma_listener_addr(s.listener)));
	printf("%s: listening on [%s]:%u\n", label, text, ntohs(get_port((struct sockaddr *)&addr)));
	if (pthread_create(&thread, NULL, server_main, &s))
		die(&s, "pthread_create failed");
	client_run(&c, (struct sockaddr *)&addr);
	destroy_ms = now_ms();
	side_destroy(&c);
	pthread_join(thread, NULL);
	dt = s.disconnect_seen_ms - destroy_ms;
	print_info(&c);
	print_info(&s);
	printf("  server saw the disconnect %lld ms after the client began destroying\n",
	       (long long)dt);
	if (dt > 1000)
		die(&s, "disconnect seen %lld ms after the client destroyed its endpoint", (long long)dt);
	check_inline(&c, &s);
	check_inline(&s, &c);
	check_depths(&c, &s);
	check_expected_transport(&c, provider);
	rpcrdma_listener_destroy(s.listener);
	check_connect_fails(&c, (struct sockaddr *)&addr, "a port with no listener");
	check_no_host(&c, &addr);
	printf("verbs_pingpong: %s ok\n", label);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: verbs_pingpong PROVIDER ADDR...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++)
		run_address(argv[1], argv[i]);
	return 0;
}
