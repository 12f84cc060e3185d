/* RFC 8797 private data: RFC byte layout, size coding, search, defaults, negotiation. */
#include <criterion/criterion.h>

#include "cm-private/private_data.h"

static struct rpcrdma_private_data pd;

Test(private_data, rfc_example_decodes)
{
	static const uint8_t b[] = { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03 };

	cr_assert_eq(rpcrdma_private_data_decode(b, sizeof(b), &pd), RPCRDMA_PD_OK);
	cr_assert(pd.remote_invalidate);
	cr_assert_eq(pd.send_size, 4096);
	cr_assert_eq(pd.recv_size, 4096);
}

Test(private_data, encode_produces_rfc_bytes)
{
	static const uint8_t expect[] = { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03 };
	struct rpcrdma_private_data in = { true, 4096, 4096 };
	uint8_t out[8];

	cr_assert_eq(rpcrdma_private_data_encode(&in, out), RPCRDMA_PD_OK);
	cr_assert_arr_eq(out, expect, 8);
}

Test(private_data, size_boundaries)
{
	static const struct {
		uint32_t size;
		enum rpcrdma_pd_status st;
		uint8_t code;
	} cases[] = {
		{ 0, RPCRDMA_PD_SIZE_RANGE, 0 },      { 1023, RPCRDMA_PD_SIZE_RANGE, 0 },
		{ 1024, RPCRDMA_PD_OK, 0 },           { 1025, RPCRDMA_PD_OK, 0 },
		{ 2047, RPCRDMA_PD_OK, 0 },           { 2048, RPCRDMA_PD_OK, 1 },
		{ 4095, RPCRDMA_PD_OK, 2 },           { 4096, RPCRDMA_PD_OK, 3 },
		{ 262143, RPCRDMA_PD_OK, 254 },       { 262144, RPCRDMA_PD_OK, 255 },
		{ 262145, RPCRDMA_PD_SIZE_RANGE, 0 }, { UINT32_MAX, RPCRDMA_PD_SIZE_RANGE, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rpcrdma_private_data in = { false, cases[i].size, 1024 };
		uint8_t out[8] = { 0 };

		cr_assert_eq(rpcrdma_private_data_encode(&in, out), cases[i].st, "size %u",
			     cases[i].size);
		if (cases[i].st != RPCRDMA_PD_OK)
			continue;
		cr_assert_eq(out[6], cases[i].code, "size %u", cases[i].size);
		cr_assert_eq(rpcrdma_private_data_decode(out, 8, &pd), RPCRDMA_PD_OK);
		cr_assert_eq(pd.send_size, (cases[i].code + 1u) * 1024);
		cr_assert_leq(pd.send_size, cases[i].size);
	}
}

Test(private_data, round_trip_every_code)
{
	for (uint32_t code = 0; code < 256; code++) {
		struct rpcrdma_private_data in = { code & 1, (code + 1) * 1024, (256 - code) * 1024 };
		uint8_t out[8];

		cr_assert_eq(rpcrdma_private_data_encode(&in, out), RPCRDMA_PD_OK);
		cr_assert_eq(rpcrdma_private_data_decode(out, 8, &pd), RPCRDMA_PD_OK);
		cr_assert_eq(pd.remote_invalidate, in.remote_invalidate);
		cr_assert_eq(pd.send_size, in.send_size);
		cr_assert_eq(pd.recv_size, in.recv_size);
	}
}

static void assert_defaults(void)
{
	cr_assert_not(pd.remote_invalidate);
	cr_assert_eq(pd.send_size, 1024);
	cr_assert_eq(pd.recv_size, 1024);
}

Test(private_data, absent_means_defaults)
{
	uint8_t b[1] = { 0 };

	cr_assert_eq(rpcrdma_private_data_decode(NULL, 0, &pd), RPCRDMA_PD_ABSENT);
	assert_defaults();
	cr_assert_eq(rpcrdma_private_data_decode(b, 0, &pd), RPCRDMA_PD_ABSENT);
	assert_defaults();
}

Test(private_data, every_truncation_means_defaults)
{
	static const uint8_t b[] = { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0xff, 0xff };

	for (size_t len = 1; len < 8; len++) {
		enum rpcrdma_pd_status st = rpcrdma_private_data_decode(b, len, &pd);

		cr_assert_eq(st, len < 4 ? RPCRDMA_PD_NO_FORMAT_ID : RPCRDMA_PD_SHORT, "len %zu",
			     len);
		assert_defaults();
	}
}

Test(private_data, wrong_magic_and_unknown_versions_mean_defaults)
{
	uint8_t b[8] = { 0xf6, 0xab, 0x0e, 0x19, 0x01, 0x01, 0x03, 0x03 };

	cr_assert_eq(rpcrdma_private_data_decode(b, 8, &pd), RPCRDMA_PD_NO_FORMAT_ID);
	assert_defaults();
	b[3] = 0x18;
	for (unsigned v = 0; v < 256; v++) {
		if (v == 1)
			continue;
		b[4] = (uint8_t)v;
		cr_assert_eq(rpcrdma_private_data_decode(b, 8, &pd), RPCRDMA_PD_BAD_VERSION);
		assert_defaults();
	}
}

Test(private_data, found_at_any_offset_after_other_data)
{
	/* MPA v2 enhanced data (4 octets) then ours, then padding: 56 octets as on IB. */
	uint8_t b[56] = { 0x00, 0x10, 0x00, 0x10, 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x1f, 0x0f };

	cr_assert_eq(rpcrdma_private_data_decode(b, sizeof(b), &pd), RPCRDMA_PD_OK);
	cr_assert_eq(pd.send_size, 32 * 1024);
	cr_assert_eq(pd.recv_size, 16 * 1024);
	cr_assert_not(pd.remote_invalidate);

	uint8_t odd[11] = { 0xaa, 0xbb, 0xcc, 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x00, 0x00 };

	cr_assert_eq(rpcrdma_private_data_decode(odd, sizeof(odd), &pd), RPCRDMA_PD_OK);
	cr_assert(pd.remote_invalidate);
	cr_assert_eq(pd.send_size, 1024);
}

Test(private_data, a_bad_candidate_before_ours_is_skipped)
{
	/* other data holding the identifier's bytes with version 2, then ours */
	uint8_t b[20] = { 0xf6, 0xab, 0x0e, 0x18, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
			  0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x07 };

	cr_assert_eq(rpcrdma_private_data_decode(b, 18, &pd), RPCRDMA_PD_OK);
	cr_assert(pd.remote_invalidate);
	cr_assert_eq(pd.send_size, 4 * 1024);
	cr_assert_eq(pd.recv_size, 8 * 1024);
	/* ours cut short too: the first candidate's failure, and the defaults */
	cr_assert_eq(rpcrdma_private_data_decode(b, 17, &pd), RPCRDMA_PD_BAD_VERSION);
	assert_defaults();
}

Test(private_data, reserved_bits_are_ignored)
{
	static const uint8_t b[] = { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0xfe, 0x00, 0x00 };

	cr_assert_eq(rpcrdma_private_data_decode(b, 8, &pd), RPCRDMA_PD_OK);
	cr_assert_not(pd.remote_invalidate);
}

Test(private_data, negotiation_takes_minimums_and_needs_both_r)
{
	struct rpcrdma_private_data local = { true, 8192, 4096 };
	struct rpcrdma_private_data peer = { true, 2048, 65536 };
	struct rpcrdma_inline_params p = rpcrdma_private_data_negotiate(&local, &peer);

	cr_assert_eq(p.send, 8192);
	cr_assert_eq(p.recv, 2048);
	cr_assert(p.remote_invalidate);
	peer.remote_invalidate = false;
	p = rpcrdma_private_data_negotiate(&local, &peer);
	cr_assert_not(p.remote_invalidate);
}

/* The peer sizes its buffers by what it read: 5000 went out as 4096. */
Test(private_data, negotiation_uses_our_sizes_as_encoded)
{
	struct rpcrdma_private_data local = { false, 5000, 5000 };
	struct rpcrdma_private_data peer = { false, 8192, 8192 };
	struct rpcrdma_inline_params p = rpcrdma_private_data_negotiate(&local, &peer);
	uint8_t msg[RPCRDMA_PD_BYTES];
	struct rpcrdma_private_data sent;

	cr_assert_eq(rpcrdma_private_data_encode(&local, msg), RPCRDMA_PD_OK);
	cr_assert_eq(rpcrdma_private_data_decode(msg, sizeof(msg), &sent), RPCRDMA_PD_OK);
	cr_assert_eq(p.send, sent.send_size);
	cr_assert_eq(p.recv, sent.recv_size);
	cr_assert_eq(p.send, 4096);
	cr_assert_eq(p.recv, 4096);
}

Test(private_data, negotiation_with_absent_peer_is_1k)
{
	struct rpcrdma_private_data local = { true, 262144, 262144 };

	rpcrdma_private_data_decode(NULL, 0, &pd);
	struct rpcrdma_inline_params p = rpcrdma_private_data_negotiate(&local, &pd);

	cr_assert_eq(p.send, 1024);
	cr_assert_eq(p.recv, 1024);
	cr_assert_not(p.remote_invalidate);
}

Test(private_data, status_strings)
{
	cr_assert_str_eq(rpcrdma_pd_status_str(RPCRDMA_PD_SHORT), "private data truncated");
	cr_assert_str_eq(rpcrdma_pd_status_str(99), "unknown private data status");
}
