/*
 * rpc_load: many RPC-over-RDMA clients, each shared by many threads,
 * against one svc_rdma server for a fixed time (issue 7, "Load").  The
 * server is a child process (tests/integration/support/rdmatest_child.c)
 * serving the rdmatest program; CLIENTS CLIENT handles (one RDMA
 * connection each) are spread over PROCS client processes, and THREADS
 * threads call through each CLIENT until SECONDS have passed: NULL,
 * small ECHO (inline), WRITE with a read chunk and READ with a write
 * chunk.  Every reply is checked: ECHO returns its payload, WRITE's
 * count and checksum match what was sent, READ's data is the stream of
 * the call's seed.  The server's VmRSS is sampled during the run; it
 * must be flat: the sample at the end, with every connection still up,
 * at most RSS_SLACK_KIB above the sample after warm-up (a third of the
 * run).  At the end every client disconnects and the server must have
 * destroyed every connection and closed their descriptors.
 *
 *   rpc_load PROVIDER ADDR [CLIENTS THREADS SECONDS PROCS]   (64 16 60 4)
 *
 * Prints the calls per form, errors (failed calls), lost replies
 * (calls that timed out), mismatched replies, the RSS samples and a
 * "figure: load:" line; exits 0 only when every call got its own reply,
 * the RSS stayed flat and the server cleaned up.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rdmatest_child.h"
#include "rdmatest_support.h"

#define PROG "rpc_load"
#define MAX_PROCS 64
#define MAX_CLIENTS 256
#define MAX_THREADS 64          /* per CLIENT */
#define IO_MAX 16384u
#define ECHO_MAX 1024u          /* small ECHO: always inline */
#define RSS_SLACK_KIB 4096L     /* "flat": end <= warm-up + 4 MiB */
#define MAX_REPORTS 5           /* failed calls printed per thread */
#define READY_TIMEOUT_MS 300000 /* connecting every CLIENT */

enum form { F_NULL, F_ECHO, F_WRITE, F_READ, NFORMS };
static const char *const form_name[NFORMS] = { "NULL", "ECHO", "WRITE", "READ" };

/* WRITE and READ sizes: all above the 4096-byte inline threshold, so each moves by RDMA. */
static const uint32_t io_sizes[] = { 8192, 12289, 16384 };
#define NIO_SIZES (sizeof(io_sizes) / sizeof(io_sizes[0]))

/* A lost reply shows as RPC_TIMEDOUT; generous, since 1024 threads share 2 emulated CPUs. */
static const struct timeval call_tv = { .tv_sec = 60 };

struct load_stats {
	uint64_t done[NFORMS];  /* correct replies */
	uint64_t errors;        /* calls that failed other than by timing out */
	uint64_t lost;          /* calls that timed out: no reply */
	uint64_t mismatched;    /* replies that differ from what was expected */
	uint64_t min_thread;    /* fewest correct replies of one thread */
	double max_latency;
};

struct thread_ctx {
	pthread_t tid;
	CLIENT *cl;
	uint32_t id;            /* global thread number: the low bits of each call's number */
	double deadline;
	pthread_barrier_t *start;
	uint8_t *buf, *want;
	struct load_stats st;
	unsigned int reported;
};

struct config {
	const char *addr;
	unsigned int clients, threads, seconds, procs;
	uint16_t port;
};

/* ---- one call ------------------------------------------------------------------------------ */

/* 3/8 NULL, 3/8 ECHO, 1/8 WRITE, 1/8 READ. */
static enum form form_of(uint32_t i)
{
	static const enum form by_eighth[8] = { F_NULL, F_NULL, F_NULL, F_ECHO,
						F_ECHO, F_ECHO, F_WRITE, F_READ };

	return by_eighth[rdmatest_mix(i) % 8];
}

static uint32_t size_of(enum form f, uint32_t i)
{
	uint32_t h = rdmatest_mix(i ^ 0x9e3779b9u);

	return f == F_ECHO ? h % (ECHO_MAX + 1) : io_sizes[h % NIO_SIZES];
}

static void __attribute__((format(printf, 2, 3))) report(struct thread_ctx *t, const char *fmt, ...)
{
	va_list ap;

	if (t->reported++ >= MAX_REPORTS)
		return;
	fprintf(stderr, "%s: thread %u: ", PROG, t->id);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void account(struct thread_ctx *t, uint32_t i, enum form f, uint32_t size,
		    enum clnt_stat st, bool same)
{
	if (st == RPC_TIMEDOUT) {
		t->st.lost++;
		report(t, "call %#x %s %u bytes: no reply (%s)", i, form_name[f], size,
		       clnt_sperrno(st));
	} else if (st != RPC_SUCCESS) {
		t->st.errors++;
		report(t, "call %#x %s %u bytes: %s", i, form_name[f], size, clnt_sperrno(st));
	} else if (!same) {
		t->st.mismatched++;
		report(t, "call %#x %s %u bytes: reply differs from what was expected", i,
		       form_name[f], size);
	} else {
		t->st.done[f]++;
	}
}

static void call_echo(struct thread_ctx *t, uint32_t i, uint32_t size)
{
	rdmatest_data in = { size, (char *)t->buf }, out = { 0, NULL };
	enum clnt_stat st;

	rdmatest_fill(t->buf, size, i);
	st = clnt_call(t->cl, RDMATEST_ECHO, (xdrproc_t)xdr_rdmatest_data, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_data, (char *)&out, call_tv);
	account(t, i, F_ECHO, size, st,
		out.rdmatest_data_len == size &&
			(!size || !memcmp(out.rdmatest_data_val, t->buf, size)));
	if (st == RPC_SUCCESS)
		clnt_freeres(t->cl, (xdrproc_t)xdr_rdmatest_data, (char *)&out);
}

static void call_write(struct thread_ctx *t, uint32_t i, uint32_t size)
{
	rdmatest_write_args in = { i, { size, (char *)t->buf } };
	rdmatest_write_res out = { 0, 0 };
	enum clnt_stat st;

	rdmatest_fill(t->buf, size, i);
	st = clnt_call(t->cl, RDMATEST_WRITE, (xdrproc_t)xdr_rdmatest_write_args, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_write_res, (char *)&out, call_tv);
	account(t, i, F_WRITE, size, st,
		out.count == size && out.checksum == rdmatest_fnv1a(t->buf, size));
}

static void call_read(struct thread_ctx *t, uint32_t i, uint32_t size)
{
	rdmatest_read_args in = { size, i };
	rdmatest_read_res out;
	enum clnt_stat st;

	memset(&out, 0, sizeof(out));
	st = clnt_call(t->cl, RDMATEST_READ, (xdrproc_t)xdr_rdmatest_read_args, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_read_res, (char *)&out, call_tv);
	rdmatest_fill(t->want, size, i);
	account(t, i, F_READ, size, st,
		out.count == size && out.data.rdmatest_data_len == size &&
			!memcmp(out.data.rdmatest_data_val, t->want, size));
	if (st == RPC_SUCCESS)
		clnt_freeres(t->cl, (xdrproc_t)xdr_rdmatest_read_res, (char *)&out);
}

static void one_call(struct thread_ctx *t, uint32_t i)
{
	enum form f = form_of(i);
	uint32_t size = size_of(f, i);

	switch (f) {
	case F_NULL:
		account(t, i, F_NULL, 0, rdmatest_call_null(t->cl, call_tv), true);
		break;
	case F_ECHO:
		call_echo(t, i, size);
		break;
	case F_WRITE:
		call_write(t, i, size);
		break;
	default:
		call_read(t, i, size);
		break;
	}
}

/* Call number k of thread id: the thread in the low 10 bits, so every call's seed is unique. */
static void *thread_main(void *arg)
{
	struct thread_ctx *t = arg;

	pthread_barrier_wait(t->start);
	for (uint32_t k = 0;; k++) {
		double t0 = rdmatest_now(), dt;

		if (t0 >= t->deadline)
			break;
		one_call(t, t->id | k << 10);
		dt = rdmatest_now() - t0;
		if (dt > t->st.max_latency)
			t->st.max_latency = dt;
	}
	return NULL;
}

/* ---- a client process -------------------------------------------------------------------- */

static uint64_t total_done(const struct load_stats *s)
{
	return s->done[F_NULL] + s->done[F_ECHO] + s->done[F_WRITE] + s->done[F_READ];
}

/* Add @s to @sum; min_thread is the smaller of the two. */
static void stats_add(struct load_stats *sum, const struct load_stats *s)
{
	for (int f = 0; f < NFORMS; f++)
		sum->done[f] += s->done[f];
	sum->errors += s->errors;
	sum->lost += s->lost;
	sum->mismatched += s->mismatched;
	if (s->max_latency > sum->max_latency)
		sum->max_latency = s->max_latency;
	if (s->min_thread < sum->min_thread)
		sum->min_thread = s->min_thread;
}

static CLIENT *connect_one(const struct config *cfg, int *err)
{
	struct sockaddr_storage ss;
	struct rpcrdma_options o;
	CLIENT *cl;

	rdmatest_parse_addr(cfg->addr, cfg->port, &ss);
	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	cl = clnt_rdma_tli_create((struct sockaddr *)&ss, RDMATEST_PROG, RDMATEST_V1, &o);
	if (!cl) {
		*err = rpc_createerr.cf_error.re_errno ? rpc_createerr.cf_error.re_errno : EIO;
		fprintf(stderr, "%s: %s", PROG, clnt_spcreateerror(cfg->addr));
	} else if (rdmatest_call_null(cl, call_tv) != RPC_SUCCESS) {
		*err = EIO;
		fprintf(stderr, "%s: first NULL call failed\n", PROG);
	}
	return cl;
}

/* Read one byte from @fd (the parent's go or exit); false on EOF. */
static bool await_byte(int fd, char want)
{
	char b;

	return read(fd, &b, 1) == 1 && b == want;
}

/*
 * Client process @p: its share of the CLIENTs and their threads.  Tells
 * the parent 'r' when connected, runs on 'g', writes its stats, and
 * destroys its CLIENTs on 'x'.
 */
static int client_proc(const struct config *cfg, unsigned int p, int to_parent, int from_parent)
{
	unsigned int first = p * cfg->clients / cfg->procs, last = (p + 1) * cfg->clients / cfg->procs;
	unsigned int ncl = last - first, nthr = ncl * cfg->threads;
	CLIENT *cl[MAX_CLIENTS] = { NULL };
	struct thread_ctx *t = calloc(nthr, sizeof(*t));
	struct load_stats sum = { .min_thread = UINT64_MAX };
	pthread_barrier_t start;
	double deadline;
	int err = t ? 0 : ENOMEM;

	rdmatest_raise_memlock();
	for (unsigned int c = 0; c < ncl && !err; c++)
		cl[c] = connect_one(cfg, &err);
	if (err) {
		char msg[1 + sizeof(err)] = { 'f' };

		memcpy(msg + 1, &err, sizeof(err));
		_exit(write(to_parent, msg, sizeof(msg)) == (ssize_t)sizeof(msg) ? 1 : 2);
	}
	pthread_barrier_init(&start, NULL, nthr + 1);
	for (unsigned int i = 0; i < nthr; i++) {
		t[i] = (struct thread_ctx){ .cl = cl[i / cfg->threads], .start = &start,
					    .id = first * cfg->threads + i };
		t[i].buf = malloc(IO_MAX);
		t[i].want = malloc(IO_MAX);
		if (!t[i].buf || !t[i].want || pthread_create(&t[i].tid, NULL, thread_main, &t[i])) {
			fprintf(stderr, "%s: cannot start thread %u\n", PROG, t[i].id);
			_exit(1);
		}
	}
	if (write(to_parent, "r", 1) != 1 || !await_byte(from_parent, 'g'))
		_exit(1);
	deadline = rdmatest_now() + cfg->seconds;
	for (unsigned int i = 0; i < nthr; i++)
		t[i].deadline = deadline;
	pthread_barrier_wait(&start);
	for (unsigned int i = 0; i < nthr; i++) {
		pthread_join(t[i].tid, NULL);
		t[i].st.min_thread = total_done(&t[i].st);
		stats_add(&sum, &t[i].st);
		free(t[i].buf);
		free(t[i].want);
	}
	if (write(to_parent, &sum, sizeof(sum)) != sizeof(sum) || !await_byte(from_parent, 'x'))
		_exit(1);
	for (unsigned int c = 0; c < ncl; c++)
		clnt_destroy(cl[c]);
	free(t);
	_exit(0);
}

/* ---- the parent ------------------------------------------------------------------------- */

struct proc {
	pid_t pid;
	int to, from;
};

static bool start_procs(const struct config *cfg, struct proc *pr)
{
	for (unsigned int p = 0; p < cfg->procs; p++) {
		int down[2], up[2];

		if (pipe(down) || pipe(up))
			return false;
		fflush(NULL);
		pr[p].pid = fork();
		if (pr[p].pid < 0)
			return false;
		if (pr[p].pid == 0) {
			close(down[1]);
			close(up[0]);
			client_proc(cfg, p, up[1], down[0]);
		}
		close(down[0]);
		close(up[1]);
		pr[p].to = down[1];
		pr[p].from = up[0];
	}
	return true;
}

/* Wait for @n bytes from process @pr, at most @timeout_ms; false on EOF or timeout. */
static bool read_from(const struct proc *pr, void *buf, size_t n, int timeout_ms)
{
	struct pollfd pfd = { .fd = pr->from, .events = POLLIN };
	size_t got = 0;

	while (got < n) {
		ssize_t r;

		if (poll(&pfd, 1, timeout_ms) <= 0)
			return false;
		r = read(pr->from, (char *)buf + got, n - got);
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

/* Every process connected: 'r' from each; one that could not connect sends 'f' and its errno. */
static bool await_ready(const struct config *cfg, const struct proc *pr)
{
	bool ok = true;

	for (unsigned int p = 0; p < cfg->procs; p++) {
		int err = 0;
		char r;

		if (!read_from(&pr[p], &r, 1, READY_TIMEOUT_MS)) {
			fprintf(stderr, "%s: client process %u did not get ready\n", PROG, p);
			ok = false;
		} else if (r != 'r') {
			read_from(&pr[p], &err, sizeof(err), 1000);
			fprintf(stderr, "%s: client process %u could not connect: %s\n", PROG, p,
				strerror(err));
			ok = false;
		}
	}
	return ok;
}

static void send_all(const struct config *cfg, const struct proc *pr, char b)
{
	for (unsigned int p = 0; p < cfg->procs; p++)
		if (write(pr[p].to, &b, 1) != 1)
			fprintf(stderr, "%s: client process %u is gone\n", PROG, p);
}

static bool reap_all(const struct config *cfg, struct proc *pr)
{
	bool ok = true;

	for (unsigned int p = 0; p < cfg->procs; p++) {
		int status;

		close(pr[p].to);
		close(pr[p].from);
		if (waitpid(pr[p].pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "%s: client process %u failed (status %#x)\n", PROG, p, status);
			ok = false;
		}
	}
	return ok;
}

struct rss_watch {
	long warm, end, max;
};

/* Sleep through the run, sampling the server's RSS every 5 s; the sample at @warm_s is "warm". */
static void watch_run(pid_t server, unsigned int seconds, double t0, struct rss_watch *w)
{
	unsigned int warm_s = seconds / 3;

	for (unsigned int s = 5; s <= seconds; s += 5) {
		long kib;

		while (rdmatest_now() < t0 + s)
			usleep(100000);
		kib = rdmatest_rss_kib(server);
		printf("%s: %3u s: server RSS %ld KiB (anon %ld, file %ld, shmem %ld)\n", PROG, s, kib,
		       rdmatest_status_kib(server, "RssAnon"), rdmatest_status_kib(server, "RssFile"),
		       rdmatest_status_kib(server, "RssShmem"));
		fflush(stdout);
		if (kib > w->max)
			w->max = kib;
		if (s <= warm_s || w->warm < 0)
			w->warm = kib;
	}
}

static bool collect(const struct config *cfg, const struct proc *pr, struct load_stats *sum)
{
	int timeout_ms = (int)(call_tv.tv_sec + 120) * 1000;
	bool ok = true;

	*sum = (struct load_stats){ .min_thread = UINT64_MAX };
	for (unsigned int p = 0; p < cfg->procs; p++) {
		struct load_stats s;

		if (!read_from(&pr[p], &s, sizeof(s), timeout_ms)) {
			fprintf(stderr, "%s: no result from client process %u\n", PROG, p);
			ok = false;
			continue;
		}
		stats_add(sum, &s);
	}
	return ok;
}

static void print_result(const char *label, const struct config *cfg, const struct load_stats *s,
			 double elapsed, const struct rss_watch *w)
{
	uint64_t calls = total_done(s) + s->errors + s->lost + s->mismatched;

	for (int f = 0; f < NFORMS; f++)
		printf("%s: %s: %-5s %8llu correct replies\n", PROG, label, form_name[f],
		       (unsigned long long)s->done[f]);
	printf("%s: %s: %llu calls in %.1f s (%.0f calls/s), fewest correct replies of one "
	       "thread %llu, slowest call %.2f s\n", PROG, label, (unsigned long long)calls, elapsed,
	       calls / elapsed, (unsigned long long)s->min_thread, s->max_latency);
	printf("figure: load: %s: %u clients x %u threads, %u s, %llu calls, %llu errors, %llu lost, "
	       "%llu mismatched; server RSS warm-up %ld KiB end %ld KiB (max %ld, flat: end <= "
	       "warm-up + %ld KiB)\n", label, cfg->clients, cfg->threads, cfg->seconds,
	       (unsigned long long)calls, (unsigned long long)s->errors,
	       (unsigned long long)s->lost, (unsigned long long)s->mismatched, w->warm, w->end,
	       w->max, RSS_SLACK_KIB);
}

/* Every client gone: the server must have destroyed each connection and closed its fds. */
static bool server_cleaned_up(struct rdmatest_child *server)
{
	unsigned int conns = 0;
	int extra_fds = 0, status;
	bool ok;

	ok = rdmatest_child_drain(server, 60, &conns, &extra_fds) && !conns && !extra_fds;
	printf("%s: after the clients left: server connections %u, fds beyond the listener's %d\n",
	       PROG, conns, extra_fds);
	status = rdmatest_child_stop(PROG, server);
	if (status)
		fprintf(stderr, "%s: the server exited with status %d\n", PROG, status);
	return ok && status == 0;
}

static bool parse_args(int argc, char **argv, struct config *cfg)
{
	*cfg = (struct config){ .addr = argv[2], .clients = 64, .threads = 16, .seconds = 60,
				.procs = 4 };
	if (argc > 3)
		cfg->clients = (unsigned)strtoul(argv[3], NULL, 10);
	if (argc > 4)
		cfg->threads = (unsigned)strtoul(argv[4], NULL, 10);
	if (argc > 5)
		cfg->seconds = (unsigned)strtoul(argv[5], NULL, 10);
	if (argc > 6)
		cfg->procs = (unsigned)strtoul(argv[6], NULL, 10);
	return argc <= 7 && cfg->clients && cfg->clients <= MAX_CLIENTS && cfg->threads &&
	       cfg->threads <= MAX_THREADS && cfg->seconds >= 3 && cfg->procs &&
	       cfg->procs <= MAX_PROCS && cfg->procs <= cfg->clients &&
	       cfg->clients * cfg->threads < 1024u * 1024u;
}

int main(int argc, char **argv)
{
	static struct proc pr[MAX_PROCS];
	struct rss_watch w = { -1, -1, -1 };
	struct rdmatest_child server;
	struct load_stats sum;
	struct config cfg;
	char label[96];
	double t0, t1;
	bool ok;

	if (argc < 3 || !parse_args(argc, argv, &cfg)) {
		fprintf(stderr, "usage: %s PROVIDER ADDR [CLIENTS THREADS SECONDS PROCS]\n", PROG);
		return 2;
	}
	snprintf(label, sizeof(label), "%s %s", argv[1], strchr(argv[2], ':') ? "IPv6" : "IPv4");
	signal(SIGPIPE, SIG_IGN);
	if (!rdmatest_child_start(PROG, cfg.addr, NULL, &server))
		return 1;
	cfg.port = server.port;
	t0 = rdmatest_now();
	if (!start_procs(&cfg, pr) || !await_ready(&cfg, pr)) {
		for (unsigned int p = 0; p < cfg.procs; p++)
			if (pr[p].pid > 0)
				kill(pr[p].pid, SIGKILL);
		reap_all(&cfg, pr);
		rdmatest_child_stop(PROG, &server);
		return 1;
	}
	printf("%s: %s: %u CLIENTs in %u processes connected in %.1f s; server RSS %ld KiB\n", PROG,
	       label, cfg.clients, cfg.procs, rdmatest_now() - t0, rdmatest_rss_kib(server.pid));
	fflush(stdout);
	send_all(&cfg, pr, 'g');
	t0 = rdmatest_now();
	watch_run(server.pid, cfg.seconds, t0, &w);
	ok = collect(&cfg, pr, &sum);
	t1 = rdmatest_now();
	w.end = rdmatest_rss_kib(server.pid);
	if (w.end > w.max)
		w.max = w.end;
	send_all(&cfg, pr, 'x');
	ok = reap_all(&cfg, pr) && ok;
	print_result(label, &cfg, &sum, t1 - t0, &w);
	ok = ok && !sum.errors && !sum.lost && !sum.mismatched && total_done(&sum) &&
	     w.warm > 0 && w.end > 0 && w.end <= w.warm + RSS_SLACK_KIB;
	if (w.end > w.warm + RSS_SLACK_KIB)
		fprintf(stderr, "%s: the server's RSS grew by %ld KiB after warm-up\n", PROG,
			w.end - w.warm);
	ok = server_cleaned_up(&server) && ok;
	printf("%s: %s: %s\n", PROG, label, ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
