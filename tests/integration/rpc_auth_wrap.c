/*
 * rpc_auth_wrap: a credential flavor that wraps the call's body, as
 * RPCSEC_GSS's integrity service does, through libtirpc's interface for
 * such flavors (AUTH_WRAP/AUTH_UNWRAP/AUTH_REFRESH in the CLIENT,
 * svc_auth_reg and SVCAUTH_WRAP/SVCAUTH_UNWRAP in the server), over
 * rpcrdma and, side by side with the same expectations, over libtirpc's
 * own TCP transport.  The flavor (support/wrap_flavor.h) carries a
 * generation number and a checksummed body, and both sides count what
 * they wrapped and unwrapped.  Per transport:
 *   - ECHO inline and of 64 KiB, WRITE and READ of 200 KiB (procedures
 *     the rdmatest binding moves by read and write chunks with AUTH_SYS,
 *     whole messages here), LONG_RES: replies intact, and every call and
 *     reply went through the flavor's wrap and unwrap on both sides;
 *   - a checksum the server cannot verify: RPC_CANTDECODEARGS;
 *   - each call is wrapped once (RPCSEC_GSS spends a sequence number and
 *     a checksum on each wrap), also the long ones;
 *   - 8 threads share the CLIENT and its AUTH, whose sequence number the
 *     reply's verifier must echo (kept without a lock, as RPCSEC_GSS's);
 *   - over rpcrdma again with the body written in place as libtirpc's
 *     RPCSEC_GSS writes it (XDR_SETPOS forward, XDR_INLINE back), on
 *     both sides;
 *   - the server refuses generation 0 (AUTH_REJECTEDCRED): the CLIENT
 *     refreshes the credential and the call succeeds; a server that
 *     refuses every generation below 5 sees 3 attempts (2 refreshes, as
 *     libtirpc's clients) and the call fails with RPC_AUTHERROR;
 *   - no call reaches the server twice with one sequence number (it
 *     refuses replays, as RPCSEC_GSS servers do).
 * Over rpcrdma only:
 *   - a CLIENT without a binding sends a long LONG_RES again after the
 *     server's ERR_CHUNK: marshalled anew, with a new sequence number,
 *     not refused as a replay and not refreshed;
 *   - the server's SVCAUTH_WRAP fails: the call gets RPC_SYSTEMERROR,
 *     and the next call on the connection succeeds;
 *   - with reconnect_resend and a 1 s retry timeout, a call whose reply
 *     the server holds back for 3 s is sent again on a new connection:
 *     marshalled anew, not refused as a replay, not refreshed.
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

#include "rdmatest_support.h"
#include "side_by_side.h"
#include "wrap_flavor.h"

#define PROG "rpc_auth_wrap"

static const struct timeval call_tv = { .tv_sec = 60 };
static unsigned int failures;

#define check(ok, ...) (failures += !rdmatest_check(PROG, (ok), __VA_ARGS__))

/* ---- client ---------------------------------------------------------------------------------- */

static enum clnt_stat call(CLIENT *cl, rpcproc_t proc, void *in, void *out)
{
	xdrproc_t xa, xr;

	if (!rdmatest_xdr_of(proc, &xa, &xr))
		return RPC_PROCUNAVAIL;
	return clnt_call(cl, proc, xa, in, xr, out, call_tv);
}

static void set_auth(CLIENT *cl, struct wrap_auth *w)
{
	if (cl->cl_auth)
		auth_destroy(cl->cl_auth);
	cl->cl_auth = &w->auth;
}

/* Threads sharing the CLIENT and its AUTH: the flavor's unlocked sequence number must hold. */
#define THREADS 8
#define THREAD_CALLS 25

static void run_client(CLIENT *cl, const char *label, bool in_place)
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
	w->in_place = in_place;
	atomic_store(&wrap_svc_in_place, in_place);
	atomic_store(&wrap_min_generation, 1);
	u0 = atomic_load(&wrap_svc_unwraps);
	s0 = atomic_load(&wrap_svc_wraps);
	failures += rdmatest_check_procedures(PROG, cl, label, call_tv, &calls);
	check(w->wraps == calls && w->unwraps == calls &&
		      atomic_load(&wrap_svc_unwraps) - u0 == calls &&
		      atomic_load(&wrap_svc_wraps) - s0 == calls,
	      "%s: %u calls: client wrapped %u, unwrapped %u; server unwrapped %u, wrapped %u", label,
	      calls, w->wraps, w->unwraps, atomic_load(&wrap_svc_unwraps) - u0,
	      atomic_load(&wrap_svc_wraps) - s0);
	failures += rdmatest_check_threads(PROG, cl, label, THREADS, THREAD_CALLS, call_tv);

	w->tamper = true;
	st = call(cl, RDMATEST_ECHO, &in, &out);
	check(st == RPC_CANTDECODEARGS, "%s: a checksum the server cannot verify: %s", label,
	      clnt_sperrno(st));
	if (st == RPC_SUCCESS)
		clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_data, (char *)&out);
	w->tamper = false;

	/* libtirpc's TCP client also refreshes on other error replies, such as the one above. */
	w->refreshes = 0;
	w->cred_be[0] = htonl(0);
	r0 = atomic_load(&wrap_svc_refused);
	st = rdmatest_call_null(cl, call_tv);
	check(st == RPC_SUCCESS && w->refreshes == 1 && atomic_load(&wrap_svc_refused) - r0 == 1,
	      "%s: generation 0 refused, refreshed once, then accepted: %s (refreshes %u)", label,
	      clnt_sperrno(st), w->refreshes);

	atomic_store(&wrap_min_generation, 5);
	w->cred_be[0] = htonl(1);
	w->refreshes = 0;
	r0 = atomic_load(&wrap_svc_refused);
	st = rdmatest_call_null(cl, call_tv);
	clnt_geterr(cl, &e);
	check(st == RPC_AUTHERROR && e.re_why == AUTH_REJECTEDCRED && w->refreshes == 2 &&
		      atomic_load(&wrap_svc_refused) - r0 == 3,
	      "%s: always refused: %s (why %d) after %u refreshes, %u attempts", label,
	      clnt_sperrno(st), (int)e.re_why, w->refreshes, atomic_load(&wrap_svc_refused) - r0);
}

/*
 * The server's dispatch, for both listeners (libtirpc's svc_getreq looks
 * a program up by number alone): the next ECHO's reply comes STALL_S
 * seconds late, once.
 */
#define STALL_S 3
static atomic_bool stall_next;

static void stalling_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	if (rq->rq_proc == RDMATEST_ECHO && atomic_exchange(&stall_next, false))
		sleep(STALL_S);
	rdmatest_dispatch(rq, xprt);
}

/* A CLIENT of @o (NULL: the defaults) authenticating with a new AUTH of the flavor, or NULL. */
static CLIENT *wrapped_client(const char *host, const char *netid, const struct rpcrdma_options *o,
			      struct wrap_auth **w)
{
	CLIENT *cl = clnt_rdma_create(host, RDMATEST_PROG, RDMATEST_V1, netid, o);

	*w = wrap_auth_create(1);
	if (!cl || !*w) {
		if (cl)
			clnt_destroy(cl);
		free(*w);
		return NULL;
	}
	set_auth(cl, *w);
	atomic_store(&wrap_svc_in_place, false);
	return cl;
}

/* The server's counts before a call that is to be sent twice. */
struct resend_counts {
	unsigned int unwraps, replays;
};

static struct resend_counts resend_counts_now(void)
{
	return (struct resend_counts){ atomic_load(&wrap_svc_unwraps),
				       atomic_load(&wrap_svc_replays) };
}

/*
 * Checks that the call since @before went out twice, marshalled anew
 * the second time (a new sequence number): the client wrapped twice, the
 * server unwrapped both and refused none as a replay, and no refresh
 * was needed.
 */
static void check_resent(const struct wrap_auth *w, struct resend_counts before, bool ok,
			 const char *what)
{
	unsigned int unwraps = atomic_load(&wrap_svc_unwraps) - before.unwraps;
	unsigned int replays = atomic_load(&wrap_svc_replays) - before.replays;

	check(ok && w->wraps == 2 && unwraps == 2 && replays == 0 && w->refreshes == 0,
	      "%s; client wrapped %u, server unwrapped %u, replays refused %u, refreshes %u", what,
	      w->wraps, unwraps, replays, w->refreshes);
}

/* No reply within the retry timeout: the call again on a new connection, with a new sequence number. */
static void run_retry_resend(const char *host, const char *netid, const char *label)
{
	const struct timeval retry = { .tv_sec = 1 };
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;
	struct resend_counts before;
	struct rpcrdma_options o;
	struct wrap_auth *w;
	char what[200];
	enum clnt_stat st;
	bool same = false;
	CLIENT *cl;
	double t0;

	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	o.reconnect_resend = true;
	cl = wrapped_client(host, netid, &o, &w);
	check(cl && clnt_control(cl, CLSET_RETRY_TIMEOUT, (char *)&retry),
	      "%s, reconnect_resend: CLIENT, AUTH and a 1 s retry timeout", label);
	if (!cl)
		return;
	before = resend_counts_now();
	atomic_store(&stall_next, true);
	t0 = rdmatest_now();
	st = rdmatest_call_echo_text(cl, "a reply held back past the retry timeout", call_tv, &same);
	clnt_rdma_getinfo(cl, &ci);
	snprintf(what, sizeof(what),
		 "%s, reconnect_resend: a reply held back %d s, sent again on a new connection: "
		 "%s after %.2f s, connections %u",
		 label, STALL_S, clnt_sperrno(st), rdmatest_now() - t0, ci.connects);
	check_resent(w, before, st == RPC_SUCCESS && same && ci.connects == 2, what);
	auth_destroy(cl->cl_auth);
	clnt_destroy(cl);
}

/* ERR_CHUNK, then the call again: with a new sequence number, so the server takes it. */
static void run_resend(const char *host, const char *netid, const char *label)
{
	rdmatest_read_args la = { 40000, 79 }; /* 160 KB of results: past the first 64 KiB offered */
	rdmatest_words lw = { 0, NULL };
	struct resend_counts before;
	struct wrap_auth *w;
	char what[160];
	enum clnt_stat st;
	bool same;
	CLIENT *cl = wrapped_client(host, netid, NULL, &w);

	check(cl != NULL, "%s, no binding: CLIENT and AUTH%s", label,
	      cl ? "" : clnt_spcreateerror(""));
	if (!cl)
		return;
	before = resend_counts_now();
	st = call(cl, RDMATEST_LONG_RES, &la, &lw);
	same = st == RPC_SUCCESS && lw.rdmatest_words_len == la.count;
	for (uint32_t i = 0; same && i < la.count; i++)
		same = lw.rdmatest_words_val[i] == rdmatest_gen_word(la.seed, i);
	snprintf(what, sizeof(what), "%s, no binding: LONG_RES %u words sent again after ERR_CHUNK: %s",
		 label, la.count, clnt_sperrno(st));
	check_resent(w, before, same, what);
	if (st == RPC_SUCCESS)
		clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_words, (char *)&lw);
	auth_destroy(cl->cl_auth);
	clnt_destroy(cl);
}

/* Results the server's credential cannot wrap: SYSTEM_ERR, and the connection goes on. */
static void run_wrap_failure(CLIENT *cl, const char *label)
{
	struct wrap_auth *w = wrap_auth_create(1);
	enum clnt_stat st, next;
	bool same = false;

	if (!w) {
		check(false, "%s: out of memory", label);
		return;
	}
	set_auth(cl, w);
	atomic_store(&wrap_min_generation, 1);
	atomic_store(&wrap_svc_fail_wrap, true);
	st = rdmatest_call_echo_text(cl, "results the server cannot wrap", call_tv, &same);
	atomic_store(&wrap_svc_fail_wrap, false);
	next = rdmatest_call_echo_text(cl, "and the next call", call_tv, &same);
	check(st == RPC_SYSTEMERROR && next == RPC_SUCCESS && same,
	      "%s: the server's wrap fails: %s; the next call: %s", label, clnt_sperrno(st),
	      clnt_sperrno(next));
}

int main(int argc, char **argv)
{
	const char *netid = argc > 2 && strchr(argv[2], ':') ? "rdma6" : "rdma";
	struct sockaddr_storage tcp_addr;
	struct rpcrdma_options o;
	char label[64];
	CLIENT *cl;

	if (argc != 3) {
		fprintf(stderr, "usage: %s PROVIDER ADDR\n", PROG);
		return 2;
	}
	rdmatest_raise_memlock();
	if (!wrap_flavor_register() || !rdmatest_listen(PROG, argv[2], NULL, stalling_dispatch) ||
	    !rdmatest_tcp_listen(argv[2], stalling_dispatch, &tcp_addr) ||
	    !rdmatest_start_server(PROG)) {
		fprintf(stderr, "%s: cannot start the servers\n", PROG);
		return 1;
	}
	cl = rdmatest_tcp_client(&tcp_addr);
	check(cl != NULL, "libtirpc TCP client");
	if (cl) {
		run_client(cl, "TCP (libtirpc)", false);
		clnt_destroy(cl);
	}
	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	cl = clnt_rdma_create(argv[2], RDMATEST_PROG, RDMATEST_V1, netid, &o);
	check(cl != NULL, "clnt_rdma_create(%s, %s)%s", argv[2], netid,
	      cl ? "" : clnt_spcreateerror(""));
	snprintf(label, sizeof(label), "RDMA (%s)", argv[1]);
	if (cl) {
		run_client(cl, label, false);
		snprintf(label, sizeof(label), "RDMA (%s), wrapped in place as RPCSEC_GSS does", argv[1]);
		run_client(cl, label, true);
		snprintf(label, sizeof(label), "RDMA (%s)", argv[1]);
		run_wrap_failure(cl, label);
		clnt_destroy(cl);
	}
	run_resend(argv[2], netid, label);
	run_retry_resend(argv[2], netid, label);
	check(atomic_load(&wrap_svc_replays) == 0,
	      "no call reached the server twice with one sequence number (%u did)",
	      atomic_load(&wrap_svc_replays));
	printf("%s: %s: %s (%u failed)\n", PROG, argv[1], failures ? "FAILED" : "all passed",
	       failures);
	fflush(stdout);
	_exit(failures ? 1 : 0); /* the server thread stays in svc_run() */
}
