/* Helpers the CLIENT and the server share (rpcrdma/transport.c). */
#include <criterion/criterion.h>
#include <string.h>

#include "rpcrdma/transport.h"

Test(transport, flavors_that_only_carry_credentials_allow_ddp)
{
	cr_assert(rpcrdma_auth_ddp(AUTH_NONE));
	cr_assert(rpcrdma_auth_ddp(AUTH_SYS));
	cr_assert(rpcrdma_auth_ddp(AUTH_SHORT));
	cr_assert(rpcrdma_auth_ddp(AUTH_DH));
}

Test(transport, flavors_that_may_wrap_the_body_do_not)
{
	cr_assert_not(rpcrdma_auth_ddp(6)); /* RPCSEC_GSS */
	cr_assert_not(rpcrdma_auth_ddp(4)); /* AUTH_KERB */
	cr_assert_not(rpcrdma_auth_ddp(200777));
	cr_assert_not(rpcrdma_auth_ddp(-1));
}

Test(transport, only_flavors_with_fixed_state_are_pipelined)
{
	cr_assert(rpcrdma_auth_pipelined(AUTH_NONE));
	cr_assert(rpcrdma_auth_pipelined(AUTH_SYS));
	cr_assert_not(rpcrdma_auth_pipelined(AUTH_SHORT));
	cr_assert_not(rpcrdma_auth_pipelined(AUTH_DH));
	cr_assert_not(rpcrdma_auth_pipelined(6)); /* RPCSEC_GSS */
	cr_assert_not(rpcrdma_auth_pipelined(200777));
}

Test(transport, mask_count_counts_bits)
{
	cr_assert_eq(rpcrdma_mask_count(0), 0);
	cr_assert_eq(rpcrdma_mask_count(1), 1);
	cr_assert_eq(rpcrdma_mask_count(0x80000001u), 2);
	cr_assert_eq(rpcrdma_mask_count(~0u), 32);
}

/*
 * A message with a header word, two chunked items of unaligned length
 * (their roundup not inline) and inline words between and after them,
 * encoded by the chunk stream and by xdrmem: @ref gets xdrmem's bytes.
 */
static uint32_t two_item_message(struct rpcrdma_xdr_stream *s, uint8_t *inl, uint32_t cap,
				 uint8_t *ref, char *a, char *b)
{
	u_int w[3] = { 0x11111111, 0x22222222, 0x33333333 };
	XDR x;
	uint32_t n;

	for (int i = 0; i < 1027; i++)
		a[i] = (char)(i * 7 + 1);
	for (int i = 0; i < 2049; i++)
		b[i] = (char)(i * 13 + 5);
	rpcrdma_xdr_encode_init(s, inl, cap, 0, 0x3, 1024);
	xdrmem_create(&x, (char *)ref, 8192, XDR_ENCODE);
	for (int pass = 0; pass < 2; pass++) {
		XDR *xd = pass ? &x : &s->xdr;

		cr_assert(xdr_u_int(xd, &w[0]));
		cr_assert(xdr_opaque(xd, a, 1027));
		cr_assert(xdr_u_int(xd, &w[1]));
		cr_assert(xdr_opaque(xd, b, 2049));
		cr_assert(xdr_u_int(xd, &w[2]));
	}
	cr_assert_eq(s->nitems, 2);
	n = xdr_getpos(&x);
	xdr_destroy(&x);
	return n;
}

Test(transport, stream_copy_gives_the_complete_messages_bytes_for_every_range)
{
	static uint8_t inl[256], ref[8192], got[8192];
	static char a[1027], b[2049];
	struct rpcrdma_xdr_stream s;
	uint32_t n = two_item_message(&s, inl, sizeof(inl), ref, a, b);

	cr_assert_eq(xdr_getpos(&s.xdr), n);
	cr_assert(rpcrdma_stream_copy(&s, 0, n, got));
	cr_assert_arr_eq(got, ref, n);
	for (uint32_t off = 0; off < n; off += 97)
		for (uint32_t len = 1; off + len <= n; len += 211) {
			memset(got, 0xee, len);
			cr_assert(rpcrdma_stream_copy(&s, off, len, got), "[%u, +%u)", off, len);
			cr_assert_arr_eq(got, ref + off, len, "[%u, +%u)", off, len);
		}
	cr_assert_not(rpcrdma_stream_copy(&s, n - 4, 5, got), "past the end");
	cr_assert_not(rpcrdma_stream_copy(&s, n, 1, got));
	cr_assert(rpcrdma_stream_copy(&s, n, 0, got), "an empty range at the end");
}

Test(transport, stream_locate_finds_ranges_within_one_piece_only)
{
	static uint8_t inl[256], ref[8192];
	static char a[1027], b[2049];
	struct rpcrdma_xdr_stream s;
	uint32_t n = two_item_message(&s, inl, sizeof(inl), ref, a, b);
	const uint32_t a_at = 4, b_at = 4 + 1028 + 4;

	cr_assert_eq(rpcrdma_stream_locate(&s, 0, 4), inl, "the header word, inline");
	cr_assert_eq(rpcrdma_stream_locate(&s, a_at, 1027), (const uint8_t *)a);
	cr_assert_eq(rpcrdma_stream_locate(&s, a_at + 10, 20), (const uint8_t *)a + 10);
	cr_assert_null(rpcrdma_stream_locate(&s, a_at, 1028), "touches the roundup");
	cr_assert_null(rpcrdma_stream_locate(&s, 0, 8), "crosses into an item");
	cr_assert_eq(rpcrdma_stream_locate(&s, a_at + 1028, 4), inl + 4, "the word between them");
	cr_assert_eq(rpcrdma_stream_locate(&s, b_at, 2049), (const uint8_t *)b);
	cr_assert_eq(rpcrdma_stream_locate(&s, n - 4, 4), inl + 8, "the last word");
	cr_assert_null(rpcrdma_stream_locate(&s, n - 4, 8), "past the end");
	cr_assert_null(rpcrdma_stream_locate(&s, 0, 0));
}
