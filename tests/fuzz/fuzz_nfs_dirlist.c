/*
 * nfs-client-demo's READDIR and READDIRPLUS reply decoder (nfs_dirlist.c):
 * any bytes as either reply, capped at the entries a first byte allows.
 * A reply that decodes must encode again and decode to as many entries;
 * one that fails must leave nothing behind once freed (LeakSanitizer).
 */
#include <stdlib.h>
#include <string.h>

#include "nfs_dirlist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t entries(const struct nfs_readdirplus_reply *r)
{
	uint32_t n = 0;

	for (const entryplus3 *e = r->res.READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry)
		n++;
	return n;
}

static void plus(const uint8_t *data, size_t size, uint32_t max)
{
	struct nfs_readdirplus_reply r, again;
	static char buf[1u << 20];
	XDR x;

	memset(&r, 0, sizeof(r));
	r.max_entries = max;
	xdrmem_create(&x, (char *)(uintptr_t)data, (u_int)size, XDR_DECODE);
	if (xdr_nfs_readdirplus_reply(&x, &r) && r.res.status == NFS3_OK) {
		xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
		if (!xdr_nfs_readdirplus_reply(&x, &r))
			abort();
		memset(&again, 0, sizeof(again));
		again.max_entries = max;
		xdrmem_create(&x, buf, xdr_getpos(&x), XDR_DECODE);
		if (!xdr_nfs_readdirplus_reply(&x, &again) || entries(&again) != entries(&r))
			abort();
		xdr_free((xdrproc_t)xdr_nfs_readdirplus_reply, (char *)&again);
	}
	xdr_free((xdrproc_t)xdr_nfs_readdirplus_reply, (char *)&r);
}

static void plain(const uint8_t *data, size_t size, uint32_t max)
{
	struct nfs_readdir_reply r;
	XDR x;

	memset(&r, 0, sizeof(r));
	r.max_entries = max;
	xdrmem_create(&x, (char *)(uintptr_t)data, (u_int)size, XDR_DECODE);
	(void)xdr_nfs_readdir_reply(&x, &r);
	xdr_free((xdrproc_t)xdr_nfs_readdir_reply, (char *)&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t max;

	if (size < 1 || size > (1u << 16))
		return 0;
	max = data[0];
	plain(data + 1, size - 1, max);
	plus(data + 1, size - 1, max);
	return 0;
}
