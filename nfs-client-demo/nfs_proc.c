/*
 * nfs_proc: NFSv3 calls with the rpcgen XDR of nfs3.x.  READ decodes its
 * data into the caller's buffer through a small wrapper around the
 * rpcgen routines, so file data is neither allocated nor copied per call.
 */
#include "nfs_proc.h"

#include <string.h>

#define XDR_VOID ((xdrproc_t)(void (*)(void))xdr_void)

void nfs_fh_to_xdr(const struct nfs_fh *fh, nfs_fh3 *x)
{
	x->data.data_len = fh->len;
	x->data.data_val = (char *)fh->data;
}

bool nfs_fh_from_xdr(struct nfs_fh *fh, const nfs_fh3 *x)
{
	if (x->data.data_len == 0 || x->data.data_len > NFS3_FHSIZE)
		return false;
	fh->len = x->data.data_len;
	memcpy(fh->data, x->data.data_val, fh->len);
	return true;
}

static CLIENT *client(struct nfs_session *s, CLIENT *cl)
{
	return cl ? cl : s->clnt;
}

struct nfs_status nfs3_call(struct nfs_session *s, CLIENT *cl, rpcproc_t proc, xdrproc_t xa,
			    const void *args, xdrproc_t xr, void *res, size_t res_size,
			    nfsstat3 *status)
{
	enum clnt_stat cs;

	if (res_size)
		memset(res, 0, res_size);
	cs = clnt_call(client(s, cl), proc, xa, (char *)args, xr, (char *)res, s->tv);
	if (cs != RPC_SUCCESS)
		return nfs_rpc_err(cs);
	return !status || *status == NFS3_OK ? nfs_ok() : nfs_err(*status);
}

/*
 * Always: a reply that failed to decode partway holds what was decoded
 * before, and @res was zeroed before the call, so what was not reached
 * is NULL, which XDR_FREE passes over.
 */
struct nfs_status nfs3_release(struct nfs_session *s, CLIENT *cl, xdrproc_t xr, void *res,
			       struct nfs_status st)
{
	clnt_freeres(client(s, cl), xr, res);
	return st;
}

static diropargs3 dirop(const struct nfs_fh *dir, const char *name)
{
	diropargs3 d;

	nfs_fh_to_xdr(dir, &d.dir);
	d.name = (char *)name;
	return d;
}

static sattr3 mode_attr(uint32_t mode)
{
	sattr3 a;

	memset(&a, 0, sizeof(a));
	a.mode.set_it = TRUE;
	a.mode.set_mode3_u.mode = mode;
	return a;
}

struct nfs_status nfs3_null(struct nfs_session *s, CLIENT *cl)
{
	return nfs3_call(s, cl, NFSPROC3_NULL, XDR_VOID, NULL, XDR_VOID, NULL, 0, NULL);
}

struct nfs_status nfs3_getattr(struct nfs_session *s, CLIENT *cl, const struct nfs_fh *fh,
			       fattr3 *attr)
{
	GETATTR3args a;
	GETATTR3res r;
	struct nfs_status st;

	nfs_fh_to_xdr(fh, &a.object);
	st = NFS3_CALL(s, cl, NFSPROC3_GETATTR, GETATTR3, &a, &r);
	if (!nfs_failed(st))
		*attr = r.GETATTR3res_u.resok.obj_attributes;
	return NFS3_RELEASE(s, cl, GETATTR3, &r, st);
}

struct nfs_status nfs3_lookup(struct nfs_session *s, const struct nfs_fh *dir, const char *name,
			      struct nfs_node *out)
{
	LOOKUP3args a = { dirop(dir, name) };
	LOOKUP3res r;
	struct nfs_status st;
	const LOOKUP3resok *ok = &r.LOOKUP3res_u.resok;
	bool bad = false;

	st = NFS3_CALL(s, NULL, NFSPROC3_LOOKUP, LOOKUP3, &a, &r);
	if (!nfs_failed(st)) {
		memset(&out->attr, 0, sizeof(out->attr));
		if (ok->obj_attributes.attributes_follow)
			out->attr = ok->obj_attributes.post_op_attr_u.attributes;
		bad = !nfs_fh_from_xdr(&out->fh, &ok->object);
	}
	st = NFS3_RELEASE(s, NULL, LOOKUP3, &r, st);
	return bad ? nfs_err(NFS3ERR_BADHANDLE) : st;
}

struct nfs_status nfs3_fsinfo(struct nfs_session *s, const struct nfs_fh *root, FSINFO3resok *out)
{
	FSINFO3args a;
	FSINFO3res r;
	struct nfs_status st;

	nfs_fh_to_xdr(root, &a.fsroot);
	st = NFS3_CALL(s, NULL, NFSPROC3_FSINFO, FSINFO3, &a, &r);
	if (!nfs_failed(st))
		*out = r.FSINFO3res_u.resok;
	return NFS3_RELEASE(s, NULL, FSINFO3, &r, st);
}

struct nfs_status nfs3_fsstat(struct nfs_session *s, const struct nfs_fh *root, FSSTAT3resok *out)
{
	FSSTAT3args a;
	FSSTAT3res r;
	struct nfs_status st;

	nfs_fh_to_xdr(root, &a.fsroot);
	st = NFS3_CALL(s, NULL, NFSPROC3_FSSTAT, FSSTAT3, &a, &r);
	if (!nfs_failed(st))
		*out = r.FSSTAT3res_u.resok;
	return NFS3_RELEASE(s, NULL, FSSTAT3, &r, st);
}

/* READ3res with its data decoded into a caller's buffer of @cap bytes. */
struct read_reply {
	nfsstat3 status;
	post_op_attr attr;
	count3 count;
	bool_t eof;
	char *buf;
	u_int cap, len;
};

static bool_t xdr_read_reply(XDR *x, struct read_reply *r)
{
	char *p = r->buf;

	if (x->x_op != XDR_DECODE)
		return x->x_op == XDR_FREE;
	if (!xdr_nfsstat3(x, &r->status) || !xdr_post_op_attr(x, &r->attr))
		return FALSE;
	if (r->status != NFS3_OK)
		return TRUE;
	return xdr_count3(x, &r->count) && xdr_bool(x, &r->eof) &&
	       xdr_bytes(x, &p, &r->len, r->cap) && r->len <= r->count;
}

struct nfs_status nfs3_read(struct nfs_session *s, CLIENT *cl, const struct nfs_fh *fh,
			    uint64_t offset, uint32_t count, void *buf, uint32_t *got, bool *eof)
{
	READ3args a;
	struct read_reply r;
	struct nfs_status st;

	nfs_fh_to_xdr(fh, &a.file);
	a.offset = offset;
	a.count = count;
	memset(&r, 0, sizeof(r));
	r.buf = buf;
	r.cap = count;
	/* Set up above (not zeroed); nothing to release: the data is in @buf. */
	st = nfs3_call(s, cl, NFSPROC3_READ, (xdrproc_t)xdr_READ3args, &a,
		       (xdrproc_t)xdr_read_reply, &r, 0, &r.status);
	if (!nfs_failed(st) && count && !r.len && !r.eof)
		st = nfs_err(NFS3ERR_IO); /* no data and no eof: no progress (Linux's client: EIO) */
	if (!nfs_failed(st)) {
		*got = r.len;
		*eof = r.eof;
	}
	return st;
}

struct nfs_status nfs3_write(struct nfs_session *s, CLIENT *cl, const struct nfs_fh *fh,
			     uint64_t offset, const void *buf, uint32_t count, stable_how how,
			     struct nfs_write_res *w)
{
	WRITE3args a;
	WRITE3res r;
	struct nfs_status st;
	const WRITE3resok *ok = &r.WRITE3res_u.resok;

	nfs_fh_to_xdr(fh, &a.file);
	a.offset = offset;
	a.count = count;
	a.stable = how;
	a.data.data_len = count;
	a.data.data_val = (char *)buf;
	st = NFS3_CALL(s, cl, NFSPROC3_WRITE, WRITE3, &a, &r);
	if (!nfs_failed(st) && ok->count > count)
		st = nfs_rpc_err(RPC_CANTDECODERES); /* wrote more than it was sent: a bad reply */
	if (!nfs_failed(st)) {
		w->done = ok->count;
		w->committed = ok->committed;
		memcpy(w->verf, ok->verf, NFS3_WRITEVERFSIZE);
	}
	return NFS3_RELEASE(s, cl, WRITE3, &r, st);
}

struct nfs_status nfs3_commit(struct nfs_session *s, CLIENT *cl, const struct nfs_fh *fh,
			      char verf[NFS3_WRITEVERFSIZE])
{
	COMMIT3args a;
	COMMIT3res r;
	struct nfs_status st;

	nfs_fh_to_xdr(fh, &a.file);
	a.offset = 0;
	a.count = 0;
	st = NFS3_CALL(s, cl, NFSPROC3_COMMIT, COMMIT3, &a, &r);
	if (!nfs_failed(st))
		memcpy(verf, r.COMMIT3res_u.resok.verf, NFS3_WRITEVERFSIZE);
	return NFS3_RELEASE(s, cl, COMMIT3, &r, st);
}

/*
 * After an EXCLUSIVE CREATE: the mode it could not carry, and both times,
 * where the server kept the verifier (RFC 1813 section 3.3.8).
 */
static struct nfs_status nfs3_setattr_created(struct nfs_session *s, uint32_t mode,
					      struct nfs_node *n)
{
	SETATTR3args a = { .new_attributes = mode_attr(mode) };
	SETATTR3res r;
	struct nfs_status st;
	const wcc_data *wcc = &r.SETATTR3res_u.resok.obj_wcc;

	nfs_fh_to_xdr(&n->fh, &a.object);
	a.new_attributes.atime.set_it = SET_TO_SERVER_TIME;
	a.new_attributes.mtime.set_it = SET_TO_SERVER_TIME;
	st = NFS3_CALL(s, NULL, NFSPROC3_SETATTR, SETATTR3, &a, &r);
	if (!nfs_failed(st) && wcc->after.attributes_follow)
		n->attr = wcc->after.post_op_attr_u.attributes;
	return NFS3_RELEASE(s, NULL, SETATTR3, &r, st);
}

/*
 * One CREATE in mode @how; the handle and attributes it returned into
 * @out (fh.len 0: none).  *@made: the server created (or, UNCHECKED,
 * truncated) the file, also when its handle then did not decode.
 */
static struct nfs_status create_call(struct nfs_session *s, const struct nfs_fh *dir,
				     const char *name, createmode3 how, uint32_t mode,
				     const char *verf, struct nfs_node *out, bool *made)
{
	CREATE3args a = { .where = dirop(dir, name) };
	CREATE3res r;
	struct nfs_status st;
	const CREATE3resok *ok = &r.CREATE3res_u.resok;
	bool bad = false;

	a.how.mode = how;
	if (how == EXCLUSIVE) {
		memcpy(a.how.createhow3_u.verf, verf, NFS3_CREATEVERFSIZE);
	} else {
		a.how.createhow3_u.obj_attributes = mode_attr(mode);
		a.how.createhow3_u.obj_attributes.size.set_it = how == UNCHECKED;
	}
	st = NFS3_CALL(s, NULL, NFSPROC3_CREATE, CREATE3, &a, &r);
	*made = !nfs_failed(st);
	if (!nfs_failed(st)) {
		memset(&out->attr, 0, sizeof(out->attr));
		if (ok->obj_attributes.attributes_follow)
			out->attr = ok->obj_attributes.post_op_attr_u.attributes;
		/* RFC 1813 lets a server omit the handle; LOOKUP then finds it. */
		if (!ok->obj.handle_follows)
			out->fh.len = 0;
		else
			bad = !nfs_fh_from_xdr(&out->fh, &ok->obj.post_op_fh3_u.handle);
	}
	st = NFS3_RELEASE(s, NULL, CREATE3, &r, st);
	return bad ? nfs_err(NFS3ERR_BADHANDLE) : st;
}

struct nfs_status nfs3_create(struct nfs_session *s, const struct nfs_fh *dir, const char *name,
			      uint32_t mode, const char *verf, struct nfs_node *out, bool *made)
{
	createmode3 how = verf ? EXCLUSIVE : UNCHECKED;
	bool created;
	struct nfs_status st = create_call(s, dir, name, how, mode, verf, out, &created);

	/* A server may not do EXCLUSIVE: GUARDED then, as Linux's client falls back. */
	if (how == EXCLUSIVE && nfs_is(st, NFS3ERR_NOTSUPP)) {
		how = GUARDED;
		st = create_call(s, dir, name, how, mode, NULL, out, &created);
	}
	if (made)
		*made = created;
	if (!nfs_failed(st) && out->fh.len == 0)
		st = nfs3_lookup(s, dir, name, out);
	if (!nfs_failed(st) && how == EXCLUSIVE)
		st = nfs3_setattr_created(s, mode, out);
	return st;
}

struct nfs_status nfs3_mkdir(struct nfs_session *s, const struct nfs_fh *dir, const char *name,
			     uint32_t mode)
{
	MKDIR3args a = { dirop(dir, name), mode_attr(mode) };
	MKDIR3res r;

	return NFS3_RELEASE(s, NULL, MKDIR3, &r, NFS3_CALL(s, NULL, NFSPROC3_MKDIR, MKDIR3, &a, &r));
}

struct nfs_status nfs3_symlink(struct nfs_session *s, const struct nfs_fh *dir, const char *name,
			       const char *target)
{
	SYMLINK3args a = { .where = dirop(dir, name) };
	SYMLINK3res r;

	a.symlink.symlink_attributes = mode_attr(0777);
	a.symlink.symlink_data = (char *)target;
	return NFS3_RELEASE(s, NULL, SYMLINK3, &r, NFS3_CALL(s, NULL, NFSPROC3_SYMLINK, SYMLINK3, &a, &r));
}

struct nfs_status nfs3_readlink(struct nfs_session *s, CLIENT *cl, const struct nfs_fh *fh,
				char *buf)
{
	READLINK3args a;
	READLINK3res r;
	struct nfs_status st;

	nfs_fh_to_xdr(fh, &a.symlink);
	st = NFS3_CALL(s, cl, NFSPROC3_READLINK, READLINK3, &a, &r);
	if (!nfs_failed(st)) {
		/* xdr_string bounds it to NFS3_MAXPATHLEN */
		strncpy(buf, r.READLINK3res_u.resok.data, NFS3_MAXPATHLEN);
		buf[NFS3_MAXPATHLEN] = '\0';
	}
	return NFS3_RELEASE(s, cl, READLINK3, &r, st);
}

struct nfs_status nfs3_remove(struct nfs_session *s, const struct nfs_fh *dir, const char *name)
{
	REMOVE3args a = { dirop(dir, name) };
	REMOVE3res r;

	return NFS3_RELEASE(s, NULL, REMOVE3, &r, NFS3_CALL(s, NULL, NFSPROC3_REMOVE, REMOVE3, &a, &r));
}

struct nfs_status nfs3_rmdir(struct nfs_session *s, const struct nfs_fh *dir, const char *name)
{
	RMDIR3args a = { dirop(dir, name) };
	RMDIR3res r;

	return NFS3_RELEASE(s, NULL, RMDIR3, &r, NFS3_CALL(s, NULL, NFSPROC3_RMDIR, RMDIR3, &a, &r));
}

struct nfs_status nfs3_rename(struct nfs_session *s, const struct nfs_fh *from_dir,
			      const char *from, const struct nfs_fh *to_dir, const char *to)
{
	RENAME3args a = { dirop(from_dir, from), dirop(to_dir, to) };
	RENAME3res r;

	return NFS3_RELEASE(s, NULL, RENAME3, &r, NFS3_CALL(s, NULL, NFSPROC3_RENAME, RENAME3, &a, &r));
}
