/*
 * RPCBPROC_SET/UNSET over AF_LOCAL and RPCBPROC_DUMP lookups, with
 * libtirpc's own CLIENTs and XDR routines.
 */
#include "rpcrdma/rpcbind.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include <rpc/rpcb_prot.h>

#include "rpcrdma/netconfig.h"

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
	if (fd < 0)
		return NULL;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		rpc_createerr.cf_stat = RPC_SYSTEMERROR;
		rpc_createerr.cf_error.re_errno = errno;
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

static CLIENT *remote_rpcbind(const char *host)
{
	static const char *const nettypes[] = { "tcp", "tcp6" };

	for (size_t i = 0; i < sizeof(nettypes) / sizeof(nettypes[0]); i++) {
		CLIENT *clnt = clnt_create(host, RPCBPROG, RPCBVERS, nettypes[i]);

		if (clnt)
			return clnt;
	}
	return NULL;
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

int rpcrdma_rpcb_lookup(const char *host, rpcprog_t prog, rpcvers_t vers,
			const char *netid, struct sockaddr_storage *out)
{
	rpcblist_ptr list = NULL;
	const rpcb *entry;
	enum clnt_stat st;
	CLIENT *clnt;
	int family, ret;

	if (!rpcrdma_netid_family(netid, &family))
		return -EINVAL;
	clnt = remote_rpcbind(host);
	if (!clnt)
		return -EHOSTUNREACH;
	st = clnt_call(clnt, RPCBPROC_DUMP, (xdrproc_t)(void (*)(void))xdr_void, NULL,
		       (xdrproc_t)xdr_rpcblist_ptr, (char *)&list, rpcb_timeout);
	if (st != RPC_SUCCESS) {
		rpc_createerr.cf_stat = RPC_PMAPFAILURE;
		clnt_geterr(clnt, &rpc_createerr.cf_error);
		ret = -EIO;
	} else {
		entry = find_entry(list, prog, vers, netid);
		if (!entry)
			rpc_createerr.cf_stat = RPC_PROGNOTREGISTERED;
		ret = !entry ? -ENOENT : rpcrdma_uaddr_parse(entry->r_addr, family, out);
	}
	xdr_free((xdrproc_t)xdr_rpcblist_ptr, (char *)&list);
	clnt_destroy(clnt);
	return ret;
}
