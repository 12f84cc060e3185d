/*
 * Transport header decoder.  Whatever it accepts must re-encode to the
 * same bytes (the wire form is canonical) and decode again identically.
 */
#include <stdlib.h>
#include <string.h>

#include "xdr/header.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

static void decode_with(const uint8_t *data, size_t size,
			const struct rpcrdma_header_limits *lim)
{
	static struct rpcrdma_header h, again;
	static uint8_t out[1 << 16];
	size_t hlen, n, hlen2;

	if (rpcrdma_header_decode(&h, data, size, lim, &hlen) != RPCRDMA_HDR_OK)
		return;
	check(hlen <= size);
	check(rpcrdma_header_encode(&h, out, sizeof(out), &n) == RPCRDMA_HDR_OK);
	check(n == hlen && !memcmp(out, data, n));
	memcpy(out + n, data + n, size - n < sizeof(out) - n ? size - n : 0);
	if (size - n > sizeof(out) - n)
		return;
	check(rpcrdma_header_decode(&again, out, size, lim, &hlen2) == RPCRDMA_HDR_OK);
	check(hlen2 == hlen && again.nreads == h.nreads && again.nsegs == h.nsegs);
	for (uint32_t i = 0; i < h.nwrites; i++)
		(void)rpcrdma_chunk_length(&h, &h.writes[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct rpcrdma_header_limits small = { 4, 2, 4, 8 };

	decode_with(data, size, NULL);
	decode_with(data, size, &small);
	return 0;
}
