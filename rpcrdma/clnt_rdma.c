/*
 * The RPC-over-RDMA CLIENT: libtirpc's clnt_ops over one rpcrdma_ep.
 * A call is marshalled (RPC header with xdrmem, arguments through the
 * chunk-aware XDR stream), planned with rpcrdma_plan_call(), the memory
 * the server reads or writes is registered for this call only, and the
 * transport header with the inline bytes goes out in one Send.  The
 * reply is matched by XID in the receive pool, its transport header
 * validated, the credit grant applied, and the results decoded from the
 * inline body or the reply chunk plus the write chunks.  Every memory
 * registration of a call is gone when clnt_call() returns.
 *
 * First version: one call in flight per CLIENT (a mutex serializes
 * callers); buffers for write and reply chunks are allocated and
 * registered per call.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "rpcrdma/credits.h"
#include "rpcrdma/netconfig.h"
#include "rpcrdma/rpcbind.h"
#include "rpcrdma/transport.h"
#include "xdr/header.h"

#define CLNT_WC_BATCH 16

struct rpcrdma_clnt {
	pthread_mutex_t lock;
	struct rpcrdma_ep *ep;
	struct rpcrdma_options opts;
	struct rpcrdma_credits_client credits;
	uint8_t *send_buf;
	struct ibv_mr *send_mr;
	uint32_t send_cap;
	uint8_t *stage;          /* RPC header and reduced arguments of the current call */
	uint32_t stage_cap;
	struct timeval timeout;
	bool timeout_set;
	bool dead;
	uint32_t xid;            /* of the last call */
	rpcprog_t prog;
	rpcvers_t vers;
	struct rpc_err err;
	struct sockaddr_storage addr;
	struct netbuf svcaddr;
};

/* Everything one call registers or allocates. */
struct clnt_rdma_call {
	uint32_t xid;
	const struct rpcrdma_ulb_proc *binding;
	struct rpcrdma_xdr_stream s;
	struct rpcrdma_call_plan plan;
	struct rpcrdma_header hdr;
	struct ibv_mr *src_mr[RPCRDMA_XDR_MAX_ITEMS + 1]; /* items, then the stage */
	uint8_t *wbuf[RPCRDMA_MAX_WRITE_CHUNKS];
	struct ibv_mr *wmr[RPCRDMA_MAX_WRITE_CHUNKS];
	uint8_t *rbuf;
	struct ibv_mr *rmr;
	bool sent, replied, have_recv, have_credit;
	uint32_t recv_index, recv_len;
};

static struct rpcrdma_clnt *clnt_rdma_of(CLIENT *cl)
{
	return (struct rpcrdma_clnt *)cl->cl_private;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static enum clnt_stat clnt_rdma_fail(struct rpcrdma_clnt *ct, enum clnt_stat st, int err)
{
	ct->err.re_status = st;
	ct->err.re_errno = err;
	return st;
}

/* ---- per-call memory --------------------------------------------------------- */

static void clnt_rdma_call_release(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c)
{
	for (uint32_t i = 0; i <= RPCRDMA_XDR_MAX_ITEMS; i++)
		rpcrdma_mr_dereg(c->src_mr[i]);
	for (uint32_t i = 0; i < RPCRDMA_MAX_WRITE_CHUNKS; i++) {
		rpcrdma_mr_dereg(c->wmr[i]);
		free(c->wbuf[i]);
	}
	rpcrdma_mr_dereg(c->rmr);
	free(c->rbuf);
	if (c->have_recv && rpcrdma_ep_repost_recv(ct->ep, c->recv_index))
		ct->dead = true;
	if (c->have_credit)
		rpcrdma_credits_client_release(&ct->credits);
}

/* The MR covering a read chunk's source at @p: the stage or one item. */
static struct ibv_mr *clnt_rdma_src_mr(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c,
				       const uint8_t *p)
{
	const struct rpcrdma_xdr_stream *s = &c->s;
	uint32_t idx = RPCRDMA_XDR_MAX_ITEMS;
	const void *base = s->buf;
	size_t len = s->off;

	for (uint32_t i = 0; i < s->nitems; i++)
		if (p >= s->items[i].data && p < s->items[i].data + s->items[i].length) {
			idx = i;
			base = s->items[i].data;
			len = s->items[i].length;
		}
	if (!c->src_mr[idx])
		c->src_mr[idx] = rpcrdma_mr_reg(rpcrdma_ep_pd(ct->ep), base, len,
						IBV_ACCESS_REMOTE_READ);
	return c->src_mr[idx];
}

static enum clnt_stat clnt_rdma_add_reads(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c)
{
	for (uint32_t i = 0; i < c->plan.nreads; i++) {
		const struct rpcrdma_plan_read *r = &c->plan.reads[i];
		const uint8_t *p = rpcrdma_stream_locate(&c->s, r->src.offset, r->src.length);
		struct rpcrdma_segment seg;
		struct ibv_mr *mr;

		if (!p)
			return clnt_rdma_fail(ct, RPC_CANTENCODEARGS, EINVAL);
		mr = clnt_rdma_src_mr(ct, c, p);
		if (!mr)
			return clnt_rdma_fail(ct, RPC_SYSTEMERROR, errno);
		seg = (struct rpcrdma_segment){ mr->rkey, r->src.length, (uint64_t)(uintptr_t)p };
		if (rpcrdma_header_add_read(&c->hdr, r->position, &seg) != RPCRDMA_HDR_OK)
			return clnt_rdma_fail(ct, RPC_CANTENCODEARGS, E2BIG);
	}
	return RPC_SUCCESS;
}

/* A buffer the server writes into: allocated, registered, cut into segments. */
static enum clnt_stat clnt_rdma_sink(struct rpcrdma_clnt *ct, uint32_t length, uint8_t **buf,
				     struct ibv_mr **mr, struct rpcrdma_segment *segs,
				     uint32_t *nsegs)
{
	*buf = malloc(length ? length : 1);
	if (!*buf)
		return clnt_rdma_fail(ct, RPC_SYSTEMERROR, ENOMEM);
	*mr = rpcrdma_mr_reg(rpcrdma_ep_pd(ct->ep), *buf, length,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!*mr)
		return clnt_rdma_fail(ct, RPC_SYSTEMERROR, errno);
	*nsegs = rpcrdma_segments_cut(*mr, *buf, length, segs, RPCRDMA_CHUNK_SEGS);
	return *nsegs || !length ? RPC_SUCCESS : clnt_rdma_fail(ct, RPC_CANTENCODEARGS, E2BIG);
}

static enum clnt_stat clnt_rdma_add_sinks(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c)
{
	struct rpcrdma_segment segs[RPCRDMA_CHUNK_SEGS];
	enum clnt_stat st;
	uint32_t n;

	for (uint32_t i = 0; i < c->plan.nwrites; i++) {
		st = clnt_rdma_sink(ct, c->plan.writes[i].length, &c->wbuf[i], &c->wmr[i], segs, &n);
		if (st != RPC_SUCCESS)
			return st;
		if (rpcrdma_header_add_write_chunk(&c->hdr, segs, n) != RPCRDMA_HDR_OK)
			return clnt_rdma_fail(ct, RPC_CANTENCODEARGS, E2BIG);
	}
	if (!c->plan.has_reply)
		return RPC_SUCCESS;
	st = clnt_rdma_sink(ct, c->plan.reply.length, &c->rbuf, &c->rmr, segs, &n);
	if (st != RPC_SUCCESS)
		return st;
	if (rpcrdma_header_set_reply_chunk(&c->hdr, segs, n) != RPCRDMA_HDR_OK)
		return clnt_rdma_fail(ct, RPC_CANTENCODEARGS, E2BIG);
	return RPC_SUCCESS;
}

/* ---- marshalling and planning ---------------------------------------------- */

static enum clnt_stat clnt_rdma_marshal(CLIENT *cl, struct clnt_rdma_call *c, rpcproc_t proc,
					xdrproc_t xargs, void *args)
{
	struct rpcrdma_clnt *ct = clnt_rdma_of(cl);
	struct rpc_msg call = { .rm_xid = c->xid };
	uint32_t hdr_len;
	XDR x;

	call.rm_call.cb_prog = ct->prog;
	call.rm_call.cb_vers = ct->vers;
	xdrmem_create(&x, (char *)ct->stage, ct->stage_cap, XDR_ENCODE);
	if (!xdr_callhdr(&x, &call) || !xdr_u_int32_t(&x, &proc) ||
	    !AUTH_MARSHALL(cl->cl_auth, &x))
		return clnt_rdma_fail(ct, RPC_CANTENCODEARGS, 0);
	hdr_len = XDR_GETPOS(&x);
	XDR_DESTROY(&x);
	rpcrdma_xdr_encode_init(&c->s, ct->stage, ct->stage_cap, hdr_len,
				c->binding ? c->binding->arg_ddp : 0, RPCRDMA_DDP_THRESHOLD);
	if (!xargs(&c->s.xdr, args))
		return clnt_rdma_fail(ct, RPC_CANTENCODEARGS, 0);
	return RPC_SUCCESS;
}

static uint32_t cap_u64(uint64_t v, uint32_t cap)
{
	return v < cap ? (uint32_t)v : cap;
}

static enum clnt_stat clnt_rdma_plan(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c,
				     const void *args)
{
	const struct rpcrdma_ep_info *info = rpcrdma_ep_info(ct->ep);
	const struct rpcrdma_ulb_proc *b = c->binding;
	uint32_t result_max[RPCRDMA_MAX_WRITE_CHUNKS];
	struct rpcrdma_ddp_item items[RPCRDMA_XDR_MAX_ITEMS];
	uint32_t max = ct->opts.max_rpc_size;
	struct rpcrdma_call_desc desc = { .xdr_len = c->s.pos, .args = items,
					  .nargs = c->s.nitems, .result_max = result_max };
	struct rpcrdma_plan_limits lim = {
		.inline_send = info->inline_params.send,
		.inline_recv = info->inline_params.recv,
		.ddp_threshold = RPCRDMA_DDP_THRESHOLD,
		.max_seg_bytes = RPCRDMA_SEG_BYTES,
		.max_chunk_segs = RPCRDMA_CHUNK_SEGS,
		.max_read_segs = RPCRDMA_CALL_READ_SEGS,
		.max_write_chunks = RPCRDMA_MAX_WRITE_CHUNKS,
	};
	enum rpcrdma_plan_status st;

	rpcrdma_stream_items(&c->s, items);
	desc.nresults = b ? rpcrdma_mask_count(b->res_ddp) : 0;
	if (desc.nresults > RPCRDMA_MAX_WRITE_CHUNKS)
		desc.nresults = RPCRDMA_MAX_WRITE_CHUNKS;
	for (uint32_t i = 0; i < desc.nresults; i++)
		result_max[i] = b->res_max ? cap_u64(b->res_max(args, i), max) : max;
	desc.reply_max = cap_u64((uint64_t)RPCRDMA_REPLY_HDR_MAX +
				 (b && b->reply_max ? b->reply_max(args) : max), max);
	st = rpcrdma_plan_call(&desc, &lim, &c->plan);
	if (st != RPCRDMA_PLAN_OK)
		return clnt_rdma_fail(ct, RPC_CANTENCODEARGS, E2BIG);
	return RPC_SUCCESS;
}

/* Transport header and inline bytes into the send buffer; post the Send. */
static enum clnt_stat clnt_rdma_send(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c)
{
	struct ibv_sge sge;
	uint32_t at;
	size_t hlen;
	int rc;

	if (rpcrdma_header_encode(&c->hdr, ct->send_buf, ct->send_cap, &hlen) != RPCRDMA_HDR_OK ||
	    c->plan.inline_len > ct->send_cap - hlen)
		return clnt_rdma_fail(ct, RPC_CANTENCODEARGS, E2BIG);
	at = (uint32_t)hlen;
	if (c->plan.type == RDMA_MSG)
		for (uint32_t i = 0; i < c->plan.nranges; i++) {
			const struct rpcrdma_range *r = &c->plan.ranges[i];

			if (!rpcrdma_stream_copy(&c->s, r->offset, r->length, ct->send_buf + at))
				return clnt_rdma_fail(ct, RPC_CANTENCODEARGS, EINVAL);
			at += r->length;
		}
	sge = (struct ibv_sge){ (uintptr_t)ct->send_buf, at, ct->send_mr->lkey };
	rc = rpcrdma_ep_post_send(ct->ep, &sge, 1, c->xid, false, 0);
	if (rc) {
		if (rc == -ENOTCONN)
			ct->dead = true;
		return clnt_rdma_fail(ct, RPC_CANTSEND, -rc);
	}
	return RPC_SUCCESS;
}

/* ---- waiting for the reply ------------------------------------------------------ */

static enum clnt_stat clnt_rdma_take_wc(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c,
					const struct rpcrdma_wc *wc)
{
	const uint8_t *buf;

	if (wc->kind == RPCRDMA_WC_SEND) {
		c->sent = true;
		if (wc->status != IBV_WC_SUCCESS) {
			ct->dead = true;
			return clnt_rdma_fail(ct, RPC_CANTSEND, EIO);
		}
		return RPC_SUCCESS;
	}
	if (wc->kind != RPCRDMA_WC_RECV)
		return RPC_SUCCESS;
	if (wc->status != IBV_WC_SUCCESS) {
		ct->dead = true;
		return clnt_rdma_fail(ct, RPC_CANTRECV, ECONNRESET);
	}
	buf = rpcrdma_ep_recv_buf(ct->ep, (uint32_t)wc->wr_id);
	if (c->replied || wc->byte_len < 4 ||
	    ((uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | buf[3]) != c->xid) {
		/* A late reply to a call that timed out, or garbage: drop it. */
		if (rpcrdma_ep_repost_recv(ct->ep, (uint32_t)wc->wr_id))
			ct->dead = true;
		return RPC_SUCCESS;
	}
	c->replied = c->have_recv = true;
	c->recv_index = (uint32_t)wc->wr_id;
	c->recv_len = wc->byte_len;
	return RPC_SUCCESS;
}

static enum clnt_stat clnt_rdma_wait(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c,
				     int64_t deadline)
{
	struct rpcrdma_wc wc[CLNT_WC_BATCH];
	enum clnt_stat st;
	int n, rc;

	while (!c->sent || !c->replied) {
		n = rpcrdma_ep_poll(ct->ep, wc, CLNT_WC_BATCH);
		if (n < 0) {
			ct->dead = true;
			return clnt_rdma_fail(ct, RPC_CANTRECV, -n);
		}
		for (int i = 0; i < n; i++) {
			st = clnt_rdma_take_wc(ct, c, &wc[i]);
			if (st != RPC_SUCCESS)
				return st;
		}
		if (n > 0)
			continue;
		if (now_ms() >= deadline)
			return clnt_rdma_fail(ct, RPC_TIMEDOUT, 0);
		rc = rpcrdma_ep_wait(ct->ep, (int)(deadline - now_ms()));
		if (rc < 0) {
			ct->dead = true;
			return clnt_rdma_fail(ct, RPC_CANTRECV, -rc);
		}
	}
	return RPC_SUCCESS;
}

/* ---- the reply ------------------------------------------------------------------------ */

/* A chunk the server echoed must fit, segment by segment, in what we offered. */
static bool clnt_rdma_echo_fits(const struct rpcrdma_header *h, const struct rpcrdma_chunk *got,
				const struct rpcrdma_header *sent, const struct rpcrdma_chunk *offered)
{
	if (got->nsegs > offered->nsegs)
		return false;
	for (uint32_t i = 0; i < got->nsegs; i++)
		if (h->segs[got->first + i].length > sent->segs[offered->first + i].length)
			return false;
	return true;
}

static enum clnt_stat clnt_rdma_rdma_error(struct rpcrdma_clnt *ct, const struct rpcrdma_header *h)
{
	if (h->err == ERR_VERS) {
		ct->err.re_vers.low = h->vers_low;
		ct->err.re_vers.high = h->vers_high;
		return clnt_rdma_fail(ct, RPC_VERSMISMATCH, EPROTONOSUPPORT);
	}
	return clnt_rdma_fail(ct, RPC_CANTDECODERES, EPROTO);
}

/* Where the RPC reply is: inline behind the header or in the reply chunk. */
static enum clnt_stat clnt_rdma_reply_body(struct rpcrdma_clnt *ct, struct clnt_rdma_call *c,
					   const struct rpcrdma_header *h, size_t hlen,
					   const uint8_t **body, uint32_t *blen)
{
	const uint8_t *buf = rpcrdma_ep_recv_buf(ct->ep, c->recv_index);

	if (h->type == RDMA_MSG && !h->nreads) {
		*body = buf + hlen;
		*blen = c->recv_len - (uint32_t)hlen;
		return RPC_SUCCESS;
	}
	if (h->type == RDMA_NOMSG && !h->nreads && h->has_reply && c->hdr.has_reply &&
	    clnt_rdma_echo_fits(h, &h->reply, &c->hdr, &c->hdr.reply)) {
		*body = c->rbuf;
		*blen = rpcrdma_chunk_length(h, &h->reply);
		return RPC_SUCCESS;
	}
	return clnt_rdma_fail(ct, RPC_CANTDECODERES, EPROTO);
}

static enum clnt_stat clnt_rdma_results(CLIENT *cl, struct clnt_rdma_call *c, const uint8_t *body,
					uint32_t blen, const struct rpcrdma_header *h,
					xdrproc_t xres, void *res)
{
	struct rpcrdma_clnt *ct = clnt_rdma_of(cl);
	struct rpcrdma_xdr_item items[RPCRDMA_MAX_WRITE_CHUNKS];
	struct rpc_msg msg = { .rm_xid = 0 };
	uint32_t pos;
	XDR x;

	if (h->nwrites > c->hdr.nwrites)
		return clnt_rdma_fail(ct, RPC_CANTDECODERES, EPROTO);
	for (uint32_t i = 0; i < h->nwrites; i++) {
		if (!clnt_rdma_echo_fits(h, &h->writes[i], &c->hdr, &c->hdr.writes[i]))
			return clnt_rdma_fail(ct, RPC_CANTDECODERES, EPROTO);
		items[i] = (struct rpcrdma_xdr_item){ 0, rpcrdma_chunk_length(h, &h->writes[i]),
						      c->wbuf[i] };
	}
	msg.acpted_rply.ar_verf = _null_auth;
	msg.acpted_rply.ar_results.where = NULL;
	msg.acpted_rply.ar_results.proc = (xdrproc_t)(void (*)(void))xdr_void;
	xdrmem_create(&x, (char *)(uintptr_t)body, blen, XDR_DECODE);
	if (!xdr_replymsg(&x, &msg) || msg.rm_xid != c->xid)
		return clnt_rdma_fail(ct, RPC_CANTDECODERES, EPROTO);
	pos = XDR_GETPOS(&x);
	_seterr_reply(&msg, &ct->err);
	if (ct->err.re_status == RPC_SUCCESS) {
		if (!AUTH_VALIDATE(cl->cl_auth, &msg.acpted_rply.ar_verf)) {
			ct->err.re_status = RPC_AUTHERROR;
			ct->err.re_why = AUTH_INVALIDRESP;
		} else {
			rpcrdma_xdr_decode_init(&c->s, body, blen, pos,
						c->binding ? c->binding->res_ddp : 0, items,
						h->nwrites);
			if (!xres(&c->s.xdr, res))
				clnt_rdma_fail(ct, RPC_CANTDECODERES, 0);
		}
	}
	if (msg.acpted_rply.ar_verf.oa_base) {
		x.x_op = XDR_FREE;
		xdr_opaque_auth(&x, &msg.acpted_rply.ar_verf);
	}
	return ct->err.re_status;
}

static enum clnt_stat clnt_rdma_decode(CLIENT *cl, struct clnt_rdma_call *c, xdrproc_t xres,
				       void *res)
{
	struct rpcrdma_clnt *ct = clnt_rdma_of(cl);
	const uint8_t *body;
	struct rpcrdma_header h;
	enum clnt_stat st;
	uint32_t blen;
	size_t hlen;

	if (rpcrdma_header_decode(&h, rpcrdma_ep_recv_buf(ct->ep, c->recv_index), c->recv_len,
				  NULL, &hlen) != RPCRDMA_HDR_OK)
		return clnt_rdma_fail(ct, RPC_CANTDECODERES, EPROTO);
	rpcrdma_credits_client_grant(&ct->credits, h.credit);
	if (h.type == RDMA_ERROR)
		return clnt_rdma_rdma_error(ct, &h);
	st = clnt_rdma_reply_body(ct, c, &h, hlen, &body, &blen);
	if (st == RPC_SUCCESS)
		st = clnt_rdma_results(cl, c, body, blen, &h, xres, res);
	return st;
}

/* ---- clnt_ops ------------------------------------------------------------------------------ */

static struct timeval clnt_rdma_timeout(const struct rpcrdma_clnt *ct, struct timeval tv)
{
	return ct->timeout_set ? ct->timeout : tv;
}

static enum clnt_stat clnt_rdma_call_locked(CLIENT *cl, struct clnt_rdma_call *c, rpcproc_t proc,
					    xdrproc_t xargs, void *args, xdrproc_t xres,
					    void *res, struct timeval tv)
{
	struct rpcrdma_clnt *ct = clnt_rdma_of(cl);
	struct timeval t = clnt_rdma_timeout(ct, tv);
	int64_t deadline = now_ms() + (int64_t)t.tv_sec * 1000 + t.tv_usec / 1000;
	enum clnt_stat st;

	if (ct->dead || rpcrdma_ep_disconnected(ct->ep))
		return clnt_rdma_fail(ct, RPC_CANTSEND, ENOTCONN);
	if (!rpcrdma_credits_client_acquire(&ct->credits, UINT32_MAX))
		return clnt_rdma_fail(ct, RPC_CANTSEND, EAGAIN);
	c->have_credit = true;
	c->xid = ++ct->xid;
	if (ct->opts.ulb && ct->opts.ulb->prog == ct->prog && ct->opts.ulb->vers == ct->vers)
		c->binding = rpcrdma_ulb_proc_find(ct->opts.ulb, proc);
	st = clnt_rdma_marshal(cl, c, proc, xargs, args);
	if (st == RPC_SUCCESS)
		st = clnt_rdma_plan(ct, c, args);
	if (st != RPC_SUCCESS)
		return st;
	rpcrdma_header_init(&c->hdr, c->xid, rpcrdma_credits_client_request(&ct->credits),
			    c->plan.type);
	st = clnt_rdma_add_reads(ct, c);
	if (st == RPC_SUCCESS)
		st = clnt_rdma_add_sinks(ct, c);
	if (st == RPC_SUCCESS)
		st = clnt_rdma_send(ct, c);
	if (st != RPC_SUCCESS)
		return st;
	st = clnt_rdma_wait(ct, c, deadline);
	if (st == RPC_TIMEDOUT && !c->sent)
		ct->dead = true; /* the send buffer may still be in use */
	if (st != RPC_SUCCESS)
		return st;
	return clnt_rdma_decode(cl, c, xres, res);
}

static enum clnt_stat clnt_rdma_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *args,
				     xdrproc_t xres, void *res, struct timeval tv)
{
	struct rpcrdma_clnt *ct = clnt_rdma_of(cl);
	struct clnt_rdma_call *c = calloc(1, sizeof(*c));
	enum clnt_stat st;

	pthread_mutex_lock(&ct->lock);
	memset(&ct->err, 0, sizeof(ct->err));
	if (!c) {
		st = clnt_rdma_fail(ct, RPC_SYSTEMERROR, ENOMEM);
	} else {
		st = clnt_rdma_call_locked(cl, c, proc, xargs, args, xres, res, tv);
		clnt_rdma_call_release(ct, c);
	}
	pthread_mutex_unlock(&ct->lock);
	free(c);
	return st;
}

static void clnt_rdma_abort(CLIENT *cl)
{
	(void)cl;
}

static void clnt_rdma_geterr(CLIENT *cl, struct rpc_err *err)
{
	struct rpcrdma_clnt *ct = clnt_rdma_of(cl);

	pthread_mutex_lock(&ct->lock);
	*err = ct->err;
	pthread_mutex_unlock(&ct->lock);
}

static bool_t clnt_rdma_freeres(CLIENT *cl, xdrproc_t xres, void *res)
{
	XDR x = { .x_op = XDR_FREE };

	(void)cl;
	return xres(&x, res);
}

static void clnt_rdma_free(struct rpcrdma_clnt *ct)
{
	if (!ct)
		return;
	rpcrdma_mr_dereg(ct->send_mr);
	rpcrdma_ep_destroy(ct->ep);
	free(ct->send_buf);
	free(ct->stage);
	pthread_mutex_destroy(&ct->lock);
	free(ct);
}

static void clnt_rdma_destroy(CLIENT *cl)
{
	clnt_rdma_free(clnt_rdma_of(cl));
	free(cl->cl_netid);
	free(cl->cl_tp);
	free(cl);
}

static bool_t clnt_rdma_control_locked(struct rpcrdma_clnt *ct, u_int request, void *info)
{
	switch (request) {
	case CLSET_FD_CLOSE:
	case CLSET_FD_NCLOSE:
		return TRUE;
	case CLSET_TIMEOUT:
		ct->timeout = *(struct timeval *)info;
		ct->timeout_set = true;
		return TRUE;
	case CLGET_TIMEOUT:
		*(struct timeval *)info = ct->timeout_set ? ct->timeout : ct->opts.call_timeout;
		return TRUE;
	case CLGET_XID:
		*(uint32_t *)info = ct->xid;
		return TRUE;
	case CLSET_XID: /* the xid of the next call */
		ct->xid = *(uint32_t *)info - 1;
		return TRUE;
	case CLGET_VERS:
		*(uint32_t *)info = (uint32_t)ct->vers;
		return TRUE;
	case CLSET_VERS:
		ct->vers = *(uint32_t *)info;
		return TRUE;
	case CLGET_PROG:
		*(uint32_t *)info = (uint32_t)ct->prog;
		return TRUE;
	case CLSET_PROG:
		ct->prog = *(uint32_t *)info;
		return TRUE;
	case CLGET_SVC_ADDR:
		*(struct netbuf *)info = ct->svcaddr;
		return TRUE;
	case CLGET_SERVER_ADDR:
		memcpy(info, ct->svcaddr.buf, ct->svcaddr.len);
		return TRUE;
	default:
		return FALSE;
	}
}

static bool_t clnt_rdma_control(CLIENT *cl, u_int request, void *info)
{
	struct rpcrdma_clnt *ct = clnt_rdma_of(cl);
	bool_t ok;

	if (!info && request != CLSET_FD_CLOSE && request != CLSET_FD_NCLOSE)
		return FALSE;
	pthread_mutex_lock(&ct->lock);
	ok = clnt_rdma_control_locked(ct, request, info);
	pthread_mutex_unlock(&ct->lock);
	return ok;
}

static const struct clnt_ops clnt_rdma_ops = {
	.cl_call = clnt_rdma_call,
	.cl_abort = clnt_rdma_abort,
	.cl_geterr = clnt_rdma_geterr,
	.cl_freeres = clnt_rdma_freeres,
	.cl_destroy = clnt_rdma_destroy,
	.cl_control = clnt_rdma_control,
};

int clnt_rdma_getinfo(CLIENT *cl, struct rpcrdma_conn_info *info)
{
	struct rpcrdma_clnt *ct;
	const struct rpcrdma_ep_info *ei;

	if (!cl || !info || cl->cl_ops != &clnt_rdma_ops)
		return -EINVAL;
	ct = clnt_rdma_of(cl);
	pthread_mutex_lock(&ct->lock);
	ei = rpcrdma_ep_info(ct->ep);
	*info = (struct rpcrdma_conn_info){
		.inline_send = ei->inline_params.send,
		.inline_recv = ei->inline_params.recv,
		.credits = ct->credits.granted,
		.ird = ei->rd.ird,
		.ord = ei->rd.ord,
		.peer_private_data = ei->peer_pd == RPCRDMA_PD_OK,
		.remote_invalidate = ei->inline_params.remote_invalidate,
		.iwarp = ei->transport == IBV_TRANSPORT_IWARP,
		.registration = RPCRDMA_REG_PER_CALL_MR,
		.ccp = RPCRDMA_CCP_NOT_ASKED,
		.connects = 1,
	};
	pthread_mutex_unlock(&ct->lock);
	return 0;
}

/* ---- creation --------------------------------------------------------------------------------- */

static CLIENT *clnt_rdma_create_fail(struct rpcrdma_clnt *ct, CLIENT *cl, enum clnt_stat st,
				     int err)
{
	rpc_createerr.cf_stat = st;
	rpc_createerr.cf_error.re_status = st;
	rpc_createerr.cf_error.re_errno = err;
	clnt_rdma_free(ct);
	if (cl) {
		free(cl->cl_netid);
		free(cl);
	}
	return NULL;
}

static int clnt_rdma_buffers(struct rpcrdma_clnt *ct)
{
	ct->send_cap = ct->opts.inline_send;
	ct->send_buf = malloc(ct->send_cap);
	ct->stage_cap = ct->opts.max_rpc_size;
	ct->stage = malloc(ct->stage_cap);
	if (!ct->send_buf || !ct->stage)
		return -ENOMEM;
	ct->send_mr = rpcrdma_mr_reg(rpcrdma_ep_pd(ct->ep), ct->send_buf, ct->send_cap,
				     IBV_ACCESS_LOCAL_WRITE);
	return ct->send_mr ? 0 : -errno;
}

static uint32_t clnt_rdma_initial_xid(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint32_t)getpid() ^ (uint32_t)ts.tv_sec ^ (uint32_t)ts.tv_nsec;
}

CLIENT *clnt_rdma_tli_create(const struct sockaddr *addr, rpcprog_t prog, rpcvers_t vers,
			     const struct rpcrdma_options *o)
{
	struct rpcrdma_ep_params params;
	struct rpcrdma_clnt *ct;
	CLIENT *cl;
	int rc;

	if (!addr || (addr->sa_family != AF_INET && addr->sa_family != AF_INET6))
		return clnt_rdma_create_fail(NULL, NULL, RPC_UNKNOWNADDR, EAFNOSUPPORT);
	ct = calloc(1, sizeof(*ct));
	cl = calloc(1, sizeof(*cl));
	if (!ct || !cl) {
		free(cl);
		free(ct);
		return clnt_rdma_create_fail(NULL, NULL, RPC_SYSTEMERROR, ENOMEM);
	}
	pthread_mutex_init(&ct->lock, NULL);
	if (o)
		ct->opts = *o;
	else
		rpcrdma_options_init(&ct->opts);
	cl->cl_netid = strdup(addr->sa_family == AF_INET ? RPCRDMA_NETID : RPCRDMA_NETID6);
	if (!cl->cl_netid)
		return clnt_rdma_create_fail(ct, cl, RPC_SYSTEMERROR, ENOMEM);
	if (rpcrdma_options_check(&ct->opts))
		return clnt_rdma_create_fail(ct, cl, RPC_SYSTEMERROR, EINVAL);
	rpcrdma_options_ep_params(&ct->opts, &params);
	rc = rpcrdma_ep_connect(addr, &params, &ct->ep);
	if (!rc)
		rc = clnt_rdma_buffers(ct);
	if (rc)
		return clnt_rdma_create_fail(ct, cl, RPC_SYSTEMERROR, -rc);
	memcpy(&ct->addr, addr, addr->sa_family == AF_INET ? sizeof(struct sockaddr_in)
							    : sizeof(struct sockaddr_in6));
	ct->svcaddr = (struct netbuf){ .maxlen = sizeof(ct->addr), .buf = &ct->addr,
				       .len = addr->sa_family == AF_INET ?
				       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6) };
	rpcrdma_credits_client_init(&ct->credits, ct->opts.credits);
	ct->prog = prog;
	ct->vers = vers;
	ct->xid = clnt_rdma_initial_xid();
	cl->cl_ops = (struct clnt_ops *)&clnt_rdma_ops; /* libtirpc declares it non-const */
	cl->cl_private = ct;
	cl->cl_auth = authnone_create();
	return cl;
}

CLIENT *clnt_rdma_create(const char *host, rpcprog_t prog, rpcvers_t vers, const char *netid,
			 const struct rpcrdma_options *o)
{
	static const char *const both[] = { RPCRDMA_NETID, RPCRDMA_NETID6 };
	struct sockaddr_storage ss;
	int family, rc = -EINVAL;

	if (netid && !rpcrdma_netid_family(netid, &family))
		return clnt_rdma_create_fail(NULL, NULL, RPC_UNKNOWNPROTO, EINVAL);
	for (size_t i = 0; i < 2; i++) {
		const char *id = netid ? netid : both[i];

		rc = rpcrdma_rpcb_lookup(host, prog, vers, id, &ss);
		if (!rc)
			return clnt_rdma_tli_create((struct sockaddr *)&ss, prog, vers, o);
		if (netid)
			break;
	}
	if (rc == -EHOSTUNREACH)
		return clnt_rdma_create_fail(NULL, NULL, RPC_UNKNOWNHOST, EHOSTUNREACH);
	if (rc == -ENOENT)
		return clnt_rdma_create_fail(NULL, NULL, RPC_PROGNOTREGISTERED, ENOENT);
	if (rpc_createerr.cf_stat == RPC_SUCCESS)
		rpc_createerr.cf_stat = RPC_PMAPFAILURE;
	return NULL;
}
