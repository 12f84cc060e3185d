/*
 * The passive side's listener: a cm id bound to one address and
 * listening, its event channel, and what keeps it listening when the
 * RDMA device under a bound address goes away.  A wildcard listener
 * outlives devices (rdma_cm listens on each as it comes).  A listener
 * bound to one device's address is told RDMA_CM_EVENT_DEVICE_REMOVAL
 * and its id is dead: it gives the id back at once (the device's
 * removal waits for that) and binds the same address and port again
 * every RELISTEN_INTERVAL_MS until a device serves the address again.
 * The caller polls one fd, an epoll set of the channel and that timer,
 * so svc_run() needs no timer of its own.  Requests become endpoints in
 * verbs.c (rpcrdma_ep_from_request).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "rpcrdma/debug.h"
#include "rpcrdma/verbs_internal.h"

#define RELISTEN_INTERVAL_MS 1000

struct rpcrdma_listener {
	struct rdma_event_channel *channel;
	struct rdma_cm_id *id;        /* NULL while no device serves the address */
	int epfd;                     /* the channel and the timer: what the caller polls */
	int timerfd;                  /* armed while id is NULL */
	int backlog;
	struct sockaddr_storage addr; /* as bound: with the port rdma_cm picked for port 0 */
	int relisten_rc;              /* the last re-listen failure said (debug), 0 for none */
	struct rpcrdma_ep_params params;
};

static bool addr_port_is_any(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return ((const struct sockaddr_in *)addr)->sin_port == 0;
	return addr->sa_family == AF_INET6 && ((const struct sockaddr_in6 *)addr)->sin6_port == 0;
}

/* A new cm id bound to @addr and listening; on failure none is left. */
static int listener_listen(struct rpcrdma_listener *l, const struct sockaddr *addr)
{
	int rc = 0;

	errno_clear();
	if (rdma_create_id(l->channel, &l->id, l, RDMA_PS_TCP))
		return neg_errno(ENOMEM);
	errno_clear();
	if (rdma_bind_addr(l->id, (struct sockaddr *)addr))
		rc = neg_errno(EADDRNOTAVAIL);
	if (!rc) {
		errno_clear();
		if (rdma_listen(l->id, l->backlog))
			rc = neg_errno(EIO);
	}
	if (rc) {
		rdma_destroy_id(l->id);
		l->id = NULL;
	}
	return rc;
}

static int listener_fds_open(struct rpcrdma_listener *l)
{
	int fds[2] = { l->channel->fd, -1 };

	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0)
		return neg_errno(EMFILE);
	l->timerfd = fds[1] = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (l->timerfd < 0)
		return neg_errno(EMFILE);
	for (int i = 0; i < 2; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };

		if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fds[i], &ev))
			return neg_errno(ENOMEM);
	}
	return 0;
}

int rpcrdma_listener_create(const struct sockaddr *addr, const struct rpcrdma_ep_params *params,
			    int backlog, struct rpcrdma_listener **out)
{
	struct rpcrdma_listener *l;
	int rc, tries = 0;

	if (!rpcrdma_ep_params_valid(params))
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->epfd = l->timerfd = -1;
	l->params = *params;
	l->backlog = backlog;
	rc = rpcrdma_cm_channel_create(&l->channel);
	if (!rc)
		rc = listener_fds_open(l);
	if (rc)
		goto out_destroy;
	do
		rc = listener_listen(l, addr);
	while (rc == -EADDRINUSE && addr_port_is_any(addr) && ++tries < RPCRDMA_PORT_TRIES);
	if (rc)
		goto out_destroy;
	memcpy(&l->addr, rdma_get_local_addr(l->id), rpcrdma_sockaddr_len(addr));
	*out = l;
	return 0;
out_destroy:
	rpcrdma_listener_destroy(l);
	return rc;
}

int rpcrdma_listener_fd(const struct rpcrdma_listener *l)
{
	return l->epfd;
}

const struct sockaddr *rpcrdma_listener_addr(const struct rpcrdma_listener *l)
{
	return (const struct sockaddr *)&l->addr;
}

void rpcrdma_listener_destroy(struct rpcrdma_listener *l)
{
	if (!l)
		return;
	if (l->id)
		rdma_destroy_id(l->id);
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->timerfd >= 0)
		close(l->timerfd);
	if (l->channel)
		rdma_destroy_event_channel(l->channel);
	free(l);
}

static void listener_retry_arm(struct rpcrdma_listener *l, bool on)
{
	struct timespec every = { RELISTEN_INTERVAL_MS / 1000, RELISTEN_INTERVAL_MS % 1000 * 1000000L };
	struct itimerspec t = { 0 };

	if (on)
		t = (struct itimerspec){ .it_interval = every, .it_value = every };
	timerfd_settime(l->timerfd, 0, &t, NULL);
}

/* True once per expiry of the retry timer (reading it clears the fd). */
static bool listener_retry_due(struct rpcrdma_listener *l)
{
	uint64_t expiries;

	return read(l->timerfd, &expiries, sizeof(expiries)) == sizeof(expiries);
}

/*
 * Its device was removed (the event is acked): give the id back (the
 * removal watcher of devices.c lets go of the rest), then retry on the
 * timer.  A device that comes back takes its address again.
 */
static void listener_lost(struct rpcrdma_listener *l)
{
	rdma_destroy_id(l->id);
	l->id = NULL;
	listener_retry_arm(l, true);
	rpcrdma_debug_listener(rpcrdma_listener_addr(l),
			       "its RDMA device was removed; binding again every second");
}

/*
 * Bind again when the timer is due.  While no device serves the address
 * that fails with ENODEV or EADDRNOTAVAIL; any other failure (the port
 * taken meanwhile) is said when its errno is new, and retried all the same.
 */
static void listener_relisten(struct rpcrdma_listener *l)
{
	char what[128], text[64];
	int rc;

	if (l->id || !listener_retry_due(l))
		return;
	rc = listener_listen(l, rpcrdma_listener_addr(l));
	if (!rc) {
		listener_retry_arm(l, false);
		l->relisten_rc = 0;
		rpcrdma_debug_listener(rpcrdma_listener_addr(l), "listening again");
	} else if (rc != -ENODEV && rc != -EADDRNOTAVAIL && rc != l->relisten_rc) {
		l->relisten_rc = rc;
		snprintf(what, sizeof(what), "binding again failed (%s); still trying every second",
			 strerror_r(-rc, text, sizeof(text)));
		rpcrdma_debug_listener(rpcrdma_listener_addr(l), what);
	}
}

int rpcrdma_listener_accept(struct rpcrdma_listener *l, struct rpcrdma_ep **out)
{
	struct rdma_cm_event *ev;
	bool lost;
	int rc;

	listener_relisten(l);
	rc = rpcrdma_cm_next_event(l->channel, 0, &ev);
	if (rc)
		return rc == -ETIMEDOUT ? -EAGAIN : rc;
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return rpcrdma_ep_from_request(&l->params, ev, out);
	lost = ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL && ev->id == l->id;
	rc = rpcrdma_cm_event_handle(NULL, ev);
	rdma_ack_cm_event(ev);
	if (lost) {
		listener_lost(l);
		return -ENODEV;
	}
	if (rc == -ENODEV) /* another id's device: -ENODEV says the listener's */
		return -ECONNRESET;
	return rc < 0 ? rc : -EAGAIN;
}
