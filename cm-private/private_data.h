/*
 * RFC 8797 RPC-over-RDMA version 1 CM private data: the 8-octet message
 * each peer sends at connect and accept time, and the inline thresholds
 * and remote-invalidation setting that follow from the two messages.
 */
#ifndef RPCRDMA_CM_PRIVATE_DATA_H
#define RPCRDMA_CM_PRIVATE_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPCRDMA_PD_FORMAT_ID  0xf6ab0e18u
#define RPCRDMA_PD_VERSION    1u
#define RPCRDMA_PD_BYTES      8u
#define RPCRDMA_PD_MIN_INLINE 1024u
#define RPCRDMA_PD_MAX_INLINE 262144u
#define RPCRDMA_PD_FLAG_R     0x01u

struct rpcrdma_private_data {
	bool remote_invalidate;
	uint32_t send_size; /* bytes, 1024..262144 */
	uint32_t recv_size;
};

enum rpcrdma_pd_status {
	RPCRDMA_PD_OK = 0,
	RPCRDMA_PD_ABSENT,       /* peer sent no private data */
	RPCRDMA_PD_NO_FORMAT_ID, /* no 0xf6ab0e18 anywhere in it */
	RPCRDMA_PD_SHORT,        /* format identifier found, fewer than 8 octets from it */
	RPCRDMA_PD_BAD_VERSION,  /* a version other than 1 */
	RPCRDMA_PD_SIZE_RANGE,   /* encode: a size outside 1024..262144 */
};

/* What a connection uses after the exchange. */
struct rpcrdma_inline_params {
	uint32_t send;           /* our inline threshold toward the peer */
	uint32_t recv;           /* the peer's inline threshold toward us */
	bool remote_invalidate;  /* both peers set R */
};

const char *rpcrdma_pd_status_str(enum rpcrdma_pd_status status);

/*
 * rpcrdma_private_data_encode - write the 8-octet message into @out
 * Sizes that are not multiples of 1024 are rounded down (never
 * advertise more than the buffer holds).
 * Returns RPCRDMA_PD_OK or RPCRDMA_PD_SIZE_RANGE.
 */
enum rpcrdma_pd_status rpcrdma_private_data_encode(const struct rpcrdma_private_data *pd,
						   uint8_t out[RPCRDMA_PD_BYTES]);

/*
 * rpcrdma_private_data_decode - find and parse the message in a peer's
 * private data (RFC 8797 section 5.2: the format identifier may sit at
 * any offset, e.g. after MPA's enhanced data).  Trailing octets after
 * the 8 are ignored.
 * Returns RPCRDMA_PD_OK, RPCRDMA_PD_ABSENT, RPCRDMA_PD_NO_FORMAT_ID,
 * RPCRDMA_PD_SHORT or RPCRDMA_PD_BAD_VERSION; on anything but OK, @pd
 * holds the RFC 8797 section 5.1 defaults.
 */
enum rpcrdma_pd_status rpcrdma_private_data_decode(const uint8_t *buf, size_t len,
						   struct rpcrdma_private_data *pd);

/*
 * rpcrdma_private_data_negotiate - the thresholds one side uses
 * @local: what we sent (sizes taken as encoded: rounded down to whole KiB)
 * @peer: what we decoded (defaults when the peer sent nothing usable)
 */
struct rpcrdma_inline_params rpcrdma_private_data_negotiate(const struct rpcrdma_private_data *local,
							     const struct rpcrdma_private_data *peer);

#endif
