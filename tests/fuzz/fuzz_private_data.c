/* RFC 8797 private data decoder, with negotiation against fixed local values. */
#include <stdlib.h>
#include <string.h>

#include "cm-private/private_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct rpcrdma_private_data local = { true, 4096, 8192 };
	struct rpcrdma_private_data pd, again;
	struct rpcrdma_inline_params p;
	uint8_t out[8];
	enum rpcrdma_pd_status st = rpcrdma_private_data_decode(data, size, &pd);

	if (pd.send_size < 1024 || pd.send_size > 262144 || pd.recv_size < 1024 ||
	    pd.recv_size > 262144)
		abort();
	p = rpcrdma_private_data_negotiate(&local, &pd);
	if (p.send < 1024 || p.send > local.send_size || p.recv > local.recv_size)
		abort();
	if (st != RPCRDMA_PD_OK)
		return 0;
	if (rpcrdma_private_data_encode(&pd, out) != RPCRDMA_PD_OK ||
	    rpcrdma_private_data_decode(out, sizeof(out), &again) != RPCRDMA_PD_OK ||
	    memcmp(&pd, &again, sizeof(pd)))
		abort();
	return 0;
}
