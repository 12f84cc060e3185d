/*
 * Chunk planning for calls (client) and replies (server).  Sizes are
 * computed in 64 bits and compared with the negotiated thresholds; no
 * plan ever describes a header that would not fit its inline threshold.
 */
#include "rpcrdma/chunk_plan.h"
#include "xdr/minmax.h"
#include "xdr/names.h"

#include <stdbool.h>

#include "xdr/bytes.h"

static const char *const status_names[] = {
	[RPCRDMA_PLAN_OK] = "ok",
	[RPCRDMA_PLAN_BAD_LIMITS] = "segment size or count limit is zero",
	[RPCRDMA_PLAN_BAD_ITEM] = "DDP item unaligned, unsorted, overlapping or outside the message",
	[RPCRDMA_PLAN_TOO_MANY_SEGMENTS] = "too many segments",
	[RPCRDMA_PLAN_TOO_MANY_CHUNKS] = "too many write chunks",
	[RPCRDMA_PLAN_HEADER_TOO_LARGE] = "chunk lists exceed the inline threshold",
	[RPCRDMA_PLAN_WRITE_CHUNK_TOO_SMALL] = "result longer than its write chunk",
	[RPCRDMA_PLAN_REPLY_TOO_LARGE] = "reply too long for inline and no adequate reply chunk",
};

const char *rpcrdma_plan_status_str(enum rpcrdma_plan_status status)
{
	return RPCRDMA_NAME(status_names, status, "unknown plan status");
}

static uint64_t segs_for(uint64_t len, uint32_t max_seg)
{
	return len ? (len + max_seg - 1) / max_seg : 0;
}

/* Transport header bytes for the given chunk lists (RFC 5666 section 4.3). */
static uint64_t header_bytes(uint64_t read_segs, const uint32_t *write_segs,
			     uint32_t nwrites, bool reply, uint64_t reply_segs)
{
	uint64_t n = RPCRDMA_HDR_FIXED_BYTES + read_segs * RPCRDMA_READ_SEG_BYTES + 4;

	for (uint32_t i = 0; i < nwrites; i++)
		n += 8 + (uint64_t)write_segs[i] * RPCRDMA_SEGMENT_BYTES;
	n += 4 + 4;
	if (reply)
		n += 4 + reply_segs * RPCRDMA_SEGMENT_BYTES;
	return n;
}

static bool items_valid(const struct rpcrdma_ddp_item *items, uint32_t n,
			uint32_t xdr_len)
{
	uint64_t prev_end = 0;

	if (n && !items)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t end = (uint64_t)items[i].offset + rpcrdma_xdr_roundup(items[i].length);

		if (items[i].offset & 3 || items[i].offset < prev_end || end > xdr_len)
			return false;
		prev_end = end;
	}
	return true;
}

/*
 * The stream left when the chosen items (data and roundup) are taken out.
 * Returns its length; @ranges gets its non-empty pieces in order.
 */
static uint32_t reduce(uint32_t xdr_len, const struct rpcrdma_ddp_item *items,
		       uint32_t n, const bool *chosen, struct rpcrdma_range *ranges,
		       uint32_t *nranges)
{
	uint32_t start = 0, total = 0;

	*nranges = 0;
	for (uint32_t i = 0; i <= n; i++) {
		uint32_t end = i < n ? items[i].offset : xdr_len;

		if (i < n && !chosen[i])
			continue;
		if (end > start) {
			ranges[(*nranges)++] = (struct rpcrdma_range){ start, end - start };
			total += end - start;
		}
		if (i < n)
			start = items[i].offset + (uint32_t)rpcrdma_xdr_roundup(items[i].length);
	}
	return total;
}

static bool limits_valid(const struct rpcrdma_plan_limits *lim)
{
	return lim->max_seg_bytes && lim->max_chunk_segs;
}

static bool ddp_worthy(uint32_t length, const struct rpcrdma_plan_limits *lim)
{
	return length && length >= lim->ddp_threshold;
}

/* ---- calls ----------------------------------------------------------------- */

static enum rpcrdma_plan_status offer_chunk(uint64_t length,
					    const struct rpcrdma_plan_limits *lim,
					    struct rpcrdma_plan_chunk *c)
{
	uint64_t nsegs = segs_for(length, lim->max_seg_bytes);

	if (nsegs > lim->max_chunk_segs || nsegs > RPCRDMA_MAX_SEGS || length > UINT32_MAX)
		return RPCRDMA_PLAN_TOO_MANY_SEGMENTS;
	c->length = (uint32_t)length;
	c->nsegs = (uint32_t)nsegs;
	return RPCRDMA_PLAN_OK;
}

static void write_seg_counts(const struct rpcrdma_call_plan *plan, uint32_t *out)
{
	for (uint32_t i = 0; i < plan->nwrites; i++)
		out[i] = plan->writes[i].nsegs;
}

static uint64_t call_header_bytes(const struct rpcrdma_call_plan *plan, uint64_t read_segs)
{
	uint32_t wsegs[RPCRDMA_MAX_WRITE_CHUNKS];

	write_seg_counts(plan, wsegs);
	return header_bytes(read_segs, wsegs, plan->nwrites, plan->has_reply,
			    plan->reply.nsegs);
}

/* Write chunks for large results, then a reply chunk if the rest may not fit. */
static enum rpcrdma_plan_status plan_reply_chunks(const struct rpcrdma_call_desc *call,
						  const struct rpcrdma_plan_limits *lim,
						  struct rpcrdma_call_plan *plan)
{
	uint64_t all_inline = call->reply_max, rest = call->reply_max, segs = 0;
	enum rpcrdma_plan_status st;
	bool offering = true;

	for (uint32_t i = 0; i < call->nresults; i++)
		all_inline += rpcrdma_xdr_roundup(call->result_max[i]);
	if (header_bytes(0, NULL, 0, false, 0) + all_inline <= lim->inline_recv)
		return RPCRDMA_PLAN_OK;
	/*
	 * The server fills the Write list's chunks with the DDP-eligible
	 * results in order, the k-th chunk the k-th result: so chunks go to
	 * a prefix of them, and from the first result too small for one on,
	 * every result is returned inline or in the reply chunk.
	 */
	for (uint32_t i = 0; i < call->nresults; i++) {
		offering = offering && ddp_worthy(call->result_max[i], lim);
		if (!offering) {
			rest += rpcrdma_xdr_roundup(call->result_max[i]);
			continue;
		}
		if (plan->nwrites == min_u32(lim->max_write_chunks, RPCRDMA_MAX_WRITE_CHUNKS))
			return RPCRDMA_PLAN_TOO_MANY_CHUNKS;
		st = offer_chunk(call->result_max[i], lim, &plan->writes[plan->nwrites]);
		if (st != RPCRDMA_PLAN_OK)
			return st;
		segs += plan->writes[plan->nwrites++].nsegs;
	}
	if (call_header_bytes(plan, 0) + rest > lim->inline_recv) {
		st = offer_chunk(rpcrdma_xdr_roundup(rest), lim, &plan->reply);
		if (st != RPCRDMA_PLAN_OK)
			return st;
		plan->has_reply = 1;
		segs += plan->reply.nsegs;
	}
	return segs > RPCRDMA_MAX_SEGS ? RPCRDMA_PLAN_TOO_MANY_SEGMENTS : RPCRDMA_PLAN_OK;
}

static void emit_reads(struct rpcrdma_call_plan *plan, uint32_t position,
		       struct rpcrdma_range src, uint32_t max_seg)
{
	while (src.length) {
		uint32_t len = min_u32(src.length, max_seg);

		plan->reads[plan->nreads++] = (struct rpcrdma_plan_read){
			position, { src.offset, len } };
		src.offset += len;
		src.length -= len;
	}
}

static uint64_t count_read_segs(const struct rpcrdma_call_desc *call, const bool *chosen,
				uint32_t max_seg)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < call->nargs; i++)
		if (chosen[i])
			n += segs_for(call->args[i].length, max_seg);
	return n;
}

static enum rpcrdma_plan_status plan_call_body(const struct rpcrdma_call_desc *call,
					       const struct rpcrdma_plan_limits *lim,
					       struct rpcrdma_call_plan *plan)
{
	bool chosen[RPCRDMA_MAX_READ_SEGS] = { false };
	uint32_t max_reads = min_u32(lim->max_read_segs, RPCRDMA_MAX_READ_SEGS);
	uint64_t data_segs, pz_segs = 0;
	uint32_t reduced;

	plan->type = RDMA_MSG;
	if (call_header_bytes(plan, 0) + call->xdr_len <= lim->inline_send) {
		plan->inline_len = reduce(call->xdr_len, call->args, call->nargs, chosen,
					  plan->ranges, &plan->nranges);
		plan->header_len = (uint32_t)call_header_bytes(plan, 0);
		return RPCRDMA_PLAN_OK;
	}
	for (uint32_t i = 0; i < call->nargs; i++)
		chosen[i] = ddp_worthy(call->args[i].length, lim);
	data_segs = count_read_segs(call, chosen, lim->max_seg_bytes);
	reduced = reduce(call->xdr_len, call->args, call->nargs, chosen, plan->ranges,
			 &plan->nranges);
	if (call_header_bytes(plan, data_segs) + reduced > lim->inline_send) {
		plan->type = RDMA_NOMSG;
		for (uint32_t i = 0; i < plan->nranges; i++)
			pz_segs += segs_for(plan->ranges[i].length, lim->max_seg_bytes);
	}
	if (data_segs + pz_segs > max_reads)
		return RPCRDMA_PLAN_TOO_MANY_SEGMENTS;
	if (call_header_bytes(plan, data_segs + pz_segs) > lim->inline_send)
		return RPCRDMA_PLAN_HEADER_TOO_LARGE;
	if (plan->type == RDMA_NOMSG)
		for (uint32_t i = 0; i < plan->nranges; i++)
			emit_reads(plan, 0, plan->ranges[i], lim->max_seg_bytes);
	for (uint32_t i = 0; i < call->nargs; i++)
		if (chosen[i])
			emit_reads(plan, call->args[i].offset,
				   (struct rpcrdma_range){ call->args[i].offset, call->args[i].length },
				   lim->max_seg_bytes);
	plan->inline_len = plan->type == RDMA_MSG ? reduced : 0;
	plan->header_len = (uint32_t)call_header_bytes(plan, plan->nreads);
	return RPCRDMA_PLAN_OK;
}

enum rpcrdma_plan_status rpcrdma_plan_call(const struct rpcrdma_call_desc *call,
					   const struct rpcrdma_plan_limits *lim,
					   struct rpcrdma_call_plan *plan)
{
	enum rpcrdma_plan_status st;

	plan->nranges = plan->nreads = plan->nwrites = plan->has_reply = 0;
	plan->reply = (struct rpcrdma_plan_chunk){ 0, 0 };
	plan->header_len = plan->inline_len = 0;
	plan->type = RDMA_MSG;
	if (!limits_valid(lim))
		return RPCRDMA_PLAN_BAD_LIMITS;
	if (call->nargs > RPCRDMA_MAX_READ_SEGS || !items_valid(call->args, call->nargs, call->xdr_len))
		return RPCRDMA_PLAN_BAD_ITEM;
	if (call->nresults && !call->result_max)
		return RPCRDMA_PLAN_BAD_ITEM;
	st = plan_reply_chunks(call, lim, plan);
	if (st != RPCRDMA_PLAN_OK)
		return st;
	return plan_call_body(call, lim, plan);
}

/* ---- replies ----------------------------------------------------------------- */

static uint64_t reply_header_bytes(const struct rpcrdma_offered_chunks *offered, bool nomsg)
{
	return header_bytes(0, offered->write_segs, offered->nwrites, nomsg,
			    offered->reply_segs);
}

enum rpcrdma_plan_status rpcrdma_plan_reply(const struct rpcrdma_reply_desc *reply,
					    const struct rpcrdma_offered_chunks *offered,
					    uint32_t inline_send,
					    struct rpcrdma_reply_plan *plan)
{
	bool chosen[RPCRDMA_MAX_READ_SEGS] = { false };

	plan->type = RDMA_MSG;
	plan->nranges = plan->nwrites = plan->header_len = plan->body_len = 0;
	if (reply->nresults > RPCRDMA_MAX_READ_SEGS || offered->nwrites > RPCRDMA_MAX_WRITE_CHUNKS ||
	    !items_valid(reply->results, reply->nresults, reply->xdr_len))
		return RPCRDMA_PLAN_BAD_ITEM;
	for (uint32_t i = 0; i < offered->nwrites; i++) {
		plan->writes[i] = (struct rpcrdma_range){ 0, 0 };
		if (i >= reply->nresults)
			continue;
		if (reply->results[i].length > offered->write_len[i])
			return RPCRDMA_PLAN_WRITE_CHUNK_TOO_SMALL;
		plan->writes[i] = (struct rpcrdma_range){ reply->results[i].offset,
							  reply->results[i].length };
		chosen[i] = true;
	}
	plan->nwrites = offered->nwrites;
	plan->body_len = reduce(reply->xdr_len, reply->results, reply->nresults, chosen,
				plan->ranges, &plan->nranges);
	if (reply_header_bytes(offered, false) + plan->body_len <= inline_send) {
		plan->header_len = (uint32_t)reply_header_bytes(offered, false);
		return RPCRDMA_PLAN_OK;
	}
	if (!offered->has_reply || plan->body_len > offered->reply_len ||
	    reply_header_bytes(offered, true) > inline_send)
		return RPCRDMA_PLAN_REPLY_TOO_LARGE;
	plan->type = RDMA_NOMSG;
	plan->header_len = (uint32_t)reply_header_bytes(offered, true);
	return RPCRDMA_PLAN_OK;
}

void rpcrdma_plan_fill_segments(struct rpcrdma_segment *segs, uint32_t nsegs,
				uint32_t bytes)
{
	for (uint32_t i = 0; i < nsegs; i++) {
		uint32_t take = min_u32(bytes, segs[i].length);

		segs[i].length = take;
		bytes -= take;
	}
}
