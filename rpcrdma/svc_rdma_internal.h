/*
 * What the server transport's files share: svc_rdma.c (the listener and
 * connection SVCXPRTs, xp_recv and CCP), svc_rdma_recvfrom.c (receives,
 * RDMA Reads, the calls taken) and svc_rdma_sendto.c (replies).  A
 * connection is used by the single svc_run() thread.
 */
#ifndef RPCRDMA_SVC_RDMA_INTERNAL_H
#define RPCRDMA_SVC_RDMA_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/rpc.h>
#include <rpc/svc_mt.h>

#include "rpcrdma/credits.h"
#include "rpcrdma/reply_buffers.h"
#include "rpcrdma/svc_ulbs.h"
#include "rpcrdma/transport.h"
#include "xdr/header.h"

#define SVC_WC_BATCH      16
#define SVC_REPLY_KEEP    (256u << 10)            /* idle reply buffers kept per connection */
#define SVC_REPLY_KEEP_ONE (2u << 20)             /* ...and one up to this (a 1 MiB result's) over it */
#define SVC_SINK_KEEP     (1u << 20)              /* idle Read sinks kept per connection (IB/RoCE) */
#define SVC_REPLIES_MAX   8u                      /* replies in flight per connection */
#define SVC_CALLS_MAX     SVC_REPLIES_MAX         /* calls taken (assembled or served) per connection */
#define SVC_RD_BYTES      (2u << 20)              /* Read-sink bytes before taking no more calls */
#define SVC_SENDS_HELD    RPCRDMA_REPLY_BATCH_MAX /* reply Sends held, at most (opts.reply_batch) */
#define SVC_ROUND_CALLS   16u                     /* calls dispatched before svc_run serves the others */
#define SVC_ACCEPT_BURST  16u                     /* connect requests taken before svc_run serves the others */
#define SVC_LINGER_MS     1000                    /* a connection destroyed by its dispatch routine waits for its replies' Sends */

/* One received call, from its message to its reply. */
struct svc_rdma_call {
	struct rpcrdma_header hdr;
	uint32_t recv_index;       /* its receive buffer, posted again when the call ends */
	bool have_recv;
	bool inv;                  /* its reply Send invalidates inv_rkey */
	uint32_t inv_rkey;
	const uint8_t *inl;        /* the received message's bytes after the header */
	uint32_t pull_next;        /* the next read segment to post */
	uint32_t pull_done;        /* its bytes posted already (a position-zero one is read in pieces) */
	uint32_t pull_at;          /* the next position-zero byte, or the next place in a data chunk */
	uint32_t pull_pos;         /* the data chunk being read: its position */
	uint32_t pz_segs;          /* read segments at position zero (the first ones) */
	uint32_t reads_pending;    /* its RDMA Reads posted, not completed */
	uint32_t msg_len, total;
	uint8_t *rd_buf;           /* the Read sink: the rebuilt call */
	size_t rd_len;
	uint32_t rd_lkey;
	struct ibv_mr *rd_mr;      /* iWARP: the sink's own registration, until its Reads are done */
	struct rpcrdma_replybuf *rd_pooled; /* IB/RoCE: the sink, from the connection's pool */
	const uint8_t *call;       /* the complete call, once assembled */
	uint32_t call_len, args_off;
	rpcprog_t prog;
	rpcvers_t vers;
	rpcproc_t proc;
	enum_t flavor;             /* of its credential: DDP only where it cannot wrap the body */
};

/* The reply being built (one per connection: replies are built one at a time). */
struct svc_rdma_reply {
	struct rpcrdma_xdr_stream s;
	struct rpcrdma_reply_plan plan;
	struct rpcrdma_header out;
	struct rpcrdma_replybuf *buf; /* header and inline body, then the bytes to RDMA Write */
	uint8_t *data;                /* the next free byte after the header area */
	uint8_t *wdata[RPCRDMA_MAX_WRITE_CHUNKS + 1]; /* each chunk's bytes; the last: reply chunk */
};

struct svc_rdma_half_open;

struct svc_rdma_conn {
	SVCXPRT xprt;
	SVCXPRT_EXT ext;
	struct rpcrdma_ep *ep;
	int epfd;                  /* xp_fd: completions, cm events and yield_fd */
	int yield_fd;              /* an eventfd: readable while a yielded round's calls wait */
	bool yielded;
	uint32_t round_calls;      /* dispatched since xp_stat last said XPRT_IDLE */
	struct rpcrdma_options opts;
	struct svc_ulbs *ulbs;     /* the listener's bindings (a reference) */
	struct rpcrdma_credits_server credits;
	struct sockaddr_storage raddr, laddr;
	char netid[8];
	bool dead;
	bool more;                 /* the last poll filled its batch */
	bool blocked;              /* xp_recv waits for completions: Reads, or room for a reply */
	struct rpcrdma_wc *queue;  /* receives not yet taken */
	uint32_t qhead, qcount, qcap;
	uint32_t reads_pending;    /* RDMA Reads posted, not completed */
	uint32_t max_reads;        /* RDMA Reads we may have outstanding: ORD, or less after CCP */
	uint32_t inline_send;      /* largest inline reply: private data, then CCP */
	uint32_t inline_recv;      /* largest inline call the client was offered: likewise */
	uint32_t send_cap;         /* transport header and inline reply */
	struct rpcrdma_replybufs replies;
	struct rpcrdma_replybufs sinks;  /* Read sinks, on IB/RoCE only (sinks_pooled) */
	bool sinks_pooled;
	uint8_t *stage;            /* reply marshalling, max_rpc_size */
	/* calls taken, oldest first: assembled together, dispatched in order */
	struct svc_rdma_call *calls; /* SVC_CALLS_MAX */
	uint32_t chead, ccount;
	uint64_t rd_bytes;         /* the calls' Read sinks */
	bool in_call;              /* the oldest call is dispatched */
	bool dispatching;          /* xp_recv gave libtirpc a call; its xp_stat comes next */
	bool closing;              /* destroyed while dispatching: lingers for its replies */
	bool lingering;            /* closing, timer_fd armed for SVC_LINGER_MS */
	int timer_fd;              /* a timerfd in epfd: the half-open deadline, then the linger */
	struct svc_rdma_reply *reply; /* the reply being built */
	/*
	 * Reply Sends not posted yet: while more calls wait to be served,
	 * their replies go out together (one doorbell, and the client's
	 * completion event finds them all).  Each holds a send-queue slot
	 * (svc_rdma_send_room); they are posted when no call waits, before
	 * any Read and at xp_stat's XPRT_IDLE, so none outlives a burst.
	 */
	struct rpcrdma_send held[SVC_SENDS_HELD];
	uint32_t nheld;
	/* accepted, ESTABLISHED not yet seen: on its listener's half-open list */
	bool half_open;
	struct svc_rdma_half_open *half_open_list; /* the listener's (a reference) */
	int64_t open_deadline;         /* rpcrdma_now_ms() by which it must be ESTABLISHED */
	struct svc_rdma_conn *ho_prev, *ho_next; /* the list, oldest first */
};

static inline struct svc_rdma_conn *conn_of(SVCXPRT *xprt)
{
	return (struct svc_rdma_conn *)xprt->xp_p1;
}

/* More calls wait to be served than the one dispatched (xp_stat's XPRT_MOREREQS). */
static inline bool svc_rdma_more_calls(const struct svc_rdma_conn *c)
{
	return c->qcount || c->more || c->ccount > (c->in_call ? 1u : 0u);
}

/* Send-queue slots free for new work requests: the held Sends' are taken. */
static inline uint32_t svc_rdma_send_room(const struct svc_rdma_conn *c)
{
	uint32_t free = rpcrdma_ep_send_free(c->ep);

	return free > c->nheld ? free - c->nheld : 0;
}

/* The call served next: the oldest taken. */
static inline struct svc_rdma_call *svc_rdma_oldest(struct svc_rdma_conn *c)
{
	return &c->calls[c->chead];
}

/* ---- svc_rdma_recvfrom.c ---- */

/* Poll until the completion queue is empty.  Returns 0 or -1 when the connection died. */
int svc_rdma_poll_all(struct svc_rdma_conn *c);
/* Take received messages into call slots while a reply buffer and a Send are sure for each. */
void svc_rdma_take_msgs(struct svc_rdma_conn *c);
/*
 * Give up @c: svc_run() destroys it at its next look (XPRT_DIED).  @why
 * and @err (0: none) are what RPCRDMA_DEBUG prints, for the first call
 * only: the later ones follow from it.
 */
void svc_rdma_conn_kill(struct svc_rdma_conn *c, const char *why, int err);
/* Post Reads for the calls taken, oldest first.  Returns 0 or -1 when the connection died. */
int svc_rdma_pull_all(struct svc_rdma_conn *c);
/* TRUE when @cl is complete in memory and its reply has room in the send queue. */
bool svc_rdma_call_ready(struct svc_rdma_conn *c, struct svc_rdma_call *cl);
/* The complete call's RPC header; FALSE when it does not decode or its XID differs. */
bool_t svc_rdma_decode_call(struct svc_rdma_call *cl, struct rpc_msg *msg);
/* Free @cl's Read sink; no Read may still be writing it. */
void svc_rdma_call_release(struct svc_rdma_conn *c, struct svc_rdma_call *cl);
/* Free what @cl holds and give its receive back; again is harmless. */
void svc_rdma_call_end(struct svc_rdma_conn *c, struct svc_rdma_call *cl);
/* End the oldest call; the next becomes the oldest. */
void svc_rdma_oldest_done(struct svc_rdma_conn *c);

/* ---- svc_rdma_sendto.c ---- */

/*
 * Post the held reply Sends.  Returns 0, or -EIO when the post failed
 * (the connection is killed).
 */
int svc_rdma_sends_flush(struct svc_rdma_conn *c);
/*
 * Answer RDMA_ERROR (ERR_VERS or ERR_CHUNK) for @xid and end @cl.  An
 * ERR_VERS carries the version of the request decoded into @cl->hdr.
 */
void svc_rdma_send_error(struct svc_rdma_conn *c, struct svc_rdma_call *cl, uint32_t xid,
			 uint32_t requested, enum rpcrdma_errcode err);
/*
 * Answer the oldest call and end it.  @auth wraps successful results
 * (SVCAUTH_WRAP), or NULL: they go as the procedure encodes them.
 * Returns TRUE when @msg was sent; FALSE when there was no call to
 * answer, the connection died, the reply did not fit the client's
 * chunks (answered ERR_CHUNK), or its results could not be marshalled
 * or given a reply buffer (answered SYSTEM_ERR; the connection ends when
 * even that finds no buffer).
 */
bool_t svc_rdma_reply_auth(struct svc_rdma_conn *c, struct rpc_msg *msg, SVCAUTH *auth);
/* xp_reply: svc_rdma_reply_auth with the credential libtirpc authenticated. */
bool_t svc_rdma_reply(SVCXPRT *xprt, struct rpc_msg *msg);

#endif
