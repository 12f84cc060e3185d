/*
 * Connection loss and reconnect of the RDMA CLIENT against a server
 * process that dies in the middle of a call.  The server (this program
 * run as `rpc_reconnect --server ADDR PORT CRASH`) serves the rdmatest
 * program; with CRASH=1 an ECHO of "crash" makes it exit without
 * replying.  The client side checks, per address:
 *   1. the call in flight when the server dies fails with RPC_CANTRECV
 *      (not a timeout), quickly, and the CLIENT lets go of the lost
 *      connection then, not at its next call: this process holds no
 *      queue pair or rdma_cm id any more (the server is another);
 *   2. a call while no server listens fails with RPC_CANTSEND;
 *   3. after a restart on the same port the same CLIENT reconnects
 *      (connects = 2) and works;
 *   4. with reconnect_resend, a call whose server dies is sent again on
 *      a new connection to a restarted server and succeeds;
 *   5. with reconnect_resend and no server restarted, that call ends at
 *      its timeout with RPC_TIMEDOUT (it was sent, it may have run), not
 *      RPC_CANTSEND, which says it was not;
 *   6. without reconnect_resend, a server restarted while the CLIENT was
 *      idle: the next call goes on a new connection and succeeds (the
 *      disconnect waited unread on the idle connection);
 *   7. a forked child's clnt_destroy of the CLIENT leaves the parent's
 *      connection alone: the parent's next call succeeds on it
 *      (connects = 1; the child's rdma_cm and verbs files are the
 *      parent's, so destroying the connection there would end it).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rdmatest_child.h"
#include "rdmatest_support.h"

extern char **environ;

static const char *self;
static bool crash_on_echo;
static unsigned int failures;

#define check_fail(...) (failures += !rdmatest_check("rpc_reconnect", false, __VA_ARGS__))

/* ---- server process ------------------------------------------------------------------ */

static void dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	rdmatest_data arg = { 0 };

	if (rq->rq_proc == RDMATEST_NULL) {
		svc_sendreply(xprt, (xdrproc_t)(void (*)(void))xdr_void, NULL);
		return;
	}
	if (rq->rq_proc != RDMATEST_ECHO) {
		svcerr_noproc(xprt);
		return;
	}
	if (!svc_getargs(xprt, (xdrproc_t)xdr_rdmatest_data, (char *)&arg)) {
		svcerr_decode(xprt);
		return;
	}
	if (crash_on_echo && arg.rdmatest_data_len == 5 &&
	    !memcmp(arg.rdmatest_data_val, "crash", 5))
		_exit(3);
	svc_sendreply(xprt, (xdrproc_t)xdr_rdmatest_data, (char *)&arg);
	svc_freeargs(xprt, (xdrproc_t)xdr_rdmatest_data, (char *)&arg);
}

/* Listen on ADDR:PORT (retrying while the old listener's port is released), print the port. */
static int server_main(const char *addr, unsigned int port)
{
	struct sockaddr_storage ss;
	SVCXPRT *x = NULL;

	if (!rdmatest_parse_addr(addr, port, &ss))
		return 2;
	for (int i = 0; i < 50 && !x; i++) {
		x = svc_rdma_create((struct sockaddr *)&ss, NULL);
		if (!x)
			usleep(100000);
	}
	if (!x || !svc_reg(x, RDMATEST_PROG, RDMATEST_V1, dispatch, NULL)) {
		fprintf(stderr, "rpc_reconnect: server: %s", clnt_spcreateerror(addr));
		return 1;
	}
	printf("%u\n", (unsigned)x->xp_port);
	fflush(stdout);
	svc_run();
	return 1;
}

/* ---- client side --------------------------------------------------------------------- */

struct server {
	pid_t pid;
	unsigned int port;
};

/* Start a server process; read its port from its stdout. */
static bool server_start(const char *addr, unsigned int port, bool crash, struct server *s)
{
	char portbuf[16], line[32] = "";
	char *argv[] = { (char *)self, "--server", (char *)addr, portbuf,
			 crash ? "1" : "0", NULL };
	posix_spawn_file_actions_t fa;
	int fd[2];
	ssize_t n;

	snprintf(portbuf, sizeof(portbuf), "%u", port);
	if (pipe(fd))
		return false;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	if (posix_spawn(&s->pid, self, &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		return false;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	n = read(fd[0], line, sizeof(line) - 1);
	close(fd[0]);
	s->port = n > 0 ? (unsigned int)strtoul(line, NULL, 10) : 0;
	return s->port != 0;
}

static void server_stop(struct server *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
		s->pid = 0;
	}
}

static enum clnt_stat echo(CLIENT *cl, const char *text, int seconds)
{
	bool same;
	enum clnt_stat st = rdmatest_call_echo_text(cl, text, (struct timeval){ seconds, 0 }, &same);

	if (st == RPC_SUCCESS && !same)
		check_fail("echo of \"%s\" came back different", text);
	return st;
}

static void expect(CLIENT *cl, const char *what, enum clnt_stat got, enum clnt_stat want)
{
	if (got == want) {
		printf("rpc_reconnect: %s: %s (as expected)\n", what, clnt_sperrno(got));
		return;
	}
	check_fail("%s: %s, expected %s", what, clnt_sperror(cl, "call"), clnt_sperrno(want));
}

static unsigned int connects(CLIENT *cl)
{
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;

	return clnt_rdma_getinfo(cl, &ci) ? 0 : ci.connects;
}

static CLIENT *client(const char *addr, unsigned int port, bool resend)
{
	struct rpcrdma_options o;
	struct sockaddr_storage ss;
	CLIENT *cl;

	rpcrdma_options_init(&o);
	o.reconnect_resend = resend;
	rdmatest_parse_addr(addr, port, &ss);
	cl = clnt_rdma_tli_create((struct sockaddr *)&ss, RDMATEST_PROG, RDMATEST_V1, &o);
	if (!cl)
		check_fail("%s", clnt_spcreateerror(addr));
	return cl;
}

/* A server that crashes on "crash" and a CLIENT of it; NULL (reported, no server left) if not. */
static CLIENT *server_and_client(const char *addr, bool resend, struct server *s)
{
	CLIENT *cl = NULL;

	if (!server_start(addr, 0, true, s) || !(cl = client(addr, s->port, resend))) {
		check_fail("%s: cannot start the server or connect", addr);
		server_stop(s);
	}
	return cl;
}

/* Step 1's end: the idle CLIENT holds nothing of the connection it lost. */
static void check_let_go(const char *addr)
{
	int qps = rdmatest_rdma_res_count("qp", getpid());
	int ids = rdmatest_rdma_res_count("cm_id", getpid());

	if (qps != 0 || ids != 0)
		check_fail("%s: after the lost call the CLIENT still holds %d queue pairs and %d "
			   "rdma_cm ids, expected none", addr, qps, ids);
	else
		printf("rpc_reconnect: %s: the lost connection was let go with its call (no queue "
		       "pair or rdma_cm id left)\n", addr);
}

/* Steps 1-3: failures are reported, the same CLIENT reconnects. */
static void check_fail_and_reconnect(const char *addr)
{
	struct server s = { 0 };
	double t0;
	CLIENT *cl;

	if (!(cl = server_and_client(addr, false, &s)))
		return;
	expect(cl, "echo before the crash", echo(cl, "hello", 10), RPC_SUCCESS);
	t0 = rdmatest_now();
	expect(cl, "echo the server dies in", echo(cl, "crash", 20), RPC_CANTRECV);
	if (rdmatest_now() - t0 > 10)
		check_fail("the lost connection was noticed only after %.1f s", rdmatest_now() - t0);
	check_let_go(addr);
	server_stop(&s);
	expect(cl, "echo with no server", echo(cl, "nobody", 10), RPC_CANTSEND);
	if (!server_start(addr, s.port, true, &s)) {
		check_fail("%s: cannot restart the server on port %u", addr, s.port);
	} else {
		expect(cl, "echo after the restart", echo(cl, "again", 10), RPC_SUCCESS);
		if (connects(cl) != 2)
			check_fail("connects = %u after one reconnect, expected 2", connects(cl));
	}
	clnt_destroy(cl);
	server_stop(&s);
}

struct restarter {
	const char *addr;
	struct server s;
	bool ok;
};

/* Wait for the crashing server to exit, then start one that answers. */
static void *restart_main(void *arg)
{
	struct restarter *r = arg;
	unsigned int port = r->s.port;

	waitpid(r->s.pid, NULL, 0);
	r->s.pid = 0;
	r->ok = server_start(r->addr, port, false, &r->s);
	return NULL;
}

/* Step 4: the call survives its server's death by being sent again. */
static void check_resend(const char *addr)
{
	struct restarter r = { .addr = addr };
	pthread_t t;
	CLIENT *cl;

	if (!(cl = server_and_client(addr, true, &r.s)))
		return;
	expect(cl, "resend: echo before the crash", echo(cl, "hello", 10), RPC_SUCCESS);
	pthread_create(&t, NULL, restart_main, &r);
	expect(cl, "resend: echo the server dies in", echo(cl, "crash", 30), RPC_SUCCESS);
	pthread_join(t, NULL);
	if (!r.ok)
		check_fail("%s: the restarted server did not start", addr);
	if (connects(cl) != 2)
		check_fail("connects = %u after the resend, expected 2", connects(cl));
	clnt_destroy(cl);
	server_stop(&r.s);
}

/* Step 5: a call sent once whose resends find no server. */
static void check_resend_unserved(const char *addr)
{
	struct server s = { 0 };
	double t0, dt;
	CLIENT *cl;

	if (!(cl = server_and_client(addr, true, &s)))
		return;
	expect(cl, "unserved resend: echo before the crash", echo(cl, "hello", 10), RPC_SUCCESS);
	t0 = rdmatest_now();
	expect(cl, "unserved resend: echo the server dies in", echo(cl, "crash", 3), RPC_TIMEDOUT);
	dt = rdmatest_now() - t0;
	if (dt < 2.5 || dt > 6)
		check_fail("unserved resend: the 3 s call ended after %.2f s", dt);
	clnt_destroy(cl);
	server_stop(&s);
}

/* Step 6: the server restarts between two calls. */
static void check_idle_restart(const char *addr)
{
	struct server s = { 0 };
	unsigned int port;
	CLIENT *cl;

	if (!(cl = server_and_client(addr, false, &s)))
		return;
	expect(cl, "idle restart: echo before it", echo(cl, "hello", 10), RPC_SUCCESS);
	port = s.port;
	server_stop(&s);
	sleep(1); /* the disconnect reaches the idle connection */
	if (!server_start(addr, port, false, &s)) {
		check_fail("%s: cannot restart the server on port %u", addr, port);
	} else {
		expect(cl, "idle restart: the first echo after it", echo(cl, "again", 10),
		       RPC_SUCCESS);
		if (connects(cl) != 2)
			check_fail("idle restart: connects = %u, expected 2", connects(cl));
	}
	clnt_destroy(cl);
	server_stop(&s);
}

static void check_forked_destroy(const char *addr)
{
	struct server s = { 0 };
	int status = -1;
	CLIENT *cl;
	pid_t pid;

	if (!(cl = server_and_client(addr, false, &s)))
		return;
	expect(cl, "forked destroy: echo before it", echo(cl, "hello", 10), RPC_SUCCESS);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		clnt_destroy(cl);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		check_fail("forked destroy: the child did not end well (status %#x)", status);
	sleep(1); /* a disconnect the child made reaches the connection */
	expect(cl, "forked destroy: the parent's echo after the child's clnt_destroy",
	       echo(cl, "again", 10), RPC_SUCCESS);
	if (connects(cl) != 1)
		check_fail("forked destroy: connects = %u, expected 1 (the child's clnt_destroy ended "
			   "the parent's connection)", connects(cl));
	clnt_destroy(cl);
	server_stop(&s);
}

int main(int argc, char **argv)
{
	self = argv[0];
	rdmatest_raise_memlock();
	if (argc == 5 && !strcmp(argv[1], "--server")) {
		crash_on_echo = !strcmp(argv[4], "1");
		return server_main(argv[2], (unsigned int)strtoul(argv[3], NULL, 10));
	}
	if (argc < 2) {
		fprintf(stderr, "usage: rpc_reconnect ADDR...\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	for (int i = 1; i < argc; i++) {
		printf("rpc_reconnect: %s\n", argv[i]);
		check_fail_and_reconnect(argv[i]);
		check_resend(argv[i]);
		check_resend_unserved(argv[i]);
		check_idle_restart(argv[i]);
		check_forked_destroy(argv[i]);
	}
	printf("rpc_reconnect: %s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}
