/*
 * The RPC-over-RDMA SVCXPRT: a listener transport whose xp_fd is the
 * listener's (its rdma_cm channel, and the timer that binds a listener
 * whose device was removed again: listener.c; xp_recv accepts, like
 * svc_vc's rendezvous) and one
 * connection transport per client whose xp_fd is an epoll set of the
 * endpoint's completion channel, its own rdma_cm channel and yield_fd
 * (below), so libtirpc's svc_run() serves all, and a disconnect wakes
 * it even on a provider that flushes nothing until we tear the QP down
 * (rxe): the connection is then destroyed by svc_run() (XPRT_DIED).
 *
 * A connection's xp_recv takes what was received and pulls the read
 * chunks of the calls taken (svc_rdma_recvfrom.c), then serves the
 * oldest call once it is complete: its RPC header is decoded and
 * libtirpc dispatches it; xp_reply answers it (svc_rdma_sendto.c).  A
 * header libtirpc cannot decode gets RFC 5531's rejection where there is
 * one (another RPC version, an oversized credential or verifier: see
 * xdr/rpc_call.h), otherwise ERR_CHUNK.
 *
 * Calls to the Connection Configuration Protocol (RFC 5666 section 6,
 * program 100417) are answered here, on every connection, before
 * libtirpc's dispatch table is consulted (which TCP transports share):
 * the reply carries our receive size and IRD, and the client's sizes
 * and read depth bound our inline replies and RDMA Reads from then on.
 *
 * Receives that complete while a call is being served are queued and
 * xp_stat() reports XPRT_MOREREQS, so none is stranded behind a
 * completion channel event already consumed.  libtirpc serves a
 * transport until it says XPRT_IDLE, and a client that keeps calls
 * coming (each poll finding more) would keep svc_run() on its
 * connection, away from the others and from new connects: after
 * SVC_ROUND_CALLS calls in a row xp_stat() says XPRT_IDLE and makes the
 * connection's fd readable (yield_fd): svc_run() serves the other
 * transports readable at its poll, polls again and finds this one
 * readable still.
 *
 * Nothing waits for the peer, so one slow or hostile client cannot
 * stall the single svc_run() thread and with it every other connection:
 * a call's RDMA Reads are posted and xp_recv() returns, to go on when
 * they complete; a reply's Writes and Send are posted and xp_reply()
 * returns (while more calls wait, the Send is held and posted with
 * theirs: svc_rdma_conn.held).  A message is taken from the queue only when a reply buffer
 * may be added for it (replies in flight and calls taken together at
 * most SVC_REPLIES_MAX: with SVC_REPLY_KEEP kept idle, a connection's
 * buffers stop growing once its load is steady) and a Send can be
 * posted; a call is dispatched only when the send queue has room for
 * every Write its chunks allow and the Send (a call offering more
 * segments than the queue holds is answered ERR_CHUNK).  Otherwise the
 * connection waits, idle, for completions.
 *
 * Nor does accepting wait: a connection is registered as soon as it is
 * accepted, and its ESTABLISHED event comes later on its own rdma_cm
 * channel (it is served meanwhile: on IB/RoCE a call may come first).
 * Until then it is half-open, on its listener's list: a listener keeps
 * at most SVC_HALF_OPEN_MAX, and a new one displaces its oldest; one not
 * ESTABLISHED within connect_timeout_ms is destroyed then (its timer, a
 * timerfd in its epoll set, wakes svc_run(), which has no timer).  So a
 * peer that never completes its handshakes holds a bounded number of
 * connections for a bounded time, and neither the server thread nor
 * other clients' connects.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpc_com.h> /* _rpc_dtablesize */

#include "cm-private/ccp_negotiation.h"
#include "rpcrdma/debug.h"
#include "rpcrdma/netconfig.h"
#include "rpcrdma/options.h"
#include "rpcrdma/rpcbind.h"
#include "rpcrdma/svc_listen_limits.h"
#include "rpcrdma/svc_rdma_internal.h"
#include "xdr/ccp.h"
#include "xdr/rpc_call.h"

struct svc_rdma_listener {
	SVCXPRT xprt;
	SVCXPRT_EXT ext;
	struct rpcrdma_listener *l;
	struct rpcrdma_options opts;
	struct svc_ulbs *ulbs;
	struct sockaddr_storage laddr;
	char netid[8];
	struct svc_rdma_half_open *half_open;
	pthread_mutex_t reg_lock; /* one svc_rdma_reg at a time: its rpcbind unset and set pair */
};

/*
 * A listener's half-open connections, oldest first.  The listener and
 * each connection it accepted hold a reference, so the list outlives
 * whichever goes first.  Used, like every SVCXPRT of ours, by the one
 * thread that serves them.
 */
struct svc_rdma_half_open {
	struct svc_rdma_conn *head, *tail;
	unsigned int count, refs;
};

static const struct xp_ops svc_rdma_conn_ops;
static const struct xp_ops svc_rdma_listener_ops;

static bool_t svc_rdma_control(SVCXPRT *xprt, const u_int rq, void *in)
{
	(void)xprt;
	(void)rq;
	(void)in;
	return FALSE;
}

static const struct xp_ops2 svc_rdma_ops2 = { .xp_control = svc_rdma_control };

/* ---- Connection Configuration Protocol ---------------------------------------------------- */

static bool_t svc_rdma_args_decode(struct svc_rdma_conn *c, SVCAUTH *auth, xdrproc_t xargs,
				   void *args);

static struct rpcrdma_ccp_local svc_rdma_ccp_local(const struct svc_rdma_conn *c)
{
	return (struct rpcrdma_ccp_local){
		.send_size = c->opts.inline_send,
		.recv_size = c->opts.inline_recv,
		.align = 0, /* no recommendation: we never send RDMA_MSGP */
	};
}

/*
 * CONF_RDMA: check and apply the client's values, answer with ours.
 * Returns the accept status of the reply.
 */
static enum accept_stat svc_rdma_ccp_conf(struct svc_rdma_conn *c, struct rpcrdma_config_reply *rep)
{
	const struct rpcrdma_ep_info *ei = rpcrdma_ep_info(c->ep);
	struct rpcrdma_ccp_local local = svc_rdma_ccp_local(c);
	const struct rpcrdma_inline_params *pd =
		ei->peer_pd == RPCRDMA_PD_OK ? &ei->inline_params : NULL;
	struct rpcrdma_config_req req;

	if (!svc_rdma_args_decode(c, NULL, (xdrproc_t)xdr_rpcrdma_config_req, &req) ||
	    rpcrdma_ccp_server_apply(&local, &req, pd, &c->inline_send) != RPCRDMA_CCP_OK)
		return GARBAGE_ARGS;
	if (req.maxrdmaread < c->max_reads)
		c->max_reads = req.maxrdmaread;
	c->inline_recv = local.recv_size; /* the reply's maxcall_sendsize */
	*rep = rpcrdma_ccp_server_reply(&local, &ei->rd);
	return SUCCESS;
}

/* Answer the CCP call @call decoded; ends the call. */
static void svc_rdma_ccp(struct svc_rdma_conn *c, const struct rpc_msg *call)
{
	struct rpcrdma_config_reply rep;
	struct rpc_msg r = { .rm_direction = REPLY };

	r.rm_reply.rp_stat = MSG_ACCEPTED;
	r.acpted_rply.ar_verf = _null_auth;
	r.acpted_rply.ar_results.where = NULL;
	r.acpted_rply.ar_results.proc = RPCRDMA_XDR_VOID;
	if (call->rm_call.cb_vers != RPCRDMA_CCP_VERSION) {
		r.acpted_rply.ar_stat = PROG_MISMATCH;
		r.acpted_rply.ar_vers.low = RPCRDMA_CCP_VERSION;
		r.acpted_rply.ar_vers.high = RPCRDMA_CCP_VERSION;
	} else if (call->rm_call.cb_proc == NULLPROC) {
		r.acpted_rply.ar_stat = SUCCESS;
	} else if (call->rm_call.cb_proc == RPCRDMA_CCP_PROC_CONF_RDMA) {
		r.acpted_rply.ar_stat = svc_rdma_ccp_conf(c, &rep);
		r.acpted_rply.ar_results.where = (caddr_t)&rep;
		r.acpted_rply.ar_results.proc = (xdrproc_t)xdr_rpcrdma_config_reply;
	} else {
		r.acpted_rply.ar_stat = PROC_UNAVAIL;
	}
	svc_rdma_reply_auth(c, &r, NULL);
}

/* ---- the connection's timer --------------------------------------------------------- */

/* Make timer_fd readable @ms from now (0: never); a pending expiry is forgotten. */
static int svc_rdma_timer_set(struct svc_rdma_conn *c, int64_t ms)
{
	struct itimerspec t = { .it_value = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L } };

	return timerfd_settime(c->timer_fd, 0, &t, NULL) ? -errno : 0;
}

static bool svc_rdma_timer_expired(struct svc_rdma_conn *c)
{
	uint64_t n;

	return read(c->timer_fd, &n, sizeof(n)) == (ssize_t)sizeof(n);
}

/* ---- half-open connections ----------------------------------------------------------- */

static struct svc_rdma_half_open *svc_rdma_half_open_get(struct svc_rdma_half_open *h)
{
	h->refs++;
	return h;
}

static void svc_rdma_half_open_put(struct svc_rdma_half_open *h)
{
	if (h && --h->refs == 0)
		free(h);
}

static void svc_rdma_half_open_add(struct svc_rdma_conn *c)
{
	struct svc_rdma_half_open *h = c->half_open_list;
	int rc;

	c->half_open = true;
	c->open_deadline = rpcrdma_now_ms() + c->opts.connect_timeout_ms;
	/* wakes its own xp_recv then, whose sweep ends it: svc_run() has no timer */
	rc = svc_rdma_timer_set(c, c->opts.connect_timeout_ms);
	if (rc)
		svc_rdma_conn_kill(c, "arming the connect timer failed", -rc);
	c->ho_prev = h->tail;
	c->ho_next = NULL;
	if (h->tail)
		h->tail->ho_next = c;
	else
		h->head = c;
	h->tail = c;
	h->count++;
}

/* Take @c off the list (ESTABLISHED, or going); again is harmless. */
static void svc_rdma_half_open_remove(struct svc_rdma_conn *c)
{
	struct svc_rdma_half_open *h = c->half_open_list;
	int rc;

	if (!c->half_open)
		return;
	if (c->ho_prev)
		c->ho_prev->ho_next = c->ho_next;
	else
		h->head = c->ho_next;
	if (c->ho_next)
		c->ho_next->ho_prev = c->ho_prev;
	else
		h->tail = c->ho_prev;
	h->count--;
	c->half_open = false;
	c->ho_prev = c->ho_next = NULL;
	rc = c->lingering ? 0 : svc_rdma_timer_set(c, 0);
	if (rc)
		svc_rdma_conn_kill(c, "disarming the connect timer failed", -rc);
}

/*
 * Give up half-open @c.  @self is the connection whose xp_recv runs (or
 * NULL): it is only killed, and svc_run() destroys it when its xp_recv
 * returns (XPRT_DIED); any other is destroyed now, since its cm events
 * may have been read here and its fd may never wake svc_run() again.
 */
static void svc_rdma_half_open_end(struct svc_rdma_conn *c, struct svc_rdma_conn *self,
				   const char *why, int err)
{
	svc_rdma_half_open_remove(c);
	svc_rdma_conn_kill(c, why, err);
	if (c != self)
		SVC_DESTROY(&c->xprt);
}

/*
 * Look at the half-open connections: destroy those past their deadline
 * and those whose handshake failed, and drop from the list those now
 * ESTABLISHED.  A connection's cm events are read first (a system
 * call), so an ESTABLISHED waiting there is not taken for a peer that
 * never completed: of every listed one with @all, otherwise only of
 * those past their deadline (the others' events wake svc_run() for
 * their own xp_recv).  One clock read when the list is not empty.
 */
static void svc_rdma_half_open_sweep(struct svc_rdma_half_open *h, struct svc_rdma_conn *self,
				     bool all)
{
	struct svc_rdma_conn *c, *next;
	int64_t now;

	if (!h || !h->head)
		return;
	now = rpcrdma_now_ms();
	for (c = h->head; c; c = next) {
		bool late = now >= c->open_deadline;
		int rc;

		next = c->ho_next;
		if ((all || late) && !c->dead) {
			rc = rpcrdma_ep_wait(c->ep, 0);
			if (rc < 0)
				svc_rdma_conn_kill(c, rpcrdma_ep_wait_failure(rc), -rc);
		}
		if (c->dead)
			svc_rdma_half_open_end(c, self, "", 0); /* said why when it died */
		else if (rpcrdma_ep_established(c->ep))
			svc_rdma_half_open_remove(c);
		else if (late)
			svc_rdma_half_open_end(c, self, "not established within the connect timeout",
					       ETIMEDOUT);
	}
}

/* One half-open connection too many: the oldest still not ESTABLISHED goes. */
static void svc_rdma_half_open_displace(struct svc_rdma_half_open *h)
{
	svc_rdma_half_open_sweep(h, NULL, true);
	if (h->count > SVC_HALF_OPEN_MAX)
		svc_rdma_half_open_end(h->head, NULL,
				       "not established yet, the oldest of too many: a new one displaced it",
				       ECONNREFUSED);
}

/* ---- connection xp_ops --------------------------------------------------------------- */

void svc_rdma_conn_kill(struct svc_rdma_conn *c, const char *why, int err)
{
	if (!c->dead)
		rpcrdma_debug_conn_lost("server", (const struct sockaddr *)&c->raddr, why, err);
	c->dead = true;
}

/* Nothing to serve now: handle cm events (a disconnect kills the connection) and wait. */
static bool_t svc_rdma_idle(struct svc_rdma_conn *c, bool blocked)
{
	int rc;

	c->blocked = blocked;
	rc = c->dead ? 0 : rpcrdma_ep_wait(c->ep, 0);
	if (rc < 0)
		svc_rdma_conn_kill(c, rpcrdma_ep_wait_failure(rc), -rc);
	else if (c->half_open && rpcrdma_ep_established(c->ep))
		svc_rdma_half_open_remove(c);
	return FALSE;
}

/*
 * The oldest call, whose RPC header xdr_callmsg() refused: RFC 5531's
 * answer where it has one (a rejected reply), nothing for a message that
 * is not a call, ERR_CHUNK for one too short or for another XID.
 */
static void svc_rdma_refused_call(struct svc_rdma_conn *c, struct svc_rdma_call *cl)
{
	struct rpc_msg r = { .rm_direction = REPLY };

	r.rm_reply.rp_stat = MSG_DENIED;
	switch (rpcrdma_call_fault(cl->call, cl->call_len, cl->hdr.xid)) {
	case RPCRDMA_CALL_MALFORMED:
		svc_rdma_send_error(c, cl, cl->hdr.xid, cl->hdr.credit, ERR_CHUNK);
		svc_rdma_oldest_done(c);
		return;
	case RPCRDMA_CALL_NOT_A_CALL:
		svc_rdma_oldest_done(c);
		return;
	case RPCRDMA_CALL_RPC_VERSION:
		r.rjcted_rply.rj_stat = RPC_MISMATCH;
		r.rjcted_rply.rj_vers.low = RPC_MSG_VERSION;
		r.rjcted_rply.rj_vers.high = RPC_MSG_VERSION;
		break;
	case RPCRDMA_CALL_BAD_CRED:
		r.rjcted_rply.rj_stat = AUTH_ERROR;
		r.rjcted_rply.rj_why = AUTH_BADCRED;
		break;
	case RPCRDMA_CALL_BAD_VERF:
		r.rjcted_rply.rj_stat = AUTH_ERROR;
		r.rjcted_rply.rj_why = AUTH_BADVERF;
		break;
	}
	cl->flavor = AUTH_NONE; /* left from the slot's last call: decoding stopped before it */
	c->in_call = true;
	svc_rdma_reply_auth(c, &r, NULL); /* its reply ends the call */
}

/*
 * The oldest call taken, once it is complete: returns 1 when it is
 * ready for dispatch (c->in_call), 0 while it is not complete, -1 when
 * it was answered here (CCP, ERR_CHUNK) and the next one may be served.
 */
static int svc_rdma_serve_oldest(struct svc_rdma_conn *c, struct rpc_msg *msg)
{
	struct svc_rdma_call *cl = svc_rdma_oldest(c);

	if (!c->ccount)
		return 0;
	if (!c->max_reads && cl->pull_next < cl->hdr.nreads && !cl->reads_pending) {
		/* CCP lowered the read depth to 0 after this call was taken */
		if (svc_rdma_send_room(c) < 1)
			return 0; /* earlier replies' completions make room */
		svc_rdma_send_error(c, cl, cl->hdr.xid, cl->hdr.credit, ERR_CHUNK);
		svc_rdma_oldest_done(c);
		return -1;
	}
	if (!svc_rdma_call_ready(c, cl))
		return 0;
	if (!svc_rdma_decode_call(cl, msg)) {
		svc_rdma_refused_call(c, cl);
		return -1;
	}
	c->in_call = true;
	if (msg->rm_call.cb_prog != RPCRDMA_CCP_PROGRAM)
		return 1;
	svc_rdma_ccp(c, msg); /* its reply ends the call */
	return -1;
}

/*
 * A closing connection may go: its replies are sent, it broke, or it
 * waited long enough.  Disconnecting flushes Sends not yet
 * acknowledged, so it waits for its replies' Sends (posted now),
 * registered with svc_run(): their completions, the peer's disconnect
 * or its timer (SVC_LINGER_MS) wake it, so a peer that stops
 * acknowledging holds it no longer and the server thread never waits.
 */
static bool svc_rdma_linger_done(struct svc_rdma_conn *c)
{
	if (svc_rdma_sends_flush(c) || svc_rdma_poll_all(c) || !c->replies.in_flight)
		return true;
	if (!c->lingering) {
		c->lingering = true;
		return svc_rdma_timer_set(c, SVC_LINGER_MS) != 0; /* without a timer it goes now */
	}
	return svc_rdma_timer_expired(c);
}

/*
 * Take what was received, post the Reads of every call taken, and
 * serve the oldest when it is complete; poll once before going idle.
 */
static bool_t svc_rdma_recv(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_conn *c = conn_of(xprt);
	bool polled = false;

	c->blocked = false;
	if (c->yielded) {
		eventfd_t n;

		(void)eventfd_read(c->yield_fd, &n);
		c->yielded = false;
	}
	if (c->closing)
		return svc_rdma_idle(c, false); /* svc_rdma_stat decides whether it goes */
	if (c->in_call)
		svc_rdma_oldest_done(c); /* dispatched, left without a reply */
	svc_rdma_half_open_sweep(c->half_open_list, c, false);
	while (!c->dead) {
		int rc;

		svc_rdma_take_msgs(c);
		if (c->dead || svc_rdma_pull_all(c))
			break;
		rc = svc_rdma_serve_oldest(c, msg);
		if (rc > 0) {
			c->round_calls++;
			c->dispatching = true;
			return TRUE;
		}
		if (rc < 0)
			continue;
		if (polled)
			return svc_rdma_idle(c, c->ccount || c->qcount);
		if (svc_rdma_poll_all(c))
			break;
		polled = true;
	}
	return FALSE;
}

static enum xprt_stat svc_rdma_stat(SVCXPRT *xprt)
{
	struct svc_rdma_conn *c = conn_of(xprt);

	c->dispatching = false;
	if (c->dead || (c->closing && svc_rdma_linger_done(c)))
		return XPRT_DIED; /* svc_getreq_common() destroys it now */
	if (c->closing)
		return XPRT_IDLE;
	/* blocked: the completions it waits for wake svc_run() */
	if (!c->blocked && svc_rdma_more_calls(c)) {
		if (c->round_calls < SVC_ROUND_CALLS)
			return XPRT_MOREREQS;
		if (eventfd_write(c->yield_fd, 1))
			return XPRT_MOREREQS; /* cannot yield: serve on rather than strand them */
		c->yielded = true;
	}
	c->round_calls = 0;
	return svc_rdma_sends_flush(c) ? XPRT_DIED : XPRT_IDLE;
}

/* The oldest call's arguments; @auth unwraps them (SVCAUTH_UNWRAP), or NULL: as they are. */
static bool_t svc_rdma_args_decode(struct svc_rdma_conn *c, SVCAUTH *auth, xdrproc_t xargs,
				   void *args)
{
	struct svc_rdma_call *cl = svc_rdma_oldest(c);
	bool_t ok;
	XDR x;

	if (!c->in_call)
		return FALSE;
	xdrmem_create(&x, (char *)(uintptr_t)cl->call + cl->args_off, cl->call_len - cl->args_off,
		      XDR_DECODE);
	ok = auth ? SVCAUTH_UNWRAP(auth, &x, xargs, args) : xargs(&x, args);
	XDR_DESTROY(&x);
	return ok;
}

/* xp_getargs: the arguments as the credential libtirpc authenticated presents them. */
static bool_t svc_rdma_getargs(SVCXPRT *xprt, xdrproc_t xargs, void *args)
{
	SVCAUTH *auth = &SVC_XP_AUTH(xprt);

	return svc_rdma_args_decode(conn_of(xprt), auth->svc_ah_ops ? auth : NULL, xargs, args);
}

static bool_t svc_rdma_freeargs(SVCXPRT *xprt, xdrproc_t xargs, void *args)
{
	XDR x = { .x_op = XDR_FREE };

	(void)xprt;
	return xargs(&x, args);
}

static void svc_rdma_conn_free(struct svc_rdma_conn *c)
{
	if (!c)
		return;
	if (c->half_open_list) {
		svc_rdma_half_open_remove(c);
		svc_rdma_half_open_put(c->half_open_list);
	}
	svc_ulbs_put(c->ulbs);
	rpcrdma_ep_stop(c->ep); /* no Read, Write or Send touches our buffers after this */
	for (uint32_t i = 0; c->calls && i < SVC_CALLS_MAX; i++)
		svc_rdma_call_release(c, &c->calls[i]);
	rpcrdma_replybufs_destroy(&c->replies);
	rpcrdma_replybufs_destroy(&c->sinks);
	rpcrdma_ep_destroy(c->ep);
	if (c->epfd >= 0)
		close(c->epfd);
	if (c->yield_fd >= 0)
		close(c->yield_fd);
	if (c->timer_fd >= 0)
		close(c->timer_fd);
	free(c->reply);
	free(c->stage);
	free(c->queue);
	free(c->calls);
	free(c);
}

/*
 * A dispatch routine may destroy its own connection (svc_destroy), but
 * libtirpc's svc_getreq_common() asks the transport for its state after
 * the routine returns, and destroys it when told XPRT_DIED: the
 * connection is only marked closing then, and goes once its replies
 * are sent (svc_rdma_linger_done).
 */
static void svc_rdma_destroy(SVCXPRT *xprt)
{
	struct svc_rdma_conn *c = conn_of(xprt);

	if (c->dispatching) {
		c->closing = true;
		return;
	}
	xprt_unregister(xprt);
	svc_rdma_conn_free(c);
}

static const struct xp_ops svc_rdma_conn_ops = {
	.xp_recv = svc_rdma_recv,
	.xp_stat = svc_rdma_stat,
	.xp_getargs = svc_rdma_getargs,
	.xp_reply = svc_rdma_reply,
	.xp_freeargs = svc_rdma_freeargs,
	.xp_destroy = svc_rdma_destroy,
};

/* The values in force: CCP may have lowered the inline reply size since setup. */
int svc_rdma_getinfo(SVCXPRT *xprt, struct rpcrdma_conn_info *info)
{
	const struct rpcrdma_ep_info *ei;
	const struct svc_rdma_conn *c;
	struct rpcrdma_conn_info got;

	if (!xprt || !info || xprt->xp_ops != &svc_rdma_conn_ops)
		return -EINVAL;
	c = conn_of(xprt);
	ei = rpcrdma_ep_info(c->ep);
	got = (struct rpcrdma_conn_info){
		.inline_send = c->inline_send,
		.inline_recv = c->inline_recv,
		.credits = c->credits.max_requests,
		.ird = ei->rd.ird,
		.ord = ei->rd.ord,
		.peer_private_data = ei->peer_pd == RPCRDMA_PD_OK,
		.remote_invalidate = ei->inline_params.remote_invalidate,
		.iwarp = ei->transport == IBV_TRANSPORT_IWARP,
		.registration = RPCRDMA_REG_PER_CALL_MR, /* the server exposes no memory */
		.ccp = RPCRDMA_CCP_NOT_ASKED,
		.connects = 1,
		.ack_timeout = ei->ack_timeout,
		.traffic_class = ei->traffic_class,
		.send_wr_inline = ei->send_wr_inline,
	};
	return rpcrdma_conn_info_store(info, &got);
}

/* ---- listener --------------------------------------------------------------------------- */

static void svc_rdma_xprt_init(SVCXPRT *x, SVCXPRT_EXT *ext, void *self, int fd,
			       const struct xp_ops *ops, char *netid)
{
	x->xp_fd = fd;
	x->xp_ops = ops;
	x->xp_ops2 = &svc_rdma_ops2;
	x->xp_netid = netid;
	x->xp_p1 = self;
	x->xp_p3 = ext;
}

/*
 * libtirpc's xprt_register() silently ignores an fd at or above
 * _rpc_dtablesize(), which it reads once: RLIMIT_NOFILE raised after
 * that, a transport there would never be served nor freed.
 */
static bool svc_rdma_fd_registrable(int fd)
{
	return fd < _rpc_dtablesize();
}

/*
 * One fd for svc_run(): readable on completions, a cm event (the peer's
 * disconnect), a yielded round (svc_rdma_stat) or its timer.
 */
static int svc_rdma_conn_epoll(struct svc_rdma_conn *c)
{
	int fds[4] = { rpcrdma_ep_fd(c->ep), rpcrdma_ep_cm_fd(c->ep), -1, -1 };

	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0)
		return -errno;
	if (!svc_rdma_fd_registrable(c->epfd))
		return -EMFILE;
	c->yield_fd = fds[2] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->yield_fd < 0)
		return -errno;
	c->timer_fd = fds[3] = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (c->timer_fd < 0)
		return -errno;
	for (int i = 0; i < 4; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };

		if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fds[i], &ev))
			return -errno;
	}
	return 0;
}

static int svc_rdma_conn_setup(struct svc_rdma_listener *ls, struct svc_rdma_conn *c)
{
	const struct sockaddr *peer = rpcrdma_ep_peer_addr(c->ep);
	const struct sockaddr *local = rpcrdma_ep_local_addr(c->ep);
	int rc = svc_rdma_conn_epoll(c);

	if (rc)
		return rc;

	c->opts = ls->opts;
	c->ulbs = svc_ulbs_get(ls->ulbs);
	c->qcap = ls->opts.credits;
	c->queue = calloc(c->qcap, sizeof(*c->queue));
	c->send_cap = ls->opts.inline_send;
	c->reply = calloc(1, sizeof(*c->reply));
	c->calls = calloc(SVC_CALLS_MAX, sizeof(*c->calls));
	if (!c->queue || !c->reply || !c->calls)
		return -ENOMEM;
	c->inline_send = rpcrdma_ep_info(c->ep)->inline_params.send;
	c->inline_recv = rpcrdma_ep_info(c->ep)->inline_params.recv;
	c->max_reads = rpcrdma_ep_info(c->ep)->rd.ord;
	rpcrdma_credits_server_init(&c->credits, ls->opts.credits);
	rpcrdma_credits_server_posted(&c->credits, ls->opts.credits);
	memcpy(c->netid, ls->netid, sizeof(c->netid));
	svc_rdma_xprt_init(&c->xprt, &c->ext, c, c->epfd, &svc_rdma_conn_ops, c->netid);
	if (peer && (peer->sa_family == AF_INET || peer->sa_family == AF_INET6)) {
		memcpy(&c->raddr, peer, rpcrdma_sockaddr_len(peer));
		memcpy(&c->xprt.xp_raddr, peer, rpcrdma_sockaddr_len(peer));
		c->xprt.xp_addrlen = (int)rpcrdma_sockaddr_len(peer);
		c->xprt.xp_rtaddr = (struct netbuf){ sizeof(c->raddr), rpcrdma_sockaddr_len(peer), &c->raddr };
	}
	/* as svc_vc's getsockname(): the address the client connected to, not a wildcard */
	c->laddr = ls->laddr;
	if (local && (local->sa_family == AF_INET || local->sa_family == AF_INET6))
		memcpy(&c->laddr, local, rpcrdma_sockaddr_len(local));
	c->xprt.xp_ltaddr = (struct netbuf){ sizeof(c->laddr),
					     rpcrdma_sockaddr_len((struct sockaddr *)&c->laddr), &c->laddr };
	c->xprt.xp_port = ls->xprt.xp_port;
	return 0;
}

static bool_t svc_rdma_accept(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_listener *ls = xprt->xp_p1;
	struct rpcrdma_ep *ep;
	int rc;

	(void)msg;
	/*
	 * A burst at a time: the channel's fd stays readable for the rest, and
	 * a channel that keeps failing (no event consumed) must not hold svc_run.
	 */
	for (uint32_t n = 0; n < SVC_ACCEPT_BURST &&
			     (rc = rpcrdma_listener_accept(ls->l, &ep)) != -EAGAIN; n++) {
		struct svc_rdma_conn *c;

		if (rc)
			continue; /* a request rejected, or a lost device: the listener serves on */
		c = calloc(1, sizeof(*c));
		if (!c) {
			rpcrdma_ep_destroy(ep);
			continue;
		}
		c->epfd = c->yield_fd = c->timer_fd = -1;
		c->ep = ep;
		rpcrdma_replybufs_init(&c->replies, rpcrdma_ep_pd(ep), 0, SVC_REPLY_KEEP,
				       SVC_REPLY_KEEP_ONE);
		/* iWARP: a Read Response is a tagged write, so a sink needs remote access: per call */
		c->sinks_pooled = rpcrdma_ep_info(ep)->transport != IBV_TRANSPORT_IWARP;
		rpcrdma_replybufs_init(&c->sinks, rpcrdma_ep_pd(ep), IBV_ACCESS_LOCAL_WRITE,
				       SVC_SINK_KEEP, SVC_RD_BYTES);
		rc = svc_rdma_conn_setup(ls, c);
		if (rc) {
			rpcrdma_debug_conn_lost("server", rpcrdma_ep_peer_addr(ep),
						rc == -EMFILE ? "no fd libtirpc can poll" :
								"setting the connection up failed",
						-rc);
			svc_rdma_conn_free(c);
			continue;
		}
		xprt_register(&c->xprt);
		c->half_open_list = svc_rdma_half_open_get(ls->half_open);
		svc_rdma_half_open_add(c);
		if (ls->half_open->count > SVC_HALF_OPEN_MAX)
			svc_rdma_half_open_displace(ls->half_open);
	}
	svc_rdma_half_open_sweep(ls->half_open, NULL, false);
	return FALSE;
}

static enum xprt_stat svc_rdma_listener_stat(SVCXPRT *xprt)
{
	(void)xprt;
	return XPRT_IDLE;
}

static bool_t svc_rdma_listener_getargs(SVCXPRT *xprt, xdrproc_t xargs, void *args)
{
	(void)xprt;
	(void)xargs;
	(void)args;
	return FALSE;
}

static bool_t svc_rdma_listener_reply(SVCXPRT *xprt, struct rpc_msg *msg)
{
	(void)xprt;
	(void)msg;
	return FALSE;
}

static void svc_rdma_listener_free(struct svc_rdma_listener *ls)
{
	if (!ls)
		return;
	/* its half-open connections stay listed, swept at their own events */
	svc_rdma_half_open_put(ls->half_open);
	svc_ulbs_put(ls->ulbs);
	pthread_mutex_destroy(&ls->reg_lock);
	rpcrdma_listener_destroy(ls->l);
	free(ls);
}

static void svc_rdma_listener_destroy(SVCXPRT *xprt)
{
	xprt_unregister(xprt);
	svc_rdma_listener_free(xprt->xp_p1);
}

static const struct xp_ops svc_rdma_listener_ops = {
	.xp_recv = svc_rdma_accept,
	.xp_stat = svc_rdma_listener_stat,
	.xp_getargs = svc_rdma_listener_getargs,
	.xp_reply = svc_rdma_listener_reply,
	.xp_freeargs = svc_rdma_listener_getargs,
	.xp_destroy = svc_rdma_listener_destroy,
};

static SVCXPRT *svc_rdma_create_fail(struct svc_rdma_listener *ls, int err)
{
	rpcrdma_createerr_set(RPC_SYSTEMERROR, err);
	svc_rdma_listener_free(ls);
	return NULL;
}

SVCXPRT *svc_rdma_create(const struct sockaddr *addr, const struct rpcrdma_options *o)
{
	struct rpcrdma_ep_params params;
	struct svc_rdma_listener *ls;
	const struct sockaddr *bound;
	int rc;

	if (!addr || (addr->sa_family != AF_INET && addr->sa_family != AF_INET6))
		return svc_rdma_create_fail(NULL, EAFNOSUPPORT);
	ls = calloc(1, sizeof(*ls));
	if (!ls)
		return svc_rdma_create_fail(NULL, ENOMEM);
	pthread_mutex_init(&ls->reg_lock, NULL);
	ls->half_open = calloc(1, sizeof(*ls->half_open));
	if (!ls->half_open)
		return svc_rdma_create_fail(ls, ENOMEM);
	ls->half_open->refs = 1;
	ls->ulbs = svc_ulbs_new();
	if (!ls->ulbs)
		return svc_rdma_create_fail(ls, ENOMEM);
	rc = rpcrdma_options_load(&ls->opts, o);
	if (rc)
		return svc_rdma_create_fail(ls, -rc);
	rpcrdma_options_ep_params(&ls->opts, &params);
	rc = rpcrdma_listener_create(addr, &params, SVC_LISTEN_BACKLOG, &ls->l);
	if (rc)
		return svc_rdma_create_fail(ls, -rc);
	bound = rpcrdma_listener_addr(ls->l);
	memcpy(&ls->laddr, bound, rpcrdma_sockaddr_len(bound));
	strcpy(ls->netid, bound->sa_family == AF_INET ? RPCRDMA_NETID : RPCRDMA_NETID6);
	if (!svc_rdma_fd_registrable(rpcrdma_listener_fd(ls->l)))
		return svc_rdma_create_fail(ls, EMFILE);
	svc_rdma_xprt_init(&ls->xprt, &ls->ext, ls, rpcrdma_listener_fd(ls->l),
			   &svc_rdma_listener_ops, ls->netid);
	ls->xprt.xp_port = ntohs(bound->sa_family == AF_INET ?
				 ((const struct sockaddr_in *)bound)->sin_port :
				 ((const struct sockaddr_in6 *)bound)->sin6_port);
	ls->xprt.xp_ltaddr = (struct netbuf){ sizeof(ls->laddr), rpcrdma_sockaddr_len(bound), &ls->laddr };
	xprt_register(&ls->xprt);
	return &ls->xprt;
}

struct svc_rdma_reg_args {
	SVCXPRT *listener;
	rpcprog_t prog;
	rpcvers_t vers;
	void (*dispatch)(struct svc_req *, SVCXPRT *);
};

/* svc_ulbs_bind's commit: the dispatch table's entry; a binding is kept only if it is made. */
static bool svc_rdma_reg_commit(void *arg)
{
	const struct svc_rdma_reg_args *a = arg;

	return svc_reg(a->listener, a->prog, a->vers, a->dispatch, NULL);
}

bool_t svc_rdma_reg(SVCXPRT *listener, rpcprog_t prog, rpcvers_t vers,
		    void (*dispatch)(struct svc_req *, SVCXPRT *), const struct rpcrdma_ulb *ulb)
{
	struct svc_rdma_reg_args a = { listener, prog, vers, dispatch };
	struct svc_rdma_listener *ls;
	bool_t ok;

	if (!listener || listener->xp_ops != &svc_rdma_listener_ops)
		return FALSE;
	ls = listener->xp_p1;
	pthread_mutex_lock(&ls->reg_lock);
	/* Again for a pair (a retry after rpcbind failed) replaces its binding. */
	ok = svc_ulbs_bind(ls->ulbs, prog, vers, ulb, svc_rdma_reg_commit, &a) == 0;
	if (ok) {
		rpcrdma_rpcb_unset(prog, vers, ls->netid);
		ok = rpcrdma_rpcb_set(prog, vers, ls->netid, (struct sockaddr *)&ls->laddr) == 0;
	}
	pthread_mutex_unlock(&ls->reg_lock);
	return ok;
}
