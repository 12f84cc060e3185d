/*
 * Chunk planning.  Besides the single decisions, every plan is turned
 * into a real transport header and fed to the decoder, so the planner
 * and the decoder agree on positions, roundup and sizes.
 */
#include <criterion/criterion.h>

#include "rpcrdma/chunk_plan.h"
#include "xdr/bytes.h"
#include "xdr/header.h"

static const struct rpcrdma_plan_limits lim = {
	.inline_send = 1024,
	.inline_recv = 1024,
	.ddp_threshold = 1024,
	.max_seg_bytes = 1u << 20,
	.max_chunk_segs = 64,
	.max_read_segs = 64,
	.max_write_chunks = 8,
};

static struct rpcrdma_call_plan plan;
static struct rpcrdma_reply_plan rplan;

static enum rpcrdma_plan_status plan_call(uint32_t xdr_len, const struct rpcrdma_ddp_item *args,
					  uint32_t nargs, uint32_t reply_max,
					  const struct rpcrdma_plan_limits *l)
{
	struct rpcrdma_call_desc d = { xdr_len, args, nargs, NULL, 0, reply_max };

	return rpcrdma_plan_call(&d, l, &plan);
}

/* Build the header the plan describes, prepend it to the inline bytes, decode. */
static void assert_plan_decodes(uint32_t xid)
{
	static struct rpcrdma_header h, back;
	static uint8_t buf[1 << 17];
	size_t n, hlen;

	rpcrdma_header_init(&h, xid, 32, plan.type);
	for (uint32_t i = 0; i < plan.nreads; i++) {
		struct rpcrdma_segment s = { 0x1000 + i, plan.reads[i].src.length,
					     0x7f0000000000ull + plan.reads[i].src.offset };

		cr_assert_eq(rpcrdma_header_add_read(&h, plan.reads[i].position, &s), RPCRDMA_HDR_OK);
	}
	for (uint32_t i = 0; i < plan.nwrites; i++) {
		struct rpcrdma_segment segs[64];
		uint32_t left = plan.writes[i].length;

		for (uint32_t s = 0; s < plan.writes[i].nsegs; s++) {
			uint32_t len = left < lim.max_seg_bytes ? left : lim.max_seg_bytes;

			segs[s] = (struct rpcrdma_segment){ 0x2000 + s, len, 0x100000ull * s };
			left -= len;
		}
		cr_assert_eq(rpcrdma_header_add_write_chunk(&h, segs, plan.writes[i].nsegs),
			     RPCRDMA_HDR_OK);
	}
	if (plan.has_reply) {
		struct rpcrdma_segment segs[64];

		for (uint32_t s = 0; s < plan.reply.nsegs; s++)
			segs[s] = (struct rpcrdma_segment){ 0x3000 + s, lim.max_seg_bytes, 0 };
		cr_assert_eq(rpcrdma_header_set_reply_chunk(&h, segs, plan.reply.nsegs),
			     RPCRDMA_HDR_OK);
	}
	cr_assert_eq(rpcrdma_header_encode(&h, buf, sizeof(buf), &n), RPCRDMA_HDR_OK);
	cr_assert_eq(n, plan.header_len, "planned header size");
	cr_assert_leq(n + plan.inline_len, lim.inline_send, "Send fits the inline threshold");
	memset(buf + n, 0, plan.inline_len);
	if (plan.inline_len >= 4)
		rpcrdma_store_be32(buf + n, xid);
	cr_assert_eq(rpcrdma_header_decode(&back, buf, n + plan.inline_len, NULL, &hlen),
		     RPCRDMA_HDR_OK, "%s", rpcrdma_hdr_status_str(
			     rpcrdma_header_decode(&back, buf, n + plan.inline_len, NULL, &hlen)));
}

static uint64_t read_bytes_at(uint32_t position)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < plan.nreads; i++)
		if (plan.reads[i].position == position)
			total += plan.reads[i].src.length;
	return total;
}

Test(chunk_plan, small_call_goes_inline)
{
	cr_assert_eq(plan_call(100, NULL, 0, 100, &lim), RPCRDMA_PLAN_OK);
	cr_assert_eq(plan.type, RDMA_MSG);
	cr_assert_eq(plan.nreads, 0);
	cr_assert_eq(plan.nwrites + plan.has_reply, 0);
	cr_assert_eq(plan.header_len, 28);
	cr_assert_eq(plan.inline_len, 100);
	cr_assert_eq(plan.nranges, 1);
	assert_plan_decodes(1);
}

Test(chunk_plan, inline_threshold_boundary)
{
	/* 28 header bytes + 996 = 1024 exactly: inline; 1000 is not. */
	cr_assert_eq(plan_call(996, NULL, 0, 100, &lim), RPCRDMA_PLAN_OK);
	cr_assert_eq(plan.type, RDMA_MSG);
	cr_assert_eq(plan.inline_len, 996);
	cr_assert_eq(plan_call(1000, NULL, 0, 100, &lim), RPCRDMA_PLAN_OK);
	cr_assert_eq(plan.type, RDMA_NOMSG);
	cr_assert_eq(plan.inline_len, 0);
	cr_assert_eq(read_bytes_at(0), 1000);
	assert_plan_decodes(2);
}

Test(chunk_plan, ddp_argument_becomes_read_chunk_at_its_position)
{
	struct rpcrdma_ddp_item arg = { 120, 4096 };

	cr_assert_eq(plan_call(120 + 4096 + 8, &arg, 1, 100, &lim), RPCRDMA_PLAN_OK);
	cr_assert_eq(plan.type, RDMA_MSG);
	cr_assert_eq(plan.nreads, 1);
	cr_assert_eq(plan.reads[0].position, 120);
	cr_assert_eq(plan.reads[0].src.offset, 120);
	cr_assert_eq(plan.reads[0].src.length, 4096);
	cr_assert_eq(plan.inline_len, 128);
	cr_assert_eq(plan.nranges, 2);
	cr_assert_eq(plan.ranges[1].offset, 120 + 4096);
	cr_assert_eq(plan.ranges[1].length, 8);
	assert_plan_decodes(3);
}

Test(chunk_plan, roundup_leaves_with_the_item_and_is_not_in_the_chunk)
{
	struct rpcrdma_ddp_item arg = { 200, 1025 };

	cr_assert_eq(plan_call(200 + 1028 + 4, &arg, 1, 100, &lim), RPCRDMA_PLAN_OK);
	cr_assert_eq(plan.reads[0].src.length, 1025);
	cr_assert_eq(plan.inline_len, 204);
	cr_assert_eq(plan.ranges[1].offset, 1228);
	assert_plan_decodes(4);
}

Test(chunk_plan, several_ddp_arguments)
{
	struct rpcrdma_ddp_item args[3] = { { 40, 2000 }, { 2048, 10 }, { 2064, 3001 } };

	cr_assert_eq(plan_call(2064 + 3004 + 12, args, 3, 100, &lim), RPCRDMA_PLAN_OK);
	cr_assert_eq(plan.type, RDMA_MSG);
	cr_assert_eq(plan.nreads, 2, "the 10-byte item stays inline");
	cr_assert_eq(plan.reads[0].position, 40);
	cr_assert_eq(plan.reads[1].position, 2064);
	cr_assert_eq(plan.inline_len, 40 + 24 + 12);
	assert_plan_decodes(5);
}

Test(chunk_plan, long_call_uses_position_zero_and_keeps_data_chunks)
{
	struct rpcrdma_ddp_item arg = { 2000, 65536 };

	cr_assert_eq(plan_call(2000 + 65536 + 500, &arg, 1, 100, &lim), RPCRDMA_PLAN_OK);
	cr_assert_eq(plan.type, RDMA_NOMSG);
	cr_assert_eq(plan.inline_len, 0);
	cr_assert_eq(read_bytes_at(0), 2500, "reduced message at position zero");
	cr_assert_eq(read_bytes_at(2000), 65536);
	assert_plan_decodes(6);
}

Test(chunk_plan, segments_split_at_registration_limit)
{
	struct rpcrdma_plan_limits small = lim;
	struct rpcrdma_ddp_item arg = { 100, (1u << 20) + 1 };

	small.max_seg_bytes = 65536;
	cr_assert_eq(plan_call(100 + (1u << 20) + 4 + 4, &arg, 1, 100, &small), RPCRDMA_PLAN_OK);
	cr_assert_eq(plan.nreads, 17);
	for (uint32_t i = 0; i < 16; i++) {
		cr_assert_eq(plan.reads[i].src.length, 65536);
		cr_assert_eq(plan.reads[i].src.offset, 100 + i * 65536);
		cr_assert_eq(plan.reads[i].position, 100);
	}
	cr_assert_eq(plan.reads[16].src.length, 1);
	small.max_read_segs = 16;
	cr_assert_eq(plan_call(100 + (1u << 20) + 4 + 4, &arg, 1, 100, &small),
		     RPCRDMA_PLAN_TOO_MANY_SEGMENTS);
}

Test(chunk_plan, header_too_large_for_threshold)
{
	struct rpcrdma_plan_limits tiny = lim;
	struct rpcrdma_ddp_item arg = { 100, 65536 };

	tiny.inline_send = 64;
	tiny.max_seg_bytes = 4096;
	cr_assert_eq(plan_call(100 + 65536 + 4, &arg, 1, 100, &tiny),
		     RPCRDMA_PLAN_HEADER_TOO_LARGE);
}

Test(chunk_plan, payload_size_matrix_plans_and_decodes)
{
	static const uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, 4095, 4096, 4097, 65536,
					  (1u << 20) + 1, 16u << 20 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		struct rpcrdma_ddp_item arg = { 64, len };
		uint32_t xdr = 64 + (uint32_t)rpcrdma_xdr_roundup(len) + 4;

		/* write-like: DDP-eligible argument */
		cr_assert_eq(plan_call(xdr, &arg, 1, 100, &lim), RPCRDMA_PLAN_OK, "size %u", len);
		if (len >= lim.ddp_threshold)
			cr_assert_eq(read_bytes_at(64), len, "size %u", len);
		else
			cr_assert_eq(read_bytes_at(64), 0, "size %u stays in the message", len);
		assert_plan_decodes(len);
		/* long non-DDP argument: the whole call */
		cr_assert_eq(plan_call(xdr, NULL, 0, 100, &lim), RPCRDMA_PLAN_OK, "size %u", len);
		if (xdr + 28 > lim.inline_send)
			cr_assert_eq(read_bytes_at(0), xdr, "size %u", len);
		assert_plan_decodes(len + 1);
	}
}

Test(chunk_plan, ddp_result_gets_write_chunk)
{
	uint32_t result = 65536;
	struct rpcrdma_call_desc d = { 100, NULL, 0, &result, 1, 200 };

	cr_assert_eq(rpcrdma_plan_call(&d, &lim, &plan), RPCRDMA_PLAN_OK);
	cr_assert_eq(plan.nwrites, 1);
	cr_assert_eq(plan.writes[0].length, 65536);
	cr_assert_eq(plan.writes[0].nsegs, 1);
	cr_assert_eq(plan.has_reply, 0);
	cr_assert_eq(plan.header_len, 28 + 8 + 16);
	assert_plan_decodes(10);
}

Test(chunk_plan, small_results_stay_inline)
{
	uint32_t result = 500;
	struct rpcrdma_call_desc d = { 100, NULL, 0, &result, 1, 200 };

	cr_assert_eq(rpcrdma_plan_call(&d, &lim, &plan), RPCRDMA_PLAN_OK);
	cr_assert_eq(plan.nwrites + plan.has_reply, 0);
}

/*
 * The server puts the k-th DDP-eligible result in the k-th Write chunk:
 * after a result too small for a chunk, no later one gets a chunk either.
 */
Test(chunk_plan, write_chunks_go_to_a_prefix_of_the_results)
{
	uint32_t small_first[2] = { 512, 1u << 20 }, large_first[3] = { 1u << 20, 512, 65536 };
	struct rpcrdma_call_desc d = { 100, NULL, 0, small_first, 2, 200 };

	cr_assert_eq(rpcrdma_plan_call(&d, &lim, &plan), RPCRDMA_PLAN_OK);
	cr_assert_eq(plan.nwrites, 0);
	cr_assert_eq(plan.has_reply, 1);
	cr_assert_geq(plan.reply.length, 200 + 512 + (1u << 20));
	assert_plan_decodes(12);
	d = (struct rpcrdma_call_desc){ 100, NULL, 0, large_first, 3, 200 };
	cr_assert_eq(rpcrdma_plan_call(&d, &lim, &plan), RPCRDMA_PLAN_OK);
	cr_assert_eq(plan.nwrites, 1);
	cr_assert_eq(plan.writes[0].length, 1u << 20);
	cr_assert_eq(plan.has_reply, 1);
	cr_assert_geq(plan.reply.length, 200 + 512 + 65536);
	assert_plan_decodes(13);
}

Test(chunk_plan, long_reply_gets_reply_chunk)
{
	struct rpcrdma_call_desc d = { 100, NULL, 0, NULL, 0, 100001 };

	cr_assert_eq(rpcrdma_plan_call(&d, &lim, &plan), RPCRDMA_PLAN_OK);
	cr_assert_eq(plan.has_reply, 1);
	cr_assert_eq(plan.reply.length, 100004);
	cr_assert_eq(plan.reply.nsegs, 1);
	assert_plan_decodes(11);
}

Test(chunk_plan, too_many_write_chunks)
{
	uint32_t results[9] = { 4096, 4096, 4096, 4096, 4096, 4096, 4096, 4096, 4096 };
	struct rpcrdma_call_desc d = { 100, NULL, 0, results, 9, 100 };

	cr_assert_eq(rpcrdma_plan_call(&d, &lim, &plan), RPCRDMA_PLAN_TOO_MANY_CHUNKS);
	d.nresults = 8;
	cr_assert_eq(rpcrdma_plan_call(&d, &lim, &plan), RPCRDMA_PLAN_OK);
}

Test(chunk_plan, bad_items_and_limits)
{
	struct rpcrdma_ddp_item unaligned = { 6, 100 };
	struct rpcrdma_ddp_item outside = { 100, 1000 };
	struct rpcrdma_ddp_item overlap[2] = { { 0, 10 }, { 8, 4 } };
	struct rpcrdma_ddp_item touching[2] = { { 0, 10 }, { 12, 4 } };
	struct rpcrdma_plan_limits zero = lim;

	cr_assert_eq(plan_call(2000, &unaligned, 1, 0, &lim), RPCRDMA_PLAN_BAD_ITEM);
	cr_assert_eq(plan_call(1000, &outside, 1, 0, &lim), RPCRDMA_PLAN_BAD_ITEM);
	cr_assert_eq(plan_call(2000, overlap, 2, 0, &lim), RPCRDMA_PLAN_BAD_ITEM);
	cr_assert_eq(plan_call(2000, touching, 2, 0, &lim), RPCRDMA_PLAN_OK);
	cr_assert_eq(plan_call(2000, NULL, 1, 0, &lim), RPCRDMA_PLAN_BAD_ITEM);
	zero.max_seg_bytes = 0;
	cr_assert_eq(plan_call(2000, NULL, 0, 0, &zero), RPCRDMA_PLAN_BAD_LIMITS);
}

/* ---- replies ---- */

static const struct rpcrdma_offered_chunks one_write = {
	.nwrites = 1, .write_len = { 65536 }, .write_segs = { 1 },
};

Test(chunk_plan, reply_result_goes_to_write_chunk)
{
	struct rpcrdma_ddp_item res = { 100, 5000 };
	struct rpcrdma_reply_desc r = { 100 + 5000 + 4 + 8, &res, 1 };

	cr_assert_eq(rpcrdma_plan_reply(&r, &one_write, 1024, &rplan), RPCRDMA_PLAN_OK);
	cr_assert_eq(rplan.type, RDMA_MSG);
	cr_assert_eq(rplan.nwrites, 1);
	cr_assert_eq(rplan.writes[0].offset, 100);
	cr_assert_eq(rplan.writes[0].length, 5000);
	cr_assert_eq(rplan.body_len, 112);
	cr_assert_eq(rplan.header_len, 28 + 8 + 16);
}

Test(chunk_plan, reply_result_longer_than_chunk_is_err_chunk)
{
	struct rpcrdma_ddp_item res = { 100, 65537 };
	struct rpcrdma_reply_desc r = { 100 + 65540, &res, 1 };

	cr_assert_eq(rpcrdma_plan_reply(&r, &one_write, 1024, &rplan),
		     RPCRDMA_PLAN_WRITE_CHUNK_TOO_SMALL);
}

Test(chunk_plan, unused_write_chunk_is_echoed_empty)
{
	struct rpcrdma_reply_desc r = { 200, NULL, 0 };

	cr_assert_eq(rpcrdma_plan_reply(&r, &one_write, 1024, &rplan), RPCRDMA_PLAN_OK);
	cr_assert_eq(rplan.nwrites, 1);
	cr_assert_eq(rplan.writes[0].length, 0);
	cr_assert_eq(rplan.body_len, 200);
}

Test(chunk_plan, long_reply_uses_reply_chunk_or_fails)
{
	struct rpcrdma_offered_chunks with_reply = { .has_reply = 1, .reply_len = 8192,
						     .reply_segs = 1 };
	struct rpcrdma_offered_chunks none = { 0 };
	struct rpcrdma_reply_desc r = { 5000, NULL, 0 };

	cr_assert_eq(rpcrdma_plan_reply(&r, &with_reply, 1024, &rplan), RPCRDMA_PLAN_OK);
	cr_assert_eq(rplan.type, RDMA_NOMSG);
	cr_assert_eq(rplan.body_len, 5000);
	cr_assert_eq(rplan.header_len, 28 + 4 + 16);
	cr_assert_eq(rpcrdma_plan_reply(&r, &none, 1024, &rplan), RPCRDMA_PLAN_REPLY_TOO_LARGE);
	r.xdr_len = 8196;
	cr_assert_eq(rpcrdma_plan_reply(&r, &with_reply, 1024, &rplan),
		     RPCRDMA_PLAN_REPLY_TOO_LARGE);
	r.xdr_len = 900;
	cr_assert_eq(rpcrdma_plan_reply(&r, &with_reply, 1024, &rplan), RPCRDMA_PLAN_OK);
	cr_assert_eq(rplan.type, RDMA_MSG, "fits inline although a reply chunk was offered");
}

Test(chunk_plan, fill_segments_in_order)
{
	struct rpcrdma_segment s[3] = { { 1, 4096, 0 }, { 2, 4096, 0 }, { 3, 4096, 0 } };

	rpcrdma_plan_fill_segments(s, 3, 5000);
	cr_assert_eq(s[0].length, 4096);
	cr_assert_eq(s[1].length, 904);
	cr_assert_eq(s[2].length, 0);
	cr_assert_str_eq(rpcrdma_plan_status_str(RPCRDMA_PLAN_OK), "ok");
}
