/*
 * RPCBPROC_SET/UNSET over AF_LOCAL and RPCBPROC_DUMP lookups, with
 * libtirpc's own CLIENTs and XDR routines, and the wildcard merge of a
 * looked-up address.  A lookup connects to port 111 itself and makes the
 * call with rpcbind_dump.c, so that one deadline bounds the connect and
 * the call (libtirpc's clnt_create() would first ask rpcbind for its own
 * address, with a 60 s timeout of its own) and so that it needs no
 * netconfig entry.
 */
#include "rpcrdma/rpcbind.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <poll.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include <rpc/rpcb_prot.h>

#include "rpcrdma/netconfig.h"
#include "rpcrdma/resolve.h"
#include "rpcrdma/rpcbind_dump.h"
#include "rpcrdma/transport.h"
#include "rpcrdma/verbs.h"

static const struct timeval rpcb_timeout = { .tv_sec = 10, .tv_usec = 0 };

static CLIENT *local_rpcbind(void)
{
	static const char path[] = _PATH_RPCBINDSOCK;
	struct sockaddr_un sun = { .sun_family = AF_LOCAL };
	struct netbuf nb = { .maxlen = sizeof(sun), .len = sizeof(sun), .buf = &sun };
	CLIENT *clnt;
	int fd;

	memcpy(sun.sun_path, path, sizeof(path));
	fd = socket(AF_LOCAL, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rpcrdma_createerr_set(RPC_SYSTEMERROR, errno);
		return NULL;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		rpcrdma_createerr_set(RPC_SYSTEMERROR, errno);
		close(fd);
		return NULL;
	}
	clnt = clnt_vc_create(fd, &nb, RPCBPROG, RPCBVERS, 0, 0);
	if (!clnt) {
		close(fd);
		return NULL;
	}
	clnt_control(clnt, CLSET_FD_CLOSE, NULL);
	return clnt;
}

static int rpcb_change(rpcproc_t proc, rpcb *parms)
{
	CLIENT *clnt = local_rpcbind();
	bool_t done = FALSE;
	enum clnt_stat st;

	if (!clnt)
		return -ECONNREFUSED;
	st = clnt_call(clnt, proc, (xdrproc_t)xdr_rpcb, (char *)parms, (xdrproc_t)xdr_bool,
		       (char *)&done, rpcb_timeout);
	if (st != RPC_SUCCESS) {
		rpc_createerr.cf_stat = RPC_PMAPFAILURE;
		clnt_geterr(clnt, &rpc_createerr.cf_error);
	}
	clnt_destroy(clnt);
	if (st != RPC_SUCCESS)
		return -EIO;
	return done ? 0 : -EACCES;
}

static void owner_of_caller(char *buf, size_t cap)
{
	snprintf(buf, cap, "%u", (unsigned)geteuid());
}

int rpcrdma_rpcb_set(rpcprog_t prog, rpcvers_t vers, const char *netid,
		     const struct sockaddr *addr)
{
	char uaddr[RPCRDMA_UADDR_MAX], owner[16];
	rpcb parms = { .r_prog = prog, .r_vers = vers, .r_addr = uaddr, .r_owner = owner };
	int family;

	if (!rpcrdma_netid_family(netid, &family) || family != addr->sa_family ||
	    rpcrdma_uaddr_format(addr, uaddr, sizeof(uaddr)))
		return -EINVAL;
	parms.r_netid = (char *)netid;
	owner_of_caller(owner, sizeof(owner));
	return rpcb_change(RPCBPROC_SET, &parms);
}

int rpcrdma_rpcb_unset(rpcprog_t prog, rpcvers_t vers, const char *netid)
{
	char owner[16], none[] = "";
	rpcb parms = { .r_prog = prog, .r_vers = vers, .r_addr = none, .r_owner = owner };
	int family;

	if (!rpcrdma_netid_family(netid, &family))
		return -EINVAL;
	parms.r_netid = (char *)netid;
	owner_of_caller(owner, sizeof(owner));
	return rpcb_change(RPCBPROC_UNSET, &parms);
}

/*
 * Connect @fd (non-blocking) to @sa by @deadline.  Returns 0 or a
 * positive errno value: ETIMEDOUT when the deadline came first.
 */
static int connect_by(int fd, const struct sockaddr *sa, socklen_t len, int64_t deadline)
{
	socklen_t elen = sizeof(int);
	int err = 0, rc;

	if (connect(fd, sa, len) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return errno;
	rc = rpcrdma_fd_wait(fd, POLLOUT, deadline);
	if (rc)
		return -rc;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
		return errno;
	return err;
}

/* A TCP socket connected to @ai by @deadline (non-blocking); else -1, *err set. */
static int rpcbind_at(const struct addrinfo *ai, int64_t deadline, int *err)
{
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0) {
		*err = errno;
		return -1;
	}
	*err = connect_by(fd, ai->ai_addr, ai->ai_addrlen, deadline);
	if (*err) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * rpcbind on @host, over TCP to @service of each of its addresses, those
 * of @family first, until one connects or @deadline passes: the socket,
 * its peer in *@server, and @host's addresses in *@addrs (NULL if none;
 * the caller frees them).  No netconfig entry is needed.  On failure -1,
 * with rpc_createerr set, every field: RPC_UNKNOWNHOST for a name that
 * does not resolve (EHOSTUNREACH), not by @deadline (ETIMEDOUT) or not
 * for now (EAGAIN: the resolver's temporary failure, or too many lookups
 * left running, rpcrdma_resolve_by), else
 * RPC_SYSTEMERROR with the first address's connect error (ETIMEDOUT at
 * the deadline).
 */
static int remote_rpcbind(const char *host, const char *service, int family, int64_t deadline,
			  struct sockaddr_storage *server, struct addrinfo **addrs)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *list = NULL;
	int fd = -1, first_err = 0;
	int rc = rpcrdma_resolve(host, service, &hints, deadline, &list);

	*addrs = list;
	if (rc || !list) {
		bool for_now = rc == -ETIMEDOUT || rc == -EAGAIN;

		rpcrdma_createerr_set(RPC_UNKNOWNHOST, for_now ? -rc : EHOSTUNREACH);
		return -1;
	}
	for (int pass = 0; pass < 2 && fd < 0; pass++) {
		for (const struct addrinfo *ai = list; ai && fd < 0; ai = ai->ai_next) {
			int err = 0;

			if ((ai->ai_family == family) != (pass == 0) || ai->ai_addrlen > sizeof(*server))
				continue;
			fd = rpcbind_at(ai, deadline, &err);
			if (fd >= 0)
				memcpy(server, ai->ai_addr, ai->ai_addrlen);
			else if (!first_err)
				first_err = err;
			if (fd < 0 && rpcrdma_ms_left(deadline) == 0)
				break;
		}
	}
	if (fd < 0)
		rpcrdma_createerr_set(RPC_SYSTEMERROR, first_err ? first_err : EAFNOSUPPORT);
	return fd;
}

static bool addr_is_wildcard(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == htonl(INADDR_ANY);
	return ss->ss_family == AF_INET6 &&
	       IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

int rpcrdma_rpcb_merge(struct sockaddr_storage *addr, const struct sockaddr *host)
{
	if (!addr_is_wildcard(addr))
		return 0;
	if (!host || host->sa_family != addr->ss_family)
		return -EAFNOSUPPORT;
	if (host->sa_family == AF_INET) {
		((struct sockaddr_in *)addr)->sin_addr = ((const struct sockaddr_in *)host)->sin_addr;
	} else {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)addr;
		const struct sockaddr_in6 *h6 = (const struct sockaddr_in6 *)host;

		a6->sin6_addr = h6->sin6_addr;
		a6->sin6_scope_id = h6->sin6_scope_id; /* a link-local host needs its interface */
	}
	return 0;
}

/*
 * Merge a wildcard @out with the address rpcbind answered on (@server),
 * else with the first of the host's addresses (@addrs) of its family.
 */
static int merge_wildcard(const struct sockaddr_storage *server, const struct addrinfo *addrs,
			  struct sockaddr_storage *out)
{
	if (rpcrdma_rpcb_merge(out, (const struct sockaddr *)server) == 0)
		return 0;
	for (const struct addrinfo *ai = addrs; ai; ai = ai->ai_next)
		if (ai->ai_family == out->ss_family && rpcrdma_rpcb_merge(out, ai->ai_addr) == 0)
			return 0;
	rpcrdma_createerr_set(RPC_UNKNOWNHOST, EADDRNOTAVAIL);
	return -EADDRNOTAVAIL;
}

static const rpcb *find_entry(const rpcblist_ptr list, rpcprog_t prog, rpcvers_t vers,
			      const char *netid)
{
	for (const rp__list *e = list; e; e = e->rpcb_next)
		if (e->rpcb_map.r_prog == prog && e->rpcb_map.r_vers == vers &&
		    e->rpcb_map.r_netid && !strcmp(e->rpcb_map.r_netid, netid))
			return &e->rpcb_map;
	return NULL;
}

int rpcrdma_rpcb_lookup_service(const char *host, const char *service, rpcprog_t prog,
				rpcvers_t vers, const char *netid, int timeout_ms,
				struct sockaddr_storage *out)
{
	int64_t deadline = rpcrdma_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	struct sockaddr_storage server = { 0 };
	struct addrinfo *addrs = NULL;
	rpcblist_ptr list = NULL;
	struct rpc_err err;
	const rpcb *entry;
	int family, fd, ret;

	if (!host || !service || timeout_ms <= 0 || !rpcrdma_netid_family(netid, &family))
		return -EINVAL;
	fd = remote_rpcbind(host, service, family, deadline, &server, &addrs);
	if (fd < 0) {
		if (addrs)
			freeaddrinfo(addrs);
		return -EHOSTUNREACH;
	}
	/* one lookup per connection: any xid tells its reply apart */
	if (rpcrdma_rpcb_dump(fd, (uint32_t)deadline ^ (uint32_t)getpid(), deadline, &list, &err)) {
		rpc_createerr.cf_stat = RPC_PMAPFAILURE;
		rpc_createerr.cf_error = err;
		ret = -EIO;
	} else {
		entry = find_entry(list, prog, vers, netid);
		if (!entry)
			rpcrdma_createerr_set(RPC_PROGNOTREGISTERED, ENOENT);
		ret = !entry ? -ENOENT : rpcrdma_uaddr_parse(entry->r_addr, family, out);
		if (!ret)
			ret = merge_wildcard(&server, addrs, out);
	}
	xdr_free((xdrproc_t)xdr_rpcblist_ptr, (char *)&list);
	freeaddrinfo(addrs);
	close(fd);
	return ret;
}

int rpcrdma_rpcb_lookup_timed(const char *host, rpcprog_t prog, rpcvers_t vers,
			      const char *netid, int timeout_ms, struct sockaddr_storage *out)
{
	return rpcrdma_rpcb_lookup_service(host, "111", prog, vers, netid, timeout_ms, out);
}

int rpcrdma_rpcb_lookup(const char *host, rpcprog_t prog, rpcvers_t vers,
			const char *netid, struct sockaddr_storage *out)
{
	return rpcrdma_rpcb_lookup_timed(host, prog, vers, netid, RPCRDMA_RPCB_TIMEOUT_MS, out);
}
