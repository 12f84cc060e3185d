/*
 * RPCBPROC_DUMP over a stream (rpcrdma/rpcbind_dump.c), against replies
 * written by hand into the other end of a socket pair: the call it
 * sends, a list in one record and in many fragments, every truncation,
 * a reply of another xid, denied and unsuccessful replies, a record too
 * large, and no reply at all (the deadline).
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rpcrdma/rpcbind_dump.h"
#include "rpcrdma/verbs.h"

#define XID 0x5eed1234u

static char uaddr1[] = "192.0.2.1.78.81", uaddr2[] = "::.78.82";
static char rdma[] = "rdma", rdma6[] = "rdma6", owner[] = "0";
static rp__list second = { .rpcb_map = { 100003, 3, rdma6, uaddr2, owner } };
static rp__list first = { .rpcb_map = { 100003, 3, rdma, uaddr1, owner }, .rpcb_next = &second };

/* The reply's bytes, without record marking: an accepted reply carrying @list. */
static size_t encode_reply(char *buf, size_t cap, uint32_t xid, enum accept_stat stat,
			   rpcblist_ptr list)
{
	struct rpc_msg m = { .rm_xid = xid, .rm_direction = REPLY };
	XDR x;

	m.rm_reply.rp_stat = MSG_ACCEPTED;
	m.acpted_rply.ar_verf = _null_auth;
	m.acpted_rply.ar_stat = stat;
	m.acpted_rply.ar_results.where = (caddr_t)&list;
	m.acpted_rply.ar_results.proc = (xdrproc_t)xdr_rpcblist_ptr;
	xdrmem_create(&x, buf, (u_int)cap, XDR_ENCODE);
	cr_assert(xdr_replymsg(&x, &m));
	return XDR_GETPOS(&x);
}

static size_t encode_denied(char *buf, size_t cap)
{
	struct rpc_msg m = { .rm_xid = XID, .rm_direction = REPLY };
	XDR x;

	m.rm_reply.rp_stat = MSG_DENIED;
	m.rjcted_rply.rj_stat = AUTH_ERROR;
	m.rjcted_rply.rj_why = AUTH_TOOWEAK;
	xdrmem_create(&x, buf, (u_int)cap, XDR_ENCODE);
	cr_assert(xdr_replymsg(&x, &m));
	return XDR_GETPOS(&x);
}

/* Record-mark @len bytes in fragments of at most @frag bytes into @out. */
static size_t frame(const char *body, size_t len, size_t frag, char *out)
{
	size_t at = 0, done = 0;

	do {
		size_t n = len - done < frag ? len - done : frag;
		uint32_t mark = htonl((done + n == len ? 0x80000000u : 0) | (uint32_t)n);

		memcpy(out + at, &mark, 4);
		memcpy(out + at + 4, body + done, n);
		at += 4 + n;
		done += n;
	} while (done < len);
	return at;
}

struct pair {
	int mine, peer;
};

static struct pair pair_with(const char *bytes, size_t n, bool close_peer)
{
	struct pair p;
	int sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	p.mine = sv[0];
	p.peer = sv[1];
	cr_assert_eq(write(p.peer, bytes, n), (ssize_t)n);
	if (close_peer)
		shutdown(p.peer, SHUT_WR);
	return p;
}

static int dump(struct pair p, int timeout_ms, rpcblist_ptr *list, struct rpc_err *err)
{
	return rpcrdma_rpcb_dump(p.mine, XID, rpcrdma_now_ms() + timeout_ms, list, err);
}

static void pair_close(struct pair p)
{
	close(p.mine);
	close(p.peer);
}

static void check_the_two_entries(rpcblist_ptr list)
{
	cr_assert_not_null(list);
	cr_assert_str_eq(list->rpcb_map.r_netid, "rdma");
	cr_assert_str_eq(list->rpcb_map.r_addr, uaddr1);
	cr_assert_not_null(list->rpcb_next);
	cr_assert_str_eq(list->rpcb_next->rpcb_map.r_netid, "rdma6");
	cr_assert_str_eq(list->rpcb_next->rpcb_map.r_addr, uaddr2);
	cr_assert_null(list->rpcb_next->rpcb_next);
}

Test(rpcbind_dump, it_sends_one_dump_call_of_its_xid)
{
	static char body[512], wire[1024], got[256];
	size_t n = frame(body, encode_reply(body, sizeof(body), XID, SUCCESS, &first), 1024, wire);
	struct pair p = pair_with(wire, n, false);
	struct rpc_msg call = { .rm_xid = 0 };
	rpcblist_ptr list;
	struct rpc_err err;
	uint32_t mark;
	ssize_t k;
	XDR x;

	cr_assert_eq(dump(p, 2000, &list, &err), 0);
	xdr_free((xdrproc_t)xdr_rpcblist_ptr, (char *)&list);
	k = read(p.peer, got, sizeof(got));
	cr_assert_gt(k, 4);
	memcpy(&mark, got, 4);
	cr_assert_eq(ntohl(mark), 0x80000000u | (uint32_t)(k - 4), "one last fragment, all of it");
	xdrmem_create(&x, got + 4, (u_int)(k - 4), XDR_DECODE);
	cr_assert(xdr_callmsg(&x, &call));
	cr_assert_eq(call.rm_xid, XID);
	cr_assert_eq(call.rm_direction, CALL);
	cr_assert_eq(call.rm_call.cb_prog, RPCBPROG);
	cr_assert_eq(call.rm_call.cb_vers, RPCBVERS);
	cr_assert_eq(call.rm_call.cb_proc, RPCBPROC_DUMP);
	cr_assert_eq(call.rm_call.cb_cred.oa_flavor, AUTH_NONE);
	pair_close(p);
}

Test(rpcbind_dump, a_list_in_one_record_or_in_many_fragments_decodes_the_same)
{
	static char body[512], wire[8192];
	size_t len = encode_reply(body, sizeof(body), XID, SUCCESS, &first);

	for (size_t frag = 1; frag <= len; frag++) {
		struct pair p = pair_with(wire, frame(body, len, frag, wire), false);
		rpcblist_ptr list;
		struct rpc_err err;

		cr_assert_eq(dump(p, 2000, &list, &err), 0, "fragments of %zu bytes", frag);
		cr_assert_eq(err.re_status, RPC_SUCCESS);
		check_the_two_entries(list);
		xdr_free((xdrproc_t)xdr_rpcblist_ptr, (char *)&list);
		pair_close(p);
	}
}

Test(rpcbind_dump, every_truncation_fails_at_once)
{
	static char body[512], wire[1024];
	size_t n = frame(body, encode_reply(body, sizeof(body), XID, SUCCESS, &first), 40, wire);

	for (size_t cut = 0; cut < n; cut++) {
		struct pair p = pair_with(wire, cut, true);
		int64_t t0 = rpcrdma_now_ms();
		rpcblist_ptr list = &first;
		struct rpc_err err;

		cr_assert_eq(dump(p, 5000, &list, &err), -ECONNRESET, "cut at %zu of %zu", cut, n);
		cr_assert_eq(err.re_status, RPC_CANTRECV);
		cr_assert_null(list);
		cr_assert_lt(rpcrdma_now_ms() - t0, 1000);
		pair_close(p);
	}
}

Test(rpcbind_dump, every_shorter_record_of_a_whole_reply_fails_to_decode)
{
	static char body[512];
	size_t len = encode_reply(body, sizeof(body), XID, SUCCESS, &first);

	for (size_t n = 0; n < len; n++) {
		rpcblist_ptr list = &first;
		struct rpc_err err;

		cr_assert_eq(rpcrdma_rpcb_dump_decode(body, n, XID, &list, &err), -EPROTO, "%zu", n);
		cr_assert_eq(err.re_status, RPC_CANTDECODERES);
		cr_assert_null(list);
	}
}

Test(rpcbind_dump, a_reply_of_another_xid_is_refused)
{
	static char body[512], wire[1024];
	size_t n = frame(body, encode_reply(body, sizeof(body), XID + 1, SUCCESS, &first), 1024, wire);
	struct pair p = pair_with(wire, n, false);
	rpcblist_ptr list;
	struct rpc_err err;

	cr_assert_eq(dump(p, 2000, &list, &err), -EPROTO);
	cr_assert_eq(err.re_status, RPC_CANTDECODERES);
	cr_assert_null(list);
	pair_close(p);
}

Test(rpcbind_dump, denied_and_unsuccessful_replies_say_why)
{
	static char body[512], wire[1024];
	struct pair p;
	rpcblist_ptr list;
	struct rpc_err err;

	p = pair_with(wire, frame(body, encode_denied(body, sizeof(body)), 1024, wire), false);
	cr_assert_eq(dump(p, 2000, &list, &err), -EPROTO);
	cr_assert_eq(err.re_status, RPC_AUTHERROR);
	cr_assert_eq(err.re_why, AUTH_TOOWEAK);
	cr_assert_null(list);
	pair_close(p);
	p = pair_with(wire, frame(body, encode_reply(body, sizeof(body), XID, PROC_UNAVAIL, NULL),
				  1024, wire), false);
	cr_assert_eq(dump(p, 2000, &list, &err), -EPROTO);
	cr_assert_eq(err.re_status, RPC_PROCUNAVAIL);
	cr_assert_null(list);
	pair_close(p);
}

Test(rpcbind_dump, a_record_over_the_limit_is_refused_before_it_is_read)
{
	uint32_t mark = htonl(0x80000000u | (RPCRDMA_RPCB_REPLY_MAX + 1));
	struct pair p = pair_with((const char *)&mark, 4, false);
	rpcblist_ptr list;
	struct rpc_err err;

	cr_assert_eq(dump(p, 2000, &list, &err), -EMSGSIZE);
	cr_assert_eq(err.re_status, RPC_CANTDECODERES);
	pair_close(p);
}

Test(rpcbind_dump, fragments_adding_up_over_the_limit_are_refused)
{
	static char wire[64];
	uint32_t half = htonl(RPCRDMA_RPCB_REPLY_MAX / 2 + 1); /* not the last */
	struct pair p;
	rpcblist_ptr list;
	struct rpc_err err;
	int sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	p = (struct pair){ sv[0], sv[1] };
	memcpy(wire, &half, 4);
	cr_assert_eq(write(p.peer, wire, 4), 4);
	/* the first fragment's bytes: zeros, written while the reader takes them */
	if (fork() == 0) {
		static char zeros[1 << 16];
		size_t left = RPCRDMA_RPCB_REPLY_MAX / 2 + 1;

		close(p.mine);
		while (left) {
			ssize_t k = write(p.peer, zeros, left < sizeof(zeros) ? left : sizeof(zeros));

			if (k <= 0)
				_exit(1);
			left -= (size_t)k;
		}
		_exit(write(p.peer, wire, 4) == 4 ? 0 : 1); /* the second claims as much again */
	}
	cr_assert_eq(dump(p, 5000, &list, &err), -EMSGSIZE);
	pair_close(p);
	wait(NULL);
}

Test(rpcbind_dump, no_reply_gives_up_at_the_deadline)
{
	struct pair p = pair_with("", 0, false);
	int64_t t0 = rpcrdma_now_ms(), took;
	rpcblist_ptr list;
	struct rpc_err err;

	cr_assert_eq(dump(p, 200, &list, &err), -ETIMEDOUT);
	took = rpcrdma_now_ms() - t0;
	cr_assert_eq(err.re_status, RPC_TIMEDOUT);
	cr_assert(took >= 190 && took < 2000, "took %lld ms", (long long)took);
	pair_close(p);
}

Test(rpcbind_dump, a_reply_trickling_in_gives_up_at_the_deadline_all_the_same)
{
	static char body[512], wire[1024];
	size_t n = frame(body, encode_reply(body, sizeof(body), XID, SUCCESS, &first), 1024, wire);
	struct pair p = pair_with(wire, 0, false);
	int64_t t0 = rpcrdma_now_ms(), took;
	rpcblist_ptr list;
	struct rpc_err err;

	if (fork() == 0) { /* a byte every 50 ms: each wait is short, the whole is not */
		close(p.mine);
		for (size_t i = 0; i < n; i++) {
			if (write(p.peer, wire + i, 1) != 1)
				_exit(0);
			usleep(50000);
		}
		_exit(0);
	}
	cr_assert_eq(dump(p, 500, &list, &err), -ETIMEDOUT);
	took = rpcrdma_now_ms() - t0;
	cr_assert(took >= 490 && took < 2500, "took %lld ms", (long long)took);
	pair_close(p);
	wait(NULL);
}
