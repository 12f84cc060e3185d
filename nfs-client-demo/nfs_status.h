/*
 * nfs_status: the demo client's typed result.  Every operation returns
 * a struct nfs_status saying whether it worked and, if not, which layer
 * failed (the NFS server, the RPC transport, a local file, the mount);
 * the layer decides the exit status and the message.
 */
#ifndef NFS_CLIENT_DEMO_NFS_STATUS_H
#define NFS_CLIENT_DEMO_NFS_STATUS_H

#include <stdbool.h>
#include <stddef.h>

#include <rpc/rpc.h>

#include "nfs3.h"

enum nfs_status_kind {
	NFS_STATUS_OK,
	NFS_STATUS_NFS,     /* the server answered with nfsstat3 @code */
	NFS_STATUS_RPC,     /* the call failed: enum clnt_stat @code */
	NFS_STATUS_LOCAL,   /* a local operation failed: errno @code */
	NFS_STATUS_MOUNT,   /* MOUNT refused: mountstat3 @code */
	NFS_STATUS_CONNECT, /* the server cannot be reached: errno @code (0: see the message) */
};

struct nfs_status {
	enum nfs_status_kind kind;
	int code;
};

/* Exit statuses, documented in nfs-client-demo(1). */
enum nfs_exit {
	NFS_EXIT_OK = 0,
	NFS_EXIT_FAILED = 1,   /* an NFS error or a local file error */
	NFS_EXIT_USAGE = 2,
	NFS_EXIT_CONNECT = 3,  /* cannot reach the server or mount the export */
	NFS_EXIT_RPC = 4,      /* an RPC failed during the command */
};

static inline struct nfs_status nfs_ok(void) { return (struct nfs_status){ NFS_STATUS_OK, 0 }; }
static inline struct nfs_status nfs_err(nfsstat3 s) { return (struct nfs_status){ NFS_STATUS_NFS, (int)s }; }
static inline struct nfs_status nfs_rpc_err(enum clnt_stat s) { return (struct nfs_status){ NFS_STATUS_RPC, (int)s }; }
static inline struct nfs_status nfs_local_err(int e) { return (struct nfs_status){ NFS_STATUS_LOCAL, e }; }
static inline bool nfs_failed(struct nfs_status st) { return st.kind != NFS_STATUS_OK; }
static inline bool nfs_is(struct nfs_status st, nfsstat3 s)
{
	return st.kind == NFS_STATUS_NFS && st.code == (int)s;
}

/*
 * nfs_stat3_errno - the errno an NFSv3 status corresponds to (RFC 1813
 * numbers most of them after Unix errnos), or 0 for statuses without
 * one (NFS3ERR_BADHANDLE, NFS3ERR_SERVERFAULT, ...).
 */
int nfs_stat3_errno(nfsstat3 s);

/* nfs_stat3_name - "NFS3ERR_NOENT" etc., "NFS3ERR_#N" for unknown values. */
const char *nfs_stat3_name(nfsstat3 s, char *buf, size_t len);

/*
 * nfs_status_message - the text after "PATH: " in an error message:
 * strerror() of the matching errno, the status name otherwise,
 * clnt_sperrno()'s text ("RPC: Timed out") for RPC failures.
 */
const char *nfs_status_message(struct nfs_status st, char *buf, size_t len);

/* nfs_status_exit - the exit status for a result (NFS_EXIT_OK for success). */
enum nfs_exit nfs_status_exit(struct nfs_status st);

#endif
