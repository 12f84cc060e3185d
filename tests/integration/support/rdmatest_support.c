/*
 * Shared pieces of the rdmatest integration tests (rdmatest_support.h).
 */
#include "rdmatest_support.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* ---- data ------------------------------------------------------------------------------ */

uint32_t rdmatest_fnv1a(const uint8_t *p, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

uint8_t rdmatest_gen_byte(uint32_t seed, uint32_t i)
{
	return (uint8_t)(seed * 31u + i * 7u + (i >> 8) + (seed >> 8));
}

uint32_t rdmatest_gen_word(uint32_t seed, uint32_t i)
{
	return seed ^ (i * 2654435761u);
}

uint32_t rdmatest_mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	return x ^ (x >> 16);
}

void rdmatest_fill(uint8_t *buf, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		buf[i] = rdmatest_gen_byte(seed, i);
}

/* ---- upper-layer binding ------------------------------------------------------------------- */

static uint32_t void_reply_max(const void *args)
{
	(void)args;
	return 0;
}

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

/* Every procedure declares its largest reply, so no call offers more reply room than it needs. */
static const struct rpcrdma_ulb_proc rdmatest_procs[] = {
	{ .proc = RDMATEST_NULL, .reply_max = void_reply_max },
	{ .proc = RDMATEST_ECHO, .reply_max = echo_reply_max },
	{ .proc = RDMATEST_WRITE, .arg_ddp = 1, .reply_max = small_reply_max },
	{ .proc = RDMATEST_READ, .res_ddp = 1, .res_max = read_res_max,
	  .reply_max = read_reply_max },
	{ .proc = RDMATEST_LONG_ARG, .reply_max = small_reply_max },
	{ .proc = RDMATEST_LONG_RES, .reply_max = long_res_reply_max },
};

const struct rpcrdma_ulb rdmatest_ulb = {
	.prog = RDMATEST_PROG, .vers = RDMATEST_V1, .procs = rdmatest_procs,
	.nprocs = sizeof(rdmatest_procs) / sizeof(rdmatest_procs[0]),
};

/* ---- server ------------------------------------------------------------------------------ */

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

bool rdmatest_xdr_of(rpcproc_t proc, xdrproc_t *xa, xdrproc_t *xr)
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

static void *serve_read(const rdmatest_read_args *a, rdmatest_read_res *r)
{
	uint32_t n = a->count <= RDMATEST_MAX_DATA ? a->count : 0;
	uint8_t *data = malloc(n ? n : 1);

	if (data)
		rdmatest_fill(data, n, a->seed);
	r->count = n;
	r->data.rdmatest_data_len = data ? n : 0;
	r->data.rdmatest_data_val = (char *)data;
	return data;
}

static void *serve_long_res(const rdmatest_read_args *a, rdmatest_words *r)
{
	uint32_t n = a->count <= RDMATEST_MAX_WORDS ? a->count : 0;
	u_int *w = malloc(n ? 4 * (size_t)n : 1);

	for (uint32_t i = 0; i < n && w; i++)
		w[i] = rdmatest_gen_word(a->seed, i);
	r->rdmatest_words_len = w ? n : 0;
	r->rdmatest_words_val = w;
	return w;
}

/* Fill @res for @proc; returns memory to free after the reply, or NULL. */
static void *serve(rpcproc_t proc, union rdmatest_arg *arg, union rdmatest_res *res)
{
	switch (proc) {
	case RDMATEST_ECHO:
		res->echo = arg->echo;
		return NULL;
	case RDMATEST_WRITE:
		res->write.count = arg->write.data.rdmatest_data_len;
		res->write.checksum = rdmatest_fnv1a((const uint8_t *)arg->write.data.rdmatest_data_val,
						     arg->write.data.rdmatest_data_len);
		return NULL;
	case RDMATEST_READ:
		return serve_read(&arg->read, &res->read);
	case RDMATEST_LONG_ARG:
		res->count = arg->words.rdmatest_words_len;
		return NULL;
	default: /* RDMATEST_LONG_RES */
		return serve_long_res(&arg->read, &res->words);
	}
}

void rdmatest_dispatch(struct svc_req *rq, SVCXPRT *xprt)
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
	scratch = serve(rq->rq_proc, &arg, &res);
	if (!svc_sendreply(xprt, xr, (char *)&res))
		fprintf(stderr, "rdmatest server: reply to procedure %u failed\n",
			(unsigned)rq->rq_proc);
	free(scratch);
	svc_freeargs(xprt, xa, (char *)&arg);
}

void rdmatest_dispatch_echo(struct svc_req *rq, SVCXPRT *xprt,
			    void (*echo)(SVCXPRT *xprt, rdmatest_data *arg))
{
	rdmatest_data arg = { 0 };

	if (rq->rq_proc != RDMATEST_ECHO) {
		rdmatest_dispatch(rq, xprt);
		return;
	}
	if (!svc_getargs(xprt, (xdrproc_t)xdr_rdmatest_data, (char *)&arg)) {
		svcerr_decode(xprt);
		return;
	}
	echo(xprt, &arg);
	svc_freeargs(xprt, (xdrproc_t)xdr_rdmatest_data, (char *)&arg);
}

/* ---- setup ----------------------------------------------------------------------------------- */

SVCXPRT *rdmatest_listen(const char *prog, const char *addr, const struct rpcrdma_options *o,
			 void (*dispatch)(struct svc_req *, SVCXPRT *))
{
	struct sockaddr_storage ss;
	SVCXPRT *x;

	if (!rdmatest_parse_addr(addr, 0, &ss)) {
		fprintf(stderr, "%s: invalid address '%s'\n", prog, addr);
		return NULL;
	}
	x = svc_rdma_create((struct sockaddr *)&ss, o);
	if (!x) {
		fprintf(stderr, "%s: %s: %s\n", prog, addr, clnt_spcreateerror("svc_rdma_create"));
		return NULL;
	}
	if (!svc_rdma_reg(x, RDMATEST_PROG, RDMATEST_V1, dispatch ? dispatch : rdmatest_dispatch,
			  &rdmatest_ulb)) {
		fprintf(stderr, "%s: %s: %s\n", prog, addr, clnt_spcreateerror("svc_rdma_reg"));
		return NULL;
	}
	return x;
}

static void *server_main(void *unused)
{
	(void)unused;
	svc_run();
	return NULL;
}

bool rdmatest_start_server(const char *prog)
{
	pthread_t t;

	if (pthread_create(&t, NULL, server_main, NULL)) {
		fprintf(stderr, "%s: cannot start the server thread\n", prog);
		return false;
	}
	pthread_detach(t);
	return true;
}

int rdmatest_serve_addrs(const char *prog, int argc, char **argv,
			 void (*dispatch)(struct svc_req *, SVCXPRT *), unsigned int *ports)
{
	int n = argc - 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rdmatest_raise_memlock();
	if (n < 1 || n > RDMATEST_MAX_ADDRS) {
		fprintf(stderr, "usage: %s ADDR...  (1 to %d addresses)\n", prog, RDMATEST_MAX_ADDRS);
		return -2;
	}
	/* every listener before svc_run starts: it serves a fixed set of transports */
	for (int i = 0; i < n; i++) {
		SVCXPRT *x = rdmatest_listen(prog, argv[i + 1], NULL, dispatch);

		if (!x)
			return -1;
		ports[i] = x->xp_port;
	}
	return rdmatest_start_server(prog) ? n : -1;
}

void rdmatest_raise_memlock(void)
{
	setrlimit(RLIMIT_MEMLOCK, &(struct rlimit){ RLIM_INFINITY, RLIM_INFINITY });
}

double rdmatest_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

enum clnt_stat rdmatest_call_null(CLIENT *cl, struct timeval tv)
{
	return clnt_call(cl, RDMATEST_NULL, (xdrproc_t)(void (*)(void))xdr_void, NULL,
			 (xdrproc_t)(void (*)(void))xdr_void, NULL, tv);
}

enum clnt_stat rdmatest_call_echo_text(CLIENT *cl, const char *text, struct timeval tv, bool *same)
{
	rdmatest_data arg = { (u_int)strlen(text), (char *)(uintptr_t)text };
	rdmatest_data res = { 0 };
	enum clnt_stat st;

	*same = false;
	st = clnt_call(cl, RDMATEST_ECHO, (xdrproc_t)xdr_rdmatest_data, (char *)&arg,
		       (xdrproc_t)xdr_rdmatest_data, (char *)&res, tv);
	if (st != RPC_SUCCESS)
		return st;
	*same = res.rdmatest_data_len == arg.rdmatest_data_len &&
		(!arg.rdmatest_data_len ||
		 !memcmp(res.rdmatest_data_val, text, arg.rdmatest_data_len));
	clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_data, (char *)&res);
	return st;
}

enum clnt_stat rdmatest_call_read(CLIENT *cl, uint32_t count, uint32_t seed, struct timeval tv,
				  bool *same)
{
	rdmatest_read_args in = { count, seed };
	rdmatest_read_res out = { 0 };
	enum clnt_stat st;

	*same = false;
	st = clnt_call(cl, RDMATEST_READ, (xdrproc_t)xdr_rdmatest_read_args, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_read_res, (char *)&out, tv);
	if (st != RPC_SUCCESS)
		return st;
	*same = out.count == count && out.data.rdmatest_data_len == count;
	for (uint32_t i = 0; *same && i < count; i++)
		*same = (uint8_t)out.data.rdmatest_data_val[i] == rdmatest_gen_byte(seed, i);
	clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_read_res, (char *)&out);
	return st;
}
