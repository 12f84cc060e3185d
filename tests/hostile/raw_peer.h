/*
 * The hostile peer's core: one RDMA connection made with raw librdmacm
 * and libibverbs only (never the library under test), and a tiny
 * big-endian writer and reader for building RPC-over-RDMA and ONC RPC
 * messages whose fields may hold any value, wrong ones included.
 *
 * A raw_peer is one RC QP with its own rdma_cm event channel, PD, CQ and
 * completion channel, and three registered areas:
 *   - send slots (local access), one per outstanding Send;
 *   - receive slots (local write), all posted before connect/accept;
 *   - "mem", readable and writable by the remote peer: the target of the
 *     victim's RDMA Writes (write/reply chunks we advertise), the source
 *     of its RDMA Reads (read chunks we advertise), and the local side of
 *     our own RDMA Read/Write.  raw_peer_mem_rkey()/raw_peer_mem_addr()
 *     give the handle and offset to put into chunk segments.
 *
 * Either role: raw_connect() as a client, raw_listen() +
 * raw_listener_wait_request() + raw_accept()/raw_reject() as a server.
 * Private data is passed through unchanged, any length rdma_cm allows
 * (0..56 bytes when connecting over IB/RoCE; the received private data
 * of IB/RoCE peers is padded by the CM to the full message size, iWARP's
 * has the exact length).
 *
 * Completions are waited for with a timeout; a completion of another
 * work request seen while waiting for a specific one is kept and handed
 * out by a later raw_peer_wait().  Error statuses (for example
 * IBV_WC_REM_ACCESS_ERR after an RDMA Write to a bad key) are returned,
 * never hidden.
 *
 * Not thread-safe: one thread drives one peer.
 */
#ifndef HOSTILE_RAW_PEER_H
#define HOSTILE_RAW_PEER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* ---- sizes and options ---------------------------------------------------- */

struct raw_peer_config {
	uint32_t send_bytes;   /* each send slot; default 8192 */
	uint32_t send_count;   /* send slots; default 32 */
	uint32_t recv_bytes;   /* each receive slot; default 8192 */
	uint32_t recv_count;   /* receives posted before connect/accept; default 32 */
	uint32_t mem_bytes;    /* remotely accessible area; default 1 MiB */
	uint8_t initiator_depth;     /* ORD asked/offered; default 4 */
	uint8_t responder_resources; /* IRD asked/offered; default 4 */
	bool hold_recvs;       /* post no receive at connect: raw_peer_post_recv later (a peer not ready) */
};

/* Fills @cfg with the defaults above. */
void raw_peer_config_default(struct raw_peer_config *cfg);

/* What rdma_connect()'s conn_param carries besides the depths. */
struct raw_connect_params {
	const void *private_data; /* may be NULL with length 0 */
	uint8_t private_data_len;
	uint8_t retry_count;      /* default when both are 0: 6 and 7 */
	uint8_t rnr_retry_count;
};

enum raw_connect_result {
	RAW_CONNECT_OK = 0,
	RAW_CONNECT_REJECTED,    /* RDMA_CM_EVENT_REJECTED */
	RAW_CONNECT_UNREACHABLE, /* address/route/connect error events */
	RAW_CONNECT_TIMEOUT,
	RAW_CONNECT_LOCAL_ERROR, /* a verbs/rdma_cm call failed here (errno kept) */
};

const char *raw_connect_result_str(enum raw_connect_result r);

/* ---- the connection --------------------------------------------------------- */

#define RAW_PEER_MAX_PD 256u
#define RAW_PEER_STASH  512u

struct raw_peer {
	struct raw_peer_config cfg;
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	uint8_t *send_buf, *recv_buf, *mem;
	struct ibv_mr *send_mr, *recv_mr, *mem_mr;
	uint32_t next_send;     /* round-robin send slot */
	uint64_t next_wr_seq;   /* unique part of RDMA work request ids */

	bool connected;         /* established and not yet seen disconnected */
	bool disconnected;      /* RDMA_CM_EVENT_DISCONNECTED (or error) seen */
	bool cm_unread;         /* raw_connect_start(): its rdma_cm events are never read */

	/* The peer's private data (connect: from its accept; accept: its request). */
	uint8_t peer_pd[RAW_PEER_MAX_PD];
	size_t peer_pd_len;
	uint8_t peer_initiator_depth, peer_responder_resources;

	/* Completions seen while waiting for another work request. */
	struct ibv_wc stash[RAW_PEER_STASH];
	uint32_t stash_head, stash_count;
};

/* The tools' common ground: CLOCK_MONOTONIC in ms, a sleep (none for @ms <= 0),
 * and "PROG: FAIL: message" on stderr. */
long long raw_now_ms(void);
void raw_sleep_ms(long long ms);
void raw_vfail(const char *prog, const char *fmt, va_list ap);

/*
 * raw_connect - connect to @addr (IPv4 or IPv6 literal) port @port as a
 * client.  @cfg and @cp may be NULL (defaults, no private data).  On
 * success returns the peer with its receives posted; otherwise NULL and
 * *@result (if not NULL) says why.  A local port that siw cannot bind
 * (EADDRINUSE: an ordinary TCP socket holds it) is tried again with a
 * new cm id, up to 4 times within @timeout_ms.
 */
struct raw_peer *raw_connect(const char *addr, uint16_t port, const struct raw_peer_config *cfg,
			     const struct raw_connect_params *cp, int timeout_ms,
			     enum raw_connect_result *result);

/*
 * raw_connect_start - the first half of raw_connect(): resolve, build the
 * QP, post the receives (unless held) and rdma_connect(), then return
 * without reading another rdma_cm event.  On IB/RoCE librdmacm moves
 * the QP to RTR and RTS and sends the RTU only inside
 * rdma_get_cm_event(), so the server's accepted connection stays
 * half-open: never ESTABLISHED (until the CM's REP retries give up, or
 * this peer's cm id is destroyed, which rejects).  On iWARP the kernel
 * completes the MPA exchange by itself.  NULL on failure, *@result says
 * why.  raw_peer_destroy() ends it.
 */
struct raw_peer *raw_connect_start(const char *addr, uint16_t port,
				   const struct raw_peer_config *cfg,
				   const struct raw_connect_params *cp, int timeout_ms,
				   enum raw_connect_result *result);

/* The local port of @p's connection (host byte order). */
uint16_t raw_peer_local_port(const struct raw_peer *p);

/*
 * raw_peer_rts_without_rtu - IB/RoCE, after raw_connect_start(): wait up
 * to @timeout_ms for the server's REP (the CONNECT_RESPONSE event waits
 * on the channel, unread), then move the QP to RTR and RTS with the
 * attributes the kernel CM holds, as librdmacm would, but send no RTU:
 * this peer can send while the server's connection is not ESTABLISHED.
 * 0, or -1 (iWARP, no REP in time, a failed transition).
 */
int raw_peer_rts_without_rtu(struct raw_peer *p, int timeout_ms);

/* rdma_disconnect (if connected) and free everything; NULL is fine. */
void raw_peer_destroy(struct raw_peer *p);

/* ---- server role -------------------------------------------------------------- */

struct raw_listener {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	uint16_t port;
};

/* A connection request not yet accepted or rejected. */
struct raw_conn_request {
	struct rdma_cm_id *id;
	uint8_t private_data[RAW_PEER_MAX_PD];
	size_t private_data_len;
	uint8_t initiator_depth, responder_resources;
};

/* Listen on @addr (literal) port @port (0: any); NULL on failure. */
struct raw_listener *raw_listen(const char *addr, uint16_t port);
void raw_listener_destroy(struct raw_listener *l);

/* Wait for the next connection request: 1 got one, 0 timeout, -1 error. */
int raw_listener_wait_request(struct raw_listener *l, int timeout_ms, struct raw_conn_request *req);

/*
 * raw_accept - build the QP for @req, post receives and rdma_accept with
 * @private_data (@len bytes, may be 0); waits up to @timeout_ms for
 * ESTABLISHED.  NULL on failure (the request is then rejected/destroyed).
 */
struct raw_peer *raw_accept(struct raw_conn_request *req, const struct raw_peer_config *cfg,
			    const void *private_data, uint8_t len, int timeout_ms);

/* rdma_reject with @private_data and destroy the request's id; 0 or -1. */
int raw_reject(struct raw_conn_request *req, const void *private_data, uint8_t len);

/* ---- data path ------------------------------------------------------------------ */

/* Work request ids: the kind in the top byte. */
#define RAW_WR_KIND(wr_id) ((unsigned)((wr_id) >> 56))
enum raw_wr_kind {
	RAW_WR_SEND = 1,
	RAW_WR_RECV = 2,
	RAW_WR_WRITE = 3,
	RAW_WR_READ = 4,
};
#define RAW_WR_SLOT(wr_id) ((uint32_t)(wr_id))

/* The registered area the remote peer may read and write. */
uint8_t *raw_peer_mem(struct raw_peer *p);
uint32_t raw_peer_mem_rkey(const struct raw_peer *p);
uint64_t raw_peer_mem_addr(const struct raw_peer *p, uint32_t offset);

/*
 * raw_peer_send - copy @len bytes (0 allowed: a zero-length Send) into the
 * next send slot and post a signaled Send.  With @invalidate, the Send is
 * Send With Invalidate of @inv_rkey.  Returns the work request id, 0 when
 * the post fails (errno set) or @len exceeds the slot.
 */
uint64_t raw_peer_send(struct raw_peer *p, const void *data, uint32_t len, bool invalidate,
		       uint32_t inv_rkey);

/* Post receive slot @slot again (after its contents have been used). */
int raw_peer_post_recv(struct raw_peer *p, uint32_t slot);
uint8_t *raw_peer_recv_buf(struct raw_peer *p, uint32_t slot);

enum raw_wait {
	RAW_WAIT_COMPLETION = 0, /* *wc holds a completion (check its status) */
	RAW_WAIT_TIMEOUT,
	RAW_WAIT_DISCONNECTED,   /* rdma_cm said so and no completion is pending */
	RAW_WAIT_ERROR,
};

const char *raw_wait_str(enum raw_wait w);

/* The next completion of any work request, stashed ones first. */
enum raw_wait raw_peer_wait(struct raw_peer *p, int timeout_ms, struct ibv_wc *wc);

/* The completion of work request @wr_id; others seen meanwhile are stashed. */
enum raw_wait raw_peer_wait_wr(struct raw_peer *p, uint64_t wr_id, int timeout_ms, struct ibv_wc *wc);

/*
 * raw_peer_recv - wait for the next receive completion (send completions
 * are consumed; a failed one is reported through *@send_status if not
 * NULL), copy up to @cap bytes of the message into @out, set *@len to the
 * message's real length and post the slot again.  A flushed or failed
 * receive returns RAW_WAIT_COMPLETION with *@status set (IBV_WC_SUCCESS on
 * a real message).
 */
enum raw_wait raw_peer_recv(struct raw_peer *p, int timeout_ms, void *out, uint32_t cap,
			    uint32_t *len, enum ibv_wc_status *status);

/*
 * raw_peer_rdma_write / raw_peer_rdma_read - RDMA Write @len bytes from
 * mem+@local_off to (@rkey, @raddr), or RDMA Read them into mem+@local_off,
 * and wait for the completion.  Returns RAW_WAIT_COMPLETION with *@status
 * the work completion's status (IBV_WC_SUCCESS, IBV_WC_REM_ACCESS_ERR...),
 * or why no completion came.
 */
enum raw_wait raw_peer_rdma_write(struct raw_peer *p, uint32_t local_off, uint32_t len,
				  uint32_t rkey, uint64_t raddr, int timeout_ms,
				  enum ibv_wc_status *status);
enum raw_wait raw_peer_rdma_read(struct raw_peer *p, uint32_t local_off, uint32_t len,
				 uint32_t rkey, uint64_t raddr, int timeout_ms,
				 enum ibv_wc_status *status);

/* Process pending rdma_cm events without waiting; true once disconnected. */
bool raw_peer_poll_cm(struct raw_peer *p);

/* Wait up to @timeout_ms for the peer to disconnect; true if it did. */
bool raw_peer_wait_disconnect(struct raw_peer *p, int timeout_ms);

/* ---- big-endian writer ------------------------------------------------------------- */

struct raw_xdr {
	uint8_t *buf;
	size_t cap;
	size_t len;
	bool overflow; /* something did not fit; len stops at cap */
};

void raw_xdr_init(struct raw_xdr *x, void *buf, size_t cap);
void raw_xdr_u32(struct raw_xdr *x, uint32_t v);
void raw_xdr_u64(struct raw_xdr *x, uint64_t v);
void raw_xdr_bytes(struct raw_xdr *x, const void *data, size_t len); /* no length, no pad */
void raw_xdr_opaque(struct raw_xdr *x, const void *data, uint32_t len); /* length, data, pad */

/* RPC-over-RDMA (RFC 8166 section 4): any values, wrong ones included. */
void raw_xdr_rdma_hdr(struct raw_xdr *x, uint32_t xid, uint32_t vers, uint32_t credits,
		      uint32_t type);
void raw_xdr_segment(struct raw_xdr *x, uint32_t handle, uint32_t length, uint64_t offset);
/* One read list entry: discriminator 1, position, segment. */
void raw_xdr_read_entry(struct raw_xdr *x, uint32_t position, uint32_t handle, uint32_t length,
			uint64_t offset);
/* Write list entry or reply chunk opening: discriminator 1 and @nsegs (then segments). */
void raw_xdr_chunk_open(struct raw_xdr *x, uint32_t nsegs);
/* The "no more entries" / "no reply chunk" discriminator 0. */
void raw_xdr_list_end(struct raw_xdr *x);
/* An RDMA_MSG/NOMSG header with empty read list, write list and no reply chunk. */
void raw_xdr_rdma_msg_plain(struct raw_xdr *x, uint32_t xid, uint32_t credits, uint32_t type);

/* ONC RPC (RFC 5531): a CALL with AUTH_NONE credential and verifier. */
void raw_xdr_rpc_call(struct raw_xdr *x, uint32_t xid, uint32_t prog, uint32_t vers,
		      uint32_t proc);
/* A REPLY, MSG_ACCEPTED, AUTH_NONE verifier, then @accept_stat. */
void raw_xdr_rpc_reply_accepted(struct raw_xdr *x, uint32_t xid, uint32_t accept_stat);

/*
 * raw_peer_send_void - post an RDMA_MSG (no chunks) asking for @credits
 * that carries a call of @prog version 1 procedure @proc with no
 * arguments (AUTH_NONE); raw_peer_send_null is procedure 0.  Returns
 * true when it was posted.
 */
bool raw_peer_send_void(struct raw_peer *p, uint32_t xid, uint32_t prog, uint32_t proc,
			uint32_t credits);
bool raw_peer_send_null(struct raw_peer *p, uint32_t xid, uint32_t prog, uint32_t credits);
/* @m (@len bytes) is an RDMA_MSG without chunks carrying an accepted, successful reply to @xid. */
bool raw_null_reply_ok(const uint8_t *m, uint32_t len, uint32_t xid);

/* RFC 8797 private data: format identifier, version, flags, size codes (size = (code+1) KiB). */
#define RAW_PD_FORMAT_ID 0xf6ab0e18u
void raw_pd_rfc8797(uint8_t out[8], uint8_t version, uint8_t flags, uint8_t send_code,
		    uint8_t recv_code);

/* ---- big-endian reader -------------------------------------------------------------- */

struct raw_rd {
	const uint8_t *p;
	size_t len;
	size_t pos;
	bool short_read; /* a read went past the end; values read then are 0 */
};

void raw_rd_init(struct raw_rd *r, const void *p, size_t len);
uint32_t raw_rd_u32(struct raw_rd *r);
uint64_t raw_rd_u64(struct raw_rd *r);

#endif
