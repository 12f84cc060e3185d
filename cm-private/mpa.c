/*
 * MPA revision 2 enhanced connection data, frame decoding and the
 * IRD/ORD policy.  Bit layout (network order, RFC 6581 section 9):
 *   |A|B|      IRD (14)     |C|D|      ORD (14)     |
 */
#include "cm-private/mpa.h"
#include "xdr/minmax.h"
#include "xdr/names.h"

#include <string.h>

#include "xdr/bytes.h"

#define FLAG_HI 0x8000u
#define FLAG_LO 0x4000u

#define FRAME_FLAG_M 0x80u
#define FRAME_FLAG_C 0x40u
#define FRAME_FLAG_R 0x20u
#define FRAME_FLAG_S 0x10u

static const char req_key[RPCRDMA_MPA_KEY_BYTES] = "MPA ID Req Frame";
static const char rep_key[RPCRDMA_MPA_KEY_BYTES] = "MPA ID Rep Frame";

static const char *const status_names[] = {
	[RPCRDMA_MPA_OK] = "ok",
	[RPCRDMA_MPA_SHORT] = "MPA data truncated",
	[RPCRDMA_MPA_DEPTH_RANGE] = "IRD or ORD above 0x3fff",
	[RPCRDMA_MPA_BAD_KEY] = "not an MPA request or reply frame",
	[RPCRDMA_MPA_PD_TOO_LONG] = "MPA private data longer than 512 octets",
	[RPCRDMA_MPA_PD_TRUNCATED] = "MPA private data shorter than PD_Length",
	[RPCRDMA_MPA_ENHANCED_MISSING] = "enhanced frame without IRD/ORD data",
	[RPCRDMA_MPA_INSUFFICIENT_IRD] = "insufficient IRD resources",
	[RPCRDMA_MPA_BAD_REVISION] = "MPA revision 0",
};

const char *rpcrdma_mpa_status_str(enum rpcrdma_mpa_status status)
{
	return RPCRDMA_NAME(status_names, status, "unknown MPA status");
}

static uint16_t pack_word(bool hi, bool lo, uint16_t depth)
{
	return (uint16_t)((hi ? FLAG_HI : 0) | (lo ? FLAG_LO : 0) | depth);
}

enum rpcrdma_mpa_status rpcrdma_mpa_enhanced_encode(const struct rpcrdma_mpa_enhanced *e,
						    uint8_t out[RPCRDMA_MPA_ENHANCED_BYTES])
{
	uint16_t w0, w1;

	bool p2p = e->peer_to_peer; /* B, C and D are sent as 0 without A (RFC 6581 9.2) */

	if (e->ird > RPCRDMA_MPA_DEPTH_MASK || e->ord > RPCRDMA_MPA_DEPTH_MASK)
		return RPCRDMA_MPA_DEPTH_RANGE;
	w0 = pack_word(p2p, p2p && e->rtr_send, e->ird);
	w1 = pack_word(p2p && e->rtr_write, p2p && e->rtr_read, e->ord);
	rpcrdma_store_be32(out, (uint32_t)w0 << 16 | w1);
	return RPCRDMA_MPA_OK;
}

enum rpcrdma_mpa_status rpcrdma_mpa_enhanced_decode(const uint8_t *buf, size_t len,
						    struct rpcrdma_mpa_enhanced *e)
{
	uint32_t v;

	if (len < RPCRDMA_MPA_ENHANCED_BYTES)
		return RPCRDMA_MPA_SHORT;
	v = rpcrdma_load_be32(buf);
	e->peer_to_peer = v & (FLAG_HI << 16);
	/* without A, B, C and D are ignored (RFC 6581 9.2) */
	e->rtr_send = e->peer_to_peer && (v & (FLAG_LO << 16));
	e->ird = (uint16_t)((v >> 16) & RPCRDMA_MPA_DEPTH_MASK);
	e->rtr_write = e->peer_to_peer && (v & FLAG_HI);
	e->rtr_read = e->peer_to_peer && (v & FLAG_LO);
	e->ord = (uint16_t)(v & RPCRDMA_MPA_DEPTH_MASK);
	return RPCRDMA_MPA_OK;
}

enum rpcrdma_mpa_status rpcrdma_mpa_frame_decode(const uint8_t *buf, size_t len,
						 struct rpcrdma_mpa_frame *f)
{
	const uint8_t *pd;
	uint8_t flags;

	memset(f, 0, sizeof(*f));
	if (len < RPCRDMA_MPA_HEADER_BYTES)
		return RPCRDMA_MPA_SHORT;
	if (!memcmp(buf, rep_key, RPCRDMA_MPA_KEY_BYTES))
		f->reply = true;
	else if (memcmp(buf, req_key, RPCRDMA_MPA_KEY_BYTES))
		return RPCRDMA_MPA_BAD_KEY;
	flags = buf[16];
	f->markers = flags & FRAME_FLAG_M;
	f->crc = flags & FRAME_FLAG_C;
	f->reject = flags & FRAME_FLAG_R;
	f->revision = buf[17];
	if (f->revision == 0) /* RFC 5044 starts at 1, RFC 6581 accepts 1 and later */
		return RPCRDMA_MPA_BAD_REVISION;
	/* RFC 6581 defines S in revision 2; in revision 1 the bit is reserved, ignored when received. */
	f->enhanced = (flags & FRAME_FLAG_S) && f->revision >= 2;
	f->pd_length = (uint16_t)(buf[18] << 8 | buf[19]);
	if (f->pd_length > RPCRDMA_MPA_MAX_PD)
		return RPCRDMA_MPA_PD_TOO_LONG;
	if (len - RPCRDMA_MPA_HEADER_BYTES < f->pd_length)
		return RPCRDMA_MPA_PD_TRUNCATED;
	pd = buf + RPCRDMA_MPA_HEADER_BYTES;
	f->frame_len = RPCRDMA_MPA_HEADER_BYTES + f->pd_length;
	f->ulp_data = pd;
	f->ulp_len = f->pd_length;
	if (!f->enhanced)
		return RPCRDMA_MPA_OK;
	if (rpcrdma_mpa_enhanced_decode(pd, f->pd_length, &f->ird_ord) != RPCRDMA_MPA_OK)
		return RPCRDMA_MPA_ENHANCED_MISSING;
	f->ulp_data = pd + RPCRDMA_MPA_ENHANCED_BYTES;
	f->ulp_len = f->pd_length - RPCRDMA_MPA_ENHANCED_BYTES;
	return RPCRDMA_MPA_OK;
}

/* Largest depth that is not the "no auto negotiation" marker. */
static uint32_t cap_depth(uint32_t v)
{
	return min_u32(v, RPCRDMA_MPA_DEPTH_NO_AUTO - 1);
}

struct rpcrdma_rd_depths rpcrdma_rd_request(const struct rpcrdma_rd_limits *dev,
					    const struct rpcrdma_rd_depths *want)
{
	struct rpcrdma_rd_depths d = {
		.ird = cap_depth(min_u32(want->ird, dev->max_qp_rd_atom)),
		.ord = cap_depth(min_u32(want->ord, dev->max_qp_init_rd_atom)),
	};
	return d;
}

enum rpcrdma_mpa_status rpcrdma_rd_respond(const struct rpcrdma_rd_limits *dev,
					   const struct rpcrdma_rd_depths *want,
					   const struct rpcrdma_rd_depths *initiator,
					   struct rpcrdma_rd_choice *out)
{
	struct rpcrdma_rd_depths own = rpcrdma_rd_request(dev, want);
	enum rpcrdma_mpa_status st = RPCRDMA_MPA_OK;

	if (initiator->ord == RPCRDMA_MPA_DEPTH_NO_AUTO) {
		out->local.ird = own.ird;
		out->wire.ird = RPCRDMA_MPA_DEPTH_NO_AUTO;
	} else {
		uint32_t needed = max_u32(own.ird, initiator->ord);

		out->local.ird = cap_depth(min_u32(needed, dev->max_qp_rd_atom));
		out->wire.ird = out->local.ird;
		if (out->local.ird < initiator->ord)
			st = RPCRDMA_MPA_INSUFFICIENT_IRD;
	}
	if (initiator->ird == RPCRDMA_MPA_DEPTH_NO_AUTO) {
		out->local.ord = own.ord;
		out->wire.ord = RPCRDMA_MPA_DEPTH_NO_AUTO;
	} else {
		out->local.ord = min_u32(own.ord, initiator->ird);
		out->wire.ord = out->local.ord;
	}
	return st;
}

enum rpcrdma_mpa_status rpcrdma_rd_respond_ib(const struct rpcrdma_rd_limits *dev,
					      const struct rpcrdma_rd_depths *want,
					      const struct rpcrdma_rd_depths *initiator,
					      struct rpcrdma_rd_choice *out)
{
	rpcrdma_rd_respond(dev, want, initiator, out);
	out->local.ird = min_u32(rpcrdma_rd_request(dev, want).ird, initiator->ord);
	out->wire.ird = out->local.ird;
	return RPCRDMA_MPA_OK;
}

enum rpcrdma_mpa_status rpcrdma_rd_finish(const struct rpcrdma_rd_limits *dev,
					  const struct rpcrdma_rd_depths *requested,
					  const struct rpcrdma_rd_depths *responder,
					  struct rpcrdma_rd_depths *final)
{
	*final = *requested;
	if (responder->ird != RPCRDMA_MPA_DEPTH_NO_AUTO)
		final->ord = min_u32(requested->ord, responder->ird);
	if (responder->ord == RPCRDMA_MPA_DEPTH_NO_AUTO)
		return RPCRDMA_MPA_OK;
	if (responder->ord > dev->max_qp_rd_atom)
		return RPCRDMA_MPA_INSUFFICIENT_IRD;
	final->ird = max_u32(requested->ird, responder->ord);
	return RPCRDMA_MPA_OK;
}
