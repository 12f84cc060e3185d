/* nfs-client-demo's status messages and exit statuses. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "mount3.h"
#include "nfs_status.h"

Test(nfs_status, nfs_errors_read_like_errno)
{
	char buf[64];

	cr_assert_str_eq(nfs_status_message(nfs_err(NFS3ERR_NOENT), buf, sizeof(buf)),
			 "No such file or directory");
	cr_assert_str_eq(nfs_status_message(nfs_err(NFS3ERR_ACCES), buf, sizeof(buf)),
			 "Permission denied");
	cr_assert_str_eq(nfs_status_message(nfs_err(NFS3ERR_NOSPC), buf, sizeof(buf)),
			 "No space left on device");
	cr_assert_str_eq(nfs_status_message(nfs_err(NFS3ERR_NOTEMPTY), buf, sizeof(buf)),
			 "Directory not empty");
	cr_assert_str_eq(nfs_status_message(nfs_err(NFS3ERR_STALE), buf, sizeof(buf)),
			 "Stale file handle");
	cr_assert_eq(nfs_stat3_errno(NFS3ERR_ISDIR), EISDIR);
	cr_assert_eq(nfs_stat3_errno(NFS3ERR_XDEV), EXDEV);
}

Test(nfs_status, statuses_without_errno_by_name)
{
	char buf[64];

	cr_assert_str_eq(nfs_status_message(nfs_err(NFS3ERR_BADHANDLE), buf, sizeof(buf)),
			 "NFS3ERR_BADHANDLE");
	cr_assert_str_eq(nfs_status_message(nfs_err(NFS3ERR_JUKEBOX), buf, sizeof(buf)),
			 "NFS3ERR_JUKEBOX");
	cr_assert_str_eq(nfs_status_message(nfs_err((nfsstat3)12345), buf, sizeof(buf)),
			 "NFS3ERR_#12345");
	cr_assert_eq(nfs_stat3_errno((nfsstat3)12345), 0);
}

Test(nfs_status, rpc_and_mount_and_local)
{
	char buf[128];
	struct nfs_status mnt = { NFS_STATUS_MOUNT, MNT3ERR_ACCES };

	cr_assert_str_eq(nfs_status_message(nfs_rpc_err(RPC_TIMEDOUT), buf, sizeof(buf)),
			 "RPC: Timed out");
	cr_assert_str_eq(nfs_status_message(mnt, buf, sizeof(buf)), "Permission denied");
	cr_assert_str_eq(nfs_status_message(nfs_local_err(ENOENT), buf, sizeof(buf)),
			 "No such file or directory");
}

Test(nfs_status, exit_statuses)
{
	struct nfs_status mnt = { NFS_STATUS_MOUNT, MNT3ERR_NOENT };
	struct nfs_status conn = { NFS_STATUS_CONNECT, ECONNREFUSED };

	cr_assert_eq(nfs_status_exit(nfs_ok()), NFS_EXIT_OK);
	cr_assert_eq(nfs_status_exit(nfs_err(NFS3ERR_NOENT)), NFS_EXIT_FAILED);
	cr_assert_eq(nfs_status_exit(nfs_local_err(EIO)), NFS_EXIT_FAILED);
	cr_assert_eq(nfs_status_exit(nfs_rpc_err(RPC_TIMEDOUT)), NFS_EXIT_RPC);
	cr_assert_eq(nfs_status_exit(mnt), NFS_EXIT_CONNECT);
	cr_assert_eq(nfs_status_exit(conn), NFS_EXIT_CONNECT);
}
