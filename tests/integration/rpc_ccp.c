/*
 * The Connection Configuration Protocol (RFC 5666 section 6) from the
 * client's side: off (not asked), on against our server (which serves
 * program 100417 on every connection: CCP used, its values in force),
 * on against the Linux kernel NFS server, which does not offer it
 * (fallback to the private-data values, and NFS calls still work), and
 * on against a peer that accepts the connection and never answers: no
 * CLIENT, ETIMEDOUT at the connect timeout (a CLIENT there would have
 * its one credit held by the unanswered CCP call for good).  Also a
 * reconnect the peer never answers: the call fails at the connect
 * timeout with RPC_CANTSEND and ETIMEDOUT (it was not sent), and so do
 * three concurrent calls, all within one connect timeout (those waiting
 * for another's connect fail with it).
 * Usage: rpc_ccp ADDR [NFS_ADDR]   (NFS_ADDR: knfsd's RDMA port 20049)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "rdmatest_child.h"
#include "rdmatest_support.h"
#include "rpcrdma/options.h"
#include "rpcrdma/verbs.h"

#define NFS_PROGRAM 100003
#define NFS_V3      3
#define NFS_RDMA_PORT 20049

static unsigned int failures;
static const struct timeval call_tv = { 20, 0 };

#define check_fail(...) (failures += !rdmatest_check("rpc_ccp", false, __VA_ARGS__))

static const char *ccp_str(enum rpcrdma_ccp_outcome o)
{
	switch (o) {
	case RPCRDMA_CCP_NOT_ASKED:
		return "not asked";
	case RPCRDMA_CCP_USED:
		return "used";
	case RPCRDMA_CCP_NOT_OFFERED:
		return "not offered";
	}
	return "?";
}

static bool echo_ok(CLIENT *cl, uint32_t len)
{
	rdmatest_data arg = { len, malloc(len ? len : 1) };
	rdmatest_data res = { 0 };
	enum clnt_stat st;
	bool ok;

	for (uint32_t i = 0; i < len; i++)
		arg.rdmatest_data_val[i] = (char)(i * 7 + 3);
	st = clnt_call(cl, RDMATEST_ECHO, (xdrproc_t)xdr_rdmatest_data, (char *)&arg,
		       (xdrproc_t)xdr_rdmatest_data, (char *)&res, call_tv);
	ok = st == RPC_SUCCESS && res.rdmatest_data_len == len &&
	     !memcmp(res.rdmatest_data_val, arg.rdmatest_data_val, len);
	if (!ok)
		check_fail("echo of %u bytes: %s", len, st == RPC_SUCCESS ? "different bytes"
							       : clnt_sperror(cl, "call"));
	clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_data, (char *)&res);
	free(arg.rdmatest_data_val);
	return ok;
}

static CLIENT *connect_to(const char *addr, unsigned int port, rpcprog_t prog, rpcvers_t vers,
			  bool ccp, struct rpcrdma_conn_info *ci)
{
	struct rpcrdma_options o;
	struct sockaddr_storage ss;
	CLIENT *cl;

	rpcrdma_options_init(&o);
	o.use_ccp = ccp;
	rdmatest_parse_addr(addr, port, &ss);
	cl = clnt_rdma_tli_create((struct sockaddr *)&ss, prog, vers, &o);
	if (!cl) {
		check_fail("%s: %s", addr, clnt_spcreateerror("clnt_rdma_tli_create"));
		return NULL;
	}
	if (clnt_rdma_getinfo(cl, ci))
		check_fail("clnt_rdma_getinfo failed");
	printf("rpc_ccp: %s port %u, CCP %s: %s; inline %u/%u, credits %u\n", addr, port,
	       ccp ? "asked" : "off", ccp_str(ci->ccp), ci->inline_send, ci->inline_recv,
	       ci->credits);
	return cl;
}

static void check_our_server(const char *addr, unsigned int port)
{
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;
	CLIENT *cl;

	for (int ccp = 0; ccp < 2; ccp++) {
		cl = connect_to(addr, port, RDMATEST_PROG, RDMATEST_V1, ccp, &ci);
		if (!cl)
			continue;
		if (ci.ccp != (ccp ? RPCRDMA_CCP_USED : RPCRDMA_CCP_NOT_ASKED))
			check_fail("CCP outcome \"%s\"", ccp_str(ci.ccp));
		/* Our server's CONF_RDMA reply offers its receive size, 4096 by default. */
		if (ccp && ci.inline_send != 4096)
			check_fail("inline send %u after CCP, expected the server's 4096",
				   ci.inline_send);
		echo_ok(cl, 3000);
		echo_ok(cl, 100000);
		clnt_destroy(cl);
	}
}

static void check_knfsd(const char *addr)
{
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;
	enum clnt_stat st;
	CLIENT *cl = connect_to(addr, NFS_RDMA_PORT, NFS_PROGRAM, NFS_V3, true, &ci);

	if (!cl)
		return;
	if (ci.ccp != RPCRDMA_CCP_NOT_OFFERED)
		check_fail("knfsd: CCP outcome \"%s\", expected \"not offered\"", ccp_str(ci.ccp));
	st = clnt_call(cl, 0, (xdrproc_t)(void (*)(void))xdr_void, NULL,
		       (xdrproc_t)(void (*)(void))xdr_void, NULL, call_tv);
	if (st != RPC_SUCCESS)
		check_fail("knfsd: NFSPROC3_NULL after the CCP fallback: %s",
			   clnt_sperror(cl, "call"));
	else
		printf("rpc_ccp: knfsd: NFSPROC3_NULL ok after the fallback\n");
	clnt_destroy(cl);
}

/* ---- a peer that accepts and never answers ------------------------------------------- */

#define SILENT_MAX_EPS 4
#define SILENT_CONNECT_MS 2000
/*
 * siw (Linux 6.1, MPAREP_TIMEOUT) gives an unanswered MPA request up
 * after this; a connect must end at its own timeout all the same.
 */
#define SIW_MPA_REPLY_MS 10000
_Static_assert(SILENT_CONNECT_MS + 3000 < SIW_MPA_REPLY_MS, "a connect waiting for siw would pass");
_Static_assert(SILENT_CONNECT_MS + 3000 < 20000, "call_tv must outlast a connect");

struct silent_peer {
	struct rpcrdma_listener *l;
	struct rpcrdma_ep *eps[SILENT_MAX_EPS];
	unsigned int neps, accept_max; /* past accept_max connect requests are left unanswered */
	unsigned int calls;      /* messages received: the CCP call arrived, unanswered */
	atomic_bool stop, drop, dropped;
	pthread_t thread;
};

/* Count what @sp's connections received; nothing is reposted or answered. */
static void silent_count(struct silent_peer *sp)
{
	struct rpcrdma_wc wc[8];

	for (unsigned int i = 0; i < sp->neps; i++)
		for (int n = rpcrdma_ep_poll(sp->eps[i], wc, 8); n > 0;
		     n = rpcrdma_ep_poll(sp->eps[i], wc, 8))
			for (int k = 0; k < n; k++)
				sp->calls += wc[k].kind == RPCRDMA_WC_RECV && wc[k].status == IBV_WC_SUCCESS;
}

static void silent_drop(struct silent_peer *sp)
{
	for (unsigned int i = 0; i < sp->neps; i++)
		rpcrdma_ep_destroy(sp->eps[i]);
	sp->neps = 0;
	sp->accept_max = 0;
	atomic_store(&sp->dropped, true);
}

/* Accept up to accept_max connections and keep them; nothing is ever sent. */
static void *silent_main(void *arg)
{
	struct silent_peer *sp = arg;
	struct pollfd pfd = { .fd = rpcrdma_listener_fd(sp->l), .events = POLLIN };
	struct rpcrdma_ep *ep;

	while (!atomic_load(&sp->stop)) {
		if (sp->neps < sp->accept_max && poll(&pfd, 1, 100) > 0)
			while (sp->neps < sp->accept_max && rpcrdma_listener_accept(sp->l, &ep) == 0)
				sp->eps[sp->neps++] = ep;
		if (sp->neps >= sp->accept_max)
			nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
		if (atomic_exchange(&sp->drop, false))
			silent_drop(sp);
		silent_count(sp);
	}
	return NULL;
}

/* A silent peer on @addr (port chosen) in its own thread; its address in @ss. */
static bool silent_start(struct silent_peer *sp, const char *addr, unsigned int accept_max,
			 struct sockaddr_storage *ss)
{
	struct rpcrdma_options o;
	struct rpcrdma_ep_params params;
	int rc;

	rpcrdma_options_init(&o);
	rpcrdma_options_ep_params(&o, &params);
	rdmatest_parse_addr(addr, 0, ss);
	sp->accept_max = accept_max;
	rc = rpcrdma_listener_create((struct sockaddr *)ss, &params, 4, &sp->l);
	if (rc || pthread_create(&sp->thread, NULL, silent_main, sp)) {
		check_fail("silent peer: no listener (%s)", strerror(rc ? -rc : EAGAIN));
		rpcrdma_listener_destroy(sp->l);
		return false;
	}
	/* sin_port and sin6_port are at the same place */
	rdmatest_parse_addr(addr, ntohs(((const struct sockaddr_in *)
					 rpcrdma_listener_addr(sp->l))->sin_port), ss);
	return true;
}

static void silent_join(struct silent_peer *sp)
{
	atomic_store(&sp->stop, true);
	pthread_join(sp->thread, NULL);
}

static void silent_free(struct silent_peer *sp)
{
	for (unsigned int i = 0; i < sp->neps; i++)
		rpcrdma_ep_destroy(sp->eps[i]);
	rpcrdma_listener_destroy(sp->l);
}

static void check_silent_peer(const char *addr)
{
	struct rpcrdma_options o;
	struct silent_peer sp = { 0 };
	struct sockaddr_storage ss;
	double t0, dt;
	bool timed_out = false;
	CLIENT *cl;

	if (!silent_start(&sp, addr, SILENT_MAX_EPS, &ss))
		return;
	rpcrdma_options_init(&o);
	o.use_ccp = true;
	o.connect_timeout_ms = SILENT_CONNECT_MS;
	t0 = rdmatest_now();
	cl = clnt_rdma_tli_create((struct sockaddr *)&ss, RDMATEST_PROG, RDMATEST_V1, &o);
	dt = rdmatest_now() - t0;
	if (cl) {
		check_fail("silent peer: a CLIENT although CCP was never answered (not calling it: "
			   "its one credit is the unanswered call's)");
		clnt_destroy(cl);
	} else if (rpc_createerr.cf_stat != RPC_SYSTEMERROR ||
		   rpc_createerr.cf_error.re_errno != ETIMEDOUT) {
		check_fail("silent peer: %s, expected ETIMEDOUT", clnt_spcreateerror(addr));
	} else if (dt < SILENT_CONNECT_MS / 1000.0 - 0.05 || dt > SILENT_CONNECT_MS / 1000.0 + 3) {
		check_fail("silent peer: gave up after %.2f s, the connect timeout is %.1f s", dt,
			   SILENT_CONNECT_MS / 1000.0);
	} else {
		timed_out = true;
	}
	silent_join(&sp);
	if (!sp.neps)
		check_fail("silent peer: the connection was never accepted");
	else if (!sp.calls)
		check_fail("silent peer: no CCP call arrived (the connect itself timed out?)");
	else if (timed_out)
		printf("rpc_ccp: %s: silent peer: %u call received, unanswered; %s after %.2f s "
		       "(connect timeout %.1f s)\n", addr, sp.calls, strerror(ETIMEDOUT), dt,
		       SILENT_CONNECT_MS / 1000.0);
	silent_free(&sp);
}

/* What the unanswered connect left is gone once its handshake ended (peer gone, siw's timeout). */
static void check_released(const char *addr, const struct rdmatest_holdings *before)
{
	double t0 = rdmatest_now(), limit = (SIW_MPA_REPLY_MS + 5000) / 1000.0;
	struct rdmatest_holdings now;

	rdmatest_holdings_count(getpid(), &now);
	while (!rdmatest_holdings_same(before, &now) && rdmatest_now() - t0 < limit) {
		nanosleep(&(struct timespec){ 0, 100 * 1000 * 1000 }, NULL);
		rdmatest_holdings_count(getpid(), &now);
	}
	if (!rdmatest_holdings_same(before, &now))
		check_fail("reconnect unanswered: %d fds and %d cm ids before, %d and %d %.0f s after",
			   before->fds, before->res[RDMATEST_RES_KINDS - 1], now.fds,
			   now.res[RDMATEST_RES_KINDS - 1], limit);
	else
		printf("rpc_ccp: %s: reconnect unanswered: %d fds and %d cm ids again after %.2f s\n",
		       addr, now.fds, now.res[RDMATEST_RES_KINDS - 1], rdmatest_now() - t0);
}

#define WAITERS 3

struct waiter {
	CLIENT *cl;
	enum clnt_stat st;
	double dt;
};

static void *waiter_call(void *arg)
{
	struct waiter *w = arg;
	double t0 = rdmatest_now();

	w->st = rdmatest_call_null(w->cl, call_tv);
	w->dt = rdmatest_now() - t0;
	return NULL;
}

/*
 * Calls that find another call connecting wait for it, and when that
 * connect fails after the whole connect timeout they fail with it: they
 * do not connect again one after another (the last of WAITERS would
 * return WAITERS connect timeouts later).
 */
static void check_waiters_share_the_failure(const char *addr, CLIENT *cl)
{
	struct waiter w[WAITERS];
	pthread_t t[WAITERS];
	double slowest = 0, limit = 2 * SILENT_CONNECT_MS / 1000.0 - 0.2;
	unsigned int cantsend = 0;

	for (int i = 0; i < WAITERS; i++) {
		w[i] = (struct waiter){ .cl = cl, .st = RPC_SUCCESS };
		if (pthread_create(&t[i], NULL, waiter_call, &w[i])) {
			check_fail("reconnect unanswered: no thread");
			for (int k = 0; k < i; k++)
				pthread_join(t[k], NULL);
			return;
		}
	}
	for (int i = 0; i < WAITERS; i++) {
		pthread_join(t[i], NULL);
		cantsend += w[i].st == RPC_CANTSEND;
		slowest = w[i].dt > slowest ? w[i].dt : slowest;
	}
	if (cantsend != WAITERS || slowest > limit)
		check_fail("reconnect unanswered: %u concurrent calls: %u failed with RPC_CANTSEND, the "
			   "last after %.2f s (expected all, within %.1f s: one connect timeout)",
			   WAITERS, cantsend, slowest, limit);
	else
		printf("rpc_ccp: %s: reconnect unanswered: %u concurrent calls all failed with "
		       "RPC_CANTSEND, the last after %.2f s\n", addr, WAITERS, slowest);
}

/*
 * A CLIENT (no CCP) whose connection the peer drops and whose reconnect
 * the peer never answers: the call that finds no connection fails with
 * RPC_CANTSEND and ETIMEDOUT at the connect timeout (on iWARP too,
 * where the provider gives the MPA handshake up only after
 * SIW_MPA_REPLY_MS), before its own timeout, and never with
 * RPC_TIMEDOUT, which says it was sent; and once the peer is gone what
 * the connect held is released.
 */
static void check_reconnect_unanswered(const char *addr)
{
	struct rdmatest_holdings before;
	struct silent_peer sp = { 0 };
	struct rpcrdma_options o;
	struct sockaddr_storage ss;
	enum clnt_stat st = RPC_SUCCESS;
	struct rpc_err err = { 0 };
	double t0 = 0, dt = 0, limit = SILENT_CONNECT_MS / 1000.0;
	CLIENT *cl;

	rdmatest_holdings_count(getpid(), &before);
	if (!silent_start(&sp, addr, 1, &ss))
		return;
	rpcrdma_options_init(&o);
	o.connect_timeout_ms = SILENT_CONNECT_MS;
	cl = clnt_rdma_tli_create((struct sockaddr *)&ss, RDMATEST_PROG, RDMATEST_V1, &o);
	if (!cl) {
		check_fail("reconnect unanswered: %s", clnt_spcreateerror(addr));
		silent_join(&sp);
		silent_free(&sp);
		return;
	}
	atomic_store(&sp.drop, true);
	while (!atomic_load(&sp.dropped))
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	/* the first call may still find the dropped connection: it fails with the loss */
	for (int i = 0; i < 3 && st != RPC_CANTSEND && st != RPC_TIMEDOUT; i++) {
		t0 = rdmatest_now();
		st = rdmatest_call_null(cl, call_tv);
		dt = rdmatest_now() - t0;
		clnt_geterr(cl, &err);
		printf("rpc_ccp: %s: reconnect unanswered: call %d: %s after %.2f s\n", addr, i + 1,
		       clnt_sperror(cl, "NULL"), dt);
	}
	if (st != RPC_CANTSEND || err.re_errno != ETIMEDOUT)
		check_fail("reconnect unanswered: %s, expected RPC_CANTSEND with ETIMEDOUT",
			   clnt_sperrno(st));
	else if (dt < SILENT_CONNECT_MS / 1000.0 - 0.05 || dt > limit + 3)
		check_fail("reconnect unanswered: failed after %.2f s, expected %.1f to %.1f s", dt,
			   SILENT_CONNECT_MS / 1000.0, limit + 3);
	else
		check_waiters_share_the_failure(addr, cl);
	clnt_destroy(cl);
	silent_join(&sp);
	silent_free(&sp);
	check_released(addr, &before);
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	SVCXPRT *x;

	rdmatest_raise_memlock();
	if (argc < 2 || argc > 3 || !rdmatest_parse_addr(argv[1], 0, &ss)) {
		fprintf(stderr, "usage: rpc_ccp ADDR [NFS_ADDR]\n");
		return 2;
	}
	x = svc_rdma_create((struct sockaddr *)&ss, NULL);
	if (!x || !svc_reg(x, RDMATEST_PROG, RDMATEST_V1, rdmatest_dispatch, NULL) ||
	    !rdmatest_start_server("rpc_ccp")) {
		fprintf(stderr, "rpc_ccp: %s", clnt_spcreateerror("server"));
		return 1;
	}
	check_our_server(argv[1], x->xp_port);
	check_silent_peer(argv[1]);
	check_reconnect_unanswered(argv[1]);
	if (argc == 3)
		check_knfsd(argv[2]);
	printf("rpc_ccp: %s\n", failures ? "FAILED" : "all passed");
	fflush(stdout);
	_exit(failures ? 1 : 0); /* the server thread stays in svc_run */
}
