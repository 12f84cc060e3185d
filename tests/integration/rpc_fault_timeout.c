/*
 * Calls whose reply never comes, or comes after the caller gave up, on
 * one RDMA CLIENT against an in-process rdmatest server whose ECHO
 * withholds the reply to "drop" (forever) and sleeps before answering
 * "late".  Checks, per address:
 *   1. a withheld reply ends the call with RPC_TIMEDOUT at its timeout;
 *   2. afterwards the CLIENT keeps working: several times its credit
 *      grant in calls, from as many threads as credits, all succeed
 *      (a credit lost with the timed-out call would leave them one
 *      short, a lost slot would hang them);
 *   3. when timed-out calls hold every credit, the next call replaces
 *      the connection (connects 2) instead of waiting forever, and the
 *      grant is what it was;
 *   4. a reply that arrives after its call timed out is dropped, never
 *      matched to another call: the calls sent meanwhile each get their
 *      own payload back, on the same connection;
 *   5. with reconnect_resend and CLSET_RETRY_TIMEOUT, a call whose first
 *      attempt gets no reply ("once-ADDR": the server withholds the
 *      first copy of that text) is sent again on a new connection after
 *      the retry timeout and succeeds; answered calls keep their
 *      connection; a reply withheld every time still ends in
 *      RPC_TIMEDOUT at the call's timeout, after a reset per retry
 *      timeout.  Checks 1-4 run with a 0.3 s retry timeout set but no
 *      reconnect_resend, which must leave them as they were;
 *   6. with one credit, a call waiting for it while the call that holds
 *      it times out is woken then (not at its own timeout), replaces the
 *      connection and succeeds;
 *   7. zero-timeout calls (libtirpc's batching: sent, RPC_TIMEDOUT at
 *      once unless the reply is in already; every other one without a
 *      result routine, classic batching: RPC_SUCCESS once sent, as
 *      libtirpc's clnt_vc returns), 100 back to back from one
 *      thread while 8 others keep calling on the same CLIENT (32
 *      credits), all reach the server, though they may find every
 *      credit taken and their Sends may queue behind another thread's
 *      post, and the other calls all succeed;
 *   8. calls whose arguments and results go by chunks (64 KiB each way)
 *      and whose caller gave up (zero-timeout calls, and one that timed
 *      out before its late reply): the server still reads every argument
 *      intact and writes its replies on the same connection, because a
 *      call that gave up leaves its chunk memory exposed until the reply
 *      comes (revoking it at once broke the connection: the server's
 *      RDMA Read or Write of it failed);
 *   9. a connection reset by one call's retry timeout wakes the thread
 *      polling for another call at once (it sleeps in poll(), up to 1 s
 *      at a time): that call is sent again and answered well within the
 *      second;
 *  10. with one credit, zero-timeout calls that find it taken (by a call
 *      waiting for its reply, then by the zero-timeout call before,
 *      answered after 0.3 s) wait for it and are all sent, on the same
 *      connection, instead of returning RPC_TIMEDOUT unsent or resetting
 *      the connection under the calls the server has not answered yet;
 *      when the server never answers a zero-timeout call ("drop"), the
 *      next waits for that reply for the connect timeout (3 s here),
 *      then replaces the connection and is sent;
 *  11. a zero-timeout call that comes while another thread connects
 *      (the server's one thread busy with a 3 s call, so the new
 *      connection is accepted late) waits for that connection and a
 *      credit on it and is sent, instead of returning RPC_TIMEDOUT
 *      unsent; no second connection is made;
 *  12. as with clnt_vc: a clnt_call timeout libtirpc's time_not_ok()
 *      refuses (tv_usec above a million, tv_sec above 100,000,000)
 *      stands for the last valid one: LONG_MAX in either field is no
 *      overflow (the call is answered; it once was a signed overflow,
 *      which UBSan stops at), and after a withheld reply timed out at
 *      1 s, tv_usec 4 million times the next out after 1 s too, not 4 s,
 *      and CLGET_TIMEOUT reports 1 s;
 *  13. as with clnt_vc: a negative clnt_call timeout stands for the last
 *      valid one (a withheld reply times out after it, not at once; it is
 *      what CLGET_TIMEOUT reports until CLSET_TIMEOUT), and
 *      once CLSET_TIMEOUT has set 3 s, a zero clnt_call timeout is still
 *      libtirpc's message passing: sent, RPC_TIMEDOUT at once, and
 *      RPC_SUCCESS at once without a result routine; the calls reach the
 *      server, on the first connection.
 * Prints figure: lines with the grant, the timeout's precision and the
 * connections made.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdmatest_support.h"

#define PROG "rpc_fault_timeout"
#define CLIENT_CREDITS 8
#define LATE_SLEEP_US 3000000
#define MAX_THREADS 64

static _Atomic unsigned int failures; /* check 6 fails from two threads */
static _Atomic unsigned int drops_seen; /* ECHO "drop" calls the server has taken */
static _Atomic unsigned int batched_seen; /* ECHO "batch-..." calls the server has taken */
static _Atomic unsigned int big_intact, big_damaged; /* check 8's arguments, as the server read them */
static _Atomic unsigned int slow_seen; /* ECHO "slow-..." calls the server has taken */
static _Atomic unsigned int late_seen; /* ECHO "late" calls the server has taken */

#define check_fail(...) (failures += !rdmatest_check(PROG, false, __VA_ARGS__))

/* ---- server ------------------------------------------------------------------------- */

static bool payload_is(const rdmatest_data *d, const char *text)
{
	return d->rdmatest_data_len == strlen(text) && !memcmp(d->rdmatest_data_val, text, strlen(text));
}

static bool has_prefix(const rdmatest_data *d, const char *prefix)
{
	size_t n = strlen(prefix);

	return d->rdmatest_data_len > n && !memcmp(d->rdmatest_data_val, prefix, n);
}

#define ONCE_PREFIX "once-"
#define ONCE_MAX 16

static char once_seen[ONCE_MAX][64];
static unsigned int once_count; /* svc_run's thread only */

/* Withhold the reply to an ECHO "once-..." the first time its text comes. */
static bool once_withheld(const rdmatest_data *d)
{
	size_t len = d->rdmatest_data_len;

	if (!has_prefix(d, ONCE_PREFIX) || len >= sizeof(once_seen[0]))
		return false;
	for (unsigned int i = 0; i < once_count; i++)
		if (strlen(once_seen[i]) == len && !memcmp(once_seen[i], d->rdmatest_data_val, len))
			return false;
	if (once_count == ONCE_MAX)
		return false;
	memcpy(once_seen[once_count], d->rdmatest_data_val, len);
	once_seen[once_count++][len] = '\0';
	return true;
}

#define BIG_LEN 65536 /* beyond every inline threshold: a read chunk there, a reply chunk back */

/* TAG-I- and then letters that follow from I: BIG_LEN bytes and a NUL */
static void big_text(char *buf, const char *tag, unsigned int i)
{
	unsigned int k = (unsigned int)snprintf(buf, BIG_LEN + 1, "%s-%u-", tag, i);

	for (; k < BIG_LEN; k++)
		buf[k] = (char)('a' + (i + k) % 26);
	buf[BIG_LEN] = '\0';
}

/* Whether @d is tagged @tag (big_text); if so it is counted intact or damaged. */
static bool big_seen(const rdmatest_data *d, const char *tag)
{
	static char want[BIG_LEN + 1]; /* svc_run's thread only */
	size_t n = strlen(tag);
	char num[12] = { 0 };

	if (d->rdmatest_data_len <= n || memcmp(d->rdmatest_data_val, tag, n) ||
	    d->rdmatest_data_val[n] != '-')
		return false;
	if (d->rdmatest_data_len != BIG_LEN) {
		big_damaged++;
		return true;
	}
	memcpy(num, d->rdmatest_data_val + n + 1, sizeof(num) - 1);
	big_text(want, tag, (unsigned int)strtoul(num, NULL, 10));
	if (memcmp(want, d->rdmatest_data_val, BIG_LEN))
		big_damaged++;
	else
		big_intact++;
	return true;
}

#define SLOW_PREFIX "slow-"
#define SLOW_SLEEP_US 300000

/*
 * rdmatest_dispatch, except ECHO "drop" (no reply at all), ECHO "late"
 * and "biglate-..." (after 3 s), "slow-..." (after 0.3 s) and ECHO
 * "once-..." (see once_withheld).
 */
static void echo_answer(SVCXPRT *xprt, rdmatest_data *arg)
{
	bool late = payload_is(arg, "late") || big_seen(arg, "biglate");
	bool slow = has_prefix(arg, SLOW_PREFIX);

	batched_seen += has_prefix(arg, "batch-");
	slow_seen += slow;
	late_seen += payload_is(arg, "late");
	(void)big_seen(arg, "bigbatch");
	if (payload_is(arg, "drop")) {
		drops_seen++;
	} else if (!once_withheld(arg)) {
		if (late || slow)
			usleep(late ? LATE_SLEEP_US : SLOW_SLEEP_US);
		svc_sendreply(xprt, (xdrproc_t)xdr_rdmatest_data, (char *)arg);
	}
}

static void dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	rdmatest_dispatch_echo(rq, xprt, echo_answer);
}

/* ---- client ------------------------------------------------------------------------- */

/* ECHO @text; a successful reply must carry @text. */
static enum clnt_stat echo(CLIENT *cl, const char *text, int seconds)
{
	bool same;
	enum clnt_stat st = rdmatest_call_echo_text(cl, text, (struct timeval){ seconds, 0 }, &same);

	if (st == RPC_SUCCESS && !same)
		check_fail("ECHO \"%s\" came back different: a reply matched to the wrong call", text);
	return st;
}

static struct rpcrdma_conn_info info_of(CLIENT *cl)
{
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;

	if (clnt_rdma_getinfo(cl, &ci))
		check_fail("clnt_rdma_getinfo: no connection");
	return ci;
}

struct burst {
	CLIENT *cl;
	unsigned int id, calls, ok;
	const char *tag;
};

static void *burst_main(void *arg)
{
	struct burst *b = arg;
	char text[64];

	for (unsigned int i = 0; i < b->calls; i++) {
		enum clnt_stat st;

		snprintf(text, sizeof(text), "%s-%u-%u", b->tag, b->id, i);
		st = echo(b->cl, text, 20);
		if (st == RPC_SUCCESS)
			b->ok++;
		else
			check_fail("%s: ECHO \"%s\": %s", b->tag, text, clnt_sperrno(st));
	}
	return NULL;
}

/* @threads threads, @per calls each, at once; true when every call succeeded. */
static bool burst(CLIENT *cl, const char *tag, unsigned int threads, unsigned int per)
{
	struct burst b[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	unsigned int ok = 0, n = 0;
	double t0 = rdmatest_now();

	for (; n < threads && n < MAX_THREADS; n++) {
		b[n] = (struct burst){ cl, n, per, 0, tag };
		if (pthread_create(&th[n], NULL, burst_main, &b[n]))
			break;
	}
	for (unsigned int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		ok += b[i].ok;
	}
	printf(PROG ": %s: %u of %u calls from %u threads succeeded in %.2f s\n", tag, ok,
	       threads * per, threads, rdmatest_now() - t0);
	return ok == threads * per;
}

/* One call whose reply is withheld: RPC_TIMEDOUT at about @seconds. */
static double expect_timeout(CLIENT *cl, const char *text, int seconds)
{
	double t0 = rdmatest_now(), dt;
	enum clnt_stat st = echo(cl, text, seconds);

	dt = rdmatest_now() - t0;
	if (st != RPC_TIMEDOUT)
		check_fail("ECHO \"%s\": %s, expected %s", text, clnt_sperrno(st),
			   clnt_sperrno(RPC_TIMEDOUT));
	else if (dt < seconds - 0.05 || dt > seconds + 3)
		check_fail("ECHO \"%s\" timed out after %.2f s, its timeout is %d s", text, dt, seconds);
	return dt;
}

static CLIENT *client_connect_ms(const char *addr, unsigned int port, bool resend,
				 uint32_t credits, int connect_ms)
{
	struct rpcrdma_options o;
	struct sockaddr_storage ss;
	CLIENT *cl;

	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	o.credits = credits;
	o.reconnect_resend = resend;
	if (connect_ms)
		o.connect_timeout_ms = connect_ms;
	rdmatest_parse_addr(addr, (uint16_t)port, &ss);
	cl = clnt_rdma_tli_create((struct sockaddr *)&ss, RDMATEST_PROG, RDMATEST_V1, &o);
	if (!cl)
		check_fail("%s", clnt_spcreateerror(addr));
	return cl;
}

static CLIENT *client(const char *addr, unsigned int port, bool resend, uint32_t credits)
{
	return client_connect_ms(addr, port, resend, credits, 0);
}

/* CLSET_RETRY_TIMEOUT @us: the value round-trips, a bad one is refused and leaves it. */
static bool retry_timeout_set(CLIENT *cl, const char *addr, long us)
{
	struct timeval tv = { us / 1000000, us % 1000000 }, got = { 0, 0 };
	struct timeval bad = { 0, 1000001 }, negative = { -1, 0 };

	if (!clnt_control(cl, CLSET_RETRY_TIMEOUT, (char *)&tv) ||
	    !clnt_control(cl, CLGET_RETRY_TIMEOUT, (char *)&got) || got.tv_sec != tv.tv_sec ||
	    got.tv_usec != tv.tv_usec) {
		check_fail("%s: CLSET_RETRY_TIMEOUT %ld us did not take", addr, us);
		return false;
	}
	if (clnt_control(cl, CLSET_RETRY_TIMEOUT, (char *)&bad) ||
	    clnt_control(cl, CLSET_RETRY_TIMEOUT, (char *)&negative))
		check_fail("%s: CLSET_RETRY_TIMEOUT took 1000001 us or -1 s", addr);
	if (!clnt_control(cl, CLGET_RETRY_TIMEOUT, (char *)&got) || got.tv_sec != tv.tv_sec ||
	    got.tv_usec != tv.tv_usec)
		check_fail("%s: a refused CLSET_RETRY_TIMEOUT changed the value", addr);
	return true;
}

static void run(const char *addr, unsigned int port)
{
	struct rpcrdma_conn_info before = RPCRDMA_CONN_INFO_INIT, after = RPCRDMA_CONN_INFO_INIT;
	unsigned int grant;
	double dt;
	CLIENT *cl = client(addr, port, false, CLIENT_CREDITS);

	if (!cl)
		return;
	if (echo(cl, "hello", 10) != RPC_SUCCESS)
		check_fail("%s: the first ECHO failed", addr);
	retry_timeout_set(cl, addr, 300000); /* no effect without reconnect_resend */
	before = info_of(cl);
	grant = before.credits;
	printf(PROG ": %s: credit grant %u (asked for %u)\n", addr, grant, CLIENT_CREDITS);

	/* 1-2: one reply withheld, then 3 x grant calls from grant threads */
	dt = expect_timeout(cl, "drop", 1);
	printf("figure: " PROG ": %s: a withheld reply timed out after %.2f s (timeout 1 s)\n",
	       addr, dt);
	if (!burst(cl, "after-one-timeout", grant, 3))
		check_fail("%s: calls after one timed-out call did not all succeed", addr);
	if (info_of(cl).connects != 1)
		check_fail("%s: one timed-out call replaced the connection (connects %u)", addr,
			   info_of(cl).connects);

	/* 3: timed-out calls hold every credit: the next call must replace the connection */
	for (unsigned int i = 1; i < grant; i++)
		expect_timeout(cl, "drop", 1);
	if (!burst(cl, "after-all-credits-timed-out", grant, 3))
		check_fail("%s: calls after %u timed-out calls did not all succeed", addr, grant);
	after = info_of(cl);
	if (after.connects != 2)
		check_fail("%s: connects %u after every credit was held by a timed-out call, "
			   "expected 2 (a new connection)", addr, after.connects);
	if (after.credits != grant)
		check_fail("%s: credit grant %u after the timeouts, %u before", addr, after.credits,
			   grant);

	/* 4: a late reply arrives while other calls wait; none may take it */
	expect_timeout(cl, "late", 1);
	if (!burst(cl, "around-a-late-reply", grant, 2))
		check_fail("%s: calls around a late reply did not all succeed", addr);
	after = info_of(cl);
	if (after.connects != 2)
		check_fail("%s: the late reply cost the connection (connects %u, expected 2)", addr,
			   after.connects);
	if (!burst(cl, "after-the-late-reply", grant, 3))
		check_fail("%s: calls after the late reply did not all succeed", addr);
	after = info_of(cl);
	printf("figure: " PROG ": %s: credit grant %u before, %u after %u withheld and 1 late "
	       "reply; connects %u\n", addr, grant, after.credits, grant, after.connects);
	clnt_destroy(cl);
}

/* 5: resending after the retry timeout */
/* A CLIENT with reconnect_resend and a retry timeout of @us that has made a call, or NULL. */
static CLIENT *client_retrying(const char *addr, unsigned int port, long us)
{
	CLIENT *cl = client(addr, port, true, CLIENT_CREDITS);

	if (cl && (echo(cl, "hello", 10) != RPC_SUCCESS || !retry_timeout_set(cl, addr, us))) {
		check_fail("%s: no CLIENT with a retry timeout to test", addr);
		clnt_destroy(cl);
		return NULL;
	}
	return cl;
}

static void run_retry(const char *addr, unsigned int port)
{
	CLIENT *cl = client_retrying(addr, port, 1000000);
	unsigned int connects;
	char once[64];
	double t0, dt;

	if (!cl)
		return;
	snprintf(once, sizeof(once), ONCE_PREFIX "%s", addr);
	t0 = rdmatest_now();
	if (echo(cl, once, 10) != RPC_SUCCESS)
		check_fail("%s: ECHO \"%s\" was not answered after its resend", addr, once);
	dt = rdmatest_now() - t0;
	connects = info_of(cl).connects;
	if (dt < 0.95 || dt > 6 || connects != 2)
		check_fail("%s: ECHO \"%s\" took %.2f s and %u connections, expected the retry "
			   "timeout (1 s) and 2", addr, once, dt, connects);
	printf("figure: " PROG ": %s: a call without a reply was sent again on a new connection "
	       "and answered after %.2f s (retry timeout 1 s); connects %u\n", addr, dt, connects);
	/* answered calls: a retry timeout far above a slow reply under ASan */
	retry_timeout_set(cl, addr, 5000000);
	if (!burst(cl, "retry-timeout-answered", CLIENT_CREDITS, 3))
		check_fail("%s: calls with a retry timeout set did not all succeed", addr);
	if (info_of(cl).connects != connects)
		check_fail("%s: answered calls reset the connection (connects %u, expected %u)", addr,
			   info_of(cl).connects, connects);
	retry_timeout_set(cl, addr, 1000000);
	dt = expect_timeout(cl, "drop", 3);
	connects = info_of(cl).connects - connects;
	if (connects < 2)
		check_fail("%s: a reply withheld for 3 s with a 1 s retry timeout made %u new "
			   "connections, expected 2 or more", addr, connects);
	printf("figure: " PROG ": %s: a reply withheld every time: RPC_TIMEDOUT after %.2f s "
	       "(timeout 3 s, retry timeout 1 s), %u new connections\n", addr, dt, connects);
	clnt_destroy(cl);
}

/* 6: a credit waiter and the timeout of the call holding the credit */

/* A CLIENT granted one credit (@connect_ms: its connect timeout, 0 default) that made a call, or NULL. */
static CLIENT *client_one_credit(const char *addr, unsigned int port, int connect_ms)
{
	CLIENT *cl = client_connect_ms(addr, port, false, 1, connect_ms);

	if (cl && (echo(cl, "hello", 10) != RPC_SUCCESS || info_of(cl).credits != 1)) {
		check_fail("%s: no CLIENT with one credit to test", addr);
		clnt_destroy(cl);
		return NULL;
	}
	return cl;
}

static void *drop_main(void *arg)
{
	expect_timeout(arg, "drop", 2);
	return NULL;
}

static void run_credit_wait(const char *addr, unsigned int port)
{
	CLIENT *cl = client_one_credit(addr, port, 0);
	unsigned int drops = drops_seen;
	enum clnt_stat st;
	pthread_t th;
	double t0, dt;

	if (!cl)
		return;
	t0 = rdmatest_now();
	if (pthread_create(&th, NULL, drop_main, cl)) {
		check_fail("pthread_create failed");
		clnt_destroy(cl);
		return;
	}
	/* the withheld call holds the credit once the server has it */
	while (drops_seen == drops && rdmatest_now() - t0 < 5)
		usleep(10000);
	if (drops_seen == drops)
		check_fail("%s: the server never got the call to withhold", addr);
	st = echo(cl, "after-the-credit", 8);
	dt = rdmatest_now() - t0;
	pthread_join(th, NULL);
	if (st != RPC_SUCCESS || dt > 5)
		check_fail("%s: a call waiting for the credit of a call that timed out after 2 s: "
			   "%s after %.2f s, expected success soon after 2 s", addr, clnt_sperrno(st),
			   dt);
	else if (info_of(cl).connects != 2)
		check_fail("%s: connects %u, expected 2: the timed-out call's credit is lost with "
			   "its connection", addr, info_of(cl).connects);
	printf("figure: " PROG ": %s: one credit held by a call that timed out after 2 s: the "
	       "call waiting for it ended after %.2f s (%s)\n", addr, dt, clnt_sperrno(st));
	clnt_destroy(cl);
}

/* A zero-timeout ECHO: RPC_TIMEDOUT once sent, or its reply if that is in already. */
static void echo_batched(CLIENT *cl, const char *addr, const char *text)
{
	bool same;
	enum clnt_stat st = rdmatest_call_echo_text(cl, text, (struct timeval){ 0, 0 }, &same);

	if (st != RPC_TIMEDOUT && (st != RPC_SUCCESS || !same))
		check_fail("%s: zero-timeout ECHO \"%s\": %s, expected %s or its reply", addr, text,
			   clnt_sperrno(st), clnt_sperrno(RPC_TIMEDOUT));
}

/* Classic batching: no result routine and a zero timeout is RPC_SUCCESS once sent (clnt_vc). */
static void echo_batched_no_results(CLIENT *cl, const char *addr, const char *text)
{
	rdmatest_data arg = { (u_int)strlen(text), (char *)text };
	struct timeval zero = { 0, 0 };
	enum clnt_stat st = clnt_call(cl, RDMATEST_ECHO, (xdrproc_t)xdr_rdmatest_data, (char *)&arg,
				      NULL, NULL, zero);

	if (st != RPC_SUCCESS)
		check_fail("%s: zero-timeout ECHO \"%s\" without a result routine: %s, expected %s",
			   addr, text, clnt_sperrno(st), clnt_sperrno(RPC_SUCCESS));
}

static unsigned int wait_seen(const _Atomic unsigned int *seen, unsigned int want, double seconds)
{
	for (double t0 = rdmatest_now(); *seen < want && rdmatest_now() - t0 < seconds;)
		usleep(10000);
	return *seen;
}

/* 7: zero-timeout calls among other threads' calls */
#define BATCH_CALLS 100
#define BATCH_LOAD_THREADS 8

struct load {
	CLIENT *cl;
	bool ok;
};

static void *load_main(void *arg)
{
	struct load *l = arg;

	l->ok = burst(l->cl, "around-zero-timeout-calls", BATCH_LOAD_THREADS, 40);
	return NULL;
}

static void run_batched(const char *addr, unsigned int port)
{
	CLIENT *cl = client(addr, port, false, 32);
	struct load l = { cl, false };
	unsigned int base = batched_seen, got;
	char text[64];
	pthread_t th;

	if (!cl)
		return;
	if (echo(cl, "hello", 10) != RPC_SUCCESS || pthread_create(&th, NULL, load_main, &l)) {
		check_fail("%s: no CLIENT under load to test zero-timeout calls on", addr);
		clnt_destroy(cl);
		return;
	}
	/* back to back: a call that finds every credit taken waits for one */
	for (unsigned int i = 0; i < BATCH_CALLS; i++) {
		snprintf(text, sizeof(text), "batch-%u", i);
		if (i % 2)
			echo_batched_no_results(cl, addr, text);
		else
			echo_batched(cl, addr, text);
	}
	pthread_join(th, NULL);
	got = wait_seen(&batched_seen, base + BATCH_CALLS, 10) - base;
	if (got != BATCH_CALLS)
		check_fail("%s: the server got %u of %u zero-timeout calls", addr, got, BATCH_CALLS);
	if (!l.ok)
		check_fail("%s: calls around zero-timeout calls did not all succeed", addr);
	printf("figure: " PROG ": %s: %u of %u zero-timeout calls reached the server while %u "
	       "threads called\n", addr, got, BATCH_CALLS, BATCH_LOAD_THREADS);
	clnt_destroy(cl);
}

/* 9: a reset by another thread's retry timeout wakes the poller */

struct reset {
	CLIENT *cl;
	char text[64];
};

/* Once the other call polls: a call withheld once, so its connection is reset after 0.3 s. */
static void *reset_main(void *arg)
{
	struct reset *r = arg;
	struct timeval rt = { 0, 300000 };
	enum clnt_stat st;

	usleep(100000);
	if (!clnt_control(r->cl, CLSET_RETRY_TIMEOUT, (char *)&rt))
		check_fail("CLSET_RETRY_TIMEOUT 0.3 s did not take");
	st = echo(r->cl, r->text, 10);
	if (st != RPC_SUCCESS)
		check_fail("ECHO \"%s\" with a 0.3 s retry timeout: %s", r->text, clnt_sperrno(st));
	return NULL;
}

static void run_reset_wakes_poller(const char *addr, unsigned int port)
{
	CLIENT *cl = client_retrying(addr, port, 5000000);
	struct reset r = { cl, "" };
	unsigned int connects;
	char once[64];
	enum clnt_stat st;
	pthread_t th;
	double t0, dt;

	if (!cl)
		return;
	snprintf(once, sizeof(once), ONCE_PREFIX "poller-%s", addr);
	snprintf(r.text, sizeof(r.text), ONCE_PREFIX "reset-%s", addr);
	if (pthread_create(&th, NULL, reset_main, &r)) {
		check_fail("pthread_create failed");
		clnt_destroy(cl);
		return;
	}
	/* this call (withheld once) starts first and polls; the reset's call sleeps */
	t0 = rdmatest_now();
	st = echo(cl, once, 10);
	dt = rdmatest_now() - t0;
	pthread_join(th, NULL);
	connects = info_of(cl).connects;
	if (st != RPC_SUCCESS || dt > 0.9)
		check_fail("%s: the poller's call after another call's reset: %s after %.2f s, "
			   "expected success within 0.9 s", addr, clnt_sperrno(st), dt);
	if (connects != 2)
		check_fail("%s: connects %u, expected 2 (one reset)", addr, connects);
	printf("figure: " PROG ": %s: a call polling while another thread's retry timeout (0.3 s) "
	       "reset the connection was sent again and answered after %.2f s; connects %u\n",
	       addr, dt, connects);
	clnt_destroy(cl);
}

/* 8: chunks of calls whose caller gave up */
#define BIG_CALLS 16

static void run_big(const char *addr, unsigned int port)
{
	static char text[BIG_LEN + 1];
	CLIENT *cl = client(addr, port, false, 32);
	unsigned int base = big_intact, damaged = big_damaged, got;
	enum clnt_stat st;
	bool same;
	double t0;

	if (!cl)
		return;
	if (echo(cl, "hello", 10) != RPC_SUCCESS) {
		check_fail("%s: no CLIENT to test calls with chunks that gave up on", addr);
		clnt_destroy(cl);
		return;
	}
	for (unsigned int i = 0; i < BIG_CALLS; i++) {
		big_text(text, "bigbatch", i);
		st = rdmatest_call_echo_text(cl, text, (struct timeval){ 0, 0 }, &same);
		if (st != RPC_TIMEDOUT && (st != RPC_SUCCESS || !same))
			check_fail("%s: zero-timeout ECHO of %u bytes: %s, expected %s or its reply",
				   addr, BIG_LEN, clnt_sperrno(st), clnt_sperrno(RPC_TIMEDOUT));
	}
	big_text(text, "biglate", 0);
	t0 = rdmatest_now();
	st = rdmatest_call_echo_text(cl, text, (struct timeval){ 1, 0 }, &same);
	if (st != RPC_TIMEDOUT)
		check_fail("%s: ECHO of %u bytes answered after 3 s: %s with a 1 s timeout, expected "
			   "%s", addr, BIG_LEN, clnt_sperrno(st), clnt_sperrno(RPC_TIMEDOUT));
	/* after the late reply's RDMA Writes: the server answers one call at a time */
	if (echo(cl, "after-big-calls", 10) != RPC_SUCCESS)
		check_fail("%s: the call after calls with chunks that gave up failed", addr);
	got = big_intact - base;
	if (got != BIG_CALLS + 1 || big_damaged != damaged)
		check_fail("%s: the server read %u of %u arguments of calls that gave up intact, %u "
			   "damaged", addr, got, BIG_CALLS + 1, big_damaged - damaged);
	if (info_of(cl).connects != 1)
		check_fail("%s: calls with chunks that gave up cost the connection (connects %u)",
			   addr, info_of(cl).connects);
	printf("figure: " PROG ": %s: %u of %u arguments of %u bytes read intact after their "
	       "callers gave up; the call after them answered at %.2f s; connects %u\n", addr, got,
	       BIG_CALLS + 1, BIG_LEN, rdmatest_now() - t0, info_of(cl).connects);
	clnt_destroy(cl);
}

/* 10: zero-timeout calls that find no free credit */
#define SLOW_BATCH 5
#define SLOW_CONNECT_MS 3000

static void *live_main(void *arg)
{
	struct reset *r = arg;
	enum clnt_stat st = echo(r->cl, r->text, 10);

	if (st != RPC_SUCCESS)
		check_fail("ECHO \"%s\": %s", r->text, clnt_sperrno(st));
	return NULL;
}

/* The one credit held by a call waiting for its reply, then by each zero-timeout call before. */
static void run_batched_no_credit(CLIENT *cl, const char *addr)
{
	struct reset live = { cl, "" };
	unsigned int base = slow_seen, got;
	char text[64];
	pthread_t th;
	double t0 = rdmatest_now(), dt;

	snprintf(live.text, sizeof(live.text), SLOW_PREFIX "live-%s", addr);
	if (pthread_create(&th, NULL, live_main, &live)) {
		check_fail("pthread_create failed");
		return;
	}
	if (wait_seen(&slow_seen, base + 1, 5) == base)
		check_fail("%s: the server never got the call to hold the credit", addr);
	for (unsigned int i = 0; i < SLOW_BATCH; i++) {
		snprintf(text, sizeof(text), SLOW_PREFIX "batch-%u-%s", i, addr);
		echo_batched(cl, addr, text);
	}
	dt = rdmatest_now() - t0;
	pthread_join(th, NULL);
	got = wait_seen(&slow_seen, base + 1 + SLOW_BATCH, 10) - base - 1;
	if (echo(cl, "after-slow-batch", 10) != RPC_SUCCESS)
		check_fail("%s: the call after zero-timeout calls without a credit failed", addr);
	if (got != SLOW_BATCH || info_of(cl).connects != 1)
		check_fail("%s: the server got %u of %u zero-timeout calls that found the only credit "
			   "taken; connects %u, expected 1", addr, got, SLOW_BATCH, info_of(cl).connects);
	printf("figure: " PROG ": %s: %u of %u zero-timeout calls that found the only credit taken "
	       "waited for it and reached the server (the last sent after %.2f s); connects %u\n",
	       addr, got, SLOW_BATCH, dt, info_of(cl).connects);
}

/* A zero-timeout call the server never answers holds the credit until the connect timeout. */
static void run_batched_unanswered(CLIENT *cl, const char *addr)
{
	unsigned int drops = drops_seen, base = slow_seen, connects = info_of(cl).connects, got;
	char text[64];
	double t0, dt;

	echo_batched(cl, addr, "drop");
	if (wait_seen(&drops_seen, drops + 1, 5) == drops)
		check_fail("%s: the server never got the zero-timeout call to leave unanswered", addr);
	snprintf(text, sizeof(text), SLOW_PREFIX "after-drop-%s", addr);
	t0 = rdmatest_now();
	echo_batched(cl, addr, text);
	dt = rdmatest_now() - t0;
	got = wait_seen(&slow_seen, base + 1, 5) - base;
	connects = info_of(cl).connects - connects;
	if (got != 1 || connects != 1 || dt < SLOW_CONNECT_MS / 1000.0 - 1 ||
	    dt > SLOW_CONNECT_MS / 1000.0 + 3)
		check_fail("%s: a zero-timeout call behind an unanswered one: sent after %.2f s, %u "
			   "new connections, at the server %u times; expected after about the "
			   "connect timeout (%d ms), 1, 1", addr, dt, connects, got, SLOW_CONNECT_MS);
	printf("figure: " PROG ": %s: a zero-timeout call behind an unanswered one was sent after "
	       "%.2f s (connect timeout %d ms) on %u new connection\n", addr, dt, SLOW_CONNECT_MS,
	       connects);
}

static void run_batched_credit(const char *addr, unsigned int port)
{
	CLIENT *cl = client_one_credit(addr, port, SLOW_CONNECT_MS);

	if (!cl)
		return;
	run_batched_no_credit(cl, addr);
	run_batched_unanswered(cl, addr);
	clnt_destroy(cl);
}

/* 11: a zero-timeout call while another thread connects */
#define CONNECTING_TIMEOUT_MS 8000

/* Whether @cl came to have no live connection (another thread builds one) within 3 s. */
static bool wait_connecting(CLIENT *cl)
{
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;

	for (double t0 = rdmatest_now(); rdmatest_now() - t0 < 3; usleep(1000))
		if (clnt_rdma_getinfo(cl, &ci) == -ENOTCONN)
			return true;
	return false;
}

static void run_batched_connecting(const char *addr, unsigned int port)
{
	CLIENT *cl = client_one_credit(addr, port, CONNECTING_TIMEOUT_MS);
	struct reset busy = { cl ? client(addr, port, false, CLIENT_CREDITS) : NULL, "late" };
	struct reset live = { cl, "" };
	unsigned int base = batched_seen, late = late_seen, connects, got;
	pthread_t busy_th, th;
	char text[64];
	double t0, dt;

	if (!busy.cl)
		goto out;
	/* a timed-out call holds the one credit: the next call replaces the connection */
	(void)expect_timeout(cl, "drop", 1);
	connects = info_of(cl).connects;
	if (pthread_create(&busy_th, NULL, live_main, &busy)) {
		check_fail("pthread_create failed");
		goto out;
	}
	if (wait_seen(&late_seen, late + 1, 5) == late)
		check_fail("%s: the server never got the call to keep it busy", addr);
	snprintf(live.text, sizeof(live.text), "reconnecting-%s", addr);
	if (pthread_create(&th, NULL, live_main, &live)) {
		check_fail("pthread_create failed");
		pthread_join(busy_th, NULL);
		goto out;
	}
	/* it kills the connection the orphan holds and connects in one hold of the CLIENT's lock */
	if (!wait_connecting(cl))
		check_fail("%s: the other thread did not start a new connection", addr);
	snprintf(text, sizeof(text), "batch-connecting-%s", addr);
	t0 = rdmatest_now();
	echo_batched(cl, addr, text);
	dt = rdmatest_now() - t0;
	pthread_join(th, NULL);
	pthread_join(busy_th, NULL);
	got = wait_seen(&batched_seen, base + 1, 5) - base;
	connects = info_of(cl).connects - connects;
	if (got != 1 || connects != 1 || dt < 1 || dt > CONNECTING_TIMEOUT_MS / 1000.0)
		check_fail("%s: a zero-timeout call while another thread connected: returned after "
			   "%.2f s, at the server %u times, %u new connections; expected after the "
			   "connection was accepted (about 3 s), 1, 1", addr, dt, got, connects);
	printf("figure: " PROG ": %s: a zero-timeout call that came while another thread "
	       "connected returned after %.2f s, at the server %u times (%u new connection)\n",
	       addr, dt, got, connects);
out:
	if (busy.cl)
		clnt_destroy(busy.cl);
	if (cl)
		clnt_destroy(cl);
}

static void check_timeout_got(CLIENT *cl, const char *addr, struct timeval want)
{
	struct timeval got = { -1, -1 };

	if (!clnt_control(cl, CLGET_TIMEOUT, (char *)&got) || got.tv_sec != want.tv_sec ||
	    got.tv_usec != want.tv_usec)
		check_fail("%s: CLGET_TIMEOUT %ld.%06ld s, expected %ld.%06ld s", addr,
			   (long)got.tv_sec, (long)got.tv_usec, (long)want.tv_sec, (long)want.tv_usec);
}

/* 12: timeouts libtirpc refuses */
static void run_timeval(const char *addr, unsigned int port)
{
	static const struct timeval refused[] = { { 0, LONG_MAX }, { LONG_MAX, 0 } };
	CLIENT *cl = client(addr, port, false, CLIENT_CREDITS);
	enum clnt_stat st;
	double t0, dt;
	bool same;

	if (!cl)
		return;
	for (size_t i = 0; i < 2; i++) {
		st = rdmatest_call_echo_text(cl, "refused-timeout", refused[i], &same);
		if (st != RPC_SUCCESS || !same)
			check_fail("%s: ECHO with timeout {%ld, %ld}: %s%s", addr,
				   (long)refused[i].tv_sec, (long)refused[i].tv_usec, clnt_sperrno(st),
				   st == RPC_SUCCESS ? ", another reply" : "");
	}
	expect_timeout(cl, "drop", 1);
	t0 = rdmatest_now();
	st = rdmatest_call_echo_text(cl, "drop", (struct timeval){ 0, 4000000 }, &same);
	dt = rdmatest_now() - t0;
	if (st != RPC_TIMEDOUT || dt < 0.95 || dt > 3)
		check_fail("%s: withheld ECHO with tv_usec 4000000 after a 1 s timeout: %s after "
			   "%.2f s, expected %s after 1 s, the last valid timeout", addr,
			   clnt_sperrno(st), dt, clnt_sperrno(RPC_TIMEDOUT));
	check_timeout_got(cl, addr, (struct timeval){ 1, 0 });
	printf("figure: " PROG ": %s: tv_usec 4000000 timed out after %.2f s (the last valid 1 s)\n",
	       addr, dt);
	clnt_destroy(cl);
}

/* 13: clnt_call's zero or negative timeout beside CLSET_TIMEOUT */
static void zero_after_set(CLIENT *cl, const char *addr, bool results)
{
	rdmatest_data arg = { 4, (char *)"drop" }, res = { 0 };
	struct timeval zero = { 0, 0 };
	double t0 = rdmatest_now(), dt;
	enum clnt_stat st = clnt_call(cl, RDMATEST_ECHO, (xdrproc_t)xdr_rdmatest_data, (char *)&arg,
				      results ? (xdrproc_t)xdr_rdmatest_data : NULL,
				      results ? (char *)&res : NULL, zero);
	enum clnt_stat want = results ? RPC_TIMEDOUT : RPC_SUCCESS;

	dt = rdmatest_now() - t0;
	if (st != want || dt > 1)
		check_fail("%s: zero-timeout ECHO %s a result routine after CLSET_TIMEOUT 3 s: %s "
			   "after %.2f s, expected %s at once", addr, results ? "with" : "without",
			   clnt_sperrno(st), dt, clnt_sperrno(want));
}

static void run_timeout_set(const char *addr, unsigned int port)
{
	struct timeval three = { 3, 0 };
	CLIENT *cl = client(addr, port, false, CLIENT_CREDITS);
	unsigned int drops;
	enum clnt_stat st;
	double t0, dt;
	bool same;

	if (!cl)
		return;
	if (echo(cl, "grant", 10) != RPC_SUCCESS) /* the grant starts at 1: the calls below take 5 */
		check_fail("%s: ECHO before the zero and negative timeouts failed", addr);
	expect_timeout(cl, "drop", 1);
	t0 = rdmatest_now();
	st = rdmatest_call_echo_text(cl, "drop", (struct timeval){ -1, 0 }, &same);
	dt = rdmatest_now() - t0;
	if (st != RPC_TIMEDOUT || dt < 0.95 || dt > 4)
		check_fail("%s: withheld ECHO with a negative timeout after a 1 s one: %s after %.2f s, "
			   "expected %s after 1 s", addr, clnt_sperrno(st), dt,
			   clnt_sperrno(RPC_TIMEDOUT));
	check_timeout_got(cl, addr, (struct timeval){ 1, 0 });
	drops = drops_seen;
	if (!clnt_control(cl, CLSET_TIMEOUT, (char *)&three))
		check_fail("%s: CLSET_TIMEOUT 3 s refused", addr);
	check_timeout_got(cl, addr, three);
	zero_after_set(cl, addr, false);
	zero_after_set(cl, addr, false);
	zero_after_set(cl, addr, true);
	if (wait_seen(&drops_seen, drops + 3, 5) < drops + 3)
		check_fail("%s: %u of 3 zero-timeout calls after CLSET_TIMEOUT reached the server", addr,
			   drops_seen - drops);
	if (info_of(cl).connects != 1)
		check_fail("%s: connects %u after the zero-timeout calls, expected 1", addr,
			   info_of(cl).connects);
	clnt_destroy(cl);
}

int main(int argc, char **argv)
{
	unsigned int port[RDMATEST_MAX_ADDRS];
	int n = rdmatest_serve_addrs(PROG, argc, argv, dispatch, port);

	if (n < 0)
		return -n;
	for (int i = 0; i < n; i++) {
		printf(PROG ": %s port %u\n", argv[i + 1], port[i]);
		run(argv[i + 1], port[i]);
		run_retry(argv[i + 1], port[i]);
		run_credit_wait(argv[i + 1], port[i]);
		run_batched(argv[i + 1], port[i]);
		run_big(argv[i + 1], port[i]);
		run_reset_wakes_poller(argv[i + 1], port[i]);
		run_batched_credit(argv[i + 1], port[i]);
		run_batched_connecting(argv[i + 1], port[i]);
		run_timeval(argv[i + 1], port[i]);
		run_timeout_set(argv[i + 1], port[i]);
	}
	printf(PROG ": %s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}
