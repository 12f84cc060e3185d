/*
 * RFC 8797 private data codec and negotiation.  Anything from the peer
 * that is not a well-formed version 1 message falls back to the RFC 8166
 * defaults: 1024-octet inline thresholds, no remote invalidation.
 */
#include "cm-private/private_data.h"
#include "xdr/minmax.h"
#include "xdr/names.h"

#include "xdr/bytes.h"

static const struct rpcrdma_private_data defaults = {
	.remote_invalidate = false,
	.send_size = RPCRDMA_PD_MIN_INLINE,
	.recv_size = RPCRDMA_PD_MIN_INLINE,
};

static const char *const status_names[] = {
	[RPCRDMA_PD_OK] = "ok",
	[RPCRDMA_PD_ABSENT] = "no private data",
	[RPCRDMA_PD_NO_FORMAT_ID] = "no RPC-over-RDMA format identifier",
	[RPCRDMA_PD_SHORT] = "private data truncated",
	[RPCRDMA_PD_BAD_VERSION] = "unknown private data version",
	[RPCRDMA_PD_SIZE_RANGE] = "inline size outside 1024..262144",
};

const char *rpcrdma_pd_status_str(enum rpcrdma_pd_status status)
{
	return RPCRDMA_NAME(status_names, status, "unknown private data status");
}

static bool size_in_range(uint32_t size)
{
	return size >= RPCRDMA_PD_MIN_INLINE && size <= RPCRDMA_PD_MAX_INLINE;
}

static uint8_t size_encode(uint32_t size)
{
	return (uint8_t)(size / 1024 - 1);
}

static uint32_t size_decode(uint8_t code)
{
	return ((uint32_t)code + 1) * 1024;
}

enum rpcrdma_pd_status rpcrdma_private_data_encode(const struct rpcrdma_private_data *pd,
						   uint8_t out[RPCRDMA_PD_BYTES])
{
	if (!size_in_range(pd->send_size) || !size_in_range(pd->recv_size))
		return RPCRDMA_PD_SIZE_RANGE;
	rpcrdma_store_be32(out, RPCRDMA_PD_FORMAT_ID);
	out[4] = RPCRDMA_PD_VERSION;
	out[5] = pd->remote_invalidate ? RPCRDMA_PD_FLAG_R : 0;
	out[6] = size_encode(pd->send_size);
	out[7] = size_encode(pd->recv_size);
	return RPCRDMA_PD_OK;
}

static const uint8_t *find_format_id(const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i + 4 <= len; i++)
		if (rpcrdma_load_be32(buf + i) == RPCRDMA_PD_FORMAT_ID)
			return buf + i;
	return NULL;
}

/* One candidate message at @msg, @left bytes before the end. */
static enum rpcrdma_pd_status candidate_decode(const uint8_t *msg, size_t left,
					       struct rpcrdma_private_data *pd)
{
	if (left < RPCRDMA_PD_BYTES)
		return RPCRDMA_PD_SHORT;
	if (msg[4] != RPCRDMA_PD_VERSION)
		return RPCRDMA_PD_BAD_VERSION;
	pd->remote_invalidate = msg[5] & RPCRDMA_PD_FLAG_R;
	pd->send_size = size_decode(msg[6]);
	pd->recv_size = size_decode(msg[7]);
	return RPCRDMA_PD_OK;
}

/*
 * Other data before ours may hold the format identifier's bytes by
 * chance (RFC 8797 section 7): a candidate that does not decode is
 * skipped, and the first one's failure reported when none does.
 */
enum rpcrdma_pd_status rpcrdma_private_data_decode(const uint8_t *buf, size_t len,
						   struct rpcrdma_private_data *pd)
{
	enum rpcrdma_pd_status first = RPCRDMA_PD_NO_FORMAT_ID, st;
	const uint8_t *msg;

	*pd = defaults;
	if (!buf || !len)
		return RPCRDMA_PD_ABSENT;
	for (size_t at = 0; (msg = find_format_id(buf + at, len - at)); at = (size_t)(msg - buf) + 1) {
		st = candidate_decode(msg, (size_t)(buf + len - msg), pd);
		if (st == RPCRDMA_PD_OK)
			return st;
		if (first == RPCRDMA_PD_NO_FORMAT_ID)
			first = st;
	}
	return first;
}

/* What the peer read of our @size: the encoding carries whole KiB only. */
static uint32_t size_as_sent(uint32_t size)
{
	return size_in_range(size) ? size_decode(size_encode(size)) : size;
}

struct rpcrdma_inline_params rpcrdma_private_data_negotiate(const struct rpcrdma_private_data *local,
							     const struct rpcrdma_private_data *peer)
{
	/*
	 * Our sizes as the peer read them: a Send Size of 5000 goes out as
	 * 4096, and the peer's receive buffers are sized by that, so sending
	 * 5000 would overrun them.
	 */
	struct rpcrdma_inline_params p = {
		.send = min_u32(size_as_sent(local->send_size), peer->recv_size),
		.recv = min_u32(size_as_sent(local->recv_size), peer->send_size),
		.remote_invalidate = local->remote_invalidate && peer->remote_invalidate,
	};
	return p;
}
