/* rpcbind lookups: a wildcard registration merged with the host's address. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>

#include "rpcrdma/netconfig.h"
#include "rpcrdma/rpcbind.h"

static struct sockaddr_in v4(const char *ip, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };

	cr_assert_eq(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	return sin;
}

static struct sockaddr_in6 v6(const char *ip, uint16_t port, uint32_t scope)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(port),
				     .sin6_scope_id = scope };

	cr_assert_eq(inet_pton(AF_INET6, ip, &sin6.sin6_addr), 1);
	return sin6;
}

static void parse(const char *uaddr, int family, struct sockaddr_storage *ss)
{
	cr_assert_eq(rpcrdma_uaddr_parse(uaddr, family, ss), 0, "%s", uaddr);
}

Test(rpcbind, ipv4_wildcard_takes_the_host_address_and_keeps_its_port)
{
	struct sockaddr_in host = v4("192.0.2.1", 111), want = v4("192.0.2.1", 20049);
	struct sockaddr_storage ss;

	parse("0.0.0.0.78.81", AF_INET, &ss);
	cr_assert_eq(rpcrdma_rpcb_merge(&ss, (struct sockaddr *)&host), 0);
	cr_assert_eq(memcmp(&ss, &want, sizeof(want)), 0);
}

Test(rpcbind, ipv6_wildcard_takes_the_host_address_and_scope)
{
	struct sockaddr_in6 host = v6("fe80::1", 111, 3), want = v6("fe80::1", 2049, 3);
	struct sockaddr_storage ss;

	parse("::.8.1", AF_INET6, &ss);
	cr_assert_eq(rpcrdma_rpcb_merge(&ss, (struct sockaddr *)&host), 0);
	cr_assert_eq(memcmp(&ss, &want, sizeof(want)), 0);
}

Test(rpcbind, a_specific_address_is_left_alone)
{
	struct sockaddr_in host = v4("192.0.2.1", 111), want = v4("198.51.100.7", 20049);
	struct sockaddr_in6 host6 = v6("2001:db8::1", 111, 0), want6 = v6("2001:db8::2", 20049, 0);
	struct sockaddr_storage ss;

	parse("198.51.100.7.78.81", AF_INET, &ss);
	cr_assert_eq(rpcrdma_rpcb_merge(&ss, (struct sockaddr *)&host), 0);
	cr_assert_eq(memcmp(&ss, &want, sizeof(want)), 0);
	cr_assert_eq(rpcrdma_rpcb_merge(&ss, NULL), 0, "nothing to merge, nothing needed");
	parse("2001:db8::2.78.81", AF_INET6, &ss);
	cr_assert_eq(rpcrdma_rpcb_merge(&ss, (struct sockaddr *)&host6), 0);
	cr_assert_eq(memcmp(&ss, &want6, sizeof(want6)), 0);
}

Test(rpcbind, a_wildcard_cannot_take_another_familys_address)
{
	struct sockaddr_in host = v4("192.0.2.1", 111);
	struct sockaddr_in6 host6 = v6("2001:db8::1", 111, 0);
	struct sockaddr_storage ss, before;

	parse("0.0.0.0.78.81", AF_INET, &ss);
	before = ss;
	cr_assert_eq(rpcrdma_rpcb_merge(&ss, (struct sockaddr *)&host6), -EAFNOSUPPORT);
	cr_assert_eq(rpcrdma_rpcb_merge(&ss, NULL), -EAFNOSUPPORT);
	cr_assert_eq(memcmp(&ss, &before, sizeof(ss)), 0);
	parse("::.78.81", AF_INET6, &ss);
	before = ss;
	cr_assert_eq(rpcrdma_rpcb_merge(&ss, (struct sockaddr *)&host), -EAFNOSUPPORT);
	cr_assert_eq(memcmp(&ss, &before, sizeof(ss)), 0);
}
