/*
 * hostile_half_open: a client that starts connections and never
 * completes them, against our server.  It calls rdma_connect() and never
 * reads another rdma_cm event (raw_connect_start()): on InfiniBand/RoCE
 * librdmacm then never moves its QP to RTS nor sends the RTU, so the
 * server's accepted connection never becomes ESTABLISHED.  A server
 * that waited for ESTABLISHED in its accept would serve nothing else
 * meanwhile, for its connect timeout per request.  On iWARP the kernel
 * completes the MPA exchange without the application, so the
 * connections are established and only the checks that hold for
 * established connections apply (each scenario says what it checks
 * there).
 *
 * Scenarios, each against one running server:
 *   early-call  (IB/RoCE) a peer moves its QP to RTS without sending the
 *               RTU and makes a NULL call: the server must answer it,
 *               though its connection is not ESTABLISHED;
 *   gone        4 half-open connections held 3 s (less than the connect
 *               timeout: the server must hold all 4), then dropped: the
 *               server must hold none of them within GONE_MS;
 *   expire      4 held past the server's connect timeout (--timeout-ms):
 *               on IB/RoCE the server must have destroyed them while
 *               they are still held, on iWARP it must still hold them;
 *   flood       SVC_HALF_OPEN_MAX + 4 opened at once: on IB/RoCE the
 *               server holds at most SVC_HALF_OPEN_MAX of them and the
 *               first 4 opened are gone (the oldest gave way); on iWARP
 *               (all established) only that a probe is served and that
 *               all are let go once dropped;
 *   idle        (--idle, alone: run once nothing else talks to the server)
 *               4 held past the connect timeout with no other traffic
 *               at all: on IB/RoCE the server must have destroyed them
 *               by then though no event of another connection or of the
 *               listener woke it, on iWARP it must still hold them.
 * Throughout, a fresh raw connection's NULL call (connect included) must
 * be answered within PROMPT_MS, once a second while connections are
 * held.  Which connections the server holds is read from the kernel
 * (`rdma resource show cm_id`: its cm ids from the server's port to the
 * peer's).  The slowest probe is printed.
 *
 * usage: hostile_half_open [--timeout-ms MS] [--idle] ADDR PORT
 * Prints "hostile_half_open: totals SCENARIOS PROBES SLOWEST_MS
 * FAILURES"; exits 1 on any failure.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "raw_peer.h"
#include "rpcrdma/svc_listen_limits.h"

#define RDMATEST_PROG     0x20000199u
#define PROMPT_MS         2000  /* a probe answered later than this means the server waited */
#define CONNECT_MS        5000
#define GONE_MS           5000  /* the server lets go of dropped connections within this */
#define HOLD_MS           3000  /* "gone": how long the connections are held */
#define EXPIRE_SLACK_MS   4000  /* "expire", "idle": held this long past the server's connect timeout */
#define HALF_OPEN_K       4
#define MAX_PEERS         (SVC_HALF_OPEN_MAX + HALF_OPEN_K)

struct ctx {
	const char *addr;
	uint16_t port;
	int timeout_ms;          /* the server's connect_timeout_ms */
	bool iwarp;
	uint32_t next_xid;
	unsigned scenarios, probes, failures;
	long long slowest_ms;
};

static void __attribute__((format(printf, 2, 3))) fail(struct ctx *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	raw_vfail("hostile_half_open", fmt, ap);
	va_end(ap);
	t->failures++;
}

/* Small buffers: many of these are held at once. */
static void small_config(struct raw_peer_config *cfg)
{
	raw_peer_config_default(cfg);
	cfg->send_count = 4;
	cfg->recv_count = 4;
	cfg->mem_bytes = 4096;
}

static void pd_default(uint8_t pd[8])
{
	raw_pd_rfc8797(pd, 1, 0, 3, 3); /* version 1, no R, 4 KiB both ways */
}

static struct raw_peer *open_half(struct ctx *t)
{
	struct raw_peer_config cfg;
	uint8_t pd[8];
	struct raw_connect_params cp = { .private_data = pd, .private_data_len = sizeof(pd) };
	enum raw_connect_result r;
	struct raw_peer *p;

	small_config(&cfg);
	pd_default(pd);
	p = raw_connect_start(t->addr, t->port, &cfg, &cp, CONNECT_MS, &r);
	if (!p)
		fail(t, "cannot start a connection to %s port %u: %s", t->addr, t->port,
		     raw_connect_result_str(r));
	return p;
}

/* A NULL call on @p answered correctly within @ms. */
static bool null_answered(struct ctx *t, struct raw_peer *p, int ms)
{
	uint32_t xid = t->next_xid++, len = 0;
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	uint8_t m[512];

	return raw_peer_send_null(p, xid, RDMATEST_PROG, 4) &&
	       raw_peer_recv(p, ms, m, sizeof(m), &len, &st) == RAW_WAIT_COMPLETION &&
	       st == IBV_WC_SUCCESS && raw_null_reply_ok(m, len, xid);
}

/* A fresh connection's NULL call, connect included, answered within PROMPT_MS. */
static void probe(struct ctx *t, const char *what)
{
	struct raw_peer_config cfg;
	uint8_t pd[8];
	struct raw_connect_params cp = { .private_data = pd, .private_data_len = sizeof(pd) };
	enum raw_connect_result r = RAW_CONNECT_OK;
	long long t0 = raw_now_ms(), dt;
	struct raw_peer *p;
	bool ok;

	small_config(&cfg);
	pd_default(pd);
	t->probes++;
	p = raw_connect(t->addr, t->port, &cfg, &cp, PROMPT_MS, &r);
	ok = p && null_answered(t, p, PROMPT_MS);
	dt = raw_now_ms() - t0;
	if (dt > t->slowest_ms)
		t->slowest_ms = dt;
	if (!ok || dt > PROMPT_MS)
		fail(t, "%s: another client's connect and NULL call: %s after %lld ms (limit %d ms)",
		     what, p ? (ok ? "answered" : "no correct reply") : raw_connect_result_str(r), dt,
		     PROMPT_MS);
	else
		printf("  %-12s another client's connect and NULL call: %lld ms\n", what, dt);
	raw_peer_destroy(p);
}

/* Probe once a second for @ms. */
static void probe_for(struct ctx *t, const char *what, long long ms)
{
	long long end = raw_now_ms() + ms;

	do {
		long long next = raw_now_ms() + 1000;

		probe(t, what);
		raw_sleep_ms((next < end ? next : end) - raw_now_ms());
	} while (raw_now_ms() < end);
}

/* The port of the "ADDRESS:PORT" after @key in @line (the last ':'), or 0. */
static unsigned long addr_port(const char *line, const char *key)
{
	const char *a = strstr(line, key), *end, *colon = NULL;

	if (!a)
		return 0;
	a += strlen(key);
	end = a + strcspn(a, " \n");
	for (const char *c = a; c < end; c++)
		if (*c == ':')
			colon = c;
	return colon ? strtoul(colon + 1, NULL, 10) : 0;
}

/*
 * How many of @ports (the peers' local ports) the server holds a
 * connection from: its cm ids whose source port is the server's and
 * destination port one of @ports, in `rdma resource show cm_id`
 * ("... src-addr A:PORT dst-addr B:PORT ...").  -1 when unreadable.
 */
static int server_holds(const struct ctx *t, const uint16_t *ports, int n)
{
	FILE *f = popen("rdma resource show cm_id 2>/dev/null", "r");
	char line[1024];
	int held = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long src = addr_port(line, " src-addr "), dst = addr_port(line, " dst-addr ");

		if (src != t->port)
			continue;
		for (int i = 0; i < n; i++)
			if (dst == ports[i]) {
				held++;
				break;
			}
	}
	return pclose(f) == 0 ? held : -1;
}

/* Wait up to @ms until the server holds at most @most of @ports; the count. */
static int wait_holds_at_most(const struct ctx *t, const uint16_t *ports, int n, int most, int ms)
{
	long long end = raw_now_ms() + ms;
	int held;

	while ((held = server_holds(t, ports, n)) > most && raw_now_ms() < end)
		raw_sleep_ms(200);
	return held;
}

static int open_many(struct ctx *t, struct raw_peer **p, uint16_t *ports, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		p[i] = open_half(t);
		if (!p[i])
			break;
		ports[i] = raw_peer_local_port(p[i]);
	}
	return i;
}

static void drop_all(struct raw_peer **p, int n)
{
	for (int i = 0; i < n; i++) {
		raw_peer_destroy(p[i]);
		p[i] = NULL;
	}
}

/* Drop the peers; the server must let go of every one within GONE_MS. */
static void drop_and_check(struct ctx *t, const char *what, struct raw_peer **p,
			   const uint16_t *ports, int n)
{
	long long t0 = raw_now_ms();
	int held;

	drop_all(p, n);
	held = wait_holds_at_most(t, ports, n, 0, GONE_MS);
	if (held != 0)
		fail(t, "%s: %d of %d dropped connections still held by the server after %d ms", what,
		     held, n, GONE_MS);
	else
		printf("  %-12s the server let go of all %d within %lld ms of their drop\n", what, n,
		       raw_now_ms() - t0);
	probe(t, what);
}

static void scenario_early_call(struct ctx *t)
{
	struct raw_peer *p;

	t->scenarios++;
	if (t->iwarp) {
		printf("  early-call   not run on iWARP: the kernel completes the handshake, a call "
		       "cannot precede it\n");
		return;
	}
	p = open_half(t);
	if (!p)
		return;
	if (raw_peer_rts_without_rtu(p, CONNECT_MS))
		fail(t, "early-call: no REP from the server within %d ms, or the QP would not go to RTS",
		     CONNECT_MS);
	else if (!null_answered(t, p, PROMPT_MS))
		fail(t, "early-call: a NULL call before the RTU got no correct reply within %d ms",
		     PROMPT_MS);
	else
		printf("  early-call   a NULL call made before the RTU was answered\n");
	raw_peer_destroy(p);
	probe(t, "early-call");
}

static void scenario_gone(struct ctx *t)
{
	struct raw_peer *p[MAX_PEERS] = { NULL };
	uint16_t ports[MAX_PEERS];
	int n = open_many(t, p, ports, HALF_OPEN_K);

	int held;

	t->scenarios++;
	probe_for(t, "gone", HOLD_MS);
	held = server_holds(t, ports, n);
	/* Held for less than the connect timeout: all of them (so the count of the drop reads something). */
	if (n != HALF_OPEN_K || held != n)
		fail(t, "gone: the server holds %d of the %d connections opened (of %d) before the drop",
		     held, n, HALF_OPEN_K);
	else
		printf("  %-12s the server holds all %d connections left unfinished\n", "gone", n);
	drop_and_check(t, "gone", p, ports, n);
}

/* "expire" (probing meanwhile) and "idle" (silent meanwhile). */
static void scenario_expire(struct ctx *t, const char *what, bool idle)
{
	struct raw_peer *p[MAX_PEERS] = { NULL };
	uint16_t ports[MAX_PEERS];
	int n = open_many(t, p, ports, HALF_OPEN_K), held;

	t->scenarios++;
	if (idle)
		raw_sleep_ms(t->timeout_ms + EXPIRE_SLACK_MS);
	else
		probe_for(t, what, t->timeout_ms + EXPIRE_SLACK_MS);
	held = server_holds(t, ports, n);
	if (t->iwarp && held != n)
		fail(t, "%s: iWARP: the server holds %d of %d established connections", what, held, n);
	else if (!t->iwarp && held != 0)
		fail(t, "%s: the server still holds %d of %d half-open connections %d ms past its "
		     "connect timeout", what, held, n, EXPIRE_SLACK_MS);
	else
		printf("  %-12s %d ms past the connect timeout the server holds %d of %d%s\n", what,
		       EXPIRE_SLACK_MS, held, n,
		       t->iwarp ? " (iWARP: established by the kernel, not half-open)" : "");
	drop_and_check(t, what, p, ports, n);
}

static void scenario_flood(struct ctx *t)
{
	struct raw_peer *p[MAX_PEERS] = { NULL };
	uint16_t ports[MAX_PEERS];
	int n = open_many(t, p, ports, MAX_PEERS), held, first;

	t->scenarios++;
	if (t->iwarp) {
		held = server_holds(t, ports, n);
		printf("  %-12s the server holds %d of %d (iWARP: established by the kernel, no limit "
		       "applies)\n", "flood", held, n);
	} else if (n == MAX_PEERS) {
		/* Fewer when another client's connect displaced one meanwhile. */
		held = wait_holds_at_most(t, ports, n, SVC_HALF_OPEN_MAX, GONE_MS);
		first = server_holds(t, ports, HALF_OPEN_K);
		if (held < 0 || held > SVC_HALF_OPEN_MAX || first != 0)
			fail(t, "flood: the server holds %d of %d half-open connections (limit %d), %d of "
			     "the %d oldest", held, n, SVC_HALF_OPEN_MAX, first, HALF_OPEN_K);
		else
			printf("  %-12s the server holds %d of %d half-open connections, none of the %d "
			       "oldest\n", "flood", held, n, HALF_OPEN_K);
	}
	probe(t, "flood");
	drop_and_check(t, "flood", p, ports, n);
}

int main(int argc, char **argv)
{
	struct ctx t = { .next_xid = 0x4b000000u ^ (uint32_t)getpid() << 8, .timeout_ms = 10000 };
	struct raw_peer *p;
	bool idle = false;
	int i = 1;

	if (i + 1 < argc && !strcmp(argv[i], "--timeout-ms")) {
		t.timeout_ms = atoi(argv[i + 1]);
		i += 2;
	}
	if (i < argc && !strcmp(argv[i], "--idle")) {
		idle = true;
		i++;
	}
	if (argc - i != 2 || t.timeout_ms <= 0) {
		fprintf(stderr, "usage: hostile_half_open [--timeout-ms MS] [--idle] ADDR PORT\n");
		return 2;
	}
	t.addr = argv[i];
	t.port = (uint16_t)strtoul(argv[i + 1], NULL, 10);
	setvbuf(stdout, NULL, _IOLBF, 0);
	p = raw_connect(t.addr, t.port, NULL, NULL, CONNECT_MS, NULL);
	if (!p) {
		fprintf(stderr, "hostile_half_open: cannot connect to %s port %u\n", t.addr, t.port);
		return 1;
	}
	t.iwarp = p->id->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
	raw_peer_destroy(p);
	if (server_holds(&t, NULL, 0) < 0) {
		fprintf(stderr, "hostile_half_open: cannot read 'rdma resource show cm_id'\n");
		return 1;
	}
	printf("hostile_half_open: %s port %u (%s), server connect timeout %d ms\n", t.addr, t.port,
	       t.iwarp ? "iWARP" : "IB/RoCE", t.timeout_ms);
	if (idle) {
		scenario_expire(&t, "idle", true);
	} else {
		scenario_early_call(&t);
		scenario_gone(&t);
		scenario_expire(&t, "expire", false);
		scenario_flood(&t);
	}
	printf("hostile_half_open: totals %u %u %lld %u\n", t.scenarios, t.probes, t.slowest_ms,
	       t.failures);
	return t.failures ? 1 : 0;
}
