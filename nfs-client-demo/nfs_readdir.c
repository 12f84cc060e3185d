/*
 * nfs_readdir: walks a directory with READDIR or READDIRPLUS, cookie by
 * cookie, until the server says eof.  A reply of @count bytes does not fit
 * the RDMA inline size: the binding (nfs3_ulb.c) bounds it by count, so
 * the transport offers a reply chunk for it.
 */
#include "nfs_proc.h"

#include <string.h>

struct dir_cursor {
	cookie3 cookie;
	cookieverf3 verf;
	bool eof;
	bool stop;
	uint64_t entries;
};

static void readdir_page(const READDIR3resok *ok, struct dir_cursor *c,
			 bool (*fn)(const struct nfs_dirent *, void *), void *ctx)
{
	for (const entry3 *e = ok->reply.entries; e && !c->stop; e = e->nextentry) {
		struct nfs_dirent d = { e->name, e->fileid, NULL, NULL };

		c->cookie = e->cookie;
		c->entries++;
		c->stop = !fn(&d, ctx);
	}
	memcpy(c->verf, ok->cookieverf, sizeof(c->verf));
	c->eof = ok->reply.eof;
}

static void readdirplus_page(const READDIRPLUS3resok *ok, struct dir_cursor *c,
			     bool (*fn)(const struct nfs_dirent *, void *), void *ctx)
{
	for (const entryplus3 *e = ok->reply.entries; e && !c->stop; e = e->nextentry) {
		struct nfs_dirent d = { e->name, e->fileid, NULL, NULL };

		if (e->name_attributes.attributes_follow)
			d.attr = &e->name_attributes.post_op_attr_u.attributes;
		if (e->name_handle.handle_follows)
			d.fh = &e->name_handle.post_op_fh3_u.handle;
		c->cookie = e->cookie;
		c->entries++;
		c->stop = !fn(&d, ctx);
	}
	memcpy(c->verf, ok->cookieverf, sizeof(c->verf));
	c->eof = ok->reply.eof;
}

static struct nfs_status page(struct nfs_session *s, const struct nfs_fh *dir, uint32_t count,
			      struct dir_cursor *c,
			      bool (*fn)(const struct nfs_dirent *, void *), void *ctx)
{
	READDIR3args a;
	READDIR3res r;
	struct nfs_status st;

	nfs_fh_to_xdr(dir, &a.dir);
	a.cookie = c->cookie;
	memcpy(a.cookieverf, c->verf, sizeof(a.cookieverf));
	a.count = count;
	st = NFS3_CALL(s, NULL, NFSPROC3_READDIR, READDIR3, &a, &r);
	if (!nfs_failed(st))
		readdir_page(&r.READDIR3res_u.resok, c, fn, ctx);
	return NFS3_RELEASE(s, NULL, READDIR3, &r, st);
}

static struct nfs_status page_plus(struct nfs_session *s, const struct nfs_fh *dir,
				   uint32_t count, struct dir_cursor *c,
				   bool (*fn)(const struct nfs_dirent *, void *), void *ctx)
{
	READDIRPLUS3args a;
	READDIRPLUS3res r;
	struct nfs_status st;

	nfs_fh_to_xdr(dir, &a.dir);
	a.cookie = c->cookie;
	memcpy(a.cookieverf, c->verf, sizeof(a.cookieverf));
	a.dircount = count / 4;
	a.maxcount = count;
	st = NFS3_CALL(s, NULL, NFSPROC3_READDIRPLUS, READDIRPLUS3, &a, &r);
	if (!nfs_failed(st))
		readdirplus_page(&r.READDIRPLUS3res_u.resok, c, fn, ctx);
	return NFS3_RELEASE(s, NULL, READDIRPLUS3, &r, st);
}

struct nfs_status nfs3_readdir(struct nfs_session *s, const struct nfs_fh *dir, bool plus,
			       uint32_t count, bool (*fn)(const struct nfs_dirent *, void *),
			       void *ctx)
{
	struct dir_cursor c;
	struct nfs_status st;

	memset(&c, 0, sizeof(c));
	while (!c.eof && !c.stop) {
		uint64_t before = c.entries;
		cookie3 from = c.cookie;

		st = plus ? page_plus(s, dir, count, &c, fn, ctx) : page(s, dir, count, &c, fn, ctx);
		if (nfs_failed(st))
			return st;
		/* A server whose pages do not move the cookie on would make us loop forever. */
		if (c.entries == before && !c.eof)
			return nfs_err(NFS3ERR_TOOSMALL);
		if (!c.eof && !c.stop && c.cookie == from)
			return nfs_err(NFS3ERR_BAD_COOKIE);
	}
	return nfs_ok();
}
