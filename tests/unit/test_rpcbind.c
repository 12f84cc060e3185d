/*
 * rpcbind lookups: a wildcard registration merged with the host's address,
 * the lookup's deadline, and lookups answered by a fake rpcbind.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "rpcrdma/netconfig.h"
#include "rpcrdma/rpcbind.h"
#include "rpcrdma/transport.h"
#include "rpcrdma/verbs.h"

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

/*
 * The lookup's one deadline, against fake rpcbinds on the loopback: a
 * listening TCP socket whose port (@service) the lookup is pointed at.
 */
static int fake_rpcbind(int backlog, char *service, size_t cap)
{
	struct sockaddr_in sin = v4("127.0.0.1", 0);
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cr_assert_eq(listen(fd, backlog), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	snprintf(service, cap, "%u", ntohs(sin.sin_port));
	return fd;
}

/* A lookup of @service, timed: its result, and its duration in *@took_ms. */
static int timed_lookup(const char *service, int timeout_ms, int64_t *took_ms)
{
	struct sockaddr_storage ss;
	int64_t t0 = rpcrdma_now_ms();
	int rc;

	rpc_createerr.cf_stat = RPC_SUCCESS;
	rc = rpcrdma_rpcb_lookup_service("127.0.0.1", service, 100003, 3, "rdma", timeout_ms, &ss);
	*took_ms = rpcrdma_now_ms() - t0;
	return rc;
}

Test(rpcbind, a_lookup_gives_up_at_its_deadline_when_rpcbind_accepts_and_never_answers)
{
	char service[8];
	int fd = fake_rpcbind(8, service, sizeof(service)); /* the kernel completes the handshake */
	int64_t took;

	cr_assert_eq(timed_lookup(service, 300, &took), -EIO);
	cr_assert_eq(rpc_createerr.cf_stat, RPC_PMAPFAILURE);
	cr_assert_eq(rpc_createerr.cf_error.re_status, RPC_TIMEDOUT);
	cr_assert(took >= 250 && took < 2000, "took %lld ms", (long long)took);
	close(fd);
}

Test(rpcbind, a_lookup_gives_up_at_its_deadline_when_the_connect_never_completes)
{
	struct sockaddr_in sin = v4("127.0.0.1", 0);
	char service[8];
	int fd = fake_rpcbind(0, service, sizeof(service)), fill[2];
	int64_t took;

	/* A full accept queue: Linux drops the next SYNs, so the lookup's connect waits. */
	sin.sin_port = htons((uint16_t)atoi(service));
	for (size_t i = 0; i < 2; i++) {
		fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		cr_assert_geq(fill[i], 0);
		connect(fill[i], (struct sockaddr *)&sin, sizeof(sin));
	}
	cr_assert_eq(timed_lookup(service, 300, &took), -EHOSTUNREACH);
	cr_assert_eq(rpc_createerr.cf_stat, RPC_SYSTEMERROR);
	cr_assert_eq(rpc_createerr.cf_error.re_errno, ETIMEDOUT);
	cr_assert(took >= 250 && took < 2000, "took %lld ms", (long long)took);
	for (size_t i = 0; i < 2; i++)
		close(fill[i]);
	close(fd);
}

Test(rpcbind, a_lookup_where_nothing_listens_fails_at_once_with_the_connect_error)
{
	char service[8];
	int fd = fake_rpcbind(8, service, sizeof(service));
	int64_t took;

	close(fd); /* the port is free again: a connect is refused */
	cr_assert_eq(timed_lookup(service, 5000, &took), -EHOSTUNREACH);
	cr_assert_eq(rpc_createerr.cf_stat, RPC_SYSTEMERROR);
	cr_assert_eq(rpc_createerr.cf_error.re_errno, ECONNREFUSED);
	cr_assert_lt(took, 1000);
}

Test(rpcbind, a_lookup_refuses_a_timeout_a_netid_or_a_service_it_cannot_use)
{
	struct sockaddr_storage ss;

	cr_assert_eq(rpcrdma_rpcb_lookup_timed("127.0.0.1", 1, 1, "rdma", 0, &ss), -EINVAL);
	cr_assert_eq(rpcrdma_rpcb_lookup_timed("127.0.0.1", 1, 1, "rdma", -5, &ss), -EINVAL);
	cr_assert_eq(rpcrdma_rpcb_lookup_timed("127.0.0.1", 1, 1, "tcp", 1000, &ss), -EINVAL);
	cr_assert_eq(rpcrdma_rpcb_lookup_timed(NULL, 1, 1, "rdma", 1000, &ss), -EINVAL);
	cr_assert_eq(rpcrdma_rpcb_lookup_service("127.0.0.1", NULL, 1, 1, "rdma", 1000, &ss),
		     -EINVAL);
}

/* ---- a fake rpcbind that answers the DUMP call with wildcard registrations ---------------- */

static char rdma[] = "rdma", rdma6[] = "rdma6", owner[] = "0";
static char any4[] = "0.0.0.0.8.1", any6[] = "::.8.1";
static rp__list wild6 = { .rpcb_map = { 100003, 3, rdma6, any6, owner } };
static rp__list wild4 = { .rpcb_map = { 100003, 3, rdma, any4, owner }, .rpcb_next = &wild6 };

/* Accept one connection on @fd, read the call's first fragment, answer it with wild4's list. */
static void *answer_dump(void *arg)
{
	int lfd = *(int *)arg, fd = accept(lfd, NULL, NULL);
	struct rpc_msg m = { .rm_direction = REPLY };
	rpcblist_ptr list = &wild4;
	char call[512], reply[512];
	uint32_t mark, xid;
	ssize_t n;
	XDR x;

	cr_assert_geq(fd, 0);
	n = read(fd, call, sizeof(call)); /* the whole call in one segment: it is small */
	cr_assert_geq(n, 8);
	memcpy(&xid, call + 4, 4);
	m.rm_xid = ntohl(xid);
	m.rm_reply.rp_stat = MSG_ACCEPTED;
	m.acpted_rply.ar_verf = _null_auth;
	m.acpted_rply.ar_stat = SUCCESS;
	m.acpted_rply.ar_results.where = (caddr_t)&list;
	m.acpted_rply.ar_results.proc = (xdrproc_t)xdr_rpcblist_ptr;
	xdrmem_create(&x, reply + 4, sizeof(reply) - 4, XDR_ENCODE);
	cr_assert(xdr_replymsg(&x, &m));
	mark = htonl(0x80000000u | XDR_GETPOS(&x));
	memcpy(reply, &mark, 4);
	cr_assert_eq(write(fd, reply, 4 + XDR_GETPOS(&x)), (ssize_t)(4 + XDR_GETPOS(&x)));
	close(fd);
	return NULL;
}

static int lookup_wildcard(const char *netid, struct sockaddr_storage *ss)
{
	char service[8];
	int fd = fake_rpcbind(8, service, sizeof(service)), rc;
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, answer_dump, &fd), 0);
	rpc_createerr.cf_stat = RPC_SUCCESS;
	rc = rpcrdma_rpcb_lookup_service("127.0.0.1", service, 100003, 3, netid, 5000, ss);
	pthread_join(t, NULL);
	close(fd);
	return rc;
}

Test(rpcbind, a_wildcard_registration_takes_the_address_rpcbind_answered_on)
{
	struct sockaddr_storage ss;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)&ss;

	cr_assert_eq(lookup_wildcard("rdma", &ss), 0);
	cr_assert_eq(ss.ss_family, AF_INET);
	cr_assert_eq(sin->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	cr_assert_eq(ntohs(sin->sin_port), 2049);
}

/* The host (127.0.0.1) has no IPv6 address: an rdma6 wildcard cannot be completed. */
Test(rpcbind, a_wildcard_of_a_family_the_host_lacks_is_unknown_host)
{
	struct sockaddr_storage ss;

	cr_assert_eq(lookup_wildcard("rdma6", &ss), -EADDRNOTAVAIL);
	cr_assert_eq(rpc_createerr.cf_stat, RPC_UNKNOWNHOST);
	cr_assert_eq(rpc_createerr.cf_error.re_errno, EADDRNOTAVAIL);
}
