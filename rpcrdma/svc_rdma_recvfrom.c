/*
 * The server's receive side: one connection's completions, the
 * messages received and the calls taken from them.  Each message's
 * transport header is validated (a bad version is answered ERR_VERS,
 * anything else malformed ERR_CHUNK), read chunks are pulled with RDMA
 * Read into one registered buffer per call and the complete call is
 * rebuilt there.  Several calls are taken at once (SVC_CALLS_MAX, and
 * no more while their Read sinks hold SVC_RD_BYTES), so their Reads run
 * together within the read depth; each Read's wr_id names its call, and
 * the calls are served in the order they arrived.  Nothing waits for
 * the peer: Reads are posted and their completions wake svc_run().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/svc_rdma_internal.h"
#include "xdr/bytes.h"

/* ---- completions ------------------------------------------------------------------ */

/*
 * On iWARP the sink's remote write access (its registration) ends with
 * its last Read.  False when deregistering failed: the registration
 * stays, and the release tries again.
 */
static bool svc_rdma_sink_close(struct svc_rdma_call *cl)
{
	if (!rpcrdma_mr_dereg(cl->rd_mr))
		return false;
	cl->rd_mr = NULL;
	return true;
}

/* A Read posted for the call in slot @slot completed (or was flushed). */
static void svc_rdma_read_done(struct svc_rdma_conn *c, uint64_t slot)
{
	struct svc_rdma_call *cl;

	if (slot >= SVC_CALLS_MAX || !c->calls[slot].reads_pending) {
		svc_rdma_conn_kill(c, "a Read completed that was not posted", 0);
		return;
	}
	cl = &c->calls[slot];
	cl->reads_pending--;
	c->reads_pending--;
	if (!cl->reads_pending && cl->pull_next == cl->hdr.nreads)
		svc_rdma_sink_close(cl); /* not when it is the oldest call: others may go first */
}

static void svc_rdma_take_wc(struct svc_rdma_conn *c, const struct rpcrdma_wc *wc)
{
	if (wc->kind == RPCRDMA_WC_READ)
		svc_rdma_read_done(c, wc->wr_id);
	if (wc->kind == RPCRDMA_WC_SEND && rpcrdma_replybufs_complete(&c->replies, wc->wr_id))
		svc_rdma_conn_kill(c, "a Send completed out of order", 0);
	if (wc->status != IBV_WC_SUCCESS) {
		svc_rdma_conn_kill(c, rpcrdma_wc_failure(wc->status), rpcrdma_wc_errno(wc->status));
		return;
	}
	if (wc->kind != RPCRDMA_WC_RECV)
		return;
	rpcrdma_credits_server_consumed(&c->credits);
	if (c->qcount == c->qcap) { /* cannot happen: one slot per receive buffer */
		svc_rdma_conn_kill(c, "more receives than queue slots", 0);
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
		svc_rdma_conn_kill(c, "polling the completion queue failed", -n);
		return -1;
	}
	for (int i = 0; i < n; i++)
		svc_rdma_take_wc(c, &wc[i]);
	c->more = n == SVC_WC_BATCH;
	return c->dead ? -1 : n;
}

/* Poll until the queue is empty, so the channel's next event means new completions. */
int svc_rdma_poll_all(struct svc_rdma_conn *c)
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
	       svc_rdma_send_room(c) >= 1 && (!c->ccount || c->rd_bytes < SVC_RD_BYTES);
}

/* Send-queue entries the reply to @cl may need: a Write per offered segment, the Send. */
static uint32_t svc_rdma_reply_wrs(const struct svc_rdma_call *cl)
{
	return cl->hdr.nsegs + 1;
}

/* Read @len bytes at @offset of segment @seg into @dst. */
static int svc_rdma_read(struct svc_rdma_conn *c, struct svc_rdma_call *cl, uint8_t *dst,
			 const struct rpcrdma_segment *seg, uint32_t offset, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)dst, len, cl->rd_lkey };
	int rc;

	if (!len)
		return 0;
	if (svc_rdma_sends_flush(c)) /* a Read must not take a held Send's slot */
		return -EIO;
	rc = rpcrdma_ep_post_read(c->ep, &sge, 1, seg->offset + offset, seg->handle,
				  (uint64_t)(cl - c->calls));
	if (!rc) {
		cl->reads_pending++;
		c->reads_pending++;
	}
	return rc;
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

/* Give back @cl's Read sink; no Read may still be writing it. */
void svc_rdma_call_release(struct svc_rdma_conn *c, struct svc_rdma_call *cl)
{
	/* memory that may still be remotely writable is never reused: left allocated */
	bool gone = svc_rdma_sink_close(cl);

	if (gone && cl->rd_pooled)
		rpcrdma_replybufs_put(&c->sinks, cl->rd_pooled);
	else if (gone)
		free(cl->rd_buf);
	c->rd_bytes -= cl->rd_len;
	cl->rd_len = 0;
	cl->rd_mr = NULL;
	cl->rd_pooled = NULL;
	cl->rd_buf = NULL;
	cl->call = NULL;
}

/* Free what @cl holds and give its receive back; again is harmless. */
void svc_rdma_call_end(struct svc_rdma_conn *c, struct svc_rdma_call *cl)
{
	int rc;

	svc_rdma_call_release(c, cl);
	if (cl->have_recv) {
		cl->have_recv = false;
		rc = rpcrdma_ep_repost_recv(c->ep, cl->recv_index);
		if (rc)
			svc_rdma_conn_kill(c, "reposting a receive failed", -rc);
		else
			rpcrdma_credits_server_posted(&c->credits, 1);
	}
}

/* The oldest call is answered (or was dispatched and left): end it, the next becomes the oldest. */
void svc_rdma_oldest_done(struct svc_rdma_conn *c)
{
	svc_rdma_call_end(c, svc_rdma_oldest(c));
	c->chead = (c->chead + 1) % SVC_CALLS_MAX;
	c->ccount--;
	c->in_call = false;
}

/* Bytes the data chunks (read segments at nonzero positions) add, with roundup. */
static uint64_t svc_rdma_data_bytes(const struct rpcrdma_header *h, uint32_t first)
{
	uint64_t total = 0;

	for (uint32_t i = first; i < h->nreads;)
		total += rpcrdma_xdr_roundup(rpcrdma_read_chunk_next(h, &i).length);
	return total;
}

/*
 * Where byte @p of the position-zero chunk goes in the rebuilt call,
 * each data chunk (from read entry @first on) inserted at its position;
 * *@run is how many bytes from there on go on in a row (until the next
 * data chunk's place).  Positions were checked against the chunk.
 */
static uint32_t svc_rdma_pz_place(const struct rpcrdma_header *h, uint32_t first, uint32_t p,
				  uint32_t *run)
{
	uint32_t shift = 0;

	*run = UINT32_MAX;
	for (uint32_t i = first; i < h->nreads;) {
		struct rpcrdma_read_chunk rc = rpcrdma_read_chunk_next(h, &i);

		if (rc.position - shift > p) {
			*run = rc.position - shift - p;
			break;
		}
		shift += (uint32_t)rpcrdma_xdr_roundup(rc.length);
	}
	return p + shift;
}

/*
 * Where the next Read of @cl lands in its sink, and at most how long it
 * is: every byte goes straight to its place in the rebuilt call, so a
 * position-zero segment is read in pieces around the data chunks.
 */
static uint8_t *svc_rdma_read_dst(struct svc_rdma_call *cl, const struct rpcrdma_read_segment *r,
				  uint32_t *run)
{
	if (!r->position)
		return cl->rd_buf + svc_rdma_pz_place(&cl->hdr, cl->pz_segs, cl->pull_at, run);
	*run = UINT32_MAX;
	if (r->position != cl->pull_pos) {
		cl->pull_pos = r->position;
		cl->pull_at = r->position;
	}
	return cl->rd_buf + cl->pull_at;
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
		uint32_t run, len;
		uint8_t *dst = svc_rdma_read_dst(cl, r, &run);
		int rc;

		len = r->seg.length - cl->pull_done;
		if (len > run)
			len = run;
		rc = svc_rdma_read(c, cl, dst, &r->seg, cl->pull_done, len);
		if (rc == -ENOBUFS)
			break;
		if (rc)
			return rc;
		cl->pull_at += len;
		cl->pull_done += len;
		if (cl->pull_done == r->seg.length) {
			cl->pull_done = 0;
			cl->pull_next++;
		}
	}
	/* Zero-length segments last post no Read whose completion would close the sink. */
	if (cl->pull_next == h->nreads && !cl->reads_pending)
		svc_rdma_sink_close(cl);
	return 0;
}

/*
 * Post Reads for the calls taken, oldest first, until the read depth or
 * the send queue is full.  Returns 0 or -1 when the connection died.
 */
int svc_rdma_pull_all(struct svc_rdma_conn *c)
{
	for (uint32_t i = 0; i < c->ccount; i++) {
		struct svc_rdma_call *cl = &c->calls[(c->chead + i) % SVC_CALLS_MAX];
		int rc = svc_rdma_pull_reads(c, cl);

		if (rc) {
			svc_rdma_conn_kill(c, "posting RDMA Reads failed", -rc);
			return -1;
		}
		if (cl->pull_next < cl->hdr.nreads)
			break;
	}
	return 0;
}

/*
 * Complete the call around the data chunks already in @out: each one's
 * XDR padding, and the inline bytes @src of an RDMA_MSG (NULL for an
 * RDMA_NOMSG, whose position-zero chunk was read in place).
 */
static void svc_rdma_rebuild(const struct rpcrdma_header *h, uint32_t first, const uint8_t *src,
			     uint32_t src_len, uint8_t *out)
{
	uint32_t o = 0, s = 0, i = first;

	while (i < h->nreads) {
		struct rpcrdma_read_chunk rc = rpcrdma_read_chunk_next(h, &i);
		uint32_t pos = rc.position, len = (uint32_t)rc.length;
		uint32_t span = (uint32_t)rpcrdma_xdr_roundup(len);

		if (src)
			memcpy(out + o, src + s, pos - o);
		s += pos - o;
		memset(out + pos + len, 0, span - len);
		o = pos + span;
	}
	if (src)
		memcpy(out + o, src + s, src_len - s);
}

/*
 * @cl's Read sink of @len bytes.  On IB/RoCE the Reads' data lands
 * through the local key, so the sink needs no remote access and comes
 * from the connection's registered pool.  On iWARP a Read Response is a
 * tagged write into the sink: it is registered for remote write for this
 * call alone, until its Reads are done.  Returns 0 or -ENOMEM (-errno
 * of a failed registration).
 */
static int svc_rdma_sink_get(struct svc_rdma_conn *c, struct svc_rdma_call *cl, uint64_t len)
{
	int rc;

	/* len is at most max_rpc_size: a uint32_t */
	if (c->sinks_pooled) {
		rc = rpcrdma_replybufs_get(&c->sinks, (uint32_t)len, &cl->rd_pooled);
		if (rc)
			return rc;
		cl->rd_buf = cl->rd_pooled->addr;
		cl->rd_lkey = cl->rd_pooled->mr->lkey;
	} else {
		cl->rd_buf = malloc(len);
		if (!cl->rd_buf)
			return -ENOMEM;
		cl->rd_mr = rpcrdma_mr_reg(rpcrdma_ep_pd(c->ep), cl->rd_buf, len,
					   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (!cl->rd_mr) {
			rc = -errno;
			free(cl->rd_buf);
			cl->rd_buf = NULL;
			return rc;
		}
		cl->rd_lkey = cl->rd_mr->lkey;
	}
	cl->rd_len = len;
	c->rd_bytes += len;
	return 0;
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
	cl->pull_next = cl->pull_at = cl->pull_pos = cl->pull_done = cl->pz_segs = 0;
	if (!h->nreads)
		return h->type == RDMA_MSG ? 0 : -EPROTO;
	if (!c->max_reads)
		return -EPROTO; /* the client's CCP maxrdmaread was 0: no RDMA Reads */
	if (h->reads[0].position == 0)
		pz = rpcrdma_read_chunk_next(h, &first).length;
	if (h->type == RDMA_NOMSG && !pz)
		return -EPROTO;
	msg_len = h->type == RDMA_NOMSG ? pz : inl_len;
	total = msg_len + svc_rdma_data_bytes(h, first);
	if (total > c->opts.max_rpc_size)
		return -EPROTO;
	cl->pz_segs = first;
	cl->msg_len = (uint32_t)msg_len;
	cl->total = (uint32_t)total;
	return svc_rdma_sink_get(c, cl, total);
}

/*
 * TRUE when @cl is complete in memory (every Read done, the call
 * rebuilt) and its reply has room in the send queue; FALSE while its
 * Reads run or other work requests hold the room (their completions
 * wake us).
 */
bool svc_rdma_call_ready(struct svc_rdma_conn *c, struct svc_rdma_call *cl)
{
	const struct rpcrdma_header *h = &cl->hdr;

	if (!cl->call && !h->nreads) {
		cl->call = cl->inl;
		cl->call_len = cl->total;
	}
	if (!cl->call) {
		if (cl->pull_next < h->nreads || cl->reads_pending)
			return false;
		/* done already, unless no Read was needed (zero lengths); a sink still writable is not served */
		if (!svc_rdma_sink_close(cl)) {
			svc_rdma_conn_kill(c, "deregistering a call's Read sink failed", EIO);
			return false;
		}
		svc_rdma_rebuild(h, cl->pz_segs, h->type == RDMA_NOMSG ? NULL : cl->inl, cl->msg_len,
				 cl->rd_buf);
		cl->call = cl->rd_buf;
		cl->call_len = cl->total;
	}
	return svc_rdma_send_room(c) >= svc_rdma_reply_wrs(cl);
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
	if (h->type == RDMA_DONE || h->type == RDMA_ERROR)
		goto drop; /* well-formed or not, an error is never answered with one */
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
		svc_rdma_conn_kill(c, "preparing a call's RDMA Reads failed", -rc);
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
void svc_rdma_take_msgs(struct svc_rdma_conn *c)
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
bool_t svc_rdma_decode_call(struct svc_rdma_call *cl, struct rpc_msg *msg)
{
	XDR x;

	xdrmem_create(&x, (char *)(uintptr_t)cl->call, cl->call_len, XDR_DECODE);
	if (!xdr_callmsg(&x, msg) || msg->rm_xid != cl->hdr.xid)
		return FALSE;
	cl->args_off = XDR_GETPOS(&x);
	cl->prog = msg->rm_call.cb_prog;
	cl->vers = msg->rm_call.cb_vers;
	cl->proc = msg->rm_call.cb_proc;
	cl->flavor = msg->rm_call.cb_cred.oa_flavor;
	return TRUE;
}
