/*
 * Why an RPC call header (RFC 5531 section 9) that libtirpc's
 * xdr_callmsg() refused was refused, so that the server answers with
 * the RPC layer's reply where RFC 5531 has one instead of a transport
 * error: another RPC version (RPC_MISMATCH), a credential or verifier
 * longer than MAX_AUTH_BYTES (AUTH_BADCRED, AUTH_BADVERF), a message
 * that is not a call (no answer: there is no backchannel).
 */
#ifndef RPCRDMA_XDR_RPC_CALL_H
#define RPCRDMA_XDR_RPC_CALL_H

#include <stdint.h>

enum rpcrdma_call_fault {
	RPCRDMA_CALL_MALFORMED,   /* too short, or another XID: a transport error */
	RPCRDMA_CALL_NOT_A_CALL,  /* direction REPLY: dropped */
	RPCRDMA_CALL_RPC_VERSION, /* rpcvers is not 2: MSG_DENIED RPC_MISMATCH */
	RPCRDMA_CALL_BAD_CRED,    /* credential body over MAX_AUTH_BYTES: AUTH_BADCRED */
	RPCRDMA_CALL_BAD_VERF,    /* verifier body over MAX_AUTH_BYTES: AUTH_BADVERF */
};

/*
 * rpcrdma_call_fault - classify the refused call header in @len bytes
 * at @m whose transport header carried @xid.  Reads nothing beyond @len.
 */
enum rpcrdma_call_fault rpcrdma_call_fault(const uint8_t *m, uint32_t len, uint32_t xid);

#endif
