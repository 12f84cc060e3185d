/*
 * rpc_basic: the RPC-over-RDMA CLIENT and SVCXPRT end to end on one
 * soft-RDMA device.  A server thread runs libtirpc's svc_run() over two
 * listeners (IPv4 and IPv6) registered with rpcbind; the main thread
 * finds each with clnt_rdma_create() and calls every procedure of the
 * rdmatest program (tests/prog/rdmatest.x) with payloads from 0 bytes to
 * 16 MiB, so every message form travels: inline, read chunks,
 * position-zero read chunk, write chunks and reply chunk.  Every reply
 * is compared byte for byte.
 *
 *   rpc_basic PROVIDER ADDR...     (run by rpc_basic.test)
 *
 * Prints one line per failed call and a summary per address; exits 0
 * only when every call passed.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "rdmatest.h"
#include "rpcrdma/rpcrdma.h"

static const uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, 4095, 4096, 4097, 65536,
				  (1u << 20) + 1, 16u << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* ---- the test program's data ------------------------------------------------------ */

static uint32_t fnv1a(const uint8_t *p, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static uint8_t gen_byte(uint32_t seed, uint32_t i)
{
	return (uint8_t)(seed * 31u + i * 7u + (i >> 8));
}

static uint32_t gen_word(uint32_t seed, uint32_t i)
{
	return seed ^ (i * 2654435761u);
}

static uint32_t words_for(uint32_t bytes)
{
	return (bytes + 3) / 4;
}

/* ---- upper-layer binding ---------------------------------------------------------------- */

static uint32_t read_res_max(const void *args, unsigned int item)
{
	(void)item;
	return ((const rdmatest_read_args *)args)->count;
}

static uint32_t read_reply_max(const void *args)
{
	(void)args;
	return 8; /* count and the data's length word */
}

static uint32_t echo_reply_max(const void *args)
{
	return 4 + ((((const rdmatest_data *)args)->rdmatest_data_len + 3) & ~3u);
}

static uint32_t small_reply_max(const void *args)
{
	(void)args;
	return 8;
}

static uint32_t long_res_reply_max(const void *args)
{
	return 8 + 4 * ((const rdmatest_read_args *)args)->count;
}

/* NULL has no reply_max: the transport assumes max_rpc_size (reply chunk offered). */
static const struct rpcrdma_ulb_proc rdmatest_procs[] = {
	{ .proc = RDMATEST_NULL },
	{ .proc = RDMATEST_ECHO, .reply_max = echo_reply_max },
	{ .proc = RDMATEST_WRITE, .arg_ddp = 1, .reply_max = small_reply_max },
	{ .proc = RDMATEST_READ, .res_ddp = 1, .res_max = read_res_max,
	  .reply_max = read_reply_max },
	{ .proc = RDMATEST_LONG_ARG, .reply_max = small_reply_max },
	{ .proc = RDMATEST_LONG_RES, .reply_max = long_res_reply_max },
};

static const struct rpcrdma_ulb rdmatest_ulb = {
	.prog = RDMATEST_PROG, .vers = RDMATEST_V1, .procs = rdmatest_procs,
	.nprocs = sizeof(rdmatest_procs) / sizeof(rdmatest_procs[0]),
};

/* ---- server ---------------------------------------------------------------------------------- */

union rdmatest_arg {
	rdmatest_data echo;
	rdmatest_write_args write;
	rdmatest_read_args read;
	rdmatest_words words;
};

union rdmatest_res {
	rdmatest_data echo;
	rdmatest_write_res write;
	rdmatest_read_res read;
	u_int count;
	rdmatest_words words;
};

static bool rdmatest_xdr_of(rpcproc_t proc, xdrproc_t *xa, xdrproc_t *xr)
{
	switch (proc) {
	case RDMATEST_ECHO:
		*xa = (xdrproc_t)xdr_rdmatest_data;
		*xr = (xdrproc_t)xdr_rdmatest_data;
		return true;
	case RDMATEST_WRITE:
		*xa = (xdrproc_t)xdr_rdmatest_write_args;
		*xr = (xdrproc_t)xdr_rdmatest_write_res;
		return true;
	case RDMATEST_READ:
		*xa = (xdrproc_t)xdr_rdmatest_read_args;
		*xr = (xdrproc_t)xdr_rdmatest_read_res;
		return true;
	case RDMATEST_LONG_ARG:
		*xa = (xdrproc_t)xdr_rdmatest_words;
		*xr = (xdrproc_t)xdr_u_int;
		return true;
	case RDMATEST_LONG_RES:
		*xa = (xdrproc_t)xdr_rdmatest_read_args;
		*xr = (xdrproc_t)xdr_rdmatest_words;
		return true;
	default:
		return false;
	}
}

/* Fill @res for @proc; returns memory to free after the reply, or NULL. */
static void *rdmatest_serve(rpcproc_t proc, union rdmatest_arg *arg, union rdmatest_res *res)
{
	uint32_t n;

	switch (proc) {
	case RDMATEST_ECHO:
		res->echo = arg->echo;
		return NULL;
	case RDMATEST_WRITE:
		res->write.count = arg->write.data.rdmatest_data_len;
		res->write.checksum = fnv1a((const uint8_t *)arg->write.data.rdmatest_data_val,
					    arg->write.data.rdmatest_data_len);
		return NULL;
	case RDMATEST_READ:
		n = arg->read.count <= RDMATEST_MAX_DATA ? arg->read.count : 0;
		res->read.count = n;
		res->read.data.rdmatest_data_len = n;
		res->read.data.rdmatest_data_val = malloc(n ? n : 1);
		for (uint32_t i = 0; i < n && res->read.data.rdmatest_data_val; i++)
			res->read.data.rdmatest_data_val[i] = (char)gen_byte(arg->read.seed, i);
		return res->read.data.rdmatest_data_val;
	case RDMATEST_LONG_ARG:
		res->count = arg->words.rdmatest_words_len;
		return NULL;
	default: /* RDMATEST_LONG_RES */
		n = arg->read.count <= RDMATEST_MAX_WORDS ? arg->read.count : 0;
		res->words.rdmatest_words_len = n;
		res->words.rdmatest_words_val = malloc(n ? 4 * (size_t)n : 1);
		for (uint32_t i = 0; i < n && res->words.rdmatest_words_val; i++)
			res->words.rdmatest_words_val[i] = gen_word(arg->read.seed, i);
		return res->words.rdmatest_words_val;
	}
}

static void rdmatest_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	union rdmatest_arg arg;
	union rdmatest_res res;
	xdrproc_t xa, xr;
	void *scratch;

	if (rq->rq_proc == RDMATEST_NULL) {
		svc_sendreply(xprt, (xdrproc_t)(void (*)(void))xdr_void, NULL);
		return;
	}
	if (!rdmatest_xdr_of(rq->rq_proc, &xa, &xr)) {
		svcerr_noproc(xprt);
		return;
	}
	memset(&arg, 0, sizeof(arg));
	memset(&res, 0, sizeof(res));
	if (!svc_getargs(xprt, xa, (char *)&arg)) {
		svcerr_decode(xprt);
		return;
	}
	scratch = rdmatest_serve(rq->rq_proc, &arg, &res);
	if (!svc_sendreply(xprt, xr, (char *)&res))
		fprintf(stderr, "rpc_basic: server: reply to proc %u failed\n", (unsigned)rq->rq_proc);
	free(scratch);
	svc_freeargs(xprt, xa, (char *)&arg);
}

static void *server_main(void *unused)
{
	(void)unused;
	svc_run();
	return NULL;
}

/* ---- client ------------------------------------------------------------------------------------ */

struct tally {
	const char *label;
	unsigned int ok, failed;
};

static void __attribute__((format(printf, 2, 3))) fail(struct tally *t, const char *fmt, ...)
{
	va_list ap;

	t->failed++;
	fprintf(stderr, "rpc_basic: %s: FAIL: ", t->label);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static bool call_ok(struct tally *t, CLIENT *cl, enum clnt_stat st, const char *what, uint32_t size)
{
	char buf[64];

	if (st == RPC_SUCCESS)
		return true;
	snprintf(buf, sizeof(buf), "%s %u bytes", what, size);
	fail(t, "%s", clnt_sperror(cl, buf));
	return false;
}

static const struct timeval call_tv = { .tv_sec = 300 };

static void check_echo(struct tally *t, CLIENT *cl, uint8_t *buf, uint32_t size)
{
	rdmatest_data in = { size, (char *)buf }, out = { 0, NULL };

	for (uint32_t i = 0; i < size; i++)
		buf[i] = gen_byte(size, i);
	if (!call_ok(t, cl, clnt_call(cl, RDMATEST_ECHO, (xdrproc_t)xdr_rdmatest_data, (char *)&in,
				      (xdrproc_t)xdr_rdmatest_data, (char *)&out, call_tv),
		     "ECHO", size))
		return;
	if (out.rdmatest_data_len != size || (size && memcmp(out.rdmatest_data_val, buf, size)))
		fail(t, "ECHO %u bytes: reply of %u bytes differs", size, out.rdmatest_data_len);
	else
		t->ok++;
	clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_data, (char *)&out);
}

static void check_write(struct tally *t, CLIENT *cl, uint8_t *buf, uint32_t size)
{
	rdmatest_write_args in = { size, { size, (char *)buf } };
	rdmatest_write_res out = { 0, 0 };

	for (uint32_t i = 0; i < size; i++)
		buf[i] = gen_byte(size + 1, i);
	if (!call_ok(t, cl, clnt_call(cl, RDMATEST_WRITE, (xdrproc_t)xdr_rdmatest_write_args,
				      (char *)&in, (xdrproc_t)xdr_rdmatest_write_res, (char *)&out,
				      call_tv),
		     "WRITE", size))
		return;
	if (out.count != size || out.checksum != fnv1a(buf, size))
		fail(t, "WRITE %u bytes: server saw %u bytes, checksum %08x", size, out.count,
		     out.checksum);
	else
		t->ok++;
}

static void check_read(struct tally *t, CLIENT *cl, uint32_t size)
{
	rdmatest_read_args in = { size, size ^ 0x5a5a };
	rdmatest_read_res out;
	bool same;

	memset(&out, 0, sizeof(out));
	if (!call_ok(t, cl, clnt_call(cl, RDMATEST_READ, (xdrproc_t)xdr_rdmatest_read_args,
				      (char *)&in, (xdrproc_t)xdr_rdmatest_read_res, (char *)&out,
				      call_tv),
		     "READ", size))
		return;
	same = out.count == size && out.data.rdmatest_data_len == size;
	for (uint32_t i = 0; same && i < size; i++)
		same = (uint8_t)out.data.rdmatest_data_val[i] == gen_byte(in.seed, i);
	if (!same)
		fail(t, "READ %u bytes: reply of %u bytes differs", size, out.data.rdmatest_data_len);
	else
		t->ok++;
	clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_read_res, (char *)&out);
}

static void check_long_arg(struct tally *t, CLIENT *cl, uint8_t *buf, uint32_t size)
{
	uint32_t n = words_for(size);
	rdmatest_words in = { n, (u_int *)(void *)buf };
	u_int out = 0;

	for (uint32_t i = 0; i < n; i++)
		in.rdmatest_words_val[i] = gen_word(size, i);
	if (!call_ok(t, cl, clnt_call(cl, RDMATEST_LONG_ARG, (xdrproc_t)xdr_rdmatest_words,
				      (char *)&in, (xdrproc_t)xdr_u_int, (char *)&out, call_tv),
		     "LONG_ARG", size))
		return;
	if (out != n)
		fail(t, "LONG_ARG %u words: server counted %u", n, out);
	else
		t->ok++;
}

static void check_long_res(struct tally *t, CLIENT *cl, uint32_t size)
{
	rdmatest_read_args in = { words_for(size), size ^ 0xa5a5 };
	rdmatest_words out = { 0, NULL };
	bool same;

	if (!call_ok(t, cl, clnt_call(cl, RDMATEST_LONG_RES, (xdrproc_t)xdr_rdmatest_read_args,
				      (char *)&in, (xdrproc_t)xdr_rdmatest_words, (char *)&out,
				      call_tv),
		     "LONG_RES", size))
		return;
	same = out.rdmatest_words_len == in.count;
	for (uint32_t i = 0; same && i < in.count; i++)
		same = out.rdmatest_words_val[i] == gen_word(in.seed, i);
	if (!same)
		fail(t, "LONG_RES %u words: reply of %u words differs", in.count,
		     out.rdmatest_words_len);
	else
		t->ok++;
	clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_words, (char *)&out);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* rxe has type-2 memory windows, siw has none: each gets its own strategy. */
static void check_conn_info(struct tally *t, CLIENT *cl, const char *provider)
{
	bool windows = !strcmp(provider, "rxe");
	struct rpcrdma_conn_info ci;
	int rc = clnt_rdma_getinfo(cl, &ci);

	if (rc) {
		fail(t, "clnt_rdma_getinfo: %s", strerror(-rc));
		return;
	}
	printf("rpc_basic: %s: inline %u/%u, credits %u, IRD/ORD %u/%u, %s, remote invalidation %s\n",
	       t->label, ci.inline_send, ci.inline_recv, ci.credits, ci.ird, ci.ord,
	       ci.registration == RPCRDMA_REG_MEMORY_WINDOW ? "memory windows" : "per-call MRs",
	       ci.remote_invalidate ? "on" : "off");
	if ((ci.registration == RPCRDMA_REG_MEMORY_WINDOW) != windows ||
	    ci.remote_invalidate != windows || !ci.peer_private_data || ci.iwarp == windows)
		fail(t, "unexpected connection parameters for %s", provider);
}

/* With windows and R on both sides, the server's Send With Invalidate ends each call's access. */
static void check_invalidations(struct tally *t, CLIENT *cl, const char *provider)
{
	struct rpcrdma_conn_info ci;

	if (clnt_rdma_getinfo(cl, &ci)) {
		fail(t, "clnt_rdma_getinfo after the calls failed");
		return;
	}
	printf("rpc_basic: %s: windows invalidated by the server %llu, locally %llu\n", t->label,
	       (unsigned long long)ci.remote_invalidations,
	       (unsigned long long)ci.local_invalidations);
	if (!strcmp(provider, "rxe") && (!ci.remote_invalidations || ci.local_invalidations))
		fail(t, "expected every window to be invalidated by the server");
	if (strcmp(provider, "rxe") && (ci.remote_invalidations || ci.local_invalidations))
		fail(t, "no windows expected on %s", provider);
}

/*
 * Without a binding the client first offers a modest reply chunk; a
 * longer reply makes the server answer ERR_CHUNK and the client sends
 * the call again with room for max_rpc_size.
 */
static void check_unbound(struct tally *t, const char *host, const char *netid, uint8_t *buf)
{
	CLIENT *cl = clnt_rdma_create(host, RDMATEST_PROG, RDMATEST_V1, netid, NULL);

	if (!cl) {
		fail(t, "without a binding: %s", clnt_spcreateerror(host));
		return;
	}
	check_echo(t, cl, buf, 1000);
	check_long_res(t, cl, 1048577);
	check_echo(t, cl, buf, 1048577);
	clnt_destroy(cl);
}

static bool run_client(const char *provider, const char *host, const char *netid, uint8_t *buf)
{
	char label[96];
	struct tally t = { label, 0, 0 };
	struct rpcrdma_options o;
	double t0 = now_s();
	CLIENT *cl;

	snprintf(label, sizeof(label), "%s %s", provider, strcmp(netid, "rdma") ? "IPv6" : "IPv4");
	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	cl = clnt_rdma_create(host, RDMATEST_PROG, RDMATEST_V1, netid, &o);
	if (!cl) {
		fail(&t, "%s", clnt_spcreateerror(host));
		return false;
	}
	check_conn_info(&t, cl, provider);
	if (call_ok(&t, cl, clnt_call(cl, RDMATEST_NULL, (xdrproc_t)(void (*)(void))xdr_void, NULL,
				      (xdrproc_t)(void (*)(void))xdr_void, NULL, call_tv),
		    "NULL", 0))
		t.ok++;
	for (size_t i = 0; i < NSIZES; i++) {
		double c0 = now_s();

		check_echo(&t, cl, buf, sizes[i]);
		check_write(&t, cl, buf, sizes[i]);
		check_read(&t, cl, sizes[i]);
		check_long_arg(&t, cl, buf, sizes[i]);
		check_long_res(&t, cl, sizes[i]);
		printf("rpc_basic: %s: %u bytes: 5 procedures in %.2f s\n", label, sizes[i],
		       now_s() - c0);
		fflush(stdout);
	}
	check_invalidations(&t, cl, provider);
	clnt_destroy(cl);
	check_unbound(&t, host, netid, buf);
	printf("rpc_basic: %s: %u calls ok, %u failed (%.1f s)\n", label, t.ok, t.failed,
	       now_s() - t0);
	return !t.failed;
}

static SVCXPRT *listen_on(const char *addr)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	SVCXPRT *x;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
	} else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
	} else {
		fprintf(stderr, "rpc_basic: bad address %s\n", addr);
		return NULL;
	}
	x = svc_rdma_create((struct sockaddr *)&ss, NULL);
	if (!x) {
		fprintf(stderr, "rpc_basic: %s: %s", addr, clnt_spcreateerror("svc_rdma_create"));
		return NULL;
	}
	if (!svc_rdma_reg(x, RDMATEST_PROG, RDMATEST_V1, rdmatest_dispatch, &rdmatest_ulb)) {
		fprintf(stderr, "rpc_basic: %s: %s", addr, clnt_spcreateerror("svc_rdma_reg"));
		return NULL;
	}
	return x;
}

int main(int argc, char **argv)
{
	uint8_t *buf = malloc(RDMATEST_MAX_DATA);
	bool ok = true;
	pthread_t server;

	/* siw charges registrations to RLIMIT_MEMLOCK; 16 MiB calls need more than the default. */
	setrlimit(RLIMIT_MEMLOCK, &(struct rlimit){ RLIM_INFINITY, RLIM_INFINITY });
	if (argc < 3 || !buf) {
		fprintf(stderr, "usage: rpc_basic PROVIDER ADDR...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++)
		if (!listen_on(argv[i]))
			return 1;
	if (pthread_create(&server, NULL, server_main, NULL)) {
		fprintf(stderr, "rpc_basic: cannot start the server thread\n");
		return 1;
	}
	for (int i = 2; i < argc; i++)
		ok &= run_client(argv[1], argv[i], strchr(argv[i], ':') ? "rdma6" : "rdma", buf);
	free(buf);
	printf("rpc_basic: %s: %s\n", argv[1], ok ? "all passed" : "FAILED");
	fflush(stdout);
	_exit(ok ? 0 : 1); /* the server thread stays in svc_run() */
}
