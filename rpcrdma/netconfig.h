/*
 * The netids "rdma" and "rdma6" (RFC 5665): their struct netconfig
 * entries, available without touching /etc/netconfig, and universal
 * addresses ("h1.h2.h3.h4.p1.p2", "x:...:x.p1.p2") for rpcbind.
 * libtirpc's taddr2uaddr() knows only udp, tcp, udp6, tcp6 and local,
 * so RDMA addresses are converted here.
 */
#ifndef RPCRDMA_NETCONFIG_H
#define RPCRDMA_NETCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RPCRDMA_NETID  "rdma"
#define RPCRDMA_NETID6 "rdma6"
/* "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255" plus ".255.255" and NUL */
#define RPCRDMA_UADDR_MAX 56

/*
 * rpcrdma_getnetconfigent - the entry for "rdma" or "rdma6"
 * Returns a pointer to static, read-only storage (never free it), or
 * NULL for any other netid.  The entries are not "visible" (nc_flag 0),
 * so nettype searches never pick them.
 */
const struct netconfig *rpcrdma_getnetconfigent(const char *netid);

/* The address family of an RDMA netid; returns false for other netids. */
bool rpcrdma_netid_family(const char *netid, int *family);

/*
 * rpcrdma_uaddr_format - universal address of an AF_INET or AF_INET6
 * socket address.  Returns 0, -EAFNOSUPPORT or -ENOSPC.
 */
int rpcrdma_uaddr_format(const struct sockaddr *sa, char *out, size_t cap);

/*
 * rpcrdma_uaddr_parse - the socket address of a universal address of
 * @family.  Returns 0 or -EINVAL.
 */
int rpcrdma_uaddr_parse(const char *uaddr, int family, struct sockaddr_storage *out);

#ifdef __cplusplus
}
#endif

#endif
