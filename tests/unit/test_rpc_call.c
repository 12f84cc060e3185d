/*
 * rpcrdma_call_fault (xdr/rpc_call.c): each reason libtirpc's
 * xdr_callmsg() refuses a call header, checked against xdr_callmsg()
 * itself, and every truncation.
 */
#include <criterion/criterion.h>
#include <rpc/rpc.h>

#include "callmsg_oracle.h"
#include "helpers.h"
#include "xdr/rpc_call.h"

#define XID 0x11223344u

/* A call header: @cred_len bytes of credential body, @verf_len of verifier body (zeros). */
static void call_header(struct wbuf *w, uint32_t dir, uint32_t rpcvers, uint32_t cred_len,
			uint32_t verf_len)
{
	w->n = 0;
	w32(w, XID);
	w32(w, dir);
	w32(w, rpcvers);
	w32(w, 100003);
	w32(w, 3);
	w32(w, 0);
	w32(w, AUTH_SYS);
	w32(w, cred_len);
	for (uint32_t i = 0; i < (cred_len + 3) / 4 && cred_len <= MAX_AUTH_BYTES; i++)
		w32(w, 0);
	w32(w, AUTH_NONE);
	w32(w, verf_len);
	for (uint32_t i = 0; i < (verf_len + 3) / 4 && verf_len <= MAX_AUTH_BYTES; i++)
		w32(w, 0);
}

static void expect_fault(const struct wbuf *w, enum rpcrdma_call_fault want)
{
	cr_assert_not(callmsg_takes(w->b, w->n), "xdr_callmsg took it");
	cr_assert_eq(rpcrdma_call_fault(w->b, (uint32_t)w->n, XID), want);
}

Test(rpc_call, a_header_xdr_callmsg_takes_is_no_answerable_fault)
{
	struct wbuf w;

	call_header(&w, CALL, 2, 400, 400);
	cr_assert(callmsg_takes(w.b, w.n));
	cr_assert_eq(rpcrdma_call_fault(w.b, (uint32_t)w.n, XID), RPCRDMA_CALL_MALFORMED);
}

Test(rpc_call, another_rpc_version_is_rpc_mismatch_even_cut_after_it)
{
	struct wbuf w;

	call_header(&w, CALL, 3, 0, 0);
	expect_fault(&w, RPCRDMA_CALL_RPC_VERSION);
	w.n = 12;
	expect_fault(&w, RPCRDMA_CALL_RPC_VERSION);
	for (uint32_t len = 0; len < 12; len++)
		cr_assert_eq(rpcrdma_call_fault(w.b, len, XID), RPCRDMA_CALL_MALFORMED, "len %u", len);
}

Test(rpc_call, a_reply_is_not_a_call_and_other_directions_are_malformed)
{
	struct wbuf w;

	call_header(&w, REPLY, 2, 0, 0);
	expect_fault(&w, RPCRDMA_CALL_NOT_A_CALL);
	call_header(&w, 2, 2, 0, 0);
	expect_fault(&w, RPCRDMA_CALL_MALFORMED);
}

Test(rpc_call, another_xid_is_malformed)
{
	struct wbuf w;

	call_header(&w, CALL, 3, 0, 0);
	cr_assert_eq(rpcrdma_call_fault(w.b, (uint32_t)w.n, XID + 1), RPCRDMA_CALL_MALFORMED);
}

Test(rpc_call, a_credential_or_verifier_over_400_bytes_is_bad)
{
	struct wbuf w;

	call_header(&w, CALL, 2, 401, 0);
	expect_fault(&w, RPCRDMA_CALL_BAD_CRED);
	call_header(&w, CALL, 2, 0xffffffffu, 0);
	expect_fault(&w, RPCRDMA_CALL_BAD_CRED);
	call_header(&w, CALL, 2, 400, 401);
	expect_fault(&w, RPCRDMA_CALL_BAD_VERF);
	call_header(&w, CALL, 2, 5, 0xfffffffcu);
	expect_fault(&w, RPCRDMA_CALL_BAD_VERF);
}

Test(rpc_call, every_truncation_of_a_good_header_is_malformed)
{
	struct wbuf w;

	call_header(&w, CALL, 2, 13, 7);
	for (uint32_t len = 0; len < w.n; len++) {
		cr_assert_not(callmsg_takes(w.b, len), "len %u", len);
		cr_assert_eq(rpcrdma_call_fault(w.b, len, XID), RPCRDMA_CALL_MALFORMED, "len %u", len);
	}
}

Test(rpc_call, a_fault_is_found_only_where_its_words_are_present)
{
	struct wbuf w;

	call_header(&w, CALL, 2, 400, 401);
	/* to the credential length 32 bytes, its body 400, the verifier flavor and length 8 */
	for (uint32_t len = 0; len < 440; len++)
		cr_assert_eq(rpcrdma_call_fault(w.b, len, XID), RPCRDMA_CALL_MALFORMED, "len %u", len);
	cr_assert_eq(rpcrdma_call_fault(w.b, 440, XID), RPCRDMA_CALL_BAD_VERF);
}
