/*
 * nfs_session: one mounted export.  MOUNT v3 over TCP (stock libtirpc,
 * found through rpcbind) gives the root file handle; NFSv3 then runs over
 * rpcrdma (proto=rdma) or libtirpc TCP (proto=tcp).  FSINFO sets the
 * transfer sizes.  Paths are resolved from the root handle one LOOKUP
 * per component.
 */
#ifndef NFS_CLIENT_DEMO_NFS_SESSION_H
#define NFS_CLIENT_DEMO_NFS_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "nfs3.h"
#include "nfs_status.h"
#include "nfs_url.h"

#define NFS_SESSION_IO_MAX (1u << 20)   /* largest rsize/wsize the demo uses */
#define NFS_SESSION_IO_MIN 4096u

struct nfs_session_config {
	struct nfs_url url;
	unsigned int timeout_s;   /* per call */
	bool retry;               /* RDMA: resend calls cut off by a lost connection */
	unsigned int retry_timeout_s; /* RDMA, with retry: CLSET_RETRY_TIMEOUT; 0: none */
	uint32_t rsize_cap, wsize_cap; /* 0: no cap beyond NFS_SESSION_IO_MAX */
};

/* An owned copy of a file handle. */
struct nfs_fh {
	uint32_t len;
	char data[NFS3_FHSIZE];
};

struct nfs_session {
	struct nfs_session_config cfg;
	struct sockaddr_storage addr;   /* the NFS server, port set */
	socklen_t addrlen;
	CLIENT *clnt;                   /* the session's NFS client */
	CLIENT *mnt;                    /* MOUNT over TCP, for UMNT at the end */
	bool mounted;                   /* MNT succeeded: UMNT at the end */
	struct nfs_fh root;
	uint32_t rsize, wsize;
	uint64_t maxfilesize;
	struct timeval tv;
	char what[NFS_URL_NAME_MAX]; /* HOST:EXPORT, for messages */
};

/* A looked-up object: its handle and attributes. */
struct nfs_node {
	struct nfs_fh fh;
	fattr3 attr;
};

/*
 * nfs_session_open - resolve the host, MNT the export, connect NFS,
 * FSINFO.  Returns ok, or NFS_STATUS_CONNECT (errno; @why says what
 * failed), NFS_STATUS_MOUNT, NFS_STATUS_RPC, NFS_STATUS_NFS (FSINFO).
 * @why (at least 256 bytes) receives a human-readable reason on failure.
 */
struct nfs_status nfs_session_open(struct nfs_session *s, const struct nfs_session_config *cfg,
				   char *why, size_t why_len);

/* nfs_session_close - UMNT and destroy the clients; takes a half-opened session. */
void nfs_session_close(struct nfs_session *s);

/*
 * nfs_session_worker_client - a CLIENT a transfer thread may call
 * through: the session's own over RDMA (it pipelines calls from many
 * threads), a new TCP connection per thread over TCP (libtirpc's
 * CLIENT runs one call at a time).  Returns NULL with @st set on failure.
 * Release with nfs_session_worker_release().
 */
CLIENT *nfs_session_worker_client(struct nfs_session *s, struct nfs_status *st);
void nfs_session_worker_release(struct nfs_session *s, CLIENT *cl);

/*
 * nfs_session_renew - over TCP, the session's own CLIENT replaced by a new
 * connection, after the transfer threads' own connections carried the
 * traffic: the session's sat idle meanwhile, and knfsd closes a TCP
 * connection idle for 6 to 12 minutes, which libtirpc's CLIENT does not
 * reconnect.  The old one stays if no new one can be made.  Nothing over
 * RDMA, where the one CLIENT carries every call and reconnects itself.
 */
void nfs_session_renew(struct nfs_session *s);

/* nfs_session_describe - the transport lines --verbose prints (no trailing newline). */
void nfs_session_describe(struct nfs_session *s, char *buf, size_t len);

/*
 * nfs_lookup_path - resolve @path (relative to the export root; a
 * leading '/', empty components and "." are ignored; the empty path is
 * NFS3ERR_NOENT) to @out.  Symbolic
 * links are not followed.  Returns ok or the first failing LOOKUP's status
 * (NFS3ERR_NAMETOOLONG for a component over 255 bytes or a path over
 * 1024), NFS3ERR_NOTDIR for a path through or naming a non-directory
 * with a trailing "/" or "/." (nfs_path_names_dir).
 */
struct nfs_status nfs_lookup_path(struct nfs_session *s, const char *path, struct nfs_node *out);

/*
 * nfs_lookup_name - LOOKUP @name in @dir to @out, its type always known
 * (GETATTR when LOOKUP brought no attributes).  Returns ok or the failing
 * call's status.
 */
struct nfs_status nfs_lookup_name(struct nfs_session *s, const struct nfs_fh *dir,
				   const char *name, struct nfs_node *out);

/*
 * nfs_lookup_parent - resolve everything but the last component of
 * @path to @dir and point @name (at least NFS3_MAXNAMLEN + 1 bytes) at the
 * last one.  Returns NFS3ERR_INVAL when there is no last component (the
 * root, ".", ".."), NFS3ERR_NOENT for the empty path, NFS3ERR_NOTDIR
 * when the parent is not a directory.
 * Trailing slashes are dropped: the caller checks nfs_path_names_dir.
 */
struct nfs_status nfs_lookup_parent(struct nfs_session *s, const char *path, struct nfs_node *dir,
				    char *name);

/* nfs_path_names_dir - @path ends in "/" or "." after a "/" (or is "."): it names a directory. */
bool nfs_path_names_dir(const char *path);

/* A handle as XDR (pointing into @fh), and back: false for a length 0 or above NFS3_FHSIZE (nfs_proc.c). */
void nfs_fh_to_xdr(const struct nfs_fh *fh, nfs_fh3 *x);
bool nfs_fh_from_xdr(struct nfs_fh *fh, const nfs_fh3 *x);

#endif
