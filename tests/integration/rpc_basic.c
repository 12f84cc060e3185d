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
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "rpcrdma/netconfig.h"
#include "rdmatest_support.h"

static const uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, 4095, 4096, 4097, 65536,
				  (1u << 20) + 1, 16u << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static uint32_t words_for(uint32_t bytes)
{
	return (bytes + 3) / 4;
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
		buf[i] = rdmatest_gen_byte(size, i);
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
		buf[i] = rdmatest_gen_byte(size + 1, i);
	if (!call_ok(t, cl, clnt_call(cl, RDMATEST_WRITE, (xdrproc_t)xdr_rdmatest_write_args,
				      (char *)&in, (xdrproc_t)xdr_rdmatest_write_res, (char *)&out,
				      call_tv),
		     "WRITE", size))
		return;
	if (out.count != size || out.checksum != rdmatest_fnv1a(buf, size))
		fail(t, "WRITE %u bytes: server saw %u bytes, checksum %08x", size, out.count,
		     out.checksum);
	else
		t->ok++;
}

static void check_read(struct tally *t, CLIENT *cl, uint32_t size)
{
	bool same;

	if (!call_ok(t, cl, rdmatest_call_read(cl, size, size ^ 0x5a5a, call_tv, &same), "READ",
		     size))
		return;
	if (!same)
		fail(t, "READ %u bytes: the reply differs", size);
	else
		t->ok++;
}

static void check_long_arg(struct tally *t, CLIENT *cl, uint8_t *buf, uint32_t size)
{
	uint32_t n = words_for(size);
	rdmatest_words in = { n, (u_int *)(void *)buf };
	u_int out = 0;

	for (uint32_t i = 0; i < n; i++)
		in.rdmatest_words_val[i] = rdmatest_gen_word(size, i);
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
		same = out.rdmatest_words_val[i] == rdmatest_gen_word(in.seed, i);
	if (!same)
		fail(t, "LONG_RES %u words: reply of %u words differs", in.count,
		     out.rdmatest_words_len);
	else
		t->ok++;
	clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_words, (char *)&out);
}

/* rxe has type-2 memory windows, siw has none: each gets its own strategy. */
static void check_conn_info(struct tally *t, CLIENT *cl, const char *provider)
{
	bool windows = !strcmp(provider, "rxe");
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;
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

/* cl_netid and cl_tp as libtirpc's clnt_tli_create() sets them: the netconfig entry's netid and device. */
static void check_client_names(struct tally *t, CLIENT *cl, const char *netid)
{
	const struct netconfig *nc = rpcrdma_getnetconfigent(netid);

	if (!cl->cl_netid || strcmp(cl->cl_netid, netid) || !cl->cl_tp || !nc ||
	    strcmp(cl->cl_tp, nc->nc_device))
		fail(t, "CLIENT names netid %s, device %s; want %s, %s", cl->cl_netid ? cl->cl_netid : "(null)",
		     cl->cl_tp ? cl->cl_tp : "(null)", netid, nc ? nc->nc_device : "?");
}

/* With windows and R on both sides, the server's Send With Invalidate ends each call's access. */
static void check_invalidations(struct tally *t, CLIENT *cl, const char *provider)
{
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;

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
 * the call again with room for max_rpc_size.  Only the results are
 * checked here; that it took exactly two sends, each marshalled anew,
 * is rpc_auth_wrap's run_resend (its credential counts them).
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

/* A program built against a later header: this library's options and one it does not know. */
struct options_v_next {
	struct rpcrdma_options o;
	uint64_t unknown;
};

static bool create_refused(struct tally *t, const char *what, const char *host, const char *netid,
			   rpcprog_t prog, const struct rpcrdma_options *o, int want)
{
	CLIENT *cl = clnt_rdma_create(host, prog, RDMATEST_V1, netid, o);

	if (cl) {
		clnt_destroy(cl);
		fail(t, "%s: the CLIENT was created", what);
		return false;
	}
	if (rpc_createerr.cf_stat != RPC_SYSTEMERROR || rpc_createerr.cf_error.re_errno != want) {
		fail(t, "%s: %s (want errno %d)", what, clnt_spcreateerror(host), want);
		return false;
	}
	return true;
}

/* The size fields of the options and the connection information, through the API. */
static void check_struct_sizes(struct tally *t, const char *host, const char *netid)
{
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct options_v_next n;
	struct rpcrdma_conn_info ci;
	CLIENT *cl;
	int rc;

	memset(&n, 0, sizeof(n));
	rpcrdma_options_init(&n.o);
	n.o.size = 0;
	if (!create_refused(t, "options without their size", host, netid, RDMATEST_PROG, &n.o, EINVAL))
		return;
	/* checked before the rpcbind lookup: a program nobody registered gets the same answer */
	if (!create_refused(t, "options without their size, unregistered program", host, netid,
			    RDMATEST_PROG + 1000, &n.o, EINVAL))
		return;
	if (svc_rdma_create((const struct sockaddr *)&lo, &n.o) ||
	    rpc_createerr.cf_error.re_errno != EINVAL) {
		fail(t, "svc_rdma_create took options without their size");
		return;
	}
	n.o.size = sizeof(n);
	n.unknown = 1;
	if (!create_refused(t, "options this library does not know", host, netid, RDMATEST_PROG, &n.o,
			    E2BIG))
		return;
	n.unknown = 0;
	n.o.ulb = &rdmatest_ulb;
	cl = clnt_rdma_create(host, RDMATEST_PROG, RDMATEST_V1, netid, &n.o);
	if (!cl) {
		fail(t, "a longer options struct with its extra options zero: %s",
		     clnt_spcreateerror(host));
		return;
	}
	memset(&ci, 0xa5, sizeof(ci));
	ci.size = 0;
	rc = clnt_rdma_getinfo(cl, &ci);
	if (rc != -EINVAL || ci.credits != 0xa5a5a5a5u)
		fail(t, "clnt_rdma_getinfo without the size: %d, credits %#x", rc, ci.credits);
	ci.size = sizeof(ci);
	rc = clnt_rdma_getinfo(cl, &ci);
	/* the length of the fields filled: up to the last one, not its tail padding */
	if (rc || ci.size != offsetof(struct rpcrdma_conn_info, send_wr_inline) + sizeof(uint32_t) ||
	    !ci.credits || ci.connects != 1)
		fail(t, "clnt_rdma_getinfo with the size: %d, size %u, credits %u", rc, ci.size,
		     ci.credits);
	else
		printf("rpc_basic: %s: options without a size: EINVAL; with an unknown option: "
		       "E2BIG; a longer struct with it zero and the conn info's size: ok\n",
		       t->label);
	clnt_destroy(cl);
}

static bool run_client(const char *provider, const char *host, const char *netid, uint8_t *buf)
{
	char label[96];
	struct tally t = { label, 0, 0 };
	struct rpcrdma_options o;
	double t0 = rdmatest_now();
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
	check_client_names(&t, cl, netid);
	if (call_ok(&t, cl, clnt_call(cl, RDMATEST_NULL, (xdrproc_t)(void (*)(void))xdr_void, NULL,
				      (xdrproc_t)(void (*)(void))xdr_void, NULL, call_tv),
		    "NULL", 0))
		t.ok++;
	for (size_t i = 0; i < NSIZES; i++) {
		double c0 = rdmatest_now();

		check_echo(&t, cl, buf, sizes[i]);
		check_write(&t, cl, buf, sizes[i]);
		check_read(&t, cl, sizes[i]);
		check_long_arg(&t, cl, buf, sizes[i]);
		check_long_res(&t, cl, sizes[i]);
		printf("rpc_basic: %s: %u bytes: 5 procedures in %.2f s\n", label, sizes[i],
		       rdmatest_now() - c0);
		fflush(stdout);
	}
	check_invalidations(&t, cl, provider);
	clnt_destroy(cl);
	check_unbound(&t, host, netid, buf);
	check_struct_sizes(&t, host, netid);
	printf("rpc_basic: %s: %u calls ok, %u failed (%.1f s)\n", label, t.ok, t.failed,
	       rdmatest_now() - t0);
	return !t.failed;
}

int main(int argc, char **argv)
{
	uint8_t *buf = malloc(RDMATEST_MAX_DATA);
	bool ok = true;

	rdmatest_raise_memlock(); /* siw charges registrations to it; 16 MiB calls need more */
	if (argc < 3 || !buf) {
		fprintf(stderr, "usage: rpc_basic PROVIDER ADDR...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++)
		if (!rdmatest_listen("rpc_basic", argv[i], NULL, NULL))
			return 1;
	if (!rdmatest_start_server("rpc_basic"))
		return 1;
	for (int i = 2; i < argc; i++)
		ok &= run_client(argv[1], argv[i], strchr(argv[i], ':') ? "rdma6" : "rdma", buf);
	free(buf);
	printf("rpc_basic: %s: %s\n", argv[1], ok ? "all passed" : "FAILED");
	fflush(stdout);
	_exit(ok ? 0 : 1); /* the server thread stays in svc_run() */
}
