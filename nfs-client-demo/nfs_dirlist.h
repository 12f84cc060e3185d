/*
 * nfs_dirlist: the replies of READDIR and READDIRPLUS with their entry
 * lists coded by a loop.  rpcgen's routines recurse once per entry
 * (xdr_pointer to the next), so a long list from a server (over TCP
 * nothing bounds a reply's size) would overflow the stack, and would
 * recurse again to free it.  These take the same wire format and the
 * same types, cap the entries at what a reply of the request's count
 * can hold, and free a list cut short as well as a whole one.  No I/O.
 */
#ifndef NFS_CLIENT_DEMO_NFS_DIRLIST_H
#define NFS_CLIENT_DEMO_NFS_DIRLIST_H

#include <stdint.h>

#include "nfs3.h"

/* @res as rpcgen's READDIR3res; at most @max_entries entries are decoded. */
struct nfs_readdir_reply {
	READDIR3res res;
	uint32_t max_entries;
};

struct nfs_readdirplus_reply {
	READDIRPLUS3res res;
	uint32_t max_entries;
};

/*
 * The most entries a reply of @count bytes can carry: each takes at
 * least 24 bytes on the wire (its "value follows", fileid, an empty
 * name and cookie), plus one for a server that rounds.
 */
uint32_t nfs_dirlist_max_entries(uint32_t count);

/*
 * XDR routines for the two replies (encode, decode, free).  Decoding
 * allocates every entry anew, so the reply must not hold a list (zero
 * it first, as nfs3_call does); it fails on more than max_entries
 * entries, and what was decoded before a failure stays in the list, for
 * XDR_FREE (clnt_freeres) to free.
 */
bool_t xdr_nfs_readdir_reply(XDR *x, struct nfs_readdir_reply *r);
bool_t xdr_nfs_readdirplus_reply(XDR *x, struct nfs_readdirplus_reply *r);

#endif
