/* Refused RPC call headers: the classifier reads within bounds and names only faults xdr_callmsg() refuses. */
#include <stdlib.h>

#include <rpc/rpc.h>

#include "tests/unit/callmsg_oracle.h"
#include "xdr/bytes.h"
#include "xdr/rpc_call.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t xid = size >= 4 ? rpcrdma_load_be32(data) : 0;
	uint32_t len = size > 65536 ? 65536 : (uint32_t)size;
	uint8_t *copy = malloc(len ? len : 1); /* exact size: ASan sees any read past it */
	enum rpcrdma_call_fault f;

	if (!copy)
		return 0;
	for (uint32_t i = 0; i < len; i++)
		copy[i] = data[i];
	f = rpcrdma_call_fault(copy, len, xid);
	if (f > RPCRDMA_CALL_BAD_VERF)
		abort();
	if (f != RPCRDMA_CALL_MALFORMED && callmsg_takes(copy, len))
		abort(); /* a fault named in a header libtirpc takes */
	free(copy);
	return 0;
}
