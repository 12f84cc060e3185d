/* RDMA netconfig entries and universal addresses. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>

#include "rpcrdma/netconfig.h"

Test(netconfig, entries_for_rdma_netids_only)
{
	const struct netconfig *nc = rpcrdma_getnetconfigent("rdma");
	int family;

	cr_assert_not_null(nc);
	cr_assert_str_eq(nc->nc_netid, "rdma");
	cr_assert_str_eq(nc->nc_protofmly, NC_INET);
	cr_assert_eq(nc->nc_semantics, NC_TPI_COTS_ORD);
	cr_assert_eq(nc->nc_flag & NC_VISIBLE, 0, "never picked by nettype searches");
	nc = rpcrdma_getnetconfigent("rdma6");
	cr_assert_str_eq(nc->nc_protofmly, NC_INET6);
	cr_assert_null(rpcrdma_getnetconfigent("tcp"));
	cr_assert_null(rpcrdma_getnetconfigent("rdma7"));
	cr_assert_null(rpcrdma_getnetconfigent(NULL));
	cr_assert(rpcrdma_netid_family("rdma6", &family));
	cr_assert_eq(family, AF_INET6);
	cr_assert_not(rpcrdma_netid_family("udp", &family));
}

Test(netconfig, ipv4_uaddr)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(20049) };
	char buf[RPCRDMA_UADDR_MAX];
	struct sockaddr_storage back;

	inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr);
	cr_assert_eq(rpcrdma_uaddr_format((struct sockaddr *)&sin, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "192.0.2.1.78.81");
	cr_assert_eq(rpcrdma_uaddr_parse(buf, AF_INET, &back), 0);
	cr_assert_eq(memcmp(&back, &sin, sizeof(sin)), 0);
	cr_assert_eq(rpcrdma_uaddr_format((struct sockaddr *)&sin, buf, 15), -ENOSPC);
}

Test(netconfig, ipv6_uaddr)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(2049) };
	char buf[RPCRDMA_UADDR_MAX];
	struct sockaddr_storage back;

	inet_pton(AF_INET6, "2001:db8::1", &sin6.sin6_addr);
	cr_assert_eq(rpcrdma_uaddr_format((struct sockaddr *)&sin6, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "2001:db8::1.8.1");
	cr_assert_eq(rpcrdma_uaddr_parse(buf, AF_INET6, &back), 0);
	cr_assert_eq(memcmp(&((struct sockaddr_in6 *)&back)->sin6_addr, &sin6.sin6_addr, 16), 0);
	cr_assert_eq(((struct sockaddr_in6 *)&back)->sin6_port, htons(2049));
	cr_assert_eq(rpcrdma_uaddr_parse("::.0.0", AF_INET6, &back), 0);
}

Test(netconfig, longest_addresses_fit)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = 0xffff };
	char buf[RPCRDMA_UADDR_MAX];

	inet_pton(AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", &sin6.sin6_addr);
	cr_assert_eq(rpcrdma_uaddr_format((struct sockaddr *)&sin6, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe.255.255");
}

Test(netconfig, malformed_uaddrs_are_rejected)
{
	static const char *const bad4[] = {
		"", ".", "1.2", "192.0.2.1", "192.0.2.1.78", "192.0.2.1.256.1", "192.0.2.1.1.-1",
		"192.0.2.1.01.1", "192.0.2.1.1.1x", "192.0.2.1..1", ".1.1", "300.0.2.1.1.1",
		"2001:db8::1.1.1", "192.0.2.1.1. 1",
	};
	struct sockaddr_storage out;

	for (size_t i = 0; i < sizeof(bad4) / sizeof(bad4[0]); i++)
		cr_assert_eq(rpcrdma_uaddr_parse(bad4[i], AF_INET, &out), -EINVAL, "'%s'", bad4[i]);
	cr_assert_eq(rpcrdma_uaddr_parse("192.0.2.1.1.1", AF_INET6, &out), -EINVAL);
	cr_assert_eq(rpcrdma_uaddr_parse("192.0.2.1.1.1", AF_UNIX, &out), -EINVAL);
}

Test(netconfig, other_families_cannot_be_formatted)
{
	struct sockaddr sa = { .sa_family = AF_UNIX };
	char buf[RPCRDMA_UADDR_MAX];

	cr_assert_eq(rpcrdma_uaddr_format(&sa, buf, sizeof(buf)), -EAFNOSUPPORT);
}
