/*
 * rpc_gss: libtirpc's own RPCSEC_GSS with Kerberos 5 over rpcrdma, side by
 * side with libtirpc's TCP transport: the client's AUTH from
 * rpc_gss_seccreate(), the server's from svc_getreq()'s RPCSEC_GSS
 * handling after rpc_gss_set_svc_name().  rpc_gss.test starts a KDC in
 * the test bed, makes the keytabs and gets the client's ticket.  For each
 * transport and each service (krb5: authentication only, krb5i:
 * integrity, krb5p: privacy):
 *   - the context is established through the transport (RPCSEC_GSS_INIT
 *     calls through the CLIENT, answered by libtirpc inside the server's
 *     svc_getreq);
 *   - ECHO of 100 bytes and 64 KiB, WRITE and READ of 200 KiB, LONG_RES:
 *     results intact; the server saw every call as RPCSEC_GSS with the
 *     service asked for and the client's principal (rpc_gss_getcred);
 *   - 4 threads share the CLIENT and its AUTH (RPCSEC_GSS keeps its
 *     sequence number unlocked; its server takes a window of 5).
 * Over libtirpc's TCP, krb5i and krb5p get the threads' small ECHO calls
 * only: its stream transport fails longer bodies under them (seen with
 * libtirpc 1.3.3: ECHO of 64 KiB and WRITE RPC_CANTDECODEARGS, READ
 * RPC_CANTDECODERES; RPCSEC_GSS seeks in the record stream, which
 * xdrrec allows only within its buffer).
 * Over rpcrdma only, with krb5i: a CLIENT without a binding sends a long
 * LONG_RES again after the server's ERR_CHUNK; libtirpc's server refuses
 * a sequence number it has seen (RPCSEC_GSS_CTXPROBLEM), so the call
 * succeeds only if it went out again with a new one.
 *
 *   rpc_gss PROVIDER ADDR SERVICE@HOST CLIENT_PRINCIPAL   (run by rpc_gss.test)
 *
 * Prints PASS/FAIL per check; exits 0 only when every check passed.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcsec_gss.h>

#include "rdmatest_support.h"
#include "side_by_side.h"

#define PROG "rpc_gss"
#define MECH "kerberos_v5"

static const struct timeval call_tv = { .tv_sec = 60 };
static unsigned int failures;

#define check(ok, ...) (failures += !rdmatest_check(PROG, (ok), __VA_ARGS__))

/* ---- server: what the dispatch saw ------------------------------------------------------ */

static atomic_uint seen_calls, seen_wrong;
static atomic_int want_service; /* rpc_gss_service_t every call must have arrived with */
static const char *want_client;

/* Whether libtirpc authenticated @rq as RPCSEC_GSS with the service and principal expected. */
static bool gss_call_as_expected(struct svc_req *rq)
{
	rpc_gss_rawcred_t *raw = NULL;

	if (rq->rq_cred.oa_flavor != RPCSEC_GSS || !rpc_gss_getcred(rq, &raw, NULL, NULL) || !raw)
		return false;
	if ((int)raw->service != atomic_load(&want_service) || !raw->client_principal)
		return false;
	return raw->client_principal->len == (int)strlen(want_client) &&
	       !memcmp(raw->client_principal->name, want_client, strlen(want_client));
}

/*
 * NULL calls are not looked at: RPCSEC_GSS_DESTROY is one, dispatched
 * after libtirpc has freed the context rpc_gss_getcred() would read.
 */
static void gss_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	if (rq->rq_proc == RDMATEST_NULL) {
		rdmatest_dispatch(rq, xprt);
		return;
	}
	atomic_fetch_add(&seen_calls, 1);
	if (!gss_call_as_expected(rq))
		atomic_fetch_add(&seen_wrong, 1);
	rdmatest_dispatch(rq, xprt);
}

/* ---- client -------------------------------------------------------------------------------- */

static const struct {
	rpc_gss_service_t service;
	const char *name;
} services[] = {
	{ rpcsec_gss_svc_none, "krb5" },
	{ rpcsec_gss_svc_integrity, "krb5i" },
	{ rpcsec_gss_svc_privacy, "krb5p" },
};

/* A context for @cl's server; NULL (and the reason printed) when it cannot be established. */
static AUTH *gss_auth(CLIENT *cl, const char *principal, rpc_gss_service_t service,
		      const char *label)
{
	rpc_gss_options_ret_t ret;
	AUTH *a;

	memset(&ret, 0, sizeof(ret));
	a = rpc_gss_seccreate(cl, (char *)principal, (char *)MECH, service, NULL, NULL, &ret);
	check(a != NULL, "%s: context established (GSS major %#x, minor %d, mechanism %s)", label,
	      (unsigned)ret.major_status, ret.minor_status, ret.actual_mechanism);
	return a;
}

#define THREADS 4
#define THREAD_CALLS 20

/* Every service through @cl; the CLIENT's own AUTH is put back afterwards. */
static void run_client(CLIENT *cl, const char *transport, bool tcp, const char *principal)
{
	AUTH *own = cl->cl_auth;
	char label[96];

	for (size_t i = 0; i < sizeof(services) / sizeof(services[0]); i++) {
		unsigned int calls, c0, w0;
		AUTH *a;

		snprintf(label, sizeof(label), "%s, %s", transport, services[i].name);
		a = gss_auth(cl, principal, services[i].service, label);
		if (!a)
			continue;
		cl->cl_auth = a;
		atomic_store(&want_service, (int)services[i].service);
		c0 = atomic_load(&seen_calls);
		w0 = atomic_load(&seen_wrong);
		calls = 0;
		if (!tcp || services[i].service == rpcsec_gss_svc_none)
			failures += rdmatest_check_procedures(PROG, cl, label, call_tv, &calls);
		failures += rdmatest_check_threads(PROG, cl, label, THREADS, THREAD_CALLS, call_tv);
		calls += THREADS * THREAD_CALLS;
		check(atomic_load(&seen_calls) - c0 == calls && atomic_load(&seen_wrong) == w0,
		      "%s: the server saw %u of %u calls, %u of them not as RPCSEC_GSS %s from %s",
		      label, atomic_load(&seen_calls) - c0, calls, atomic_load(&seen_wrong) - w0,
		      services[i].name, want_client);
		auth_destroy(a); /* RPCSEC_GSS_DESTROY through the CLIENT */
		cl->cl_auth = own;
	}
}

/* ERR_CHUNK, then the call again: taken by the server only with a new sequence number. */
static void run_resend(const char *host, const char *netid, const char *label,
		       const char *principal)
{
	rdmatest_read_args la = { 40000, 79 }; /* 160 KB of results: past the first 64 KiB offered */
	const struct timeval tv = { .tv_sec = 20 };
	rdmatest_words lw = { 0, NULL };
	CLIENT *cl = clnt_rdma_create(host, RDMATEST_PROG, RDMATEST_V1, netid, NULL);
	AUTH *own, *a;
	enum clnt_stat st;
	bool same;

	check(cl != NULL, "%s, no binding: CLIENT%s", label, cl ? "" : clnt_spcreateerror(""));
	if (!cl)
		return;
	own = cl->cl_auth;
	a = gss_auth(cl, principal, rpcsec_gss_svc_integrity, label);
	if (a) {
		cl->cl_auth = a;
		atomic_store(&want_service, (int)rpcsec_gss_svc_integrity);
		st = clnt_call(cl, RDMATEST_LONG_RES, (xdrproc_t)xdr_rdmatest_read_args, (char *)&la,
			       (xdrproc_t)xdr_rdmatest_words, (char *)&lw, tv);
		same = st == RPC_SUCCESS && lw.rdmatest_words_len == la.count;
		for (uint32_t i = 0; same && i < la.count; i++)
			same = lw.rdmatest_words_val[i] == rdmatest_gen_word(la.seed, i);
		check(same, "%s, krb5i, no binding: LONG_RES %u words sent again after ERR_CHUNK: %s",
		      label, la.count, clnt_sperrno(st));
		if (st == RPC_SUCCESS)
			clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_words, (char *)&lw);
		auth_destroy(a);
		cl->cl_auth = own;
	}
	clnt_destroy(cl);
}

int main(int argc, char **argv)
{
	const char *netid = argc > 2 && strchr(argv[2], ':') ? "rdma6" : "rdma";
	struct sockaddr_storage tcp_addr;
	struct rpcrdma_options o;
	char label[64];
	CLIENT *cl;

	if (argc != 5) {
		fprintf(stderr, "usage: %s PROVIDER ADDR SERVICE@HOST CLIENT_PRINCIPAL\n", PROG);
		return 2;
	}
	want_client = argv[4];
	rdmatest_raise_memlock();
	if (!rpc_gss_set_svc_name(argv[3], (char *)MECH, 0, RDMATEST_PROG, RDMATEST_V1)) {
		fprintf(stderr, "%s: rpc_gss_set_svc_name(%s) failed\n", PROG, argv[3]);
		return 1;
	}
	if (!rdmatest_listen(PROG, argv[2], NULL, gss_dispatch) ||
	    !rdmatest_tcp_listen(argv[2], gss_dispatch, &tcp_addr) || !rdmatest_start_server(PROG)) {
		fprintf(stderr, "%s: cannot start the servers\n", PROG);
		return 1;
	}
	cl = rdmatest_tcp_client(&tcp_addr);
	check(cl != NULL, "libtirpc TCP client");
	if (cl) {
		run_client(cl, "TCP (libtirpc)", true, argv[3]);
		clnt_destroy(cl);
	}
	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	cl = clnt_rdma_create(argv[2], RDMATEST_PROG, RDMATEST_V1, netid, &o);
	check(cl != NULL, "clnt_rdma_create(%s, %s)%s", argv[2], netid,
	      cl ? "" : clnt_spcreateerror(""));
	snprintf(label, sizeof(label), "RDMA (%s)", argv[1]);
	if (cl) {
		run_client(cl, label, false, argv[3]);
		clnt_destroy(cl);
	}
	run_resend(argv[2], netid, label, argv[3]);
	printf("%s: %s %s: %s (%u failed)\n", PROG, argv[1], argv[2],
	       failures ? "FAILED" : "all passed", failures);
	fflush(stdout);
	_exit(failures ? 1 : 0); /* the server thread stays in svc_run() */
}
