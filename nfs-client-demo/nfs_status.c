/*
 * nfs_status: maps NFSv3 and MOUNTv3 statuses, RPC failures and local
 * errnos to messages and exit statuses.
 */
#include "nfs_status.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mount3.h"

struct stat3_entry {
	nfsstat3 stat;
	const char *name;
	int err;
};

static const struct stat3_entry stat3_table[] = {
	{ NFS3_OK, "NFS3_OK", 0 },
	{ NFS3ERR_PERM, "NFS3ERR_PERM", EPERM },
	{ NFS3ERR_NOENT, "NFS3ERR_NOENT", ENOENT },
	{ NFS3ERR_IO, "NFS3ERR_IO", EIO },
	{ NFS3ERR_NXIO, "NFS3ERR_NXIO", ENXIO },
	{ NFS3ERR_ACCES, "NFS3ERR_ACCES", EACCES },
	{ NFS3ERR_EXIST, "NFS3ERR_EXIST", EEXIST },
	{ NFS3ERR_XDEV, "NFS3ERR_XDEV", EXDEV },
	{ NFS3ERR_NODEV, "NFS3ERR_NODEV", ENODEV },
	{ NFS3ERR_NOTDIR, "NFS3ERR_NOTDIR", ENOTDIR },
	{ NFS3ERR_ISDIR, "NFS3ERR_ISDIR", EISDIR },
	{ NFS3ERR_INVAL, "NFS3ERR_INVAL", EINVAL },
	{ NFS3ERR_FBIG, "NFS3ERR_FBIG", EFBIG },
	{ NFS3ERR_NOSPC, "NFS3ERR_NOSPC", ENOSPC },
	{ NFS3ERR_ROFS, "NFS3ERR_ROFS", EROFS },
	{ NFS3ERR_MLINK, "NFS3ERR_MLINK", EMLINK },
	{ NFS3ERR_NAMETOOLONG, "NFS3ERR_NAMETOOLONG", ENAMETOOLONG },
	{ NFS3ERR_NOTEMPTY, "NFS3ERR_NOTEMPTY", ENOTEMPTY },
	{ NFS3ERR_DQUOT, "NFS3ERR_DQUOT", EDQUOT },
	{ NFS3ERR_STALE, "NFS3ERR_STALE", ESTALE },
	{ NFS3ERR_REMOTE, "NFS3ERR_REMOTE", EREMOTE },
	{ NFS3ERR_BADHANDLE, "NFS3ERR_BADHANDLE", 0 },
	{ NFS3ERR_NOT_SYNC, "NFS3ERR_NOT_SYNC", 0 },
	{ NFS3ERR_BAD_COOKIE, "NFS3ERR_BAD_COOKIE", 0 },
	{ NFS3ERR_NOTSUPP, "NFS3ERR_NOTSUPP", EOPNOTSUPP },
	{ NFS3ERR_TOOSMALL, "NFS3ERR_TOOSMALL", 0 },
	{ NFS3ERR_SERVERFAULT, "NFS3ERR_SERVERFAULT", 0 },
	{ NFS3ERR_BADTYPE, "NFS3ERR_BADTYPE", 0 },
	{ NFS3ERR_JUKEBOX, "NFS3ERR_JUKEBOX", 0 },
};

static const struct stat3_entry *stat3_find(nfsstat3 s)
{
	for (size_t i = 0; i < sizeof(stat3_table) / sizeof(stat3_table[0]); i++)
		if (stat3_table[i].stat == s)
			return &stat3_table[i];
	return NULL;
}

int nfs_stat3_errno(nfsstat3 s)
{
	const struct stat3_entry *e = stat3_find(s);

	return e ? e->err : 0;
}

const char *nfs_stat3_name(nfsstat3 s, char *buf, size_t len)
{
	const struct stat3_entry *e = stat3_find(s);

	if (e)
		return e->name;
	snprintf(buf, len, "NFS3ERR_#%d", (int)s);
	return buf;
}

static const char *mount_message(mountstat3 s, char *buf, size_t len)
{
	switch (s) {
	case MNT3ERR_PERM: return strerror(EPERM);
	case MNT3ERR_NOENT: return strerror(ENOENT);
	case MNT3ERR_IO: return strerror(EIO);
	case MNT3ERR_ACCES: return strerror(EACCES);
	case MNT3ERR_NOTDIR: return strerror(ENOTDIR);
	case MNT3ERR_INVAL: return strerror(EINVAL);
	case MNT3ERR_NAMETOOLONG: return strerror(ENAMETOOLONG);
	case MNT3ERR_NOTSUPP: return strerror(EOPNOTSUPP);
	case MNT3ERR_SERVERFAULT: return "MNT3ERR_SERVERFAULT";
	default:
		snprintf(buf, len, "MNT3ERR_#%d", (int)s);
		return buf;
	}
}

const char *nfs_status_message(struct nfs_status st, char *buf, size_t len)
{
	int err;

	switch (st.kind) {
	case NFS_STATUS_OK:
		return "Success";
	case NFS_STATUS_NFS:
		err = nfs_stat3_errno((nfsstat3)st.code);
		return err ? strerror(err) : nfs_stat3_name((nfsstat3)st.code, buf, len);
	case NFS_STATUS_RPC:
		return clnt_sperrno((enum clnt_stat)st.code); /* "RPC: Timed out" */
	case NFS_STATUS_MOUNT:
		return mount_message((mountstat3)st.code, buf, len);
	case NFS_STATUS_LOCAL:
	case NFS_STATUS_CONNECT:
		return strerror(st.code);
	}
	return "unknown failure";
}

enum nfs_exit nfs_status_exit(struct nfs_status st)
{
	switch (st.kind) {
	case NFS_STATUS_OK: return NFS_EXIT_OK;
	case NFS_STATUS_NFS:
	case NFS_STATUS_LOCAL: return NFS_EXIT_FAILED;
	case NFS_STATUS_RPC: return NFS_EXIT_RPC;
	case NFS_STATUS_MOUNT:
	case NFS_STATUS_CONNECT: return NFS_EXIT_CONNECT;
	}
	return NFS_EXIT_FAILED;
}
