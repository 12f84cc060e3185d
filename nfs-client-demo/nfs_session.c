/*
 * nfs_session: mounting an export and the NFS clients of a session.
 * MOUNT uses libtirpc over TCP through rpcbind, as mount.nfs does; NFS
 * goes to a fixed port (20049 for RDMA, 2049 for TCP, or the URL's).
 * The host is resolved once, so MOUNT and NFS reach the same address,
 * within the time of a call (the library's bounded resolver).
 */
#include "nfs_session.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <netinet/in.h>

#include "mount3.h"
#include "nfs3_ulb.h"
#include "nfs_mount.h"
#include "nfs_proc.h"
#include "rpcrdma/resolve.h"
#include "rpcrdma/rpcrdma.h"
#include "rpcrdma/verbs.h"

static AUTH *session_auth(const struct nfs_session *s)
{
	char host[256] = "localhost";
	const struct nfs_url *u = &s->cfg.url;

	if (!u->has_uid && !u->has_gid)
		return authunix_create_default();
	gethostname(host, sizeof(host) - 1);
	return authunix_create(host, u->has_uid ? u->uid : geteuid(), u->has_gid ? u->gid : getegid(),
			       0, NULL);
}

/* AUTH_SYS for @cl; false (rpc_createerr set) if none could be made: calls must not go out as AUTH_NONE. */
static bool set_auth(struct nfs_session *s, CLIENT *cl)
{
	AUTH *a = session_auth(s);

	if (!a) {
		rpc_createerr.cf_stat = RPC_SYSTEMERROR;
		rpc_createerr.cf_error.re_errno = ENOMEM;
		return false;
	}
	auth_destroy(cl->cl_auth);
	cl->cl_auth = a;
	return true;
}

static void destroy_client(CLIENT *cl)
{
	if (!cl)
		return;
	if (cl->cl_auth)
		auth_destroy(cl->cl_auth);
	clnt_destroy(cl);
}

/* "RPC: ... (errno text)" from rpc_createerr. */
static void create_error(char *why, size_t len, const char *what)
{
	if (rpc_createerr.cf_stat == RPC_SYSTEMERROR && rpc_createerr.cf_error.re_errno)
		snprintf(why, len, "%s: %s", what, strerror(rpc_createerr.cf_error.re_errno));
	else
		snprintf(why, len, "%s: %s", what, clnt_sperrno(rpc_createerr.cf_stat));
}

/* getaddrinfo's own words for the library's resolver errors. */
static const char *resolve_error(int rc)
{
	switch (rc) {
	case -EADDRNOTAVAIL:
		return gai_strerror(EAI_NONAME);
	case -ETIMEDOUT: /* what getaddrinfo says once its DNS servers time out */
	case -EAGAIN:
		return gai_strerror(EAI_AGAIN);
	default:
		return strerror(-rc);
	}
}

/* A host name's lookup has the time of a call (--timeout); getaddrinfo has only the resolver's own. */
static struct nfs_status resolve(struct nfs_session *s, char *why, size_t why_len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG }, *ai;
	int64_t deadline = rpcrdma_now_ms() + (int64_t)s->cfg.timeout_s * 1000;
	int rc;

	if (strchr(s->cfg.url.host, ':'))
		hints.ai_flags = AI_NUMERICHOST;
	rc = rpcrdma_resolve(s->cfg.url.host, NULL, &hints, deadline, &ai);
	if (rc) {
		snprintf(why, why_len, "%s", resolve_error(rc));
		return (struct nfs_status){ NFS_STATUS_CONNECT, 0 };
	}
	memcpy(&s->addr, ai->ai_addr, ai->ai_addrlen);
	s->addrlen = ai->ai_addrlen;
	freeaddrinfo(ai);
	if (s->addr.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&s->addr)->sin6_port = htons(s->cfg.url.port);
	else
		((struct sockaddr_in *)&s->addr)->sin_port = htons(s->cfg.url.port);
	return nfs_ok();
}

static void numeric_host(const struct nfs_session *s, char *buf, size_t len)
{
	if (getnameinfo((const struct sockaddr *)&s->addr, s->addrlen, buf, (socklen_t)len, NULL, 0,
			NI_NUMERICHOST))
		snprintf(buf, len, "%s", s->cfg.url.host);
}

static const char *tcp_netid(const struct nfs_session *s)
{
	return s->addr.ss_family == AF_INET6 ? "tcp6" : "tcp";
}

static struct nfs_status mount_export(struct nfs_session *s, char *why, size_t why_len)
{
	char host[NI_MAXHOST];
	const char *path = s->cfg.url.export_path;
	struct netconfig *nc = getnetconfigent(tcp_netid(s));
	mountres3 r;
	enum clnt_stat cs;
	struct nfs_status st;

	if (!nc) { /* rpc_createerr says nothing of it */
		snprintf(why, why_len, "MOUNT: no netconfig entry for %s", tcp_netid(s));
		return (struct nfs_status){ NFS_STATUS_CONNECT, 0 };
	}
	numeric_host(s, host, sizeof(host));
	s->mnt = clnt_tp_create_timed(host, MOUNT_PROGRAM, MOUNT_V3, nc, &s->tv); /* rpcbind too */
	freenetconfigent(nc);
	if (!s->mnt || !set_auth(s, s->mnt)) {
		create_error(why, why_len, "MOUNT");
		return (struct nfs_status){ NFS_STATUS_CONNECT, 0 };
	}
	memset(&r, 0, sizeof(r));
	cs = clnt_call(s->mnt, MOUNTPROC3_MNT, (xdrproc_t)xdr_dirpath, (char *)&path,
		       (xdrproc_t)xdr_mountres3, (char *)&r, s->tv);
	if (cs != RPC_SUCCESS) {
		clnt_freeres(s->mnt, (xdrproc_t)xdr_mountres3, (char *)&r); /* a partial decode */
		snprintf(why, why_len, "MOUNT: %s", clnt_sperrno(cs));
		return (struct nfs_status){ NFS_STATUS_CONNECT, 0 };
	}
	s->mounted = r.fhs_status == MNT3_OK; /* whatever follows, the server lists the mount */
	st = nfs_mount_reply(&r, &s->root, why, why_len);
	clnt_freeres(s->mnt, (xdrproc_t)xdr_mountres3, (char *)&r);
	return st;
}

static CLIENT *tcp_client(struct nfs_session *s)
{
	struct netconfig *nc = getnetconfigent(tcp_netid(s));
	struct netbuf nb = { .maxlen = s->addrlen, .len = s->addrlen, .buf = &s->addr };
	CLIENT *cl;

	if (!nc)
		return NULL;
	cl = clnt_tli_create(RPC_ANYFD, nc, &nb, NFS_PROGRAM, NFS_V3, 0, 0);
	freenetconfigent(nc);
	return cl;
}

static bool retry_timeout_set(const struct nfs_session *s, CLIENT *cl)
{
	struct timeval tv = { .tv_sec = s->cfg.retry_timeout_s };

	if (!s->cfg.retry_timeout_s || clnt_control(cl, CLSET_RETRY_TIMEOUT, (char *)&tv))
		return true;
	rpc_createerr.cf_stat = RPC_SYSTEMERROR;
	rpc_createerr.cf_error.re_errno = EINVAL;
	return false;
}

static CLIENT *nfs_client(struct nfs_session *s)
{
	struct rpcrdma_options o;
	CLIENT *cl;

	if (s->cfg.url.proto == NFS_URL_PROTO_TCP) {
		cl = tcp_client(s);
	} else {
		rpcrdma_options_init(&o);
		o.ulb = &nfs3_ulb;
		o.call_timeout = s->tv;
		o.reconnect_resend = s->cfg.retry;
		cl = clnt_rdma_tli_create((struct sockaddr *)&s->addr, NFS_PROGRAM, NFS_V3, &o);
		if (cl && !retry_timeout_set(s, cl)) {
			clnt_destroy(cl);
			return NULL;
		}
	}
	if (cl && !set_auth(s, cl)) {
		destroy_client(cl);
		return NULL;
	}
	return cl;
}

static uint32_t io_size(uint32_t server_max, uint32_t cap)
{
	uint32_t v = server_max ? server_max : NFS_SESSION_IO_MIN;

	if (v > NFS_SESSION_IO_MAX)
		v = NFS_SESSION_IO_MAX;
	if (cap && v > cap)
		v = cap;
	return v;
}

struct nfs_status nfs_session_open(struct nfs_session *s, const struct nfs_session_config *cfg,
				   char *why, size_t why_len)
{
	struct nfs_status st;
	FSINFO3resok fi;

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	s->tv.tv_sec = cfg->timeout_s;
	nfs_url_export_name(&cfg->url, s->what);
	why[0] = '\0';
	st = resolve(s, why, why_len);
	if (!nfs_failed(st))
		st = mount_export(s, why, why_len);
	if (nfs_failed(st))
		return st;
	s->clnt = nfs_client(s);
	if (!s->clnt) {
		create_error(why, why_len, s->cfg.url.proto == NFS_URL_PROTO_TCP ? "NFS over TCP"
										   : "NFS over RDMA");
		return (struct nfs_status){ NFS_STATUS_CONNECT, 0 };
	}
	st = nfs3_fsinfo(s, &s->root, &fi);
	if (nfs_failed(st)) {
		snprintf(why, why_len, "FSINFO");
		return st;
	}
	s->rsize = io_size(fi.rtmax, cfg->rsize_cap);
	s->wsize = io_size(fi.wtmax, cfg->wsize_cap);
	s->maxfilesize = fi.maxfilesize;
	return nfs_ok();
}

/*
 * UMNT only tidies the server's list of mounts (rmtab): a server that
 * stopped answering has already cost the command its timeout, so the
 * UMNT waits SESSION_UMNT_WAIT_S at most, not --timeout again.
 */
#define SESSION_UMNT_WAIT_S 5

void nfs_session_close(struct nfs_session *s)
{
	const char *path = s->cfg.url.export_path;
	struct timeval tv = s->tv;

	if (tv.tv_sec >= SESSION_UMNT_WAIT_S)
		tv = (struct timeval){ SESSION_UMNT_WAIT_S, 0 };
	destroy_client(s->clnt);
	s->clnt = NULL;
	if (s->mnt && s->mounted)
		clnt_call(s->mnt, MOUNTPROC3_UMNT, (xdrproc_t)xdr_dirpath, (char *)&path,
			  (xdrproc_t)(void (*)(void))xdr_void, NULL, tv);
	destroy_client(s->mnt);
	s->mnt = NULL;
}

CLIENT *nfs_session_worker_client(struct nfs_session *s, struct nfs_status *st)
{
	CLIENT *cl;

	if (s->cfg.url.proto == NFS_URL_PROTO_RDMA)
		return s->clnt;
	cl = tcp_client(s);
	if (!cl) {
		*st = nfs_rpc_err(rpc_createerr.cf_stat);
		return NULL;
	}
	if (!set_auth(s, cl)) {
		destroy_client(cl);
		*st = nfs_local_err(ENOMEM);
		return NULL;
	}
	return cl;
}

void nfs_session_worker_release(struct nfs_session *s, CLIENT *cl)
{
	if (cl != s->clnt)
		destroy_client(cl);
}

void nfs_session_renew(struct nfs_session *s)
{
	CLIENT *cl;

	if (s->cfg.url.proto != NFS_URL_PROTO_TCP)
		return;
	cl = nfs_client(s);
	if (!cl)
		return; /* the old one may still serve: its next call tells */
	destroy_client(s->clnt);
	s->clnt = cl;
}

static const char *registration_name(enum rpcrdma_registration r)
{
	return r == RPCRDMA_REG_MEMORY_WINDOW ? "memory windows" : "per-call MR";
}

static const char *ccp_name(enum rpcrdma_ccp_outcome c)
{
	switch (c) {
	case RPCRDMA_CCP_USED: return "used";
	case RPCRDMA_CCP_NOT_OFFERED: return "not offered by the server";
	default: return "not asked";
	}
}

void nfs_session_describe(struct nfs_session *s, char *buf, size_t len)
{
	char host[NI_MAXHOST];
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;
	int n;

	numeric_host(s, host, sizeof(host));
	if (s->cfg.url.proto == NFS_URL_PROTO_TCP) {
		snprintf(buf, len, "transport: tcp %s port %u (libtirpc)\nrsize %u wsize %u", host,
			 s->cfg.url.port, s->rsize, s->wsize);
		return;
	}
	n = snprintf(buf, len, "transport: rdma %s port %u", host, s->cfg.url.port);
	if (n < 0 || (size_t)n >= len)
		return;
	if (clnt_rdma_getinfo(s->clnt, &ci) != 0) {
		snprintf(buf + n, len - (size_t)n, " (not connected)\nrsize %u wsize %u", s->rsize,
			 s->wsize);
		return;
	}
	snprintf(buf + n, len - (size_t)n,
		 " (%s)\ninline send %u recv %u, credits %u, remote invalidation %s, IRD %u ORD %u, "
		 "peer private data %s, registration %s, CCP %s, Sends copied at the post up to %u "
		 "bytes\nrsize %u wsize %u",
		 ci.iwarp ? "iWARP" : "InfiniBand/RoCE", ci.inline_send, ci.inline_recv, ci.credits,
		 ci.remote_invalidate ? "yes" : "no", ci.ird, ci.ord,
		 ci.peer_private_data ? "yes" : "no", registration_name(ci.registration),
		 ccp_name(ci.ccp), ci.send_wr_inline, s->rsize, s->wsize);
}
