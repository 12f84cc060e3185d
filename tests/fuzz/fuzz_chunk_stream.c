/*
 * Chunk-aware XDR decoding of a peer's reply: the first byte picks how
 * much of the input is the "write chunk", the rest is the inline stream,
 * decoded as the test program's results.  Anything decoded must
 * re-encode through the stream and decode again to the same value.
 */
#include <stdlib.h>
#include <string.h>

#include "rdmatest.h"
#include "xdr/chunk_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_read_res(const rdmatest_read_res *r)
{
	static uint8_t buf[1 << 16];
	struct rpcrdma_xdr_stream enc, dec;
	rdmatest_read_res again;

	rpcrdma_xdr_encode_init(&enc, buf, sizeof(buf), 0, 1, 64);
	if (!xdr_rdmatest_read_res(&enc.xdr, (rdmatest_read_res *)r))
		return;
	memset(&again, 0, sizeof(again));
	rpcrdma_xdr_decode_init(&dec, buf, enc.off, 0, 1, enc.items, enc.nitems);
	if (!xdr_rdmatest_read_res(&dec.xdr, &again) || again.count != r->count ||
	    again.data.rdmatest_data_len != r->data.rdmatest_data_len ||
	    (r->data.rdmatest_data_len &&
	     memcmp(again.data.rdmatest_data_val, r->data.rdmatest_data_val,
		    r->data.rdmatest_data_len)))
		abort();
	xdr_free((xdrproc_t)xdr_rdmatest_read_res, (char *)&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_xdr_stream s;
	struct rpcrdma_xdr_item chunk;
	rdmatest_read_res r;
	rdmatest_words w;
	size_t clen;

	if (size < 1 || size > (1 << 15))
		return 0;
	clen = data[0] % (size);
	chunk = (struct rpcrdma_xdr_item){ 0, (uint32_t)clen, data + 1 };
	memset(&r, 0, sizeof(r));
	rpcrdma_xdr_decode_init(&s, data + 1 + clen, (uint32_t)(size - 1 - clen), 0, 1, &chunk, 1);
	if (xdr_rdmatest_read_res(&s.xdr, &r))
		check_read_res(&r);
	xdr_free((xdrproc_t)xdr_rdmatest_read_res, (char *)&r);
	memset(&w, 0, sizeof(w));
	rpcrdma_xdr_decode_init(&s, data, (uint32_t)size, 0, 0, NULL, 0);
	if (xdr_rdmatest_words(&s.xdr, &w) && w.rdmatest_words_len > size / 4)
		abort();
	xdr_free((xdrproc_t)xdr_rdmatest_words, (char *)&w);
	return 0;
}
