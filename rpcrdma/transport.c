/*
 * Helpers shared by the RPC-over-RDMA CLIENT and SVCXPRT: binding
 * look-ups, offsets of a chunk-aware XDR stream mapped to memory, and
 * memory registration.
 */
#include "rpcrdma/transport.h"

#include <errno.h>
#include <string.h>

#include "xdr/bytes.h"

const struct rpcrdma_ulb_proc *rpcrdma_ulb_proc_find(const struct rpcrdma_ulb *ulb,
						     rpcproc_t proc)
{
	if (!ulb)
		return NULL;
	for (size_t i = 0; i < ulb->nprocs; i++)
		if (ulb->procs[i].proc == proc)
			return &ulb->procs[i];
	return NULL;
}

bool rpcrdma_auth_ddp(enum_t flavor)
{
	return flavor == AUTH_NONE || flavor == AUTH_SYS || flavor == AUTH_SHORT ||
	       flavor == AUTH_DH;
}

bool rpcrdma_auth_pipelined(enum_t flavor)
{
	return flavor == AUTH_NONE || flavor == AUTH_SYS;
}

void rpcrdma_createerr_set(enum clnt_stat st, int err)
{
	rpc_createerr.cf_stat = st;
	rpc_createerr.cf_error.re_status = st;
	rpc_createerr.cf_error.re_errno = err;
}

uint32_t rpcrdma_mask_count(uint32_t mask)
{
	return (uint32_t)__builtin_popcount(mask);
}

/*
 * The piece of the complete message holding byte @off: the inline
 * buffer (*@item = -1, *@base = inline offset of @off) or item *@item
 * (*@base = offset of @off from the item's data; past its length is
 * roundup).  *@avail: bytes left in that piece.
 */
static bool stream_piece(const struct rpcrdma_xdr_stream *s, uint32_t off, int *item,
			 uint32_t *base, uint32_t *avail)
{
	uint32_t removed = 0;

	for (uint32_t i = 0; i < s->nitems; i++) {
		const struct rpcrdma_xdr_item *it = &s->items[i];
		uint32_t span = (uint32_t)rpcrdma_xdr_roundup(it->length);

		if (off < it->position) {
			*item = -1;
			*base = off - removed;
			*avail = it->position - off;
			return true;
		}
		if (off - it->position < span) {
			*item = (int)i;
			*base = off - it->position;
			*avail = span - *base;
			return true;
		}
		removed += span;
	}
	if (off >= s->pos)
		return false;
	*item = -1;
	*base = off - removed;
	*avail = s->pos - off;
	return true;
}

const uint8_t *rpcrdma_stream_locate(const struct rpcrdma_xdr_stream *s, uint32_t off,
				     uint32_t len)
{
	uint32_t base, avail;
	int item;

	if (!len || !stream_piece(s, off, &item, &base, &avail) || len > avail)
		return NULL;
	if (item < 0)
		return s->buf + base;
	if (len > s->items[item].length - base)
		return NULL;
	return s->items[item].data + base;
}

bool rpcrdma_stream_copy(const struct rpcrdma_xdr_stream *s, uint32_t off, uint32_t len,
			 uint8_t *dst)
{
	while (len) {
		uint32_t base, avail, take;
		int item;

		if (!stream_piece(s, off, &item, &base, &avail))
			return false;
		take = len < avail ? len : avail;
		if (item < 0) {
			memcpy(dst, s->buf + base, take);
		} else {
			const struct rpcrdma_xdr_item *it = &s->items[item];
			uint32_t data = base < it->length ? it->length - base : 0;

			if (data > take)
				data = take;
			memcpy(dst, it->data + base, data);
			memset(dst + data, 0, take - data);
		}
		dst += take;
		off += take;
		len -= take;
	}
	return true;
}

void rpcrdma_stream_items(const struct rpcrdma_xdr_stream *s, struct rpcrdma_ddp_item *out)
{
	for (uint32_t i = 0; i < s->nitems; i++)
		out[i] = (struct rpcrdma_ddp_item){ s->items[i].position, s->items[i].length };
}

struct ibv_mr *rpcrdma_mr_reg(struct ibv_pd *pd, const void *addr, size_t len, int access)
{
	struct ibv_mr *mr;

	errno = 0; /* a provider may fail without setting it: no stale value */
	mr = ibv_reg_mr(pd, (void *)(uintptr_t)addr, len ? len : 1, access);
	if (!mr && !errno)
		errno = ENOMEM;
	return mr;
}

bool rpcrdma_mr_dereg(struct ibv_mr *mr)
{
	return !mr || ibv_dereg_mr(mr) == 0;
}

uint32_t rpcrdma_segments_cut(const struct ibv_mr *mr, const uint8_t *addr, uint32_t len,
			      struct rpcrdma_segment *segs, uint32_t cap)
{
	uint32_t n = 0;

	while (len) {
		uint32_t take = len < RPCRDMA_SEG_BYTES ? len : RPCRDMA_SEG_BYTES;

		if (n == cap)
			return 0;
		segs[n++] = (struct rpcrdma_segment){ mr->rkey, take, (uint64_t)(uintptr_t)addr };
		addr += take;
		len -= take;
	}
	return n;
}
