/* The rdmatest program over libtirpc TCP, and a checked round of its procedures (side_by_side.h). */
#include "side_by_side.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdmatest_support.h"

bool rdmatest_tcp_listen(const char *addr, void (*dispatch)(struct svc_req *, SVCXPRT *),
			 struct sockaddr_storage *bound)
{
	socklen_t len = sizeof(*bound);
	SVCXPRT *x;
	int fd;

	if (!rdmatest_parse_addr(addr, 0, bound))
		return false;
	fd = socket(bound->ss_family, SOCK_STREAM, 0);
	if (fd < 0)
		return false;
	if (bind(fd, (struct sockaddr *)bound, len) || listen(fd, 8) ||
	    getsockname(fd, (struct sockaddr *)bound, &len)) {
		close(fd);
		return false;
	}
	x = svc_vc_create(fd, 0, 0);
	return x && svc_reg(x, RDMATEST_PROG, RDMATEST_V1, dispatch ? dispatch : rdmatest_dispatch,
			    NULL);
}

CLIENT *rdmatest_tcp_client(const struct sockaddr_storage *addr)
{
	struct netbuf nb = { sizeof(*addr), sizeof(*addr), (void *)addr };
	int fd = socket(addr->ss_family, SOCK_STREAM, 0);
	CLIENT *cl;

	if (fd < 0)
		return NULL;
	if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr))) {
		close(fd);
		return NULL;
	}
	cl = clnt_vc_create(fd, &nb, RDMATEST_PROG, RDMATEST_V1, 0, 0);
	if (!cl) {
		close(fd);
		return NULL;
	}
	clnt_control(cl, CLSET_FD_CLOSE, NULL);
	return cl;
}

struct round {
	const char *prog, *label;
	CLIENT *cl;
	struct timeval tv;
	uint8_t *buf;
	unsigned int failures;
};

static enum clnt_stat round_call(struct round *r, rpcproc_t proc, void *in, void *out)
{
	xdrproc_t xa, xr;

	if (!rdmatest_xdr_of(proc, &xa, &xr))
		return RPC_PROCUNAVAIL;
	return clnt_call(r->cl, proc, xa, in, xr, out, r->tv);
}

static void round_echo(struct round *r, uint32_t size)
{
	rdmatest_data in = { size, (char *)r->buf }, out = { 0, NULL };
	enum clnt_stat st;

	rdmatest_fill(r->buf, size, size);
	st = round_call(r, RDMATEST_ECHO, &in, &out);
	r->failures += !rdmatest_check(r->prog,
				       st == RPC_SUCCESS && out.rdmatest_data_len == size &&
					       !memcmp(out.rdmatest_data_val, r->buf, size),
				       "%s: ECHO %u bytes: %s", r->label, size, clnt_sperrno(st));
	if (st == RPC_SUCCESS)
		clnt_freeres(r->cl, (xdrproc_t)xdr_rdmatest_data, (char *)&out);
}

static void round_write(struct round *r)
{
	rdmatest_write_args wa = { 0, { RDMATEST_ROUND_BIG, (char *)r->buf } };
	rdmatest_write_res wr = { 0, 0 };
	enum clnt_stat st;

	rdmatest_fill(r->buf, RDMATEST_ROUND_BIG, 5);
	st = round_call(r, RDMATEST_WRITE, &wa, &wr);
	r->failures += !rdmatest_check(
		r->prog,
		st == RPC_SUCCESS && wr.count == RDMATEST_ROUND_BIG &&
			wr.checksum == rdmatest_fnv1a(r->buf, RDMATEST_ROUND_BIG),
		"%s: WRITE %u bytes: %s", r->label, RDMATEST_ROUND_BIG, clnt_sperrno(st));
}

static void round_read(struct round *r)
{
	rdmatest_read_args ra = { RDMATEST_ROUND_BIG, 77 };
	rdmatest_read_res rr = { 0, { 0, NULL } };
	enum clnt_stat st = round_call(r, RDMATEST_READ, &ra, &rr);
	bool same = st == RPC_SUCCESS && rr.data.rdmatest_data_len == RDMATEST_ROUND_BIG;

	for (uint32_t i = 0; same && i < RDMATEST_ROUND_BIG; i++)
		same = (uint8_t)rr.data.rdmatest_data_val[i] == rdmatest_gen_byte(ra.seed, i);
	r->failures += !rdmatest_check(r->prog, same, "%s: READ %u bytes: %s", r->label,
				       RDMATEST_ROUND_BIG, clnt_sperrno(st));
	if (st == RPC_SUCCESS)
		clnt_freeres(r->cl, (xdrproc_t)xdr_rdmatest_read_res, (char *)&rr);
}

static void round_long_res(struct round *r)
{
	rdmatest_read_args la = { 1000, 78 };
	rdmatest_words lw = { 0, NULL };
	enum clnt_stat st = round_call(r, RDMATEST_LONG_RES, &la, &lw);
	bool same = st == RPC_SUCCESS && lw.rdmatest_words_len == la.count;

	for (uint32_t i = 0; same && i < la.count; i++)
		same = lw.rdmatest_words_val[i] == rdmatest_gen_word(la.seed, i);
	r->failures += !rdmatest_check(r->prog, same, "%s: LONG_RES %u words: %s", r->label,
				       la.count, clnt_sperrno(st));
	if (st == RPC_SUCCESS)
		clnt_freeres(r->cl, (xdrproc_t)xdr_rdmatest_words, (char *)&lw);
}

unsigned int rdmatest_check_procedures(const char *prog, CLIENT *cl, const char *label,
				       struct timeval tv, unsigned int *calls)
{
	struct round r = { prog, label, cl, tv, malloc(RDMATEST_ROUND_BIG), 0 };

	*calls = 0;
	if (!r.buf)
		return !rdmatest_check(prog, false, "%s: out of memory", label);
	round_echo(&r, 100);
	round_echo(&r, 65536);
	round_write(&r);
	round_read(&r);
	round_long_res(&r);
	free(r.buf);
	*calls = 5;
	return r.failures;
}

struct echo_thread {
	CLIENT *cl;
	struct timeval tv;
	int calls;
	unsigned int failed;
};

static void *echo_thread_main(void *p)
{
	struct echo_thread *t = p;
	char text[48];

	for (int i = 0; i < t->calls; i++) {
		bool same = false;

		snprintf(text, sizeof(text), "call %d of thread %p", i, p);
		if (rdmatest_call_echo_text(t->cl, text, t->tv, &same) != RPC_SUCCESS || !same)
			t->failed++;
	}
	return NULL;
}

unsigned int rdmatest_check_threads(const char *prog, CLIENT *cl, const char *label, int threads,
				    int calls, struct timeval tv)
{
	struct echo_thread args[RDMATEST_THREADS_MAX];
	pthread_t th[RDMATEST_THREADS_MAX];
	unsigned int failed = 0;
	int started = 0;

	if (threads > RDMATEST_THREADS_MAX)
		threads = RDMATEST_THREADS_MAX;
	for (int i = 0; i < threads; i++) {
		args[i] = (struct echo_thread){ cl, tv, calls, 0 };
		if (pthread_create(&th[i], NULL, echo_thread_main, &args[i]))
			break;
		started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(th[i], NULL);
		failed += args[i].failed;
	}
	return !rdmatest_check(prog, started == threads && failed == 0,
			       "%s: %d threads x %d ECHO calls on one AUTH: %u failed", label, started,
			       calls, failed);
}
