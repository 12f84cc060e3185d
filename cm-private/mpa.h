/*
 * MPA revision 2 (RFC 6581) connection data: the 32-bit enhanced RDMA
 * connection establishment data (A, B, C, D flags, 14-bit IRD and ORD),
 * the MPA request/reply frame that carries it (RFC 5044 section 7.1,
 * RFC 6581 section 6), and the IRD/ORD policy of RFC 6581 section 9.1.
 *
 * rdma_cm performs the MPA exchange on iWARP; the transport hands the
 * depths chosen here to rdma_cm as responder_resources (IRD) and
 * initiator_depth (ORD).  The frame decoder exists for tests and
 * diagnostics that read captured connection setup.
 */
#ifndef RPCRDMA_CM_MPA_H
#define RPCRDMA_CM_MPA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPCRDMA_MPA_ENHANCED_BYTES 4u
#define RPCRDMA_MPA_DEPTH_MASK     0x3fffu
/* "The ULP negotiates this itself": leave the local value unchanged. */
#define RPCRDMA_MPA_DEPTH_NO_AUTO  0x3fffu
#define RPCRDMA_MPA_KEY_BYTES      16u
#define RPCRDMA_MPA_HEADER_BYTES   20u
#define RPCRDMA_MPA_MAX_PD         512u

enum rpcrdma_mpa_status {
	RPCRDMA_MPA_OK = 0,
	RPCRDMA_MPA_SHORT,            /* buffer ends inside the item */
	RPCRDMA_MPA_DEPTH_RANGE,      /* encode: IRD or ORD above 0x3fff */
	RPCRDMA_MPA_BAD_KEY,          /* neither "MPA ID Req Frame" nor "MPA ID Rep Frame" */
	RPCRDMA_MPA_PD_TOO_LONG,      /* PD_Length above 512 */
	RPCRDMA_MPA_PD_TRUNCATED,     /* fewer private data octets than PD_Length */
	RPCRDMA_MPA_ENHANCED_MISSING, /* S set but private data shorter than 4 octets */
	RPCRDMA_MPA_INSUFFICIENT_IRD, /* the peer needs an IRD our device cannot give */
	RPCRDMA_MPA_BAD_REVISION,     /* Rev 0: no MPA revision */
};

/* The 32 bits at the start of an enhanced frame's private data. */
struct rpcrdma_mpa_enhanced {
	bool peer_to_peer; /* A */
	bool rtr_send;     /* B: zero-length Send RTR */
	bool rtr_write;    /* C: zero-length RDMA Write RTR */
	bool rtr_read;     /* D: zero-length RDMA Read RTR */
	uint16_t ird;
	uint16_t ord;
};

struct rpcrdma_mpa_frame {
	bool reply;     /* key was "MPA ID Rep Frame" */
	bool markers;   /* M */
	bool crc;       /* C */
	bool reject;    /* R */
	bool enhanced;  /* S, revision 2 or later */
	uint8_t revision;
	uint16_t pd_length;
	struct rpcrdma_mpa_enhanced ird_ord; /* valid when enhanced */
	const uint8_t *ulp_data;             /* private data after the enhanced data */
	size_t ulp_len;
	size_t frame_len;                    /* header plus private data */
};

/* A device's limits, from ibv_query_device(). */
struct rpcrdma_rd_limits {
	uint32_t max_qp_rd_atom;      /* inbound RDMA Reads one QP serves: caps IRD */
	uint32_t max_qp_init_rd_atom; /* outbound RDMA Reads one QP issues: caps ORD */
};

/* IRD = rdma_conn_param.responder_resources, ORD = .initiator_depth. */
struct rpcrdma_rd_depths {
	uint32_t ird;
	uint32_t ord;
};

/* What a responder uses locally and what its MPA reply says. */
struct rpcrdma_rd_choice {
	struct rpcrdma_rd_depths local;
	struct rpcrdma_rd_depths wire;
};

const char *rpcrdma_mpa_status_str(enum rpcrdma_mpa_status status);

/* Returns RPCRDMA_MPA_OK or RPCRDMA_MPA_DEPTH_RANGE; B, C and D are sent only with A. */
enum rpcrdma_mpa_status rpcrdma_mpa_enhanced_encode(const struct rpcrdma_mpa_enhanced *e,
						    uint8_t out[RPCRDMA_MPA_ENHANCED_BYTES]);
/* Returns RPCRDMA_MPA_OK or RPCRDMA_MPA_SHORT; B, C and D read false without A. */
enum rpcrdma_mpa_status rpcrdma_mpa_enhanced_decode(const uint8_t *buf, size_t len,
						    struct rpcrdma_mpa_enhanced *e);

/*
 * rpcrdma_mpa_frame_decode - parse an MPA request or reply frame
 * Returns RPCRDMA_MPA_OK, RPCRDMA_MPA_SHORT, RPCRDMA_MPA_BAD_KEY,
 * RPCRDMA_MPA_BAD_REVISION, RPCRDMA_MPA_PD_TOO_LONG,
 * RPCRDMA_MPA_PD_TRUNCATED or RPCRDMA_MPA_ENHANCED_MISSING.  Pointers
 * in @f point into @buf.
 */
enum rpcrdma_mpa_status rpcrdma_mpa_frame_decode(const uint8_t *buf, size_t len,
						 struct rpcrdma_mpa_frame *f);

/*
 * rpcrdma_rd_request - the initiator's IRD and ORD: what it wants,
 * capped by its device and to 14 bits.
 */
struct rpcrdma_rd_depths rpcrdma_rd_request(const struct rpcrdma_rd_limits *dev,
					    const struct rpcrdma_rd_depths *want);

/*
 * rpcrdma_rd_respond - the responder's choice (RFC 6581 section 9.1)
 * @dev: the responder's device limits
 * @want: the depths the responder's upper layer wants
 * @initiator: IRD and ORD from the request
 * Responder ORD never exceeds initiator IRD; responder IRD covers the
 * initiator ORD when the device allows.  0x3fff from the initiator
 * leaves the matching local value at @want and is echoed.
 * Returns RPCRDMA_MPA_OK, or RPCRDMA_MPA_INSUFFICIENT_IRD when the
 * device cannot match the initiator's ORD (the choice is still usable:
 * the initiator lowers its ORD to our IRD).
 */
enum rpcrdma_mpa_status rpcrdma_rd_respond(const struct rpcrdma_rd_limits *dev,
					   const struct rpcrdma_rd_depths *want,
					   const struct rpcrdma_rd_depths *initiator,
					   struct rpcrdma_rd_choice *out);

/*
 * rpcrdma_rd_respond_ib - the responder's choice on InfiniBand and RoCE:
 * as rpcrdma_rd_respond(), but our IRD never exceeds the initiator's ORD,
 * since the IB CM makes the REP's responder_resources the initiator's
 * ORD as it is (a larger one could pass its device's limit).  Returns
 * RPCRDMA_MPA_OK.
 */
enum rpcrdma_mpa_status rpcrdma_rd_respond_ib(const struct rpcrdma_rd_limits *dev,
					      const struct rpcrdma_rd_depths *want,
					      const struct rpcrdma_rd_depths *initiator,
					      struct rpcrdma_rd_choice *out);

/*
 * rpcrdma_rd_finish - the initiator's final depths from the reply:
 * ORD at most the responder's IRD, IRD at least the responder's ORD.
 * Returns RPCRDMA_MPA_OK, or RPCRDMA_MPA_INSUFFICIENT_IRD when the
 * responder's ORD exceeds what the device serves (RFC 6581: terminate
 * with error code 6).
 */
enum rpcrdma_mpa_status rpcrdma_rd_finish(const struct rpcrdma_rd_limits *dev,
					  const struct rpcrdma_rd_depths *requested,
					  const struct rpcrdma_rd_depths *responder,
					  struct rpcrdma_rd_depths *final);

#endif
