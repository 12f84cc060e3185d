/*
 * Connection Configuration Protocol negotiation (RFC 5666 section 6).
 * Until the CONF_RDMA reply arrives a client assumes one credit and
 * 1 KB inline (section 6.1); the reply sets its inline call size, the
 * server's recommended alignment and how many RDMA Reads it may have
 * outstanding toward the server, which never exceeds the ORD that
 * connection setup negotiated.  A server that does not offer CCP leaves
 * the RFC 8797 private-data values in force.
 */
#ifndef RPCRDMA_CM_CCP_NEGOTIATION_H
#define RPCRDMA_CM_CCP_NEGOTIATION_H

#include <stdbool.h>
#include <stdint.h>

#include "cm-private/mpa.h"
#include "cm-private/private_data.h"
#include "xdr/wire.h"

#define RPCRDMA_CCP_MAX_ALIGN 65536u

enum rpcrdma_ccp_status {
	RPCRDMA_CCP_OK = 0,
	RPCRDMA_CCP_BAD_SENDSIZE, /* an inline size below 1024 */
	RPCRDMA_CCP_BAD_ALIGN,    /* align neither 0 nor a power of two up to 65536 */
};

/* One side's own buffers and read depth. */
struct rpcrdma_ccp_local {
	uint32_t send_size; /* largest Send we can post */
	uint32_t recv_size; /* our posted receive buffers */
	uint32_t align;     /* server: recommended opaque alignment */
};

struct rpcrdma_ccp_client {
	bool configured;         /* a reply (or the fallback) has been applied */
	uint32_t inline_send;    /* largest inline call */
	uint32_t inline_recv;    /* largest inline reply we accept */
	uint32_t align;          /* server's recommended alignment, 0 for none */
	uint32_t max_rdma_reads; /* RDMA Reads we may have outstanding */
};

const char *rpcrdma_ccp_status_str(enum rpcrdma_ccp_status status);

/* Before the reply: one credit, 1 KB inline both ways, no RDMA Reads. */
void rpcrdma_ccp_client_init(struct rpcrdma_ccp_client *c);

/* The most calls a client may have outstanding: 1 until configured. */
uint32_t rpcrdma_ccp_client_credit_cap(const struct rpcrdma_ccp_client *c);

/* The CONF_RDMA argument: our sizes, and our IRD as maxrdmaread. */
struct rpcrdma_config_req rpcrdma_ccp_client_request(const struct rpcrdma_ccp_local *local,
						      const struct rpcrdma_rd_depths *negotiated);

/*
 * rpcrdma_ccp_client_apply - apply the server's CONF_RDMA result
 * @pd: what the RFC 8797 private data negotiated, NULL without it.  The
 * reply says how large a call the server takes, not how large a reply
 * it sends: its Send Size in the private data still caps our inline
 * replies, as the server keeps to it (CCP's maxreply_sendsize is a
 * ceiling for the server, not a promise), and its Receive Size caps our
 * inline calls as well as CCP's maxcall_sendsize (RFC 8797 4.2: the
 * private data's sizes are what Sends may count on).
 * Returns RPCRDMA_CCP_OK, or RPCRDMA_CCP_BAD_SENDSIZE /
 * RPCRDMA_CCP_BAD_ALIGN, in which case @c is unchanged.
 */
enum rpcrdma_ccp_status rpcrdma_ccp_client_apply(struct rpcrdma_ccp_client *c,
						 const struct rpcrdma_ccp_local *local,
						 const struct rpcrdma_config_reply *rep,
						 const struct rpcrdma_rd_depths *negotiated,
						 const struct rpcrdma_inline_params *pd);

/* The server does not offer CCP: use what the private data negotiated. */
void rpcrdma_ccp_client_fallback(struct rpcrdma_ccp_client *c,
				 const struct rpcrdma_inline_params *pd,
				 const struct rpcrdma_rd_depths *negotiated);

/* The server's CONF_RDMA result. */
struct rpcrdma_config_reply rpcrdma_ccp_server_reply(const struct rpcrdma_ccp_local *local,
						      const struct rpcrdma_rd_depths *negotiated);

/*
 * rpcrdma_ccp_server_apply - the server's inline reply size after a
 * client's CONF_RDMA argument: min(our send size, client's maxreply),
 * and never above the Send Size the RFC 8797 private data negotiated
 * (@pd, NULL without it), as the client keeps to it too
 * (rpcrdma_ccp_client_apply).
 * Returns RPCRDMA_CCP_OK, or RPCRDMA_CCP_BAD_SENDSIZE (and leaves
 * *@inline_send unchanged) when the client claims less than 1024.
 */
enum rpcrdma_ccp_status rpcrdma_ccp_server_apply(const struct rpcrdma_ccp_local *local,
						 const struct rpcrdma_config_req *req,
						 const struct rpcrdma_inline_params *pd,
						 uint32_t *inline_send);

#endif
