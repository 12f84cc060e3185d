/*
 * A stream of large rdmatest calls for the fault tests (fault_*.test):
 * the shell scripts start a server and a client with this program, then
 * break something underneath them (kill the server, delete the RDMA
 * link, add packet loss) and judge what the client reports.
 *
 *   rpc_fault_stream --server ADDR PORT
 *       serve the rdmatest program on ADDR:PORT (0.0.0.0 or :: listen on
 *       every device; PORT 0: any), retrying while an old listener's port
 *       is released; print the port, then serve until killed.
 *   rpc_fault_stream --client ADDR PORT [--threads N] [--size BYTES]
 *                    [--seconds S] [--timeout S] [--resend] [--retry-timeout S]
 *                    [--expect-fault]
 *                    [--all-ok] [--idle] [--label TEXT]
 *       N threads (default 4) call through one CLIENT for S seconds
 *       (default 10): WRITE of SIZE bytes (default 1 MiB; the server's
 *       count and checksum are checked) and READ of SIZE bytes (the data
 *       are checked), alternately.  SIGUSR1 marks "the fault happens
 *       now" (the shell sends it as it strikes).  With --idle the
 *       threads stop after S seconds, the program says "idle" and keeps
 *       the CLIENT without calls until SIGUSR2 (at most 180 s), then
 *       calls for S seconds more.
 *
 * Every call ends in one of: success with correct data, a "clear"
 * failure (RPC_CANTSEND, RPC_CANTRECV, RPC_TIMEDOUT), or a test failure
 * (wrong data reported as success, any other status).  The client
 * prints what happened as "figure:" lines and exits 1 on a test
 * failure; with --expect-fault also when no SIGUSR1 came, no call was in
 * flight across it (start < mark < end), or no call started after it
 * succeeded; with --all-ok when any call failed at all; with --idle
 * when no SIGUSR2 came.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rdmatest_support.h"

#define PROG "rpc_fault_stream"
#define MAX_THREADS 32

struct config {
	const char *addr;
	unsigned int port;
	unsigned int threads;
	uint32_t size;
	double seconds;
	int timeout_s;
	bool resend, expect_fault, all_ok, idle;
	int retry_timeout_s; /* CLSET_RETRY_TIMEOUT, implies resend; 0: none */
	const char *label;
};

struct stats {
	pthread_mutex_t lock;
	unsigned long ok, cantsend, cantrecv, timedout, other, bad_data;
	unsigned long spanning, spanning_ok, ok_after_mark;
	unsigned long spanning_ok_late;   /* in flight at the mark, succeeded over 1 s after it */
	unsigned long spanning_cantrecv;  /* in flight at the mark, failed RPC_CANTRECV */
	double max_latency, first_fail, last_fail;
	uint64_t bytes;
};

static volatile sig_atomic_t mark_set, resume_set;
static struct timespec mark_ts;

static void on_mark(int sig)
{
	(void)sig;
	if (!mark_set) {
		clock_gettime(CLOCK_MONOTONIC, &mark_ts);
		mark_set = 1;
	}
}

static void on_resume(int sig)
{
	(void)sig;
	resume_set = 1;
}

static double mark_time(void)
{
	return mark_set ? (double)mark_ts.tv_sec + (double)mark_ts.tv_nsec / 1e9 : -1;
}

/* ---- server ---------------------------------------------------------------------------- */

static int server_main(const char *addr, unsigned int port)
{
	struct sockaddr_storage ss;
	SVCXPRT *x = NULL;

	if (!rdmatest_parse_addr(addr, (uint16_t)port, &ss)) {
		fprintf(stderr, PROG ": invalid address '%s'\n", addr);
		return 2;
	}
	for (int i = 0; i < 100 && !x; i++) {
		x = svc_rdma_create((struct sockaddr *)&ss, NULL);
		if (!x)
			usleep(100000);
	}
	if (!x || !svc_rdma_reg(x, RDMATEST_PROG, RDMATEST_V1, rdmatest_dispatch, &rdmatest_ulb)) {
		fprintf(stderr, PROG ": server: %s", clnt_spcreateerror(addr));
		return 1;
	}
	printf("%u\n", (unsigned int)x->xp_port);
	fflush(stdout);
	svc_run();
	return 1;
}

/* ---- client ---------------------------------------------------------------------------- */

struct worker {
	const struct config *cfg;
	struct stats *st;
	CLIENT *cl;
	unsigned int id;
	double end;
};

/* WRITE @len bytes of stream @seed; RPC_SUCCESS with *@good false when the result is wrong. */
static enum clnt_stat call_write(CLIENT *cl, uint8_t *buf, uint32_t len, uint32_t seed,
				 struct timeval tv, bool *good)
{
	rdmatest_write_args a = { .offset = 0, .data = { len, (char *)buf } };
	rdmatest_write_res r = { 0 };
	enum clnt_stat s;

	rdmatest_fill(buf, len, seed);
	s = clnt_call(cl, RDMATEST_WRITE, (xdrproc_t)xdr_rdmatest_write_args, (char *)&a,
		      (xdrproc_t)xdr_rdmatest_write_res, (char *)&r, tv);
	*good = r.count == len && r.checksum == rdmatest_fnv1a(buf, len);
	return s;
}

/* READ @len bytes of stream @seed; the data must be that stream. */
static enum clnt_stat call_read(CLIENT *cl, uint8_t *want, uint32_t len, uint32_t seed,
				struct timeval tv, bool *good)
{
	rdmatest_read_args a = { .count = len, .seed = seed };
	rdmatest_read_res r = { 0 };
	enum clnt_stat s;

	s = clnt_call(cl, RDMATEST_READ, (xdrproc_t)xdr_rdmatest_read_args, (char *)&a,
		      (xdrproc_t)xdr_rdmatest_read_res, (char *)&r, tv);
	if (s == RPC_SUCCESS) {
		rdmatest_fill(want, len, seed);
		*good = r.count == len && r.data.rdmatest_data_len == len &&
			!memcmp(r.data.rdmatest_data_val, want, len);
	}
	clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_read_res, (char *)&r);
	return s;
}

static void record(struct stats *st, enum clnt_stat s, bool good, double t0, double t1,
		   uint32_t len, const char *what)
{
	double mark = mark_time();
	bool spans = mark >= 0 && t0 < mark && mark < t1;

	pthread_mutex_lock(&st->lock);
	if (t1 - t0 > st->max_latency)
		st->max_latency = t1 - t0;
	st->spanning += spans;
	if (s == RPC_SUCCESS && good) {
		st->ok++;
		st->bytes += len;
		st->spanning_ok += spans;
		st->spanning_ok_late += spans && t1 > mark + 1.0; /* resent: no reply came before the fault */
		st->ok_after_mark += mark >= 0 && t0 > mark;
	} else {
		if (s == RPC_SUCCESS)
			st->bad_data++;
		else if (s == RPC_CANTSEND)
			st->cantsend++;
		else if (s == RPC_CANTRECV)
			st->cantrecv++, st->spanning_cantrecv += spans;
		else if (s == RPC_TIMEDOUT)
			st->timedout++;
		else
			st->other++;
		if (s == RPC_SUCCESS || (s != RPC_CANTSEND && s != RPC_CANTRECV &&
					 s != RPC_TIMEDOUT))
			printf(PROG ": FAIL: %s: %s\n", what,
			       s == RPC_SUCCESS ? "wrong data reported as success" : clnt_sperrno(s));
		else if (st->first_fail == 0 || t1 - st->last_fail > 1)
			printf(PROG ": %s failed after %.2f s: %s\n", what, t1 - t0, clnt_sperrno(s));
		if (st->first_fail == 0)
			st->first_fail = t1;
		st->last_fail = t1;
	}
	pthread_mutex_unlock(&st->lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint32_t len = w->cfg->size;
	uint8_t *buf = malloc(len);
	struct timeval tv = { w->cfg->timeout_s, 0 };

	if (!buf)
		return NULL;
	for (uint32_t n = 0; rdmatest_now() < w->end; n++) {
		uint32_t seed = w->id * 1000003u + n;
		bool write = n % 2 == 0, good = false;
		double t0 = rdmatest_now();
		enum clnt_stat s = write ? call_write(w->cl, buf, len, seed, tv, &good)
					 : call_read(w->cl, buf, len, seed, tv, &good);

		record(w->st, s, good, t0, rdmatest_now(), len, write ? "WRITE" : "READ");
		if (s != RPC_SUCCESS)
			usleep(200000); /* a failed call returns at once: do not spin */
	}
	free(buf);
	return NULL;
}

static CLIENT *client_create(const struct config *cfg)
{
	struct timeval retry = { cfg->retry_timeout_s, 0 };
	struct rpcrdma_options o;
	struct sockaddr_storage ss;
	CLIENT *cl;

	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	o.reconnect_resend = cfg->resend;
	o.call_timeout = (struct timeval){ cfg->timeout_s, 0 };
	if (!rdmatest_parse_addr(cfg->addr, (uint16_t)cfg->port, &ss)) {
		fprintf(stderr, PROG ": invalid address '%s'\n", cfg->addr);
		return NULL;
	}
	cl = clnt_rdma_tli_create((struct sockaddr *)&ss, RDMATEST_PROG, RDMATEST_V1, &o);
	if (!cl) {
		printf(PROG ": FAIL: %s", clnt_spcreateerror(cfg->addr));
		return NULL;
	}
	if (cfg->retry_timeout_s && !clnt_control(cl, CLSET_RETRY_TIMEOUT, (char *)&retry)) {
		printf(PROG ": FAIL: CLSET_RETRY_TIMEOUT %d s refused\n", cfg->retry_timeout_s);
		clnt_destroy(cl);
		return NULL;
	}
	return cl;
}

static bool report(const struct config *cfg, const struct stats *st, unsigned int connects,
		   double elapsed)
{
	unsigned long failed = st->cantsend + st->cantrecv + st->timedout + st->other;
	const char *l = cfg->label;
	bool pass = st->ok > 0 && st->bad_data == 0 && st->other == 0;

	printf("figure: %s: calls ok %lu, failed %lu (cantsend %lu, cantrecv %lu, timedout %lu, "
	       "other %lu), wrong data %lu\n", l, st->ok, failed, st->cantsend, st->cantrecv,
	       st->timedout, st->other, st->bad_data);
	printf("figure: %s: %.1f MB/s over %.1f s (%u x %u-byte calls in flight), longest call "
	       "%.2f s, connects %u\n", l, elapsed > 0 ? (double)st->bytes / elapsed / 1e6 : 0.0,
	       elapsed, cfg->threads, cfg->size, st->max_latency, connects);
	if (mark_set)
		printf("figure: %s: calls in flight at the fault %lu (%lu of them succeeded, %lu of "
		       "those over 1 s after it; %lu failed RPC_CANTRECV), successful calls started "
		       "after it %lu\n", l, st->spanning, st->spanning_ok, st->spanning_ok_late,
		       st->spanning_cantrecv, st->ok_after_mark);
	if (st->ok == 0)
		printf(PROG ": FAIL: no call succeeded\n");
	if (cfg->all_ok && failed) {
		printf(PROG ": FAIL: %lu calls failed, none may\n", failed);
		pass = false;
	}
	if (cfg->expect_fault) {
		const char *why = !mark_set ? "no fault was marked (SIGUSR1)"
				  : !st->spanning ? "no call was in flight when the fault struck"
				  : !st->ok_after_mark ? "no call succeeded after the fault" : NULL;

		if (why) {
			printf(PROG ": FAIL: %s\n", why);
			pass = false;
		}
	}
	return pass;
}

/* @cfg->threads threads calling through @cl for @cfg->seconds; false if one could not start. */
static bool client_run(const struct config *cfg, struct stats *st, CLIENT *cl)
{
	struct worker w[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	double end = rdmatest_now() + cfg->seconds;
	unsigned int started = 0;

	for (; started < cfg->threads; started++) {
		w[started] = (struct worker){ cfg, st, cl, started, end };
		if (pthread_create(&th[started], NULL, worker_main, &w[started]))
			break;
	}
	for (unsigned int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	return started == cfg->threads;
}

/* --idle: keep the CLIENT without calls until SIGUSR2; false if none came within 180 s. */
static bool client_idle(const struct config *cfg, double *idle_s)
{
	double t0 = rdmatest_now();

	printf(PROG ": %s: idle until SIGUSR2\n", cfg->label);
	for (int i = 0; i < 3600 && !resume_set; i++)
		usleep(50000);
	*idle_s = rdmatest_now() - t0;
	if (!resume_set)
		printf(PROG ": FAIL: no SIGUSR2 came within 180 s\n");
	return resume_set;
}

static int client_main(const struct config *cfg)
{
	struct stats st = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;
	double t0, idle_s = 0;
	CLIENT *cl = client_create(cfg);
	bool pass;

	if (!cl)
		return 1;
	t0 = rdmatest_now();
	printf(PROG ": %s: %u threads, %u-byte WRITE/READ for %.0f s, call timeout %d s, resend %s, "
	       "retry timeout %d s\n", cfg->label, cfg->threads, cfg->size, cfg->seconds,
	       cfg->timeout_s, cfg->resend ? "on" : "off", cfg->retry_timeout_s);
	fflush(stdout);
	pass = client_run(cfg, &st, cl);
	if (pass && cfg->idle)
		pass = client_idle(cfg, &idle_s) && client_run(cfg, &st, cl);
	clnt_rdma_getinfo(cl, &ci);
	pass = report(cfg, &st, ci.connects, rdmatest_now() - t0 - idle_s) && pass;
	clnt_destroy(cl);
	printf(PROG ": %s: %s\n", cfg->label, pass ? "PASS" : "FAIL");
	return pass ? 0 : 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: " PROG " --server ADDR PORT\n"
			"       " PROG " --client ADDR PORT [--threads N] [--size BYTES] "
			"[--seconds S] [--timeout S] [--resend] [--retry-timeout S] [--expect-fault] [--all-ok] "
			"[--idle] [--label TEXT]\n");
	return 2;
}

static bool parse_client(int argc, char **argv, struct config *cfg)
{
	for (int i = 4; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--resend"))
			cfg->resend = true;
		else if (!strcmp(o, "--expect-fault"))
			cfg->expect_fault = true;
		else if (!strcmp(o, "--all-ok"))
			cfg->all_ok = true;
		else if (!strcmp(o, "--idle"))
			cfg->idle = true;
		else if (!v)
			return false;
		else if (!strcmp(o, "--threads"))
			cfg->threads = (unsigned int)strtoul(v, NULL, 10), i++;
		else if (!strcmp(o, "--size"))
			cfg->size = (uint32_t)strtoul(v, NULL, 10), i++;
		else if (!strcmp(o, "--seconds"))
			cfg->seconds = strtod(v, NULL), i++;
		else if (!strcmp(o, "--timeout"))
			cfg->timeout_s = atoi(v), i++;
		else if (!strcmp(o, "--retry-timeout"))
			cfg->retry_timeout_s = atoi(v), cfg->resend = true, i++;
		else if (!strcmp(o, "--label"))
			cfg->label = v, i++;
		else
			return false;
	}
	return cfg->threads >= 1 && cfg->threads <= MAX_THREADS && cfg->size >= 1 &&
	       cfg->size <= RDMATEST_MAX_DATA && cfg->seconds > 0 && cfg->timeout_s > 0 && cfg->retry_timeout_s >= 0;
}

int main(int argc, char **argv)
{
	struct config cfg = { .threads = 4, .size = 1u << 20, .seconds = 10, .timeout_s = 30,
			      .label = "stream" };

	if (argc < 4)
		return usage();
	rdmatest_raise_memlock();
	signal(SIGPIPE, SIG_IGN);
	cfg.addr = argv[2];
	cfg.port = (unsigned int)strtoul(argv[3], NULL, 10);
	if (!strcmp(argv[1], "--server") && argc == 4)
		return server_main(cfg.addr, cfg.port);
	if (strcmp(argv[1], "--client") || !parse_client(argc, argv, &cfg))
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGUSR1, on_mark);
	signal(SIGUSR2, on_resume);
	return client_main(&cfg);
}
