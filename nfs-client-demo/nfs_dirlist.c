/*
 * nfs_dirlist: READDIR and READDIRPLUS replies, their entry lists coded
 * by one loop for both kinds of entry (see nfs_dirlist.h).  An entry's
 * link to the next is read and written with memcpy through its offset,
 * so one routine serves entry3 and entryplus3 without type punning.
 */
#include "nfs_dirlist.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define DIRLIST_MIN_ENTRY_BYTES 24u

struct list_kind {
	size_t size;        /* of one entry */
	size_t next_offset; /* of its pointer to the next */
	bool_t (*fields)(XDR *x, void *entry); /* its fields, the pointer to the next excepted */
};

static bool_t xdr_entry3_fields(XDR *x, void *entry)
{
	entry3 *e = entry;

	return xdr_fileid3(x, &e->fileid) && xdr_filename3(x, &e->name) &&
	       xdr_cookie3(x, &e->cookie);
}

static bool_t xdr_entryplus3_fields(XDR *x, void *entry)
{
	entryplus3 *e = entry;

	return xdr_fileid3(x, &e->fileid) && xdr_filename3(x, &e->name) &&
	       xdr_cookie3(x, &e->cookie) && xdr_post_op_attr(x, &e->name_attributes) &&
	       xdr_post_op_fh3(x, &e->name_handle);
}

static const struct list_kind entry3_kind = {
	.size = sizeof(entry3),
	.next_offset = offsetof(entry3, nextentry),
	.fields = xdr_entry3_fields,
};

static const struct list_kind entryplus3_kind = {
	.size = sizeof(entryplus3),
	.next_offset = offsetof(entryplus3, nextentry),
	.fields = xdr_entryplus3_fields,
};

static void *link_get(const void *at)
{
	void *p;

	memcpy(&p, at, sizeof(p));
	return p;
}

static void link_set(void *at, void *p)
{
	memcpy(at, &p, sizeof(p));
}

static void *link_of(void *entry, const struct list_kind *k)
{
	return (char *)entry + k->next_offset;
}

static bool_t list_decode(XDR *x, void *head, uint32_t max, const struct list_kind *k)
{
	void *at = head, *e;
	bool_t more;

	for (uint32_t n = 0;; n++) {
		if (!xdr_bool(x, &more))
			return FALSE;
		if (!more) {
			link_set(at, NULL);
			return TRUE;
		}
		if (n == max || !(e = calloc(1, k->size)))
			return FALSE;
		link_set(at, e); /* linked before its fields: freed with the list if they fail */
		if (!k->fields(x, e))
			return FALSE;
		at = link_of(e, k);
	}
}

static bool_t list_encode(XDR *x, const void *head, const struct list_kind *k)
{
	bool_t more;

	for (void *e = link_get(head);; e = link_get(link_of(e, k))) {
		more = e != NULL;
		if (!xdr_bool(x, &more))
			return FALSE;
		if (!more)
			return TRUE;
		if (!k->fields(x, e))
			return FALSE;
	}
}

static bool_t list_free(XDR *x, void *head, const struct list_kind *k)
{
	void *next;

	for (void *e = link_get(head); e; e = next) {
		next = link_get(link_of(e, k));
		(void)k->fields(x, e);
		free(e);
	}
	link_set(head, NULL);
	return TRUE;
}

/* @head: the address of the list's first pointer (dirlist3.entries, dirlistplus3.entries). */
static bool_t xdr_list(XDR *x, void *head, uint32_t max, const struct list_kind *k)
{
	switch (x->x_op) {
	case XDR_DECODE:
		return list_decode(x, head, max, k);
	case XDR_ENCODE:
		return list_encode(x, head, k);
	case XDR_FREE:
		return list_free(x, head, k);
	}
	return FALSE;
}

uint32_t nfs_dirlist_max_entries(uint32_t count)
{
	return count / DIRLIST_MIN_ENTRY_BYTES + 1;
}

bool_t xdr_nfs_readdir_reply(XDR *x, struct nfs_readdir_reply *r)
{
	READDIR3resok *ok = &r->res.READDIR3res_u.resok;

	if (!xdr_nfsstat3(x, &r->res.status))
		return FALSE;
	if (r->res.status != NFS3_OK)
		return xdr_READDIR3resfail(x, &r->res.READDIR3res_u.resfail);
	return xdr_post_op_attr(x, &ok->dir_attributes) && xdr_cookieverf3(x, ok->cookieverf) &&
	       xdr_list(x, &ok->reply.entries, r->max_entries, &entry3_kind) &&
	       xdr_bool(x, &ok->reply.eof);
}

bool_t xdr_nfs_readdirplus_reply(XDR *x, struct nfs_readdirplus_reply *r)
{
	READDIRPLUS3resok *ok = &r->res.READDIRPLUS3res_u.resok;

	if (!xdr_nfsstat3(x, &r->res.status))
		return FALSE;
	if (r->res.status != NFS3_OK)
		return xdr_READDIRPLUS3resfail(x, &r->res.READDIRPLUS3res_u.resfail);
	return xdr_post_op_attr(x, &ok->dir_attributes) && xdr_cookieverf3(x, ok->cookieverf) &&
	       xdr_list(x, &ok->reply.entries, r->max_entries, &entryplus3_kind) &&
	       xdr_bool(x, &ok->reply.eof);
}
