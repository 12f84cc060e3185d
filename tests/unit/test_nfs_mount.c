/* nfs-client-demo's reading of a MNT reply (nfs_mount.c). */
#include <criterion/criterion.h>
#include <string.h>

#include "nfs_mount.h"
#include "nfs_session.h"

#define FLAVOR_KRB5 390003
#define FLAVOR_GSS  6       /* RPCSEC_GSS */

struct mnt {
	mountres3 r;
	char fh[NFS3_FHSIZE + 1];
	int flavors[4];
};

static void mnt_ok(struct mnt *m, u_int fh_len, const int *flavors, u_int n)
{
	memset(m, 0, sizeof(*m));
	memset(m->fh, 0xab, sizeof(m->fh));
	if (n)
		memcpy(m->flavors, flavors, n * sizeof(*flavors));
	m->r.fhs_status = MNT3_OK;
	m->r.mountres3_u.mountinfo.fhandle.fhandle3_len = fh_len;
	m->r.mountres3_u.mountinfo.fhandle.fhandle3_val = m->fh;
	m->r.mountres3_u.mountinfo.auth_flavors.auth_flavors_len = n;
	m->r.mountres3_u.mountinfo.auth_flavors.auth_flavors_val = m->flavors;
}

static struct nfs_status reply(struct mnt *m, struct nfs_fh *root, char *why, size_t len)
{
	memset(root, 0, sizeof(*root));
	root->len = 7; /* a refusal must leave it, a mount must set it */
	strcpy(why, "unset");
	return nfs_mount_reply(&m->r, root, why, len);
}

Test(nfs_mount, a_refusal_is_the_mount_status)
{
	struct mnt m = { .r.fhs_status = MNT3ERR_ACCES };
	struct nfs_fh root;
	char why[128];
	struct nfs_status st = reply(&m, &root, why, sizeof(why));

	cr_assert_eq(st.kind, NFS_STATUS_MOUNT);
	cr_assert_eq(st.code, MNT3ERR_ACCES);
	cr_assert_eq(root.len, 7);
}

Test(nfs_mount, the_handle_with_auth_sys_listed_anywhere_or_no_list)
{
	const int lists[][2] = { { AUTH_SYS, 0 }, { FLAVOR_KRB5, AUTH_SYS } };
	const u_int lens[] = { 1, 2, 0 };
	struct nfs_fh root;
	char why[128];
	struct mnt m;

	for (u_int i = 0; i < 3; i++) {
		mnt_ok(&m, NFS3_FHSIZE, lists[i < 2 ? i : 0], lens[i]);
		cr_assert_eq(reply(&m, &root, why, sizeof(why)).kind, NFS_STATUS_OK, "list %u", i);
		cr_assert_eq(root.len, NFS3_FHSIZE);
		cr_assert_eq(memcmp(root.data, m.fh, NFS3_FHSIZE), 0);
	}
	mnt_ok(&m, 1, NULL, 0);
	cr_assert_eq(reply(&m, &root, why, sizeof(why)).kind, NFS_STATUS_OK);
	cr_assert_eq(root.len, 1);
}

Test(nfs_mount, a_list_without_auth_sys_names_its_first_flavor)
{
	const int krb5[] = { FLAVOR_KRB5, FLAVOR_KRB5 + 1 }, gss[] = { FLAVOR_GSS, AUTH_NONE };
	struct nfs_fh root;
	char why[128];
	struct nfs_status st;
	struct mnt m;

	mnt_ok(&m, 8, krb5, 2);
	st = reply(&m, &root, why, sizeof(why));
	cr_assert_eq(st.kind, NFS_STATUS_CONNECT);
	cr_assert_str_eq(why, "MOUNT: the export takes security flavor 390003, not AUTH_SYS");
	mnt_ok(&m, 8, gss, 2);
	st = reply(&m, &root, why, sizeof(why));
	cr_assert_eq(st.kind, NFS_STATUS_CONNECT);
	cr_assert_str_eq(why, "MOUNT: the export takes security flavor 6, not AUTH_SYS");
}

Test(nfs_mount, an_empty_or_oversized_handle_is_a_bad_handle)
{
	const int sys[] = { AUTH_SYS };
	const u_int lens[] = { 0, NFS3_FHSIZE + 1 };
	struct nfs_fh root;
	char why[128];
	struct nfs_status st;
	struct mnt m;

	for (u_int i = 0; i < 2; i++) {
		mnt_ok(&m, lens[i], sys, 1);
		st = reply(&m, &root, why, sizeof(why));
		cr_assert_eq(st.kind, NFS_STATUS_NFS, "length %u", lens[i]);
		cr_assert_eq(st.code, NFS3ERR_BADHANDLE);
		cr_assert_str_eq(why, "MOUNT");
	}
}
