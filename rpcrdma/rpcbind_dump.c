/*
 * One RPCBPROC_DUMP call over a connected TCP socket, bounded in time and
 * size: the call is written and the record-marked reply read here, each
 * wait polled against one deadline, the reply kept whole in memory (at
 * most RPCRDMA_RPCB_REPLY_MAX bytes) before it is decoded.  libtirpc's
 * clnt_vc would wait its timeout afresh for every read and decode the
 * list from the stream as it came: an rpcbind that trickles its reply,
 * or sends an endless list, held the caller and its memory.
 */
#include "rpcrdma/rpcbind_dump.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rpcrdma/verbs.h"

#define RECORD_LAST 0x80000000u

int rpcrdma_fd_wait(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n;

	do
		n = poll(&p, 1, rpcrdma_ms_left(deadline));
	while (n < 0 && errno == EINTR);
	return n > 0 ? 0 : n == 0 ? -ETIMEDOUT : -errno;
}

static int send_all(int fd, const char *p, size_t n, int64_t deadline)
{
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		int rc;

		if (k > 0) {
			p += k;
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		rc = rpcrdma_fd_wait(fd, POLLOUT, deadline);
		if (rc)
			return rc;
	}
	return 0;
}

/* Exactly @n bytes; -ECONNRESET when the peer closes first. */
static int recv_all(int fd, char *p, size_t n, int64_t deadline)
{
	while (n) {
		ssize_t k = recv(fd, p, n, MSG_DONTWAIT);
		int rc;

		if (k > 0) {
			p += k;
			n -= (size_t)k;
			continue;
		}
		if (k == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		rc = rpcrdma_fd_wait(fd, POLLIN, deadline);
		if (rc)
			return rc;
	}
	return 0;
}

/* The fragments of one record, joined: 0 with *@buf (free it) and *@len, or -errno. */
static int recv_record(int fd, int64_t deadline, char **buf, size_t *len)
{
	size_t have = 0, cap = 0;
	char *b = NULL;
	uint32_t mark;
	int rc;

	do {
		uint32_t frag;

		rc = recv_all(fd, (char *)&mark, sizeof(mark), deadline);
		if (rc)
			break;
		mark = ntohl(mark);
		frag = mark & ~RECORD_LAST;
		if (frag > RPCRDMA_RPCB_REPLY_MAX - have) {
			rc = -EMSGSIZE;
			break;
		}
		if (have + frag + 1 > cap) { /* doubled: many small fragments copy little */
			size_t want = cap ? cap * 2 : 4096;
			char *grown;

			while (want < have + frag + 1) /* + 1: a record of no bytes still has a buffer */
				want *= 2;
			grown = realloc(b, want);
			if (!grown) {
				rc = -ENOMEM;
				break;
			}
			b = grown;
			cap = want;
		}
		rc = recv_all(fd, b + have, frag, deadline);
		have += frag;
	} while (!rc && !(mark & RECORD_LAST));
	if (rc) {
		free(b);
		return rc;
	}
	*buf = b;
	*len = have;
	return 0;
}

static int send_call(int fd, uint32_t xid, int64_t deadline)
{
	struct rpc_msg call = { .rm_xid = xid, .rm_direction = CALL };
	char out[4 + 64];
	uint32_t mark;
	XDR x;

	call.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	call.rm_call.cb_prog = RPCBPROG;
	call.rm_call.cb_vers = RPCBVERS;
	call.rm_call.cb_proc = RPCBPROC_DUMP;
	call.rm_call.cb_cred = _null_auth;
	call.rm_call.cb_verf = _null_auth;
	xdrmem_create(&x, out + 4, sizeof(out) - 4, XDR_ENCODE);
	if (!xdr_callmsg(&x, &call))
		return -EINVAL;
	mark = htonl(RECORD_LAST | XDR_GETPOS(&x));
	memcpy(out, &mark, sizeof(mark));
	return send_all(fd, out, 4 + XDR_GETPOS(&x), deadline);
}

int rpcrdma_rpcb_dump_decode(const char *buf, size_t len, uint32_t xid, rpcblist_ptr *list,
			     struct rpc_err *err)
{
	struct rpc_msg msg = { .rm_xid = 0 };
	bool ok;
	XDR x;

	*list = NULL;
	msg.acpted_rply.ar_verf = _null_auth;
	msg.acpted_rply.ar_results.where = (caddr_t)list;
	msg.acpted_rply.ar_results.proc = (xdrproc_t)xdr_rpcblist_ptr;
	xdrmem_create(&x, (char *)(uintptr_t)buf, len < UINT32_MAX ? (u_int)len : UINT32_MAX,
		      XDR_DECODE);
	ok = xdr_replymsg(&x, &msg) && msg.rm_xid == xid;
	if (ok)
		_seterr_reply(&msg, err);
	else
		*err = (struct rpc_err){ .re_status = RPC_CANTDECODERES, .re_errno = EPROTO };
	if (msg.rm_reply.rp_stat == MSG_ACCEPTED && msg.acpted_rply.ar_verf.oa_base) {
		x.x_op = XDR_FREE;
		xdr_opaque_auth(&x, &msg.acpted_rply.ar_verf);
	}
	if (err->re_status == RPC_SUCCESS)
		return 0;
	xdr_free((xdrproc_t)xdr_rpcblist_ptr, (char *)list);
	*list = NULL;
	return -EPROTO;
}

static enum clnt_stat status_of(int rc)
{
	switch (rc) {
	case -ETIMEDOUT:
		return RPC_TIMEDOUT;
	case -EMSGSIZE:
	case -ENOMEM:
		return RPC_CANTDECODERES;
	default:
		return RPC_CANTRECV;
	}
}

int rpcrdma_rpcb_dump(int fd, uint32_t xid, int64_t deadline, rpcblist_ptr *list,
		      struct rpc_err *err)
{
	size_t len = 0;
	char *buf = NULL;
	int rc;

	*list = NULL;
	rc = send_call(fd, xid, deadline);
	if (rc) {
		*err = (struct rpc_err){ .re_status = rc == -ETIMEDOUT ? RPC_TIMEDOUT : RPC_CANTSEND,
					 .re_errno = -rc };
		return rc;
	}
	rc = recv_record(fd, deadline, &buf, &len);
	if (rc) {
		*err = (struct rpc_err){ .re_status = status_of(rc), .re_errno = -rc };
		return rc;
	}
	rc = rpcrdma_rpcb_dump_decode(buf, len, xid, list, err);
	free(buf);
	return rc;
}
