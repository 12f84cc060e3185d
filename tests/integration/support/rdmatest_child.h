/*
 * The rdmatest server in a child process, for tests that measure the
 * server apart from its clients (tests/integration/rpc_load.c,
 * rpc_leak.c): its memory, file descriptors and RDMA resources, and
 * its clean exit (LeakSanitizer reports at exit).  The child serves
 * with its own svc_getreq_poll() loop that also watches a command pipe
 * from the parent.  Also the /proc and `rdma resource` probes those
 * tests use.
 */
#ifndef RDMATEST_CHILD_H
#define RDMATEST_CHILD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "rdmatest_support.h"

struct rdmatest_child {
	pid_t pid;
	int cmd_fd;     /* commands to the child */
	int answer_fd;  /* its answers */
	uint16_t port;  /* where it listens */
};

/*
 * rdmatest_child_start - fork a server that listens on @addr (port 0)
 * with @o (NULL: defaults) and serves rdmatest_dispatch.  Call it before
 * the parent uses verbs (fork).  Returns false, with a message prefixed
 * by @prog, when the child could not listen.
 */
bool rdmatest_child_start(const char *prog, const char *addr, const struct rpcrdma_options *o,
			  struct rdmatest_child *c);

/*
 * rdmatest_child_drain - let the child serve until it has no connection
 * left (at most @timeout_s seconds) and report the connections it still
 * has and how many more file descriptors it has open than right after
 * it began listening.  Returns false when the child does not answer.
 */
bool rdmatest_child_drain(struct rdmatest_child *c, int timeout_s, unsigned int *conns,
			  int *extra_fds);

/*
 * rdmatest_child_stop - the child destroys its listener and exits
 * normally (LeakSanitizer runs then).  Its status is 0 only when it had
 * no connection left and as many file descriptors open as before it
 * created the listener.  Returns the exit status, or -1 when it died
 * from a signal (printed).
 */
int rdmatest_child_stop(const char *prog, struct rdmatest_child *c);

/* Field @field ("RssAnon", ...) of /proc/PID/status in KiB, or -1. */
long rdmatest_status_kib(pid_t pid, const char *field);
/* VmRSS of @pid in KiB (/proc/PID/status), or -1. */
long rdmatest_rss_kib(pid_t pid);

/* Open file descriptors of @pid (/proc/PID/fd), or -1. */
int rdmatest_fd_count(pid_t pid);

/*
 * rdmatest_rdma_res_count - `rdma resource show @kind` (qp, cq, mr, pd,
 * cm_id) lines that belong to @pid, or -1 when the tool fails.
 */
int rdmatest_rdma_res_count(const char *kind, pid_t pid);

/* What one process holds: open fds and its `rdma resource` objects of each kind. */
#define RDMATEST_RES_KINDS 5
extern const char *const rdmatest_res_kinds[RDMATEST_RES_KINDS]; /* qp, cq, mr, pd, cm_id */
struct rdmatest_holdings {
	int fds;
	int res[RDMATEST_RES_KINDS];
};

void rdmatest_holdings_count(pid_t pid, struct rdmatest_holdings *h);
/* Both counted (no -1) and equal. */
bool rdmatest_holdings_same(const struct rdmatest_holdings *a, const struct rdmatest_holdings *b);

#endif
