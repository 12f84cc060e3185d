/*
 * rpc_auth_wrap: a credential flavor that wraps the call's body, as
 * RPCSEC_GSS's integrity service does, through libtirpc's interface for
 * such flavors (AUTH_WRAP/AUTH_UNWRAP/AUTH_REFRESH in the CLIENT,
 * svc_auth_reg and SVCAUTH_WRAP/SVCAUTH_UNWRAP in the server), over
 * rpcrdma and, side by side with the same expectations, over libtirpc's
 * own TCP transport.  The flavor (200777, a private one) carries a
 * generation number; its body on the wire is
 *     opaque body<>; unsigned checksum;
 * where the checksum is FNV-1a of the body with a tag for the direction,
 * and the server counts what it wrapped and unwrapped.  Per transport:
 *   - ECHO inline and of 64 KiB, WRITE and READ of 200 KiB (procedures
 *     the rdmatest binding moves by read and write chunks with AUTH_SYS,
 *     whole messages here), LONG_RES: replies intact, and every call and
 *     reply went through the flavor's wrap and unwrap on both sides;
 *   - a checksum the server cannot verify: RPC_CANTDECODEARGS;
 *   - each call is wrapped once (RPCSEC_GSS spends a sequence number and
 *     a checksum on each wrap), also the long ones;
 *   - the server refuses generation 0 (AUTH_REJECTEDCRED): the CLIENT
 *     refreshes the credential and the call succeeds; a server that
 *     refuses every generation below 5 sees 3 attempts (2 refreshes, as
 *     libtirpc's clients) and the call fails with RPC_AUTHERROR.
 *
 *   rpc_auth_wrap PROVIDER ADDR     (run by rpc_auth_wrap.test)
 *
 * Prints PASS/FAIL per check; exits 0 only when every check passed.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/svc_auth.h>
#include <rpc/svc_mt.h>

#include "rdmatest_support.h"

#define PROG "rpc_auth_wrap"
#define WRAP_FLAVOR 200777
#define TAG_CALL 0x43414c4cu  /* checksum tags: a reply's cannot pass for a call's */
#define TAG_REPLY 0x52504c59u
#define BIG 204800u

static const struct timeval call_tv = { .tv_sec = 60 };
static unsigned int failures;
static atomic_uint min_generation; /* the server refuses credentials below it */
static atomic_uint svc_unwraps, svc_wraps, svc_refused;

#define check(ok, ...) (failures += !rdmatest_check(PROG, (ok), __VA_ARGS__))

/* ---- the wrapped body, both sides ------------------------------------------------------------- */

static bool_t body_wrap(XDR *xdrs, xdrproc_t xfunc, void *where, uint32_t tag)
{
	u_int len = (u_int)xdr_sizeof(xfunc, where);
	char *body = malloc(len ? len : 1);
	uint32_t sum;
	bool_t ok;
	XDR x;

	if (!body)
		return FALSE;
	xdrmem_create(&x, body, len, XDR_ENCODE);
	ok = xfunc(&x, where) && XDR_GETPOS(&x) == len;
	XDR_DESTROY(&x);
	sum = rdmatest_fnv1a((const uint8_t *)body, len) ^ tag;
	ok = ok && xdr_bytes(xdrs, &body, &len, ~0u) && xdr_u_int32_t(xdrs, &sum);
	free(body);
	return ok;
}

static bool_t body_unwrap(XDR *xdrs, xdrproc_t xfunc, void *where, uint32_t tag)
{
	char *body = NULL;
	u_int len = 0;
	uint32_t sum;
	bool_t ok;
	XDR x;

	if (!xdr_bytes(xdrs, &body, &len, ~0u))
		return FALSE;
	ok = xdr_u_int32_t(xdrs, &sum) &&
	     sum == (rdmatest_fnv1a((const uint8_t *)body, len) ^ tag);
	if (ok) {
		xdrmem_create(&x, body, len, XDR_DECODE);
		ok = xfunc(&x, where);
		XDR_DESTROY(&x);
	}
	free(body);
	return ok;
}

/* ---- server ----------------------------------------------------------------------------------- */

static int svc_wrap(SVCAUTH *a, XDR *xdrs, xdrproc_t xfunc, caddr_t where)
{
	(void)a;
	atomic_fetch_add(&svc_wraps, 1);
	return body_wrap(xdrs, xfunc, where, TAG_REPLY);
}

static int svc_unwrap(SVCAUTH *a, XDR *xdrs, xdrproc_t xfunc, caddr_t where)
{
	(void)a;
	atomic_fetch_add(&svc_unwraps, 1);
	return body_unwrap(xdrs, xfunc, where, TAG_CALL);
}

static int svc_wrap_destroy(SVCAUTH *a)
{
	(void)a;
	return TRUE;
}

static struct svc_auth_ops svc_wrap_ops = {
	.svc_ah_wrap = svc_wrap,
	.svc_ah_unwrap = svc_unwrap,
	.svc_ah_destroy = svc_wrap_destroy,
};

/* svc_auth_reg's handler: the credential is the generation, 4 bytes. */
static enum auth_stat svc_wrap_authenticate(struct svc_req *rq, struct rpc_msg *msg)
{
	struct opaque_auth *cred = &msg->rm_call.cb_cred;
	uint32_t gen;

	if (cred->oa_length != 4)
		return AUTH_BADCRED;
	memcpy(&gen, cred->oa_base, 4);
	if (ntohl(gen) < atomic_load(&min_generation)) {
		atomic_fetch_add(&svc_refused, 1);
		return AUTH_REJECTEDCRED;
	}
	SVC_XP_AUTH(rq->rq_xprt).svc_ah_ops = &svc_wrap_ops;
	SVC_XP_AUTH(rq->rq_xprt).svc_ah_private = NULL;
	rq->rq_xprt->xp_verf = _null_auth;
	return AUTH_OK;
}

/* libtirpc's own TCP transport for the same program, served by the same svc_run(). */
static bool tcp_listen(const char *addr, struct sockaddr_storage *bound)
{
	socklen_t len = sizeof(*bound);
	SVCXPRT *x;
	int fd;

	if (!rdmatest_parse_addr(addr, 0, bound))
		return false;
	fd = socket(bound->ss_family, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)bound, len) || listen(fd, 8) ||
	    getsockname(fd, (struct sockaddr *)bound, &len))
		return false;
	x = svc_vc_create(fd, 0, 0);
	return x && svc_reg(x, RDMATEST_PROG, RDMATEST_V1, rdmatest_dispatch, NULL);
}

/* ---- client ------------------------------------------------------------------------------------ */

struct wrap_auth {
	AUTH auth;
	uint32_t gen_be;   /* the credential's body */
	bool tamper;       /* send a checksum the server cannot verify */
	unsigned int wraps, unwraps, refreshes;
};

static struct wrap_auth *wrap_of(AUTH *a)
{
	return (struct wrap_auth *)a;
}

static void wa_nextverf(AUTH *a)
{
	(void)a;
}

static int wa_marshal(AUTH *a, XDR *xdrs)
{
	return xdr_opaque_auth(xdrs, &a->ah_cred) && xdr_opaque_auth(xdrs, &a->ah_verf);
}

static int wa_validate(AUTH *a, struct opaque_auth *verf)
{
	(void)a;
	return verf->oa_flavor == AUTH_NONE;
}

static int wa_refresh(AUTH *a, void *msg)
{
	struct wrap_auth *w = wrap_of(a);

	(void)msg;
	w->refreshes++;
	w->gen_be = htonl(ntohl(w->gen_be) + 1);
	return TRUE;
}

static void wa_destroy(AUTH *a)
{
	free(wrap_of(a));
}

static int wa_wrap(AUTH *a, XDR *xdrs, xdrproc_t xfunc, caddr_t where)
{
	struct wrap_auth *w = wrap_of(a);

	w->wraps++;
	return body_wrap(xdrs, xfunc, where, w->tamper ? ~TAG_CALL : TAG_CALL);
}

static int wa_unwrap(AUTH *a, XDR *xdrs, xdrproc_t xfunc, caddr_t where)
{
	wrap_of(a)->unwraps++;
	return body_unwrap(xdrs, xfunc, where, TAG_REPLY);
}

static struct auth_ops wrap_auth_ops = {
	.ah_nextverf = wa_nextverf,
	.ah_marshal = wa_marshal,
	.ah_validate = wa_validate,
	.ah_refresh = wa_refresh,
	.ah_destroy = wa_destroy,
	.ah_wrap = wa_wrap,
	.ah_unwrap = wa_unwrap,
};

static struct wrap_auth *wrap_auth_create(uint32_t generation)
{
	struct wrap_auth *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->gen_be = htonl(generation);
	w->auth.ah_ops = &wrap_auth_ops;
	w->auth.ah_cred = (struct opaque_auth){ WRAP_FLAVOR, (caddr_t)&w->gen_be, 4 };
	w->auth.ah_verf = _null_auth;
	return w;
}

static enum clnt_stat call(CLIENT *cl, rpcproc_t proc, void *in, void *out)
{
	xdrproc_t xa, xr;

	if (!rdmatest_xdr_of(proc, &xa, &xr))
		return RPC_PROCUNAVAIL;
	return clnt_call(cl, proc, xa, in, xr, out, call_tv);
}

/* The procedures, with the data checked; returns the calls made. */
static unsigned int run_procedures(CLIENT *cl, const char *label, uint8_t *buf)
{
	rdmatest_read_args ra = { BIG, 77 }, la = { 1000, 78 };
	rdmatest_write_args wa = { 0, { BIG, (char *)buf } };
	rdmatest_write_res wr = { 0, 0 };
	rdmatest_read_res rr = { 0, { 0, NULL } };
	rdmatest_words lw = { 0, NULL };
	uint32_t sizes[2] = { 100, 65536 };
	bool same = true;
	enum clnt_stat st;

	for (int i = 0; i < 2; i++) {
		rdmatest_data in = { sizes[i], (char *)buf }, out = { 0, NULL };

		rdmatest_fill(buf, sizes[i], sizes[i]);
		st = call(cl, RDMATEST_ECHO, &in, &out);
		check(st == RPC_SUCCESS && out.rdmatest_data_len == sizes[i] &&
			      !memcmp(out.rdmatest_data_val, buf, sizes[i]),
		      "%s: ECHO %u bytes: %s", label, sizes[i], clnt_sperrno(st));
		if (st == RPC_SUCCESS)
			clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_data, (char *)&out);
	}
	rdmatest_fill(buf, BIG, 5);
	st = call(cl, RDMATEST_WRITE, &wa, &wr);
	check(st == RPC_SUCCESS && wr.count == BIG && wr.checksum == rdmatest_fnv1a(buf, BIG),
	      "%s: WRITE %u bytes: %s", label, BIG, clnt_sperrno(st));
	st = call(cl, RDMATEST_READ, &ra, &rr);
	for (uint32_t i = 0; st == RPC_SUCCESS && same && i < BIG; i++)
		same = (uint8_t)rr.data.rdmatest_data_val[i] == rdmatest_gen_byte(ra.seed, i);
	check(st == RPC_SUCCESS && rr.data.rdmatest_data_len == BIG && same,
	      "%s: READ %u bytes: %s", label, BIG, clnt_sperrno(st));
	if (st == RPC_SUCCESS)
		clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_read_res, (char *)&rr);
	st = call(cl, RDMATEST_LONG_RES, &la, &lw);
	same = st == RPC_SUCCESS && lw.rdmatest_words_len == la.count;
	for (uint32_t i = 0; same && i < la.count; i++)
		same = lw.rdmatest_words_val[i] == rdmatest_gen_word(la.seed, i);
	check(same, "%s: LONG_RES %u words: %s", label, la.count, clnt_sperrno(st));
	if (st == RPC_SUCCESS)
		clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_words, (char *)&lw);
	return 5;
}

static void set_auth(CLIENT *cl, struct wrap_auth *w)
{
	if (cl->cl_auth)
		auth_destroy(cl->cl_auth);
	cl->cl_auth = &w->auth;
}

static void run_client(CLIENT *cl, const char *label, uint8_t *buf)
{
	struct wrap_auth *w = wrap_auth_create(1);
	rdmatest_data in = { 4, (char *)"oops" }, out = { 0, NULL };
	unsigned int u0, s0, calls, r0;
	struct rpc_err e;
	enum clnt_stat st;

	if (!w) {
		check(false, "%s: out of memory", label);
		return;
	}
	set_auth(cl, w);
	atomic_store(&min_generation, 1);
	u0 = atomic_load(&svc_unwraps);
	s0 = atomic_load(&svc_wraps);
	calls = run_procedures(cl, label, buf);
	check(w->wraps == calls && w->unwraps == calls &&
		      atomic_load(&svc_unwraps) - u0 == calls && atomic_load(&svc_wraps) - s0 == calls,
	      "%s: %u calls: client wrapped %u, unwrapped %u; server unwrapped %u, wrapped %u", label,
	      calls, w->wraps, w->unwraps, atomic_load(&svc_unwraps) - u0,
	      atomic_load(&svc_wraps) - s0);

	w->tamper = true;
	st = call(cl, RDMATEST_ECHO, &in, &out);
	check(st == RPC_CANTDECODEARGS, "%s: a checksum the server cannot verify: %s", label,
	      clnt_sperrno(st));
	if (st == RPC_SUCCESS)
		clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_data, (char *)&out);
	w->tamper = false;

	/* libtirpc's TCP client also refreshes on other error replies, such as the one above. */
	w->refreshes = 0;
	w->gen_be = htonl(0);
	r0 = atomic_load(&svc_refused);
	st = rdmatest_call_null(cl, call_tv);
	check(st == RPC_SUCCESS && w->refreshes == 1 && atomic_load(&svc_refused) - r0 == 1,
	      "%s: generation 0 refused, refreshed once, then accepted: %s (refreshes %u)", label,
	      clnt_sperrno(st), w->refreshes);

	atomic_store(&min_generation, 5);
	w->gen_be = htonl(1);
	w->refreshes = 0;
	r0 = atomic_load(&svc_refused);
	st = rdmatest_call_null(cl, call_tv);
	clnt_geterr(cl, &e);
	check(st == RPC_AUTHERROR && e.re_why == AUTH_REJECTEDCRED && w->refreshes == 2 &&
		      atomic_load(&svc_refused) - r0 == 3,
	      "%s: always refused: %s (why %d) after %u refreshes, %u attempts", label,
	      clnt_sperrno(st), (int)e.re_why, w->refreshes, atomic_load(&svc_refused) - r0);
}

static CLIENT *tcp_client(const struct sockaddr_storage *addr)
{
	struct netbuf nb = { sizeof(*addr), sizeof(*addr), (void *)addr };
	int fd = socket(addr->ss_family, SOCK_STREAM, 0);
	CLIENT *cl;

	if (fd < 0 || connect(fd, (const struct sockaddr *)addr, sizeof(*addr)))
		return NULL;
	cl = clnt_vc_create(fd, &nb, RDMATEST_PROG, RDMATEST_V1, 0, 0);
	if (cl)
		clnt_control(cl, CLSET_FD_CLOSE, NULL);
	return cl;
}

int main(int argc, char **argv)
{
	const char *netid = argc > 2 && strchr(argv[2], ':') ? "rdma6" : "rdma";
	uint8_t *buf = malloc(BIG);
	struct sockaddr_storage tcp_addr;
	struct rpcrdma_options o;
	char label[64];
	CLIENT *cl;

	if (argc != 3 || !buf) {
		fprintf(stderr, "usage: %s PROVIDER ADDR\n", PROG);
		return 2;
	}
	rdmatest_raise_memlock();
	if (svc_auth_reg(WRAP_FLAVOR, svc_wrap_authenticate) != 0 ||
	    !rdmatest_listen(PROG, argv[2], NULL, NULL) || !tcp_listen(argv[2], &tcp_addr) ||
	    !rdmatest_start_server(PROG)) {
		fprintf(stderr, "%s: cannot start the servers\n", PROG);
		free(buf);
		return 1;
	}
	cl = tcp_client(&tcp_addr);
	check(cl != NULL, "libtirpc TCP client");
	if (cl) {
		run_client(cl, "TCP (libtirpc)", buf);
		clnt_destroy(cl);
	}
	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	cl = clnt_rdma_create(argv[2], RDMATEST_PROG, RDMATEST_V1, netid, &o);
	check(cl != NULL, "clnt_rdma_create(%s, %s)%s", argv[2], netid,
	      cl ? "" : clnt_spcreateerror(""));
	snprintf(label, sizeof(label), "RDMA (%s)", argv[1]);
	if (cl) {
		run_client(cl, label, buf);
		clnt_destroy(cl);
	}
	free(buf);
	printf("%s: %s: %s (%u failed)\n", PROG, argv[1], failures ? "FAILED" : "all passed",
	       failures);
	fflush(stdout);
	_exit(failures ? 1 : 0); /* the server thread stays in svc_run() */
}
