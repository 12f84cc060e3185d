/* MPA v2 enhanced data, MPA frames, and the RFC 6581 section 9.1 IRD/ORD policy. */
#include <criterion/criterion.h>

#include "cm-private/mpa.h"

static struct rpcrdma_mpa_enhanced e;

Test(mpa, enhanced_data_layout)
{
	struct rpcrdma_mpa_enhanced in = { .ird = 16, .ord = 0 };
	uint8_t out[4];

	cr_assert_eq(rpcrdma_mpa_enhanced_encode(&in, out), RPCRDMA_MPA_OK);
	cr_assert_arr_eq(out, ((uint8_t[]){ 0x00, 0x10, 0x00, 0x00 }), 4);
	in = (struct rpcrdma_mpa_enhanced){ true, true, true, true, 0x3fff, 0x3fff };
	cr_assert_eq(rpcrdma_mpa_enhanced_encode(&in, out), RPCRDMA_MPA_OK);
	cr_assert_arr_eq(out, ((uint8_t[]){ 0xff, 0xff, 0xff, 0xff }), 4);
	in = (struct rpcrdma_mpa_enhanced){ true, false, false, true, 1, 2 };
	cr_assert_eq(rpcrdma_mpa_enhanced_encode(&in, out), RPCRDMA_MPA_OK);
	cr_assert_arr_eq(out, ((uint8_t[]){ 0x80, 0x01, 0x40, 0x02 }), 4);
	/* without A, B, C and D MUST be sent as 0 (RFC 6581 9.2) */
	in = (struct rpcrdma_mpa_enhanced){ false, true, true, true, 5, 7 };
	cr_assert_eq(rpcrdma_mpa_enhanced_encode(&in, out), RPCRDMA_MPA_OK);
	cr_assert_arr_eq(out, ((uint8_t[]){ 0x00, 0x05, 0x00, 0x07 }), 4);
}

Test(mpa, enhanced_decode_flags_and_depths)
{
	static const uint8_t b[] = { 0xc0, 0x05, 0x80, 0x07 };

	cr_assert_eq(rpcrdma_mpa_enhanced_decode(b, 4, &e), RPCRDMA_MPA_OK);
	cr_assert(e.peer_to_peer);
	cr_assert(e.rtr_send);
	cr_assert(e.rtr_write);
	cr_assert_not(e.rtr_read);
	cr_assert_eq(e.ird, 5);
	cr_assert_eq(e.ord, 7);
}

Test(mpa, without_a_the_rtr_flags_are_ignored)
{
	static const uint8_t b[] = { 0x40, 0x05, 0xc0, 0x07 };

	cr_assert_eq(rpcrdma_mpa_enhanced_decode(b, 4, &e), RPCRDMA_MPA_OK);
	cr_assert_not(e.peer_to_peer);
	cr_assert_not(e.rtr_send);
	cr_assert_not(e.rtr_write);
	cr_assert_not(e.rtr_read);
	cr_assert_eq(e.ird, 5);
	cr_assert_eq(e.ord, 7);
}

Test(mpa, enhanced_round_trip_and_range)
{
	for (uint32_t d = 0; d <= 0x3fff; d += 0x3ff) {
		bool p2p = d & 1; /* the RTR flags only with A: what decoding gives back */
		struct rpcrdma_mpa_enhanced in = { p2p, p2p && (d & 2), p2p && (d & 4),
						   p2p && (d & 8), (uint16_t)d,
						   (uint16_t)(0x3fff - d) };
		uint8_t out[4];

		cr_assert_eq(rpcrdma_mpa_enhanced_encode(&in, out), RPCRDMA_MPA_OK);
		cr_assert_eq(rpcrdma_mpa_enhanced_decode(out, 4, &e), RPCRDMA_MPA_OK);
		cr_assert_eq(memcmp(&in, &e, sizeof(e)), 0);
	}
	struct rpcrdma_mpa_enhanced big = { .ird = 0x4000 };
	uint8_t out[4];

	cr_assert_eq(rpcrdma_mpa_enhanced_encode(&big, out), RPCRDMA_MPA_DEPTH_RANGE);
	big = (struct rpcrdma_mpa_enhanced){ .ord = 0xffff };
	cr_assert_eq(rpcrdma_mpa_enhanced_encode(&big, out), RPCRDMA_MPA_DEPTH_RANGE);
}

Test(mpa, enhanced_truncations)
{
	static const uint8_t b[4] = { 0 };

	for (size_t len = 0; len < 4; len++)
		cr_assert_eq(rpcrdma_mpa_enhanced_decode(b, len, &e), RPCRDMA_MPA_SHORT);
}

/* An MPA frame: key, flags, revision, private data. */
static size_t frame(uint8_t *out, const char *key, uint8_t flags, uint8_t rev,
		    const uint8_t *pd, uint16_t pd_len)
{
	memcpy(out, key, 16);
	out[16] = flags;
	out[17] = rev;
	out[18] = (uint8_t)(pd_len >> 8);
	out[19] = (uint8_t)pd_len;
	memcpy(out + 20, pd, pd_len);
	return 20u + pd_len;
}

Test(mpa, enhanced_request_frame_as_siw_sends_it)
{
	static const uint8_t pd[] = { 0x00, 0x10, 0x00, 0x00, 0xf6, 0xab, 0x0e, 0x18,
				      0x01, 0x01, 0x03, 0x03 };
	uint8_t buf[64];
	struct rpcrdma_mpa_frame f;
	size_t n = frame(buf, "MPA ID Req Frame", 0x50, 2, pd, sizeof(pd));

	cr_assert_eq(rpcrdma_mpa_frame_decode(buf, n, &f), RPCRDMA_MPA_OK);
	cr_assert_not(f.reply);
	cr_assert_not(f.markers);
	cr_assert(f.crc);
	cr_assert_not(f.reject);
	cr_assert(f.enhanced);
	cr_assert_eq(f.revision, 2);
	cr_assert_eq(f.pd_length, 12);
	cr_assert_eq(f.frame_len, 32);
	cr_assert_eq(f.ird_ord.ird, 16);
	cr_assert_eq(f.ird_ord.ord, 0);
	cr_assert_eq(f.ulp_len, 8);
	cr_assert_eq(f.ulp_data, buf + 24);
}

Test(mpa, reply_and_unenhanced_frames)
{
	static const uint8_t pd[] = { 1, 2, 3 };
	uint8_t buf[64];
	struct rpcrdma_mpa_frame f;
	size_t n = frame(buf, "MPA ID Rep Frame", 0xa0, 1, pd, 3);

	cr_assert_eq(rpcrdma_mpa_frame_decode(buf, n, &f), RPCRDMA_MPA_OK);
	cr_assert(f.reply);
	cr_assert(f.markers);
	cr_assert(f.reject);
	cr_assert_not(f.enhanced);
	cr_assert_eq(f.ulp_len, 3);
	/* S is a reserved bit in revision 1: ignored, the private data all the ULP's */
	n = frame(buf, "MPA ID Rep Frame", 0x50, 1, pd, 3);
	cr_assert_eq(rpcrdma_mpa_frame_decode(buf, n, &f), RPCRDMA_MPA_OK);
	cr_assert_not(f.enhanced);
	cr_assert_eq(f.ulp_len, 3);
	cr_assert_eq(f.ulp_data, buf + 20);
}

Test(mpa, frame_rejections)
{
	uint8_t buf[600] = { 0 };
	uint8_t pd[520] = { 0 };
	struct rpcrdma_mpa_frame f;
	size_t n;

	n = frame(buf, "MPA ID Xyz Frame", 0, 2, pd, 0);
	cr_assert_eq(rpcrdma_mpa_frame_decode(buf, n, &f), RPCRDMA_MPA_BAD_KEY);
	n = frame(buf, "MPA ID Req Frame", 0, 2, pd, 513);
	cr_assert_eq(rpcrdma_mpa_frame_decode(buf, n, &f), RPCRDMA_MPA_PD_TOO_LONG);
	n = frame(buf, "MPA ID Req Frame", 0, 2, pd, 512);
	cr_assert_eq(rpcrdma_mpa_frame_decode(buf, n, &f), RPCRDMA_MPA_OK);
	cr_assert_eq(rpcrdma_mpa_frame_decode(buf, n - 1, &f), RPCRDMA_MPA_PD_TRUNCATED);
	n = frame(buf, "MPA ID Req Frame", 0x10, 2, pd, 3);
	cr_assert_eq(rpcrdma_mpa_frame_decode(buf, n, &f), RPCRDMA_MPA_ENHANCED_MISSING);
	n = frame(buf, "MPA ID Rep Frame", 0, 0, pd, 0);
	cr_assert_eq(rpcrdma_mpa_frame_decode(buf, n, &f), RPCRDMA_MPA_BAD_REVISION);
	n = frame(buf, "MPA ID Rep Frame", 0, 1, pd, 0);
	cr_assert_eq(rpcrdma_mpa_frame_decode(buf, n, &f), RPCRDMA_MPA_OK);
	for (size_t len = 0; len < 20; len++)
		cr_assert_eq(rpcrdma_mpa_frame_decode(buf, len, &f), RPCRDMA_MPA_SHORT);
}

static const struct rpcrdma_rd_limits dev = { .max_qp_rd_atom = 16, .max_qp_init_rd_atom = 8 };

Test(mpa, request_is_capped_by_device_and_14_bits)
{
	struct rpcrdma_rd_depths want = { 100, 100 };
	struct rpcrdma_rd_depths d = rpcrdma_rd_request(&dev, &want);
	struct rpcrdma_rd_limits huge = { UINT32_MAX, UINT32_MAX };

	cr_assert_eq(d.ird, 16);
	cr_assert_eq(d.ord, 8);
	want = (struct rpcrdma_rd_depths){ UINT32_MAX, UINT32_MAX };
	d = rpcrdma_rd_request(&huge, &want);
	cr_assert_eq(d.ird, 0x3ffe);
	cr_assert_eq(d.ord, 0x3ffe);
}

Test(mpa, responder_ord_never_exceeds_initiator_ird)
{
	struct rpcrdma_rd_depths want = { 4, 8 };
	struct rpcrdma_rd_depths init = { .ird = 2, .ord = 0 };
	struct rpcrdma_rd_choice c;

	cr_assert_eq(rpcrdma_rd_respond(&dev, &want, &init, &c), RPCRDMA_MPA_OK);
	cr_assert_eq(c.local.ord, 2);
	cr_assert_eq(c.wire.ord, 2);
	cr_assert_eq(c.local.ird, 4);
}

Test(mpa, responder_ird_covers_initiator_ord)
{
	struct rpcrdma_rd_depths want = { 0, 8 };
	struct rpcrdma_rd_depths init = { .ird = 16, .ord = 12 };
	struct rpcrdma_rd_choice c;

	cr_assert_eq(rpcrdma_rd_respond(&dev, &want, &init, &c), RPCRDMA_MPA_OK);
	cr_assert_eq(c.local.ird, 12);
	cr_assert_eq(c.local.ord, 8);
	init.ord = 40;
	cr_assert_eq(rpcrdma_rd_respond(&dev, &want, &init, &c), RPCRDMA_MPA_INSUFFICIENT_IRD);
	cr_assert_eq(c.local.ird, 16);
	cr_assert_eq(c.wire.ird, 16);
	/* iWARP: our IRD may exceed the initiator's ORD; IB: never (the REP's becomes its ORD) */
	want.ird = 32;
	init.ord = 12;
	cr_assert_eq(rpcrdma_rd_respond(&dev, &want, &init, &c), RPCRDMA_MPA_OK);
	cr_assert_eq(c.local.ird, 16);
	cr_assert_eq(rpcrdma_rd_respond_ib(&dev, &want, &init, &c), RPCRDMA_MPA_OK);
	cr_assert_eq(c.local.ird, 12);
	cr_assert_eq(c.wire.ird, 12);
	cr_assert_eq(c.local.ord, 8);
	want.ird = 4;
	cr_assert_eq(rpcrdma_rd_respond_ib(&dev, &want, &init, &c), RPCRDMA_MPA_OK);
	cr_assert_eq(c.local.ird, 4, "our own IRD when it is the smaller");
}

Test(mpa, responder_echoes_no_auto_marker)
{
	struct rpcrdma_rd_depths want = { 3, 5 };
	struct rpcrdma_rd_depths init = { .ird = 0x3fff, .ord = 0x3fff };
	struct rpcrdma_rd_choice c;

	cr_assert_eq(rpcrdma_rd_respond(&dev, &want, &init, &c), RPCRDMA_MPA_OK);
	cr_assert_eq(c.local.ird, 3);
	cr_assert_eq(c.local.ord, 5);
	cr_assert_eq(c.wire.ird, 0x3fff);
	cr_assert_eq(c.wire.ord, 0x3fff);
}

Test(mpa, initiator_finish_keeps_ord_within_responder_ird)
{
	struct rpcrdma_rd_depths req = { .ird = 4, .ord = 8 };
	struct rpcrdma_rd_depths rsp = { .ird = 2, .ord = 6 };
	struct rpcrdma_rd_depths fin;

	cr_assert_eq(rpcrdma_rd_finish(&dev, &req, &rsp, &fin), RPCRDMA_MPA_OK);
	cr_assert_eq(fin.ord, 2);
	cr_assert_eq(fin.ird, 6);
	rsp.ord = 17;
	cr_assert_eq(rpcrdma_rd_finish(&dev, &req, &rsp, &fin), RPCRDMA_MPA_INSUFFICIENT_IRD);
	rsp = (struct rpcrdma_rd_depths){ 0x3fff, 0x3fff };
	cr_assert_eq(rpcrdma_rd_finish(&dev, &req, &rsp, &fin), RPCRDMA_MPA_OK);
	cr_assert_eq(fin.ird, 4);
	cr_assert_eq(fin.ord, 8);
}

Test(mpa, negotiation_end_to_end_holds_rfc_relations)
{
	struct rpcrdma_rd_limits client_dev = { 32, 4 }, server_dev = { 8, 16 };

	for (uint32_t wi = 0; wi < 40; wi += 3)
		for (uint32_t wo = 0; wo < 40; wo += 5) {
			struct rpcrdma_rd_depths cw = { wi, wo }, sw = { wo, wi };
			struct rpcrdma_rd_depths req = rpcrdma_rd_request(&client_dev, &cw);
			struct rpcrdma_rd_choice rsp;
			struct rpcrdma_rd_depths fin;

			rpcrdma_rd_respond(&server_dev, &sw, &req, &rsp);
			if (rpcrdma_rd_finish(&client_dev, &req, &rsp.wire, &fin) != RPCRDMA_MPA_OK)
				continue;
			cr_assert_leq(fin.ord, rsp.local.ird, "initiator ORD <= responder IRD");
			cr_assert_leq(rsp.local.ord, fin.ird, "responder ORD <= initiator IRD");
			cr_assert_leq(fin.ird, client_dev.max_qp_rd_atom);
			cr_assert_leq(rsp.local.ord, server_dev.max_qp_init_rd_atom);
		}
}
