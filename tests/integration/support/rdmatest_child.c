/*
 * The rdmatest server in a child process and the /proc and `rdma
 * resource` probes (rdmatest_child.h).  Commands to the child are one
 * byte each: 'd' and a timeout byte (drain), 'q' (stop); its answers
 * are text lines.
 */
#include "rdmatest_child.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#define ANSWER_TIMEOUT_MS 120000

/* ---- probes --------------------------------------------------------------------------- */

long rdmatest_status_kib(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t n = strlen(field);
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':' && sscanf(line + n + 1, "%ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

long rdmatest_rss_kib(pid_t pid)
{
	return rdmatest_status_kib(pid, "VmRSS");
}

int rdmatest_fd_count(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return pid == getpid() ? n - 1 : n; /* not the directory's own descriptor */
}

/* True when @line names process @pid ("... pid N ..." or "... pid N" at the end). */
static bool line_has_pid(const char *line, pid_t pid)
{
	char key[32];
	const char *p = line;
	size_t n;

	n = (size_t)snprintf(key, sizeof(key), " pid %d", (int)pid);
	while ((p = strstr(p, key))) {
		if (p[n] == ' ' || p[n] == '\n' || p[n] == '\0')
			return true;
		p += n;
	}
	return false;
}

int rdmatest_rdma_res_count(const char *kind, pid_t pid)
{
	char cmd[96], line[1024];
	int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma resource show %s 2>/dev/null", kind);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (line_has_pid(line, pid))
			n++;
	return pclose(f) == 0 ? n : -1;
}

const char *const rdmatest_res_kinds[RDMATEST_RES_KINDS] = { "qp", "cq", "mr", "pd", "cm_id" };

void rdmatest_holdings_count(pid_t pid, struct rdmatest_holdings *h)
{
	h->fds = rdmatest_fd_count(pid);
	for (int k = 0; k < RDMATEST_RES_KINDS; k++)
		h->res[k] = rdmatest_rdma_res_count(rdmatest_res_kinds[k], pid);
}

bool rdmatest_holdings_same(const struct rdmatest_holdings *a, const struct rdmatest_holdings *b)
{
	bool counted = a->fds >= 0; /* -1: a count failed, and two failures compare equal */

	for (int k = 0; k < RDMATEST_RES_KINDS; k++)
		counted = counted && a->res[k] >= 0 && b->res[k] >= 0;
	return counted && b->fds >= 0 && !memcmp(a, b, sizeof(*a));
}

/* ---- the child ------------------------------------------------------------------------- */

/* Connections the child serves: every registered descriptor but the listener's. */
static unsigned int open_conns(void)
{
	unsigned int n = 0;

	for (int i = 0; i < svc_max_pollfd; i++)
		if (svc_pollfd[i].fd >= 0)
			n++;
	return n ? n - 1 : 0;
}

/*
 * One round of serving: poll the transports and the command pipe for
 * at most @timeout_ms, serve what is ready.  Returns the command byte
 * read, 0 when none came, or -1 when the parent closed the pipe.
 */
static int serve_round(int cmd_fd, int timeout_ms)
{
	int n = svc_max_pollfd, ready, cmd = 0;
	struct pollfd *p = calloc((size_t)n + 1, sizeof(*p));
	unsigned char byte;

	if (!p)
		return -1;
	memcpy(p, svc_pollfd, (size_t)n * sizeof(*p));
	p[n] = (struct pollfd){ .fd = cmd_fd, .events = POLLIN };
	ready = poll(p, (nfds_t)n + 1, timeout_ms);
	if (ready > 0 && p[n].revents) {
		cmd = read(cmd_fd, &byte, 1) == 1 ? byte : -1;
		ready--;
	}
	if (ready > 0)
		svc_getreq_poll(p, ready);
	free(p);
	return cmd;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void child_drain(int cmd_fd, int answer_fd, int listen_fds)
{
	unsigned char timeout_s = 0;
	double deadline;

	if (read(cmd_fd, &timeout_s, 1) != 1)
		return;
	deadline = now_s() + timeout_s;
	while (open_conns() && now_s() < deadline)
		if (serve_round(cmd_fd, 100) < 0)
			return;
	dprintf(answer_fd, "conns %u fds %d\n", open_conns(),
		rdmatest_fd_count(getpid()) - listen_fds);
}

static void __attribute__((noreturn)) child_main(const char *prog, const char *addr,
						 const struct rpcrdma_options *o, int cmd_fd,
						 int answer_fd)
{
	int fds_before, fds_listening, fds_after, cmd;
	struct ibv_context **devices;
	struct sockaddr_storage ss;
	unsigned int conns;
	SVCXPRT *x;

	rdmatest_raise_memlock();
	/* librdmacm keeps each device open for the life of the process: open them first */
	devices = rdma_get_devices(NULL);
	if (devices)
		rdma_free_devices(devices);
	/* and the library its device watcher (one fd), which a first listener starts */
	if (rdmatest_parse_addr(addr, 0, &ss) && (x = svc_rdma_create((struct sockaddr *)&ss, o)))
		svc_destroy(x);
	fds_before = rdmatest_fd_count(getpid());
	x = rdmatest_listen(prog, addr, o, NULL);
	if (!x)
		exit(1);
	fds_listening = rdmatest_fd_count(getpid());
	dprintf(answer_fd, "port %u\n", (unsigned)x->xp_port);
	while ((cmd = serve_round(cmd_fd, -1)) >= 0 && cmd != 'q')
		if (cmd == 'd')
			child_drain(cmd_fd, answer_fd, fds_listening);
	conns = open_conns();
	svc_destroy(x);
	svc_exit();
	fds_after = rdmatest_fd_count(getpid());
	if (conns || fds_after != fds_before)
		fprintf(stderr, "%s: server: at exit %u connections left, %d fds open (%d before "
				"listening)\n", prog, conns, fds_after, fds_before);
	exit(conns || fds_after != fds_before);
}

/* ---- the parent's side -------------------------------------------------------------------- */

/* Read one answer line from the child (NUL-terminated, without '\n'); false on EOF or timeout. */
static bool read_answer(int fd, char *buf, size_t cap)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t n = 0;
	char ch;

	while (n + 1 < cap) {
		if (poll(&p, 1, ANSWER_TIMEOUT_MS) <= 0 || read(fd, &ch, 1) != 1)
			return false;
		if (ch == '\n')
			break;
		buf[n++] = ch;
	}
	buf[n] = '\0';
	return true;
}

bool rdmatest_child_start(const char *prog, const char *addr, const struct rpcrdma_options *o,
			  struct rdmatest_child *c)
{
	int cmd[2], answer[2];
	unsigned int port;
	char line[64];

	fflush(NULL);
	if (pipe2(cmd, O_CLOEXEC) || pipe2(answer, O_CLOEXEC)) {
		perror("pipe2");
		return false;
	}
	c->pid = fork();
	if (c->pid < 0) {
		perror("fork");
		return false;
	}
	if (c->pid == 0) {
		close(cmd[1]);
		close(answer[0]);
		child_main(prog, addr, o, cmd[0], answer[1]);
	}
	close(cmd[0]);
	close(answer[1]);
	c->cmd_fd = cmd[1];
	c->answer_fd = answer[0];
	if (!read_answer(c->answer_fd, line, sizeof(line)) || sscanf(line, "port %u", &port) != 1) {
		fprintf(stderr, "%s: the server process did not start\n", prog);
		rdmatest_child_stop(prog, c);
		return false;
	}
	c->port = (uint16_t)port;
	return true;
}

bool rdmatest_child_drain(struct rdmatest_child *c, int timeout_s, unsigned int *conns,
			  int *extra_fds)
{
	unsigned char msg[2] = { 'd', (unsigned char)(timeout_s > 255 ? 255 : timeout_s) };
	char line[64];

	return write(c->cmd_fd, msg, 2) == 2 && read_answer(c->answer_fd, line, sizeof(line)) &&
	       sscanf(line, "conns %u fds %d", conns, extra_fds) == 2;
}

int rdmatest_child_stop(const char *prog, struct rdmatest_child *c)
{
	int status;

	if (write(c->cmd_fd, "q", 1) != 1)
		fprintf(stderr, "%s: the server process is gone\n", prog);
	close(c->cmd_fd);
	close(c->answer_fd);
	while (waitpid(c->pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "%s: the server process died from signal %d\n", prog,
			WTERMSIG(status));
		return -1;
	}
	return WEXITSTATUS(status);
}
