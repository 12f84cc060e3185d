/*
 * Chunk planning (RFC 8166 sections 3.4-3.5, RFC 5666 section 3.7):
 * given a marshalled RPC message, the DDP-eligible items in it and the
 * negotiated limits, decide how the message travels and lay out every
 * chunk.  Pure arithmetic over offsets into the message's XDR stream;
 * the transport maps those offsets to registered memory.
 *
 * Calls: inline RDMA_MSG; RDMA_MSG with read chunks at the items' XDR
 * positions; or, when even the reduced message is too long, RDMA_NOMSG
 * with the reduced message as a position-zero read chunk.  The client
 * also offers write chunks for DDP-eligible results and a reply chunk
 * when the reply may exceed the inline threshold.
 * Replies: results into the offered write chunks, the rest inline or,
 * when too long, into the reply chunk as RDMA_NOMSG; otherwise ERR_CHUNK.
 *
 * A chunked item leaves the inline stream together with its XDR
 * roundup; a chunk's length never includes roundup, and positions count
 * it (they are offsets in the complete XDR stream).
 */
#ifndef RPCRDMA_CHUNK_PLAN_H
#define RPCRDMA_CHUNK_PLAN_H

#include <stdint.h>

#include "xdr/wire.h"

enum rpcrdma_plan_status {
	RPCRDMA_PLAN_OK = 0,
	RPCRDMA_PLAN_BAD_LIMITS,            /* a zero segment size or segment count */
	RPCRDMA_PLAN_BAD_ITEM,              /* item unaligned, unsorted, overlapping or outside */
	RPCRDMA_PLAN_TOO_MANY_SEGMENTS,     /* more segments than the limits allow */
	RPCRDMA_PLAN_TOO_MANY_CHUNKS,       /* more write chunks than the limits allow */
	RPCRDMA_PLAN_HEADER_TOO_LARGE,      /* the chunk lists alone exceed the inline threshold */
	RPCRDMA_PLAN_WRITE_CHUNK_TOO_SMALL, /* a result longer than its write chunk: ERR_CHUNK */
	RPCRDMA_PLAN_REPLY_TOO_LARGE,       /* no room inline nor in a reply chunk: ERR_CHUNK */
};

struct rpcrdma_plan_limits {
	uint32_t inline_send;      /* threshold for what we send */
	uint32_t inline_recv;      /* threshold for what the peer sends us */
	uint32_t ddp_threshold;    /* smaller DDP-eligible items stay inline */
	uint32_t max_seg_bytes;    /* largest segment registration allows */
	uint32_t max_chunk_segs;   /* segments in one write or reply chunk */
	uint32_t max_read_segs;    /* segments in the read list */
	uint32_t max_write_chunks;
};

/* A DDP-eligible data item in an XDR stream (data only, no length word, no roundup). */
struct rpcrdma_ddp_item {
	uint32_t offset; /* multiple of 4 */
	uint32_t length;
};

/* Bytes [offset, offset + length) of the XDR stream. */
struct rpcrdma_range {
	uint32_t offset;
	uint32_t length;
};

struct rpcrdma_plan_read {
	uint32_t position;
	struct rpcrdma_range src;
};

/* A chunk the client offers: @length bytes in @nsegs segments of max_seg_bytes. */
struct rpcrdma_plan_chunk {
	uint32_t length;
	uint32_t nsegs;
};

#define RPCRDMA_PLAN_MAX_RANGES (RPCRDMA_MAX_READ_SEGS + 1)

struct rpcrdma_call_desc {
	uint32_t xdr_len;                     /* the whole marshalled call */
	const struct rpcrdma_ddp_item *args;  /* DDP-eligible arguments, by offset */
	uint32_t nargs;
	const uint32_t *result_max;           /* DDP-eligible results: largest length each */
	uint32_t nresults;
	uint32_t reply_max;                   /* largest reply without those results' data */
};

struct rpcrdma_call_plan {
	enum rpcrdma_msg_type type;           /* RDMA_MSG or RDMA_NOMSG */
	uint32_t header_len;                  /* transport header bytes */
	uint32_t inline_len;                  /* RPC bytes sent after the header */
	uint32_t nranges;                     /* the reduced stream: inline or position zero */
	struct rpcrdma_range ranges[RPCRDMA_PLAN_MAX_RANGES];
	uint32_t nreads;
	struct rpcrdma_plan_read reads[RPCRDMA_MAX_READ_SEGS];
	uint32_t nwrites;
	struct rpcrdma_plan_chunk writes[RPCRDMA_MAX_WRITE_CHUNKS];
	uint32_t has_reply;
	struct rpcrdma_plan_chunk reply;
};

/* What the client offered, from the decoded call header. */
struct rpcrdma_offered_chunks {
	uint32_t nwrites;
	uint32_t write_len[RPCRDMA_MAX_WRITE_CHUNKS];
	uint32_t write_segs[RPCRDMA_MAX_WRITE_CHUNKS];
	uint32_t has_reply;
	uint32_t reply_len;
	uint32_t reply_segs;
};

struct rpcrdma_reply_desc {
	uint32_t xdr_len;                        /* the whole marshalled reply */
	const struct rpcrdma_ddp_item *results;  /* DDP-eligible results, by offset */
	uint32_t nresults;
};

struct rpcrdma_reply_plan {
	enum rpcrdma_msg_type type;                 /* RDMA_MSG or RDMA_NOMSG */
	uint32_t header_len;
	uint32_t body_len;                          /* reduced reply: inline or in the reply chunk */
	uint32_t nranges;
	struct rpcrdma_range ranges[RPCRDMA_MAX_WRITE_CHUNKS + 1];
	uint32_t nwrites;                           /* = offered, all echoed */
	struct rpcrdma_range writes[RPCRDMA_MAX_WRITE_CHUNKS]; /* source of each chunk's data; length 0 if unused */
};

const char *rpcrdma_plan_status_str(enum rpcrdma_plan_status status);

/*
 * rpcrdma_plan_call - lay out a call and the chunks for its reply
 * Returns RPCRDMA_PLAN_OK, RPCRDMA_PLAN_BAD_LIMITS, RPCRDMA_PLAN_BAD_ITEM,
 * RPCRDMA_PLAN_TOO_MANY_SEGMENTS, RPCRDMA_PLAN_TOO_MANY_CHUNKS or
 * RPCRDMA_PLAN_HEADER_TOO_LARGE.
 */
enum rpcrdma_plan_status rpcrdma_plan_call(const struct rpcrdma_call_desc *call,
					   const struct rpcrdma_plan_limits *lim,
					   struct rpcrdma_call_plan *plan);

/*
 * rpcrdma_plan_reply - lay out a reply within what the call offered
 * @inline_send: the server's inline threshold toward the client
 * Returns RPCRDMA_PLAN_OK, RPCRDMA_PLAN_BAD_ITEM,
 * RPCRDMA_PLAN_WRITE_CHUNK_TOO_SMALL or RPCRDMA_PLAN_REPLY_TOO_LARGE
 * (the last two: answer RDMA_ERROR ERR_CHUNK).
 */
enum rpcrdma_plan_status rpcrdma_plan_reply(const struct rpcrdma_reply_desc *reply,
					    const struct rpcrdma_offered_chunks *offered,
					    uint32_t inline_send,
					    struct rpcrdma_reply_plan *plan);

/*
 * rpcrdma_plan_fill_segments - the lengths to echo for a chunk the
 * responder wrote @bytes into: segments fill in order.
 * @segs: the offered segments, updated in place
 */
void rpcrdma_plan_fill_segments(struct rpcrdma_segment *segs, uint32_t nsegs,
				uint32_t bytes);

#endif
