/*
 * The server's replies.  xp_reply marshals the reply through the
 * chunk-aware XDR stream with the registered binding's result mask,
 * plans it against the chunks the call offered (rpcrdma_plan_reply),
 * copies it into one registered reply buffer (reply_buffers.c), RDMA
 * Writes DDP results into the write chunks and, for a long reply, the
 * reply into the reply chunk, and Sends the transport header (and the
 * inline reply), With Invalidate when allowed; RDMA_ERROR answers go
 * the same way.  While more calls wait to be served, Sends are held and
 * posted together (svc_rdma_sends_flush).  It never writes outside an
 * offered segment and never waits: the buffer is reused when its Send
 * completes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/svc_rdma_internal.h"
#include "xdr/bytes.h"

/* svc_rdma_call_ready() made room for every Write of the reply: -ENOBUFS cannot happen. */
static int svc_rdma_write(struct svc_rdma_conn *c, const uint8_t *src, uint32_t len,
			  const struct ibv_mr *mr, const struct rpcrdma_segment *seg)
{
	struct ibv_sge sge = { (uintptr_t)src, len, mr->lkey };
	int rc = rpcrdma_ep_post_write(c->ep, &sge, 1, seg->offset, seg->handle, 0);

	return rc == -ENOBUFS ? -EIO : rc;
}

int svc_rdma_sends_flush(struct svc_rdma_conn *c)
{
	uint32_t n = c->nheld, posted;
	int rc;

	if (!n)
		return 0;
	c->nheld = 0;
	if (c->dead)
		return -EIO;
	rc = rpcrdma_ep_post_sends(c->ep, c->held, n, &posted);
	if (rc) {
		svc_rdma_conn_kill(c, "posting a Send failed", -rc);
		return -EIO;
	}
	return 0;
}

/*
 * The one Send that answers @cl, from @b; With Invalidate when
 * svc_rdma_inv_rkey allowed.  It is held while more calls wait to be
 * served (svc_rdma_conn.held).  @b waits for the Send's completion;
 * when the Send cannot be posted the connection dies and @b is freed
 * after the QP.
 */
static int svc_rdma_send(struct svc_rdma_conn *c, struct rpcrdma_replybuf *b, uint32_t len,
			 struct svc_rdma_call *cl)
{
	c->held[c->nheld++] = (struct rpcrdma_send){
		.sge = { (uintptr_t)b->addr, len, b->mr->lkey },
		.wr_id = (uint64_t)(uintptr_t)b,
		.invalidate = cl->inv,
		.invalidate_rkey = cl->inv_rkey,
	};
	cl->inv = false;
	rpcrdma_replybufs_posted(&c->replies, b); /* Writes before it may read it: freed with the QP */
	if (c->nheld < c->opts.reply_batch && svc_rdma_more_calls(c))
		return 0;
	return svc_rdma_sends_flush(c);
}

static uint32_t svc_rdma_grant(const struct svc_rdma_conn *c, uint32_t requested)
{
	uint32_t grant = 1;

	rpcrdma_credits_server_grant(&c->credits, requested, &grant);
	return grant;
}

/* Answer RDMA_ERROR (ERR_VERS or ERR_CHUNK) for @xid and end @cl (no Read of it outstanding). */
void svc_rdma_send_error(struct svc_rdma_conn *c, struct svc_rdma_call *cl, uint32_t xid,
				uint32_t requested, enum rpcrdma_errcode err)
{
	struct rpcrdma_header *h = &cl->hdr;
	uint32_t vers = h->vers; /* the request's, decoded into @cl */
	struct rpcrdma_replybuf *b;
	size_t len;
	int rc;

	svc_rdma_call_end(c, cl);
	if (err == ERR_VERS)
		rpcrdma_header_init_err_vers(h, xid, vers, svc_rdma_grant(c, requested));
	else
		rpcrdma_header_init_err_chunk(h, xid, svc_rdma_grant(c, requested));
	rc = rpcrdma_replybufs_get(&c->replies, c->send_cap, &b);
	if (rc) {
		svc_rdma_conn_kill(c, "no buffer for an RDMA_ERROR reply", -rc);
		return;
	}
	if (rpcrdma_header_encode(h, b->addr, c->send_cap, &len) == RPCRDMA_HDR_OK)
		svc_rdma_send(c, b, (uint32_t)len, cl);
	else
		rpcrdma_replybufs_put(&c->replies, b);
}

/* The reply's result mask from the binding registered for the call's program. */
static uint32_t svc_rdma_res_ddp(struct svc_rdma_conn *c)
{
	const struct svc_rdma_call *cl = svc_rdma_oldest(c);

	return svc_ulbs_res_ddp(c->ulbs, cl->prog, cl->vers, cl->proc);
}

/* Successful results, through @auth's wrap when there is one. */
static bool svc_rdma_results(SVCAUTH *auth, XDR *xdrs, xdrproc_t proc, caddr_t where)
{
	return auth ? SVCAUTH_WRAP(auth, xdrs, proc, where) : proc(xdrs, where);
}

/* Marshal @msg into c->stage: RPC header with xdrmem, results through @s. */
static bool svc_rdma_marshal(struct svc_rdma_conn *c, struct rpc_msg *msg, SVCAUTH *auth,
			     struct rpcrdma_xdr_stream *s)
{
	bool ddp = rpcrdma_auth_ddp(svc_rdma_oldest(c)->flavor);
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
		msg->acpted_rply.ar_results.proc = RPCRDMA_XDR_VOID;
		msg->acpted_rply.ar_results.where = NULL;
	}
	xdrmem_create(&x, (char *)c->stage, c->opts.max_rpc_size, XDR_ENCODE);
	ok = xdr_replymsg(&x, msg);
	msg->acpted_rply.ar_results.proc = proc;
	msg->acpted_rply.ar_results.where = where;
	/* A wrapping flavor writes through the memory stream (see clnt_rdma_encode). */
	if (ok && success && !ddp)
		ok = svc_rdma_results(auth, &x, proc, where);
	rpcrdma_xdr_encode_init(s, c->stage, c->opts.max_rpc_size, XDR_GETPOS(&x),
				success && ddp ? svc_rdma_res_ddp(c) : 0, 1);
	XDR_DESTROY(&x);
	if (!ok || !success || !ddp)
		return ok;
	return svc_rdma_results(auth, &s->xdr, proc, where);
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

	for (uint32_t i = 0; i < r->plan.nwrites; i++)
		len += r->plan.writes[i].length;
	if (r->plan.type == RDMA_NOMSG)
		len += r->plan.body_len;
	if (len > UINT32_MAX)
		return -EPROTO;
	/* Whatever failed (mapping, registration under RLIMIT_MEMLOCK), the server lacks memory. */
	if (rpcrdma_replybufs_get(&c->replies, (uint32_t)len, &r->buf))
		return -ENOMEM;
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
 * the Send.  Returns 0, -EPROTO (answer ERR_CHUNK), -ENOMEM (no reply
 * buffer: answer SYSTEM_ERR if that fits one) or -errno.  Nothing
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
	/*
	 * Every byte of the results is copied before the call ends: results
	 * may point into the call's receive buffer or Read sink (an
	 * XDR_INLINE pointer kept from svc_getargs), which the end gives
	 * back.  The header's length does not depend on the grant, which
	 * comes after the end (the call's receive is posted again first), so
	 * the body goes after the header's size and the header is written
	 * once, with the grant.
	 */
	hlen = rpcrdma_header_encoded_size(&r->out);
	if (hlen > c->send_cap)
		return -EIO;
	if (r->plan.type == RDMA_MSG &&
	    (r->plan.body_len > c->send_cap - hlen || svc_rdma_reply_body(r, r->buf->addr + hlen)))
		return -EIO;
	svc_rdma_call_end(c, cl);
	r->out.credit = svc_rdma_grant(c, requested);
	if (rpcrdma_header_encode(&r->out, r->buf->addr, c->send_cap, &hlen) != RPCRDMA_HDR_OK)
		return -EIO;
	if (r->plan.type == RDMA_MSG)
		hlen += r->plan.body_len;
	b = r->buf;
	r->buf = NULL;
	rc = svc_rdma_reply_post(c, r, b);
	if (rc) {
		rpcrdma_replybufs_posted(&c->replies, b);
		svc_rdma_conn_kill(c, "posting a reply's RDMA Writes failed", -rc);
		return -EIO;
	}
	return svc_rdma_send(c, b, (uint32_t)hlen, cl);
}

/*
 * Results that cannot be marshalled (the program's XDR routine or the
 * credential's wrap failed, or they exceed max_rpc_size) are answered
 * SYSTEM_ERR with the verifier the credential chose, as Linux's server
 * answers an encoding failure; the client is not left to wait.
 */
static bool svc_rdma_marshal_system_err(struct svc_rdma_conn *c, const struct rpc_msg *msg,
					struct rpcrdma_xdr_stream *s)
{
	struct rpc_msg err = { .rm_xid = msg->rm_xid, .rm_direction = REPLY };

	if (msg->rm_reply.rp_stat != MSG_ACCEPTED || msg->acpted_rply.ar_stat != SUCCESS)
		return false;
	err.rm_reply.rp_stat = MSG_ACCEPTED;
	err.acpted_rply.ar_verf = msg->acpted_rply.ar_verf;
	err.acpted_rply.ar_stat = SYSTEM_ERR;
	return svc_rdma_marshal(c, &err, NULL, s);
}

/* svc_rdma_reply_send, its reply buffer given back unless something was posted. */
static int svc_rdma_reply_try(struct svc_rdma_conn *c, struct svc_rdma_reply *r)
{
	int rc = svc_rdma_reply_send(c, r);

	rpcrdma_replybufs_put(&c->replies, r->buf); /* set only when nothing was posted */
	r->buf = NULL;
	return rc;
}

bool_t svc_rdma_reply_auth(struct svc_rdma_conn *c, struct rpc_msg *msg, SVCAUTH *auth)
{
	struct svc_rdma_call *cl = svc_rdma_oldest(c);
	uint32_t xid = cl->hdr.xid, requested = cl->hdr.credit;
	struct svc_rdma_reply *r = c->reply;
	bool marshalled;
	int rc = -EPROTO;

	if (!c->in_call || c->dead)
		return FALSE;
	msg->rm_xid = xid; /* svc_sendreply() and svcerr_*() leave it to the transport */
	r->buf = NULL;
	marshalled = svc_rdma_marshal(c, msg, auth, &r->s);
	if (marshalled)
		rc = svc_rdma_reply_try(c, r);
	/* Results that cannot be marshalled, or no memory for their buffer: the short SYSTEM_ERR. */
	if ((!marshalled || rc == -ENOMEM) && svc_rdma_marshal_system_err(c, msg, &r->s)) {
		marshalled = false;
		rc = svc_rdma_reply_try(c, r);
	} else if (!marshalled && !c->stage) {
		rc = -ENOMEM; /* no staging buffer, not even for SYSTEM_ERR */
	}
	if (rc == -EPROTO)
		svc_rdma_send_error(c, cl, xid, requested, ERR_CHUNK);
	else if (rc)
		svc_rdma_conn_kill(c, "a reply could not be sent", -rc);
	svc_rdma_oldest_done(c);
	return rc == 0 && marshalled;
}

bool_t svc_rdma_reply(SVCXPRT *xprt, struct rpc_msg *msg)
{
	SVCAUTH *auth = &SVC_XP_AUTH(xprt);

	return svc_rdma_reply_auth(conn_of(xprt), msg, auth->svc_ah_ops ? auth : NULL);
}
