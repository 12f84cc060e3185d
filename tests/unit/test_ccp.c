/* CCP XDR (RFC 5666 section 6) through libtirpc's XDR machinery. */
#include <criterion/criterion.h>

#include "xdr/ccp.h"

Test(ccp_xdr, request_encodes_as_three_words)
{
	struct rpcrdma_config_req req = { 4096, 8192, 16 };
	static const uint8_t expect[] = { 0, 0, 0x10, 0, 0, 0, 0x20, 0, 0, 0, 0, 0x10 };
	uint8_t buf[12];
	XDR x;

	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_ENCODE);
	cr_assert(xdr_rpcrdma_config_req(&x, &req));
	cr_assert_eq(xdr_getpos(&x), 12);
	cr_assert_arr_eq(buf, expect, 12);
	xdr_destroy(&x);
}

Test(ccp_xdr, encoding_into_short_buffers_fails)
{
	struct rpcrdma_config_reply rep = { 1, 2, 3 };
	uint8_t buf[12];

	for (u_int cap = 0; cap < 12; cap += 4) {
		XDR x;

		xdrmem_create(&x, (char *)buf, cap, XDR_ENCODE);
		cr_assert_not(xdr_rpcrdma_config_reply(&x, &rep), "cap %u", cap);
		xdr_destroy(&x);
	}
}

Test(ccp_xdr, round_trip_and_truncations)
{
	struct rpcrdma_config_reply rep = { 262144, 4096, 0xffffffff }, back;
	uint8_t buf[12];
	XDR x;

	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_ENCODE);
	cr_assert(xdr_rpcrdma_config_reply(&x, &rep));
	xdr_destroy(&x);
	cr_assert(rpcrdma_config_reply_decode(buf, 12, &back));
	cr_assert_eq(back.maxcall_sendsize, 262144);
	cr_assert_eq(back.align, 4096);
	cr_assert_eq(back.maxrdmaread, 0xffffffff);
	for (size_t len = 0; len < 12; len++) {
		struct rpcrdma_config_req req;

		cr_assert_not(rpcrdma_config_reply_decode(buf, len, &back), "len %zu", len);
		cr_assert_not(rpcrdma_config_req_decode(buf, len, &req), "len %zu", len);
	}
}

Test(ccp_xdr, usable_as_xdrproc)
{
	struct rpcrdma_config_req req = { 1024, 1024, 0 }, back = { 0, 0, 0 };
	xdrproc_t proc = (xdrproc_t)xdr_rpcrdma_config_req;
	uint8_t buf[12];
	XDR x;

	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_ENCODE);
	cr_assert(proc(&x, &req));
	xdr_destroy(&x);
	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_DECODE);
	cr_assert(proc(&x, &back));
	xdr_destroy(&x);
	cr_assert_eq(back.maxcall_sendsize, 1024);
	cr_assert_eq(back.maxreply_sendsize, 1024);
	cr_assert_eq(RPCRDMA_CCP_PROGRAM, 100417);
}
