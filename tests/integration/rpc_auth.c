/*
 * rpc_auth: AUTH_SYS and AUTH_NONE credentials over RPC-over-RDMA.
 * A server thread serves the rdmatest program with its own dispatch:
 * ECHO answers "<what the server decoded from the credential>" NUL
 * "<the argument>", and rejects (svcerr_auth AUTH_BADCRED) an AUTH_SYS
 * credential that is not the one this test sends, or any other flavor.
 * For each address the client checks, on one CLIENT:
 *   - AUTH_NONE (the default): ECHO reports flavor 0;
 *   - cl_auth = authunix_create(machine, uid, gid, 16 gids): NULL, and
 *     ECHO inline and as a long message (64 KiB: position-zero read
 *     chunk and reply chunk) report exactly that credential;
 *   - a different uid is refused with RPC_AUTHERROR / AUTH_BADCRED;
 *   - back to AUTH_NONE: ECHO reports flavor 0 again.
 *
 *   rpc_auth PROVIDER ADDR...     (run by rpc_auth.test)
 *
 * Prints PASS/FAIL per check; exits 0 only when every check passed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdmatest_support.h"

#define PROG "rpc_auth"
#define DESC_MAX 1024
#define LONG_ECHO 65536

static const struct timeval call_tv = { .tv_sec = 60 };
static unsigned int failures;

/* The one AUTH_SYS credential the server accepts. */
static char machine[] = "rpcrdma-auth-test.client.example";
static const uid_t test_uid = 4711;
static const gid_t test_gid = 815;
static gid_t test_gids[16] = { 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 65534 };
#define NGIDS ((int)(sizeof(test_gids) / sizeof(test_gids[0])))

#define check(ok, ...) (failures += !rdmatest_check(PROG, (ok), __VA_ARGS__))

/* ---- credentials as text ------------------------------------------------------------------ */

static void describe_sys(char *out, size_t cap, const char *mach, uid_t uid, gid_t gid,
			 unsigned int n, const gid_t *gids)
{
	size_t len = (size_t)snprintf(out, cap, "flavor=AUTH_SYS machine=%s uid=%u gid=%u gids=",
				      mach, (unsigned)uid, (unsigned)gid);

	for (unsigned int i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s%u", i ? "," : "",
					(unsigned)gids[i]);
}

static void describe_expected_sys(char *out, size_t cap)
{
	describe_sys(out, cap, machine, test_uid, test_gid, NGIDS, test_gids);
}

/* ---- server ----------------------------------------------------------------------------------- */

/* What the server decoded; false when the credential is not one this test sends. */
static bool describe_request(const struct svc_req *rq, char *out, size_t cap)
{
	const struct authunix_parms *p = (const struct authunix_parms *)rq->rq_clntcred;
	char want[DESC_MAX];

	if (rq->rq_cred.oa_flavor == AUTH_NONE) {
		snprintf(out, cap, "flavor=AUTH_NONE");
		return true;
	}
	if (rq->rq_cred.oa_flavor != AUTH_SYS || !p) {
		snprintf(out, cap, "flavor=%d", (int)rq->rq_cred.oa_flavor);
		return false;
	}
	describe_sys(out, cap, p->aup_machname, p->aup_uid, p->aup_gid, p->aup_len, p->aup_gids);
	describe_expected_sys(want, sizeof(want));
	return !strcmp(out, want);
}

static void auth_echo(struct svc_req *rq, SVCXPRT *xprt)
{
	rdmatest_data arg = { 0, NULL }, res;
	char desc[DESC_MAX];
	size_t dlen;

	if (!describe_request(rq, desc, sizeof(desc))) {
		fprintf(stderr, "%s: server: AUTH_BADCRED for %s\n", PROG, desc);
		svcerr_auth(xprt, AUTH_BADCRED);
		return;
	}
	if (!svc_getargs(xprt, (xdrproc_t)xdr_rdmatest_data, (char *)&arg)) {
		svcerr_decode(xprt);
		return;
	}
	dlen = strlen(desc) + 1;
	res.rdmatest_data_len = (u_int)(dlen + arg.rdmatest_data_len);
	res.rdmatest_data_val = malloc(res.rdmatest_data_len);
	if (res.rdmatest_data_val) {
		memcpy(res.rdmatest_data_val, desc, dlen);
		memcpy(res.rdmatest_data_val + dlen, arg.rdmatest_data_val, arg.rdmatest_data_len);
		svc_sendreply(xprt, (xdrproc_t)xdr_rdmatest_data, (char *)&res);
	} else {
		svcerr_systemerr(xprt);
	}
	free(res.rdmatest_data_val);
	svc_freeargs(xprt, (xdrproc_t)xdr_rdmatest_data, (char *)&arg);
}

static void auth_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	if (rq->rq_proc == RDMATEST_ECHO)
		auth_echo(rq, xprt);
	else
		rdmatest_dispatch(rq, xprt);
}

/* ---- client ------------------------------------------------------------------------------------ */

/* ECHO @size bytes; the reply must carry @want_desc and the bytes sent. */
static void check_echo(CLIENT *cl, const char *label, uint32_t size, const char *want_desc)
{
	uint8_t *buf = malloc(size ? size : 1);
	rdmatest_data in = { size, (char *)buf }, out = { 0, NULL };
	size_t dlen = strlen(want_desc) + 1;
	enum clnt_stat st;

	if (!buf) {
		check(false, "%s: out of memory", label);
		return;
	}
	rdmatest_fill(buf, size, size ^ 0x1234);
	st = clnt_call(cl, RDMATEST_ECHO, (xdrproc_t)xdr_rdmatest_data, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_data, (char *)&out, call_tv);
	if (st != RPC_SUCCESS) {
		check(false, "%s: ECHO %u bytes: %s", label, size, clnt_sperrno(st));
	} else {
		bool desc_ok = out.rdmatest_data_len >= dlen &&
			       !memcmp(out.rdmatest_data_val, want_desc, dlen);
		bool data_ok = desc_ok && out.rdmatest_data_len == dlen + size &&
			       !memcmp(out.rdmatest_data_val + dlen, buf, size);

		check(desc_ok, "%s: ECHO %u bytes: server decoded \"%.*s\"", label, size,
		      (int)strnlen(out.rdmatest_data_val ? out.rdmatest_data_val : "",
				   out.rdmatest_data_len),
		      out.rdmatest_data_val ? out.rdmatest_data_val : "");
		check(data_ok, "%s: ECHO %u bytes: data returned intact", label, size);
		clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_data, (char *)&out);
	}
	free(buf);
}

static void check_refused(CLIENT *cl, const char *label)
{
	rdmatest_data in = { 4, (char *)"nope" }, out = { 0, NULL };
	struct rpc_err e;
	enum clnt_stat st;

	st = clnt_call(cl, RDMATEST_ECHO, (xdrproc_t)xdr_rdmatest_data, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_data, (char *)&out, call_tv);
	clnt_geterr(cl, &e);
	check(st == RPC_AUTHERROR && e.re_why == AUTH_BADCRED,
	      "%s: a different uid is refused with RPC_AUTHERROR/AUTH_BADCRED (%s, why %d)", label,
	      clnt_sperrno(st), st == RPC_AUTHERROR ? (int)e.re_why : -1);
	if (st == RPC_SUCCESS)
		clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_data, (char *)&out);
}

static void set_auth(CLIENT *cl, AUTH *a)
{
	if (cl->cl_auth)
		auth_destroy(cl->cl_auth);
	cl->cl_auth = a;
}

static void run_sys(CLIENT *cl, const char *label)
{
	char want[DESC_MAX];
	enum clnt_stat st;
	AUTH *a = authunix_create(machine, test_uid, test_gid, NGIDS, test_gids);

	check(a != NULL, "%s: authunix_create", label);
	if (!a)
		return;
	set_auth(cl, a);
	describe_expected_sys(want, sizeof(want));
	st = rdmatest_call_null(cl, call_tv);
	check(st == RPC_SUCCESS, "%s: AUTH_SYS NULL: %s", label, clnt_sperrno(st));
	check_echo(cl, label, 100, want);
	check_echo(cl, label, LONG_ECHO, want);
}

static void run_wrong_sys(CLIENT *cl, const char *label)
{
	AUTH *a = authunix_create(machine, test_uid + 1, test_gid, NGIDS, test_gids);

	check(a != NULL, "%s: authunix_create (uid %u)", label, (unsigned)test_uid + 1);
	if (!a)
		return;
	set_auth(cl, a);
	check_refused(cl, label);
}

static void run_client(const char *provider, const char *host)
{
	const char *netid = strchr(host, ':') ? "rdma6" : "rdma";
	struct rpcrdma_options o;
	char label[64];
	CLIENT *cl;

	snprintf(label, sizeof(label), "%s %s", provider, strcmp(netid, "rdma") ? "IPv6" : "IPv4");
	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	cl = clnt_rdma_create(host, RDMATEST_PROG, RDMATEST_V1, netid, &o);
	check(cl != NULL, "%s: clnt_rdma_create(%s, %s)%s", label, host, netid,
	      cl ? "" : clnt_spcreateerror(""));
	if (!cl)
		return;
	check_echo(cl, label, 100, "flavor=AUTH_NONE");
	run_sys(cl, label);
	run_wrong_sys(cl, label);
	set_auth(cl, authnone_create());
	check_echo(cl, label, 100, "flavor=AUTH_NONE");
	check_echo(cl, label, LONG_ECHO, "flavor=AUTH_NONE");
	clnt_destroy(cl);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s PROVIDER ADDR...\n", PROG);
		return 2;
	}
	rdmatest_raise_memlock();
	for (int i = 2; i < argc; i++)
		if (!rdmatest_listen(PROG, argv[i], NULL, auth_dispatch))
			return 1;
	if (!rdmatest_start_server(PROG))
		return 1;
	for (int i = 2; i < argc; i++)
		run_client(argv[1], argv[i]);
	printf("%s: %s: %s (%u failed)\n", PROG, argv[1], failures ? "FAILED" : "all passed",
	       failures);
	fflush(stdout);
	_exit(failures ? 1 : 0); /* the server thread stays in svc_run() */
}
