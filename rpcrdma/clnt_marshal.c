/*
 * One call's bytes on the client: the RPC header and arguments
 * marshalled once (xdrmem for the header, the chunk-aware XDR stream
 * for the arguments, or the memory stream when the credential wraps the
 * body), the plan of how they and the reply travel (rpcrdma_plan_call),
 * the call's one buffer that holds its read-chunk sources and receives
 * its write and reply chunks, the transport header and the Send from
 * the call's slot, and the reply decoded from the inline body or the
 * reply chunk plus the write chunks, each echoed chunk checked against
 * what was offered.  Nothing here waits or takes ct->lock; clnt_rdma.c
 * says when each step runs.
 */
#include <errno.h>
#include <stdlib.h>

#include <rpc/rpc.h>

#include "rpcrdma/clnt_internal.h"

#define CLNT_STAGE_FIRST (64u << 10) /* marshal buffer tried before max_rpc_size */
#define CLNT_RB_ALIGN    8u
#define CLNT_REPLY_GUESS (64u << 10) /* reply room offered when the binding does not say */
/* The RPC call header: xid to procedure, credential and verifier of up to MAX_AUTH_BYTES each. */
#define CLNT_CALL_HDR_MAX (24u + 2 * (8u + MAX_AUTH_BYTES))

static uint32_t cap_u64(uint64_t v, uint32_t cap)
{
	return v < cap ? (uint32_t)v : cap;
}

/* ---- marshalling (once per call) -------------------------------------------------- */

/* Which items may be placed apart: the binding's, unless the credential wraps the body. */
static uint32_t clnt_rdma_arg_ddp(const struct clnt_rdma_call *c)
{
	return c->binding && !c->wrapped ? c->binding->arg_ddp : 0;
}

static uint32_t clnt_rdma_res_ddp(const struct clnt_rdma_call *c)
{
	return c->binding && !c->wrapped ? c->binding->res_ddp : 0;
}

static bool clnt_rdma_encode(AUTH *auth, struct clnt_rdma_call *c, xdrproc_t xargs, void *args)
{
	struct rpc_msg call = { .rm_xid = c->xid };
	rpcproc_t proc = c->proc;
	uint32_t hdr_len;
	XDR x;

	call.rm_call.cb_prog = c->prog;
	call.rm_call.cb_vers = c->vers;
	xdrmem_create(&x, (char *)c->stage, c->stage_cap, XDR_ENCODE);
	if (!xdr_callhdr(&x, &call) || !xdr_u_int32_t(&x, &proc) || !AUTH_MARSHALL(auth, &x))
		return false;
	/*
	 * A flavor that may wrap the body writes it through the memory
	 * stream: RPCSEC_GSS seeks forward and reads its body back
	 * (XDR_SETPOS, XDR_INLINE), which the chunk stream refuses, and
	 * nothing of such a body moves apart anyway.  The stream then holds
	 * the whole message inline.
	 */
	if (c->wrapped && !AUTH_WRAP(auth, &x, xargs, args))
		return false;
	hdr_len = XDR_GETPOS(&x);
	XDR_DESTROY(&x);
	rpcrdma_xdr_encode_init(&c->s, c->stage, c->stage_cap, hdr_len, clnt_rdma_arg_ddp(c),
				RPCRDMA_DDP_THRESHOLD);
	return c->wrapped || AUTH_WRAP(auth, &c->s.xdr, xargs, args);
}

/* The stage for a wrapped call: the arguments' size, or the largest when xdr_sizeof() cannot tell. */
static uint32_t clnt_rdma_wrapped_cap(xdrproc_t xargs, void *args, uint32_t max_rpc_size)
{
	unsigned long size = xdr_sizeof(xargs, args);

	/* 0 also when the routine fails in xdr_sizeof's stream: it cannot seek */
	if (!size && xargs != RPCRDMA_XDR_VOID)
		return max_rpc_size;
	return cap_u64((uint64_t)size + CLNT_CALL_HDR_MAX + RPCRDMA_AUTH_WRAP_MAX, max_rpc_size);
}

/*
 * Small calls marshal into a small buffer; a long one is marshalled
 * again.  A flavor that wraps the body marshals once (RPCSEC_GSS spends
 * a sequence number and a checksum on each), into a buffer sized first.
 */
enum clnt_stat clnt_rdma_marshal(AUTH *auth, uint32_t max_rpc_size,
					struct clnt_rdma_call *c, xdrproc_t xargs, void *args)
{
	uint32_t caps[2] = { CLNT_STAGE_FIRST < max_rpc_size ? CLNT_STAGE_FIRST : max_rpc_size,
			     max_rpc_size };
	int tries = 2;

	c->xargs = xargs;
	c->args = args;
	c->wrapped = !rpcrdma_auth_ddp(auth->ah_cred.oa_flavor);
	if (c->wrapped)
		caps[0] = clnt_rdma_wrapped_cap(xargs, args, max_rpc_size);
	if (c->wrapped || caps[0] == caps[1])
		tries = 1;
	for (int i = 0; i < tries; i++) {
		free(c->stage);
		c->stage_cap = caps[i];
		c->stage = malloc(c->stage_cap);
		if (!c->stage)
			return clnt_call_fail(c, RPC_SYSTEMERROR, ENOMEM);
		if (clnt_rdma_encode(auth, c, xargs, args))
			return RPC_SUCCESS;
		if (c->s.status != RPCRDMA_XDR_NO_SPACE && c->s.status != RPCRDMA_XDR_OK)
			break;
	}
	return clnt_call_fail(c, RPC_CANTENCODEARGS, E2BIG);
}

/* ---- planning and the call's buffer ----------------------------------------------------- */

/*
 * The largest reply the binding announces.  Without one, offer room for
 * a modest reply first; a server that answers ERR_CHUNK gets the call
 * again with room for max_rpc_size (clnt_rdma_run).
 */
static uint64_t clnt_rdma_reply_guess(const struct clnt_rdma_call *c, const void *args)
{
	const struct rpcrdma_ulb_proc *b = c->binding;
	uint64_t n;

	if (!b || !b->reply_max)
		return c->big_reply ? UINT32_MAX : CLNT_REPLY_GUESS;
	n = b->reply_max(args);
	if (c->wrapped) /* the results travel whole, with what DDP would have moved */
		for (uint32_t i = 0; i < rpcrdma_mask_count(b->res_ddp); i++)
			n += (b->res_max ? b->res_max(args, i) : UINT32_MAX) + 3;
	return c->wrapped ? n + RPCRDMA_AUTH_WRAP_MAX : n;
}

enum clnt_stat clnt_rdma_plan(const struct clnt_rdma_conn *cn, uint32_t max,
				     struct clnt_rdma_call *c)
{
	const void *args = c->args;
	const struct rpcrdma_ulb_proc *b = c->binding;
	uint32_t result_max[RPCRDMA_MAX_WRITE_CHUNKS];
	struct rpcrdma_ddp_item items[RPCRDMA_XDR_MAX_ITEMS];
	struct rpcrdma_call_desc desc = { .xdr_len = c->s.pos, .args = items,
					  .nargs = c->s.nitems, .result_max = result_max };
	struct rpcrdma_plan_limits lim = {
		.inline_send = cn->inline_send,
		.inline_recv = cn->inline_recv,
		.ddp_threshold = RPCRDMA_DDP_THRESHOLD,
		.max_seg_bytes = RPCRDMA_SEG_BYTES,
		.max_chunk_segs = RPCRDMA_CHUNK_SEGS,
		.max_read_segs = RPCRDMA_CALL_READ_SEGS,
		.max_write_chunks = RPCRDMA_MAX_WRITE_CHUNKS,
	};

	rpcrdma_stream_items(&c->s, items);
	desc.nresults = rpcrdma_mask_count(clnt_rdma_res_ddp(c));
	if (desc.nresults > RPCRDMA_MAX_WRITE_CHUNKS)
		desc.nresults = RPCRDMA_MAX_WRITE_CHUNKS;
	for (uint32_t i = 0; i < desc.nresults; i++)
		result_max[i] = b->res_max ? cap_u64(b->res_max(args, i), max) : max;
	desc.reply_max = cap_u64((uint64_t)RPCRDMA_REPLY_HDR_MAX + clnt_rdma_reply_guess(c, args),
				 max);
	if (rpcrdma_plan_call(&desc, &lim, &c->plan) != RPCRDMA_PLAN_OK)
		return clnt_call_fail(c, RPC_CANTENCODEARGS, E2BIG);
	return RPC_SUCCESS;
}

static uint64_t rb_place(uint64_t *at, uint32_t len)
{
	uint64_t off = *at;

	*at += ((uint64_t)len + CLNT_RB_ALIGN - 1) & ~(uint64_t)(CLNT_RB_ALIGN - 1);
	return off;
}

/* Where each read source, write chunk and the reply chunk lies in the call's buffer. */
enum clnt_stat clnt_rdma_layout(struct clnt_rdma_call *c)
{
	uint64_t at = 0;

	for (uint32_t i = 0; i < c->plan.nreads; i++)
		c->read_off[i] = (uint32_t)rb_place(&at, c->plan.reads[i].src.length);
	for (uint32_t i = 0; i < c->plan.nwrites; i++)
		c->write_off[i] = (uint32_t)rb_place(&at, c->plan.writes[i].length);
	if (c->plan.has_reply)
		c->reply_off = (uint32_t)rb_place(&at, c->plan.reply.length);
	if (at > UINT32_MAX / 2)
		return clnt_call_fail(c, RPC_CANTENCODEARGS, E2BIG);
	c->rb_len = (uint32_t)at;
	return RPC_SUCCESS;
}

/* Fill the call's buffer (c->rb_len > 0) and, for per-call regions, register it. */
enum clnt_stat clnt_rdma_fill(struct clnt_rdma_conn *cn, struct clnt_rdma_call *c)
{
	int rc = rpcrdma_reg_get(cn->reg, c->rb_len, &c->rb);

	if (rc)
		return clnt_call_fail(c, RPC_CANTSEND, -rc);
	for (uint32_t i = 0; i < c->plan.nreads; i++)
		if (!rpcrdma_stream_copy(&c->s, c->plan.reads[i].src.offset,
					 c->plan.reads[i].src.length, c->rb->addr + c->read_off[i]))
			return clnt_call_fail(c, RPC_CANTENCODEARGS, EINVAL);
	if (rpcrdma_reg_strategy(cn->reg) != RPCRDMA_REG_PER_CALL_MR)
		return RPC_SUCCESS;
	rc = rpcrdma_reg_expose(cn->reg, c->rb, c->rb_len, c->slot);
	return rc ? clnt_call_fail(c, RPC_CANTSEND, -rc) : RPC_SUCCESS;
}

/* ---- the transport header and the Send ------------------------------------------------ */

static uint32_t segs_cut(uint32_t rkey, const uint8_t *addr, uint32_t len,
			 struct rpcrdma_segment *segs)
{
	uint32_t n = 0;

	while (len && n < RPCRDMA_CHUNK_SEGS) {
		uint32_t take = len < RPCRDMA_SEG_BYTES ? len : RPCRDMA_SEG_BYTES;

		segs[n++] = (struct rpcrdma_segment){ rkey, take, (uint64_t)(uintptr_t)addr };
		addr += take;
		len -= take;
	}
	return len ? 0 : n;
}

static bool clnt_rdma_add_chunks(struct clnt_rdma_call *c)
{
	struct rpcrdma_segment segs[RPCRDMA_CHUNK_SEGS];
	const uint8_t *base = c->rb ? c->rb->addr : NULL;
	uint32_t rkey = c->rb ? c->rb->rkey : 0;
	uint32_t n;

	for (uint32_t i = 0; i < c->plan.nreads; i++) {
		const struct rpcrdma_plan_read *r = &c->plan.reads[i];
		struct rpcrdma_segment seg = { rkey, r->src.length,
					       (uint64_t)(uintptr_t)(base + c->read_off[i]) };

		if (rpcrdma_header_add_read(&c->hdr, r->position, &seg) != RPCRDMA_HDR_OK)
			return false;
	}
	for (uint32_t i = 0; i < c->plan.nwrites; i++) {
		n = segs_cut(rkey, base + c->write_off[i], c->plan.writes[i].length, segs);
		if ((!n && c->plan.writes[i].length) ||
		    rpcrdma_header_add_write_chunk(&c->hdr, segs, n) != RPCRDMA_HDR_OK)
			return false;
	}
	if (!c->plan.has_reply)
		return true;
	n = segs_cut(rkey, base + c->reply_off, c->plan.reply.length, segs);
	return (n || !c->plan.reply.length) &&
	       rpcrdma_header_set_reply_chunk(&c->hdr, segs, n) == RPCRDMA_HDR_OK;
}

/* Expose (windows), build the header, fill the slot's buffer, Send.  ct->lock held. */
enum clnt_stat clnt_rdma_post(struct clnt_rdma_conn *cn, struct clnt_rdma_call *c)
{
	uint8_t *buf = clnt_conn_send_buf(cn, c->slot);
	size_t hlen;
	uint32_t at;
	int rc;

	if (cn->dead)
		return clnt_call_fail(c, RPC_CANTSEND, ENOTCONN);
	if (c->rb && rpcrdma_reg_strategy(cn->reg) == RPCRDMA_REG_MEMORY_WINDOW) {
		rc = rpcrdma_reg_expose(cn->reg, c->rb, c->rb_len, c->slot);
		if (rc)
			return clnt_call_fail(c, RPC_CANTSEND, -rc);
	}
	rpcrdma_header_init(&c->hdr, c->xid, rpcrdma_credits_client_request(&cn->credits),
			    c->plan.type);
	if (!clnt_rdma_add_chunks(c) ||
	    rpcrdma_header_encode(&c->hdr, buf, cn->send_size, &hlen) != RPCRDMA_HDR_OK ||
	    c->plan.inline_len > cn->send_size - hlen)
		return clnt_call_fail(c, RPC_CANTENCODEARGS, E2BIG);
	at = (uint32_t)hlen;
	if (c->plan.type == RDMA_MSG)
		for (uint32_t i = 0; i < c->plan.nranges; i++) {
			const struct rpcrdma_range *r = &c->plan.ranges[i];

			if (!rpcrdma_stream_copy(&c->s, r->offset, r->length, buf + at))
				return clnt_call_fail(c, RPC_CANTENCODEARGS, EINVAL);
			at += r->length;
		}
	rc = clnt_conn_post_send(cn, c, at);
	if (rc)
		return clnt_call_fail(c, RPC_CANTSEND, -rc);
	c->sent = true;
	return RPC_SUCCESS;
}

/* ---- the reply ------------------------------------------------------------------------ */

static enum clnt_stat clnt_rdma_rdma_error(struct clnt_rdma_call *c, const struct rpcrdma_header *h)
{
	if (h->err == ERR_VERS) {
		/* re_vers shares a union with re_errno: no errno, as libtirpc's _seterr_reply */
		c->err.re_status = RPC_VERSMISMATCH;
		c->err.re_vers.low = h->vers_low;
		c->err.re_vers.high = h->vers_high;
		return RPC_VERSMISMATCH;
	}
	/* an error code version 1 does not define is no reason to resend */
	c->err_chunk = h->err == ERR_CHUNK;
	return clnt_call_fail(c, RPC_CANTDECODERES, EPROTO);
}

/* Where the RPC reply is: inline behind the header or in the reply chunk. */
static enum clnt_stat clnt_rdma_reply_body(struct clnt_rdma_call *c, const uint8_t *buf,
					   const struct rpcrdma_header *h, size_t hlen,
					   const uint8_t **body, uint32_t *blen)
{
	if (h->type == RDMA_MSG && !h->nreads) {
		*body = buf + hlen;
		*blen = c->recv_len - (uint32_t)hlen;
		return RPC_SUCCESS;
	}
	if (h->type == RDMA_NOMSG && !h->nreads && h->has_reply && c->hdr.has_reply &&
	    rpcrdma_chunk_echo_fits(h, &h->reply, &c->hdr, &c->hdr.reply)) {
		*body = c->rb->addr + c->reply_off;
		*blen = rpcrdma_chunk_length(h, &h->reply);
		return RPC_SUCCESS;
	}
	return clnt_call_fail(c, RPC_CANTDECODERES, EPROTO);
}

/*
 * The verifier of an accepted reply, which xdr_replymsg allocated.  A
 * denied reply's fields share its memory (RPC_MISMATCH's high version
 * lies where the verifier's pointer does): nothing to free there.
 */
static void clnt_rdma_verf_free(struct rpc_msg *msg)
{
	XDR x = { .x_op = XDR_FREE };

	if (msg->rm_reply.rp_stat == MSG_ACCEPTED && msg->acpted_rply.ar_verf.oa_base)
		xdr_opaque_auth(&x, &msg->acpted_rply.ar_verf);
}

/*
 * An AUTH_SHORT verifier offers a shorthand for the credential.  Taking
 * it (libtirpc's authunix_validate) rewrites the AUTH that other threads
 * are marshalling with (rpcrdma_auth_pipelined), so a pipelined flavor
 * declines it and keeps sending its full credential, as the Linux client
 * does; RFC 5531 leaves the shorthand's use to the client.
 */
static bool clnt_rdma_verf_ok(AUTH *auth, struct opaque_auth *verf)
{
	if (verf->oa_flavor == AUTH_SHORT && rpcrdma_auth_pipelined(auth->ah_cred.oa_flavor))
		return true;
	return AUTH_VALIDATE(auth, verf);
}

static enum clnt_stat clnt_rdma_results(AUTH *auth, struct clnt_rdma_call *c, const uint8_t *body,
					uint32_t blen, const struct rpcrdma_header *h,
					xdrproc_t xres, void *res)
{
	struct rpcrdma_xdr_item items[RPCRDMA_MAX_WRITE_CHUNKS];
	struct rpc_msg msg = { .rm_xid = 0 };
	uint32_t pos;
	XDR x;

	if (h->nwrites > c->hdr.nwrites)
		return clnt_call_fail(c, RPC_CANTDECODERES, EPROTO);
	for (uint32_t i = 0; i < h->nwrites; i++) {
		if (!rpcrdma_chunk_echo_fits(h, &h->writes[i], &c->hdr, &c->hdr.writes[i]))
			return clnt_call_fail(c, RPC_CANTDECODERES, EPROTO);
		items[i] = (struct rpcrdma_xdr_item){ 0, rpcrdma_chunk_length(h, &h->writes[i]),
						      c->rb->addr + c->write_off[i] };
	}
	msg.acpted_rply.ar_verf = _null_auth;
	msg.acpted_rply.ar_results.where = NULL;
	msg.acpted_rply.ar_results.proc = RPCRDMA_XDR_VOID;
	xdrmem_create(&x, (char *)(uintptr_t)body, blen, XDR_DECODE);
	if (!xdr_replymsg(&x, &msg) || msg.rm_xid != c->xid) {
		clnt_rdma_verf_free(&msg);
		return clnt_call_fail(c, RPC_CANTDECODERES, EPROTO);
	}
	pos = XDR_GETPOS(&x);
	_seterr_reply(&msg, &c->err);
	if (c->err.re_status == RPC_SUCCESS) {
		if (!clnt_rdma_verf_ok(auth, &msg.acpted_rply.ar_verf)) {
			c->err.re_status = RPC_AUTHERROR;
			c->err.re_why = AUTH_INVALIDRESP;
		} else if (c->wrapped) { /* no write chunks: the memory stream, as for encoding */
			if (!AUTH_UNWRAP(auth, &x, xres, res))
				clnt_call_fail(c, RPC_CANTDECODERES, 0);
		} else {
			rpcrdma_xdr_decode_init(&c->s, body, blen, pos, clnt_rdma_res_ddp(c), items,
						h->nwrites);
			if (!AUTH_UNWRAP(auth, &c->s.xdr, xres, res))
				clnt_call_fail(c, RPC_CANTDECODERES, 0);
		}
	}
	clnt_rdma_verf_free(&msg);
	return c->err.re_status;
}

/* Decode the reply in the call's receive buffer.  Without ct->lock. */
enum clnt_stat clnt_rdma_decode(AUTH *auth, struct clnt_rdma_call *c, xdrproc_t xres,
				       void *res)
{
	const uint8_t *buf = rpcrdma_ep_recv_buf(c->conn->ep, c->recv_index);
	const uint8_t *body;
	struct rpcrdma_header h;
	enum clnt_stat st;
	uint32_t blen;
	size_t hlen;

	switch (rpcrdma_header_decode(&h, buf, c->recv_len, NULL, &hlen)) {
	case RPCRDMA_HDR_OK:
		break;
	case RPCRDMA_HDR_BAD_VERSION: /* an ERR_VERS in the server's own version says as much */
		if (h.type == RDMA_ERROR && h.err == ERR_VERS)
			return clnt_rdma_rdma_error(c, &h);
		return clnt_call_fail(c, RPC_CANTDECODERES, EPROTO);
	default:
		return clnt_call_fail(c, RPC_CANTDECODERES, EPROTO);
	}
	if (h.type == RDMA_ERROR)
		return clnt_rdma_rdma_error(c, &h);
	st = clnt_rdma_reply_body(c, buf, &h, hlen, &body, &blen);
	if (st == RPC_SUCCESS)
		st = clnt_rdma_results(auth, c, body, blen, &h, xres, res);
	return st;
}
