/*
 * nfs_mount: what a MNT reply means for a session: the export's root
 * handle, or why the export cannot be used.  No I/O: nfs_session.c makes
 * the call over TCP and passes the decoded reply here.
 */
#include "nfs_mount.h"

#include <stdio.h>

#include "nfs_session.h"

/*
 * False, with the list's first flavor in *@first, when a MNT reply's
 * flavor list does not hold AUTH_SYS; true when it does or is empty
 * (RFC 2623 2.7: the server says nothing).  Calls carry AUTH_SYS only.
 */
static bool unix_flavor_listed(const mountres3_ok *ok, int *first)
{
	for (u_int i = 0; i < ok->auth_flavors.auth_flavors_len; i++)
		if (ok->auth_flavors.auth_flavors_val[i] == AUTH_SYS)
			return true;
	if (ok->auth_flavors.auth_flavors_len)
		*first = ok->auth_flavors.auth_flavors_val[0];
	return !ok->auth_flavors.auth_flavors_len;
}

struct nfs_status nfs_mount_reply(const mountres3 *r, struct nfs_fh *root, char *why,
				  size_t why_len)
{
	const mountres3_ok *ok = &r->mountres3_u.mountinfo;
	nfs_fh3 x = { { ok->fhandle.fhandle3_len, ok->fhandle.fhandle3_val } };
	int flavor = 0;

	if (r->fhs_status != MNT3_OK)
		return (struct nfs_status){ NFS_STATUS_MOUNT, (int)r->fhs_status };
	if (!nfs_fh_from_xdr(root, &x)) {
		snprintf(why, why_len, "MOUNT");
		return nfs_err(NFS3ERR_BADHANDLE);
	}
	if (!unix_flavor_listed(ok, &flavor)) {
		snprintf(why, why_len, "MOUNT: the export takes security flavor %d, not AUTH_SYS",
			 flavor);
		return (struct nfs_status){ NFS_STATUS_CONNECT, 0 };
	}
	return nfs_ok();
}
