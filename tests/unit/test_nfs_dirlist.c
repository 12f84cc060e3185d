/* nfs-client-demo's READDIR and READDIRPLUS reply codec (nfs_dirlist.c). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfs_dirlist.h"

/* A READDIR reply of @n entries named e0, e1... with cookies 100, 101...; the caller frees it. */
static void list_make(struct nfs_readdir_reply *r, uint32_t n)
{
	entry3 **at = &r->res.READDIR3res_u.resok.reply.entries;

	memset(r, 0, sizeof(*r));
	r->res.status = NFS3_OK;
	r->res.READDIR3res_u.resok.reply.eof = TRUE;
	r->max_entries = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++, at = &(*at)->nextentry) {
		*at = calloc(1, sizeof(**at));
		cr_assert_not_null(*at);
		(*at)->fileid = 1000 + i;
		(*at)->cookie = 100 + i;
		(*at)->name = malloc(16);
		cr_assert_not_null((*at)->name);
		snprintf((*at)->name, 16, "e%u", i);
	}
}

static void list_free(struct nfs_readdir_reply *r)
{
	xdr_free((xdrproc_t)xdr_nfs_readdir_reply, (char *)r);
}

static u_int encode(struct nfs_readdir_reply *r, char *buf, u_int cap)
{
	XDR x;

	xdrmem_create(&x, buf, cap, XDR_ENCODE);
	cr_assert(xdr_nfs_readdir_reply(&x, r), "encode");
	return xdr_getpos(&x);
}

static bool decode(const char *buf, u_int len, uint32_t max, struct nfs_readdir_reply *out)
{
	XDR x;
	bool ok;

	memset(out, 0, sizeof(*out));
	out->max_entries = max;
	xdrmem_create(&x, (char *)buf, len, XDR_DECODE);
	ok = xdr_nfs_readdir_reply(&x, out);
	return ok && xdr_getpos(&x) == len;
}

static uint32_t count_entries(const struct nfs_readdir_reply *r)
{
	uint32_t n = 0;

	for (const entry3 *e = r->res.READDIR3res_u.resok.reply.entries; e; e = e->nextentry)
		n++;
	return n;
}

Test(nfs_dirlist, a_list_round_trips_in_order)
{
	struct nfs_readdir_reply in, out;
	static char buf[4096];
	u_int len;
	uint32_t i = 0;

	list_make(&in, 5);
	len = encode(&in, buf, sizeof(buf));
	cr_assert(decode(buf, len, 5, &out));
	cr_assert_eq(out.res.READDIR3res_u.resok.reply.eof, TRUE);
	for (const entry3 *e = out.res.READDIR3res_u.resok.reply.entries; e; e = e->nextentry, i++) {
		char want[16];

		snprintf(want, sizeof(want), "e%u", i);
		cr_assert_str_eq(e->name, want);
		cr_assert_eq(e->cookie, 100 + i);
		cr_assert_eq(e->fileid, 1000 + i);
	}
	cr_assert_eq(i, 5);
	list_free(&in);
	list_free(&out);
}

/* Every truncation fails, and what it decoded before failing is freed (LeakSanitizer). */
Test(nfs_dirlist, every_truncation_fails_and_frees_what_it_decoded)
{
	struct nfs_readdir_reply in, out;
	static char buf[4096];
	u_int len;

	list_make(&in, 4);
	len = encode(&in, buf, sizeof(buf));
	for (u_int cut = 0; cut < len; cut++) {
		cr_assert(!decode(buf, cut, 4, &out), "decoded %u of %u bytes", cut, len);
		list_free(&out);
	}
	list_free(&in);
}

Test(nfs_dirlist, more_entries_than_the_count_allows_fail)
{
	struct nfs_readdir_reply in, out;
	static char buf[4096];
	u_int len;

	list_make(&in, 6);
	len = encode(&in, buf, sizeof(buf));
	cr_assert(!decode(buf, len, 5, &out));
	cr_assert_eq(count_entries(&out), 5, "the five decoded stay listed, to be freed");
	list_free(&out);
	cr_assert(decode(buf, len, 6, &out));
	list_free(&out);
	list_free(&in);
}

Test(nfs_dirlist, the_cap_is_what_a_reply_of_count_bytes_can_hold)
{
	cr_assert_eq(nfs_dirlist_max_entries(0), 1);
	cr_assert_eq(nfs_dirlist_max_entries(24), 2);
	cr_assert_eq(nfs_dirlist_max_entries(65536), 65536 / 24 + 1);
}

Test(nfs_dirlist, a_failed_status_carries_only_the_attributes)
{
	struct nfs_readdir_reply in, out;
	static char buf[256];
	u_int len;

	memset(&in, 0, sizeof(in));
	in.res.status = NFS3ERR_NOTDIR;
	len = encode(&in, buf, sizeof(buf));
	cr_assert_eq(len, 8, "status and post_op_attr's false");
	cr_assert(decode(buf, len, 1, &out));
	cr_assert_eq(out.res.status, NFS3ERR_NOTDIR);
	list_free(&out);
}

/* READDIRPLUS: handles and attributes of the entries, freed with them. */
Test(nfs_dirlist, readdirplus_entries_round_trip_with_handles)
{
	struct nfs_readdirplus_reply in, out;
	static char fh[8] = "handle!", buf[4096];
	entryplus3 e[2];
	u_int len;
	XDR x;

	memset(&in, 0, sizeof(in));
	memset(e, 0, sizeof(e));
	for (int i = 0; i < 2; i++) {
		e[i].fileid = 7 + (uint64_t)i;
		e[i].name = (char *)(i ? "b" : "a");
		e[i].cookie = 70 + (uint64_t)i;
		e[i].name_handle.handle_follows = TRUE;
		e[i].name_handle.post_op_fh3_u.handle.data.data_len = sizeof(fh);
		e[i].name_handle.post_op_fh3_u.handle.data.data_val = fh;
	}
	e[0].nextentry = &e[1];
	in.res.READDIRPLUS3res_u.resok.reply.entries = &e[0];
	xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
	cr_assert(xdr_nfs_readdirplus_reply(&x, &in));
	len = xdr_getpos(&x);
	memset(&out, 0, sizeof(out));
	out.max_entries = 2;
	xdrmem_create(&x, buf, len, XDR_DECODE);
	cr_assert(xdr_nfs_readdirplus_reply(&x, &out));
	cr_assert_str_eq(out.res.READDIRPLUS3res_u.resok.reply.entries->nextentry->name, "b");
	cr_assert_eq(out.res.READDIRPLUS3res_u.resok.reply.entries->nextentry->name_handle
			     .post_op_fh3_u.handle.data.data_len,
		     sizeof(fh));
	xdr_free((xdrproc_t)xdr_nfs_readdirplus_reply, (char *)&out);
	out.max_entries = 1;
	xdrmem_create(&x, buf, len, XDR_DECODE);
	cr_assert(!xdr_nfs_readdirplus_reply(&x, &out));
	xdr_free((xdrproc_t)xdr_nfs_readdirplus_reply, (char *)&out);
}

/*
 * A long list decodes and frees on a small stack: rpcgen's routines
 * recurse once per entry and would need megabytes for this one.
 */
#define LONG_LIST 200000u

struct long_list {
	char *buf;
	u_int len;
	bool ok;
	uint32_t n;
};

static void *decode_long(void *arg)
{
	struct long_list *l = arg;
	struct nfs_readdir_reply out;

	l->ok = decode(l->buf, l->len, LONG_LIST, &out);
	l->n = count_entries(&out);
	list_free(&out);
	return NULL;
}

Test(nfs_dirlist, a_long_list_needs_no_deep_stack)
{
	struct long_list l = { .len = 0 };
	struct nfs_readdir_reply in;
	pthread_attr_t attr;
	pthread_t t;
	u_int cap = LONG_LIST * 32 + 64;

	l.buf = malloc(cap);
	cr_assert_not_null(l.buf);
	list_make(&in, LONG_LIST);
	l.len = encode(&in, l.buf, cap);
	list_free(&in);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256u << 10);
	cr_assert_eq(pthread_create(&t, &attr, decode_long, &l), 0);
	pthread_join(t, NULL);
	pthread_attr_destroy(&attr);
	cr_assert(l.ok);
	cr_assert_eq(l.n, LONG_LIST);
	free(l.buf);
}
