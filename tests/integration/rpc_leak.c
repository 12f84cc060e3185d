/*
 * rpc_leak: CYCLES connect / call / destroy cycles of an RPC-over-RDMA
 * CLIENT against one svc_rdma server in a child process
 * (tests/integration/support/rdmatest_child.c), looking for what a
 * cycle leaves behind on either side (issue 7, "Leaks").  Each cycle is
 * clnt_rdma_tli_create, one checked call (NULL, ECHO, WRITE with a read
 * chunk or READ with a write chunk, in turn) and clnt_destroy.  After
 * the first cycle (which opens what librdmacm keeps per process, and
 * siw's guard CQ, rpcrdma/devices.c) and after the last, it counts this
 * process's and the server's open file descriptors and their queue
 * pairs, completion queues, memory regions, protection domains and
 * rdma_cm ids (`rdma resource show`); the counts must not change.  The
 * server must then have no connection left; it exits normally.  Built
 * with LeakSanitizer (build/lsan/bin, or the ASan build), it checks this
 * process's heap after the cycles, the server's at its exit, and, with a
 * CLIENT connected, the heap of a forked child's child.
 *
 *   rpc_leak PROVIDER ADDR [CYCLES]   (default 10000)
 *
 * Prints the time per cycle, the counts and a "figure: leaks:" line;
 * exits 0 only when every call succeeded and nothing leaked.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "rdmatest_child.h"
#include "rdmatest_support.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_LSAN 1
#endif
#endif
#ifdef RPCRDMA_LSAN_BUILD /* build/lsan: LeakSanitizer alone, see integration.mk */
#define HAVE_LSAN 1
#endif
#ifdef HAVE_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#define PROG "rpc_leak"
#define IO_SIZE 8192u /* WRITE and READ: above the inline threshold, so chunks */

static const struct timeval call_tv = { .tv_sec = 30 };

/* "fds A/B, qp A/B, cq A/B, ..." */
static void hold_print(const char *who, const struct rdmatest_holdings *a,
		       const struct rdmatest_holdings *b)
{
	printf("%s: %s: fds %d/%d", PROG, who, a->fds, b->fds);
	for (int k = 0; k < RDMATEST_RES_KINDS; k++)
		printf(", %s %d/%d", rdmatest_res_kinds[k], a->res[k], b->res[k]);
	printf(" (after the first cycle/at the end)%s\n",
	       rdmatest_holdings_same(a, b) ? "" : ": CHANGED");
}

/* ---- one cycle ---------------------------------------------------------------------------- */

static enum clnt_stat call_echo(CLIENT *cl, uint32_t i, uint8_t *buf)
{
	uint32_t size = 1 + i % 1000;
	rdmatest_data in = { size, (char *)buf }, out = { 0, NULL };
	enum clnt_stat st;

	rdmatest_fill(buf, size, i);
	st = clnt_call(cl, RDMATEST_ECHO, (xdrproc_t)xdr_rdmatest_data, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_data, (char *)&out, call_tv);
	if (st == RPC_SUCCESS) {
		if (out.rdmatest_data_len != size || memcmp(out.rdmatest_data_val, buf, size))
			st = RPC_CANTDECODERES;
		clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_data, (char *)&out);
	}
	return st;
}

static enum clnt_stat call_write(CLIENT *cl, uint32_t i, uint8_t *buf)
{
	rdmatest_write_args in = { i, { IO_SIZE, (char *)buf } };
	rdmatest_write_res out = { 0, 0 };
	enum clnt_stat st;

	rdmatest_fill(buf, IO_SIZE, i);
	st = clnt_call(cl, RDMATEST_WRITE, (xdrproc_t)xdr_rdmatest_write_args, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_write_res, (char *)&out, call_tv);
	if (st == RPC_SUCCESS &&
	    (out.count != IO_SIZE || out.checksum != rdmatest_fnv1a(buf, IO_SIZE)))
		st = RPC_CANTDECODERES;
	return st;
}

static enum clnt_stat call_read(CLIENT *cl, uint32_t i, uint8_t *buf)
{
	rdmatest_read_args in = { IO_SIZE, i };
	rdmatest_read_res out;
	enum clnt_stat st;

	memset(&out, 0, sizeof(out));
	st = clnt_call(cl, RDMATEST_READ, (xdrproc_t)xdr_rdmatest_read_args, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_read_res, (char *)&out, call_tv);
	if (st == RPC_SUCCESS) {
		rdmatest_fill(buf, IO_SIZE, i);
		if (out.count != IO_SIZE || out.data.rdmatest_data_len != IO_SIZE ||
		    memcmp(out.data.rdmatest_data_val, buf, IO_SIZE))
			st = RPC_CANTDECODERES; /* reported as a wrong reply */
		clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_read_res, (char *)&out);
	}
	return st;
}

/* Seconds spent connecting, calling and destroying, over all cycles. */
static double t_connect, t_call, t_destroy;

/* Connect, make call @i (its form by i % 4), destroy.  Prints why when it fails. */
static bool cycle(const struct sockaddr *addr, const struct rpcrdma_options *o, uint32_t i,
		  uint8_t *buf)
{
	double t0 = rdmatest_now(), t1, t2;
	CLIENT *cl = clnt_rdma_tli_create(addr, RDMATEST_PROG, RDMATEST_V1, o);
	enum clnt_stat st;

	t1 = rdmatest_now();
	t_connect += t1 - t0;
	if (!cl) {
		fprintf(stderr, "%s: cycle %u: %s", PROG, i, clnt_spcreateerror("connect"));
		return false;
	}
	switch (i % 4) {
	case 0:
		st = rdmatest_call_null(cl, call_tv);
		break;
	case 1:
		st = call_echo(cl, i, buf);
		break;
	case 2:
		st = call_write(cl, i, buf);
		break;
	default:
		st = call_read(cl, i, buf);
		break;
	}
	t2 = rdmatest_now();
	t_call += t2 - t1;
	if (st != RPC_SUCCESS)
		fprintf(stderr, "%s: cycle %u: call %u: %s after %.1f s\n", PROG, i, i % 4,
			clnt_sperrno(st), t2 - t1);
	clnt_destroy(cl);
	t_destroy += rdmatest_now() - t2;
	return st == RPC_SUCCESS;
}

/*
 * The counts prove something only if they see a connection's objects:
 * with one CLIENT connected (after a NULL call), each kind must count
 * more than in @base, taken with none.
 */
static bool counts_see_connection(const struct sockaddr *addr, const struct rpcrdma_options *o,
				  const struct rdmatest_holdings *base)
{
	CLIENT *cl = clnt_rdma_tli_create(addr, RDMATEST_PROG, RDMATEST_V1, o);
	struct rdmatest_holdings during;
	bool ok = true;

	if (!cl || rdmatest_call_null(cl, call_tv) != RPC_SUCCESS) {
		fprintf(stderr, "%s: the counting probe could not connect or call\n", PROG);
		if (cl)
			clnt_destroy(cl);
		return false;
	}
	rdmatest_holdings_count(getpid(), &during);
	clnt_destroy(cl);
	printf("%s: with one CLIENT connected:", PROG);
	for (int k = 0; k < RDMATEST_RES_KINDS; k++) {
		printf(" %s %d (%+d)", rdmatest_res_kinds[k], during.res[k], during.res[k] - base->res[k]);
		ok = ok && during.res[k] > base->res[k];
	}
	printf("%s\n", ok ? "" : ": `rdma resource show` misses a kind: its count proves nothing");
	return ok;
}

/* ---- main ------------------------------------------------------------------------------ */

/* LeakSanitizer's verdict on this process's heap now: "0", "SOME" or "not checked". */
static const char *heap_check(bool *ok)
{
#ifdef HAVE_LSAN
	if (__lsan_do_recoverable_leak_check()) {
		*ok = false;
		return "SOME (LSan report above)";
	}
	return "0 (LSan)";
#else
	(void)ok;
	return "not checked (built without LeakSanitizer)";
#endif
}

/*
 * A forked child's child, with a CLIENT connected in the grandparent
 * (on siw, so a guard CQ held: rpcrdma/devices.c): its heap must show
 * no leak either; the guards set aside in each generation stay
 * reachable.  The grandchild checks and _exits; its status comes back
 * through the child.  Returns the check's verdict line.
 */
#ifdef HAVE_LSAN
static CLIENT *volatile forked_client; /* reachable in the grandchild from a global, not a register */
#endif

static const char *fork_grandchild_heap(const struct sockaddr *addr,
					const struct rpcrdma_options *o, bool *ok)
{
#ifdef HAVE_LSAN
	CLIENT *cl = clnt_rdma_tli_create(addr, RDMATEST_PROG, RDMATEST_V1, o);
	int status = -1;
	pid_t pid;

	if (!cl || rdmatest_call_null(cl, call_tv) != RPC_SUCCESS) {
		*ok = false;
		return "not checked: no CLIENT";
	}
	forked_client = cl;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		pid_t grandchild = fork();

		if (grandchild == 0)
			_exit(__lsan_do_recoverable_leak_check() ? 1 : 0);
		if (grandchild < 0 || waitpid(grandchild, &status, 0) != grandchild)
			_exit(2);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 3);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		status = -1;
	forked_client = NULL;
	clnt_destroy(cl);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return "0 (LSan)";
	*ok = false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 1 ? "SOME (LSan report above)"
							      : "not checked: fork or wait failed";
#else
	(void)addr;
	(void)o;
	(void)ok;
	return "not checked (built without LeakSanitizer)";
#endif
}

/* Let librdmacm open its devices (kept for the life of the process) before counting fds. */
static void open_devices(void)
{
	struct ibv_context **devices = rdma_get_devices(NULL);

	if (devices)
		rdma_free_devices(devices);
}

/* Wait until the server has let go of every connection, then count what it holds. */
static bool server_idle(struct rdmatest_child *server, struct rdmatest_holdings *h)
{
	unsigned int conns = 0;
	int extra_fds = -1;
	bool ok = rdmatest_child_drain(server, 60, &conns, &extra_fds) && !conns && !extra_fds;

	if (!ok)
		fprintf(stderr, "%s: server: %u connections left, %d fds beyond the listener's\n",
			PROG, conns, extra_fds);
	rdmatest_holdings_count(server->pid, h);
	return ok;
}

static bool server_end(struct rdmatest_child *server, const struct rdmatest_holdings *first,
		       struct rdmatest_holdings *last)
{
	unsigned int conns = 0;
	int extra_fds = -1, status;
	bool ok;

	ok = rdmatest_child_drain(server, 60, &conns, &extra_fds) && !conns && !extra_fds;
	rdmatest_holdings_count(server->pid, last);
	hold_print("server", first, last);
	printf("%s: server: connections left %u, fds beyond the listener's %d\n", PROG, conns,
	       extra_fds);
	ok = rdmatest_holdings_same(first, last) && ok;
	status = rdmatest_child_stop(PROG, server);
	printf("%s: server: exit status %d (0: no connection left, fds as before listening%s)\n",
	       PROG, status,
#ifdef HAVE_LSAN
	       ", LSan found no leak"
#else
	       ""
#endif
	);
	return ok && status == 0;
}

int main(int argc, char **argv)
{
	unsigned long cycles = argc > 3 ? strtoul(argv[3], NULL, 10) : 10000;
	struct rdmatest_holdings mine_first, mine_last, server_first, server_last;
	struct rdmatest_child server;
	struct sockaddr_storage ss;
	struct rpcrdma_options o;
	static uint8_t buf[IO_SIZE];
	unsigned long failed = 0;
	double t0, elapsed;
	const char *heap;
	char label[96];
	bool ok = true;

	if (argc < 3 || argc > 4 || !cycles || !rdmatest_parse_addr(argv[2], 0, &ss)) {
		fprintf(stderr, "usage: %s PROVIDER ADDR [CYCLES]\n", PROG);
		return 2;
	}
	snprintf(label, sizeof(label), "%s %s", argv[1], strchr(argv[2], ':') ? "IPv6" : "IPv4");
	signal(SIGPIPE, SIG_IGN);
	rdmatest_raise_memlock();
	if (!rdmatest_child_start(PROG, argv[2], NULL, &server))
		return 1;
	rdmatest_parse_addr(argv[2], server.port, &ss);
	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	open_devices();
	t0 = rdmatest_now();
	failed += !cycle((struct sockaddr *)&ss, &o, 0, buf);
	rdmatest_holdings_count(getpid(), &mine_first);
	ok = counts_see_connection((struct sockaddr *)&ss, &o, &mine_first);
	ok = server_idle(&server, &server_first) && ok;
	printf("%s: %s: heap leaks in a forked child's child: %s\n", PROG, label,
	       fork_grandchild_heap((struct sockaddr *)&ss, &o, &ok));
	for (unsigned long i = 1; i < cycles; i++) {
		failed += !cycle((struct sockaddr *)&ss, &o, (uint32_t)i, buf);
		if ((i + 1) % 1000 == 0) {
			printf("%s: %s: %lu cycles, %.1f s, fds %d\n", PROG, label, i + 1,
			       rdmatest_now() - t0, rdmatest_fd_count(getpid()));
			fflush(stdout);
		}
	}
	elapsed = rdmatest_now() - t0;
	rdmatest_holdings_count(getpid(), &mine_last);
	hold_print("client", &mine_first, &mine_last);
	printf("%s: %s: per cycle: connect %.1f ms, call %.1f ms, destroy %.1f ms\n", PROG, label,
	       1e3 * t_connect / (double)cycles, 1e3 * t_call / (double)cycles,
	       1e3 * t_destroy / (double)cycles);
	ok = rdmatest_holdings_same(&mine_first, &mine_last) && !failed && ok;
	ok = server_end(&server, &server_first, &server_last) && ok;
	heap = heap_check(&ok);
	printf("figure: leaks: %s: %lu cycles in %.1f s (%.1f ms each), %lu failed; heap leaks %s; "
	       "fds before/after %d/%d; qp/cq/mr/pd/cm_id before/after %d/%d/%d/%d/%d -> "
	       "%d/%d/%d/%d/%d; server fds %d/%d, qp/cq/mr/pd/cm_id %d/%d/%d/%d/%d -> "
	       "%d/%d/%d/%d/%d\n",
	       label, cycles, elapsed, 1e3 * elapsed / (double)cycles, failed, heap,
	       mine_first.fds, mine_last.fds, mine_first.res[0], mine_first.res[1],
	       mine_first.res[2], mine_first.res[3], mine_first.res[4], mine_last.res[0],
	       mine_last.res[1], mine_last.res[2], mine_last.res[3], mine_last.res[4],
	       server_first.fds, server_last.fds, server_first.res[0], server_first.res[1],
	       server_first.res[2], server_first.res[3], server_first.res[4], server_last.res[0],
	       server_last.res[1], server_last.res[2], server_last.res[3], server_last.res[4]);
	printf("%s: %s: %s\n", PROG, label, ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
