/*
 * rpc_bench: the rdmatest program (tests/prog/rdmatest.x) served and
 * called over the RDMA transport or over libtirpc's own TCP transport,
 * with the same dispatch and the same client loop (`make bench`, items 3
 * and 5 of issue 6).
 *
 *   rpc_bench serve rdma|tcp ADDR
 *       Listen on ADDR (port 0: any free one), print "port N" on stdout,
 *       serve rdmatest_dispatch with svc_run() until killed.  RDMA:
 *       svc_rdma_create + svc_rdma_reg; TCP: a listening socket,
 *       svc_vc_create and svc_reg without rpcbind.
 *
 *   rpc_bench call rdma|tcp ADDR PORT null|echo SIZE THREADS CALLS|Ns each|shared [SERVER_PID]
 *       THREADS threads, each keeping one call outstanding: CALLS calls in
 *       all, or, with "Ns" (e.g. 2s), calls for N seconds.  "each": every
 *       thread has its own CLIENT (its own connection), as libtirpc's TCP
 *       CLIENT needs, since it carries one call at a time; "shared": one
 *       CLIENT for all threads (the RDMA CLIENT pipelines the calls of many
 *       threads up to the credit grant).  RDMA:
 *       clnt_rdma_tli_create with the rdmatest upper-layer binding; TCP:
 *       clnt_tli_create with the "tcp" netconfig, which is what
 *       clnt_create(host, ..., "tcp") does once rpcbind has given it the
 *       address.  ECHO sends SIZE bytes and checks the reply's length and
 *       end bytes.  Connections are made before the timed part.
 *       Prints one line:
 *           calls N seconds T rate R p50_ms A p99_ms B client_cpu C server_cpu D
 *       where the CPU figures are user+system seconds of this process and
 *       of SERVER_PID (from /proc, "-" without it) over the timed part.
 *       Exits 1 if any call failed.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "rdmatest_support.h"

#define PROG "rpc_bench"
#define MAX_THREADS 256

static const struct timeval call_tv = { .tv_sec = 60 };

struct worker {
	pthread_t tid;
	CLIENT *cl;
	unsigned long calls;     /* fixed number of calls, or 0: until the deadline */
	double deadline;
	const uint8_t *payload;
	uint32_t size;
	int echo;
	double *lat;
	size_t nlat, caplat;
	unsigned long failed;
};

static pthread_barrier_t start_line;
static double t_start;

static int usage(void)
{
	fprintf(stderr, "usage: %s serve rdma|tcp ADDR\n"
			"       %s call rdma|tcp ADDR PORT null|echo SIZE THREADS CALLS|Ns each|shared [SERVER_PID]\n",
		PROG, PROG);
	return 2;
}

/* ---- server ---------------------------------------------------------------------------------- */

static int serve(const char *tr, const char *addr)
{
	SVCXPRT *x;
	unsigned int port;

	if (!strcmp(tr, "rdma")) {
		rdmatest_raise_memlock();
		x = rdmatest_listen(PROG, addr, NULL, NULL);
		if (!x)
			return 1;
		port = x->xp_port;
	} else if (!strcmp(tr, "tcp")) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fam = rdmatest_parse_addr(addr, 0, &ss), fd;

		if (!fam)
			return usage();
		fd = socket(fam, SOCK_STREAM, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&ss, fam == AF_INET ? sizeof(struct sockaddr_in)
									   : sizeof(struct sockaddr_in6)) ||
		    listen(fd, 128) || getsockname(fd, (struct sockaddr *)&ss, &len)) {
			perror(PROG ": tcp listener");
			return 1;
		}
		port = ntohs(fam == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					    : ((struct sockaddr_in6 *)&ss)->sin6_port);
		x = svc_vc_create(fd, 0, 0);
		if (!x || !svc_reg(x, RDMATEST_PROG, RDMATEST_V1, rdmatest_dispatch, NULL)) {
			fprintf(stderr, "%s: svc_vc_create/svc_reg failed\n", PROG);
			return 1;
		}
	} else {
		return usage();
	}
	printf("port %u\n", port);
	fflush(stdout);
	svc_run();
	fprintf(stderr, "%s: svc_run returned\n", PROG);
	return 1;
}

/* ---- client ---------------------------------------------------------------------------------- */

static CLIENT *connect_to(const char *tr, const char *addr, uint16_t port)
{
	struct sockaddr_storage ss;
	int fam = rdmatest_parse_addr(addr, port, &ss);
	CLIENT *cl;

	if (!strcmp(tr, "rdma")) {
		struct rpcrdma_options o;

		rpcrdma_options_init(&o);
		o.ulb = &rdmatest_ulb;
		cl = clnt_rdma_tli_create((struct sockaddr *)&ss, RDMATEST_PROG, RDMATEST_V1, &o);
	} else {
		struct netconfig *nc = getnetconfigent(fam == AF_INET6 ? "tcp6" : "tcp");
		struct netbuf nb = { .buf = &ss,
				     .len = fam == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6) };

		nb.maxlen = nb.len;
		cl = nc ? clnt_tli_create(RPC_ANYFD, nc, &nb, RDMATEST_PROG, RDMATEST_V1, 0, 0) : NULL;
		if (nc)
			freenetconfigent(nc);
	}
	if (!cl)
		fprintf(stderr, "%s: %s", PROG, clnt_spcreateerror(addr));
	return cl;
}

static void record(struct worker *w, double dt)
{
	if (w->nlat == w->caplat) {
		size_t n = w->caplat ? 2 * w->caplat : 4096;
		double *p = realloc(w->lat, n * sizeof(*p));

		if (!p)
			return;
		w->lat = p;
		w->caplat = n;
	}
	w->lat[w->nlat++] = dt;
}

static int one_call(struct worker *w)
{
	enum clnt_stat st;

	if (!w->echo)
		return rdmatest_call_null(w->cl, call_tv) == RPC_SUCCESS;
	rdmatest_data arg = { .rdmatest_data_len = w->size, .rdmatest_data_val = (char *)w->payload };
	rdmatest_data res = { 0 };
	int ok;

	st = clnt_call(w->cl, RDMATEST_ECHO, (xdrproc_t)xdr_rdmatest_data, (char *)&arg,
		       (xdrproc_t)xdr_rdmatest_data, (char *)&res, call_tv);
	ok = st == RPC_SUCCESS && res.rdmatest_data_len == w->size &&
	     (!w->size || (res.rdmatest_data_val[0] == (char)w->payload[0] &&
			   res.rdmatest_data_val[w->size - 1] == (char)w->payload[w->size - 1]));
	if (st == RPC_SUCCESS)
		clnt_freeres(w->cl, (xdrproc_t)xdr_rdmatest_data, (char *)&res);
	return ok;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long i = 0;

	pthread_barrier_wait(&start_line);
	for (;;) {
		double t0 = rdmatest_now(), t1;

		if (w->calls ? i >= w->calls : t0 >= w->deadline)
			break;
		if (!one_call(w)) {
			w->failed++;
			if (w->failed <= 3)
				fprintf(stderr, "%s: call failed\n", PROG);
		}
		t1 = rdmatest_now();
		record(w, t1 - t0);
		i++;
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double cpu_of_pid(const char *pid)
{
	char path[64], buf[4096], *p;
	unsigned long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double cpu_self(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static int call(int argc, char **argv)
{
	const char *tr = argv[0], *addr = argv[1], *spid = argc > 8 ? argv[8] : NULL;
	int shared = !strcmp(argv[7], "shared");
	unsigned int port = (unsigned)atoi(argv[2]), threads = (unsigned)atoi(argv[5]);
	int echo = !strcmp(argv[3], "echo");
	uint32_t size = (uint32_t)strtoul(argv[4], NULL, 0);
	const char *amount = argv[6];
	size_t la = strlen(amount);
	double seconds = 0, c0, c1, s0 = -1, s1 = -1, t_end;
	unsigned long total = 0, failed = 0;
	static struct worker w[MAX_THREADS];
	uint8_t *payload;
	double *all;
	size_t n = 0;

	if ((strcmp(tr, "rdma") && strcmp(tr, "tcp")) || !port || !threads || threads > MAX_THREADS ||
	    (!echo && strcmp(argv[3], "null")) || size > RDMATEST_MAX_DATA || !la ||
	    (!shared && strcmp(argv[7], "each")))
		return usage();
	if (amount[la - 1] == 's')
		seconds = atof(amount);
	else
		total = strtoul(amount, NULL, 0);
	if (!seconds && !total)
		return usage();
	rdmatest_raise_memlock();
	payload = malloc(size ? size : 1);
	if (!payload)
		return 1;
	rdmatest_fill(payload, size, 7);
	for (unsigned int t = 0; t < threads; t++) {
		w[t] = (struct worker){ .payload = payload, .size = size, .echo = echo };
		w[t].cl = shared && t ? w[0].cl : connect_to(tr, addr, (uint16_t)port);
		if (!w[t].cl)
			return 1;
		if (total)
			w[t].calls = total / threads + (t < total % threads);
	}
	/* one call per connection first: the timed part starts warm */
	for (unsigned int t = 0; t < (shared ? 1 : threads); t++)
		if (rdmatest_call_null(w[t].cl, call_tv) != RPC_SUCCESS) {
			fprintf(stderr, "%s: first NULL call failed\n", PROG);
			return 1;
		}
	pthread_barrier_init(&start_line, NULL, threads + 1);
	for (unsigned int t = 0; t < threads; t++)
		if (pthread_create(&w[t].tid, NULL, worker_main, &w[t])) {
			fprintf(stderr, "%s: pthread_create failed\n", PROG);
			return 1;
		}
	if (spid)
		s0 = cpu_of_pid(spid);
	c0 = cpu_self();
	t_start = rdmatest_now();
	for (unsigned int t = 0; t < threads; t++)
		w[t].deadline = t_start + seconds;
	pthread_barrier_wait(&start_line);
	total = 0;
	for (unsigned int t = 0; t < threads; t++) {
		pthread_join(w[t].tid, NULL);
		total += w[t].nlat;
		failed += w[t].failed;
	}
	t_end = rdmatest_now();
	c1 = cpu_self();
	if (spid)
		s1 = cpu_of_pid(spid);
	all = malloc((total ? total : 1) * sizeof(*all));
	if (!all)
		return 1;
	for (unsigned int t = 0; t < threads; t++) {
		memcpy(all + n, w[t].lat, w[t].nlat * sizeof(*all));
		n += w[t].nlat;
	}
	qsort(all, n, sizeof(*all), cmp_double);
	printf("calls %lu seconds %.3f rate %.1f p50_ms %.3f p99_ms %.3f client_cpu %.3f server_cpu ", total,
	       t_end - t_start, total / (t_end - t_start), n ? all[n / 2] * 1e3 : 0,
	       n ? all[(size_t)((double)(n - 1) * 0.99)] * 1e3 : 0, c1 - c0);
	if (s0 >= 0 && s1 >= 0)
		printf("%.3f\n", s1 - s0);
	else
		printf("-\n");
	for (unsigned int t = 0; t < (shared ? 1 : threads); t++)
		clnt_destroy(w[t].cl);
	if (failed)
		fprintf(stderr, "%s: %lu of %lu calls failed\n", PROG, failed, total);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "serve"))
		return serve(argv[2], argv[3]);
	if ((argc == 10 || argc == 11) && !strcmp(argv[1], "call"))
		return call(argc - 2, argv + 2);
	return usage();
}
