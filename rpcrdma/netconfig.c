/*
 * Static netconfig entries for the RDMA netids, and universal address
 * conversion for them.
 */
#include "rpcrdma/netconfig.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

static char netid4[] = RPCRDMA_NETID, netid6[] = RPCRDMA_NETID6;
static char inet4[] = NC_INET, inet6[] = NC_INET6;
static char proto[] = "rdma", device[] = "-";

static const struct netconfig entries[] = {
	{ .nc_netid = netid4, .nc_semantics = NC_TPI_COTS_ORD, .nc_flag = NC_NOFLAG,
	  .nc_protofmly = inet4, .nc_proto = proto, .nc_device = device },
	{ .nc_netid = netid6, .nc_semantics = NC_TPI_COTS_ORD, .nc_flag = NC_NOFLAG,
	  .nc_protofmly = inet6, .nc_proto = proto, .nc_device = device },
};

const struct netconfig *rpcrdma_getnetconfigent(const char *netid)
{
	for (size_t i = 0; netid && i < sizeof(entries) / sizeof(entries[0]); i++)
		if (!strcmp(entries[i].nc_netid, netid))
			return &entries[i];
	return NULL;
}

bool rpcrdma_netid_family(const char *netid, int *family)
{
	const struct netconfig *nc = rpcrdma_getnetconfigent(netid);

	if (!nc)
		return false;
	*family = nc == &entries[0] ? AF_INET : AF_INET6;
	return true;
}

int rpcrdma_uaddr_format(const struct sockaddr *sa, char *out, size_t cap)
{
	char host[INET6_ADDRSTRLEN];
	const void *addr;
	uint16_t port;
	int n;

	if (sa->sa_family == AF_INET) {
		addr = &((const struct sockaddr_in *)sa)->sin_addr;
		port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		addr = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	} else {
		return -EAFNOSUPPORT;
	}
	if (!inet_ntop(sa->sa_family, addr, host, sizeof(host)))
		return -EAFNOSUPPORT;
	n = snprintf(out, cap, "%s.%u.%u", host, port >> 8, port & 0xff);
	return n < 0 || (size_t)n >= cap ? -ENOSPC : 0;
}

/* A decimal 0..255 with no sign, no blanks, no leading zeros beyond "0". */
static bool parse_octet(const char *s, size_t len, unsigned *v)
{
	if (!len || len > 3 || (len > 1 && s[0] == '0'))
		return false;
	*v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*v = *v * 10 + (unsigned)(s[i] - '0');
	}
	return *v <= 255;
}

int rpcrdma_uaddr_parse(const char *uaddr, int family, struct sockaddr_storage *out)
{
	char host[INET6_ADDRSTRLEN];
	const char *p2, *p1;
	unsigned hi, lo;
	size_t hlen;

	p2 = strrchr(uaddr, '.');
	if (!p2 || p2 == uaddr)
		return -EINVAL;
	for (p1 = p2 - 1; p1 > uaddr && *p1 != '.'; p1--)
		;
	if (*p1 != '.' || !parse_octet(p1 + 1, (size_t)(p2 - p1 - 1), &hi) ||
	    !parse_octet(p2 + 1, strlen(p2 + 1), &lo))
		return -EINVAL;
	hlen = (size_t)(p1 - uaddr);
	if (!hlen || hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, uaddr, hlen);
	host[hlen] = '\0';
	memset(out, 0, sizeof(*out));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)out;

		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)(hi << 8 | lo));
		return inet_pton(AF_INET, host, &sin->sin_addr) == 1 ? 0 : -EINVAL;
	}
	if (family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)out;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)(hi << 8 | lo));
		return inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	return -EINVAL;
}
