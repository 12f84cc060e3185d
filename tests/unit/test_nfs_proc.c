/*
 * nfs-client-demo's procedures (nfs_proc.c, nfs_readdir.c) against a
 * scripted server: a CLIENT whose call asks the test's answer function
 * for the reply, encodes it and decodes it with the caller's routine,
 * as a transport would.  What a hostile or broken server can make of
 * READ and READDIR.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfs_dirlist.h"
#include "nfs_proc.h"
#include "nfs_script.h"

/* ---- READ -------------------------------------------------------------------------------- */

/* READ3resok's wire form: status, no attributes, count, eof, the data. */
static bool read_reply(XDR *x, uint32_t count, bool_t eof, const char *data)
{
	nfsstat3 st = NFS3_OK;
	bool_t no_attr = FALSE;
	char *p = (char *)data;
	u_int len = count;

	return xdr_nfsstat3(x, &st) && xdr_bool(x, &no_attr) && xdr_u_int32_t(x, &count) &&
	       xdr_bool(x, &eof) && xdr_bytes(x, &p, &len, count);
}

static bool answer_read_nothing(struct script *sc, rpcproc_t proc, const void *args, XDR *x)
{
	(void)sc;
	(void)args;
	return proc == NFSPROC3_READ && read_reply(x, 0, FALSE, "");
}

static bool answer_read_eof(struct script *sc, rpcproc_t proc, const void *args, XDR *x)
{
	(void)sc;
	(void)args;
	return proc == NFSPROC3_READ && read_reply(x, 3, TRUE, "abc");
}

Test(nfs_proc, a_read_of_nothing_without_eof_is_an_io_error)
{
	struct rig r;
	char buf[16];
	uint32_t got = 99;
	bool eof = true;
	struct nfs_status st;

	rig_init(&r, answer_read_nothing);
	st = nfs3_read(&r.s, NULL, &r.dir, 0, sizeof(buf), buf, &got, &eof);
	cr_assert_eq(st.kind, NFS_STATUS_NFS);
	cr_assert_eq(st.code, NFS3ERR_IO);
	rig_destroy(&r);
	rig_init(&r, answer_read_eof);
	st = nfs3_read(&r.s, NULL, &r.dir, 0, sizeof(buf), buf, &got, &eof);
	cr_assert(!nfs_failed(st));
	cr_assert_eq(got, 3);
	cr_assert(eof);
	cr_assert_eq(memcmp(buf, "abc", 3), 0);
	rig_destroy(&r);
}

/* ---- WRITE ------------------------------------------------------------------------------- */

static uint32_t write_claims_extra; /* bytes the WRITE reply claims over what was sent */

/* WRITE3resok's wire form: status, no wcc data, count, committed, verifier. */
static bool answer_write(struct script *sc, rpcproc_t proc, const void *args, XDR *x)
{
	const WRITE3args *a = args;
	nfsstat3 st = NFS3_OK;
	bool_t none = FALSE;
	uint32_t count = a->count + write_claims_extra;
	stable_how committed = FILE_SYNC;
	char verf[NFS3_WRITEVERFSIZE] = "verifier";

	(void)sc;
	return proc == NFSPROC3_WRITE && xdr_nfsstat3(x, &st) && xdr_bool(x, &none) &&
	       xdr_bool(x, &none) && xdr_u_int32_t(x, &count) && xdr_stable_how(x, &committed) &&
	       xdr_opaque(x, verf, NFS3_WRITEVERFSIZE);
}

Test(nfs_proc, a_write_reply_claiming_more_than_was_sent_is_a_bad_reply)
{
	struct nfs_write_res w = { .done = 77 };
	struct nfs_status st;
	struct rig r;

	rig_init(&r, answer_write);
	write_claims_extra = 0;
	st = nfs3_write(&r.s, NULL, &r.dir, 0, "abcd", 4, UNSTABLE, &w);
	cr_assert(!nfs_failed(st));
	cr_assert_eq(w.done, 4);
	cr_assert_eq(w.committed, FILE_SYNC);
	write_claims_extra = 1;
	st = nfs3_write(&r.s, NULL, &r.dir, 0, "abcd", 4, UNSTABLE, &w);
	cr_assert_eq(st.kind, NFS_STATUS_RPC);
	cr_assert_eq(st.code, RPC_CANTDECODERES);
	rig_destroy(&r);
}

/* ---- READDIR ----------------------------------------------------------------------------- */

/*
 * A page of two entries from @from: cookies from the script's @cookies
 * table, page by page; eof after @last_page (never if 0).
 */
static const cookie3 *page_cookies;
static uint32_t last_page;

static bool answer_readdir(struct script *sc, rpcproc_t proc, const void *args, XDR *x)
{
	struct nfs_readdir_reply r;
	entry3 e[2];
	char names[2][8];
	uint32_t page = sc->pages++;

	(void)args;
	if (proc != NFSPROC3_READDIR)
		return false;
	memset(&r, 0, sizeof(r));
	memset(e, 0, sizeof(e));
	for (int i = 0; i < 2; i++) {
		snprintf(names[i], sizeof(names[i]), "p%ue%d", page, i);
		e[i].name = names[i];
		e[i].fileid = page * 2u + (uint32_t)i;
		e[i].cookie = page_cookies[page * 2u + (uint32_t)i];
	}
	e[0].nextentry = &e[1];
	r.res.READDIR3res_u.resok.reply.entries = e;
	r.res.READDIR3res_u.resok.reply.eof = last_page && page + 1 == last_page;
	return xdr_nfs_readdir_reply(x, &r);
}

static bool count_entry(const struct nfs_dirent *d, void *ctx)
{
	(void)d;
	(*(unsigned int *)ctx)++;
	return true;
}

static struct nfs_status walk(const cookie3 *cookies, uint32_t pages, unsigned int *entries,
			      unsigned int *calls)
{
	struct rig r;
	struct nfs_status st;

	page_cookies = cookies;
	last_page = pages;
	*entries = 0;
	rig_init(&r, answer_readdir);
	st = nfs3_readdir(&r.s, &r.dir, false, 4096, count_entry, entries);
	*calls = r.sc.calls;
	rig_destroy(&r);
	return st;
}

Test(nfs_proc, readdir_walks_every_page_until_eof)
{
	static const cookie3 cookies[] = { 1, 2, 3, 4, 5, 6 };
	unsigned int entries, calls;
	struct nfs_status st = walk(cookies, 3, &entries, &calls);

	cr_assert(!nfs_failed(st));
	cr_assert_eq(entries, 6);
	cr_assert_eq(calls, 3);
}

/* A server whose cookies come back to one it gave: once round the circle, then BAD_COOKIE. */
Test(nfs_proc, readdir_cookies_that_come_back_are_refused)
{
	static const cookie3 back_to_start[] = { 1, 2, 3, 0, 1, 2, 3, 0 };
	static const cookie3 back_to_first[] = { 5, 6, 7, 8, 9, 6, 7, 8 };
	static const cookie3 standing[] = { 1, 2, 1, 2, 1, 2 };
	unsigned int entries, calls;
	struct nfs_status st;

	st = walk(back_to_start, 0, &entries, &calls);
	cr_assert_eq(st.kind, NFS_STATUS_NFS);
	cr_assert_eq(st.code, NFS3ERR_BAD_COOKIE);
	cr_assert_eq(calls, 2, "the page that returns to cookie 0 is the last asked for");
	st = walk(back_to_first, 0, &entries, &calls);
	cr_assert_eq(st.code, NFS3ERR_BAD_COOKIE);
	cr_assert_eq(calls, 3);
	st = walk(standing, 0, &entries, &calls);
	cr_assert_eq(st.code, NFS3ERR_BAD_COOKIE);
	cr_assert_eq(calls, 2);
}

/* Thousands of pages of new cookies (the set grows), then one that was given long before. */
Test(nfs_proc, readdir_a_repeat_after_many_pages_is_refused)
{
	enum { PAGES = 5000 };
	static cookie3 cookies[2 * PAGES + 2];
	unsigned int entries, calls;
	struct nfs_status st;

	for (uint32_t i = 0; i < 2 * PAGES; i++)
		cookies[i] = (cookie3)i * 0x9e3779b97f4a7c15ull + 1; /* spread over the hash */
	cookies[2 * PAGES] = 99;
	cookies[2 * PAGES + 1] = cookies[1]; /* the resume cookie of page 1 */
	st = walk(cookies, 0, &entries, &calls);
	cr_assert_eq(st.code, NFS3ERR_BAD_COOKIE);
	cr_assert_eq(calls, PAGES + 1);
	cr_assert_eq(entries, 2 * PAGES + 2);
}

/* Pages of @endless_per_page entries with new cookies, never eof (0: an empty page). */
static uint32_t endless_per_page;

static bool answer_endless(struct script *sc, rpcproc_t proc, const void *args, XDR *x)
{
	static entry3 e[2048];
	static char names[2048][12];
	struct nfs_readdir_reply r;
	uint32_t page = sc->pages++;

	(void)args;
	if (proc != NFSPROC3_READDIR || endless_per_page > 2048)
		return false;
	memset(&r, 0, sizeof(r));
	for (uint32_t i = 0; i < endless_per_page; i++) {
		snprintf(names[i], sizeof(names[i]), "e%u", i);
		e[i] = (entry3){ .name = names[i], .fileid = i,
				 .cookie = (cookie3)page * endless_per_page + i + 1,
				 .nextentry = i + 1 < endless_per_page ? &e[i + 1] : NULL };
	}
	r.res.READDIR3res_u.resok.reply.entries = endless_per_page ? e : NULL;
	return xdr_nfs_readdir_reply(x, &r);
}

static struct nfs_status walk_endless(uint32_t per_page, uint64_t *entries, unsigned int *calls)
{
	struct rig r;
	struct nfs_status st;
	unsigned int n = 0;

	endless_per_page = per_page;
	rig_init(&r, answer_endless);
	st = nfs3_readdir(&r.s, &r.dir, false, 64 * 1024, count_entry, &n);
	*entries = n;
	*calls = r.sc.calls;
	rig_destroy(&r);
	return st;
}

/* New cookies without end: stopped at the first page past NFS_READDIR_ENTRIES_MAX entries. */
Test(nfs_proc, readdir_a_walk_without_end_stops_at_the_most_entries)
{
	uint64_t entries;
	unsigned int calls;
	struct nfs_status st = walk_endless(2048, &entries, &calls);

	cr_assert_eq(st.kind, NFS_STATUS_LOCAL);
	cr_assert_eq(st.code, EFBIG);
	cr_assert_eq(entries, NFS_READDIR_ENTRIES_MAX + 2048, "exactly the most is a directory");
	cr_assert_eq(calls, NFS_READDIR_ENTRIES_MAX / 2048 + 1);
}

/* A page with no entry and no eof would be asked for again and again. */
Test(nfs_proc, readdir_an_empty_page_without_eof_is_too_small)
{
	uint64_t entries;
	unsigned int calls;
	struct nfs_status st = walk_endless(0, &entries, &calls);

	cr_assert_eq(st.kind, NFS_STATUS_NFS);
	cr_assert_eq(st.code, NFS3ERR_TOOSMALL);
	cr_assert_eq(entries, 0);
	cr_assert_eq(calls, 1);
}

/* An entry that does not decode (a name longer than NFS3_MAXNAMLEN) frees the ones before it. */
static bool answer_bad_name(struct script *sc, rpcproc_t proc, const void *args, XDR *x)
{
	static char longname[NFS3_MAXNAMLEN + 2];
	struct nfs_readdir_reply r;
	entry3 e[50];

	(void)sc;
	(void)args;
	if (proc != NFSPROC3_READDIR)
		return false;
	memset(longname, 'x', sizeof(longname) - 1);
	memset(&r, 0, sizeof(r));
	memset(e, 0, sizeof(e));
	for (int i = 0; i < 50; i++) {
		e[i].name = (char *)(i == 49 ? longname : "ok");
		e[i].cookie = (uint64_t)i + 1;
		e[i].nextentry = i < 49 ? &e[i + 1] : NULL;
	}
	r.res.READDIR3res_u.resok.reply.entries = e;
	/* xdr_filename3 refuses to encode the long name: write its length and bytes by hand */
	{
		nfsstat3 st = NFS3_OK;
		bool_t f = FALSE, t = TRUE;
		cookieverf3 verf = { 0 };
		char *p = longname;
		u_int len = (u_int)strlen(longname);

		if (!xdr_nfsstat3(x, &st) || !xdr_bool(x, &f) || !xdr_opaque(x, verf, sizeof(verf)))
			return false;
		for (int i = 0; i < 49; i++)
			if (!xdr_bool(x, &t) || !xdr_fileid3(x, &e[i].fileid) ||
			    !xdr_filename3(x, &e[i].name) || !xdr_cookie3(x, &e[i].cookie))
				return false;
		return xdr_bool(x, &t) && xdr_fileid3(x, &e[49].fileid) &&
		       xdr_bytes(x, &p, &len, sizeof(longname));
	}
}

Test(nfs_proc, a_readdir_reply_cut_by_a_bad_entry_leaks_nothing)
{
	struct rig r;
	unsigned int entries = 0;
	struct nfs_status st;

	rig_init(&r, answer_bad_name);
	st = nfs3_readdir(&r.s, &r.dir, false, 4096, count_entry, &entries);
	cr_assert_eq(st.kind, NFS_STATUS_RPC);
	cr_assert_eq(st.code, RPC_CANTDECODERES);
	cr_assert_eq(entries, 0, "no entry of a reply that did not decode is passed on");
	rig_destroy(&r);
}

/* ---- CREATE ------------------------------------------------------------------------------ */

/* What the create script was asked, and how it answers. */
static struct {
	createmode3 modes[4];
	unsigned int ncreates, nsetattrs, nlookups;
	sattr3 setattr;
	bool exclusive_unsupported, no_handle;
} cr;

static bool answer_create(struct script *sc, rpcproc_t proc, const void *args, XDR *x)
{
	static char handle[] = "new!";

	(void)sc;
	if (proc == NFSPROC3_CREATE) {
		const CREATE3args *a = args;
		CREATE3res r = { .status = NFS3_OK };
		post_op_fh3 *fh = &r.CREATE3res_u.resok.obj;

		cr.modes[cr.ncreates++ % 4] = a->how.mode;
		if (a->how.mode == EXCLUSIVE && cr.exclusive_unsupported)
			r.status = NFS3ERR_NOTSUPP;
		fh->handle_follows = !cr.no_handle;
		fh->post_op_fh3_u.handle.data.data_len = 4;
		fh->post_op_fh3_u.handle.data.data_val = handle;
		return xdr_CREATE3res(x, &r);
	}
	if (proc == NFSPROC3_SETATTR) {
		SETATTR3res r = { .status = NFS3_OK };

		cr.nsetattrs++;
		cr.setattr = ((const SETATTR3args *)args)->new_attributes;
		return xdr_SETATTR3res(x, &r);
	}
	if (proc == NFSPROC3_LOOKUP) {
		LOOKUP3res r = { .status = NFS3ERR_STALE };

		cr.nlookups++;
		return xdr_LOOKUP3res(x, &r);
	}
	return false;
}

static const char create_verf[NFS3_CREATEVERFSIZE] = "verifier";

Test(nfs_proc, create_exclusive_then_sets_mode_and_both_times)
{
	struct rig r;
	struct nfs_node n;
	bool made = false;

	memset(&cr, 0, sizeof(cr));
	rig_init(&r, answer_create);
	cr_assert(!nfs_failed(nfs3_create(&r.s, &r.dir, "f", 0640, create_verf, &n, &made)));
	cr_assert(made);
	cr_assert_eq(cr.ncreates, 1);
	cr_assert_eq(cr.modes[0], EXCLUSIVE);
	cr_assert_eq(cr.nsetattrs, 1);
	cr_assert(cr.setattr.mode.set_it);
	cr_assert_eq(cr.setattr.mode.set_mode3_u.mode, 0640);
	cr_assert_eq(cr.setattr.atime.set_it, SET_TO_SERVER_TIME);
	cr_assert_eq(cr.setattr.mtime.set_it, SET_TO_SERVER_TIME);
	cr_assert(!cr.setattr.size.set_it);
	cr_assert_eq(n.fh.len, 4);
	rig_destroy(&r);
}

Test(nfs_proc, create_falls_back_to_guarded_where_exclusive_is_not_supported)
{
	struct rig r;
	struct nfs_node n;
	bool made = false;

	memset(&cr, 0, sizeof(cr));
	cr.exclusive_unsupported = true;
	rig_init(&r, answer_create);
	cr_assert(!nfs_failed(nfs3_create(&r.s, &r.dir, "f", 0640, create_verf, &n, &made)));
	cr_assert(made);
	cr_assert_eq(cr.ncreates, 2);
	cr_assert_eq(cr.modes[0], EXCLUSIVE);
	cr_assert_eq(cr.modes[1], GUARDED);
	cr_assert_eq(cr.nsetattrs, 0, "GUARDED carried the mode");
	rig_destroy(&r);
}

Test(nfs_proc, a_create_whose_lookup_fails_still_says_the_file_was_made)
{
	struct rig r;
	struct nfs_node n;
	bool made = false;
	struct nfs_status st;

	memset(&cr, 0, sizeof(cr));
	cr.no_handle = true;
	rig_init(&r, answer_create);
	st = nfs3_create(&r.s, &r.dir, "f", 0640, create_verf, &n, &made);
	cr_assert(nfs_is(st, NFS3ERR_STALE));
	cr_assert(made, "the caller must remove what the CREATE made");
	cr_assert_eq(cr.nlookups, 1);
	cr_assert_eq(cr.nsetattrs, 0);
	rig_destroy(&r);
}

Test(nfs_proc, create_without_verifier_truncates_unchecked)
{
	struct rig r;
	struct nfs_node n;

	memset(&cr, 0, sizeof(cr));
	rig_init(&r, answer_create);
	cr_assert(!nfs_failed(nfs3_create(&r.s, &r.dir, "f", 0644, NULL, &n, NULL)));
	cr_assert_eq(cr.modes[0], UNCHECKED);
	cr_assert_eq(cr.nsetattrs, 0);
	rig_destroy(&r);
}
