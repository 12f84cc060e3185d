/*
 * nfs_readdir: walks a directory with READDIR or READDIRPLUS, cookie by
 * cookie, until the server says eof.  A reply of @count bytes does not fit
 * the RDMA inline size: the binding (nfs3_ulb.c) bounds it by count, so
 * the transport offers a reply chunk for it; over TCP nothing does, so
 * the replies are decoded by nfs_dirlist.c, at most the entries @count
 * bytes can hold.  A server whose cookies come back to one it gave
 * before would have us walk in a circle: every cookie we resume from is
 * remembered (a hash set), and a repeat is NFS3ERR_BAD_COOKIE.  One
 * whose cookies never repeat and never reach eof is stopped at the
 * first page without eof past NFS_READDIR_ENTRIES_MAX entries (EFBIG):
 * ls keeps them all.
 */
#include "nfs_proc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfs_dirlist.h"

struct dir_cursor {
	cookie3 cookie;
	cookieverf3 verf;
	bool eof;
	bool stop;
	uint64_t entries;
	/* every cookie a page was asked from: a hash set, 0 marking a free slot */
	cookie3 *resumed;
	size_t nresumed, cap;
	bool resumed_zero; /* the walk's start, kept apart from the slots */
};

static uint64_t cookie_hash(cookie3 v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	return v ^ (v >> 33);
}

static int cookies_grow(struct dir_cursor *c);

/* Add @v: 0, 1 if it was there already, -ENOMEM. */
static int cookies_add(struct dir_cursor *c, cookie3 v)
{
	size_t i;

	if (!v) {
		if (c->resumed_zero)
			return 1;
		c->resumed_zero = true;
		return 0;
	}
	if (2 * (c->nresumed + 1) > c->cap && cookies_grow(c))
		return -ENOMEM;
	for (i = cookie_hash(v) & (c->cap - 1); c->resumed[i]; i = (i + 1) & (c->cap - 1))
		if (c->resumed[i] == v)
			return 1;
	c->resumed[i] = v;
	c->nresumed++;
	return 0;
}

/* Twice the slots (a power of two), every cookie placed again. */
static int cookies_grow(struct dir_cursor *c)
{
	size_t old_cap = c->cap, cap = c->cap ? 2 * c->cap : 64;
	cookie3 *old = c->resumed, *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	c->resumed = slots;
	c->cap = cap;
	c->nresumed = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i])
			(void)cookies_add(c, old[i]); /* a quarter full at most: no growth */
	free(old);
	return 0;
}

/* Remember @cookie as one a page is asked from; false if it was before, or no memory. */
static bool cursor_resume(struct dir_cursor *c, cookie3 cookie, struct nfs_status *st)
{
	int rc = cookies_add(c, cookie);

	if (rc == 1)
		*st = nfs_err(NFS3ERR_BAD_COOKIE);
	else if (rc)
		*st = nfs_local_err(ENOMEM);
	return rc == 0;
}

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
	struct nfs_readdir_reply r;
	struct nfs_status st;

	nfs_fh_to_xdr(dir, &a.dir);
	a.cookie = c->cookie;
	memcpy(a.cookieverf, c->verf, sizeof(a.cookieverf));
	a.count = count;
	memset(&r, 0, sizeof(r));
	r.max_entries = nfs_dirlist_max_entries(count);
	st = nfs3_call(s, NULL, NFSPROC3_READDIR, (xdrproc_t)xdr_READDIR3args, &a,
		       (xdrproc_t)xdr_nfs_readdir_reply, &r, 0, &r.res.status);
	if (!nfs_failed(st))
		readdir_page(&r.res.READDIR3res_u.resok, c, fn, ctx);
	return nfs3_release(s, NULL, (xdrproc_t)xdr_nfs_readdir_reply, &r, st);
}

static struct nfs_status page_plus(struct nfs_session *s, const struct nfs_fh *dir,
				   uint32_t count, struct dir_cursor *c,
				   bool (*fn)(const struct nfs_dirent *, void *), void *ctx)
{
	READDIRPLUS3args a;
	struct nfs_readdirplus_reply r;
	struct nfs_status st;

	nfs_fh_to_xdr(dir, &a.dir);
	a.cookie = c->cookie;
	memcpy(a.cookieverf, c->verf, sizeof(a.cookieverf));
	a.dircount = count / 4;
	a.maxcount = count;
	memset(&r, 0, sizeof(r));
	r.max_entries = nfs_dirlist_max_entries(count);
	st = nfs3_call(s, NULL, NFSPROC3_READDIRPLUS, (xdrproc_t)xdr_READDIRPLUS3args, &a,
		       (xdrproc_t)xdr_nfs_readdirplus_reply, &r, 0, &r.res.status);
	if (!nfs_failed(st))
		readdirplus_page(&r.res.READDIRPLUS3res_u.resok, c, fn, ctx);
	return nfs3_release(s, NULL, (xdrproc_t)xdr_nfs_readdirplus_reply, &r, st);
}

struct nfs_status nfs3_readdir(struct nfs_session *s, const struct nfs_fh *dir, bool plus,
			       uint32_t count, bool (*fn)(const struct nfs_dirent *, void *),
			       void *ctx)
{
	struct dir_cursor c;
	struct nfs_status st = nfs_ok();

	memset(&c, 0, sizeof(c));
	while (!c.eof && !c.stop) {
		uint64_t before = c.entries;

		if (!cursor_resume(&c, c.cookie, &st))
			break;
		st = plus ? page_plus(s, dir, count, &c, fn, ctx) : page(s, dir, count, &c, fn, ctx);
		if (nfs_failed(st))
			break;
		/* A page with nothing in it and no eof would be asked for again and again. */
		if (c.entries == before && !c.eof) {
			st = nfs_err(NFS3ERR_TOOSMALL);
			break;
		}
		if (c.entries > NFS_READDIR_ENTRIES_MAX && !c.eof && !c.stop) {
			st = nfs_local_err(EFBIG);
			break;
		}
	}
	free(c.resumed);
	return st;
}
