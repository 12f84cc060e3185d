/*
 * rpc_rpcbind: rpcrdma's listeners registered with the real rpcbind.
 * A server thread serves the rdmatest program on an IPv4 and an IPv6
 * RDMA listener (svc_rdma_create + svc_rdma_reg).  Then:
 *   0. svc_rdma_reg() of the same program and version again, more times
 *      than a listener holds bindings (a server retrying after an
 *      rpcbind failure), succeeds each time;
 *   1. `rpcinfo` (RPCBPROC_DUMP) lists program 536871321 version 1 with
 *      netid rdma at the IPv4 listener's universal address and netid
 *      rdma6 at the IPv6 one, and nothing else for it;
 *   2. clnt_rdma_create() given only a host finds the server for netid
 *      NULL (must pick rdma), "rdma" and "rdma6", and NULL and ECHO
 *      calls succeed on the listener of the expected address family;
 *   3. svc_rdma_reg() while the server thread serves applies to a client
 *      already connected: a 64 KiB READ (its data in the offered write
 *      chunk) succeeds, fails with ERR_CHUNK once the program is bound to
 *      no upper-layer binding (the data fits neither inline nor in the
 *      8 bytes of reply room the call offers), and succeeds again once
 *      rdmatest_ulb is bound back, all on the client's first connection;
 *   4. after svc_unreg(), `rpcinfo` lists no entry of the program and
 *      clnt_rdma_create() fails with RPC_PROGNOTREGISTERED for each netid.
 * With --unreached HOST (run in a network namespace of its own, where no
 * rpcbind listens): clnt_rdma_create() fails with libtirpc's reason,
 * RPC_SYSTEMERROR and ECONNREFUSED, for each netid, not "unknown host".
 * With --hung HOST (likewise; HOST an IPv4 address): an rpcbind that
 * accepts and never answers (a listener on HOST port 111 that is never
 * read) makes clnt_rdma_create() fail within connect_timeout_ms (1.5 s,
 * 3 s allowed) with RPC_PMAPFAILURE and RPC_TIMEDOUT, for each netid.
 * With --stalled-dns NAME (run where /etc/resolv.conf names 127.0.0.1
 * and /etc/hosts maps NAME to 127.0.0.1): a DNS server that takes
 * queries and never answers (a UDP socket on 127.0.0.1 port 53 that is
 * never read) makes clnt_rdma_create() of a name only DNS could know
 * fail within connect_timeout_ms (1.5 s, 3 s allowed; the resolver's own
 * timeouts are 10 s) with RPC_UNKNOWNHOST and ETIMEDOUT, and NAME, found
 * in /etc/hosts, reaches the silent rpcbind of --hung on 127.0.0.1.
 *
 *   rpc_rpcbind PROVIDER ADDR4 ADDR6     (run by rpc_rpcbind.test)
 *   rpc_rpcbind --unreached HOST
 *   rpc_rpcbind --hung HOST
 *   rpc_rpcbind --stalled-dns NAME
 *
 * Prints PASS/FAIL per check; exits 0 only when every check passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rdmatest_support.h"

#define PROG "rpc_rpcbind"
#define MAX_ENTRIES 8

static const struct timeval call_tv = { .tv_sec = 60 };
static unsigned int failures;
static atomic_uint served[2]; /* calls served: [0] over IPv4, [1] over IPv6 */

#define check(ok, ...) (failures += !rdmatest_check(PROG, (ok), __VA_ARGS__))

/* rdmatest_dispatch, counting the calls per address family of the caller. */
static void counting_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	const struct netbuf *caller = svc_getrpccaller(xprt);
	const struct sockaddr *sa = caller ? caller->buf : NULL;

	if (sa)
		atomic_fetch_add(&served[sa->sa_family == AF_INET6], 1);
	rdmatest_dispatch(rq, xprt);
}

/* ---- rpcinfo ------------------------------------------------------------------------------ */

struct entry {
	char netid[32], uaddr[64], owner[32];
};

/* Universal address (RFC 5665) of @addr with @port, formatted independently of the library. */
static void uaddr_of(const char *addr, uint16_t port, char *out, size_t cap)
{
	struct sockaddr_storage ss;
	char host[INET6_ADDRSTRLEN];
	int fam = rdmatest_parse_addr(addr, port, &ss);
	const void *a = fam == AF_INET ? (const void *)&((struct sockaddr_in *)&ss)->sin_addr
				       : (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr;

	inet_ntop(fam, a, host, sizeof(host));
	snprintf(out, cap, "%s.%u.%u", host, port >> 8, port & 0xff);
}

/*
 * Run `rpcinfo` and collect its lines for program RDMATEST_PROG version
 * RDMATEST_V1.  Returns the number of entries, or -1 if rpcinfo failed.
 */
static int rpcinfo_entries(struct entry *e, int cap)
{
	FILE *p = popen("rpcinfo 2>&1", "r");
	char line[512], netid[32], uaddr[64], service[64], owner[32];
	unsigned long prog, vers;
	int n = 0;

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%lu %lu %31s %63s %63s %31s", &prog, &vers, netid, uaddr, service,
			   owner) != 6 || prog != RDMATEST_PROG)
			continue;
		printf("%s: rpcinfo: %s", PROG, line);
		if (vers != RDMATEST_V1 || n == cap)
			continue;
		snprintf(e[n].netid, sizeof(e[n].netid), "%s", netid);
		snprintf(e[n].uaddr, sizeof(e[n].uaddr), "%s", uaddr);
		snprintf(e[n].owner, sizeof(e[n].owner), "%s", owner);
		n++;
	}
	return pclose(p) == 0 ? n : -1;
}

static const struct entry *find_netid(const struct entry *e, int n, const char *netid)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(e[i].netid, netid))
			return &e[i];
	return NULL;
}

static void check_listed(const char *netid, const char *want, const struct entry *e, int n)
{
	const struct entry *f = find_netid(e, n, netid);

	check(f && !strcmp(f->uaddr, want), "rpcinfo lists %#x v%u %s at %s (listed: %s)",
	      RDMATEST_PROG, RDMATEST_V1, netid, want, f ? f->uaddr : "nothing");
}

static void check_registered(const char *uaddr4, const char *uaddr6)
{
	struct entry e[MAX_ENTRIES];
	int n = rpcinfo_entries(e, MAX_ENTRIES);

	check(n >= 0, "rpcinfo ran (RPCBPROC_DUMP)");
	if (n < 0)
		return;
	check_listed("rdma", uaddr4, e, n);
	check_listed("rdma6", uaddr6, e, n);
	check(n == 2, "rpcinfo lists exactly 2 entries for %#x v%u (found %d)", RDMATEST_PROG,
	      RDMATEST_V1, n);
}

static void check_unlisted(void)
{
	struct entry e[MAX_ENTRIES];
	int n = rpcinfo_entries(e, MAX_ENTRIES);

	check(n == 0, "after svc_unreg rpcinfo lists no entry for %#x v%u (found %d)",
	      RDMATEST_PROG, RDMATEST_V1, n);
}

/* ---- clients --------------------------------------------------------------------------------- */

static bool echo_ok(CLIENT *cl)
{
	static const char text[] = "found through rpcbind";
	rdmatest_data in = { sizeof(text), (char *)text }, out = { 0, NULL };
	enum clnt_stat st;
	bool same;

	st = clnt_call(cl, RDMATEST_ECHO, (xdrproc_t)xdr_rdmatest_data, (char *)&in,
		       (xdrproc_t)xdr_rdmatest_data, (char *)&out, call_tv);
	if (st != RPC_SUCCESS) {
		printf("%s: ECHO: %s\n", PROG, clnt_sperrno(st));
		return false;
	}
	same = out.rdmatest_data_len == sizeof(text) && !memcmp(out.rdmatest_data_val, text,
								 sizeof(text));
	clnt_freeres(cl, (xdrproc_t)xdr_rdmatest_data, (char *)&out);
	return same;
}

/* clnt_rdma_create(@host, ..., @netid): NULL and ECHO must be served over @family. */
static void check_found(const char *host, const char *netid, int family)
{
	const char *label = netid ? netid : "NULL";
	unsigned int before = atomic_load(&served[family == AF_INET6]);
	struct rpcrdma_options o;
	enum clnt_stat st;
	CLIENT *cl;

	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	cl = clnt_rdma_create(host, RDMATEST_PROG, RDMATEST_V1, netid, &o);
	check(cl != NULL, "clnt_rdma_create(%s, netid %s) found the server%s%s", host, label,
	      cl ? "" : ": ", cl ? "" : clnt_spcreateerror(""));
	if (!cl)
		return;
	st = rdmatest_call_null(cl, call_tv);
	check(st == RPC_SUCCESS, "netid %s: NULL: %s", label, clnt_sperrno(st));
	check(echo_ok(cl), "netid %s: ECHO returns what was sent", label);
	check(atomic_load(&served[family == AF_INET6]) == before + 2,
	      "netid %s: both calls served by the %s listener", label,
	      family == AF_INET6 ? "IPv6" : "IPv4");
	clnt_destroy(cl);
}

static void check_not_found(const char *host, const char *netid)
{
	CLIENT *cl = clnt_rdma_create(host, RDMATEST_PROG, RDMATEST_V1, netid, NULL);
	enum clnt_stat st = rpc_createerr.cf_stat;

	check(!cl && st == RPC_PROGNOTREGISTERED,
	      "after svc_unreg clnt_rdma_create(%s, netid %s) fails with RPC_PROGNOTREGISTERED (%s)",
	      host, netid ? netid : "NULL", cl ? "it connected" : clnt_sperrno(st));
	if (cl)
		clnt_destroy(cl);
}

static void check_unreached(const char *host, const char *netid)
{
	CLIENT *cl;

	rpc_createerr.cf_stat = RPC_SUCCESS;
	rpc_createerr.cf_error.re_errno = 0;
	cl = clnt_rdma_create(host, RDMATEST_PROG, RDMATEST_V1, netid, NULL);
	check(!cl && rpc_createerr.cf_stat == RPC_SYSTEMERROR &&
		      rpc_createerr.cf_error.re_status == RPC_SYSTEMERROR &&
		      rpc_createerr.cf_error.re_errno == ECONNREFUSED,
	      "no rpcbind on %s: clnt_rdma_create(netid %s) fails with RPC_SYSTEMERROR and "
	      "ECONNREFUSED (%s)",
	      host, netid ? netid : "NULL", cl ? "it connected" : clnt_spcreateerror(PROG));
	if (cl)
		clnt_destroy(cl);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A TCP listener on @host port 111 that is never read: an rpcbind that accepts and never answers. */
static int silent_rpcbind(const char *host)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(111) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), on = 1;

	if (fd < 0 || inet_pton(AF_INET, host, &sin.sin_addr) != 1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) || listen(fd, 16)) {
		perror("rpc_rpcbind: a listener on port 111");
		exit(1);
	}
	return fd;
}

/* A UDP socket on 127.0.0.1 port 53 that is never read: a DNS server that never answers. */
static int silent_dns(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(53),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		perror("rpc_rpcbind: a socket on UDP port 53");
		exit(1);
	}
	return fd;
}

/*
 * clnt_rdma_create(@host, @netid) with connect_timeout_ms 1500 must fail
 * within 3 s with @stat, and @want in the field @in_status says
 * (re_status, or re_errno).
 */
static void check_bounded(const char *what, const char *host, const char *netid,
			  enum clnt_stat stat, bool in_status, int want)
{
	struct rpcrdma_options o;
	double t0, took;
	CLIENT *cl;
	int got;

	rpcrdma_options_init(&o);
	o.connect_timeout_ms = 1500;
	rpc_createerr.cf_stat = RPC_SUCCESS;
	t0 = now_s();
	cl = clnt_rdma_create(host, RDMATEST_PROG, RDMATEST_V1, netid, &o);
	took = now_s() - t0;
	got = in_status ? (int)rpc_createerr.cf_error.re_status : rpc_createerr.cf_error.re_errno;
	check(!cl && rpc_createerr.cf_stat == stat && got == want && took < 3.0,
	      "%s %s: clnt_rdma_create(netid %s, connect_timeout_ms 1500) fails with %s and %s "
	      "within 3 s (%.2f s: %s)", what, host, netid ? netid : "NULL", clnt_sperrno(stat),
	      in_status ? clnt_sperrno((enum clnt_stat)want) : strerror(want), took,
	      cl ? "it connected" : clnt_spcreateerror(PROG));
	if (cl)
		clnt_destroy(cl);
}

/* connect_timeout_ms bounds resolving the name too. */
static void check_stalled_dns(const char *name, const char *netid)
{
	check_bounded("DNS never answers for", name, netid, RPC_UNKNOWNHOST, false, ETIMEDOUT);
}

/* connect_timeout_ms bounds the lookup: connect and RPCBPROC_DUMP together, both netids for NULL. */
static void check_hung(const char *host, const char *netid)
{
	check_bounded("rpcbind never answers on", host, netid, RPC_PMAPFAILURE, true, RPC_TIMEDOUT);
}

/* Each svc_rdma_reg() of a pair replaces its binding; the listener's 8 do not run out. */
static void check_reregistered(SVCXPRT *x)
{
	unsigned int ok = 0, tries = 9;

	for (unsigned int i = 0; i < tries; i++)
		ok += svc_rdma_reg(x, RDMATEST_PROG, RDMATEST_V1, counting_dispatch, &rdmatest_ulb);
	check(ok == tries, "svc_rdma_reg of %#x v%u again succeeded %u times of %u", RDMATEST_PROG,
	      RDMATEST_V1, ok, tries);
}

/* READ of @count bytes: the call's status, RPC_SUCCESS only with the expected data. */
static enum clnt_stat read_status(CLIENT *cl, uint32_t count, struct rpc_err *err)
{
	bool same;
	enum clnt_stat st = rdmatest_call_read(cl, count, 7, call_tv, &same);

	clnt_geterr(cl, err);
	if (st != RPC_SUCCESS)
		return st;
	return same ? RPC_SUCCESS : RPC_CANTDECODERES;
}

static uint32_t connects_of(CLIENT *cl)
{
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;

	return clnt_rdma_getinfo(cl, &ci) == 0 ? ci.connects : 0;
}

/* svc_rdma_reg() of @x's program while svc_run() serves: a connected client's next READ follows. */
static void check_rebound(SVCXPRT *x, const char *addr)
{
	const uint32_t count = 64u << 10;
	struct sockaddr_storage ss;
	struct rpcrdma_options o;
	struct rpc_err err;
	enum clnt_stat st;
	CLIENT *cl;

	rdmatest_parse_addr(addr, x->xp_port, &ss);
	rpcrdma_options_init(&o);
	o.ulb = &rdmatest_ulb;
	cl = clnt_rdma_tli_create((struct sockaddr *)&ss, RDMATEST_PROG, RDMATEST_V1, &o);
	check(cl != NULL, "rebinding: a client connected to %s%s%s", addr, cl ? "" : ": ",
	      cl ? "" : clnt_spcreateerror(""));
	if (!cl)
		return;
	st = read_status(cl, count, &err);
	check(st == RPC_SUCCESS, "rebinding: READ of %u bytes with the binding: %s", count,
	      clnt_sperrno(st));
	check(svc_rdma_reg(x, RDMATEST_PROG, RDMATEST_V1, counting_dispatch, NULL),
	      "rebinding: svc_rdma_reg with no binding while the server runs");
	st = read_status(cl, count, &err);
	check(st == RPC_CANTDECODERES && err.re_errno == EPROTO,
	      "rebinding: READ of %u bytes on the connection made before: RPC_CANTDECODERES with "
	      "EPROTO (ERR_CHUNK) without the binding (%s, errno %d)", count, clnt_sperrno(st),
	      st == RPC_SUCCESS ? 0 : err.re_errno);
	check(svc_rdma_reg(x, RDMATEST_PROG, RDMATEST_V1, counting_dispatch, &rdmatest_ulb),
	      "rebinding: svc_rdma_reg with rdmatest_ulb again");
	st = read_status(cl, count, &err);
	check(st == RPC_SUCCESS, "rebinding: READ of %u bytes with the binding back: %s", count,
	      clnt_sperrno(st));
	check(connects_of(cl) == 1, "rebinding: every call on the first connection (connects %u)",
	      connects_of(cl));
	clnt_destroy(cl);
}

int main(int argc, char **argv)
{
	char uaddr4[64], uaddr6[64];
	SVCXPRT *x4, *x6;

	if (argc == 3 && !strcmp(argv[1], "--unreached")) {
		check_unreached(argv[2], NULL);
		check_unreached(argv[2], "rdma");
		check_unreached(argv[2], "rdma6");
		printf("%s: unreached: %s (%u failed)\n", PROG, failures ? "FAILED" : "all passed",
		       failures);
		return failures ? 1 : 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--hung")) {
		int fd = silent_rpcbind(argv[2]);

		check_hung(argv[2], NULL);
		check_hung(argv[2], "rdma");
		check_hung(argv[2], "rdma6");
		close(fd);
		printf("%s: hung: %s (%u failed)\n", PROG, failures ? "FAILED" : "all passed", failures);
		return failures ? 1 : 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--stalled-dns")) {
		int dns = silent_dns(), fd = silent_rpcbind("127.0.0.1");

		check_stalled_dns("rpcbind.stalled-dns.invalid", NULL);
		check_stalled_dns("rpcbind.stalled-dns.invalid", "rdma");
		check_stalled_dns("rpcbind.stalled-dns.invalid", "rdma6");
		check_hung(argv[2], NULL);
		check_hung(argv[2], "rdma6");
		close(fd);
		close(dns);
		printf("%s: stalled DNS: %s (%u failed)\n", PROG, failures ? "FAILED" : "all passed",
		       failures);
		return failures ? 1 : 0;
	}
	if (argc != 4) {
		fprintf(stderr,
			"usage: %s PROVIDER ADDR4 ADDR6 | --unreached HOST | --hung HOST | "
			"--stalled-dns NAME\n",
			PROG);
		return 2;
	}
	rdmatest_raise_memlock();
	x4 = rdmatest_listen(PROG, argv[2], NULL, counting_dispatch);
	x6 = rdmatest_listen(PROG, argv[3], NULL, counting_dispatch);
	if (!x4 || !x6)
		return 1;
	check_reregistered(x4);
	if (!rdmatest_start_server(PROG))
		return 1;
	uaddr_of(argv[2], x4->xp_port, uaddr4, sizeof(uaddr4));
	uaddr_of(argv[3], x6->xp_port, uaddr6, sizeof(uaddr6));
	printf("%s: %s: listening on %s (rdma) and %s (rdma6)\n", PROG, argv[1], uaddr4, uaddr6);

	check_registered(uaddr4, uaddr6);
	check_found(argv[2], NULL, AF_INET);
	check_found(argv[2], "rdma", AF_INET);
	check_found(argv[3], "rdma6", AF_INET6);
	check_rebound(x4, argv[2]);

	svc_unreg(RDMATEST_PROG, RDMATEST_V1);
	check_unlisted();
	check_not_found(argv[2], NULL);
	check_not_found(argv[2], "rdma");
	check_not_found(argv[3], "rdma6");

	printf("%s: %s: %s (%u failed)\n", PROG, argv[1], failures ? "FAILED" : "all passed",
	       failures);
	fflush(stdout);
	_exit(failures ? 1 : 0); /* the server thread stays in svc_run() */
}
