/*
 * The chunk-aware XDR stream, driven by rpcgen output for the test
 * program.  The reference is libtirpc's own xdrmem stream: putting the
 * chunked items back into the reduced stream must give xdrmem's bytes.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "rdmatest.h"
#include "xdr/bytes.h"
#include "xdr/chunk_stream.h"

static struct rpcrdma_xdr_stream s;
static uint8_t inl[1 << 16];

static uint8_t *pattern(uint32_t len, uint32_t seed)
{
	uint8_t *p = malloc(len ? len : 1);

	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 131u);
	return p;
}

/* libtirpc's reference encoding. */
static uint32_t xdrmem_encode(xdrproc_t proc, void *obj, uint8_t *out, uint32_t cap)
{
	XDR x;
	uint32_t n;

	xdrmem_create(&x, (char *)out, cap, XDR_ENCODE);
	cr_assert(proc(&x, obj));
	n = xdr_getpos(&x);
	xdr_destroy(&x);
	return n;
}

/* Rebuild the complete stream from the reduced one and the items. */
static uint32_t materialize(uint8_t *out)
{
	uint32_t o = 0, in = 0;

	for (uint32_t i = 0; i < s.nitems; i++) {
		uint32_t before = s.items[i].position - o;

		memcpy(out + o, inl + in, before);
		o += before;
		in += before;
		memcpy(out + o, s.items[i].data, s.items[i].length);
		o += s.items[i].length;
		while (o & 3)
			out[o++] = 0;
	}
	memcpy(out + o, inl + in, s.off - in);
	return o + s.off - in;
}

static void encode_write_args(uint32_t len, uint32_t mask, uint32_t min, uint8_t **data)
{
	rdmatest_write_args a = { .offset = 7 };

	*data = pattern(len, len);
	a.data.rdmatest_data_len = len;
	a.data.rdmatest_data_val = (char *)*data;
	rpcrdma_xdr_encode_init(&s, inl, sizeof(inl), 0, mask, min);
	cr_assert(xdr_rdmatest_write_args(&s.xdr, &a), "%s", rpcrdma_xdr_status_str(s.status));
}

Test(chunk_stream, eligible_item_is_recorded_not_copied)
{
	uint8_t *data;

	encode_write_args(4096, 1, 1024, &data);
	cr_assert_eq(s.off, 8, "offset and length words stay inline");
	cr_assert_eq(s.nitems, 1);
	cr_assert_eq(s.items[0].position, 8);
	cr_assert_eq(s.items[0].length, 4096);
	cr_assert_eq(s.items[0].data, data, "no copy");
	cr_assert_eq(xdr_getpos(&s.xdr), 8 + 4096);
	free(data);
}

Test(chunk_stream, roundup_leaves_with_the_item)
{
	uint8_t *data;

	encode_write_args(1025, 1, 1024, &data);
	cr_assert_eq(s.off, 8);
	cr_assert_eq(s.items[0].length, 1025);
	cr_assert_eq(xdr_getpos(&s.xdr), 8 + 1028);
	free(data);
}

Test(chunk_stream, small_or_unnamed_items_stay_inline)
{
	uint8_t *data;

	encode_write_args(1023, 1, 1024, &data);
	cr_assert_eq(s.nitems, 0);
	cr_assert_eq(s.off, 8 + 1024);
	free(data);
	encode_write_args(40000, 2, 1024, &data);
	cr_assert_eq(s.nitems, 0, "mask names the second item, there is one");
	free(data);
}

Test(chunk_stream, matches_xdrmem_for_every_size)
{
	static const uint32_t sizes[] = { 0, 1, 2, 3, 4, 5, 1023, 1024, 1025, 4095, 4096, 4097, 65536 };
	static uint8_t ref[1 << 17], full[1 << 17];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		rdmatest_write_args a = { .offset = 9 };
		uint8_t *data;
		uint32_t n;

		encode_write_args(sizes[i], 1, 1024, &data);
		a.data.rdmatest_data_len = sizes[i];
		a.data.rdmatest_data_val = (char *)data;
		n = xdrmem_encode((xdrproc_t)xdr_rdmatest_write_args, &a, ref, sizeof(ref));
		rpcrdma_store_be32(ref, 7); /* encode_write_args used offset 7 */
		cr_assert_eq(materialize(full), n, "size %u", sizes[i]);
		cr_assert_arr_eq(full, ref, n, "size %u", sizes[i]);
		cr_assert_eq(xdr_getpos(&s.xdr), n, "size %u", sizes[i]);
		free(data);
	}
}

/* Two opaque items; the first has odd length so its roundup must not count. */
static bool_t two_items(XDR *x, void *unused)
{
	static char a[5] = "abcde";
	static char b[2000];
	char *pa = a, *pb = b;
	u_int la = 5, lb = sizeof(b);

	(void)unused;
	return xdr_bytes(x, &pa, &la, ~0u) && xdr_bytes(x, &pb, &lb, ~0u);
}

Test(chunk_stream, ordinals_count_items_not_padding)
{
	rpcrdma_xdr_encode_init(&s, inl, sizeof(inl), 0, 2, 1);
	cr_assert(two_items(&s.xdr, NULL));
	cr_assert_eq(s.nitems, 1);
	cr_assert_eq(s.items[0].length, 2000);
	cr_assert_eq(s.items[0].position, 4 + 8 + 4, "after 'abcde'+pad and the length word");
	cr_assert_eq(s.off, 16);
}

Test(chunk_stream, header_prefix_counts_in_positions)
{
	rdmatest_write_args a = { .offset = 1 };
	uint8_t data[2048] = { 1 };

	a.data.rdmatest_data_len = sizeof(data);
	a.data.rdmatest_data_val = (char *)data;
	rpcrdma_xdr_encode_init(&s, inl, sizeof(inl), 40, 1, 1024);
	cr_assert(xdr_rdmatest_write_args(&s.xdr, &a));
	cr_assert_eq(s.items[0].position, 48);
	cr_assert_eq(s.off, 48);
}

Test(chunk_stream, decode_takes_item_from_its_chunk)
{
	rdmatest_read_res r;
	uint8_t *chunk = pattern(5000, 3);
	uint8_t wire[8];
	struct rpcrdma_xdr_item c = { 0, 5000, chunk };

	rpcrdma_store_be32(wire, 5000);     /* count */
	rpcrdma_store_be32(wire + 4, 5000); /* length word; the data went by RDMA Write */
	memset(&r, 0, sizeof(r));
	rpcrdma_xdr_decode_init(&s, wire, 8, 0, 1, &c, 1);
	cr_assert(xdr_rdmatest_read_res(&s.xdr, &r), "%s", rpcrdma_xdr_status_str(s.status));
	cr_assert_eq(r.data.rdmatest_data_len, 5000);
	cr_assert_arr_eq(r.data.rdmatest_data_val, chunk, 5000);
	cr_assert_eq(s.off, 8, "nothing else consumed inline");
	xdr_free((xdrproc_t)xdr_rdmatest_read_res, (char *)&r);
	free(chunk);
}

Test(chunk_stream, empty_chunk_means_the_item_came_inline)
{
	static uint8_t wire[4 + 4 + 12];
	rdmatest_read_res r;
	struct rpcrdma_xdr_item c = { 0, 0, NULL };

	rpcrdma_store_be32(wire, 10);
	rpcrdma_store_be32(wire + 4, 10);
	memcpy(wire + 8, "0123456789\0\0", 12);
	memset(&r, 0, sizeof(r));
	rpcrdma_xdr_decode_init(&s, wire, sizeof(wire), 0, 1, &c, 1);
	cr_assert(xdr_rdmatest_read_res(&s.xdr, &r));
	cr_assert_eq(r.data.rdmatest_data_len, 10);
	cr_assert_arr_eq(r.data.rdmatest_data_val, "0123456789", 10);
	xdr_free((xdrproc_t)xdr_rdmatest_read_res, (char *)&r);
}

/* Decode a READ result of @item bytes whose data came in a chunk of @chunk_len bytes at @data. */
static bool decode_chunked_read(uint32_t item, uint32_t chunk_len, const uint8_t *data,
				rdmatest_read_res *r)
{
	uint8_t wire[8];
	struct rpcrdma_xdr_item c = { 0, chunk_len, data };

	rpcrdma_store_be32(wire, item);
	rpcrdma_store_be32(wire + 4, item);
	memset(r, 0, sizeof(*r));
	rpcrdma_xdr_decode_init(&s, wire, 8, 0, 1, &c, 1);
	return xdr_rdmatest_read_res(&s.xdr, r);
}

/* An item's chunk holds its bytes, or (RFC 5666) them and their roundup: at most 3 bytes. */
Test(chunk_stream, chunk_length_must_match_item)
{
	static const uint32_t cases[][2] = { { 100, 99 }, { 10, 13 }, { 10, 16 }, { 12, 16 },
					     { 11, 16 } };
	static const uint8_t chunk[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rdmatest_read_res r;

		cr_assert_not(decode_chunked_read(cases[i][0], cases[i][1], chunk, &r),
			      "item %u, chunk %u", cases[i][0], cases[i][1]);
		cr_assert_eq(s.status, RPCRDMA_XDR_CHUNK_MISMATCH);
		xdr_free((xdrproc_t)xdr_rdmatest_read_res, (char *)&r);
	}
}

/* RFC 5666 section 3.7: a Write chunk's returned length may include the item's roundup. */
Test(chunk_stream, chunk_length_with_roundup_is_taken)
{
	static const uint8_t chunk[12] = "0123456789";
	rdmatest_read_res r;

	cr_assert(decode_chunked_read(10, 12, chunk, &r), "%s", rpcrdma_xdr_status_str(s.status));
	cr_assert_eq(r.data.rdmatest_data_len, 10);
	cr_assert_arr_eq(r.data.rdmatest_data_val, "0123456789", 10);
	xdr_free((xdrproc_t)xdr_rdmatest_read_res, (char *)&r);
}

Test(chunk_stream, round_trip_through_chunks)
{
	static const uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, 4095, 4096, 4097, 65536, (1u << 20) + 1 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		static struct rpcrdma_xdr_stream dec;
		rdmatest_write_args back;
		uint8_t *data;

		encode_write_args(sizes[i], 1, 1024, &data);
		memset(&back, 0, sizeof(back));
		rpcrdma_xdr_decode_init(&dec, inl, s.off, 0, 1, s.items, s.nitems);
		cr_assert(xdr_rdmatest_write_args(&dec.xdr, &back), "size %u: %s", sizes[i],
			  rpcrdma_xdr_status_str(dec.status));
		cr_assert_eq(back.offset, 7);
		cr_assert_eq(back.data.rdmatest_data_len, sizes[i]);
		if (sizes[i])
			cr_assert_arr_eq(back.data.rdmatest_data_val, data, sizes[i]);
		cr_assert_eq(dec.off, s.off, "size %u: all inline bytes consumed", sizes[i]);
		xdr_free((xdrproc_t)xdr_rdmatest_write_args, (char *)&back);
		free(data);
	}
}

Test(chunk_stream, every_shorter_buffer_fails_encode)
{
	rdmatest_write_args a = { .offset = 1 };
	char data[300] = { 0 };

	a.data.rdmatest_data_len = sizeof(data);
	a.data.rdmatest_data_val = data;
	for (uint32_t cap = 0; cap < 4 + 4 + 300; cap++) {
		rpcrdma_xdr_encode_init(&s, inl, cap, 0, 0, 0);
		cr_assert_not(xdr_rdmatest_write_args(&s.xdr, &a), "cap %u", cap);
		cr_assert_eq(s.status, RPCRDMA_XDR_NO_SPACE);
	}
}

Test(chunk_stream, every_truncation_fails_decode)
{
	rdmatest_write_args a = { .offset = 1 };
	char data[30] = "abcdefghijklmnopqrstuvwxyz0123";
	uint32_t n;

	a.data.rdmatest_data_len = sizeof(data);
	a.data.rdmatest_data_val = data;
	n = xdrmem_encode((xdrproc_t)xdr_rdmatest_write_args, &a, inl, sizeof(inl));
	for (uint32_t len = 0; len < n; len++) {
		rdmatest_write_args back;

		memset(&back, 0, sizeof(back));
		rpcrdma_xdr_decode_init(&s, inl, len, 0, 0, NULL, 0);
		cr_assert_not(xdr_rdmatest_write_args(&s.xdr, &back), "len %u", len);
		cr_assert_eq(s.status, RPCRDMA_XDR_SHORT);
		xdr_free((xdrproc_t)xdr_rdmatest_write_args, (char *)&back);
	}
}

/* Eligible items past the 16th travel inline: the stream is still xdrmem's. */
Test(chunk_stream, items_past_the_last_chunk_travel_inline)
{
	static uint8_t want[1 << 12], got[1 << 12];
	static char big[63];
	char *p = big;
	u_int len = sizeof(big);
	XDR x;

	memset(big, 0x5a, sizeof(big));
	rpcrdma_xdr_encode_init(&s, inl, sizeof(inl), 0, ~0u, 1);
	xdrmem_create(&x, (char *)want, sizeof(want), XDR_ENCODE);
	for (uint32_t i = 0; i < RPCRDMA_XDR_MAX_ITEMS + 2; i++) {
		cr_assert(xdr_bytes(&s.xdr, &p, &len, ~0u), "item %u: %s", i,
			  rpcrdma_xdr_status_str(s.status));
		cr_assert(xdr_bytes(&x, &p, &len, ~0u));
	}
	cr_assert_eq(s.nitems, RPCRDMA_XDR_MAX_ITEMS);
	cr_assert_eq(materialize(got), xdr_getpos(&x));
	cr_assert_arr_eq(got, want, xdr_getpos(&x));
	xdr_destroy(&x);
}

Test(chunk_stream, setpos_never_crosses_a_chunked_item)
{
	uint8_t *data;

	encode_write_args(4096, 1, 1024, &data);
	cr_assert_not(xdr_setpos(&s.xdr, 4));
	cr_assert_eq(s.status, RPCRDMA_XDR_BAD_SETPOS);
	cr_assert(xdr_setpos(&s.xdr, 8 + 4096));
	free(data);
	rpcrdma_xdr_encode_init(&s, inl, sizeof(inl), 0, 0, 0);
	cr_assert(xdr_u_int(&s.xdr, &(u_int){ 5 }));
	cr_assert(xdr_u_int(&s.xdr, &(u_int){ 6 }));
	cr_assert(xdr_setpos(&s.xdr, 4));
	cr_assert_eq(s.off, 4);
	cr_assert_not(xdr_setpos(&s.xdr, 12), "forward beyond what was written");
	cr_assert_eq(s.status, RPCRDMA_XDR_BAD_SETPOS);
}

/* A length word reserved, the body written, the length filled in: as with xdrmem. */
Test(chunk_stream, setpos_back_to_fill_a_length_and_forward_to_the_end)
{
	u_int placeholder = 0, body = 0xabcd, len = 8, got[3];

	rpcrdma_xdr_encode_init(&s, inl, sizeof(inl), 0, 0, 0);
	cr_assert(xdr_u_int(&s.xdr, &placeholder));
	cr_assert(xdr_u_int(&s.xdr, &body));
	cr_assert(xdr_u_int(&s.xdr, &body));
	cr_assert(xdr_setpos(&s.xdr, 0));
	cr_assert(xdr_u_int(&s.xdr, &len));
	cr_assert(xdr_setpos(&s.xdr, 12), "forward to where the stream had reached");
	cr_assert_eq(s.off, 12);
	cr_assert_eq(xdr_getpos(&s.xdr), 12);
	for (int i = 0; i < 3; i++)
		got[i] = rpcrdma_load_be32(inl + 4 * i);
	cr_assert_eq(got[0], 8);
	cr_assert_eq(got[1], 0xabcd);
	cr_assert_eq(got[2], 0xabcd);
}

/* A rewind across an opaque item would count it again: the item after it keeps its ordinal. */
Test(chunk_stream, setpos_never_crosses_an_inline_opaque_item)
{
	static char small[4] = "abcd", big[4096];
	char *p = big;
	u_int len = sizeof(big);

	rpcrdma_xdr_encode_init(&s, inl, sizeof(inl), 0, 1u << 1, 1);
	cr_assert(xdr_opaque(&s.xdr, small, sizeof(small)));
	cr_assert_not(xdr_setpos(&s.xdr, 0));
	cr_assert_eq(s.status, RPCRDMA_XDR_BAD_SETPOS);
	s.status = RPCRDMA_XDR_OK;
	cr_assert(xdr_bytes(&s.xdr, &p, &len, sizeof(big)));
	cr_assert_eq(s.nitems, 1, "the second opaque item is the eligible one");
	cr_assert_eq(s.items[0].length, sizeof(big));
}

/* Decoding: a chunked item's roundup was never inline, so no setpos may go back into it. */
Test(chunk_stream, decode_setpos_never_goes_back_into_a_chunked_items_roundup)
{
	uint8_t *chunk = pattern(1025, 5), *dst = malloc(1025);
	uint8_t wire[8];
	struct rpcrdma_xdr_item c = { 0, 1025, chunk };
	uint32_t off;
	u_int next = 0;

	rpcrdma_store_be32(wire, 0x1c1d1e1f);
	rpcrdma_store_be32(wire + 4, 0x20212223);
	rpcrdma_xdr_decode_init(&s, wire, sizeof(wire), 0, 1, &c, 1);
	cr_assert(xdr_opaque(&s.xdr, (char *)dst, 1025));
	cr_assert_arr_eq(dst, chunk, 1025);
	off = s.off;
	cr_assert_not(xdr_setpos(&s.xdr, xdr_getpos(&s.xdr) - 3));
	cr_assert_eq(s.status, RPCRDMA_XDR_BAD_SETPOS);
	cr_assert_eq(s.off, off, "the inline offset is left alone");
	s.status = RPCRDMA_XDR_OK;
	cr_assert(xdr_u_int(&s.xdr, &next));
	cr_assert_eq(next, 0x1c1d1e1f, "the next word is the first inline one: %#x", next);
	free(chunk);
	free(dst);
}
