/*
 * libtirpc's own call-header decoder as the oracle that xdr/rpc_call.c
 * is checked against, by its unit test and its fuzz target.
 */
#ifndef RPCRDMA_TESTS_CALLMSG_ORACLE_H
#define RPCRDMA_TESTS_CALLMSG_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpc/rpc.h>

/* Whether xdr_callmsg takes the @len bytes at @m. */
static inline bool callmsg_takes(const uint8_t *m, size_t len)
{
	char cred[MAX_AUTH_BYTES], verf[MAX_AUTH_BYTES];
	struct rpc_msg msg = { 0 };
	bool_t ok;
	XDR x;

	msg.rm_call.cb_cred.oa_base = cred;
	msg.rm_call.cb_verf.oa_base = verf;
	xdrmem_create(&x, (char *)(uintptr_t)m, (u_int)len, XDR_DECODE);
	ok = xdr_callmsg(&x, &msg);
	xdr_destroy(&x);
	return ok;
}

#endif
