/*
 * rpc_threads: many threads sharing ONE RPC-over-RDMA CLIENT.  A server
 * thread serves the rdmatest program; THREADS client threads make CALLS
 * calls in total through a single CLIENT (call i belongs to thread
 * i % THREADS): NULL, ECHO of a payload unique to the call (0 to 65536
 * bytes: inline and long messages), WRITE and READ of sizes on both
 * sides of the inline threshold (read and write chunks).  Every reply is
 * checked against what that thread sent: ECHO byte for byte, WRITE by
 * the byte count and FNV-1a checksum the server computed, READ byte for
 * byte against the stream of the call's own seed.  A reply delivered to
 * the wrong caller therefore shows as a mismatch.
 *
 *   rpc_threads PROVIDER ADDR [CALLS [THREADS]]   (defaults 10000, 32)
 *
 * Prints the calls per form, lost (failed) and mismatched replies and
 * the elapsed time; exits 0 only when every call got its own reply.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdmatest_support.h"

#define PROG "rpc_threads"
#define MAX_THREADS 256
#define ECHO_MAX 65536u
#define MAX_REPORTS 20 /* lines printed per thread for failed calls */

enum form { F_NULL, F_ECHO, F_WRITE, F_READ, NFORMS };
static const char *const form_name[NFORMS] = { "NULL", "ECHO", "WRITE", "READ" };

/* WRITE and READ sizes: inline, around the 4096-byte inline threshold, and chunked. */
static const uint32_t io_sizes[] = { 0, 1, 100, 1023, 1024, 1025, 3000, 4095, 4096, 4097,
				     8192, 12289, 65536 };
#define NIO_SIZES (sizeof(io_sizes) / sizeof(io_sizes[0]))

/* Long enough for 31 calls ahead in a serialized CLIENT; a lost reply shows as RPC_TIMEDOUT. */
static const struct timeval call_tv = { .tv_sec = 60 };

struct worker {
	pthread_t tid;
	CLIENT *cl;
	unsigned int index, nthreads, calls;
	uint8_t *buf;
	unsigned int done[NFORMS], lost, mismatched, reported;
	double seconds[NFORMS]; /* time spent in each form's calls */
};

static enum form form_of(uint32_t i)
{
	return (enum form)(rdmatest_mix(i) % NFORMS);
}

/*
 * ECHO sizes spread over 0..65536; 15 in 16 at most 4 KiB (inline or just
 * above it) to keep the run short in the TCG test bed.
 */
static uint32_t echo_size(uint32_t i)
{
	uint32_t h = rdmatest_mix(i ^ 0x9e3779b9u);

	return h % 16 ? h % 4353 : h % (ECHO_MAX + 1);
}

static uint32_t io_size(uint32_t i)
{
	return io_sizes[rdmatest_mix(i ^ 0x85ebca6bu) % NIO_SIZES];
}

static void __attribute__((format(printf, 2, 3))) report(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	if (w->reported++ >= MAX_REPORTS)
		return;
	fprintf(stderr, "%s: thread %u: ", PROG, w->index);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Account one call: false for a lost reply (RPC failure), else @same decides. */
static void account(struct worker *w, uint32_t i, enum form f, uint32_t size, enum clnt_stat st,
		    bool same)
{
	if (st != RPC_SUCCESS) {
		struct rpc_err e;

		/* The CLIENT keeps the last call's error: with many threads it may be another's. */
		clnt_geterr(w->cl, &e);
		w->lost++;
		if (e.re_status == RPC_CANTSEND || e.re_status == RPC_CANTRECV ||
		    e.re_status == RPC_SYSTEMERROR)
			report(w, "call %u %s %u bytes: %s (the CLIENT's last error: %s, %s)", i,
			       form_name[f], size, clnt_sperrno(st), clnt_sperrno(e.re_status),
			       strerror(e.re_errno));
		else
			report(w, "call %u %s %u bytes: %s", i, form_name[f], size,
			       clnt_sperrno(st));
	} else if (!same) {
		w->mismatched++;
		report(w, "call %u %s %u bytes: reply differs from what was sent", i, form_name[f],
		       size);
	} else {
		w->done[f]++;
	}
}

/* The payload of call @i: its number, then the stream of seed @i. */
static void make_payload(uint8_t *buf, uint32_t size, uint32_t i)
{
	rdmatest_fill(buf, size, i);
	if (size >= 4)
		memcpy(buf, &i, 4);
}

static void call_echo(struct worker *w, uint32_t i)
{
	uint32_t size = echo_size(i);
	rdmatest_data in = { size, (char *)w->buf }, out = { 0, NULL };
	enum clnt_stat st;

	make_payload(w->buf, size, i);
	st = clnt_call(w->cl, RDMATEST_ECHO, (xdrproc_t)xdr_rdmatest_data, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_data, (char *)&out, call_tv);
	account(w, i, F_ECHO, size, st,
		out.rdmatest_data_len == size &&
			(!size || !memcmp(out.rdmatest_data_val, w->buf, size)));
	if (st == RPC_SUCCESS)
		clnt_freeres(w->cl, (xdrproc_t)xdr_rdmatest_data, (char *)&out);
}

static void call_write(struct worker *w, uint32_t i)
{
	uint32_t size = io_size(i);
	rdmatest_write_args in = { i, { size, (char *)w->buf } };
	rdmatest_write_res out = { 0, 0 };
	enum clnt_stat st;

	make_payload(w->buf, size, i);
	st = clnt_call(w->cl, RDMATEST_WRITE, (xdrproc_t)xdr_rdmatest_write_args, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_write_res, (char *)&out, call_tv);
	account(w, i, F_WRITE, size, st,
		out.count == size && out.checksum == rdmatest_fnv1a(w->buf, size));
}

static void call_read(struct worker *w, uint32_t i)
{
	uint32_t size = io_size(i);
	rdmatest_read_args in = { size, i };
	rdmatest_read_res out;
	enum clnt_stat st;
	bool same;

	memset(&out, 0, sizeof(out));
	st = clnt_call(w->cl, RDMATEST_READ, (xdrproc_t)xdr_rdmatest_read_args, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_read_res, (char *)&out, call_tv);
	rdmatest_fill(w->buf, size, i);
	same = out.count == size && out.data.rdmatest_data_len == size &&
	       (!size || !memcmp(out.data.rdmatest_data_val, w->buf, size));
	account(w, i, F_READ, size, st, same);
	if (st == RPC_SUCCESS)
		clnt_freeres(w->cl, (xdrproc_t)xdr_rdmatest_read_res, (char *)&out);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (uint32_t i = w->index; i < w->calls; i += w->nthreads) {
		double t0 = rdmatest_now();

		switch (form_of(i)) {
		case F_NULL:
			account(w, i, F_NULL, 0, rdmatest_call_null(w->cl, call_tv), true);
			break;
		case F_ECHO:
			call_echo(w, i);
			break;
		case F_WRITE:
			call_write(w, i);
			break;
		default:
			call_read(w, i);
			break;
		}
		w->seconds[form_of(i)] += rdmatest_now() - t0;
	}
	return NULL;
}

/* ---- main ---------------------------------------------------------------------------------- */

static CLIENT *connect_to(const char *addr, uint16_t port)
{
	struct sockaddr_storage ss;
	struct rpcrdma_options o;
	CLIENT *cl;

	rdmatest_parse_addr(addr, port, &ss);
	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	cl = clnt_rdma_tli_create((struct sockaddr *)&ss, RDMATEST_PROG, RDMATEST_V1, &o);
	if (!cl)
		fprintf(stderr, "%s: %s", PROG, clnt_spcreateerror(addr));
	return cl;
}

static bool start_workers(struct worker *w, unsigned int n, CLIENT *cl, unsigned int calls)
{
	for (unsigned int t = 0; t < n; t++) {
		w[t] = (struct worker){ .cl = cl, .index = t, .nthreads = n, .calls = calls };
		w[t].buf = malloc(ECHO_MAX);
		if (!w[t].buf || pthread_create(&w[t].tid, NULL, worker_main, &w[t])) {
			fprintf(stderr, "%s: cannot start thread %u\n", PROG, t);
			return false;
		}
	}
	return true;
}

static void join_workers(struct worker *w, unsigned int n)
{
	for (unsigned int t = 0; t < n; t++)
		pthread_join(w[t].tid, NULL);
}

/* Print the totals; returns true when every call got its own reply. */
static bool collect(struct worker *w, unsigned int n, unsigned int calls, const char *label,
		    double elapsed)
{
	unsigned int done[NFORMS] = { 0 }, lost = 0, mismatched = 0, ok = 0;
	double seconds[NFORMS] = { 0 };

	for (unsigned int t = 0; t < n; t++) {
		for (int f = 0; f < NFORMS; f++) {
			done[f] += w[t].done[f];
			seconds[f] += w[t].seconds[f];
		}
		lost += w[t].lost;
		mismatched += w[t].mismatched;
		free(w[t].buf);
	}
	for (int f = 0; f < NFORMS; f++) {
		ok += done[f];
		printf("%s: %s: %-5s %5u correct replies, %.2f ms per call (waiting included)\n",
		       PROG, label, form_name[f], done[f],
		       done[f] ? 1e3 * seconds[f] / done[f] : 0.0);
	}
	printf("%s: %s: %u threads, %u calls on one CLIENT: %u correct, %u lost, %u mismatched "
	       "in %.1f s (%.0f calls/s)\n", PROG, label, n, calls, ok, lost, mismatched, elapsed,
	       elapsed > 0 ? calls / elapsed : 0.0);
	return ok == calls && !lost && !mismatched;
}

int main(int argc, char **argv)
{
	unsigned int calls = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 10000;
	unsigned int nthreads = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 10) : 32;
	static struct worker w[MAX_THREADS];
	char label[96];
	SVCXPRT *x;
	CLIENT *cl;
	double t0;
	bool ok;

	if (argc < 3 || argc > 5 || !calls || !nthreads || nthreads > MAX_THREADS) {
		fprintf(stderr, "usage: %s PROVIDER ADDR [CALLS [THREADS (1-%d)]]\n", PROG,
			MAX_THREADS);
		return 2;
	}
	snprintf(label, sizeof(label), "%s %s", argv[1], strchr(argv[2], ':') ? "IPv6" : "IPv4");
	rdmatest_raise_memlock();
	x = rdmatest_listen(PROG, argv[2], NULL, NULL);
	if (!x || !rdmatest_start_server(PROG) || !(cl = connect_to(argv[2], x->xp_port)))
		return 1;
	t0 = rdmatest_now();
	if (!start_workers(w, nthreads, cl, calls))
		_exit(1);
	join_workers(w, nthreads);
	ok = collect(w, nthreads, calls, label, rdmatest_now() - t0);
	clnt_destroy(cl);
	printf("%s: %s: %s\n", PROG, label, ok ? "PASS" : "FAIL");
	fflush(stdout);
	_exit(ok ? 0 : 1); /* the server thread stays in svc_run() */
}
