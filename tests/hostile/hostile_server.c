/*
 * hostile_server: a malicious RPC-over-RDMA server against rpcrdma's
 * CLIENT (issue #7), built on the raw peer core (raw_peer.h: raw
 * librdmacm and libibverbs, never the library under test).
 *
 * For each scenario it listens, starts the victim (the ASan+UBSan build
 * of tests/integration/rpc_victim_client.c) with the calls to make and
 * the clnt_call status each must end with, accepts its connection with
 * the scenario's RFC 8797 private data, and serves the rdmatest program
 * (tests/prog/rdmatest.x) correctly, RDMA Reads and Writes included,
 * except for the scenario's target calls, which get the attack instead.
 * A scenario passes when the victim exits 0 (every call as expected and
 * every successful call's data right, including calls made at the same
 * time as the attacked one and after it), within its time limit, with
 * no sanitizer report in its output, and the server saw nothing wrong
 * in what the client sent (Sends within the negotiated inline size,
 * one rkey per call, no keys on calls that need none).
 *
 * Two tables: the attack scenarios (malformed replies, private data),
 * and with --keys the stale-key scenarios: a key the client advertised
 * for a finished (or timed-out) call is used again, on the next call or
 * after a pause (a timed-out call's once its late reply is in), and must
 * be refused; a live key must not reach past
 * the memory it was advertised for, nor show what a new buffer's memory
 * held before.  The keys table runs in three
 * modes: client and server set R (RFC 8797: Send With Invalidate), the
 * client does not ask for R, the server does not set R.
 *
 *   hostile_server [--keys] PROVIDER ADDR VICTIM [NAME-FILTER]
 *
 * Prints PASS/FAIL per scenario and `figure:` lines; exits 0 when all
 * passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "raw_peer.h"

/* rdmatest.x */
#define PROG         0x20000199u
#define P_NULL       0u
#define P_ECHO       1u
#define P_WRITE      2u
#define P_READ       3u
#define P_LONG_RES   5u

#define MAX_READS    32u
#define MAX_WCHUNKS  4u
#define MAX_SEGS     32u
#define MSG_CAP      (64u << 10)
#define MEM_IN       0u           /* mem: call data read from the client */
#define MEM_OUT      (256u << 10) /* mem: results written to the client */
#define MEM_JUNK     (512u << 10) /* mem: what stale keys are written with */
#define MEM_PROBE    (768u << 10)
#define OP_MS        15000
#define VICTIM_MS    60000
#define GRANT        16u
#define STALE_PAUSE_MS 500
#define CLIENT_BUF_MIN (64u << 10) /* rpcrdma/registration.c REGBUF_MIN */

struct seg {
	uint32_t handle, len;
	uint64_t off;
};

struct chunk {
	uint32_t n;
	struct seg s[MAX_SEGS];
};

/* One call from the client, its transport header parsed and its RPC call rebuilt. */
struct call {
	uint32_t xid, credits, type;
	uint32_t nreads;
	uint32_t rpos[MAX_READS];
	struct seg reads[MAX_READS];
	uint32_t nwrites;
	struct chunk writes[MAX_WCHUNKS];
	bool has_reply;
	struct chunk reply;
	uint8_t msg[MSG_CAP]; /* the RPC call */
	uint32_t msg_len;
	uint32_t proc, args;  /* args: offset of the arguments in msg */
	uint32_t cred_flavor;
	uint32_t data_len;    /* WRITE: bytes of its read chunks, in mem at MEM_IN */
};

/* A reply before encoding: attacks change fields, then it is sent. */
struct reply {
	uint32_t xid, vers, credits, type;
	uint32_t nwrites;
	struct chunk writes[MAX_WCHUNKS];
	bool has_reply;
	struct chunk reply;
	uint8_t rpc[MSG_CAP]; /* RDMA_MSG: the inline RPC reply */
	uint32_t rpc_len;
};

struct key {
	bool have, armed, read;
	uint32_t rkey, len;
	uint64_t addr;
};

struct conn;
typedef void attack_fn(struct conn *cn, struct call *c, uint32_t arg);

struct scenario {
	const char *name;
	uint32_t target;        /* procedure attacked */
	const char *target_step;
	const char *expect;     /* status of each attacked call */
	attack_fn *attack;
	uint32_t arg;           /* the i-th attacked call gets arg + i */
	uint32_t repeat;        /* attacked calls (0: 1) */
	const char *steps;      /* victim steps instead of the generated ones */
	/* With send_limit set: accept with this private data, not ours. */
	const uint8_t *pd;
	uint8_t pd_len;
	uint32_t send_limit;    /* largest Send the client may post (0: 4096, our private data) */
	bool auth_sys;          /* the victim calls with AUTH_SYS, and every call must carry it */
};

struct mode {
	const char *name;
	bool victim_ri;         /* the victim asks for R */
	bool server_r;          /* our private data sets R */
};

struct conn {
	struct raw_peer *p;
	const struct scenario *s;
	const struct mode *m;
	uint32_t client_recv;   /* the client's inline receive size */
	bool swi;               /* both set R: reply with Send With Invalidate */
	bool plain;             /* the next Send is plain whatever swi says */
	uint32_t attacks;
	struct key stale;
	struct call late; /* a call left unanswered, to be answered late (k_late) */
};

/* Totals over the run. */
static struct {
	const char *provider;
	const char *addr;
	const char *victim;
	struct raw_listener *l;
	bool keys;
	unsigned scenarios, passed, attacked_calls, sanitizer_reports, calls_seen;
	unsigned stale_tried, stale_refused, stale_rem_access, bounds_tried, bounds_refused;
	unsigned bounds_rxe_window, key_problems;
	bool scenario_failed;
} g;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("  server: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	g.scenario_failed = true;
}

/* ---- the client's call ------------------------------------------------------------------ */

static bool rd_chunk(struct raw_rd *r, struct chunk *ch)
{
	ch->n = raw_rd_u32(r);
	if (ch->n > MAX_SEGS)
		return false;
	for (uint32_t i = 0; i < ch->n; i++) {
		ch->s[i].handle = raw_rd_u32(r);
		ch->s[i].len = raw_rd_u32(r);
		ch->s[i].off = raw_rd_u64(r);
	}
	return !r->short_read;
}

static bool rd_lists(struct raw_rd *r, struct call *c)
{
	while (raw_rd_u32(r) == 1) {
		if (c->nreads == MAX_READS)
			return false;
		c->rpos[c->nreads] = raw_rd_u32(r);
		c->reads[c->nreads].handle = raw_rd_u32(r);
		c->reads[c->nreads].len = raw_rd_u32(r);
		c->reads[c->nreads++].off = raw_rd_u64(r);
	}
	while (!r->short_read && raw_rd_u32(r) == 1)
		if (c->nwrites == MAX_WCHUNKS || !rd_chunk(r, &c->writes[c->nwrites++]))
			return false;
	c->has_reply = raw_rd_u32(r) == 1;
	if (c->has_reply && !rd_chunk(r, &c->reply))
		return false;
	return !r->short_read;
}

static uint32_t arg_word(const struct call *c, uint32_t i);

/* Every key in the call: one rkey at most (the call's buffer), none for calls without chunks. */
static void check_call_keys(const struct call *c)
{
	const struct seg *all[MAX_READS + (MAX_WCHUNKS + 1) * MAX_SEGS];
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->nreads; i++)
		all[n++] = &c->reads[i];
	for (uint32_t w = 0; w < c->nwrites; w++)
		for (uint32_t i = 0; i < c->writes[w].n; i++)
			all[n++] = &c->writes[w].s[i];
	for (uint32_t i = 0; c->has_reply && i < c->reply.n; i++)
		all[n++] = &c->reply.s[i];
	for (uint32_t i = 1; i < n; i++)
		if (all[i]->handle != all[0]->handle) {
			g.key_problems++;
			problem("call %#x: a second rkey %#x", c->xid, all[i]->handle);
		}
	if (n && (c->proc == P_NULL || (c->proc == P_ECHO && arg_word(c, 0) <= 256))) {
		g.key_problems++;
		problem("call %#x: a small call advertised %u segments", c->xid, n);
	}
}

/* RDMA Read @len bytes of (@handle, @off) into mem+@at. */
static bool pull(struct conn *cn, uint32_t at, const struct seg *s)
{
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	enum raw_wait w;

	if (at + (uint64_t)s->len > MEM_OUT)
		return false;
	w = raw_peer_rdma_read(cn->p, at, s->len, s->handle, s->off, OP_MS, &st);
	if (w == RAW_WAIT_COMPLETION && st == IBV_WC_SUCCESS)
		return true;
	printf("  server: RDMA Read of a read chunk (rkey %#x, %u bytes): %s %s\n", s->handle,
	       s->len, raw_wait_str(w), w == RAW_WAIT_COMPLETION ? ibv_wc_status_str(st) : "");
	return false;
}

/* The RPC call: inline behind the header, or the position-zero read chunk; data chunks to MEM_IN. */
static bool rebuild_call(struct conn *cn, struct call *c, const uint8_t *body, uint32_t blen)
{
	uint32_t in = 0;

	c->msg_len = 0;
	if (c->type == 0) {
		memcpy(c->msg, body, blen < MSG_CAP ? blen : MSG_CAP);
		c->msg_len = blen < MSG_CAP ? blen : MSG_CAP;
	}
	for (uint32_t i = 0; i < c->nreads; i++) {
		if (!pull(cn, in, &c->reads[i]))
			return false;
		if (c->rpos[i] == 0 && c->type == 1 && c->msg_len + c->reads[i].len <= MSG_CAP) {
			memcpy(c->msg + c->msg_len, raw_peer_mem(cn->p) + in, c->reads[i].len);
			c->msg_len += c->reads[i].len;
		} else {
			in += c->reads[i].len; /* WRITE's data stays in mem */
		}
	}
	c->data_len = in;
	return true;
}

static bool parse_rpc(struct call *c)
{
	struct raw_rd r;

	raw_rd_init(&r, c->msg, c->msg_len);
	if (raw_rd_u32(&r) != c->xid || raw_rd_u32(&r) != 0 || raw_rd_u32(&r) != 2 ||
	    raw_rd_u32(&r) != PROG || raw_rd_u32(&r) != 1)
		return false;
	c->proc = raw_rd_u32(&r);
	for (int i = 0; i < 2; i++) { /* credential, verifier */
		uint32_t flavor = raw_rd_u32(&r), len;

		if (i == 0)
			c->cred_flavor = flavor;
		len = raw_rd_u32(&r);
		if (len > 400)
			return false;
		r.pos += (len + 3) & ~3u;
	}
	c->args = (uint32_t)r.pos;
	return !r.short_read && r.pos <= r.len;
}

static bool parse_call(struct conn *cn, struct call *c, const uint8_t *msg, uint32_t len)
{
	struct raw_rd r;

	memset(c, 0, offsetof(struct call, msg));
	raw_rd_init(&r, msg, len);
	c->xid = raw_rd_u32(&r);
	if (raw_rd_u32(&r) != 1)
		return false;
	c->credits = raw_rd_u32(&r);
	c->type = raw_rd_u32(&r);
	if ((c->type != 0 && c->type != 1) || !rd_lists(&r, c))
		return false;
	return rebuild_call(cn, c, msg + r.pos, len - (uint32_t)r.pos) && parse_rpc(c);
}

/* ---- serving it correctly ------------------------------------------------------------------ */

static uint32_t arg_word(const struct call *c, uint32_t i)
{
	struct raw_rd r;

	raw_rd_init(&r, c->msg + c->args + 4 * i, c->msg_len - c->args - 4 * i);
	return raw_rd_u32(&r);
}

/* The generators of tests/integration/support/rdmatest_support.c. */
static uint8_t gen_byte(uint32_t seed, uint32_t i)
{
	return (uint8_t)(seed * 31u + i * 7u + (i >> 8) + (seed >> 8));
}

static uint32_t fnv1a(const uint8_t *p, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* RDMA Write mem+@at (@len bytes) into @ch; the echo says what was written. */
static bool push(struct conn *cn, uint32_t at, uint32_t len, const struct chunk *ch,
		 struct chunk *echo)
{
	enum ibv_wc_status st;

	echo->n = 0;
	for (uint32_t i = 0; i < ch->n && len; i++) {
		uint32_t take = len < ch->s[i].len ? len : ch->s[i].len;

		enum raw_wait w = raw_peer_rdma_write(cn->p, at, take, ch->s[i].handle, ch->s[i].off,
						      OP_MS, &st);

		if (w != RAW_WAIT_COMPLETION || st != IBV_WC_SUCCESS) {
			printf("  server: RDMA Write to rkey %#x: %s %s\n", ch->s[i].handle,
			       raw_wait_str(w), w == RAW_WAIT_COMPLETION ? ibv_wc_status_str(st) : "");
			return false;
		}
		echo->s[echo->n] = ch->s[i];
		echo->s[echo->n++].len = take;
		at += take;
		len -= take;
	}
	return !len;
}

static void results_read(struct conn *cn, const struct call *c, struct reply *rep,
			 struct raw_xdr *x)
{
	uint32_t count = arg_word(c, 0), seed = arg_word(c, 1);
	uint8_t *out = raw_peer_mem(cn->p) + MEM_OUT;

	if (count > 65536)
		count = 65536;
	for (uint32_t i = 0; i < count; i++)
		out[i] = gen_byte(seed, i);
	raw_xdr_u32(x, count);
	if (c->nwrites) {
		if (!push(cn, MEM_OUT, count, &c->writes[0], &rep->writes[0]))
			problem("RDMA Write of READ's data failed");
		rep->nwrites = 1;
		raw_xdr_u32(x, count); /* the data went to the chunk, no roundup */
	} else {
		raw_xdr_opaque(x, out, count);
	}
}

static void results_of(struct conn *cn, const struct call *c, struct reply *rep,
		       struct raw_xdr *x)
{
	uint32_t n;

	switch (c->proc) {
	case P_ECHO:
		n = arg_word(c, 0);
		raw_xdr_opaque(x, c->msg + c->args + 4, n <= c->msg_len - c->args - 4 ? n : 0);
		break;
	case P_WRITE:
		n = c->data_len ? c->data_len : arg_word(c, 1);
		raw_xdr_u32(x, n);
		raw_xdr_u32(x, fnv1a(c->data_len ? raw_peer_mem(cn->p) + MEM_IN
					       : c->msg + c->args + 8, n));
		break;
	case P_READ:
		results_read(cn, c, rep, x);
		break;
	case P_LONG_RES:
		n = arg_word(c, 0);
		raw_xdr_u32(x, n);
		for (uint32_t i = 0; i < n && !x->overflow; i++)
			raw_xdr_u32(x, arg_word(c, 1) ^ (i * 2654435761u));
		break;
	default:
		break;
	}
}

/* The correct reply to @c: data written to its chunks, the RPC reply inline or in the reply chunk. */
static void serve(struct conn *cn, struct call *c, struct reply *rep)
{
	struct raw_xdr x;

	memset(rep, 0, offsetof(struct reply, rpc));
	rep->xid = c->xid;
	rep->vers = 1;
	rep->credits = GRANT;
	raw_xdr_init(&x, rep->rpc, sizeof(rep->rpc));
	raw_xdr_rpc_reply_accepted(&x, c->xid, 0);
	results_of(cn, c, rep, &x);
	rep->rpc_len = (uint32_t)x.len;
	if (x.overflow)
		problem("reply to proc %u does not fit", c->proc);
	if (rep->rpc_len + 28 <= cn->client_recv || !c->has_reply)
		return;
	memcpy(raw_peer_mem(cn->p) + MEM_OUT, rep->rpc, rep->rpc_len);
	if (!push(cn, MEM_OUT, rep->rpc_len, &c->reply, &rep->reply))
		problem("RDMA Write of a long reply into the reply chunk failed");
	rep->has_reply = true;
	rep->type = 1;
	rep->rpc_len = 0;
}

static void xdr_chunk(struct raw_xdr *x, const struct chunk *ch)
{
	raw_xdr_chunk_open(x, ch->n);
	for (uint32_t i = 0; i < ch->n; i++)
		raw_xdr_segment(x, ch->s[i].handle, ch->s[i].len, ch->s[i].off);
}

static uint32_t encode(const struct reply *rep, uint8_t *buf, uint32_t cap)
{
	struct raw_xdr x;

	raw_xdr_init(&x, buf, cap);
	raw_xdr_rdma_hdr(&x, rep->xid, rep->vers, rep->credits, rep->type);
	raw_xdr_list_end(&x); /* no read list */
	for (uint32_t i = 0; i < rep->nwrites; i++)
		xdr_chunk(&x, &rep->writes[i]);
	raw_xdr_list_end(&x);
	if (rep->has_reply)
		xdr_chunk(&x, &rep->reply);
	else
		raw_xdr_list_end(&x);
	raw_xdr_bytes(&x, rep->rpc, rep->rpc_len);
	return (uint32_t)x.len;
}

/* Send @len bytes, With Invalidate of the call's rkey when both peers set R. */
static void send_bytes(struct conn *cn, const struct call *c, const uint8_t *buf, uint32_t len)
{
	uint32_t rkey = c->nreads ? c->reads[0].handle
			: c->nwrites ? c->writes[0].s[0].handle
			: c->has_reply ? c->reply.s[0].handle : 0;
	bool inv = cn->swi && !cn->plain && (c->nreads || c->nwrites || c->has_reply);

	cn->plain = false;
	if (!raw_peer_send(cn->p, buf, len, inv, rkey))
		problem("posting a Send of %u bytes failed", len);
}

static void send_reply(struct conn *cn, const struct call *c, const struct reply *rep)
{
	static uint8_t buf[MSG_CAP];

	send_bytes(cn, c, buf, encode(rep, buf, sizeof(buf)));
}

static void serve_and_send(struct conn *cn, struct call *c)
{
	static struct reply rep;

	serve(cn, c, &rep);
	send_reply(cn, c, &rep);
}

/* ---- attacks on one reply (the first table) ----------------------------------------------------------- */

static struct reply atk_rep;
static uint8_t atk_buf[MSG_CAP];

static void a_version(struct conn *cn, struct call *c, uint32_t vers)
{
	serve(cn, c, &atk_rep);
	atk_rep.vers = vers;
	send_reply(cn, c, &atk_rep);
}

static void a_type(struct conn *cn, struct call *c, uint32_t type)
{
	serve(cn, c, &atk_rep);
	atk_rep.type = type;
	send_reply(cn, c, &atk_rep);
}

/*
 * The correct reply cut to its first @len bytes (0: a zero-length Send),
 * or padded with zeros to @len: more than the client's receive buffers hold.
 */
static void a_length(struct conn *cn, struct call *c, uint32_t len)
{
	uint32_t full;

	serve(cn, c, &atk_rep);
	full = encode(&atk_rep, atk_buf, sizeof(atk_buf));
	if (len > sizeof(atk_buf)) {
		problem("a reply of %u bytes: the buffer holds %zu", len, sizeof(atk_buf));
		return;
	}
	if (len > full)
		memset(atk_buf + full, 0, len - full);
	send_bytes(cn, c, atk_buf, len);
}

static void set_xid(struct reply *rep, uint32_t xid)
{
	rep->xid = xid;
	rep->rpc[0] = (uint8_t)(xid >> 24);
	rep->rpc[1] = (uint8_t)(xid >> 16);
	rep->rpc[2] = (uint8_t)(xid >> 8);
	rep->rpc[3] = (uint8_t)xid;
}

/*
 * A reply to an XID never sent before the real one (@twice 0), or the
 * real one twice (1).  The extra Sends are plain: invalidating the
 * call's key twice would break the connection, not test the client.
 */
static void a_stray_or_twice(struct conn *cn, struct call *c, uint32_t twice)
{
	serve(cn, c, &atk_rep);
	if (!twice) {
		set_xid(&atk_rep, c->xid ^ 0x5a5a0000u);
		cn->plain = true;
		send_reply(cn, c, &atk_rep);
		set_xid(&atk_rep, c->xid);
	}
	send_reply(cn, c, &atk_rep);
	if (twice) {
		cn->plain = true;
		send_reply(cn, c, &atk_rep);
	}
}

enum chunk_lie {
	LIE_WRITE_LONGER, LIE_WRITE_MORE_SEGS, LIE_WRITE_EXTRA_CHUNK, LIE_WRITE_UNOFFERED,
	LIE_WRITE_SHORT, LIE_REPLY_LONGER, LIE_REPLY_SMALL, LIE_REPLY_NONE, LIE_REPLY_UNOFFERED,
};

/* The reply's chunk lists lie about what was offered or written. */
static void a_chunk_lie(struct conn *cn, struct call *c, uint32_t lie)
{
	struct chunk *w = &atk_rep.writes[0], *r = &atk_rep.reply;
	const struct seg fake = { 0x1234u, 64, 0x10000 };

	serve(cn, c, &atk_rep);
	switch ((enum chunk_lie)lie) {
	case LIE_WRITE_LONGER:
		w->s[0].len += 4096;
		break;
	case LIE_WRITE_MORE_SEGS:
		w->s[w->n] = w->s[w->n - 1];
		w->n++;
		break;
	case LIE_WRITE_EXTRA_CHUNK:
		atk_rep.writes[atk_rep.nwrites] = atk_rep.writes[0];
		atk_rep.nwrites++;
		break;
	case LIE_WRITE_UNOFFERED:
		atk_rep.nwrites = 1;
		*w = (struct chunk){ .n = 1, .s = { fake } };
		break;
	case LIE_WRITE_SHORT:
		w->s[0].len = 100;
		break;
	case LIE_REPLY_LONGER:
		r->s[0].len += 4096;
		break;
	case LIE_REPLY_SMALL:
		r->n = 1;
		r->s[0].len = 64;
		break;
	case LIE_REPLY_NONE:
		atk_rep.has_reply = false;
		break;
	case LIE_REPLY_UNOFFERED:
		atk_rep.type = 1;
		atk_rep.rpc_len = 0;
		atk_rep.has_reply = true;
		*r = (struct chunk){ .n = 1, .s = { fake } };
		break;
	}
	send_reply(cn, c, &atk_rep);
}

/* Lists whose counts and lengths overflow: raw words after the fixed header. */
static void a_huge(struct conn *cn, struct call *c, uint32_t which)
{
	static const uint32_t words[][12] = {
		{ 0, 1, 0xffffffffu, 0 },                                  /* write chunk of 2^32-1 segments */
		{ 0, 0, 1, 0x10000000u },                                  /* reply chunk of 2^28 segments */
		{ 0, 1, 2, 1, 0x80000000u, 0, 0, 1, 0x80000000u, 0, 4096, 0 }, /* lengths sum past 2^32 */
		{ 0, 1, 1, 1, 0x100u, 0xffffffffu, 0xfffffff0u, 0, 0 },    /* segment wraps 2^64 */
		{ 1, 0xfffffffcu, 1, 0xffffffffu, 0, 0, 0, 0, 0 },          /* read list in a reply */
		{ 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1 },                    /* write chunks without end */
	};
	struct raw_xdr x;

	serve(cn, c, &atk_rep);
	raw_xdr_init(&x, atk_buf, sizeof(atk_buf));
	raw_xdr_rdma_hdr(&x, c->xid, 1, GRANT, 0);
	for (uint32_t i = 0; i < 12; i++)
		raw_xdr_u32(&x, words[which][i]);
	raw_xdr_bytes(&x, atk_rep.rpc, atk_rep.rpc_len);
	send_bytes(cn, c, atk_buf, (uint32_t)x.len);
}

/* RDMA_ERROR with odd contents: raw words after the fixed header, -1 ends. */
static void a_rdma_error(struct conn *cn, struct call *c, uint32_t which)
{
	static const int64_t words[][10] = {
		{ 1, 2, 5, -1 },                          /* ERR_VERS 2..5 */
		{ 1, 1, 1, -1 },                          /* ERR_VERS claiming version 1 */
		{ 2, -1 },                                /* ERR_CHUNK */
		{ 0, -1 },                                /* err 0, short */
		{ 7, 1, 2, 3, 4, 5, 6, 7, 8, -1 },        /* unknown err with its 8 words */
		{ 0xffffffff, 0, 0, 0, 0, 0, 0, 0, 0, -1 },
		{ 1, 1, -1 },                             /* ERR_VERS cut short */
		{ 2, 0, 0, 0, 0, -1 },                    /* ERR_CHUNK with trailing bytes */
		{ -1 },                                   /* no err word */
	};
	struct raw_xdr x;

	raw_xdr_init(&x, atk_buf, sizeof(atk_buf));
	raw_xdr_rdma_hdr(&x, c->xid, 1, GRANT, 4);
	for (uint32_t i = 0; words[which][i] >= 0; i++)
		raw_xdr_u32(&x, (uint32_t)words[which][i]);
	send_bytes(cn, c, atk_buf, (uint32_t)x.len);
}

/* ERR_VERS 2..3 in a header of rdma_vers 2: a server answering in its own version. */
static void a_err_vers_own_version(struct conn *cn, struct call *c, uint32_t arg)
{
	struct raw_xdr x;

	(void)arg;
	raw_xdr_init(&x, atk_buf, sizeof(atk_buf));
	raw_xdr_rdma_hdr(&x, c->xid, 2, GRANT, 4);
	raw_xdr_u32(&x, 1);
	raw_xdr_u32(&x, 2);
	raw_xdr_u32(&x, 3);
	send_bytes(cn, c, atk_buf, (uint32_t)x.len);
}

static void a_credits(struct conn *cn, struct call *c, uint32_t grant)
{
	serve(cn, c, &atk_rep);
	atk_rep.credits = grant;
	send_reply(cn, c, &atk_rep);
}

/* An RPC reply other than the accepted one: @words after the XID, -1 ends. */
static void send_rpc_words(struct conn *cn, struct call *c, const int64_t *words)
{
	struct raw_xdr x;

	serve(cn, c, &atk_rep);
	raw_xdr_init(&x, atk_rep.rpc, sizeof(atk_rep.rpc));
	raw_xdr_u32(&x, c->xid);
	for (uint32_t i = 0; words[i] >= 0; i++)
		raw_xdr_u32(&x, (uint32_t)words[i]);
	atk_rep.rpc_len = (uint32_t)x.len;
	send_reply(cn, c, &atk_rep);
}

/* MSG_DENIED: RPC_MISMATCH 2..3 (where the verifier's pointer of an accepted reply lies), AUTH_ERROR. */
static void a_denied(struct conn *cn, struct call *c, uint32_t which)
{
	static const int64_t words[][6] = {
		{ 1, 1, 0, 2, 3, -1 },
		{ 1, 1, 1, 1, -1 },
	};

	send_rpc_words(cn, c, words[which]);
}

/* An accepted NULL reply whose AUTH_SHORT verifier offers a shorthand credential (flavor 0x7e57). */
static void a_short_verifier(struct conn *cn, struct call *c, uint32_t arg)
{
	static const int64_t words[] = { 1, 0, 2, 12, 0x7e57, 4, 0x5a5a5a5a, 0, -1 };

	(void)arg;
	send_rpc_words(cn, c, words);
}

static void a_none(struct conn *cn, struct call *c, uint32_t arg)
{
	(void)arg;
	serve_and_send(cn, c);
}

/* ---- stale and out-of-range keys (the --keys table) --------------------------------------------------- */

enum key_kind { KEY_WRITE_CHUNK, KEY_READ_CHUNK, KEY_REPLY_CHUNK };

static struct key key_of(const struct call *c, enum key_kind kind)
{
	const struct seg *s = kind == KEY_READ_CHUNK ? &c->reads[0]
			      : kind == KEY_WRITE_CHUNK ? &c->writes[0].s[0] : &c->reply.s[0];
	bool have = kind == KEY_READ_CHUNK ? c->nreads > 0
		    : kind == KEY_WRITE_CHUNK ? c->nwrites > 0 : c->has_reply;

	if (!have)
		problem("call %#x offers no chunk of kind %d", c->xid, kind);
	return (struct key){ .have = have, .read = kind == KEY_READ_CHUNK, .rkey = s->handle,
			     .len = s->len < 4096 ? s->len : 4096, .addr = s->off };
}

/* Drop the connection: after a refused access it is broken anyway. */
static void conn_drop(struct conn *cn)
{
	raw_peer_destroy(cn->p);
	cn->p = NULL;
}

/*
 * Use @k: RDMA Write junk to it (or RDMA Read from it).  Refused means
 * an error completion or the connection breaking; an RDMA Write that
 * completes is not conclusive on iWARP (completion means sent), so a
 * Read of the same key follows.  Returns true when refused.
 */
static bool probe_key(struct conn *cn, const struct key *k, unsigned *rem_access)
{
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	enum raw_wait w;

	memset(raw_peer_mem(cn->p) + MEM_JUNK, 0xa5, k->len);
	w = k->read ? raw_peer_rdma_read(cn->p, MEM_PROBE, k->len, k->rkey, k->addr, OP_MS, &st)
		    : raw_peer_rdma_write(cn->p, MEM_JUNK, k->len, k->rkey, k->addr, OP_MS, &st);
	printf("  server: %s of %u bytes at rkey %#x addr %#llx: %s %s\n",
	       k->read ? "RDMA Read" : "RDMA Write", k->len, k->rkey,
	       (unsigned long long)k->addr, raw_wait_str(w),
	       w == RAW_WAIT_COMPLETION ? ibv_wc_status_str(st) : "");
	if (w == RAW_WAIT_COMPLETION && st == IBV_WC_REM_ACCESS_ERR)
		++*rem_access;
	if (w != RAW_WAIT_COMPLETION || st != IBV_WC_SUCCESS)
		return true;
	if (!k->read) {
		w = raw_peer_rdma_read(cn->p, MEM_PROBE, 8, k->rkey, k->addr, OP_MS, &st);
		printf("  server: RDMA Read after it: %s %s\n", raw_wait_str(w),
		       w == RAW_WAIT_COMPLETION ? ibv_wc_status_str(st) : "");
		if (w != RAW_WAIT_COMPLETION || st != IBV_WC_SUCCESS)
			return true;
	}
	return false;
}

static void stale_use(struct conn *cn)
{
	g.stale_tried++;
	if (probe_key(cn, &cn->stale, &g.stale_rem_access))
		g.stale_refused++;
	else
		problem("the stale key %#x still works: client memory exposed", cn->stale.rkey);
	cn->stale.armed = false;
	conn_drop(cn);
}

/* Serve correctly, keep the key of chunk @kind, use it on the next call. */
static void k_keep(struct conn *cn, struct call *c, uint32_t kind)
{
	cn->stale = key_of(c, (enum key_kind)kind);
	cn->stale.armed = true;
	serve_and_send(cn, c);
}

/* Serve correctly, then use the write chunk's key after a pause. */
static void k_pause(struct conn *cn, struct call *c, uint32_t arg)
{
	(void)arg;
	cn->stale = key_of(c, KEY_WRITE_CHUNK);
	serve_and_send(cn, c);
	nanosleep(&(struct timespec){ 0, STALE_PAUSE_MS * 1000000L }, NULL);
	stale_use(cn);
}

/* Never answer; use the key of the timed-out call on the next call. */
static void k_silent(struct conn *cn, struct call *c, uint32_t arg)
{
	(void)arg;
	cn->stale = key_of(c, KEY_WRITE_CHUNK);
	cn->stale.armed = true;
}

/*
 * The first call is served (its reply grants the credits that keep the
 * connection alive through a timeout), the second left unanswered until
 * the client gave it up, and on the third the second's reply comes late:
 * once the client has had time to take it, the second's key must be
 * refused on the connection it was given on.
 */
static void k_late(struct conn *cn, struct call *c, uint32_t n)
{
	if (n == 0) {
		serve_and_send(cn, c);
	} else if (n == 1) {
		cn->late = *c;
	} else {
		cn->stale = key_of(&cn->late, KEY_WRITE_CHUNK);
		cn->plain = true; /* not With Invalidate: the client itself must end the key */
		serve_and_send(cn, &cn->late);
		nanosleep(&(struct timespec){ 0, STALE_PAUSE_MS * 1000000L }, NULL);
		stale_use(cn);
	}
}

/*
 * Before serving the connection's first call with chunks, RDMA Read its
 * write chunk: the client's buffer is new, and what its memory held
 * before must not show (the victim runs under ASan, whose allocator
 * fills the first 4 KiB of new memory with 0xbe; glibc's hands back what
 * freed memory held).  Zeros, or a refused Read, pass.
 */
static void k_fresh(struct conn *cn, struct call *c, uint32_t arg)
{
	struct key k = key_of(c, KEY_WRITE_CHUNK);
	const uint8_t *got = raw_peer_mem(cn->p) + MEM_PROBE;
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	uint32_t dirty = 0;
	enum raw_wait w;

	(void)arg;
	memset(raw_peer_mem(cn->p) + MEM_PROBE, 0x77, k.len);
	w = raw_peer_rdma_read(cn->p, MEM_PROBE, k.len, k.rkey, k.addr, OP_MS, &st);
	for (uint32_t i = 0; w == RAW_WAIT_COMPLETION && st == IBV_WC_SUCCESS && i < k.len; i++)
		dirty += got[i] != 0;
	printf("  server: RDMA Read of the new write chunk's %u bytes: %s %s, %u not zero\n",
	       k.len, raw_wait_str(w), w == RAW_WAIT_COMPLETION ? ibv_wc_status_str(st) : "",
	       dirty);
	if (dirty)
		problem("a new write chunk shows %u bytes the call never wrote", dirty);
	if (w != RAW_WAIT_COMPLETION || st != IBV_WC_SUCCESS)
		conn_drop(cn);
	else
		serve_and_send(cn, c);
}

enum bounds { BEFORE_CHUNK, AFTER_CHUNK, AFTER_BUFFER };

/*
 * While the call is live: 8 bytes just before its write chunk, just
 * after it, or just after the client's buffer (a READ of 4 KiB gets a
 * buffer of CLIENT_BUF_MIN with the chunk at its start).  All must be
 * refused, except that rxe (Linux 6.1, rxe_resp.c check_rkey) checks a
 * window's accesses against the range of the region under it, not the
 * window's: there a write just after the chunk lands in the rest of the
 * call's own buffer.  That is counted and reported, not failed; the
 * write past the buffer must still be refused.
 */
static void k_bounds(struct conn *cn, struct call *c, uint32_t where)
{
	static const char *const names[] = { "before the chunk", "after the chunk",
					     "after the buffer" };
	struct key k = key_of(c, KEY_WRITE_CHUNK);
	unsigned dummy = 0;

	k.addr = where == BEFORE_CHUNK ? k.addr - 8
		 : where == AFTER_CHUNK ? k.addr + c->writes[0].s[0].len : k.addr + CLIENT_BUF_MIN;
	k.len = 8;
	g.bounds_tried++;
	if (probe_key(cn, &k, &dummy)) {
		g.bounds_refused++;
	} else if (where == AFTER_CHUNK && !strcmp(g.provider, "rxe")) {
		g.bounds_rxe_window++;
		printf("  server: known rxe limitation: window bounds not enforced, the write "
		       "landed in the rest of the call's buffer\n");
	} else {
		problem("a live key reaches outside its chunk (%s)", names[where]);
	}
	conn_drop(cn);
}

/* ---- the tables -------------------------------------------------------------------------------------- */

/* One attacked call per run unless @n says more; the i-th gets @arg + i. */
#define ATTACK(nm, proc, step, exp, fn, a, n) \
	{ .name = nm, .target = proc, .target_step = step, .expect = exp, .attack = fn, \
	  .arg = a, .repeat = n }
#define CREDITS(nm, grant, st) \
	{ .name = nm, .target = P_NULL, .attack = a_credits, .arg = grant, .steps = st }
#define PRIVDATA(nm, len, limit, ...) \
	{ .name = "private data: " nm, .target = UINT32_MAX, .attack = a_none, .steps = pd_steps, \
	  .pd = (const uint8_t[]){ __VA_ARGS__ }, .pd_len = len, .send_limit = limit }
#define MAGIC 0xf6, 0xab, 0x0e, 0x18
#define JUNK4 0x5a, 0x5a, 0x5a, 0x5a
#define JUNK20 JUNK4, JUNK4, JUNK4, JUNK4, JUNK4

static const char pd_steps[] =
	"echo/64=ok echo/900=ok echo/3000=ok read/4096=ok longres/2000=ok write/4096=ok";

static const struct scenario attacks[] = {
	ATTACK("version 0", P_NULL, "null", "CANTDECODERES", a_version, 0, 1),
	ATTACK("version 2", P_NULL, "null", "CANTDECODERES", a_version, 2, 1),
	ATTACK("version 0xffffffff", P_NULL, "null", "CANTDECODERES", a_version, 0xffffffffu, 1),
	ATTACK("type RDMA_NOMSG without reply chunk", P_NULL, "null", "CANTDECODERES", a_type, 1, 1),
	ATTACK("type RDMA_MSGP", P_NULL, "null", "CANTDECODERES", a_type, 2, 1),
	ATTACK("type RDMA_DONE", P_NULL, "null", "CANTDECODERES", a_type, 3, 1),
	ATTACK("type RDMA_ERROR over a reply", P_NULL, "null", "CANTDECODERES", a_type, 4, 1),
	ATTACK("type 5", P_NULL, "null", "CANTDECODERES", a_type, 5, 1),
	ATTACK("type 0xffffffff", P_NULL, "null", "CANTDECODERES", a_type, 0xffffffffu, 1),
	ATTACK("zero-length Send and 1-3 bytes", P_NULL, "null", "TIMEDOUT", a_length, 0, 4),
	ATTACK("header truncated at 4..27 bytes", P_NULL, "null", "CANTDECODERES", a_length, 4, 24),
	ATTACK("RPC reply truncated at 28..51 bytes", P_NULL, "null", "CANTDECODERES", a_length,
	       28, 24),
	ATTACK("READ reply truncated in its write list", P_READ, "read/4096", "CANTDECODERES",
	       a_length, 24, 12),
	ATTACK("reply to an XID never sent, then the real one", P_READ, "read/4096", "ok",
	       a_stray_or_twice, 0, 1),
	ATTACK("the same reply twice", P_READ, "read/4096", "ok", a_stray_or_twice, 1, 1),
	ATTACK("write chunk longer than offered", P_READ, "read/4096", "CANTDECODERES",
	       a_chunk_lie, LIE_WRITE_LONGER, 1),
	ATTACK("write chunk with more segments", P_READ, "read/4096", "CANTDECODERES",
	       a_chunk_lie, LIE_WRITE_MORE_SEGS, 1),
	ATTACK("more write chunks than offered", P_READ, "read/4096", "CANTDECODERES",
	       a_chunk_lie, LIE_WRITE_EXTRA_CHUNK, 1),
	ATTACK("write chunk when none was offered", P_NULL, "null", "CANTDECODERES", a_chunk_lie,
	       LIE_WRITE_UNOFFERED, 1),
	ATTACK("write chunk shorter than the result", P_READ, "read/4096", "CANTDECODERES",
	       a_chunk_lie, LIE_WRITE_SHORT, 1),
	ATTACK("reply chunk longer than offered", P_LONG_RES, "longres/2000", "CANTDECODERES",
	       a_chunk_lie, LIE_REPLY_LONGER, 1),
	ATTACK("reply chunk too small for the reply", P_LONG_RES, "longres/2000", "CANTDECODERES",
	       a_chunk_lie, LIE_REPLY_SMALL, 1),
	ATTACK("RDMA_NOMSG without the offered reply chunk", P_LONG_RES, "longres/2000",
	       "CANTDECODERES", a_chunk_lie, LIE_REPLY_NONE, 1),
	ATTACK("reply chunk when none was offered", P_NULL, "null", "CANTDECODERES", a_chunk_lie,
	       LIE_REPLY_UNOFFERED, 1),
	ATTACK("huge counts and lengths", P_NULL, "null", "CANTDECODERES", a_huge, 0, 6),
	{ .name = "reply Send larger than the client's receive buffers", .target = P_NULL,
	  .attack = a_length, .arg = 8192,
	  .steps = "echo/64=ok null=CANTRECV echo/200=ok read/4096=ok "
		   "longres/2000=ok+write/4096=ok+echo/3000=ok" },
	ATTACK("RDMA_ERROR ERR_VERS", P_NULL, "null", "VERSMISMATCH", a_rdma_error, 0, 2),
	ATTACK("RDMA_ERROR ERR_VERS in rdma_vers 2", P_NULL, "null", "VERSMISMATCH",
	       a_err_vers_own_version, 0, 1),
	ATTACK("MSG_DENIED: RPC_MISMATCH, AUTH_ERROR", P_NULL, "null", "VERSMISMATCH|AUTHERROR",
	       a_denied, 0, 2),
	{ .name = "AUTH_SHORT verifier (shorthand declined: later calls keep AUTH_SYS)",
	  .target = P_NULL, .target_step = "null", .expect = "ok", .attack = a_short_verifier,
	  .repeat = 4, .auth_sys = true },
	ATTACK("RDMA_ERROR odd contents", P_NULL, "null", "CANTDECODERES", a_rdma_error, 2, 7),
	CREDITS("credit grant 0", 0, "echo/64=ok null=ok echo/100x8=ok read/4096x4=ok"),
	CREDITS("credit grant 0xffffffff", 0xffffffffu,
		"echo/64=ok null=ok echo/100x40=ok read/4096x4=ok"),
	PRIVDATA("wrong format identifier", 8, 1024, 0xde, 0xad, 0xbe, 0xef, 1, 0, 3, 3),
	PRIVDATA("version 2", 8, 1024, MAGIC, 2, 0, 3, 3),
	PRIVDATA("version 0", 8, 1024, MAGIC, 0, 0, 3, 3),
	PRIVDATA("sizes 1 KiB", 8, 1024, MAGIC, 1, 0, 0, 0),
	PRIVDATA("sizes 256 KiB", 8, 4096, MAGIC, 1, 0xff, 0xff, 0xff),
	PRIVDATA("length 0", 0, 1024, 0),
	PRIVDATA("length 7", 7, 1024, MAGIC, 1, 0, 3),
	PRIVDATA("length 56, message at offset 12", 56, 4096, JUNK4, JUNK4, JUNK4, MAGIC, 1, 0, 3,
		 3, JUNK20, JUNK4, JUNK4, JUNK4, JUNK4),
};

#define KEYS(nm, proc, fn, a, st) \
	{ .name = nm, .target = proc, .attack = fn, .arg = a, .repeat = 1, .steps = st }

static const struct scenario keys[] = {
	KEYS("write chunk key used on the next call", P_READ, k_keep, KEY_WRITE_CHUNK,
	     "read/4096=ok read/4096=CANTRECV read/4096=ok"),
	KEYS("write chunk key used after a pause", P_READ, k_pause, 0,
	     "read/4096=ok sleep/1500 read/4096=ok|CANTRECV|CANTSEND read/4096=ok"),
	KEYS("read chunk key read on the next call", P_WRITE, k_keep, KEY_READ_CHUNK,
	     "write/4096=ok write/4096=CANTRECV write/4096=ok"),
	KEYS("reply chunk key used on the next call", P_LONG_RES, k_keep, KEY_REPLY_CHUNK,
	     "longres/2000=ok longres/2000=CANTRECV longres/2000=ok"),
	KEYS("timed-out call's key used on the next call", P_READ, k_silent, 0,
	     "read/4096=TIMEDOUT read/4096=CANTRECV read/4096=ok"),
	{ .name = "timed-out call's key used after its late reply", .target = P_READ,
	  .attack = k_late, .repeat = 3,
	  .steps = "read/4096=ok read/4096=TIMEDOUT read/4096=CANTRECV read/4096=ok" },
	KEYS("a new buffer's write chunk holds zeros", P_READ, k_fresh, 0,
	     "read/4096=ok|CANTRECV read/4096=ok"),
	KEYS("live key, 8 bytes before its chunk", P_READ, k_bounds, BEFORE_CHUNK,
	     "read/4096=CANTRECV read/4096=ok"),
	KEYS("live key, 8 bytes after its chunk", P_READ, k_bounds, AFTER_CHUNK,
	     "read/4096=CANTRECV read/4096=ok"),
	KEYS("live key, 8 bytes after the client's buffer", P_READ, k_bounds, AFTER_BUFFER,
	     "read/4096=CANTRECV read/4096=ok"),
};

static const struct mode modes_attack[] = { { "", true, true } };
static const struct mode modes_keys[] = {
	{ "R both (Send With Invalidate)", true, true },
	{ "client without R", false, true },
	{ "server without R", true, false },
};

/* ---- one connection --------------------------------------------------------------------------------- */

static void conn_accept(struct conn *cn, struct raw_conn_request *req)
{
	static const uint8_t ours[2][8] = { { MAGIC, 1, 0, 3, 3 }, { MAGIC, 1, 1, 3, 3 } };
	const struct scenario *s = cn->s;
	struct raw_peer_config cfg;
	const uint8_t *pd = s->send_limit ? s->pd : ours[cn->m->server_r];
	uint8_t len = s->send_limit ? s->pd_len : 8;
	const uint8_t *at = NULL;
	bool client_r;

	for (size_t i = 0; i + 8 <= req->private_data_len && !at; i++)
		if (!memcmp(req->private_data + i, ours[0], 4))
			at = req->private_data + i;
	client_r = at && (at[5] & 1);
	cn->client_recv = at && at[4] == 1 ? (at[7] + 1u) * 1024 : 1024;
	cn->swi = client_r && !s->send_limit && cn->m->server_r;
	if (client_r && strcmp(g.provider, "rxe"))
		problem("the client asks for remote invalidation on %s (no memory windows)",
			g.provider);
	if (!client_r && !strcmp(g.provider, "rxe") && cn->m->victim_ri)
		problem("the client does not ask for remote invalidation on rxe");
	raw_peer_config_default(&cfg);
	cfg.recv_count = 64;
	cn->p = raw_accept(req, &cfg, pd, len, OP_MS);
	if (!cn->p)
		problem("accept failed");
}

static void on_message(struct conn *cn, const uint8_t *msg, uint32_t len)
{
	static struct call c;
	const struct scenario *s = cn->s;
	uint32_t limit = s->send_limit ? s->send_limit : 4096;

	g.calls_seen++;
	if (len > limit)
		problem("the client sent %u bytes, over the inline size %u", len, limit);
	if (cn->stale.armed) {
		stale_use(cn);
		return;
	}
	if (!parse_call(cn, &c, msg, len)) {
		problem("cannot parse a call of %u bytes from the client", len);
		return;
	}
	check_call_keys(&c);
	if (s->auth_sys && c.cred_flavor != 1)
		problem("a call with credential flavor %#x, not AUTH_SYS", c.cred_flavor);
	if (c.proc == s->target && cn->attacks < (s->repeat ? s->repeat : 1)) {
		g.attacked_calls++;
		s->attack(cn, &c, s->arg + cn->attacks++);
		return;
	}
	serve_and_send(cn, &c);
}

/* Serve the victim until it exits; returns its wait status, or -1 when it had to be killed. */
static int serve_victim(const struct scenario *s, const struct mode *m, pid_t pid)
{
	static uint8_t msg[MSG_CAP];
	struct conn cn = { .s = s, .m = m };
	struct timespec t0;
	int status;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct timespec t;
		struct raw_conn_request req;
		enum ibv_wc_status st;
		uint32_t len;

		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 > VICTIM_MS) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			status = -1;
			break;
		}
		if (cn.p && cn.p->disconnected)
			conn_drop(&cn);
		if (!cn.p) {
			if (raw_listener_wait_request(g.l, 200, &req) == 1)
				conn_accept(&cn, &req);
			continue;
		}
		if (raw_peer_recv(cn.p, 200, msg, sizeof(msg), &len, &st) != RAW_WAIT_COMPLETION)
			continue;
		if (st == IBV_WC_SUCCESS)
			on_message(&cn, msg, len);
		else
			conn_drop(&cn);
	}
	if (cn.p)
		conn_drop(&cn);
	return status;
}

/* ---- one scenario: the victim's arguments, its run, the verdict ------------------------------------- */

static char *step_dup(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *step_dup(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* The victim's argv: its options, address, port, then the steps. */
static int victim_argv(const struct scenario *s, const struct mode *m, char **argv, int cap)
{
	int n = 0;
	char *copy, *save = NULL;

	argv[n++] = step_dup("%s", g.victim);
	if (!m->victim_ri)
		argv[n++] = step_dup("--no-ri");
	if (s->auth_sys)
		argv[n++] = step_dup("--auth-sys");
	argv[n++] = step_dup("%s", g.addr);
	argv[n++] = step_dup("%u", g.l->port);
	if (s->steps) {
		copy = step_dup("%s", s->steps);
		for (char *t = strtok_r(copy, " ", &save); t && n < cap - 1; t = strtok_r(NULL, " ", &save))
			argv[n++] = step_dup("%s", t);
		free(copy);
		argv[n] = NULL;
		return n;
	}
	argv[n++] = step_dup("echo/64=ok");
	argv[n++] = step_dup("%s=%s+echo/200=ok", s->target_step, s->expect);
	for (uint32_t i = 1; i < s->repeat && n < cap - 5; i++)
		argv[n++] = step_dup("%s=%s", s->target_step, s->expect);
	argv[n++] = step_dup("read/4096=ok");
	argv[n++] = step_dup("longres/2000=ok+write/4096=ok+echo/3000=ok");
	argv[n] = NULL;
	return n;
}

static pid_t victim_start(char **argv, const char *log)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Count sanitizer reports in the victim's output; print it when the scenario failed. */
static unsigned victim_log(const char *log, bool show)
{
	FILE *f = fopen(log, "r");
	char line[1024];
	unsigned reports = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "ERROR: AddressSanitizer") || strstr(line, "ERROR: LeakSanitizer") ||
		    strstr(line, "runtime error:"))
			reports++;
		if (show)
			printf("    | %s", line);
	}
	fclose(f);
	return reports;
}

static void run_scenario(const struct scenario *s, const struct mode *m)
{
	char *argv[96], log[] = "/tmp/hostile_server_victim_XXXXXX";
	int fd = mkstemp(log), argc, status;
	unsigned reports;
	pid_t pid;

	if (fd >= 0)
		close(fd);
	g.scenarios++;
	g.scenario_failed = false;
	argc = victim_argv(s, m, argv, 96);
	pid = victim_start(argv, log);
	status = pid > 0 ? serve_victim(s, m, pid) : -1;
	if (status == -1)
		problem("the victim hung (killed after %d s)", VICTIM_MS / 1000);
	else if (WIFSIGNALED(status))
		problem("the victim died of signal %d", WTERMSIG(status));
	else if (WEXITSTATUS(status))
		problem("the victim exited %d", WEXITSTATUS(status));
	reports = victim_log(log, false);
	if (reports)
		problem("%u sanitizer reports in the victim's output", reports);
	g.sanitizer_reports += reports;
	if (g.scenario_failed)
		victim_log(log, true);
	else
		g.passed++;
	printf("%s %s %s%s%s\n", g.scenario_failed ? "FAIL" : "PASS", g.provider, s->name,
	       *m->name ? ": " : "", m->name);
	unlink(log);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
}

static void figures(void)
{
	printf("figure: %s: %u client calls checked: one rkey at most each, none on calls "
	       "without chunks%s\n", g.keys ? "keys" : "hostile server", g.calls_seen,
	       g.key_problems ? " (NOT always)" : "");
	if (g.keys) {
		printf("figure: keys: %u stale-key writes/reads attempted, %u refused (%u remote access "
		       "error), client memory unchanged%s\n", g.stale_tried, g.stale_refused,
		       g.stale_rem_access, g.passed == g.scenarios ? "" : " (NOT in every scenario)");
		printf("figure: keys: %u live-key accesses outside the advertised chunk, %u refused, "
		       "%u landed in the call's own buffer (rxe window bounds)\n",
		       g.bounds_tried, g.bounds_refused, g.bounds_rxe_window);
		return;
	}
	printf("figure: hostile server: %u scenarios (%u attacked calls), %u passed, client calls "
	       "failed cleanly, %u sanitizer reports\n", g.scenarios, g.attacked_calls, g.passed,
	       g.sanitizer_reports);
}

int main(int argc, char **argv)
{
	const struct scenario *table = attacks;
	const struct mode *modes = modes_attack;
	size_t n = sizeof(attacks) / sizeof(attacks[0]), nmodes = 1;
	int a = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (a < argc && !strcmp(argv[a], "--keys")) {
		g.keys = true;
		table = keys;
		n = sizeof(keys) / sizeof(keys[0]);
		modes = modes_keys;
		nmodes = sizeof(modes_keys) / sizeof(modes_keys[0]);
		a++;
	}
	if (argc - a < 3) {
		fprintf(stderr, "usage: hostile_server [--keys] PROVIDER ADDR VICTIM [NAME-FILTER]\n");
		return 2;
	}
	g.provider = argv[a];
	g.addr = argv[a + 1];
	g.victim = argv[a + 2];
	signal(SIGPIPE, SIG_IGN);
	g.l = raw_listen(g.addr, 0);
	if (!g.l) {
		fprintf(stderr, "hostile_server: cannot listen on %s\n", g.addr);
		return 1;
	}
	for (size_t mi = 0; mi < nmodes; mi++)
		for (size_t i = 0; i < n; i++)
			if (argc - a < 4 || strstr(table[i].name, argv[a + 3]))
				run_scenario(&table[i], &modes[mi]);
	raw_listener_destroy(g.l);
	figures();
	if (!g.scenarios)
		fprintf(stderr, "hostile_server: FAIL: no scenario matches '%s'\n",
			argc - a >= 4 ? argv[a + 3] : "");
	return g.scenarios && g.passed == g.scenarios ? 0 : 1;
}
