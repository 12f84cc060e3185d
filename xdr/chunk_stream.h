/*
 * A chunk-aware XDR stream: a libtirpc XDR with its own x_ops, so an RPC
 * program's unchanged xdr routines (rpcgen output) marshal straight into
 * RPC-over-RDMA form.
 *
 * DDP-eligible items (RFC 8166 section 6) are named by the upper-layer
 * binding as ordinals among the non-empty opaque items (xdr_bytes,
 * xdr_opaque, xdr_string data) of a procedure's arguments or results:
 * bit k-1 of a mask is the k-th such item.  libtirpc's xdr_opaque emits
 * an item's data and then its roundup as two separate byte runs; the
 * stream recognises the second as padding, so padding never counts as an
 * item.  Zero-length opaques emit nothing and are not counted.
 *
 * Encoding: every byte goes to the inline buffer except the data and
 * roundup of eligible items of at least ddp_min bytes, which are recorded
 * (position, length, pointer to the caller's bytes) and left in place.
 * Positions are offsets in the complete XDR stream (RFC 5666 section 3.7).
 * The inline buffer is then exactly the reduced message.
 *
 * Decoding: inline bytes come from the buffer; the data of each eligible
 * item comes from the next chunk (a write chunk's data on the client)
 * when that chunk's length equals the item's; a chunk the peer left
 * empty means the item travelled inline.
 */
#ifndef RPCRDMA_XDR_CHUNK_STREAM_H
#define RPCRDMA_XDR_CHUNK_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include <rpc/rpc.h>

#define RPCRDMA_XDR_MAX_ITEMS 16u

enum rpcrdma_xdr_status {
	RPCRDMA_XDR_OK = 0,
	RPCRDMA_XDR_NO_SPACE,        /* encode: inline buffer full */
	RPCRDMA_XDR_SHORT,           /* decode: inline bytes exhausted */
	RPCRDMA_XDR_CHUNK_MISMATCH,  /* decode: item length differs from its chunk's (and its roundup) */
	RPCRDMA_XDR_BAD_SETPOS,      /* repositioning back across an opaque item, or beyond the furthest position */
};

struct rpcrdma_xdr_item {
	uint32_t position; /* of the data, in the complete XDR stream */
	uint32_t length;   /* data bytes, without roundup (decoding: or with it, RFC 5666) */
	const uint8_t *data;
};

struct rpcrdma_xdr_stream {
	XDR xdr; /* hand &stream.xdr to the xdr routines */
	uint8_t *buf;
	uint32_t cap;         /* encode: buffer size; decode: inline bytes */
	uint32_t off;         /* inline bytes written or consumed */
	uint32_t pos;         /* position in the complete XDR stream */
	uint32_t ddp_mask;
	uint32_t ddp_min;
	uint32_t ordinal;     /* non-empty opaque items seen */
	uint32_t pad_expected;/* roundup length of the item just seen, 0 if none */
	bool pad_external;    /* that item was chunked: its roundup is not inline */
	uint32_t nitems;      /* encode: items recorded; decode: chunks given */
	uint32_t next_item;   /* decode: next chunk to use */
	uint32_t floor;       /* setpos may not go below the end of the last opaque item */
	uint32_t top;         /* ...nor beyond the furthest position reached since it */
	enum rpcrdma_xdr_status status;
	struct rpcrdma_xdr_item items[RPCRDMA_XDR_MAX_ITEMS];
};

/*
 * rpcrdma_xdr_encode_init - encode into @buf, whose first @start bytes
 * already hold the RPC header: inline bytes continue at @start, and
 * positions count from the start of the message.
 */
void rpcrdma_xdr_encode_init(struct rpcrdma_xdr_stream *s, uint8_t *buf, uint32_t cap,
			     uint32_t start, uint32_t ddp_mask, uint32_t ddp_min);

/*
 * rpcrdma_xdr_decode_init - decode the inline bytes @buf[@start..@len),
 * taking eligible items' data from @chunks in order.
 */
void rpcrdma_xdr_decode_init(struct rpcrdma_xdr_stream *s, const uint8_t *buf, uint32_t len,
			     uint32_t start, uint32_t ddp_mask,
			     const struct rpcrdma_xdr_item *chunks, uint32_t nchunks);

const char *rpcrdma_xdr_status_str(enum rpcrdma_xdr_status status);

#endif
