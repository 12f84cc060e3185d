/*
 * nfs3_ulb: which NFSv3 data may move by direct data placement and how
 * large each reply can be.  RFC 5667 section 4 makes these DDP-eligible:
 * WRITE's data and SYMLINK's target (read chunks), READ's data and
 * READLINK's target (write chunks).  READ's write chunk is sized from the
 * request's count; READDIR and READDIRPLUS replies are bounded by their
 * counts, so the transport offers a reply chunk exactly when a reply of
 * that size cannot come inline.  Every other reply has a small fixed
 * bound, so it never needs a reply chunk.
 *
 * Item numbering (rpcrdma_ulb(3)): WRITE3args is the file handle (item
 * 1) then data (item 2); SYMLINK3args is the directory handle (1), the
 * name (2) and the target (3); READ3resok and READLINK3resok carry
 * attributes without opaque data, so their data is item 1.
 */
#include "nfs3_ulb.h"

#include "nfs3.h"

static uint32_t small_reply(const void *args)
{
	(void)args;
	return NFS3_ULB_SMALL_REPLY_MAX;
}

static uint32_t read_data_max(const void *args, unsigned int item)
{
	(void)item;
	return ((const READ3args *)args)->count;
}

static uint32_t readlink_data_max(const void *args, unsigned int item)
{
	(void)args;
	(void)item;
	return NFS3_MAXPATHLEN;
}

static uint32_t readdir_reply(const void *args)
{
	return ((const READDIR3args *)args)->count + NFS3_ULB_READDIR_SLACK;
}

static uint32_t readdirplus_reply(const void *args)
{
	return ((const READDIRPLUS3args *)args)->maxcount + NFS3_ULB_READDIR_SLACK;
}

#define SMALL(p) { .proc = (p), .reply_max = small_reply }

static const struct rpcrdma_ulb_proc nfs3_ulb_procs[] = {
	SMALL(NFSPROC3_NULL),
	SMALL(NFSPROC3_GETATTR),
	SMALL(NFSPROC3_SETATTR),
	SMALL(NFSPROC3_LOOKUP),
	SMALL(NFSPROC3_ACCESS),
	{ .proc = NFSPROC3_READLINK, .res_ddp = 1u << 0, .res_max = readlink_data_max,
	  .reply_max = small_reply },
	{ .proc = NFSPROC3_READ, .res_ddp = 1u << 0, .res_max = read_data_max,
	  .reply_max = small_reply },
	{ .proc = NFSPROC3_WRITE, .arg_ddp = 1u << 1, .reply_max = small_reply },
	SMALL(NFSPROC3_CREATE),
	SMALL(NFSPROC3_MKDIR),
	{ .proc = NFSPROC3_SYMLINK, .arg_ddp = 1u << 2, .reply_max = small_reply },
	SMALL(NFSPROC3_MKNOD),
	SMALL(NFSPROC3_REMOVE),
	SMALL(NFSPROC3_RMDIR),
	SMALL(NFSPROC3_RENAME),
	SMALL(NFSPROC3_LINK),
	{ .proc = NFSPROC3_READDIR, .reply_max = readdir_reply },
	{ .proc = NFSPROC3_READDIRPLUS, .reply_max = readdirplus_reply },
	SMALL(NFSPROC3_FSSTAT),
	SMALL(NFSPROC3_FSINFO),
	SMALL(NFSPROC3_PATHCONF),
	SMALL(NFSPROC3_COMMIT),
};

const struct rpcrdma_ulb nfs3_ulb = {
	.prog = NFS_PROGRAM,
	.vers = NFS_V3,
	.procs = nfs3_ulb_procs,
	.nprocs = sizeof(nfs3_ulb_procs) / sizeof(nfs3_ulb_procs[0]),
};
