/*
 * nfs_proc: the NFSv3 procedures the demo uses, as typed calls.  Each
 * takes the session (for the timeout) and the CLIENT to call through
 * (NULL: the session's), decodes the reply, copies out what the caller
 * asked for and frees the rest.  Returns ok, NFS_STATUS_NFS with the
 * server's status or NFS_STATUS_RPC with the call's failure.
 */
#ifndef NFS_CLIENT_DEMO_NFS_PROC_H
#define NFS_CLIENT_DEMO_NFS_PROC_H

#include <stdbool.h>
#include <stdint.h>

#include "nfs_session.h"

/*
 * nfs3_call - one call whose decoded reply stays in @res (its first
 * @res_size bytes zeroed first) until nfs3_release(): ok or the server's
 * status (read from @status, the reply's nfsstat3, inside @res: not const,
 * since the call writes it), or the RPC failure; nfs3_release() in every
 * case (a reply that failed to decode partway holds what it decoded).
 * NFS3_CALL(s, cl, proc, GETATTR3, &args, &res) names the rpcgen routines.
 */
struct nfs_status nfs3_call(struct nfs_session *s, CLIENT *cl, rpcproc_t proc, xdrproc_t xa,
			    const void *args, xdrproc_t xr, void *res, size_t res_size,
			    nfsstat3 *status);
/* nfs3_release - free what nfs3_call() decoded, a reply cut short too; returns @st. */
struct nfs_status nfs3_release(struct nfs_session *s, CLIENT *cl, xdrproc_t xr, void *res,
			       struct nfs_status st);

#define NFS3_CALL(s, cl, proc, T, argp, resp)                                                 \
	nfs3_call((s), (cl), (proc), (xdrproc_t)xdr_##T##args, (argp), (xdrproc_t)xdr_##T##res, \
		  (resp), sizeof(*(resp)), &(resp)->status)
#define NFS3_RELEASE(s, cl, T, resp, st) \
	nfs3_release((s), (cl), (xdrproc_t)xdr_##T##res, (resp), (st))

struct nfs_status nfs3_null(struct nfs_session *s, CLIENT *cl);
struct nfs_status nfs3_getattr(struct nfs_session *s, CLIENT *cl, const struct nfs_fh *fh,
			       fattr3 *attr);
/* @out->attr is zeroed (type 0) when the server sent no attributes. */
struct nfs_status nfs3_lookup(struct nfs_session *s, const struct nfs_fh *dir, const char *name,
			      struct nfs_node *out);
struct nfs_status nfs3_fsinfo(struct nfs_session *s, const struct nfs_fh *root, FSINFO3resok *out);
struct nfs_status nfs3_fsstat(struct nfs_session *s, const struct nfs_fh *root, FSSTAT3resok *out);

/*
 * nfs3_read - READ up to @count bytes at @offset into @buf (capacity
 * @count): the data is decoded straight into @buf, and a reply carrying
 * more than @count bytes fails to decode (RPC_CANTDECODERES), and one with
 * no data and no eof is NFS3ERR_IO (it would make no progress).  *@got
 * and *@eof tell what came.
 */
struct nfs_status nfs3_read(struct nfs_session *s, CLIENT *cl, const struct nfs_fh *fh,
			    uint64_t offset, uint32_t count, void *buf, uint32_t *got, bool *eof);

/* What a WRITE did: bytes written (at most those sent), how stably, the server's verifier. */
struct nfs_write_res {
	uint32_t done;
	stable_how committed;
	char verf[NFS3_WRITEVERFSIZE];
};

/* nfs3_write - WRITE @count bytes at @offset, asking for @how; *@w says what was done. */
struct nfs_status nfs3_write(struct nfs_session *s, CLIENT *cl, const struct nfs_fh *fh,
			     uint64_t offset, const void *buf, uint32_t count, stable_how how,
			     struct nfs_write_res *w);
struct nfs_status nfs3_commit(struct nfs_session *s, CLIENT *cl, const struct nfs_fh *fh,
			      char verf[NFS3_WRITEVERFSIZE]);

/*
 * nfs3_create - with @verf (NFS3_CREATEVERFSIZE bytes) EXCLUSIVE, then
 * SETATTR of @mode and both times: fails with NFS3ERR_EXIST if the file
 * exists, but the same call sent again (after a lost connection, past
 * the server's reply cache) succeeds; a server that answers EXCLUSIVE
 * with NFS3ERR_NOTSUPP gets GUARDED with @mode instead.  Without @verf
 * UNCHECKED with size 0 (truncates).  *@made (if not NULL) says whether the CREATE itself
 * succeeded, also when the LOOKUP or SETATTR after it failed.
 */
struct nfs_status nfs3_create(struct nfs_session *s, const struct nfs_fh *dir, const char *name,
			      uint32_t mode, const char *verf, struct nfs_node *out, bool *made);
struct nfs_status nfs3_mkdir(struct nfs_session *s, const struct nfs_fh *dir, const char *name,
			     uint32_t mode);
struct nfs_status nfs3_symlink(struct nfs_session *s, const struct nfs_fh *dir, const char *name,
			       const char *target);
/* nfs3_readlink - the link text into @buf (at least NFS3_MAXPATHLEN + 1 bytes). */
struct nfs_status nfs3_readlink(struct nfs_session *s, CLIENT *cl, const struct nfs_fh *fh,
				char *buf);
struct nfs_status nfs3_remove(struct nfs_session *s, const struct nfs_fh *dir, const char *name);
struct nfs_status nfs3_rmdir(struct nfs_session *s, const struct nfs_fh *dir, const char *name);
struct nfs_status nfs3_rename(struct nfs_session *s, const struct nfs_fh *from_dir,
			      const char *from, const struct nfs_fh *to_dir, const char *to);

/* One directory entry; @attr and @fh are NULL when the server sent none (or with READDIR). */
struct nfs_dirent {
	const char *name;
	uint64_t fileid;
	const fattr3 *attr;
	const nfs_fh3 *fh;
};

/* A walk past this many entries ("." and ".." included) without eof is refused (2^21). */
#define NFS_READDIR_ENTRIES_MAX (1u << 21)

/*
 * nfs3_readdir - every entry of @dir, READDIRPLUS when @plus, READDIR
 * otherwise, @count bytes of reply at a time; @fn returns false to stop
 * (the result is then ok).  Entries arrive in the server's order.
 * Besides the server's errors: NFS3ERR_BAD_COOKIE for a cookie asked
 * from before (a circle), NFS3ERR_TOOSMALL for a page with no entry
 * and no eof, EFBIG for a page without eof past NFS_READDIR_ENTRIES_MAX
 * entries.
 */
struct nfs_status nfs3_readdir(struct nfs_session *s, const struct nfs_fh *dir, bool plus,
			       uint32_t count, bool (*fn)(const struct nfs_dirent *, void *),
			       void *ctx);

#endif
