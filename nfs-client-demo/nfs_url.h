/*
 * nfs_url: the nfs://HOST[:PORT]/EXPORT[?QUERY] locator of the demo
 * client, in the form libnfs and the NFS URL scheme (RFC 2224) use.
 * Parsing only: no I/O, no name resolution.
 */
#ifndef NFS_CLIENT_DEMO_NFS_URL_H
#define NFS_CLIENT_DEMO_NFS_URL_H

#include <stdbool.h>
#include <stdint.h>

#define NFS_URL_HOST_MAX 255
#define NFS_URL_EXPORT_MAX 1024

enum nfs_url_proto {
	NFS_URL_PROTO_RDMA,
	NFS_URL_PROTO_TCP,
};

/* NFS's default ports: 20049 for RPC-over-RDMA (RFC 8267), 2049 for TCP. */
#define NFS_URL_RDMA_PORT 20049
#define NFS_URL_TCP_PORT 2049

struct nfs_url {
	char host[NFS_URL_HOST_MAX + 1];     /* without the brackets of an IPv6 literal */
	uint16_t port;                       /* never 0: the protocol's default if not given */
	char export_path[NFS_URL_EXPORT_MAX + 1]; /* starts with '/' */
	enum nfs_url_proto proto;
	bool has_uid, has_gid;
	uint32_t uid, gid;
};

/*
 * nfs_url_parse - parse @text into @url.  Query keys: proto=rdma|tcp,
 * uid=N, gid=N.  Returns NULL on success, or a static message saying
 * what is wrong ("missing host", "unknown query key", ...).
 */
const char *nfs_url_parse(const char *text, struct nfs_url *url);

/* "HOST:EXPORT", or "[V6]:EXPORT" for an IPv6 literal, as mount(8) names an NFS export. */
#define NFS_URL_NAME_MAX (NFS_URL_HOST_MAX + NFS_URL_EXPORT_MAX + 4)
void nfs_url_export_name(const struct nfs_url *url, char out[NFS_URL_NAME_MAX]);

#endif
