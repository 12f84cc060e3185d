/* nfs-client-demo's RFC 5667 binding: eligible items and reply bounds. */
#include <criterion/criterion.h>

#include "nfs3.h"
#include "nfs3_ulb.h"

static const struct rpcrdma_ulb_proc *find(rpcproc_t proc)
{
	const struct rpcrdma_ulb_proc *found = NULL;

	for (size_t i = 0; i < nfs3_ulb.nprocs; i++) {
		if (nfs3_ulb.procs[i].proc != proc)
			continue;
		cr_assert_null(found, "procedure %u listed twice", proc);
		found = &nfs3_ulb.procs[i];
	}
	return found;
}

Test(nfs3_ulb, every_procedure_bounded)
{
	cr_assert_eq(nfs3_ulb.prog, NFS_PROGRAM);
	cr_assert_eq(nfs3_ulb.vers, NFS_V3);
	for (rpcproc_t p = NFSPROC3_NULL; p <= NFSPROC3_COMMIT; p++) {
		const struct rpcrdma_ulb_proc *e = find(p);

		cr_assert_not_null(e, "procedure %u missing", p);
		cr_assert_not_null(e->reply_max, "procedure %u has no reply bound", p);
	}
}

Test(nfs3_ulb, rfc5667_eligible_items)
{
	READ3args ra = { .count = 65536 };
	char fh[8] = { 0 };

	ra.file.data.data_len = sizeof(fh);
	ra.file.data.data_val = fh;
	cr_assert_eq(find(NFSPROC3_WRITE)->arg_ddp, 1u << 1, "WRITE: data after the handle");
	cr_assert_eq(find(NFSPROC3_SYMLINK)->arg_ddp, 1u << 2, "SYMLINK: target after handle, name");
	cr_assert_eq(find(NFSPROC3_READ)->res_ddp, 1u, "READ: data");
	cr_assert_eq(find(NFSPROC3_READLINK)->res_ddp, 1u, "READLINK: path");
	cr_assert_eq(find(NFSPROC3_READ)->res_max(&ra, 0), 65536, "sized from the request");
	cr_assert_eq(find(NFSPROC3_READLINK)->res_max(NULL, 0), NFS3_MAXPATHLEN);
	for (rpcproc_t p = NFSPROC3_NULL; p <= NFSPROC3_COMMIT; p++) {
		const struct rpcrdma_ulb_proc *e = find(p);

		if (p != NFSPROC3_WRITE && p != NFSPROC3_SYMLINK)
			cr_assert_eq(e->arg_ddp, 0, "procedure %u", p);
		if (p != NFSPROC3_READ && p != NFSPROC3_READLINK)
			cr_assert_eq(e->res_ddp, 0, "procedure %u", p);
	}
}

Test(nfs3_ulb, readdir_replies_follow_count)
{
	READDIR3args rd = { .count = 65536 };
	READDIRPLUS3args rdp = { .dircount = 8192, .maxcount = 131072 };

	cr_assert_eq(find(NFSPROC3_READDIR)->reply_max(&rd), 65536 + NFS3_ULB_READDIR_SLACK);
	cr_assert_eq(find(NFSPROC3_READDIRPLUS)->reply_max(&rdp), 131072 + NFS3_ULB_READDIR_SLACK);
	cr_assert_leq(find(NFSPROC3_CREATE)->reply_max(NULL), 4096 - 1024,
		      "small replies fit the default inline size with room for the header");
}
