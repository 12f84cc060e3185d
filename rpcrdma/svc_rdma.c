/*
 * The RPC-over-RDMA SVCXPRT: a listener transport whose xp_fd is the
 * rdma_cm channel (xp_recv accepts, like svc_vc's rendezvous) and one
 * connection transport per client whose xp_fd is an epoll set of the
 * endpoint's completion channel and its own rdma_cm channel, so
 * libtirpc's svc_run() serves both, and a disconnect wakes it even on a
 * provider that flushes nothing until we tear the QP down (rxe): the
 * connection is then destroyed by svc_run() (XPRT_DIED).
 *
 * A connection's xp_recv takes received messages, validates each
 * transport header (a bad version is answered ERR_VERS, anything else
 * malformed ERR_CHUNK), pulls read chunks with RDMA Read into one
 * registered buffer per call and rebuilds the complete call there, and
 * decodes the RPC call header of the oldest call once it is complete.
 * Several calls are taken at once (SVC_CALLS_MAX, and no more while
 * their Read sinks hold SVC_RD_BYTES), so their Reads run together
 * within the read depth; each Read's wr_id names its call, and calls
 * are dispatched in the order they arrived.  xp_reply marshals the reply
 * through the chunk-aware XDR stream with the registered binding's
 * result mask, plans it against the chunks the call offered
 * (rpcrdma_plan_reply), RDMA Writes DDP results into the write chunks
 * and, for a long reply, the reply into the reply chunk, and Sends the
 * transport header (and the inline reply).  It never writes outside an
 * offered segment.
 *
 * Calls to the Connection Configuration Protocol (RFC 5666 section 6,
 * program 100417) are answered here, on every connection, before
 * libtirpc's dispatch table is consulted (which TCP transports share):
 * the reply carries our receive size and IRD, and the client's sizes
 * and read depth bound our inline replies and RDMA Reads from then on.
 *
 * Receives that complete while a call is being served are queued and
 * xp_stat() reports XPRT_MOREREQS, so none is stranded behind a
 * completion channel event already consumed.
 *
 * Nothing waits for the peer, so one slow or hostile client cannot
 * stall the single svc_run() thread and with it every other connection:
 * a call's RDMA Reads are posted and xp_recv() returns, to go on when
 * they complete; a reply is copied into a registered reply buffer
 * (reply_buffers.c), its Writes and Send are posted and xp_reply()
 * returns, and the buffer is reused when the Send completes.  A message
 * is taken from the queue only when a reply buffer may be added for it
 * (replies in flight and calls taken together at most SVC_REPLIES_MAX:
 * with SVC_REPLY_KEEP kept idle, a connection's buffers stop growing
 * once its load is steady) and a Send can be posted; a call is
 * dispatched only when the send queue has room for every Write its
 * chunks allow and the Send (a call offering more segments than the
 * queue holds is answered ERR_CHUNK).  Otherwise the connection waits,
 * idle, for completions.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/svc_mt.h>

#include "cm-private/ccp_negotiation.h"
#include "rpcrdma/credits.h"
#include "rpcrdma/netconfig.h"
#include "rpcrdma/rpcbind.h"
#include "rpcrdma/reply_buffers.h"
#include "rpcrdma/transport.h"
#include "xdr/bytes.h"
#include "xdr/ccp.h"
#include "xdr/header.h"

#define SVC_RDMA_MAX_ULBS 8
#define SVC_WC_BATCH      16
#define SVC_REPLY_KEEP    (256u << 10)            /* idle reply buffers kept per connection */
#define SVC_REPLIES_MAX   8u                      /* replies in flight per connection */
#define SVC_CALLS_MAX     SVC_REPLIES_MAX         /* calls taken (assembled or served) per connection */
#define SVC_RD_BYTES      (2u << 20)              /* Read-sink bytes before taking no more calls */

struct svc_rdma_ulbs {
	size_t n;
	struct {
		rpcprog_t prog;
		rpcvers_t vers;
		const struct rpcrdma_ulb *ulb;
	} e[SVC_RDMA_MAX_ULBS];
};

struct svc_rdma_listener {
	SVCXPRT xprt;
	SVCXPRT_EXT ext;
	struct rpcrdma_listener *l;
	struct rpcrdma_options opts;
	struct svc_rdma_ulbs ulbs;
	struct sockaddr_storage laddr;
	char netid[8];
};

/* One received call, from its message to its reply. */
struct svc_rdma_call {
	struct rpcrdma_header hdr;
	uint32_t recv_index;       /* its receive buffer, posted again when the call ends */
	bool have_recv;
	bool inv;                  /* its reply Send invalidates inv_rkey */
	uint32_t inv_rkey;
	const uint8_t *inl;        /* the received message's bytes after the header */
	uint32_t pull_next;        /* the next read segment to post */
	uint32_t pull_at, pull_pos;
	uint32_t reads_pending;    /* its RDMA Reads posted, not completed */
	uint32_t pz_area, msg_len, total;
	uint8_t *rd_buf;           /* the Read sink: position-zero area, then the rebuilt call */
	size_t rd_len;
	struct ibv_mr *rd_mr;
	const uint8_t *call;       /* the complete call, once assembled */
	uint32_t call_len, args_off;
	rpcprog_t prog;
	rpcvers_t vers;
	rpcproc_t proc;
};

struct svc_rdma_conn {
	SVCXPRT xprt;
	SVCXPRT_EXT ext;
	struct rpcrdma_ep *ep;
	int epfd;                  /* xp_fd: completions and cm events */
	struct rpcrdma_options opts;
	struct svc_rdma_ulbs ulbs;
	struct rpcrdma_credits_server credits;
	struct sockaddr_storage raddr, laddr;
	char netid[8];
	bool dead;
	bool more;                 /* the last poll filled its batch */
	bool blocked;              /* xp_recv waits for completions: Reads, or room for a reply */
	struct rpcrdma_wc *queue;  /* receives not yet taken */
	uint32_t qhead, qcount, qcap;
	uint32_t reads_pending;    /* RDMA Reads posted, not completed */
	uint32_t max_reads;        /* RDMA Reads we may have outstanding: ORD, or less after CCP */
	uint32_t inline_send;      /* largest inline reply: private data, then CCP */
	uint32_t send_cap;         /* transport header and inline reply */
	struct rpcrdma_replybufs replies;
	uint8_t *stage;            /* reply marshalling, max_rpc_size */
	/* calls taken, oldest first: assembled together, dispatched in order */
	struct svc_rdma_call *calls; /* SVC_CALLS_MAX */
	uint32_t chead, ccount;
	uint64_t rd_bytes;         /* the calls' Read sinks */
	bool in_call;              /* the oldest call is dispatched */
	struct svc_rdma_reply *reply; /* the reply being built */
};

static const struct xp_ops svc_rdma_conn_ops;
static const struct xp_ops svc_rdma_listener_ops;

static struct svc_rdma_conn *conn_of(SVCXPRT *xprt)
{
	return (struct svc_rdma_conn *)xprt->xp_p1;
}

static struct svc_rdma_call *svc_rdma_oldest(struct svc_rdma_conn *c)
{
	return &c->calls[c->chead];
}

static bool_t svc_rdma_control(SVCXPRT *xprt, const u_int rq, void *in)
{
	(void)xprt;
	(void)rq;
	(void)in;
	return FALSE;
}

static const struct xp_ops2 svc_rdma_ops2 = { .xp_control = svc_rdma_control };

/* ---- completions ------------------------------------------------------------------ */

/* A Read posted for the call in slot @slot completed (or was flushed). */
static void svc_rdma_read_done(struct svc_rdma_conn *c, uint64_t slot)
{
	if (slot >= SVC_CALLS_MAX || !c->calls[slot].reads_pending) {
		c->dead = true; /* not one of ours: cannot happen */
		return;
	}
	c->calls[slot].reads_pending--;
	c->reads_pending--;
}

static void svc_rdma_take_wc(struct svc_rdma_conn *c, const struct rpcrdma_wc *wc)
{
	if (wc->kind == RPCRDMA_WC_READ)
		svc_rdma_read_done(c, wc->wr_id);
	if (wc->kind == RPCRDMA_WC_SEND && rpcrdma_replybufs_complete(&c->replies, wc->wr_id))
		c->dead = true;
	if (wc->status != IBV_WC_SUCCESS) {
		c->dead = true;
		return;
	}
	if (wc->kind != RPCRDMA_WC_RECV)
		return;
	rpcrdma_credits_server_consumed(&c->credits);
	if (c->qcount == c->qcap) { /* cannot happen: one slot per receive buffer */
		c->dead = true;
		return;
	}
	c->queue[(c->qhead + c->qcount++) % c->qcap] = *wc;
}

/* Poll one batch.  Returns the number of completions or -1 when the connection died. */
static int svc_rdma_poll(struct svc_rdma_conn *c)
{
	struct rpcrdma_wc wc[SVC_WC_BATCH];
	int n = rpcrdma_ep_poll(c->ep, wc, SVC_WC_BATCH);

	if (n < 0) {
		c->dead = true;
		return -1;
	}
	for (int i = 0; i < n; i++)
		svc_rdma_take_wc(c, &wc[i]);
	c->more = n == SVC_WC_BATCH;
	return c->dead ? -1 : n;
}

/* Poll until the queue is empty, so the channel's next event means new completions. */
static int svc_rdma_poll_all(struct svc_rdma_conn *c)
{
	do
		if (svc_rdma_poll(c) < 0)
			return -1;
	while (c->more);
	return 0;
}

/*
 * A message may be taken: a call slot is free, its answer will find a
 * buffer (every call taken may need one) and room for its Send, and
 * the calls taken do not hold too many Read-sink bytes already.
 */
static bool svc_rdma_can_take(const struct svc_rdma_conn *c)
{
	return c->replies.in_flight + c->ccount < SVC_REPLIES_MAX &&
	       rpcrdma_ep_send_free(c->ep) >= 1 && (!c->ccount || c->rd_bytes < SVC_RD_BYTES);
}

/* Send-queue entries the reply to @cl may need: a Write per offered segment, the Send. */
static uint32_t svc_rdma_reply_wrs(const struct svc_rdma_call *cl)
{
	return cl->hdr.nsegs + 1;
}

static int svc_rdma_read(struct svc_rdma_conn *c, struct svc_rdma_call *cl, uint8_t *dst,
			 const struct rpcrdma_segment *seg)
{
	struct ibv_sge sge = { (uintptr_t)dst, seg->length, cl->rd_mr->lkey };
	int rc;

	if (!seg->length)
		return 0;
	rc = rpcrdma_ep_post_read(c->ep, &sge, 1, seg->offset, seg->handle,
				  (uint64_t)(cl - c->calls));
	if (!rc) {
		cl->reads_pending++;
		c->reads_pending++;
	}
	return rc;
}

/* svc_rdma_call_ready() made room for every Write of the reply: -ENOBUFS cannot happen. */
static int svc_rdma_write(struct svc_rdma_conn *c, const uint8_t *src, uint32_t len,
			  const struct ibv_mr *mr, const struct rpcrdma_segment *seg)
{
	struct ibv_sge sge = { (uintptr_t)src, len, mr->lkey };
	int rc = rpcrdma_ep_post_write(c->ep, &sge, 1, seg->offset, seg->handle, 0);

	return rc == -ENOBUFS ? -EIO : rc;
}

/*
 * The one Send that answers @cl, from @b; With Invalidate when
 * svc_rdma_inv_rkey allowed.  @b waits for the Send's completion; when
 * the Send cannot be posted the connection dies and @b is freed after
 * the QP.
 */
static int svc_rdma_send(struct svc_rdma_conn *c, struct rpcrdma_replybuf *b, uint32_t len,
			 struct svc_rdma_call *cl)
{
	struct ibv_sge sge = { (uintptr_t)b->addr, len, b->mr->lkey };
	bool inv = cl->inv;
	int rc;

	cl->inv = false;
	rc = rpcrdma_ep_post_send(c->ep, &sge, 1, (uint64_t)(uintptr_t)b, inv, cl->inv_rkey);
	rpcrdma_replybufs_posted(&c->replies, b); /* Writes before it may read it: freed with the QP */
	if (rc) {
		c->dead = true;
		return -EIO;
	}
	return 0;
}

/* ---- the calls taken ---------------------------------------------------------------- */

static bool svc_rdma_same_rkey(uint32_t handle, bool *found, uint32_t *rkey)
{
	if (*found)
		return handle == *rkey;
	*found = true;
	*rkey = handle;
	return true;
}

/*
 * The rkey the reply may invalidate (RFC 8797 section 4.1): only when
 * both peers set R and every segment of the call's chunks carries the
 * same rkey, as the Linux server decides (svc_rdma_get_inv_rkey), so
 * the invalidation cannot reach memory the client exposed for another
 * XID.  A call without chunks invalidates nothing.
 */
static bool svc_rdma_inv_rkey(const struct svc_rdma_conn *c, const struct rpcrdma_header *h,
			      uint32_t *rkey)
{
	bool found = false;

	if (!rpcrdma_ep_info(c->ep)->inline_params.remote_invalidate)
		return false;
	for (uint32_t i = 0; i < h->nreads; i++)
		if (!svc_rdma_same_rkey(h->reads[i].seg.handle, &found, rkey))
			return false;
	for (uint32_t i = 0; i < h->nsegs; i++)
		if (!svc_rdma_same_rkey(h->segs[i].handle, &found, rkey))
			return false;
	return found;
}

/* Free @cl's Read sink; no Read may still be writing it. */
static void svc_rdma_call_release(struct svc_rdma_conn *c, struct svc_rdma_call *cl)
{
	rpcrdma_mr_dereg(cl->rd_mr);
	free(cl->rd_buf);
	c->rd_bytes -= cl->rd_len;
	cl->rd_len = 0;
	cl->rd_mr = NULL;
	cl->rd_buf = NULL;
	cl->call = NULL;
}

/* Free what @cl holds and give its receive back; again is harmless. */
static void svc_rdma_call_end(struct svc_rdma_conn *c, struct svc_rdma_call *cl)
{
	svc_rdma_call_release(c, cl);
	if (cl->have_recv) {
		cl->have_recv = false;
		if (rpcrdma_ep_repost_recv(c->ep, cl->recv_index))
			c->dead = true;
		else
			rpcrdma_credits_server_posted(&c->credits, 1);
	}
}

/* The oldest call is answered (or was dispatched and left): end it, the next becomes the oldest. */
static void svc_rdma_oldest_done(struct svc_rdma_conn *c)
{
	svc_rdma_call_end(c, svc_rdma_oldest(c));
	c->chead = (c->chead + 1) % SVC_CALLS_MAX;
	c->ccount--;
	c->in_call = false;
}

static uint32_t svc_rdma_grant(const struct svc_rdma_conn *c, uint32_t requested)
{
	uint32_t grant = 1;

	rpcrdma_credits_server_grant(&c->credits, requested, &grant);
	return grant;
}

/* Answer RDMA_ERROR (ERR_VERS or ERR_CHUNK) for @xid and end @cl (no Read of it outstanding). */
static void svc_rdma_send_error(struct svc_rdma_conn *c, struct svc_rdma_call *cl, uint32_t xid,
				uint32_t requested, enum rpcrdma_errcode err)
{
	struct rpcrdma_header *h = &cl->hdr;
	struct rpcrdma_replybuf *b;
	size_t len;

	svc_rdma_call_end(c, cl);
	if (err == ERR_VERS)
		rpcrdma_header_init_err_vers(h, xid, svc_rdma_grant(c, requested));
	else
		rpcrdma_header_init_err_chunk(h, xid, svc_rdma_grant(c, requested));
	if (rpcrdma_replybufs_get(&c->replies, c->send_cap, &b)) {
		c->dead = true;
		return;
	}
	if (rpcrdma_header_encode(h, b->addr, c->send_cap, &len) == RPCRDMA_HDR_OK)
		svc_rdma_send(c, b, (uint32_t)len, cl);
	else
		rpcrdma_replybufs_put(&c->replies, b);
}

/* Bytes the data chunks (read segments at nonzero positions) add, with roundup. */
static uint64_t svc_rdma_data_bytes(const struct rpcrdma_header *h, uint32_t first)
{
	uint64_t total = 0;

	for (uint32_t i = first; i < h->nreads;) {
		uint32_t pos = h->reads[i].position;
		uint64_t len = 0;

		while (i < h->nreads && h->reads[i].position == pos)
			len += h->reads[i++].seg.length;
		total += rpcrdma_xdr_roundup(len);
	}
	return total;
}

/* Where read segment @r lands in cl->rd_buf: position-zero segments in turn, data chunks at their position. */
static uint8_t *svc_rdma_read_dst(struct svc_rdma_call *cl, const struct rpcrdma_read_segment *r)
{
	if (!r->position)
		return cl->rd_buf + cl->pull_at;
	if (r->position != cl->pull_pos) {
		cl->pull_pos = r->position;
		cl->pull_at = r->position;
	}
	return cl->rd_buf + cl->pz_area + cl->pull_at;
}

/*
 * Post @cl's Reads the read depth and the send queue allow.  Returns 0
 * or -errno from posting (the connection is broken).
 */
static int svc_rdma_pull_reads(struct svc_rdma_conn *c, struct svc_rdma_call *cl)
{
	const struct rpcrdma_header *h = &cl->hdr;

	while (cl->pull_next < h->nreads && c->reads_pending < c->max_reads) {
		const struct rpcrdma_read_segment *r = &h->reads[cl->pull_next];
		int rc = svc_rdma_read(c, cl, svc_rdma_read_dst(cl, r), &r->seg);

		if (rc == -ENOBUFS)
			break;
		if (rc)
			return rc;
		cl->pull_at += r->seg.length;
		cl->pull_next++;
	}
	return 0;
}

/*
 * Post Reads for the calls taken, oldest first, until the read depth or
 * the send queue is full.  Returns 0 or -1 when the connection died.
 */
static int svc_rdma_pull_all(struct svc_rdma_conn *c)
{
	for (uint32_t i = 0; i < c->ccount; i++) {
		struct svc_rdma_call *cl = &c->calls[(c->chead + i) % SVC_CALLS_MAX];

		if (svc_rdma_pull_reads(c, cl)) {
			c->dead = true;
			return -1;
		}
		if (cl->pull_next < cl->hdr.nreads)
			break;
	}
	return 0;
}

/* Interleave the inline (or position-zero) bytes around the data chunks already in @out. */
static void svc_rdma_rebuild(const struct rpcrdma_header *h, const uint8_t *src, uint32_t src_len,
			     uint8_t *out)
{
	uint32_t o = 0, s = 0, i = 0;

	while (i < h->nreads && h->reads[i].position == 0)
		i++;
	while (i < h->nreads) {
		uint32_t pos = h->reads[i].position, len = 0, span;

		while (i < h->nreads && h->reads[i].position == pos)
			len += h->reads[i++].seg.length;
		memcpy(out + o, src + s, pos - o);
		s += pos - o;
		span = (uint32_t)rpcrdma_xdr_roundup(len);
		memset(out + pos + len, 0, span - len);
		o = pos + span;
	}
	memcpy(out + o, src + s, src_len - s);
}

/*
 * Start assembling the complete call: the inline message itself, or
 * one rebuilt from read chunks (svc_rdma_pull_all, svc_rdma_call_ready).
 * Returns 0, -EPROTO (answer ERR_CHUNK) or another -errno (the
 * connection is broken).
 */
static int svc_rdma_pull_start(struct svc_rdma_conn *c, struct svc_rdma_call *cl,
			       const uint8_t *inl, uint32_t inl_len)
{
	const struct rpcrdma_header *h = &cl->hdr;
	uint64_t pz = 0, msg_len, total;
	uint32_t first = 0;

	cl->inl = inl;
	cl->msg_len = inl_len;
	cl->total = inl_len;
	cl->pull_next = cl->pull_at = cl->pull_pos = 0;
	if (!h->nreads)
		return h->type == RDMA_MSG ? 0 : -EPROTO;
	if (!c->max_reads)
		return -EPROTO; /* the client's CCP maxrdmaread was 0: no RDMA Reads */
	while (first < h->nreads && h->reads[first].position == 0)
		pz += h->reads[first++].seg.length;
	if (h->type == RDMA_NOMSG && !pz)
		return -EPROTO;
	msg_len = h->type == RDMA_NOMSG ? pz : inl_len;
	total = msg_len + svc_rdma_data_bytes(h, first);
	if (total > c->opts.max_rpc_size)
		return -EPROTO;
	cl->pz_area = (uint32_t)rpcrdma_xdr_roundup(pz);
	cl->msg_len = (uint32_t)msg_len;
	cl->total = (uint32_t)total;
	cl->rd_buf = malloc((size_t)cl->pz_area + total);
	if (!cl->rd_buf)
		return -ENOMEM;
	cl->rd_len = (size_t)cl->pz_area + total;
	c->rd_bytes += cl->rd_len;
	cl->rd_mr = rpcrdma_mr_reg(rpcrdma_ep_pd(c->ep), cl->rd_buf, cl->rd_len,
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	return cl->rd_mr ? 0 : -ENOMEM;
}

/*
 * TRUE when @cl is complete in memory (every Read done, the call
 * rebuilt) and its reply has room in the send queue; FALSE while its
 * Reads run or other work requests hold the room (their completions
 * wake us).
 */
static bool svc_rdma_call_ready(struct svc_rdma_conn *c, struct svc_rdma_call *cl)
{
	const struct rpcrdma_header *h = &cl->hdr;

	if (!cl->call && !h->nreads) {
		cl->call = cl->inl;
		cl->call_len = cl->total;
	}
	if (!cl->call) {
		if (cl->pull_next < h->nreads || cl->reads_pending)
			return false;
		rpcrdma_mr_dereg(cl->rd_mr); /* its remote write access ends with the Reads */
		cl->rd_mr = NULL;
		svc_rdma_rebuild(h, h->type == RDMA_NOMSG ? cl->rd_buf : cl->inl, cl->msg_len,
				 cl->rd_buf + cl->pz_area);
		cl->call = cl->rd_buf + cl->pz_area;
		cl->call_len = cl->total;
	}
	return rpcrdma_ep_send_free(c->ep) >= svc_rdma_reply_wrs(cl);
}

/*
 * One received message into the next call slot: TRUE when it is a call
 * whose assembly starts (it joins the calls taken), FALSE when it was
 * answered or dropped here.
 */
static bool svc_rdma_take_msg(struct svc_rdma_conn *c, const struct rpcrdma_wc *wc)
{
	struct svc_rdma_call *cl = &c->calls[(c->chead + c->ccount) % SVC_CALLS_MAX];
	const uint8_t *buf = rpcrdma_ep_recv_buf(c->ep, (uint32_t)wc->wr_id);
	struct rpcrdma_header *h = &cl->hdr;
	enum rpcrdma_hdr_status st;
	size_t hlen;
	int rc;

	cl->have_recv = true;
	cl->recv_index = (uint32_t)wc->wr_id;
	cl->inv = false;
	st = rpcrdma_header_decode(h, buf, wc->byte_len, NULL, &hlen);
	if (st == RPCRDMA_HDR_SHORT && wc->byte_len < RPCRDMA_HDR_FIXED_BYTES)
		goto drop;
	if (st == RPCRDMA_HDR_BAD_VERSION) {
		svc_rdma_send_error(c, cl, h->xid, h->credit, ERR_VERS);
		return false;
	}
	if (st == RPCRDMA_HDR_OK && (h->type == RDMA_DONE || h->type == RDMA_ERROR))
		goto drop;
	if (st != RPCRDMA_HDR_OK || (h->type != RDMA_MSG && h->type != RDMA_NOMSG))
		goto err_chunk;
	if (svc_rdma_reply_wrs(cl) > rpcrdma_ep_send_depth(c->ep))
		goto err_chunk; /* more segments than our send queue holds */
	cl->inv = svc_rdma_inv_rkey(c, h, &cl->inv_rkey);
	rc = svc_rdma_pull_start(c, cl, buf + hlen, wc->byte_len - (uint32_t)hlen);
	if (rc == -EPROTO)
		goto err_chunk;
	if (rc) {
		svc_rdma_call_release(c, cl);
		c->dead = true;
		return false;
	}
	return true;
err_chunk:
	svc_rdma_send_error(c, cl, h->xid, h->credit, ERR_CHUNK);
	return false;
drop:
	svc_rdma_call_end(c, cl);
	return false;
}

/* Take received messages while svc_rdma_can_take() allows. */
static void svc_rdma_take_msgs(struct svc_rdma_conn *c)
{
	while (!c->dead && c->qcount && svc_rdma_can_take(c)) {
		struct rpcrdma_wc wc = c->queue[c->qhead];

		c->qhead = (c->qhead + 1) % c->qcap;
		c->qcount--;
		if (svc_rdma_take_msg(c, &wc))
			c->ccount++;
	}
}

/* The assembled call's RPC header; TRUE when it is ready for dispatch. */
static bool_t svc_rdma_decode_call(struct svc_rdma_call *cl, struct rpc_msg *msg)
{
	XDR x;

	xdrmem_create(&x, (char *)(uintptr_t)cl->call, cl->call_len, XDR_DECODE);
	if (!xdr_callmsg(&x, msg) || msg->rm_xid != cl->hdr.xid)
		return FALSE;
	cl->args_off = XDR_GETPOS(&x);
	cl->prog = msg->rm_call.cb_prog;
	cl->vers = msg->rm_call.cb_vers;
	cl->proc = msg->rm_call.cb_proc;
	return TRUE;
}

/* ---- Connection Configuration Protocol ---------------------------------------------------- */

static bool_t svc_rdma_getargs(SVCXPRT *xprt, xdrproc_t xargs, void *args);
static bool_t svc_rdma_reply(SVCXPRT *xprt, struct rpc_msg *msg);

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
	struct rpcrdma_config_req req;
	uint32_t inline_send;

	if (!svc_rdma_getargs(&c->xprt, (xdrproc_t)xdr_rpcrdma_config_req, &req) ||
	    rpcrdma_ccp_server_apply(&local, &req, &inline_send) != RPCRDMA_CCP_OK)
		return GARBAGE_ARGS;
	/* Without private data CCP alone sizes our replies; with it, never above it. */
	if (ei->peer_pd != RPCRDMA_PD_OK || inline_send < c->inline_send)
		c->inline_send = inline_send;
	if (req.maxrdmaread < c->max_reads)
		c->max_reads = req.maxrdmaread;
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
	r.acpted_rply.ar_results.proc = (xdrproc_t)(void (*)(void))xdr_void;
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
	svc_rdma_reply(&c->xprt, &r);
}

/* ---- connection xp_ops --------------------------------------------------------------- */

/* Nothing to serve now: handle cm events (a disconnect kills the connection) and wait. */
static bool_t svc_rdma_idle(struct svc_rdma_conn *c, bool blocked)
{
	c->blocked = blocked;
	if (!c->dead && rpcrdma_ep_wait(c->ep, 0) < 0)
		c->dead = true;
	return FALSE;
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
		svc_rdma_send_error(c, cl, cl->hdr.xid, cl->hdr.credit, ERR_CHUNK);
		svc_rdma_oldest_done(c);
		return -1;
	}
	if (!svc_rdma_call_ready(c, cl))
		return 0;
	if (!svc_rdma_decode_call(cl, msg)) {
		svc_rdma_send_error(c, cl, cl->hdr.xid, cl->hdr.credit, ERR_CHUNK);
		svc_rdma_oldest_done(c);
		return -1;
	}
	c->in_call = true;
	if (msg->rm_call.cb_prog != RPCRDMA_CCP_PROGRAM)
		return 1;
	svc_rdma_ccp(c, msg); /* its reply ends the call */
	return -1;
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
	if (c->in_call)
		svc_rdma_oldest_done(c); /* dispatched, left without a reply */
	while (!c->dead) {
		int rc;

		svc_rdma_take_msgs(c);
		if (c->dead || svc_rdma_pull_all(c))
			break;
		rc = svc_rdma_serve_oldest(c, msg);
		if (rc > 0)
			return TRUE;
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

	if (c->dead)
		return XPRT_DIED;
	if (c->blocked)
		return XPRT_IDLE; /* the completions it waits for wake svc_run() */
	if (c->qcount || c->more || c->ccount > (c->in_call ? 1u : 0u))
		return XPRT_MOREREQS;
	return XPRT_IDLE;
}

static bool_t svc_rdma_getargs(SVCXPRT *xprt, xdrproc_t xargs, void *args)
{
	struct svc_rdma_conn *c = conn_of(xprt);
	struct svc_rdma_call *cl = svc_rdma_oldest(c);
	bool_t ok;
	XDR x;

	if (!c->in_call)
		return FALSE;
	xdrmem_create(&x, (char *)(uintptr_t)cl->call + cl->args_off, cl->call_len - cl->args_off,
		      XDR_DECODE);
	ok = xargs(&x, args);
	XDR_DESTROY(&x);
	return ok;
}

static bool_t svc_rdma_freeargs(SVCXPRT *xprt, xdrproc_t xargs, void *args)
{
	XDR x = { .x_op = XDR_FREE };

	(void)xprt;
	return xargs(&x, args);
}

/* The reply's result mask from the binding registered for the call's program. */
static uint32_t svc_rdma_res_ddp(struct svc_rdma_conn *c)
{
	const struct svc_rdma_call *cl = svc_rdma_oldest(c);

	for (size_t i = 0; i < c->ulbs.n; i++)
		if (c->ulbs.e[i].prog == cl->prog && c->ulbs.e[i].vers == cl->vers) {
			const struct rpcrdma_ulb_proc *p =
				rpcrdma_ulb_proc_find(c->ulbs.e[i].ulb, cl->proc);

			return p ? p->res_ddp : 0;
		}
	return 0;
}

/* Marshal @msg into c->stage: RPC header with xdrmem, results through @s. */
static bool svc_rdma_marshal(struct svc_rdma_conn *c, struct rpc_msg *msg,
			     struct rpcrdma_xdr_stream *s)
{
	bool success = msg->rm_reply.rp_stat == MSG_ACCEPTED && msg->acpted_rply.ar_stat == SUCCESS;
	xdrproc_t proc = msg->acpted_rply.ar_results.proc;
	caddr_t where = msg->acpted_rply.ar_results.where;
	bool_t ok;
	XDR x;

	if (!c->stage)
		c->stage = malloc(c->opts.max_rpc_size);
	if (!c->stage)
		return false;
	if (success) {
		msg->acpted_rply.ar_results.proc = (xdrproc_t)(void (*)(void))xdr_void;
		msg->acpted_rply.ar_results.where = NULL;
	}
	xdrmem_create(&x, (char *)c->stage, c->opts.max_rpc_size, XDR_ENCODE);
	ok = xdr_replymsg(&x, msg);
	msg->acpted_rply.ar_results.proc = proc;
	msg->acpted_rply.ar_results.where = where;
	rpcrdma_xdr_encode_init(s, c->stage, c->opts.max_rpc_size, XDR_GETPOS(&x),
				success ? svc_rdma_res_ddp(c) : 0, 1);
	XDR_DESTROY(&x);
	return ok && (!success || proc(&s->xdr, where));
}

static void svc_rdma_offered(const struct rpcrdma_header *h, struct rpcrdma_offered_chunks *o)
{
	memset(o, 0, sizeof(*o));
	o->nwrites = h->nwrites;
	for (uint32_t i = 0; i < h->nwrites; i++) {
		o->write_len[i] = rpcrdma_chunk_length(h, &h->writes[i]);
		o->write_segs[i] = h->writes[i].nsegs;
	}
	o->has_reply = h->has_reply;
	if (h->has_reply) {
		o->reply_len = rpcrdma_chunk_length(h, &h->reply);
		o->reply_segs = h->reply.nsegs;
	}
}

/* RDMA Write @len bytes at @src into the offered chunk @ch, segment by segment. */
static int svc_rdma_write_chunk(struct svc_rdma_conn *c, const struct rpcrdma_chunk *ch,
				const uint8_t *src, uint32_t len, const struct ibv_mr *mr)
{
	for (uint32_t i = 0; i < ch->nsegs && len; i++) {
		const struct rpcrdma_segment *seg = &svc_rdma_oldest(c)->hdr.segs[ch->first + i];
		uint32_t take = len < seg->length ? len : seg->length;
		int rc = take ? svc_rdma_write(c, src, take, mr, seg) : 0;

		if (rc)
			return rc;
		src += take;
		len -= take;
	}
	return len ? -EPROTO : 0;
}

/* The echo of offered chunk @ch with @bytes written, added to @out. */
static enum rpcrdma_hdr_status svc_rdma_echo(const struct rpcrdma_header *call,
					     const struct rpcrdma_chunk *ch, uint32_t bytes,
					     struct rpcrdma_header *out, bool reply)
{
	struct rpcrdma_segment segs[RPCRDMA_MAX_SEGS];

	memcpy(segs, &call->segs[ch->first], ch->nsegs * sizeof(segs[0]));
	rpcrdma_plan_fill_segments(segs, ch->nsegs, bytes);
	return reply ? rpcrdma_header_set_reply_chunk(out, segs, ch->nsegs)
		     : rpcrdma_header_add_write_chunk(out, segs, ch->nsegs);
}

struct svc_rdma_reply {
	struct rpcrdma_xdr_stream s;
	struct rpcrdma_reply_plan plan;
	struct rpcrdma_header out;
	struct rpcrdma_replybuf *buf; /* header and inline body, then the bytes to RDMA Write */
	uint8_t *data;                /* the next free byte after the header area */
	uint8_t *wdata[RPCRDMA_MAX_WRITE_CHUNKS + 1]; /* each chunk's bytes; the last: reply chunk */
};

/* Copy @len bytes at stream offset @off for chunk @ch into the buffer; they must fit the chunk. */
static int svc_rdma_reply_stage(struct svc_rdma_conn *c, struct svc_rdma_reply *r,
				const struct rpcrdma_chunk *ch, uint32_t slot, uint32_t len)
{
	if (len > rpcrdma_chunk_length(&svc_rdma_oldest(c)->hdr, ch))
		return -EPROTO;
	r->wdata[slot] = r->data;
	r->data += len;
	return 0;
}

/* Each write chunk's result into the reply buffer, and its echo into the header. */
static int svc_rdma_reply_writes(struct svc_rdma_conn *c, struct svc_rdma_reply *r)
{
	const struct rpcrdma_header *h = &svc_rdma_oldest(c)->hdr;

	for (uint32_t i = 0; i < r->plan.nwrites; i++) {
		const struct rpcrdma_range *w = &r->plan.writes[i];
		uint8_t *dst = r->data;

		if (svc_rdma_reply_stage(c, r, &h->writes[i], i, w->length) ||
		    (w->length && !rpcrdma_stream_copy(&r->s, w->offset, w->length, dst)) ||
		    svc_rdma_echo(h, &h->writes[i], w->length, &r->out, false))
			return -EPROTO;
	}
	return 0;
}

/* The reduced reply into @dst (after the header, or the reply chunk's bytes). */
static int svc_rdma_reply_body(struct svc_rdma_reply *r, uint8_t *dst)
{
	for (uint32_t i = 0; i < r->plan.nranges; i++) {
		if (!rpcrdma_stream_copy(&r->s, r->plan.ranges[i].offset, r->plan.ranges[i].length,
					 dst))
			return -EPROTO;
		dst += r->plan.ranges[i].length;
	}
	return 0;
}

static int svc_rdma_reply_nomsg(struct svc_rdma_conn *c, struct svc_rdma_reply *r)
{
	const struct rpcrdma_header *h = &svc_rdma_oldest(c)->hdr;
	uint32_t len = r->plan.body_len;
	uint8_t *dst = r->data;

	if (svc_rdma_reply_stage(c, r, &h->reply, RPCRDMA_MAX_WRITE_CHUNKS, len) ||
	    svc_rdma_reply_body(r, dst) || svc_rdma_echo(h, &h->reply, len, &r->out, true))
		return -EPROTO;
	return 0;
}

/* A reply buffer for the header area and every byte the plan RDMA Writes. */
static int svc_rdma_reply_buf(struct svc_rdma_conn *c, struct svc_rdma_reply *r)
{
	uint64_t len = c->send_cap;
	int rc;

	for (uint32_t i = 0; i < r->plan.nwrites; i++)
		len += r->plan.writes[i].length;
	if (r->plan.type == RDMA_NOMSG)
		len += r->plan.body_len;
	if (len > UINT32_MAX)
		return -EPROTO;
	rc = rpcrdma_replybufs_get(&c->replies, (uint32_t)len, &r->buf);
	if (rc)
		return rc;
	r->data = r->buf->addr + c->send_cap;
	return 0;
}

/* Post the RDMA Writes of every chunk staged in @b.  Returns 0 or -errno. */
static int svc_rdma_reply_post(struct svc_rdma_conn *c, struct svc_rdma_reply *r,
			       const struct rpcrdma_replybuf *b)
{
	const struct rpcrdma_header *h = &svc_rdma_oldest(c)->hdr;
	int rc = 0;

	for (uint32_t i = 0; i < r->plan.nwrites && !rc; i++)
		rc = svc_rdma_write_chunk(c, &h->writes[i], r->wdata[i],
					  r->plan.writes[i].length, b->mr);
	if (!rc && r->plan.type == RDMA_NOMSG)
		rc = svc_rdma_write_chunk(c, &h->reply, r->wdata[RPCRDMA_MAX_WRITE_CHUNKS],
					  r->plan.body_len, b->mr);
	return rc;
}

/*
 * Plan, stage every byte in a reply buffer, then post the Writes and
 * the Send.  Returns 0, -EPROTO (answer ERR_CHUNK) or -errno.  Nothing
 * is posted before every check has passed, so a failure leaves r->buf
 * unused; a failed post kills the connection (its buffer is freed after
 * the QP, in svc_rdma_conn_free).
 */
static int svc_rdma_reply_send(struct svc_rdma_conn *c, struct svc_rdma_reply *r)
{
	struct svc_rdma_call *cl = svc_rdma_oldest(c);
	uint32_t xid = cl->hdr.xid, requested = cl->hdr.credit;
	struct rpcrdma_ddp_item items[RPCRDMA_XDR_MAX_ITEMS];
	struct rpcrdma_reply_desc desc = { .xdr_len = r->s.pos, .results = items,
					   .nresults = r->s.nitems };
	struct rpcrdma_offered_chunks offered;
	struct rpcrdma_replybuf *b;
	size_t hlen;
	int rc;

	rpcrdma_stream_items(&r->s, items);
	svc_rdma_offered(&cl->hdr, &offered);
	if (rpcrdma_plan_reply(&desc, &offered, c->inline_send,
			       &r->plan) != RPCRDMA_PLAN_OK)
		return -EPROTO;
	rc = svc_rdma_reply_buf(c, r);
	if (rc)
		return rc;
	rpcrdma_header_init(&r->out, xid, 1, r->plan.type);
	rc = svc_rdma_reply_writes(c, r);
	if (!rc && r->plan.type == RDMA_NOMSG)
		rc = svc_rdma_reply_nomsg(c, r);
	if (rc)
		return rc;
	svc_rdma_call_end(c, cl); /* the call's receive is posted again before the grant */
	r->out.credit = svc_rdma_grant(c, requested);
	if (rpcrdma_header_encode(&r->out, r->buf->addr, c->send_cap, &hlen) != RPCRDMA_HDR_OK)
		return -EIO;
	if (r->plan.type == RDMA_MSG) {
		if (r->plan.body_len > c->send_cap - hlen ||
		    svc_rdma_reply_body(r, r->buf->addr + hlen))
			return -EIO;
		hlen += r->plan.body_len;
	}
	b = r->buf;
	r->buf = NULL;
	if (svc_rdma_reply_post(c, r, b)) {
		rpcrdma_replybufs_posted(&c->replies, b);
		c->dead = true;
		return -EIO;
	}
	return svc_rdma_send(c, b, (uint32_t)hlen, cl);
}

static bool_t svc_rdma_reply(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_conn *c = conn_of(xprt);
	struct svc_rdma_call *cl = svc_rdma_oldest(c);
	uint32_t xid = cl->hdr.xid, requested = cl->hdr.credit;
	struct svc_rdma_reply *r = c->reply;
	int rc = -EPROTO;

	if (!c->in_call || c->dead)
		return FALSE;
	msg->rm_xid = xid; /* svc_sendreply() and svcerr_*() leave it to the transport */
	r->buf = NULL;
	if (svc_rdma_marshal(c, msg, &r->s))
		rc = svc_rdma_reply_send(c, r);
	rpcrdma_replybufs_put(&c->replies, r->buf); /* set only when nothing was posted */
	r->buf = NULL;
	if (rc == -EPROTO || rc == -ENOMEM)
		svc_rdma_send_error(c, cl, xid, requested, ERR_CHUNK);
	else if (rc)
		c->dead = true;
	svc_rdma_oldest_done(c);
	return rc == 0;
}

static void svc_rdma_conn_free(struct svc_rdma_conn *c)
{
	if (!c)
		return;
	rpcrdma_ep_stop(c->ep); /* no Read, Write or Send touches our buffers after this */
	for (uint32_t i = 0; c->calls && i < SVC_CALLS_MAX; i++)
		svc_rdma_call_release(c, &c->calls[i]);
	rpcrdma_replybufs_destroy(&c->replies);
	rpcrdma_ep_destroy(c->ep);
	if (c->epfd >= 0)
		close(c->epfd);
	free(c->reply);
	free(c->stage);
	free(c->queue);
	free(c->calls);
	free(c);
}

static void svc_rdma_destroy(SVCXPRT *xprt)
{
	xprt_unregister(xprt);
	svc_rdma_conn_free(conn_of(xprt));
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

	if (!xprt || !info || xprt->xp_ops != &svc_rdma_conn_ops)
		return -EINVAL;
	c = conn_of(xprt);
	ei = rpcrdma_ep_info(c->ep);
	*info = (struct rpcrdma_conn_info){
		.inline_send = c->inline_send,
		.inline_recv = ei->inline_params.recv,
		.credits = c->credits.max_requests,
		.ird = ei->rd.ird,
		.ord = ei->rd.ord,
		.peer_private_data = ei->peer_pd == RPCRDMA_PD_OK,
		.remote_invalidate = ei->inline_params.remote_invalidate,
		.iwarp = ei->transport == IBV_TRANSPORT_IWARP,
		.registration = RPCRDMA_REG_PER_CALL_MR, /* the server exposes no memory */
		.ccp = RPCRDMA_CCP_NOT_ASKED,
		.connects = 1,
	};
	return 0;
}

/* ---- listener --------------------------------------------------------------------------- */

static socklen_t sockaddr_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

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

/* One fd for svc_run(): readable on completions or a cm event (the peer's disconnect). */
static int svc_rdma_conn_epoll(struct svc_rdma_conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN };

	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0)
		return -errno;
	ev.data.fd = rpcrdma_ep_fd(c->ep);
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		return -errno;
	ev.data.fd = rpcrdma_ep_cm_fd(c->ep);
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		return -errno;
	return 0;
}

static int svc_rdma_conn_setup(struct svc_rdma_listener *ls, struct svc_rdma_conn *c)
{
	const struct sockaddr *peer = rpcrdma_ep_peer_addr(c->ep);
	int rc = svc_rdma_conn_epoll(c);

	if (rc)
		return rc;

	c->opts = ls->opts;
	c->ulbs = ls->ulbs;
	c->qcap = ls->opts.credits;
	c->queue = calloc(c->qcap, sizeof(*c->queue));
	c->send_cap = ls->opts.inline_send;
	c->reply = calloc(1, sizeof(*c->reply));
	c->calls = calloc(SVC_CALLS_MAX, sizeof(*c->calls));
	if (!c->queue || !c->reply || !c->calls)
		return -ENOMEM;
	c->inline_send = rpcrdma_ep_info(c->ep)->inline_params.send;
	c->max_reads = rpcrdma_ep_info(c->ep)->rd.ord;
	rpcrdma_credits_server_init(&c->credits, ls->opts.credits);
	rpcrdma_credits_server_posted(&c->credits, ls->opts.credits);
	memcpy(c->netid, ls->netid, sizeof(c->netid));
	svc_rdma_xprt_init(&c->xprt, &c->ext, c, c->epfd, &svc_rdma_conn_ops, c->netid);
	if (peer && (peer->sa_family == AF_INET || peer->sa_family == AF_INET6)) {
		memcpy(&c->raddr, peer, sockaddr_len(peer));
		memcpy(&c->xprt.xp_raddr, peer, sockaddr_len(peer));
		c->xprt.xp_addrlen = (int)sockaddr_len(peer);
		c->xprt.xp_rtaddr = (struct netbuf){ sizeof(c->raddr), sockaddr_len(peer), &c->raddr };
	}
	c->laddr = ls->laddr;
	c->xprt.xp_ltaddr = ls->xprt.xp_ltaddr;
	c->xprt.xp_ltaddr.buf = &c->laddr;
	c->xprt.xp_port = ls->xprt.xp_port;
	return 0;
}

static bool_t svc_rdma_accept(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_listener *ls = xprt->xp_p1;
	struct rpcrdma_ep *ep;
	int rc;

	(void)msg;
	while ((rc = rpcrdma_listener_accept(ls->l, &ep)) != -EAGAIN) {
		struct svc_rdma_conn *c;

		if (rc)
			continue; /* that request was rejected; the listener serves on */
		c = calloc(1, sizeof(*c));
		if (!c) {
			rpcrdma_ep_destroy(ep);
			continue;
		}
		c->epfd = -1;
		c->ep = ep;
		rpcrdma_replybufs_init(&c->replies, rpcrdma_ep_pd(ep), SVC_REPLY_KEEP);
		if (svc_rdma_conn_setup(ls, c)) {
			svc_rdma_conn_free(c);
			continue;
		}
		xprt_register(&c->xprt);
	}
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
	rpc_createerr.cf_stat = RPC_SYSTEMERROR;
	rpc_createerr.cf_error.re_status = RPC_SYSTEMERROR;
	rpc_createerr.cf_error.re_errno = err;
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
	if (o)
		ls->opts = *o;
	else
		rpcrdma_options_init(&ls->opts);
	if (rpcrdma_options_check(&ls->opts))
		return svc_rdma_create_fail(ls, EINVAL);
	rpcrdma_options_ep_params(&ls->opts, &params);
	rc = rpcrdma_listener_create(addr, &params, 16, &ls->l);
	if (rc)
		return svc_rdma_create_fail(ls, -rc);
	bound = rpcrdma_listener_addr(ls->l);
	memcpy(&ls->laddr, bound, sockaddr_len(bound));
	strcpy(ls->netid, bound->sa_family == AF_INET ? RPCRDMA_NETID : RPCRDMA_NETID6);
	svc_rdma_xprt_init(&ls->xprt, &ls->ext, ls, rpcrdma_listener_fd(ls->l),
			   &svc_rdma_listener_ops, ls->netid);
	ls->xprt.xp_port = ntohs(bound->sa_family == AF_INET ?
				 ((const struct sockaddr_in *)bound)->sin_port :
				 ((const struct sockaddr_in6 *)bound)->sin6_port);
	ls->xprt.xp_ltaddr = (struct netbuf){ sizeof(ls->laddr), sockaddr_len(bound), &ls->laddr };
	xprt_register(&ls->xprt);
	return &ls->xprt;
}

bool_t svc_rdma_reg(SVCXPRT *listener, rpcprog_t prog, rpcvers_t vers,
		    void (*dispatch)(struct svc_req *, SVCXPRT *), const struct rpcrdma_ulb *ulb)
{
	struct svc_rdma_listener *ls;

	if (!listener || listener->xp_ops != &svc_rdma_listener_ops)
		return FALSE;
	ls = listener->xp_p1;
	if (ls->ulbs.n == SVC_RDMA_MAX_ULBS || !svc_reg(listener, prog, vers, dispatch, NULL))
		return FALSE;
	ls->ulbs.e[ls->ulbs.n].prog = prog;
	ls->ulbs.e[ls->ulbs.n].vers = vers;
	ls->ulbs.e[ls->ulbs.n++].ulb = ulb;
	rpcrdma_rpcb_unset(prog, vers, ls->netid);
	return rpcrdma_rpcb_set(prog, vers, ls->netid, (struct sockaddr *)&ls->laddr) == 0;
}
