/* MPA frames and enhanced connection data, with the IRD/ORD policy on what they carry. */
#include <stdlib.h>
#include <string.h>

#include "cm-private/mpa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void policy(const struct rpcrdma_mpa_enhanced *e)
{
	static const struct rpcrdma_rd_limits dev = { 16, 16 };
	static const struct rpcrdma_rd_depths want = { 8, 8 };
	struct rpcrdma_rd_depths peer = { e->ird, e->ord }, fin;
	struct rpcrdma_rd_choice c;

	rpcrdma_rd_respond(&dev, &want, &peer, &c);
	if (c.local.ird > dev.max_qp_rd_atom || c.local.ord > dev.max_qp_init_rd_atom)
		abort();
	if (peer.ird != RPCRDMA_MPA_DEPTH_NO_AUTO && c.local.ord > peer.ird)
		abort();
	if (rpcrdma_rd_finish(&dev, &want, &peer, &fin) == RPCRDMA_MPA_OK &&
	    peer.ird != RPCRDMA_MPA_DEPTH_NO_AUTO && fin.ord > peer.ird)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_mpa_frame f;
	struct rpcrdma_mpa_enhanced e, again;
	uint8_t out[4], want[4];

	if (rpcrdma_mpa_frame_decode(data, size, &f) == RPCRDMA_MPA_OK) {
		if (f.frame_len > size || f.ulp_data + f.ulp_len > data + size)
			abort();
		if (f.enhanced)
			policy(&f.ird_ord);
	}
	if (rpcrdma_mpa_enhanced_decode(data, size, &e) != RPCRDMA_MPA_OK)
		return 0;
	policy(&e);
	memcpy(want, data, 4);
	if (!(want[0] & 0x80)) { /* without A, B, C and D are ignored: re-encoded as 0 */
		want[0] &= 0xbf;
		want[2] &= 0x3f;
	}
	if (rpcrdma_mpa_enhanced_encode(&e, out) != RPCRDMA_MPA_OK || memcmp(out, want, 4) ||
	    rpcrdma_mpa_enhanced_decode(out, 4, &again) != RPCRDMA_MPA_OK ||
	    memcmp(&e, &again, sizeof(e)))
		abort();
	return 0;
}
