/*
 * Classification of refused RPC call headers (see rpc_call.h).  The
 * words are checked in the order xdr_callmsg() checks them, so the
 * first reason it had to refuse is the one answered.
 */
#include <rpc/rpc.h>

#include "xdr/bytes.h"
#include "xdr/rpc_call.h"

#define CALL_CRED_LEN_AT 28u /* xid, direction, rpcvers, prog, vers, proc, cred flavor */

/* The length word at @at (a body of at most MAX_AUTH_BYTES follows) is too large. */
static bool auth_too_long(const uint8_t *m, uint32_t at)
{
	return rpcrdma_load_be32(m + at) > MAX_AUTH_BYTES;
}

enum rpcrdma_call_fault rpcrdma_call_fault(const uint8_t *m, uint32_t len, uint32_t xid)
{
	uint32_t verf_len_at;

	if (len < 12 || rpcrdma_load_be32(m) != xid)
		return RPCRDMA_CALL_MALFORMED;
	if (rpcrdma_load_be32(m + 4) != CALL)
		return rpcrdma_load_be32(m + 4) == REPLY ? RPCRDMA_CALL_NOT_A_CALL
							 : RPCRDMA_CALL_MALFORMED;
	if (rpcrdma_load_be32(m + 8) != RPC_MSG_VERSION)
		return RPCRDMA_CALL_RPC_VERSION;
	if (len < CALL_CRED_LEN_AT + 4)
		return RPCRDMA_CALL_MALFORMED;
	if (auth_too_long(m, CALL_CRED_LEN_AT))
		return RPCRDMA_CALL_BAD_CRED;
	/* the verifier's flavor, then its length, after the padded credential body */
	verf_len_at = CALL_CRED_LEN_AT + 4 +
		      (uint32_t)rpcrdma_xdr_roundup(rpcrdma_load_be32(m + CALL_CRED_LEN_AT)) + 4;
	if (len < verf_len_at + 4)
		return RPCRDMA_CALL_MALFORMED;
	if (auth_too_long(m, verf_len_at))
		return RPCRDMA_CALL_BAD_VERF;
	return RPCRDMA_CALL_MALFORMED;
}
