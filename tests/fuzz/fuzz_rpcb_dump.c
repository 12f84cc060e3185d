/*
 * The reply to rpcbind's DUMP (rpcrdma/rpcbind_dump.c), one whole record.
 * Whatever it accepts must encode again as a reply and decode to the same
 * list; what it refuses leaves no list (LeakSanitizer sees the rest).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/rpcbind_dump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define XID 0x01020304u

static void check(bool ok)
{
	if (!ok)
		abort();
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool same_list(rpcblist_ptr a, rpcblist_ptr b)
{
	for (; a && b; a = a->rpcb_next, b = b->rpcb_next)
		if (a->rpcb_map.r_prog != b->rpcb_map.r_prog || a->rpcb_map.r_vers != b->rpcb_map.r_vers ||
		    !same_str(a->rpcb_map.r_netid, b->rpcb_map.r_netid) ||
		    !same_str(a->rpcb_map.r_addr, b->rpcb_map.r_addr) ||
		    !same_str(a->rpcb_map.r_owner, b->rpcb_map.r_owner))
			return false;
	return !a && !b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char out[RPCRDMA_RPCB_REPLY_MAX * 2];
	struct rpc_msg m = { .rm_xid = XID, .rm_direction = REPLY };
	rpcblist_ptr list = NULL, again = NULL;
	struct rpc_err err;
	XDR x;

	if (rpcrdma_rpcb_dump_decode((const char *)data, size, XID, &list, &err)) {
		check(!list && err.re_status != RPC_SUCCESS);
		return 0;
	}
	check(err.re_status == RPC_SUCCESS);
	m.rm_reply.rp_stat = MSG_ACCEPTED;
	m.acpted_rply.ar_verf = _null_auth;
	m.acpted_rply.ar_stat = SUCCESS;
	m.acpted_rply.ar_results.where = (caddr_t)&list;
	m.acpted_rply.ar_results.proc = (xdrproc_t)xdr_rpcblist_ptr;
	xdrmem_create(&x, out, sizeof(out), XDR_ENCODE);
	check(xdr_replymsg(&x, &m));
	check(rpcrdma_rpcb_dump_decode(out, XDR_GETPOS(&x), XID, &again, &err) == 0);
	check(same_list(list, again));
	xdr_free((xdrproc_t)xdr_rpcblist_ptr, (char *)&list);
	xdr_free((xdrproc_t)xdr_rpcblist_ptr, (char *)&again);
	return 0;
}
