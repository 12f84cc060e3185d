/*
 * Big-endian loads and stores and a bounded read cursor, shared by every
 * codec.  A cursor never moves past its end: callers check the whole
 * item with rpcrdma_cursor_has() before reading it.
 */
#ifndef RPCRDMA_XDR_BYTES_H
#define RPCRDMA_XDR_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline uint32_t rpcrdma_load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline uint64_t rpcrdma_load_be64(const uint8_t *p)
{
	return (uint64_t)rpcrdma_load_be32(p) << 32 | rpcrdma_load_be32(p + 4);
}

static inline void rpcrdma_store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void rpcrdma_store_be64(uint8_t *p, uint64_t v)
{
	rpcrdma_store_be32(p, (uint32_t)(v >> 32));
	rpcrdma_store_be32(p + 4, (uint32_t)v);
}

struct rpcrdma_cursor {
	const uint8_t *pos;
	size_t left;
};

static inline bool rpcrdma_cursor_has(const struct rpcrdma_cursor *c, size_t n)
{
	return c->left >= n;
}

/* Only after rpcrdma_cursor_has(c, 4). */
static inline uint32_t rpcrdma_cursor_u32(struct rpcrdma_cursor *c)
{
	uint32_t v = rpcrdma_load_be32(c->pos);

	c->pos += 4;
	c->left -= 4;
	return v;
}

/* Only after rpcrdma_cursor_has(c, 8). */
static inline uint64_t rpcrdma_cursor_u64(struct rpcrdma_cursor *c)
{
	uint64_t v = rpcrdma_load_be64(c->pos);

	c->pos += 8;
	c->left -= 8;
	return v;
}

static inline uint64_t rpcrdma_xdr_roundup(uint64_t n)
{
	return (n + 3) & ~(uint64_t)3;
}

#endif
