/* Transport header codec: RFC layouts, round trips, truncations, every rejection. */
#include <criterion/criterion.h>

#include "helpers.h"
#include "xdr/header.h"

static struct rpcrdma_header h;
static size_t hlen;

static enum rpcrdma_hdr_status decode(const struct wbuf *w)
{
	return rpcrdma_header_decode(&h, w->b, w->n, NULL, &hlen);
}

/* An RDMA_MSG header with empty chunk lists followed by an RPC message. */
static void msg_no_chunks(struct wbuf *w, uint32_t xid)
{
	wfixed(w, xid, 1, 32, RDMA_MSG);
	w32(w, 0);
	w32(w, 0);
	w32(w, 0);
	w32(w, xid); /* RPC message starts with the same XID */
	w32(w, 0);   /* CALL */
}

Test(header, rfc_layout_of_plain_rdma_msg)
{
	static const uint8_t expect[] = {
		0x12, 0x34, 0x56, 0x78, 0, 0, 0, 1, 0, 0, 0, 32, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	struct rpcrdma_header out;
	uint8_t buf[64];
	size_t n;

	rpcrdma_header_init(&out, 0x12345678, 32, RDMA_MSG);
	cr_assert_eq(rpcrdma_header_encode(&out, buf, sizeof(buf), &n), RPCRDMA_HDR_OK);
	cr_assert_eq(n, sizeof(expect));
	cr_assert_arr_eq(buf, expect, sizeof(expect));
	cr_assert_eq(rpcrdma_header_encoded_size(&out), sizeof(expect));
}

Test(header, decode_plain_msg_reports_header_length)
{
	struct wbuf w = { .n = 0 };

	msg_no_chunks(&w, 7);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_OK);
	cr_assert_eq(hlen, 28);
	cr_assert_eq(h.xid, 7);
	cr_assert_eq(h.credit, 32);
	cr_assert_eq(h.type, RDMA_MSG);
	cr_assert_eq(h.nreads + h.nwrites + h.has_reply, 0);
}

/* Every list populated: two read chunks, two write chunks, a reply chunk. */
static void build_full(struct rpcrdma_header *out, enum rpcrdma_msg_type type)
{
	struct rpcrdma_segment s1 = { 0x100, 4096, 0x7f0000001000ull };
	struct rpcrdma_segment s2 = { 0x101, 1025, 0x7f0000002000ull };
	struct rpcrdma_segment w[3] = { { 0x200, 8192, 0x1000 }, { 0x201, 8192, 0x3000 },
					{ 0x202, 4096, 0x5000 } };

	rpcrdma_header_init(out, 0xabcdef01, 128, type);
	if (type == RDMA_MSGP) {
		out->align = 4096;
		out->thresh = 1024;
	}
	if (type == RDMA_NOMSG) {
		struct rpcrdma_segment pz = { 0x99, 2048, 0x9000 };

		cr_assert_eq(rpcrdma_header_add_read(out, 0, &pz), RPCRDMA_HDR_OK);
	}
	cr_assert_eq(rpcrdma_header_add_read(out, 64, &s1), RPCRDMA_HDR_OK);
	cr_assert_eq(rpcrdma_header_add_read(out, 64, &s2), RPCRDMA_HDR_OK);
	cr_assert_eq(rpcrdma_header_add_write_chunk(out, w, 2), RPCRDMA_HDR_OK);
	cr_assert_eq(rpcrdma_header_add_write_chunk(out, w + 2, 1), RPCRDMA_HDR_OK);
	cr_assert_eq(rpcrdma_header_set_reply_chunk(out, w, 3), RPCRDMA_HDR_OK);
}

static void assert_same(const struct rpcrdma_header *a, const struct rpcrdma_header *b)
{
	cr_assert_eq(a->xid, b->xid);
	cr_assert_eq(a->vers, b->vers);
	cr_assert_eq(a->credit, b->credit);
	cr_assert_eq(a->type, b->type);
	cr_assert_eq(a->align, b->align);
	cr_assert_eq(a->thresh, b->thresh);
	cr_assert_eq(a->nreads, b->nreads);
	for (uint32_t i = 0; i < a->nreads; i++) {
		cr_assert_eq(a->reads[i].position, b->reads[i].position);
		cr_assert_eq(a->reads[i].seg.handle, b->reads[i].seg.handle);
		cr_assert_eq(a->reads[i].seg.length, b->reads[i].seg.length);
		cr_assert_eq(a->reads[i].seg.offset, b->reads[i].seg.offset);
	}
	cr_assert_eq(a->nwrites, b->nwrites);
	cr_assert_eq(a->has_reply, b->has_reply);
	cr_assert_eq(a->nsegs, b->nsegs);
	for (uint32_t i = 0; i < a->nwrites; i++) {
		cr_assert_eq(a->writes[i].first, b->writes[i].first);
		cr_assert_eq(a->writes[i].nsegs, b->writes[i].nsegs);
	}
	for (uint32_t i = 0; i < a->nsegs; i++) {
		cr_assert_eq(a->segs[i].handle, b->segs[i].handle);
		cr_assert_eq(a->segs[i].length, b->segs[i].length);
		cr_assert_eq(a->segs[i].offset, b->segs[i].offset);
	}
}

/* Encode @in, append an RPC message for MSG/MSGP, decode, compare. */
static size_t round_trip(const struct rpcrdma_header *in, uint8_t *buf, size_t cap)
{
	size_t n, body = 0;

	cr_assert_eq(rpcrdma_header_encode(in, buf, cap, &n), RPCRDMA_HDR_OK);
	cr_assert_eq(n, rpcrdma_header_encoded_size(in));
	if (in->type == RDMA_MSG || in->type == RDMA_MSGP) {
		memset(buf + n, 0, 128);
		rpcrdma_store_be32(buf + n, in->xid);
		body = 128;
	}
	cr_assert_eq(rpcrdma_header_decode(&h, buf, n + body, NULL, &hlen), RPCRDMA_HDR_OK,
		     "type %u", in->type);
	cr_assert_eq(hlen, n);
	assert_same(in, &h);
	return n;
}

Test(header, round_trip_every_message_type)
{
	static struct rpcrdma_header in;
	uint8_t buf[4096];

	build_full(&in, RDMA_MSG);
	round_trip(&in, buf, sizeof(buf));
	build_full(&in, RDMA_NOMSG);
	round_trip(&in, buf, sizeof(buf));
	build_full(&in, RDMA_MSGP);
	round_trip(&in, buf, sizeof(buf));
	rpcrdma_header_init(&in, 5, 1, RDMA_DONE);
	cr_assert_eq(round_trip(&in, buf, sizeof(buf)), 16);
	rpcrdma_header_init_err_chunk(&in, 6, 1);
	cr_assert_eq(round_trip(&in, buf, sizeof(buf)), 20);
	cr_assert_eq(h.err, ERR_CHUNK);
	rpcrdma_header_init_err_vers(&in, 7, 1, 1);
	cr_assert_eq(round_trip(&in, buf, sizeof(buf)), 28);
	cr_assert_eq(h.err, ERR_VERS);
	cr_assert_eq(h.vers_low, 1);
	cr_assert_eq(h.vers_high, 1);
}

/* RFC 8166 section 4.5: rdma_vers as in the failing request, which version 1 cannot decode. */
Test(header, err_vers_carries_the_refused_version)
{
	static const uint32_t refused[] = { 0, 2, 0xffffffffu };
	struct rpcrdma_header in;
	uint8_t buf[64];
	size_t n;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		rpcrdma_header_init_err_vers(&in, 7, refused[i], 3);
		cr_assert_eq(rpcrdma_header_encode(&in, buf, sizeof(buf), &n), RPCRDMA_HDR_OK);
		cr_assert_eq(n, 28);
		cr_assert_eq(rpcrdma_load_be32(buf), 7);
		cr_assert_eq(rpcrdma_load_be32(buf + 4), refused[i]);
		cr_assert_eq(rpcrdma_load_be32(buf + 8), 3);
		cr_assert_eq(rpcrdma_load_be32(buf + 12), RDMA_ERROR);
		cr_assert_eq(rpcrdma_load_be32(buf + 16), ERR_VERS);
		cr_assert_eq(rpcrdma_load_be32(buf + 20), 1);
		cr_assert_eq(rpcrdma_load_be32(buf + 24), 1);
	}
}

Test(header, error_with_unknown_code_carries_eight_words)
{
	struct wbuf w = { .n = 0 };

	wfixed(&w, 1, 1, 1, RDMA_ERROR);
	w32(&w, 77);
	for (uint32_t i = 0; i < 8; i++)
		w32(&w, i + 100);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_OK);
	cr_assert_eq(h.err, 77);
	cr_assert_eq(h.err_extra[7], 107);
	w.n -= 4;
	cr_assert_eq(decode(&w), RPCRDMA_HDR_SHORT);
}

Test(header, every_truncation_fails)
{
	static struct rpcrdma_header in;
	static const enum rpcrdma_msg_type types[] = { RDMA_MSG, RDMA_NOMSG, RDMA_MSGP };
	uint8_t buf[4096];

	for (size_t t = 0; t < 3; t++) {
		size_t n;

		build_full(&in, types[t]);
		n = round_trip(&in, buf, sizeof(buf));
		for (size_t len = 0; len < n; len++) {
			enum rpcrdma_hdr_status st =
				rpcrdma_header_decode(&h, buf, len, NULL, &hlen);

			cr_assert_eq(st, RPCRDMA_HDR_SHORT, "type %u len %zu: %s", types[t],
				     len, rpcrdma_hdr_status_str(st));
			cr_assert_eq(hlen, 0);
		}
	}
}

Test(header, every_short_output_buffer_fails)
{
	static struct rpcrdma_header in;
	uint8_t buf[4096];
	size_t need, n;

	build_full(&in, RDMA_MSG);
	need = rpcrdma_header_encoded_size(&in);
	for (size_t cap = 0; cap < need; cap++)
		cr_assert_eq(rpcrdma_header_encode(&in, buf, cap, &n), RPCRDMA_HDR_NO_SPACE);
	cr_assert_eq(rpcrdma_header_encode(&in, buf, need, &n), RPCRDMA_HDR_OK);
}

Test(header, other_versions_are_reported_with_xid)
{
	static const uint32_t versions[] = { 0, 2, 0xffffffff };

	for (size_t i = 0; i < 3; i++) {
		struct wbuf w = { .n = 0 };

		wfixed(&w, 0x55, versions[i], 9, 0xdead);
		cr_assert_eq(decode(&w), RPCRDMA_HDR_BAD_VERSION);
		cr_assert_eq(h.xid, 0x55);
		cr_assert_eq(h.vers, versions[i]);
	}
}

/* An ERR_VERS in another version still says which versions the peer takes. */
Test(header, an_err_vers_of_another_version_is_read_all_the_same)
{
	struct wbuf w = { .n = 0 };

	wfixed(&w, 0x55, 2, 9, RDMA_ERROR);
	w32(&w, ERR_VERS);
	w32(&w, 2);
	w32(&w, 3);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_BAD_VERSION);
	cr_assert_eq(h.err, ERR_VERS);
	cr_assert_eq(h.vers_low, 2);
	cr_assert_eq(h.vers_high, 3);
	for (size_t cut = 1; cut <= 12; cut++) { /* a truncated body leaves them unset */
		struct wbuf t = w;

		t.n -= cut;
		cr_assert_eq(decode(&t), RPCRDMA_HDR_BAD_VERSION);
		cr_assert_eq(h.err, 0);
		cr_assert_eq(h.vers_low, 0);
		cr_assert_eq(h.vers_high, 0);
	}
	w.n = 16; /* ERR_CHUNK in version 2: nothing to read */
	w32(&w, ERR_CHUNK);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_BAD_VERSION);
	cr_assert_eq(h.err, 0);
}

Test(header, unknown_types_are_rejected)
{
	static const uint32_t types[] = { 5, 6, 0x80000000, 0xffffffff };

	for (size_t i = 0; i < 4; i++) {
		struct wbuf w = { .n = 0 };

		wfixed(&w, 1, 1, 1, types[i]);
		w32(&w, 0);
		cr_assert_eq(decode(&w), RPCRDMA_HDR_BAD_TYPE);
	}
}

Test(header, discriminator_must_be_boolean)
{
	struct wbuf w = { .n = 0 };

	wfixed(&w, 1, 1, 1, RDMA_NOMSG);
	w32(&w, 2);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_BAD_DISCRIMINATOR);
}

static void nomsg_with_write_chunk(struct wbuf *w, uint32_t count, uint32_t seglen)
{
	wfixed(w, 1, 1, 1, RDMA_NOMSG);
	w32(w, 0);
	w32(w, 1);
	w32(w, count);
	for (uint32_t i = 0; i < count && w->n < sizeof(w->b) - 64; i++)
		wseg(w, i, seglen, 0x1000);
	w32(w, 0);
	w32(w, 0);
}

Test(header, huge_segment_counts_are_capped_before_reading)
{
	struct wbuf w = { .n = 0 };

	wfixed(&w, 1, 1, 1, RDMA_NOMSG);
	w32(&w, 0);
	w32(&w, 1);
	w32(&w, 0xffffffff);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_TOO_MANY_SEGMENTS);
}

Test(header, segment_limit_boundary)
{
	struct rpcrdma_header_limits lim = rpcrdma_header_default_limits;
	struct wbuf w = { .n = 0 };

	lim.max_chunk_segs = 8;
	nomsg_with_write_chunk(&w, 8, 100);
	cr_assert_eq(rpcrdma_header_decode(&h, w.b, w.n, &lim, &hlen), RPCRDMA_HDR_OK);
	cr_assert_eq(h.writes[0].nsegs, 8);
	w.n = 0;
	nomsg_with_write_chunk(&w, 9, 100);
	cr_assert_eq(rpcrdma_header_decode(&h, w.b, w.n, &lim, &hlen),
		     RPCRDMA_HDR_TOO_MANY_SEGMENTS);
	w.n = 0;
	nomsg_with_write_chunk(&w, RPCRDMA_MAX_SEGS, 1);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_OK);
	w.n = 0;
	nomsg_with_write_chunk(&w, RPCRDMA_MAX_SEGS + 1, 1);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_TOO_MANY_SEGMENTS);
}

Test(header, read_list_limit_boundary)
{
	struct rpcrdma_header_limits lim = rpcrdma_header_default_limits;

	lim.max_reads = 4;
	for (uint32_t n = 4; n <= 5; n++) {
		struct wbuf w = { .n = 0 };

		wfixed(&w, 1, 1, 1, RDMA_NOMSG);
		for (uint32_t i = 0; i < n; i++) {
			w32(&w, 1);
			w32(&w, 0);
			wseg(&w, i, 16, 0x1000 * i);
		}
		w32(&w, 0);
		w32(&w, 0);
		w32(&w, 0);
		cr_assert_eq(rpcrdma_header_decode(&h, w.b, w.n, &lim, &hlen),
			     n == 4 ? RPCRDMA_HDR_OK : RPCRDMA_HDR_TOO_MANY_READS);
	}
}

Test(header, write_chunk_count_is_capped)
{
	struct rpcrdma_header_limits lim = rpcrdma_header_default_limits;
	struct wbuf w = { .n = 0 };

	lim.max_write_chunks = 2;
	wfixed(&w, 1, 1, 1, RDMA_NOMSG);
	w32(&w, 0);
	for (uint32_t i = 0; i < 3; i++) {
		w32(&w, 1);
		w32(&w, 1);
		wseg(&w, i, 10, 0);
	}
	w32(&w, 0);
	w32(&w, 0);
	cr_assert_eq(rpcrdma_header_decode(&h, w.b, w.n, &lim, &hlen),
		     RPCRDMA_HDR_TOO_MANY_WRITE_CHUNKS);
	lim.max_write_chunks = 3;
	cr_assert_eq(rpcrdma_header_decode(&h, w.b, w.n, &lim, &hlen), RPCRDMA_HDR_OK);
}

Test(header, chunk_lengths_must_not_overflow_32_bits)
{
	struct wbuf w = { .n = 0 };

	nomsg_with_write_chunk(&w, 2, 0x80000000u);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_LENGTH_OVERFLOW);
	w.n = 0;
	nomsg_with_write_chunk(&w, 2, 0x7fffffffu);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_OK);
}

static void nomsg_reads(struct wbuf *w, const uint32_t *pos, const uint32_t *len, size_t n)
{
	wfixed(w, 1, 1, 1, RDMA_NOMSG);
	for (size_t i = 0; i < n; i++) {
		w32(w, 1);
		w32(w, pos[i]);
		wseg(w, (uint32_t)i, len[i], 0x10000 * i);
	}
	w32(w, 0);
	w32(w, 0);
	w32(w, 0);
}

Test(header, read_chunks_are_runs_of_one_position)
{
	static const uint32_t pos[] = { 0, 0, 8, 16, 16, 16 };
	static const uint32_t len[] = { 0xffffffffu, 2, 5, 1, 2, 3 };
	static const struct rpcrdma_read_chunk want[] = {
		{ 0, 0x100000001ull }, { 8, 5 }, { 16, 6 } /* summed past 32 bits */
	};
	struct rpcrdma_header rl;
	uint32_t i = 0, n = 0;

	rpcrdma_header_init(&rl, 1, 1, RDMA_NOMSG);
	for (size_t k = 0; k < 6; k++) {
		struct rpcrdma_segment seg = { .handle = 1, .length = len[k], .offset = 0 };

		cr_assert_eq(rpcrdma_header_add_read(&rl, pos[k], &seg), RPCRDMA_HDR_OK);
	}
	while (i < rl.nreads) {
		uint32_t start = i;
		struct rpcrdma_read_chunk rc = rpcrdma_read_chunk_next(&rl, &i);

		cr_assert_lt(n, 3);
		cr_assert_gt(i, start);
		cr_assert_eq(rc.position, want[n].position);
		cr_assert_eq(rc.length, want[n].length);
		n++;
	}
	cr_assert_eq(n, 3);
	cr_assert_eq(i, 6);
}

Test(header, read_chunk_lengths_must_not_overflow)
{
	static const uint32_t pos[] = { 0, 0 };
	static const uint32_t len[] = { 0x80000000u, 0x80000000u };
	struct wbuf w = { .n = 0 };

	nomsg_reads(&w, pos, len, 2);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_LENGTH_OVERFLOW);
}

Test(header, segments_must_not_wrap_the_address_space)
{
	struct wbuf w = { .n = 0 };

	wfixed(&w, 1, 1, 1, RDMA_NOMSG);
	w32(&w, 0);
	w32(&w, 1);
	w32(&w, 1);
	wseg(&w, 1, 2, UINT64_MAX);
	w32(&w, 0);
	w32(&w, 0);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_SEGMENT_WRAPS);
	w.n = 0;
	wfixed(&w, 1, 1, 1, RDMA_NOMSG);
	w32(&w, 0);
	w32(&w, 1);
	w32(&w, 1);
	wseg(&w, 1, 1, UINT64_MAX); /* the very last byte is addressable */
	w32(&w, 0);
	w32(&w, 0);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_OK);
}

Test(header, positions_must_be_aligned)
{
	static const uint32_t pos[] = { 0, 6 };
	static const uint32_t len[] = { 100, 8 };
	struct wbuf w = { .n = 0 };

	nomsg_reads(&w, pos, len, 2);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_MISALIGNED_POSITION);
}

Test(header, positions_must_be_sorted_and_not_overlap)
{
	static const uint32_t pos_unsorted[] = { 0, 40, 20 };
	static const uint32_t pos_overlap[] = { 0, 20, 24 };
	static const uint32_t pos_after_roundup[] = { 0, 20, 28 };
	static const uint32_t pos_zero_again[] = { 0, 20, 0 }; /* not a second position-zero chunk */
	static const uint32_t len[] = { 100, 5, 8 };
	struct wbuf w = { .n = 0 };

	nomsg_reads(&w, pos_unsorted, len, 3);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_POSITION_ORDER);
	w.n = 0;
	nomsg_reads(&w, pos_zero_again, len, 3);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_POSITION_ORDER);
	w.n = 0;
	nomsg_reads(&w, pos_overlap, len, 3); /* 5 bytes at 20 round up to 24 */
	cr_assert_eq(decode(&w), RPCRDMA_HDR_POSITION_ORDER);
	w.n = 0;
	nomsg_reads(&w, pos_after_roundup, len, 3);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_OK);
}

Test(header, position_beyond_the_message)
{
	/* Position-zero chunk of 100 bytes: a data chunk may start at 0..100. */
	static const uint32_t pos_ok[] = { 0, 100 };
	static const uint32_t pos_bad[] = { 0, 104 };
	static const uint32_t len[] = { 100, 8 };
	struct wbuf w = { .n = 0 };

	nomsg_reads(&w, pos_ok, len, 2);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_OK);
	w.n = 0;
	nomsg_reads(&w, pos_bad, len, 2);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_POSITION_BEYOND);
}

Test(header, inline_message_bounds_read_positions)
{
	struct wbuf w = { .n = 0 };
	size_t body;

	wfixed(&w, 9, 1, 1, RDMA_MSG);
	w32(&w, 1);
	w32(&w, 16); /* after 16 inline bytes */
	wseg(&w, 1, 4096, 0x1000);
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 0);
	body = w.n;
	w32(&w, 9);
	w32(&w, 0);
	w32(&w, 2);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_POSITION_BEYOND); /* 12 inline bytes */
	w32(&w, 3);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_OK);
	cr_assert_eq(hlen, body);
}

Test(header, position_zero_with_inline_message_is_rejected)
{
	struct wbuf w = { .n = 0 };

	wfixed(&w, 9, 1, 1, RDMA_MSG);
	w32(&w, 1);
	w32(&w, 0);
	wseg(&w, 1, 64, 0x1000);
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 9);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_POSITION_ZERO_INLINE);
}

Test(header, nomsg_data_chunk_without_position_zero)
{
	static const uint32_t pos[] = { 8 };
	static const uint32_t len[] = { 8 };
	struct wbuf w = { .n = 0 };

	nomsg_reads(&w, pos, len, 1);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_POSITION_BEYOND);
}

Test(header, msgp_alignment)
{
	static const uint32_t good[] = { 0, 4, 4096, 65536, 0x80000000u };
	static const uint32_t bad[] = { 3, 12, 4097, 0xffffffffu };

	for (size_t i = 0; i < 5 + 4; i++) {
		struct wbuf w = { .n = 0 };
		bool ok = i < 5;

		wfixed(&w, 4, 1, 1, RDMA_MSGP);
		w32(&w, ok ? good[i] : bad[i - 5]);
		w32(&w, 1024);
		w32(&w, 0);
		w32(&w, 0);
		w32(&w, 0);
		w32(&w, 4);
		cr_assert_eq(decode(&w), ok ? RPCRDMA_HDR_OK : RPCRDMA_HDR_BAD_ALIGN);
	}
}

Test(header, rdma_msg_needs_its_rpc_message)
{
	struct wbuf w = { .n = 0 };

	msg_no_chunks(&w, 3);
	w.n -= 8;
	cr_assert_eq(decode(&w), RPCRDMA_HDR_NO_MESSAGE);
	w.n = 0;
	msg_no_chunks(&w, 3);
	rpcrdma_store_be32(w.b + 28, 4);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_XID_MISMATCH);
}

Test(header, trailing_bytes_after_bodyless_types)
{
	struct wbuf w = { .n = 0 };

	wfixed(&w, 1, 1, 1, RDMA_DONE);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_OK);
	w32(&w, 0);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_TRAILING_BYTES);
	w.n = 0;
	wfixed(&w, 1, 1, 1, RDMA_ERROR);
	w32(&w, ERR_CHUNK);
	w32(&w, 0);
	cr_assert_eq(decode(&w), RPCRDMA_HDR_TRAILING_BYTES);
}

Test(header, zero_length_and_tiny_buffers)
{
	uint8_t b[16] = { 0 };

	for (size_t n = 0; n < 16; n++)
		cr_assert_eq(rpcrdma_header_decode(&h, n ? b : NULL, n, NULL, &hlen),
			     RPCRDMA_HDR_SHORT);
}

Test(header, builders_stop_at_capacity)
{
	static struct rpcrdma_header in;
	struct rpcrdma_segment s = { 1, 1, 0 };
	static struct rpcrdma_segment many[RPCRDMA_MAX_SEGS + 1];

	rpcrdma_header_init(&in, 1, 1, RDMA_NOMSG);
	for (uint32_t i = 0; i < RPCRDMA_MAX_READ_SEGS; i++)
		cr_assert_eq(rpcrdma_header_add_read(&in, 0, &s), RPCRDMA_HDR_OK);
	cr_assert_eq(rpcrdma_header_add_read(&in, 0, &s), RPCRDMA_HDR_FULL);
	cr_assert_eq(rpcrdma_header_add_write_chunk(&in, many, RPCRDMA_MAX_SEGS + 1),
		     RPCRDMA_HDR_FULL);
	cr_assert_eq(in.nwrites, 0);
	cr_assert_eq(rpcrdma_header_set_reply_chunk(&in, many, 2), RPCRDMA_HDR_OK);
	cr_assert_eq(rpcrdma_header_set_reply_chunk(&in, many, 2), RPCRDMA_HDR_FULL);
	cr_assert_eq(rpcrdma_chunk_length(&in, &in.reply), 0);
}

Test(header, encoder_refuses_inconsistent_headers)
{
	static struct rpcrdma_header in;
	uint8_t buf[256];
	size_t n;

	rpcrdma_header_init(&in, 1, 1, RDMA_MSG);
	in.type = 9;
	cr_assert_eq(rpcrdma_header_encode(&in, buf, sizeof(buf), &n), RPCRDMA_HDR_BAD_TYPE);
	rpcrdma_header_init(&in, 1, 1, RDMA_MSG);
	in.nwrites = 1;
	in.writes[0] = (struct rpcrdma_chunk){ 0, 5 };
	cr_assert_eq(rpcrdma_header_encode(&in, buf, sizeof(buf), &n),
		     RPCRDMA_HDR_TOO_MANY_SEGMENTS);
}

Test(header, status_strings_are_total)
{
	for (int s = 0; s <= RPCRDMA_HDR_FULL; s++)
		cr_assert_neq(strcmp(rpcrdma_hdr_status_str(s), "unknown header status"), 0);
	cr_assert_str_eq(rpcrdma_hdr_status_str(1000), "unknown header status");
}

/* A call offering a chunk of 3 segments (4096, 4096, 100) and a reply echoing @lens. */
static bool echo_fits(uint32_t n, const uint32_t *lens)
{
	static struct rpcrdma_header call, reply;
	const struct rpcrdma_segment offered[3] = { { 1, 4096, 0 }, { 1, 4096, 4096 },
						    { 1, 100, 8192 } };
	struct rpcrdma_segment got[4];

	for (uint32_t i = 0; i < n; i++)
		got[i] = (struct rpcrdma_segment){ 1, lens[i], 4096u * i };
	rpcrdma_header_init(&call, 1, 1, RDMA_MSG);
	rpcrdma_header_init(&reply, 1, 1, RDMA_MSG);
	cr_assert_eq(rpcrdma_header_add_write_chunk(&call, offered, 3), RPCRDMA_HDR_OK);
	cr_assert_eq(rpcrdma_header_add_write_chunk(&reply, got, n), RPCRDMA_HDR_OK);
	return rpcrdma_chunk_echo_fits(&reply, &reply.writes[0], &call, &call.writes[0]);
}

Test(header, an_echoed_chunk_holds_its_data_in_one_run_from_its_start)
{
	cr_assert(echo_fits(3, (const uint32_t[]){ 4096, 4096, 100 }), "all written");
	cr_assert(echo_fits(3, (const uint32_t[]){ 4096, 4096, 7 }), "the last one short");
	cr_assert(echo_fits(2, (const uint32_t[]){ 4096, 17 }), "fewer segments");
	cr_assert(echo_fits(3, (const uint32_t[]){ 4096, 17, 0 }), "empty after a short one");
	cr_assert(echo_fits(3, (const uint32_t[]){ 0, 0, 0 }), "nothing written");
	cr_assert(echo_fits(0, NULL), "no segments");
	cr_assert_not(echo_fits(3, (const uint32_t[]){ 0, 4096, 100 }), "a gap at the start");
	cr_assert_not(echo_fits(3, (const uint32_t[]){ 4096, 17, 100 }), "data after a short one");
	cr_assert_not(echo_fits(2, (const uint32_t[]){ 4097, 0 }), "longer than offered");
	cr_assert_not(echo_fits(3, (const uint32_t[]){ 4096, 4096, 101 }), "the last too long");
	cr_assert_not(echo_fits(4, (const uint32_t[]){ 4096, 4096, 100, 0 }), "more segments");
}
