/*
 * hostile_slow_client: clients that do not keep up, against our server
 * (issue #7).  A client that posts no receive buffer leaves every reply
 * the server Sends it hanging in the transport: on InfiniBand/RoCE the
 * Send is retried while the receiver is not ready (without end: the
 * server accepts with rnr_retry 7), on iWARP the untagged message is a
 * fatal error for that connection.  A server that waited for its Sends
 * to complete would stop serving everyone else meanwhile.
 *
 * Scenarios, each against one running server:
 *   stalled     one peer sends 8 NULL calls with no receive posted;
 *   stalled-4   four such peers with 32 calls each (all their credits);
 *   stalled-gone  a stalled peer disconnects without ever reading;
 *   stalled-hangup  a stalled peer calls rpc_server's HANGUP, whose
 *               dispatch routine replies and destroys the connection:
 *               the reply cannot be delivered, so the server lets the
 *               connection go after its linger (IB/RoCE: no sooner, the
 *               Send is still being retried) or at once (iWARP: the
 *               Send ended the connection), and the peer sees it end;
 *   hangup-burst  peers with receives send HANGUP and, right behind
 *               it, NULL calls: HANGUP's reply arrives (made while more
 *               calls waited, it may have been held for a chained post),
 *               the calls behind it are not served, and the connection
 *               ends.
 * While the peers stall, a fresh connection's NULL call must be answered
 * within PROMPT_MS and (with --checker) the library's own CLIENT must
 * pass its checks.  Then each stalled peer posts its receives and must
 * get every reply, correct, on InfiniBand/RoCE; on iWARP its connection
 * may instead have been closed (RFC 5040: a Send with no receive
 * posted).  The slowest probe is printed: it shows whether the server
 * waited for the stalled peers.
 *
 * usage: hostile_slow_client [--checker CMD] ADDR PORT
 * Prints "hostile_slow_client: totals SCENARIOS PEERS PROBES SLOWEST_MS
 * FAILURES"; exits 1 on any failure.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "raw_peer.h"

#define RDMATEST_PROG 0x20000199u
#define HANGUP_PROC   100u /* rpc_server's RPC_SERVER_HANGUP */
#define LINGER_MS     1000 /* SVC_LINGER_MS: a hung-up connection waits this long for its replies' Sends */
#define BURST_CALLS   4    /* NULL calls right behind HANGUP */
#define BURST_ROUNDS  4
#define PROMPT_MS     5000 /* a probe answered later than this means the server waited */
#define CONNECT_MS    5000
#define MAX_PEERS     4

struct ctx {
	const char *addr, *checker;
	uint16_t port;
	uint32_t next_xid;
	unsigned scenarios, peers, probes, failures;
	long long slowest_ms;
};

static void __attribute__((format(printf, 2, 3))) fail(struct ctx *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	raw_vfail("hostile_slow_client", fmt, ap);
	va_end(ap);
	t->failures++;
}

static struct raw_peer *open_peer(struct ctx *t, bool hold_recvs)
{
	struct raw_peer_config cfg;
	uint8_t pd[8];
	struct raw_connect_params cp = { .private_data = pd, .private_data_len = sizeof(pd) };
	enum raw_connect_result r;
	struct raw_peer *p;

	raw_peer_config_default(&cfg);
	cfg.hold_recvs = hold_recvs;
	raw_pd_rfc8797(pd, 1, 0, 3, 3); /* version 1, no R, 4 KiB both ways */
	p = raw_connect(t->addr, t->port, &cfg, &cp, CONNECT_MS, &r);
	if (!p)
		fail(t, "cannot connect to %s port %u: %s", t->addr, t->port, raw_connect_result_str(r));
	return p;
}

/* A fresh connection's NULL call, answered within PROMPT_MS; then the checker. */
static void probe_others(struct ctx *t, const char *what)
{
	struct raw_peer *p = open_peer(t, false);
	uint32_t xid = t->next_xid++, len = 0;
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	long long t0 = raw_now_ms(), dt;
	uint8_t m[512];
	char cmd[512];

	if (!p)
		return;
	t->probes++;
	if (!raw_peer_send_null(p, xid, RDMATEST_PROG, 32) ||
	    raw_peer_recv(p, PROMPT_MS, m, sizeof(m), &len, &st) != RAW_WAIT_COMPLETION ||
	    st != IBV_WC_SUCCESS || !raw_null_reply_ok(m, len, xid))
		fail(t, "%s: another client's NULL call got no correct reply within %d ms", what,
		     PROMPT_MS);
	dt = raw_now_ms() - t0;
	if (dt > t->slowest_ms)
		t->slowest_ms = dt;
	printf("  %-14s another client's NULL call answered in %lld ms\n", what, dt);
	raw_peer_destroy(p);
	if (!t->checker)
		return;
	snprintf(cmd, sizeof(cmd), "%s %s %u", t->checker, t->addr, t->port);
	if (system(cmd) != 0)
		fail(t, "%s: the well-behaved CLIENT check failed (%s)", what, cmd);
}

/* Post the held receives and collect @n replies from @first on. */
static void drain_stalled(struct ctx *t, const char *what, struct raw_peer *p, uint32_t first,
			  uint32_t n)
{
	bool iwarp = p->id->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
	uint32_t got = 0, len;
	enum ibv_wc_status st;
	uint8_t m[512];

	for (uint32_t i = 0; i < p->cfg.recv_count; i++)
		if (raw_peer_post_recv(p, i))
			break;
	while (got < n) {
		enum raw_wait w = raw_peer_recv(p, PROMPT_MS, m, sizeof(m), &len, &st);

		if (w != RAW_WAIT_COMPLETION || st != IBV_WC_SUCCESS)
			break;
		if (len < 4)
			break;
		uint32_t xid = (uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 | (uint32_t)m[2] << 8 | m[3];

		if (xid - first >= n || !raw_null_reply_ok(m, len, xid)) {
			fail(t, "%s: a wrong reply (xid %#x) once receives were posted", what, xid);
			return;
		}
		got++;
	}
	printf("  %-14s the stalled peer got %u of %u replies once it posted receives%s\n", what, got,
	       n, got < n && iwarp ? " (iWARP: its connection was closed)" : "");
	if (got < n && !iwarp)
		fail(t, "%s: the stalled peer got %u of %u replies", what, got, n);
}

/* @npeers peers, each with @calls calls and no receive; others served meanwhile. */
static void run_stalled(struct ctx *t, const char *what, unsigned npeers, uint32_t calls,
			bool vanish)
{
	struct raw_peer *p[MAX_PEERS] = { NULL };
	uint32_t first[MAX_PEERS];

	for (unsigned i = 0; i < npeers; i++) {
		p[i] = open_peer(t, true);
		if (!p[i])
			goto out;
		t->peers++;
		first[i] = t->next_xid;
		t->next_xid += calls;
		for (uint32_t c = 0; c < calls; c++)
			if (!raw_peer_send_null(p[i], first[i] + c, RDMATEST_PROG, 32))
				fail(t, "%s: cannot post call %u", what, c);
	}
	probe_others(t, what);
	probe_others(t, what);
	for (unsigned i = 0; i < npeers && !vanish; i++)
		drain_stalled(t, what, p[i], first[i], calls);
out:
	for (unsigned i = 0; i < npeers; i++)
		raw_peer_destroy(p[i]);
	if (vanish)
		probe_others(t, what);
	t->scenarios++;
}

/*
 * Wait up to @ms for @p's connection to end; completions meanwhile are
 * counted in *@replies (successful receives: answers), others dropped.
 * Returns the ms it took, or -1.
 */
static long long await_end(struct raw_peer *p, int ms, unsigned *replies)
{
	long long t0 = raw_now_ms(), left;
	struct ibv_wc wc;

	while ((left = ms - (raw_now_ms() - t0)) > 0) {
		enum raw_wait w = raw_peer_wait(p, (int)left, &wc);

		if (w == RAW_WAIT_DISCONNECTED)
			return raw_now_ms() - t0;
		if (w != RAW_WAIT_COMPLETION)
			return -1;
		*replies += RAW_WR_KIND(wc.wr_id) == RAW_WR_RECV && wc.status == IBV_WC_SUCCESS;
	}
	return -1;
}

static void run_stalled_hangup(struct ctx *t)
{
	const char *what = "stalled-hangup";
	struct raw_peer *p = open_peer(t, true);
	unsigned replies = 0;
	long long dt, t0 = raw_now_ms();
	bool iwarp;

	if (!p)
		goto out;
	t->peers++;
	iwarp = p->id->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
	if (!raw_peer_send_void(p, t->next_xid++, RDMATEST_PROG, HANGUP_PROC, 32))
		fail(t, "%s: cannot post HANGUP", what);
	dt = await_end(p, LINGER_MS + PROMPT_MS, &replies);
	dt = dt < 0 ? -1 : raw_now_ms() - t0;
	if (dt < 0)
		fail(t, "%s: the server held the connection past %d ms", what, LINGER_MS + PROMPT_MS);
	else
		printf("  %-14s the connection ended %lld ms after HANGUP was posted\n", what, dt);
	if (dt >= 0 && !iwarp && dt < LINGER_MS - 100)
		fail(t, "%s: the server gave up its reply's Send after %lld ms, not %d", what, dt,
		     LINGER_MS);
	probe_others(t, what);
out:
	raw_peer_destroy(p);
	t->scenarios++;
}

/* One hangup-burst connection; true when it went as it should. */
static bool hangup_burst_once(struct ctx *t, const char *what)
{
	struct raw_peer *p = open_peer(t, false);
	uint32_t xid = t->next_xid, len = 0;
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	unsigned later = 0, failures = t->failures;
	uint8_t m[512];

	t->next_xid += 1 + BURST_CALLS;
	if (!p)
		return false;
	t->peers++;
	if (!raw_peer_send_void(p, xid, RDMATEST_PROG, HANGUP_PROC, 32))
		fail(t, "%s: cannot post HANGUP", what);
	for (uint32_t i = 1; i <= BURST_CALLS; i++)
		if (!raw_peer_send_null(p, xid + i, RDMATEST_PROG, 32))
			fail(t, "%s: cannot post call %u", what, i);
	if (raw_peer_recv(p, PROMPT_MS, m, sizeof(m), &len, &st) != RAW_WAIT_COMPLETION ||
	    st != IBV_WC_SUCCESS || !raw_null_reply_ok(m, len, xid))
		fail(t, "%s: no correct reply to HANGUP", what);
	if (await_end(p, LINGER_MS + PROMPT_MS, &later) < 0)
		fail(t, "%s: the connection did not end", what);
	if (later)
		fail(t, "%s: %u calls behind HANGUP were answered", what, later);
	raw_peer_destroy(p);
	return t->failures == failures;
}

/* Several connections: the server takes a burst whole only some of the time. */
static void run_hangup_burst(struct ctx *t)
{
	const char *what = "hangup-burst";
	unsigned ok = 0;

	for (unsigned r = 0; r < BURST_ROUNDS; r++)
		ok += hangup_burst_once(t, what);
	printf("  %-14s %u of %u connections: HANGUP answered, none of the %u calls behind it, "
	       "then closed\n", what, ok, BURST_ROUNDS, BURST_CALLS);
	probe_others(t, what);
	t->scenarios++;
}

int main(int argc, char **argv)
{
	struct ctx t = { .next_xid = 0x5a000000u ^ (uint32_t)getpid() << 8 };
	int i = 1;

	if (i + 1 < argc && !strcmp(argv[i], "--checker")) {
		t.checker = argv[i + 1];
		i += 2;
	}
	if (argc - i != 2) {
		fprintf(stderr, "usage: hostile_slow_client [--checker CMD] ADDR PORT\n");
		return 2;
	}
	t.addr = argv[i];
	t.port = (uint16_t)strtoul(argv[i + 1], NULL, 10);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("hostile_slow_client: %s port %u\n", t.addr, t.port);
	run_stalled(&t, "stalled", 1, 8, false);
	run_stalled(&t, "stalled-4", 4, 32, false);
	run_stalled(&t, "stalled-gone", 1, 8, true);
	run_stalled_hangup(&t);
	run_hangup_burst(&t);
	printf("hostile_slow_client: totals %u %u %u %lld %u\n", t.scenarios, t.peers, t.probes,
	       t.slowest_ms, t.failures);
	return t.failures ? 1 : 0;
}
