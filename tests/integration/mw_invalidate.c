/*
 * mw_invalidate: memory windows and remote invalidation through
 * rpcrdma/work_queues.c on one soft-RDMA device.
 *
 * On rxe, for each way of invalidating (the server's Send With
 * Invalidate, then the client's own Local Invalidate, each on a new
 * connection): the client binds a type-2 window with remote write over
 * part of a registered buffer and sends its rkey; the server RDMA
 * Writes into it; the window is invalidated; a second RDMA Write with
 * the same rkey must fail with a remote access error and leave the
 * client's buffer as it was.  Both peers set R, so both must see remote
 * invalidation in force; plain Sends must not be reported as With
 * Invalidate.
 *
 * On siw (no memory windows): rpcrdma_ep_mw_alloc() must say
 * -EOPNOTSUPP and the client must not have advertised R (the server,
 * which asks for it, sees remote invalidation off).
 *
 * Then, on both, calls built by hand go to an svc_rdma server (served
 * by svc_run() in a thread) that asks for R: its reply Send must be
 * With Invalidate of the call's rkey exactly when R is in force and all
 * the call's segments carry that one rkey (RDMA_MSG, RDMA_NOMSG and
 * RDMA_ERROR replies), and plain otherwise.
 *
 *   mw_invalidate PROVIDER ADDR     (run by mw_invalidate.test)
 *
 * Prints a PASS line per check; the first failure prints FAIL and
 * exits 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rpc/rpc.h>

#include "rdmatest_addr.h"
#include "rdmatest_verdict.h"
#include "rpcrdma/rpcrdma.h"
#include "rpcrdma/verbs.h"
#include "xdr/header.h"

#define OP_TIMEOUT_MS 15000
#define BUF_LEN       8192u
#define WIN_OFF       1024u  /* the window covers [WIN_OFF, WIN_OFF + WIN_LEN) */
#define WIN_LEN       4096u
#define WRITE_LEN     512u
#define MSG_LEN       17u    /* type, addr, rkey, length */
#define MAX_PENDING   32

enum { WR_BIND = 1, WR_SEND, WR_WRITE, WR_INV };
enum inv_mode { BY_SEND_WITH_INV, BY_LOCAL_INV };

struct end {
	const char *who;
	struct rpcrdma_ep *ep;
	uint8_t *buf;        /* [0, 64): send buffer; [BUF_LEN, 2 * BUF_LEN): RDMA source or window memory */
	struct ibv_mr *mr;
	struct rpcrdma_wc pending[MAX_PENDING];
	int npending;
};

static char prog[96] = "mw_invalidate";

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The PASS and FAIL lines name the case: "mw_invalidate: rxe Local Invalidate: PASS: ..." */
static void set_label(const char *provider, const char *what)
{
	snprintf(prog, sizeof(prog), "mw_invalidate: %s %s", provider, what);
}

#define pass(...) ((void)rdmatest_check(prog, true, __VA_ARGS__))
#define fail(...) rdmatest_fail(prog, __VA_ARGS__)

static uint8_t pattern(uint8_t seed, uint32_t i)
{
	return (uint8_t)(seed * 53u + i * 7u + (i >> 8));
}

static const char *kind_name(enum rpcrdma_wc_kind k)
{
	static const char *const names[] = { "RECV", "SEND", "READ", "WRITE", "LOCAL_INV",
					     "BIND_MW" };

	return k <= RPCRDMA_WC_BIND_MW ? names[k] : "?";
}

/* Poll @e once (waiting up to 100 ms), queue what arrived, repost receives. */
static void end_poll(struct end *e)
{
	struct rpcrdma_wc wc[8];
	int n;

	rpcrdma_ep_wait(e->ep, 100);
	n = rpcrdma_ep_poll(e->ep, wc, 8);
	if (n < 0)
		fail("%s: rpcrdma_ep_poll: %s", e->who, strerror(-n));
	for (int i = 0; i < n; i++) {
		if (e->npending == MAX_PENDING)
			fail("%s: too many unclaimed completions", e->who);
		e->pending[e->npending++] = wc[i];
	}
}

/* The next completion of @kind on @e, whatever its status. */
static struct rpcrdma_wc end_wait(struct end *e, enum rpcrdma_wc_kind kind)
{
	int64_t deadline = now_ms() + OP_TIMEOUT_MS;

	for (;;) {
		for (int i = 0; i < e->npending; i++) {
			struct rpcrdma_wc wc = e->pending[i];

			if (wc.kind != kind)
				continue;
			memmove(&e->pending[i], &e->pending[i + 1],
				(size_t)(e->npending - i - 1) * sizeof(wc));
			e->npending--;
			return wc;
		}
		if (now_ms() > deadline)
			fail("%s: no %s completion within %d ms", e->who, kind_name(kind),
			     OP_TIMEOUT_MS);
		end_poll(e);
	}
}

/* The next completion of @kind, which must have succeeded. */
static struct rpcrdma_wc end_wait_ok(struct end *e, enum rpcrdma_wc_kind kind)
{
	struct rpcrdma_wc wc = end_wait(e, kind);

	if (wc.status != IBV_WC_SUCCESS)
		fail("%s: %s completion: %s", e->who, kind_name(kind),
		     ibv_wc_status_str(wc.status));
	return wc;
}

/* A received message copied to @msg (up to @cap bytes), its receive posted again. */
static struct rpcrdma_wc end_recv_any(struct end *e, uint8_t *msg, uint32_t cap)
{
	struct rpcrdma_wc wc = end_wait_ok(e, RPCRDMA_WC_RECV);
	int rc;

	if (wc.byte_len > cap)
		fail("%s: received %u bytes, more than %u", e->who, wc.byte_len, cap);
	memcpy(msg, rpcrdma_ep_recv_buf(e->ep, (uint32_t)wc.wr_id), wc.byte_len);
	rc = rpcrdma_ep_repost_recv(e->ep, (uint32_t)wc.wr_id);
	if (rc)
		fail("%s: rpcrdma_ep_repost_recv: %s", e->who, strerror(-rc));
	return wc;
}

static struct rpcrdma_wc end_recv(struct end *e, uint8_t *msg)
{
	struct rpcrdma_wc wc = end_recv_any(e, msg, MSG_LEN);

	if (wc.byte_len != MSG_LEN)
		fail("%s: received %u bytes, expected %u", e->who, wc.byte_len, MSG_LEN);
	return wc;
}

static void end_send(struct end *e, uint8_t type, uint64_t addr, uint32_t rkey, bool inv)
{
	struct rpcrdma_send send = {
		.sge = { (uintptr_t)e->buf, MSG_LEN, e->mr->lkey },
		.wr_id = WR_SEND,
		.invalidate_rkey = inv ? rkey : 0,
		.invalidate = inv,
	};
	uint32_t len = WIN_LEN, posted;
	int rc;

	e->buf[0] = type;
	memcpy(e->buf + 1, &addr, 8);
	memcpy(e->buf + 9, &rkey, 4);
	memcpy(e->buf + 13, &len, 4);
	rc = rpcrdma_ep_post_sends(e->ep, &send, 1, &posted);
	if (rc)
		fail("%s: rpcrdma_ep_post_sends: %s", e->who, strerror(-rc));
}

static void end_register(struct end *e, int access)
{
	e->buf = calloc(1, 2 * BUF_LEN);
	if (!e->buf)
		fail("out of memory");
	e->mr = ibv_reg_mr(rpcrdma_ep_pd(e->ep), e->buf, 2 * BUF_LEN, access);
	if (!e->mr)
		fail("%s: ibv_reg_mr: %s", e->who, strerror(errno));
}

static void end_destroy(struct end *e)
{
	if (e->mr && ibv_dereg_mr(e->mr))
		fail("%s: ibv_dereg_mr failed", e->who);
	rpcrdma_ep_destroy(e->ep);
	free(e->buf);
	*e = (struct end){ .who = e->who };
}

/* ---- connection ---------------------------------------------------------------------- */

struct accept_arg {
	struct rpcrdma_listener *l;
	struct rpcrdma_ep *ep;
	int rc;
};

static void *accept_main(void *p)
{
	struct accept_arg *a = p;
	struct pollfd pfd = { .fd = rpcrdma_listener_fd(a->l), .events = POLLIN };
	int64_t deadline = now_ms() + OP_TIMEOUT_MS;

	do {
		if (now_ms() > deadline) {
			a->rc = -ETIMEDOUT;
			break;
		}
		poll(&pfd, 1, 100);
		a->rc = rpcrdma_listener_accept(a->l, &a->ep);
	} while (a->rc == -EAGAIN);
	return NULL;
}

static const struct rpcrdma_ep_params params = {
	.send_size = 4096, .recv_size = 4096, .recv_count = 8, .send_depth = 8,
	.max_send_sge = 1, .rd = { .ird = 4, .ord = 4 }, .remote_invalidate = true,
	.timeout_ms = OP_TIMEOUT_MS,
};

static void connect_pair(const struct sockaddr_storage *addr, struct end *c, struct end *s)
{
	struct sockaddr_storage dst = *addr;
	struct accept_arg a = { 0 };
	pthread_t thread;
	int rc;

	rc = rpcrdma_listener_create((const struct sockaddr *)addr, &params, 4, &a.l);
	if (rc)
		fail("rpcrdma_listener_create: %s", strerror(-rc));
	if (dst.ss_family == AF_INET)
		((struct sockaddr_in *)&dst)->sin_port =
			((const struct sockaddr_in *)rpcrdma_listener_addr(a.l))->sin_port;
	else
		((struct sockaddr_in6 *)&dst)->sin6_port =
			((const struct sockaddr_in6 *)rpcrdma_listener_addr(a.l))->sin6_port;
	if (pthread_create(&thread, NULL, accept_main, &a))
		fail("pthread_create failed");
	rc = rpcrdma_ep_connect((const struct sockaddr *)&dst, &params, &c->ep);
	pthread_join(thread, NULL);
	rpcrdma_listener_destroy(a.l);
	if (rc)
		fail("client: rpcrdma_ep_connect: %s", strerror(-rc));
	if (a.rc)
		fail("server: rpcrdma_listener_accept: %s", strerror(-a.rc));
	s->ep = a.ep;
}

/* ---- rxe ------------------------------------------------------------------------------------ */

static void check_r(const struct end *c, const struct end *s, bool want)
{
	bool cr = rpcrdma_ep_info(c->ep)->inline_params.remote_invalidate;
	bool sr = rpcrdma_ep_info(s->ep)->inline_params.remote_invalidate;

	if (cr != want || sr != want)
		fail("remote invalidation in force: client %d server %d, expected %d", cr, sr, want);
	pass("remote invalidation %s on both sides", want ? "in force" : "off");
}

/* The window's bytes after the server's first RDMA Write, and everything else untouched. */
static void check_window(const struct end *c, const char *when)
{
	const uint8_t *mem = c->buf + BUF_LEN;

	for (uint32_t i = 0; i < BUF_LEN; i++) {
		bool written = i >= WIN_OFF && i < WIN_OFF + WRITE_LEN;
		uint8_t want = written ? pattern(2, i - WIN_OFF) : pattern(1, i);

		if (mem[i] != want)
			fail("client buffer %s: byte %u is 0x%02x, expected 0x%02x", when, i, mem[i],
			     want);
	}
	pass("client buffer %s holds exactly the first write", when);
}

static void server_write(struct end *s, uint64_t raddr, uint32_t rkey, uint8_t seed)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + BUF_LEN, WRITE_LEN, s->mr->lkey };
	int rc;

	for (uint32_t i = 0; i < WRITE_LEN; i++)
		s->buf[BUF_LEN + i] = pattern(seed, i);
	rc = rpcrdma_ep_post_write(s->ep, &sge, 1, raddr, rkey, WR_WRITE);
	if (rc)
		fail("server: rpcrdma_ep_post_write: %s", strerror(-rc));
}

/* Bind the client's window over [@off, @off + @len) of its RDMA memory; returns its rkey. */
static uint32_t client_bind_at(struct end *c, struct ibv_mw *mw, uint32_t off, uint32_t len)
{
	uint32_t old = mw->rkey, rkey = 0;
	int rc;

	rc = rpcrdma_ep_post_bind_mw(c->ep, mw, c->mr, (uintptr_t)c->buf + BUF_LEN + off, len,
				     IBV_ACCESS_REMOTE_WRITE, WR_BIND, &rkey);
	if (rc)
		fail("client: rpcrdma_ep_post_bind_mw: %s", strerror(-rc));
	if (end_wait_ok(c, RPCRDMA_WC_BIND_MW).wr_id != WR_BIND)
		fail("client: BIND_MW completion with the wrong wr_id");
	if (rkey != ibv_inc_rkey(old) || mw->rkey != rkey)
		fail("client: rkey 0x%x after bind (window's old 0x%x, now 0x%x)", rkey, old,
		     mw->rkey);
	pass("window bound, rkey 0x%x (was 0x%x)", rkey, old);
	return rkey;
}

static uint32_t client_bind(struct end *c, struct ibv_mw *mw)
{
	return client_bind_at(c, mw, WIN_OFF, WIN_LEN);
}

static void client_local_inv(struct end *c, uint32_t rkey)
{
	int rc = rpcrdma_ep_post_local_inv(c->ep, rkey, WR_INV);

	if (rc)
		fail("client: rpcrdma_ep_post_local_inv: %s", strerror(-rc));
	if (end_wait_ok(c, RPCRDMA_WC_LOCAL_INV).wr_id != WR_INV)
		fail("client: LOCAL_INV completion with the wrong wr_id");
}

static void invalidate(struct end *c, struct end *s, enum inv_mode mode, uint32_t rkey)
{
	uint8_t msg[MSG_LEN];
	struct rpcrdma_wc wc;

	if (mode == BY_SEND_WITH_INV) {
		end_send(s, 'I', 0, rkey, true);
		end_wait_ok(s, RPCRDMA_WC_SEND);
		wc = end_recv(c, msg);
		if (!wc.with_invalidate || wc.invalidated_rkey != rkey)
			fail("client: Send With Invalidate received as with_invalidate %d rkey 0x%x",
			     wc.with_invalidate, wc.invalidated_rkey);
		pass("client's receive reports invalidated rkey 0x%x", wc.invalidated_rkey);
		return;
	}
	client_local_inv(c, rkey);
	pass("client's Local Invalidate of 0x%x completed", rkey);
	end_send(s, 'P', 0, 0, false);
	end_wait_ok(s, RPCRDMA_WC_SEND);
	wc = end_recv(c, msg);
	if (wc.with_invalidate)
		fail("client: plain Send reported as With Invalidate (rkey 0x%x)",
		     wc.invalidated_rkey);
	pass("client's receive of a plain Send reports no invalidation");
}

static void run_rxe_case(const struct sockaddr_storage *addr, enum inv_mode mode)
{
	struct end c = { .who = "client" }, s = { .who = "server" };
	uint8_t msg[MSG_LEN];
	struct rpcrdma_wc wc;
	struct ibv_mw *mw = NULL;
	uint64_t raddr;
	uint32_t rkey;
	int rc;

	connect_pair(addr, &c, &s);
	check_r(&c, &s, true);
	end_register(&c, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	end_register(&s, IBV_ACCESS_LOCAL_WRITE);
	for (uint32_t i = 0; i < BUF_LEN; i++)
		c.buf[BUF_LEN + i] = pattern(1, i);
	rc = rpcrdma_ep_mw_alloc(c.ep, &mw);
	if (rc)
		fail("client: rpcrdma_ep_mw_alloc: %s", strerror(-rc));
	rkey = client_bind(&c, mw);

	end_send(&c, 'M', (uintptr_t)c.buf + BUF_LEN + WIN_OFF, rkey, false);
	end_wait_ok(&c, RPCRDMA_WC_SEND);
	wc = end_recv(&s, msg);
	if (wc.with_invalidate)
		fail("server: plain Send reported as With Invalidate (rkey 0x%x)",
		     wc.invalidated_rkey);
	memcpy(&raddr, msg + 1, 8);

	server_write(&s, raddr, rkey, 2);
	end_wait_ok(&s, RPCRDMA_WC_WRITE);
	pass("server's RDMA Write through the window succeeded");
	check_window(&c, "after the first write");

	invalidate(&c, &s, mode, rkey);

	server_write(&s, raddr, rkey, 3);
	wc = end_wait(&s, RPCRDMA_WC_WRITE);
	if (wc.status != IBV_WC_REM_ACCESS_ERR)
		fail("server: RDMA Write after invalidation completed with \"%s\", expected "
		     "\"%s\"", ibv_wc_status_str(wc.status),
		     ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
	pass("server's RDMA Write after invalidation failed: %s", ibv_wc_status_str(wc.status));
	check_window(&c, "after the refused write");

	rpcrdma_ep_mw_free(mw);
	end_destroy(&c);
	end_destroy(&s);
}

/* ---- svc_rdma's replies ------------------------------------------------------------------ */

#define SVC_PROG     0x20000777u
#define SVC_VERS     1u
#define PROC_BYTES   1u      /* argument n; result: opaque<> of n pattern bytes */
#define LONG_REPLY   5000u   /* more than the 4096-byte inline threshold */
#define HDR_AREA     1024u   /* the client's send area in [0, BUF_LEN) */

struct blob {
	u_int len;
	char *val;
};

static bool_t xdr_blob(XDR *x, struct blob *b)
{
	return xdr_bytes(x, &b->val, &b->len, 65536);
}

static void svc_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	struct blob b = { 0, NULL };
	u_int n = 0;

	if (rq->rq_proc == NULLPROC) {
		svc_sendreply(xprt, (xdrproc_t)(void (*)(void))xdr_void, NULL);
		return;
	}
	if (rq->rq_proc != PROC_BYTES) {
		svcerr_noproc(xprt);
		return;
	}
	if (!svc_getargs(xprt, (xdrproc_t)xdr_u_int, (char *)&n) || n > 65536 ||
	    !(b.val = malloc(n ? n : 1))) {
		svcerr_decode(xprt);
		return;
	}
	b.len = n;
	for (u_int i = 0; i < n; i++)
		b.val[i] = (char)pattern(4, i);
	svc_sendreply(xprt, (xdrproc_t)xdr_blob, (char *)&b);
	free(b.val);
}

static void *svc_main(void *arg)
{
	(void)arg;
	svc_run();
	return NULL;
}

/* An svc_rdma listener that asks for R, served by svc_run() in a thread; returns its port. */
static uint16_t svc_start(const struct sockaddr_storage *addr)
{
	struct rpcrdma_options o;
	pthread_t thread;
	SVCXPRT *l;

	rpcrdma_options_init(&o);
	o.remote_invalidate = true;
	l = svc_rdma_create((const struct sockaddr *)addr, &o);
	if (!l)
		fail("svc_rdma_create: %s", clnt_spcreateerror("svc_rdma_create"));
	if (!svc_reg(l, SVC_PROG, SVC_VERS, svc_dispatch, NULL))
		fail("svc_reg failed");
	if (pthread_create(&thread, NULL, svc_main, NULL))
		fail("pthread_create failed");
	pthread_detach(thread);
	return htons(l->xp_port);
}

struct svc_call {
	const char *what;
	uint32_t xid, type, proc, arg;
	struct rpcrdma_segment write, reply; /* used when length is nonzero */
	/* expected */
	uint32_t reply_type;
	bool inv;
	uint32_t inv_rkey;
};

static uint32_t svc_encode_call(struct end *c, const struct svc_call *k)
{
	struct rpc_msg m = { .rm_xid = k->xid, .rm_direction = CALL };
	struct rpcrdma_header h;
	uint32_t arg = k->arg;
	size_t hlen;
	XDR x;

	rpcrdma_header_init(&h, k->xid, 8, k->type);
	if (k->write.length && rpcrdma_header_add_write_chunk(&h, &k->write, 1))
		fail("%s: rpcrdma_header_add_write_chunk failed", k->what);
	if (k->reply.length && rpcrdma_header_set_reply_chunk(&h, &k->reply, 1))
		fail("%s: rpcrdma_header_set_reply_chunk failed", k->what);
	if (rpcrdma_header_encode(&h, c->buf, HDR_AREA, &hlen))
		fail("%s: rpcrdma_header_encode failed", k->what);
	if (k->type != RDMA_MSG)
		return (uint32_t)hlen;
	m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	m.rm_call.cb_prog = SVC_PROG;
	m.rm_call.cb_vers = SVC_VERS;
	m.rm_call.cb_proc = k->proc;
	m.rm_call.cb_cred = _null_auth;
	m.rm_call.cb_verf = _null_auth;
	xdrmem_create(&x, (char *)c->buf + hlen, HDR_AREA - (u_int)hlen, XDR_ENCODE);
	if (!xdr_callmsg(&x, &m) || (k->proc == PROC_BYTES && !xdr_u_int(&x, &arg)))
		fail("%s: encoding the RPC call failed", k->what);
	return (uint32_t)hlen + XDR_GETPOS(&x);
}

/* The RPC reply at @buf must be an accepted SUCCESS with the procedure's result. */
static void svc_check_rpc_reply(const struct svc_call *k, const uint8_t *buf, uint32_t len)
{
	struct blob b = { 0, NULL };
	struct rpc_msg m = { 0 };
	bool ok;
	XDR x;

	m.acpted_rply.ar_verf = _null_auth;
	m.acpted_rply.ar_results.where = (char *)&b;
	m.acpted_rply.ar_results.proc =
		k->proc == PROC_BYTES ? (xdrproc_t)xdr_blob : (xdrproc_t)(void (*)(void))xdr_void;
	xdrmem_create(&x, (char *)(uintptr_t)buf, len, XDR_DECODE);
	ok = xdr_replymsg(&x, &m) && m.rm_xid == k->xid && m.rm_reply.rp_stat == MSG_ACCEPTED &&
	     m.acpted_rply.ar_stat == SUCCESS;
	if (ok && k->proc == PROC_BYTES) {
		ok = b.len == k->arg;
		for (u_int i = 0; ok && i < b.len; i++)
			ok = (uint8_t)b.val[i] == pattern(4, i);
	}
	xdr_free((xdrproc_t)xdr_blob, (char *)&b);
	if (!ok)
		fail("%s: the RPC reply is not the procedure's result", k->what);
}

static void svc_do_call(struct end *c, const struct svc_call *k)
{
	struct rpcrdma_send send = {
		.sge = { (uintptr_t)c->buf, svc_encode_call(c, k), c->mr->lkey },
		.wr_id = WR_SEND,
	};
	uint8_t msg[4096];
	struct rpcrdma_header h;
	struct rpcrdma_wc wc;
	uint32_t posted;
	size_t hlen;
	int rc;

	rc = rpcrdma_ep_post_sends(c->ep, &send, 1, &posted);
	if (rc)
		fail("%s: rpcrdma_ep_post_sends: %s", k->what, strerror(-rc));
	end_wait_ok(c, RPCRDMA_WC_SEND);
	wc = end_recv_any(c, msg, sizeof(msg));
	if (rpcrdma_header_decode(&h, msg, wc.byte_len, NULL, &hlen) || h.xid != k->xid ||
	    h.type != k->reply_type)
		fail("%s: reply header: xid 0x%x type %u, expected 0x%x type %u", k->what, h.xid,
		     h.type, k->xid, k->reply_type);
	if (wc.with_invalidate != k->inv || (k->inv && wc.invalidated_rkey != k->inv_rkey))
		fail("%s: reply Send: with_invalidate %d rkey 0x%x, expected %d rkey 0x%x",
		     k->what, wc.with_invalidate, wc.invalidated_rkey, k->inv, k->inv_rkey);
	if (h.type == RDMA_MSG)
		svc_check_rpc_reply(k, msg + hlen, wc.byte_len - (uint32_t)hlen);
	else if (h.type == RDMA_NOMSG)
		svc_check_rpc_reply(k, (const uint8_t *)(uintptr_t)k->reply.offset,
				    rpcrdma_chunk_length(&h, &h.reply));
	else if (h.err != ERR_CHUNK)
		fail("%s: RDMA_ERROR %u, expected ERR_CHUNK", k->what, h.err);
	if (k->inv)
		pass("%s: Send With Invalidate of 0x%x", k->what, k->inv_rkey);
	else
		pass("%s: plain Send", k->what);
}

static struct rpcrdma_segment seg_at(const struct end *c, uint32_t rkey, uint32_t off,
				     uint32_t len)
{
	return (struct rpcrdma_segment){ rkey, len, (uintptr_t)c->buf + BUF_LEN + off };
}

/*
 * svc_rdma answers with Send With Invalidate exactly when R is in force
 * and every segment of the call carries one rkey; on rxe each kind of
 * reply (RDMA_MSG, RDMA_NOMSG, RDMA_ERROR) is checked, on siw (R off)
 * a call with one rkey gets plain Sends.
 */
static void run_svc_replies(const struct sockaddr_storage *addr, bool have_mw)
{
	struct end c = { .who = "client" };
	struct sockaddr_storage dst = *addr;
	struct ibv_mw *mw1 = NULL, *mw2 = NULL;
	uint32_t k1, k2, xid = 0x5ec0de00;
	struct svc_call k;
	uint16_t port = svc_start(addr);
	int rc;

	if (dst.ss_family == AF_INET)
		((struct sockaddr_in *)&dst)->sin_port = port;
	else
		((struct sockaddr_in6 *)&dst)->sin6_port = port;
	rc = rpcrdma_ep_connect((const struct sockaddr *)&dst, &params, &c.ep);
	if (rc)
		fail("client: rpcrdma_ep_connect to svc_rdma: %s", strerror(-rc));
	if (rpcrdma_ep_info(c.ep)->inline_params.remote_invalidate != have_mw)
		fail("client: remote invalidation %d with svc_rdma, expected %d",
		     rpcrdma_ep_info(c.ep)->inline_params.remote_invalidate, have_mw);
	end_register(&c, IBV_ACCESS_LOCAL_WRITE |
			 (have_mw ? IBV_ACCESS_MW_BIND : IBV_ACCESS_REMOTE_WRITE));

	k = (struct svc_call){ .what = "NULL without chunks", .xid = ++xid, .type = RDMA_MSG,
			       .reply_type = RDMA_MSG };
	svc_do_call(&c, &k);
	if (!have_mw) {
		k1 = c.mr->rkey;
		k = (struct svc_call){ .what = "long reply, R off", .xid = ++xid,
				       .type = RDMA_MSG, .proc = PROC_BYTES, .arg = LONG_REPLY,
				       .reply = seg_at(&c, k1, 0, BUF_LEN), .reply_type = RDMA_NOMSG };
		svc_do_call(&c, &k);
		end_destroy(&c);
		return;
	}
	if (rpcrdma_ep_mw_alloc(c.ep, &mw1) || rpcrdma_ep_mw_alloc(c.ep, &mw2))
		fail("client: rpcrdma_ep_mw_alloc failed");

	k1 = client_bind_at(&c, mw1, 0, BUF_LEN);
	k = (struct svc_call){ .what = "NULL with a reply chunk (RDMA_MSG)", .xid = ++xid,
			       .type = RDMA_MSG, .reply = seg_at(&c, k1, 0, BUF_LEN),
			       .reply_type = RDMA_MSG, .inv = true, .inv_rkey = k1 };
	svc_do_call(&c, &k);

	k1 = client_bind_at(&c, mw1, 0, BUF_LEN);
	k = (struct svc_call){ .what = "long reply (RDMA_NOMSG)", .xid = ++xid, .type = RDMA_MSG,
			       .proc = PROC_BYTES, .arg = LONG_REPLY,
			       .reply = seg_at(&c, k1, 0, BUF_LEN), .reply_type = RDMA_NOMSG,
			       .inv = true, .inv_rkey = k1 };
	svc_do_call(&c, &k);

	k1 = client_bind_at(&c, mw1, 0, BUF_LEN);
	k = (struct svc_call){ .what = "malformed call (RDMA_ERROR)", .xid = ++xid,
			       .type = RDMA_NOMSG, .reply = seg_at(&c, k1, 0, BUF_LEN),
			       .reply_type = RDMA_ERROR, .inv = true, .inv_rkey = k1 };
	svc_do_call(&c, &k);

	k1 = client_bind_at(&c, mw1, 0, BUF_LEN / 2);
	k2 = client_bind_at(&c, mw2, BUF_LEN / 2, BUF_LEN / 2);
	k = (struct svc_call){ .what = "two rkeys", .xid = ++xid, .type = RDMA_MSG,
			       .write = seg_at(&c, k2, BUF_LEN / 2, BUF_LEN / 2),
			       .reply = seg_at(&c, k1, 0, BUF_LEN / 2), .reply_type = RDMA_MSG };
	svc_do_call(&c, &k);
	client_local_inv(&c, k1);
	client_local_inv(&c, k2);

	rpcrdma_ep_mw_free(mw1);
	rpcrdma_ep_mw_free(mw2);
	end_destroy(&c);
}

/* ---- siw ------------------------------------------------------------------------------------ */

static void run_no_mw(const struct sockaddr_storage *addr)
{
	struct end c = { .who = "client" }, s = { .who = "server" };
	struct ibv_mw *mw = NULL;
	int rc;

	connect_pair(addr, &c, &s);
	if (rpcrdma_ep_info(c.ep)->device_has_mw)
		fail("client: the device reports type-2 memory windows");
	rc = rpcrdma_ep_mw_alloc(c.ep, &mw);
	if (rc != -EOPNOTSUPP)
		fail("client: rpcrdma_ep_mw_alloc returned %d (%s), expected -EOPNOTSUPP", rc,
		     rc ? strerror(-rc) : "success");
	pass("rpcrdma_ep_mw_alloc: %s", strerror(-rc));
	if (rpcrdma_ep_info(s.ep)->peer_pd != RPCRDMA_PD_OK)
		fail("server: client's private data: %s",
		     rpcrdma_pd_status_str(rpcrdma_ep_info(s.ep)->peer_pd));
	/* The server asked for R; it sees it off only because the client did not send it. */
	check_r(&c, &s, false);
	end_destroy(&c);
	end_destroy(&s);
}

/* ---- main ---------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct sockaddr_storage addr;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3 || (strcmp(argv[1], "rxe") && strcmp(argv[1], "siw")) ||
	    !rdmatest_parse_addr(argv[2], 0, &addr)) {
		fprintf(stderr, "usage: mw_invalidate rxe|siw ADDR\n");
		return 2;
	}
	if (!strcmp(argv[1], "siw")) {
		set_label("siw", "no memory windows");
		run_no_mw(&addr);
	} else {
		set_label(argv[1], "Send With Invalidate");
		run_rxe_case(&addr, BY_SEND_WITH_INV);
		set_label(argv[1], "Local Invalidate");
		run_rxe_case(&addr, BY_LOCAL_INV);
	}
	set_label(argv[1], "svc_rdma replies");
	run_svc_replies(&addr, strcmp(argv[1], "siw") != 0);
	printf("mw_invalidate: %s: all checks passed\n", argv[1]);
	return 0;
}
