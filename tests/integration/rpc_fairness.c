/*
 * rpc_fairness: a client that keeps the server busy does not keep the
 * server's one svc_run() thread from its other clients.  An in-process
 * rdmatest server (one svc_run() thread, default options) answers ECHO
 * "flood-..." after FLOOD_SERVICE_US; a flooding CLIENT's FLOOD_THREADS
 * threads call it back to back (more calls outstanding than the server
 * takes at once, so each poll finds more), until the checks are done or
 * FLOOD_MAX_S.  Checks, per address, while the flood runs:
 *   1. a second CLIENT, connected before the flood, gets each of
 *      VICTIM_CALLS ECHO calls answered within VICTIM_MAX_S;
 *   2. a CLIENT created during the flood connects and gets its first
 *      call answered within NEWCOMER_MAX_S (the listener is served);
 *   3. every call of the flood succeeds, and it still runs after checks
 *      1 and 2 (its calls go on being answered: else they proved
 *      nothing).
 * libtirpc serves a transport for as long as its xp_stat says
 * XPRT_MOREREQS; a connection that said so as long as calls kept coming
 * held svc_run() until the flood ended (FLOOD_MAX_S): check 1 failed,
 * and so did check 3 (check 2 then ran after the flood).
 *
 *   rpc_fairness ADDR...   (1 to 4 addresses)
 *
 * Prints figure: lines with the slowest victim call and the newcomer's
 * time.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rdmatest_support.h"

#define PROG "rpc_fairness"
#define FLOOD_THREADS 32
#define FLOOD_SERVICE_US 2000
#define FLOOD_MAX_S 20.0
#define FLOOD_WARMUP_CALLS 200u
#define FLOOD_WARMUP_MAX_S 10.0
#define STILL_RUNNING_S 0.3
#define VICTIM_CALLS 10
#define VICTIM_MAX_S 1.0
#define NEWCOMER_MAX_S 3.0

static _Atomic unsigned int failures;
#define check(ok, ...) (failures += !rdmatest_check(PROG, (ok), __VA_ARGS__))

static const struct timeval call_tv = { .tv_sec = 30 };

static bool is_flood(const rdmatest_data *d)
{
	return d->rdmatest_data_len > 6 && !memcmp(d->rdmatest_data_val, "flood-", 6);
}

/* rdmatest_dispatch, except that ECHO "flood-..." takes FLOOD_SERVICE_US of the server's thread */
static void echo_answer(SVCXPRT *xprt, rdmatest_data *arg)
{
	if (is_flood(arg))
		usleep(FLOOD_SERVICE_US);
	svc_sendreply(xprt, (xdrproc_t)xdr_rdmatest_data, (char *)arg);
}

static void dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	rdmatest_dispatch_echo(rq, xprt, echo_answer);
}

static CLIENT *client(const char *addr, unsigned int port)
{
	struct rpcrdma_options o;
	struct sockaddr_storage ss;
	CLIENT *cl;

	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	rdmatest_parse_addr(addr, (uint16_t)port, &ss);
	cl = clnt_rdma_tli_create((struct sockaddr *)&ss, RDMATEST_PROG, RDMATEST_V1, &o);
	if (!cl)
		check(false, "%s: %s", addr, clnt_spcreateerror("clnt_rdma_tli_create"));
	return cl;
}

struct flood {
	CLIENT *cl;
	atomic_bool stop;
	atomic_uint calls, failed;
};

static void *flood_main(void *arg)
{
	struct flood *f = arg;
	double stop_at = rdmatest_now() + FLOOD_MAX_S;
	char text[32];
	bool same;

	for (unsigned int i = 0; !atomic_load(&f->stop) && rdmatest_now() < stop_at; i++) {
		snprintf(text, sizeof(text), "flood-%u", i);
		if (rdmatest_call_echo_text(f->cl, text, call_tv, &same) == RPC_SUCCESS && same)
			atomic_fetch_add(&f->calls, 1);
		else
			atomic_fetch_add(&f->failed, 1);
	}
	return NULL;
}

/* The slowest of VICTIM_CALLS ECHO calls on @cl, in seconds; -1 if one failed. */
static double victim_calls(CLIENT *cl)
{
	double slowest = 0;
	char text[32];
	bool same;

	for (int i = 0; i < VICTIM_CALLS; i++) {
		double t0 = rdmatest_now(), dt;

		snprintf(text, sizeof(text), "victim-%d", i);
		if (rdmatest_call_echo_text(cl, text, call_tv, &same) != RPC_SUCCESS || !same)
			return -1;
		dt = rdmatest_now() - t0;
		if (dt > slowest)
			slowest = dt;
	}
	return slowest;
}

/* Create a CLIENT and make one call: the seconds it took, or -1. */
static double newcomer(const char *addr, unsigned int port)
{
	double t0 = rdmatest_now();
	CLIENT *cl = client(addr, port);
	bool same;
	enum clnt_stat st;

	if (!cl)
		return -1;
	st = rdmatest_call_echo_text(cl, "newcomer", call_tv, &same);
	clnt_destroy(cl);
	return st == RPC_SUCCESS && same ? rdmatest_now() - t0 : -1;
}

static void run(const char *addr, unsigned int port)
{
	struct flood f = { .cl = client(addr, port) };
	CLIENT *victim = client(addr, port);
	pthread_t th[FLOOD_THREADS];
	int n = 0;
	double slowest, joined, warmup_end;
	unsigned int after_checks;

	if (!f.cl || !victim || rdmatest_call_null(victim, call_tv) != RPC_SUCCESS) {
		check(false, "%s: the flooding and the victim CLIENT", addr);
		goto out;
	}
	for (; n < FLOOD_THREADS; n++)
		if (pthread_create(&th[n], NULL, flood_main, &f))
			break;
	warmup_end = rdmatest_now() + FLOOD_WARMUP_MAX_S;
	while (n > 0 && atomic_load(&f.calls) < FLOOD_WARMUP_CALLS && !atomic_load(&f.failed) &&
	       rdmatest_now() < warmup_end)
		usleep(10000);
	slowest = victim_calls(victim);
	check(slowest >= 0 && slowest <= VICTIM_MAX_S,
	      "%s: a CLIENT connected before the flood: %d calls answered, the slowest in %.3f s "
	      "(at most %.1f s)", addr, VICTIM_CALLS, slowest, VICTIM_MAX_S);
	joined = newcomer(addr, port);
	check(joined >= 0 && joined <= NEWCOMER_MAX_S,
	      "%s: a CLIENT created during the flood connected and was answered in %.3f s "
	      "(at most %.1f s)", addr, joined, NEWCOMER_MAX_S);
	printf("figure: " PROG ": %s: during a flood of %u-microsecond calls from %d threads: "
	       "slowest victim call %.3f s, connect and first call %.3f s\n", addr,
	       FLOOD_SERVICE_US, FLOOD_THREADS, slowest, joined);
	after_checks = atomic_load(&f.calls);
	usleep((useconds_t)(STILL_RUNNING_S * 1e6));
	after_checks = atomic_load(&f.calls) - after_checks;
	atomic_store(&f.stop, true);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	check(n == FLOOD_THREADS && atomic_load(&f.calls) >= FLOOD_WARMUP_CALLS &&
	      atomic_load(&f.failed) == 0 && after_checks > 0,
	      "%s: the flood: %d threads, %u calls, %u failed, %u answered in the %.1f s after "
	      "the checks (it must still run)", addr, n, atomic_load(&f.calls),
	      atomic_load(&f.failed), after_checks, STILL_RUNNING_S);
out:
	if (f.cl)
		clnt_destroy(f.cl);
	if (victim)
		clnt_destroy(victim);
}

int main(int argc, char **argv)
{
	unsigned int port[RDMATEST_MAX_ADDRS];
	int n = rdmatest_serve_addrs(PROG, argc, argv, dispatch, port);

	if (n < 0)
		return -n;
	for (int i = 0; i < n; i++)
		run(argv[i + 1], port[i]);
	printf(PROG ": %s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}
