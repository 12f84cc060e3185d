/*
 * nfs_mount: the MNT reply's meaning for a session (nfs_mount.c).
 */
#ifndef NFS_CLIENT_DEMO_NFS_MOUNT_H
#define NFS_CLIENT_DEMO_NFS_MOUNT_H

#include <stddef.h>

#include "mount3.h"
#include "nfs_status.h"

struct nfs_fh;

/*
 * nfs_mount_reply - the root handle of a MNT reply @r to @root.  Returns
 * ok; NFS_STATUS_MOUNT with the reply's mountstat3 when MOUNT refused;
 * NFS3ERR_BADHANDLE ("MOUNT" in @why) for a handle of length 0 or above
 * NFS3_FHSIZE; NFS_STATUS_CONNECT (the flavor in @why) when the reply's
 * flavor list is not empty and lacks AUTH_SYS, the only one the demo's
 * calls carry.  A reply with MNT3_OK is a mount the server lists,
 * whatever this returns: the caller still sends UMNT.
 */
struct nfs_status nfs_mount_reply(const mountres3 *r, struct nfs_fh *root, char *why,
				  size_t why_len);

#endif
