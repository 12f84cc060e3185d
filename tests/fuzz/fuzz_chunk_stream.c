/*
 * Chunk-aware XDR decoding of a peer's reply: the first byte picks how
 * much of the input is the "write chunk", the rest is the inline stream,
 * decoded as the test program's results.  Anything decoded must
 * re-encode through the stream and decode again to the same value.
 * Then the input drives a decode stream directly, words, opaque items
 * and repositions back and forth as hand-written XDR routines may make
 * them: the inline offset must stay within the inline bytes.
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

/* Each input byte an operation on a stream over the input itself, its tail a 300-byte chunk. */
static void drive_ops(const uint8_t *data, size_t size)
{
	static char dst[256];
	struct rpcrdma_xdr_stream s;
	struct rpcrdma_xdr_item chunk = { 0, 0, data };
	u_int w;

	if (size > 300)
		chunk.length = 300;
	rpcrdma_xdr_decode_init(&s, data, (uint32_t)size, data[0] % 8, 0x55, &chunk, 1);
	for (size_t i = 1; i < size && i < 64; i++) {
		uint8_t op = data[i];

		switch (op % 4) {
		case 0:
			(void)xdr_u_int(&s.xdr, &w);
			break;
		case 1:
			(void)xdr_opaque(&s.xdr, dst, op % 2 ? op / 4 : 300 % sizeof(dst) + op / 4);
			break;
		case 2:
			(void)xdr_setpos(&s.xdr, xdr_getpos(&s.xdr) - op / 4 % 9);
			break;
		default:
			(void)xdr_setpos(&s.xdr, xdr_getpos(&s.xdr) + op / 4 % 9);
			break;
		}
		if (s.off > s.cap || s.floor > s.top || s.pos > s.top)
			abort();
	}
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
	drive_ops(data, size);
	return 0;
}
