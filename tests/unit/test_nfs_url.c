/* nfs-client-demo's nfs:// URL parser. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "nfs_url.h"

Test(nfs_url, defaults_to_rdma_on_20049)
{
	struct nfs_url u;

	cr_assert_null(nfs_url_parse("nfs://server/srv/nfs", &u));
	cr_assert_str_eq(u.host, "server");
	cr_assert_str_eq(u.export_path, "/srv/nfs");
	cr_assert_eq(u.proto, NFS_URL_PROTO_RDMA);
	cr_assert_eq(u.port, 20049);
	cr_assert_not(u.has_uid || u.has_gid);
}

Test(nfs_url, tcp_defaults_to_2049_and_port_overrides)
{
	struct nfs_url u;

	cr_assert_null(nfs_url_parse("nfs://192.0.2.1/x?proto=tcp", &u));
	cr_assert_eq(u.proto, NFS_URL_PROTO_TCP);
	cr_assert_eq(u.port, 2049);
	cr_assert_null(nfs_url_parse("nfs://192.0.2.1:3049/x?proto=tcp", &u));
	cr_assert_eq(u.port, 3049);
	cr_assert_null(nfs_url_parse("nfs://192.0.2.1:1/x", &u));
	cr_assert_eq(u.port, 1);
	cr_assert_eq(u.proto, NFS_URL_PROTO_RDMA);
}

Test(nfs_url, ipv6_literal_in_brackets)
{
	struct nfs_url u;

	cr_assert_null(nfs_url_parse("nfs://[2001:db8::1]/srv/nfs?proto=rdma", &u));
	cr_assert_str_eq(u.host, "2001:db8::1");
	cr_assert_eq(u.port, 20049);
	cr_assert_null(nfs_url_parse("nfs://[2001:db8::1]:20050/srv/nfs", &u));
	cr_assert_eq(u.port, 20050);
	cr_assert_str_eq(u.export_path, "/srv/nfs");
}

Test(nfs_url, export_names_as_mount_writes_them)
{
	char name[NFS_URL_NAME_MAX];
	struct nfs_url u;

	cr_assert_null(nfs_url_parse("nfs://[2001:db8::1]:20050/srv/nfs", &u));
	nfs_url_export_name(&u, name);
	cr_assert_str_eq(name, "[2001:db8::1]:/srv/nfs");
	cr_assert_null(nfs_url_parse("nfs://server.example/", &u));
	nfs_url_export_name(&u, name);
	cr_assert_str_eq(name, "server.example:/");
}

Test(nfs_url, credentials)
{
	struct nfs_url u;

	cr_assert_null(nfs_url_parse("nfs://h/e?uid=65534&gid=100&proto=tcp", &u));
	cr_assert(u.has_uid && u.has_gid);
	cr_assert_eq(u.uid, 65534);
	cr_assert_eq(u.gid, 100);
	cr_assert_eq(u.proto, NFS_URL_PROTO_TCP);
	cr_assert_null(nfs_url_parse("nfs://h/e?uid=4294967295", &u));
	cr_assert_eq(u.uid, 4294967295u);
}

Test(nfs_url, root_export)
{
	struct nfs_url u;

	cr_assert_null(nfs_url_parse("nfs://h/", &u));
	cr_assert_str_eq(u.export_path, "/");
	cr_assert_null(nfs_url_parse("nfs://h/?proto=tcp", &u));
	cr_assert_str_eq(u.export_path, "/");
	cr_assert_eq(u.proto, NFS_URL_PROTO_TCP);
}

Test(nfs_url, rejects_malformed)
{
	static const char *bad[] = {
		"", "nfs:/h/e", "http://h/e", "nfs://", "nfs://h", "nfs:///e", "nfs://h/e?",
		"nfs://h/e?proto=tcp&proto=rdma", "nfs://h/e?uid=1&gid=2&uid=1",
		"nfs://h:/e", "nfs://h:0/e", "nfs://h:65536/e", "nfs://h:12a/e", "nfs://h:-1/e",
		"nfs://[2001:db8::1/e", "nfs://[host]/e", "nfs://[::1]x/e", "nfs://h?proto=tcp/e",
		"nfs://h/e?proto=udp", "nfs://h/e?proto", "nfs://h/e?uid=-1", "nfs://h/e?uid=",
		"nfs://h/e?uid=4294967296", "nfs://h/e?color=red", "nfs://h/e?proto=tcp&",
		"nfs://h/e#frag", "nfs://a@h/e", "nfs://h/e?gid=1x",
	};
	struct nfs_url u;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_not_null(nfs_url_parse(bad[i], &u), "accepted '%s'", bad[i]);
}

Test(nfs_url, length_limits)
{
	char url[NFS_URL_HOST_MAX + NFS_URL_EXPORT_MAX + 64], host[NFS_URL_HOST_MAX + 2];
	struct nfs_url u;

	memset(host, 'h', sizeof(host) - 1);
	host[NFS_URL_HOST_MAX] = '\0';
	snprintf(url, sizeof(url), "nfs://%s/e", host);
	cr_assert_null(nfs_url_parse(url, &u), "a %d-byte host fits", NFS_URL_HOST_MAX);
	host[NFS_URL_HOST_MAX] = 'h';
	host[NFS_URL_HOST_MAX + 1] = '\0';
	snprintf(url, sizeof(url), "nfs://%s/e", host);
	cr_assert_not_null(nfs_url_parse(url, &u));
	strcpy(url, "nfs://h/");
	memset(url + 8, 'e', NFS_URL_EXPORT_MAX);
	url[8 + NFS_URL_EXPORT_MAX] = '\0';
	cr_assert_not_null(nfs_url_parse(url, &u), "export path with its '/' is one byte too long");
	url[7 + NFS_URL_EXPORT_MAX] = '\0';
	cr_assert_null(nfs_url_parse(url, &u));
	cr_assert_eq(strlen(u.export_path), NFS_URL_EXPORT_MAX);
}
