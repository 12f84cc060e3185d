/*
 * Internals shared by the CLIENT (clnt_rdma.c) and the SVCXPRT
 * (svc_rdma*.c): upper-layer binding look-ups, mapping offsets of a
 * chunk-aware XDR stream's complete message to memory, and memory
 * registration helpers.
 * Nothing here keeps state.
 */
#ifndef RPCRDMA_TRANSPORT_H
#define RPCRDMA_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "rpcrdma/chunk_plan.h"
#include "rpcrdma/rpcrdma.h"
#include "rpcrdma/verbs.h"
#include "xdr/chunk_stream.h"

#define RPCRDMA_DDP_THRESHOLD  1024u      /* smaller DDP-eligible items stay inline */
#define RPCRDMA_SEG_BYTES      (1u << 20) /* one registered segment at most */
#define RPCRDMA_CALL_READ_SEGS 32u        /* read segments in one call */
#define RPCRDMA_CHUNK_SEGS     32u        /* segments in one write or reply chunk */
#define RPCRDMA_SEND_DEPTH     64u        /* plus 3 per credit: bind, Send, invalidate */
#define RPCRDMA_SEND_SGES      6u         /* siw's max_sge */
/* The RPC reply header: xid, REPLY, MSG_ACCEPTED, verifier (up to MAX_AUTH_BYTES), accept_stat. */
#define RPCRDMA_REPLY_HDR_MAX  (24u + MAX_AUTH_BYTES)

/* libtirpc declares xdr_void without parameters: the one cast to an xdrproc_t. */
#define RPCRDMA_XDR_VOID ((xdrproc_t)(void (*)(void))xdr_void)

/* struct rpc_createerr: libtirpc's macro rpc_createerr hides the tag's name. */
typedef __typeof__(rpc_createerr) rpcrdma_createerr;

/* Report a failed create in this thread's rpc_createerr: @st, with errno @err. */
void rpcrdma_createerr_set(enum clnt_stat st, int err);

/*
 * rpcrdma_rpcb_lookup_timed() of rpcbind at @service (a port number or
 * name) instead of port 111: the unit tests' fake rpcbinds listen there.
 * Same return values; -EINVAL also for a NULL @service.
 */
int rpcrdma_rpcb_lookup_service(const char *host, const char *service, rpcprog_t prog,
				rpcvers_t vers, const char *netid, int timeout_ms,
				struct sockaddr_storage *out);

/* The binding of @proc in @ulb, or NULL (also for a NULL @ulb). */
const struct rpcrdma_ulb_proc *rpcrdma_ulb_proc_find(const struct rpcrdma_ulb *ulb,
						     rpcproc_t proc);

/* Number of bits set in @mask. */
uint32_t rpcrdma_mask_count(uint32_t mask);

/*
 * Room for what a body-wrapping credential flavor adds to a reply's
 * results (RPCSEC_GSS: sequence number, checksum or encryption overhead).
 */
#define RPCRDMA_AUTH_WRAP_MAX  1024u

/*
 * rpcrdma_auth_ddp - whether calls with credentials of @flavor may have
 * data items placed apart from the message (read and write chunks).
 * Flavors that only carry credentials leave the body as the procedure's
 * XDR.  Others, RPCSEC_GSS's integrity and privacy services or a flavor
 * we do not know, may wrap the whole body (AUTH_WRAP, SVCAUTH_WRAP) into
 * one opaque that must travel whole (RFC 5666 section 11).
 */
bool rpcrdma_auth_ddp(enum_t flavor);

/*
 * rpcrdma_auth_pipelined - whether threads may marshal and validate
 * with one AUTH of @flavor at the same time: AUTH_NONE and AUTH_SYS,
 * whose libtirpc implementations only read their state once made, as
 * long as a reply's AUTH_SHORT verifier is declined (clnt_rdma_decode).
 * Calls with any other flavor take turns (AUTH_DH checks each reply
 * against its latest call's timestamp; RPCSEC_GSS keeps sequence state).
 */
bool rpcrdma_auth_pipelined(enum_t flavor);

/*
 * rpcrdma_stream_locate - memory of bytes [@off, @off + @len) of the
 * complete message an encode stream recorded, when they lie in one
 * piece (the inline buffer or one recorded item's data).  Returns the
 * pointer, or NULL when the range crosses pieces, touches roundup or
 * lies outside.
 */
const uint8_t *rpcrdma_stream_locate(const struct rpcrdma_xdr_stream *s, uint32_t off,
				     uint32_t len);

/*
 * rpcrdma_stream_copy - copy bytes [@off, @off + @len) of the complete
 * message (inline bytes, items' data, zero roundup) to @dst.  Returns
 * false when the range lies outside the message.
 */
bool rpcrdma_stream_copy(const struct rpcrdma_xdr_stream *s, uint32_t off, uint32_t len,
			 uint8_t *dst);

/* The encode stream's recorded items as planner items. */
void rpcrdma_stream_items(const struct rpcrdma_xdr_stream *s, struct rpcrdma_ddp_item *out);

/*
 * rpcrdma_mr_reg - register @len bytes at @addr with @access.  Returns
 * the MR, or NULL with errno set.
 */
struct ibv_mr *rpcrdma_mr_reg(struct ibv_pd *pd, const void *addr, size_t len, int access);

/*
 * rpcrdma_mr_dereg - deregister @mr; accepts NULL.  Returns true when
 * the region is gone (or there was none), false when the provider
 * refused: it is still registered, and its memory still reachable
 * through any remote key it had.
 */
bool rpcrdma_mr_dereg(struct ibv_mr *mr);

/*
 * rpcrdma_segments_cut - describe @len bytes at @addr (within @mr) as
 * segments of at most RPCRDMA_SEG_BYTES.  Returns the count, or 0 when
 * more than @cap would be needed.
 */
uint32_t rpcrdma_segments_cut(const struct ibv_mr *mr, const uint8_t *addr, uint32_t len,
			      struct rpcrdma_segment *segs, uint32_t cap);

#endif
