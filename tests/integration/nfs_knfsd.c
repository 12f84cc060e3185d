/*
 * nfs_knfsd: rpcrdma's CLIENT against the Linux kernel NFS server over
 * RDMA, with the NFSv3 and MOUNTv3 XDR of nfs-client-demo/.  For each
 * address:
 *   1. MOUNTPROC3_MNT of EXPORT with stock libtirpc over TCP (nettype
 *      "tcp": netid tcp or tcp6) gives the export's root file handle;
 *   2. clnt_rdma_tli_create(ADDR port 20049, NFS_PROGRAM, NFS_V3, NULL);
 *   3. NFSPROC3_NULL succeeds;
 *   4. NFSPROC3_FSINFO of the root handle answers NFS3_OK with sane
 *      limits: rtmax, wtmax > 0, rtpref <= rtmax, wtpref <= wtmax,
 *      maxfilesize > 0 (knfsd sends no attributes with FSINFO);
 *   5. NFSPROC3_GETATTR of the root handle: NFS3_OK, a directory;
 *   6. FSINFO of a damaged handle answers NFS3ERR_BADHANDLE or
 *      NFS3ERR_STALE (the server's status really is decoded);
 *   7. MOUNTPROC3_UMNT.
 *
 *   nfs_knfsd PROVIDER EXPORT ADDR...     (run by nfs_knfsd.test)
 *
 * Prints PASS/FAIL per check; exits 0 only when every check passed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "mount3.h"
#include "nfs3.h"
#include "rpcrdma/rpcrdma.h"

#define PROG "nfs_knfsd"
#define NFS_RDMA_PORT 20049

static const struct timeval call_tv = { .tv_sec = 30 };
static unsigned int failures;

static void __attribute__((format(printf, 2, 3))) check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s: %s: ", PROG, ok ? "PASS" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	failures += !ok;
}

static bool is_ipv6(const char *addr)
{
	return strchr(addr, ':') != NULL;
}

/* ---- MOUNT over TCP ---------------------------------------------------------------------------- */

static CLIENT *mount_client(const char *addr)
{
	CLIENT *cl = clnt_create(addr, MOUNT_PROGRAM, MOUNT_V3, "tcp");

	check(cl != NULL, "clnt_create(%s, MOUNT_PROGRAM, MOUNT_V3, \"tcp\")%s", addr,
	      cl ? "" : clnt_spcreateerror(""));
	if (!cl)
		return NULL;
	auth_destroy(cl->cl_auth);
	cl->cl_auth = authunix_create_default();
	return cl;
}

/* MNT @export; on success the root handle is copied to @fh (free with free(fh->data.data_val)). */
static bool mount_export(CLIENT *mc, const char *export, nfs_fh3 *fh)
{
	mountres3 res;
	enum clnt_stat st;
	bool ok;

	memset(&res, 0, sizeof(res));
	st = clnt_call(mc, MOUNTPROC3_MNT, (xdrproc_t)xdr_dirpath, (char *)&export,
		       (xdrproc_t)xdr_mountres3, (char *)&res, call_tv);
	ok = st == RPC_SUCCESS && res.fhs_status == MNT3_OK;
	check(ok, "MOUNTPROC3_MNT %s: %s, status %d", export, clnt_sperrno(st),
	      st == RPC_SUCCESS ? (int)res.fhs_status : -1);
	if (ok) {
		const fhandle3 *h = &res.mountres3_u.mountinfo.fhandle;

		fh->data.data_len = h->fhandle3_len;
		fh->data.data_val = malloc(h->fhandle3_len ? h->fhandle3_len : 1);
		ok = fh->data.data_val != NULL;
		if (ok)
			memcpy(fh->data.data_val, h->fhandle3_val, h->fhandle3_len);
		printf("%s: root file handle: %u bytes\n", PROG, h->fhandle3_len);
	}
	if (st == RPC_SUCCESS)
		clnt_freeres(mc, (xdrproc_t)xdr_mountres3, (char *)&res);
	return ok;
}

static void unmount_export(CLIENT *mc, const char *export)
{
	enum clnt_stat st = clnt_call(mc, MOUNTPROC3_UMNT, (xdrproc_t)xdr_dirpath, (char *)&export,
				      (xdrproc_t)(void (*)(void))xdr_void, NULL, call_tv);

	check(st == RPC_SUCCESS, "MOUNTPROC3_UMNT %s: %s", export, clnt_sperrno(st));
}

/* ---- NFS over RDMA ----------------------------------------------------------------------------- */

static CLIENT *nfs_rdma_client(const char *addr)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	struct rpcrdma_conn_info info = RPCRDMA_CONN_INFO_INIT;
	CLIENT *cl;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(NFS_RDMA_PORT);
	} else if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(NFS_RDMA_PORT);
	}
	cl = clnt_rdma_tli_create((struct sockaddr *)&ss, NFS_PROGRAM, NFS_V3, NULL);
	check(cl != NULL, "clnt_rdma_tli_create(%s port %d, NFS_PROGRAM, NFS_V3)%s", addr,
	      NFS_RDMA_PORT, cl ? "" : clnt_spcreateerror(""));
	if (!cl)
		return NULL;
	if (clnt_rdma_getinfo(cl, &info) == 0)
		printf("%s: connection: %s, inline send %u recv %u, credits %u, IRD %u ORD %u, "
		       "peer private data %s\n", PROG, info.iwarp ? "iWARP" : "IB/RoCE",
		       info.inline_send, info.inline_recv, info.credits, info.ird, info.ord,
		       info.peer_private_data ? "yes" : "no");
	auth_destroy(cl->cl_auth);
	cl->cl_auth = authunix_create_default();
	return cl;
}

static enum clnt_stat fsinfo(CLIENT *cl, nfs_fh3 *fh, FSINFO3res *res)
{
	FSINFO3args args = { *fh };

	memset(res, 0, sizeof(*res));
	return clnt_call(cl, NFSPROC3_FSINFO, (xdrproc_t)xdr_FSINFO3args, (char *)&args,
			 (xdrproc_t)xdr_FSINFO3res, (char *)res, call_tv);
}

static void check_fsinfo_ok(const FSINFO3resok *r)
{
	printf("%s: FSINFO: rtmax %u rtpref %u rtmult %u wtmax %u wtpref %u wtmult %u dtpref %u "
	       "maxfilesize %llu properties %#x\n", PROG, r->rtmax, r->rtpref, r->rtmult,
	       r->wtmax, r->wtpref, r->wtmult, r->dtpref, (unsigned long long)r->maxfilesize,
	       r->properties);
	check(r->rtmax > 0 && r->wtmax > 0, "FSINFO: rtmax %u and wtmax %u are positive",
	      r->rtmax, r->wtmax);
	check(r->rtpref > 0 && r->rtpref <= r->rtmax && r->wtpref > 0 && r->wtpref <= r->wtmax,
	      "FSINFO: 0 < rtpref %u <= rtmax, 0 < wtpref %u <= wtmax", r->rtpref, r->wtpref);
	check(r->maxfilesize > 0, "FSINFO: maxfilesize %llu is positive",
	      (unsigned long long)r->maxfilesize);
}

static void check_fsinfo(CLIENT *cl, nfs_fh3 *fh)
{
	FSINFO3res res;
	enum clnt_stat st = fsinfo(cl, fh, &res);

	check(st == RPC_SUCCESS && res.status == NFS3_OK, "NFSPROC3_FSINFO: %s, status %d",
	      clnt_sperrno(st), st == RPC_SUCCESS ? (int)res.status : -1);
	if (st == RPC_SUCCESS && res.status == NFS3_OK)
		check_fsinfo_ok(&res.FSINFO3res_u.resok);
	if (st == RPC_SUCCESS)
		clnt_freeres(cl, (xdrproc_t)xdr_FSINFO3res, (char *)&res);
}

static void check_getattr(CLIENT *cl, nfs_fh3 *fh)
{
	GETATTR3args args = { *fh };
	GETATTR3res res;
	enum clnt_stat st;
	const fattr3 *a = &res.GETATTR3res_u.resok.obj_attributes;

	memset(&res, 0, sizeof(res));
	st = clnt_call(cl, NFSPROC3_GETATTR, (xdrproc_t)xdr_GETATTR3args, (char *)&args,
		       (xdrproc_t)xdr_GETATTR3res, (char *)&res, call_tv);
	check(st == RPC_SUCCESS && res.status == NFS3_OK, "NFSPROC3_GETATTR: %s, status %d",
	      clnt_sperrno(st), st == RPC_SUCCESS ? (int)res.status : -1);
	if (st != RPC_SUCCESS)
		return;
	if (res.status == NFS3_OK)
		check(a->type == NF3DIR, "GETATTR: the root is a directory (type %d, mode %o, "
		      "fileid %llu)", (int)a->type, a->mode, (unsigned long long)a->fileid);
	clnt_freeres(cl, (xdrproc_t)xdr_GETATTR3res, (char *)&res);
}

static void check_bad_handle(CLIENT *cl, const nfs_fh3 *fh)
{
	char bad[NFS3_FHSIZE];
	nfs_fh3 damaged = { { fh->data.data_len, bad } };
	FSINFO3res res;
	enum clnt_stat st;

	/* Keep the handle's header, change everything after it. */
	memcpy(bad, fh->data.data_val, fh->data.data_len);
	for (u_int i = 4; i < fh->data.data_len; i++)
		bad[i] = (char)~bad[i];
	st = fsinfo(cl, &damaged, &res);
	check(st == RPC_SUCCESS && (res.status == NFS3ERR_BADHANDLE || res.status == NFS3ERR_STALE),
	      "NFSPROC3_FSINFO of a damaged handle: %s, status %d (want %d or %d)",
	      clnt_sperrno(st), st == RPC_SUCCESS ? (int)res.status : -1, NFS3ERR_BADHANDLE,
	      NFS3ERR_STALE);
	if (st == RPC_SUCCESS)
		clnt_freeres(cl, (xdrproc_t)xdr_FSINFO3res, (char *)&res);
}

static void run(const char *provider, const char *export, const char *addr)
{
	nfs_fh3 root = { { 0, NULL } };
	CLIENT *mc, *cl;
	enum clnt_stat st;

	printf("%s: == %s %s (%s)\n", PROG, provider, is_ipv6(addr) ? "IPv6" : "IPv4", addr);
	mc = mount_client(addr);
	if (!mc)
		return;
	if (mount_export(mc, export, &root) && (cl = nfs_rdma_client(addr))) {
		st = clnt_call(cl, NFSPROC3_NULL, (xdrproc_t)(void (*)(void))xdr_void, NULL,
			       (xdrproc_t)(void (*)(void))xdr_void, NULL, call_tv);
		check(st == RPC_SUCCESS, "%s", clnt_sperror(cl, "NFSPROC3_NULL over RDMA"));
		check_fsinfo(cl, &root);
		check_getattr(cl, &root);
		check_bad_handle(cl, &root);
		clnt_destroy(cl);
	}
	if (root.data.data_val)
		unmount_export(mc, export);
	free(root.data.data_val);
	clnt_destroy(mc);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s PROVIDER EXPORT ADDR...\n", PROG);
		return 2;
	}
	/* siw charges registrations to RLIMIT_MEMLOCK (replies without a binding may be 16 MiB). */
	setrlimit(RLIMIT_MEMLOCK, &(struct rlimit){ RLIM_INFINITY, RLIM_INFINITY });
	for (int i = 3; i < argc; i++)
		run(argv[1], argv[2], argv[i]);
	printf("%s: %s: %s (%u failed)\n", PROG, argv[1], failures ? "FAILED" : "all passed",
	       failures);
	return failures ? 1 : 0;
}
