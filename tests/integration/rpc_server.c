/*
 * A standalone rdmatest server, and the well-behaved client that checks
 * it, for the tests that attack the server from another process
 * (tests/integration/hostile_client.test).
 *
 *   rpc_server ADDR...         serve the rdmatest program (every procedure,
 *                              rdmatest_dispatch) on each address, port 0;
 *                              print one line "PORT" per address, then serve
 *                              until SIGTERM or SIGINT and exit 0, so that
 *                              LeakSanitizer runs in an instrumented build.
 *                              One more procedure, RPC_SERVER_HANGUP (void,
 *                              void), replies and then svc_destroy()s the
 *                              connection its call came on.
 *   rpc_server --check ADDR PORT
 *                              one CLIENT of the library: NULL, an inline
 *                              ECHO, a position-zero read chunk ECHO, READ
 *                              (a write chunk) and LONG_RES (a reply chunk),
 *                              each answer checked; exit 0 when all are right,
 *                              with CHECK_WRONG_DATA set when an answer came
 *                              with wrong data, 1 set when a call failed.
 *   rpc_server --starved ADDR PORT BYTES
 *                              one CLIENT against a server that cannot
 *                              register BYTES more: NULL and an inline ECHO
 *                              succeed, READ and LONG_RES of BYTES fail with
 *                              RPC_SYSTEMERROR, then NULL and ECHO succeed
 *                              again; exit 0 when all went so.
 *   rpc_server --watch ADDR PORT LIMIT_MS
 *                              a well-behaved client under attack, until
 *                              SIGTERM or SIGINT: one CLIENT calls NULL, an
 *                              inline ECHO and a 20000-byte ECHO (chunks)
 *                              over and over, and once a second a new CLIENT
 *                              connects and calls NULL.  Prints the slowest
 *                              call and the slowest connect-and-call; exit 0
 *                              when every call succeeded with the right data
 *                              within LIMIT_MS.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdmatest_support.h"

static const struct timeval check_timeout = { 10, 0 };

/* Not in rdmatest.x: the hostile tools call it by number (hostile_slow_client.c). */
#define RPC_SERVER_HANGUP 100u

static void serve_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	if (rq->rq_proc != RPC_SERVER_HANGUP) {
		rdmatest_dispatch(rq, xprt);
		return;
	}
	svc_sendreply(xprt, (xdrproc_t)(void (*)(void))xdr_void, NULL);
	svc_destroy(xprt);
}

static int serve(int naddr, char **addrs)
{
	sigset_t stop;
	int sig;

	/* Block the stop signals in every thread; the main thread takes them with sigwait. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	rdmatest_raise_memlock();
	for (int i = 0; i < naddr; i++) {
		SVCXPRT *x = rdmatest_listen("rpc_server", addrs[i], NULL, serve_dispatch);

		if (!x)
			return 1;
		printf("%u\n", (unsigned)x->xp_port);
	}
	fflush(stdout);
	if (!rdmatest_start_server("rpc_server"))
		return 1;
	sigwait(&stop, &sig);
	fprintf(stderr, "rpc_server: signal %d: exiting\n", sig);
	return 0;
}

/* ---- the well-behaved client ----------------------------------------------------- */

static CLIENT *client_connect(const struct sockaddr_storage *ss)
{
	struct rpcrdma_options o;

	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	return clnt_rdma_tli_create((const struct sockaddr *)ss, RDMATEST_PROG, RDMATEST_V1, &o);
}

/* --check's exit status bits: a call failed (1), an answer's data was wrong (CHECK_WRONG_DATA). */
#define CHECK_WRONG_DATA 4

static int check_bad(enum clnt_stat st, bool wrong)
{
	return st != RPC_SUCCESS ? 1 : wrong ? CHECK_WRONG_DATA : 0;
}

static int check_echo(CLIENT *cl, uint32_t len)
{
	rdmatest_data arg, res = { 0 };
	uint8_t *buf = malloc(len ? len : 1);
	enum clnt_stat st;
	int bad;

	if (!buf)
		return 1;
	rdmatest_fill(buf, len, len);
	arg.rdmatest_data_len = len;
	arg.rdmatest_data_val = (char *)buf;
	st = clnt_call(cl, RDMATEST_ECHO, (xdrproc_t)xdr_rdmatest_data, (char *)&arg,
		       (xdrproc_t)xdr_rdmatest_data, (char *)&res, check_timeout);
	bad = check_bad(st, st == RPC_SUCCESS && (res.rdmatest_data_len != len ||
						   memcmp(res.rdmatest_data_val, buf, len)));
	if (bad)
		fprintf(stderr, "rpc_server: check: ECHO of %u bytes: %s\n", len,
			st != RPC_SUCCESS ? clnt_sperrno(st) : "wrong data");
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_rdmatest_data, (char *)&res);
	free(buf);
	return bad;
}

/* Say how a call that should have failed with @want ended; 1 unless it did. */
static int check_failed(const char *what, uint32_t n, const char *unit, enum clnt_stat st,
			enum clnt_stat want)
{
	printf("rpc_server: %s of %u %s: %s (expected: %s)\n", what, n, unit, clnt_sperrno(st),
	       clnt_sperrno(want));
	return st != want;
}

/* READ of @count bytes (a write chunk): the right data, or failure with @want. */
static int check_read(CLIENT *cl, uint32_t count, enum clnt_stat want)
{
	rdmatest_read_args arg = { .count = count, .seed = 7 };
	rdmatest_read_res res;
	enum clnt_stat st;
	int bad = 0;

	memset(&res, 0, sizeof(res));
	st = clnt_call(cl, RDMATEST_READ, (xdrproc_t)xdr_rdmatest_read_args, (char *)&arg,
		       (xdrproc_t)xdr_rdmatest_read_res, (char *)&res, check_timeout);
	if (want != RPC_SUCCESS) {
		bad = check_failed("READ", count, "bytes", st, want);
	} else {
		bool wrong = st == RPC_SUCCESS && res.data.rdmatest_data_len != count;

		for (uint32_t i = 0; st == RPC_SUCCESS && !wrong && i < count; i++)
			wrong = (uint8_t)res.data.rdmatest_data_val[i] != rdmatest_gen_byte(7, i);
		bad = check_bad(st, wrong);
		if (bad)
			fprintf(stderr, "rpc_server: check: READ of %u bytes: %s\n", count,
				st != RPC_SUCCESS ? clnt_sperrno(st) : "wrong data");
	}
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_rdmatest_read_res, (char *)&res);
	return bad;
}

/* LONG_RES of @words (a reply chunk): the right words, or failure with @want. */
static int check_long_res(CLIENT *cl, uint32_t words, enum clnt_stat want)
{
	rdmatest_read_args arg = { .count = words, .seed = 9 };
	rdmatest_words res;
	enum clnt_stat st;
	int bad = 0;

	memset(&res, 0, sizeof(res));
	st = clnt_call(cl, RDMATEST_LONG_RES, (xdrproc_t)xdr_rdmatest_read_args, (char *)&arg,
		       (xdrproc_t)xdr_rdmatest_words, (char *)&res, check_timeout);
	if (want != RPC_SUCCESS) {
		bad = check_failed("LONG_RES", words, "words", st, want);
	} else {
		bool wrong = st == RPC_SUCCESS && res.rdmatest_words_len != words;

		for (uint32_t i = 0; st == RPC_SUCCESS && !wrong && i < words; i++)
			wrong = res.rdmatest_words_val[i] != rdmatest_gen_word(9, i);
		bad = check_bad(st, wrong);
		if (bad)
			fprintf(stderr, "rpc_server: check: LONG_RES of %u words: %s\n", words,
				st != RPC_SUCCESS ? clnt_sperrno(st) : "wrong data");
	}
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_rdmatest_words, (char *)&res);
	return bad;
}

/* The checking CLIENT for ADDR PORT, or NULL with the exit status in *@rc (2: bad address). */
static CLIENT *check_connect(const char *addr, const char *port, int *rc)
{
	struct sockaddr_storage ss;
	CLIENT *cl;

	*rc = 2;
	if (!rdmatest_parse_addr(addr, (uint16_t)strtoul(port, NULL, 10), &ss)) {
		fprintf(stderr, "rpc_server: invalid address '%s'\n", addr);
		return NULL;
	}
	rdmatest_raise_memlock();
	*rc = 1;
	cl = client_connect(&ss);
	if (!cl)
		fprintf(stderr, "rpc_server: check: %s", clnt_spcreateerror(addr));
	return cl;
}

static int check(const char *addr, const char *port)
{
	int bad = 0;
	CLIENT *cl = check_connect(addr, port, &bad);

	if (!cl)
		return bad;
	bad = 0;
	if (rdmatest_call_null(cl, check_timeout) != RPC_SUCCESS) {
		fprintf(stderr, "rpc_server: check: NULL failed\n");
		bad = 1;
	}
	bad |= check_echo(cl, 100);       /* inline */
	bad |= check_echo(cl, 20000);     /* position-zero read chunk and reply chunk */
	bad |= check_read(cl, 65536, RPC_SUCCESS);    /* write chunk */
	bad |= check_long_res(cl, 4096, RPC_SUCCESS); /* reply chunk */
	clnt_destroy(cl);
	return bad;
}

/*
 * Against a server that cannot register @bytes more (RLIMIT_MEMLOCK):
 * small calls work, READ and LONG_RES of @bytes fail with SYSTEM_ERR,
 * and small calls work again on the same CLIENT and connection.
 */
static int check_starved(const char *addr, const char *port, const char *bytes)
{
	struct rpcrdma_conn_info info = { .size = sizeof(info) };
	unsigned long n = strtoul(bytes, NULL, 10);
	CLIENT *cl;
	int bad = 0;

	if (n < 4 || n > UINT32_MAX) {
		fprintf(stderr, "rpc_server: invalid size '%s'\n", bytes);
		return 2;
	}
	cl = check_connect(addr, port, &bad);
	if (!cl)
		return bad;
	bad = 0;
	for (int round = 0; round < 2; round++) {
		if (rdmatest_call_null(cl, check_timeout) != RPC_SUCCESS) {
			fprintf(stderr, "rpc_server: check: NULL failed\n");
			bad = 1;
		}
		bad |= check_echo(cl, 100);
		if (round == 0) {
			bad |= check_read(cl, (uint32_t)n, RPC_SYSTEMERROR);
			bad |= check_long_res(cl, (uint32_t)n / 4, RPC_SYSTEMERROR);
		}
	}
	if (clnt_rdma_getinfo(cl, &info) || info.connects != 1) {
		fprintf(stderr, "rpc_server: check: the CLIENT connected %u times, not once\n",
			info.connects);
		bad = 1;
	}
	clnt_destroy(cl);
	return bad;
}

/* ---- the well-behaved client under attack ---------------------------------------------- */

static volatile sig_atomic_t watch_stop;

static void watch_on_signal(int sig)
{
	(void)sig;
	watch_stop = 1;
}

struct watch_stats {
	unsigned long calls, connects, failures, late;
	double slowest_call, slowest_connect; /* seconds */
};

/* Count one timed step; say when it failed or took longer than @limit. */
static void watch_note(struct watch_stats *w, const char *what, bool ok, double t0, double limit,
		       double *slowest)
{
	double dt = rdmatest_now() - t0;

	if (dt > *slowest)
		*slowest = dt;
	if (!ok) {
		w->failures++;
		fprintf(stderr, "rpc_server: watch: %s failed after %.0f ms\n", what, dt * 1000);
	} else if (dt > limit) {
		w->late++;
		fprintf(stderr, "rpc_server: watch: %s took %.0f ms (limit %.0f ms)\n", what, dt * 1000,
			limit * 1000);
	}
}

static int watch(const char *addr, const char *port, const char *limit_ms)
{
	struct sigaction sa = { .sa_handler = watch_on_signal };
	double limit = strtod(limit_ms, NULL) / 1000, next_connect = 0, t0;
	struct watch_stats w = { 0 };
	struct sockaddr_storage ss;
	CLIENT *cl, *fresh;

	if (!rdmatest_parse_addr(addr, (uint16_t)strtoul(port, NULL, 10), &ss) || limit <= 0) {
		fprintf(stderr, "rpc_server: invalid address '%s' or limit '%s'\n", addr, limit_ms);
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	rdmatest_raise_memlock();
	cl = client_connect(&ss);
	if (!cl) {
		fprintf(stderr, "rpc_server: watch: %s", clnt_spcreateerror(addr));
		return 1;
	}
	printf("rpc_server: watch: connected\n");
	fflush(stdout);
	while (!watch_stop) {
		t0 = rdmatest_now();
		watch_note(&w, "NULL", rdmatest_call_null(cl, check_timeout) == RPC_SUCCESS, t0, limit,
			   &w.slowest_call);
		t0 = rdmatest_now();
		watch_note(&w, "ECHO 100", !check_echo(cl, 100), t0, limit, &w.slowest_call);
		t0 = rdmatest_now();
		watch_note(&w, "ECHO 20000", !check_echo(cl, 20000), t0, limit, &w.slowest_call);
		w.calls += 3;
		nanosleep(&(struct timespec){ 0, 20 * 1000000L }, NULL); /* leave the 2 vCPUs some room */
		if (rdmatest_now() < next_connect)
			continue;
		t0 = rdmatest_now();
		next_connect = t0 + 1;
		fresh = client_connect(&ss);
		watch_note(&w, "a new CLIENT's connect and NULL",
			   fresh && rdmatest_call_null(fresh, check_timeout) == RPC_SUCCESS, t0, limit,
			   &w.slowest_connect);
		if (fresh)
			clnt_destroy(fresh);
		w.connects++;
	}
	clnt_destroy(cl);
	printf("rpc_server: watch: %lu calls, slowest %.0f ms; %lu connects, slowest %.0f ms; "
	       "%lu failed, %lu over %.0f ms\n",
	       w.calls, w.slowest_call * 1000, w.connects, w.slowest_connect * 1000, w.failures,
	       w.late, limit * 1000);
	return w.failures || w.late || !w.connects;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--check"))
		return check(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "--watch"))
		return watch(argv[2], argv[3], argv[4]);
	if (argc == 5 && !strcmp(argv[1], "--starved"))
		return check_starved(argv[2], argv[3], argv[4]);
	if (argc >= 2 && argv[1][0] != '-')
		return serve(argc - 1, argv + 1);
	fprintf(stderr, "usage: rpc_server ADDR...\n       rpc_server --check ADDR PORT\n"
			"       rpc_server --watch ADDR PORT LIMIT_MS\n"
			"       rpc_server --starved ADDR PORT BYTES\n");
	return 2;
}
