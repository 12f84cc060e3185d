/*
 * The RPC-over-RDMA version 1 transport header (RFC 5666 section 4,
 * RFC 8166 section 4): encoder, bounded decoder and the builders the
 * transport uses to assemble chunk lists.  The decoder is the single
 * place where a peer's header is validated; everything after it may
 * trust a decoded struct rpcrdma_header.
 */
#ifndef RPCRDMA_XDR_HEADER_H
#define RPCRDMA_XDR_HEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xdr/wire.h"

enum rpcrdma_hdr_status {
	RPCRDMA_HDR_OK = 0,
	RPCRDMA_HDR_SHORT,                /* buffer ends inside the header */
	RPCRDMA_HDR_BAD_VERSION,          /* rdma_vers != 1: answer ERR_VERS */
	RPCRDMA_HDR_BAD_TYPE,             /* rdma_type is not one of the five */
	RPCRDMA_HDR_BAD_DISCRIMINATOR,    /* an optional-data word is neither 0 nor 1 */
	RPCRDMA_HDR_TOO_MANY_READS,       /* read list longer than the limit */
	RPCRDMA_HDR_TOO_MANY_WRITE_CHUNKS,
	RPCRDMA_HDR_TOO_MANY_SEGMENTS,    /* per chunk or in total */
	RPCRDMA_HDR_LENGTH_OVERFLOW,      /* a chunk's lengths sum past 2^32 - 1 */
	RPCRDMA_HDR_SEGMENT_WRAPS,        /* offset + length wraps past 2^64 */
	RPCRDMA_HDR_MISALIGNED_POSITION,  /* read position not a multiple of 4 */
	RPCRDMA_HDR_POSITION_ORDER,       /* read chunks unsorted or overlapping */
	RPCRDMA_HDR_POSITION_BEYOND,      /* read chunk starts past the message */
	RPCRDMA_HDR_POSITION_ZERO_INLINE, /* position-zero chunk beside an inline message */
	RPCRDMA_HDR_BAD_ALIGN,            /* RDMA_MSGP rdma_align not 0 or a power of two */
	RPCRDMA_HDR_NO_MESSAGE,           /* RDMA_MSG(P) without an RPC message behind it */
	RPCRDMA_HDR_XID_MISMATCH,         /* RPC message XID differs from rdma_xid */
	RPCRDMA_HDR_TRAILING_BYTES,       /* bytes after RDMA_NOMSG, RDMA_DONE or RDMA_ERROR */
	RPCRDMA_HDR_NO_SPACE,             /* encode: output buffer too small */
	RPCRDMA_HDR_FULL,                 /* builder: compile-time capacity reached */
};

/*
 * Runtime caps on what a decoded header may hold.  Values above the
 * compile-time capacity in xdr/wire.h are clamped to it.
 */
struct rpcrdma_header_limits {
	uint32_t max_reads;        /* read segments in the read list */
	uint32_t max_write_chunks; /* chunks in the write list */
	uint32_t max_chunk_segs;   /* segments in one write chunk or the reply chunk */
	uint32_t max_segs;         /* segments in all write chunks and the reply chunk */
};

extern const struct rpcrdma_header_limits rpcrdma_header_default_limits;

const char *rpcrdma_hdr_status_str(enum rpcrdma_hdr_status status);

/*
 * rpcrdma_header_decode - validate and decode one transport header
 * @h: output; on RPCRDMA_HDR_BAD_VERSION xid, vers, credit and type are
 *     set, and err, vers_low and vers_high when it is an ERR_VERS error
 * @buf, @len: the whole received message (header and what follows)
 * @limits: caps, or NULL for rpcrdma_header_default_limits
 * @hdr_len: output, bytes taken by the header; the RPC message of an
 *           RDMA_MSG or RDMA_MSGP starts there
 *
 * Returns RPCRDMA_HDR_OK or the first violation found.  Never reads
 * outside @buf.
 */
enum rpcrdma_hdr_status rpcrdma_header_decode(struct rpcrdma_header *h,
					      const uint8_t *buf, size_t len,
					      const struct rpcrdma_header_limits *limits,
					      size_t *hdr_len);

/* Bytes rpcrdma_header_encode() writes for @h. */
size_t rpcrdma_header_encoded_size(const struct rpcrdma_header *h);

/*
 * rpcrdma_header_encode - write @h in wire form
 * Returns RPCRDMA_HDR_OK, RPCRDMA_HDR_NO_SPACE when @cap is too small,
 * or RPCRDMA_HDR_BAD_TYPE for a type that cannot be encoded.
 */
enum rpcrdma_hdr_status rpcrdma_header_encode(const struct rpcrdma_header *h,
					      uint8_t *buf, size_t cap,
					      size_t *len);

/* Builders: start a header, then add chunks in wire order. */
void rpcrdma_header_init(struct rpcrdma_header *h, uint32_t xid,
			 uint32_t credit, enum rpcrdma_msg_type type);
enum rpcrdma_hdr_status rpcrdma_header_add_read(struct rpcrdma_header *h,
						uint32_t position,
						const struct rpcrdma_segment *seg);
enum rpcrdma_hdr_status rpcrdma_header_add_write_chunk(struct rpcrdma_header *h,
						       const struct rpcrdma_segment *segs,
						       uint32_t nsegs);
enum rpcrdma_hdr_status rpcrdma_header_set_reply_chunk(struct rpcrdma_header *h,
						       const struct rpcrdma_segment *segs,
						       uint32_t nsegs);
/* @vers: the refused request's rdma_vers, which the answer carries (RFC 8166 section 4.5). */
void rpcrdma_header_init_err_vers(struct rpcrdma_header *h, uint32_t xid, uint32_t vers,
				  uint32_t credit);
void rpcrdma_header_init_err_chunk(struct rpcrdma_header *h, uint32_t xid,
				   uint32_t credit);

/* Sum of the segment lengths of @c (fits: the decoder rejects overflow). */
uint32_t rpcrdma_chunk_length(const struct rpcrdma_header *h,
			      const struct rpcrdma_chunk *c);

/*
 * One chunk of a read list: the read segments sharing a position (RFC
 * 8166 section 3.4.5; the decoder checked they are sorted), walked as
 *     for (uint32_t i = 0; i < h->nreads;) { rc = rpcrdma_read_chunk_next(h, &i); ... }
 */
struct rpcrdma_read_chunk {
	uint32_t position;
	uint64_t length; /* its segments' lengths summed */
};

/* The read chunk that starts at read entry *@i (below h->nreads); *@i moves past it. */
struct rpcrdma_read_chunk rpcrdma_read_chunk_next(const struct rpcrdma_header *h, uint32_t *i);

/*
 * rpcrdma_chunk_echo_fits - whether chunk @got of reply @h is a true
 * account of what the responder wrote into chunk @offered of call @sent:
 * no more segments than offered, none longer than its offered one, and
 * data only in a run from the chunk's start (every segment before one
 * with data full), since the requester reads the chunk as one run.
 */
bool rpcrdma_chunk_echo_fits(const struct rpcrdma_header *h, const struct rpcrdma_chunk *got,
			     const struct rpcrdma_header *sent,
			     const struct rpcrdma_chunk *offered);

#endif
