/*
 * capture_siw: the traffic capture_siw.test records and checks with
 * tshark.  A server thread serves the rdmatest program on each address;
 * a client connects to each with non-default, asymmetric settings (so
 * every private-data and IRD/ORD field has a value of its own) and makes
 * a few calls of every message form, each verified:
 *   NULL and ECHO 100 B      RDMA_MSG, inline both ways
 *   ECHO 8 KiB, LONG_ARG     RDMA_NOMSG call (position-zero read chunk)
 *   ECHO 8 KiB, LONG_RES     RDMA_NOMSG reply (reply chunk)
 *   WRITE 8 KiB              RDMA_MSG call with a read chunk
 *   READ 8 KiB               reply data in a write chunk
 *   WRITE, READ 8 KiB with a credential that wraps the body: whole
 *                            messages (RDMA_NOMSG call, reply chunk)
 * Then it prints, per connection, one line for the test to compare with
 * the MPA frames on the wire, and at the end "CALLS <n>", the number of
 * calls made:
 *   CONN <server port> client ird <n> ord <n> server ird <n> ord <n>
 *        client send <n> recv <n> R <0|1> server send <n> recv <n> R <0|1>
 * (IRD/ORD as clnt_rdma_getinfo/svc_rdma_getinfo report them; send/recv/R
 * as configured, which is what RFC 8797 private data announces.)
 *
 *   capture_siw PROVIDER ADDR...
 *
 * Exits 0 when every call passed.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdmatest_support.h"
#include "wrap_flavor.h"

#define PROG "capture_siw"
#define BIG 8192u
#define MAX_ADDRS 4

static const struct timeval call_tv = { .tv_sec = 60 };
static unsigned int failures;
static unsigned int calls; /* calls made, each one RPC-over-RDMA Send each way */

/* What the server's accepted connection of each listener reported (indexed by listener port). */
struct server_view {
	uint16_t port;
	atomic_bool seen;
	struct rpcrdma_conn_info info;
};
static struct server_view servers[MAX_ADDRS];

#define check(ok, ...) (failures += !rdmatest_check(PROG, (ok), __VA_ARGS__))

/* ---- settings ---------------------------------------------------------------------------------- */

static void client_options(struct rpcrdma_options *o)
{
	rpcrdma_options_init(o);
	o->inline_send = 2048;
	o->inline_recv = 8192;
	o->ird = 6;
	o->ord = 5;
	o->remote_invalidate = false;
	o->ulb = &rdmatest_ulb;
}

static void server_options(struct rpcrdma_options *o)
{
	rpcrdma_options_init(o);
	o->inline_send = 6144;
	o->inline_recv = 3072;
	o->ird = 12;
	o->ord = 3;
	o->remote_invalidate = false;
}

/* ---- server ------------------------------------------------------------------------------------ */

static void record_server_view(SVCXPRT *xprt)
{
	for (int i = 0; i < MAX_ADDRS; i++) {
		struct server_view *v = &servers[i];

		if (v->port != xprt->xp_port || atomic_load(&v->seen))
			continue;
		v->info.size = sizeof(v->info);
		if (svc_rdma_getinfo(xprt, &v->info) == 0)
			atomic_store(&v->seen, true);
	}
}

static void capture_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	if (rq->rq_proc == RDMATEST_NULL)
		record_server_view(xprt);
	rdmatest_dispatch(rq, xprt);
}

/* ---- client calls ------------------------------------------------------------------------------- */

static void call_echo(CLIENT *cl, uint8_t *buf, uint32_t size)
{
	rdmatest_data in = { size, (char *)buf }, out = { 0, NULL };
	enum clnt_stat st;

	calls++;

	rdmatest_fill(buf, size, size);
	st = clnt_call(cl, RDMATEST_ECHO, (xdrproc_t)xdr_rdmatest_data, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_data, (char *)&out, call_tv);
	check(st == RPC_SUCCESS && out.rdmatest_data_len == size &&
	      !memcmp(out.rdmatest_data_val, buf, size), "ECHO %u bytes (%s)", size,
	      clnt_sperrno(st));
	if (st == RPC_SUCCESS)
		clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_data, (char *)&out);
}

static void call_write(CLIENT *cl, uint8_t *buf, uint32_t size)
{
	rdmatest_write_args in = { 0, { size, (char *)buf } };
	rdmatest_write_res out = { 0, 0 };
	enum clnt_stat st;

	calls++;

	rdmatest_fill(buf, size, size + 1);
	st = clnt_call(cl, RDMATEST_WRITE, (xdrproc_t)xdr_rdmatest_write_args, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_write_res, (char *)&out, call_tv);
	check(st == RPC_SUCCESS && out.count == size && out.checksum == rdmatest_fnv1a(buf, size),
	      "WRITE %u bytes (%s)", size, clnt_sperrno(st));
}

static void call_read(CLIENT *cl, uint8_t *buf, uint32_t size)
{
	rdmatest_read_args in = { size, 77 };
	rdmatest_read_res out;
	enum clnt_stat st;

	calls++;

	memset(&out, 0, sizeof(out));
	rdmatest_fill(buf, size, in.seed);
	st = clnt_call(cl, RDMATEST_READ, (xdrproc_t)xdr_rdmatest_read_args, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_read_res, (char *)&out, call_tv);
	check(st == RPC_SUCCESS && out.data.rdmatest_data_len == size &&
	      !memcmp(out.data.rdmatest_data_val, buf, size), "READ %u bytes (%s)", size,
	      clnt_sperrno(st));
	if (st == RPC_SUCCESS)
		clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_read_res, (char *)&out);
}

static void call_long_arg(CLIENT *cl, uint8_t *buf, uint32_t size)
{
	rdmatest_words in = { size / 4, (u_int *)(void *)buf };
	u_int out = 0;
	enum clnt_stat st;

	calls++;

	for (uint32_t i = 0; i < in.rdmatest_words_len; i++)
		in.rdmatest_words_val[i] = rdmatest_gen_word(3, i);
	st = clnt_call(cl, RDMATEST_LONG_ARG, (xdrproc_t)xdr_rdmatest_words, (char *)&in,
		       (xdrproc_t)xdr_u_int, (char *)&out, call_tv);
	check(st == RPC_SUCCESS && out == in.rdmatest_words_len, "LONG_ARG %u bytes (%s)", size,
	      clnt_sperrno(st));
}

static void call_long_res(CLIENT *cl, uint32_t size)
{
	rdmatest_read_args in = { size / 4, 99 };
	rdmatest_words out = { 0, NULL };
	enum clnt_stat st;
	bool same;

	calls++;

	st = clnt_call(cl, RDMATEST_LONG_RES, (xdrproc_t)xdr_rdmatest_read_args, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_words, (char *)&out, call_tv);
	same = st == RPC_SUCCESS && out.rdmatest_words_len == in.count;
	for (uint32_t i = 0; same && i < in.count; i++)
		same = out.rdmatest_words_val[i] == rdmatest_gen_word(in.seed, i);
	check(same, "LONG_RES %u bytes (%s)", size, clnt_sperrno(st));
	if (st == RPC_SUCCESS)
		clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_words, (char *)&out);
}

static void every_form(CLIENT *cl, uint8_t *buf)
{
	enum clnt_stat st = rdmatest_call_null(cl, call_tv);

	calls++;
	check(st == RPC_SUCCESS, "NULL (%s)", clnt_sperrno(st));
	call_echo(cl, buf, 100);
	call_echo(cl, buf, BIG);
	call_write(cl, buf, BIG);
	call_read(cl, buf, BIG);
	call_long_arg(cl, buf, BIG);
	call_long_res(cl, BIG);
}

/* ---- per address --------------------------------------------------------------------------------- */

static void print_conn(uint16_t port, const struct rpcrdma_conn_info *c,
		       const struct rpcrdma_conn_info *s)
{
	struct rpcrdma_options co, so;

	client_options(&co);
	server_options(&so);
	printf("%s: client: iwarp %d, inline send %u recv %u, ird %u ord %u; server: inline send "
	       "%u recv %u, ird %u ord %u\n", PROG, c->iwarp, c->inline_send, c->inline_recv,
	       c->ird, c->ord, s->inline_send, s->inline_recv, s->ird, s->ord);
	printf("CONN %u client ird %u ord %u server ird %u ord %u client send %u recv %u R %d "
	       "server send %u recv %u R %d\n", port, c->ird, c->ord, s->ird, s->ord,
	       co.inline_send, co.inline_recv, co.remote_invalidate, so.inline_send,
	       so.inline_recv, so.remote_invalidate);
	fflush(stdout);
}

/*
 * The WRITE and READ again with a flavor that wraps the body: their items
 * must not move apart (RFC 5666 section 11).  Printed for the test to find
 * on the wire:
 *   WRAPPED WRITE <xid>   an RDMA_NOMSG call, not a read chunk at the data
 *   WRAPPED READ <xid>    no write list; the reply in the reply chunk
 */
static void wrapped_forms(CLIENT *cl, uint8_t *buf)
{
	struct wrap_auth *w = wrap_auth_create(1);
	AUTH *saved = cl->cl_auth;
	uint32_t xid = 0;

	check(w != NULL, "a wrapping credential");
	if (!w)
		return;
	cl->cl_auth = &w->auth;
	call_write(cl, buf, BIG);
	clnt_control(cl, CLGET_XID, (char *)&xid);
	printf("WRAPPED WRITE 0x%08x\n", xid);
	call_read(cl, buf, BIG);
	clnt_control(cl, CLGET_XID, (char *)&xid);
	printf("WRAPPED READ 0x%08x\n", xid);
	check(w->wraps == 2 && w->unwraps == 2, "wrapped WRITE and READ: %u wraps, %u unwraps",
	      w->wraps, w->unwraps);
	cl->cl_auth = saved;
	auth_destroy(&w->auth);
}

static void run_client(const char *addr, struct server_view *v, uint8_t *buf)
{
	struct sockaddr_storage ss;
	struct rpcrdma_conn_info info = RPCRDMA_CONN_INFO_INIT;
	struct rpcrdma_options o;
	CLIENT *cl;

	client_options(&o);
	rdmatest_parse_addr(addr, v->port, &ss);
	cl = clnt_rdma_tli_create((struct sockaddr *)&ss, RDMATEST_PROG, RDMATEST_V1, &o);
	check(cl != NULL, "connect to %s port %u%s", addr, v->port,
	      cl ? "" : clnt_spcreateerror(""));
	if (!cl)
		return;
	every_form(cl, buf);
	wrapped_forms(cl, buf);
	check(clnt_rdma_getinfo(cl, &info) == 0, "clnt_rdma_getinfo");
	check(atomic_load(&v->seen), "svc_rdma_getinfo on the accepted connection");
	if (atomic_load(&v->seen))
		print_conn(v->port, &info, &v->info);
	clnt_destroy(cl);
}

int main(int argc, char **argv)
{
	static uint8_t buf[BIG];
	struct rpcrdma_options so;

	if (argc < 3 || argc - 2 > MAX_ADDRS) {
		fprintf(stderr, "usage: %s PROVIDER ADDR... (at most %d)\n", PROG, MAX_ADDRS);
		return 2;
	}
	rdmatest_raise_memlock();
	if (!wrap_flavor_register())
		return 1;
	server_options(&so);
	for (int i = 2; i < argc; i++) {
		SVCXPRT *x = rdmatest_listen(PROG, argv[i], &so, capture_dispatch);

		if (!x)
			return 1;
		servers[i - 2].port = (uint16_t)x->xp_port;
	}
	if (!rdmatest_start_server(PROG))
		return 1;
	for (int i = 2; i < argc; i++)
		run_client(argv[i], &servers[i - 2], buf);
	printf("CALLS %u\n", calls);
	printf("%s: %s: calls %s (%u failed)\n", PROG, argv[1], failures ? "FAILED" : "all passed",
	       failures);
	fflush(stdout);
	_exit(failures ? 1 : 0); /* the server thread stays in svc_run() */
}
