/*
 * The server's held replies (rpcrdma_options.reply_batch), against an
 * in-process rdmatest server whose ECHO "sleep-MS" sleeps MS
 * milliseconds before answering.  One CLIENT, three threads: call C
 * ("sleep-600") keeps the server busy while A ("fast") and then B
 * ("sleep-1500") arrive, so the server takes A and B together after
 * C's reply and serves A first:
 *   1. with the default reply_batch, A's reply is held while B, which
 *      waits in the same burst, is served: A takes more than B's 1.5 s;
 *   2. with reply_batch 1 a listener posts every reply as it is made:
 *      A is answered while B is still being served, well under 1.5 s;
 *   3. every call of both gets its own payload back.
 * Prints figure: lines with A's time on each listener.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdmatest_support.h"

#define PROG "rpc_reply_batch"
#define SLEEP_PREFIX "sleep-"
#define B_SLEEP_S 1.5

static unsigned int failures;

#define check(ok, ...) (failures += !rdmatest_check(PROG, (ok), __VA_ARGS__))

/* ---- server ------------------------------------------------------------------------- */

/* The milliseconds an ECHO "sleep-MS" asks for, 0 for any other payload. */
static unsigned int sleep_ms(const rdmatest_data *d)
{
	char text[16];
	size_t pre = strlen(SLEEP_PREFIX), len = d->rdmatest_data_len;

	if (len <= pre || len >= sizeof(text) || memcmp(d->rdmatest_data_val, SLEEP_PREFIX, pre))
		return 0;
	memcpy(text, d->rdmatest_data_val, len);
	text[len] = '\0';
	return (unsigned int)strtoul(text + pre, NULL, 10);
}

/* ECHO "sleep-MS" sleeps first. */
static void echo_answer(SVCXPRT *xprt, rdmatest_data *arg)
{
	usleep(sleep_ms(arg) * 1000u);
	svc_sendreply(xprt, (xdrproc_t)xdr_rdmatest_data, (char *)arg);
}

static void dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	rdmatest_dispatch_echo(rq, xprt, echo_answer);
}

/* ---- client ------------------------------------------------------------------------- */

struct call {
	CLIENT *cl;
	const char *text;
	pthread_t thread;
	enum clnt_stat st;
	bool same;
	double seconds;
};

static void *call_main(void *arg)
{
	struct call *c = arg;
	double t0 = rdmatest_now();

	c->st = rdmatest_call_echo_text(c->cl, c->text, (struct timeval){ 25, 0 }, &c->same);
	c->seconds = rdmatest_now() - t0;
	return NULL;
}

static bool call_start(struct call *c, CLIENT *cl, const char *text)
{
	*c = (struct call){ .cl = cl, .text = text };
	if (pthread_create(&c->thread, NULL, call_main, c)) {
		check(false, "pthread_create for ECHO \"%s\"", text);
		return false;
	}
	return true;
}

/* Calls C, A and B as the header says; returns A's time, or -1 when a call failed. */
static double run_burst(const char *addr, unsigned int port, const char *what)
{
	struct rpcrdma_options o;
	struct sockaddr_storage ss;
	struct call calls[3];
	const char *texts[3] = { "sleep-600", "fast", "sleep-1500" };
	unsigned int started = 0;
	bool ok = true;
	CLIENT *cl;

	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	rdmatest_parse_addr(addr, (uint16_t)port, &ss);
	cl = clnt_rdma_tli_create((struct sockaddr *)&ss, RDMATEST_PROG, RDMATEST_V1, &o);
	if (!cl) {
		check(false, "%s: %s", what, clnt_spcreateerror(addr));
		return -1;
	}
	check(rdmatest_call_null(cl, (struct timeval){ 25, 0 }) == RPC_SUCCESS,
	      "%s: NULL connects", what);
	for (; started < 3; started++) {
		if (started)
			usleep(150000);
		if (!call_start(&calls[started], cl, texts[started]))
			break;
	}
	for (unsigned int i = 0; i < started; i++) {
		bool good;

		pthread_join(calls[i].thread, NULL);
		good = calls[i].st == RPC_SUCCESS && calls[i].same;
		check(good, "%s: ECHO \"%s\" got its own payload back (%s)", what, calls[i].text,
		      clnt_sperrno(calls[i].st));
		ok = ok && good;
	}
	clnt_destroy(cl);
	return ok && started == 3 ? calls[1].seconds : -1;
}

int main(int argc, char **argv)
{
	struct rpcrdma_options one;
	SVCXPRT *batched, *unbatched;
	double t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rdmatest_raise_memlock();
	if (argc != 2) {
		fprintf(stderr, "usage: " PROG " ADDR\n");
		return 2;
	}
	rpcrdma_options_init(&one);
	one.reply_batch = 1;
	batched = rdmatest_listen(PROG, argv[1], NULL, dispatch);
	unbatched = rdmatest_listen(PROG, argv[1], &one, dispatch);
	if (!batched || !unbatched || !rdmatest_start_server(PROG))
		return 1;

	t = run_burst(argv[1], batched->xp_port, "default reply_batch");
	if (t >= 0) {
		printf("figure: " PROG ": %s: default reply_batch: A answered in %.2f s\n", argv[1], t);
		check(t > B_SLEEP_S,
		      "default reply_batch: A's reply was held while B of its burst was served "
		      "(%.2f s, B sleeps %.1f s)", t, B_SLEEP_S);
	}
	t = run_burst(argv[1], unbatched->xp_port, "reply_batch 1");
	if (t >= 0) {
		printf("figure: " PROG ": %s: reply_batch 1: A answered in %.2f s\n", argv[1], t);
		check(t < B_SLEEP_S - 0.5,
		      "reply_batch 1: A's reply went out before B was served (%.2f s, B sleeps "
		      "%.1f s)", t, B_SLEEP_S);
	}
	printf(PROG ": %s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}
