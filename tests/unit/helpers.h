/* Byte-buffer builders shared by the unit tests. */
#ifndef RPCRDMA_TESTS_HELPERS_H
#define RPCRDMA_TESTS_HELPERS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "xdr/bytes.h"

struct wbuf {
	uint8_t b[16384];
	size_t n;
};

static inline void w32(struct wbuf *w, uint32_t v)
{
	rpcrdma_store_be32(w->b + w->n, v);
	w->n += 4;
}

static inline void w64(struct wbuf *w, uint64_t v)
{
	rpcrdma_store_be64(w->b + w->n, v);
	w->n += 8;
}

static inline void wseg(struct wbuf *w, uint32_t handle, uint32_t length, uint64_t offset)
{
	w32(w, handle);
	w32(w, length);
	w64(w, offset);
}

/* xid, vers, credit, type */
static inline void wfixed(struct wbuf *w, uint32_t xid, uint32_t vers, uint32_t credit,
			  uint32_t type)
{
	w32(w, xid);
	w32(w, vers);
	w32(w, credit);
	w32(w, type);
}

#endif
