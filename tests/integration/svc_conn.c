/*
 * svc_conn: what svc_rdma does for each accepted connection by itself,
 * on one soft-RDMA device.  A thread serves an svc_rdma listener and a
 * TCP transport with a copy of libtirpc's svc_run() loop; the main
 * thread is the client, with rpcrdma's CLIENT:
 *
 * - the Connection Configuration Protocol (RFC 5666 section 6, program
 *   100417) is answered on the RDMA connection with the server's values
 *   (CONF_RDMA, NULL; GARBAGE_ARGS, PROC_UNAVAIL, PROG_MISMATCH for bad
 *   calls), and is not served over TCP;
 * - svc_rdma_getinfo() describes the connection to the dispatch
 *   function (with CCP's effect), and refuses listeners and TCP
 *   transports;
 * - the ack_timeout options of the listener and the CLIENT are the
 *   local ACK timeouts of their queue pairs (IB and RoCE; 0 on iWARP);
 *   without the option the CLIENT's is 21 on rxe (rpcrdma's default
 *   there, see rpcrdma_options_init(3)) and an accepted connection's is
 *   rdma_cm's (the wildcard listener has none); the CLIENT's tos
 *   option is the traffic class of both queue pairs (RoCE), 0 without it;
 * - once the client destroys its CLIENT, the server destroys the
 *   connection's transport (its fd leaves svc_pollfd) within a second;
 * - a dispatch routine may svc_destroy() its own connection after
 *   replying: the reply arrives, the connection goes once libtirpc is
 *   done with it (ASan sees any use after its free), and new ones are
 *   served; without replying: the call fails at once (RPC_CANTRECV);
 * - with libtirpc's descriptor table (_rpc_dtablesize()) smaller than
 *   RLIMIT_NOFILE, a connection accepted onto a descriptor beyond it is
 *   closed, not left unserved, and a listener there is refused;
 * - a listener on the wildcard address registered with svc_rdma_reg()
 *   is found by rpcrdma_rpcb_lookup() and clnt_rdma_create() at ADDR,
 *   and its connection's xp_ltaddr is ADDR and the port, not the
 *   wildcard (svc_vc's is the accepted socket's own address).
 * - a connection outlives its listener: with a binding registered
 *   while the server runs, after the client connected, a 64 KiB result
 *   goes into the offered write chunk before and after the server thread
 *   destroyed the listener (the binding table is shared, and freed with
 *   the last connection, which the server reaps once the client goes:
 *   the test runs under ASan), and the listener's port then refuses.
 *
 *   svc_conn PROVIDER ADDR     (run by svc_conn.test)
 *
 * Prints a PASS line per check; the first failure prints FAIL and
 * exits 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpc_com.h> /* _rpc_dtablesize */

#include "rdmatest_addr.h"
#include "rdmatest_verdict.h"
#include "rpcrdma/netconfig.h"
#include "rpcrdma/rpcbind.h"
#include "rpcrdma/rpcrdma.h"
#include "xdr/ccp.h"

#define SERVER_SEND   8192u  /* the server's inline_send option */
#define SERVER_RECV   16384u /* the server's inline_recv option: CONF_RDMA's maxcall_sendsize */
#define CCP_MAXREPLY  2048u  /* the client's maxreply_sendsize: caps the server's inline replies */

#define TEST_PROG     0x20000778u
#define WILD_PROG     0x20000779u  /* registered with rpcbind on the wildcard listener */
#define TEST_VERS     1u
#define PROC_INFO     1u     /* result: INFO_WORDS words, see info_words() */
#define PROC_BYTES    2u     /* argument n, result n bytes of bytes_of(): DDP-eligible */
#define PROC_HANGUP   3u     /* replies, then its dispatch routine destroys the connection */
#define PROC_DROP     4u     /* its dispatch routine destroys the connection without a reply */
#define BYTES_LEN     (64u << 10)
#define INFO_WORDS    18u
#define SERVER_CREDITS 24u
#define FD_TABLE      256    /* the RLIMIT_NOFILE libtirpc reads first: _rpc_dtablesize() */
/* Local ACK timeouts asked for (IB and RoCE; iWARP reports 0): both differ from rdma_cm's. */
#define SERVER_ACK_TIMEOUT 15u
#define CLIENT_ACK_TIMEOUT 12u
#define RXE_ACK_TIMEOUT 21u     /* the library's default for a CLIENT on rxe */
#define RDMA_CM_ACK_TIMEOUT 19u /* rdma_cm's on RoCE (Linux 6.1, the guest's kernel) */
/* The client's type of service (DSCP AF21); on RoCE the server's queue pair takes it from the request. */
#define CLIENT_TOS 0x48u

static const struct timeval call_timeout = { 10, 0 };

#define pass(...) ((void)rdmatest_check("svc_conn", true, __VA_ARGS__))
#define fail(...) rdmatest_fail("svc_conn", __VA_ARGS__)

/* ---- server --------------------------------------------------------------------------------- */

struct server {
	SVCXPRT *rdma, *tcp, *wild;
	struct sockaddr_storage rdma_addr, tcp_addr;
};

static struct server server;

/* Set by the client: the server thread destroys the wildcard listener, then says so. */
static atomic_bool destroy_wild, wild_destroyed;

/* The fd of the connection that served PROC_INFO, and whether svc_run() still polls it. */
static atomic_int watched_fd = -1;
static atomic_bool watched_polled;

static bool svc_polls(int fd)
{
	for (int i = 0; i < svc_max_pollfd; i++)
		if (svc_pollfd[i].fd == fd)
			return true;
	return false;
}

/* svc_run()'s loop, with a timeout so watched_polled stays fresh. */
static void *svc_main(void *arg)
{
	struct pollfd *fds = NULL;

	(void)arg;
	for (;;) {
		int n;

		if (atomic_exchange(&destroy_wild, false)) {
			svc_destroy(server.wild);
			atomic_store(&wild_destroyed, true);
		}
		if (watched_fd >= 0)
			watched_polled = svc_polls(watched_fd);
		n = svc_max_pollfd;

		fds = realloc(fds, (size_t)(n ? n : 1) * sizeof(*fds));
		if (!fds)
			fail("out of memory");
		for (int i = 0; i < n; i++)
			fds[i] = (struct pollfd){ svc_pollfd[i].fd, svc_pollfd[i].events, 0 };
		n = poll(fds, (nfds_t)n, 100);
		if (n > 0)
			svc_getreq_poll(fds, n);
	}
	return NULL;
}

static bool_t xdr_info(XDR *x, uint32_t *w)
{
	return xdr_vector(x, (char *)w, INFO_WORDS, sizeof(uint32_t), (xdrproc_t)xdr_uint32_t);
}

/* svc_rdma_getinfo() on the calling connection, the listener, the TCP transport and NULL. */
static void info_words(SVCXPRT *xprt, uint32_t *w)
{
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;

	w[0] = (uint32_t)svc_rdma_getinfo(xprt, &ci);
	w[1] = (uint32_t)svc_rdma_getinfo(server.rdma, &ci);
	w[2] = (uint32_t)svc_rdma_getinfo(server.tcp, &ci);
	w[3] = (uint32_t)svc_rdma_getinfo(NULL, &ci);
	svc_rdma_getinfo(xprt, &ci);
	w[4] = ci.inline_send;
	w[5] = ci.inline_recv;
	w[6] = ci.credits;
	w[7] = ci.ird;
	w[8] = ci.ord;
	w[9] = ci.peer_private_data;
	w[10] = ci.remote_invalidate;
	w[11] = ci.iwarp;
	w[12] = ci.registration;
	w[13] = ci.ccp;
	w[14] = ci.connects;
	w[15] = ci.ack_timeout;
	w[16] = ci.traffic_class;
	w[17] = ci.send_wr_inline;
}

/* A wildcard listener's connection's xp_ltaddr, as its NULL call saw it. */
static struct sockaddr_storage wild_local;
static unsigned int wild_local_len;

static char bytes_of(uint32_t i)
{
	return (char)(i * 7u + (i >> 9));
}

/* PROC_BYTES' result: the length and the bytes, the bytes a write chunk's. */
static bool_t xdr_bytes_res(XDR *x, char **p)
{
	u_int len = BYTES_LEN;

	return xdr_bytes(x, p, &len, BYTES_LEN);
}

static void reply_bytes(SVCXPRT *xprt)
{
	uint32_t n = 0;
	char *p;

	if (!svc_getargs(xprt, (xdrproc_t)xdr_uint32_t, (char *)&n) || n != BYTES_LEN) {
		svcerr_decode(xprt);
		return;
	}
	p = malloc(n);
	if (!p)
		fail("out of memory");
	for (uint32_t i = 0; i < n; i++)
		p[i] = bytes_of(i);
	svc_sendreply(xprt, (xdrproc_t)xdr_bytes_res, (char *)&p);
	free(p);
}

static void test_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	uint32_t w[INFO_WORDS];

	if (rq->rq_prog == WILD_PROG && xprt->xp_ltaddr.buf &&
	    xprt->xp_ltaddr.len <= sizeof(wild_local)) {
		memcpy(&wild_local, xprt->xp_ltaddr.buf, xprt->xp_ltaddr.len);
		wild_local_len = xprt->xp_ltaddr.len;
	}
	if (rq->rq_proc == NULLPROC) {
		svc_sendreply(xprt, (xdrproc_t)(void (*)(void))xdr_void, NULL);
	} else if (rq->rq_proc == PROC_BYTES) {
		reply_bytes(xprt);
	} else if (rq->rq_proc == PROC_HANGUP) {
		watched_fd = xprt->xp_fd;
		watched_polled = true;
		svc_sendreply(xprt, (xdrproc_t)(void (*)(void))xdr_void, NULL);
		svc_destroy(xprt); /* libtirpc asks xprt for its state after this returns */
	} else if (rq->rq_proc == PROC_DROP) {
		svc_destroy(xprt);
	} else if (rq->rq_proc == PROC_INFO) {
		info_words(xprt, w);
		watched_polled = svc_polls(xprt->xp_fd);
		watched_fd = xprt->xp_fd;
		svc_sendreply(xprt, (xdrproc_t)xdr_info, (char *)w);
	} else {
		svcerr_noproc(xprt);
	}
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

static socklen_t salen(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

/* A TCP transport on @addr's address, for the checks that CCP is RDMA's alone. */
static SVCXPRT *tcp_start(const struct sockaddr_storage *addr, struct sockaddr_storage *bound)
{
	socklen_t len = sizeof(*bound);
	SVCXPRT *x;
	int fd;

	*bound = *addr;
	fd = socket(addr->ss_family, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)bound, salen(bound)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)bound, &len))
		fail("TCP socket: %s", strerror(errno));
	x = svc_vc_create(fd, 0, 0);
	if (!x)
		fail("svc_vc_create failed");
	return x;
}

static void server_start(const struct sockaddr_storage *addr, struct server *s)
{
	struct rpcrdma_options o;
	pthread_t thread;

	rpcrdma_options_init(&o);
	o.inline_send = SERVER_SEND;
	o.inline_recv = SERVER_RECV;
	o.credits = SERVER_CREDITS;
	o.ack_timeout = SERVER_ACK_TIMEOUT;
	s->rdma = svc_rdma_create((const struct sockaddr *)addr, &o);
	if (!s->rdma)
		fail("svc_rdma_create: %s", clnt_spcreateerror("svc_rdma_create"));
	if (!svc_reg(s->rdma, TEST_PROG, TEST_VERS, test_dispatch, NULL))
		fail("svc_reg failed");
	s->rdma_addr = *addr;
	set_port(&s->rdma_addr, s->rdma->xp_port);
	s->tcp = tcp_start(addr, &s->tcp_addr);
	o.ack_timeout = 0; /* servers keep rdma_cm's: checked on this one's connection */
	s->wild = svc_rdma_create((const struct sockaddr *)&(struct sockaddr_storage){
					  .ss_family = addr->ss_family }, &o);
	if (!s->wild || !svc_rdma_reg(s->wild, WILD_PROG, TEST_VERS, test_dispatch, NULL))
		fail("wildcard listener: %s", clnt_spcreateerror("svc_rdma_create/svc_rdma_reg"));
	if (pthread_create(&thread, NULL, svc_main, NULL))
		fail("pthread_create failed");
	pthread_detach(thread);
}

/* ---- Connection Configuration Protocol ---------------------------------------------------- */

/* Two of CONF_RDMA's three words. */
static bool_t xdr_short_req(XDR *x, struct rpcrdma_config_req *req)
{
	return xdr_uint32_t(x, &req->maxcall_sendsize) && xdr_uint32_t(x, &req->maxreply_sendsize);
}

/* Procedure @proc with no arguments and no result. */
static enum clnt_stat void_call(CLIENT *cl, rpcproc_t proc)
{
	return clnt_call(cl, proc, (xdrproc_t)(void (*)(void))xdr_void, NULL,
			 (xdrproc_t)(void (*)(void))xdr_void, NULL, call_timeout);
}

static enum clnt_stat ccp_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs,
			       struct rpcrdma_config_req *req, struct rpcrdma_config_reply *rep)
{
	return clnt_call(cl, proc, xargs, (char *)req, (xdrproc_t)xdr_rpcrdma_config_reply,
			 (char *)rep, call_timeout);
}

static void expect_stat(CLIENT *cl, enum clnt_stat got, enum clnt_stat want, const char *what)
{
	if (got != want)
		fail("%s: %s, expected %s", what, clnt_sperror(cl, "clnt_call"), clnt_sperrno(want));
	pass("%s: %s", what, clnt_sperrno(got));
}

static void check_ccp_errors(CLIENT *cl)
{
	/* a maxreply_sendsize below 1024 is refused (a maxcall_sendsize's limits only the client) */
	struct rpcrdma_config_req req = { 1024, 1024, 1 }, tiny = { 4096, 512, 1 };
	struct rpcrdma_config_reply rep;
	rpcvers_t v = 2;

	expect_stat(cl, ccp_call(cl, RPCRDMA_CCP_PROC_CONF_RDMA, (xdrproc_t)xdr_short_req, &req, &rep),
		    RPC_CANTDECODEARGS, "CONF_RDMA with two words");
	expect_stat(cl, ccp_call(cl, RPCRDMA_CCP_PROC_CONF_RDMA, (xdrproc_t)xdr_rpcrdma_config_req,
				 &tiny, &rep),
		    RPC_CANTDECODEARGS, "CONF_RDMA with maxreply_sendsize 512");
	expect_stat(cl, void_call(cl, 2),
		    RPC_PROCUNAVAIL, "CCP procedure 2");
	clnt_control(cl, CLSET_VERS, (char *)&v);
	expect_stat(cl, void_call(cl, NULLPROC),
		    RPC_PROGVERSMISMATCH, "CCP version 2");
	v = RPCRDMA_CCP_VERSION;
	clnt_control(cl, CLSET_VERS, (char *)&v);
}

/* CONF_RDMA and its effect as the connection describes itself; returns the CLIENT. */
static CLIENT *check_ccp(const struct server *s, struct rpcrdma_config_reply *out)
{
	struct rpcrdma_config_req req = { 4096, CCP_MAXREPLY, 4 };
	struct rpcrdma_config_reply rep = { 0, 0, 0 };
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;
	struct rpcrdma_options o;
	CLIENT *cl;

	/*
	 * Without a binding the CLIENT registers a reply chunk of
	 * max_rpc_size for every call; siw charges that to RLIMIT_MEMLOCK.
	 */
	rpcrdma_options_init(&o);
	o.max_rpc_size = 65536;
	o.ack_timeout = CLIENT_ACK_TIMEOUT;
	o.tos = CLIENT_TOS;
	cl = clnt_rdma_tli_create((const struct sockaddr *)&s->rdma_addr, RPCRDMA_CCP_PROGRAM,
				  RPCRDMA_CCP_VERSION, &o);
	if (!cl)
		fail("clnt_rdma_tli_create: %s", clnt_spcreateerror("CCP client"));
	if (clnt_rdma_getinfo(cl, &ci))
		fail("clnt_rdma_getinfo failed");
	expect_stat(cl, void_call(cl, NULLPROC),
		    RPC_SUCCESS, "CCP NULL");
	expect_stat(cl, ccp_call(cl, RPCRDMA_CCP_PROC_CONF_RDMA, (xdrproc_t)xdr_rpcrdma_config_req,
				 &req, &rep),
		    RPC_SUCCESS, "CONF_RDMA");
	if (rep.maxcall_sendsize != SERVER_RECV || rep.align != 0 || !rep.maxrdmaread ||
	    rep.maxrdmaread < ci.ord)
		fail("CONF_RDMA reply: maxcall_sendsize %u align %u maxrdmaread %u; expected %u, 0, "
		     "at least the client's ORD %u", rep.maxcall_sendsize, rep.align,
		     rep.maxrdmaread, SERVER_RECV, ci.ord);
	pass("CONF_RDMA reply: maxcall_sendsize %u align %u maxrdmaread %u (client ORD %u)",
	     rep.maxcall_sendsize, rep.align, rep.maxrdmaread, ci.ord);
	check_ccp_errors(cl);
	*out = rep;
	return cl;
}

static void expect_word(const uint32_t *w, unsigned int i, uint32_t want, const char *what)
{
	if (w[i] != want)
		fail("svc_rdma_getinfo: %s is %d, expected %d", what, (int)w[i], (int)want);
}

/* The dispatch function's view of the connection CONF_RDMA configured. */
static void check_getinfo(CLIENT *cl, const struct rpcrdma_config_reply *rep, bool iwarp)
{
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;
	rpcprog_t prog = TEST_PROG;
	rpcvers_t vers = TEST_VERS;
	uint32_t w[INFO_WORDS];

	if (clnt_rdma_getinfo(cl, &ci))
		fail("clnt_rdma_getinfo failed");
	clnt_control(cl, CLSET_PROG, (char *)&prog);
	clnt_control(cl, CLSET_VERS, (char *)&vers);
	expect_stat(cl, clnt_call(cl, PROC_INFO, (xdrproc_t)(void (*)(void))xdr_void, NULL,
				  (xdrproc_t)xdr_info, (char *)w, call_timeout),
		    RPC_SUCCESS, "INFO on the CCP-configured connection");
	expect_word(w, 0, 0, "the return code on the connection");
	expect_word(w, 1, (uint32_t)-EINVAL, "the return code on the listener");
	expect_word(w, 2, (uint32_t)-EINVAL, "the return code on a TCP transport");
	expect_word(w, 3, (uint32_t)-EINVAL, "the return code on NULL");
	pass("svc_rdma_getinfo: 0 on the connection, -EINVAL on the listener, TCP and NULL");
	/* CCP lowered the inline replies below what the private data allowed. */
	expect_word(w, 4, CCP_MAXREPLY, "inline_send");
	expect_word(w, 5, SERVER_RECV, "inline_recv (CONF_RDMA's maxcall_sendsize)");
	expect_word(w, 6, SERVER_CREDITS, "credits");
	expect_word(w, 7, rep->maxrdmaread, "ird (CONF_RDMA's maxrdmaread)");
	expect_word(w, 8, ci.ird, "ord (the client's IRD)");
	expect_word(w, 9, 1, "peer_private_data");
	expect_word(w, 10, ci.remote_invalidate, "remote_invalidate (as the client sees it)");
	expect_word(w, 11, iwarp, "iwarp");
	expect_word(w, 12, RPCRDMA_REG_PER_CALL_MR, "registration");
	expect_word(w, 13, RPCRDMA_CCP_NOT_ASKED, "ccp");
	expect_word(w, 14, 1, "connects");
	expect_word(w, 15, iwarp ? 0 : SERVER_ACK_TIMEOUT, "ack_timeout (the listener's option)");
	if (ci.ack_timeout != (iwarp ? 0 : CLIENT_ACK_TIMEOUT))
		fail("clnt_rdma_getinfo: ack_timeout is %u, expected %u", ci.ack_timeout,
		     iwarp ? 0 : CLIENT_ACK_TIMEOUT);
	pass("local ACK timeouts on the queue pairs: server %u, client %u", w[15], ci.ack_timeout);
	expect_word(w, 16, iwarp ? 0 : CLIENT_TOS, "traffic_class (the client's tos option)");
	if (ci.traffic_class != (iwarp ? 0 : CLIENT_TOS))
		fail("clnt_rdma_getinfo: traffic_class is %u, expected %u", ci.traffic_class,
		     iwarp ? 0 : CLIENT_TOS);
	pass("traffic class of the queue pairs: server %u, client %u", w[16], ci.traffic_class);
	/* Both ends' QPs are of one device: the same search finds the same room (a NULL call's 68 bytes). */
	expect_word(w, 17, ci.send_wr_inline, "send_wr_inline (as the client's, on the same device)");
	if (ci.send_wr_inline < 80)
		fail("clnt_rdma_getinfo: send_wr_inline is %u, expected at least 80", ci.send_wr_inline);
	pass("Sends copied at the post up to %u bytes", ci.send_wr_inline);
	pass("svc_rdma_getinfo: inline send %u recv %u, credits %u, IRD %u ORD %u, %s", w[4], w[5],
	     w[6], w[7], w[8], iwarp ? "iWARP" : "IB");
}

/* Over TCP the CCP program does not exist. */
static void check_ccp_not_on_tcp(const struct server *s)
{
	int fd = socket(s->tcp_addr.ss_family, SOCK_STREAM, 0);
	struct netbuf nb = { sizeof(s->tcp_addr), sizeof(s->tcp_addr), (void *)&s->tcp_addr };
	CLIENT *cl;

	if (fd < 0 || connect(fd, (const struct sockaddr *)&s->tcp_addr, salen(&s->tcp_addr)))
		fail("TCP connect: %s", strerror(errno));
	cl = clnt_vc_create(fd, &nb, RPCRDMA_CCP_PROGRAM, RPCRDMA_CCP_VERSION, 0, 0);
	if (!cl)
		fail("clnt_vc_create: %s", clnt_spcreateerror("TCP client"));
	expect_stat(cl, void_call(cl, NULLPROC),
		    RPC_PROGUNAVAIL, "CCP NULL over TCP");
	clnt_destroy(cl);
	close(fd);
}

/* ---- reaping --------------------------------------------------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until the server polls watched_fd no more, at most @ms after @since; the ms waited. */
static long long await_unwatched(int64_t ms, const char *since)
{
	int64_t t0 = now_ms();

	while (watched_polled) {
		if (now_ms() - t0 > ms)
			fail("the server still polls the connection %lld ms after %s", (long long)ms,
			     since);
		usleep(10000);
	}
	return now_ms() - t0;
}

/* @cl served PROC_INFO; after clnt_destroy() its server transport must go. */
static void check_reaped(CLIENT *cl)
{
	if (watched_fd < 0 || !watched_polled)
		fail("the connection that served INFO (fd %d) is not in svc_pollfd", (int)watched_fd);
	pass("the connection's fd %d is polled by the server", (int)watched_fd);
	clnt_destroy(cl);
	pass("the server destroyed the connection %lld ms after clnt_destroy()",
	     await_unwatched(1000, "clnt_destroy()"));
}

/* ---- a dispatch routine that destroys its connection ----------------------------------------- */

static CLIENT *test_client(const struct server *s)
{
	struct rpcrdma_options o;
	CLIENT *cl;

	rpcrdma_options_init(&o);
	o.max_rpc_size = 65536; /* see check_ccp */
	cl = clnt_rdma_tli_create((const struct sockaddr *)&s->rdma_addr, TEST_PROG, TEST_VERS, &o);
	if (!cl)
		fail("clnt_rdma_tli_create: %s", clnt_spcreateerror("test program client"));
	return cl;
}

/*
 * HANGUP's reply arrives though its dispatch routine destroyed the
 * connection right after svc_sendreply(); the connection then leaves
 * svc_pollfd, freed only after libtirpc asked for its state (ASan), and
 * the server serves a new connection (reaped before the next check
 * counts descriptors).
 */
static void check_hangup(const struct server *s)
{
	CLIENT *cl = test_client(s), *next;
	uint32_t w[INFO_WORDS];
	int64_t t0;

	expect_stat(cl, void_call(cl, PROC_HANGUP), RPC_SUCCESS,
		    "HANGUP, whose dispatch routine replies and then destroys its connection");
	pass("the server freed the connection %lld ms after the reply arrived",
	     await_unwatched(3000, "its reply"));
	clnt_destroy(cl);
	cl = test_client(s);
	t0 = now_ms();
	expect_stat(cl, void_call(cl, PROC_DROP), RPC_CANTRECV,
		    "DROP, whose dispatch routine destroys its connection without a reply");
	if (now_ms() - t0 > 3000)
		fail("DROP failed only after %lld ms", (long long)(now_ms() - t0));
	clnt_destroy(cl);
	next = test_client(s);
	expect_stat(next, clnt_call(next, PROC_INFO, (xdrproc_t)(void (*)(void))xdr_void, NULL,
				    (xdrproc_t)xdr_info, (char *)w, call_timeout),
		    RPC_SUCCESS, "INFO on a new connection after it");
	check_reaped(next);
}

/* ---- descriptors libtirpc cannot poll ------------------------------------------------------------ */

/* RPCRDMA_DEBUG as the test was started with (NULL: unset). */
static const char *debug_asked;

/* libtirpc reads _rpc_dtablesize() once: FD_TABLE, raised again after (as a server may raise it). */
static void fd_table_limit(void)
{
	struct rlimit rl, low;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur < 2 * FD_TABLE)
		fail("RLIMIT_NOFILE below %d", 2 * FD_TABLE);
	low = (struct rlimit){ FD_TABLE, rl.rlim_max };
	if (setrlimit(RLIMIT_NOFILE, &low) || _rpc_dtablesize() != FD_TABLE ||
	    setrlimit(RLIMIT_NOFILE, &rl))
		fail("cannot make libtirpc's descriptor table %d (it says %d)", FD_TABLE,
		     _rpc_dtablesize());
}

/*
 * The library's debug messages (RPCRDMA_DEBUG, read at each message) go
 * to a file from @on to its call with !@on: how the test knows that the server, not the
 * client, closed a connection.  main() sets RPCRDMA_DEBUG before any
 * thread starts, so that this overwrites an entry in place while the
 * server thread may read it.
 */
static void debug_to_file(bool on, int *saved, FILE **log)
{
	fflush(stderr);
	if (on) {
		*log = tmpfile();
		*saved = dup(STDERR_FILENO);
		if (!*log || *saved < 0 || dup2(fileno(*log), STDERR_FILENO) < 0)
			fail("cannot send the debug messages to a file: %s", strerror(errno));
		setenv("RPCRDMA_DEBUG", "1", 1);
		return;
	}
	setenv("RPCRDMA_DEBUG", debug_asked ? debug_asked : "0", 1);
	if (dup2(*saved, STDERR_FILENO) < 0)
		fail("cannot restore stderr: %s", strerror(errno));
	rewind(*log); /* the caller closes both once it needs no fd kept taken */
}

/* Whether @log holds a line containing @what and @why; the line is copied to @line. */
static bool log_has(FILE *log, const char *what, const char *why, char *line, size_t size)
{
	while (fgets(line, (int)size, log))
		if (strstr(line, what) && strstr(line, why)) {
			line[strcspn(line, "\n")] = '\0';
			return true;
		}
	return false;
}

/*
 * With every descriptor below FD_TABLE taken, a connection accepted onto
 * one above, which xprt_register() would silently leave out, is closed
 * by the server (its debug message says why; the call fails, it does
 * not time out), a listener there is refused with EMFILE; with them
 * free again the server serves on.
 */
static void check_fd_table(const struct server *s)
{
	struct sockaddr_storage any = s->rdma_addr;
	int fds[FD_TABLE], n = 0, fd, saved;
	enum clnt_stat st = RPC_SYSTEMERROR;
	char line[256];
	bool connected;
	FILE *log;
	CLIENT *cl;
	SVCXPRT *x;
	int64_t t0;

	while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0 && fd < FD_TABLE)
		fds[n++] = fd;
	if (fd < 0)
		fail("open(/dev/null): %s", strerror(errno));
	close(fd);
	debug_to_file(true, &saved, &log); /* its fds are above FD_TABLE */
	t0 = now_ms();
	cl = clnt_rdma_tli_create((const struct sockaddr *)&s->rdma_addr, TEST_PROG, TEST_VERS, NULL);
	connected = cl != NULL;
	if (cl) {
		st = void_call(cl, NULLPROC);
		clnt_destroy(cl);
	}
	debug_to_file(false, &saved, &log);
	if (st == RPC_SUCCESS || st == RPC_TIMEDOUT)
		fail("a connection the server accepted onto fd >= %d: NULL %s, expected it closed",
		     FD_TABLE, clnt_sperrno(st));
	if (!log_has(log, "rpcrdma: server: connection with", "closed: no fd libtirpc can poll",
		     line, sizeof(line)))
		fail("a connection onto fd >= %d: NULL %s, but no debug message of the server's says "
		     "it closed it for its fd", FD_TABLE, clnt_sperrno(st));
	fclose(log);
	close(saved);
	pass("a connection the server accepted onto fd >= %d is closed by the server (\"%s\"): "
	     "%s after %lld ms", FD_TABLE, line, connected ? clnt_sperrno(st) : "connect failed",
	     (long long)(now_ms() - t0));
	set_port(&any, 0);
	x = svc_rdma_create((const struct sockaddr *)&any, NULL);
	if (x || rpc_createerr.cf_stat != RPC_SYSTEMERROR ||
	    rpc_createerr.cf_error.re_errno != EMFILE)
		fail("svc_rdma_create with its fd >= %d: %s", FD_TABLE,
		     x ? "a listener libtirpc does not poll" : clnt_spcreateerror("expected EMFILE"));
	pass("svc_rdma_create with its fd >= %d: %s", FD_TABLE, strerror(EMFILE));
	while (n)
		close(fds[--n]);
	cl = test_client(s);
	expect_stat(cl, void_call(cl, NULLPROC), RPC_SUCCESS, "NULL once descriptors are free again");
	clnt_destroy(cl);
}

/* ---- wildcard registration ------------------------------------------------------------------- */

static void check_wildcard(const struct server *s, const char *host, bool iwarp)
{
	const char *netid = s->rdma_addr.ss_family == AF_INET ? RPCRDMA_NETID : RPCRDMA_NETID6;
	struct sockaddr_storage found, want = s->rdma_addr;
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;
	struct rpcrdma_options o;
	uint32_t w[INFO_WORDS];
	CLIENT *cl;
	int rc;

	set_port(&want, s->wild->xp_port);
	rc = rpcrdma_rpcb_lookup(host, WILD_PROG, TEST_VERS, netid, &found);
	if (rc)
		fail("rpcrdma_rpcb_lookup(%s) of the wildcard listener: %s", host, strerror(-rc));
	if (memcmp(&found, &want, salen(&want)))
		fail("rpcrdma_rpcb_lookup(%s) of the wildcard listener found another address", host);
	pass("rpcrdma_rpcb_lookup(%s) of the wildcard listener: %s port %u", host, host,
	     s->wild->xp_port);
	rpcrdma_options_init(&o);
	o.max_rpc_size = 65536;
	cl = clnt_rdma_create(host, WILD_PROG, TEST_VERS, netid, &o);
	if (!cl)
		fail("clnt_rdma_create(%s): %s", host, clnt_spcreateerror("wildcard"));
	expect_stat(cl, void_call(cl, NULLPROC),
		    RPC_SUCCESS, "NULL through clnt_rdma_create() to the wildcard listener");
	if (wild_local_len != salen(&want) || memcmp(&wild_local, &want, salen(&want)))
		fail("the wildcard listener's connection: xp_ltaddr is not the address connected to");
	pass("the wildcard listener's connection: xp_ltaddr is %s port %u, as svc_vc's", host,
	     s->wild->xp_port);
	if (clnt_rdma_getinfo(cl, &ci))
		fail("clnt_rdma_getinfo failed");
	if (ci.iwarp != iwarp)
		fail("clnt_rdma_getinfo: iwarp is %d on %s", ci.iwarp, iwarp ? "siw" : "rxe");
	if (ci.ack_timeout != (iwarp ? 0 : RXE_ACK_TIMEOUT))
		fail("without the option the CLIENT's local ACK timeout is %u on %s",
		     ci.ack_timeout, iwarp ? "siw" : "rxe");
	pass("without the option the CLIENT's local ACK timeout is %u on %s", ci.ack_timeout,
	     iwarp ? "siw" : "rxe");
	expect_stat(cl, clnt_call(cl, PROC_INFO, (xdrproc_t)(void (*)(void))xdr_void, NULL,
				  (xdrproc_t)xdr_info, (char *)w, call_timeout),
		    RPC_SUCCESS, "INFO on the wildcard listener's connection");
	expect_word(w, 15, iwarp ? 0 : RDMA_CM_ACK_TIMEOUT,
		    "ack_timeout of a connection accepted without the option (rdma_cm's)");
	pass("without the option the accepted connection's local ACK timeout is %u on %s", w[15],
	     iwarp ? "siw" : "rxe");
	/* the test bed leaves default_roce_tos at 0 */
	if (ci.traffic_class != 0)
		fail("without the tos option the traffic class is %u", ci.traffic_class);
	pass("without the tos option the traffic class is the device's default: 0");
	clnt_destroy(cl);
	rpcrdma_rpcb_unset(WILD_PROG, TEST_VERS, netid);
}

/* ---- a connection outliving its listener ------------------------------------------------------ */

static uint32_t bytes_reply_max(const void *args)
{
	(void)args;
	return 4; /* the length word: the bytes go into the write chunk */
}

static uint32_t bytes_res_max(const void *args, uint32_t i)
{
	(void)args;
	(void)i;
	return BYTES_LEN;
}

static const struct rpcrdma_ulb_proc wild_procs[] = {
	{ .proc = PROC_BYTES, .res_ddp = 1, .res_max = bytes_res_max, .reply_max = bytes_reply_max },
};

static const struct rpcrdma_ulb wild_ulb = {
	.prog = WILD_PROG, .vers = TEST_VERS, .procs = wild_procs, .nprocs = 1,
};

/* PROC_BYTES on @cl: RPC_SUCCESS with every byte right, or why not. */
static void expect_bytes(CLIENT *cl, const char *what)
{
	uint32_t n = BYTES_LEN;
	char *p = NULL;
	enum clnt_stat st;

	st = clnt_call(cl, PROC_BYTES, (xdrproc_t)xdr_uint32_t, (char *)&n,
		       (xdrproc_t)xdr_bytes_res, (char *)&p, call_timeout);
	expect_stat(cl, st, RPC_SUCCESS, what);
	for (uint32_t i = 0; i < n; i++)
		if (p[i] != bytes_of(i))
			fail("%s: byte %u of the result differs", what, i);
	clnt_freeres(cl, (xdrproc_t)xdr_bytes_res, (char *)&p);
}

static void check_listener_gone(struct server *s, const char *host)
{
	const char *netid = s->rdma_addr.ss_family == AF_INET ? RPCRDMA_NETID : RPCRDMA_NETID6;
	struct sockaddr_storage addr = s->rdma_addr;
	uint16_t port = s->wild->xp_port;
	struct rpcrdma_options o;
	CLIENT *cl, *late;
	int64_t t0;

	uint32_t w[INFO_WORDS];

	set_port(&addr, port);
	rpcrdma_options_init(&o);
	o.ulb = &wild_ulb;
	cl = clnt_rdma_tli_create((const struct sockaddr *)&addr, WILD_PROG, TEST_VERS, &o);
	if (!cl)
		fail("clnt_rdma_tli_create(%s port %u): %s", host, port, clnt_spcreateerror("wildcard"));
	/* the connection to watch for check_reaped() */
	expect_stat(cl, clnt_call(cl, PROC_INFO, (xdrproc_t)(void (*)(void))xdr_void, NULL,
				  (xdrproc_t)xdr_info, (char *)w, call_timeout),
		    RPC_SUCCESS, "INFO on a connection made before its listener's binding");
	if (!svc_rdma_reg(s->wild, WILD_PROG, TEST_VERS, test_dispatch, &wild_ulb))
		fail("svc_rdma_reg of a binding while the server runs: %s",
		     clnt_spcreateerror("svc_rdma_reg"));
	expect_bytes(cl, "64 KiB result through the write chunk, the binding registered after "
			 "the connection while the server runs");
	t0 = now_ms();
	atomic_store(&destroy_wild, true);
	while (!atomic_load(&wild_destroyed)) {
		if (now_ms() - t0 > 5000)
			fail("the server thread did not destroy the listener within 5 s");
		usleep(10000);
	}
	expect_bytes(cl, "the same after the server destroyed the connection's listener");
	late = clnt_rdma_tli_create((const struct sockaddr *)&addr, WILD_PROG, TEST_VERS, &o);
	if (late || rpc_createerr.cf_stat != RPC_SYSTEMERROR)
		fail("a connect to the destroyed listener's port %u: %s", port,
		     late ? "it connected" : clnt_spcreateerror("refused with"));
	pass("a connect to the destroyed listener's port %u is refused: %s", port,
	     strerror(rpc_createerr.cf_error.re_errno));
	check_reaped(cl); /* the last reference to the binding table goes with the connection */
	rpcrdma_rpcb_unset(WILD_PROG, TEST_VERS, netid);
}

/* ---- main ---------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct rpcrdma_config_reply rep;
	struct sockaddr_storage addr;
	struct server *s = &server;
	bool iwarp;
	CLIENT *cl;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3 || (strcmp(argv[1], "rxe") && strcmp(argv[1], "siw")) ||
	    !rdmatest_parse_addr(argv[2], 0, &addr)) {
		fprintf(stderr, "usage: svc_conn rxe|siw ADDR\n");
		return 2;
	}
	iwarp = !strcmp(argv[1], "siw");
	debug_asked = getenv("RPCRDMA_DEBUG");
	setenv("RPCRDMA_DEBUG", debug_asked ? debug_asked : "0", 1); /* see debug_to_file() */
	fd_table_limit();
	server_start(&addr, s);
	cl = check_ccp(s, &rep);
	check_getinfo(cl, &rep, iwarp);
	check_ccp_not_on_tcp(s);
	check_reaped(cl);
	check_hangup(s);
	check_fd_table(s);
	check_wildcard(s, argv[2], iwarp);
	check_listener_gone(s, argv[2]);
	printf("svc_conn: %s: all checks passed\n", argv[1]);
	return 0;
}
