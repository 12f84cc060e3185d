/*
 * RPC-over-RDMA version 1 on the wire: every constant and wire-level
 * structure of RFC 5666 (updated by RFC 8166) sections 4 and 6, in one
 * place.  Codecs in xdr/ and cm-private/ use only these definitions;
 * nothing here does I/O.
 */
#ifndef RPCRDMA_XDR_WIRE_H
#define RPCRDMA_XDR_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#define RPCRDMA_VERSION 1u

/* RFC 8166 section 3.3.3: the inline threshold both peers can assume. */
#define RPCRDMA_DEFAULT_INLINE 1024u

/* Fixed words at the start of every transport header: xid, vers, credit, type. */
#define RPCRDMA_HDR_FIXED_BYTES 16u
#define RPCRDMA_SEGMENT_BYTES   16u /* handle, length, 64-bit offset */
#define RPCRDMA_READ_SEG_BYTES  24u /* discriminator, position, segment */

enum rpcrdma_msg_type {
	RDMA_MSG = 0,
	RDMA_NOMSG = 1,
	RDMA_MSGP = 2,
	RDMA_DONE = 3,
	RDMA_ERROR = 4,
};

enum rpcrdma_errcode {
	ERR_VERS = 1,
	ERR_CHUNK = 2,
};

/* RFC 5666 section 4.3: the "default" arm of rpc_rdma_error. */
#define RPCRDMA_ERROR_EXTRA_WORDS 8u

/* RFC 5666 section 6: Connection Configuration Protocol. */
#define RPCRDMA_CCP_PROGRAM 100417u
#define RPCRDMA_CCP_VERSION 1u
#define RPCRDMA_CCP_PROC_CONF_RDMA 1u

struct rpcrdma_segment {
	uint32_t handle;
	uint32_t length;
	uint64_t offset;
};

struct rpcrdma_read_segment {
	uint32_t position;
	struct rpcrdma_segment seg;
};

/* A write chunk or the reply chunk: a run of segments in the header's pool. */
struct rpcrdma_chunk {
	uint32_t first;
	uint32_t nsegs;
};

/*
 * Compile-time capacity of a decoded header.  Runtime limits
 * (struct rpcrdma_header_limits) may be lower, never higher.
 */
#define RPCRDMA_MAX_READ_SEGS    64u
#define RPCRDMA_MAX_WRITE_CHUNKS 16u
#define RPCRDMA_MAX_SEGS         256u /* write chunks and reply chunk together */

struct rpcrdma_header {
	uint32_t xid;
	uint32_t vers;
	uint32_t credit;
	uint32_t type; /* enum rpcrdma_msg_type, or the raw value when unknown */

	/* RDMA_MSGP */
	uint32_t align;
	uint32_t thresh;

	/* RDMA_ERROR */
	uint32_t err;
	uint32_t vers_low;
	uint32_t vers_high;
	uint32_t err_extra[RPCRDMA_ERROR_EXTRA_WORDS];

	/* RDMA_MSG, RDMA_NOMSG, RDMA_MSGP */
	uint32_t nreads;
	uint32_t nwrites;
	bool has_reply;
	struct rpcrdma_chunk writes[RPCRDMA_MAX_WRITE_CHUNKS];
	struct rpcrdma_chunk reply;
	uint32_t nsegs;
	struct rpcrdma_read_segment reads[RPCRDMA_MAX_READ_SEGS];
	struct rpcrdma_segment segs[RPCRDMA_MAX_SEGS];
};

/* RFC 5666 section 6 / CONFIG_RDMA_PROG. */
struct rpcrdma_config_req {
	uint32_t maxcall_sendsize;
	uint32_t maxreply_sendsize;
	uint32_t maxrdmaread;
};

struct rpcrdma_config_reply {
	uint32_t maxcall_sendsize;
	uint32_t align;
	uint32_t maxrdmaread;
};

#endif
